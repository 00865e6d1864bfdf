#!/usr/bin/env python3
"""Per-kernel durations of one decode step from `ncu --csv --metrics gpu__time_duration.sum` over ModelDecodeBench:
the kernels of the last step (from the last k_embed on), grouped by name, with counts, sums, shares and averages.

usage: ncu --csv --metrics gpu__time_duration.sum <java ... ModelDecodeBench ... steps=1 variants=eager-1-argmax> > step.csv
       python3 ncu_step_digest.py step.csv
"""
import csv
import sys


def main():
    rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')))
    ks = [(r["Kernel Name"], float(r["Metric Value"].replace(",", "")) / 1000.0)  # ns -> us
          for r in rows if r.get("Metric Name") == "gpu__time_duration.sum"]
    starts = [i for i, (n, _) in enumerate(ks) if "k_embed" in n.split("(")[0]]
    print("total kernels", len(ks), "steps at", starts)
    step = ks[starts[-1]:]
    tot = sum(v for _, v in step)
    print(f"last step: {len(step)} kernels, sum of durations {tot:.1f} us")
    g = {}
    for n, v in step:
        n = n.split("(")[0].replace("strata::<unnamed>::", "").replace("<unnamed>::", "").replace("void ", "")
        c, s = g.get(n, (0, 0.0))
        g[n] = (c + 1, s + v)
    for n, (c, s) in sorted(g.items(), key=lambda x: -x[1][1]):
        print(f"{n[:60]:60s} {c:4d} {s:9.1f} us {100 * s / tot:5.1f}%  avg {s / c:7.2f}")


if __name__ == "__main__":
    main()
