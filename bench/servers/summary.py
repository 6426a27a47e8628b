"""bench/servers/summary.py: the table of bench/servers/ results.

  python3 bench/servers/summary.py FILE.jsonl ...   (lib.sh's sv_summary)

One row per point (server, client, its parameters) and runtime, over the
runs that count (judge.counted): how many ran ok of how many, how many
were run again because other work disturbed them and how many of those
that count are still disturbed ("noisy"); the median throughput and its
spread (min-max over the runs); the median mean and p99 latency, server
CPU seconds and work per server CPU-second. For a flexsc runtime, the
medians of its ratios to NPTL (judge.baseline) taken run by run against
the NPTL run of the same repeat (judge.paired), with the spread of the
throughput ratio. Then every failed run, with why.
"""
import statistics
import sys

from judge import baseline, counted, load, paired, ratios

KEYS = ("conc", "mpm", "test", "threads", "clients", "inflight")


def point(r):
    return " ".join(f"{k}={r[k]}" for k in KEYS if k in r)


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, f="{:.0f}"):
    return "-" if v is None else f.format(v)


def main(files):
    rows = load(files)
    every = [r for r in rows if r.get("bench") == "servers"]
    runs = counted(rows)
    if not runs:
        return
    print("ok/n: runs ok of those that count (rerun: run again after other work disturbed them; noisy: "
          "disturbed still); medians over the runs, min-max their spread; ratios: medians of flexsc / NPTL "
          "run by run (same repeat); throughput and work per server CPU-second: higher is better, p99: lower")
    print(f'{"server":<8} {"client":<9} {"point":<32} {"runtime":<13} {"ok/n":>5} {"rerun":>5} {"noisy":>5} '
          f'{"ops/s":>9} {"min-max":>15} {"unit":<4} {"mean us":>9} {"p99 us":>9} {"cpu s":>5} {"ops/cpu-s":>9}  '
          f'{"thr x":>5} {"min-max":>9} {"p99 x":>5} {"eff x":>5}')
    seen = []
    for r in runs:
        k = (r["server"], r["client"], point(r))
        if k not in seen:
            seen.append(k)
    for k in seen:
        grp = [r for r in runs if (r["server"], r["client"], point(r)) == k]
        rts = []
        for r in grp:
            if r["runtime"] not in rts:
                rts.append(r["runtime"])
        for rt in rts:
            mine = [r for r in grp if r["runtime"] == rt]
            ok = [r for r in mine if r["ok"]]
            again = sum(1 for r in every if r.get("rerun") and r["runtime"] == rt
                        and (r["server"], r["client"], point(r)) == k)
            thr = [r.get("throughput") for r in ok if r.get("throughput") is not None]
            spread = f"{min(thr):.0f}-{max(thr):.0f}" if len(thr) > 1 else "-"
            rx = px = ex = None
            rspread = "-"
            if baseline(rt):
                pr = paired(grp, rt)
                t = ratios(pr, "throughput")
                rx, px, ex = med(t), med(ratios(pr, "p99_us")), med(ratios(pr, "ops_per_cpu_s"))
                if len(t) > 1:
                    rspread = f"{min(t):.2f}-{max(t):.2f}"
            unit = next((r.get("unit") for r in ok if r.get("unit")), "")
            print(f'{k[0]:<8} {k[1]:<9} {k[2]:<32} {rt:<13} {f"{len(ok)}/{len(mine)}":>5} {again:>5} '
                  f'{sum(1 for r in ok if r.get("noisy")):>5} '
                  f'{fmt(med(thr)):>9} {spread:>15} {unit:<4} {fmt(med(r.get("mean_us") for r in ok)):>9} '
                  f'{fmt(med(r.get("p99_us") for r in ok)):>9} {fmt(med(r.get("server_cpu_s") for r in ok), "{:.1f}"):>5} '
                  f'{fmt(med(r.get("ops_per_cpu_s") for r in ok)):>9}  '
                  f'{fmt(rx, "{:.2f}"):>5} {rspread:>9} {fmt(px, "{:.2f}"):>5} {fmt(ex, "{:.2f}"):>5}')
    bad = [r for r in runs if not r["ok"]]
    if bad:
        print(f"{len(bad)} run(s) FAILED:")
        for r in bad:
            print(f'  {r["server"]} {r["runtime"]} {r["client"]} {point(r)} run {r.get("repeat", 1)}: {r.get("failure")}'
                  + (f' [{r["backtrace"]}]' if r.get("backtrace") else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
