"""Every shell command in the README, CONTRIBUTING.md and docs/ runs as written (from the repo root).

A command block is a fenced ``sh``/``bash``/``console`` block. Install and test-runner steps
(``pip install ...``, ``python -m pytest ...``) are what CI itself does, so they are not re-run here;
everything else must run and exit 0. Paths in the docs therefore name files that exist in the repo.
"""
import glob
import os
import re
import shlex
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md", "CONTRIBUTING.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")) if not p.endswith("Operators.md"))
NOT_RERUN = ("pip ", "python -m pip ", "python -m pytest", "pytest ", "bash .ci/run", "uv pip ")
_BLOCK = re.compile(r"```(?:sh|bash|shell|console)\n(.*?)```", re.S)


def _commands():
    out, seen = [], set()
    for doc in DOCS:
        path = os.path.join(ROOT, doc)
        if not os.path.exists(path):
            continue
        for block in _BLOCK.findall(open(path, encoding="utf-8").read()):
            for line in block.splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                if not line or line.startswith("#"):
                    continue
                for part in (p.strip() for p in line.split("&&")):
                    if part and not part.startswith(NOT_RERUN) and part not in seen:
                        seen.add(part)  # a command several docs give is run once, under the first doc naming it
                        out.append((doc, part))
    return out


COMMANDS = _commands()


def test_the_docs_have_commands():
    assert len(COMMANDS) >= 8


# commands that tests with asserted values also run (tests/demos/test_demos.py::test_analyze,
# tests/analysis/test_analysis_outputs.py::test_auto_mode_analyses_auto_num_samples): slow target
SLOW = ("dj-analyze ",)
PARAMS = [pytest.param(d, c, marks=pytest.mark.slow) if c.startswith(SLOW) else (d, c) for d, c in COMMANDS]


@pytest.mark.parametrize("doc,command", PARAMS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_doc_command_runs(doc, command, tmp_path):
    for token in shlex.split(command):
        if token.endswith((".yaml", ".yml", ".py", ".jsonl")) and "/" in token and not token.startswith("out"):
            assert os.path.exists(os.path.join(ROOT, token)), f"{doc}: `{command}` names {token}, which is not in the repo"
    env = dict(os.environ, HF_DATASETS_CACHE=str(tmp_path / "hf-cache"))
    res = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"{doc}: `{command}` exited {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
