#!/usr/bin/env bash
# Correctness of real Debian servers under flexsc-run (not speed).
#   bench/servers/check.sh BUILD [apache|mariadb|bind ...] [--runtimes "flexsc nptl"]
#
# Each check starts the server (as bench/servers/*.sh do: a private
# directory under /tmp, 127.0.0.1 and its own ports only), exercises it and
# prints one PASS or FAIL line per step:
#   apache   the parent runs as root and every child as www-data (Uid: of
#            /proc/PID/status), under the runtime (libflexsc-run.so mapped);
#            it serves (ab, 200 keep-alive GETs, byte-exact body); a graceful
#            restart (SIGUSR1) and a restart (SIGHUP) each bring a new
#            generation of children that serves; SIGTERM ends the parent and
#            every process it ever had, with exit status 0.
#   mariadb  Debian's default configuration (innodb_use_native_aio=1: InnoDB
#            waits in liburing's io_uring_enter; the check wants "Using
#            io_uring" in its log), a write workload (sysbench prepare + oltp_read_write, 5 s, no
#            error), a clean shutdown (mariadb-admin shutdown, exit status 0,
#            "Shutdown complete"), a restart without crash recovery, CHECK
#            TABLE on every sbtest table reports OK and the row counts are
#            intact, and a second clean shutdown.
#   bind     named -u bind answers a query (dig); rndc status; a zone
#            change picked up by rndc reload (dig sees the new name); rndc
#            stop ends it with exit status 0.
# Default runtime: flexsc (--cores 0, the server on CPU 0); "nptl" runs the
# same checks on plain NPTL (to tell a check's fault from the runtime's).
# Every wait is bounded; everything started is stopped by its PID. A
# server that hangs is backtraced (results/servers-check-fail-*.gdb.txt,
# with the parked user threads). Exit status 1 on any FAIL.
set -euo pipefail
SV_SERVER=check SV_NAME=bench/servers/check.sh SV_COMM=
sv_usage() { sed -n '3p' "$0" | sed 's/^# *//' >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
sv_autogroup "$0" "$@"
sv_version() { echo "check"; }

[ $# -ge 1 ] || sv_usage
build=$1
shift
servers=() runtimes=flexsc
while [ $# -gt 0 ]; do
	case $1 in
	apache|mariadb|bind) servers+=("$1") ;;
	--runtimes) [ $# -ge 2 ] || sv_usage; runtimes=$2; shift ;;
	-h|--help) sv_usage ;;
	*) sv_usage ;;
	esac
	shift
done
[ ${#servers[@]} -gt 0 ] || servers=(apache mariadb bind)
sv_parse_common "$build" --runtimes "$runtimes" --out servers-check
sv_setup ab sysbench mariadb-install-db mariadb-admin mariadb dig rndc rndc-confgen named-checkconf
rm -f "$sv_jsonl" # no measurements here

npass=0 nfail=0
pass() { echo "PASS $CK: $*"; npass=$((npass + 1)); }
fail() { echo "FAIL $CK: $*"; nfail=$((nfail + 1)); }
# check DESCRIPTION COMMAND...: PASS or FAIL by the command's status
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; return 1; fi; }

# Uid: line of a process -> "real effective saved fs"
uids() { awk '$1 == "Uid:" {print $2, $3, $4, $5}' "/proc/$1/status" 2>/dev/null; }
# under the runtime: the preload mapped, and for the server itself (the one
# exec'ed by flexsc-run --require) the runtime's line in FLEXSC_RAN_FILE
has_rt() {
	[ "$RT" = nptl ] && return 0
	grep -q libflexsc-run "/proc/$1/maps" 2>/dev/null || return 1
	[ "$1" != "$SERVER_PID" ] || grep -q "^$1 " "$sv_tmp/ran"
}
gone() { # PIDs...: none of them alive as what we started (a zombie counts as gone)
	local p st
	for p in "$@"; do
		st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1) || continue
		[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || return 1
	done
	return 0
}
wait_for() { # TENTHS COMMAND...: polls every 0.1 s
	local _wf_n=$1 # (not n: the command may read its caller's n)
	shift
	for _ in $(seq "$_wf_n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
# wait_exit TENTHS: waits for the server (our child) to end; sets rc
wait_exit() {
	rc=
	if wait_for "$1" gone "$SERVER_PID"; then
		rc=0
		wait "$SERVER_PID" 2>/dev/null || rc=$?
		SERVER_PID=
		return 0
	fi
	return 1
}
hang() { # TAG: backtraces of a server that should have done something, then KILL
	local f
	f=$(sv_backtrace "$RT-$CK-$1")
	echo "     backtraces: ${f#"$sv_here"/}"
}
kill_all() { # the server and the PIDs given, by PID
	local p
	for p in "$@" $SERVER_PID; do
		[ -n "$p" ] && ! gone "$p" && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$SERVER_PID" ] && wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
	return 0
}

# ---------------------------------------------------------------- apache
check_apache() {
	local root=$sv_tmp/apache-$RT port www all=() p kids old n body
	[ -x /usr/sbin/apache2 ] || { fail "/usr/sbin/apache2 is missing"; return; }
	www=$(id -u www-data)
	mkdir -p "$root/conf" "$root/htdocs" "$root/logs" "$root/run"
	head -c 1024 /dev/zero | tr '\0' b >"$root/htdocs/1k.html"
	chmod -R 755 "$root"
	port=$(sv_port 18380)
	# LogLevel notice: generation() counts its "resuming normal operations"
	sv_apache_conf "$root" "$port" worker notice <<EOF
StartServers 2
ServerLimit 4
ThreadLimit 16
ThreadsPerChild 16
MaxRequestWorkers 32
MinSpareThreads 1
MaxSpareThreads 32
GracefulShutdownTimeout 5
EOF
	SV_COMM=apache2
	sv_launch "$RT" "$root/logs/out.log" /usr/sbin/apache2 -d "$root" -f "$root/conf/httpd.conf" -DFOREGROUND
	local url=http://127.0.0.1:$port/1k.html
	serves() { # ab: 200 keep-alive GETs from 4 connections, no failure; one body byte-exact
		local out
		out=$(timeout -k 2 20 ab -k -n 200 -c 4 -s 5 "$url" 2>&1) || return 1
		echo "$out" | grep -Eq '^Complete requests: +200$' && echo "$out" | grep -Eq '^Failed requests: +0$' &&
			! echo "$out" | grep -q 'Non-2xx' &&
			body=$(timeout -k 2 5 curl -sf "$url") && [ "$body" = "$(cat "$root/htdocs/1k.html")" ]
	}
	generation() { grep -c 'resuming normal operations' "$root/logs/error.log" 2>/dev/null || true; }
	children() { sv_tree "$SERVER_PID" | { grep -vx "$SERVER_PID" || true; } | tr '\n' ' '; }
	# children (at least one: after a restart Apache starts them as needed) all www-data, under the runtime
	kids_ok() {
		local k c=0
		for k in $(children); do
			[ "$(uids "$k")" = "$www $www $www $www" ] || return 1
			has_rt "$k" || return 1
			c=$((c + 1))
		done
		[ "$c" -ge 1 ]
	}
	if ! wait_for 200 serves; then
		fail "started and served within 20 s"
		sv_alive && hang start
		tail -5 "$root/logs/error.log" "$root/logs/out.log" 2>/dev/null | sed 's/^/     /'
		kill_all $(children)
		return
	fi
	pass "started and serves (ab 200 keep-alive GETs, 0 failed; body byte-exact)"
	check "parent $SERVER_PID runs as root$([ "$RT" = flexsc ] && echo ' under flexsc-run')" \
		eval '[ "$(uids "$SERVER_PID")" = "0 0 0 0" ] && has_rt "$SERVER_PID"' || true
	wait_for 50 kids_ok || true
	kids=$(children)
	all+=($kids)
	local desc=""
	for k in $kids; do desc="$desc $k:$(uids "$k" | cut -d' ' -f1-2 | tr ' ' /)"; done
	check "children run as www-data (uid $www real/effective/saved/fs):$desc" kids_ok || true

	for sig in USR1 HUP; do
		old=$kids
		n=$(generation)
		kill -"$sig" "$SERVER_PID"
		newgen() {
			[ "$(generation)" -gt "$n" ] || return 1
			local k
			for k in $(children); do case " $old " in *" $k "*) return 1 ;; esac; done
			kids_ok
		}
		local what="SIG$sig ($([ $sig = USR1 ] && echo graceful restart || echo restart))"
		if wait_for 150 newgen; then
			kids=$(children)
			all+=($kids)
			pass "$what: new generation of children ($kids), www-data, old ones ($old) gone"
		else
			fail "$what: no new generation of www-data children within 15 s (before: $old; generation $(generation) vs $n; now:$(for k in $(children); do printf ' %s:uid=%s,rt=%s' "$k" "$(uids "$k" | tr ' ' /)" "$(has_rt "$k" && echo yes || echo no)"; done))"
			kids=$(children)
			all+=($kids)
			sv_alive && hang "$sig"
		fi
		if ! sv_alive; then
			fail "$what: the parent died (log: $(tail -2 "$root/logs/error.log" | tr '\n' ' '))"
			break
		fi
		check "serves after SIG$sig" wait_for 50 serves || true
	done

	all+=($SERVER_PID)
	local parent=$SERVER_PID
	if sv_alive; then
		kill -TERM "$SERVER_PID"
		if wait_exit 150; then
			check "SIGTERM: the parent exited with status 0 (status $rc)" [ "$rc" = 0 ] || true
		else
			fail "SIGTERM: the parent $parent still runs after 15 s"
			hang stop
		fi
		if wait_for 100 gone "${all[@]}"; then
			pass "SIGTERM: every process gone (${all[*]})"
		else
			local left=() x
			for x in "${all[@]}"; do gone "$x" || left+=("$x"); done
			fail "SIGTERM: still running after 10 s: ${left[*]}"
		fi
	fi
	grep -E '\[(crit|alert|emerg)\]|AH00052|Segmentation' "$root/logs/error.log" | head -3 | sed 's/^/     log: /' || true
	kill_all "${all[@]}"
	SV_COMM=
}

# ---------------------------------------------------------------- mariadb
check_mariadb() {
	local d=$sv_tmp/mariadb-$RT port tables=4 size=10000 out t
	[ -x /usr/sbin/mariadbd ] || { fail "/usr/sbin/mariadbd is missing"; return; }
	port=$(sv_port 13506)
	if ! sv_mariadb_init "$d" "$port"; then
		fail "mariadb-install-db (on NPTL) failed: $(tail -2 "$d/install.log" | tr '\n' ' ')"
		return
	fi
	local srv=("${sv_mariadbd[@]}" --max-connections=200
		--innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=1)
	local cli=("${sv_mariadb[@]}") adm=("${sv_mariadb_admin[@]}")
	local sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root
		--mysql-db=sbtest --tables=$tables --table-size=$size)
	ping_db() { timeout -k 2 3 "${adm[@]}" ping; }
	SV_COMM=mariadbd
	start() { # WHAT
		sv_launch "$RT" "$d/run/out-$1.log" "${srv[@]}"
		if ! sv_wait_ready 40 ping_db; then
			fail "$1: mariadbd did not answer within 40 s"
			sv_alive && hang "$1"
			tail -5 "$d/run/error.log" | sed 's/^/     /'
			kill_all
			return 1
		fi
		check "$1: mariadbd $SERVER_PID up$([ "$RT" = flexsc ] && echo ' under flexsc-run')" \
			eval '[ "$(cat /proc/$SERVER_PID/comm)" = mariadbd ] && has_rt "$SERVER_PID"' || true
	}
	shutdown() { # WHAT
		local n0
		n0=$(grep -c 'Shutdown complete' "$d/run/error.log" 2>/dev/null || true)
		if ! timeout -k 2 30 "${adm[@]}" shutdown; then
			fail "$1: mariadb-admin shutdown failed"
		fi
		if wait_exit 300; then
			check "$1: clean shutdown (exit status $rc, 'Shutdown complete' logged)" \
				eval '[ "$rc" = 0 ] && [ "$(grep -c "Shutdown complete" "$d/run/error.log")" -gt "$n0" ]'
		else
			fail "$1: mariadbd still runs 30 s after shutdown"
			hang "$1"
			kill_all
			return 1
		fi
	}
	start "first start" || return
	# Debian's default innodb_use_native_aio=1: InnoDB waits for its I/O in
	# liburing's own io_uring_enter, which the runtime does not see (the
	# monitor hands the blocked carrier's core over, docs/threads.md)
	check "InnoDB uses native AIO (io_uring, Debian's default)" \
		grep -q "InnoDB: Using io_uring" "$d/run/error.log" ||
		grep -i 'aio\|uring' "$d/run/error.log" | head -3 | sed 's/^/     /'
	local prc=0
	timeout -k 5 30 "${cli[@]}" -e 'CREATE DATABASE sbtest' >"$d/prepare.log" 2>&1 &&
		timeout -k 5 300 taskset -c 1 "${sb[@]}" --threads=4 oltp_read_write prepare >>"$d/prepare.log" 2>&1 ||
		prc=$?
	if [ "$prc" != 0 ]; then
		fail "sysbench prepare ($tables x $size rows): exit status $prc (124: timed out)"
		# what the client said and what the server logged, for the record
		{ grep -v '^Inserting\|^Creating' "$d/prepare.log" | tail -n 15; echo "  -- mariadbd error.log:"
		  tail -n 15 "$d/run/error.log"; } | sed 's/^/     /'
		[ "$prc" = 124 ] && sv_alive && hang prepare
	else
		pass "sysbench prepare: $tables tables x $size rows written"
	fi
	out=$(timeout -k 5 60 taskset -c 1 "${sb[@]}" --threads=8 --time=5 oltp_read_write run 2>&1) || true
	t=$(echo "$out" | awk '/^ +transactions:/ {print $2}')
	check "oltp_read_write, 8 threads, 5 s: ${t:-no} transactions, $(echo "$out" | awk '/ignored errors:/ {print $3}') ignored errors, no FATAL" \
		eval '[ "${t:-0}" -gt 0 ] && ! echo "$out" | grep -q FATAL && echo "$out" | grep -Eq "reconnects: +0 "' ||
		echo "$out" | grep -E 'FATAL|error' | head -3 | sed 's/^/     /'
	shutdown "first shutdown" || return
	local crash0
	crash0=$(grep -c 'crash recovery\|Starting final batch to recover' "$d/run/error.log" || true)
	start "restart" || return
	check "restart without InnoDB crash recovery" \
		eval '[ "$(grep -c "crash recovery\|Starting final batch to recover" "$d/run/error.log" || true)" = "$crash0" ]' || true
	local list
	list=$(seq -s, -f 'sbtest.sbtest%g' 1 $tables)
	out=$(timeout -k 5 120 "${cli[@]}" -N -B -e "CHECK TABLE $list EXTENDED" 2>&1) || true
	echo "$out" | sed 's/^/     /'
	check "CHECK TABLE ... EXTENDED: all $tables tables OK" \
		eval '[ "$(echo "$out" | awk -F"\t" "\$3 == \"status\" && \$4 == \"OK\"" | wc -l)" = "$tables" ] && ! echo "$out" | awk -F"\t" "{print \$3}" | grep -qx error' || true
	out=$(timeout -k 5 60 "${cli[@]}" -N -B -e "SELECT SUM(c) FROM ($(for i in $(seq $tables); do
		[ "$i" = 1 ] || printf ' UNION ALL '; printf 'SELECT COUNT(*) c FROM sbtest.sbtest%d' "$i"; done)) x" 2>&1) || true
	check "row count intact after the workload and restart: $out of $((tables * size))" [ "$out" = $((tables * size)) ] || true
	shutdown "second shutdown" || true
	SV_COMM=
}

# ---------------------------------------------------------------- bind
check_bind() {
	local d=$sv_tmp/bind-$RT port cport ans out
	[ -x /usr/sbin/named ] || { fail "/usr/sbin/named is missing"; return; }
	mkdir -p "$d"
	port=$(sv_port 15553)
	cport=$(sv_port $((port + 1)))
	rndc-confgen -a -A hmac-sha256 -k flexsc-check -c "$d/rndc.key" >/dev/null 2>&1 || { fail "rndc-confgen"; return; }
	zone() { # SERIAL EXTRA-LINE
		printf '$TTL 60\n@ IN SOA ns1.check.test. admin.check.test. %s 3600 600 86400 60\n@ IN NS ns1.check.test.\nns1 IN A 127.0.0.1\nh1 IN A 10.0.0.1\n%s\n' "$1" "$2" >"$d/check.zone"
	}
	zone 1 ""
	sv_bind_conf "$d" "$port" "$cport" flexsc-check check.test "$d/check.zone"
	named-checkconf "$d/named.conf" || { fail "named-checkconf"; return; }
	chown -R bind:bind "$d"
	local rndc=(rndc -s 127.0.0.1 -p "$cport" -k "$d/rndc.key")
	q() { timeout -k 2 5 dig @127.0.0.1 -p "$port" +short +tries=1 +time=2 "$1" A; }
	SV_COMM=named
	sv_launch "$RT" "$d/named.log" /usr/sbin/named -g -c "$d/named.conf" -n 1 -u bind
	if ! wait_for 300 eval '[ "$(q h1.check.test)" = 10.0.0.1 ]'; then
		fail "named did not answer within 30 s"
		sv_alive && hang start
		tail -5 "$d/named.log" | sed 's/^/     /'
		kill_all
		return
	fi
	pass "started; dig @127.0.0.1 -p $port h1.check.test A -> 10.0.0.1"
	check "named $SERVER_PID runs as bind (uid $(id -u bind))$([ "$RT" = flexsc ] && echo ' under flexsc-run')" \
		eval '[ "$(uids "$SERVER_PID" | cut -d" " -f2)" = "$(id -u bind)" ] && has_rt "$SERVER_PID"' || true
	out=$(timeout -k 2 15 "${rndc[@]}" status 2>&1) || out="FAILED: $out"
	check "rndc status: $(echo "$out" | grep -E 'server is up|FAILED|rndc:' | head -1)" eval 'echo "$out" | grep -q "server is up and running"' || true
	zone 2 "h2 IN A 10.0.0.2"
	out=$(timeout -k 2 15 "${rndc[@]}" reload 2>&1) || out="FAILED: $out"
	check "rndc reload: $(echo "$out" | head -1)" eval 'echo "$out" | grep -q "reload successful"' || true
	check "dig sees the reloaded zone: h2.check.test A -> $(q h2.check.test | head -1)" \
		wait_for 50 eval '[ "$(q h2.check.test)" = 10.0.0.2 ]' || true
	check "still answers h1 after the reload" eval '[ "$(q h1.check.test)" = 10.0.0.1 ]' || true
	local pid=$SERVER_PID
	out=$(timeout -k 2 15 "${rndc[@]}" stop 2>&1) || fail "rndc stop: $out"
	if wait_exit 200; then
		check "rndc stop: named $pid exited with status $rc" [ "$rc" = 0 ] || true
	else
		fail "rndc stop: named $pid still runs after 20 s"
		hang stop
	fi
	grep -Ei 'assertion|exiting \(due to|fatal' "$d/named.log" | head -3 | sed 's/^/     log: /' || true
	kill_all
	SV_COMM=
}

for RT in $sv_runtimes; do
	for CK in "${servers[@]}"; do
		echo "---- $CK under $RT ----"
		"check_$CK"
	done
done
echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]
