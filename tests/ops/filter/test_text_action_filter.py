import pytest
from spacy_test_data import SPACY_TEXTS, needs_spacy, packaged_english_model

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models import loader
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

# values from Data-Juicer 1.6.1 (see spacy_test_data)
ACTIONS = [0, 0, 0, 1, 0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 1, 0, 1, 2, 2, 0, 0, 1, 4, 1, 2, 0, 2, 0]
KEEP_ACTION_1 = [0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0,
    1, 0]
KEEP_ACTION_2 = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0,
    1, 0]


@pytest.fixture(autouse=True)
def models_home(tmp_path, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    clear_models()
    yield tmp_path
    clear_models()


def make(**kw):
    return OPERATORS.get("text_action_filter")(**kw)


@pytest.mark.slow  # loads a spaCy pipeline (2-10 s on a busy 2-core machine)
@pytest.mark.parametrize("kw,keep", [({}, KEEP_ACTION_1), ({"min_action_num": 2}, KEEP_ACTION_2)])
def test_matches_data_juicer(kw, keep):
    folder = packaged_english_model()
    op = make(**kw)
    assert op.model_path == folder
    samples = {"text": list(SPACY_TEXTS), Fields.stats: [{} for _ in SPACY_TEXTS]}
    op.compute_stats_batched(samples)
    assert [s["num_action"] for s in samples[Fields.stats]] == ACTIONS
    assert [int(k) for k in op.process_batched(samples)] == keep
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in SPACY_TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(SPACY_TEXTS, keep) if k]
    assert loader.release_models(op.name) == 1


def test_a_model_folder_in_the_models_dir_wins(models_home):
    needs_spacy()
    model = models_home / "en_core_web_md-3.7.0"
    model.mkdir()
    (model / "config.cfg").write_text("[nlp]\n")
    assert make().model_path == str(model)


def test_reuses_existing_stat(models_home):
    needs_spacy()
    model = models_home / "en_core_web_md-3.7.0"
    model.mkdir()
    (model / "config.cfg").write_text("[nlp]\n")
    rows = [{"text": "He runs and jumps.", Fields.stats: {"num_action": 0}}]
    assert run_ops_on_rows([make()], rows) == []  # the stat given is used: no model is loaded


def test_bad_lang_and_missing_model(models_home, monkeypatch):
    needs_spacy()
    with pytest.raises(ValueError, match="lang 'fr' is not supported"):
        make(lang="fr")
    monkeypatch.setattr(loader, "package_dir", lambda module: None)
    with pytest.raises(FileNotFoundError) as err:
        make(lang="zh")
    msg = str(err.value)
    assert str(models_home / "zh_core_web_md-3.7.0") in msg and "zh-core-web-sm" in msg and MODELS_DIR_ENV in msg
