/* SPDX-License-Identifier: MIT */
/*
 * The monitor: hands the core of a carrier blocked in the kernel to a spare.
 * Its other looks live here too: time slices (slice_over), how many cores
 * take work (adapt_in_use) and balance (balance_look); what the wake path
 * shares with them (a carrier's slice, whether it computes) stays in
 * sched.c, next to the wake that uses it (sched.h).
 *
 * A system call the runtime does not see (stdio's internal read, a
 * library's own `syscall` instruction, liburing's io_uring_enter) blocks
 * the carrier that makes it, with every uthread queued on it. The monitor,
 * a kernel thread of the runtime, looks at every carrier now and then: one
 * that runs a uthread (current set, not idle), whose heartbeat (switches +
 * exception-less calls, counters the carrier keeps anyway) has not moved
 * since the last look, that has work it cannot do (a queued uthread, a
 * call in flight, a timer), and that the kernel says is asleep ('S' or 'D'
 * in /proc/self/task/TID/stat, read only then) is blocked. Its core goes
 * to a spare carrier for the same CPU (a parked one from the pool,
 * else a new one): the spare becomes the owner of the core's slot, takes
 * its queued uthreads and its timers (which it would fire only once its
 * call returned: a sleeper on them waited as long), and every wake meant
 * for the blocked carrier goes to it (fx_owner_of). The blocked carrier, once its call returns, runs its
 * uthread to the next switch point, then runs nothing more: it serves its
 * own queue (its calls in flight come back to the new owner) and parks in
 * the pool. So a hidden blocking call costs one kernel thread, and each
 * core has one carrier running uthreads again at the next switch point.
 *
 * The calls the blocked carrier had posted and not yet handed to the
 * kernel (a batch not flushed) or whose completions it has not reaped are
 * only its to touch (its ring is single-issuer): the monitor sends it
 * FX_SIG_POKE, whose handler, when it interrupted a system call outside
 * the runtime, flushes and reaps for it (fx_poked), at once and then with
 * growing gaps (1 ms to 100 ms) while it stays blocked with calls out.
 *
 * Cost when nothing blocks: a wake of the monitor every 10 ms, reading a
 * few counters, while some carrier is awake or woke during the period;
 * none while every carrier sleeps idle (the monitor then waits until one
 * wakes: a load of fx_monitor_waiting where a carrier leaves its idle sleep,
 * and a store when the monitor waits, a futex wake only after a whole
 * period without a wake); one system call more for a carrier that
 * computes with work queued (computing); no work at all on a carrier's
 * switch. The period drops to 100 us after every hand-over or preemption
 * for fresh work (slice_over) and doubles back after each look of the
 * period that finds nothing to do, as Go's sysmon; a look of the period
 * that finds a carrier running with fresh work waiting asks for a second
 * one a slice later.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "threads/preempt.h"
#include "threads/rt.h"
#include "threads/sched.h"
#include "threads/signals.h"
#include "threads/waiter.h"

#define FX_MON_MIN_NS 100000ull
#define FX_MON_MAX_NS 10000000ull
#define FX_POKE_MIN_NS 1000000ull
#define FX_POKE_MAX_NS 100000000ull

static _Atomic uint64_t handoffs; /* cores handed over since start (fx_rt_handoffs) */

/*
 * Whether the stale carrier c has been computing since the monitor's last
 * look at it: its thread ran for at least an eighth of the time between
 * the two looks. Its CPU clock is one system call, where its state in
 * /proc is three and a file system walk; a carrier that computes with
 * uthreads queued behind it (cooperative scheduling) is otherwise asked
 * about at every look. False at the first stale look (nothing to compare
 * with), so a carrier blocked since its last switch point is asked about
 * at once, as before; one that computed and then blocked, at the next
 * look: a block is still seen within two looks. A thread blocked in the
 * kernel gains no CPU time; one that only wakes now and then in its hidden
 * call (a loop of short sleeps) gains far less than an eighth.
 */
static bool computing(struct fx_carrier *c, uint64_t now)
{
	uint64_t cpu;

	if (!fx_cpu_clock_ns(fx_carrier_clock(c), &cpu)) {
		c->mon_look_ns = 0;
		return false;
	}
	/* a second ask at the same look (slice_over's, then the stale look's) has no gap: no answer */
	bool ran = c->mon_look_ns && now > c->mon_look_ns && (cpu - c->mon_cpu_ns) * 8 >= now - c->mon_look_ns;
	c->mon_cpu_ns = cpu;
	c->mon_look_ns = now;
	return ran;
}

/* Something the carrier would do if it were not blocked. */
static bool could_run(struct fx_carrier *c)
{
	return atomic_load_explicit(&c->rq_len, memory_order_relaxed) ||
	       __atomic_load_n(&c->inflight, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&c->timers, __ATOMIC_RELAXED) ||
	       atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed);
}

/*
 * What c would do at its uthread's next switch, now: run a queued uthread
 * or a sleeper whose time has come, submit or reap calls, cancel one. A
 * uthread that computes with any of it waiting gives way (preempt.c).
 */
static bool others_wait(struct fx_carrier *c, uint64_t now)
{
	return atomic_load_explicit(&c->rq_len, memory_order_relaxed) ||
	       __atomic_load_n(&c->inflight, __ATOMIC_RELAXED) ||
	       atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed) || fx_timers_next(c) <= now;
}

static void poke_blocked(struct fx_carrier *c, uint64_t now)
{
	fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_POKE, 0, 0, 0);
	c->mon_poke_ns = now;
}

/* Gives x's core to a spare; false if none could be had. */
static bool handoff(struct fx_carrier *x, uint64_t now)
{
	unsigned n = __atomic_load_n(&fx_ncarriers, __ATOMIC_ACQUIRE);
	struct fx_carrier *y = NULL;

	for (unsigned i = 0; i < n && !y; i++) {
		struct fx_carrier *c = fx_carriers[i];
		/* a spare pinned to another CPU cannot take this one's place */
		if (c && c != x && (c->cpu == x->cpu || !fx_carriers_pinned) && atomic_load(&c->parked))
			y = c;
	}
	if (y) {
		y->slot = x->slot;
		y->mon_beat = ~0ull;
		y->mon_look_ns = 0;
		atomic_store(&y->handed, 0);
		atomic_store(&fx_slot_owner[x->slot], y);
		atomic_store(&x->handed, 1);
		atomic_store(&y->parked, 0);
		fx_futex_wake(&y->parked, 1);
	} else {
		if (n >= fx_ncores + fx_spares_max || !(y = fx_carrier_new((int)n, x->cpu)))
			return false;
		y->slot = x->slot;
		y->mon_beat = ~0ull;
		y->mon_look_ns = 0;
		/* a carrier from its start: it takes work before it owns the slot, which is harmless */
		if (fx_spawn_carrier(y, NULL, fx_os_pthread_create)) {
			free(y);
			return false;
		}
		fx_carriers[n] = y;
		__atomic_store_n(&fx_ncarriers, n + 1, __ATOMIC_RELEASE);
		atomic_store(&fx_slot_owner[x->slot], y);
		atomic_store(&x->handed, 1);
	}
	atomic_fetch_add_explicit(&handoffs, 1, memory_order_relaxed);
	fx_forward_rq(x, y);
	fx_timers_move(x, y); /* blocked, x would fire them only once its call returns */
	x->mon_poke_gap = FX_POKE_MIN_NS;
	if (__atomic_load_n(&x->inflight, __ATOMIC_RELAXED))
		poke_blocked(x, now);
	return true;
}

/*
 * Exclusive carriers (fx_exclusive_carrier: one uthread each, not in the
 * slots the look below walks) whose uthread's call was to be interrupted:
 * one run in place and marked (call_intr), or one posted to the carrier's
 * queue, whose cancel inbox then waits for the carrier to come back from
 * the call. The signal that ends the call may land just before the call
 * enters the kernel; the same second signal as for the others, while the
 * mark or the inbox stays. A sealed child's read hung without it
 * (seccomp_membarrier). The carrier leaves the set before it is freed.
 */
#define WATCH_MAX 64
static struct fx_carrier *watched[WATCH_MAX];
static _Atomic unsigned nwatched; /* written under watch_lock; read without it as a hint */
static _Atomic int watch_lock;

void fx_monitor_watch(struct fx_carrier *c)
{
	bool have = false;

	fx_spin_lock(&watch_lock);
	unsigned n = atomic_load_explicit(&nwatched, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		have = have || watched[i] == c;
	/* one whose uthread has exited leaves the set (fx_monitor_unwatch) and is freed: not again */
	if (!have && n < WATCH_MAX && !atomic_load(&c->own_exited)) {
		watched[n] = c;
		atomic_store_explicit(&nwatched, n + 1, memory_order_relaxed);
	}
	fx_spin_unlock(&watch_lock);
	fx_monitor_nudge(); /* its look is due a period from now */
}

void fx_monitor_unwatch(struct fx_carrier *c)
{
	fx_spin_lock(&watch_lock);
	unsigned n = atomic_load_explicit(&nwatched, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		if (watched[i] == c)
			watched[i--] = watched[--n];
	atomic_store_explicit(&nwatched, n, memory_order_relaxed);
	fx_spin_unlock(&watch_lock);
}

/* The second signal to each watched carrier still in its marked call; whether one was sent. */
static bool watch_look(void)
{
	bool sent = false;

	fx_spin_lock(&watch_lock);
	unsigned n = atomic_load_explicit(&nwatched, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++) {
		struct fx_carrier *c = watched[i];
		struct fx_uthread *ic = atomic_load(&c->in_call);
		if ((ic && atomic_load(&c->call_intr) == ic) || atomic_load(&c->cancel_inbox)) {
			fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_INTERRUPT, 0, 0, 0);
			sent = true;
		} else {
			watched[i--] = watched[--n];
		}
	}
	atomic_store_explicit(&nwatched, n, memory_order_relaxed);
	fx_spin_unlock(&watch_lock);
	return sent;
}

/*
 * Every carrier asleep in its scheduler context, or parked: none can be
 * blocked in a call; and no exclusive carrier watched.
 */
static bool all_asleep(void)
{
	unsigned n = __atomic_load_n(&fx_ncarriers, __ATOMIC_ACQUIRE);

	if (atomic_load_explicit(&nwatched, memory_order_relaxed))
		return false;

	for (unsigned i = 0; i < n; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (c && atomic_load(&c->sleeping) == FX_C_AWAKE)
			return false;
	}
	return true;
}

static void preempt(struct fx_carrier *c, uint64_t switches)
{
	c->mon_preempted = true;
	fx_preempt_request(c, switches);
}

/*
 * How many slots are in use (fx_in_use), from the CPU time the whole process
 * got over the last window of at least FX_USE_WINDOW_NS: one more when the
 * carriers in use were busy nearly all of it (within 0.2 CPU), one fewer
 * when one and a half CPUs' worth went unused. So each of Apache's
 * children, far below one CPU, keeps one carrier: a second one only split
 * its batches and added wake-ups.
 */
#define FX_USE_WINDOW_NS 20000000ull
static bool in_use_adapts;
static _Atomic uint64_t in_use_changes;
static uint64_t use_t0, use_cpu0; /* the window's start: monotonic time, the process's CPU time */

static void set_in_use(unsigned n)
{
	atomic_store_explicit(&fx_in_use, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&in_use_changes, 1, memory_order_relaxed);
}

static void adapt_in_use(uint64_t now)
{
	uint64_t cpu;

	if (!in_use_adapts || now - use_t0 < FX_USE_WINDOW_NS || !fx_cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID, &cpu))
		return;
	double used = (double)(cpu - use_cpu0) / (double)(now - use_t0);
	bool first = !use_t0;
	use_t0 = now;
	use_cpu0 = cpu;
	if (first)
		return;
	unsigned n = atomic_load_explicit(&fx_in_use, memory_order_relaxed);
	if (used >= n - 0.2 && n < fx_ncores)
		set_in_use(n + 1);
	else if (n > 1 && used < n - 1.5)
		set_in_use(n - 1);
}

/* Starts the adaptation with one slot in use, when the carriers are the kernel's to place. */
void fx_in_use_start(void)
{
	in_use_adapts = !fx_carriers_pinned && fx_ncores > 1 && !fx_rt_inline;
	atomic_store(&fx_in_use, in_use_adapts ? 1u : (unsigned)FLEXSC_MAX_CPUS);
	use_t0 = use_cpu0 = 0;
}

unsigned fx_rt_in_use(uint64_t *changes)
{
	*changes = atomic_load(&in_use_changes);
	unsigned n = atomic_load(&fx_in_use);
	return n < fx_ncores ? n : fx_ncores;
}

/*
 * Balance. A carrier that computed through the whole gap since the last
 * look (nine tenths of it), with more work waiting (queued uthreads, calls
 * in flight), while another carrier taking work sleeps with nothing: at
 * its next switch it gives its next runnable uthread to that one
 * (pick_next). Else two threads that compute between calls take turns on
 * one carrier (each call's completion waits for the other's next call, a
 * single runnable uthread at every switch: nothing to steal) and the other
 * CPU idles.
 */
static void balance_look(struct fx_carrier *c, uint64_t now)
{
	uint64_t cpu;

	if (!c->tid || c->own || atomic_load_explicit(&c->handed, memory_order_relaxed) ||
	    !fx_cpu_clock_ns(fx_carrier_clock(c), &cpu)) {
		c->bal_look_ns = 0;
		return;
	}
	bool busy = c->bal_look_ns && (cpu - c->bal_cpu_ns) * 10 >= (now - c->bal_look_ns) * 9;
	c->bal_cpu_ns = cpu;
	c->bal_look_ns = now;
	if (busy && fx_slot_in_use(c) &&
	    (atomic_load_explicit(&c->rq_len, memory_order_relaxed) || __atomic_load_n(&c->inflight, __ATOMIC_RELAXED)) &&
	    fx_idle_carrier(c))
		atomic_store_explicit(&c->shed, true, memory_order_relaxed);
}

/*
 * Work that came to c during its uthread's slice: a uthread woken onto it,
 * calls whose results may be in, a sleeper whose time came, a cancel. On
 * NPTL each is a thread the kernel wakes, and a woken thread preempts one
 * that has had its slice. Uthreads that were preempted themselves and wait
 * their turn are not: those take turns at the monitor's period, 10 to
 * 20 ms (monitor_tick), as before; at 1 ms the monitor woke 3,400 times a
 * second while three threads computed on two carriers.
 */
static bool fresh_work(struct fx_carrier *c, uint64_t switches, uint64_t now)
{
	return atomic_load_explicit(&c->woken_switch, memory_order_relaxed) == switches + 1 ||
	       __atomic_load_n(&c->inflight, __ATOMIC_RELAXED) ||
	       atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed) || fx_timers_next(c) <= now;
}

/*
 * Whether c's uthread has had its slice, computing, with fresh work
 * waiting on c: then it gives way now, as for a wake (preempt_for_wake),
 * though no wake may have come: the ring's completions and timers have no
 * waker, and a wake early in the slice was let be.
 *
 * A slice is timed from its first look (fx_slice_ran), so *due asks for a
 * look when it will have been spent: for one seen before, at its end; for
 * one seen now for the first time, a slice from now, but only from a look
 * of the period (`first_looks`), not from such a look itself: a server's
 * uthreads switch at every call, so each of these finds a new slice, and
 * looks would follow each other at every slice, thousands a second, for
 * nothing. So the period's looks come two by two, and a uthread that
 * computes for a slice with fresh work waiting is found at the second;
 * once the monitor preempts, its period is the shortest, and every look
 * times.
 */
static bool slice_over(struct fx_carrier *c, uint64_t switches, uint64_t now, uint64_t *due, bool first_looks)
{
	if (!fresh_work(c, switches, now) || !fx_may_preempt(c, switches))
		return false;
	uint64_t ran = fx_slice_ran(c, switches, now);
	/* not the stale look's clock baseline (computing), which tells a carrier blocked since that look */
	if (ran >= FX_SLICE_NS)
		return fx_computes(c);
	if (ran || first_looks) {
		uint64_t end = now + (FX_SLICE_NS - ran);
		*due = end < *due ? end : *due;
	}
	return false;
}

/* One look at every carrier; true if a core was handed over or a uthread preempted. *due, first_looks: see slice_over. */
static bool monitor_tick(uint64_t *due, bool first_looks)
{
	unsigned n = __atomic_load_n(&fx_ncarriers, __ATOMIC_ACQUIRE);
	uint64_t now = fx_now_ns();
	bool acted = false;

	adapt_in_use(now);
	/* two carriers taking work at least, shared ones */
	bool balances = fx_ncores > 1 && atomic_load_explicit(&fx_in_use, memory_order_relaxed) > 1;

	fx_sig_retry();
	if (atomic_load_explicit(&nwatched, memory_order_relaxed) && watch_look())
		acted = true;
	for (unsigned i = 0; i < n; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (!c)
			continue;
		if (balances)
			balance_look(c, now);
		uint64_t switches = __atomic_load_n(&c->switches, __ATOMIC_RELAXED);
		uint64_t beat = switches + __atomic_load_n(&c->syscalls, __ATOMIC_RELAXED);
		bool stale = beat == c->mon_beat;
		c->mon_beat = beat;
		/* signals a carrier could not raise or be poked for: again, a look later */
		if (atomic_load_explicit(&c->sig_retry, memory_order_relaxed) && atomic_exchange(&c->sig_retry, 0))
			fx_poke(c);
		/*
		 * A call run on its caller (the synchronous engine) that must come
		 * back early and has not since the last look: the interrupt may
		 * have landed just before the call entered the kernel. Again.
		 */
		struct fx_uthread *ic = atomic_load(&c->in_call);
		if (ic && stale && c->tid && atomic_load(&c->call_intr) == ic)
			fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_INTERRUPT, 0, 0, 0);
		struct fx_uthread *cur = __atomic_load_n(&c->current, __ATOMIC_RELAXED);
		if (atomic_load(&c->handed)) {
			/* a wake that raced with the hand-over; calls out on a carrier still blocked */
			if (atomic_load_explicit(&c->rq_len, memory_order_relaxed))
				fx_forward_rq(c, fx_owner_of(c));
			if (cur && stale && __atomic_load_n(&c->timers, __ATOMIC_RELAXED))
				fx_timers_move(c, fx_owner_of(c));
			if (cur && stale && __atomic_load_n(&c->inflight, __ATOMIC_RELAXED) &&
			    now - c->mon_poke_ns >= c->mon_poke_gap) {
				poke_blocked(c, now);
				c->mon_poke_gap = c->mon_poke_gap * 2 > FX_POKE_MAX_NS ? FX_POKE_MAX_NS
										     : c->mon_poke_gap * 2;
			}
			continue;
		}
		bool preempted = c->mon_preempted;
		c->mon_preempted = false;
		if (slice_over(c, switches, now, due, first_looks)) {
			preempt(c, switches);
			acted = true; /* looks come often while uthreads compute with others waiting */
			continue;
		}
		if (!cur || !stale || !c->tid ||
		    atomic_load_explicit(&c->sleeping, memory_order_relaxed) != FX_C_AWAKE || !could_run(c)) {
			/*
			 * The CPU clock's last reading is kept across a switch the
			 * monitor asked for: uthreads that compute by turns are not
			 * asked about in /proc after each time slice.
			 */
			if (!(preempted && cur && !stale))
				c->mon_look_ns = 0;
			continue;
		}
		if (computing(c, now)) {
			if (others_wait(c, now))
				preempt(c, switches);
			continue;
		}
		char st = fx_kernel_state(c->tid);
		if ((st == 'S' || st == 'D') && handoff(c, now))
			acted = true;
		else if (st == 'R' && others_wait(c, now))
			preempt(c, switches); /* computing, on a CPU it shares with much other work */
	}
	return acted;
}

/* What --stats tells of the monitor: its looks, those a slice asked for, those after a carrier woke it. */
static _Atomic uint64_t looks, slice_looks, woken_looks;

uint64_t fx_rt_monitor_looks(uint64_t *slice, uint64_t *woken)
{
	*slice = atomic_load_explicit(&slice_looks, memory_order_relaxed);
	*woken = atomic_load_explicit(&woken_looks, memory_order_relaxed);
	return atomic_load_explicit(&looks, memory_order_relaxed);
}

/* Sleeps until CLOCK_MONOTONIC reads `until` (ns). */
static void sleep_until(uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };

	fx_raw_syscall6(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, (long)&ts, 0, 0, 0);
}

/*
 * The wait before the next look, one period long. While every carrier
 * sleeps it is a wait on fx_monitor_waiting (FX_MON_SHORT), so a carrier that
 * wakes meanwhile costs nothing but a store; when none did, the monitor
 * waits on until one wakes (FX_MON_LONG), then one more period, as the look
 * after a carrier woke must come a period after that, not before: a beat
 * unchanged over a shorter gap is not stale.
 */
static void monitor_wait(uint64_t period)
{
	uint64_t until = fx_now_ns() + period;

	if (!all_asleep()) {
		sleep_until(until);
		return;
	}
	/* seq_cst store, then the second look; a waking carrier stores, then loads */
	atomic_store(&fx_monitor_waiting, FX_MON_SHORT);
	if (all_asleep()) {
		struct timespec rel = { (time_t)(period / 1000000000u), (long)(period % 1000000000u) };
		fx_futex_wait(&fx_monitor_waiting, FX_MON_SHORT, &rel);
		uint32_t expect = FX_MON_SHORT;
		/* the same pairing for the long wait: the exchange, then the second look */
		if (atomic_compare_exchange_strong(&fx_monitor_waiting, &expect, FX_MON_LONG) && all_asleep()) {
			struct timespec second = { 1, 0 }; /* a bound, should a wake be missed */
			fx_futex_wait(&fx_monitor_waiting, FX_MON_LONG, &second);
			/* woken: a period from now; the bound's end (still FX_MON_LONG): a look now */
			until = atomic_load(&fx_monitor_waiting) == FX_MON_LONG ? 0 : fx_now_ns() + period;
			if (until)
				atomic_fetch_add_explicit(&woken_looks, 1, memory_order_relaxed);
		}
	}
	atomic_store(&fx_monitor_waiting, FX_MON_RUNS);
	/* the rest of the period: a short wait ends early when a carrier cleared the word before it began */
	if (fx_now_ns() < until)
		sleep_until(until);
}

void *fx_monitor_main(void *arg)
{
	uint64_t period = FX_MON_MAX_NS, next = period;
	bool of_period = true; /* this look is the period's, not one a slice asked for */

	(void)arg;
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-monitor", 0, 0, 0, 0);
	for (;;) {
		monitor_wait(next);
		atomic_fetch_add_explicit(&looks, 1, memory_order_relaxed);
		if (!of_period)
			atomic_fetch_add_explicit(&slice_looks, 1, memory_order_relaxed);
		uint64_t due = UINT64_MAX;
		bool acted = monitor_tick(&due, of_period || period == FX_MON_MIN_NS);
		if (acted)
			period = FX_MON_MIN_NS;
		else if (of_period)
			period = period * 2 > FX_MON_MAX_NS ? FX_MON_MAX_NS : period * 2;
		next = period;
		of_period = true;
		if (due != UINT64_MAX) { /* a slice ends before the period does */
			uint64_t now = fx_now_ns(), left = due > now ? due - now : 0;
			left = left < FX_MON_MIN_NS ? FX_MON_MIN_NS : left;
			if (left < next) {
				next = left;
				of_period = false;
			}
		}
	}
	return NULL;
}

uint64_t fx_rt_handoffs(void)
{
	return atomic_load(&handoffs);
}
