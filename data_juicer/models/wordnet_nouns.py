"""WordNet's noun lemmatizer (NLTK's ``WordNetLemmatizer().lemmatize(word)``, pos 'n'), offline.

NLTK downloads the WordNet corpus on demand and (since 3.9) refuses corpus folders outside its
own data path. Only two files of it serve a noun lemma: ``index.noun`` (the lemmas) and
``noun.exc`` (irregular plurals); they are read here from ``corpora/wordnet`` of each nltk_data
folder (``<model folder>/nltk_data``, the model folders, ``$NLTK_DATA``, NLTK's path) or from
Debian's ``wordnet-base`` (``/usr/share/wordnet``), and NLTK's morphy rules are applied as NLTK does.
"""

from __future__ import annotations

import os

from data_juicer.models.loader import load_once

FILES = ("index.noun", "noun.exc")
DEBIAN_DIR = "/usr/share/wordnet"
# NLTK's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS for nouns
NOUN_RULES = [("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
              ("men", "man"), ("ies", "y")]


def _dirs() -> list[str]:
    from data_juicer.models.nlp import _nltk_data_dirs

    return [os.path.join(d, "corpora", "wordnet") for d in _nltk_data_dirs()] + [DEBIAN_DIR]


def check_wordnet(who: str = "") -> str:
    looked = []
    for d in _dirs():
        if all(os.path.isfile(os.path.join(d, f)) for f in FILES):
            return d
        looked.append(d)
    raise FileNotFoundError(
        f"WordNet's noun index{' (needed by ' + who + ')' if who else ''} was not found; looked at: "
        f"{'; '.join(looked)} (each must hold {', '.join(FILES)}). Nothing is downloaded: install Debian's "
        "wordnet-base (`apt-get install wordnet-base`), or put NLTK's wordnet corpus under "
        "<nltk_data>/corpora/wordnet (`python -m nltk.downloader wordnet` on a machine with network access).")


class NounLemmatizer:
    def __init__(self, folder: str):
        self.lemmas = set()
        with open(os.path.join(folder, "index.noun"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(" ") or not line.strip():
                    continue  # the licence header
                self.lemmas.add(line.split(" ", 1)[0])
        self.exceptions: dict[str, list[str]] = {}
        with open(os.path.join(folder, "noun.exc"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if parts:
                    self.exceptions[parts[0]] = parts[1:]

    def _keep(self, forms):
        out, seen = [], set()
        for form in forms:
            if form in self.lemmas and form not in seen:
                out.append(form)
                seen.add(form)
        return out

    def morphy(self, form: str) -> list[str]:
        def rules(forms):
            return [f[:-len(old)] + new for f in forms for old, new in NOUN_RULES if f.endswith(old)]

        forms = self.exceptions[form] if form in self.exceptions else rules([form])
        return self._keep([form] + forms)

    def lemmatize(self, word: str) -> str:
        lemmas = self.morphy(word)
        return min(lemmas, key=len) if lemmas else word


def load_noun_lemmatizer(who: str = "") -> NounLemmatizer:
    folder = check_wordnet(who)
    return load_once(("wordnet-nouns", folder), lambda: NounLemmatizer(folder), owner=who or None)
