"""report.html opened in real headless Chromium: every plot loads, a screenshot goes to tests/artifacts/."""

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from data_juicer.cli.analyze import main as analyze
from tests.analysis.helpers import FILTERS, check_png, job_analysis_dir, rows
from tests.conftest import write_jsonl

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")

CHROMIUM = os.environ.get("DJ_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "artifacts")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--virtual-time-budget=10000"]

# appended to a copy of the report: after load, writes what the page shows into the DOM for --dump-dom
PROBE = """<script>window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var out = {images: imgs.length, tables: document.querySelectorAll('table').length,
             loaded: imgs.map(function (i) { return {file: i.getAttribute('data-file'), complete: i.complete,
                                                    w: i.naturalWidth, h: i.naturalHeight,
                                                    shown: i.getBoundingClientRect().width}; })};
  var pre = document.createElement('pre'); pre.id = 'dj-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});</script>"""


def _chromium(args, tmp_path, timeout=90):
    profile = tmp_path / f"chromium-profile-{len(os.listdir(tmp_path))}"  # fresh user data dir per launch
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="chromium is not installed (apt-get install chromium)")
def test_report_renders_every_plot_in_chromium(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", rows())
    # np 2: the per-stat plots are drawn by two forked processes
    recipe = {"project_name": "t", "np": 2, "dataset_path": data, "export_path": str(tmp_path / "out" / "r.jsonl"),
              "process": FILTERS}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True, sort_keys=False))
    assert analyze(["--config", str(path)]) == 0
    folder = job_analysis_dir(tmp_path / "out")
    report = os.path.join(folder, "report.html")
    html = open(report, encoding="utf-8").read()
    assert not re.search(r'(src|href)="(https?:|file:|//)', html)  # self-contained: nothing fetched from outside
    pngs = sorted(f for f in os.listdir(folder) if f.endswith(".png"))
    embedded = sorted(re.findall(r'data-file="([^"]+)"', html))
    assert embedded == pngs  # every plot file is in the page
    assert "text_length_filter min_len 10, max_len 200 would drop 25.0% (3 of 12)" in html
    assert "min_len: 10" in html  # the recipe itself

    probe_page = tmp_path / "probe.html"
    probe_page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    res = _chromium(["--window-size=1280,2000", "--dump-dom", probe_page.as_uri()], tmp_path)
    m = re.search(r'<pre id="dj-probe">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no probe output from chromium (rc={res.returncode}): {res.stderr[-1500:]}"
    seen = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert seen["images"] == len(pngs) and seen["tables"] >= 1 + len(FILTERS)
    for img in seen["loaded"]:
        assert img["complete"] and img["w"] > 0 and img["h"] > 0 and img["shown"] > 0, img

    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "analysis_report.png")
    if os.path.exists(shot):
        os.remove(shot)
    res = _chromium(["--window-size=1280,4000", f"--screenshot={shot}", report], tmp_path)
    assert os.path.isfile(shot), f"no screenshot (rc={res.returncode}): {res.stderr[-1500:]}"
    check_png(shot, min_size=(1000, 1000))
    shutil.copy(report, os.path.join(ARTIFACTS, "analysis_report.html"))
