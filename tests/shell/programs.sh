#!/usr/bin/env bash
# Real programs from Debian, unmodified, under flexsc-run and on NPTL side
# by side: each case runs once plainly and once under
# `flexsc-run --require`, and must give the same summary (its output,
# verified data, exit statuses) both times, and pass its own verifier:
#   xz      xz -T0 -1 --block-size=1MiB and back: compressed bytes equal to
#           NPTL's, the round trip equal to the input (cmp)
#   zstd    zstd -T0 -B1MiB and back: the same checks
#   pigz    pigz -p 2 (a reader, two compressing threads and a writer
#           handing blocks on) and back: the same checks
#   sqlite  sqlite3 (PRAGMA threads=4, WAL): a multi-statement workload;
#           its count/sum/max equal to what awk computes from the same
#           rows, PRAGMA integrity_check ok
#   python  python3: threads, Lock, Queue, Condition, os.fork from a
#           threaded process, subprocess (pipes, status, a child ended by
#           SIGTERM, from 8 threads), a SIGUSR1 handler, setitimer,
#           faulthandler.dump_traceback_later; exit status 5; then a
#           threaded python3 (threads in Lock.acquire, Queue.get, sleep)
#           ended by SIGTERM from outside: killed by SIGTERM within 5 s
#   sort    sort --parallel=4 -S 8M of 300,000 generated lines: equal to
#           NPTL's (and sorted: sort -c)
#   make    make -j4 of a generated Makefile (60 targets, a recursive
#           make, the jobserver): the result file equal to NPTL's; then
#           make -j4 -k with a failing recipe: exit status 2 both times
#   git     git init, add and commit 2,000 files (fixed dates: the same
#           commit ids as NPTL), gc --aggressive and repack -adf with 4
#           pack threads, grep with 4 threads, status, fsck --full --strict
#   memcached  memcached -t 4 under memcslap (libmemcached-tools, 8
#           threads: set then get, binary protocol), memccp/memccat of a
#           file, memcstat counters; then SIGTERM: exit 0 within 5 s
#   sshd    OpenSSH's sshd as a service starts it (as root, -D, Debian's
#           /etc/ssh/sshd_config; a host key, port and authorized keys of
#           the test's own): key logins as root run commands (output, exit
#           status, 1 MB through cat, cmp), a wrong key is refused
#           ("Permission denied"); then SIGTERM, after which no sshd
#           process may be left (each session's ends with it). Each login is a
#           privilege-separated child under OpenSSH's seccomp sandbox
#           (which forbids clone, RLIMIT_NPROC 0) that the runtime must
#           serve. Only as root (sshd needs it): otherwise not run.
#   strace  strace -f of sh -c 'echo; exit 3' (strace probes the kernel's
#           CPU mask size with a NULL buffer): the output, the exit status,
#           the traced write
#   redis   redis-server under redis-benchmark (6 tests, -n 20000, 16
#           clients, pipelined), then dbsize and a read-back; once ended
#           by SIGTERM, once by redis-cli SHUTDOWN NOSAVE: exit 0 within
#           5 s both times. (Not with --io-threads: Redis's I/O threads
#           spin-wait without a system call, and a uthread is never
#           preempted: docs/threads.md, Known limits.)
# Every flexsc run passes --require and FLEXSC_RAN_FILE, which must then
# hold a line for the program (a run without the runtime fails); every
# run is bounded by timeout(1). Servers listen on 127.0.0.1 only.
# Clients and verifiers (memcslap, redis-benchmark, cmp, awk) run plainly.
# The programs come from scripts/deps.sh's group "programs", which make test
# and make check-programs install (as root) before any test runs; this
# script installs nothing: a missing one is a skip (77) that names it.
# FLEXSC_PROGRAMS_ONLY: the case names to run (space-separated; default
# every case).
# Logs: $FLEXSC_BUILD/programs/CASE.{nptl,flexsc}/. Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/preload.bash"

tools="xz zstd pigz sqlite3 /usr/bin/python3 git make sort memcached memcslap memccp memccat memcstat redis-server redis-benchmark redis-cli strace"
[ "$(id -u)" = 0 ] && tools="$tools /usr/sbin/sshd ssh ssh-keygen" # the sshd case runs as root only
missing() { for t in $tools; do command -v "$t" >/dev/null || echo "$t"; done; }
if [ -n "$(missing)" ]; then
	echo "skip: not installed: $(missing | tr '\n' ' ')(make deps-test, or scripts/deps.sh programs, as root)"
	exit 77
fi

out=$build/programs
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
all="xz zstd pigz sqlite python sort make git memcached redis strace"
[ "$(id -u)" = 0 ] && all="$all sshd"
cases=${FLEXSC_PROGRAMS_ONLY:-$all}
export LC_ALL=C
fail=0 pass=0

# X SECONDS PROGRAM ARGS...: PROGRAM under the runtime being tested ($rt):
# plainly, or under flexsc-run --require; bounded by timeout.
X() {
	local secs=$1
	shift
	if [ "$rt" = flexsc ]; then
		FLEXSC_RAN_FILE=$ran timeout -k 5 "$secs" "$run" --require -- "$@"
	else
		timeout -k 5 "$secs" "$@"
	fi
}
# XB SECONDS PROGRAM ARGS...: the same, for a program started with &: $!
# is then the timeout process, which passes a signal on to the program.
XB() {
	local secs=$1
	shift
	if [ "$rt" = flexsc ]; then
		FLEXSC_RAN_FILE=$ran exec timeout -k 5 "$secs" "$run" --require -- "$@"
	else
		exec timeout -k 5 "$secs" "$@"
	fi
}
# say WORDS: one line of the summary, which must be the same on both runtimes
say() { echo "$*" >>"$sum"; }
# bad WORDS: a verifier's failure (in the summary too)
bad() { echo "WRONG: $*" >>"$sum"; }
# ms since START (date +%s%N)
since() { echo $((($(date +%s%N) - $1) / 1000000)); }
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A fixed data file, 9 MB of text from an LCG
data=$out/data.txt
awk 'BEGIN { s = 1; for (i = 0; i < 300000; i++) { s = (s * 1103515245 + 12345) % 2147483648;
	printf "%07d %08x %s %d\n", s % 9999991, s, (s % 3 ? "flexsc" : "threads"), i } }' >"$data"

# ---- the cases: each runs in its own directory, once per runtime ----

case_xz() {
	X 120 xz -T0 -1 --block-size=1MiB -c "$data" >data.xz
	say "compress exit $?"
	cp data.xz "$out/xz.$rt.bin"
	X 120 xz -T0 -d -c data.xz >back
	say "decompress exit $?"
	cmp -s back "$data" && say "round trip: same" || bad "round trip differs from the input"
	xz -t data.xz && say "xz -t: ok" || bad "xz -t fails"
	echo xz
}

case_zstd() {
	X 120 zstd -T0 -B1MiB -q -c "$data" >data.zst
	say "compress exit $?"
	cp data.zst "$out/zstd.$rt.bin"
	X 120 zstd -T0 -d -q -c data.zst >back
	say "decompress exit $?"
	cmp -s back "$data" && say "round trip: same" || bad "round trip differs from the input"
	echo zstd
}

case_pigz() {
	X 120 pigz -p 2 -n -c "$data" >data.gz
	say "compress exit $?"
	cp data.gz "$out/pigz.$rt.bin"
	X 120 pigz -p 2 -d -c data.gz >back
	say "decompress exit $?"
	cmp -s back "$data" && say "round trip: same" || bad "round trip differs from the input"
	gzip -t data.gz && say "gzip -t: ok" || bad "gzip -t fails"
	echo pigz
}

case_sqlite() {
	cat >w.sql <<'EOF'
PRAGMA threads=4;
PRAGMA journal_mode=WAL;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200000)
INSERT INTO t SELECT i, (i * 7919) % 100003, printf('v%06d', i) FROM c;
COMMIT;
CREATE INDEX t_k ON t(k, v);
UPDATE t SET v = v || '-odd' WHERE id % 2 = 1;
DELETE FROM t WHERE k % 10 = 0;
CREATE TABLE agg AS SELECT k % 97 AS b, count(*) AS n FROM t GROUP BY b;
SELECT count(*), sum(k), max(v) FROM t;
SELECT b, n FROM agg ORDER BY n DESC, b LIMIT 3;
SELECT v FROM t ORDER BY v DESC LIMIT 2;
PRAGMA integrity_check;
EOF
	X 120 sqlite3 db <w.sql >result 2>&1
	say "exit $?"
	sed 's/^/  /' result >>"$sum"
	# the same rows, counted independently
	want=$(awk 'BEGIN { for (i = 1; i <= 200000; i++) { k = (i * 7919) % 100003; if (k % 10 == 0) continue;
		v = sprintf("v%06d", i); if (i % 2) v = v "-odd"; n++; s += k; if (v > m) m = v }
		printf "%d|%.0f|%s\n", n, s, m }') # %.0f: mawk (the default awk of Debian) caps %d at 2^31-1
	grep -qx "$want" result && say "count|sum|max as awk computes: $want" || bad "no line '$want'"
	grep -qx ok result || bad "integrity_check is not ok"
	echo sqlite3
}

case_python() {
	cat >prog.py <<'EOF'
import faulthandler, os, queue, signal, subprocess, sys, threading, time

def say(*a):
    print(*a, flush=True)

# threads, a lock and a queue: 4 producers, 3 consumers
q = queue.Queue(maxsize=64)
lock = threading.Lock()
total = consumed = 0
def producer(base):
    for i in range(5000):
        q.put(base + i)
def consumer():
    global total, consumed
    while True:
        item = q.get()
        if item is None:
            q.task_done()
            return
        with lock:
            total += item
            consumed += 1
        q.task_done()
prods = [threading.Thread(target=producer, args=(p * 100000,)) for p in range(4)]
cons = [threading.Thread(target=consumer) for _ in range(3)]
for t in prods + cons:
    t.start()
for t in prods:
    t.join()
for _ in cons:
    q.put(None)
q.join()
for t in cons:
    t.join()
want = sum(p * 100000 + i for p in range(4) for i in range(5000))
say("queue: consumed", consumed, "total", total, "ok" if total == want else "WRONG, want %d" % want)

# a condition: two threads take turns
cond = threading.Condition()
turns = []
def ponger():
    for i in range(200):
        with cond:
            while len(turns) % 2 == 0:
                cond.wait()
            turns.append("pong")
            cond.notify()
t = threading.Thread(target=ponger)
t.start()
for i in range(200):
    with cond:
        while len(turns) % 2 == 1:
            cond.wait()
        turns.append("ping")
        cond.notify()
t.join()
say("condition: turns", len(turns),
    "alternating" if all(turns[i] == ("ping", "pong")[i % 2] for i in range(len(turns))) else "WRONG")

# os.fork while another thread takes the lock: each child runs a thread
busy = True
def spinner():
    while busy:
        with lock:
            pass
sp = threading.Thread(target=spinner)
sp.start()
codes = []
for i in range(20):
    with lock:
        pid = os.fork()
    if pid == 0:
        r = []
        c = threading.Thread(target=lambda: r.append(i * 3))
        c.start()
        c.join()
        with lock:
            pass
        os._exit(r[0] % 256)
    _, status = os.waitpid(pid, 0)
    codes.append(os.waitstatus_to_exitcode(status))
busy = False
sp.join()
say("fork: exit codes", "ok" if codes == [i * 3 for i in range(20)] else codes)

# subprocess: pipes both ways, an exit status, a child ended by a signal
data = "".join("%05d\n" % ((i * 7919) % 10007) for i in range(3000))
p = subprocess.run(["sort", "-n"], input=data, capture_output=True, text=True, timeout=60)
say("subprocess: sort", p.returncode, "ok" if p.stdout == "".join(sorted(data.splitlines(True), key=int)) else "WRONG")
p = subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True, timeout=60)
say("subprocess: sh", p.returncode, repr(p.stdout), repr(p.stderr))
p = subprocess.Popen(["sleep", "30"])
time.sleep(0.2)
p.terminate()
say("subprocess: terminated sleep", p.wait(timeout=30))
outs = []
def run_echo(i):
    outs.append(subprocess.check_output(["echo", str(i)], text=True, timeout=60).strip())
ts = [threading.Thread(target=run_echo, args=(i,)) for i in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
say("subprocess: from 8 threads", sorted(outs, key=int))

# signals: SIGUSR1 from another thread while main sleeps; SIGALRM from setitimer
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append("usr1"))
signal.signal(signal.SIGALRM, lambda s, f: got.append("alrm"))
k = threading.Thread(target=lambda: (time.sleep(0.1), os.kill(os.getpid(), signal.SIGUSR1)))
k.start()
time.sleep(1.0)
k.join()
signal.setitimer(signal.ITIMER_REAL, 0.1)
threading.Event().wait(1.0)
end = time.monotonic() + 10
while "alrm" not in got and time.monotonic() < end:
    time.sleep(0.05)
say("signals:", got)

# faulthandler: its watchdog thread dumps the tracebacks while main sleeps
with open("faulthandler.txt", "w+") as f:
    def sleeping_in_main_for_faulthandler():
        time.sleep(1.0)
    faulthandler.dump_traceback_later(0.2, file=f)
    sleeping_in_main_for_faulthandler()
    faulthandler.cancel_dump_traceback_later()
    f.seek(0)
    dump = f.read()
say("faulthandler:", "dumped" if "sleeping_in_main_for_faulthandler" in dump and "Timeout" in dump else "WRONG: " + dump)
say("done")
sys.exit(5)
EOF
	X 120 /usr/bin/python3 prog.py >stdout 2>stderr
	say "exit $?"
	sed 's/^/  /' stdout >>"$sum"
	grep -q WRONG stdout && bad "the program's own checks"
	grep -qx done stdout || bad "it did not finish"

	# a threaded python3 ended by SIGTERM (default action) from outside
	cat >term.py <<'EOF'
import queue, threading, time
lock = threading.Lock()
lock.acquire()
q = queue.Queue()
ts = [threading.Thread(target=lock.acquire), threading.Thread(target=q.get), threading.Thread(target=time.sleep, args=(60,))]
for t in ts:
    t.start()
print("ready", flush=True)
for t in ts:
    t.join()
EOF
	XB 60 /usr/bin/python3 term.py >term.out 2>&1 &
	local pid=$! i
	for i in $(seq 1 100); do grep -q ready term.out 2>/dev/null && break; sleep 0.1; done
	sleep 0.2
	kill -TERM "$pid" # timeout passes it on to python3
	local t0=$(date +%s%N)
	wait "$pid"
	local rc=$? ms=$(since "$t0")
	say "threaded python3 sent SIGTERM: exit $rc"
	[ "$ms" -lt 5000 ] || bad "SIGTERM took $ms ms"
	echo "SIGTERM: exit $rc after $ms ms" >&2
	echo /usr/bin/python3
}

case_sort() {
	X 120 sort --parallel=4 -S 8M "$data" >sorted
	say "exit $?"
	cp sorted "$out/sort.$rt.out"
	sort -c sorted && say "sorted" || bad "not sorted"
	[ "$(wc -l <sorted)" = 300000 ] && say "300000 lines" || bad "$(wc -l <sorted) lines"
	echo sort
}

case_make() {
	mkdir sub
	{
		printf 'N := $(shell seq 1 60)\nOUTS := $(N:%%=t%%.out)\n'
		printf 'all.txt: $(OUTS) sub.txt\n\tcat $(OUTS) sub.txt > $@\n'
		printf 't%%.out:\n\t@sleep 0.0$$(( $* %% 5 )); echo "$@ $$(( $* * $* ))" > $@\n'
		printf 'sub.txt:\n\t$(MAKE) -s -C sub\n\tcp sub/sub.txt $@\n'
		printf 'fail: t1.out t2.out\n\t@false\nother: t3.out\n\t@echo other\n'
	} >Makefile
	printf 'sub.txt: a b c\n\tcat a b c > $@\na b c:\n\techo $@ > $@\n' >sub/Makefile
	X 120 make -s -j4 all.txt >log 2>&1
	say "make -j4: exit $?"
	cp all.txt "$out/make.$rt.txt" 2>/dev/null
	[ "$(wc -l <all.txt)" = 63 ] && say "all.txt: 63 lines" || bad "all.txt"
	grep -qx "t60.out 3600" all.txt || bad "no t60.out line"
	rm -f t1.out t2.out t3.out
	X 120 make -s -j4 -k fail other >klog 2>&1
	say "make -j4 -k with a failing recipe: exit $?"
	echo make
}

case_git() {
	export GIT_AUTHOR_NAME=flexsc GIT_AUTHOR_EMAIL=flexsc@example.invalid GIT_COMMITTER_NAME=flexsc
	export GIT_COMMITTER_EMAIL=flexsc@example.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z
	export GIT_COMMITTER_DATE=2026-01-01T00:00:00Z GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=$PWD
	X 60 git init -q -b main repo
	say "init: exit $?"
	cd repo || return
	awk 'BEGIN { for (d = 0; d < 20; d++) { system("mkdir -p d" d); for (f = 0; f < 100; f++) {
		p = "d" d "/f" f ".txt"; printf "file %d/%d\nline %d flexsc\n", d, f, d * f > p
		for (i = 0; i < f % 13; i++) printf "filler %d %d %d\n", d, f, i > p; close(p) } } }'
	X 60 git add -A
	say "add: exit $?"
	X 60 git commit -q -m first
	say "commit: exit $?"
	for d in $(seq 0 19); do echo more >>"d$d/f1.txt"; done
	X 60 git commit -q -a -m second
	say "commit -a: exit $?"
	say "commits: $(git log --format='%H %s' | tr '\n' ' ')"
	X 120 git -c pack.threads=4 gc -q --aggressive
	say "gc --aggressive: exit $?"
	X 120 git -c pack.threads=4 repack -a -d -f -q --threads=4
	say "repack -adf: exit $?"
	say "objects: $(git count-objects -v | grep -E '^(count|in-pack|packs):' | tr '\n' ' ')"
	X 60 git -c grep.threads=4 grep -n -e 'line 1[0-9] ' -e 'filler 7 9' >grep.out
	say "grep: exit $?, $(wc -l <grep.out) lines, sha256 $(sha256sum <grep.out | cut -c1-16)"
	X 60 git status --porcelain >status.out
	say "status: exit $?, $(wc -l <status.out) lines"
	X 120 git fsck --full --strict >fsck.out 2>&1
	local rc=$?
	say "fsck: exit $rc"
	[ $rc = 0 ] || bad "git fsck: $(head -3 fsck.out)"
	echo git
}

case_memcached() {
	local port pid i rc t0 ms user=()
	port=$(free_port)
	[ "$(id -u)" = 0 ] && user=(-u root)
	XB 300 memcached "${user[@]}" -t 4 -p "$port" -U 0 -l 127.0.0.1 -m 64 -c 256 >server.log 2>&1 &
	pid=$!
	for i in $(seq 1 100); do timeout 5 memcping --servers=127.0.0.1:"$port" 2>/dev/null && break; sleep 0.1; done
	say "memcping: $([ "$i" -lt 100 ] && echo up || echo DOWN)"
	timeout -k 5 120 memcslap --servers=127.0.0.1:"$port" --test=set --concurrency=8 --execute-number=5000 >slap.set 2>&1
	say "memcslap set, 8 threads: exit $?"
	timeout -k 5 120 memcslap --servers=127.0.0.1:"$port" --test=get --concurrency=8 --execute-number=5000 --binary >slap.get 2>&1
	say "memcslap get, binary, 8 threads: exit $?"
	seq 1 100000 >big.txt
	timeout -k 5 30 memccp --servers=127.0.0.1:"$port" big.txt
	say "memccp: exit $?"
	timeout -k 5 30 memccat --servers=127.0.0.1:"$port" big.txt >big.back
	say "memccat: exit $?, $(head -c "$(wc -c <big.txt)" big.back | cmp -s - big.txt && echo same || echo DIFFERS)"
	timeout -k 5 30 memcstat --servers=127.0.0.1:"$port" >stat 2>&1
	say "memcstat: $(grep -E '^\s*(threads|curr_items|total_items|get_hits|get_misses|cmd_set):' stat | tr -d ' \t' | sort | tr '\n' ' ')"
	kill -TERM "$pid"
	t0=$(date +%s%N)
	wait "$pid"
	rc=$? ms=$(since "$t0")
	say "SIGTERM: exit $rc"
	[ "$ms" -lt 5000 ] || bad "SIGTERM took $ms ms"
	echo "SIGTERM: exit $rc after $ms ms" >&2
	echo memcached
}

case_redis() {
	local port pid i rc t0 ms how
	for how in SIGTERM SHUTDOWN; do
		port=$(free_port)
		mkdir -p "$how"
		XB 300 redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
			--dir "$PWD/$how" --logfile "$PWD/$how/server.log" --daemonize no >"$how/stdout" 2>&1 &
		pid=$!
		for i in $(seq 1 100); do [ "$(timeout 5 redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
		say "$how: ping: $([ "$i" -lt 100 ] && echo up || echo DOWN)"
		timeout -k 5 120 redis-benchmark -p "$port" -n 20000 -c 16 -P 4 -r 1000 -q --csv \
			-t set,get,incr,lpush,lpop,hset >"$how/bench.csv" 2>&1
		say "$how: redis-benchmark: exit $?, $(cut -d, -f1 "$how/bench.csv" | tr -d '"' | tr '\n' ' ')"
		cli() { timeout -k 5 30 redis-cli -p "$port" "$@"; }
		cli set flexsc:check 42 >/dev/null
		say "$how: read back $(cli get flexsc:check), incr $(cli incr flexsc:check)," \
			"keys with counter:* $(cli --scan --pattern 'counter:*' | wc -l | tr -d ' ')"
		t0=$(date +%s%N)
		if [ $how = SIGTERM ]; then
			kill -TERM "$pid"
		else
			cli shutdown nosave >/dev/null 2>&1
		fi
		wait "$pid"
		rc=$? ms=$(since "$t0")
		say "$how: exit $rc"
		[ "$ms" -lt 5000 ] || bad "$how took $ms ms"
		echo "$how: exit $rc after $ms ms" >&2
	done
	echo redis-server
}

case_strace() {
	local out rc
	out=$(X 60 strace -f -qq -o trace.txt -e trace=write /bin/sh -c 'echo hello; exit 3')
	rc=$?
	say "strace -f sh: output '$out', exit $rc, traced writes of it: $(grep -c 'write(1, "hello' trace.txt)"
	echo strace
}

case_sshd() {
	local port pid i rc ssh out t0
	ssh-keygen -q -t ed25519 -N '' -f hostkey
	ssh-keygen -q -t ed25519 -N '' -f id
	ssh-keygen -q -t ed25519 -N '' -f stranger
	cp id.pub authorized_keys
	head -c 1000000 "$data" >mb.txt
	port=$(free_port)
	t0=$(sed 's/.*) //' /proc/self/stat | awk '{print $20}') # now, in stat's starttime ticks
	mkdir -p /run/sshd # its privilege separation directory, which the service unit makes
	XB 120 /usr/sbin/sshd -D -e -p "$port" -o ListenAddress=127.0.0.1 -h "$PWD/hostkey" \
		-o AuthorizedKeysFile="$PWD/authorized_keys" -o StrictModes=no -o PidFile=none >server.log 2>&1 &
	pid=$!
	ssh=(timeout -k 5 30 ssh -F none -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no
		-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=10)
	local up=DOWN
	for i in $(seq 1 100); do "${ssh[@]}" -i id root@127.0.0.1 true 2>/dev/null && up=up && break; sleep 0.1; done
	say "first login: $up"
	for i in 1 2 3; do
		out=$("${ssh[@]}" -i id root@127.0.0.1 'echo hello; id -un' 2>&1)
		rc=$?
		say "login $i: $(echo $out), exit $rc"
	done
	"${ssh[@]}" -i id root@127.0.0.1 'exit 7'
	say "exit status of the remote command: $?"
	"${ssh[@]}" -i id root@127.0.0.1 cat <mb.txt >mb.back
	say "1 MB through cat: exit $?, $(cmp -s mb.txt mb.back && echo same || echo DIFFERS)"
	"${ssh[@]}" -i stranger root@127.0.0.1 true 2>stranger.err
	rc=$?
	say "a wrong key: exit $rc, $(grep -q 'Permission denied' stranger.err && echo refused || echo "NOT REFUSED: $(head -c 200 stranger.err)")"
	kill -TERM "$pid"
	wait "$pid"
	say "SIGTERM: exit $?"
	# every session's processes end with it: none is left once the listener is gone
	local left=
	for i in $(seq 1 50); do
		left=$(sshd_since "$t0")
		[ -z "$left" ] && break
		sleep 0.1
	done
	say "sshd processes left 5 s after the last login: $(echo $left | wc -w)"
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
	echo /usr/sbin/sshd
}

# sshd_since TICKS: the PIDs of sshd processes started at TICKS (stat's
# starttime, clock ticks since boot) or after: this case's, as no other
# sshd starts meanwhile on a test machine.
sshd_since() {
	local p start
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = /usr/sbin/sshd ] || continue
		start=$(sed 's/.*) //' "$p/stat" 2>/dev/null | awk '{print $20}')
		[ -n "$start" ] && [ "$start" -ge "$1" ] && echo "${p#/proc/}"
	done
}

for c in $cases; do
	declare -f "case_$c" >/dev/null || { echo "FAIL $c: no such case"; fail=$((fail + 1)); continue; }
	for rt in nptl flexsc; do
		dir=$out/$c.$rt sum=$out/$c.$rt/summary ran=$out/$c.$rt/ran
		mkdir -p "$dir"
		: >"$sum"
		start=$(date +%s%N)
		exe=$(cd "$dir" && "case_$c" 2>>"$dir/log")
		echo "$c on $rt: $(since "$start") ms" >>"$out/times"
	done
	why=()
	nptl=$out/$c.nptl flexsc=$out/$c.flexsc
	grep -q '^WRONG' "$nptl/summary" && why+=("on NPTL: $(grep -m1 '^WRONG' "$nptl/summary")")
	grep -q '^WRONG' "$flexsc/summary" && why+=("under flexsc-run: $(grep -m1 '^WRONG' "$flexsc/summary")")
	cmp -s "$nptl/summary" "$flexsc/summary" || why+=("the summaries differ")
	# the program's executable must have started the runtime at least once
	path=$(readlink -f "$(type -P "$exe")" 2>/dev/null)
	n=$(grep -c " ${path:-/nonexistent}\$" "$flexsc/ran" 2>/dev/null)
	[ "${n:-0}" -ge 1 ] || why+=("the runtime did not run in $exe (no line for ${path:-it} in $flexsc/ran)")
	case $c in
	xz | zstd | pigz) cmp -s "$out/$c.nptl.bin" "$out/$c.flexsc.bin" || why+=("the compressed bytes differ from NPTL's") ;;
	sort) cmp -s "$out/sort.nptl.out" "$out/sort.flexsc.out" || why+=("the output differs from NPTL's") ;;
	make) cmp -s "$out/make.nptl.txt" "$out/make.flexsc.txt" || why+=("all.txt differs from NPTL's") ;;
	esac
	if [ ${#why[@]} = 0 ]; then
		printf 'PASS %s: %s\n' "$c" "$(head -c 300 "$flexsc/summary" | tr '\n' ';')"
		pass=$((pass + 1))
	else
		printf 'FAIL %s\n' "$c"
		printf '     %s\n' "${why[@]}"
		diff "$nptl/summary" "$flexsc/summary" | head -n 20 | sed 's/^/     /'
		tail -n 5 "$flexsc/log" 2>/dev/null | sed 's/^/     log: /'
		fail=$((fail + 1))
	fi
done
sed 's/^/  /' "$out/times"
echo "programs: $pass passed, $fail failed (logs in $out)"
[ $fail -eq 0 ]
