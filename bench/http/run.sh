#!/usr/bin/env bash
# The thread-per-connection HTTP server on NPTL against FlexSC-Threads.
#   bench/http/run.sh BUILD [--quick | --demo] [--reps N] [--conns "LIST"] [--seconds S] [--out NAME]
#
# Compiles bench/http/server.c as a plain pthread program (no flexsc) and,
# for each connection count (64 256 1024 4096; --quick: 64 1024 and shorter
# runs), starts it
#   nptl        taskset -c 0 server                                 (kernel threads on CPU 0)
#   flexsc      taskset -c 0 flexsc-run --cores 0 -- server         (user threads, one carrier on CPU 0)
#   flexsc-sc1  flexsc-run --cores 0 --syscall-cores 1 -- server    (not with --quick: syscall
#               threads / SQPOLL on CPU 1, which wrk also uses: an extra, not the comparison)
# and loads it with wrk on CPU 1 (taskset -c 1 wrk -t1 -cN --latency,
# keep-alive, 128-byte responses): a warm-up run, then the measured run.
# Every process is stopped by its PID (a /quit request, then TERM, then
# KILL); every wait is bounded. Records requests/s, latency percentiles,
# errors (any socket error or non-2xx response fails the run loudly), the
# server's CPU time (/proc/PID/stat utime+stime around the measured run:
# requests per server CPU-second), its kernel thread count and RSS mid-run,
# how busy each CPU was (to see interference from other work), every 0.5 s
# the accept backlog and whether the server's main thread (flexsc: carrier
# 0) is blocked in a system call of its own (a synchronous fallback), and
# for flexsc the runtime's --stats counters.
#
# --conns and --seconds override the connection counts and the measured
# duration; --out NAME writes results/NAME.jsonl instead of http.jsonl.
# --demo is `make demo`'s part: --quick with 3 reps (64 and 1024
# connections, three 2+6 s runs each for NPTL and flexsc, which goes first
# alternating, medians; about 2 min: one run each swung the headline ratio
# from 1.2x to 1.8x between fresh machines), no waiting for quiet
# unless FLEXSC_BENCH_IDLE_WAIT says so, results/demo-http.jsonl, and a
# short headline table with the flexsc/NPTL ratios instead of the full one.
#
# Output: results/http.jsonl (one JSON object per run, after a "build"
# line) and a table of medians with flexsc/NPTL ratios on stdout. Exit
# status 1 if any run failed. A run with socket errors is backtraced with
# gdb (results/http-hang-*.txt) while its server still runs, and its wrk
# and server output are kept (results/http-fail-*). Each run records how
# much CPU 0 time went to other work ("foreign_cpu0_s"); over 10% of the
# duration marks it "noisy", and the summary uses only quiet runs at a
# connection count where every runtime has one.
#
# Needs wrk (Debian package wrk; scripts/deps.sh bench installs it) and 2 CPUs.
# FLEXSC_BENCH_IDLE_WAIT: seconds to wait for other work to quiet down (default 120; --demo: 0).
# FLEXSC_BENCH_NICE: the nice value of server and wrk (default -20 as root, so
# that other work on a shared machine takes little from either runtime; 0 otherwise).
set -euo pipefail
usage() { echo "usage: bench/http/run.sh BUILD [--quick | --demo] [--reps N] [--conns \"LIST\"] [--seconds S] [--out NAME]" >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1
shift
quick=0 demo=0 reps= conns_opt= dur_opt= name=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--demo) quick=1 demo=1 ;;
	--reps) [ $# -ge 2 ] || usage; reps=$2; shift ;;
	--conns) [ $# -ge 2 ] || usage; conns_opt=$2; shift ;;
	--seconds) [ $# -ge 2 ] || usage; dur_opt=$2; shift ;;
	--out) [ $# -ge 2 ] || usage; name=$2; shift ;;
	*) usage ;;
	esac
	shift
done
name=${name:-$([ $demo = 1 ] && echo demo-http || echo http)}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
out=$here/results
mkdir -p "$out"
jsonl=$out/$name.jsonl

command -v wrk >/dev/null || { echo "bench/http/run.sh: wrk is missing: apt-get install -y wrk (or scripts/deps.sh bench)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench/http/run.sh: needs 2 CPUs (server on 0, wrk on 1)" >&2; exit 1; }
for f in flexsc-run libflexsc-run.so; do
	[ -e "$build/$f" ] || { echo "bench/http/run.sh: $build/$f is missing: run make first" >&2; exit 1; }
done
# wrk and the server each need a descriptor per connection
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [ $quick = 1 ]; then
	conns_list="64 1024" warm=2 dur=6 runtimes="nptl flexsc"
	reps=${reps:-$([ $demo = 1 ] && echo 3 || echo 1)}
else
	conns_list="64 256 1024 4096" warm=3 dur=15 runtimes="nptl flexsc flexsc-sc1"
	reps=${reps:-3}
fi
conns_list=${conns_opt:-$conns_list}
dur=${dur_opt:-$dur}
case "$reps$dur" in *[!0-9]*) usage ;; esac
for n in $conns_list; do case $n in *[!0-9]*) usage ;; esac; done
rm -f "$out"/http-fail-* "$out"/http-hang-* # artifacts of an earlier run would mislead

tmp=$(mktemp -d /tmp/flexsc-http.XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# a private copy of the runtime: other work may rebuild BUILD meanwhile
cp "$build/flexsc-run" "$build/libflexsc-run.so" "$tmp/"
${CC:-cc} -O2 -g -std=c11 -Wall -Wextra -pthread "$here/bench/http/server.c" -o "$tmp/server"

cat >"$tmp/report.lua" <<'EOF'
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
		'"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d,' ..
		'"mean_us":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d}\n',
		summary.requests, summary.duration, summary.bytes,
		e.connect, e.read, e.write, e.status, e.timeout,
		latency.mean, latency:percentile(50), latency:percentile(90),
		latency:percentile(99), latency:percentile(99.9), latency.max))
end
EOF

port=18080
while [ -n "$(ss -ltnH "sport = :$port" 2>/dev/null)" ] && [ $port -lt 18180 ]; do port=$((port + 1)); done
hz=$(getconf CLK_TCK)

rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=false
[ -n "$(git -C "$here" status --porcelain -- src include 2>/dev/null)" ] && dirty=true
printf '{"bench":"build","git":"%s","src_dirty":%s,"libflexsc_run_sha256":"%s","wrk":"%s","date":"%s","quick":%s}\n' \
	"$rev" "$dirty" "$(sha256sum "$tmp/libflexsc-run.so" | cut -c1-16)" \
	"$(wrk -v 2>&1 | head -1 | cut -d' ' -f2)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	"$([ $quick = 1 ] && echo true || echo false)" >"$jsonl"

nice_v=${FLEXSC_BENCH_NICE:-$([ "$(id -u)" = 0 ] && echo -20 || echo 0)}
nice -n "$nice_v" true 2>/dev/null || nice_v=0

# ---- helpers ----
busy_pct() { # percent of all CPUs busy over 3 s
	local a b
	a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
	sleep 3
	b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
	echo "$a $b" | awk '{d = $4 - $2; print (d > 0 ? int(100 * ($3 - $1) / d) : 0)}'
}
cpu_busy() { # busy ticks of cpu0 and cpu1
	awk '/^cpu[01] /{printf "%d ", $2+$3+$4+$7+$8+$9}' /proc/stat
}
proc_ticks() { # utime+stime of a process, all its threads, dead ones included
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'
}
proc_field() { # a field of /proc/PID/status, first number
	awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null
}
alive() { [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; }

start_server() { # runtime log
	local rt=$1 log=$2
	case $rt in
	nptl) nice -n "$nice_v" taskset -c 0 "$tmp/server" --port "$port" --quit >"$log" 2>&1 & ;;
	flexsc) nice -n "$nice_v" taskset -c 0 "$tmp/flexsc-run" --require --cores 0 --stats -- "$tmp/server" --port "$port" --quit >"$log" 2>&1 & ;;
	flexsc-sc1) nice -n "$nice_v" "$tmp/flexsc-run" --require --cores 0 --syscall-cores 1 --stats -- "$tmp/server" --port "$port" --quit >"$log" 2>&1 & ;;
	esac
	server_pid=$!
	for _ in $(seq 100); do # 10 s
		grep -q '^listening on' "$log" 2>/dev/null && return 0
		alive || break
		sleep 0.1
	done
	echo "bench/http/run.sh: FAILED: the $rt server did not start:" >&2
	cat "$log" >&2
	return 1
}

# Ends the server by its PID: /quit (a clean exit that prints --stats), then
# TERM, then KILL. Sets status to its exit status.
stop_server() {
	status=0
	[ -n "$server_pid" ] || return 0
	if alive; then
		timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET /quit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 && cat <&3 >/dev/null" 2>/dev/null || true
		for _ in $(seq 50); do alive || break; sleep 0.1; done
	fi
	if alive; then
		echo "bench/http/run.sh: the server ignored /quit; TERM" >&2
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 20); do alive || break; sleep 0.1; done
	fi
	if alive; then
		kill -KILL "$server_pid" 2>/dev/null || true
	fi
	wait "$server_pid" 2>/dev/null || status=$?
	server_pid=
}

backtrace() { # name: all threads of the running server, before it is killed
	local f=$out/http-hang-$1.txt
	timeout 120 gdb -p "$server_pid" -batch -ex 'set pagination off' -ex 'thread apply all bt' >"$f" 2>&1 || true
	echo "bench/http/run.sh: backtraces of the stuck server in $f" >&2
}

run_wrk() { # conns seconds outfile
	timeout $(($2 + 60)) nice -n "$nice_v" taskset -c 1 wrk -t1 -c "$1" -d "${2}s" --timeout 10s --latency \
		-s "$tmp/report.lua" "http://127.0.0.1:$port/" >"$3" 2>&1 || true
}

stat_of() { # flexsc --stats value: log regex
	sed -n "s/$2/\1/p" "$1" | head -1
}

# ---- wait for quiet, bounded ----
wait_s=${FLEXSC_BENCH_IDLE_WAIT:-$([ $demo = 1 ] && echo 0 || echo 120)}
waited=0
while [ "$wait_s" -gt 0 ]; do
	pct=$(busy_pct)
	[ "$pct" -lt 10 ] && break
	if [ "$waited" -ge "$wait_s" ]; then
		echo "bench/http/run.sh: warning: the CPUs are still ${pct}% busy with other work; measuring anyway (see cpu*_busy_s against server_cpu_s)" >&2
		break
	fi
	[ "$waited" = 0 ] && echo "bench/http/run.sh: the CPUs are ${pct}% busy with other work; waiting up to ${wait_s} s for quiet" >&2
	sleep 7
	waited=$((waited + 10))
done

if [ $demo = 1 ]; then
	nruns=$(($(echo $conns_list | wc -w) * $(echo $runtimes | wc -w) * reps))
	echo "bench/http/run.sh: the HTTP server on NPTL and on flexsc-run: $nruns runs of ${warm}+${dur} s (about $((nruns * (warm + dur + 2))) s)" >&2
fi
failed=0
for rep in $(seq "$reps"); do
	for conns in $conns_list; do
		order=$runtimes
		# alternate which runtime goes first, so drift in the machine's load hits both
		[ $((rep % 2)) = 0 ] && order=$(echo "$runtimes" | tr ' ' '\n' | tac | tr '\n' ' ')
		for rt in $order; do
			tag=$rt-$conns-$rep
			log=$tmp/server-$tag.log
			echo "bench/http/run.sh: $rt, $conns connections, run $rep/$reps (${warm}+${dur} s)" >&2
			if ! start_server "$rt" "$log"; then
				stop_server
				failed=1
				continue
			fi
			run_wrk "$conns" "$warm" "$tmp/warm-$tag.txt"
			read -r c0a c1a <<<"$(cpu_busy)"
			t0=$(proc_ticks "$server_pid")
			run_wrk "$conns" "$dur" "$tmp/wrk-$tag.txt" &
			wrk_pid=$!
			# every 0.5 s: connections waiting to be accepted, and what the server's
			# main thread (for flexsc: carrier 0) is doing ("running" or a syscall number)
			(
				for ((i = 0; i < dur * 2; i++)); do
					echo "$(ss -ltnH "sport = :$port" | awk '{print $2}') $(cut -d' ' -f1 "/proc/$server_pid/task/$server_pid/syscall" 2>/dev/null)"
					[ $i = "$dur" ] && echo "T $(proc_field "$server_pid" Threads) $(proc_field "$server_pid" VmRSS)"
					sleep 0.5
				done >"$tmp/samples-$tag.txt"
			) &
			sampler_pid=$!
			wait "$wrk_pid" || true
			t1=$(proc_ticks "$server_pid")
			read -r c0b c1b <<<"$(cpu_busy)"
			kill "$sampler_pid" 2>/dev/null || true
			wait "$sampler_pid" 2>/dev/null || true
			threads=$(awk '$1 == "T" {print $2}' "$tmp/samples-$tag.txt")
			rss=$(awk '$1 == "T" {print $3}' "$tmp/samples-$tag.txt")
			backlog=$(awk '$1 != "T" && $1 + 0 > m {m = $1} END {print m + 0}' "$tmp/samples-$tag.txt")
			# 426 io_uring_enter, 202 futex: the carrier waiting for work; any other number: a
			# system call the carrier is blocked in itself (for flexsc: a synchronous fallback)
			direct=$(awk '$1 != "T" && $2 ~ /^[0-9]+$/ && $2 != 426 && $2 != 202 {n++} END {print n + 0}' "$tmp/samples-$tag.txt")
			nsamples=$(awk '$1 != "T" {n++} END {print n + 0}' "$tmp/samples-$tag.txt")
			w=$(sed -n 's/^WRKJSON //p' "$tmp/wrk-$tag.txt")
			warm_req=$(sed -n 's/^WRKJSON {"requests":\([0-9]*\).*/\1/p' "$tmp/warm-$tag.txt")
			ok=true why=
			if [ -z "$w" ]; then
				ok=false why="wrk produced no result"
				w='{"requests":0}'
			elif ! echo "$w" | grep -q '"err_connect":0,"err_read":0,"err_write":0,"err_status":0,"err_timeout":0'; then
				ok=false why="socket errors or non-2xx responses"
			elif echo "$w" | grep -q '"requests":0,'; then
				ok=false why="no request answered"
			fi
			if [ $ok = false ] && alive; then
				backtrace "$tag"
			fi
			if [ -z "$t0" ] || [ -z "$t1" ]; then
				ok=false why="${why:+$why; }the server died during the run" t0=0 t1=0
			fi
			stop_server
			if [ "$status" != 0 ]; then
				ok=false why="${why:+$why; }the server exited with status $status"
			fi
			fx='null'
			if [ "$rt" != nptl ]; then
				calls=$(stat_of "$log" '^flexsc-run: \([0-9]*\) exception-less calls.*')
				sws=$(stat_of "$log" '^flexsc-run: [0-9]* exception-less calls, \([0-9]*\) user-level switches.*')
				sleeps=$(stat_of "$log" '.* \([0-9]*\) idle sleeps.*')
				batches=$(stat_of "$log" '^flexsc-run: carrier 0: batches \([0-9]*\),.*')
				waits=$(stat_of "$log" '^flexsc-run: carrier 0: batches [0-9]*, waits \([0-9]*\) .*')
				wait_ms=$(stat_of "$log" '^flexsc-run: carrier 0: .* waits [0-9]* (\([0-9.]*\) ms).*')
				engine=$(stat_of "$log" '^flexsc-run: [0-9]* carriers, engine \([a-z]*\).*')
				hist=$(sed -n 's/^flexsc-run: carrier 0: .*batch sizes //p' "$log" | head -1)
				if [ -n "$calls" ]; then
					fx=$(printf '{"engine":"%s","calls":%s,"switches":%s,"idle_sleeps":%s,"batches":%s,"waits":%s,"wait_ms":%s,"batch_hist":"%s","requests_total":%s}' \
						"$engine" "$calls" "$sws" "${sleeps:-0}" "${batches:-0}" "${waits:-0}" "${wait_ms:-0}" "$hist" \
						"$(( ${warm_req:-0} + $(echo "$w" | sed 's/.*"requests":\([0-9]*\).*/\1/') + 1 ))")
				else
					ok=false why="${why:+$why; }no --stats output (the runtime did not exit cleanly)"
				fi
			fi
			line=$(W="$w" FX="$fx" /usr/bin/python3 - "$rt" "$conns" "$rep" "$dur" "$((t1 - t0))" "$hz" \
				"$((c0b - c0a))" "$((c1b - c1a))" "${threads:-0}" "${rss:-0}" "$ok" "$why" "$nice_v" \
				"$backlog" "$direct" "$nsamples" <<'EOF'
import json, os, sys
rt, conns, rep, dur, ticks, hz, c0, c1, threads, rss, ok, why, nice, backlog, direct, nsamples = sys.argv[1:]
w = json.loads(os.environ["W"])
hz = float(hz)
cpu = int(ticks) / hz
req = w.get("requests", 0)
d = w.get("duration_us", 0) / 1e6
r = {"bench": "http", "runtime": rt, "conns": int(conns), "rep": int(rep),
     "layout": "server CPU 0, wrk CPU 1" + (", syscall core 1" if rt == "flexsc-sc1" else ""),
     "nice": int(nice), "duration_s": round(d, 3), "requests": req, "rps": round(req / d, 1) if d else 0}
for k in ("mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"):
    if k in w:
        r[k] = w[k]
r["errors"] = {k[4:]: w.get(k, 0) for k in ("err_connect", "err_read", "err_write", "err_status", "err_timeout")}
r["server_cpu_s"] = round(cpu, 2)
r["rps_per_cpu_s"] = round(req / cpu, 1) if cpu else None
r["cpu0_busy_s"] = round(int(c0) / hz, 2)
r["cpu1_busy_s"] = round(int(c1) / hz, 2)
# CPU 0 time the server was not charged for: other work on the machine
r["foreign_cpu0_s"] = round(max(0.0, int(c0) / hz - cpu), 2)
r["noisy"] = r["foreign_cpu0_s"] > 0.1 * float(dur)
r["accept_backlog_max"] = int(backlog)
if rt != "nptl":
    r["carrier_in_direct_syscall"] = f"{direct}/{nsamples} samples"
r["server_threads"] = int(threads)
r["server_rss_kib"] = int(rss)
fx = json.loads(os.environ["FX"])
if fx:
    tot = fx["requests_total"] or 1
    fx["calls_per_request"] = round(fx["calls"] / tot, 2)
    fx["switches_per_request"] = round(fx["switches"] / tot, 2)
    fx["calls_per_batch"] = round(fx["calls"] / fx["batches"], 1) if fx["batches"] else None
    r["flexsc"] = fx
r["ok"] = ok == "true"
if why:
    r["failure"] = why
print(json.dumps(r, separators=(",", ":")))
EOF
)
			echo "$line" >>"$jsonl"
			if [ $ok = false ]; then
				failed=1
				echo "bench/http/run.sh: FAILED: $rt, $conns connections: $why" >&2
				echo "---- wrk ----" >&2; cat "$tmp/wrk-$tag.txt" >&2
				echo "---- server ----" >&2; tail -20 "$log" >&2
				cp "$tmp/wrk-$tag.txt" "$out/http-fail-$tag.wrk.txt"
				cp "$log" "$out/http-fail-$tag.server.txt"
			fi
		done
	done
done

/usr/bin/python3 - "$jsonl" "$([ $demo = 1 ] && echo demo || echo full)" "$dur" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode, dur = sys.argv[2], float(sys.argv[3])
runs = [r for r in rows if r.get("bench") == "http"]
def pick(rt, n):
    """the runs that passed; only the quiet ones when every runtime has one at n (fair: same conditions)"""
    v = [r for r in runs if r["runtime"] == rt and r["conns"] == n and r["ok"]]
    both = all(any(not r.get("noisy") for r in runs if r["runtime"] == x and r["conns"] == n and r["ok"])
               for x in {r["runtime"] for r in runs if r["conns"] == n})
    return [r for r in v if not r.get("noisy")] if both else v
def med(rt, n, k):
    v = [r[k] for r in pick(rt, n) if r.get(k) is not None]
    return statistics.median(v) if v else None
rts = [rt for rt in ("nptl", "flexsc", "flexsc-sc1") if any(r["runtime"] == rt for r in runs)]
conns = sorted({r["conns"] for r in runs})
fmt = lambda v, f="{:.0f}": "-" if v is None else f.format(v)
ratio = lambda a, b: None if a is None or not b else a / b
keys = ("rps", "p50_us", "p99_us", "rps_per_cpu_s", "server_threads")
goal = []
def print_goal():
    for n, rx, px in goal:
        met = rx is not None and px is not None and rx >= 1.5 and px <= 1.0
        print(f'goal at {n:,} connections (flexsc >= 1.5x NPTL req/s, p99 no worse): '
              f'{"met" if met else "NOT met"} (req/s {fmt(rx, "{:.2f}")}x, p99 {fmt(px, "{:.2f}")}x)')
if mode == "demo":
    # make demo: one short run per runtime and count, the ratios spelled out
    name = {"nptl": "NPTL", "flexsc": "flexsc-run", "flexsc-sc1": "flexsc-run sc1"}
    def ms(us):
        return "-" if us is None else f"{us / 1e3:.2f}" if us < 1e4 else f"{us / 1e3:.1f}" if us < 1e5 else f"{us / 1e3:,.0f}"
    def x(v):
        return "-" if v is None else f"{v:.2f}x"
    print()
    print("FlexSC-Threads: the bundled thread-per-connection HTTP server (bench/http/server.c, a plain")
    print("pthread program), on NPTL kernel threads against build/flexsc-run user threads; server on")
    most = max([sum(1 for r in runs if (r["runtime"], r["conns"]) == k) for k in {(r["runtime"], r["conns"]) for r in runs}] or [1])
    each = f"one {dur:.0f}-s run each" if most == 1 else f"medians of {most} {dur:.0f}-s runs"
    print(f"CPU 0, wrk -t1 on CPU 1, keep-alive, 128-byte responses, {each}")
    print(f'{"connections":>11}  {"runtime":<16} {"req/s":>9} {"p50 ms":>8} {"p99 ms":>8} {"req per server CPU-s":>21} '
          f'{"kernel threads":>15} {"other work on CPU 0":>20}')
    noisy = False
    for n in conns:
        m = {rt: {k: med(rt, n, k) for k in keys} for rt in rts}
        for rt in rts:
            mine = [r for r in runs if r["runtime"] == rt and r["conns"] == n]
            bad = [r for r in mine if not r["ok"]]
            mark = "*" if any(r.get("noisy") for r in pick(rt, n)) else ""
            noisy = noisy or bool(mark)
            others = statistics.median([r["foreign_cpu0_s"] / r["duration_s"] for r in pick(rt, n) if r.get("duration_s")] or [0])
            if not pick(rt, n):
                why = bad[0].get("failure", "failed") if bad else "no run"
                print(f'{n:>11,}  {name[rt] + mark:<16} FAILED: {why}')
                continue
            v = m[rt]
            print(f'{n:>11,}  {name[rt] + mark:<16} {fmt(v["rps"], "{:,.0f}"):>9} {ms(v["p50_us"]):>8} {ms(v["p99_us"]):>8} '
                  f'{fmt(v["rps_per_cpu_s"], "{:,.0f}"):>21} {fmt(v["server_threads"] or None, "{:,.0f}"):>15} '
                  f'{min(others, 1):>20.0%}')
        if "nptl" in m and "flexsc" in m:
            b, f = m["nptl"], m["flexsc"]
            r = {k: ratio(f[k], b[k]) for k in keys[:4]}
            print(f'{n:>11,}  {"flexsc / NPTL":<16} {x(r["rps"]):>9} {x(r["p50_us"]):>8} {x(r["p99_us"]):>8} '
                  f'{x(r["rps_per_cpu_s"]):>21}')
            if n >= 1024:
                goal.append((n, r["rps"], r["p99_us"]))
    print("flexsc / NPTL: req/s and req per server CPU-s above 1x, p50 and p99 below 1x favour flexsc.")
    print_goal()
    if noisy:
        print("* other work on this machine took over 10% of CPU 0 (the server's CPU) during the run:")
        print("  its numbers are disturbed; run `make demo` again on a quiet machine to compare")
else:
    print("medians over the runs that passed; only over the quiet ones (other work took under 10% of CPU 0)")
    print("where every runtime has one at that count; runs: how many; ratios are flexsc / NPTL")
    hdr = (f'{"conns":>6} {"runtime":<11} {"runs":>4} {"req/s":>9} {"p50 us":>8} {"p99 us":>9} {"req/CPU-s":>10} '
           f'{"threads":>8}   {"rps x":>6} {"p50 x":>6} {"p99 x":>6} {"eff x":>6}')
    print(hdr)
    for n in conns:
        base = {k: med("nptl", n, k) for k in keys}
        for rt in rts:
            m = {k: med(rt, n, k) for k in keys}
            rx, p5x, px, ex = (ratio(m[k], base[k]) if rt != "nptl" else None
                               for k in ("rps", "p50_us", "p99_us", "rps_per_cpu_s"))
            print(f'{n:>6} {rt:<11} {len(pick(rt, n)):>4} {fmt(m["rps"]):>9} {fmt(m["p50_us"]):>8} {fmt(m["p99_us"]):>9} '
                  f'{fmt(m["rps_per_cpu_s"]):>10} {fmt(m["server_threads"]):>8}   '
                  f'{fmt(rx, "{:.2f}"):>6} {fmt(p5x, "{:.2f}"):>6} {fmt(px, "{:.2f}"):>6} {fmt(ex, "{:.2f}"):>6}')
            if rt == "flexsc" and n >= 1024:
                goal.append((n, rx, px))
    print_goal()
bad = [r for r in runs if not r["ok"]]
if bad:
    print(f'{len(bad)} run(s) FAILED: ' + "; ".join(f'{r["runtime"]}/{r["conns"]}: {r.get("failure")}' for r in bad))
EOF
echo "bench/http/run.sh: results in $jsonl" >&2
exit $failed
