import os
import pickle
from collections import Counter

from data_juicer.media.video import check_video_path
from data_juicer.models.deepface_models import load_deepface, resolve_deepface_home
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, MetaKeys
from data_juicer.utils.lazy import require

NAME = "video_human_tracks_face_demographic_mapper"
ACTIONS = ["age", "gender", "race"]
CROP_SCALE = 0.5  # Data-Juicer's ``cs``: the crop reaches half a face size around the face box
PAD_VALUE = 110


@OPERATORS.register_module(NAME)
class VideoHumantrackFaceDemographicMapper(Mapper):
    """Estimates the age, gender and race of each tracked face with DeepFace (HumanVBench), after
    ``video_human_tracks_extraction_mapper``: meta ``human_track_data_path`` holds, per video, a
    list of tracks whose ``bbox_path`` names a pickle ``{"frame": [frame ids], "xys_bbox": {"x":
    [centre x], "y": [centre y], "s": [half size]}}``.

    For each track, every ``detect_interval``-th frame of the track (every ``len // 15``-th for a
    track longer than 75 frames) is cropped around the face as Data-Juicer 1.6.1 does (the frame
    padded by ``int(s * 2)`` pixels of value 110, then ``s`` above to ``2 s`` below the centre and
    ``1.5 s`` each side) and given to ``DeepFace.analyze(actions=["age", "gender", "race"],
    detector_backend="skip", enforce_detection=False)`` (frames are read with OpenCV, BGR, as
    DeepFace expects). The raw DeepFace results of a track, ``{frame id: [result]}``, are pickled to
    ``original_data_save_path/<video name without its 4-character extension>_<track index>.pkl``;
    meta ``tag_field_name`` gets, per video, a list with one entry per track: ``{"face_attribute_path":
    that pickle, "age": median of the frame ages, "gender": [most frequent dominant gender, its share
    as a string], "race": [most frequent dominant race, its share as a string]}`` (``None`` and
    ``[None, "0"]`` when no frame gave a face), ``[]`` for a video without tracks.

    Models: DeepFace's own loaders build its age / gender / race models (VGG-Face based, 224x224
    RGB input) from ``age_model_weights.h5``, ``gender_model_weights.h5`` and
    ``race_model_single_batch.h5`` in ``<folder>/.deepface/weights/`` where ``<folder>`` is
    ``$DEEPFACE_HOME`` (default ``~``) or a model folder (``$DJ_MODELS_DIR``); nothing is
    downloaded, a missing file fails when the op is built, naming every path looked at. The models
    are built once per worker (per actor on Ray); TensorFlow runs with ``num_cpus`` (default 1)
    intra-op threads.

    Differs from Data-Juicer on purpose: only the frames a track samples are kept in memory
    (Data-Juicer decodes the whole video into one array); a missing or unreadable track pickle or
    video, or a track frame past the video's end, raises an error naming it (the sample goes to the
    error ledger) where Data-Juicer crashes on ``None``. The ``[label, share]`` pairs are lists
    (Data-Juicer's tuples become lists once stored). As in Data-Juicer, two videos with the same
    file name write the same pickle names.
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("deepface", "tensorflow", "tf-keras", "opencv-python-headless")
    uses_model = True

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        # deepface asks for opencv-contrib-python-headless: name it so dj-install pins it below 5 (the
        # project's OpenCV 4), else pip would bring OpenCV 5 in
        return ("deepface", "tensorflow", "tf-keras", "opencv-contrib-python-headless")

    def __init__(self, original_data_save_path="./outputs/demographic", detect_interval: int = 5,
                 tag_field_name: str = MetaKeys.video_facetrack_attribute_demographic, **kwargs):
        """
        :param original_data_save_path: folder the per-track pickles of raw DeepFace results are
            written to (created on first use)
        :param detect_interval: analyse every n-th frame of a track of at most 75 frames (longer
            tracks are sampled at about 15 frames)
        :param tag_field_name: meta field receiving the per-video, per-track demographics
        """
        super().__init__(**kwargs)
        if not isinstance(detect_interval, int) or detect_interval < 1:
            raise ValueError(f"{self.name}: detect_interval must be a positive integer, got {detect_interval!r}")
        self.original_data_save_path = original_data_save_path
        self.save_dir = os.path.abspath(os.path.expanduser(str(original_data_save_path)))
        self.detect_interval = detect_interval
        self.tag_field_name = tag_field_name
        self.deepface_home = resolve_deepface_home(who=self.name)  # a missing weights file fails now
        self.threads = max(1, int(self.num_cpus or 1))

    # -- per video ------------------------------------------------------------------------------
    def _track(self, track, video: str) -> tuple[str, list, dict]:
        path = track.get("bbox_path") if isinstance(track, dict) else None
        if not path:
            raise ValueError(f"{self.name}: a track of video '{video}' has no 'bbox_path' ({track!r}); "
                             "run video_human_tracks_extraction_mapper first")
        try:
            with open(path, "rb") as f:
                data = pickle.load(f)
            return path, list(data["frame"]), data["xys_bbox"]
        except FileNotFoundError:
            raise FileNotFoundError(f"{self.name}: track file '{path}' of video '{video}' does not exist; "
                                    "rerun video_human_tracks_extraction_mapper or fix meta "
                                    f"'{MetaKeys.human_track_data_path}'") from None
        except (pickle.UnpicklingError, EOFError, KeyError, TypeError, AttributeError, ValueError) as e:
            raise ValueError(f"{self.name}: track file '{path}' of video '{video}' is not a track pickle "
                             f"with 'frame' and 'xys_bbox' ({type(e).__name__}: {e})") from e

    def _sampled(self, frames: list) -> range:
        step = int(len(frames) / 15) if len(frames) > 75 else self.detect_interval
        return range(0, len(frames), step)

    def _read_frames(self, video: str, wanted: set) -> dict:
        """Frames ``wanted`` (indexes in OpenCV's sequential read, BGR) of ``video``."""
        cv2 = require("opencv-python-headless", who=self.name)
        cap = cv2.VideoCapture(check_video_path(video))
        if not cap.isOpened():
            raise ValueError(f"{self.name}: video '{video}' cannot be opened by OpenCV (corrupt or unsupported)")
        got, last, i = {}, max(wanted), 0
        try:
            while i <= last:
                ok, frame = cap.read()
                if not ok:
                    break
                if i in wanted:
                    got[i] = frame
                i += 1
        finally:
            cap.release()
        if len(got) < len(wanted):
            raise ValueError(f"{self.name}: video '{video}' has {i} frames but its tracks name frame {last}; "
                             "the tracks do not belong to this video")
        return got

    def _analyze(self, deepface, frame, x, y, s):
        np = require("numpy", who=self.name)
        pad = int(s * (1 + 2 * CROP_SCALE))
        padded = np.pad(frame, ((pad, pad), (pad, pad), (0, 0)), "constant", constant_values=(PAD_VALUE, PAD_VALUE))
        my, mx = y + pad, x + pad
        face = padded[int(my - s):int(my + s * (1 + 2 * CROP_SCALE)),
                      int(mx - s * (1 + CROP_SCALE)):int(mx + s * (1 + CROP_SCALE))]
        return deepface.analyze(img_path=face, actions=ACTIONS, enforce_detection=False,
                                detector_backend="skip", silent=True)

    def _video(self, video: str, tracks: list) -> list:
        if not tracks:
            return []
        video = check_video_path(video)
        loaded = [self._track(t, video) for t in tracks]  # bad inputs fail before a model loads
        wanted = {frames[j] for _, frames, _ in loaded for j in self._sampled(frames)}
        images = self._read_frames(video, wanted) if wanted else {}
        deepface = load_deepface(self.deepface_home, threads=self.threads, who=self.name)
        os.makedirs(self.save_dir, exist_ok=True)
        out = []
        for k, (_, frames, xys) in enumerate(loaded):
            results = {}
            for j in self._sampled(frames):
                results[frames[j]] = self._analyze(deepface, images[frames[j]], xys["x"][j], xys["y"][j], xys["s"][j])
            name = os.path.basename(video)[:-4] + "_" + str(k) + ".pkl"
            with open(os.path.join(self.save_dir, name), "wb") as f:
                pickle.dump(results, f)
            faces = [r[0] for r in results.values() if r != []]
            out.append({"face_attribute_path": os.path.join(self.original_data_save_path, name),
                        "age": median([r["age"] for r in faces]) if faces else None,
                        "gender": most_frequent([r["dominant_gender"] for r in faces]),
                        "race": most_frequent([r["dominant_race"] for r in faces])})
        return out

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        col = samples.get(self.video_key) or [None] * n
        for i in range(n):
            if MetaKeys.human_track_data_path not in metas[i]:
                raise ValueError(f"{self.name} must run after video_human_tracks_extraction_mapper "
                                 f"(meta '{MetaKeys.human_track_data_path}' is missing)")
            per_video = metas[i][MetaKeys.human_track_data_path] or []
            videos = col[i] or []
            if len(per_video) > len(videos):
                raise ValueError(f"{self.name}: meta '{MetaKeys.human_track_data_path}' has tracks for "
                                 f"{len(per_video)} videos but the sample has {len(videos)}")
            metas[i][self.tag_field_name] = [self._video(v, t or []) for v, t in zip(videos, per_video)]
        samples[Fields.meta] = metas
        return samples


def median(values: list):
    """Data-Juicer's median: the middle value, or the mean of the two middle ones."""
    s, mid = sorted(values), len(values) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def most_frequent(labels: list) -> list:
    """``[most frequent label, its share as a string]`` (``[None, "0"]`` for none), as Data-Juicer."""
    if not labels:
        return [None, "0"]
    label, count = Counter(labels).most_common(1)[0]
    return [label, str(count / len(labels))]
