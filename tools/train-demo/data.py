"""Training text: the Python standard library's own sources (PSF licence) on the host that trains.

* Files: every *.py under sysconfig.get_paths()["stdlib"], except test suites (test/, tests/, idle_test/, test_*.py),
  installed packages (site-packages, dist-packages), generated or data-like modules (encodings/ codec tables,
  pydoc_data/), byte-compiled caches, and files over 200 kB.
* Split by file, deterministic: a file is held out when int(sha1(relative path)) % 1000 < 20 (about 2%).
* Token stream: per file <bos> ids <eos> (bos = 0, eos = 1), concatenated, uint16.
* heldout.txt: the held-out files concatenated in path order, cut at a line end after about 4000 tokens.

Usage: python3 data.py TOKENIZER_JSON OUT_DIR  (writes train.bin, heldout.bin, heldout.txt, data.json)
"""
import hashlib
import json
import os
import sys
import sysconfig

import numpy as np

EXCLUDE_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "encodings",
                "pydoc_data", "lib2to3"}
MAX_BYTES = 200_000
HELDOUT_PER_MILLE = 20
HELDOUT_TEXT_TOKENS = 4000
BOS, EOS = 0, 1


def stdlib_root():
    return sysconfig.get_paths()["stdlib"]


def stdlib_files(root=None):
    """Sorted relative paths of the stdlib sources used."""
    root = root or stdlib_root()
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in EXCLUDE_DIRS and not x.startswith("."))
        for f in sorted(files):
            if not f.endswith(".py") or f.startswith("test_"):
                continue
            p = os.path.join(d, f)
            try:
                if os.path.getsize(p) > MAX_BYTES or not os.path.isfile(p):
                    continue
            except OSError:
                continue
            out.append(os.path.relpath(p, root))
    return sorted(out)


def is_heldout(rel):
    h = int(hashlib.sha1(rel.replace(os.sep, "/").encode("utf-8")).hexdigest(), 16)
    return h % 1000 < HELDOUT_PER_MILLE


def split_files(rels, root=None):
    """-> (train absolute paths, held-out absolute paths)."""
    root = root or stdlib_root()
    train = [os.path.join(root, r) for r in rels if not is_heldout(r)]
    held = [os.path.join(root, r) for r in rels if is_heldout(r)]
    return train, held


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def token_stream(tok, paths):
    texts = [read_text(p) for p in paths]
    parts = []
    for enc in tok.encode_batch(texts, add_special_tokens=False):
        parts.append(np.asarray([BOS] + enc.ids + [EOS], dtype=np.uint16))
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint16)), sum(len(t) for t in texts)


def heldout_text(tok, paths, n_tokens=HELDOUT_TEXT_TOKENS):
    text = "".join(read_text(p) for p in paths)
    enc = tok.encode(text, add_special_tokens=False)
    if len(enc.ids) <= n_tokens:
        return text
    cut = enc.offsets[n_tokens][0]
    nl = text.rfind("\n", 0, cut)
    return text[:nl + 1] if nl > 0 else text[:cut]


def build(tokenizer_path, out_dir):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_path)
    rels = stdlib_files()
    train, held = split_files(rels)
    os.makedirs(out_dir, exist_ok=True)
    tr, tr_bytes = token_stream(tok, train)
    he, he_bytes = token_stream(tok, held)
    tr.tofile(os.path.join(out_dir, "train.bin"))
    he.tofile(os.path.join(out_dir, "heldout.bin"))
    ht = heldout_text(tok, held)
    with open(os.path.join(out_dir, "heldout.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(ht)
    meta = {
        "source": "Python %s standard library sources (%s), *.py without test suites, encodings/, pydoc_data/, "
                  "lib2to3/, site-packages and files over 200 kB" % (sys.version.split()[0], stdlib_root()),
        "licence": "Python Software Foundation License Version 2 (PSF-2.0), the licence of CPython's Lib/",
        "split": "by file: held out when int(sha1(relative path)) %% 1000 < %d" % HELDOUT_PER_MILLE,
        "train_files": len(train), "heldout_files": len(held),
        "train_bytes": tr_bytes, "heldout_bytes": he_bytes,
        "train_tokens": int(tr.size), "heldout_tokens": int(he.size),
        "heldout_file_names": [os.path.relpath(p, stdlib_root()) for p in held],
        "heldout_txt_tokens": len(tok.encode(ht, add_special_tokens=False).ids),
        "heldout_txt_chars": len(ht),
    }
    with open(os.path.join(out_dir, "data.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("data: %d train files (%.1f MB, %d tokens), %d held-out files (%d tokens); heldout.txt %d tokens"
          % (len(train), tr_bytes / 1e6, tr.size, len(held), he.size, meta["heldout_txt_tokens"]))
    return meta


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        r = stdlib_files()
        t, h = split_files(r)
        print("%d files: %d train, %d held out" % (len(r), len(t), len(h)))
        print("held out:", [os.path.relpath(p, stdlib_root()) for p in h][:20])
        sys.exit(0)
    build(sys.argv[1], sys.argv[2])
