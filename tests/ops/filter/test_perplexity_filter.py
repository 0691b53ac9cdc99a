import codecs
import contextlib
import io

import pytest
from arpa_lm import write_arpa
from text_filter_data import CORPUS, SENTENCEPIECE_MD5, TEXTS, train_sentencepiece

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models import loader
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

spm = pytest.importorskip("sentencepiece", reason="perplexity_filter needs sentencepiece")
kenlm = pytest.importorskip("kenlm", reason="perplexity_filter needs kenlm (pip install ufal.kenlm)")

PPL_TEXTS = TEXTS + [
    "the quick brown fox jumps over the lazy dog", "dog lazy the over jumps fox brown quick the",
    "Beautiful is better than ugly.\nExplicit is better than implicit.",
    "Errors should never pass silently.\r\nUnless explicitly silenced.", "zzqx vbnm qwpt",
    "Now is better than never.\u2028Although never is often better than right now.",
]
# values from Data-Juicer 1.6.1, given the same en.sp.model and en.arpa.bin (built by `models` below)
PPL = [0.0, 292.4, 56.9, 271.7, 218.7, 510.3, 2042.3, 163.5, 211.5, 424.8, 0.0, 0.0, 519.0, 1114.1, 785.1, 452.3,
       518.2, 584.0, 933.1, 2.6, 26.9, 308.9, 125.0, 1044.1, 1.3, 16.3, 3.2, 5.4, 898.8, 4.0]
KEEP_DEFAULT = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
KEEP_3_40 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1]


def zen_of_python():
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13").splitlines()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """en.sp.model (text_filter_data's tiny sentencepiece model) and en.arpa.bin: a trigram model
    of its pieces over CORPUS and the Zen of Python."""
    folder = tmp_path_factory.mktemp("ppl-models")
    md5 = train_sentencepiece(str(folder / "en.sp.model"))
    sp = spm.SentencePieceProcessor(model_file=str(folder / "en.sp.model"))
    write_arpa([sp.encode(s, out_type=str) for s in CORPUS + zen_of_python() if s], str(folder / "en.arpa.bin"))
    return folder, md5


@pytest.fixture(autouse=True)
def models_home(model_dir, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(model_dir[0]))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(model_dir[0]))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    clear_models()
    yield model_dir[0]
    clear_models()


def make(**kw):
    return OPERATORS.get("perplexity_filter")(**kw)


def stats_and_keep(op, texts=PPL_TEXTS, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s["perplexity"] for s in samples[Fields.stats]], [int(k) for k in op.process_batched(samples)], samples


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_ppl": 3, "max_ppl": 40}, KEEP_3_40)])
def test_matches_data_juicer(model_dir, kw, keep, context):
    if model_dir[1] != SENTENCEPIECE_MD5:
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    ppl, kept, samples = stats_and_keep(make(**kw), context=context)
    assert ppl == PPL
    assert kept == keep
    if context:
        assert set(samples[Fields.context][2]) == {f"{InterVars.words}-sentencepiece(lang='en')-text"}
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in PPL_TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(PPL_TEXTS, keep) if k]


def test_fluent_text_scores_lower_than_shuffled_words():
    ppl, _, _ = stats_and_keep(make(), ["the quick brown fox jumps over the lazy dog",
                                        "dog lazy the over jumps fox brown quick the"])
    assert ppl[0] < ppl[1] / 5


def test_shares_the_sentencepiece_split_with_words_num_filter(models_home):
    words_op = OPERATORS.get("words_num_filter")(tokenization=True)
    samples = {"text": ["the quick brown fox"], Fields.stats: [{}], Fields.context: [{}]}
    words_op.compute_stats_batched(samples, context=True)
    key = f"{InterVars.words}-sentencepiece(lang='en')-text"
    assert key in samples[Fields.context][0]
    # a split already there is reused, not recomputed
    sp = spm.SentencePieceProcessor(model_file=str(models_home / "en.sp.model"))
    samples[Fields.context][0][key] = sp.encode("the lazy dog", out_type=str)
    make().compute_stats_batched(samples, context=True)
    assert samples[Fields.stats][0]["perplexity"] == stats_and_keep(make(), ["the lazy dog"])[0][0]


def test_reuses_existing_stat():
    rows = [{"text": "zzqx", Fields.stats: {"perplexity": 10.0}}]
    assert run_ops_on_rows([make(max_ppl=20)], rows)[0][Fields.stats] == {"perplexity": 10.0}


def test_models_load_once_per_process_and_are_released():
    op = make()
    stats_and_keep(op, ["a"])
    stats_and_keep(make(), ["b"])
    kinds = sorted(k[0] for k in loader.loaded_models())
    assert kinds == ["kenlm", "sentencepiece"]
    assert loader.release_models(op.name) == 2 and not loader.loaded_models()


def test_missing_kenlm_model_names_the_file(tmp_path, monkeypatch, models_home):
    (tmp_path / "de.sp.model").write_bytes((models_home / "en.sp.model").read_bytes())
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        make(lang="de")
    msg = str(err.value)
    assert str(tmp_path / "de.arpa.bin") in msg and str(tmp_path / "de.arpa") in msg and MODELS_DIR_ENV in msg


def test_invalid_kenlm_file_is_a_clear_error(tmp_path, monkeypatch, models_home):
    (tmp_path / "en.sp.model").write_bytes((models_home / "en.sp.model").read_bytes())
    (tmp_path / "en.arpa.bin").write_text("not a model")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ValueError, match="not a valid KenLM model"):
        stats_and_keep(make(), ["hello"])
