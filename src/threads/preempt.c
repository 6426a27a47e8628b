/* SPDX-License-Identifier: MIT */
/*
 * Time-slicing: a uthread that computes while others wait gives way.
 *
 * Scheduling is cooperative (sched.c): a uthread gives its carrier away
 * at interposed calls, waits and contended locks. One that computes, or
 * spins on a flag another thread sets, never does. On NPTL the kernel
 * time-slices it; here the uthreads queued behind it, its carrier's
 * sleepers whose time has come and the completions of its carrier's calls
 * would wait until it stops, for ever when one of them is the thread it
 * spins for (tests/threads/preempt.c).
 *
 * So the monitor (monitor.c) asks: a carrier that has run one uthread with
 * neither a switch nor a call for two of its looks (10 to 20 ms) while it
 * has something else to do gets the poke, and the poke's handler yields
 * for the uthread it interrupted (fx_preempt_poked), from the signal frame
 * on that uthread's stack, as Go preempts a goroutine. The frame holds
 * everything the interrupted code had, every register and the whole
 * floating-point state; when the uthread is resumed, on whichever carrier,
 * the handler returns and the kernel puts it all back.
 *
 * Only where a switch is safe, which is the program's own code: never in
 * the runtime or in any code it calls, which may run with one of its spin
 * locks held (a semaphore's wait list while it reads the clock): libc and
 * the dynamic loader (whose internal locks are moreover plain futexes the
 * runtime does not see: the next uthread on this carrier to take one would
 * block the carrier in the kernel), the vDSO (clock_gettime) and liburing
 * (the runtime's rings). A uthread interrupted there is asked again at the
 * monitor's next look. Locks the
 * program holds in its own code are the runtime's (pthread_mutex_lock and
 * pthread_spin_lock are interposed) or its own atomics, and a waiter that
 * spins on one is time-sliced in turn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <liburing.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "threads/preempt.h"
#include "threads/signals.h"
#include "threads/rt.h"

#define RANGES_MAX 32
/* Looks a uthread that holds a mutex may go on computing after it was asked to give way. */
#define PUT_OFF_MAX 5

/* Code no switch may interrupt: the executable segments of the objects above. */
static struct { uintptr_t lo, hi; } no_switch[RANGES_MAX];
static unsigned nranges;
static _Atomic uint64_t preempts;

/* Whether one of the loaded segments of the object `info` holds address a. */
static bool holds(const struct dl_phdr_info *info, const void *a)
{
	uintptr_t p = (uintptr_t)a;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && p >= lo && p < lo + ph->p_memsz)
			return true;
	}
	return false;
}

/* Each object told by an address it holds, not by its file name: a library may be installed anywhere. */
static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t ldso = (uintptr_t)getauxval(AT_BASE);
	const void *vdso = (const void *)getauxval(AT_SYSINFO_EHDR);

	(void)size, (void)arg;
	if (!holds(info, (const void *)fx_preempt_init) && !holds(info, (const void *)dl_iterate_phdr) &&
	    !holds(info, (const void *)io_uring_submit) && !(ldso && info->dlpi_addr == ldso) &&
	    !(vdso && holds(info, vdso)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nranges < RANGES_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		no_switch[nranges].lo = info->dlpi_addr + ph->p_vaddr;
		no_switch[nranges].hi = no_switch[nranges].lo + ph->p_memsz;
		nranges++;
	}
	return 0;
}

void fx_preempt_init(void)
{
	if (!nranges)
		dl_iterate_phdr(note_object, NULL);
}

bool fx_switch_safe_at(uintptr_t pc)
{
	if (!nranges)
		return false; /* not told where libc is: nowhere is known to be safe */
	for (unsigned i = 0; i < nranges; i++)
		if (pc >= no_switch[i].lo && pc < no_switch[i].hi)
			return false;
	return true;
}

void fx_preempt_request(struct fx_carrier *c, uint64_t switches)
{
	/* seq_cst, before fx_poke's exchange: a poke already on its way sees it too */
	atomic_store(&c->preempt_at, switches + 1);
	fx_poke(c);
}

void fx_preempt_poked(struct fx_carrier *c, void *uc)
{
	ucontext_t *ctx = uc;
	uint64_t at = atomic_exchange_explicit(&c->preempt_at, 0, memory_order_relaxed);

	/* asked while an earlier uthread ran, or here inside the runtime or a handler */
	if (!at || at != c->switches + 1 || !c->current || c->in_rt || c->raw_handler || c->sig_locked || fx_locks_held ||
	    fx_in_handler(c) || !fx_switch_safe_at((uintptr_t)ctx->uc_mcontext.gregs[REG_RIP]))
		return;
	/*
	 * A uthread that holds a mutex gets a few more looks to let go of it:
	 * preempted, it would keep every thread that waits for the mutex
	 * waiting for its next turn (a forker's atfork handler waiting so
	 * while glibc holds its fork lock blocked carriers in the kernel).
	 */
	if (c->current->locks_held > 0 && ++c->preempt_put_off < PUT_OFF_MAX)
		return;
	c->preempt_put_off = 0;
	/*
	 * Every signal of the program blocked until a switch sets the mask of
	 * the uthread it runs (kmask says so, as a switch expects): one sent to
	 * the process and taken here, inside the runtime, ran its handler on
	 * this uthread, which was only computing, where the main thread waited
	 * for it in sigtimedwait (then fx_sig_for_leader passed nothing on
	 * from inside the runtime; now no program handler runs inside the
	 * poke's either); once preemptions came every slice, not every 10 ms,
	 * 1 run in 2 of sig_to_main lost it so.
	 */
	struct fx_carrier *before = c;
	uint64_t own = c->kmask, switches = c->switches;
	c->kmask = fx_sig_idle_mask();
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&c->kmask, 0, 8, 0, 0);
	atomic_fetch_add_explicit(&preempts, 1, memory_order_relaxed);
	int saved = errno; /* the interrupted code's: a handler leaves it as it was */
	fx_yield();
	errno = saved;
	/*
	 * Back, perhaps on another carrier. The handler's return puts back the
	 * signal mask and the alternate signal stack saved in the frame: they
	 * must be what this carrier's switch to the uthread set, its kmask and
	 * the uthread's own stack (src/threads/kstate.c).
	 */
	c = fx_carrier_self();
	struct fx_uthread *u = c->current;
	/*
	 * Nothing else was runnable, so no switch set the mask: the handler's
	 * return puts the uthread's own back, and a signal pending meanwhile is
	 * taken once it is back in its own code, where fx_sig_for_leader may
	 * pass it on, not here (a system call here would let it in at once).
	 */
	if (c == before && c->switches == switches)
		c->kmask = own;
	if (u->has_altstack)
		ctx->uc_stack = u->altstack; /* the kernel's may be disarmed (SS_AUTODISARM) by the poke itself */
	else
		ctx->uc_stack = (stack_t){ .ss_flags = SS_DISABLE };
	memcpy(&ctx->uc_sigmask, &c->kmask, sizeof(c->kmask));
}

uint64_t fx_preempt_count(void)
{
	return atomic_load_explicit(&preempts, memory_order_relaxed);
}
