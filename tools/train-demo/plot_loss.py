"""loss.json -> loss.png (train loss per logged step and held-out loss, against tokens seen).
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
        ax.plot([r["tokens"] / 1e6 for r in he], [r["loss"] for r in he], "o-", label="held-out (training numerics)")
    fin = log.get("final", {})
    for key, lab, mk in (("bf16_exact_nll", "held-out text, BF16 export, exact", "s"),
                         ("fp8_exact_nll", "held-out text, FP8/FP4 export, exact", "^")):
        if fin.get(key) is not None and tr:
            ax.plot([tr[-1]["tokens"] / 1e6], [fin[key]], mk, label=lab)
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
