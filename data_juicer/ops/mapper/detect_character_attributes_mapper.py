import json
from typing import Dict, Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.composite_vision import assistant_part, build_op, character_rows, mllm_ask
from data_juicer.ops.mapper.detect_character_locations_mapper import ITM_FIXED, MLLM_FIXED
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars

TAG = "main_character_attributes_list"
LOCATIONS_FIXED = {"mllm_mapper_args": MLLM_FIXED, "image_text_matching_filter_args": ITM_FIXED,
                   "yoloe_path": "yoloe-11l-seg.pt", "iou_threshold": 0.7, "matching_score_threshold": 0.4}


def class_prompt(name: str) -> str:
    return (f'Please classify the character "{name}" into the following categories: [\'object\', \'animal\', '
            "'person', 'text', 'other']. Only reply with the most fitting single category.")


def feature_prompt(caption: str, name: str) -> str:
    return (f'I will provide you with the corresponding description of an image, as follows: "{caption}" Please '
            f"extract all descriptions of the features related to '{name}' from this text, which may include "
            "color, material, action, and other typical features, and compile them into a list of phrase "
            'string. Formatted like: ["in a blue shirt", "sitting on a nearby fence", "with flame decals"]. '
            "Return only the phrase string list.")


def crop_prompt(name: str, cls: str) -> str:
    if "object" in cls:
        what, feats = "the main object", "color, material, shape, and other typical features"
    elif "animal" in cls:
        what, feats = "the primary animal", "color, action, and other typical features"
    elif "person" in cls:
        what, feats = "the primary person", "clothing, ages, and other typical features"
    else:
        what, feats = "the primary character", None
    which = f"Please analyze the key characteristics of {what} in this image, specifically the '{name}'"
    which += f", which may include {feats}." if feats else "."
    return (f'{which} Currently identified characteristics include "{cls}". Please expand this list and '
            "respond in an identically formatted phrase string list.")


def check_prompt(name: str, feature: str) -> str:
    return (f'Please analyze the main character in this image, specifically the "{name}". Is "{feature}" one '
            "of its features? Only respond with 'yes' if it is a perfect match. Please only respond with "
            "'yes' or 'no'.")


def candidate_features(answer: str):
    """The feature phrases of an MLLM answer (Data-Juicer's parsing): a JSON list (one element:
    split at ', ' after '_' -> ' '), else the lines of the text (one line: split the same way).
    None when a phrase is not a string (Data-Juicer then skips the character)."""
    try:
        parsed = json.loads(answer)
    except json.JSONDecodeError:
        parsed = answer
    items = parsed if isinstance(parsed, list) else answer.split("\n")
    if len(items) == 1:
        if not isinstance(items[0], str):
            return None
        items = items[0].replace("_", " ").split(", ")
    return items if all(isinstance(x, str) for x in items) else None


@OPERATORS.register_module("detect_character_attributes_mapper")
class DetectCharacterAttributesMapper(Mapper):
    """Describes the sample's main characters (``main_character_list``) in its first image, with
    its caption (the text), and writes ``__dj__meta__['main_character_attributes_list']`` =
    ``[{main_character, bbox, characteristic_list}]``, one entry per character, in order.

    As Data-Juicer: the characters are located (``detect_character_locations_mapper``); for each
    character the MLLM classifies it (object / animal / person / text / other) and extracts its
    features from the caption (a JSON list, else the answer itself); for each located character
    the MLLM is asked on its crop for more features (the question depends on the class), and
    each candidate feature is kept when the MLLM answers 'yes' to it on the crop. A character
    gets its confirmed features, else the caption's; an unlocated one gets ``bbox: []`` and the
    caption's features.

    Each stage's questions for the whole batch go to the MLLM together; crops stay in memory
    (Data-Juicer writes them to files). A sample without images or characters gets ``[]``.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "ultralytics", "pillow")  # + clip-anytorch, checked at build
    uses_model = True
    uses = (InterVars.loaded_images,)

    def __init__(self, detect_character_locations_mapper_args: Optional[Dict] = {}, **kwargs):
        """
        :param detect_character_locations_mapper_args: arguments of the inner
            ``detect_character_locations_mapper`` (its MLLM is the one asked here); missing keys take
            Data-Juicer's fixed values: the default mllm_mapper_args and image_text_matching_filter_args,
            yoloe_path="yoloe-11l-seg.pt", iou_threshold=0.7, matching_score_threshold=0.4
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "32GB")
        super().__init__(**kwargs)
        args = dict(detect_character_locations_mapper_args or {})
        for k, v in LOCATIONS_FIXED.items():
            args.setdefault(k, v)
        args["accelerator"] = self.accelerator
        self.detect_character_locations_mapper_args = args
        self.locator = build_op("detect_character_locations_mapper", args)

    def describe(self, images: list, names: list[list[str]], captions: list[str]) -> list[list[dict]]:
        mllm = self.locator.mllm
        located = self.locator.locate(images, names)
        asks = [(k, c) for k, chars in enumerate(names) for c in chars]
        pairs = []
        for k, c in asks:
            pairs += [(images[k], class_prompt(c)), (images[k], feature_prompt(captions[k], c))]
        answers = [assistant_part(a) for a in mllm_ask(mllm, pairs)]
        cls_of, caption_feats = {}, {}
        for j, (k, c) in enumerate(asks):
            cls_of[k, c] = answers[2 * j]
            try:
                caption_feats[k, c] = json.loads(answers[2 * j + 1])
            except json.JSONDecodeError:
                caption_feats[k, c] = [answers[2 * j + 1]]
        boxes = [(k, loc, images[k].crop(loc["bbox"])) for k, locs in enumerate(located) for loc in locs
                 if (k, loc["main_character"]) in cls_of]
        more = [assistant_part(a) for a in mllm_ask(
            mllm, [(crop, crop_prompt(loc["main_character"], cls_of[k, loc["main_character"]]))
                   for k, loc, crop in boxes])]
        checks, owners, skipped = [], [], set()
        for b, ((k, loc, crop), ans) in enumerate(zip(boxes, more)):
            feats = candidate_features(ans)
            if feats is None:  # Data-Juicer's loop fails on it and skips the character
                skipped.add(b)
                continue
            owners += [(b, f) for f in feats]
            checks += [(crop, check_prompt(loc["main_character"], f)) for f in feats]
        confirmed: dict = {b: [] for b in range(len(boxes))}
        for (b, f), ans in zip(owners, [assistant_part(a) for a in mllm_ask(mllm, checks)]):
            if "yes" in ans:
                confirmed[b].append(f)
        found = {}
        for b, (k, loc, _) in enumerate(boxes):
            if b not in skipped:
                found[k, loc["main_character"]] = (loc["bbox"], confirmed[b])
        out = []
        for k, chars in enumerate(names):
            row = []
            for c in chars:
                if (k, c) in found:
                    bbox, feats = found[k, c]
                    row.append({"main_character": c, "bbox": bbox, "characteristic_list": feats or caption_feats[k, c]})
                else:
                    row.append({"main_character": c, "bbox": [], "characteristic_list": caption_feats[k, c]})
            out.append(row)
        return out

    def process_batched(self, samples):
        metas, rows, images, names = character_rows(self, samples, TAG)
        texts = samples.get(self.text_key) or [""] * len(metas)
        captions = [texts[i] or "" for i in rows]
        for i, described in zip(rows, self.describe(images, names, captions) if rows else []):
            metas[i][TAG] = described
        return samples
