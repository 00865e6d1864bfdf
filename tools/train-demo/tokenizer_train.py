"""Trains the demo's byte-level BPE tokenizer (vocab 4096) on the core training files of the data (data.py: the
host stdlib without test suites and lib2to3/, as in the first version, so the tokenizer stays what it was).

Ids 0..13 are the special tokens of models/dsv4-tiny-stable/tokenizer.json (same strings, ids and flags), then
the 256 byte symbols, then merges. The written JSON takes the fixture's file as its template (same keys, same
ByteLevel pre-tokenizer with add_prefix_space false, ByteLevel decoder, no normalizer, no post-processor, BPE
model with merges as pairs), only vocab and merges replaced, so Strata's Java tokenizer (DJL's binding of the
same Rust library, plus TokenVocabulary reading model.vocab, added_tokens and the decoder type) loads it.

Usage: python3 tokenizer_train.py OUT_DIR   (writes OUT_DIR/tokenizer.json)
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TEMPLATE = os.path.join(ROOT, "models", "dsv4-tiny-stable", "tokenizer.json")
VOCAB = 4096


def build_json(template, vocab, merges):
    """The fixture's tokenizer.json with our vocab and merges (pure python, checked by self_check)."""
    out = copy.deepcopy(template)
    specials = [t["content"] for t in sorted(template["added_tokens"], key=lambda t: t["id"])]
    for i, s in enumerate(specials):
        if vocab.get(s) != i:
            raise ValueError("special token %r must have id %d, has %r" % (s, i, vocab.get(s)))
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise ValueError("vocabulary ids are not contiguous 0..%d" % (len(ids) - 1))
    if len(ids) > VOCAB:
        raise ValueError("vocabulary has %d ids, more than %d" % (len(ids), VOCAB))
    pairs = []
    for m in merges:
        if isinstance(m, str):
            a, b = m.split(" ")
        else:
            a, b = m
        if a not in vocab or b not in vocab or (a + b) not in vocab:
            raise ValueError("merge %r refers to unknown tokens" % (m,))
        pairs.append([a, b])
    out["model"]["vocab"] = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    out["model"]["merges"] = pairs
    return out


def train(files, out_dir):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    with open(TEMPLATE, encoding="utf-8") as f:
        template = json.load(f)
    specials = [t["content"] for t in sorted(template["added_tokens"], key=lambda t: t["id"])]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)

    def texts():
        for p in files:
            yield data.read_text(p)

    tok.train_from_iterator(texts(), trainer=trainer, length=len(files))
    trained = json.loads(tok.to_str())
    out = build_json(template, trained["model"]["vocab"], trained["model"]["merges"])
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    verify(path, template)
    return path


def verify(path, template):
    """Loads the written file back with the library and checks the properties Strata relies on."""
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(path)
    for a in template["added_tokens"]:
        assert t.token_to_id(a["content"]) == a["id"], a
    sample = 'def f(x):\n    """Return x."""\n    return x + 1  # ok \u00e9\n'
    enc = t.encode(sample, add_special_tokens=False)
    if t.decode(enc.ids, skip_special_tokens=False) != sample:  # informative: must not stop the run
        print("WARNING: decode(encode(text)) != text: %r" % t.decode(enc.ids, skip_special_tokens=False))
    ids = t.encode("<\uff5cbegin\u2581of\u2581sentence\uff5c>x<\uff5cUser\uff5c>", add_special_tokens=False).ids
    if not (ids[0] == 0 and 2 in ids):
        print("WARNING: special tokens in text did not map to their ids: %r" % ids)
    assert t.get_vocab_size(with_added_tokens=True) <= VOCAB
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    assert set(j) == set(template) and j["added_tokens"] == template["added_tokens"]
    assert j["pre_tokenizer"] == template["pre_tokenizer"] and j["decoder"] == template["decoder"]
    assert j["normalizer"] is None and j["post_processor"] is None and j["model"]["type"] == "BPE"
    print("tokenizer: %d ids, %d merges, %d bytes of text -> %d tokens in the sample"
          % (len(j["model"]["vocab"]), len(j["model"]["merges"]), len(sample), len(enc.ids)))


def self_check():
    """Torch- and tokenizers-free check of build_json with the fixture's own vocab and merges."""
    with open(TEMPLATE, encoding="utf-8") as f:
        template = json.load(f)
    out = build_json(template, template["model"]["vocab"], template["model"]["merges"])
    assert out == template, "build_json(fixture) must reproduce the fixture"
    string_merges = [" ".join(m) for m in template["model"]["merges"]]
    assert build_json(template, template["model"]["vocab"], string_merges) == template
    print("tokenizer_train self-check passed")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-check":
        self_check()
        sys.exit(0)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "work"
    train_files, _ = data.split_files(data.sources(core_only=True))
    print("tokenizer: training on %d stdlib files (the core training files, as in the first version)" % len(train_files))
    train(train_files, out_dir)
