import pytest

from data_juicer.ops.mapper.video_captioning_from_vlm_mapper import VideoCaptioningFromVLMMapper
from tests.llm_fixtures import api_params, llm_server  # noqa: F401

V, EOC = "<__dj__video>", "<|__dj__eoc|>"


def test_captions_new_samples(llm_server, tmp_path):
    vid = tmp_path / "v.mp4"
    vid.write_bytes(b"\x00\x00\x00\x18ftypmp42")
    llm_server.respond("A cat jumps.")
    op = VideoCaptioningFromVLMMapper(hf_model="tiny-llm", caption_num=2, keep_candidate_mode="all",
                                      prompt="Caption it.", **api_params(llm_server))
    out = op.process_batched({"text": [f"{V} some words {EOC}"], "videos": [[str(vid)]]})
    assert out["text"] == [f"{V} some words {EOC}", f"{V} A cat jumps. {EOC}", f"{V} A cat jumps. {EOC}"]
    assert out["videos"] == [[str(vid)]] * 3
    req = llm_server.requests()[0]
    parts = req["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "Caption it."}
    assert parts[1]["video_url"]["url"].startswith("data:video/mp4;base64,")
    assert len(llm_server.requests()) == 2


def test_simhash_mode_and_no_video(llm_server, tmp_path):
    vid = tmp_path / "v.mp4"
    vid.write_bytes(b"x")
    llm_server.faults({"kind": "content", "content": "completely unrelated words here", "times": 1})
    llm_server.respond("a dog runs in the park")
    op = VideoCaptioningFromVLMMapper(hf_model="tiny-llm", caption_num=2, keep_candidate_mode="similar_one_simhash",
                                      keep_original_sample=False, **api_params(llm_server))
    out = op.process_batched({"text": [f"{V} a dog runs in the park {EOC}", "no video"], "videos": [[str(vid)], []]})
    assert out["text"] == [f"{V} a dog runs in the park {EOC}"]


def test_bad_mode():
    with pytest.raises(ValueError, match="keep_candidate_mode"):
        VideoCaptioningFromVLMMapper(keep_candidate_mode="best", model_params={"base_url": "http://127.0.0.1:9/v1"})
