"""Trains the demo model, then exports, evaluates (exact numerics) and samples it.

Steps (each optional step is wrapped: a failure is logged and the outputs produced so far are still written):
1. seed everything, build demo_config.demo_config() (hidden 256, vocab 4096, layers [0, 4, 128], 4 heads x 512,
   q_lora 128, o_groups 2 x o_lora 128, 12 experts top-2 + 1 shared, 1 hash layer, indexer 8 x 128, window 128);
2. train with AdamW (betas 0.9/0.95, weight decay 0.1 on matrices), training numerics of v4model.py, random
   512-token windows of the train stream, a wall-clock budget with linear warm-up and a cosine decay over the
   budget's elapsed time (to 10% of the peak), gradient clipping 1.0, the routers' aux-loss-free bias update
   (bias += 1e-3 * sign(mean load - expert load) after every step); loss.json is rewritten as it goes;
   every --eval-seconds (10) of training the held-out loss (training numerics) on a fixed set of held-out windows
   (64 x 512 tokens, taken after the part of heldout.bin that heldout.txt comes from); the state with the lowest
   one is kept (a CPU copy of the state dict, router biases included);
3. export BF16 and FP8/FP4 folders (export.py) of that best state, with heldout.txt;
4. held-out perplexity with exact=True on both exports as written on disk, greedy samples on the BF16 export;
5. model_card.json into both folders and the output directory.

Usage: python3 train.py --work WORK --out OUT [--seconds 360] [--deadline EPOCH] [--smoke]
"""
import argparse
import datetime
import json
import math
import os
import random
import sys
import time
import traceback

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import demo_config  # noqa: E402
import export  # noqa: E402
import sample  # noqa: E402
import v4model  # noqa: E402

T0 = time.time()
SEED = 1234
SEQ = 512
PEAK_LR = 2e-3
WARMUP = 50
WEIGHT_DECAY = 0.1
BIAS_RATE = 1e-3


def log(msg):
    print("[train %7.1fs] %s" % (time.time() - T0, msg), flush=True)


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def param_groups(model):
    decay, keep = [], []
    for n, p in model.named_parameters():
        if p.dim() == 2 and not n.endswith("_fn") and not n.endswith(".ape"):
            decay.append(p)
        else:
            keep.append(p)
    return [{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": keep, "weight_decay": 0.0}]


def lr_at(step, frac):
    warm = min(1.0, (step + 1) / WARMUP)
    return PEAK_LR * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(max(frac, 0.0), 1.0))))


class LossLog:
    def __init__(self, path, meta):
        self.path = path
        self.d = {"title": "dsv4-demo training loss", "meta": meta, "train": [], "heldout": [], "final": {}}

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1)
        os.replace(tmp, self.path)


def heldout_windows(stream, n, skip=0):
    """n consecutive 513-token windows of the held-out stream from token `skip` (from 0 if too few after it)."""
    starts = list(range(skip, len(stream) - SEQ - 1, SEQ))[:n]
    if len(starts) < n:
        starts = list(range(0, len(stream) - SEQ - 1, SEQ))[:n]
    w = [stream[i:i + SEQ + 1] for i in starts]
    return (torch.from_numpy(np.stack(w).astype(np.int64)), starts[0]) if w else (None, 0)


@torch.no_grad()
def heldout_loss(model, windows, device):
    model.set_numerics(False)
    tot, cnt = 0.0, 0
    for i in range(0, windows.shape[0], 8):
        w = windows[i:i + 8].to(device)
        logits = model(w[:, :-1])
        tot += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1), reduction="sum"))
        cnt += w[:, 1:].numel()
    return tot / max(cnt, 1)


def update_router_bias(model):
    with torch.no_grad():
        for layer in model.layers:
            moe = layer.ffn
            if not moe.gate.hash and moe.last_load is not None:
                load = moe.last_load
                moe.gate.bias += BIAS_RATE * torch.sign(load.mean() - load)


def run(args):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    device_name = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"
    seed_all(SEED)
    try:
        torch.set_float32_matmul_precision("high")  # TF32 for the few fp32 matmuls of training (HC mixes)
    except Exception:
        pass
    os.makedirs(args.out, exist_ok=True)
    tok_json = os.path.join(args.work, "tokenizer.json")
    heldout_txt = os.path.join(args.work, "heldout.txt")
    with open(os.path.join(args.work, "data.json")) as f:
        data_meta = json.load(f)
    cfg = demo_config.demo_config()
    n_params = demo_config.param_count(cfg)
    batch = args.batch

    train_stream = np.fromfile(os.path.join(args.work, "train.bin"), dtype=np.uint16)
    held_stream = np.fromfile(os.path.join(args.work, "heldout.bin"), dtype=np.uint16)
    stream = torch.from_numpy(train_stream.astype(np.int64)).to(dev)
    hold, hold_from = heldout_windows(held_stream, 8 if args.smoke else 64,
                                      int(data_meta.get("heldout_txt_stream_tokens", 0)))
    n_tok = stream.numel()
    log("device %s, torch %s; %d train tokens, %d held-out tokens; %.2f M parameters"
        % (device_name, torch.__version__, n_tok, held_stream.size, n_params / 1e6))
    if hold is not None:
        log("checkpoint selection on %d held-out windows of %d tokens from held-out token %d (heldout.txt's files "
            "end at %s)" % (hold.shape[0], SEQ, hold_from, data_meta.get("heldout_txt_stream_tokens")))

    model = v4model.V4Model(cfg).to(dev)
    v4model.init_weights(model, SEED)
    model.to(dev)
    opt = torch.optim.AdamW(param_groups(model), lr=PEAK_LR, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator(device=dev)
    gen.manual_seed(SEED)
    ar = torch.arange(SEQ + 1, device=dev)

    def get_batch(b):
        off = torch.randint(0, n_tok - SEQ - 1, (b,), device=dev, generator=gen)
        w = stream[off[:, None] + ar]
        return w[:, :-1], w[:, 1:]

    meta = {"batch": batch, "seq": SEQ, "peak_lr": PEAK_LR, "warmup_steps": WARMUP, "weight_decay": WEIGHT_DECAY,
            "params": n_params, "device": device_name, "seed": SEED, "smoke": bool(args.smoke),
            "eval_every_seconds": args.eval_seconds,
            "heldout_eval_windows": 0 if hold is None else int(hold.shape[0]), "heldout_eval_from_token": hold_from}
    losslog = LossLog(os.path.join(args.out, "loss.json"), meta)
    budget = float(args.seconds)
    if args.deadline:
        budget = min(budget, args.deadline - time.time() - args.reserve)
    budget = max(budget, 5.0)
    log("training budget %.0f s, batch %d x %d tokens" % (budget, batch, SEQ))

    model.train()
    model.set_numerics(False)
    step, tokens, pending = 0, 0, []
    best = {"loss": None, "step": None, "seconds": None, "tokens": None, "state": None}

    def evaluate_and_keep(secs):
        """Held-out loss now (training numerics); keep a CPU copy of the state if it is the lowest so far."""
        hl = heldout_loss(model, hold, dev)
        model.train()
        losslog.d["heldout"].append({"step": step, "tokens": tokens, "seconds": round(secs, 2), "loss": hl})
        kept = math.isfinite(hl) and (best["loss"] is None or hl < best["loss"])
        if kept:
            best.update(loss=hl, step=step, seconds=round(secs, 2), tokens=tokens,
                        state={k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()})
        losslog.d["best"] = {k: best[k] for k in ("step", "seconds", "tokens", "loss")}
        losslog.save()
        return hl, kept

    next_eval = args.eval_seconds
    t_start = time.time()
    log_every = 5 if args.smoke else 10
    diverged = False
    while True:
        el = time.time() - t_start
        if el >= budget:
            break
        lr = lr_at(step, el / budget)
        for gr in opt.param_groups:
            gr["lr"] = lr
        logits = loss = None
        try:
            x, y = get_batch(batch)
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            loss.backward()
            logits = None
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            update_router_bias(model)
        except torch.cuda.OutOfMemoryError:
            logits = loss = None
            opt.zero_grad(set_to_none=True)
            if dev == "cuda":
                torch.cuda.empty_cache()
            if step > 0 or batch <= 4:
                log("out of memory at step %d: stopping training, exporting what was trained" % step)
                break
            batch //= 2
            meta["batch"] = batch
            log("out of memory at the first step: batch halved to %d" % batch)
            continue
        except Exception:
            log("training step %d failed, exporting what was trained:\n%s" % (step, traceback.format_exc()))
            if step == 0:
                raise
            break
        step += 1
        tokens += batch * SEQ
        pending.append(loss.detach())
        if step % log_every == 0 or step == 1:
            vals = torch.stack(pending).float().cpu().numpy()
            pending = []
            mean = float(vals.mean())
            losslog.d["train"].append({"step": step, "tokens": tokens, "seconds": round(time.time() - t_start, 2),
                                       "loss": mean, "lr": lr})
            losslog.save()
            if step == 1 or step % (log_every * 10) == 0:
                log("step %d  tokens %.2fM  loss %.4f  lr %.2e  %.1f s  %.0f tok/s"
                    % (step, tokens / 1e6, mean, lr, time.time() - t_start, tokens / (time.time() - t_start)))
            if not math.isfinite(mean):
                log("loss is not finite: stopping training")
                diverged = True
                break
        if hold is not None and time.time() - t_start >= next_eval:
            secs = time.time() - t_start
            next_eval = secs + args.eval_seconds
            te = time.time()
            hl, kept = evaluate_and_keep(secs)
            note = "  * lowest so far, state kept" if kept else "  (lowest %s at step %s)" % (
                "%.4f" % best["loss"] if best["loss"] is not None else None, best["step"])
            log("held-out loss %.4f (training numerics) at step %d, %.0f s%s  [eval %.2f s]"
                % (hl, step, secs, note, time.time() - te))
    train_seconds = time.time() - t_start
    if pending:
        vals = torch.stack(pending).float().cpu().numpy()
        losslog.d["train"].append({"step": step, "tokens": tokens, "seconds": round(train_seconds, 2),
                                   "loss": float(vals.mean()), "lr": lr})
    final_train = losslog.d["train"][-1]["loss"] if losslog.d["train"] else None
    final_held = None
    if hold is not None:
        final_held, _ = evaluate_and_keep(train_seconds)
    log("trained %d steps, %.2f M tokens in %.1f s; final train loss %s, held-out %s"
        % (step, tokens / 1e6, train_seconds, final_train, final_held))
    if best["state"] is not None and best["step"] != step:
        model.load_state_dict({k: v.to(dev) for k, v in best["state"].items()})
        log("exporting the kept state of step %d (%.1f s, %.2f M tokens): held-out loss %.4f (training numerics); "
            "final state's %s" % (best["step"], best["seconds"], best["tokens"] / 1e6, best["loss"], final_held))
    else:
        log("exporting the final state (step %d): it has the lowest held-out loss, %s" % (step, best["loss"]))
    best_step = best["step"] if best["step"] is not None else step
    best_held = best["loss"] if best["loss"] is not None else final_held
    best["state"] = None
    losslog.d["final"].update({"steps": step, "tokens": tokens, "train_seconds": train_seconds,
                               "train_loss": final_train, "final_heldout_loss": final_held,
                               "best_step": best_step, "best_seconds": best["seconds"],
                               "best_tokens": best["tokens"] if best["tokens"] is not None else tokens,
                               "best_heldout_loss": best_held,
                               "heldout_loss_training_numerics": best_held,
                               "exported": "state with the lowest held-out loss (training numerics)",
                               "diverged": diverged})
    losslog.save()

    # ---- export (required)
    arrays = export.model_arrays(model)
    del model, opt
    if dev == "cuda":
        torch.cuda.empty_cache()
    models_root = os.path.join(args.out, "models")
    ex = export.export_all(arrays, cfg, models_root, tok_json, extra_files=[heldout_txt])

    card = {
        "name": "dsv4-demo",
        "description": "trained demo: a small DeepSeek-V4-architecture model trained from scratch by "
                       "tools/train-demo on Python standard library sources",
        "formats": {"dsv4-demo": "BF16 weights (norms/embeddings BF16; hc, sink, ape, router bias F32; tid2eid I64)",
                    "dsv4-demo-fp8": "FP8 e4m3 linears with ue8m0 128x128 block scales, routed experts FP4 e2m1 "
                                     "(ue8m0 per 32 inputs), rest as the BF16 folder"},
        "parameters": n_params,
        "layers": demo_config.layer_kinds(cfg),
        "hash_routed_layers": cfg["num_hash_layers"],
        "architecture": {k: cfg[k] for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                                             "head_dim", "q_lora_rank", "o_groups", "o_lora_rank", "sliding_window",
                                             "compress_ratios", "n_routed_experts", "num_experts_per_tok",
                                             "n_shared_experts", "moe_intermediate_size", "index_n_heads",
                                             "index_head_dim", "index_topk", "hc_mult")},
        "data": {k: data_meta.get(k) for k in ("source", "licence", "split", "tokenizer_and_heldout_txt",
                                                "train_files", "heldout_files", "files_by_group", "train_bytes",
                                                "train_tokens", "heldout_tokens", "heldout_file_names")},
        "tokenizer": "byte-level BPE, 4096 ids, trained on the core training files; ids 0-13 the V4 special tokens",
        "tokens_trained": tokens,
        "steps": step,
        "train_minutes": round(train_seconds / 60, 2),
        "batch": "%d x %d tokens" % (batch, SEQ),
        "device": device_name,
        "final_train_loss": final_train,
        "exported_state": "the state with the lowest held-out loss (training numerics, evaluated every %g s of "
                          "training on %d held-out windows of %d tokens) among all evaluations, final included"
                          % (args.eval_seconds, 0 if hold is None else hold.shape[0], SEQ),
        "best_step": best_step,
        "best_seconds": best["seconds"],
        "best_tokens": best["tokens"],
        "best_heldout_loss": best_held,
        "final_heldout_loss": final_held,
        "heldout_loss_training_numerics": best_held,
        "heldout": {
            "text_file": "heldout.txt",
            "definition": "ids = tokenizer.json encoding of heldout.txt (no special tokens added); consecutive pieces "
                          "of 1023 ids; each piece run as its own sequence [bos=0] + piece from position 0 "
                          "(<= 1024 tokens, one full causal pass, empty caches); every id of every piece scored "
                          "once from the fp32 logits of the previous position (log-softmax in fp64); "
                          "perplexity = exp(total NLL / ids scored)",
        },
        "exact_numerics": "v4model.py exact=True: the reference's bf16 rounding points, fp32 accumulation, FP8 KV "
                          "(non-RoPE channels, per 64), FP4 indexer keys/queries; the FP8/FP4 export additionally "
                          "FP8-quantizes the inputs of its FP8/FP4 linears per 128 channels",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "smoke": bool(args.smoke),
    }
    with open(heldout_txt, encoding="utf-8") as f:
        text = f.read()

    tok = None
    try:
        tok = sample.load_tokenizer(ex["bf16"])
    except Exception:
        log("tokenizer load failed:\n" + traceback.format_exc())
    for key, folder in (("bf16", ex["bf16"]), ("fp8", ex["fp8"])):
        try:
            m = sample.load_exact(folder, dev)
            r = sample.heldout_perplexity(m, tok, text, dev, max_pieces=1 if args.smoke else None)
            card["heldout"][key] = r
            losslog.d["final"][key + "_exact_nll"] = r["nll_per_token"]
            log("held-out text, %s export, exact: %d tokens, NLL %.4f, perplexity %.3f"
                % (key, r["tokens_scored"], r["nll_per_token"], r["perplexity"]))
            if key == "bf16":
                try:
                    prompts = sample.PROMPTS[:1] if args.smoke else sample.PROMPTS
                    n_new = 8 if args.smoke else 64
                    if args.deadline and time.time() > args.deadline - 25:
                        prompts, n_new = sample.PROMPTS[:2], 24
                        log("short of time: samples cut to %d prompts x %d tokens" % (len(prompts), n_new))
                    smp = {"model": "dsv4-demo", "mode": "exact numerics, greedy, bos + prompt",
                           "samples": sample.samples(m, tok, dev, n_new, prompts)}
                    with open(os.path.join(args.out, "samples.json"), "w") as f:
                        json.dump(smp, f, indent=1, ensure_ascii=False)
                    for s in smp["samples"]:
                        log("sample: %r" % (s["prompt"] + s["completion"]))
                except Exception:
                    log("samples failed:\n" + traceback.format_exc())
            del m
        except Exception:
            log("exact evaluation of %s failed:\n%s" % (folder, traceback.format_exc()))
    losslog.save()
    for folder, name in ((ex["bf16"], "dsv4-demo"), (ex["fp8"], "dsv4-demo-fp8")):
        c = dict(card)
        c["name"] = name
        c["size_bytes"] = export.folder_bytes(folder)
        with open(os.path.join(folder, "model_card.json"), "w") as f:
            json.dump(c, f, indent=1, ensure_ascii=False)
    card["size_bytes"] = {"dsv4-demo": export.folder_bytes(ex["bf16"]), "dsv4-demo-fp8": export.folder_bytes(ex["fp8"])}
    with open(os.path.join(args.out, "model_card.json"), "w") as f:
        json.dump(card, f, indent=1, ensure_ascii=False)
    log("done: %s" % args.out)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, help="folder with tokenizer.json, train.bin, heldout.bin, heldout.txt")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("TRAIN_MINUTES", "3.5")) * 60)
    ap.add_argument("--deadline", type=float, default=0.0, help="epoch seconds by which everything must be done")
    ap.add_argument("--reserve", type=float, default=45.0,
                    help="seconds kept after training for export, exact evaluation, samples and packing")
    ap.add_argument("--batch", type=int, default=int(os.environ.get("BATCH", "64")))
    ap.add_argument("--eval-seconds", type=float, default=10.0, help="held-out evaluation (checkpoint choice) period")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
