"""Image-text filtering benchmark: CLIP similarity + aesthetics + NSFW + watermark over N images, on CPU.

    python benchmarks/media/image_text_run.py                 # ours, 1,000 images, tiny models
    python benchmarks/media/image_text_run.py --models-dir D  # real models under D/<DJ model name>
    python benchmarks/media/image_text_run.py --with-dj       # + Data-Juicer 1.6.1 on the same files
    python benchmarks/media/image_text_run.py --real-size --n 32 --with-dj --parallel   # real-size models
    python benchmarks/media/image_text_run.py --real-size --n 16 --profile  # CPU ms/image per model, no recipe

Data: N seeded 256x256 JPEGs (colour blocks + noise) and a caption each, in
``benchmarks/media/work/`` (gitignored). Models: ``--models-dir`` holding the four models under
their Data-Juicer names (``openai/clip-vit-base-patch32``,
``shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE``, ``Falconsai/nsfw_image_detection``,
``amrul-hzz/watermark_detector``), else the tiny seeded models of the tests
(``tests/models/vision_tiny_models.py``) are built there; ``--real-size``: the real architectures
of those four models (CLIP ViT-B/32; CLIP ViT-L/14 vision + the v2 head; two ViT-B/16 classifiers;
224 px processors with the real preprocessor configs) with seeded random weights, built once into
``work/real-size-models`` (2.4 GB). Random weights cost the same compute as trained ones, so the
throughput is what the released models give (the stats are not meaningful values). The recipe names the model folders by
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


# -- real-size models: Data-Juicer's default architectures with seeded random weights ---------
REAL_SIZE_DIR = "real-size-models"


def _fill_inplace(model, seed: int, std: float = 0.02):
    """Every float parameter/buffer from a seeded normal (std ``std``), norms at 1/0, in place (no
    second copy of the weights in memory). Random weights cost the same compute as trained ones."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in sorted(model.state_dict(keep_vars=True).items()):
            if not t.is_floating_point():
                continue
            low = name.lower()
            if t.ndim == 1 and ("norm" in low or ".ln" in low or low.startswith("ln")):
                t.fill_(1.0 if name.endswith("weight") else 0.0)
            else:
                t.copy_(torch.randn(t.shape, generator=gen) * std)
    return model


def real_clip(folder: str, seed: int = 0) -> None:
    """openai/clip-vit-base-patch32: ``CLIPConfig()``'s defaults are that model (text 12x512, 77
    positions, vocabulary 49,408; vision ViT-B/32 12x768 at 224 px; projection 512), with its
    processor (``CLIPImageProcessor()`` defaults = its preprocessor_config: shortest edge 224,
    centre crop 224, bicubic, OpenAI mean/std). The tokenizer is the tests' tiny byte-level BPE
    (no CLIP vocabulary offline): captions become more tokens than with CLIP's (byte fallback), so
    the text tower, a few % of the work here, costs a little more than with the real tokenizer."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    from tests.models.vision_tiny_models import _save, clip_tokenizer

    tok = clip_tokenizer(os.path.join(folder, ".tok"))
    cfg = CLIPConfig(text_config={"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
                                  "pad_token_id": tok.pad_token_id})
    model = _fill_inplace(CLIPModel(cfg), seed)
    _save(model, CLIPProcessor(image_processor=CLIPImageProcessor(), tokenizer=tok), folder)


def real_aesthetics(folder: str, seed: int = 0) -> None:
    """shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE: CLIP ViT-L/14's vision tower
    with projection (24x1024, 16 heads, patch 14, 224 px, projection 768, quick_gelu: the
    clip-vit-large-patch14 vision config) + the v2 MLP head, with ViT-L/14's CLIP processor."""
    from transformers import CLIPVisionConfig

    from data_juicer.models.vision import aesthetics_class
    from tests.models.vision_tiny_models import _save

    cls = aesthetics_class("v2_linear")
    cfg = CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
                           patch_size=14, image_size=224, projection_dim=768, hidden_act="quick_gelu")
    model = cls(cfg)
    model.config.architectures = [cls.__name__]
    _save(_fill_inplace(model, seed), _clip_processor(folder), folder)


def _clip_processor(folder: str):
    """CLIP's processor (224 px image processor + the tiny tokenizer): what both systems load from
    the aesthetics folder (as the real repository, which holds CLIP's whole processor)."""
    from transformers import CLIPImageProcessor, CLIPProcessor

    from tests.models.vision_tiny_models import clip_tokenizer

    return CLIPProcessor(image_processor=CLIPImageProcessor(), tokenizer=clip_tokenizer(os.path.join(folder, ".tok")))


def real_vit(folder: str, labels: tuple, seed: int = 0) -> None:
    """A ViT-base/16 image classifier at 224 px (``ViTConfig()`` defaults: 12x768, 12 heads, MLP
    3072), as Falconsai/nsfw_image_detection and amrul-hzz/watermark_detector are, with their
    ``ViTImageProcessor`` (224x224, bilinear, mean/std 0.5: ``ViTImageProcessor()`` defaults)."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    from tests.models.vision_tiny_models import _save

    cfg = ViTConfig(num_labels=len(labels), id2label=dict(enumerate(labels)),
                    label2id={lab: i for i, lab in enumerate(labels)})
    _save(_fill_inplace(ViTForImageClassification(cfg), seed), ViTImageProcessor(), folder)


REAL_BUILDERS = {
    MODELS["clip"]: lambda f: real_clip(f),
    MODELS["aes"]: lambda f: real_aesthetics(f, seed=1),
    MODELS["nsfw"]: lambda f: real_vit(f, ("normal", "nsfw"), seed=2),
    MODELS["wm"]: lambda f: real_vit(f, ("clean", "watermark"), seed=3),
}


def _du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def ensure_real_models(work: Path) -> Path:
    """Builds the four real-size models once under ``work/real-size-models`` (cached); prints the disk use."""
    import gc
    import time

    root = work / REAL_SIZE_DIR
    for name, build in REAL_BUILDERS.items():
        folder = root / name
        if (folder / "config.json").exists():
            if name == MODELS["aes"] and not (folder / "tokenizer_config.json").exists():
                _clip_processor(str(folder)).save_pretrained(str(folder))  # folders built before it had one
            continue
        t0 = time.time()
        tmp = folder.with_name(folder.name + ".partial")
        build(str(tmp))
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        tmp.rename(folder)
        gc.collect()
        print(f"built {name} in {time.time() - t0:.0f} s ({_du_mb(folder):.0f} MB)", flush=True)
    print(f"real-size models: {root} ({_du_mb(root):.0f} MB on disk)", flush=True)
    return root


def ensure_models(models_dir: Path | None, work: Path, real_size: bool = False) -> Path:
    if models_dir:
        return models_dir
    if real_size:
        return ensure_real_models(work)
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


def op_shares(model, ip, imgs, clip: bool) -> dict:
    """Share of the forward pass's self CPU time per kind of torch op (torch profiler, one chunk):
    matrix products (linear / matmul / bmm / addmm / conv), attention kernels, the rest."""
    import torch
    from torch.profiler import ProfilerActivity, profile as tprofile

    px = ip(images=list(imgs), return_tensors="pt")["pixel_values"]
    with torch.inference_mode(), tprofile(activities=[ProfilerActivity.CPU]) as prof:
        model.get_image_features(pixel_values=px) if clip else model(pixel_values=px)
    kinds = {"gemm": ("addmm", "mm", "bmm", "matmul", "linear", "conv", "mkldnn"),
             "attention": ("attention", "softmax")}
    tot, by = 0.0, {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    top = []
    for ev in prof.key_averages():
        t = ev.self_cpu_time_total
        tot += t
        name = ev.key.lower()
        kind = next((k for k, pats in kinds.items() if any(p in name for p in pats)), "other")
        by[kind] += t
        top.append((t, ev.key))
    top.sort(reverse=True)
    return {**{k: round(v / max(tot, 1e-9), 3) for k, v in by.items()},
            "top": [(k, round(t / max(tot, 1e-9), 3)) for t, k in top[:6]]}


def profile(root: Path, data: Path, n: int, batch: int, which: str = "nsfw,wm,aes,clip") -> dict:
    """In-process CPU seconds (``time.process_time``, all threads) per image of each model's
    pre-processing and forward pass: ours (batches of ``batch``, our loader and scoring functions)
    and Data-Juicer's way (one sample per call, the same processor, ``no_grad`` like DJ's NSFW /
    watermark / aesthetics ops; DJ's similarity op has none), with this process's torch threads
    and with one (``dj_way_1_thread``: what DJ's forked op workers run). Same torch and
    transformers for both, so it isolates batching from library versions."""
    import time

    import torch
    from PIL import Image

    from data_juicer.models.vision import load_vision_model
    from data_juicer.models.vision_scores import aesthetics_scores, class_probs, clip_image_embeds, clip_text_embeds

    rows = benchlib.load_jsonl(data)[:n]
    imgs = [Image.open(r["images"][0]).convert("RGB") for r in rows]
    texts = [r["text"].replace(IMG, "").strip() for r in rows]
    out = {"torch_threads": torch.get_num_threads(), "n": len(imgs)}

    def clock(fn):
        t0, w0 = time.process_time(), time.perf_counter()
        fn()
        return {"cpu_ms_per_image": 1000 * (time.process_time() - t0) / len(imgs),
                "wall_ms_per_image": 1000 * (time.perf_counter() - w0) / len(imgs)}

    specs = {
        "nsfw": dict(name=str(root / MODELS["nsfw"]), processor="AutoImageProcessor",
                     fallback_class="AutoModelForImageClassification"),
        "wm": dict(name=str(root / MODELS["wm"]), processor="AutoImageProcessor",
                   fallback_class="AutoModelForImageClassification"),
        "aes": dict(name=str(root / MODELS["aes"]), arch="aesthetics", processor="CLIPProcessor"),
        "clip": dict(name=str(root / MODELS["clip"]), processor="AutoProcessor"),
    }
    for key, spec in specs.items():
        if key not in which.split(","):
            continue
        model, proc = load_vision_model(**spec)
        ip = getattr(proc, "image_processor", None) or proc
        res = {"preprocess": clock(lambda: [ip(images=[im], return_tensors="pt") for im in imgs])}
        px = ip(images=imgs[:1], return_tensors="pt")["pixel_values"]
        with torch.inference_mode():
            model(pixel_values=px) if key != "clip" else model.get_image_features(pixel_values=px)  # warm-up
        if key in ("nsfw", "wm"):
            res["ours"] = clock(lambda: class_probs(model, proc, imgs))

            def dj():
                with torch.no_grad():
                    for im in imgs:
                        model(**ip(images=[im], return_tensors="pt"))
        elif key == "aes":
            res["ours"] = clock(lambda: aesthetics_scores(model, proc, imgs, True))

            def dj():
                with torch.no_grad():
                    for im in imgs:
                        model(**ip(images=[im], return_tensors="pt"))
        else:
            res["ours"] = clock(lambda: (clip_image_embeds(model, proc, imgs), clip_text_embeds(model, proc, texts)))
            max_len = model.config.text_config.max_position_embeddings

            def dj():
                for im, t in zip(imgs, texts):
                    model(**proc(text=t, images=[im], return_tensors="pt", truncation=True, max_length=max_len,
                                 padding=True))
        res["dj_way"] = clock(dj)
        # what Data-Juicer 1.6.1 actually runs: its auto num_proc forks workers for a model op, and
        # get_model() in a worker calls setup_worker_threads(1): one torch thread per worker
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            res["dj_way_1_thread"] = clock(dj)
        finally:
            torch.set_num_threads(threads)
        res["op_share"] = op_shares(model, ip, imgs[:min(len(imgs), 8)], key == "clip")
        out[key] = res
        print(key, json.dumps(res), flush=True)
        del model, proc
        from data_juicer.models.loader import clear_models

        clear_models()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--np", type=int, default=1, help="worker processes (np) for both systems")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--real-size", action="store_true",
                    help="seeded random weights for the real architectures of Data-Juicer's default models "
                         "(CLIP ViT-B/32, aesthetics CLIP ViT-L/14 + head, two ViT-B/16 classifiers; 224 px), "
                         "built once under WORK/real-size-models (~2.4 GB)")
    ap.add_argument("--with-dj", action="store_true")
    ap.add_argument("--parallel", action="store_true",
                    help="with --with-dj: run both systems at the same time (same machine load; on a shared "
                         "machine this halves the wall time; compare CPU seconds too)")
    ap.add_argument("--pil-check", action="store_true",
                    help="with --with-dj: also score DJ's kept samples with our functions and PIL image "
                         "processors (isolates the pre-processing backend)")
    ap.add_argument("--profile", action="store_true",
                    help="no recipe runs: CPU ms per image of each model's pre-processing and forward, ours "
                         "(batched) vs one sample per call (Data-Juicer's way), in this process")
    ap.add_argument("--profile-models", default="nsfw,wm,aes,clip", help="with --profile: which models")
    ap.add_argument("--dj-python", default=None)
    ap.add_argument("--work", type=Path, default=HERE / "work")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_data(work, args.n)
    root = ensure_models(args.models_dir, work, args.real_size)
    if args.profile:
        prof = profile(root, data, args.n, args.batch_size, args.profile_models)
        (work / "profile.json").write_text(json.dumps(prof, indent=2))
        print(f"profile: {work / 'profile.json'}")
        return 0
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
