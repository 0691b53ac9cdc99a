from typing import Optional

from loguru import logger
from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.captions import (
    CANDIDATE_MODES,
    MAX_NEW_TOKENS,
    choose_captions,
    insert_after_tokens,
    only_special_tokens,
)
from data_juicer.ops.common.frame_captions import build_rows, caption_frames, row_video_frames
from data_juicer.ops.common.special_tokens import remove_special_tokens, special_tokens
from data_juicer.ops.common.vision import FRAME_SAMPLING, ModelChecks, check_choice
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars

UPDATE_STRATEGIES = ("keep_origin", "rewrite")


@OPERATORS.register_module("video_captioning_from_frames_mapper")
class VideoCaptioningFromFramesMapper(ModelChecks, Mapper):
    """Captions each video from its sampled frames with a Hugging Face image-to-text model
    (BLIP-2, BLIP...): every frame is captioned and a video's caption is its frames' captions,
    stripped and joined with ``". "``. New samples are added after their original (kept when
    ``keep_original_sample``); a sample without videos (or frames) adds none.

    Frames are key frames or ``frame_num`` uniform frames of each video (the media layer's
    sampling, shared within a fused pass), or, with ``frame_field``, image files listed per
    video in that field (``frame_num`` of them evenly spread). All frames of a whole batch are
    captioned together in chunks (Data-Juicer runs one generation per video), ``caption_num``
    sampled rounds; ``keep_candidate_mode`` keeps a random candidate, the one closest to the
    chunk's text (simhash), or all (one new sample per candidate).

    The new text, with ``legacy_split_by_text_token`` (default): per text chunk holding video
    tokens, its special tokens with each video's caption after its token, closed by the
    end-of-chunk token. Otherwise every video of the sample is captioned; ``rewrite`` makes the
    text ``"<video>cap1 <video>cap2<eoc>"``, ``keep_origin`` keeps the text and writes the list of
    captions into ``caption_field``.
    Differs from Data-Juicer on purpose: with several videos in a chunk, each caption follows its
    own video token (Data-Juicer puts them all after the first one, in reverse order); a video
    that gives no frames gets an empty caption (Data-Juicer's processor fails on no images).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow", "av")
    uses_model = True
    fan_out = True
    uses = (InterVars.loaded_videos, InterVars.sampled_frames)
    model_params = {"hf_img2seq": "Salesforce/blip2-opt-2.7b"}

    def __init__(
        self,
        hf_img2seq: str = "Salesforce/blip2-opt-2.7b",
        trust_remote_code: bool = False,
        caption_num: PositiveInt = 1,
        keep_candidate_mode: str = "random_any",
        keep_original_sample: bool = True,
        prompt: Optional[str] = None,
        prompt_key: Optional[str] = None,
        frame_field: Optional[str] = None,
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        text_update_strategy: str = "rewrite",
        caption_field: Optional[str] = None,
        legacy_split_by_text_token: bool = True,
        **kwargs,
    ):
        """
        :param hf_img2seq: image-to-text model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param caption_num: sampled candidate captions per video
        :param keep_candidate_mode: ``random_any`` (one random candidate), ``similar_one_simhash``
            (the candidate closest to the original text) or ``all`` (one new sample per candidate)
        :param keep_original_sample: keep the original sample before its new ones
        :param prompt: a text prompt for every frame (e.g. BLIP-2's "Question: ... Answer:")
        :param prompt_key: field holding a per-sample prompt (used before ``prompt`` when a string)
        :param frame_field: field holding, per video, a list of frame image paths to caption
            instead of decoding the videos
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly
            spread); used when frames are decoded from the videos
        :param frame_num: frames per video with ``uniform`` sampling or from ``frame_field``
        :param horizontal_flip: mirror frames left-right before captioning
        :param vertical_flip: flip frames top-bottom before captioning
        :param text_update_strategy: without legacy splitting: ``rewrite`` (the text becomes the
            captions after video tokens) or ``keep_origin`` (the text is kept, captions go to ``caption_field``)
        :param caption_field: field the list of video captions is written to (``keep_origin``)
        :param legacy_split_by_text_token: pair videos with the text's video tokens chunk by chunk
            (else every video of the sample is captioned)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "20GB")
        super().__init__(**kwargs)
        check_choice(keep_candidate_mode, CANDIDATE_MODES, "Keep strategy", self.name)
        check_choice(frame_sampling_method, FRAME_SAMPLING, "Frame sampling method", self.name)
        check_choice(text_update_strategy, UPDATE_STRATEGIES, "Text update strategy", self.name)
        if caption_num > 1 and keep_candidate_mode == "all" and not legacy_split_by_text_token:
            raise ValueError(f"{self.name}: `legacy_split_by_text_token` must be True when "
                             "`keep_candidate_mode` is 'all'.")
        if not caption_field and text_update_strategy != "rewrite":
            raise ValueError(f"{self.name}: when `text_update_strategy` is not 'rewrite', `caption_field` "
                             "must be given to hold the video captions.")
        if caption_field and keep_original_sample:
            raise ValueError(f"{self.name}: only one of `caption_field` and `keep_original_sample` may be set.")
        if prompt and prompt_key:
            logger.warning(f"{self.name}: both `prompt` and `prompt_key` are set; `prompt_key` is used first")
        self.hf_img2seq = hf_img2seq
        self.trust_remote_code = trust_remote_code
        self.caption_num = caption_num
        self.keep_candidate_mode = keep_candidate_mode
        self.keep_original_sample = keep_original_sample
        self.prompt = prompt
        self.prompt_key = prompt_key
        self.frame_field = frame_field
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.text_update_strategy = text_update_strategy
        self.caption_field = caption_field
        self.legacy_split_by_text_token = legacy_split_by_text_token
        self.max_new_tokens = MAX_NEW_TOKENS  # Data-Juicer's fixed generation length
        self.num_newly_generated_samples = caption_num if keep_candidate_mode == "all" else 1
        check_vision_model(hf_img2seq, who=self.name)

    def _prompt(self, samples, i):
        if self.prompt_key and self.prompt_key in samples and isinstance(samples[self.prompt_key][i], str):
            return samples[self.prompt_key][i]
        return self.prompt if isinstance(self.prompt, str) else None

    def _videos_to_caption(self, text: str, n_videos: int) -> list[tuple[int, str]]:
        """``(video index, the text it is judged against)`` for each video that gets a caption."""
        if not self.legacy_split_by_text_token:
            return [(k, text) for k in range(n_videos)]
        tok, eoc = special_tokens()["video"], special_tokens()["eoc"]
        out, offset = [], 0
        for chunk in text.split(eoc):
            count = chunk.count(tok)
            if count == 0 or not chunk.strip():
                continue
            out += [(k, chunk) for k in range(offset, min(offset + count, n_videos))]
            offset += count
        return out

    def process_batched(self, samples):
        n = len(samples[self.text_key])
        frames, prompts, owners = [], [], []  # owners: (row, video index) of each frame
        per_row = {}
        for i in range(n):
            videos = row_video_frames(self, samples, i, self.frame_field)
            if videos is None:
                continue
            per_row[i] = len(videos)
            wanted = {k for k, _ in self._videos_to_caption(samples[self.text_key][i] or "", len(videos))}
            for k in sorted(wanted):
                for f in videos[k]:
                    frames.append(f)
                    prompts.append(self._prompt(samples, i))
                    owners.append((i, k))
        caps = caption_frames(self, self.hf_img2seq, self.trust_remote_code, frames, prompts, self.caption_num)
        by_video: dict = {}
        for owner, c in zip(owners, caps):
            by_video.setdefault(owner, []).append(c)
        rows = []
        for i in range(n):
            if self.keep_original_sample:
                rows.append((i, None))
            if i not in per_row:
                continue
            rows += [(i, new) for new in self._new_samples(samples[self.text_key][i] or "", i, per_row[i], by_video)]
        return build_rows(samples, rows)

    def _candidates(self, i, k, by_video) -> list[str]:
        """The ``caption_num`` candidate captions of video ``k`` of row ``i`` (frames joined by '. ')."""
        frame_caps = by_video.get((i, k), [])
        return [". ".join(fc[r].strip() for fc in frame_caps) for r in range(self.caption_num)]

    def _new_samples(self, text, i, n_videos, by_video) -> list[dict]:
        m = self.num_newly_generated_samples
        tok, eoc = special_tokens()["video"], special_tokens()["eoc"]
        if not self.legacy_split_by_text_token:
            per_video = [choose_captions(self.keep_candidate_mode, remove_special_tokens(text),
                                         self._candidates(i, k, by_video)) for k in range(n_videos)]
            caps = [[p[s] for p in per_video] for s in range(m)]
            if self.text_update_strategy == "keep_origin":
                return [{self.caption_field: c} for c in caps]
            return [{self.text_key: " ".join(tok + c for c in cs) + eoc} for cs in caps]
        new = [""] * m
        offset = 0
        for chunk in text.split(eoc):
            count = chunk.count(tok)
            if count == 0 or not chunk.strip():
                continue
            per_video = [choose_captions(self.keep_candidate_mode, remove_special_tokens(chunk),
                                         self._candidates(i, k, by_video))
                         for k in range(offset, min(offset + count, n_videos))]
            base = only_special_tokens(chunk)
            for s in range(m):
                new[s] += insert_after_tokens(base, tok, [p[s] for p in per_video]) + eoc
            offset += count
        return [{self.text_key: t} for t in new]
