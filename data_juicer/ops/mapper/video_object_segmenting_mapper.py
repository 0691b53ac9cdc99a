import os
import random
from datetime import datetime

from data_juicer.models.sam2_video import check_sam2, load_sam2, pick_dtype, track_boxes
from data_juicer.models.yoloe import check_yoloe, load_yoloe, predict_with_classes
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import ASSETS_CACHE, device_for, num_rows, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys
from data_juicer.utils.lazy import require

NAME = "video_object_segmenting_mapper"
TAG = MetaKeys.video_object_segment_tags


def empty_tag() -> dict:
    return {"segment_data": [], "cls_id_dict": [], "object_cls_list": [], "yoloe_conf_list": []}


def jpeg_roundtrip(rgb):
    """The frame as Data-Juicer's YOLOE sees it: written as a JPEG by OpenCV (quality 95) and read
    back (BGR); returned as an RGB PIL image (Ultralytics turns it back into the same BGR array)."""
    cv2 = require("cv2", who=NAME)
    from PIL import Image

    ok, buf = cv2.imencode(".jpg", rgb[:, :, ::-1])
    if not ok:
        raise ValueError(f"{NAME}: OpenCV could not JPEG-encode a {rgb.shape} frame")
    return Image.fromarray(cv2.imdecode(buf, cv2.IMREAD_COLOR)[:, :, ::-1])


def video_frames(path: str, who: str = NAME, limit: int = 0) -> list:
    """The frames of ``path`` as RGB H x W x 3 uint8 arrays, in order (the first ``limit`` when
    given); as ``transformers.video_utils.load_video`` (Data-Juicer's reader), at most the
    stream's frame count when the container states one."""
    from data_juicer.media.video import iter_frames, open_video

    with open_video(path, who) as c:
        total = c.streams.video[0].frames or 0
        if limit:
            total = min(total, limit) if total else limit
        frames = []
        for frame in iter_frames(c, path):
            if total and len(frames) >= total:
                break
            frames.append(frame.to_ndarray(format="rgb24"))
    if not frames:
        from data_juicer.media.video import VideoError

        raise VideoError(f"video '{path}' has no decodable frame: it is empty or corrupt; re-encode or "
                         "replace it", path)
    return frames


@OPERATORS.register_module(NAME)
class VideoObjectSegmentingMapper(Mapper):
    """Text-guided segmentation of the sample's main objects through its first video (YOLOE + SAM2).

    YOLOE detects the names of ``main_character_list`` (text prompts, confidence >= ``yoloe_conf``)
    on the first frame of the sample's first video; each box (rounded down to whole pixels) becomes
    an object that SAM2 tracks through every frame. Writes ``__dj__meta__['video_object_segment_tags']``
    = ``{segment_data, cls_id_dict, object_cls_list, yoloe_conf_list}``: per frame a list of
    per-object masks (``1 x H x W`` nested lists: booleans when binarized, else mask logits), the
    class names, each object's class index and its YOLOE confidence. A sample without a video,
    without characters or where nothing is detected gets empty lists; a sample that has the tag is
    left alone.

    As Data-Juicer, YOLOE sees the first frame after a JPEG round trip (OpenCV, quality 95: what
    Data-Juicer writes to a temporary file and predicts from), and the frames SAM2 tracks are all
    the decoded RGB frames. The YOLOE detections of a whole batch run together (rows with the same
    character list, frames of the same size); SAM2 runs one session per video with the model
    loaded once per worker; frames are decoded with PyAV in memory (no temporary files), all
    frames of one video at a time and only when YOLOE found something in its first frame.

    Differences from Data-Juicer: ``torch_dtype`` is honoured on a GPU (``bf16`` falls back to fp32
    on a GPU without bf16); on the CPU the models run in fp32 (Data-Juicer would run bf16 there,
    slowly and less accurately). A missing or corrupt video raises a clear error naming the file
    (the executor records the sample in the error ledger); Data-Juicer silently writes empty tags
    when OpenCV cannot read the first frame. A container that states no frame count is read to its
    end (Data-Juicer's reader fails on it). The first frame comes from PyAV, not OpenCV's reader.
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "transformers", "ultralytics", "av", "opencv-python")  # + clip-anytorch, checked at build
    uses_model = True
    uses = (InterVars.loaded_videos,)

    def __init__(
        self,
        sam2_hf_model: str = "facebook/sam2.1-hiera-tiny",
        yoloe_path: str = "yoloe-11l-seg.pt",
        yoloe_conf: float = 0.5,
        torch_dtype: str = "bf16",
        if_binarize: bool = True,
        if_save_visualization: bool = False,
        save_visualization_dir: str = ASSETS_CACHE,
        *args,
        **kwargs,
    ):
        """
        :param sam2_hf_model: the SAM2 model (Hugging Face ``Sam2VideoModel`` + processor): a
            name looked up in the model folders / Hugging Face cache, or a folder
        :param yoloe_path: the YOLOE weights: a path, or a file name in the model folders (its
            MobileCLIP text encoder ``mobileclip_blt.ts`` beside it or in the model folders)
        :param yoloe_conf: confidence threshold of the YOLOE detections
        :param torch_dtype: floating point type of the SAM2 inference on a GPU: fp32, fp16 or bf16
            (the CPU always runs fp32)
        :param if_binarize: whether the masks are binarized (else the mask logits are kept);
            forced to True when ``if_save_visualization`` is set
        :param if_save_visualization: whether each object's mask of each frame is saved as a JPEG
        :param save_visualization_dir: the folder the visualizations are saved in
        """
        super().__init__(*args, **kwargs)
        pick_dtype(torch_dtype, "cpu")  # an unknown dtype fails now
        self.sam2_hf_model = sam2_hf_model
        self.yoloe_path = yoloe_path
        self.yoloe_conf = yoloe_conf
        self.torch_dtype = torch_dtype
        self.if_save_visualization = if_save_visualization
        self.save_visualization_dir = save_visualization_dir
        self.if_binarize = True if if_save_visualization else if_binarize
        self.tag_field_name = TAG
        check_yoloe(yoloe_path, self.name)
        check_sam2(sam2_hf_model, self.name)

    def detect(self, first_frames: list, names: list[list[str]]) -> list:
        """One Ultralytics ``Results`` per (first frame, class names) pair, YOLOE batched by class list."""
        out: list = [None] * len(first_frames)
        groups: dict = {}
        for k, n in enumerate(names):
            groups.setdefault(tuple(n), []).append(k)
        model = load_yoloe(self.yoloe_path, device_for(self), who=self.name)
        for classes, idx in groups.items():
            images = [jpeg_roundtrip(first_frames[k]) for k in idx]
            for k, res in zip(idx, predict_with_classes(model, images, list(classes), conf=self.yoloe_conf)):
                out[k] = res
        return out

    def segment(self, path: str, res) -> dict:
        """The tag of one video from the YOLOE result of its first frame (all its frames decoded
        here, one video at a time, only when something was detected)."""
        boxes = [[int(x) for x in b] for b in res.boxes.xyxy.tolist()]
        if not boxes:
            return empty_tag()
        frames = video_frames(path, self.name)
        device = device_for(self)
        dtype = pick_dtype(self.torch_dtype, device)
        model, processor = load_sam2(self.sam2_hf_model, device, dtype, who=self.name)
        masks = track_boxes(model, processor, frames, boxes, device, dtype, binarize=self.if_binarize)
        names = res.names
        return {
            "segment_data": [[m.float().tolist() if not self.if_binarize else m.tolist() for m in f] for f in masks],
            "cls_id_dict": [names[k] for k in names] if isinstance(names, dict) else list(names),
            "object_cls_list": [int(c) for c in res.boxes.cls.tolist()],
            "yoloe_conf_list": res.boxes.conf.tolist(),
        }

    def save_visualization(self, path: str, tag: dict) -> None:
        """Each object's mask of each frame as a JPEG (mask pixels 225, else 0), named as Data-Juicer does."""
        cv2 = require("cv2", who=self.name)
        import numpy as np

        os.makedirs(self.save_visualization_dir, exist_ok=True)
        stem = os.path.basename(path).replace(".mp4", "")
        stamp = f"{datetime.now()}_{random.randint(10000, 99999)}"
        for f, frame_masks in enumerate(tag["segment_data"]):
            for o, mask in enumerate(frame_masks):
                mask = np.squeeze(np.array(mask, dtype=bool))
                img = np.zeros(mask.shape + (3,), np.uint8)
                img[mask] = 225
                cv2.imwrite(os.path.join(self.save_visualization_dir, f"{stem}_mask_{o}_{f}_{stamp}.jpg"), img)

    def process_batched(self, samples):
        n = num_rows(samples)
        metas = row_metas(samples, n)
        videos = samples.get(self.video_key) or [None] * n
        chars = samples.get("main_character_list") or [None] * n
        rows, paths, firsts, names = [], [], [], []
        for i in range(n):
            if TAG in metas[i]:
                continue
            if not videos[i] or not chars[i]:
                metas[i][TAG] = empty_tag()
                continue
            rows.append(i)
            paths.append(videos[i][0])
            firsts.append(video_frames(videos[i][0], self.name, limit=1)[0])
            names.append(list(chars[i]))
        if not rows:
            return samples
        for i, path, res in zip(rows, paths, self.detect(firsts, names)):
            metas[i][TAG] = self.segment(path, res)
            if self.if_save_visualization:
                self.save_visualization(path, metas[i][TAG])
        return samples
