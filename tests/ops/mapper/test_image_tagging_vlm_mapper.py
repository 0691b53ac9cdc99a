import base64

import pytest
from PIL import Image

from data_juicer.models.llm import LLMResponseError
from data_juicer.ops.mapper.image_tagging_vlm_mapper import ImageTaggingVLMMapper
from data_juicer.utils.constant import Fields
from tests.llm_fixtures import api_params, llm_server  # noqa: F401


def test_tags_per_image_sent_as_image_url(llm_server, tmp_path):
    img = tmp_path / "a.jpg"
    Image.new("RGB", (4, 4), "red").save(img)
    llm_server.respond("```json\n{'tags': ['Red Square', 'red square', 'Tiny Image']}\n```")
    op = ImageTaggingVLMMapper(api_or_hf_model="tiny-llm", is_api_model=True, **api_params(llm_server))
    out = op.process_batched({"text": ["a red thing"], "images": [[str(img), str(img)]]})
    assert out[Fields.meta][0]["image_tags"] == [["red-square", "tiny-image"]] * 2
    parts = llm_server.requests()[0]["messages"][1]["content"]
    assert parts[0]["type"] == "text" and "Text description: a red thing" in parts[0]["text"]
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,") and base64.b64decode(url.split(",", 1)[1]) == img.read_bytes()


def test_no_images_missing_file_and_unparsed(llm_server, tmp_path):
    llm_server.respond("not tags")
    op = ImageTaggingVLMMapper(api_or_hf_model="tiny-llm", is_api_model=True, try_num=1, **api_params(llm_server))
    assert op.process_batched({"text": ["t"], "images": [[]]})[Fields.meta][0]["image_tags"] == [[]]
    with pytest.raises(FileNotFoundError, match="nope.jpg"):
        op.process_batched({"text": ["t"], "images": [[str(tmp_path / "nope.jpg")]]})
    img = tmp_path / "b.png"
    Image.new("RGB", (2, 2)).save(img)
    with pytest.raises(LLMResponseError, match="not tags"):
        op.process_batched({"text": ["t"], "images": [[str(img)]]})


def test_vllm_default_needs_vllm():
    pytest.importorskip  # noqa: B018
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(Exception, match="vllm"):
            ImageTaggingVLMMapper()
