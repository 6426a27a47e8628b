#!/usr/bin/env bash
# nginx (Debian's nginx), its default configuration untouched, on NPTL against flexsc-run.
#   bench/servers/nginx.sh BUILD [--conc "LIST"] [--clients "wrk ab"] [--path URLPATH]
#       [common options: lib.sh]
#
# The do-no-harm check: nginx is event-driven (a few single-threaded
# worker processes, epoll), so user threads give it nothing to gain, and
# flexsc-run must not make it slower. It runs as Debian runs it: the
# package's /etc/nginx/nginx.conf and default site, as they are installed
# (user www-data, worker_processes auto, worker_connections 768, sendfile,
# the access log on, the default site on port 80), started as root, the
# master dropping its workers to www-data. The command line is the one of
# Debian's unit but in the foreground (nginx -g 'daemon off;', as
# apache.sh runs Apache with -DFOREGROUND, so the master is the process
# measured and stopped); the stop is Debian's (SIGQUIT to the master:
# graceful). The load is a keep-alive GET of a file of the default site
# (default /index.nginx-debian.html, which the package installs; "/"
# would be Apache's page when apache2 is installed too) from wrk and ab
# on 127.0.0.1 (bench/servers/http.sh), for each concurrency (default
# "64 512"; run.sh --sweep: "16 64 256 1024"). With worker_processes auto
# there is a worker per CPU of the machine, all on CPU 0 here.
#
# Being the system's configuration, it uses the system's places: port 80,
# /run/nginx.pid and /var/log/nginx. The script refuses to start when
# anything holds port 80 or /run/nginx.pid names a live process (a system
# nginx is left alone), and puts the log files back as they were after
# each run: the part each run appended (a line per request in access.log;
# error.log, where nginx sends its stderr and so flexsc-run --stats) is
# cut off again, error.log's part kept in the private directory first. The
# record's "conf" says whether the configuration is Debian's (dpkg
# --verify nginx-common, the default site the only one enabled, conf.d
# empty); a changed one is measured, with a warning.
set -euo pipefail
SV_SERVER=nginx SV_NAME=bench/servers/nginx.sh SV_COMM=nginx
sv_usage() { sed -n '3,4p' "$0" | sed 's/^# *//' >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
sv_autogroup "$0" "$@"
sv_version() { /usr/sbin/nginx -v 2>&1 | sed 's/^nginx version: //'; }

sv_parse_common "$@"
conc_list="64 512" clients="wrk ab" path=/index.nginx-debian.html
set -- ${SV_ARGS[@]+"${SV_ARGS[@]}"}
while [ $# -gt 0 ]; do
	case $1 in
	--conc) [ $# -ge 2 ] || sv_usage; conc_list=$2; shift ;;
	--clients) [ $# -ge 2 ] || sv_usage; clients=$2; shift ;;
	--path) [ $# -ge 2 ] || sv_usage; path=$2; shift ;;
	*) sv_usage ;;
	esac
	shift
done
for n in $conc_list; do case $n in ''|*[!0-9]*) sv_usage ;; esac; done
for c in $clients; do case $c in wrk|ab) ;; *) sv_usage ;; esac; done
case $path in /*) ;; *) sv_usage ;; esac
[ -x /usr/sbin/nginx ] || sv_die "/usr/sbin/nginx is missing: scripts/deps.sh servers"
[ "$(id -u)" = 0 ] || sv_die "must run as root: Debian's nginx binds port 80 and drops its workers to www-data"
pidfile=/run/nginx.pid logdir=/var/log/nginx
if [ -n "$(ss -tlnH 'sport = :80' 2>/dev/null)" ]; then
	sv_die "port 80 is taken ($(ss -tlnpH 'sport = :80' | head -1)): the default site needs it; stop what holds it"
fi
if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	sv_die "$pidfile names a running process ($(cat "$pidfile")): a system nginx? It is left alone; stop it first"
fi
sv_setup wrk ab
. "$(dirname "$0")/http.sh"

d=$sv_tmp/nginx
mkdir -p "$d"
# the configuration test of Debian's unit (ExecStartPre), and the worker
# count it gives; the test leaves an empty pid file, which goes again
had_pidfile=$([ -e "$pidfile" ] && echo 1 || echo 0)
/usr/sbin/nginx -T >"$d/conf.txt" 2>"$d/conf.err" || { cat "$d/conf.err" >&2; sv_die "nginx -T: the configuration does not load"; }
[ "$had_pidfile" = 0 ] && [ ! -s "$pidfile" ] && rm -f "$pidfile"
workers=$(awk '$1 == "worker_processes" { sub(";", "", $2); print $2; exit }' "$d/conf.txt")
[ "$workers" = auto ] || [ -z "$workers" ] && workers=$(getconf _NPROCESSORS_ONLN)
wconn=$(awk '$1 == "worker_connections" { sub(";", "", $2); print $2; exit }' "$d/conf.txt")
conf=$(
	{
		dpkg --verify nginx-common 2>/dev/null | awk '$NF ~ "^/etc/nginx/" { print "changed " $NF }'
		for f in /etc/nginx/sites-enabled/*; do
			[ "$(readlink -f "$f")" = /etc/nginx/sites-available/default ] || echo "enabled $f"
		done
		for f in /etc/nginx/conf.d/* /etc/nginx/modules-enabled/*; do [ -e "$f" ] && echo "added $f"; done
		true
	} | tr '\n' ';' | sed 's/;$//'
)
if [ -n "$conf" ]; then
	sv_log "warning: not Debian's default configuration ($conf); measuring it anyway"
else
	conf="debian default"
fi
url=http://127.0.0.1$path
docroot=$(awk '$1 == "root" { sub(";", "", $2); print $2; exit }' "$d/conf.txt")
bytes=$(stat -L -c %s "$docroot$path" 2>/dev/null || echo 0)

http_ok() {
	timeout -k 5 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/80 && printf 'GET $path HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && head -1 <&3" 2>/dev/null | grep -q ' 200 '
}

# The system's log files: their sizes before a run (logs_mark), and after
# it the part the run appended, error.log's kept in $d/error.log, cut off
# again (logs_restore). A file that was not there is removed.
logs_mark() {
	local f
	for f in access error; do
		if [ -e "$logdir/$f.log" ]; then
			stat -c %s "$logdir/$f.log" >"$d/$f.size"
		else
			echo none >"$d/$f.size"
		fi
	done
}
logs_restore() {
	local f n
	for f in access error; do
		[ -e "$d/$f.size" ] || continue
		n=$(cat "$d/$f.size")
		if [ "$f" = error ]; then
			tail -c +$((${n/none/0} + 1)) "$logdir/error.log" >"$d/error.log" 2>/dev/null || true
		fi
		if [ "$n" = none ]; then
			rm -f "$logdir/$f.log"
		elif [ -e "$logdir/$f.log" ]; then
			truncate -s "$n" "$logdir/$f.log"
		fi
		rm -f "$d/$f.size"
	done
}
# A master that did not end by itself (KILLed) leaves its pid file behind.
pidfile_drop() {
	[ -n "$master" ] && [ "$(cat "$pidfile" 2>/dev/null)" = "$master" ] && ! kill -0 "$master" 2>/dev/null &&
		rm -f "$pidfile"
	master=
}
master=
# what a run leaves on the system, put back after each and after an interrupted one (sv_cleanup)
undo() { pidfile_drop || true; logs_restore; }
sv_cleanup_fn=undo

start_nginx() {
	: >"$d/error.log"
	logs_mark
	sv_launch "$RT" "$d/out.log" /usr/sbin/nginx -g 'daemon off;'
	master=$SERVER_PID
	sv_wait_ready 20 http_ok || return 1
	# every worker up, bounded
	for _ in $(seq 50); do
		[ "$(sv_tree "$SERVER_PID" | wc -l)" -ge $((workers + 1)) ] && return 0
		sleep 0.2
	done
	sv_log "warning: only $(($(sv_tree "$SERVER_PID" | wc -l) - 1)) of $workers workers up"
}

stop_nginx() {
	sv_stop kill -QUIT "$SERVER_PID"
	undo
}

sv_start_fn=start_nginx
sv_stop_fn=stop_nginx
SV_LOGS="$d/out.log $d/error.log"
sv_wait_quiet
for CONC in $conc_list; do
	for CLIENT in $clients; do
		sv_client_fn=client_$CLIENT
		sv_parse_fn=parse_$CLIENT
		TAG=c$CONC-$CLIENT
		POINT=$(printf '{"conc":%s,"path":"%s","bytes":%s,"workers":%s,"worker_connections":%s,"conf":"%s"}' \
			"$CONC" "$path" "${bytes:-0}" "$workers" "${wconn:-0}" "$conf")
		sv_points
	done
done
sv_finish
