from data_juicer.models.vision_scores import blip_itm_probs
from data_juicer.ops.common.special_tokens import special_tokens
from data_juicer.ops.common.vision import ModelChecks, flip, load_images, reduce_scores, text_media_chunks
from data_juicer.ops.common.vision_filters import TextMediaMatchFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_text_matching_filter")
class ImageTextMatchingFilter(ModelChecks, TextMediaMatchFilter):
    """Keeps samples whose text chunks match their images under BLIP's image-text matching head
    (stat ``image_text_matching_score``: one value per chunk of the text holding image tokens).

    A chunk's value is the matching probability (softmax of the ITM logits, class 1) of the
    chunk's text (special tokens removed) with each of its images (optionally flipped), reduced
    by ``reduce_mode``. All (image, text) pairs of a batch go through the model together. A
    sample without images is kept.
    """

    requires = ("torch", "transformers", "pillow")
    stat_key = StatsKeys.image_text_matching_score
    model_attr = "hf_blip"
    uses = (InterVars.loaded_images,)
    model_params = {"hf_blip": "Salesforce/blip-itm-base-coco"}

    def __init__(
        self,
        hf_blip: str = "Salesforce/blip-itm-base-coco",
        trust_remote_code: bool = False,
        min_score: float = 0.003,
        max_score: float = 1.0,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        any_or_all: str = "any",
        reduce_mode: str = "avg",
        **kwargs,
    ):
        """
        :param hf_blip: BLIP image-text retrieval model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest matching probability kept
        :param max_score: largest matching probability kept
        :param horizontal_flip: mirror images left-right before scoring
        :param vertical_flip: flip images top-bottom before scoring
        :param any_or_all: keep a sample when ``any`` of its chunks is in range, or only when ``all`` are
        :param reduce_mode: how a chunk with several images is reduced: ``avg``, ``max`` or ``min``
        """
        self.setup_match(hf_blip, trust_remote_code, min_score, max_score, horizontal_flip, vertical_flip,
                         any_or_all, reduce_mode, kwargs)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        key = StatsKeys.image_text_matching_score
        col = samples.get(self.image_key)
        token = special_tokens()["image"]
        pairs, chunks = [], []  # chunks: (row, first pair, number of pairs)
        for i, s in enumerate(stats):
            if key in s:
                continue
            s[key] = []
            if col is None or not col[i]:
                continue
            loaded = load_images(self, samples, i)
            flipped = {p: flip(img, self.horizontal_flip, self.vertical_flip) for p, img in loaded.items()}
            for text, paths in text_media_chunks(samples[self.text_key][i], col[i], token):
                chunks.append((i, len(pairs), len(paths)))
                pairs += [(flipped[p], text) for p in paths]
        if not pairs:
            return samples
        model, proc = self.load_model()
        probs = blip_itm_probs(model, proc, pairs)
        for i, start, n in chunks:
            stats[i][key].append(reduce_scores(probs[start:start + n], self.reduce_mode))
        return samples
