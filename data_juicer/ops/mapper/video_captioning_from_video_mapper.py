from typing import Optional

from loguru import logger
from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model, chunk_size, op_device, to_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.captions import CANDIDATE_MODES
from data_juicer.ops.common.frame_captions import build_rows, row_video_frames
from data_juicer.ops.common.vision import FRAME_SAMPLING, ModelChecks, check_choice
from data_juicer.ops.mapper.video_captioning_from_frames_mapper import (
    UPDATE_STRATEGIES,
    VideoCaptioningFromFramesMapper,
)
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars
from data_juicer.utils.lazy import require

_FRAMES = VideoCaptioningFromFramesMapper  # the text layout (chunks, candidates, tokens) is shared with it

# Data-Juicer's generation settings for video BLIP (beam sampling)
GENERATE_KWARGS = {"num_beams": 4, "max_new_tokens": 128, "temperature": 0.7, "top_p": 0.9,
                   "repetition_penalty": 1.5, "do_sample": True}


@OPERATORS.register_module("video_captioning_from_video_mapper")
class VideoCaptioningFromVideoMapper(ModelChecks, Mapper):
    """Captions each video as a whole with a video BLIP model (``kpyu/video-blip-opt-2.7b-ego4d``:
    BLIP-2 whose Q-Former attends over all sampled frames of a clip at once, see
    :mod:`data_juicer.models.video_blip`): one caption per video, ``caption_num`` sampled
    candidates (beam sampling: 4 beams, temperature 0.7, top-p 0.9, repetition penalty 1.5, up to
    128 new tokens, as Data-Juicer). New samples are added after their original (kept when
    ``keep_original_sample``); a sample without videos (or frames) adds none.

    Frames are key frames or ``frame_num`` uniform frames of each video (the media layer's
    sampling, shared within a fused pass), or, with ``frame_field``, image files listed per video
    in that field (``frame_num`` of them evenly spread). The videos of a whole batch with the same
    number of frames are captioned together (prompts left-padded); Data-Juicer runs one
    generation per video. ``keep_candidate_mode`` keeps a random candidate, the one closest to
    the chunk's text (simhash), or all (one new sample per candidate).

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
    model_params = {"hf_video_blip": "kpyu/video-blip-opt-2.7b-ego4d"}
    _prompt = _FRAMES._prompt
    _videos_to_caption = _FRAMES._videos_to_caption
    _candidates = _FRAMES._candidates
    _new_samples = _FRAMES._new_samples

    def __init__(
        self,
        hf_video_blip: str = "kpyu/video-blip-opt-2.7b-ego4d",
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
        :param hf_video_blip: video BLIP model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param caption_num: sampled candidate captions per video
        :param keep_candidate_mode: ``random_any`` (one random candidate), ``similar_one_simhash``
            (the candidate closest to the original text) or ``all`` (one new sample per candidate)
        :param keep_original_sample: keep the original sample before its new ones
        :param prompt: a text prompt for every video
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
        self.hf_video_blip = hf_video_blip
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
        self.num_newly_generated_samples = caption_num if keep_candidate_mode == "all" else 1
        self.generate_kwargs = dict(GENERATE_KWARGS)
        check_vision_model(hf_video_blip, who=self.name)

    def process_batched(self, samples):
        n = len(samples[self.text_key])
        jobs = []  # ((row, video index), frames, prompt)
        per_row = {}
        for i in range(n):
            videos = row_video_frames(self, samples, i, self.frame_field)
            if videos is None:
                continue
            per_row[i] = len(videos)
            wanted = {k for k, _ in self._videos_to_caption(samples[self.text_key][i] or "", len(videos))}
            jobs += [((i, k), videos[k], self._prompt(samples, i)) for k in sorted(wanted) if videos[k]]
        caps = self._caption_clips(jobs)
        # one "frame" per clip holding its candidates: the shared layout joins nothing
        by_video = {owner: [c] for (owner, _, _), c in zip(jobs, caps)}
        rows = []
        for i in range(n):
            if self.keep_original_sample:
                rows.append((i, None))
            if i in per_row:
                rows += [(i, new) for new in self._new_samples(samples[self.text_key][i] or "", i, per_row[i],
                                                               by_video)]
        return build_rows(samples, rows)

    def _caption_clips(self, jobs) -> list[list[str]]:
        """``caption_num`` sampled captions per clip; clips with as many frames are generated together."""
        if not jobs:
            return []
        torch = require("torch", who=self.name)
        from data_juicer.models.video_blip import load_video_blip

        device = op_device(self)
        model, proc = load_video_blip(self.hf_video_blip, who=self.name, device=device,
                                      trust_remote_code=self.trust_remote_code)
        tok = getattr(proc, "tokenizer", None)
        if tok is not None:
            tok.padding_side = "left"  # the decoder continues each prompt right where it ends
        max_len = model.config.text_config.max_position_embeddings
        out: list[list[str]] = [[] for _ in jobs]
        groups: dict = {}
        for j, (_, frames, prompt) in enumerate(jobs):
            groups.setdefault((len(frames), prompt is None), []).append(j)
        size = max(1, chunk_size(device) // 8)
        with torch.inference_mode():
            for _ in range(self.caption_num):
                for (t, no_prompt), idx in groups.items():
                    for s in range(0, len(idx), size):
                        part = idx[s:s + size]
                        texts = None if no_prompt else [jobs[j][2] for j in part]
                        inputs = proc(images=[f for j in part for f in jobs[j][1]], text=texts, return_tensors="pt",
                                      truncation=True, max_length=max_len, padding=True)
                        inputs = to_model(inputs, model)
                        pix = inputs["pixel_values"]
                        # (clips * frames, C, H, W) -> (clips, C, frames, H, W)
                        inputs["pixel_values"] = pix.reshape(len(part), t, *pix.shape[1:]).transpose(1, 2)
                        ids = model.generate(**inputs, **self.generate_kwargs)
                        for j, cap in zip(part, proc.batch_decode(ids, skip_special_tokens=True)):
                            out[j].append(cap)
        return out
