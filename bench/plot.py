#!/usr/bin/python3
"""Plots the JSON lines of `flexsc-bench all --json`.

usage: /usr/bin/python3 bench/plot.py RESULTS.jsonl|RESULTS-DIR

With a directory, the newest flexsc-bench *.jsonl in it is plotted. The PNGs go next to
the input: fig9.png, fig10.png, wsc.png, ros.png, pollution.png and
uring-overhead.png. Every number on a plot is read from the input; a
benchmark missing from it is skipped with a note.
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"uring": "tab:blue", "threads": "tab:orange", "sync": "tab:green",
          "uring-sqpoll": "tab:purple", "raw": "tab:gray", "raw-tuned": "tab:brown"}
CALLS = ["null", "getpid", "write64", "pread4k"]


def load(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"plot.py: {path}:{n}: not JSON: {e}")
    return rows


def pick(rows, bench, **kw):
    """Rows of bench matching kw; noise and tries records only when asked for by kind."""
    out = []
    for r in rows:
        if r.get("bench") != bench:
            continue
        if r.get("kind") in ("noise", "tries") and kw.get("kind") != r.get("kind"):
            continue
        if all(r.get(k) == v for k, v in kw.items()):
            out.append(r)
    return out


def subtitle(rows):
    m = next((r for r in rows if r.get("bench") == "machine"), {})
    b = next((r for r in rows if r.get("bench") == "build"), {})
    s = f"{m.get('cpu_model', '?')}, {m.get('online_cpus', '?')} CPUs, {m.get('kernel', '?')}"
    if b:
        s += f"; flexsc {b.get('git', '?')}{' (modified)' if b.get('src_dirty') else ''}"
    s += f"; medians of {m.get('reps', '?')} reps"
    return s


def save(fig, outdir, name, rows):
    fig.text(0.5, 0.005, subtitle(rows), ha="center", va="bottom", fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def log2_batches(ax, xs):
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])


def sync_line(ax, label="synchronous call (same run)"):
    ax.axhline(1.0, color="black", lw=1, label=label)


def batch_sweeps(ax, rows, bench, call, placement):
    drew = False
    xs_all = set()
    for eng in ["uring", "uring-sqpoll", "threads", "sync"]:
        pts = [r for r in pick(rows, bench, engine=eng, call=call, placement=placement)
               if "kind" not in r]
        if not pts:
            continue
        pts.sort(key=lambda r: r["batch"])
        xs = [r["batch"] for r in pts]
        xs_all.update(xs)
        ax.plot(xs, [r["ratio"] for r in pts], "o-", color=COLORS[eng], label=f"{eng} engine")
        drew = True
    if drew:
        log2_batches(ax, sorted(xs_all))
        ax.set_yscale("log")
        sync_line(ax)
        ax.set_xlabel("calls per batch")
        ax.set_ylabel("time per call / synchronous")
        ax.grid(True, which="both", alpha=0.3)
    return drew


def plot_fig9(rows, outdir):
    if not pick(rows, "fig9"):
        print("plot.py: no fig9 rows; skipping fig9.png")
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for ax, call in zip(axes.flat, CALLS):
        if batch_sweeps(ax, rows, "fig9", call, "local"):
            if call == "null":
                ax.axhline(0.35, color="red", ls="--", lw=1, label="goal at batch >= 32: 0.35")
                ax.axhline(1.5, color="red", ls=":", lw=1, label="goal at batch 1: 1.5")
            sync = [r["sync_ns_per_call"] for r in pick(rows, "fig9", call=call) if "kind" not in r]
            med = sorted(sync)[len(sync) // 2] if sync else float("nan")
            ax.set_title(f"{call}: one core (sync = {med:.0f} ns)")
            ax.legend(fontsize=7)
    fig.suptitle("Figure 9: exception-less calls on one core, time per call relative to a synchronous call")
    save(fig, outdir, "fig9.png", rows)


def plot_fig10(rows, outdir):
    if not pick(rows, "fig10"):
        print("plot.py: no fig10 rows; skipping fig10.png")
        return
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    ax = axes[0][0]
    xs_all = set()
    for eng, style in [("threads", "-"), ("uring-sqpoll", "--")]:
        for call, marker in zip(CALLS, "os^v"):
            pts = [r for r in pick(rows, "fig10", engine=eng, call=call) if "kind" not in r]
            if not pts:
                continue
            pts.sort(key=lambda r: r["batch"])
            xs = [r["batch"] for r in pts]
            xs_all.update(xs)
            ax.plot(xs, [r["ratio"] for r in pts], marker + style, color=COLORS[eng], ms=4,
                    label=f"{eng} {call}")
    if xs_all:
        log2_batches(ax, sorted(xs_all))
        ax.set_yscale("log")
        sync_line(ax)
        ax.axhline(5, color="red", ls=":", lw=1, label="goal at batch 1: 5")
        ax.set_xlabel("calls per batch")
        ax.set_ylabel("time per call / synchronous")
        ax.set_title("remote core, remote side awake")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2)

    ax = axes[0][1]
    asleep = pick(rows, "fig10", kind="asleep")
    if asleep:
        labels, p50, p99 = ["sync"], [], []
        sync50 = [r["sync_p50_ns"] for r in asleep]
        sync99 = [r["sync_p99_ns"] for r in asleep]
        p50.append(sorted(sync50)[len(sync50) // 2] / 1e3)
        p99.append(sorted(sync99)[len(sync99) // 2] / 1e3)
        for r in asleep:
            labels.append(r["engine"])
            p50.append(r["p50_ns"] / 1e3)
            p99.append(r["p99_ns"] / 1e3)
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], p50, 0.4, label="p50", color="tab:blue")
        ax.bar([x + 0.2 for x in xs], p99, 0.4, label="p99", color="tab:red")
        for x, a, b in zip(xs, p50, p99):
            ax.text(x - 0.2, a, f"{a:.1f}", ha="center", va="bottom", fontsize=7)
            ax.text(x + 0.2, b, f"{b:.1f}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels)
        ax.set_yscale("log")
        ax.set_ylabel("latency of one null call (us)")
        ax.set_title(f"remote side asleep ({asleep[0]['gap_us'] // 1000} ms between calls)")
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", which="both", alpha=0.3)

    ax = axes[1][0]
    spin = pick(rows, "fig10", kind="spin")
    if spin:
        ax2 = ax.twinx()
        for eng in ["threads", "uring-sqpoll"]:
            pts = sorted(pick(rows, "fig10", kind="spin", engine=eng), key=lambda r: r["spin_us"])
            if not pts:
                continue
            xs = [max(r["spin_us"], 0.5) for r in pts]
            ax.plot(xs, [r["p50_ns"] / 1e3 for r in pts], "o-", color=COLORS[eng],
                    label=f"{eng}: p50 latency")
            ax2.plot(xs, [r["extra_cpu_ns_per_call"] / 1e3 for r in pts], "s--", color=COLORS[eng],
                     alpha=0.6, label=f"{eng}: extra CPU per call")
        ax.set_xscale("log")
        ax.set_xticks([0.5, 5, 20, 100, 1000])
        ax.set_xticklabels(["0", "5", "20", "100", "1000"])
        ax.set_yscale("log")
        ax.set_xlabel("spin_us (spin before sleeping)")
        ax.set_ylabel("latency of one call, p50 (us)")
        ax2.set_ylabel("CPU burnt per call beyond sync (us, dashed)")
        gap = spin[0].get("gap_us", "?")
        ax.set_title(f"spin before sleep: a null call every {gap} us of caller work")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center")
        ax.grid(True, which="both", alpha=0.3)

    ax = axes[1][1]
    names = {"futex_same_core": "futex wake,\nsame core", "futex_cross_core": "futex wake,\nacross cores",
             "spin_cross_core": "cache line,\nacross cores"}
    pp = [r for r in pick(rows, "fig10") if r.get("kind") in names]
    if pp:
        labels = [names[r["kind"]] for r in pp]
        vals = [r["ns_per_handover"] / 1e3 for r in pp]
        ax.bar(labels, vals, color=["tab:green", "tab:red", "tab:blue"][: len(vals)])
        for i, v in enumerate(vals):
            ax.text(i, v, f"{v * 1e3:.0f} ns", ha="center", va="bottom")
        ax.set_yscale("log")
        ax.set_ylabel("one hand-over between two threads (us)")
        ax.set_title("reference: thread ping-pong")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.suptitle("Figure 10: exception-less calls executed on a remote core")
    save(fig, outdir, "fig10.png", rows)


def plot_wsc(rows, outdir):
    pts = [r for r in pick(rows, "wsc") if "kind" not in r]
    if not pts:
        print("plot.py: no wsc rows; skipping wsc.png")
        return
    fig, (ax, axt) = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    series = sorted({(r["engine"], r["call"]) for r in pts})
    for eng, call in series:
        s = sorted([r for r in pts if r["engine"] == eng and r["call"] == call], key=lambda r: r["batch"])
        ax.plot([r["batch"] for r in s], [r["ratio"] for r in s], "o-" if call == "getpid" else "s--",
                color=COLORS.get(eng), ms=4, label=f"{eng} engine, {call}")
    ax.set_yscale("log")
    sync_line(ax, "unwrapped synchronous call")
    ax.set_xlabel("threshold M (calls per flush)")
    ax.set_ylabel("time per call / synchronous")
    ax.set_title("CEFOS WSC threshold sweep, one core")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    model = pick(rows, "wsc", kind="model")
    axt.axis("off")
    if model:
        def fmt(v):
            return "never" if v is None else f"{v:g}"
        cells = [[r["engine"], r["call"], f"{r['T_sys']:.0f}", f"{r['T_req']:.0f}", f"{r['T_sche']:.0f}",
                  f"{r['T_sync']:.0f}", f"{r['F_batch']:.0f}", fmt(r["M_pred_seed"]),
                  fmt(r["M_measured"])] for r in model]
        t = axt.table(cellText=cells, colLabels=["engine", "call", "T_sys", "T_req", "T_sche", "T_sync",
                                                 "F", "M pred (5)", "M meas."],
                      loc="center", cellLoc="right")
        t.auto_set_font_size(False)
        t.set_fontsize(7)
        t.scale(1, 1.5)
        axt.set_title("formula (5): M > T_sys / (T_sys - (T_gen+T_sche+T_sync+T_req)), T_gen = 0\n"
                      "ns; per call: T_req post, T_sche flush, T_sync wait; F: per batch", fontsize=8)
    fig.suptitle("Wrapped system calls (CEFOS): predicted against measured break-even")
    save(fig, outdir, "wsc.png", rows)


def plot_ros(rows, outdir):
    pts = pick(rows, "ros")
    if not pts:
        print("plot.py: no ros rows; skipping ros.png")
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    engines = sorted({r["engine"] for r in pts})
    for eng in engines:
        s = sorted([r for r in pts if r["engine"] == eng], key=lambda r: r["lines"])
        xs = [r["lines"] for r in s]
        axes[0].plot(xs, [r["ns_per_call"] / 1e3 for r in s], "o-", color=COLORS[eng], label=f"remote {eng}")
        axes[0].plot(xs, [r["sync_ns_per_call"] / 1e3 for r in s], "x:", color=COLORS[eng], alpha=0.7,
                     label=f"local sync (next to {eng})")
        axes[1].plot(xs, [r["calls_per_s"] / 1e6 for r in s], "o-", color=COLORS[eng],
                     label=f"remote {eng}, {s[0]['depth']} in flight")
        axes[1].plot(xs, [r["sync_calls_per_s"] / 1e6 for r in s], "x:", color=COLORS[eng], alpha=0.7,
                     label=f"local sync (next to {eng})")
        axes[2].plot(xs, [r["work_iters_per_call"] for r in s], "o-", color=COLORS[eng],
                     label=f"done during a remote {eng} call")
        axes[2].plot(xs, [r["sync_lost_iters"] for r in s], "x:", color=COLORS[eng], alpha=0.7,
                     label=f"forgone during a local sync call (next to {eng})")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache lines written by the call (x 64 B)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("latency per call, call + reading the buffer (us)")
    axes[0].set_title("latency")
    axes[1].set_ylabel("calls per second (millions)")
    axes[1].set_title("throughput")
    axes[2].set_ylabel("iterations of the user loop")
    axes[2].set_title("user work overlapped with one call")
    fig.suptitle("ROS cache-contending call: pread into the caller's buffer, local against remote core")
    save(fig, outdir, "ros.png", rows)


def plot_pollution(rows, outdir):
    pts = pick(rows, "pollution")
    if not pts:
        print("plot.py: no pollution rows; skipping pollution.png")
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    have_insn = all(r.get("insn_between_calls") is not None for r in pts)
    xkey = "insn_between_calls" if have_insn else "iters_between_calls"
    for eng in ["sync", "threads", "uring-sqpoll"]:
        s = sorted([r for r in pts if r["engine"] == eng], key=lambda r: r[xkey])
        if not s:
            continue
        label = "synchronous pwrite" if eng == "sync" else f"exception-less, remote {eng}"
        ax.plot([r[xkey] for r in s], [r["kept"] for r in s], "o-", color=COLORS[eng], label=label)
    ax.set_xscale("log")
    ax.axhline(1.0, color="black", lw=1, label="no system calls")
    ax.axhline(0.9, color="red", ls=":", lw=1, label="goal: 90% kept")
    if have_insn:
        ax.axvline(2000, color="red", ls="--", lw=1, label="2,000 instructions")
    ax.set_ylim(0, max([1.1] + [r["kept"] + 0.05 for r in pts]))
    ax.set_xlabel("user instructions between calls (callgrind)" if have_insn else "loop iterations between calls")
    ax.set_ylabel("user throughput kept (fraction of syscall-free)")
    ws = pts[0].get("working_set", 0) // 1024
    ax.set_title(f"Figures 2/3 as throughput: a 64-byte pwrite every N instructions, {ws} KiB working set")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, outdir, "pollution.png", rows)


def plot_uring(rows, outdir):
    pts = pick(rows, "uring-overhead")
    if not pts:
        print("plot.py: no uring-overhead rows; skipping uring-overhead.png")
        return
    fig, ax = plt.subplots(figsize=(9, 6))
    groups = [f"{r['call']}\nbatch {r['batch']}" for r in pts]
    keys = [("ns_per_call", "flexsc uring engine", "uring"), ("raw_ns_per_call", "raw liburing", "raw"),
            ("raw_tuned_ns_per_call", "raw liburing, DEFER_TASKRUN + ring fd", "raw-tuned"),
            ("sync_ns_per_call", "synchronous call", "sync")]
    w = 0.2
    for i, (k, label, c) in enumerate(keys):
        xs = [g + (i - 1.5) * w for g in range(len(pts))]
        vals = [r[k] for r in pts]
        ax.bar(xs, vals, w, label=label, color=COLORS[c])
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    top = max(max(r[k] for k, _, _ in keys) for r in pts)
    for g, r in enumerate(pts):
        ax.text(g, top * 1.08, f"flexsc / raw = {r['raw_ratio']:.2f}", ha="center", fontsize=8,
                color="tab:red")
    ax.set_ylim(0, top * 1.18)
    ax.set_xticks(range(len(pts)))
    ax.set_xticklabels(groups)
    ax.set_ylabel("ns per call")
    ax.set_title("io_uring engine against raw liburing (goal: at most x1.10 at batch 32)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, outdir, "uring-overhead.png", rows)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    arg = sys.argv[1]
    if os.path.isdir(arg):
        # the newest flexsc-bench run: other tools write JSON lines there too
        files = sorted(glob.glob(os.path.join(arg, "*.jsonl")), key=os.path.getmtime, reverse=True)
        files = [f for f in files if any(r.get("bench") == "machine" for r in load(f))]
        if not files:
            sys.exit(f"plot.py: no flexsc-bench *.jsonl in {arg}")
        arg = files[0]
    rows = load(arg)
    outdir = os.path.dirname(os.path.abspath(arg))
    print(f"plot.py: {len(rows)} rows from {arg}")
    plot_fig9(rows, outdir)
    plot_fig10(rows, outdir)
    plot_wsc(rows, outdir)
    plot_ros(rows, outdir)
    plot_pollution(rows, outdir)
    plot_uring(rows, outdir)


if __name__ == "__main__":
    main()
