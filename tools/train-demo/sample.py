"""Exact-mode evaluation of an exported folder: held-out perplexity and greedy samples.

Held-out perplexity (what Strata recomputes on heldout.txt; see README "Perplexity definition"):
  ids = tokenizer.json encoding of the whole text, no special tokens added;
  cut ids into consecutive pieces of 1023 tokens (the last may be shorter);
  each piece is one sequence [bos] + piece (<= 1024 tokens), run from position 0 with empty caches;
  every token of every piece is scored once, predicted from bos and the piece's earlier tokens:
  NLL = -sum log softmax(logits in fp32, computed in fp64)[target]; perplexity = exp(NLL / number of tokens).

Greedy samples: bos + prompt, then argmax of the last position's logits, one full exact forward per new token,
stopping at eos or after N tokens.

Usage: python3 sample.py MODEL_FOLDER OUT_JSON [N_TOKENS]
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stio  # noqa: E402
import v4model  # noqa: E402

PROMPTS = ["def fibonacci(n):", '"""Return the', "import os\n", "class Stack:"]
PIECE = 1023


def load_exact(folder, device):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    model = v4model.V4Model(cfg, exact=True, act_quant="quantization_config" in cfg)
    v4model.load_arrays(model, stio.dequantized_checkpoint(folder))
    return model.to(device).eval()


def load_tokenizer(folder):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))


@torch.no_grad()
def heldout_perplexity(model, tok, text, device, bos=0, max_pieces=None):
    v4model.exact_matmul_precision()
    ids = tok.encode(text, add_special_tokens=False).ids
    nll, n = 0.0, 0
    pieces = [ids[i:i + PIECE] for i in range(0, len(ids), PIECE)]
    if max_pieces:
        pieces = pieces[:max_pieces]
    for piece in pieces:
        seq = torch.tensor([[bos] + piece], dtype=torch.int64, device=device)
        logits = model(seq)[0, :-1].double()
        lp = torch.log_softmax(logits, dim=-1)
        tgt = torch.tensor(piece, dtype=torch.int64, device=device)
        nll += float(-lp.gather(-1, tgt[:, None]).sum())
        n += len(piece)
    return {"tokens_scored": n, "pieces": len(pieces), "nll_per_token": nll / max(n, 1),
            "perplexity": math.exp(nll / max(n, 1))}


@torch.no_grad()
def greedy(model, tok, prompt, n_new, device, bos=0, eos=1):
    v4model.exact_matmul_precision()
    ids = [bos] + tok.encode(prompt, add_special_tokens=False).ids
    start = len(ids)
    for _ in range(n_new):
        logits = model(torch.tensor([ids], dtype=torch.int64, device=device))[0, -1]
        nxt = int(logits.argmax())
        ids.append(nxt)
        if nxt == eos:
            break
    new = ids[start:]
    return {"prompt": prompt, "completion": tok.decode(new, skip_special_tokens=False), "token_ids": new}


def samples(model, tok, device, n_new=64, prompts=PROMPTS):
    return [greedy(model, tok, p, n_new, device) for p in prompts]


if __name__ == "__main__":
    folder, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    m = load_exact(folder, dev)
    t = load_tokenizer(folder)
    res = {"model": os.path.basename(folder), "mode": "exact, greedy", "samples": samples(m, t, dev, n)}
    with open(out, "w") as f:
        json.dump(res, f, indent=1, ensure_ascii=False)
    for s in res["samples"]:
        print(repr(s["prompt"] + s["completion"]))
