"""bench/servers/judge.py: what the harness's Python pieces share (the
client parsers of apache.sh, mariadb.sh and bind.sh and the table of
lib.sh run as `sv_py`, which puts this directory on the path; plot.py sits
beside it). Each parser turns one client's output into the JSON object that
sv_point (lib.sh) records; these are the parts that must judge every client
alike: a client error or a non-zero exit status fails the point. And every
ratio is taken against the same NPTL layout (baseline)."""
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
