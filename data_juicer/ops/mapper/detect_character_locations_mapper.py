import json
from typing import Dict, Optional

from data_juicer.models.yoloe import check_yoloe, load_yoloe, predict_with_classes
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.composite_vision import (
    assistant_part,
    build_op,
    character_rows,
    itm_scores,
    merged_args,
    mllm_ask,
)
from data_juicer.ops.common.vision_other import device_for
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars

MLLM_FIXED = {"max_new_tokens": 256, "temperature": 0.2, "top_p": None, "num_beams": 1,
              "hf_model": "llava-hf/llava-v1.6-vicuna-7b-hf"}
ITM_FIXED = {"min_score": 0, "max_score": 1.0, "hf_blip": "Salesforce/blip-itm-base-coco", "num_proc": 1}
TAG = "main_character_locations_list"


def box_iou(a, b) -> tuple:
    """(IoU, area of ``a``, area of ``b``) of two x1 y1 x2 y2 boxes; (0, 0, 0) when they do not
    overlap (Data-Juicer's ``iou_cal``)."""
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    if x2 - x1 < 0 or y2 - y1 < 0:
        return 0, 0, 0
    area1 = (a[2] - a[0]) * (a[3] - a[1])
    area2 = (b[2] - b[0]) * (b[3] - b[1])
    inter = (x2 - x1) * (y2 - y1)
    return inter / (area1 + area2 - inter), area1, area2


def grounding_prompt(name: str) -> str:
    return f'Please only provide the bounding box coordinate of the region "{name}" describes.'


def parse_llm_box(answer: str, width: int, height: int):
    """The pixel box of an MLLM answer ``[x1, y1, x2, y2]`` in [0, 1] (code fences and ``json``
    removed), or None when the answer is no such box."""
    text = assistant_part(answer).replace("json", "").replace("```", "")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None
    if not (isinstance(data, list) and len(data) == 4 and
            all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= 1 for x in data)):
        return None
    return [int(data[0] * width), int(data[1] * height), int(data[2] * width), int(data[3] * height)]


def _croppable(box) -> bool:
    return box[2] > box[0] and box[3] > box[1]


@OPERATORS.register_module("detect_character_locations_mapper")
class DetectCharacterLocationsMapper(Mapper):
    """Locates the sample's main characters (``main_character_list``) in its first image and
    writes ``__dj__meta__['main_character_locations_list']`` = ``[{main_character, bbox}]``
    (pixels, x1 y1 x2 y2).

    As Data-Juicer: YOLOE detects the character names (text prompts; the first, most confident
    box of each name is kept, rounded); the MLLM (``mllm_mapper``) is asked for each found
    character's box (``[x1, y1, x2, y2]`` as fractions); when the two boxes overlap with IoU >
    ``iou_threshold`` the larger one is kept, otherwise both crops are scored against the name
    with BLIP image-text matching (``image_text_matching_filter``) and the better one is kept,
    unless both score below ``matching_score_threshold`` (the character is dropped). A character
    whose MLLM answer is not parseable JSON is dropped.

    The questions of a whole batch go to the MLLM together, and all its crops to BLIP together;
    crops are scored in memory (Data-Juicer writes them as JPEG files and reads them back).
    Difference from Data-Juicer: a JSON answer that is not a valid box (or an empty one) keeps
    the YOLOE box (Data-Juicer fails on the sample with a KeyError). A sample without images or
    characters gets ``[]``.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "ultralytics", "pillow")  # + clip-anytorch (module `clip`), checked at build
    uses_model = True
    uses = (InterVars.loaded_images,)

    def __init__(
        self,
        mllm_mapper_args: Optional[Dict] = {},
        image_text_matching_filter_args: Optional[Dict] = {},
        yoloe_path="yoloe-11l-seg.pt",
        iou_threshold=0.7,
        matching_score_threshold=0.4,
        **kwargs,
    ):
        """
        :param mllm_mapper_args: arguments of the ``mllm_mapper`` asked for the boxes; missing keys
            take Data-Juicer's fixed values (max_new_tokens=256, temperature=0.2, top_p=None,
            num_beams=1, hf_model="llava-hf/llava-v1.6-vicuna-7b-hf")
        :param image_text_matching_filter_args: arguments of the ``image_text_matching_filter``
            scoring the crops; missing keys take min_score=0, max_score=1.0,
            hf_blip="Salesforce/blip-itm-base-coco"
        :param yoloe_path: the YOLOE weights: a path, or a file name in the model folders (its
            MobileCLIP text encoder ``mobileclip_blt.ts`` beside it or in the model folders)
        :param iou_threshold: IoU above which the YOLOE and MLLM boxes are taken as the same region
        :param matching_score_threshold: matching probability a crop needs to count as the character
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "32GB")
        super().__init__(**kwargs)
        self.yoloe_path = yoloe_path
        self.iou_threshold = iou_threshold
        self.matching_score_threshold = matching_score_threshold
        check_yoloe(yoloe_path, self.name)
        self.mllm_mapper_args = merged_args(MLLM_FIXED, mllm_mapper_args, self.accelerator)
        self.image_text_matching_filter_args = merged_args(ITM_FIXED, image_text_matching_filter_args,
                                                           self.accelerator)
        self.mllm = build_op("mllm_mapper", self.mllm_mapper_args)
        self.itm = build_op("image_text_matching_filter", self.image_text_matching_filter_args)

    def locate(self, images: list, names: list[list[str]]) -> list[list[dict]]:
        """``[{main_character, bbox}]`` for each (PIL image, character names) pair."""
        found = self._yoloe_boxes(images, names)
        asks = [(k, c) for k, chars in enumerate(found) for c in chars]
        answers = mllm_ask(self.mllm, [(images[k], grounding_prompt(c["main_character"])) for k, c in asks])
        results: list[list[dict]] = [[] for _ in images]
        crops, pending = [], []  # pending: (image index, character, yoloe box, llm box)
        for (k, c), ans in zip(asks, answers):
            text = assistant_part(ans).replace("json", "").replace("```", "")
            try:
                json.loads(text)
            except (json.JSONDecodeError, TypeError):
                continue  # not JSON: dropped, as Data-Juicer
            llm = parse_llm_box(ans, *images[k].size)
            name, ybox = c["main_character"], c["yoloe_bbox"]
            if llm is None or not _croppable(llm):
                results[k].append({"main_character": name, "bbox": ybox})
                continue
            iou, area1, area2 = box_iou(ybox, llm)
            if iou > self.iou_threshold:
                results[k].append({"main_character": name, "bbox": ybox if area1 > area2 else llm})
                continue
            if not _croppable(ybox):
                results[k].append({"main_character": name, "bbox": llm})
                continue
            pending.append((k, name, ybox, llm))
            crops += [(images[k].crop(ybox), name), (images[k].crop(llm), name)]
        scores = itm_scores(self.itm, crops)
        for j, (k, name, ybox, llm) in enumerate(pending):
            sy, sl = scores[2 * j], scores[2 * j + 1]
            if sy < self.matching_score_threshold and sl < self.matching_score_threshold:
                continue
            results[k].append({"main_character": name, "bbox": ybox if sy > sl else llm})
        order = [{c["main_character"]: n for n, c in enumerate(f)} for f in found]
        return [sorted(r, key=lambda c: order[k][c["main_character"]]) for k, r in enumerate(results)]

    def _yoloe_boxes(self, images, names) -> list[list[dict]]:
        out: list[list[dict]] = [[] for _ in images]
        groups: dict = {}
        for k, n in enumerate(names):
            if n:
                groups.setdefault(tuple(n), []).append(k)
        if not groups:
            return out
        model = load_yoloe(self.yoloe_path, device_for(self), who=self.name)
        for classes, idx in groups.items():
            for k, res in zip(idx, predict_with_classes(model, [images[k] for k in idx], list(classes))):
                boxes, cls = res.boxes.xyxy.tolist(), res.boxes.cls.tolist()
                seen = set()
                for b, c in zip(boxes, cls):
                    if c in seen:
                        continue
                    seen.add(c)
                    out[k].append({"main_character": classes[int(c)], "yoloe_bbox": [round(x) for x in b]})
        return out

    def process_batched(self, samples):
        metas, rows, images, names = character_rows(self, samples, TAG)
        for i, found in zip(rows, self.locate(images, names) if rows else []):
            metas[i][TAG] = found
        return samples
