#!/usr/bin/env bash
# Python's os.fork() in a threaded program under flexsc-run: three threads
# contend on a threading.Lock (a semaphore underneath, and the GIL's mutex
# and condition variables) while the main thread forks 100 times, holding
# the lock across each fork (os.register_at_fork, the usual way to keep a
# lock usable in the child); each child starts a thread, joins it, takes
# the lock and exits 7; the parent waits for each with a bounded wait and
# kills a child that does not end. Runs plainly, then under flexsc-run by
# default, with one carrier (--cores 0), --engine threads and --engine
# sync, each bounded by timeout(1). Needs /usr/bin/python3 (else skip).
# Logs: $FLEXSC_BUILD/python-fork/. Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/preload.bash"
py=/usr/bin/python3
[ -x "$py" ] || { echo "skip: $py is not installed"; exit 77; }

out=$build/python-fork
rm -rf "$out"
mkdir -p "$out"
prog=$out/fork_threads.py
cat >"$prog" <<'PY'
import os, sys, threading, time

FORKS = 100
lock = threading.Lock()
stop = False
count = 0
os.register_at_fork(before=lock.acquire, after_in_parent=lock.release, after_in_child=lock.release)

def worker():
    global count
    while not stop:
        with lock:
            count += 1
            if count % 3 == 0:
                time.sleep(0)  # a switch point: one carrier runs the others too

def child():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    with lock:
        pass
    os._exit(7)

def wait_bounded(pid, limit=10.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        r, st = os.waitpid(pid, os.WNOHANG)
        if r == pid:
            return st
        time.sleep(0.0005)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None

if __name__ == "__main__":
    ts = [threading.Thread(target=worker) for _ in range(3)]
    for t in ts:
        t.start()
    bad = 0
    for i in range(FORKS):
        pid = os.fork()
        if pid == 0:
            child()
        st = wait_bounded(pid)
        if st is None or not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 7:
            print("round %d: child %s" % (i, "did not end in 10 s" if st is None else "status %#x" % st),
                  file=sys.stderr)
            bad += 1
            if bad >= 2:
                break
    stop = True
    for t in ts:
        t.join()
    print("forks: %s" % ("FAIL" if bad else "ok"))
    sys.exit(1 if bad else 0)
PY

pass=0 fail=0
result() { # OK WHAT LOG
	if [ "$1" = 1 ]; then
		printf 'PASS %s\n' "$2"
		pass=$((pass + 1))
	else
		printf 'FAIL %s\n' "$2"
		[ -s "$3" ] && tail -n 15 "$3" | sed 's/^/     /'
		fail=$((fail + 1))
	fi
}

# -W ignore: Python 3.12+ warns that forking a threaded process may deadlock
log=$out/plain.log
timeout -k 5 300 "$py" -W ignore "$prog" >"$log" 2>&1
rc=$?
result $((rc == 0)) "python3 os.fork x100 with 3 threads contending, plainly: exit $rc" "$log"
declare -A cfgs=([default]="" [cores0]="--cores 0" [threads]="--engine threads" [sync]="--engine sync")
for cfg in default cores0 threads sync; do
	log=$out/$cfg.log
	# shellcheck disable=SC2086
	timeout -k 5 300 "$run" ${cfgs[$cfg]} -- "$py" -W ignore "$prog" >"$log" 2>&1
	rc=$?
	why="exit $rc"
	[ $rc = 124 ] && why="timed out after 300s"
	result $((rc == 0)) "python3 os.fork x100 with 3 threads contending, flexsc-run ${cfgs[$cfg]:-(default)}: $why" "$log"
done

echo "python fork: $pass passed, $fail failed (logs in $out)"
[ $fail -eq 0 ]
