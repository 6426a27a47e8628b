#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plots the FlexSC-Threads benchmarks.

    /usr/bin/python3 bench/plot_threads.py [--out DIR] [--quiet] [FILE.jsonl ...]

Reads the JSON lines of bench/switch/run.sh ("bench":"switch") and
bench/http/run.sh ("bench":"http") from the files given, or from every
results/*.jsonl, and writes into DIR (default: results/):

  threads-switch.png  ns per switch, NPTL against FlexSC-Threads, log scale,
                      with the goal of 20 ns per user-level switch and the
                      floor (the runtime's context switch alone)
  threads-http.png    the HTTP sweep: requests/s, p99 latency and requests
                      per server CPU-second against
                      connections, one line per runtime (medians of the runs
                      that passed, quiet and noisy alike: the runtimes take
                      turns, so both meet the same interference; the bars
                      span the runs)

--quiet plots only the HTTP runs that other work on the machine did not
disturb ("noisy": false) and names the file threads-http-quiet.png.

Uses Debian's matplotlib (python3-matplotlib), without a display.
"""
import argparse
import glob
import json
import os
import statistics
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"nptl": "#4c72b0", "flexsc": "#dd8452", "flexsc-sc1": "#55a868"}
LABELS = {"nptl": "NPTL (kernel threads)", "flexsc": "FlexSC-Threads, --cores 0",
          "flexsc-sc1": "FlexSC-Threads, --cores 0 --syscall-cores 1"}


def load(files):
    rows = []
    for f in files:
        with open(f) as fh:
            for line in fh:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    print(f"plot_threads: skipping a bad line in {f}", file=sys.stderr)
    return rows


def plot_switch(rows, out):
    sw = [r for r in rows if r.get("bench") == "switch" and "test" in r]
    if not sw:
        return None
    tests = [t for t in ("condvar_same_cpu", "condvar_cross_cpu", "yield_same_cpu")
             if any(r["test"] == t for r in sw)]
    runtimes = [rt for rt in ("nptl", "flexsc") if any(r["runtime"] == rt for r in sw)]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    width = 0.8 / len(runtimes)
    for i, rt in enumerate(runtimes):
        xs, ys, lo, hi = [], [], [], []
        for j, t in enumerate(tests):
            r = next((r for r in sw if r["runtime"] == rt and r["test"] == t), None)
            if not r:
                continue
            xs.append(j + (i - (len(runtimes) - 1) / 2) * width)
            ys.append(r["ns_per_switch"])
            lo.append(r["ns_per_switch"] - r["min_ns_per_roundtrip"] / 2)
            hi.append(r["max_ns_per_roundtrip"] / 2 - r["ns_per_switch"])
        label = LABELS[rt] + (" (two CPUs: --cores 0,1)" if rt == "flexsc" and "condvar_cross_cpu" in tests else "")
        bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, color=COLORS[rt], label=label)
        for b, y in zip(bars, ys):
            ax.annotate(f"{y:,.0f}", (b.get_x() + b.get_width() / 2, y), ha="center",
                        va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    floor = next((r["ns"] for r in rows if r.get("bench") == "switch_floor" and r["what"] == "fx_ctx_switch"), None)
    if floor:
        ax.axhline(floor, color="#c44e52", ls=":", lw=1)
        ax.annotate(f"the runtime's fx_ctx_switch alone: {floor:.0f} ns", (-0.45, floor), ha="left", va="bottom",
                    fontsize=8, color="#c44e52", xytext=(0, 2), textcoords="offset points")
    ax.axhline(20, color="gray", ls="--", lw=1)
    ax.annotate("goal: 20 ns per user-level switch", (-0.45, 20), ha="left", va="bottom", fontsize=8,
                color="gray", xytext=(0, 2), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xticks(range(len(tests)))
    names = {"condvar_same_cpu": "condvar ping-pong\none CPU", "condvar_cross_cpu": "condvar ping-pong\ntwo CPUs",
             "yield_same_cpu": "sched_yield ping-pong\none CPU"}
    ax.set_xticklabels([names[t] for t in tests])
    ax.set_ylabel("ns per switch (median; bars: min..max)")
    ax.set_title("Thread switch cost: kernel threads against FlexSC-Threads")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "threads-switch.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_http(rows, out, quiet=False):
    runs = [r for r in rows if r.get("bench") == "http" and r.get("ok") and not (quiet and r.get("noisy"))]
    if not runs:
        return None
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4.6))
    for rt in ("nptl", "flexsc", "flexsc-sc1"):
        mine = [r for r in runs if r["runtime"] == rt]
        if not mine:
            continue
        conns = sorted({r["conns"] for r in mine})
        for ax, key, scale in ((a1, "rps", 1e3), (a2, "p99_us", 1e3), (a3, "rps_per_cpu_s", 1e3)):
            med, lo, hi = [], [], []
            for n in conns:
                at = [r for r in mine if r["conns"] == n]
                v = [r[key] / scale for r in at if r.get(key) is not None]
                m = statistics.median(v)
                med.append(m)
                lo.append(m - min(v))
                hi.append(max(v) - m)
            ax.errorbar(conns, med, yerr=[lo, hi], marker="o", capsize=3, color=COLORS[rt],
                        label=LABELS[rt], ls="-" if rt != "flexsc-sc1" else ":")
    ticks = sorted({r["conns"] for r in runs})
    for ax in (a1, a2, a3):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("connections (wrk -t1, keep-alive)")
        ax.grid(True, which="both", alpha=0.3)
    a1.set_ylabel("thousand requests/s")
    a1.set_ylim(bottom=0)
    a1.set_title("Throughput (server on CPU 0, wrk on CPU 1)")
    a2.set_yscale("log")
    a2.set_ylabel("p99 latency, ms")
    a2.set_title("p99 latency")
    a3.set_ylabel("thousand requests per server CPU-second")
    a3.set_ylim(bottom=0)
    a3.set_title("Efficiency (requests / server CPU time)")
    a1.legend(fontsize=8)
    fig.suptitle("Thread-per-connection HTTP server: NPTL against FlexSC-Threads" +
                 (" (quiet runs only)" if quiet else ""), fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, "threads-http-quiet.png" if quiet else "threads-http.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out", default=os.path.join(here, "results"))
    ap.add_argument("--quiet", action="store_true", help="HTTP: only runs no other work disturbed")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(here, "results", "*.jsonl")))
    rows = load(files)
    os.makedirs(a.out, exist_ok=True)
    made = [p for p in (plot_switch(rows, a.out), plot_http(rows, a.out, a.quiet)) if p]
    if not made:
        what = "HTTP runs that no other work disturbed" if a.quiet else "switch or http results"
        print(f"plot_threads: no {what} in " + ", ".join(files), file=sys.stderr)
        return 1
    for p in made:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
