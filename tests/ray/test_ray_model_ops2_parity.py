"""The second round of model ops on Ray: run in actor pools, same output as the default executor."""
import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.media.video_files import video_files  # noqa: F401
from tests.models.tiny_models2 import models2, models2_env  # noqa: F401
from tests.models.vision_tiny_models import vision_models, write_images  # noqa: F401

VID, EOC = "<__dj__video>", "<|__dj__eoc|>"


@pytest.mark.slow
def test_image_diffusion_same_on_ray(run_both, models2_env, tmp_path):
    from PIL import Image

    models2_env("CompVis/stable-diffusion-v1-4")
    imgs = write_images(tmp_path / "imgs", 3)
    rows = [{"id": k, "text": "x", "images": [p], "cap": f"caption {k}"} for k, p in enumerate(imgs)]
    rows.append({"id": 3, "text": "no image", "images": [], "cap": ""})
    # Data-Juicer's 512x512 canvas and 50 steps (not recipe parameters); strength 0.1 runs 5 of them
    process = [{"image_diffusion_mapper": {"caption_key": "cap", "save_dir": str(tmp_path / "gen"), "aug_num": 1,
                                           "strength": 0.1, "accelerator": "cpu"}}]
    default, ray = run_both(rows, process)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 0, 1, 1, 2, 2, 3]
    for ra, rb in zip(a, b):
        assert ra["images"] == rb["images"]  # names come from content + params: the same on both
    made = [r["images"][0] for r in a[1:6:2]]
    assert all(p.startswith(str(tmp_path / "gen")) for p in made)
    # the default run's files were overwritten by Ray's run of the same names: equal pixels, as each
    # image's noise is seeded by its name
    assert [np.asarray(Image.open(p)).shape for p in made] == [(30, 40, 3)] * 3


@pytest.mark.slow
def test_video_captioning_from_frames_same_layout_on_ray(run_both, models2_env, video_files):
    models2_env("tiny/blip-image-captioning")
    vids = [video_files["short"], video_files["motion"]]
    rows = [{"id": 0, "text": f"{VID} one{EOC}", "videos": [vids[0]]},
            {"id": 1, "text": f"{VID}{VID} two", "videos": vids},
            {"id": 2, "text": "none", "videos": []}]
    process = [{"video_captioning_from_frames_mapper": {"hf_img2seq": "tiny/blip-image-captioning",
                                                        "frame_sampling_method": "uniform", "frame_num": 1,
                                                        "accelerator": "cpu"}}]
    default, ray = run_both(rows, process)
    a, b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    # captions are sampled (do_sample, as Data-Juicer), so only their layout is compared
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 0, 1, 1, 2]
    for ra, rb in zip(a, b):
        assert ra["videos"] == rb["videos"]
        assert ra["text"].count(VID) == rb["text"].count(VID) and ra["text"].count(EOC) == rb["text"].count(EOC)
    assert a[1]["text"].startswith(VID + " ") and a[1]["text"].endswith(" " + EOC)
    assert a[3]["text"].count(VID) == 2


@pytest.mark.slow
def test_ram_tagging_same_on_ray(run_both, tmp_path, monkeypatch, video_files):
    """The plug-in reaches the Ray actors through $DJ_MODEL_PLUGINS (a module they import)."""
    from PIL import Image

    from data_juicer.models import plugins

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "ram_plus_swin_large_14m.pth").write_bytes(b"w")
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv(plugins.PLUGINS_ENV, "tests.models.ram_fake_plugin")
    imgs = []
    for k, rgb in enumerate([(250, 10, 10), (10, 250, 10), (200, 200, 250)]):
        imgs.append(str(tmp_path / f"{k}.png"))
        Image.new("RGB", (16, 12), rgb).save(imgs[-1])
    rows = [{"id": k, "text": "x", "images": [p], "videos": [video_files["scenes"]]} for k, p in enumerate(imgs)]
    process = [{"image_tagging_mapper": {"accelerator": "cpu"}},
               {"video_tagging_from_frames_filter": {"tags": ["blue"], "frame_sampling_method": "uniform",
                                                     "accelerator": "cpu"}}]
    try:
        default, ray = run_both(rows, process)
    finally:
        plugins.unregister_plugin("ram")
    a, b = read_jsonl(default / "result_stats.jsonl"), read_jsonl(ray / "result_stats.jsonl")
    assert [r["__dj__meta__"] for r in a] == [r["__dj__meta__"] for r in b]
    assert [r["__dj__meta__"]["image_tags"] for r in a] == [
        [["red", "dark", "thing"]], [["green", "dark", "thing"]], [["blue", "bright", "thing"]]]
    assert a[0]["__dj__meta__"]["video_frame_tags"] == [["dark", "thing", "red", "blue"]]
