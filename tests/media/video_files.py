"""Small test videos made with ffmpeg's lavfi sources (session-scoped, a few KB each).

Import the fixture into a test module (``from tests.media.video_files import video_files  #
noqa: F401``) and index it by name; or call ``make_video_files(folder)`` directly.

Every file is H.264/yuv420p MP4 unless its name says otherwise:

=================  ====================================================================
``motion``         testsrc2 64x48, 10 fps, 2 s (20 frames), key frame every 5 frames
``static``         one flat grey colour, 64x48, 10 fps, 2 s (no motion at all)
``one_frame``      testsrc2 64x48, a single frame
``vfr``            testsrc2 64x48, 12 frames at variable spacing (variable frame rate)
``audio``          ``motion`` plus a 440 Hz AAC sine track
``short``          testsrc2 64x48, 10 fps, 0.3 s (3 frames)
``long``           testsrc2 64x48, 10 fps, 5 s (50 frames), key frame every 10 frames
``portrait``       testsrc2 48x64, 10 fps, 1 s
``wide``           testsrc2 128x32 (aspect 4:1), 10 fps, 1 s
``scenes``         three 1 s shots (red, testsrc2, blue) 64x48, 10 fps: two hard cuts
``webm``           testsrc2 64x48 VP8 in WebM, 1 s (no declared frame count or stream duration)
``corrupt``        random bytes named .mp4
``truncated``      the first 40% of ``motion`` (index at the end: cannot be opened)
``missing``        a path that does not exist
=================  ====================================================================
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Mapping

import pytest

SIZE = "64x48"


def _ff(out, *args):
    cmd = ["ffmpeg", "-nostdin", "-y", "-loglevel", "error", *args, out]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def _x264(gop: int):
    return ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", str(gop),
            "-keyint_min", str(gop), "-sc_threshold", "0", "-bf", "0"]


_SRC = f"testsrc2=size={SIZE}:rate=10"
_RECIPES = {
    "motion": ("mp4", ["-f", "lavfi", "-i", _SRC, "-t", "2", *_x264(5)]),
    "static": ("mp4", ["-f", "lavfi", "-i", f"color=c=gray:size={SIZE}:rate=10", "-t", "2", *_x264(5)]),
    "one_frame": ("mp4", ["-f", "lavfi", "-i", _SRC, "-frames:v", "1", *_x264(5)]),
    "vfr": ("mp4", ["-f", "lavfi", "-i", _SRC, "-frames:v", "12", "-vf", "setpts='(N+N*N/8)/(10*TB)'",
                    "-fps_mode", "vfr", *_x264(4)]),
    "audio": ("mp4", ["-f", "lavfi", "-i", _SRC, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000",
                      "-t", "2", *_x264(5), "-c:a", "aac", "-shortest"]),
    "short": ("mp4", ["-f", "lavfi", "-i", _SRC, "-frames:v", "3", *_x264(5)]),
    "long": ("mp4", ["-f", "lavfi", "-i", _SRC, "-t", "5", *_x264(10)]),
    "portrait": ("mp4", ["-f", "lavfi", "-i", "testsrc2=size=48x64:rate=10", "-t", "1", *_x264(5)]),
    "wide": ("mp4", ["-f", "lavfi", "-i", "testsrc2=size=128x32:rate=10", "-t", "1", *_x264(5)]),
    "scenes": ("mp4", ["-f", "lavfi", "-i", f"color=c=red:size={SIZE}:rate=10:d=1",
                       "-f", "lavfi", "-i", f"testsrc2=size={SIZE}:rate=10:d=1",
                       "-f", "lavfi", "-i", f"color=c=blue:size={SIZE}:rate=10:d=1",
                       "-filter_complex", "[0:v][1:v][2:v]concat=n=3:v=1:a=0[v]", "-map", "[v]", *_x264(30)]),
    "webm": ("webm", ["-f", "lavfi", "-i", _SRC, "-t", "1", "-c:v", "libvpx", "-b:v", "200k"]),
}
NAMES = (*_RECIPES, "corrupt", "truncated", "missing")


class VideoFiles(Mapping):
    """``{name: absolute path}``; each file is written the first time it is asked for (an ffmpeg
    start costs ~1-2 s here, so a test module only pays for the videos it uses)."""

    def __init__(self, folder):
        self.folder = os.path.abspath(str(folder))
        os.makedirs(self.folder, exist_ok=True)
        self._made: dict[str, str] = {}

    def __iter__(self):
        return iter(NAMES)

    def __len__(self):
        return len(NAMES)

    def __getitem__(self, name: str) -> str:
        if name in self._made:
            return self._made[name]
        if name not in NAMES:
            raise KeyError(f"no test video {name!r}; there are {', '.join(NAMES)}")
        if name in _RECIPES:
            ext, args = _RECIPES[name]
            out = _ff(os.path.join(self.folder, f"{name}.{ext}"), *args)
        elif name == "corrupt":
            out = os.path.join(self.folder, "corrupt.mp4")
            rnd = random.Random(0)
            with open(out, "wb") as f:
                f.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
        elif name == "truncated":
            with open(self["motion"], "rb") as f:
                data = f.read()
            out = os.path.join(self.folder, "truncated.mp4")
            with open(out, "wb") as f:
                f.write(data[: int(len(data) * 0.4)])
        else:
            out = os.path.join(self.folder, "does_not_exist.mp4")
        self._made[name] = out
        return out


def make_video_files(folder) -> VideoFiles:
    """The test videos in ``folder`` (made on first use)."""
    return VideoFiles(folder)


@pytest.fixture(scope="session")
def video_files(tmp_path_factory) -> VideoFiles:
    if shutil.which("ffmpeg") is None:
        pytest.fail("the ffmpeg program is needed to make the test videos (apt-get install ffmpeg)")
    return make_video_files(tmp_path_factory.mktemp("videos"))
