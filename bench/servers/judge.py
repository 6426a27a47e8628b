"""bench/servers/judge.py: what the harness's Python pieces share (the
client parsers of apache.sh, mariadb.sh and bind.sh and the table of
lib.sh run as `sv_py`, which puts this directory on the path; plot.py sits
beside it). Each parser turns one client's output into the JSON object that
sv_point (lib.sh) records; these are the parts that must judge every client
alike: a client error or a non-zero exit status fails the point. And every
ratio is taken against the same NPTL layout (baseline), run by run against
the baseline's run of the same repeat (paired), over the same runs
(counted: a noisy run that was run again gives way to its rerun)."""
import json
import re
import sys


def read(path):
    """The client's output, and num(PATTERN, DEFAULT): PATTERN's first group
    in it (multi-line) as a float, DEFAULT when it does not match."""
    text = open(path, errors="replace").read()

    def num(pat, default=None):
        m = re.search(pat, text, re.M)
        return float(m.group(1)) if m else default

    return text, num


def no_result(client, text, lines):
    """The client printed no summary: fail with its last LINES lines (its own
    error message is there) and stop."""
    tail = " / ".join(text.strip().splitlines()[-lines:])
    print(json.dumps({"failure": f"{client} failed: " + tail[:300]}))
    sys.exit()


def judge(r, client, text, none_done, tolerated=lambda k, v: False):
    """Prints R with its "failure" set, if any: any error the client counted in
    r["errors"] (but those tolerated(KIND, COUNT)), then the client's exit
    status (the "CLIENT-EXIT N" line its runner appends), then no work at all
    (NONE_DONE says so)."""
    bad = [f"{k} {v}" for k, v in r["errors"].items() if v and not tolerated(k, v)]
    if bad:
        r["failure"] = f"{client} reported errors: " + ", ".join(bad)
    elif "CLIENT-EXIT" in text:
        r["failure"] = f"{client} exited with status " + text.split("CLIENT-EXIT ")[1].split()[0]
    elif not r["ops"]:
        r["failure"] = none_done
    print(json.dumps(r))


def baseline(runtime):
    """The NPTL runtime a runtime's ratios are taken against: the one on
    the same CPUs (nptl-2c for flexsc-2c, nptl otherwise); None for an NPTL
    runtime itself."""
    if runtime.startswith("nptl"):
        return None
    return "nptl-2c" if runtime.endswith("-2c") else "nptl"


def load(files):
    """The records of the JSONL FILES, each with "_src": its file's index
    (runs are paired within one file)."""
    rows = []
    for i, f in enumerate(files):
        try:
            with open(f) as fh:
                rows += [dict(json.loads(l), _src=i) for l in fh if l.strip()]
        except OSError:
            pass
    return rows


def counted(rows):
    """The runs that count: every servers record but those run again
    because other work disturbed them ("rerun": true, lib.sh's sv_points):
    their reruns count instead."""
    return [r for r in rows if r.get("bench") == "servers" and not r.get("rerun")]


def paired(grp, runtime, base=None):
    """(run, baseline run) pairs of RUNTIME among one point's counted runs
    GRP: a run and the baseline's (BASE, default baseline(RUNTIME)) run
    of the same file and repeat (the same round of alternation; in files
    of one run per point, the k-th of each). Failed runs pair with
    nothing."""
    def by_round(rt):
        d = {}
        for r in grp:
            if r["runtime"] == rt and r.get("ok"):
                d.setdefault((r.get("_src"), r.get("repeat", 1)), []).append(r)
        return d
    a, b = by_round(runtime), by_round(base or baseline(runtime))
    return [(x, y) for k in a if k in b for x, y in zip(a[k], b[k])]


def ratios(pairs, key):
    """run[KEY] / baseline[KEY] of every pair where both are known and non-zero."""
    return [x[key] / y[key] for x, y in pairs if x.get(key) and y.get(key)]
