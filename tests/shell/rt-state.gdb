# gdb commands that print the FlexSC-Threads runtime's state in a stopped
# process: each carrier, then each live user thread with its state and,
# when it is not running, its backtrace. Kernel-thread backtraces show only
# carriers; user threads are contexts gdb does not know of. threads.sh
# sources this file when a run reaches its timeout, so a hang on a CI
# machine says which user thread waits in what.
#
# A parked user thread's stack is as fx_ctx_switch (src/threads/ctx.S) left
# it: 8 bytes of FP control words, r15 r14 r13 r12 rbx rbp, then the return
# address; the selected kernel thread's registers are pointed there for
# `bt` and restored after.
set pagination off
set print thread-events off
# No function of the process is called: gdb cannot call one on CPUs with
# AMX state ("Couldn't write extended state status: Bad address", and the
# script ended there). The clock, for the timers' deadlines, is the
# system's CLOCK_MONOTONIC, read by gdb's Python.
printf "--- runtime: %u carriers\n", fx_ncarriers
python import time; print("CLOCK_MONOTONIC now %d ns" % time.clock_gettime_ns(time.CLOCK_MONOTONIC))
set $i = 0
while $i < fx_ncarriers
	set $c = fx_carriers[$i]
	if $c == 0
		printf "carrier %u: not started (a fork child starts it with its first thread)\n", $i
	else
		printf "carrier %u: tid %d cpu %d sleeping %d handed %d parked %u run queue %u in flight %u pending %u ready %u current %d\n", $i, $c->tid, $c->cpu, $c->sleeping, $c->handed, $c->parked, $c->rq_len, $c->inflight, $c->q->npending, $c->q->nready, $c->current ? $c->current->id : -1
		set $w = $c->timers
		while $w != 0
			printf "  timer: uthread %d deadline %lu state %d\n", $w->u ? $w->u->id : -1, $w->deadline, $w->state
			set $w = $w->tnext
		end
	end
	set $i = $i + 1
end
set $save_sp = $sp
set $save_pc = $pc
set $save_rbp = $rbp
set $u = 'signals.c'::reg_head
while $u != 0
	printf "--- uthread %d \"%s\": state %d (0 runnable 1 running 2 blocked 3 syscall 4 overflow 5 exited), call %lu, overflow nr %ld, home carrier %d\n", $u->id, $u->name, $u->state, $u->pending_call, $u->overflow_nr, $u->home ? $u->home->index : -1
	if $u->state != 1 && $u->sp != 0
		set $sp = (char *)$u->sp + 64
		set $pc = *(void **)((char *)$u->sp + 56)
		set $rbp = *(void **)((char *)$u->sp + 48)
		bt 15
		set $sp = $save_sp
		set $pc = $save_pc
		set $rbp = $save_rbp
	end
	set $u = $u->reg_next
end
