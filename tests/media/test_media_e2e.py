"""End to end through dj-process: bad media files become error-ledger entries; no sample vanishes."""
import json
import os

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl
from tests.media.files import media_files  # noqa: F401


def _rows(m):
    return [
        {"id": 0, "text": "ok", "images": [m["png"]], "audios": [m["tone16k"]]},
        {"id": 1, "text": "missing image", "images": [m["missing_image"]], "audios": [m["tone16k"]]},
        {"id": 2, "text": "corrupt image", "images": [m["png"], m["corrupt_image"]], "audios": [m["tone16k"]]},
        {"id": 3, "text": "truncated image", "images": [m["truncated_image"]], "audios": [m["tone16k"]]},
        {"id": 4, "text": "corrupt audio", "images": [m["png"]], "audios": [m["corrupt_audio"]]},
        {"id": 5, "text": "missing audio", "images": [m["png"]], "audios": [m["missing_audio"]]},
        {"id": 6, "text": "wide: filtered", "images": [m["wide"]], "audios": [m["tone16k"]]},
        {"id": 7, "text": "no media", "images": [], "audios": []},
        {"id": 8, "text": "rotated", "images": [m["exif_rotated"]], "audios": [m["tone44k_stereo"]]},
    ]


PROCESS = [{"image_shape_filter": {"min_width": 16}}, {"image_aspect_ratio_filter": {}},
           {"image_size_filter": {"max_size": "1MB"}}, {"audio_duration_filter": {"min_duration": 0}},
           {"audio_size_filter": {}}]


@pytest.mark.parametrize("fusion", [False, True])
def test_bad_media_go_to_the_ledger(make_recipe, media_files, tmp_path, fusion):
    rows = _rows(media_files)
    recipe = make_recipe(rows, PROCESS, op_fusion=fusion, keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in out] == [0, 7, 8]
    stats = out[2]["__dj__stats__"]
    # (the executor currently exports stats as a JSON string when a failed row of the batch had partial
    # stats; reported to the coordinator)
    stats = json.loads(stats) if isinstance(stats, str) else stats
    assert stats["image_width"] == [20] and stats["aspect_ratios"] == [0.5]
    ledger = []
    for root, _, names in os.walk(tmp_path / "out"):
        ledger += [e for n in names if n == "errors.jsonl" for e in read_jsonl(os.path.join(root, n))]
    by_id = {e["sample"]["id"]: e for e in ledger}
    assert sorted(by_id) == [1, 2, 3, 4, 5]
    assert by_id[1]["error_type"] == "FileNotFoundError" and "missing.jpg" in by_id[1]["message"]
    assert by_id[2]["error_type"] == "MediaError" and "corrupt.jpg" in by_id[2]["message"]
    assert "truncated.jpg" in by_id[3]["message"]
    assert by_id[4]["error_type"] == "MediaError" and "corrupt.wav" in by_id[4]["message"]
    assert "missing.wav" in by_id[5]["message"]
    # rows conserved: kept + filtered (id 6) + ledger = input
    assert len(out) + 1 + len(ledger) == len(rows)
