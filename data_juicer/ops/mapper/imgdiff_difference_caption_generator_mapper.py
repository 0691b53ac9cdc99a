import os
import tempfile
from typing import Dict, Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.mapper.detect_main_character_mapper import MLLM_DEFAULTS, sub_op_args
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

# Data-Juicer's fixed sub-op settings, used for any key the recipe leaves out
ITM_DEFAULTS = {"min_score": 0.1, "max_score": 1.0, "hf_blip": "Salesforce/blip-itm-base-coco", "num_proc": 1}
TPS_DEFAULTS = {"min_score": 0.1, "max_score": 1.0, "hf_clip": "openai/clip-vit-base-patch32",
                "text_key_second": "target_text", "num_proc": 1}
OUT_KEYS = ("region_caption1", "region_caption2", MetaKeys.bbox_tag, "bbox_difference_captions")
EXTEND = 5  # pixels the red box is drawn outside the region
GAP = 20  # width of the black bar between the two images


def empty_result() -> dict:
    """What a sample without a usable difference gets: one empty caption each and a zero box."""
    return {"region_caption1": [""], "region_caption2": [""], MetaKeys.bbox_tag: [[0.0, 0.0, 0.0, 0.0]],
            "bbox_difference_captions": [""]}


def _coord(v: float) -> str:
    s = str(round(float(v), 2))
    return s + "0" * max(0, 4 - len(s))


def region_prompt(box, width: int, height: int) -> str:
    """The question about one region (``box``: centre x, centre y, width, height in pixels), its
    corners normalised and written with two decimals, as Data-Juicer writes them."""
    cx, cy, w, h = (float(b) for b in box[:4])
    corners = [(cx - w / 2) / width, (cy - h / 2) / height, (cx + w / 2) / width, (cy + h / 2) / height]
    return "Please provide a clear description for this region: [" + ", ".join(_coord(c) for c in corners) + "]."


def difference_prompt(caption1: str, caption2: str) -> str:
    return ("Analyse the left image and the right image (separated by the black vertical bar). The detail within "
            "the red bounding box in the left image is: " + caption1 + ", the detail within the red bounding box in "
            "the right image is: " + caption2 + ". What is their difference? Answer with a few concise sentences.")


def crop(image, box):
    """The region of a (H, W, 3) array: rows cy-h/2 .. cy+h/2, columns cx-w/2 .. cx+w/2 (truncated to int)."""
    cx, cy, w, h = (float(b) for b in box[:4])
    return image[int(cy - h / 2):int(cy + h / 2), int(cx - w / 2):int(cx + w / 2), :]


def red_box_pair(image1, image2, box):
    """Both images with the region outlined in red (3 px, 5 px outside it, clamped to the image),
    side by side with a 20 px black bar between them."""
    cv2 = require("opencv-python-headless")
    import numpy as np

    cx, cy, w, h = (float(b) for b in box[:4])
    height, width = image1.shape[:2]
    x1 = cx - w / 2 - EXTEND if cx - w / 2 - EXTEND >= 0 else 0
    y1 = cy - h / 2 - EXTEND if cy - h / 2 - EXTEND >= 0 else 0
    x2 = cx + w / 2 + EXTEND if cx + w / 2 + EXTEND <= width else width
    y2 = cy + h / 2 + EXTEND if cy + h / 2 + EXTEND <= height else height
    a, b = image1.copy(), image2.copy()
    for img in (a, b):
        cv2.rectangle(img, (int(x1), int(y1)), (int(x2), int(y2)), (0, 0, 255), 3)
    return cv2.hconcat([a, np.zeros((height, GAP, 3), dtype=np.uint8), b])


def _answer(text: str) -> str:
    return text.split("ASSISTANT: ")[-1]


@OPERATORS.register_module("imgdiff_difference_caption_generator_mapper")
class Difference_Caption_Generator_Mapper(Mapper):
    """Img-Diff stage 2: describes how two similar images differ in candidate regions.

    Each sample holds two images (fields ``image_path1``, ``image_path2``; the second is resized
    to the first's size) and candidate regions in meta ``__dj__bbox__`` (centre x, centre y,
    width, height in pixels, as ``imgdiff_difference_area_generator_mapper`` writes them). Built
    from our ``mllm_mapper``, ``image_text_matching_filter`` and ``text_pair_similarity_filter``:

    1. regions larger than a tenth of the image are dropped; the MLLM describes each remaining
       region in both images ("Please provide a clear description for this region: [x1, y1, x2, y2].");
    2. each region is cropped from both images (saved as JPEG, as Data-Juicer does) and the
       image-text matching filter checks each crop against its caption; regions kept for both
       images go on;
    3. the text pair similarity filter compares the two captions; regions whose captions are kept
       go on;
    4. the region is outlined in red on both images, set side by side, and the MLLM describes
       the difference between the two outlined details.

    Meta ``region_caption1``, ``region_caption2``, ``__dj__bbox__`` and
    ``bbox_difference_captions`` receive one entry per region that got through; a sample with no
    such region (or whose only box is all zeros) gets one empty caption each and a zero box.
    The MLLM questions, crops and caption pairs of a whole batch each go through their model
    together. Note, as in Data-Juicer: a caption without an image token is not scored by the
    image-text matching filter (it only scores text chunks holding image tokens), so step 2 keeps
    such regions.

    ``*_args`` are the sub-ops' parameters; keys left out take Data-Juicer's fixed values
    (mllm_mapper: see ``detect_main_character_mapper``; image_text_matching_filter: ``min_score``
    0.1, ``max_score`` 1.0, ``hf_blip`` ``Salesforce/blip-itm-base-coco``;
    text_pair_similarity_filter: ``min_score`` 0.1, ``max_score`` 1.0, ``hf_clip``
    ``openai/clip-vit-base-patch32``, ``text_key_second`` ``target_text``), and their
    accelerator is this op's. A missing or unreadable image raises an error naming it; a region
    whose crop is empty (outside the image) is dropped (Data-Juicer fails writing the empty crop).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow", "opencv-python-headless")
    uses_model = True

    def __init__(
        self,
        mllm_mapper_args: Optional[Dict] = {},  # noqa: B006
        image_text_matching_filter_args: Optional[Dict] = {},  # noqa: B006
        text_pair_similarity_filter_args: Optional[Dict] = {},  # noqa: B006
        **kwargs,
    ):
        """
        :param mllm_mapper_args: parameters of the mllm_mapper describing regions and differences
        :param image_text_matching_filter_args: parameters of the image_text_matching_filter
            checking each crop against its caption
        :param text_pair_similarity_filter_args: parameters of the text_pair_similarity_filter
            comparing the two captions of a region
        """
        super().__init__(**kwargs)
        from data_juicer.ops.registry import OPERATORS as ops

        self.mllm_mapper_args = sub_op_args(MLLM_DEFAULTS, mllm_mapper_args, self.accelerator)
        self.image_text_matching_filter_args = sub_op_args(ITM_DEFAULTS, image_text_matching_filter_args,
                                                           self.accelerator)
        self.text_pair_similarity_filter_args = sub_op_args(TPS_DEFAULTS, text_pair_similarity_filter_args,
                                                            self.accelerator)
        self.mllm = ops.get("mllm_mapper")(**self.mllm_mapper_args)
        self.itm = ops.get("image_text_matching_filter")(**self.image_text_matching_filter_args)
        self.tps = ops.get("text_pair_similarity_filter")(**self.text_pair_similarity_filter_args)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        from data_juicer.ops.registry import OPERATORS as ops

        out = []
        for name, defaults in (("mllm_mapper", MLLM_DEFAULTS), ("image_text_matching_filter", ITM_DEFAULTS)):
            out += ops.get(name).check_models(sub_op_args(defaults, params.get(f"{name}_args"), None))
        from data_juicer.models.hf import check_hf_model

        tps = sub_op_args(TPS_DEFAULTS, params.get("text_pair_similarity_filter_args"), None)
        out.append(check_hf_model(tps["hf_clip"], who=cls.__name__))
        return out

    # -- the steps, each over a whole batch ----------------------------------------------------
    def _ask(self, questions: list[tuple[str, list[str]]]) -> list[list[str]]:
        """The MLLM's answers (after ``ASSISTANT: ``), one per image of each question."""
        if not questions:
            return []
        out = self.mllm.process_batched({"text": [q for q, _ in questions], "images": [imgs for _, imgs in questions]})
        answers = []
        for (_, imgs), ans in zip(questions, out["text"]):
            ans = ans if isinstance(ans, list) else [ans]
            by_path = dict(zip(dict.fromkeys(imgs), ans))  # the mllm answers once per distinct image
            answers.append([_answer(by_path[p]) for p in imgs])
        return answers

    def _kept_by(self, op, rows: dict) -> list[bool]:
        if not rows["text"]:
            return []
        rows[Fields.stats] = [{} for _ in rows["text"]]
        rows = op.compute_stats_batched(rows)
        return list(op.process_batched(rows))

    def process_batched(self, samples):
        cv2 = require("opencv-python-headless", who=self.name)
        n = len(samples["image_path1"])
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        pairs, regions = {}, []  # pairs: row -> (image1, image2); regions: [row, box, caption1, caption2]
        for i in range(n):
            boxes = metas[i].get(MetaKeys.bbox_tag)
            if boxes is None:
                raise ValueError(f"{self.name}: sample has no meta '{MetaKeys.bbox_tag}' (the candidate regions); "
                                 "run imgdiff_difference_area_generator_mapper before this op")
            boxes = [list(map(float, b)) for b in boxes]
            if len(boxes) == 1 and sum(boxes[0]) == 0:
                continue
            p1, p2 = samples["image_path1"][i], samples["image_path2"][i]
            a, b = self._read(cv2, p1), self._read(cv2, p2)
            b = cv2.resize(b, (a.shape[1], a.shape[0]))
            pairs[i] = (a, b)
            regions += [[i, box] for box in boxes if box[2] * box[3] <= a.shape[0] * b.shape[1] / 10]
        questions = [(region_prompt(box, pairs[i][0].shape[1], pairs[i][0].shape[0]),
                      [samples["image_path1"][i], samples["image_path2"][i]]) for i, box in regions]
        for reg, ans in zip(regions, self._ask(questions)):
            reg += ans[:2]
        with tempfile.TemporaryDirectory(prefix="dj-imgdiff-") as tmp:
            matched = self._crops_match(cv2, tmp, pairs, regions)
            regions = [r for r, ok in zip(regions, matched) if ok]
            similar = self._kept_by(self.tps, {"text": [r[2] for r in regions], "target_text": [r[3] for r in regions]})
            kept_texts: dict = {}
            for r, ok in zip(regions, similar):
                if ok:
                    kept_texts.setdefault(r[0], (set(), set()))
                    kept_texts[r[0]][0].add(r[2])
                    kept_texts[r[0]][1].add(r[3])
            # a region goes on when its captions are among the row's kept ones (as Data-Juicer matches them)
            final = [r for r in regions if r[0] in kept_texts and r[2] in kept_texts[r[0]][0]
                     and r[3] in kept_texts[r[0]][1]]
            diff_questions = []
            for k, (i, box, c1, c2) in enumerate(final):
                path = os.path.join(tmp, f"red_box_{i}_{k}.jpg")
                cv2.imwrite(path, red_box_pair(pairs[i][0], pairs[i][1], box))
                diff_questions.append((difference_prompt(c1, c2), [path]))
            diffs = self._ask(diff_questions)
        results = {i: {key: [] for key in OUT_KEYS} for i in {r[0] for r in final}}
        for (i, box, c1, c2), d in zip(final, diffs):
            res = results[i]
            res["region_caption1"].append(c1)
            res["region_caption2"].append(c2)
            res[MetaKeys.bbox_tag].append(box)
            res["bbox_difference_captions"].append(d[0])
        for i in range(n):
            metas[i].update(results.get(i) or empty_result())
        samples[Fields.meta] = metas
        return samples

    def _read(self, cv2, path):
        image = cv2.imread(path) if isinstance(path, str) and os.path.isfile(path) else None
        if image is None:
            what = "does not exist" if not (isinstance(path, str) and os.path.exists(path)) else "is not a readable image"
            raise FileNotFoundError(f"{self.name}: image {path!r} {what}; fix image_path1 / image_path2 of the sample")
        return image

    def _crops_match(self, cv2, tmp: str, pairs: dict, regions: list) -> list[bool]:
        """Whether each region's crops, from both images, match their captions (first-seen per row and region)."""
        rows = {"text": [], "images": []}
        where = []  # per region: its two rows, or None when a crop is empty (the box lies outside the image)
        for k, (i, box, c1, c2) in enumerate(regions):
            crops = [crop(pairs[i][0], box), crop(pairs[i][1], box)]
            if any(c.size == 0 for c in crops):
                where.append(None)
                continue
            where.append(len(rows["text"]))
            for side, (caption, part) in enumerate(zip((c1, c2), crops)):
                path = os.path.join(tmp, f"crop_{i}_{k}_{side}.jpg")
                cv2.imwrite(path, part)
                rows["text"].append(caption)
                rows["images"].append([path])
        kept = self._kept_by(self.itm, rows)
        return [w is not None and kept[w] and kept[w + 1] for w in where]
