"""Markdown tables from ModelDecodeBench's JSON (and, optionally, bench_torch_peer.py's): step time per
variant and repeat, the best variant against the roofline (bytes a step must read, the output head
included, / the copy bandwidth measured in the same run), the streams, graphs and device-argmax gains (how
much faster, from the last pass), and the PyTorch peer. Variants ending in -argmax return each row's argmax
token instead of its logits (a greedy request's step).

    python3 backend-cuda/bench/report_decode.py decode.json [peer.json] > tables.md
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v4_roofline import FLASH, OURS, step_bytes  # noqa: E402

ORDER = ["eager-1", "eager-2", "graphs-1", "graphs-2"]


def main():
    rows = json.load(open(sys.argv[1]))
    peer = json.load(open(sys.argv[2]))["rows"] if len(sys.argv) > 2 else []
    setup = next(r for r in rows if r["kind"] == "setup")
    bw = setup["copy_bandwidth_bytes_per_s"]
    ratios = setup["ratios"]
    decode = [r for r in rows if r["kind"] == "decode"]
    shapes = sorted({(r["context"], r["batch"]) for r in decode})
    ms = {}
    # the usual four first, then the -argmax ones, each only when the sweep ran it
    seen = list(dict.fromkeys(r["variant"] for r in decode))
    VARIANTS = [v for v in ORDER if v in seen] + sorted(v for v in seen if v not in ORDER)
    for r in decode:
        ms.setdefault((r["context"], r["batch"], r["variant"]), []).append(r["median_ms"])

    print(f"{setup['layers']} layers {ratios}, weights {setup['weight_bytes'] / 2**30:.2f} GiB, device copy bandwidth "
          f"{bw / 1e9:.0f} GB/s (read + write), {setup['device']}, {setup.get('warmup', 3)} warm-up steps per shape\n")
    print("| context | batch | " + " | ".join(f"{v} (ms)" for v in VARIANTS) + " |")
    print("|---|---|" + "---|" * len(VARIANTS))
    for c, b in shapes:
        cells = []
        for v in VARIANTS:
            xs = ms.get((c, b, v), [])
            cells.append(" / ".join(f"{x:.2f}" for x in xs) if xs else "–")
        print(f"| {c // 1024}K | {b} | " + " | ".join(cells) + " |")

    # The gains come from the last pass: the sweep's first variant runs first, while the process warms up,
    # so its first-pass figures are slow and would inflate whatever is compared with them.
    print("\n| context | batch | best variant | step (ms) | tok/s | bytes/step (GB) | roofline (ms) | × roofline |"
          " two streams vs one (eager, last pass) | two streams vs one (graphs, last pass) |"
          " graphs vs eager (two streams, last pass) | argmax tokens vs whole logits (graphs-2, last pass) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c, b in shapes:
        best_v, best = min(((v, statistics.median(ms[(c, b, v)])) for v in VARIANTS if (c, b, v) in ms),
                           key=lambda t: t[1])
        total = step_bytes(b, c, ratios, FLASH, OURS, head=True)["total"]
        roof = total / bw * 1e3
        gain = lambda a, z: (f"{(ms[(c, b, a)][-1] / ms[(c, b, z)][-1] - 1) * 100:+.1f}%"
                             if (c, b, a) in ms and (c, b, z) in ms else "–")
        # the streams and graphs gains within the best variant's family (greedy rows or whole logits)
        f = "-argmax" if best_v.endswith("-argmax") else ""
        print(f"| {c // 1024}K | {b} | {best_v} | {best:.2f} | {b * 1000 / best:,.0f} | {total / 1e9:.2f} | {roof:.2f} |"
              f" {best / roof:.1f} | {gain('eager-1' + f, 'eager-2' + f)} | {gain('graphs-1' + f, 'graphs-2' + f)} |"
              f" {gain('eager-2' + f, 'graphs-2' + f)} | {gain('graphs-2', 'graphs-2-argmax')} |")

    if peer:
        print("\n| context | batch | PyTorch eager (ms) | torch.compile (ms) | ours, best (ms) | ours vs eager |"
              " ours vs compile |")
        print("|---|---|---|---|---|---|---|")
        by = {(p["context"], p["batch"], p["mode"]): p for p in peer if p.get("status") == "ok"}
        for c, b in shapes:
            e = by.get((c, b, "eager"))
            k = by.get((c, b, "compile"))
            ours = min(statistics.median(ms[(c, b, v)]) for v in VARIANTS if (c, b, v) in ms)
            em = e["step_ms"]["median"] if e else None
            km = k["step_ms"]["median"] if k else None
            print(f"| {c // 1024}K | {b} | {f'{em:.1f}' if em else 'not run'} | {f'{km:.1f}' if km else 'not run'} |"
                  f" {ours:.2f} | {f'{em / ours:.1f}×' if em else '–'} | {f'{km / ours:.1f}×' if km else '–'} |")


if __name__ == "__main__":
    main()
