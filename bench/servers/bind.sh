#!/usr/bin/env bash
# BIND 9 (Debian's bind9), unmodified, on NPTL against flexsc-run, loaded by dnsperf.
#   bench/servers/bind.sh BUILD [--load "CLIENTS:INFLIGHT ..."] [--names N] [--workers N]
#       [--user bind|root] [common options: lib.sh]
#
# A private directory under /tmp with its own named.conf: listen-on
# 127.0.0.1 port PORT only (no IPv6), recursion off, one authoritative zone
# (bench.test) of N generated names (default 5000), a control channel on
# 127.0.0.1 with a private rndc key (rndc-confgen -a -c), its own pid and
# session-key files; named -g -c named.conf -n WORKERS (default 1: one CPU)
# -u USER (default bind, as Debian runs it; the files are made readable).
# For each dnsperf load (CLIENTS:INFLIGHT, dnsperf -c CLIENTS -q INFLIGHT
# -T 1 on CPU 1; default "4:32 16:128"), the server is started under each
# runtime, queried for --warm then --seconds (every name once in turn, type
# A), and stopped with `rndc stop`. dnsperf -v reports each query's latency:
# mean and p99 come from those. Any lost query or an answer other than
# NOERROR fails the point.
set -euo pipefail
SV_SERVER=bind SV_NAME=bench/servers/bind.sh SV_COMM=named
sv_usage() { sed -n '3,4p' "$0" | sed 's/^# *//' >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
sv_autogroup "$0" "$@"
sv_version() { /usr/sbin/named -v 2>/dev/null; }

sv_parse_common "$@"
loads="4:32 16:128" names=5000 workers=1 user=bind
set -- ${SV_ARGS[@]+"${SV_ARGS[@]}"}
while [ $# -gt 0 ]; do
	case $1 in
	--load) [ $# -ge 2 ] || sv_usage; loads=$2; shift ;;
	--names) [ $# -ge 2 ] || sv_usage; names=$2; shift ;;
	--workers) [ $# -ge 2 ] || sv_usage; workers=$2; shift ;;
	--user) [ $# -ge 2 ] || sv_usage; user=$2; shift ;;
	*) sv_usage ;;
	esac
	shift
done
for n in $names $workers; do case $n in ''|*[!0-9]*) sv_usage ;; esac; done
for l in $loads; do case $l in [0-9]*:[0-9]*) ;; *) sv_usage ;; esac; done
case $user in bind|root) ;; *) sv_usage ;; esac
[ -x /usr/sbin/named ] || sv_die "/usr/sbin/named is missing: scripts/deps.sh servers"
sv_setup dnsperf rndc rndc-confgen named-checkconf named-checkzone

d=$sv_tmp/bind
mkdir -p "$d"
port=$(sv_port 15453)
cport=$(sv_port $((port + 1)))
rndc-confgen -a -A hmac-sha256 -k flexsc-bench -c "$d/rndc.key" >/dev/null 2>&1 || sv_die "rndc-confgen failed"
python3 - "$d" "$names" <<'EOF'
import sys
d, n = sys.argv[1], int(sys.argv[2])
with open(f"{d}/bench.zone", "w") as f:
    f.write("$TTL 3600\n@ IN SOA ns1.bench.test. admin.bench.test. 1 3600 600 86400 3600\n"
            "@ IN NS ns1.bench.test.\nns1 IN A 127.0.0.1\n")
    for i in range(n):
        f.write(f"h{i} IN A 10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}\n")
with open(f"{d}/queries.txt", "w") as f:
    for i in range(n):
        f.write(f"h{i}.bench.test A\n")
EOF
sv_bind_conf "$d" "$port" "$cport" flexsc-bench bench.test "$d/bench.zone"
named-checkconf "$d/named.conf" || sv_die "named-checkconf failed"
named-checkzone -q bench.test "$d/bench.zone" || sv_die "named-checkzone failed"
printf 'h1.bench.test A\n' >"$d/one.txt"
[ "$user" = bind ] && chown -R bind:bind "$d"
rndc_cmd=(rndc -k "$d/rndc.key" -s 127.0.0.1 -p "$cport")

dns_ok() { # one query answered NOERROR
	timeout -k 2 5 dnsperf -s 127.0.0.1 -p "$port" -d "$d/one.txt" -n 1 -t 1 2>/dev/null | grep -q 'NOERROR 1 '
}

start_named() {
	rm -f "$d/named.pid"
	local u=()
	[ "$user" = bind ] && u=(-u bind)
	sv_launch "$RT" "$d/named.log" /usr/sbin/named -g -c "$d/named.conf" -n "$workers" "${u[@]}"
	sv_wait_ready 30 dns_ok
}
stop_named() { sv_stop "${rndc_cmd[@]}" stop; }

client_dnsperf() { # seconds outfile
	timeout -k 5 $(($1 + 60)) nice -n "$sv_nice" taskset -c 1 dnsperf -s 127.0.0.1 -p "$port" -d "$d/queries.txt" \
		-l "$1" -c "$CLIENTS" -q "$INFLIGHT" -T 1 -t 5 -v >"$2" 2>&1 || echo "CLIENT-EXIT $?" >>"$2"
}

parse_dnsperf() {
	sv_py - "$1" <<'EOF'
import re, sys
from judge import read, no_result, judge
t, num = read(sys.argv[1])
done = num(r"^\s+Queries completed:\s+(\d+)")
if done is None:
    no_result("dnsperf", t, 4)
dur = num(r"^\s+Run time \(s\):\s+([\d.]+)")
lat = sorted(float(m.group(1)) for m in re.finditer(r"^> \S+ \S+ \S+ ([\d.]+)$", t, re.M))
codes = dict((k, int(v)) for k, v in re.findall(r"([A-Z]+) (\d+) \(", (re.search(r"^\s+Response codes:(.*)$", t, re.M) or [None, ""])[1]))
errs = {"lost": int(num(r"^\s+Queries lost:\s+(\d+)", 0)),
        "not_noerror": sum(v for k, v in codes.items() if k != "NOERROR")}
r = {"ops": int(done), "throughput": round(done / dur, 1) if dur else 0, "unit": "qry", "duration_s": dur,
     "mean_us": round(num(r"^\s+Average Latency \(s\):\s+([\d.]+)", 0) * 1e6, 1), "errors": errs}
if lat:
    r["p50_us"] = round(lat[len(lat) // 2] * 1e6, 1)
    r["p99_us"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6, 1)
    r["max_us"] = round(lat[-1] * 1e6, 1)
judge(r, "dnsperf", t, "no query answered")
EOF
}

sv_start_fn=start_named
sv_stop_fn=stop_named
sv_client_fn=client_dnsperf
sv_parse_fn=parse_dnsperf
SV_LOGS="$d/named.log"
sv_wait_quiet
for load in $loads; do
	CLIENTS=${load%%:*} INFLIGHT=${load#*:}
	CLIENT=dnsperf
	TAG=c$CLIENTS-q$INFLIGHT
	POINT=$(printf '{"clients":%s,"inflight":%s,"names":%s,"workers":%s,"user":"%s"}' \
		"$CLIENTS" "$INFLIGHT" "$names" "$workers" "$user")
	sv_points
done
sv_finish
