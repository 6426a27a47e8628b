/* SPDX-License-Identifier: MIT */
/* Signals for uthreads (src/threads/signals.c). */
#ifndef FX_THREADS_SIGNALS_H
#define FX_THREADS_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

struct fx_uthread;
struct fx_waiter;

/* What sigpending(2) reports for u: the kernel's pending signals and the runtime's that u blocks. */
uint64_t fx_sig_pending_all(const struct fx_uthread *u);
/* From the handler's entry: a process-directed signal the main thread takes instead (signals.c); true: passed on. */
bool fx_sig_for_leader(struct fx_carrier *c, int sig, const siginfo_t *info);
/* A signalfd of the program takes set: the kernel keeps those signals for it (signals.c). */
void fx_sig_for_signalfd(uint64_t set);
/* In the poke's handler: on the process's first kernel thread, gives the kernel the signals other threads could not (to_kernel). */
void fx_sig_leader_requeue(void);
/* Starts the signal thread unless it runs (a message if it cannot start): signals.c says when. */
void fx_sig_thread_needed(void);
/* A uthread becomes, or stops being, a candidate for process-directed signals. */
void fx_sig_register(struct fx_uthread *u);
void fx_sig_unregister(struct fx_uthread *u);
/* The signals of set a uthread's mask may hold: not SIGKILL, SIGSTOP, glibc's 32 and 33, the runtime's own. */
uint64_t fx_sig_blockable(const sigset_t *set);
/* The kernel mask of a carrier with no uthread to run. */
uint64_t fx_sig_idle_mask(void);
/* pthread_kill: sig for u (sigwait, pending, or delivered on its carrier). */
void fx_sig_send(struct fx_uthread *u, int sig);
/* After u unblocked signals: takes the process-pending ones it now accepts. */
void fx_sig_mask_changed(struct fx_uthread *u);

/*
 * Signal handlers on a carrier (src/preload/signal.c's trampoline):
 * entering one whose trampoline frame is frame (alt: the alternate stack
 * the kernel had), returning from it to level (the count before it), and
 * a siglongjmp/longjmp from inside one to stack pointer sp, restoring
 * mask (NULL: the kernel's stays).
 */
void fx_handler_enter(struct fx_carrier *c, uintptr_t frame, const stack_t *alt);
void fx_handler_return(struct fx_carrier *c, int level);
void fx_handler_longjmp(struct fx_carrier *c, uintptr_t sp, const uint64_t *mask);
/*
 * The trampoline, for a handler of sig that interrupted c while it holds
 * the signal lock (c->sig_locked): instead of running it, sends sig back
 * to c (info) with the program's signals blocked until the lock is let
 * go, also in uc, the context the handler returns to.
 */
void fx_sig_hold(struct fx_carrier *c, int sig, const siginfo_t *info, ucontext_t *uc);

/* After u blocked signals: the process-directed ones it was given and has not taken go to others. */
void fx_sig_mask_blocked(struct fx_uthread *u, uint64_t blocked);
/* Raises on c (running u, no lock held) the signals pending for u that it accepts, with their siginfo. */
void fx_sig_raise(struct fx_carrier *c, struct fx_uthread *u);
/*
 * The monitor's, at each look: uthreads with signals their raise could
 * not queue (sig_stuck: the user's queued signals at RLIMIT_SIGPENDING)
 * take them again, as they take one the signal thread hands them.
 */
void fx_sig_retry(void);
/* Signals pending for u: its own and the process's (the kernel's not included). */
uint64_t fx_sig_pending(const struct fx_uthread *u);
/*
 * sigtimedwait for the calling uthread: the signal number (info filled),
 * -EAGAIN at the deadline (CLOCK_MONOTONIC ns, UINT64_MAX: none), or
 * -ECANCELED when a pthread_cancel ended the wait.
 */
int fx_sig_wait(uint64_t set, siginfo_t *info, uint64_t deadline);
/*
 * Sleeps on w (initialised, made findable by its waker) until woken (0),
 * the deadline (-ETIMEDOUT), or a signal the uthread accepts (-EINTR),
 * and with cancellable also a pthread_cancel (-EINTR); runs the handlers.
 */
int fx_sig_sleep(struct fx_waiter *w, uint64_t deadline, bool cancellable);
/* Sleeps until deadline, a signal it accepts, or cancellation; runs the handlers. */
void fx_sig_interruptible_sleep(uint64_t deadline);
/* In a fork child: self is the only uthread, the signal thread must start again. */
void fx_sig_after_fork_child(struct fx_uthread *self);

#endif
