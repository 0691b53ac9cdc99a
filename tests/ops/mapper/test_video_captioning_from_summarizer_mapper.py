import pytest

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.video_files import video_files  # noqa: F401
from tests.models.tiny_models2 import models2, models2_env  # noqa: F401
from tests.models.vision_tiny_models import no_models, vision_models  # noqa: F401
from tests.ops.mapper.test_image_tagging_mapper import WEIGHTS
from tests.ops.vision_other_helpers import dry_run

NAME = "video_captioning_from_summarizer_mapper"
SUMMARIZER = "mrm8488/flan-t5-large-finetuned-openai-summarize_from_feedback"
CAPTIONER = "tiny/blip-image-captioning"
VID, EOC = "<__dj__video>", "<|__dj__eoc|>"
ONLY_FRAMES = dict(consider_video_caption_from_video=False, consider_video_caption_from_audio=False,
                   consider_video_tags_from_audio=False)


def test_missing_summarizer_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)()
    assert f"looked at: {no_models}/{SUMMARIZER}" in str(e.value)


def test_missing_summarizer_under_dry_run(no_models, make_recipe, capsys):
    rc, out = dry_run(make_recipe, [{NAME: {}}], capsys=capsys)
    assert rc == 2 and f"{no_models}/{SUMMARIZER}" in out


def test_a_sub_op_without_its_model_names_the_model_and_the_sub_op(models2_env):
    # video_captioning_from_video_mapper is registered now: with the switch on (the default) its
    # model must be there, and the error says which sub-op needs which model
    models2_env(SUMMARIZER)
    with pytest.raises(FileNotFoundError, match="'kpyu/video-blip-opt-2.7b-ego4d' \\(needed by "
                                                "video_captioning_from_video_mapper\\) was not found"):
        OPERATORS.get(NAME)()


@pytest.fixture
def ram_env(models2_env, monkeypatch):
    """The summarizer, the captioner, and RAM weights + the stand-in plug-in, in one DJ_MODELS_DIR."""
    import importlib
    import os

    import tests.models.ram_fake_plugin as fake
    from data_juicer.models import plugins

    root = models2_env(SUMMARIZER, CAPTIONER)
    with open(os.path.join(root, WEIGHTS), "wb") as f:
        f.write(b"w")
    importlib.reload(fake)
    yield root
    plugins.unregister_plugin("ram")


def test_sub_ops_get_only_their_parameters(ram_env):
    op = OPERATORS.get(NAME)(**ONLY_FRAMES, vid_cap_from_frm_args={"hf_img2seq": CAPTIONER, "frame_num": 2,
                                                                   "tag_field_name": "x"},
                             vid_tag_from_frm_args={"frame_sampling_method": "uniform", "caption_num": 4},
                             accelerator="cpu")
    assert [o.name for o in op.cap_ops] == ["video_captioning_from_frames_mapper"]
    assert [o.name for o in op.tag_ops] == ["video_tagging_from_frames_mapper"]
    cap, tag = op.cap_ops[0], op.tag_ops[0]
    assert (cap.frame_num, cap.caption_num, cap.keep_original_sample, cap.accelerator) == (2, 1, False, "cpu")
    assert (tag.frame_sampling_method, tag.accelerator) == ("uniform", "cpu")


def test_texts_to_summarize_keep_the_most_frequent_tags(ram_env, video_files):
    op = OPERATORS.get(NAME)(**ONLY_FRAMES, consider_video_caption_from_frames=False, keep_tag_num=2,
                             vid_tag_from_frm_args={"frame_sampling_method": "uniform"})
    chunks = [(0, f"{VID}{VID} two", [video_files["scenes"], video_files["static"]]),
              (1, f"{VID} one", [video_files["static"]])]
    assert op._texts_to_summarize(chunks) == ["dark, thing, red, bright", "red, bright"]


@pytest.mark.slow
def test_summaries_replace_video_chunks(ram_env, video_files):
    import torch

    op = OPERATORS.get(NAME)(**ONLY_FRAMES, keep_tag_num=2,
                             vid_cap_from_frm_args={"hf_img2seq": CAPTIONER, "frame_sampling_method": "uniform",
                                                    "frame_num": 1},
                             vid_tag_from_frm_args={"frame_sampling_method": "uniform"})
    op.max_new_tokens = 5
    op.cap_ops[0].max_new_tokens = 3
    rows = {"text": [f"intro{EOC}{VID} clip{EOC}", "no video", f"{VID} b"],
            "videos": [[video_files["static"]], [], [video_files["scenes"]]], Fields.stats: [{}, {}, {}]}
    torch.manual_seed(0)
    out = op.process_batched(rows)
    assert out["text"][0] == rows["text"][0] and out["text"][2] == "no video" and out["text"][3] == f"{VID} b"
    first, last = out["text"][1], out["text"][4]
    assert first.startswith(f"intro{EOC}{VID} ") and first.endswith(EOC) and first.count(EOC) == 2
    assert last.startswith(f"{VID} ") and last.endswith(EOC)
    assert out["videos"] == [[video_files["static"]], [video_files["static"]], [], [video_files["scenes"]],
                             [video_files["scenes"]]]
    # greedy summaries of the tiny T5: the same input text gives the same summary, batched or not
    texts = op._texts_to_summarize([(0, f"{VID} x", [video_files["static"]])])
    assert texts[0].startswith("red, bright, ")
    both = op._summarize(["red, bright", "a much longer text to pad the other one"])
    assert both == ["sanchezhetic strasbourg dir serial", "308ialfastfastfast"]
    assert op._summarize(["red, bright"]) == both[:1]


def test_no_sub_op_adds_no_sample(models2_env):
    models2_env(SUMMARIZER)
    off = {k: False for k in ("consider_video_caption_from_video", "consider_video_caption_from_audio",
                              "consider_video_caption_from_frames", "consider_video_tags_from_audio",
                              "consider_video_tags_from_frames")}
    op = OPERATORS.get(NAME)(**off)
    rows = {"text": [f"{VID} a"], "videos": [["v.mp4"]], Fields.stats: [{}]}
    assert op.process_batched(rows)["text"] == [f"{VID} a"]
