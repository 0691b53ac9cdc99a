"""GPU check: one op of each model family on CUDA and on CPU, outputs compared.

    python benchmarks/gpu_check.py                   # tiny seeded models (tests/models/vision_tiny_models.py)
    python benchmarks/gpu_check.py --models-dir D    # real models under D/<Data-Juicer model name>
    python benchmarks/gpu_check.py --out DIR         # also write DIR/gpu_check.json (default: $OUT if set)

Families: image classifier (``image_nsfw_filter``), LAION aesthetics head (``image_aesthetics_filter``),
CLIP (``image_text_similarity_filter``), BLIP image-text matching (``image_text_matching_filter``) and
frame-sampled video (``video_nsfw_filter``). Each runs on the CPU (float32), then with
``accelerator: cuda`` in half precision (the default on a GPU) and in float32
(``DJ_MODEL_DTYPE=float32``); the largest absolute stat difference to the CPU run and the wall time of
each are reported. Without a GPU the CUDA runs are skipped (exit 0). Exit 1 when a float32 CUDA run
differs from the CPU by more than 1e-4, or a half-precision one by more than 2e-2.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"
TOL = {"float32": 1e-4, "float16": 2e-2}


def _video(folder: Path) -> str | None:
    path = folder / "v.mp4"
    try:
        subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                        "testsrc2=size=64x48:rate=10:duration=2", "-c:v", "libx264", "-g", "5",
                        "-pix_fmt", "yuv420p", str(path)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return str(path)


def cases(root: str, imgs: list[str], video: str | None):
    texts = [f"{IMG} a cat {IMG}{EOC} the dog {IMG}", f"{IMG} the red car", f"{IMG}{IMG} on the mat"]
    img_rows = {"images": [imgs[0:3], imgs[3:4], imgs[4:6]], "text": texts}
    out = [
        ("classifier", "image_nsfw_filter", {"hf_nsfw_model": f"{root}/Falconsai/nsfw_image_detection"}, img_rows),
        ("aesthetics", "image_aesthetics_filter",
         {"hf_scorer_model": f"{root}/shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE"}, img_rows),
        ("clip", "image_text_similarity_filter", {"hf_clip": f"{root}/openai/clip-vit-base-patch32"}, img_rows),
        ("blip", "image_text_matching_filter", {"hf_blip": f"{root}/Salesforce/blip-itm-base-coco"}, img_rows),
    ]
    if video:
        out.append(("video", "video_nsfw_filter", {"hf_nsfw_model": f"{root}/Falconsai/nsfw_image_detection",
                                                   "frame_sampling_method": "uniform", "frame_num": 4},
                    {"videos": [[video], [video]], "text": ["x", "y"]}))
    return out


def run_op(name: str, params: dict, rows: dict, accelerator: str, dtype: str | None) -> tuple[list, float]:
    from data_juicer.models.loader import clear_models
    from data_juicer.ops.registry import OPERATORS
    from data_juicer.utils.constant import Fields

    if dtype:
        os.environ["DJ_MODEL_DTYPE"] = dtype
    else:
        os.environ.pop("DJ_MODEL_DTYPE", None)
    clear_models()
    op = OPERATORS.get(name)(accelerator=accelerator, **params)
    n = len(next(iter(rows.values())))
    batch = {k: list(v) for k, v in rows.items()}
    batch[Fields.stats] = [{} for _ in range(n)]
    op.decide_batch(dict(batch, **{Fields.stats: [{} for _ in range(n)]}))  # warm-up (load, kernels)
    t = time.perf_counter()
    batch, _ = op.decide_batch(batch)
    secs = time.perf_counter() - t
    vals = [v for s in batch[Fields.stats] for vs in s.values() for v in (vs if isinstance(vs, list) else [vs])]
    return vals, secs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", default=None)
    ap.add_argument("--out", default=os.environ.get("OUT"))
    args = ap.parse_args()
    import torch

    from tests.models.vision_tiny_models import TinyModels, write_images

    work = Path(tempfile.mkdtemp(prefix="dj-gpu-check-"))
    root = args.models_dir or TinyModels(work / "models").need(
        "Falconsai/nsfw_image_detection", "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE",
        "openai/clip-vit-base-patch32", "Salesforce/blip-itm-base-coco")
    imgs = write_images(work / "imgs", 6, size=(96, 64))
    video = _video(work)
    has_cuda = torch.cuda.is_available()
    print(f"torch {torch.__version__}; CUDA: {torch.cuda.get_device_name(0) if has_cuda else 'not available'}")
    report, bad = [], []
    for family, name, params, rows in cases(root, imgs, video):
        cpu, t_cpu = run_op(name, params, rows, "cpu", None)
        entry = {"family": family, "op": name, "n_values": len(cpu), "cpu_s": t_cpu, "cpu": cpu}
        if has_cuda:
            for dtype in ("float32", "float16"):
                got, t = run_op(name, params, rows, "cuda", dtype)
                diff = max(abs(a - b) for a, b in zip(cpu, got)) if len(got) == len(cpu) else float("inf")
                entry[f"cuda_{dtype}_s"], entry[f"cuda_{dtype}_max_diff"] = t, diff
                if not diff <= TOL[dtype]:
                    bad.append(f"{name} cuda {dtype}: max diff {diff:.2e} > {TOL[dtype]:g}")
        report.append(entry)
        line = f"{family:10s} {name:30s} n={len(cpu):2d} cpu {t_cpu * 1000:7.1f} ms"
        if has_cuda:
            line += (f" | cuda fp32 {entry['cuda_float32_s'] * 1000:7.1f} ms diff {entry['cuda_float32_max_diff']:.1e}"
                     f" | cuda fp16 {entry['cuda_float16_s'] * 1000:7.1f} ms diff {entry['cuda_float16_max_diff']:.1e}")
        print(line, flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
            json.dump({"cuda": has_cuda, "device": torch.cuda.get_device_name(0) if has_cuda else None,
                       "results": report, "failures": bad}, f, indent=2)
    for b in bad:
        print("FAIL", b)
    if not has_cuda:
        print("no GPU: CUDA runs skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
