#!/usr/bin/env bash
# Apache httpd 2.4 (Debian's apache2), unmodified, on NPTL against flexsc-run.
#   bench/servers/apache.sh BUILD [--conc "LIST"] [--clients "wrk ab"] [--mpm worker|event]
#       [--threads-per-child N] [--file 128.html|1k.html|4k.html] [common options: lib.sh]
#
# A private ServerRoot under /tmp: its own httpd.conf (Listen 127.0.0.1:PORT
# only, its own PidFile, runtime dir and logs, DocumentRoot of small static
# files, keep-alive), the MPM (default worker: a thread per connection,
# keep-alive included; or event) with THREADS-PER-CHILD threads per child
# (default 64) and enough children for twice the concurrency (at least 2;
# every child started up front and none retired, so the process set is
# fixed while it is measured). The event MPM closes the idle keep-alive
# connections of a child whose workers are all busy, which wrk counts as
# read errors: with it, a point may fail on NPTL as well. The parent
# runs as root and its children as www-data, as Debian runs it.
# For each concurrency (default "64 512"; the issue's sweep: "16 64 256
# 1024 2048") and each client (wrk -t1 --latency, ab -k: both keep-alive,
# GET of one file; bench/servers/http.sh), the server is started under each runtime, loaded
# for --warm then --seconds, and stopped (SIGTERM to the parent: Apache's
# stop). Results: results/servers-apache.jsonl, and the table.
set -euo pipefail
SV_SERVER=apache SV_NAME=bench/servers/apache.sh SV_COMM=apache2
sv_usage() { sed -n '3,4p' "$0" | sed 's/^# *//' >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
sv_autogroup "$0" "$@"
sv_version() { /usr/sbin/apache2 -v 2>/dev/null | sed -n 's/^Server version: //p'; }

sv_parse_common "$@"
conc_list="64 512" clients="wrk ab" mpm=worker tpc=64 file=1k.html
set -- ${SV_ARGS[@]+"${SV_ARGS[@]}"}
while [ $# -gt 0 ]; do
	case $1 in
	--conc) [ $# -ge 2 ] || sv_usage; conc_list=$2; shift ;;
	--clients) [ $# -ge 2 ] || sv_usage; clients=$2; shift ;;
	--mpm) [ $# -ge 2 ] || sv_usage; mpm=$2; shift ;;
	--threads-per-child) [ $# -ge 2 ] || sv_usage; tpc=$2; shift ;;
	--file) [ $# -ge 2 ] || sv_usage; file=$2; shift ;;
	*) sv_usage ;;
	esac
	shift
done
case $mpm in event|worker) ;; *) sv_usage ;; esac
case $file in 128.html|1k.html|4k.html) ;; *) sv_usage ;; esac
for n in $conc_list $tpc; do case $n in ''|*[!0-9]*) sv_usage ;; esac; done
for c in $clients; do case $c in wrk|ab) ;; *) sv_usage ;; esac; done
[ -x /usr/sbin/apache2 ] || sv_die "/usr/sbin/apache2 is missing: scripts/deps.sh servers"
sv_setup wrk ab
. "$(dirname "$0")/http.sh"

root=$sv_tmp/apache
mkdir -p "$root/conf" "$root/htdocs" "$root/logs" "$root/run"
chmod -R 755 "$root"
head -c 128 /dev/zero | tr '\0' a >"$root/htdocs/128.html"
head -c 1024 /dev/zero | tr '\0' b >"$root/htdocs/1k.html"
head -c 4096 /dev/zero | tr '\0' c >"$root/htdocs/4k.html"
chmod 644 "$root"/htdocs/*
port=$(sv_port 18280)
url=http://127.0.0.1:$port/$file

write_conf() { # conc
	local children=$(((2 * $1 + tpc - 1) / tpc))
	[ "$children" -ge 2 ] || children=2
	APACHE_CHILDREN=$children
	sv_apache_conf "$root" "$port" "$mpm" warn <<EOF
MaxKeepAliveRequests 0
KeepAliveTimeout 30
Timeout 30
ListenBacklog 4096
StartServers $children
ServerLimit $children
ThreadLimit $tpc
ThreadsPerChild $tpc
MaxRequestWorkers $((children * tpc))
MinSpareThreads 1
MaxSpareThreads $((children * tpc))
MaxConnectionsPerChild 0
EOF
	[ "$mpm" = event ] && echo "AsyncRequestWorkerFactor 4" >>"$root/conf/httpd.conf"
	return 0
}

http_ok() {
	timeout -k 5 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET /$file HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && head -1 <&3" 2>/dev/null | grep -q ' 200 '
}

start_apache() {
	: >"$root/logs/error.log"
	rm -f "$root/run/httpd.pid"
	sv_launch "$RT" "$root/logs/out.log" /usr/sbin/apache2 -d "$root" -f "$root/conf/httpd.conf" -DFOREGROUND
	sv_wait_ready 20 http_ok || return 1
	# every child up and serving (StartServers), bounded
	for _ in $(seq 50); do
		[ "$(sv_tree "$SERVER_PID" | wc -l)" -ge $((APACHE_CHILDREN + 1)) ] && return 0
		sleep 0.2
	done
	sv_log "warning: only $(($(sv_tree "$SERVER_PID" | wc -l) - 1)) of $APACHE_CHILDREN children up"
}

stop_apache() { sv_stop kill -TERM "$SERVER_PID"; }

sv_start_fn=start_apache
sv_stop_fn=stop_apache
SV_LOGS="$root/logs/out.log $root/logs/error.log"
sv_wait_quiet
for CONC in $conc_list; do
	write_conf "$CONC"
	for CLIENT in $clients; do
		sv_client_fn=client_$CLIENT
		sv_parse_fn=parse_$CLIENT
		TAG=$mpm-c$CONC-$CLIENT
		POINT=$(printf '{"mpm":"%s","conc":%s,"file":"%s","threads_per_child":%s,"children":%s}' \
			"$mpm" "$CONC" "$file" "$tpc" "$APACHE_CHILDREN")
		sv_points
	done
done
sv_finish
