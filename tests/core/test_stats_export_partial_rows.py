"""A batch with a row that fails part-way (only some stats, then the ledger): the survivors' stats
are still exported as JSON objects with exact floats, on both executors."""
import json

from data_juicer.cli.process import main
from tests.conftest import read_jsonl
from tests.media.files import media_files  # noqa: F401

PROCESS = [{"image_shape_filter": {}}, {"image_aspect_ratio_filter": {"max_ratio": 10}},
           {"audio_duration_filter": {}}]


def test_stats_are_objects_when_a_row_fails(make_recipe, media_files, tmp_path, executor_type):
    m = media_files
    rows = [{"id": 0, "text": "a", "images": [m["png"]], "audios": [m["tone16k"]]},
            {"id": 1, "text": "b", "images": [m["png"]], "audios": [m["corrupt_audio"]]},
            {"id": 2, "text": "c", "images": [m["png"]], "audios": [m["tone16k"]]}]
    recipe = make_recipe(rows, PROCESS, executor_type=executor_type, keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    stats_rows = read_jsonl(tmp_path / "out" / "result_stats.jsonl")
    assert [r["id"] for r in out] == [0, 2]
    expected = {"image_width": [64], "image_height": [48], "aspect_ratios": [1.3333333333333333],
                "audio_duration": [1.0]}
    for r in out:
        assert r["__dj__stats__"] == expected
    assert [s["__dj__stats__"] for s in stats_rows] == [expected, expected]
    # the file holds an object, not a string (the exact text of the float as Python writes it)
    line = (tmp_path / "out" / "result_stats.jsonl").read_text().splitlines()[0]
    assert json.loads(line) == {"__dj__stats__": expected}
    assert '"aspect_ratios": [1.3333333333333333]' in line
