"""Training text: the Python standard library's own sources (PSF licence) on the host that trains.

* Files: every *.py under sysconfig.get_paths()["stdlib"] (test suites, idlelib/ and lib2to3/ included), except
  installed packages (site-packages, dist-packages), generated or data-like modules (encodings/ codec tables,
  pydoc_data/), byte-compiled caches, files over 200 kB and files that are not valid UTF-8.
* Extra sources (optional, env STDLIB_EXTRA, os.pathsep-separated): more stdlib trees laid out like the stdlib root
  (a folder, or a .tar/.tar.gz/.tar.xz made by `data.py --pack`), e.g. CPython's test suite where the host's Python
  ships without it (Debian/Ubuntu package it separately, the official Docker images delete it). A relative path is
  taken from the first source that has it (the host's stdlib first), so every relative path occurs once.
* "core" files = the selection of the first version (no test suites or lib2to3/, host stdlib only): the
  tokenizer is trained on the core training files and heldout.txt is cut from the core held-out files, so both
  stay what they were; everything else only adds training (and held-out) text.
* Split by file, deterministic: a file is held out when int(sha1(relative path)) % 1000 < 20 (about 2%), whatever
  its source, so a held-out file stays held out.
* Token stream: per file <bos> ids <eos> (bos = 0, eos = 1), concatenated, uint16. heldout.bin puts the core
  held-out files first (path order), then the other held-out files (path order).
* heldout.txt: the core held-out files concatenated in path order, cut at a line end after about 4000 tokens;
  data.json's heldout_txt_stream_tokens = the length of the head of heldout.bin taken by the files heldout.txt
  draws from (train.py selects its checkpoint on held-out windows after that head).

Usage: python3 data.py TOKENIZER_JSON OUT_DIR  (writes train.bin, heldout.bin, heldout.txt, data.json)
       python3 data.py --list                  (what would be picked)
       python3 data.py --pack OUT.tar.xz        (the non-core files of this host's stdlib, for STDLIB_EXTRA)
"""
import hashlib
import json
import os
import sys
import sysconfig
import tarfile
import tempfile

import numpy as np

ALWAYS_EXCLUDE_DIRS = {"site-packages", "dist-packages", "__pycache__", "encodings", "pydoc_data"}
CORE_EXCLUDE_DIRS = ALWAYS_EXCLUDE_DIRS | {"test", "tests", "idle_test", "lib2to3"}
MAX_BYTES = 200_000
HELDOUT_PER_MILLE = 20
HELDOUT_TEXT_TOKENS = 4000
BOS, EOS = 0, 1


def stdlib_root():
    return sysconfig.get_paths()["stdlib"]


def is_core(rel):
    parts = rel.replace(os.sep, "/").split("/")
    return not any(p in CORE_EXCLUDE_DIRS for p in parts[:-1]) and not parts[-1].startswith("test_")


def group(rel):
    """Coarse origin of a file for the counts in data.json: core, test, lib2to3, other."""
    if is_core(rel):
        return "core"
    parts = rel.replace(os.sep, "/").split("/")
    if parts[0] == "lib2to3":
        return parts[0]
    if parts[0] == "test" or any(p in ("test", "tests", "idle_test") for p in parts[:-1]) \
            or parts[-1].startswith("test_"):
        return "test"
    return "other"


def _valid_utf8(path):
    try:
        with open(path, "rb") as f:
            f.read().decode("utf-8")
        return True
    except (OSError, UnicodeDecodeError):
        return False


def _walk(root, exclude):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in exclude and not x.startswith("."))
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            p = os.path.join(d, f)
            try:
                if not os.path.isfile(p) or os.path.getsize(p) > MAX_BYTES:
                    continue
            except OSError:
                continue
            out.append(os.path.relpath(p, root).replace(os.sep, "/"))
    return out


_EXTRACTED = {}


def extra_roots():
    """STDLIB_EXTRA entries as folders (archives extracted once per process into a temporary folder)."""
    roots = []
    for e in [x for x in os.environ.get("STDLIB_EXTRA", "").split(os.pathsep) if x]:
        if os.path.isdir(e):
            roots.append(e)
        elif os.path.isfile(e):
            if e not in _EXTRACTED:
                d = tempfile.mkdtemp(prefix="stdlib-extra.")
                with tarfile.open(e) as t:
                    members = [m for m in t.getmembers() if m.isfile() and m.name.endswith(".py")
                               and not m.name.startswith("/") and ".." not in m.name.split("/")]
                    try:
                        t.extractall(d, members=members, filter="data")
                    except TypeError:  # Python without extraction filters
                        t.extractall(d, members=members)
                _EXTRACTED[e] = d
            roots.append(_EXTRACTED[e])
        else:
            print("data: STDLIB_EXTRA entry %s does not exist, ignored" % e)
    return roots


def sources(core_only=False):
    """Sorted [(relative path, absolute path)]: the host's stdlib first, then STDLIB_EXTRA; one entry per path."""
    seen = {}
    roots = [stdlib_root()] + ([] if core_only else extra_roots())
    for i, root in enumerate(roots):
        for rel in _walk(root, ALWAYS_EXCLUDE_DIRS):
            if rel in seen or (core_only and not is_core(rel)):
                continue
            # the first version's core = host stdlib only; a core-looking path from an extra source is "other"
            p = os.path.join(root, rel)
            if _valid_utf8(p):
                seen[rel] = (p, i == 0 and is_core(rel))
    return sorted((r, p, c) for r, (p, c) in seen.items())


def stdlib_files(root=None, core_only=False):
    """Sorted relative paths of the host stdlib's sources used (core_only: the first version's selection)."""
    if root is None:
        return [r for r, _, _ in sources(core_only)]
    return [r for r in _walk(root, ALWAYS_EXCLUDE_DIRS) if (not core_only or is_core(r))
            and _valid_utf8(os.path.join(root, r))]


def is_heldout(rel):
    h = int(hashlib.sha1(rel.replace(os.sep, "/").encode("utf-8")).hexdigest(), 16)
    return h % 1000 < HELDOUT_PER_MILLE


def split_files(entries):
    """entries: sources() -> (train absolute paths, held-out absolute paths); held-out: core files first."""
    train = [p for r, p, _ in entries if not is_heldout(r)]
    held = [p for r, p, c in entries if is_heldout(r) and c] + [p for r, p, c in entries if is_heldout(r) and not c]
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


def counts(entries):
    out = {}
    for r, p, c in entries:
        g = "core" if c else ("extra-source" if not p.startswith(stdlib_root()) else group(r))
        k = out.setdefault(g, {"train_files": 0, "heldout_files": 0, "bytes": 0})
        k["heldout_files" if is_heldout(r) else "train_files"] += 1
        k["bytes"] += os.path.getsize(p)
    return out


def build(tokenizer_path, out_dir):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_path)
    entries = sources()
    extras = extra_roots()
    train, held = split_files(entries)
    held_core = [p for r, p, c in entries if is_heldout(r) and c]
    rel_of = {p: r for r, p, _ in entries}
    os.makedirs(out_dir, exist_ok=True)
    tr, tr_bytes = token_stream(tok, train)
    he, he_bytes = token_stream(tok, held)
    tr.tofile(os.path.join(out_dir, "train.bin"))
    he.tofile(os.path.join(out_dir, "heldout.bin"))
    ht = heldout_text(tok, held_core)
    with open(os.path.join(out_dir, "heldout.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(ht)
    # head of heldout.bin taken by the files heldout.txt draws from (whole files, with their bos/eos)
    head, pos = 0, 0
    for p, enc in zip(held_core, tok.encode_batch([read_text(p) for p in held_core], add_special_tokens=False)):
        if pos >= len(ht):
            break
        pos += len(read_text(p))
        head += len(enc.ids) + 2
    by_group = counts(entries)
    meta = {
        "source": "Python %s standard library sources (%s)%s: every *.py including the test suites, idlelib/ and "
                  "lib2to3/ where installed, without site-packages, encodings/, pydoc_data/, files over 200 kB "
                  "and files that are not valid UTF-8; one copy per relative path"
                  % (sys.version.split()[0], stdlib_root(),
                     (" plus extra stdlib trees (%s)" % ", ".join(os.path.basename(x.rstrip("/"))
                                                              for x in os.environ.get("STDLIB_EXTRA", "").split(os.pathsep) if x))
                     if extras else ""),
        "licence": "Python Software Foundation License Version 2 (PSF-2.0), the licence of CPython's Lib/",
        "split": "by file: held out when int(sha1(relative path)) %% 1000 < %d" % HELDOUT_PER_MILLE,
        "tokenizer_and_heldout_txt": "tokenizer trained on the core training files, heldout.txt cut from the core "
                                     "held-out files (core = no test suites or lib2to3/, as in the first version)",
        "train_files": len(train), "heldout_files": len(held),
        "files_by_group": by_group,
        "train_bytes": tr_bytes, "heldout_bytes": he_bytes,
        "train_tokens": int(tr.size), "heldout_tokens": int(he.size),
        "heldout_file_names": [rel_of[p] for p in held],
        "heldout_txt_tokens": len(tok.encode(ht, add_special_tokens=False).ids),
        "heldout_txt_chars": len(ht),
        "heldout_txt_stream_tokens": int(head),
    }
    with open(os.path.join(out_dir, "data.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("data: %d train files (%.1f MB, %d tokens), %d held-out files (%d tokens); heldout.txt %d tokens"
          % (len(train), tr_bytes / 1e6, tr.size, len(held), he.size, meta["heldout_txt_tokens"]))
    print("data: by group %s" % json.dumps(by_group))
    return meta


def pack(dst):
    """The non-core files this host's stdlib would contribute, as a tar archive for STDLIB_EXTRA elsewhere."""
    root = stdlib_root()
    rels = [r for r in stdlib_files(root) if not is_core(r)]
    mode = "w:xz" if dst.endswith(".xz") else ("w:gz" if dst.endswith(".gz") else "w")
    with tarfile.open(dst, mode) as t:
        for r in rels:
            t.add(os.path.join(root, r), arcname=r, recursive=False)
    print("packed %d files (%.1f MB) of %s into %s (%.1f MB)"
          % (len(rels), sum(os.path.getsize(os.path.join(root, r)) for r in rels) / 1e6, root, dst,
             os.path.getsize(dst) / 1e6))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        e = sources()
        t, h = split_files(e)
        c = [x for x in e if x[2]]
        print("%d files: %d train, %d held out (core: %d files, %d held out)"
              % (len(e), len(t), len(h), len(c), sum(is_heldout(r) for r, _, _ in c)))
        print("by group:", json.dumps(counts(e)))
        print("held out:", [r for r, _, _ in e if is_heldout(r)])
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[1] == "--pack":
        pack(sys.argv[2])
        sys.exit(0)
    build(sys.argv[1], sys.argv[2])
