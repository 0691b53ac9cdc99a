import tarfile

import pytest
from spacy_test_data import SPACY_TEXTS, needs_spacy, packaged_english_model

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

# values from Data-Juicer 1.6.1 (see spacy_test_data)
EDGES = [[], [], [1, 1, 1, 3], [1, 0, 1], [1], [1, 4, 2, 1, 1, 1, 1, 1, 1, 1, 3], [2, 2], [2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
         2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 2], [0], [3, 3, 3, 3, 3, 2, 1], [], [], [0, 1, 1, 2, 3, 1, 2], [5, 1,
         2, 1], [3], [1, 6, 1, 5, 1, 1], [2, 2, 4, 1], [1, 2, 2, 2, 1], [1, 2, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4], [3], [1, 1, 1, 4, 1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 6, 1, 1, 1, 1, 5, 1, 1,
         4, 1, 2, 1], [2, 4, 5, 2], [1, 3, 1, 1, 2, 1], [2, 2, 1, 3], [1, 2, 2], [1, 1, 2], [1], [0], [2, 2, 2], [1,
         1, 1, 1, 1, 1, 1, 1], [3, 1, 2], [2, 2, 1], [], [1, 2, 1, 1, 1], []]
KEEP_ALL_1 = [0, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1,
    0]
KEEP_ANY_2 = [0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1,
    0]
KEEP_ALL_2 = [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
    0]


@pytest.fixture(autouse=True)
def models_home(tmp_path, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    clear_models()
    yield tmp_path
    clear_models()


def make(**kw):
    return OPERATORS.get("text_entity_dependency_filter")(**kw)


@pytest.mark.slow  # loads a spaCy pipeline (2-10 s on a busy 2-core machine)
def test_matches_data_juicer():
    packaged_english_model()
    for kw, keep in [({}, KEEP_ALL_1), ({"min_dependency_num": 2, "any_or_all": "any"}, KEEP_ANY_2),
                     ({"min_dependency_num": 2}, KEEP_ALL_2)]:
        op = make(**kw)
        samples = {"text": list(SPACY_TEXTS), Fields.stats: [{} for _ in SPACY_TEXTS]}
        op.compute_stats_batched(samples)
        assert [s["num_dependency_edges"] for s in samples[Fields.stats]] == EDGES
        assert [int(k) for k in op.process_batched(samples)] == keep
        out = run_ops_on_rows([make(**kw)], [{"text": t} for t in SPACY_TEXTS])
        assert [r["text"] for r in out] == [t for t, k in zip(SPACY_TEXTS, keep) if k]


def _fake_model(folder):
    folder.mkdir(parents=True)
    (folder / "config.cfg").write_text("[nlp]\n")


def test_decisions_from_given_stats(models_home):
    needs_spacy()
    _fake_model(models_home / "en_core_web_md-3.7.0")
    rows = [{"text": str(i), Fields.stats: {"num_dependency_edges": e}} for i, e in enumerate([[], [0, 2], [2, 3]])]
    assert [r["text"] for r in run_ops_on_rows([make(min_dependency_num=2)], rows)] == ["2"]
    assert [r["text"] for r in run_ops_on_rows([make(min_dependency_num=2, any_or_all="any")], rows)] == ["1", "2"]
    # reversed: each count must lie outside [2, inf), the bound itself counting as outside (as Data-Juicer)
    assert [r["text"] for r in run_ops_on_rows([make(min_dependency_num=2, reversed_range=True)], rows)] == ["1"]


def test_data_juicer_model_archive_is_unpacked(models_home):
    """Data-Juicer keeps spaCy models as <name>.tar.gz (a model sdist); it is unpacked beside it."""
    needs_spacy()
    src = models_home / "src"
    _fake_model(src / "en_core_web_md-3.7.0" / "en_core_web_md" / "en_core_web_md-3.7.0")
    with tarfile.open(models_home / "en_core_web_md-3.7.0.tar.gz", "w:gz") as tar:
        tar.add(src / "en_core_web_md-3.7.0", arcname="en_core_web_md-3.7.0")
    op = make()
    assert op.model_path == str(models_home / "en_core_web_md-3.7.0")
    assert (models_home / "en_core_web_md-3.7.0" / "config.cfg").is_file()
    assert make().model_path == op.model_path  # the second time the folder is used


def test_bad_params(models_home):
    needs_spacy()
    with pytest.raises(ValueError, match="any_or_all"):
        make(any_or_all="most")
    with pytest.raises(ValueError, match="not supported"):
        make(lang="de")
