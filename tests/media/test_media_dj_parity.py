"""Our media ops against Data-Juicer 1.6.1's own source, function by function (slow: fetches its wheel).

Data-Juicer's op modules are executed from its wheel (``pip download --no-deps
py-data-juicer==1.6.1``, cached in ``~/.cache/data_juicer/djsrc``) with their package imports
stubbed, so its parsing / scoring code runs on the same inputs as ours without installing it.
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from data_juicer.media.audio import load_audio
from data_juicer.media.image import load_image
from data_juicer.ops.registry import OPERATORS
from tests.media.files import media_files  # noqa: F401
from tests.media.testdata import real_testdata  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")]
CACHE = os.path.expanduser("~/.cache/data_juicer/djsrc")


@pytest.fixture(scope="module")
def dj_ops():
    if not glob.glob(os.path.join(CACHE, "py_data_juicer-1.6.1-*.whl")):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "py-data-juicer==1.6.1",
                        "-d", CACHE], check=True, capture_output=True)
    whl = zipfile.ZipFile(glob.glob(os.path.join(CACHE, "py_data_juicer-1.6.1-*.whl"))[0])

    class Reg:
        def register_module(self, name):
            return lambda c: c

    class Base:
        def __init__(self, *a, **k):
            self.text_key, self.image_key = k.get("text_key", "text"), k.get("image_key", "images")

    def load(rel, extra=None):
        src = whl.read(f"data_juicer/ops/{rel}").decode()
        for pat in (r"^from \.\.base_op import .*$", r"^from \.\.op_fusion import .*$",
                    r"^@\w+\.register_module\(.*\)$",
                    r"^from data_juicer\.utils\.(mm_utils|constant) import .*$",
                    r"^from data_juicer\.utils\.lazy_loader import LazyLoader$"):
            src = re.sub(pat, "", src, flags=re.M)
        src = re.sub(r'^(\w+) = LazyLoader\("([\w.]+)".*\)$', r"import \2 as \1", src, flags=re.M)
        src = src.replace("LazyLoader.check_packages", "(lambda *a, **k: None)")
        g = {"__name__": "dj_" + rel.replace("/", "_"), "Mapper": Base, "Filter": Base, "OPERATORS": Reg(),
             "Fields": None, "StatsKeys": None, **(extra or {})}
        exec(compile(src, rel, "exec"), g)
        return g

    return load


def test_subplot_scores_equal(dj_ops, media_files, real_testdata):
    dj = dj_ops("filter/image_subplot_filter.py")["ImageSubplotFilter"]()
    ours = OPERATORS.get("image_subplot_filter")()
    paths = sorted(glob.glob(f"{real_testdata}/image/skimage/*.png"))[:12] + [media_files["grid"], media_files["rgb"]]
    for p in paths:
        img = load_image(p)
        assert np.allclose(dj._detect_subplot(img), ours.detect(img), atol=1e-12, rtol=0), p


def test_nmf_snr_equal(dj_ops, media_files, real_testdata):
    from data_juicer.ops.filter.audio_nmf_snr_filter import nmf_snr

    dj = dj_ops("filter/audio_nmf_snr_filter.py")["compute_nmf_snr"]
    paths = [media_files["noisy"], media_files["speech"], media_files["tone8k_flac"]] + sorted(
        glob.glob(f"{real_testdata}/audio/speech/*.wav"))[:3]
    for p in paths:
        y, _ = load_audio(p)
        assert abs(float(dj(y, 40)) - nmf_snr(y, 40)) <= 1e-6 * max(1.0, abs(nmf_snr(y, 40))), p


def test_latex_rows_equal(dj_ops):
    from tests.ops.mapper.test_latex_figure_context_extractor_mapper import PAPER

    dj = dj_ops("mapper/latex_figure_context_extractor_mapper.py", {"logger": __import__("logging").getLogger()})
    dj_op = dj["LatexFigureContextExtractorMapper"]()
    ours = OPERATORS.get("latex_figure_context_extractor_mapper")()
    batch = {"text": [PAPER, "nothing", PAPER[:300], PAPER.replace("\\ref", "\\autoref")], "id": [1, 2, 3, 4]}
    a = dj_op.process_batched({k: list(v) for k, v in batch.items()})
    b = ours.process_batched({k: list(v) for k, v in batch.items()})
    assert set(a) == set(b) and all(a[k] == b[k] for k in b) and len(b["id"]) > 5
