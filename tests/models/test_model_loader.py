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
    code = ("import sys, data_juicer.models.loader, data_juicer.models.nlp, data_juicer.ops.filter.words_num_filter, "
            "data_juicer.ops.filter.alphanumeric_filter, data_juicer.ops.filter.word_repetition_filter, "
            "data_juicer.ops.filter.language_id_score_filter, data_juicer.ops.filter.perplexity_filter, "
            "data_juicer.ops.filter.token_num_filter, data_juicer.ops.filter.text_action_filter, "
            "data_juicer.ops.filter.text_entity_dependency_filter, data_juicer.ops.mapper.sentence_split_mapper; "
            "print(sorted(m for m in ('sentencepiece', 'transformers', 'tokenizers', 'spacy', 'nltk', 'kenlm', "
            "'fasttext', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_model_dirs_order_and_several_folders(tmp_path, monkeypatch):
    import os as _os

    from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, model_dirs

    a, b, ext, cache = (tmp_path / n for n in ("a", "b", "ext", "cache"))
    monkeypatch.setenv(MODELS_DIR_ENV, f"{a}{_os.pathsep}{b}")
    monkeypatch.setenv(DJ_EXTERNAL_MODELS_ENV, str(ext))
    monkeypatch.setenv("DATA_JUICER_MODELS_CACHE", str(cache))
    assert model_dirs() == [str(a), str(b), str(ext), str(cache)]
    assert models_dir() == str(a)
    cache.mkdir()
    (cache / "en.sp.model").write_bytes(b"x")
    assert resolve_model_file("en.sp.model") == str(cache / "en.sp.model")
    b.mkdir()
    (b / "en.sp.model").write_bytes(b"y")
    assert resolve_model_file("en.sp.model") == str(b / "en.sp.model")


def test_packaged_model_and_alternative_names(tmp_path, monkeypatch):
    from data_juicer.models import loader

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    pkg = tmp_path / "site" / "fakepkg" / "res"
    pkg.mkdir(parents=True)
    (pkg / "m-1.2").mkdir()
    monkeypatch.setattr(loader, "package_dir", lambda module: str(tmp_path / "site" / module))
    monkeypatch.setitem(loader.PACKAGED_MODELS, "mymodel-*",
                        [loader.PackagedModel("fake-pkg", "fakepkg", "res/m-*", note="a substitute")])
    assert resolve_model_file("mymodel-2.0") == str(pkg / "m-1.2")
    (tmp_path / "mymodel.small").write_bytes(b"z")
    assert resolve_model_file("mymodel-2.0", alternatives=("mymodel.small",)) == str(tmp_path / "mymodel.small")
    monkeypatch.setattr(loader, "package_dir", lambda module: None)
    with pytest.raises(FileNotFoundError, match="fake-pkg"):
        resolve_model_file("mymodel-3.0")


def test_release_models_drops_only_unshared_models():
    from data_juicer.models.loader import loaded_models, release_models

    load_once(("k", "a"), object, owner="op1")
    load_once(("k", "b"), object, owner="op1")
    load_once(("k", "b"), object, owner="op2")
    assert release_models("op1") == 1
    assert loaded_models() == [("k", "b")]
    assert release_models("op2") == 1 and loaded_models() == []
    assert release_models("op3") == 0


def test_download_only_when_allowed(tmp_path, monkeypatch):
    import functools
    import http.server
    import threading

    from data_juicer.models import loader

    served = tmp_path / "served"
    served.mkdir()
    (served / "xx.arpa.bin").write_bytes(b"model bytes")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
        monkeypatch.setattr(loader, "DOWNLOAD_URLS", {"*.arpa.bin": [base + "missing/", base]})
        monkeypatch.delenv(loader.ALLOW_DOWNLOAD_ENV, raising=False)
        with pytest.raises(FileNotFoundError, match="DJ_ALLOW_DOWNLOAD=1"):
            resolve_model_file("xx.arpa.bin")
        monkeypatch.setenv(loader.ALLOW_DOWNLOAD_ENV, "1")
        got = resolve_model_file("xx.arpa.bin")  # the first source fails (404), the second serves it
        assert got == str(tmp_path / "models" / "xx.arpa.bin")
        assert open(got, "rb").read() == b"model bytes"
        with pytest.raises(FileNotFoundError, match="downloading model 'yy.arpa.bin' failed"):
            resolve_model_file("yy.arpa.bin")
    finally:
        server.shutdown()
