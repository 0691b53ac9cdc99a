import shutil
from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import tiny_causal_lm

OP = "sentence_augmentation_mapper"
TEXTS = ["The cat sat on the mat.", "今天天气很好。", "Stocks rose 5% 📈 today!", ""]
# values from Data-Juicer 1.6.1 on the same tiny GPT-2 folder (random weights: the words are noise)
DJ = {
    "chat": ["##castcast cock cock cock cock cock cock", "##castcastcastcast cock cock cock cock",
             "##castcast cock cock cock cock cock cock", "##cent cocknallynally cock cock cock cock"],
    "vicuna": ["paranally cock cock cock cock cock cock", "para愛 cock cock愛castcastcast",
               "paranally cock cock cock cock cock cock", "cock cock cock cock cock cock cockffled"],
    "beams": ["euro elegantcastcastcastcast", "elegant elegantcastcastcastcast", "##ods cockcastcastcastcast",
              "cock cock cock cock cock cock"],
}


def make(**kw):
    return OPERATORS.get(OP)(**kw)


@pytest.fixture(scope="module")
def lm_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("aug")
    chat = tiny_causal_lm(base / "lm", chat=True)
    vicuna = shutil.copytree(chat, base / "tiny-vicuna")
    return chat, str(vicuna)


def test_params_and_no_task(tmp_path):
    with pytest.raises(ValueError, match="text_key_second"):
        make(task_sentence="x")
    with pytest.raises(FileNotFoundError, match="no-such/llm"):
        make(hf_model="no-such/llm", task_sentence="x", text_key_second="aug")
    # no task sentence: both fields emptied, no model needed (Data-Juicer behaviour)
    out = run_ops_on_rows([make(hf_model="no-such/llm", text_key_second="aug")], [{"text": "x", "k": 1}])
    assert out == [{"text": "", "k": 1, "aug": ""}]
    assert make(text_key="s", text_key_second="aug", hf_model="no-such/llm").text_key == "s"


@pytest.mark.slow
def test_matches_data_juicer(lm_dirs):
    chat, vicuna = lm_dirs
    for name, folder in [("chat", chat), ("vicuna", vicuna)]:
        op = make(hf_model=folder, task_sentence="Rewrite it formally.", max_new_tokens=8, text_key_second="aug")
        out = run_ops_on_rows([op], [{"text": t} for t in TEXTS])
        assert [r["aug"] for r in out] == DJ[name]
        assert [r["text"] for r in out] == TEXTS
    op = make(hf_model=chat, task_sentence="Say it again.", max_new_tokens=6, num_beams=2, text_key="s",
              text_key_second="aug", system_prompt="Be brief.")
    assert [r["aug"] for r in run_ops_on_rows([op], [{"s": t} for t in TEXTS])] == DJ["beams"]
