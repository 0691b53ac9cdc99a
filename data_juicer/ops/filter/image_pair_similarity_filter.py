from typing import Annotated

from pydantic import Field

from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import clip_image_embeds
from data_juicer.ops.base import Filter
from data_juicer.ops.common.vision import ANY_OR_ALL, ModelChecks, check_choice, keep_by, load_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_pair_similarity_filter")
class ImagePairSimilarityFilter(ModelChecks, Filter):
    """Keeps samples whose two images are similar under CLIP: the cosine similarity of their CLIP
    image embeddings (stat ``image_pair_similarity``, a one-value list) within [min_score, max_score].

    Every sample must hold exactly two different images; another sample fails with a clear error
    (recorded in the error ledger). The images of a whole batch are embedded together.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
    uses = (InterVars.loaded_images,)
    model_params = {"hf_clip": "openai/clip-vit-base-patch32"}

    def __init__(
        self,
        hf_clip="openai/clip-vit-base-patch32",
        trust_remote_code=False,
        min_score: Annotated[float, Field(ge=0, le=1)] = 0.1,
        max_score: Annotated[float, Field(ge=0, le=1)] = 1.0,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_clip: CLIP model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest cosine similarity kept (0 to 1)
        :param max_score: largest cosine similarity kept (0 to 1)
        :param any_or_all: ``any`` or ``all`` of the sample's values in range (there is one)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "1500MB")
        super().__init__(**kwargs)
        check_choice(any_or_all, ANY_OR_ALL, "Keep strategy", self.name)
        self.hf_clip = hf_clip
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        self.any = any_or_all == "any"
        check_vision_model(hf_clip, who=self.name)

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        key = StatsKeys.image_pair_similarity
        col = samples.get(self.image_key)
        rows, images = [], []
        for i, s in enumerate(stats):
            if key in s:
                continue
            paths = col[i] if col is not None else None
            if not paths or len(paths) != 2 or paths[0] == paths[1]:
                raise ValueError(f"{self.name}: each sample must include two different images in "
                                 f"'{self.image_key}', got {paths!r}")
            loaded = load_images(self, samples, i)
            rows.append(i)
            images += [loaded[paths[0]], loaded[paths[1]]]
        if not rows:
            return samples
        model, proc = load_vision_model(self.hf_clip, who=self.name, device=op_device(self),
                                        trust_remote_code=self.trust_remote_code)
        emb = clip_image_embeds(model, proc, images)
        sims = (emb[0::2] * emb[1::2]).sum(dim=1).tolist()
        for i, sim in zip(rows, sims):
            stats[i][key] = [sim]
        return samples

    def process_batched(self, samples):
        key = StatsKeys.image_pair_similarity
        return [keep_by(self, s[key], self.min_score, self.max_score, self.any) for s in samples[Fields.stats]]
