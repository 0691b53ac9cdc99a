"""Face detection with OpenCV's Haar cascades, as Data-Juicer's face ops detect faces.

The cascade file is OpenCV's bundled ``haarcascade_frontalface_alt.xml`` unless the op names
another (a path, or a file name looked up among OpenCV's bundled cascades and the model
folders). Ops keep only the path (they are pickled to workers and Ray actors); each process
builds the ``cv2.CascadeClassifier`` once on first use (``load_once``), shared by the ops that
use the same file.

Detection runs on the image converted to grey from OpenCV's BGR layout, with Data-Juicer's
``detectMultiScale`` settings (scaleFactor 1.1, minNeighbors 3), and boxes are clipped to the
image as Data-Juicer does.
"""

from __future__ import annotations

import os

from data_juicer.utils.lazy import require

DEFAULT_CASCADE = "haarcascade_frontalface_alt.xml"
DETECT_KWARGS = {"scaleFactor": 1.1, "minNeighbors": 3}


def resolve_cascade(cv_classifier: str, who: str) -> str:
    """The cascade file for ``cv_classifier`` ('' = OpenCV's frontal-face cascade).

    A FileNotFoundError names every place looked at.
    """
    cv2 = require("opencv-python-headless", who=who)
    name = cv_classifier or DEFAULT_CASCADE
    looked = []
    if os.path.isabs(name) or os.sep in name:
        looked.append(os.path.abspath(name))
    else:
        looked.append(os.path.join(cv2.data.haarcascades, name))
        from data_juicer.models.loader import model_dirs

        looked += [os.path.join(d, name) for d in model_dirs()]
    for p in looked:
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(f"{who}: OpenCV cascade '{name}' not found; looked at: {', '.join(looked)}. "
                            f"Give cv_classifier as the path of a Haar cascade XML file, or leave it empty for "
                            f"OpenCV's bundled {DEFAULT_CASCADE} (install opencv-python-headless<5: OpenCV 5 "
                            f"no longer ships cascades)")


def load_cascade(path: str, owner: str | None = None):
    """The ``cv2.CascadeClassifier`` for ``path``, built once per process and kept for its life.

    ``owner`` (the op's name) only names it in errors: a cascade is about 1 MB, so it is not
    registered to be released when its op's pass ends (``models.loader.release_models`` then runs
    a full ``gc.collect()``: 0.1-0.2 CPU s in a driver that has ``datasets`` loaded, serial time
    after every pass of the run)."""
    from data_juicer.models.loader import load_once

    def build():
        cv2 = require("opencv-python-headless", who=owner or "")
        if not hasattr(cv2, "CascadeClassifier"):
            raise RuntimeError(f"OpenCV {cv2.__version__} has no CascadeClassifier; install opencv-python-headless<5")
        try:
            clf = cv2.CascadeClassifier(path)
        except Exception as e:  # cv2.error / SystemError on malformed XML
            raise ValueError(f"'{path}' is not a valid OpenCV cascade file ({type(e).__name__}: {e})") from e
        if clf.empty():
            raise ValueError(f"'{path}' is not a valid OpenCV cascade file")
        return clf

    return load_once(("opencv_cascade", path), build)


def detect_faces(image, cascade, gray=None, **kwargs) -> list[list[int]]:
    """``[[x, y, w, h], ...]`` faces in a PIL image, clipped to it (as Data-Juicer's ``detect_faces``).

    ``gray`` is the image's ``media.image.to_gray`` when the caller has it (``row_gray``: shared
    by the ops of a pass), else it is computed here."""
    from data_juicer.media.image import opencv, to_gray

    opencv()  # one OpenCV thread in a pool worker
    if gray is None:
        gray = to_gray(image)
    dets = cascade.detectMultiScale(gray, **{**DETECT_KWARGS, **kwargs})
    out = []
    for x, y, w, h in dets:
        x, y = max(int(x), 0), max(int(y), 0)
        out.append([x, y, min(int(w), image.width - x), min(int(h), image.height - y)])
    return out


_FACES = "__dj__faces__"  # context key of a row's {(cascade file, image path): faces}


def row_faces(samples: dict, row: int, path, image, cascade_path: str, cascade) -> list[list[int]]:
    """``detect_faces`` of image ``path`` of row ``row`` with the default settings, found once per row
    and pass: the face filters of one pass that use the same cascade file (``image_face_count_filter``,
    ``image_face_ratio_filter``) share the detections through the row's context, as they share the
    decoded image and its grey version (``media.image.row_gray``)."""
    from data_juicer.media.image import row_context, row_gray

    ctx = row_context(samples, row)
    if ctx is None:
        return detect_faces(image, cascade)
    found = ctx.setdefault((_FACES,), {})
    key = (cascade_path, path)
    faces = found.get(key)
    if faces is None:
        faces = found[key] = detect_faces(image, cascade, gray=row_gray(samples, row, path, image))
    return faces
