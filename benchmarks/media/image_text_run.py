"""Image-text filtering benchmark: CLIP similarity + aesthetics + NSFW + watermark over N images, on CPU.

    python benchmarks/media/image_text_run.py                 # ours, 1,000 images, tiny models
    python benchmarks/media/image_text_run.py --models-dir D  # real models under D/<DJ model name>
    python benchmarks/media/image_text_run.py --with-dj       # + Data-Juicer 1.6.1 on the same files

Data: N seeded 256x256 JPEGs (colour blocks + noise) and a caption each, in
``benchmarks/media/work/`` (gitignored). Models: ``--models-dir`` holding the four models under
their Data-Juicer names (``openai/clip-vit-base-patch32``,
``shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE``, ``Falconsai/nsfw_image_detection``,
``amrul-hzz/watermark_detector``), else the tiny seeded models of the tests
(``tests/models/vision_tiny_models.py``) are built there. The recipe names the model folders by
path, so both systems load the very same files.

Each system runs the same 4-filter recipe as a subprocess (``benchlib.run_measured``: wall time,
peak memory of the process tree; a small wrapper adds the tree's CPU seconds). ``--with-dj`` needs
Data-Juicer 1.6.1's own venv (``DJ_REF_VENV``, default /work/djref) with torch, transformers<5 and
simple-aesthetics-predictor installed, since Data-Juicer loads the aesthetics model through that
package::

    python -m venv /work/djref-vision
    /work/djref-vision/bin/pip install py-data-juicer==1.6.1 torch==2.13.0 'transformers<5' simple-aesthetics-predictor
    /work/djref-vision/bin/pip uninstall -y torchvision   # the CUDA build pip picks breaks a CPU torch

(with a torchvision that does not match torch, transformers' ``AutoProcessor`` import fails and
Data-Juicer records every sample as an error). The stats of both are then compared per op, matched
by sample id: the largest ``|ours - DJ|`` and the sample where it is. ``--parallel`` runs both at
once (same machine load; CPU seconds are per system either way). Without torchvision, transformers
4.x pre-processes images with PIL; ours (transformers 5 with torchvision) with torchvision's
resize, which moves the ViT classifiers' probabilities by up to ~5e-4 (see benchmarks/media/README.md).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import benchlib

IMG = "<__dj__image>"
MODELS = {
    "clip": "openai/clip-vit-base-patch32",
    "aes": "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE",
    "nsfw": "Falconsai/nsfw_image_detection",
    "wm": "amrul-hzz/watermark_detector",
}
WORDS = ["a", "cat", "dog", "red", "the", "on", "mat", "blue", "sky", "car", "tree", "house"]


def make_data(work: Path, n: int, seed: int = 7) -> Path:
    import numpy as np
    from PIL import Image

    data = work / f"images_{n}.jsonl"
    if data.exists():
        return data
    folder = work / f"images_{n}"
    folder.mkdir(parents=True, exist_ok=True)
    rs = np.random.RandomState(seed)
    with open(data, "w", encoding="utf-8") as f:
        for k in range(n):
            base = rs.randint(0, 256, size=(4, 4, 3)).astype(np.float32)
            arr = np.kron(base, np.ones((64, 64, 1), dtype=np.float32)) + rs.normal(0, 12, size=(256, 256, 3))
            p = folder / f"{k:05d}.jpg"
            Image.fromarray(arr.clip(0, 255).astype(np.uint8)).save(p, quality=90)
            caption = " ".join(rs.choice(WORDS, size=6))
            f.write(json.dumps({"id": k, "text": f"{IMG} {caption}", "images": [str(p)]}) + "\n")
    return data


def ensure_models(models_dir: Path | None, work: Path) -> Path:
    if models_dir:
        return models_dir
    from tests.models.vision_tiny_models import TinyModels

    root = work / "tiny-models"
    TinyModels(root).need(*MODELS.values())
    return root


def recipe(data: Path, export: Path, root: Path, np_: int, batch_size: int) -> dict:
    m = {k: str(root / v) for k, v in MODELS.items()}
    return {
        "project_name": "image-text-bench", "dataset_path": str(data), "export_path": str(export), "np": np_,
        "keep_stats_in_res_ds": True,
        "process": [
            {"image_text_similarity_filter": {"hf_clip": m["clip"], "min_score": -1.0, "max_score": 1.0,
                                              "accelerator": "cpu", "batch_size": batch_size}},
            {"image_aesthetics_filter": {"hf_scorer_model": m["aes"], "min_score": 0.0, "max_score": 1e9,
                                         "accelerator": "cpu", "batch_size": batch_size}},
            {"image_nsfw_filter": {"hf_nsfw_model": m["nsfw"], "max_score": 1.0, "accelerator": "cpu",
                                   "batch_size": batch_size}},
            {"image_watermark_filter": {"hf_watermark_model": m["wm"], "prob_threshold": 1.0,
                                        "accelerator": "cpu", "batch_size": batch_size}},
        ],
    }


# runs the command and writes its tree's CPU seconds (every descendant is waited for by its parent)
CPU_WRAPPER = ("import json, resource, subprocess, sys\n"
               "rc = subprocess.call(sys.argv[2:])\n"
               "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
               "json.dump({'user_s': r.ru_utime, 'sys_s': r.ru_stime}, open(sys.argv[1], 'w'))\n"
               "sys.exit(rc)\n")


def run_one(label: str, cmd: list[str], cfg: dict, work: Path, env: dict) -> dict:
    path = work / f"recipe_{label}.yaml"
    benchlib.dump_yaml(cfg, path)
    if os.path.exists(cfg["export_path"]):
        os.remove(cfg["export_path"])
    cpu_file = work / f"cpu_{label}.json"
    load = os.getloadavg()
    argv = [sys.executable, "-c", CPU_WRAPPER, str(cpu_file)] + cmd + ["--config", str(path)]
    res = benchlib.run_measured(argv, work / f"log_{label}.txt", env=env, cwd=work)
    cpu = json.loads(cpu_file.read_text()) if cpu_file.exists() else {"user_s": math.nan, "sys_s": math.nan}
    n = benchlib.count_lines(cfg["export_path"]) if os.path.exists(cfg["export_path"]) else 0
    res.update(label=label, rows_out=n, cpu_s=cpu["user_s"] + cpu["sys_s"], loadavg_start=load,
               loadavg_end=os.getloadavg())
    return res


STAT_KEYS = {"image_text_similarity_filter": "image_text_similarity",
             "image_aesthetics_filter": "image_aesthetics_scores",
             "image_nsfw_filter": "image_nsfw_score",
             "image_watermark_filter": "image_watermark_prob"}


def compare(ours_rows: list[dict], dj_rows: list[dict]) -> dict:
    """Per op: the largest |ours - DJ| over the samples both kept, and where it is."""
    dj = {r["id"]: r for r in dj_rows}
    out = {}
    for op, key in STAT_KEYS.items():
        worst, where, n = 0.0, None, 0
        for a in ours_rows:
            b = dj.get(a["id"])
            if b is None:
                continue
            v = a.get("__dj__stats__", {}).get(key)
            w = b.get("__dj__stats__", {}).get(key)
            if not (isinstance(v, list) and isinstance(w, list)) or len(v) != len(w):
                worst, where = math.inf, (a["id"], v, w)
                continue
            for x, y in zip(v, w):
                n += 1
                if abs(x - y) > worst or where is None:
                    worst, where = max(worst, abs(x - y)), (a["id"], x, y)
        out[op] = {"stat": key, "values": n, "max_abs_diff": worst, "at": where}
    ids_a, ids_b = {r["id"] for r in ours_rows}, set(dj)
    out["kept"] = {"ours": len(ids_a), "dj": len(ids_b), "only_ours": sorted(ids_a - ids_b)[:20],
                   "only_dj": sorted(ids_b - ids_a)[:20]}
    return out


def pil_check(root: Path, dj_rows: list[dict]) -> dict:
    """Our batched scoring functions with transformers' PIL image processors (``backend="pil"``,
    what transformers 4.x without torchvision uses, so what Data-Juicer's run used) on the samples
    Data-Juicer kept: the largest ``|ours - DJ|`` per stat. Isolates the pre-processing backend
    from the ops and their batching."""
    import torch
    import transformers
    from PIL import Image

    from data_juicer.models.vision import aesthetics_class
    from data_juicer.models.vision_scores import (
        aesthetics_scores,
        class_probs,
        clip_image_embeds,
        clip_logit_scale,
        clip_text_embeds,
    )

    rows = [r for r in dj_rows if len(r.get("images") or []) == 1]
    imgs = [Image.open(r["images"][0]).convert("RGB") for r in rows]
    texts = [r["text"].replace(IMG, "").strip() for r in rows]
    got = {}
    with torch.inference_mode():
        for k, key in (("nsfw", "image_nsfw_score"), ("wm", "image_watermark_prob")):
            folder = str(root / MODELS[k])
            m = transformers.AutoModelForImageClassification.from_pretrained(folder).eval()
            got[key] = class_probs(m, transformers.AutoImageProcessor.from_pretrained(folder, backend="pil"), imgs)
        folder = str(root / MODELS["aes"])
        m = aesthetics_class("v2_linear").from_pretrained(folder).eval()
        got["image_aesthetics_scores"] = aesthetics_scores(
            m, transformers.AutoImageProcessor.from_pretrained(folder, backend="pil"), imgs, True)
        folder = str(root / MODELS["clip"])
        m = transformers.CLIPModel.from_pretrained(folder).eval()
        proc = transformers.AutoProcessor.from_pretrained(folder, backend="pil")
        img, txt = clip_image_embeds(m, proc, imgs), clip_text_embeds(m, proc, texts)
        got["image_text_similarity"] = ((txt * img).sum(-1) * clip_logit_scale(m) / 100.0).tolist()
    return {key: max([abs(v - r["__dj__stats__"][key][0]) for v, r in zip(vals, rows)] or [0.0])
            for key, vals in got.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--np", type=int, default=1, help="worker processes (np) for both systems")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--with-dj", action="store_true")
    ap.add_argument("--parallel", action="store_true",
                    help="with --with-dj: run both systems at the same time (same machine load; on a shared "
                         "machine this halves the wall time; compare CPU seconds too)")
    ap.add_argument("--pil-check", action="store_true",
                    help="with --with-dj: also score DJ's kept samples with our functions and PIL image "
                         "processors (isolates the pre-processing backend)")
    ap.add_argument("--dj-python", default=None)
    ap.add_argument("--work", type=Path, default=HERE / "work")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_data(work, args.n)
    root = ensure_models(args.models_dir, work)
    env = benchlib.offline_env({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    jobs = [("ours", benchlib.ours_cmd(), recipe(data, work / "out_ours" / "result.jsonl", root, args.np,
                                                 args.batch_size), env)]
    if args.with_dj:
        _, dj = benchlib.dj_paths(args.dj_python)
        jobs.append(("dj", [dj], recipe(data, work / "out_dj" / "result.jsonl", root, args.np, args.batch_size),
                     benchlib.offline_env({"OMP_NUM_THREADS": env["OMP_NUM_THREADS"]}, reference=True)))
    print(f"load average before: {'/'.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs", flush=True)
    if args.parallel and len(jobs) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(jobs)) as pool:
            results = list(pool.map(lambda j: run_one(j[0], j[1], j[2], work, j[3]), jobs))
    else:
        results = [run_one(label, cmd, cfg, work, e) for label, cmd, cfg, e in jobs]
    rows = []
    for r in results:
        rate = args.n / r["wall_s"] if r["rc"] == 0 else float("nan")
        r["images_per_s"] = rate
        rows.append([r["label"], r["rc"], f"{r['wall_s']:.1f}", f"{rate:.2f}", f"{r['cpu_s']:.1f}", r["rows_out"],
                     f"{r['peak_pss_tree_mb']:.0f}", f"{r['peak_rss_proc_mb']:.0f}",
                     "/".join(f"{x:.1f}" for x in r["loadavg_start"])])
    print(benchlib.fmt_table(["system", "rc", "wall s", "images/s", "CPU s", "rows out", "peak PSS MB",
                              "peak RSS/proc MB", "load avg at start"], rows))
    diff = None
    if args.with_dj and all(r["rc"] == 0 for r in results):
        ours_rows = benchlib.load_jsonl(work / "out_ours" / "result.jsonl")
        dj_rows = benchlib.load_jsonl(work / "out_dj" / "result.jsonl")
        diff = compare(ours_rows, dj_rows)
        for op, d in diff.items():
            print(f"{op}: {d}")
        if args.pil_check:
            diff["pil_check"] = pil_check(root, dj_rows)
            print(f"pil_check (ours with PIL processors vs DJ): {diff['pil_check']}")
        print(f"speed-up (wall): {results[1]['wall_s'] / results[0]['wall_s']:.2f}x; "
              f"CPU s ratio: {results[1]['cpu_s'] / max(results[0]['cpu_s'], 1e-9):.2f}x")
    out = work / "results.json"
    out.write_text(json.dumps({"n": args.n, "np": args.np, "batch_size": args.batch_size, "models": str(root),
                               "runs": results, "stats_diff": diff}, indent=2, default=str))
    print(f"results: {out}")
    for r in results:
        if r["rc"] != 0:
            print(f"[{r['label']}] failed:\n{benchlib.log_tail(r['log'])}")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
