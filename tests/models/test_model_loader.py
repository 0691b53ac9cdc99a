import os
import subprocess
import sys

import pytest

from data_juicer.models.loader import (
    MODELS_DIR_ENV,
    clear_models,
    load_once,
    load_sentencepiece,
    model_key,
    models_dir,
    resolve_hf_model,
    resolve_model_file,
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_models()
    yield
    clear_models()


def test_models_dir_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(MODELS_DIR_ENV, raising=False)
    monkeypatch.delenv("DATA_JUICER_MODELS_CACHE", raising=False)
    assert models_dir() == os.path.expanduser(os.path.join("~", ".cache", "data_juicer", "models"))
    monkeypatch.setenv("DATA_JUICER_MODELS_CACHE", str(tmp_path / "dj"))
    assert models_dir() == str(tmp_path / "dj")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "ours"))
    assert models_dir() == str(tmp_path / "ours")


def test_resolves_by_name_or_explicit_path(tmp_path, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    (tmp_path / "en.sp.model").write_bytes(b"x")
    (tmp_path / "other.bin").write_bytes(b"y")
    assert resolve_model_file("en.sp.model") == str(tmp_path / "en.sp.model")
    assert resolve_model_file("en.sp.model", path=str(tmp_path / "other.bin")) == str(tmp_path / "other.bin")


def test_missing_model_names_the_path_and_the_fixes(tmp_path, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        resolve_model_file("de.sp.model", who="words_num_filter", path_param="model_path")
    msg = str(err.value)
    for part in ("'de.sp.model'", "words_num_filter", str(tmp_path / "de.sp.model"), MODELS_DIR_ENV,
                 "`model_path`", "never downloaded"):
        assert part in msg
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_model_file("de.sp.model", path=str(tmp_path / "nope.model"), who="x")


def test_missing_hf_model_names_models_dir_and_hf_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(FileNotFoundError) as err:
        resolve_hf_model("org/some-model", who="alphanumeric_filter")
    msg = str(err.value)
    assert str(tmp_path / "org" / "some-model") in msg and str(tmp_path / "hub") in msg
    (tmp_path / "org" / "some-model").mkdir(parents=True)
    assert resolve_hf_model("org/some-model") == str(tmp_path / "org" / "some-model")


def test_load_once_builds_a_model_once_per_key():
    calls = []
    build = lambda: calls.append(1) or object()
    a = load_once(("k", 1), build)
    assert load_once(("k", 1), build) is a and len(calls) == 1
    assert load_once(("k", 2), build) is not a and len(calls) == 2


def test_model_key_is_stable_and_readable():
    assert model_key("sentencepiece", lang="en") == "sentencepiece(lang='en')"


def test_invalid_sentencepiece_file_is_a_clear_error(tmp_path):
    pytest.importorskip("sentencepiece", reason="needs sentencepiece (pip install sentencepiece)")
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a valid sentencepiece model"):
        load_sentencepiece("en", path=str(bad), who="words_num_filter")


def test_importing_the_loader_and_ops_stays_light():
    code = ("import sys, data_juicer.models.loader, data_juicer.ops.filter.words_num_filter, "
            "data_juicer.ops.filter.alphanumeric_filter, data_juicer.ops.filter.word_repetition_filter; "
            "print(sorted(m for m in ('sentencepiece', 'transformers', 'tokenizers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
