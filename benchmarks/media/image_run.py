"""Image filtering benchmark: a 5-filter, model-free image recipe over N images made from real photos.

    python benchmarks/media/image_run.py                     # ours, 1,000 images, np=2
    python benchmarks/media/image_run.py --with-dj           # + Data-Juicer 1.6.1 side by side
    python benchmarks/media/image_run.py --n 200 --np 1
    python benchmarks/media/image_run.py --n 300 --profile-ops   # CPU s per op, in-process

Data: scikit-image's sample photos (fetched by ``tools/fetch_testdata.sh`` into
``~/.cache/data_juicer/testdata``) cut into N images by seeded random crops, resizes (64 to 640
px a side, some very wide or tall) and re-encodings (JPEG/PNG), 1 to 3 images per sample, in
``benchmarks/media/work/`` (gitignored).

Recipe (same YAML for both systems): image_shape_filter, image_aspect_ratio_filter,
image_size_filter, image_subplot_filter, image_face_count_filter (OpenCV's Haar cascade), with
bounds that keep most samples. Each system runs as a subprocess (``_bench.run_one``: wall time, CPU seconds
and peak PSS of the process tree) through a small wrapper that prints the process's open file
descriptors after the run, minus those open before it (``fds left``). ``--with-dj`` needs a
Data-Juicer 1.6.1 venv (``DJ_REF_VENV``, default /work/djref-media) with opencv-contrib-python<5;
the stats of both are then compared (largest difference).
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
sys.path.insert(0, str(HERE))

import _bench
import benchlib

IMG = "<__dj__image>"


def photos() -> list[Path]:
    from tests.media.testdata import testdata_dir

    folder = Path(testdata_dir()) / "image" / "skimage"
    return sorted(p for p in folder.iterdir() if p.suffix in (".png", ".jpg"))


def make_data(work: Path, n: int, seed: int = 11) -> Path:
    import numpy as np
    from PIL import Image

    data = work / f"images_{n}.jsonl"
    if data.exists():
        return data
    folder = work / f"images_{n}"
    folder.mkdir(parents=True, exist_ok=True)
    srcs = [Image.open(p).convert("RGB") for p in photos()]
    rs = np.random.RandomState(seed)
    made = []
    for k in range(n):
        src = srcs[rs.randint(len(srcs))]
        w, h = src.size
        cw, ch = rs.randint(w // 3, w + 1), rs.randint(h // 3, h + 1)
        x, y = rs.randint(0, w - cw + 1), rs.randint(0, h - ch + 1)
        img = src.crop((x, y, x + cw, y + ch))
        if rs.rand() < 0.1:  # some very wide / tall
            tw, th = (int(rs.randint(400, 641)), int(rs.randint(40, 100)))
            tw, th = (tw, th) if rs.rand() < 0.5 else (th, tw)
        else:
            side = int(rs.randint(64, 641))
            scale = side / max(cw, ch)
            tw, th = max(1, int(cw * scale)), max(1, int(ch * scale))
        img = img.resize((tw, th))
        p = folder / (f"{k:05d}.jpg" if rs.rand() < 0.7 else f"{k:05d}.png")
        img.save(p, quality=int(rs.randint(60, 96))) if p.suffix == ".jpg" else img.save(p)
        made.append(str(p))
    with open(data, "w", encoding="utf-8") as f:
        k = 0
        sid = 0
        while k < n:
            m = min(int(rs.randint(1, 4)), n - k)
            imgs = made[k:k + m]
            k += m
            f.write(json.dumps({"id": sid, "text": " ".join([IMG] * m) + " photo", "images": imgs}) + "\n")
            sid += 1
    return data


def recipe(data: Path, export: Path, np_: int, fusion: bool) -> dict:
    return {
        "project_name": "image-bench", "dataset_path": str(data), "export_path": str(export), "np": np_,
        "keep_stats_in_res_ds": True, "op_fusion": fusion,
        "process": [
            {"image_shape_filter": {"min_width": 48, "min_height": 48}},
            {"image_aspect_ratio_filter": {"min_ratio": 0.2, "max_ratio": 5.0}},
            {"image_size_filter": {"min_size": "2KB", "max_size": "2MB"}},
            {"image_subplot_filter": {}},
            {"image_face_count_filter": {"min_face_count": 0, "max_face_count": 5}},
        ],
    }


def profile_ops(data: Path) -> dict:
    """CPU seconds (``time.process_time``) of each op of the recipe in this one process, run as the
    executor runs them: one batch, a shared ``__dj__context__``, each filter on the rows the earlier
    ones kept. Returns ``{op: [cpu_s, rows_in, rows_out]}`` plus ``decode`` (each distinct image
    decoded once, timed apart) and the cascade's share."""
    import time

    from data_juicer.media.image import load_image
    from data_juicer.ops import load_ops
    from data_juicer.utils.batch import take_mask
    from data_juicer.utils.constant import Fields

    rows = benchlib.load_jsonl(data)
    ops = load_ops(recipe(data, data, 1, False)["process"])
    samples = {k: [r[k] for r in rows] for k in rows[0]}
    samples[Fields.stats] = [{} for _ in rows]
    samples[Fields.context] = [{} for _ in rows]
    out = {}
    for op in ops:
        n_in, t = len(samples["id"]), time.process_time()
        samples, keep = op.decide_batch(samples)
        samples = take_mask(samples, keep)
        out[op.name] = [round(time.process_time() - t, 3), n_in, len(samples["id"])]
    t = time.process_time()
    for p in dict.fromkeys(p for r in rows for p in r["images"]):
        load_image(p)
    out["decode (all images, apart)"] = [round(time.process_time() - t, 3), len(rows), len(rows)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="images")
    ap.add_argument("--np", type=int, default=2, help="worker processes (np) for both systems")
    ap.add_argument("--op-fusion", action="store_true", help="op_fusion: true for both systems")
    ap.add_argument("--with-dj", action="store_true")
    ap.add_argument("--dj-python", default=os.environ.get("DJ_REF_VENV", "/work/djref-media"))
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--profile-ops", action="store_true",
                    help="instead: CPU seconds of each op in this process (one batch, shared context)")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_data(work, args.n)
    if args.profile_ops:
        rows = [[k, *v] for k, v in profile_ops(data).items()]
        print(benchlib.fmt_table(["op", "CPU s", "samples in", "samples out"], rows))
        return 0
    samples = benchlib.count_lines(data)
    results = [_bench.run_one("image_ours", sys.executable, _bench.OURS_MODULE,
                              recipe(data, work / "out_image_ours" / "result.jsonl", args.np, args.op_fusion), work,
                              _bench.ours_env())]
    if args.with_dj:
        results.append(_bench.run_one("image_dj", _bench.dj_python(args.dj_python), _bench.DJ_MODULE,
                                      recipe(data, work / "out_image_dj" / "result.jsonl", args.np, args.op_fusion),
                                      work, _bench.dj_env()))
    rows = []
    for r in results:
        r["images_per_s"] = args.n / r["wall_s"] if r["rc"] == 0 else float("nan")
        rows.append([r["label"], r["rc"], f"{r['wall_s']:.1f}", f"{r['images_per_s']:.1f}", f"{r['cpu_s']:.1f}",
                     r["rows_out"], f"{r['peak_pss_tree_mb']:.0f}", r["fds_left"]])
    print(f"{args.n} images in {samples} samples, np={args.np}, op_fusion={args.op_fusion}")
    for r in results:
        print(f"[{r['label']}] CPU s per busy process: {r.get('cpu_per_process_s')}")
        print(f"[{r['label']}] child processes seen from/to second: {r.get('children_seen_s')} of "
              f"{r['wall_s']:.1f}; the harness's own CPU s: {r.get('harness_cpu_s')}")
    print(benchlib.fmt_table(["system", "rc", "wall s", "images/s", "CPU s", "samples out", "peak PSS MB",
                                  "fds left"], rows))
    if args.with_dj and all(r["rc"] == 0 for r in results):
        ours = {r["id"]: r for r in benchlib.load_jsonl(work / "out_image_ours" / "result.jsonl")}
        ref = {r["id"]: r for r in benchlib.load_jsonl(work / "out_image_dj" / "result.jsonl")}
        worst, keys = 0.0, set()
        for i in set(ours) & set(ref):
            a, b = ours[i].get("__dj__stats__", {}), ref[i].get("__dj__stats__", {})
            for k, v in a.items():
                w = b.get(k)
                keys.add(k)
                if isinstance(v, list) and isinstance(w, list) and len(v) == len(w):
                    worst = max([worst] + [abs(float(x) - float(y)) for x, y in zip(v, w)])
                elif v != w:
                    worst = float("inf")
        print(f"same samples kept: {sorted(ours) == sorted(ref)}; largest stat difference: {worst:.2e}")
        print(_bench.speedup_line(results, "images", args.n))
    (work / "image_results.json").write_text(json.dumps({"n": args.n, "np": args.np, "runs": results}, indent=2))
    for r in results:
        if r["rc"] != 0:
            print(f"[{r['label']}] failed:\n{benchlib.log_tail(r['log'])}")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
