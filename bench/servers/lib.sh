# bench/servers/lib.sh: what apache.sh, mariadb.sh, bind.sh and nginx.sh share. Sourced.
#
# Every script runs one real Debian server, unmodified, on NPTL and under
# flexsc-run, side by side:
#   nptl     taskset -c 0 SERVER...                              (kernel threads on CPU 0)
#   flexsc   taskset -c 0 flexsc-run --require --cores 0 --stats -- SERVER... (one carrier on CPU 0)
# with its client pinned to CPU 1 (taskset -c 1), for a bounded time per
# point. It records throughput, mean and p99 latency, the server's CPU time
# (utime+stime from /proc/PID/stat of every server process, children
# included, and of the children it reaped: work per server CPU-second) and
# the client's errors; any error, a server that does not start, one
# that dies, or a flexsc-run whose runtime did not start in the server
# (no FLEXSC_RAN_FILE line for the server's PID), fails the point loudly
# (exit status 1). A server that does
# not start or stops answering is backtraced with gdb while it still runs:
# every kernel thread, and under flexsc-run every parked user thread too
# (bench/servers/uthreads-bt.py); the file is named in the failure.
# Every process is started in the background and stopped by its PID
# (the server's own stop command, then TERM, then KILL; every wait bounded).
#
# Each point runs --repeat N times under every runtime (default 1; make
# bench-servers: 5), the runtimes' order reversed every other time (nptl
# flexsc, flexsc nptl, ...: neither always meets the machine first); every
# run is one JSON line with its "repeat", "run_order" and "attempt". A run
# that other work disturbed ("noisy": other processes, or the hypervisor,
# took more than 10% of CPU 0 while it was measured; interrupt time,
# which the server's own traffic causes, is not counted) is run again once, right after it
# (after waiting for quiet): its record gets "rerun": true and the rerun's
# "attempt": 2, and summaries and plots use the rerun. The table gives per
# point and runtime the median and the spread (min-max) of the runs, and
# the medians of the flexsc / NPTL ratios of the runs of the same repeat
# (bench/servers/summary.py).
#
# Common options (after BUILD): --seconds S (measured, default 10), --warm S
# (unmeasured load first, default 2), --repeat N, --runtimes "nptl flexsc" (or
# flexsc-sc1: --cores 0 --syscall-cores 1, the server's carrier on CPU 0
# and its syscall threads / SQPOLL thread on CPU 1, which the client
# shares; recorded in "layout"; flexsc-eN: as flexsc with --entries N,
# N syscall entries per carrier, the paper's figure 16; flexsc-remote:
# as flexsc-sc1 with --engine threads, every posted call on CPU 1;
# flexsc-auto: as flexsc-sc1 with --specialize auto, the runtime choosing
# between the two while it runs; nptl-2c and flexsc-2c: the server on
# both CPUs, flexsc as a user starts it (no --cores: a carrier for each
# CPU, the kernel placing them), the client sharing CPU 1; flexsc-pin-2c:
# the same with --cores 0,1, each carrier pinned to its CPU;
# flexsc-type, flexsc-io, flexsc-iotype: as flexsc with --order type,
# io-first, io-first,type: each batch ordered before it is issued),
# --out NAME
# (results/NAME.jsonl; default servers-SERVER). Environment: as bench/http:
# FLEXSC_BENCH_IDLE_WAIT (seconds to wait for other work to quiet down,
# default 60), FLEXSC_BENCH_NICE (default -20 as root).
#
# The server's files (configuration, data, logs) live in a private
# directory under /tmp, removed at exit; the artifacts of a failed point
# are copied to results/servers-SERVER-fail-TAG.* first. Nothing touches a system
# instance: own ports on 127.0.0.1 only, own pid files, sockets and keys.
# nginx.sh is the exception by design: it runs Debian's configuration as
# installed (port 80, /run/nginx.pid, /var/log/nginx), refuses to start
# beside a running nginx, and puts the log files back after every run
# (its sv_cleanup_fn, called at exit too).

sv_here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sv_out=$sv_here/results
sv_failed=0
SV_SKIP_AFTER_START_FAILURE=1 # a runtime whose server did not start once is not tried again
SV_DEAD_RT=
SV_CHILD_PIDS=
SV_COMM=${SV_COMM:-} # the server's process name (sv_live_orphan), set by the script before it sources this
SERVER_PID=
SV_EXTRA_PIDS=

sv_die() { echo "$SV_NAME: $*" >&2; exit 1; }

# sv_autogroup "$0" "$@": with the kernel's autogroups (sched_autogroup_enabled),
# nice only ranks processes within one session, so nice -20 does nothing
# against other sessions' load. As root the script runs itself again in a
# session of its own (setsid -w) and gives that session's autogroup the
# nice FLEXSC_BENCH_NICE (default -20): only what the script starts is
# in it. FLEXSC_BENCH_AUTOGROUP=0 leaves it alone.
sv_autogroup() {
	if [ "${FLEXSC_BENCH_AUTOGROUP:-1}" = 1 ] && [ "$(id -u)" = 0 ] && [ -z "${SV_OWN_SESSION:-}" ] &&
		[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] && command -v setsid >/dev/null; then
		export SV_OWN_SESSION=1
		exec setsid -w "$@"
	fi
	if [ -n "${SV_OWN_SESSION:-}" ] && [ -w /proc/self/autogroup ]; then
		echo "${FLEXSC_BENCH_NICE:--20}" >/proc/self/autogroup 2>/dev/null || true
	fi
	sv_autogroup_now=$(cat /proc/self/autogroup 2>/dev/null | tr -d '\n' || true)
}
sv_log() { echo "$SV_NAME: $*" >&2; }

# sv_parse_common "$@": sets sv_build, sv_dur, sv_warm, sv_runtimes, sv_name;
# leaves what it does not know in SV_ARGS for the script.
sv_parse_common() {
	[ $# -ge 1 ] || sv_usage
	sv_build=$(cd "$1" 2>/dev/null && pwd) || sv_die "no build directory '$1'"
	shift
	sv_dur=10 sv_warm=2 sv_repeat=1 sv_runtimes="nptl flexsc" sv_name=servers-$SV_SERVER
	SV_ARGS=()
	while [ $# -gt 0 ]; do
		case $1 in
		--seconds) [ $# -ge 2 ] || sv_usage; sv_dur=$2; shift ;;
		--warm) [ $# -ge 2 ] || sv_usage; sv_warm=$2; shift ;;
		--repeat) [ $# -ge 2 ] || sv_usage; sv_repeat=$2; shift ;;
		--runtimes) [ $# -ge 2 ] || sv_usage; sv_runtimes=$2; shift ;;
		--out) [ $# -ge 2 ] || sv_usage; sv_name=$2; shift ;;
		-h|--help) sv_usage ;;
		*) SV_ARGS+=("$1") ;;
		esac
		shift
	done
	case "$sv_dur$sv_warm$sv_repeat" in *[!0-9]*|'') sv_usage ;; esac
	[ "$sv_repeat" -ge 1 ] || sv_usage
	for rt in $sv_runtimes; do
		case $rt in nptl|nptl-2c|flexsc|flexsc-2c|flexsc-pin-2c|flexsc-sc1|flexsc-remote|flexsc-auto|flexsc-e[0-9]*|flexsc-type|flexsc-io|flexsc-iotype) ;;
		*) sv_die "unknown runtime '$rt' (nptl nptl-2c flexsc flexsc-2c flexsc-pin-2c flexsc-sc1 flexsc-remote flexsc-auto flexsc-eENTRIES flexsc-type flexsc-io flexsc-iotype)" ;; esac
	done
}

# sv_setup CMD...: checks the tools, makes the private directory and the
# private copy of the runtime, the JSONL file and its build line.
sv_setup() {
	local c
	for c in "$@" taskset gdb python3 ss; do
		command -v "$c" >/dev/null || sv_die "$c is missing: scripts/deps.sh servers (or make bench-servers)"
	done
	[ "$(nproc)" -ge 2 ] || sv_die "needs 2 CPUs (server on 0, client on 1)"
	for c in flexsc-run libflexsc-run.so; do
		[ -e "$sv_build/$c" ] || sv_die "$sv_build/$c is missing: run make first"
	done
	ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	mkdir -p "$sv_out"
	sv_jsonl=$sv_out/$sv_name.jsonl
	rm -f "$sv_out/servers-$SV_SERVER"-fail-* # artifacts of an earlier run would mislead
	sv_tmp=$(mktemp -d "/tmp/flexsc-$SV_SERVER.XXXXXX")
	chmod 755 "$sv_tmp" # servers drop privileges (www-data, mysql, bind) and must reach it
	trap sv_cleanup EXIT
	trap 'exit 130' INT TERM
	# a private copy of the runtime: other work may rebuild BUILD meanwhile
	mkdir "$sv_tmp/rt"
	cp "$sv_build/flexsc-run" "$sv_build/libflexsc-run.so" "$sv_tmp/rt/"
	chmod 755 "$sv_tmp/rt"
	# every flexsc-run is --require (a server whose runtime cannot start exits
	# with 122 instead of being measured on NPTL) with FLEXSC_RAN_FILE here:
	# made writable first, for servers started as another user
	: >"$sv_tmp/ran"
	chmod 666 "$sv_tmp/ran"
	sv_hz=$(getconf CLK_TCK)
	sv_nice=${FLEXSC_BENCH_NICE:-$([ "$(id -u)" = 0 ] && echo -20 || echo 0)}
	nice -n "$sv_nice" true 2>/dev/null || sv_nice=0
	local rev dirty=false
	rev=$(git -C "$sv_here" rev-parse --short HEAD 2>/dev/null || echo unknown)
	[ -n "$(git -C "$sv_here" status --porcelain -- src include 2>/dev/null)" ] && dirty=true
	printf '{"bench":"build","server":"%s","git":"%s","src_dirty":%s,"libflexsc_run_sha256":"%s","server_version":"%s","date":"%s","seconds":%s,"warm":%s,"repeat":%s,"autogroup":"%s"}\n' \
		"$SV_SERVER" "$rev" "$dirty" "$(sha256sum "$sv_tmp/rt/libflexsc-run.so" | cut -c1-16)" \
		"$(sv_version | tr -d '"\\' | head -1)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$sv_dur" "$sv_warm" "$sv_repeat" "${sv_autogroup_now:-}" >"$sv_jsonl"
}

sv_cleanup() {
	local p
	for p in $SV_EXTRA_PIDS $SERVER_PID; do
		if kill -0 "$p" 2>/dev/null; then
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
	# reaped first: until then the server is not gone, and its children
	# are not orphans (and under set -e, a failing last command of a
	# list would end the cleanup here)
	if [ -n "$SERVER_PID" ]; then wait "$SERVER_PID" 2>/dev/null || true; fi
	# the server's children (Apache's, nginx's workers) that outlived it, by the PIDs recorded
	for p in ${SV_CHILD_PIDS:-}; do
		if sv_live_orphan "$p"; then kill -KILL "$p" 2>/dev/null || true; fi
	done
	# the script's own undoing (nginx.sh: the system's log files), before its files go
	if [ -n "${sv_cleanup_fn:-}" ]; then $sv_cleanup_fn || true; fi
	if [ -n "${sv_tmp:-}" ]; then rm -rf "$sv_tmp"; fi
	return 0
}

# A recorded child of the server that still runs (not a zombie) with the server gone.
sv_live_orphan() {
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st%% *}" != Z ] && [ "${st%% *}" != X ] &&
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$SV_COMM" ] &&
		{ [ -z "$SERVER_PID" ] || [ "$(echo "$st" | awk '{print $2}')" != "$SERVER_PID" ] || ! sv_alive; }
}

sv_ppid() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $2}'; }

# A free TCP (and UDP) port from $1 on.
sv_port() {
	local p=$1
	while [ -n "$(ss -tulnH "sport = :$p" 2>/dev/null)" ] && [ "$p" -lt $(($1 + 200)) ]; do p=$((p + 1)); done
	echo "$p"
}

# Waits (bounded) until other work leaves the CPUs mostly idle, as bench/http.
sv_wait_quiet() {
	local wait_s=${FLEXSC_BENCH_IDLE_WAIT:-60} waited=0 a b pct
	while [ "$wait_s" -gt 0 ]; do
		a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
		sleep 3
		b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
		pct=$(echo "$a $b" | awk '{d = $4 - $2; print (d > 0 ? int(100 * ($3 - $1) / d) : 0)}')
		[ "$pct" -lt 10 ] && break
		if [ "$waited" -ge "$wait_s" ]; then
			sv_log "warning: the CPUs are still ${pct}% busy with other work; measuring anyway (see foreign_cpu0_s)"
			break
		fi
		[ "$waited" = 0 ] && sv_log "the CPUs are ${pct}% busy with other work; waiting up to ${wait_s} s for quiet"
		sleep 7
		waited=$((waited + 10))
	done
}

# CPU 0's ticks: busy in processes (user, nice, system) or taken by the
# hypervisor (steal), and in interrupts (irq, softirq). The second is kept
# apart: a server's own network traffic is handled there, and it is
# charged to no process, so it would count as other work.
sv_cpu0_busy() { awk '/^cpu0 /{print $2+$3+$4+$9, $7+$8}' /proc/stat; }

# The PIDs of a process and all its descendants. Read with the shell's
# own read, no process per thread: it runs while the server is measured
# (sv_threads), on the client's CPU, and a cat per thread of an NPTL
# Apache (2,113 threads) took CPU from the server when it had both.
sv_tree() {
	local p t c kids
	for p in "$@"; do
		[ -d "/proc/$p" ] || continue
		echo "$p"
		c=()
		for t in /proc/"$p"/task/*/children; do
			kids=()
			read -r -a kids <"$t" 2>/dev/null
			c+=("${kids[@]}")
		done
		[ ${#c[@]} -gt 0 ] && sv_tree "${c[@]}"
	done
	return 0
}

# CPU ticks of the server: utime+stime of every live process of its tree
# (all threads, dead ones included), plus cutime+cstime of the root (the
# children it has reaped).
sv_ticks() {
	local p t=0 v
	for p in $(sv_tree "$SERVER_PID"); do
		v=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk -v root="$([ "$p" = "$SERVER_PID" ] && echo 1 || echo 0)" \
			'{print $12 + $13 + (root ? $14 + $15 : 0)}')
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

sv_threads() { # kernel threads of the whole server tree, and its process count (no process per PID: see sv_tree)
	local p n=0 k=0 key v
	for p in $(sv_tree "$SERVER_PID"); do
		while read -r key v _; do
			[ "$key" = Threads: ] && { n=$((n + v)); break; }
		done <"/proc/$p/status" 2>/dev/null
		k=$((k + 1))
	done
	echo "$n $k"
}

# flexsc-run --order of a runtime: nothing for NPTL.
sv_order() {
	case $1 in
	nptl*) ;;
	flexsc-type) echo type ;;
	flexsc-io) echo io-first ;;
	flexsc-iotype) echo io-first,type ;;
	*) echo posted ;;
	esac
}

sv_alive() { [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; }

# sv_launch RT LOG CMD...: starts the server under runtime RT on CPU 0.
sv_launch() {
	local rt=$1 log=$2
	shift 2
	: >"$sv_tmp/ran" # this launch's lines only (sv_point checks them)
	case $rt in
	nptl) nice -n "$sv_nice" taskset -c 0 "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc|flexsc-type|flexsc-io|flexsc-iotype) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0 "$sv_tmp/rt/flexsc-run" --require --cores 0 --order "$(sv_order "$rt")" --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	# the syscall core (1) must be in the affinity the runtime inherits; it pins the carrier to 0 itself
	flexsc-sc1) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0,1 "$sv_tmp/rt/flexsc-run" --require --cores 0 --syscall-cores 1 --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	nptl-2c) nice -n "$sv_nice" taskset -c 0,1 "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc-2c) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0,1 "$sv_tmp/rt/flexsc-run" --require --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc-pin-2c) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0,1 "$sv_tmp/rt/flexsc-run" --require --cores 0,1 --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc-remote) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0,1 "$sv_tmp/rt/flexsc-run" --require --cores 0 --syscall-cores 1 --engine threads --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc-auto) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0,1 "$sv_tmp/rt/flexsc-run" --require --cores 0 --syscall-cores 1 --specialize auto --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	flexsc-e*) FLEXSC_RAN_FILE="$sv_tmp/ran" nice -n "$sv_nice" taskset -c 0 "$sv_tmp/rt/flexsc-run" --require --cores 0 --entries "${rt#flexsc-e}" --stats -- "$@" >"$log" 2>&1 </dev/null & ;;
	esac
	SERVER_PID=$!
	SV_CHILD_PIDS=
}

# sv_wait_ready SECONDS CHECK...: polls CHECK (a command) every 0.2 s.
sv_wait_ready() {
	local n=$(($1 * 5))
	shift
	for _ in $(seq "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sv_alive || return 1
		sleep 0.2
	done
	return 1
}

# sv_backtrace TAG: gdb backtraces of the server's processes (at most 5),
# with the parked user threads under flexsc-run. Prints the file name.
sv_backtrace() {
	local f=$sv_out/servers-$SV_SERVER-fail-$1.gdb.txt p n=0
	: >"$f"
	for p in $(sv_tree "$SERVER_PID"); do
		[ $n -lt 5 ] || break
		n=$((n + 1))
		{
			echo "===== process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"
			grep -E '^(State|Threads|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):' "/proc/$p/status" 2>/dev/null
			for t in /proc/"$p"/task/*; do
				echo "task ${t##*/} $(cat "$t/comm" 2>/dev/null) syscall $(cut -d' ' -f1 "$t/syscall" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
			done | head -40
			local x=()
			grep -q libflexsc-run "/proc/$p/maps" 2>/dev/null && x=(-x "$sv_here/bench/servers/uthreads-bt.py")
			timeout -k 5 120 gdb -p "$p" -batch -ex 'set pagination off' -ex 'thread apply all bt 30' "${x[@]}" 2>&1 |
				grep -v -e '^\[New LWP' -e 'flushregs' -e 'register-cache' | head -3000
		} >>"$f" 2>&1
	done
	echo "$f"
}

# sv_stop STOPCMD...: the server's own stop (if given and it is alive),
# then TERM, then KILL, by PID; sets sv_status to its exit status and
# sv_stop_how to what ended it.
sv_stop() {
	sv_status=0 sv_stop_how='' SV_STOP_BT=
	[ -n "$SERVER_PID" ] || return 0
	if sv_alive && [ $# -gt 0 ]; then
		timeout -k 5 20 "$@" >/dev/null 2>&1 || true
		# SV_STOP_WAIT seconds (default 15; MariaDB flushes its buffer pool first)
		for _ in $(seq $((${SV_STOP_WAIT:-15} * 10))); do sv_alive || break; sleep 0.1; done
		sv_alive || sv_stop_how=own
		if sv_alive; then
			SV_STOP_BT=$(sv_backtrace "${RT:-x}-${TAG:-x}-stop")
			sv_log "the server ignored its stop command; backtraces in $SV_STOP_BT"
		fi
	fi
	if sv_alive; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		for _ in $(seq 100); do sv_alive || break; sleep 0.1; done
		sv_alive || sv_stop_how=TERM
	fi
	if sv_alive; then
		kill -KILL "$SERVER_PID" 2>/dev/null || true
		sv_stop_how=KILL
	fi
	wait "$SERVER_PID" 2>/dev/null || sv_status=$?
	[ -n "$sv_stop_how" ] || sv_stop_how=own
	# children left behind (Apache's), by the PIDs recorded while it ran
	local p
	for _ in $(seq 50); do
		local left=
		for p in $SV_CHILD_PIDS; do
			sv_live_orphan "$p" && left="$left $p"
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -n "${left:-}" ]; then
		sv_log "children$left outlived the server: KILL"
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
		sv_stop_how="$sv_stop_how, children KILLed"
	fi
	SERVER_PID=
}

# sv_py ARGS...: python3 with bench/servers on the path, for the client
# parsers' `from judge import ...` (judge.py: one judgment of client errors).
sv_py() { PYTHONPATH="$sv_here/bench/servers${PYTHONPATH:+:$PYTHONPATH}" python3 "$@"; }

# The servers' configurations, written here once for the bench scripts and
# check.sh alike, so the instance that is checked is the one that is measured.

# sv_apache_conf ROOT PORT MPM LOGLEVEL < MPM-LINES: ROOT/conf/httpd.conf of a
# private Apache (ServerRoot ROOT: its pid file, runtime dir, logs, htdocs;
# 127.0.0.1:PORT only; children as www-data, keep-alive); the caller's
# process model (StartServers, ThreadsPerChild, ...) comes on stdin.
sv_apache_conf() {
	local root=$1 port=$2 mpm=$3 level=$4
	{
		cat <<EOF
# $SV_NAME: a private instance; nothing here is the system's
ServerRoot $root
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $root/run/httpd.pid
DefaultRuntimeDir $root/run
Mutex file:$root/run default
LoadModule mpm_${mpm}_module /usr/lib/apache2/modules/mod_mpm_${mpm}.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so
User www-data
Group www-data
ErrorLog $root/logs/error.log
LogLevel $level
DocumentRoot $root/htdocs
<Directory />
	Require all granted
	AllowOverride None
</Directory>
DirectoryIndex 1k.html
TypesConfig /etc/mime.types
KeepAlive On
EOF
		cat
	} >"$root/conf/httpd.conf"
}

# sv_bind_conf DIR PORT CPORT KEYNAME ZONE ZONEFILE: DIR/named.conf of a
# private named: DNS on 127.0.0.1:PORT only (no IPv6, no recursion), rndc on
# 127.0.0.1:CPORT with the key KEYNAME in DIR/rndc.key, pid and session-key
# files in DIR, and one primary zone ZONE from ZONEFILE.
sv_bind_conf() {
	local d=$1 port=$2 cport=$3 key=$4 zone=$5 file=$6
	cat >"$d/named.conf" <<EOF
// $SV_NAME: a private instance; nothing here is the system's
include "$d/rndc.key";
controls { inet 127.0.0.1 port $cport allow { 127.0.0.1; } keys { "$key"; }; };
options {
	directory "$d";
	pid-file "$d/named.pid";
	session-keyfile "$d/session.key";
	managed-keys-directory "$d";
	listen-on port $port { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	allow-query { 127.0.0.1; };
	dnssec-validation no;
	notify no;
};
zone "$zone" { type primary; file "$file"; };
EOF
}

# sv_mariadb_init DIR PORT: a fresh datadir DIR/data (mariadb-install-db,
# on NPTL: root@localhost without a password; log in DIR/install.log) and
# DIR/run for the socket, pid file and logs, all owned by mysql. Sets
# sv_mariadbd (the server's command line: 127.0.0.1:PORT only, no
# my.cnf; the caller adds its tuning), sv_mariadb (the client, as root over
# TCP) and sv_mariadb_admin. Returns 1 if mariadb-install-db failed.
# shellcheck disable=SC2034 # the arrays are for the scripts that source this file
sv_mariadb_init() {
	local d=$1 port=$2
	mkdir -p "$d/data" "$d/run"
	chown -R mysql:mysql "$d"
	sv_mariadbd=(/usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$d/data"
		--socket="$d/run/mysqld.sock" --pid-file="$d/run/mysqld.pid" --port="$port" --bind-address=127.0.0.1
		--skip-name-resolve --log-error="$d/run/error.log")
	sv_mariadb=(mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$port" -uroot)
	sv_mariadb_admin=(mariadb-admin --no-defaults --protocol=tcp -h127.0.0.1 -P"$port" -uroot)
	timeout -k 5 300 mariadb-install-db --no-defaults --user=mysql --datadir="$d/data" \
		--auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1
}

# flexsc --stats of every process of the server, summed, as JSON ("null" if none)
sv_fx_stats() {
	python3 - "$@" <<'EOF'
import json, re, sys
calls = sw = sleeps = procs = steals = overflow = batches = waits = 0
wait_ms = 0.0
handoffs = spares = 0
by = {}
by_call = {}
hist = {}
spec = {}
monitor = {}
engines = set()
for f in sys.argv[1:]:
    try:
        text = open(f, errors="replace").read()
    except OSError:
        continue
    for m in re.finditer(r"^flexsc-run: (\d+) exception-less calls, (\d+) user-level switches, (\d+) idle sleeps(?:, (\d+) steals, (\d+) calls on overflow threads)?", text, re.M):
        calls += int(m.group(1)); sw += int(m.group(2)); sleeps += int(m.group(3)); procs += 1
        steals += int(m.group(4) or 0); overflow += int(m.group(5) or 0)
    for m in re.finditer(r"^flexsc-run: (\d+) cores handed from a carrier blocked in the kernel to a spare \((\d+) spares started\)", text, re.M):
        handoffs += int(m.group(1)); spares += int(m.group(2))
    for m in re.finditer(r"^flexsc-run: \d+ carriers, engine (\S+)", text, re.M):
        engines.add(m.group(1))
    for m in re.finditer(r"^flexsc-run:   (\S+)\s+(\d+)$", text, re.M):
        by_call[m.group(1)] = by_call.get(m.group(1), 0) + int(m.group(2))
    for m in re.finditer(r"^flexsc-run: carrier \d+: (?:batches (\d+), waits (\d+) \(([\d.]+) ms\), )?.*by engine: local (\d+) uring (\d+) threads (\d+) sync (\d+)(?:; batch sizes(.*))?$", text, re.M):
        batches += int(m.group(1) or 0); waits += int(m.group(2) or 0); wait_ms += float(m.group(3) or 0)
        for k, v in zip(("local", "uring", "threads", "sync"), m.groups()[3:7]):
            by[k] = by.get(k, 0) + int(v)
        for b, v in re.findall(r"(\d+)\+:(\d+)", m.group(8) or ""):
            hist[b] = hist.get(b, 0) + int(v)
    for m in re.finditer(r"^flexsc-run: the monitor looked (\d+) times \((\d+) a time slice asked for, (\d+) after a carrier woke it\)", text, re.M):
        for k, v in zip(("looks", "slice_looks", "woken_looks"), m.groups()):
            monitor[k] = monitor.get(k, 0) + int(v)
    for m in re.finditer(r"^flexsc-run: (\d+) times a thread that computed gave way", text, re.M):
        monitor["preempts"] = monitor.get("preempts", 0) + int(m.group(1))
    for m in re.finditer(r"^flexsc-run: carrier \d+: specialization: windows local (\d+) remote (\d+), (\d+) switches, (\d+) probes, (\d+) kept$", text, re.M):
        for k, v in zip(("local_windows", "remote_windows", "switches", "probes", "kept"), m.groups()):
            spec[k] = spec.get(k, 0) + int(v)
posted = by.get("uring", 0) + by.get("threads", 0)
r = {"processes": procs, "engine": " ".join(sorted(engines)), "calls": calls, "switches": sw,
     "idle_sleeps": sleeps, "steals": steals, "overflow_calls": overflow, "by_engine": by,
     "handoffs": handoffs, "spares": spares,
     "batches": batches, "waits": waits, "wait_ms": round(wait_ms, 1),
     "mean_batch": round(posted / batches, 2) if batches else None,
     "batch_hist": {k: v for k, v in sorted(hist.items(), key=lambda kv: int(kv[0])) if v},
     "by_call": dict(sorted(by_call.items(), key=lambda kv: -kv[1])[:12])}
if spec:
    r["specialization"] = spec
if monitor:
    r["monitor"] = monitor
print(json.dumps(r if procs else None, separators=(",", ":")))
EOF
}

# sv_points: one point (TAG, POINT, CLIENT and the functions, as for
# sv_point) under every runtime, --repeat times, the order of the
# runtimes reversed every other time; a noisy run (its record says
# "rerun": true) is run again once, after waiting for quiet.
sv_points() {
	local base=$TAG rep rts
	for rep in $(seq "$sv_repeat"); do
		rts=$sv_runtimes
		[ $((rep % 2)) = 0 ] && rts=$(printf '%s\n' $sv_runtimes | tac | tr '\n' ' ')
		SV_RUN_ORDER=$(echo $rts | tr ' ' ',')
		SV_REP=$rep
		for RT in $rts; do
			SV_ATTEMPT=1 TAG=$base-r$rep
			sv_point
			if [ "$SV_RERUN" = 1 ]; then
				sv_log "$RT, $CLIENT, $base, run $rep: other work took CPU 0 while it was measured; running it again"
				sv_wait_quiet
				SV_ATTEMPT=2 TAG=$base-r$rep-again
				sv_point
			fi
		done
	done
	TAG=$base
}

# sv_point: runs one measured point. The caller sets:
#   RT TAG POINT(JSON object of the point's parameters) CLIENT
#   sv_start_fn (starts the server, returns 1 if it did not come up)
#   sv_client_fn SECONDS OUTFILE (runs the client, bounded)
#   sv_parse_fn OUTFILE (prints a JSON object: throughput, unit, mean_us, p99_us, errors{}, ...)
#   sv_stop_fn (stops the server) and SV_LOGS (files that hold the server's output)
#   SV_REP, SV_RUN_ORDER, SV_ATTEMPT (sv_points; default 1, the runtimes, 1)
# and it appends one JSON line (or sv_skip's, under a runtime whose server
# did not start before). SV_RERUN=1 after it if the run is to be run again
# (attempt 1, ok and noisy).
sv_point() {
	local ok=true why='' t0 t1 c0a c0b w0=0 w1=0 res thr fx bt='' warm_ops=0 noran=''
	SV_RERUN=0
	case " $SV_DEAD_RT " in *" $RT "*) sv_skip; return 0 ;; esac
	sv_log "$RT, $CLIENT, $TAG (${sv_warm}+${sv_dur} s)"
	if ! $sv_start_fn; then
		ok=false why="the server did not start"
		sv_alive && bt=$(sv_backtrace "$RT-$TAG")
		res='{}' t0=0 t1=0 c0a="0 0" c0b="0 0" thr="0 0"
	else
		SV_CHILD_PIDS=$(sv_tree "$SERVER_PID" | { grep -vx "$SERVER_PID" || true; } | tr '\n' ' ')
		# --require alone does not show that the runtime runs in the
		# server: a program exec'ed on the way (a wrapper that drops
		# LD_PRELOAD, a set-user-ID binary) runs without it. The server's
		# own FLEXSC_RAN_FILE line, its PID and executable, does.
		if [ "${RT#flexsc}" != "$RT" ] &&
			! grep -qxF "$SERVER_PID $(readlink "/proc/$SERVER_PID/exe" 2>/dev/null)" "$sv_tmp/ran"; then
			noran="the runtime did not run in the server (no FLEXSC_RAN_FILE line for PID $SERVER_PID $(readlink "/proc/$SERVER_PID/exe" 2>/dev/null); it has: $(tr '\n' ';' <"$sv_tmp/ran"))"
		fi
		warm_ops=0
		if [ "$sv_warm" -gt 0 ]; then
			$sv_client_fn "$sv_warm" "$sv_tmp/warm-$RT-$TAG.txt"
			warm_ops=$($sv_parse_fn "$sv_tmp/warm-$RT-$TAG.txt" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("ops", 0))' 2>/dev/null || echo 0)
		fi
		# the server's ticks around CPU 0's, so that the window of CPU 0
		# is the client's run alone: sv_ticks forks a reader per task
		# (a thousand for Apache on NPTL), and on CPU 0 that is other work
		# (the server is idle before and after the client)
		t0=$(sv_ticks)
		w0=$(date +%s.%N)
		c0a=$(sv_cpu0_busy)
		# the thread count halfway, from the client's CPU
		( taskset -cp 1 $BASHPID >/dev/null 2>&1; sleep $((sv_dur / 2)); sv_threads >"$sv_tmp/threads-$RT-$TAG.txt" ) &
		local sampler=$!
		SV_EXTRA_PIDS="$sampler"
		$sv_client_fn "$sv_dur" "$sv_tmp/client-$RT-$TAG.txt"
		c0b=$(sv_cpu0_busy)
		w1=$(date +%s.%N)
		t1=$(sv_ticks)
		wait "$sampler" 2>/dev/null || true
		SV_EXTRA_PIDS=
		thr=$(cat "$sv_tmp/threads-$RT-$TAG.txt" 2>/dev/null || echo "0 0")
		res=$($sv_parse_fn "$sv_tmp/client-$RT-$TAG.txt")
		[ -n "$res" ] || res='{}'
		why=$(R="$res" python3 -c 'import json,os; print(json.loads(os.environ["R"]).get("failure", ""))')
		[ -n "$noran" ] && why="${why:+$why; }$noran"
		[ -n "$why" ] && ok=false
		if [ $ok = false ] && sv_alive; then
			bt=$(sv_backtrace "$RT-$TAG")
		fi
		if ! sv_alive; then
			ok=false why="${why:+$why; }the server died during the run"
		fi
	fi
	SV_STOP_T0=$(date +%s.%N)
	$sv_stop_fn
	local stop_s
	stop_s=$(echo "$SV_STOP_T0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
	if [ "$sv_stop_how" != own ] && [ "$ok" = true ]; then
		ok=false why="the server ignored its stop command (ended by $sv_stop_how)"
		bt=$SV_STOP_BT
	fi
	fx=null
	case $RT in flexsc*) fx=$(sv_fx_stats $SV_LOGS) ;; esac
	if [ "${RT#nptl}" = "$RT" ] && [ "$fx" = null ] && [ $ok = true ]; then
		ok=false why="no --stats output (the runtime did not exit cleanly)"
	fi
	local line
	line=$(R="$res" P="$POINT" FX="$fx" ORDER="$(sv_order "$RT")" SV_REP="${SV_REP:-1}" SV_REPEATS="$sv_repeat" \
		SV_RUN_ORDER="${SV_RUN_ORDER:-$(echo $sv_runtimes | tr ' ' ',')}" SV_ATTEMPT="${SV_ATTEMPT:-1}" WIN="$(echo "$w0 $w1" | awk '{printf "%.2f", $2 - $1}')" python3 - "$SV_SERVER" "$RT" "$CLIENT" "$((t1 - t0))" "$sv_hz" \
		"$(echo "$c0a $c0b" | awk '{print $3 - $1, $4 - $2}')" "$ok" "$why" "$sv_nice" "$thr" "$sv_stop_how" "$stop_s" "$sv_dur" "$bt" "${warm_ops:-0}" <<'EOF'
import json, os, sys
server, rt, client, ticks, hz, c0, ok, why, nice, thr, how, stop_s, dur, bt, warm_ops = sys.argv[1:]
res = json.loads(os.environ["R"])
hz = float(hz)
cpu = int(ticks) / hz
r = {"bench": "servers", "server": server, "runtime": rt, "client": client}
r.update(json.loads(os.environ["P"]))
r["layout"] = ("server carrier CPU 0, syscall threads/SQPOLL CPU 1, client CPU 1 (shared)"
               if rt in ("flexsc-sc1", "flexsc-remote", "flexsc-auto") else
               "server CPUs 0-1 (a carrier pinned to each), client CPU 1 (shared)" if rt == "flexsc-pin-2c" else
               "server CPUs 0-1 (two carriers placed by the kernel), client CPU 1 (shared)" if rt == "flexsc-2c" else
               "server CPUs 0-1, client CPU 1 (shared)" if rt.endswith("-2c")
               else "server CPU 0, client CPU 1")
r["nice"] = int(nice)
r["entries"] = int(rt[len("flexsc-e"):]) if rt.startswith("flexsc-e") else None if rt.startswith("nptl") else 4096
r["order"] = os.environ["ORDER"] or None
res.pop("failure", None)
r.update(res)
r["server_cpu_s"] = round(cpu, 2)
ops = res.get("ops", 0)
r["ops_per_cpu_s"] = round(ops / cpu, 1) if cpu and ops else None
# other work: CPU 0's busy time in processes (sv_cpu0_busy) less the
# server's, over the client's run (window_s of wall time); interrupt
# time is reported apart
r["window_s"] = float(os.environ["WIN"])
c0, irq = (int(v) for v in c0.split())
r["cpu0_irq_s"] = round(irq / hz, 2)
r["foreign_cpu0_s"] = round(max(0.0, c0 / hz - cpu), 2)
r["noisy"] = r["foreign_cpu0_s"] > 0.1 * float(dur)
t, p = (thr.split() + ["0", "0"])[:2]
r["server_threads"] = int(t)
r["server_processes"] = int(p)
r["stopped_by"] = how
r["stop_s"] = float(stop_s)
fx = json.loads(os.environ["FX"])
if fx:
    # the counters cover the process's whole life: start-up, warm-up, measured run, stop
    tot = ops + int(warm_ops)
    fx["calls_per_op"] = round(fx["calls"] / tot, 2) if tot else None
    fx["switches_per_op"] = round(fx["switches"] / tot, 2) if tot else None
    r["flexsc"] = fx
r["ok"] = ok == "true"
if why:
    r["failure"] = why
if bt:
    r["backtrace"] = os.path.relpath(bt)
r["repeat"] = int(os.environ["SV_REP"])
r["repeats"] = int(os.environ["SV_REPEATS"])
r["run_order"] = os.environ["SV_RUN_ORDER"]
r["attempt"] = int(os.environ["SV_ATTEMPT"])
# a noisy run is run again once; a failed one stays a failure
r["rerun"] = r["ok"] and r["noisy"] and r["attempt"] == 1
print(json.dumps(r, separators=(",", ":")))
EOF
)
	echo "$line" >>"$sv_jsonl"
	case $line in *'"rerun":true'*) SV_RERUN=1 ;; esac
	if [ $ok = false ]; then
		sv_failed=1
		sv_log "FAILED: $RT, $CLIENT, $TAG: $why${bt:+ (backtraces: $bt)}"
		local f
		for f in $SV_LOGS; do
			[ -s "$f" ] || continue
			echo "---- ${f##*/} (last 25 lines) ----" >&2
			tail -25 "$f" >&2
			cp "$f" "$sv_out/servers-$SV_SERVER-fail-$RT-$TAG.${f##*/}"
		done
		f=$sv_tmp/client-$RT-$TAG.txt
		if [ -s "$f" ]; then
			echo "---- client (last 25 lines) ----" >&2
			tail -25 "$f" >&2
			cp "$f" "$sv_out/servers-$SV_SERVER-fail-$RT-$TAG.client.txt"
		fi
		[ "$SV_SKIP_AFTER_START_FAILURE" = 1 ] && [ "$why" = "the server did not start" ] && SV_DEAD_RT="$SV_DEAD_RT $RT"
	fi
	return 0
}

# sv_skip: records a point not run because the runtime's server failed to start before.
sv_skip() {
	sv_log "$RT, $CLIENT, $TAG: not run (the server did not start under $RT before)"
	P="$POINT" python3 - "$SV_SERVER" "$RT" "$CLIENT" "${SV_REP:-1}" "$sv_repeat" "${SV_RUN_ORDER:-$(echo $sv_runtimes | tr ' ' ',')}" \
		"${SV_ATTEMPT:-1}" >>"$sv_jsonl" <<'EOF'
import json, os, sys
r = {"bench": "servers", "server": sys.argv[1], "runtime": sys.argv[2], "client": sys.argv[3]}
r.update(json.loads(os.environ["P"]))
r["ok"] = False
r["failure"] = "not run: the server did not start under this runtime earlier"
r.update(repeat=int(sys.argv[4]), repeats=int(sys.argv[5]), run_order=sys.argv[6], attempt=int(sys.argv[7]), rerun=False)
print(json.dumps(r, separators=(",", ":")))
EOF
	sv_failed=1
}

# sv_finish: the script's table and exit status (1 if any point failed).
sv_finish() {
	sv_summary "$sv_jsonl"
	sv_log "results in $sv_jsonl"
	exit "$sv_failed"
}

# sv_summary FILES...: the table: medians, spreads and paired flexsc / NPTL
# ratios (bench/servers/summary.py).
sv_summary() { sv_py "$sv_here/bench/servers/summary.py" "$@"; }
