"""Generate docs/Operators.md from the operator registry.

    python tools/op_docs.py            # rewrite docs/Operators.md
    python tools/op_docs.py --check    # exit 1 when the committed file is stale
"""

import argparse
import inspect
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from data_juicer.ops.base import OP  # noqa: E402
from data_juicer.ops.registry import OPERATORS  # noqa: E402

TARGET = os.path.join(ROOT, "docs", "Operators.md")
_PARAM = re.compile(r":param (\w+):\s*(.*?)(?=\n\s*:param |\n\s*:return|\Z)", re.S)


def _own_params(cls):
    seen, out = set(), []
    for klass in cls.__mro__:
        if klass.__module__ == "data_juicer.ops.base" or klass is OP:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in seen:
                continue
            seen.add(p.name)
            out.append(p)
    return out


def _param_docs(cls) -> dict:
    docs = {}
    for klass in reversed(cls.__mro__):
        text = (klass.__dict__.get("__doc__") or "") + ((klass.__dict__.get("__init__") or object).__doc__ or "")
        for name, desc in _PARAM.findall(text):
            docs[name] = " ".join(desc.split())
    return docs


def _type_name(annotation) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None) or repr(annotation)
    return text.replace("typing.", "").replace("pydantic.types.", "").replace("|", "\\|")


def _default(value) -> str:
    if value is inspect.Parameter.empty:
        return "(required)"
    if value == sys.maxsize:
        return "sys.maxsize"
    return repr(value).replace("|", "\\|")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


SPEC = os.path.join(ROOT, "tests", "data", "spec", "ops.json")

# Data-Juicer ops not registered here: their model code is only in research repositories (no registry
# package carries it). The plug-in kind (data_juicer/models/plugins.py) describes the model interface
# already written for the op; None: not even that yet.
NOT_REGISTERED = {
    "image_sam_3d_body_mapper": ("sam_3d_body", "SAM 3D Body's code is only in facebookresearch/sam-3d-body"),
    "vggt_mapper": ("vggt", "VGGT's code is only in facebookresearch/vggt"),
    "video_active_speaker_detect_mapper": ("active_speaker", "TalkNet-ASD's code is only in its research repository"),
    "video_camera_calibration_deepcalib_mapper": ("camera_calibration_deepcalib",
                                                  "DeepCalib's code is only in its research repository"),
    "video_camera_calibration_droidcalib_mapper": ("camera_calibration_droidcalib",
                                                   "DROID-Calib's code is only in boschresearch/DroidCalib"),
    "video_camera_calibration_moge_mapper": ("camera_calibration_moge", "MoGe-2's code is only in microsoft/MoGe"),
    "video_camera_pose_megasam_mapper": ("camera_pose_megasam", "MegaSaM's code is only in mega-sam/mega-sam"),
    "video_captioning_face_attribute_emotion_mapper": (
        None, "reads the tracks of video_human_tracks_extraction_mapper (research code) and runs VideoLLaMA3, whose "
              "code ships only as remote code in its model repository"),
    "video_captioning_from_human_tracks_mapper": (
        None, "reads the tracks of video_human_tracks_extraction_mapper (research code) and runs VideoLLaMA3, whose "
              "code ships only as remote code in its model repository"),
    "video_hand_reconstruction_hawor_mapper": ("hand_reconstruction_hawor",
                                               "HaWoR's code is only in ThunderVVV/HaWoR"),
    "video_hand_reconstruction_mapper": ("hand_reconstruction", "WiLoR's code is only in rolpotamias/WiLoR"),
    "video_human_tracks_extraction_mapper": ("human_tracks", "Light-ASD's S3FD face detector and the HumanVBench "
                                                             "YOLOv8 human weights are only in research repositories"),
}


def _not_registered(registered) -> list:
    """Lines for the Data-Juicer ops of the spec that the registry does not hold, with the reason."""
    import json

    with open(SPEC, encoding="utf-8") as f:
        spec = json.load(f)
    spec = spec if isinstance(spec, list) else spec.get("ops", spec)
    missing = sorted((o for o in spec if o["name"] not in registered), key=lambda o: o["name"])
    if not missing:
        return []
    lines = [f"## Data-Juicer operators not registered here ({len(missing)})", "",
             "Their model code is in no registry package, so they are not counted as done. Where a plug-in kind is "
             "named, the model interface is written (`data_juicer/models/plugins.py`: what the predictor takes "
             "and returns); the op around it is still to be built.", "",
             "| operator | type | modality | model (Data-Juicer's default) | why not here | plug-in kind |",
             "|---|---|---|---|---|---|"]
    for o in missing:
        kind, why = NOT_REGISTERED.get(o["name"], (None, "not built yet"))
        lines.append(f"| `{o['name']}` | {o['type']} | {o['modality']} | {_cell(str(o.get('default_model') or ''))} "
                     f"| {_cell(why)} | {f'`{kind}`' if kind else '-'} |")
    return lines + [""]


def render() -> str:
    items = OPERATORS.items()
    by_type: dict[str, list] = {}
    for name, cls in items:
        by_type.setdefault(cls.op_type, []).append((name, cls))
    lines = ["# Operators", "", "Generated from the registry by `python tools/op_docs.py`; do not edit by hand.", "",
             f"{len(items)} operators. Every op also takes the common parameters of its base class "
             "(`text_key`, `batch_size`, `num_proc`, `skip_op_error`, ...; filters also `min_closed_interval`, "
             "`max_closed_interval`, `reversed_range`): see `data_juicer/ops/base.py`.", ""]
    for op_type in ("mapper", "filter", "deduplicator", "selector", "grouper", "aggregator", "other"):
        ops = by_type.get(op_type, [])
        if not ops:
            continue
        lines += [f"## {op_type.capitalize()}s ({len(ops)})", "",
                  "| operator | modality | what it does |", "|---|---|---|"]
        for name, cls in ops:
            summary = " ".join(inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0].split())
            lines.append(f"| [`{name}`](#{name}) | {cls.modality} | {_cell(summary)} |")
        lines.append("")
        for name, cls in ops:
            lines += [f"### {name}", "", inspect.cleandoc(cls.__doc__ or "").strip(), "",
                      f"Type: {op_type} · modality: {cls.modality}"
                      + (f" · needs: {', '.join(cls.requires)}" if cls.requires else ""), ""]
            params = _own_params(cls)
            if params:
                docs = _param_docs(cls)
                lines += ["| parameter | type | default | meaning |", "|---|---|---|---|"]
                for p in params:
                    lines.append(f"| `{p.name}` | {_type_name(p.annotation)} | `{_default(p.default)}` | "
                                 f"{_cell(docs.get(p.name, ''))} |")
                lines.append("")
    lines += _not_registered({name for name, _ in items})
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = open(TARGET, encoding="utf-8").read() if os.path.exists(TARGET) else ""
        if current != text:
            print(f"{TARGET} is stale: run `python tools/op_docs.py`", file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(TARGET), exist_ok=True)
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
