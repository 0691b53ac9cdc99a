"""Shared helpers for the benchmark and compatibility scripts (not part of the package).

Finding the two ``dj-process`` commands (ours, and Data-Juicer 1.6.1's in its own venv), running a
recipe as a subprocess while sampling the memory of its whole process tree, and comparing two
exported JSONL results as parsed JSON.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import yaml

BENCH_ROOT = Path(__file__).resolve().parent
REPO_ROOT = BENCH_ROOT.parent
DEFAULT_DJ_VENV = "/work/djref"
OP_NAME_RE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)*_(?:mapper|filter|deduplicator|selector|grouper|aggregator)\b")


# ------------------------------------------------------------------ commands
def ours_cmd() -> list[str]:
    """Our ``dj-process``: next to the running interpreter if installed there, else on PATH."""
    local = Path(sys.executable).parent / "dj-process"
    if local.exists():
        return [str(local)]
    found = shutil.which("dj-process")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from data_juicer.cli.process import main; sys.exit(main())"]


def ours_available() -> tuple[bool, str]:
    r = subprocess.run([sys.executable, "-c", "import data_juicer.cli.process as m; assert callable(m.main)"],
                       capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def dj_paths(spec: str | None = None) -> tuple[str, str]:
    """Resolve the Data-Juicer reference as (python, dj-process).

    ``spec`` (or env ``DJ_REF_VENV``, default /work/djref) may be the venv folder, its python, or its dj-process.
    """
    spec = spec or os.environ.get("DJ_REF_VENV") or DEFAULT_DJ_VENV
    p = Path(spec)
    if p.is_dir():
        py, dj = p / "bin" / "python", p / "bin" / "dj-process"
    elif p.name.startswith("dj-process"):
        py, dj = p.parent / "python", p
    else:
        py, dj = p, p.parent / "dj-process"
    if not py.exists() or not dj.exists():
        raise SystemExit(f"Data-Juicer reference not found at {spec!r} (need {py} and {dj}). Create it with:\n"
                         f"  python3.11 -m venv {DEFAULT_DJ_VENV} && {DEFAULT_DJ_VENV}/bin/pip install "
                         f"py-data-juicer==1.6.1 ftfy selectolax simhash-pybind aiohttp scipy\n"
                         f"or pass --dj-python / set DJ_REF_VENV.")
    return str(py), str(dj)


_NET_PREFIX: list[str] | None = None


def no_network_prefix() -> list[str]:
    """``unshare -n`` (empty network namespace) when this user may use it, so a run provably stays offline."""
    global _NET_PREFIX
    if _NET_PREFIX is None:
        _NET_PREFIX = []
        if shutil.which("unshare"):
            for pre in (["unshare", "-n"], ["unshare", "-rn"]):
                try:
                    if subprocess.run(pre + ["true"], capture_output=True, timeout=10, check=False).returncode == 0:
                        _NET_PREFIX = pre
                        break
                except (OSError, subprocess.TimeoutExpired):
                    pass
    return _NET_PREFIX


def offline_env(extra: dict | None = None, reference: bool = False) -> dict:
    """Environment for a run that must not download anything.

    ``reference=True`` (Data-Juicer's venv): drop PYTHONPATH and set PYTHONSAFEPATH so that our own
    ``data_juicer`` package (e.g. from the current folder) can never shadow the reference one.
    """
    env = dict(os.environ)
    if reference:
        env.pop("PYTHONPATH", None)
        env["PYTHONSAFEPATH"] = "1"
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "HF_HUB_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1", "TOKENIZERS_PARALLELISM": "false",
                "PYTHONUNBUFFERED": "1"})
    env.update(extra or {})
    return env


# --------------------------------------------------------------- op listings
def list_our_ops(cmd: list[str] | None = None) -> set[str]:
    """Op names our registry offers: ``dj-process --list_ops`` if it answers, else the registry itself."""
    cmd = cmd or ours_cmd()
    try:
        r = subprocess.run(cmd + ["--list_ops"], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                           check=False)
        names = set(OP_NAME_RE.findall(r.stdout)) if r.returncode == 0 else set()
    except (OSError, subprocess.TimeoutExpired):
        names = set()
    if names:
        return names
    code = ("from data_juicer.ops.registry import OPERATORS\n"
            "print('\\n'.join(sorted(set(OPERATORS.builtin) | set(OPERATORS._modules))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    return set(r.stdout.split())


def list_dj_ops(dj_python: str) -> set[str]:
    code = "from data_juicer.ops import OPERATORS\nprint('\\n'.join(OPERATORS.modules))"
    r = subprocess.run(no_network_prefix() + [dj_python, "-c", code], capture_output=True, text=True,
                       env=offline_env(reference=True), timeout=300, cwd="/", check=False)
    if r.returncode != 0:
        raise RuntimeError(f"cannot list Data-Juicer ops:\n{r.stderr[-2000:]}")
    return set(r.stdout.split())


def recipe_ops(recipe: dict) -> list[str]:
    return [next(iter(item)) if isinstance(item, dict) else item for item in recipe.get("process", [])]


def filter_recipe(recipe: dict, keep: set[str]) -> tuple[dict, list[str]]:
    """Copy of ``recipe`` without the ops not in ``keep``; returns (recipe, dropped names)."""
    out = dict(recipe)
    out["process"], dropped = [], []
    for item in recipe.get("process", []):
        name = next(iter(item)) if isinstance(item, dict) else item
        if name in keep:
            out["process"].append(item)
        else:
            dropped.append(name)
    return out, dropped


def load_yaml(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def dump_yaml(obj: dict, path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(obj, f, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------- measured runs
def _rss_anon(pid: int) -> int:
    """Anonymous resident memory of a process (what it allocated; PSS also counts the pages of
    memory-mapped files it has read, which grow with the input but are reclaimable page cache)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def pss_anon(pid: int) -> int:
    """Bytes of anonymous memory of ``pid``, each page shared with forked processes counted in proportion
    (``Pss_Anon`` of ``/proc/PID/smaps_rollup``): summed over a tree, a forked worker's copy-on-write
    view of its parent's heap is not counted twice, as anonymous RSS counts it. 0 where not readable."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as f:
            for line in f:
                if line.startswith("Pss_Anon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_measured(argv: list[str], log_path, env=None, cwd=None, timeout: float | None = None,
                 interval: float = 0.05, pss_interval: float = 0.1) -> dict:
    """Run ``argv``; return rc, wall seconds, and the peak memory of its process tree.

    RSS is sampled every ``interval`` s: the sum over the tree (counts pages shared between forked workers
    once per process, so it overstates) and the largest single process. PSS (shared pages split between
    the processes that share them; the fair tree total) is sampled every ``pss_interval`` s.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    peak_tree = peak_one = peak_pss = peak_anon = 0
    nproc_peak = 0
    next_pss = 0.0
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        root = psutil.Process(proc.pid)
        timed_out = False
        while proc.poll() is None:
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                procs = []
            total = 0
            for p in procs:
                try:
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                peak_one = max(peak_one, rss)
            peak_tree = max(peak_tree, total)
            nproc_peak = max(nproc_peak, len(procs))
            now = time.perf_counter()
            if now >= next_pss:  # PSS splits pages shared by forked workers fairly; costlier, so sampled less
                next_pss = now + pss_interval
                pss = anon = 0
                for p in procs:
                    try:
                        pss += p.memory_full_info().pss
                    except (psutil.Error, AttributeError):
                        continue
                    anon += _rss_anon(p.pid)
                peak_pss = max(peak_pss, pss)
                peak_anon = max(peak_anon, anon)
            if timeout and time.perf_counter() - t0 > timeout:
                timed_out = True
                for p in reversed(procs):
                    try:
                        p.kill()
                    except psutil.Error:
                        pass
                break
            time.sleep(interval)
        rc = proc.wait()
        wall = time.perf_counter() - t0
    return {"rc": rc, "wall_s": wall, "peak_rss_tree_mb": peak_tree / 2**20, "peak_rss_proc_mb": peak_one / 2**20,
            "peak_pss_tree_mb": peak_pss / 2**20, "peak_anon_tree_mb": peak_anon / 2**20,
            "max_procs": nproc_peak, "timed_out": timed_out, "log": str(log_path)}


def log_tail(path, n: int = 25) -> str:
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


_OP_DONE_RE = re.compile(r"OP \[(\w+)\] Done in ([\d.]+)s\. Left (\d+) samples")
# our summary table: "  op_name   in   out   errors   seconds"
_OP_TABLE_RE = re.compile(r"^\s+([a-z0-9_]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s*$", re.MULTILINE)


def per_op_log(path) -> list[tuple[str, float, int]]:
    """(op, seconds, rows left) from a run log: Data-Juicer's 'OP [x] Done in 1.2s. Left 9 samples' lines,
    or our end-of-run table (op, in, out, errors, seconds)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = [(m.group(1), float(m.group(2)), int(m.group(3))) for m in _OP_DONE_RE.finditer(text)]
    if not found:
        last = {}
        for m in _OP_TABLE_RE.finditer(text):
            last[m.group(1)] = (m.group(1), float(m.group(5)), int(m.group(3)))
        found = list(last.values())
    return found


# ------------------------------------------------------------- comparisons
def count_lines(path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def load_jsonl(path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def stats_path(export_path) -> Path:
    p = Path(export_path)
    return p.with_name(p.stem + "_stats" + p.suffix)


def approx_equal(a, b, tol: float = 1e-9) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (type(a) is type(b) and a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(approx_equal(a[k], b[k], tol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(approx_equal(x, y, tol) for x, y in zip(a, b))
    return a == b


def first_text_diff(a: str, b: str, ctx: int = 30) -> str:
    if not isinstance(a, str) or not isinstance(b, str):
        return f"{a!r:.80} vs {b!r:.80}"
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - ctx)
    return f"@{i} (len {len(a)} vs {len(b)}): {a[lo:i + ctx]!r} vs {b[lo:i + ctx]!r}"


STATS = "__dj__stats__"


def compare_rows(ours: list[dict], ref: list[dict], id_key: str = "id", text_key: str = "text",
                 tol: float = 1e-9, max_examples: int = 5) -> dict:
    """Compare two result lists as parsed JSON. Keys: equal, ids_equal, order_equal, text_diffs, stats_diffs..."""
    ids_o = [r.get(id_key) for r in ours]
    ids_r = [r.get(id_key) for r in ref]
    so, sr = set(ids_o), set(ids_r)
    by_o = {r.get(id_key): r for r in ours}
    by_r = {r.get(id_key): r for r in ref}
    common = [i for i in ids_r if i in so]
    text_diffs, stats_diffs, other_diffs, examples = [], [], [], []
    for i in common:
        a, b = by_o[i], by_r[i]
        if a.get(text_key) != b.get(text_key):
            text_diffs.append(i)
            if len(examples) < max_examples:
                examples.append(f"text {i}: {first_text_diff(a.get(text_key), b.get(text_key))}")
        if STATS in a or STATS in b:
            sa, sb = a.get(STATS) or {}, b.get(STATS) or {}
            if not approx_equal(sa, sb, tol):
                stats_diffs.append(i)
                if len(examples) < max_examples:
                    if isinstance(sa, dict) and isinstance(sb, dict):
                        keys = sorted(set(sa) | set(sb))
                        bad = {k: (sa.get(k), sb.get(k)) for k in keys
                               if not approx_equal(sa.get(k), sb.get(k), tol)}
                    else:  # not even a dict on one side
                        bad = {STATS: (sa, sb)}
                    examples.append(f"stats {i}: ours vs DJ {bad}")
        ka = {k for k in a if k not in (text_key, STATS)}
        kb = {k for k in b if k not in (text_key, STATS)}
        if ka != kb or any(not approx_equal(a[k], b[k], tol) for k in ka):
            other_diffs.append(i)
            if len(examples) < max_examples:
                keys = sorted(ka ^ kb) or [k for k in ka if not approx_equal(a[k], b[k], tol)]
                examples.append(f"fields {i}: {keys} ours={ {k: a.get(k) for k in keys} !s:.200} "
                                f"DJ={ {k: b.get(k) for k in keys} !s:.200}")
    only_o = [i for i in ids_o if i not in sr]
    only_r = [i for i in ids_r if i not in so]
    if only_o:
        examples.append(f"kept only by ours ({len(only_o)}): {only_o[:8]}")
    if only_r:
        examples.append(f"kept only by DJ ({len(only_r)}): {only_r[:8]}")
    ids_equal = so == sr and len(ids_o) == len(ids_r)
    order_equal = ids_o == ids_r
    if ids_equal and not order_equal:
        examples.append("same ids but different order")
    return {
        "rows_ours": len(ours), "rows_ref": len(ref), "ids_equal": ids_equal, "order_equal": order_equal,
        "only_ours": len(only_o), "only_ref": len(only_r), "text_diffs": len(text_diffs),
        "stats_diffs": len(stats_diffs), "field_diffs": len(other_diffs), "examples": examples,
        "equal": ids_equal and order_equal and not text_diffs and not stats_diffs and not other_diffs,
    }


def compare_stats_files(ours_path, ref_path, ids_ours=None, ids_ref=None, tol: float = 1e-9,
                        max_examples: int = 3) -> dict:
    """Compare two ``*_stats.jsonl`` files. They carry no ids: line k belongs to row k of the result, so
    with ``ids_ours``/``ids_ref`` (the result ids in order) lines are matched by id, else by position."""
    po, pr = Path(ours_path), Path(ref_path)
    if not po.exists() or not pr.exists():
        return {"present_ours": po.exists(), "present_ref": pr.exists(), "equal": po.exists() == pr.exists(),
                "diffs": 0, "examples": []}
    a, b = load_jsonl(po), load_jsonl(pr)
    if ids_ours is not None and ids_ref is not None and len(ids_ours) == len(a) and len(ids_ref) == len(b):
        ma, mb = dict(zip(ids_ours, a)), dict(zip(ids_ref, b))
        pairs = [(i, ma[i], mb[i]) for i in ids_ref if i in ma]
    else:
        pairs = [(f"line {k}", x, y) for k, (x, y) in enumerate(zip(a, b))]
    diffs, examples = 0, []
    for key, x, y in pairs:
        if not approx_equal(x, y, tol):
            diffs += 1
            if len(examples) < max_examples:
                examples.append(f"stats {key}: ours={json.dumps(x)[:200]} DJ={json.dumps(y)[:200]}")
    return {"present_ours": True, "present_ref": True, "lines_ours": len(a), "lines_ref": len(b),
            "compared": len(pairs), "diffs": diffs, "equal": len(a) == len(b) and diffs == 0,
            "examples": examples}


def stats_by_id(result_path, ids: list) -> dict:
    """{id: stats line} for the given ids, from the ``*_stats.jsonl`` next to a result file."""
    sp = stats_path(result_path)
    if not sp.exists():
        return {}
    rows = load_jsonl(result_path)
    lines = load_jsonl(sp)
    if len(rows) != len(lines):
        return {}
    want = set(ids)
    return {r.get("id"): st for r, st in zip(rows, lines) if r.get("id") in want}


def fmt_table(header: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])
