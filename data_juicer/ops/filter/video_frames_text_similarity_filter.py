from pydantic import PositiveInt

from data_juicer.models.vision_scores import clip_image_embeds, clip_logit_scale, clip_text_embeds
from data_juicer.ops.common.special_tokens import special_tokens
from data_juicer.ops.common.vision import FRAME_SAMPLING, ModelChecks, check_choice, flip, reduce_scores, text_media_chunks
from data_juicer.ops.common.vision_filters import TextMediaMatchFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("video_frames_text_similarity_filter")
class VideoFramesTextSimilarityFilter(ModelChecks, TextMediaMatchFilter):
    """Keeps samples whose text chunks match their videos' sampled frames under CLIP (stat
    ``video_frames_text_similarity``: one value per chunk of the text holding video tokens).

    A chunk's value is CLIP's similarity logit / 100 between the chunk's text (special tokens
    removed) and every sampled frame (optionally flipped) of every video of the chunk, reduced by
    ``reduce_mode`` (0.0 when the chunk's videos gave no frames). Frames and texts of a whole
    batch are embedded together; frames come from the media layer (shared within a fused pass).
    """

    requires = ("torch", "transformers", "pillow", "av")
    stat_key = StatsKeys.video_frames_text_similarity
    model_attr = "hf_clip"
    uses = (InterVars.loaded_videos, InterVars.sampled_frames)
    model_params = {"hf_clip": "openai/clip-vit-base-patch32"}

    def __init__(
        self,
        hf_clip="openai/clip-vit-base-patch32",
        trust_remote_code=False,
        min_score: float = 0.1,
        max_score: float = 1.0,
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
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
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken per video with ``uniform`` sampling
        :param horizontal_flip: mirror frames left-right before scoring
        :param vertical_flip: flip frames top-bottom before scoring
        :param any_or_all: keep a sample when ``any`` of its chunks is in range, or only when ``all`` are
        :param reduce_mode: how a chunk's frame similarities are reduced: ``avg``, ``max`` or ``min``
        """
        self.setup_match(hf_clip, trust_remote_code, min_score, max_score, horizontal_flip, vertical_flip,
                         any_or_all, reduce_mode, kwargs)
        check_choice(frame_sampling_method, FRAME_SAMPLING, "Frame sampling method", self.name)
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num

    def compute_stats_batched(self, samples, context=False):
        from data_juicer.media.video import load_row_video_frames

        stats = samples[Fields.stats]
        key = StatsKeys.video_frames_text_similarity
        col = samples.get(self.video_key)
        token = special_tokens()["video"]
        frames, texts, chunks = [], [], []  # chunks: (row, text position, [frame positions])
        for i, s in enumerate(stats):
            if key in s:
                continue
            s[key] = []
            if col is None or not col[i]:
                continue
            per_video = load_row_video_frames(self, samples, i, self.frame_sampling_method, self.frame_num)
            at = {}
            for path, fs in per_video.items():
                at[path] = list(range(len(frames), len(frames) + len(fs)))
                frames += [flip(f, self.horizontal_flip, self.vertical_flip) for f in fs]
            for text, paths in text_media_chunks(samples[self.text_key][i], col[i], token):
                chunks.append((i, len(texts), [k for p in paths for k in at[p]]))
                texts.append(text)
        if not chunks:
            return samples
        model, proc = self.load_model()
        img = clip_image_embeds(model, proc, frames) if frames else None
        txt = clip_text_embeds(model, proc, texts)
        scale = clip_logit_scale(model) / 100.0
        for i, t, pos in chunks:
            if not pos:
                stats[i][key].append(0.0)
                continue
            sims = (txt[t:t + 1] @ img[pos].T * scale).flatten().tolist()
            stats[i][key].append(reduce_scores(sims, self.reduce_mode))
        return samples
