#!/usr/bin/env python
"""Scale corpora for the text recipe: 10k, 50k, 500k, 2M documents, written to disk as a stream.

The 10k and 50k corpora are ``benchmarks/text_pipeline/make_corpus.py``'s own (built there if absent).
A larger corpus is ``ceil(N / 50k)`` copies of the 50k corpus, written one document at a time (never more
than one document in memory): copy 0 is the corpus as is, copy ``k >= 1`` is every document passed through
copy ``k``'s **letter substitution cipher**, a random permutation (seeded by ``k``) of

* the ASCII letters (the same permutation on lower and upper case, so lower-casing commutes with it),
* the Cyrillic letters а-я / А-Я (likewise),
* hiragana, katakana, and the CJK unified ideographs block (U+4E00-U+9FFF),

applied outside the spans the cleaning mappers act on (HTML tags and entities, URLs, e-mail addresses,
left as they are: every whitespace-delimited word holding one of ``< > & @``,
``://``, ``www.`` or a common domain ending so that the mappers still find them).

Why a cipher: it maps a letter to a letter of the same script and case, and a word to a word of the
same length, so every statistic of the recipe's 8 filters (lengths, word counts, alphanumeric and
special-character ratios, line lengths, character and word repetition) is the same on a copy as on its
original, while the copies share (almost) no word and so no shingle with each other: a copy is new text
for the deduplicators, not a duplicate to collapse. Inside a copy the cipher is one bijection, so its
~5 % exact duplicates stay exact and its ~5 % near duplicates keep their Jaccard similarity: the dedup
stages have the same realistic work per 50k documents at every size, and the expected output of copy k
is copy k of the 50k output (row count ``~ copies x`` the 50k run's).

  python benchmarks/scale/make_corpus.py --num_docs 2000000     # -> benchmarks/scale/data/scale_2000000.jsonl
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEXT_BENCH = HERE.parent / "text_pipeline"


def _load_base():
    """benchmarks/text_pipeline/make_corpus.py, under its own module name (this file has the same name)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("text_pipeline_make_corpus", TEXT_BENCH / "make_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


base_mc = _load_base()

DEFAULT_OUT = HERE / "data"
BASE_DOCS = 50000

# spans left as they are: HTML tags / entities, URLs, e-mail addresses (what the cleaning mappers look for)
PROTECT_RE = re.compile(r"((?<!\S)\S*(?:[<>&@]|://|www\.|\.(?:com|org|net|de|io|uk|ru|ly|co)\b)\S*)")
# (the whitespace-delimited words that hold a tag bracket, an entity, an '@', a scheme, 'www.' or a domain)

_GATE_RE = re.compile(r"[<>&@]|://|www\.|\.(?:com|org|net|de|io|uk|ru|ly|co)\b")

_RANGES = [  # (first, last) code points permuted within themselves
    (0x3041, 0x3096),  # hiragana
    (0x30A1, 0x30FA),  # katakana
    (0x4E00, 0x9FFF),  # CJK unified ideographs
]


def _fixed_points() -> set[int]:
    """Letters the cipher leaves alone: those in the filters' special-character set (e.g. ツ シ 一 上 Г),
    which ``special_characters_filter`` counts and the word filters strip; moving them would change stats."""
    try:
        from data_juicer.ops.common.strip_characters import SPECIAL_CHARACTERS
    except ImportError:
        SPECIAL_CHARACTERS = "ツシ一上士Гッン"
    return {ord(c) for c in SPECIAL_CHARACTERS}


def _permute(r: random.Random, points: list[int]) -> list[int]:
    perm = list(points)
    r.shuffle(perm)
    return perm


def cipher_table(k: int) -> dict[int, int]:
    """Copy ``k``'s code point -> code point map (identity for ``k == 0``)."""
    if k == 0:
        return {}
    r = random.Random(1_000_003 * k + 17)
    fixed = _fixed_points()
    table: dict[int, int] = {}
    for lo_first, up_first, n in ((ord("a"), ord("A"), 26), (0x0430, 0x0410, 32)):
        # a letter moves with its other case, so neither may be a fixed point
        movable = [i for i in range(n) if lo_first + i not in fixed and up_first + i not in fixed]
        for i, j in zip(movable, _permute(r, movable)):
            if i != j:
                table[lo_first + i] = lo_first + j
                table[up_first + i] = up_first + j
    for first, last in _RANGES:
        movable = [c for c in range(first, last + 1) if c not in fixed]
        table.update((c, p) for c, p in zip(movable, _permute(r, movable)) if c != p)
    return table


def encipher(text: str, table: dict[int, int]) -> str:
    """``text`` with ``table`` applied outside the protected spans."""
    if not table:
        return text
    if not _GATE_RE.search(text):  # about half the documents: nothing to protect, one translate
        return text.translate(table)
    parts = PROTECT_RE.split(text)
    # split with one capturing group: even items are plain text, odd items the protected spans
    for i in range(0, len(parts), 2):
        if parts[i]:
            parts[i] = parts[i].translate(table)
    return "".join(parts)


def scale_path(out_dir: Path, num_docs: int) -> Path:
    return Path(out_dir) / f"scale_{num_docs}.jsonl"


def copy_id(doc_id: str, k: int) -> str:
    return doc_id if k == 0 else f"{doc_id}-c{k:02d}"


def copy_line(line: str, k: int, table: dict[int, int]) -> str:
    """One document of copy ``k`` as a JSON line. Copy 0 is the document as is, with ``meta.copy = 0``
    too: every line has the same fields (a JSON loader that takes its schema from the first lines, as
    ``datasets``' does, fails on a ``meta`` that gains a field at line 50,001)."""
    d = json.loads(line)
    m = d.get("meta") or {}
    if k:
        d["id"] = copy_id(d["id"], k)
        d["text"] = encipher(d["text"], table)
        if m.get("dup_of"):
            m["dup_of"] = copy_id(m["dup_of"], k)
    m["copy"] = k
    d["meta"] = m
    return json.dumps(d, ensure_ascii=False) + "\n"


def fix_copy0_meta(path: Path) -> Path:
    """Rewrite a corpus made before ``copy_line`` set ``meta.copy = 0``: the lines of copy 0 (those
    without it) get it, the others are copied as they are (block by block). Same documents otherwise."""
    path = Path(path)
    tmp = path.with_suffix(".jsonl.fixing")
    fixed = 0
    with open(path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
        for line in src:
            d = json.loads(line)
            if "copy" in (d.get("meta") or {}):
                dst.write(line)
                break
            dst.write(copy_line(line, 0, {}))
            fixed += 1
        shutil.copyfileobj(src, dst, 1 << 24)
    os.replace(tmp, path)
    print(f"[scale] {path}: meta.copy = 0 added to {fixed} lines", file=sys.stderr)
    return path


def make_scale_corpus(num_docs: int, out_dir: Path = DEFAULT_OUT, seed: int = 42, force: bool = False) -> Path:
    if num_docs <= BASE_DOCS:
        return base_mc.make_corpus(num_docs, seed)
    out = scale_path(out_dir, num_docs)
    if out.exists() and not force:
        print(f"[scale] reusing {out}", file=sys.stderr)
        return out
    base = base_mc.make_corpus(BASE_DOCS, seed)
    bigger = sorted((p for p in Path(out_dir).glob("scale_*.jsonl") if int(p.stem.split("_")[1]) > num_docs),
                    key=lambda p: int(p.stem.split("_")[1]))
    if bigger:  # a larger corpus's first num_docs lines are this corpus (same copies, same order)
        src_path = bigger[0]
        tmp = out.with_suffix(".jsonl.tmp")
        with open(src_path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as f:
            f.writelines(line for _, line in zip(range(num_docs), src))
        os.replace(tmp, out)
        print(f"[scale] wrote {out}: first {num_docs} lines of {src_path}", file=sys.stderr)
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".jsonl.tmp")
    written = 0
    t0 = time.perf_counter()
    with open(tmp, "w", encoding="utf-8") as f:
        k = 0
        while written < num_docs:
            table = cipher_table(k)
            with open(base, encoding="utf-8") as src:
                for line in src:
                    if written >= num_docs:
                        break
                    f.write(copy_line(line, k, table))
                    written += 1
            print(f"[scale] copy {k}: {written} docs written ({time.perf_counter() - t0:.0f} s)", file=sys.stderr,
                  flush=True)
            k += 1
    os.replace(tmp, out)
    summary = {"path": str(out), "num_docs": written, "base": str(base), "copies": k,
               "bytes": out.stat().st_size}
    out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"[scale] wrote {out} ({summary['bytes'] / 1e6:.0f} MB, {written} docs, {k} copies)", file=sys.stderr)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num_docs", type=int, nargs="+", default=[2000000])
    ap.add_argument("--out_dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--fix_copy0_meta", type=Path, nargs="+", metavar="JSONL",
                    help="only add meta.copy = 0 to the copy-0 lines of corpora made before it was written")
    a = ap.parse_args(argv)
    if a.fix_copy0_meta:
        for p in a.fix_copy0_meta:
            fix_copy0_meta(p)
        return
    for n in a.num_docs:
        print(make_scale_corpus(n, a.out_dir, a.seed, a.force))


if __name__ == "__main__":
    main()
