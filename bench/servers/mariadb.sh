#!/usr/bin/env bash
# MariaDB (Debian's mariadb-server), unmodified, on NPTL against flexsc-run, loaded by sysbench.
#   bench/servers/mariadb.sh BUILD [--tests "oltp_read_only oltp_read_write"] [--threads "LIST"]
#       [--tables N] [--table-size N] [--flush 0|2] [--native-aio 0|1] [common options: lib.sh]
#
# A private datadir under /tmp made by mariadb-install-db (root@localhost
# without a password), mariadbd --no-defaults as user mysql, bound to
# 127.0.0.1:PORT and its own socket, InnoDB with
# innodb_flush_log_at_trx_commit=FLUSH (default 2), a 512 MiB buffer pool
# (holds the data: TABLES x TABLE-SIZE rows, default 4 x 100000, ~100 MB),
# max_connections 1000, one thread per connection. The tables are made
# once (sysbench prepare, on NPTL, not measured). For each test and each
# sysbench thread count (default "16 64"; the issue's sweep: "16 32 64 128
# 256") the server is started under each runtime, loaded for --warm then
# --seconds (sysbench --percentile=99 on CPU 1), and stopped
# (mariadb-admin shutdown). Throughput is transactions/s. Any sysbench
# error fails the point (a FATAL error, a reconnect, its exit status), but
# deadlock retries are counted: sysbench's "ignored errors" (MariaDB's 1213
# and 1205 on contended rows, which sysbench retries; NPTL has them too)
# fail it only above 0.1% of the transactions.
#
# --native-aio: InnoDB's innodb_use_native_aio, default 1, Debian's default
# (io_uring through liburing, whose own io_uring_enter the runtime does not
# see: its monitor hands a carrier blocked there to a spare,
# docs/threads.md). 0 (synchronous I/O threads) was the workaround before
# the monitor, when the server hung at start under flexsc-run.
set -euo pipefail
SV_SERVER=mariadb SV_NAME=bench/servers/mariadb.sh SV_COMM=mariadbd
SV_STOP_WAIT=120 # a shutdown writes the dirty pages out: slow on a busy disk
sv_usage() { sed -n '3,4p' "$0" | sed 's/^# *//' >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
sv_autogroup "$0" "$@"
sv_version() { /usr/sbin/mariadbd --version 2>/dev/null; }

sv_parse_common "$@"
tests="oltp_read_only oltp_read_write" threads_list="16 64" tables=4 table_size=100000 flush=2 native_aio=1
set -- ${SV_ARGS[@]+"${SV_ARGS[@]}"}
while [ $# -gt 0 ]; do
	case $1 in
	--tests) [ $# -ge 2 ] || sv_usage; tests=$2; shift ;;
	--threads) [ $# -ge 2 ] || sv_usage; threads_list=$2; shift ;;
	--tables) [ $# -ge 2 ] || sv_usage; tables=$2; shift ;;
	--table-size) [ $# -ge 2 ] || sv_usage; table_size=$2; shift ;;
	--flush) [ $# -ge 2 ] || sv_usage; flush=$2; shift ;;
	--native-aio) [ $# -ge 2 ] || sv_usage; native_aio=$2; shift ;;
	*) sv_usage ;;
	esac
	shift
done
for n in $threads_list $tables $table_size; do case $n in ''|*[!0-9]*) sv_usage ;; esac; done
case $flush in 0|2) ;; *) sv_usage ;; esac
case $native_aio in 0|1) ;; *) sv_usage ;; esac
for t in $tests; do case $t in oltp_read_only|oltp_read_write) ;; *) sv_usage ;; esac; done
[ -x /usr/sbin/mariadbd ] || sv_die "/usr/sbin/mariadbd is missing: scripts/deps.sh servers"
sv_setup sysbench mariadb-install-db mariadb-admin mariadb

d=$sv_tmp/mariadb
port=$(sv_port 13406)
if ! sv_mariadb_init "$d" "$port"; then
	tail -20 "$d/install.log" >&2
	sv_die "mariadb-install-db failed"
fi

server_cmd=("${sv_mariadbd[@]}" --max-connections=1000 --thread-cache-size=512
	--max-prepared-stmt-count=1000000 --innodb-buffer-pool-size=512M --innodb-log-file-size=256M
	--innodb-flush-log-at-trx-commit="$flush" --innodb-use-native-aio="$native_aio"
	--innodb-buffer-pool-dump-at-shutdown=0 --innodb-buffer-pool-load-at-startup=0)
admin=("${sv_mariadb_admin[@]}")
sb=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root
	--mysql-db=sbtest --tables="$tables" --table-size="$table_size")

ping_db() { timeout -k 5 3 "${admin[@]}" ping; }

start_db() {
	rm -f "$d/run/error.log" # mariadbd (user mysql) makes it
	sv_launch "$RT" "$d/run/out.log" "${server_cmd[@]}"
	sv_wait_ready 40 ping_db
}
stop_db() { sv_stop "${admin[@]}" shutdown; }

# the tables, once, on NPTL
RT=nptl
start_db || { tail -25 "$d/run/error.log" >&2; stop_db; sv_die "FAILED: mariadbd did not start on NPTL"; }
if ! timeout -k 5 60 "${sv_mariadb[@]}" -e 'CREATE DATABASE sbtest' ||
	! timeout -k 5 600 taskset -c 1 "${sb[@]}" --threads=2 oltp_read_write prepare >"$d/prepare.log" 2>&1; then
	tail -20 "$d/prepare.log" >&2
	stop_db
	sv_die "FAILED: sysbench prepare"
fi
stop_db
# a KILLed server loses tables in crash recovery (seen: sbtest3 gone), so every point would fail
[ "$sv_stop_how" = own ] || sv_die "FAILED: mariadbd (NPTL) did not shut down after sysbench prepare (ended by $sv_stop_how)"

client_sb() { # seconds outfile
	timeout -k 5 $(($1 + 90)) nice -n "$sv_nice" taskset -c 1 "${sb[@]}" --threads="$THREADS" --time="$1" \
		--percentile=99 --report-interval=0 "$TEST" run >"$2" 2>&1 || echo "CLIENT-EXIT $?" >>"$2"
}

parse_sb() {
	sv_py - "$1" <<'EOF'
import re, sys
from judge import read, no_result, judge
t, num = read(sys.argv[1])
tx = num(r"^\s+transactions:\s+(\d+)")
if tx is None:
    no_result("sysbench", t, 4)
dur = num(r"^\s+total time:\s+([\d.]+)s")
errs = {"ignored": int(num(r"^\s+ignored errors:\s+(\d+)", 0)),
        "reconnects": int(num(r"^\s+reconnects:\s+(\d+)", 0)),
        "fatal": len(re.findall(r"FATAL", t))}
r = {"ops": int(tx), "throughput": round(tx / dur, 1) if dur else 0, "unit": "tx", "duration_s": dur,
     "queries_per_s": round(num(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec", 0), 1),
     "mean_us": round(num(r"^\s+avg:\s+([\d.]+)", 0) * 1000, 1),
     "p99_us": round(num(r"^\s+99th percentile:\s+([\d.]+)", 0) * 1000, 1),
     "max_us": round(num(r"^\s+max:\s+([\d.]+)", 0) * 1000, 1), "errors": errs}
# deadlock retries (sysbench's ignored errors) fail the point only above 0.1% of the transactions
judge(r, "sysbench", t, "no transaction completed", tolerated=lambda k, v: k == "ignored" and v <= 0.001 * tx)
EOF
}

sv_start_fn=start_db
sv_stop_fn=stop_db
sv_client_fn=client_sb
sv_parse_fn=parse_sb
SV_LOGS="$d/run/out.log $d/run/error.log"
sv_wait_quiet
for TEST in $tests; do
	for THREADS in $threads_list; do
		CLIENT=sysbench
		TAG=$TEST-t$THREADS
		POINT=$(printf '{"test":"%s","threads":%s,"tables":%s,"table_size":%s,"flush_log_at_trx_commit":%s,"native_aio":%s}' \
			"$TEST" "$THREADS" "$tables" "$table_size" "$flush" "$native_aio")
		sv_points
	done
done
sv_finish
