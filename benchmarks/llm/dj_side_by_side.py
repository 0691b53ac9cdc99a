"""One LLM recipe, this project vs py-data-juicer 1.6.1, against the same local OpenAI-compatible server.

The recipe is one ``llm_quality_score_filter`` (same op name and parameters in both: the model
name, ``model_params.base_url``, ``sampling_params`` temperature 0) over N text samples, np 1,
``use_cache`` off. The server is ``data_juicer.models.llm.local_server --model rating``: real HTTP
(FastAPI + uvicorn), OpenAI's chat-completions format, but instead of a model it answers at once
with a rating JSON whose scores are a hash of the sample's text. So the answers are deterministic
(both frameworks must parse them into the same scores and keep the same samples), and the server
costs next to nothing: what is measured is the client side (prompting, sending, parsing, the
executor). ``--latency`` adds a fixed wait to every answer (not holding the server), standing in
for a real model's generation time; 0 measures pure client overhead.

Each framework runs as its own process (Data-Juicer from its own venv, ``--dj-python``); per run
it reports wall time, samples/s over the LLM op's own time (each framework's log / summary), over
the server-side request span (first request in to last answer out: the steady state, without
either framework's start-up) and over the whole process, the process's CPU seconds (user+sys, from wait4) and peak RSS, and whether
the kept samples and their scores agree. Runs alternate (ours, DJ, ours, DJ, ...); the best of
``--repeat`` is kept. Results go to ``dj_side_by_side.json``.

    python benchmarks/llm/dj_side_by_side.py [--n 300] [--latency 0,0.05] [--repeat 2]
        [--dj-python /work/djref-media/bin/python]
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

from data_juicer.models.llm.local_server import ServerProcess  # noqa: E402

OP = "llm_quality_score_filter"
WORDS = ("river", "mountain", "engine", "protein", "market", "poem", "theorem", "harbor", "circuit", "forest",
         "treaty", "galaxy", "recipe", "glacier", "algorithm", "symphony")


def rows(n):
    out = []
    for i in range(n):
        w = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(12)]
        out.append({"text": f"Sample {i}: a short note about the {w[0]} and the {w[1]}. " + " ".join(w)})
    return out


def recipe(folder, data, srv, np_):
    cfg = {"project_name": "llm-bench", "dataset_path": data, "export_path": os.path.join(folder, "out", "result.jsonl"),
           "np": np_, "use_cache": False, "open_tracer": False,
           "process": [{OP: {"api_or_hf_model": srv.served_name, "model_params": {"base_url": srv.base_url},
                             "sampling_params": {"temperature": 0, "max_tokens": 256}}}]}
    path = os.path.join(folder, "recipe.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f)
    return path


def run_one(kind, python, folder, data, srv, np_):
    os.makedirs(folder, exist_ok=True)
    path = recipe(folder, data, srv, np_)
    if kind == "ours":
        cmd = [python, "-c", "import sys; from data_juicer.cli.process import main; sys.exit(main(sys.argv[1:]))",
               "--config", path]
    else:
        cmd = [os.path.join(os.path.dirname(python), "dj-process"), "--config", path]
    env = dict(os.environ, OPENAI_API_KEY="sk-local-benchmark", PYTHONPATH=ROOT if kind == "ours" else "")
    env.pop("OPENAI_BASE_URL", None)
    log = open(os.path.join(folder, "run.log"), "w")
    t = time.time()
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=folder)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - t
    log.close()
    text = open(os.path.join(folder, "run.log"), errors="replace").read()
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise RuntimeError(f"{kind} failed ({rc}); see {folder}/run.log:\n{text[-3000:]}")
    op_s = None
    if kind == "ours":
        for s in glob.glob(os.path.join(folder, "out", "*", "summary.json")):
            op_s = sum(o["seconds"] for o in json.load(open(s))["ops"])
    else:
        m = re.findall(r"OP \[" + OP + r"\] Done in ([0-9.]+)s", text)
        op_s = float(m[-1]) if m else None
    return {"wall_s": round(wall, 2), "op_s": round(op_s, 2) if op_s else None,
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 2), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1),
            "outputs": read_outputs(folder)}


def read_outputs(folder):
    """{text: llm_quality_score} of the kept samples (scores from the stats file beside the result)."""
    out_dir = os.path.join(folder, "out")
    res = [json.loads(x) for x in open(os.path.join(out_dir, "result.jsonl")) if x.strip()]
    stats_path = os.path.join(out_dir, "result_stats.jsonl")
    stats = [json.loads(x) for x in open(stats_path) if x.strip()] if os.path.exists(stats_path) else []
    scores = {}
    for r, s in zip(res, stats or [{}] * len(res)):
        st = s.get("__dj__stats__") or r.get("__dj__stats__") or {}
        scores[r["text"]] = st.get("llm_quality_score")
    return scores


def agree(a, b):
    if list(a) != list(b):
        return False
    return all(a[k] is not None and b[k] is not None and abs(a[k] - b[k]) < 1e-6 for k in a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--latency", default="0,0.05")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--dj-python", default="/work/djref-media/bin/python")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "dj_side_by_side.json"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dj_llm_side_")
    data = os.path.join(work, "data.jsonl")
    with open(data, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows(a.n))
    dj_version = subprocess.run([a.dj_python, "-c", "import data_juicer; print(data_juicer.__version__)"],
                                capture_output=True, text=True).stdout.strip()
    results = {"n": a.n, "np": a.np, "op": OP, "data_juicer": dj_version, "runs": []}
    for latency in [float(x) for x in a.latency.split(",")]:
        srv = ServerProcess(model="rating", work_dir=work, latency=latency).start()
        try:
            best = {}
            for r in range(a.repeat):
                for kind, py in (("ours", sys.executable), ("dj", a.dj_python)):
                    srv.reset()
                    got = run_one(kind, py, os.path.join(work, f"{kind}-{latency}-{r}"), data, srv, a.np)
                    st = srv.stats()
                    got["requests"], got["max_in_flight"] = st["count"], st["max_in_flight"]
                    got["request_span_s"] = round(st["span_s"], 2)  # first request in -> last answer out
                    print(f"latency {latency}s {kind} run {r}: " + json.dumps({k: v for k, v in got.items()
                                                                              if k != "outputs"}), flush=True)
                    if kind not in best or got["op_s"] < best[kind]["op_s"]:
                        best[kind] = got
            ours, dj = best["ours"], best["dj"]
            row = {"latency_s": latency, "agree": agree(ours["outputs"], dj["outputs"]), "kept": len(ours["outputs"]),
                   "kept_dj": len(dj["outputs"])}
            for kind, b in best.items():
                row[kind] = {k: v for k, v in b.items() if k != "outputs"}
                row[kind]["op_samples_per_s"] = round(a.n / b["op_s"], 1)
                row[kind]["process_samples_per_s"] = round(a.n / b["wall_s"], 1)
                row[kind]["request_samples_per_s"] = round(a.n / b["request_span_s"], 1)
            row["speedup_op"] = round(dj["op_s"] / ours["op_s"], 2)
            row["speedup_requests"] = round(dj["request_span_s"] / ours["request_span_s"], 2)
            row["speedup_process"] = round(dj["wall_s"] / ours["wall_s"], 2)
            results["runs"].append(row)
            print(json.dumps(row), flush=True)
        finally:
            srv.stop()
    with open(a.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
