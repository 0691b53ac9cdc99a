#!/usr/bin/env python
"""Build a text corpus with known exact and near duplicates for the dedup benchmark.

Base documents are the text pipeline benchmark's (``../text_pipeline/make_corpus.py``): real
text fetched from package registries (Debian fortunes and Debian Reference in several
languages, the Brown corpus, Shakespeare and Milton, Python sources, raw HTML), cut to a
web-like length distribution and dirtied with crawl noise. Base documents are made unique
(equal texts are redrawn), then copies are added, each labelled with the id it copies:

- ``exact`` (default 8 %): a byte copy of a base document, or of an earlier copy (a chain);
- ``near`` (default 8 %): a copy with the small edits re-posts carry (typos, a header or a
  footer, a dropped line, doubled spaces, a word in capitals; 1-2 of them);
- ``near_heavy`` (default 4 %): a copy with larger edits (about 5 % of the words replaced or
  dropped, a paragraph moved, a sentence added), Jaccard similarity of 5-shingles about 0.5-0.8.

Copies are only made of documents of at least 300 characters. Documents are then shuffled, so a
copy may come before its original. Deterministic for a given ``--seed``.

Output: ``data/dedup_<num_docs>_s<seed>.jsonl``, one ``{"id", "text", "meta": {source, lang,
dup_of, dup_kind}}`` per line (``dup_of`` is "" for an original), and ``.summary.json`` beside it.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load_text_pipeline_builder():
    """The text pipeline benchmark's corpus builder (a module of the same file name)."""
    spec = importlib.util.spec_from_file_location("text_pipeline_make_corpus",
                                                  HERE.parent / "text_pipeline" / "make_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tp = _load_text_pipeline_builder()

DEFAULT_OUT = HERE / "data"
_FILLER = ["See also the notes below.", "This section was revised.", "Thanks to all contributors.",
           "Comments are welcome.", "More details follow in the next part.", "Read the original post."]


def corpus_path(out_dir: Path, num_docs: int, seed: int) -> Path:
    return Path(out_dir) / f"dedup_{num_docs}_s{seed}.jsonl"


def heavy_edit(r: random.Random, text: str, vocab: list[str]) -> str:
    """Larger rewrites: ~5 % of the words replaced or dropped, a paragraph moved, a sentence added."""
    lines = text.split("\n")
    if len(lines) > 3 and r.random() < 0.5:
        i = r.randrange(len(lines))
        lines.insert(r.randrange(len(lines)), lines.pop(i))
    text = "\n".join(lines)
    words = text.split(" ")
    for _ in range(max(1, len(words) // 20)):
        i = r.randrange(len(words))
        if r.random() < 0.5:
            words[i] = r.choice(vocab)
        else:
            words[i] = ""
    text = " ".join(w for w in words if w)
    return text + " " + r.choice(_FILLER) if r.random() < 0.7 else r.choice(_FILLER) + " " + text


def build(num_docs: int, seed: int, src: dict, exact_rate: float, near_rate: float, heavy_rate: float) -> list[dict]:
    r = random.Random(seed)
    n_exact, n_near, n_heavy = (int(num_docs * x) for x in (exact_rate, near_rate, heavy_rate))
    n_base = num_docs - n_exact - n_near - n_heavy
    builders = [k for k, _ in tp.KINDS]
    weights = [w for _, w in tp.KINDS]
    seen, docs, tries = set(), [], 0
    while len(docs) < n_base:
        tries += 1
        source, lang, _origin, text = r.choices(builders, weights)[0](r, src)
        for _name, p, fn in tp.NOISES:
            if r.random() < p and text:
                text = fn(r, text)
        if text in seen and tries < 50 * n_base:
            continue  # base documents are unique
        seen.add(text)
        docs.append({"text": text, "meta": {"source": source, "lang": lang, "dup_of": -1, "dup_kind": ""}})
    vocab = [w for d in docs[:2000] for w in d["text"].split(" ") if w.isalpha()][:20000] or ["word"]
    long_enough = [i for i in range(n_base) if len(docs[i]["text"]) >= 300]

    def copy(i, kind, text):
        docs.append({"text": text, "meta": dict(docs[i]["meta"], dup_of=i, dup_kind=kind)})

    for _ in range(n_near):
        i = r.choice(long_enough)
        copy(i, "near", tp.near_duplicate(r, docs[i]["text"]))
    for _ in range(n_heavy):
        i = r.choice(long_enough)
        copy(i, "near_heavy", heavy_edit(r, docs[i]["text"], vocab))
    for _ in range(n_exact):  # of an original or of any copy made so far (chains)
        i = r.choice(long_enough) if r.random() < 0.8 else r.randrange(n_base, len(docs))
        copy(i, "exact", docs[i]["text"])
    order = list(range(len(docs)))
    r.shuffle(order)
    new_id = {old: f"doc-{pos:07d}" for pos, old in enumerate(order)}
    out = []
    for old in order:
        d = docs[old]
        m = dict(d["meta"])
        m["dup_of"] = new_id[m["dup_of"]] if m["dup_of"] >= 0 else ""
        out.append({"id": new_id[old], "text": d["text"], "meta": m})
    return out


def make_corpus(num_docs: int = 50000, seed: int = 42, out_dir: Path = DEFAULT_OUT,
                testdata_dir: Path = tp.DEFAULT_TESTDATA, fetch_script: Path = tp.DEFAULT_FETCH,
                exact_rate: float = 0.08, near_rate: float = 0.08, heavy_rate: float = 0.04,
                force: bool = False) -> Path:
    out = corpus_path(out_dir, num_docs, seed)
    if out.exists() and not force:
        print(f"[make_corpus] reusing {out}", file=sys.stderr)
        return out
    if tp.ensure_testdata(Path(testdata_dir), Path(fetch_script), "tiny"):
        src = tp.load_real_sources(Path(testdata_dir))
    else:
        print("[make_corpus] WARNING: real test data unavailable -> SYNTHETIC fallback text", file=sys.stderr)
        src = tp.make_synthetic_sources(seed)
    docs = build(num_docs, seed, src, exact_rate, near_rate, heavy_rate)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    os.replace(tmp, out)
    lens = sorted(len(d["text"]) for d in docs)
    summary = {
        "path": str(out), "num_docs": len(docs), "seed": seed, "synthetic": src["synthetic"],
        "bytes": out.stat().st_size, "chars_p10_p50_p90_max": [lens[len(lens) // 10], lens[len(lens) // 2],
                                                                lens[9 * len(lens) // 10], lens[-1]],
        "sources": dict(Counter(d["meta"]["source"] for d in docs).most_common()),
        "duplicates": dict(Counter(d["meta"]["dup_kind"] for d in docs if d["meta"]["dup_kind"])),
    }
    out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    print(f"[make_corpus] wrote {out} ({summary['bytes'] / 1e6:.1f} MB, {len(docs)} docs, "
          f"duplicates {summary['duplicates']})", file=sys.stderr)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out_dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--testdata_dir", type=Path, default=tp.DEFAULT_TESTDATA)
    ap.add_argument("--exact_rate", type=float, default=0.08)
    ap.add_argument("--near_rate", type=float, default=0.08)
    ap.add_argument("--heavy_rate", type=float, default=0.04)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    print(make_corpus(a.num_docs, a.seed, a.out_dir, a.testdata_dir, exact_rate=a.exact_rate,
                      near_rate=a.near_rate, heavy_rate=a.heavy_rate, force=a.force))


if __name__ == "__main__":
    main()
