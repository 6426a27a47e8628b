#!/usr/bin/python3
"""Plots of bench/servers/ results in the style of the FlexSC paper's
figures 11-16: per server, throughput, latency (mean and p99) and work
per server CPU-second against the load, NPTL against flexsc-run.

  /usr/bin/python3 bench/servers/plot.py [--out DIR] [--table [--against RT]] FILE.jsonl ...

(default files: results/servers-sweep-*.jsonl; default DIR: results).
Writes DIR/servers-SERVER.png, one per server found, with a row per
workload (Apache: wrk or ab; MariaDB: oltp_read_only, oltp_read_write;
BIND: dnsperf; nginx: wrk or ab). Failed runs are left out, and so are
runs that were run again because other work disturbed them (their reruns
count: judge.counted); a point run more than once is the median of its
runs. Points where other processes took more than 10% of the server's CPU
in every run ("noisy") are drawn hollow. --table also prints a Markdown
table of the flexsc / NPTL ratios per point (throughput, mean and p99
latency, work per server CPU-second: the medians of the ratios run by run,
judge.paired) with the flexsc-run
counters behind them (exception-less calls per operation, the share run
by each engine, posted calls per batch, and under --specialize auto the
share of windows its carriers ran remote); --against RT takes the ratios
against runtime RT instead (e.g. flexsc, for the --order runtimes). Runs with --entries N
(runtime flexsc-eN) also give DIR/servers-entries.png, throughput
against the syscall entries per core (figure 16).
"""
import argparse
import glob
import os
import statistics
import sys

import matplotlib

from judge import baseline, counted, load, paired, ratios

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "nptl": dict(color="tab:blue", marker="o", label="NPTL"),
    "flexsc": dict(color="tab:red", marker="s", label="flexsc-run (one core)"),
    "flexsc-sc1": dict(color="tab:orange", marker="^", label="flexsc-run --syscall-cores 1"),
    "flexsc-remote": dict(color="tab:purple", marker="v", label="flexsc-run, every call on CPU 1"),
    "flexsc-auto": dict(color="tab:green", marker="D", label="flexsc-run --specialize auto"),
    "nptl-2c": dict(color="tab:cyan", marker="o", label="NPTL, both CPUs"),
    "flexsc-2c": dict(color="tab:pink", marker="s", label="flexsc-run, both CPUs"),
    "flexsc-pin-2c": dict(color="tab:cyan", marker="v", label="flexsc-run --cores 0,1"),
    "flexsc-type": dict(color="tab:brown", marker="P", label="flexsc-run --order type"),
    "flexsc-io": dict(color="tab:olive", marker="X", label="flexsc-run --order io-first"),
    "flexsc-iotype": dict(color="tab:gray", marker="*", label="flexsc-run --order io-first,type"),
}
XLABEL = {"apache": "concurrent connections", "mariadb": "sysbench threads",
          "bind": "dnsperf queries in flight (-q)", "nginx": "concurrent connections"}
UNIT = {"req": "requests/s", "tx": "transactions/s", "qry": "queries/s"}
TITLE = {"apache": "Apache httpd 2.4 (worker MPM)", "mariadb": "MariaDB (sysbench)", "bind": "BIND 9 (dnsperf)",
         "nginx": "nginx (Debian's default configuration)"}


def xval(r):
    for k in ("conc", "threads", "inflight"):
        if k in r:
            return r[k]
    return None


def workload(r):
    if r["server"] == "mariadb":
        return r.get("test", "sysbench")
    return r.get("client", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="results")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--against", metavar="RT", help="--table: ratios against runtime RT, not NPTL")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob("results/servers-sweep-*.jsonl"))
    runs = [r for r in counted(load(files)) if r.get("ok") and r.get("throughput")]
    if not runs:
        sys.exit("plot.py: no successful points in " + " ".join(files))
    os.makedirs(a.out, exist_ok=True)
    if a.table:
        table(runs, a.against)
    entries_plot(runs, a.out)
    for server in sorted({r["server"] for r in runs}):
        srv = [r for r in runs if r["server"] == server]
        wls = sorted({workload(r) for r in srv})
        fig, axes = plt.subplots(len(wls), 3, figsize=(15, 4.2 * len(wls)), squeeze=False)
        for i, wl in enumerate(wls):
            sub = [r for r in srv if workload(r) == wl]
            unit = UNIT.get(sub[0].get("unit"), sub[0].get("unit", "ops/s"))
            for rt in STYLE:
                pts = {}
                for r in sub:
                    if r["runtime"] == rt:
                        pts.setdefault(xval(r), []).append(r)
                if not pts:
                    continue
                xs = sorted(pts)
                med = lambda k: [statistics.median(p.get(k) or 0 for p in pts[x]) for x in xs]
                noisy = [all(p.get("noisy") for p in pts[x]) for x in xs]
                st = STYLE[rt]
                panels = ((0, med("throughput"), "-"), (1, [v / 1000 for v in med("mean_us")], "-"),
                          (1, [v / 1000 for v in med("p99_us")], ":"), (2, med("ops_per_cpu_s"), "-"))
                for col, ys, ls in panels:
                    ax = axes[i][col]
                    lab = st["label"] + (" p99" if ls == ":" else " mean" if col == 1 else "")
                    ax.plot(xs, ys, ls, color=st["color"], label=lab)
                    for x, y, n in zip(xs, ys, noisy):
                        ax.plot([x], [y], st["marker"], color=st["color"],
                                markerfacecolor="none" if n else st["color"])
            for col, yl in enumerate((unit, "latency (ms, log)", unit.split("/")[0] + " per server CPU-second")):
                ax = axes[i][col]
                ax.set_xscale("log", base=2)
                ax.set_xlabel(XLABEL.get(server, "load"))
                ax.set_ylabel(yl)
                ax.grid(True, alpha=0.3)
                if col == 1:
                    ax.set_yscale("log")
                else:
                    ax.set_ylim(bottom=0)
                ax.legend(fontsize=8)
            axes[i][0].set_title(f"{TITLE.get(server, server)}: {wl} throughput")
            axes[i][1].set_title(f"{wl}: latency (solid mean, dotted p99)")
            axes[i][2].set_title(f"{wl}: work per server CPU-second")
            if server == "bind":
                xs = sorted({(r["inflight"], r["clients"]) for r in sub})
                for ax in axes[i]:
                    ax.set_xticks([q for q, _ in xs])
                    ax.set_xticklabels([f"{q}\n({c} clients)" for q, c in xs])
            else:
                xs = sorted({xval(r) for r in sub})
                for ax in axes[i]:
                    ax.set_xticks(xs)
                    ax.set_xticklabels([str(x) for x in xs])
        fig.suptitle(f"{TITLE.get(server, server)}: server on CPU 0, client on CPU 1 "
                     "(hollow markers: other processes took >10% of CPU 0)", fontsize=10)
        fig.tight_layout()
        out = os.path.join(a.out, f"servers-{server}.png")
        fig.savefig(out, dpi=90)
        plt.close(fig)
        print(out)


def entries_plot(runs, out_dir):
    """The paper's figure 16: throughput against the syscall entries per
    core, one line per (server, workload, load) run with flexsc-eN, with
    NPTL's throughput at that point as a flat reference."""
    ent = [r for r in runs if r["runtime"].startswith("flexsc-e")]
    if not ent:
        return
    keys = sorted({(r["server"], workload(r), xval(r)) for r in ent}, key=str)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n, k in enumerate(keys):
        color = f"C{n}"
        same = [r for r in runs if (r["server"], workload(r), xval(r)) == k]
        pts = {}
        for r in same:
            if r["runtime"].startswith("flexsc-e"):
                pts.setdefault(r["entries"], []).append(r["throughput"])
        xs = sorted(pts)
        ax.plot(xs, [statistics.median(pts[x]) for x in xs], "s-", color=color,
                label=f"{k[0]} {k[1]} {k[2]}: flexsc-run --entries N")
        base = [r["throughput"] for r in same if r["runtime"] == "nptl"]
        if base:
            ax.axhline(statistics.median(base), color=color, ls=":", label=f"{k[0]} {k[1]} {k[2]}: NPTL")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("syscall entries per core (64-byte entries; 64 per 4 KiB page)")
    ax.set_ylabel("throughput (ops/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Throughput against syscall entries per core (paper's figure 16)")
    fig.tight_layout()
    out = os.path.join(out_dir, "servers-entries.png")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    print(out)


def table(runs, against=None):
    def med(rs, k):
        v = [r.get(k) for r in rs if r.get(k) is not None]
        return statistics.median(v) if v else None

    def ratio(pairs, key):
        v = ratios(pairs, key)
        return f"{statistics.median(v):.2f}" if v else "-"

    print("| server | workload | load | runtime | throughput x | mean lat. x | p99 x | per CPU-s x |"
          f" {against or 'NPTL'} ops/s | {'runtime' if against else 'flexsc'} ops/s | calls/op |"
          " local/uring/threads % | calls/batch |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    keys = []
    for r in runs:
        k = (r["server"], workload(r), xval(r), r.get("clients"))
        if k not in keys:
            keys.append(k)
    for k in keys:
        grp = [r for r in runs if (r["server"], workload(r), xval(r), r.get("clients")) == k]
        lbl = f"{k[3]}/{k[2]}" if k[0] == "bind" else str(k[2])
        def base_of(rt):
            if against:
                return against if rt != against and baseline(rt) else None
            return baseline(rt)
        for rt in sorted({r["runtime"] for r in grp if base_of(r["runtime"])}):
            base = [r for r in grp if r["runtime"] == base_of(rt)]
            fx = [r for r in grp if r["runtime"] == rt]
            if not fx or not base:
                continue
            f0 = fx[0].get("flexsc") or {}
            by = f0.get("by_engine") or {}
            tot = sum(by.values()) or 1
            eng = "/".join(f"{100 * by.get(e, 0) / tot:.0f}" for e in ("local", "uring", "threads"))
            sp = f0.get("specialization")
            if sp and sp["local_windows"] + sp["remote_windows"]:
                eng += f" (remote in {100 * sp['remote_windows'] / (sp['local_windows'] + sp['remote_windows']):.0f}% of windows)"
            pr = paired(grp, rt, base_of(rt))
            print(f"| {k[0]} | {k[1]} | {lbl} | {rt} | {ratio(pr, 'throughput')} | "
                  f"{ratio(pr, 'mean_us')} | {ratio(pr, 'p99_us')} | "
                  f"{ratio(pr, 'ops_per_cpu_s')} | {med(base, 'throughput'):,.0f} | "
                  f"{med(fx, 'throughput'):,.0f} | {f0.get('calls_per_op', '-')} | {eng} | {f0.get('mean_batch') or '-'} |")


if __name__ == "__main__":
    main()
