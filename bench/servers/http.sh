# bench/servers/http.sh: the HTTP clients that apache.sh and nginx.sh share.
# Sourced after lib.sh and sv_setup.
#
# wrk (-t1 --latency; a Lua done() hook prints one WRKJSON line: requests,
# duration, error counts, mean/p50/p99/max latency) and ab (-k -q; -e
# writes the latency percentiles to a CSV file), both keep-alive, both
# GETs of one URL, both pinned to CPU 1 at the bench's nice, both bounded
# by timeout. The caller sets url and CONC; sv_point calls
# client_CLIENT SECONDS OUTFILE and parse_CLIENT OUTFILE.

cat >"$sv_tmp/report.lua" <<'EOF'
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,' ..
		'"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d,' ..
		'"mean_us":%.1f,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
		summary.requests, summary.duration,
		e.connect, e.read, e.write, e.status, e.timeout,
		latency.mean, latency:percentile(50), latency:percentile(99), latency.max))
end
EOF

client_wrk() { # seconds outfile
	timeout -k 5 $(($1 + 60)) nice -n "$sv_nice" taskset -c 1 wrk -t1 -c "$CONC" -d "${1}s" --timeout 10s --latency \
		-s "$sv_tmp/report.lua" "$url" >"$2" 2>&1 || echo "CLIENT-EXIT $?" >>"$2"
}

client_ab() { # seconds outfile: -t before -n (ab's -t resets -n); ab allocates -n records up front
	timeout -k 5 $(($1 + 60)) nice -n "$sv_nice" taskset -c 1 ab -k -q -c "$CONC" -t "$1" -n $((100000 * $1)) -s 10 \
		-e "$2.csv" "$url" >"$2" 2>&1 || echo "CLIENT-EXIT $?" >>"$2"
}

parse_wrk() {
	sv_py - "$1" <<'EOF'
import json, re, sys
from judge import read, judge
t, _ = read(sys.argv[1])
m = re.search(r"^WRKJSON (.*)$", t, re.M)
if not m:
    print(json.dumps({"failure": "wrk produced no result"})); sys.exit()
w = json.loads(m.group(1))
d = w["duration_us"] / 1e6
errs = {k[4:]: w[k] for k in w if k.startswith("err_")}
r = {"ops": w["requests"], "throughput": round(w["requests"] / d, 1) if d else 0, "unit": "req",
     "duration_s": round(d, 3), "mean_us": w["mean_us"], "p50_us": w["p50_us"], "p99_us": w["p99_us"],
     "max_us": w["max_us"], "errors": errs}
judge(r, "wrk", t, "no request answered")
EOF
}

parse_ab() {
	sv_py - "$1" <<'EOF'
import sys
from judge import read, no_result, judge
f = sys.argv[1]
t, num = read(f)
done = num(r"^Complete requests:\s+(\d+)")
if done is None:
    no_result("ab", t, 3)
dur = num(r"^Time taken for tests:\s+([\d.]+)")
errs = {"failed": int(num(r"^Failed requests:\s+(\d+)", 0)),
        "non_2xx": int(num(r"^Non-2xx responses:\s+(\d+)", 0)),
        "write": int(num(r"^Write errors:\s+(\d+)", 0)),
        "exceptions": int(num(r"Exceptions:\s+(\d+)", 0))}
r = {"ops": int(done), "throughput": round(done / dur, 1) if dur else 0, "unit": "req", "duration_s": dur,
     "mean_us": round(num(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)", 0) * 1000, 1), "errors": errs}
try:  # ab -e: the time (ms) within which each percentage of the requests was served
    pct = {}
    for line in open(f + ".csv"):
        a, _, b = line.strip().partition(",")
        if a.isdigit():
            pct[int(a)] = float(b)
    r["p50_us"] = round(pct[50] * 1000)
    r["p99_us"] = round(pct[99] * 1000)
    r["max_us"] = round(pct[100] * 1000)
except (OSError, KeyError, ValueError):
    pass
judge(r, "ab", t, "no request answered")
EOF
}
