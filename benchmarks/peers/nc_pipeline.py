#!/usr/bin/env python
"""NeMo Curator side of the peers benchmark; run with the NeMo Curator venv's python (not ours).

  python nc_pipeline.py filters --input DIR --work DIR [--chain english|closest8] [--backend ray_data|xenna]

``--input`` is a folder of JSONL shards. The pipeline is NeMo Curator's own: its ``JsonlReader``
(one partition per file), one ``ScoreFilter`` stage holding the chain's filters (``--per-filter-stages``:
one stage each, as its published YAML has it), and its ``JsonlWriter`` into ``WORK/out``, run by its
Ray Data executor or by Xenna (NeMo Curator's default; ``--mode streaming``, Xenna's default, needs
about a CPU per stage and refuses to start on 2 CPUs, so use ``--mode batch`` there) on a local Ray
started here with ``--np`` CPUs.

``--chain english`` is the chain NeMo Curator publishes for English text,
``nemo_curator/config/text/heuristic_filter_english_pipeline.yaml`` in the installed package,
with its filters and thresholds as they are there (28 filters). ``--chain closest8`` is the 8 of its
heuristic filters closest to our 8 filters (``benchmarks/text_pipeline/recipe.yaml``), with our
thresholds where the measures match (see ``CLOSEST8``).

Each phase's wall seconds (imports, Ray start, pipeline) go to ``WORK/stages.json``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

t_start = time.perf_counter()

H = "nemo_curator.stages.text.filters.heuristic."
# ours -> theirs. Our text_length (characters), average_line_length and maximum_line_length have no
# counterpart in NeMo Curator; its mean and longest word length and repeated lines stand in for them.
CLOSEST8 = [
    (H + "string.WordCountFilter", {"min_words": 10, "max_words": 20000}),  # words_num_filter 10..20000
    (H + "string.NonAlphaNumericFilter", {"max_non_alpha_numeric_to_text_ratio": 0.45}),  # alphanumeric >= 0.55
    (H + "string.SymbolsToWordsFilter", {}),  # special_characters_filter
    (H + "string.MeanWordLengthFilter", {}),  # (average_line_length_filter)
    (H + "string.LongWordFilter", {}),  # (maximum_line_length_filter)
    (H + "repetition.RepeatedLinesFilter", {}),  # (text_length_filter)
    (H + "repetition.RepeatingTopNGramsFilter", {"n": 2}),  # character_repetition_filter
    (H + "repetition.RepeatingDuplicateNGramsFilter",  # word_repetition_filter, 10-grams, 0.3
     {"n": 10, "max_repeating_duplicate_ngram_ratio": 0.3}),
]


def stages_of(chain: str, input_dir: Path, out_dir: Path, one_stage: bool) -> list:
    import hydra.utils
    from nemo_curator.stages.text.filters.score_filter import ScoreFilter
    from nemo_curator.stages.text.io.reader import JsonlReader
    from nemo_curator.stages.text.io.writer import JsonlWriter
    from omegaconf import OmegaConf

    reader = JsonlReader(file_paths=str(input_dir), files_per_partition=1)
    writer = JsonlWriter(path=str(out_dir))
    if chain == "closest8":
        filters = [hydra.utils.get_class(cls)(**kw) for cls, kw in CLOSEST8]
    else:
        import nemo_curator

        yaml = Path(nemo_curator.__file__).parent / "config" / "text" / "heuristic_filter_english_pipeline.yaml"
        cfg = OmegaConf.load(yaml)  # its reader and writer are replaced by ours above; only the filters are taken
        filters = [hydra.utils.instantiate(OmegaConf.to_container(s, resolve=True)["filter_obj"])
                   for s in cfg.stages if "filter_obj" in s]
    if one_stage:  # ScoreFilter takes a list of filters: one stage, one pass over each batch
        return [reader, ScoreFilter(filter_obj=filters, text_field="text"), writer]
    return [reader, *(ScoreFilter(filter_obj=f, text_field="text") for f in filters), writer]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["filters"])
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--chain", choices=["english", "closest8"], default="english")
    ap.add_argument("--backend", choices=["ray_data", "xenna"], default="ray_data")
    ap.add_argument("--mode", choices=["streaming", "batch"], default="streaming", dest="xenna_mode",
                    help="Xenna's execution mode (streaming needs about a CPU per stage)")
    ap.add_argument("--per-filter-stages", action="store_true",
                    help="one ScoreFilter stage per filter, as the published YAML has it (default: one stage)")
    a = ap.parse_args(argv)
    times: dict = {}
    import ray
    from nemo_curator.pipeline import Pipeline

    stages = stages_of(a.chain, a.input.resolve(), (a.work / "out").resolve(), not a.per_filter_stages)
    times["imports_s"] = time.perf_counter() - t_start
    t = time.perf_counter()
    # a local Ray as a child of this process, so that the benchmark's process-tree sampler sees it
    # (Xenna asks Ray's state API, served by the dashboard, for its actors)
    ray.init(num_cpus=a.np, include_dashboard=a.backend == "xenna", ignore_reinit_error=True)
    times["ray_start_s"] = time.perf_counter() - t
    if a.backend == "xenna":
        from nemo_curator.backends.xenna import XennaExecutor

        executor = XennaExecutor(config={"execution_mode": a.xenna_mode})
    else:
        from nemo_curator.backends.ray_data import RayDataExecutor

        executor = RayDataExecutor()
    pipeline = Pipeline(name=f"peers-{a.chain}", stages=stages)
    t = time.perf_counter()
    pipeline.run(executor)
    times["pipeline_s"] = time.perf_counter() - t
    times["stages"] = len(stages)
    (a.work / "stages.json").write_text(json.dumps(times, indent=1) + "\n")
    print("stages:", json.dumps(times), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
