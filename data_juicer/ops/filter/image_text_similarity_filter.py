from data_juicer.models.vision_scores import clip_image_embeds, clip_logit_scale, clip_text_embeds
from data_juicer.ops.common.special_tokens import special_tokens
from data_juicer.ops.common.vision import ModelChecks, flip, load_images, reduce_scores, text_media_chunks
from data_juicer.ops.common.vision_filters import TextMediaMatchFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_text_similarity_filter")
class ImageTextSimilarityFilter(ModelChecks, TextMediaMatchFilter):
    """Keeps samples whose text chunks match their images under CLIP (stat ``image_text_similarity``:
    one value per chunk of the text holding image tokens).

    A chunk's value is CLIP's similarity logit divided by 100 (``exp(logit_scale) * cos / 100``,
    i.e. the cosine for the released CLIP models) between the chunk's text (special tokens
    removed) and each of its images (optionally flipped), reduced by ``reduce_mode``. The
    images and chunk texts of a whole batch are embedded together; each distinct image of a
    sample once. A sample without images is kept.
    """

    requires = ("torch", "transformers", "pillow")
    stat_key = StatsKeys.image_text_similarity
    model_attr = "hf_clip"
    uses = (InterVars.loaded_images,)
    model_params = {"hf_clip": "openai/clip-vit-base-patch32"}

    def __init__(
        self,
        hf_clip: str = "openai/clip-vit-base-patch32",
        trust_remote_code: bool = False,
        min_score: float = 0.1,
        max_score: float = 1.0,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        any_or_all: str = "any",
        reduce_mode: str = "avg",
        **kwargs,
    ):
        """
        :param hf_clip: CLIP model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest similarity kept
        :param max_score: largest similarity kept
        :param horizontal_flip: mirror images left-right before scoring
        :param vertical_flip: flip images top-bottom before scoring
        :param any_or_all: keep a sample when ``any`` of its chunks is in range, or only when ``all`` are
        :param reduce_mode: how a chunk with several images is reduced: ``avg``, ``max`` or ``min``
        """
        self.setup_match(hf_clip, trust_remote_code, min_score, max_score, horizontal_flip, vertical_flip,
                         any_or_all, reduce_mode, kwargs)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        key = StatsKeys.image_text_similarity
        col = samples.get(self.image_key)
        token = special_tokens()["image"]
        images, img_index = [], {}  # distinct (row, path) -> position in `images`
        texts, chunks = [], []  # chunks: (row, text position, [image positions])
        rows = []
        for i, s in enumerate(stats):
            if key in s:
                continue
            if col is None or not col[i]:
                s[key] = []
                continue
            loaded = load_images(self, samples, i)
            rows.append(i)
            for text, paths in text_media_chunks(samples[self.text_key][i], col[i], token):
                pos = []
                for p in paths:
                    if (i, p) not in img_index:
                        img_index[(i, p)] = len(images)
                        images.append(flip(loaded[p], self.horizontal_flip, self.vertical_flip))
                    pos.append(img_index[(i, p)])
                chunks.append((i, len(texts), pos))
                texts.append(text)
        for i in rows:
            stats[i][key] = []
        if not chunks:
            return samples
        model, proc = self.load_model()
        img = clip_image_embeds(model, proc, images)
        txt = clip_text_embeds(model, proc, texts)
        scale = clip_logit_scale(model) / 100.0
        for i, t, pos in chunks:
            sims = (txt[t:t + 1] @ img[pos].T * scale).flatten().tolist()
            stats[i][key].append(reduce_scores(sims, self.reduce_mode))
        return samples
