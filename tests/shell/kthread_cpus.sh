#!/usr/bin/env bash
# The runtime's own kernel threads that are not carriers (the signal
# thread, the monitor) may run on every CPU the process had at start, not
# only on carrier 0's: they inherited its pinning, and on a loaded machine
# waited behind the carriers of that one CPU (the monitor once 1.1 s)
# while another CPU was free. Runs a program that starts a thread (which
# starts the monitor) and sleeps under `flexsc-run --require --cores 0`,
# and compares each such thread's Cpus_allowed_list with the process's
# at start; then the same for a program exec'd, without the preload, in
# a forked child, and for one exec'd with no fork by each exec function,
# from the main thread and from another (after an exec that fails, which
# must return ENOENT and let the program go on); and taskset's command runs
# on the CPUs taskset set. Needs 2 CPUs and a C compiler.
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
[ "$(nproc)" -ge 2 ] || { echo "skip: one CPU: nothing to tell apart"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
want=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
first=${want%%[,-]*}

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static void *nap(void *arg) { (void)arg; sleep(30); return NULL; }
int main(void) { pthread_t t; pthread_create(&t, NULL, nap, NULL); sleep(30); return 0; }
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }
FLEXSC_RAN_FILE=$tmp/ran "$run" --require --cores 0 -- "$tmp/prog" &
pid=$!

fail=0
for name in flexsc-signals flexsc-monitor; do
	got=
	for _ in $(seq 100); do # up to 10 s for the program to start its threads
		for t in /proc/$pid/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = "$name" ] || continue
			got=$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status")
		done
		[ -n "$got" ] && break
		sleep 0.1
	done
	if [ -z "$got" ]; then
		echo "FAIL: no thread named $name in process $pid"
		fail=1
	elif [ "$got" != "$want" ]; then
		echo "FAIL: $name may run on CPUs $got, the process had $want at start (carrier 0 runs on CPU 0)"
		fail=1
	else
		echo "ok: $name on CPUs $got"
	fi
done
[ -s "$tmp/ran" ] || { echo "FAIL: the runtime did not run (no FLEXSC_RAN_FILE line)"; fail=1; }

# A forked child is a process of its own: a program it execs without the
# preload (an empty environment) may run on every CPU the parent had at
# start, not only on the carrier's that forked.
cat >"$tmp/forker.c" <<'C'
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
static void *nop(void *arg) { return arg; }
int main(void)
{
	char *env[] = { NULL }, *argv[] = { "grep", "Cpus_allowed_list", "/proc/self/status", NULL };
	pthread_t t;
	pthread_create(&t, NULL, nop, NULL);
	pthread_join(t, NULL);
	pid_t p = fork();
	if (p == 0) {
		execve("/usr/bin/grep", argv, env);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
C
"$cc" -O2 -pthread -o "$tmp/forker" "$tmp/forker.c" || { echo "FAIL: the forking program does not compile"; exit 1; }
# expect_cpus WHAT GOT: ok when GOT (a Cpus_allowed_list) is the process's at start.
expect_cpus() {
	if [ "$2" != "$want" ]; then
		echo "FAIL: $1 may run on CPUs '$2', the process had $want at start"
		fail=1
	else
		echo "ok: $1 on CPUs $2"
	fi
}

# --cores: pinned carriers, whose one CPU the child must not keep (unpinned
# ones may run on every CPU anyway, and the check would prove nothing)
got=$(FLEXSC_RAN_FILE=$tmp/ran2 "$run" --require --cores "$first" -- "$tmp/forker" | awk '{ print $2 }')
expect_cpus "a program exec'd in a forked child" "$got"
[ -s "$tmp/ran2" ] || { echo "FAIL: the runtime did not run the forking program"; fail=1; }

# A program exec'd without a fork, from the main thread (carrier 0, pinned
# by --cores) and from another thread, through each exec function: it runs, without
# the preload (LD_PRELOAD taken out first), on every CPU the process had
# at start, not on the carrier's one.
cat >"$tmp/execer.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static const char *how;
static void *run(void *arg)
{
	char *argv[] = { "grep", "Cpus_allowed_list", "/proc/self/status", NULL }, *env[] = { NULL };
	(void)arg;
	/* a failed exec returns, with errno, and the program goes on */
	if (execve("/nonexistent/flexsc", argv, env) != -1 || errno != ENOENT)
		_exit(3);
	unsetenv("LD_PRELOAD");
	if (!strcmp(how, "execve")) execve("/usr/bin/grep", argv, env);
	if (!strcmp(how, "execv")) execv("/usr/bin/grep", argv);
	if (!strcmp(how, "execvp")) execvp("grep", argv);
	if (!strcmp(how, "execvpe")) execvpe("grep", argv, env);
	if (!strcmp(how, "execl")) execl("/usr/bin/grep", "grep", "Cpus_allowed_list", "/proc/self/status", (char *)NULL);
	if (!strcmp(how, "execlp")) execlp("grep", "grep", "Cpus_allowed_list", "/proc/self/status", (char *)NULL);
	if (!strcmp(how, "execle")) execle("/usr/bin/grep", "grep", "Cpus_allowed_list", "/proc/self/status", (char *)NULL, env);
	if (!strcmp(how, "syscall-execve")) syscall(SYS_execve, "/usr/bin/grep", argv, env);
	if (!strcmp(how, "syscall-execveat")) syscall(SYS_execveat, AT_FDCWD, "/usr/bin/grep", argv, env, 0);
	_exit(127);
}
int main(int argc, char **argv)
{
	pthread_t t;
	how = argv[1];
	if (argc > 2) { /* from a thread of its own */
		pthread_create(&t, NULL, run, NULL);
		pthread_join(t, NULL);
	}
	run(NULL);
	return 1;
}
C
"$cc" -O2 -pthread -o "$tmp/execer" "$tmp/execer.c" || { echo "FAIL: the exec'ing program does not compile"; exit 1; }
for how in execve execv execvp execvpe execl execlp execle syscall-execve syscall-execveat; do
	for from in "the main thread" "another thread"; do
		rm -f "$tmp/ran3"
		if [ "$from" = "the main thread" ]; then
			got=$(FLEXSC_RAN_FILE=$tmp/ran3 "$run" --require --cores "$first" -- "$tmp/execer" $how | awk '{ print $2 }')
		else
			got=$(FLEXSC_RAN_FILE=$tmp/ran3 "$run" --require --cores "$first" -- "$tmp/execer" $how thread | awk '{ print $2 }')
		fi
		expect_cpus "a program exec'd with $how from $from" "$got"
		[ -s "$tmp/ran3" ] || { echo "FAIL: the runtime did not run the exec'ing program ($how)"; fail=1; }
	done
done
# taskset under flexsc-run: it sets its own CPUs (sched_setaffinity of
# itself, which the runtime keeps for its uthread) and execs the command,
# which must run on those, as on NPTL (it ran on the carrier's, or on all).
last=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status | tr ',' '\n' | tail -n 1)
last=${last##*-}
if command -v taskset >/dev/null; then
	rm -f "$tmp/ran4"
	got=$(FLEXSC_RAN_FILE=$tmp/ran4 "$run" --require -- taskset -c "$last" grep Cpus_allowed_list /proc/self/status | awk '{ print $2 }')
	if [ "$got" != "$last" ]; then
		echo "FAIL: taskset -c $last under flexsc-run ran its command on CPUs '$got'"
		fail=1
	else
		echo "ok: taskset -c $last under flexsc-run ran its command on CPU $got"
	fi
	grep -q 'taskset$' "$tmp/ran4" 2>/dev/null || { echo "FAIL: the runtime did not run taskset"; fail=1; }
fi
exit $fail
