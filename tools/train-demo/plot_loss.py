"""loss.json -> loss.png (train loss per logged step and held-out loss, against tokens seen; the kept (exported)
state, the one with the lowest held-out loss, is marked by a star and a dashed line, and the exact evaluations of
the exports are drawn at its position).
Usage: python3 plot_loss.py loss.json loss.png"""
import json
import sys


def main(src, dst):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(src) as f:
        log = json.load(f)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    tr = log.get("train", [])
    if tr:
        ax.plot([r["tokens"] / 1e6 for r in tr], [r["loss"] for r in tr], lw=1, label="train (batch)")
    he = log.get("heldout", [])
    if he:
        ax.plot([r["tokens"] / 1e6 for r in he], [r["loss"] for r in he], "o-", ms=3,
                label="held-out (training numerics)")
    fin = log.get("final", {})
    best = log.get("best", {})
    b_tok = fin.get("best_tokens", best.get("tokens"))
    b_loss = fin.get("best_heldout_loss", best.get("loss"))
    b_step = fin.get("best_step", best.get("step"))
    if b_tok is not None and b_loss is not None:
        ax.axvline(b_tok / 1e6, color="grey", ls="--", lw=1)
        ax.plot([b_tok / 1e6], [b_loss], "*", ms=14, color="gold", mec="black", zorder=5,
                label="kept (exported) state: step %s, held-out %.3f" % (b_step, b_loss))
    # the exact evaluations score the exported state, i.e. the kept one
    x_exp = b_tok if b_tok is not None else (tr[-1]["tokens"] if tr else None)
    for key, lab, mk in (("bf16_exact_nll", "held-out text, BF16 export, exact", "s"),
                         ("fp8_exact_nll", "held-out text, FP8/FP4 export, exact", "^")):
        if fin.get(key) is not None and x_exp is not None:
            ax.plot([x_exp / 1e6], [fin[key]], mk, label=lab)
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title(log.get("title", "dsv4-demo training loss"))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(dst)
    print("wrote", dst)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
