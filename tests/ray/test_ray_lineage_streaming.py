"""lineage_stage inside executor_type: ray streams its parents: read a batch at a time, each one
forgotten once finished (at most ``max_live_samples`` alive), the pass after it fed as it goes, in
input order with no driver gather; the output is the default executor's."""
import glob
import os
import re

import pytest

from tests.conftest import read_jsonl

ROWS = [{"id": i, "text": "\n\n".join(" ".join(["word"] * ((i + j) % 6)) + f" p{j} ab@cd.com" for j in range(i % 5))}
        for i in range(300)]
STAGE = {"expand": "paragraphs", "max_live_samples": 24,
         "child_ops": [{"words_num_filter": {"min_num": 3}}, {"clean_email_mapper": None}]}


def _peak(folder):
    """The stage's "at most N samples held at once" from the job's log."""
    logs = glob.glob(os.path.join(str(folder), "**", "dj-process.log"), recursive=True)
    assert logs, f"no job log under {folder}"
    found = re.findall(r"\[lineage_stage\] 300 samples .* \(at most (\d+) samples held at once\)",
                       open(logs[0], encoding="utf-8").read())
    assert found, "the stage's report line is in the log"
    return int(found[-1])


@pytest.mark.parametrize("after", [
    [{"text_length_filter": {"min_len": 1}}],  # streamed: the next pass runs on the bursts as they come
    [],  # the stage alone: its output is put in the object store a block at a time
])
def test_lineage_stage_on_ray_streams_its_parents_with_the_default_output(run_both, after):
    d, r = run_both(ROWS, [{"lineage_stage": STAGE}] + after)
    out = read_jsonl(os.path.join(d, "result.jsonl"))
    assert read_jsonl(os.path.join(r, "result.jsonl")) == out
    # the 60 samples without paragraphs (i % 5 == 0) and 10 whose paragraphs all have < 3 words are dropped
    assert len(out) == 230 and out[0]["id"] == 1 and out[0]["children"] == ["word p0 "]
    assert _peak(r) == 24 and _peak(d) == 24  # 300 samples, never more than 24 alive on either executor
