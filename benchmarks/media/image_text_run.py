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
peak memory of the process tree). ``--with-dj`` needs Data-Juicer 1.6.1's own venv (``DJ_REF_VENV``,
default /work/djref) with torch, transformers<5 and simple-aesthetics-predictor installed, since
Data-Juicer loads the aesthetics model through that package; the stats of both are then compared.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

import benchlib  # noqa: E402

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


def run_one(label: str, cmd: list[str], cfg: dict, work: Path, env: dict) -> dict:
    path = work / f"recipe_{label}.yaml"
    benchlib.dump_yaml(cfg, path)
    res = benchlib.run_measured(cmd + ["--config", str(path)], work / f"log_{label}.txt", env=env, cwd=work)
    n = benchlib.count_lines(cfg["export_path"]) if os.path.exists(cfg["export_path"]) else 0
    res.update(label=label, rows_out=n)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--np", type=int, default=1, help="worker processes (np) for both systems")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--with-dj", action="store_true")
    ap.add_argument("--dj-python", default=None)
    ap.add_argument("--work", type=Path, default=HERE / "work")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_data(work, args.n)
    root = ensure_models(args.models_dir, work)
    env = benchlib.offline_env({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    results = []
    ours = run_one("ours", benchlib.ours_cmd(), recipe(data, work / "out_ours" / "result.jsonl", root, args.np,
                                                       args.batch_size), work, env)
    results.append(ours)
    if args.with_dj:
        _, dj = benchlib.dj_paths(args.dj_python)
        ref = run_one("dj", [dj], recipe(data, work / "out_dj" / "result.jsonl", root, args.np, args.batch_size),
                      work, benchlib.offline_env({"OMP_NUM_THREADS": env["OMP_NUM_THREADS"]}, reference=True))
        results.append(ref)
    rows = []
    for r in results:
        rate = args.n / r["wall_s"] if r["rc"] == 0 else float("nan")
        r["images_per_s"] = rate
        rows.append([r["label"], r["rc"], f"{r['wall_s']:.1f}", f"{rate:.1f}", r["rows_out"],
                     f"{r['peak_pss_tree_mb']:.0f}", f"{r['peak_rss_proc_mb']:.0f}"])
    print(benchlib.fmt_table(["system", "rc", "wall s", "images/s", "rows out", "peak PSS MB", "peak RSS/proc MB"],
                             rows))
    if args.with_dj and all(r["rc"] == 0 for r in results):
        ours_rows = benchlib.load_jsonl(work / "out_ours" / "result.jsonl")
        dj_rows = benchlib.load_jsonl(work / "out_dj" / "result.jsonl")
        worst = 0.0
        for a, b in zip(ours_rows, dj_rows):
            for k, v in a.get("__dj__stats__", {}).items():
                w = b.get("__dj__stats__", {}).get(k)
                if isinstance(v, list) and isinstance(w, list) and len(v) == len(w):
                    worst = max([worst] + [abs(x - y) for x, y in zip(v, w)])
        print(f"speed-up: {results[1]['wall_s'] / results[0]['wall_s']:.2f}x; largest stat difference: {worst:.2e}")
    out = work / "results.json"
    out.write_text(json.dumps({"n": args.n, "np": args.np, "batch_size": args.batch_size, "models": str(root),
                               "runs": results}, indent=2))
    print(f"results: {out}")
    for r in results:
        if r["rc"] != 0:
            print(f"[{r['label']}] failed:\n{benchlib.log_tail(r['log'])}")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
