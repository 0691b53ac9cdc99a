#!/usr/bin/env python
"""datatrove side of the peers benchmark; run with the datatrove venv's python (not ours).

  python dt_pipeline.py minhash --input DIR --work DIR [--tokenizer space|spacy] [--norm default|lower]
  python dt_pipeline.py filters --input DIR --work DIR [--tokenizer space|spacy]

``--input`` is a folder of JSONL shards (one per task: datatrove gives each task whole files).
``minhash`` runs datatrove's four MinHash stages (signatures, buckets, clusters, filter) with
``tasks`` = ``workers`` = ``--np``, and writes the kept documents to ``WORK/out``; ``filters``
runs Gopher quality + Gopher repetition + C4 quality (datatrove's defaults) and writes the kept
documents to ``WORK/out``. Each stage's wall seconds go to ``WORK/stages.json``.

``--tokenizer space`` is our ``space`` tokenization (words between single spaces, empty ones
dropped); ``spacy`` is datatrove's default English word tokenizer. ``--norm lower`` only
lower-cases before tokenizing (so the shingles are byte for byte ours); ``default`` is datatrove's
``simplify_text`` (lower case, no punctuation, numbers and diacritics normalised).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.utils.word_tokenizers import WordTokenizer, load_word_tokenizer


class SpaceTokenizer(WordTokenizer):
    """Words between spaces, as our ``space`` tokenization (and Data-Juicer's) cuts them."""

    def __init__(self):
        super().__init__("en")

    def word_tokenize(self, text: str) -> list[str]:
        return [w for w in text.split(" ") if w]

    def sent_tokenize(self, text: str) -> list[str]:
        return [s for s in text.split("\n") if s.strip()]

    def span_tokenize(self, text: str) -> list[tuple[int, int]]:
        out, pos = [], 0
        for line in text.split("\n"):
            if line.strip():
                out.append((pos, pos + len(line)))
            pos += len(line) + 1
        return out


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory now (``VmRSS``) or at its peak (``VmHWM``; unlike
    ``ru_maxrss`` it starts afresh at exec, not with the parent's peak)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def tokenizer(name: str):
    return SpaceTokenizer() if name == "space" else load_word_tokenizer("en")


def run_stage(name: str, pipeline: list, tasks: int, workers: int, work: Path, times: dict) -> None:
    t0 = time.perf_counter()
    LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=workers,
                          logging_dir=str(work / "logs" / name), skip_completed=False).run()
    times[name] = time.perf_counter() - t0


def minhash(a) -> dict:
    from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                                  MinhashDedupFilter, MinhashDedupSignature)
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.text import TextNormConfig

    norm = TextNormConfig() if a.norm == "default" else TextNormConfig(
        lowercase=True, norm_whitespace=False, remove_punctuation=False, norm_unicode_diacritics=False,
        norm_numbers=False)
    config = MinhashConfig(n_grams=a.window, num_buckets=a.bands, hashes_per_bucket=a.rows, norm_config=norm,
                           hash_config=HashConfig(precision=64, hash_fc="xxhash"))
    work, times = a.work, {}
    sigs, buckets, clusters = work / "signatures", work / "buckets", work / "remove_ids"
    reader = lambda: JsonlReader(str(a.input), text_key="text", id_key="id")  # noqa: E731
    run_stage("signatures", [reader(), MinhashDedupSignature(output_folder=str(sigs), config=config,
                                                              language=tokenizer(a.tokenizer))],
              a.np, a.np, work, times)
    run_stage("buckets", [MinhashDedupBuckets(input_folder=str(sigs), output_folder=str(buckets), config=config)],
              config.num_buckets, a.np, work, times)
    run_stage("clusters", [MinhashDedupCluster(input_folder=str(buckets), output_folder=str(clusters),
                                               config=config)], 1, 1, work, times)
    run_stage("filter", [reader(), MinhashDedupFilter(input_folder=str(clusters)),
                         JsonlWriter(str(work / "out"), compression=None)], a.np, a.np, work, times)
    return times


def filters(a) -> dict:
    from datatrove.pipeline.filters import C4QualityFilter, GopherQualityFilter, GopherRepetitionFilter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    tok = tokenizer(a.tokenizer)
    times = {}
    run_stage("filters", [JsonlReader(str(a.input), text_key="text", id_key="id"),
                          GopherRepetitionFilter(language=tok), GopherQualityFilter(language=tok),
                          C4QualityFilter(filter_no_terminal_punct=False, language=tok),
                          JsonlWriter(str(a.work / "out"), compression=None)], a.np, a.np, a.work, times)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["minhash", "filters"])
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--tokenizer", choices=["space", "spacy"], default="space")
    ap.add_argument("--norm", choices=["default", "lower"], default="default")
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    a = ap.parse_args(argv)
    # what the steps import, loaded before the baseline is taken
    import datatrove.pipeline.dedup.minhash  # noqa: F401
    import datatrove.pipeline.filters  # noqa: F401
    import datatrove.pipeline.readers  # noqa: F401
    import datatrove.pipeline.writers  # noqa: F401

    base = rss_mb()
    times = minhash(a) if a.mode == "minhash" else filters(a)
    # with --np 1 every stage runs in this process: peak - base is what the stages themselves used
    times["base_rss_mb"] = base
    times["peak_rss_mb"] = rss_mb("VmHWM")
    (a.work / "stages.json").write_text(json.dumps(times, indent=1) + "\n")
    print("stages:", json.dumps(times), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
