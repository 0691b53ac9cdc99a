import difflib
import re
from typing import Dict, Optional

import numpy as np

from data_juicer.models.pos_tagger import check_pos_tagger, load_pos_tagger
from data_juicer.models.wordnet_nouns import check_wordnet, load_noun_lemmatizer
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.composite_vision import build_op, itm_scores, merged_args
from data_juicer.ops.common.vision_other import num_rows, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys
from data_juicer.utils.lazy import require

SIM_FIXED = {"min_score_1": 0.1, "max_score_1": 1.0, "min_score_2": 0.1, "max_score_2": 1.0,
             "hf_clip": "openai/clip-vit-base-patch32", "num_proc": 1}
SEG_FIXED = {"imgsz": 1024, "conf": 0.05, "iou": 0.5, "model_path": "FastSAM-x.pt"}
ITM_FIXED = {"min_score": 0.1, "max_score": 1.0, "hf_blip": "Salesforce/blip-itm-base-coco", "num_proc": 1}
NOUN_TAGS = ("NN", "NNS", "NNP", "NNPS")
EMPTY = [[0.0, 0.0, 0.0, 0.0]]


def caption_nouns(text1: str, text2: str, lemmatize, tag) -> tuple[list[str], list[str]]:
    """The nouns only one caption has (Data-Juicer's ``compare_text_index``): a word diff of the
    lower-cased captions without punctuation, lemmatized; a word kept when the other side's
    changed words lack it and the tagger tags it alone as a noun."""
    def words(t):
        return re.sub(r"[^\w\s]", "", t.lower().replace(" ", "\n")).splitlines()

    removed, added = [], []
    for line in difflib.Differ().compare(words(text1), words(text2)):
        if line.startswith("+"):
            added.append(lemmatize(line.replace("+ ", "")))
        elif line.startswith("-"):
            removed.append(lemmatize(line.replace("- ", "")))

    def nouns(mine, other):
        return [w for w in mine if w not in other and tag([w])[0][1] in NOUN_TAGS]

    return nouns(removed, added), nouns(added, removed)


def iou_filter(boxes: np.ndarray, thr: float) -> np.ndarray:
    """Greedy removal of center-format boxes overlapping an earlier one by IoU > ``thr`` (the
    ``+ 1`` pixel areas of Data-Juicer's ``iou_filter``)."""
    x1, y1 = boxes[:, 0] - boxes[:, 2] / 2, boxes[:, 1] - boxes[:, 3] / 2
    x2, y2 = boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2
    areas = (y2 - y1 + 1) * (x2 - x1 + 1)
    keep, index = [], np.arange(len(boxes))
    while len(index):
        i, rest = index[0], index[1:]
        keep.append(i)
        w = np.maximum(0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]) + 1)
        h = np.maximum(0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]) + 1)
        ious = w * h / (areas[i] + areas[rest] - w * h)
        index = rest[np.where(ious <= thr)[0]]
    return boxes[keep]


def _crop(arr: np.ndarray, b):
    return arr[int(b[1] - b[3] / 2):int(b[1] + b[3] / 2), int(b[0] - b[2] / 2):int(b[0] + b[2] / 2), :]


@OPERATORS.register_module("imgdiff_difference_area_generator_mapper")
class Difference_Area_Generator_Mapper(Mapper):
    """Img-Diff stage 1: proposes the regions where two near-identical images differ, from the
    sample's ``image_path1`` / ``image_path2`` and ``caption1`` / ``caption2``; writes
    ``__dj__meta__['__dj__bbox__']``: the boxes (``[x_center, y_center, width, height]``, pixels
    of image 1), or ``[[0, 0, 0, 0]]`` when none.

    As Data-Juicer: (1) the pair must be similar under CLIP (``image_pair_similarity_filter``,
    ``min_score_1``..``max_score_1``); (2) the nouns only one caption has are found (word diff,
    WordNet lemmas, NLTK tagger); (3) FastSAM segments both images (``image_segment_mapper``;
    image 2 is resized to image 1's size for cropping); (4) every box of either image is cropped
    from both images; (5) a box is kept when its crop of image 1 matches one of caption 1's nouns
    and its crop of image 2 one of caption 2's (BLIP, ``image_text_matching_filter``'s range);
    (6) the two crops of a kept box must differ enough (CLIP, ``min_score_2``..``max_score_2``);
    (7) overlapping boxes (IoU > 0.5) are removed.

    Each stage runs over the whole batch at once. Crops go through a JPEG round trip in memory
    (Data-Juicer writes them as JPEG files and reads them back). Differences: an empty crop (a
    box outside the image) is skipped (Data-Juicer fails on it); a rejected pair keeps its other
    fields (Data-Juicer's row then holds only the meta).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "ultralytics", "nltk", "opencv-python-headless", "pillow")
    uses_model = True
    uses = (InterVars.loaded_images,)

    def __init__(
        self,
        image_pair_similarity_filter_args: Optional[Dict] = {},
        image_segment_mapper_args: Optional[Dict] = {},
        image_text_matching_filter_args: Optional[Dict] = {},
        **kwargs,
    ):
        """
        :param image_pair_similarity_filter_args: arguments of the CLIP similarity check; missing
            keys take min_score_1=0.1, max_score_1=1.0 (the whole pair), min_score_2=0.1,
            max_score_2=1.0 (the crops of a box), hf_clip="openai/clip-vit-base-patch32"
        :param image_segment_mapper_args: arguments of the FastSAM segmentation; missing keys take
            imgsz=1024, conf=0.05, iou=0.5, model_path="FastSAM-x.pt"
        :param image_text_matching_filter_args: arguments of the BLIP crop/noun matching; missing
            keys take min_score=0.1, max_score=1.0, hf_blip="Salesforce/blip-itm-base-coco"
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "4GB")
        super().__init__(**kwargs)
        self.image_pair_similarity_filter_args = merged_args(SIM_FIXED, image_pair_similarity_filter_args,
                                                             self.accelerator)
        self.image_segment_mapper_args = merged_args(SEG_FIXED, image_segment_mapper_args, self.accelerator)
        self.image_text_matching_filter_args = merged_args(ITM_FIXED, image_text_matching_filter_args,
                                                           self.accelerator)
        sim = dict(self.image_pair_similarity_filter_args)
        self.scores_1 = (sim.pop("min_score_1"), sim.pop("max_score_1"))
        self.scores_2 = (sim.pop("min_score_2"), sim.pop("max_score_2"))
        self.sim = build_op("image_pair_similarity_filter", sim)
        self.seg = build_op("image_segment_mapper", self.image_segment_mapper_args)
        self.itm = build_op("image_text_matching_filter", self.image_text_matching_filter_args)
        check_pos_tagger(self.name)
        check_wordnet(self.name)

    # -- model calls over many images ------------------------------------------------------
    def _similarities(self, pairs: list[tuple]) -> list[float]:
        if not pairs:
            return []
        from data_juicer.models.vision import load_vision_model, op_device
        from data_juicer.models.vision_scores import clip_image_embeds

        model, proc = load_vision_model(self.sim.hf_clip, who=self.sim.name, device=op_device(self.sim),
                                        trust_remote_code=self.sim.trust_remote_code)
        emb = clip_image_embeds(model, proc, [im for p in pairs for im in p])
        return (emb[0::2] * emb[1::2]).sum(dim=1).tolist()

    def _segments(self, images: list) -> list[list]:
        if not images:
            return []
        from data_juicer.models.ultralytics import load_ultralytics_model, predict_boxes
        from data_juicer.ops.common.vision_other import device_for

        seg = self.seg
        model = load_ultralytics_model(seg.model_path, seg.family, device_for(seg), who=seg.name)
        res = predict_boxes(model, images, imgsz=seg.imgsz, conf=seg.conf, iou=seg.iou, **seg.predict_kwargs)
        return [r.boxes.xywh.cpu().numpy().tolist() for r in res]

    def _in_range(self, v, bounds) -> bool:
        return bounds[0] <= v <= bounds[1]

    @staticmethod
    def _jpeg(arr):
        """The BGR crop as an RGB PIL image after a JPEG round trip (cv2.imwrite, then PIL reads it)."""
        import io

        from PIL import Image

        cv2 = require("opencv-python-headless")
        ok, buf = cv2.imencode(".jpg", arr)
        return Image.open(io.BytesIO(buf.tobytes())).convert("RGB")

    def _read(self, path):
        from PIL import Image

        cv2 = require("opencv-python-headless", who=self.name)
        arr = cv2.imread(str(path)) if path else None
        if arr is None:
            raise FileNotFoundError(f"{self.name}: cannot read image {path!r} (missing or not an image); "
                                    "fix image_path1/image_path2 of the sample")
        with Image.open(path) as im:
            return arr, im.convert("RGB")

    def process_batched(self, samples):
        n = num_rows(samples)
        metas = row_metas(samples, n)
        key = MetaKeys.bbox_tag
        rows = [i for i in range(n) if key not in metas[i]]
        if not rows:
            return samples
        arrays, pils = {}, {}
        for i in rows:
            for f in ("image_path1", "image_path2"):
                arrays[i, f], pils[i, f] = self._read(samples[f][i])
        # 1. similar pairs only
        sims = self._similarities([(pils[i, "image_path1"], pils[i, "image_path2"]) for i in rows])
        live = [i for i, s in zip(rows, sims) if self._in_range(s, self.scores_1)]
        for i in set(rows) - set(live):
            metas[i][key] = EMPTY
        if not live:
            return samples
        # 2. nouns only one caption has
        lem = load_noun_lemmatizer(self.name).lemmatize
        tag = load_pos_tagger(self.name).tag
        nouns = {i: caption_nouns(samples["caption1"][i], samples["caption2"][i], lem, tag) for i in live}
        # 3. segments of both images
        boxes = self._segments([pils[i, f] for i in live for f in ("image_path1", "image_path2")])
        cv2 = require("opencv-python-headless", who=self.name)
        # 4./5. crops of every box from both images, matched with the nouns
        cands, queries = [], []  # cands: (row, box id, box, crop1, crop2)
        for r, i in enumerate(live):
            a1 = arrays[i, "image_path1"]
            a2 = cv2.resize(arrays[i, "image_path2"], (a1.shape[1], a1.shape[0]))
            for bid, b in enumerate(boxes[2 * r] + boxes[2 * r + 1]):
                c1, c2 = _crop(a1, b), _crop(a2, b)
                if c1.size == 0 or c2.size == 0:
                    continue
                cands.append((i, bid, b, self._jpeg(c1), self._jpeg(c2)))
        pairs, owner = [], []
        for k, (i, _, _, p1, p2) in enumerate(cands):
            o1, o2 = nouns[i]
            pairs += [(p1, w) for w in o1] + [(p2, w) for w in o2]
            owner += [(k, 1)] * len(o1) + [(k, 2)] * len(o2)
        ok = set()
        for (k, side), s in zip(owner, itm_scores(self.itm, pairs)):
            if self._in_range(s, (self.itm.min_score, self.itm.max_score)):
                ok.add((k, side))
        matched = [k for k in range(len(cands)) if (k, 1) in ok and (k, 2) in ok]
        # 6. the two crops of a box must differ
        sims = self._similarities([(cands[k][3], cands[k][4]) for k in matched])
        kept: dict = {i: [] for i in live}
        for k, s in zip(matched, sims):
            if self._in_range(s, self.scores_2):
                kept[cands[k][0]].append(cands[k][2])
        # 7. no overlapping boxes
        for i in live:
            metas[i][key] = iou_filter(np.array(kept[i]), 0.5).tolist() if kept[i] else EMPTY
        return samples
