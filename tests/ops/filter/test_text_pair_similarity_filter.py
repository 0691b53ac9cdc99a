from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not (find_spec("torch") and find_spec("transformers")),
                                reason="needs torch and transformers")

from tests.ops.hf_tiny_models import minilm_dir, tiny_clip

ROWS = [
    {"text": "a cat sits on the mat", "t2": "a kitten sits on a rug"},
    {"text": "The stock market fell sharply today.", "t2": "Shares dropped a lot this afternoon."},
    {"text": "hello", "t2": ""},
    {"text": "", "t2": "world"},
    {"text": "今天天气很好", "t2": "今天是晴天"},
    {"text": "emoji 😀 party 🎉", "t2": "a happy celebration"},
    {"text": "I love programming in Python.", "t2": "The weather is cold in winter."},
    {"text": "word " * 40, "t2": "word"},
]
# values from Data-Juicer 1.6.1 on the same tiny CLIP folder (DJ run with get_text_features
# returning the projected text embeddings, as under transformers 4: with transformers 5 DJ 1.6.1
# indexes the returned output object and fails)
DJ = [([0.9638357758522034], True), ([0.47230836749076843], False), ([], True), ([], True),
      ([0.7817584872245789], True), ([0.6640036106109619], True), ([0.7003004550933838], True),
      ([0.49890249967575073], False)]


def make(**kw):
    return OPERATORS.get("text_pair_similarity_filter")(**kw)


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    from transformers import CLIPImageProcessor

    folder = tiny_clip(tmp_path_factory.mktemp("tiny_clip"))
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def test_bad_params(tmp_path):
    with pytest.raises(ValueError, match="any_or_all"):
        make(hf_clip=str(tmp_path), text_key_second="t2", any_or_all="some")
    with pytest.raises(ValueError, match="text_key_second"):
        make(hf_clip=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no-such/clip"):
        make(hf_clip="no-such/clip", text_key_second="t2")


@pytest.mark.slow
def test_matches_data_juicer_on_tiny_clip(clip_dir):
    op = make(hf_clip=clip_dir, text_key_second="t2", min_score=0.5, max_score=1.0)
    rows = [dict(r) for r in ROWS]
    batch = {"text": [r["text"] for r in rows], "t2": [r["t2"] for r in rows], Fields.stats: [{} for _ in rows]}
    op.compute_stats_batched(batch)
    keep = op.process_batched(batch)
    for stat, k, (want, want_keep) in zip(batch[Fields.stats], keep, DJ):
        assert stat["text_pair_similarity"] == pytest.approx(want, abs=1e-5)
        assert k == want_keep
    kept = run_ops_on_rows([op], [dict(r) for r in ROWS])
    assert len(kept) == sum(k for _, k in DJ)


@pytest.mark.slow
def test_any_all_and_reuse(clip_dir):
    rows = [{"text": "x", "t2": "y", Fields.stats: {"text_pair_similarity": [0.2, 0.9]}}]
    assert len(run_ops_on_rows([make(hf_clip=clip_dir, text_key_second="t2", min_score=0.5)], rows)) == 1
    assert run_ops_on_rows([make(hf_clip=clip_dir, text_key_second="t2", min_score=0.5, any_or_all="all")],
                           rows) == []


@pytest.mark.slow
def test_sentence_embedding_model_uses_mean_pooling():
    st = pytest.importorskip("sentence_transformers")
    folder = minilm_dir()
    rows = [{"text": "A cat is sitting on the mat.", "t2": "A kitten rests on a rug."},
            {"text": "A cat is sitting on the mat.", "t2": "Quarterly earnings beat expectations."}]
    batch = {"text": [r["text"] for r in rows], "t2": [r["t2"] for r in rows], Fields.stats: [{}, {}]}
    make(hf_clip=folder, text_key_second="t2").compute_stats_batched(batch)
    sims = [s["text_pair_similarity"][0] for s in batch[Fields.stats]]
    # independent check: sentence-transformers' own pipeline (mean pooling; its final
    # normalisation does not change a cosine)
    model = st.SentenceTransformer(folder, device="cpu")
    e = model.encode([r["text"] for r in rows] + [r["t2"] for r in rows], convert_to_tensor=True)
    import torch

    want = torch.cosine_similarity(e[:2], e[2:], dim=1).tolist()
    assert sims == pytest.approx(want, abs=1e-5)
    assert sims[0] > 0.5 > sims[1]
