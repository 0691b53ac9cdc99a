"""Shared fixtures of the analysis tests: one small corpus, one dj-analyze run per module."""

import os

import numpy as np

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! " * 12,
    "short",
    "",
    "中文文本，测试一下分析功能。" * 3,
    "emoji 🎉🎉 party 🎈 time\nsecond line here\nthird",
    "<p>some <b>html</b> text &amp; more</p>",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n" * 4,
    "1234567890 !!!! ???? ....",
    "A line.\nAnother, much longer line with more words in it than the first one.\nx",
    "word " * 40,
]

FILTERS = [
    {"text_length_filter": {"min_len": 10, "max_len": 200}},
    {"words_num_filter": {"lang": "en", "tokenization": False, "min_num": 3}},
    {"alphanumeric_filter": {"tokenization": False, "min_ratio": 0.5}},
    {"special_characters_filter": {"max_ratio": 0.25}},
    {"maximum_line_length_filter": {"min_len": 5, "max_len": 150}},
]


def rows():
    return [{"id": i, "text": t} for i, t in enumerate(TEXTS)]


def job_analysis_dir(out_dir) -> str:
    jobs = [d for d in os.listdir(out_dir) if os.path.isdir(os.path.join(out_dir, d))]
    assert len(jobs) == 1, jobs
    return os.path.join(out_dir, jobs[0], "analysis")


def check_png(path, min_size=(200, 150)):
    """A real PNG: decodes, is at least ``min_size`` and is not one flat colour."""
    from PIL import Image

    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", path
    with Image.open(path) as im:
        im.load()
        w, h = im.size
        px = np.asarray(im.convert("RGB"))
    assert w >= min_size[0] and h >= min_size[1], (path, im.size)
    packed = (px[..., 0].astype(np.uint32) << 16) | (px[..., 1].astype(np.uint32) << 8) | px[..., 2]
    colours = np.unique(packed)
    assert len(colours) > 8, (path, len(colours))
    non_white = (px < 240).any(axis=2).mean()
    assert non_white > 0.01, (path, non_white)  # something is drawn, not a blank canvas
    return w, h
