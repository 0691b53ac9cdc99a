#!/usr/bin/env bash
# Ours vs Data-Juicer 1.6.1's own video_object_segmenting_mapper on the same tiny model files and video.
# Usage: benchmarks/sam2/run.sh [WORKDIR]   (about 2 minutes on a loaded 2-core machine)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
W="${1:-/tmp/sam2-compare}"
DJ_VENV="${DJ_VENV:-/work/djref-vision}"   # py-data-juicer 1.6.1 + transformers 4.57 + torch 2.13 (CPU)
mkdir -p "$W"
[ -f "$W/sam2/config.json" ] || python "$HERE/build_models.py" "$W"
if [ ! -x "$W/djvenv/bin/python" ]; then
  # an overlay on DJ's venv (left untouched) with what its op imports and the venv lacks
  python -m venv "$W/djvenv"
  echo "$DJ_VENV/lib/python3.11/site-packages" > "$W/djvenv/lib/python3.11/site-packages/djref.pth"
  "$W/djvenv/bin/pip" install -q --no-deps av==18.1.0 opencv-python-headless==4.13.0.92 torchvision==0.28.0
  # the PyPI torchvision's C ops are CUDA builds that do not load against torch+cpu; the image
  # processor only needs its Python transforms: skip the op registrations when _C is absent
  python - "$W/djvenv/lib/python3.11/site-packages/torchvision/__init__.py" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
s = s.replace("from torchvision import (\n    _autograd_registrations,\n    _meta_registrations,\n",
              "if extension._has_ops():\n    from torchvision import _autograd_registrations, _meta_registrations\nfrom torchvision import (\n")
open(p, "w").write(s)
PY
fi
for mode in binary logits; do
  python "$HERE/ours.py" "$W/sam2" "$W/yoloe/yoloe-11l-seg.pt" "$W/v.mp4" "$W/$mode" $mode 2>/dev/null | grep wall
  (cd "$W" && "$W/djvenv/bin/python" "$HERE/dj.py" "$W/sam2" "$W/v.mp4" "$W/$mode" $mode 2>/dev/null | grep wall)
  echo "== $mode"; python "$HERE/compare.py" "$W/$mode"
done
