import random
import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.special_tokens import remove_special_tokens, special_tokens
from data_juicer.ops.mapper.image_tagging_vlm_mapper import file_data_url
from data_juicer.ops.registry import OPERATORS

DEFAULT_PROMPT = "\nDescribe the input video in 1-2 sentences.\n"
_VIDEO_MIME = {"mp4": "video/mp4", "webm": "video/webm", "mov": "video/quicktime", "mkv": "video/x-matroska",
               "avi": "video/x-msvideo"}


def insert_after_placeholders(text: str, placeholders: list, new_texts: list, delim: str = " ") -> str:
    """Each new text inserted right after the first occurrence of its placeholder (as Data-Juicer does)."""
    for ph, new in zip(placeholders, new_texts):
        idx = text.find(ph)
        if idx < 0:
            raise ValueError(f"placeholder {ph!r} not found in {text!r}")
        text = text[: idx + len(ph)] + delim + new + delim + text[idx + len(ph):]
    return text


def only_special_tokens(text: str) -> str:
    pattern = "|".join(re.escape(t) for t in special_tokens().values())
    return "".join(re.findall(pattern, text))


@OPERATORS.register_module("video_captioning_from_vlm_mapper")
class VideoCaptioningFromVLMMapper(LLMOpMixin, Mapper):
    """Captions each video with a video-capable VLM (Qwen3-VL by default) and emits new samples
    whose text is the chunk's special tokens with the captions inserted after the video tokens,
    each chunk closed by the end-of-chunk token.

    ``caption_num`` candidates are generated per video and reduced by ``keep_candidate_mode``:
    ``random_any`` (one new sample, a random candidate), ``similar_one_simhash`` (one new sample,
    the candidate whose SimHash is nearest the chunk's text) or ``all`` (``caption_num`` new
    samples). The prompt is the sample's ``prompt_key`` field, else ``prompt``, else a default.
    ``keep_original_sample`` keeps the input rows before their new ones. Backends: ``transformers``
    (default; the processor reads the video path), ``enable_vllm`` (in-process vLLM), or an
    OpenAI-compatible server when ``model_params.base_url`` is set (the video goes as a base64
    ``video_url`` content part). Data-Juicer 1.6.1 returns an empty batch from this op (an
    inverted check); here the generated samples are returned as its docstring describes.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    fan_out = True
    MODES: ClassVar[tuple] = ("random_any", "similar_one_simhash", "all")

    def __init__(
        self,
        hf_model: str = "Qwen/Qwen3-VL-8B-Instruct",
        enable_vllm: bool = False,
        caption_num: PositiveInt = 1,
        keep_candidate_mode: str = "random_any",
        keep_original_sample: bool = True,
        prompt: Optional[str] = None,
        prompt_key: Optional[str] = None,
        system_prompt: Optional[str] = None,
        model_params: Dict = None,
        sampling_params: Dict = None,
        **kwargs,
    ):
        """
        :param hf_model: the video VLM (Hugging Face name or folder; the served name with ``base_url``)
        :param enable_vllm: generate with an in-process vLLM engine
        :param caption_num: candidate captions per video
        :param keep_candidate_mode: ``random_any``, ``similar_one_simhash`` or ``all``
        :param keep_original_sample: keep the original samples beside the generated ones
        :param prompt: the prompt for every video
        :param prompt_key: field holding a per-sample prompt (wins over ``prompt``)
        :param system_prompt: system prompt
        :param model_params: model arguments, or API client options with ``base_url``
        :param sampling_params: generation settings (default: greedy, ``max_tokens`` 1024)
        """
        super().__init__(**kwargs)
        if keep_candidate_mode not in self.MODES:
            raise ValueError(f"{self.name}: keep_candidate_mode {keep_candidate_mode!r} is not one of "
                             f"{', '.join(self.MODES)}")
        self.caption_num = caption_num
        self.keep_candidate_mode = keep_candidate_mode
        self.keep_original_sample = keep_original_sample
        self.new_per_sample = caption_num if keep_candidate_mode == "all" else 1
        self.prompt = prompt
        self.prompt_key_param = prompt_key
        self.system_prompt = system_prompt
        sp = dict(sampling_params or {"temperature": 0, "max_tokens": 1024})
        mp = dict(model_params or {})
        self.hf_model = hf_model
        if mp.get("base_url") or enable_vllm:
            self.init_llm(model=hf_model, enable_vllm=enable_vllm, model_params=mp, sampling_params=sp, try_num=1)
            self._vision = None
        else:
            from data_juicer.models.llm.vlm_hf import HFVisionGenerator

            self.llm_kind, self.sampling_params = "hf", sp
            self._vision = HFVisionGenerator(hf_model, mp, who=self.name)

    def _messages(self, prompt_text: str, video: str) -> list:
        if self.llm_kind == "hf":
            part = {"type": "video", "video": video}
        else:
            ext = video.rsplit(".", 1)[-1].lower()
            part = {"type": "video_url", "video_url": {"url": file_data_url(video, _VIDEO_MIME.get(ext, "video/mp4"),
                                                                             self.name)}}
        msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return msgs + [{"role": "user", "content": [{"type": "text", "text": prompt_text}, part]}]

    def _captions(self, msgs: list) -> list:
        """``caption_num`` candidates for one video."""
        if self._vision is not None:
            return [self._vision.generate(msgs, self.sampling_params) for _ in range(self.caption_num)]
        return [self.llm.chat([msgs], attempt=k)[0] for k in range(self.caption_num)]

    def _reduce(self, chunk: str, candidates: list) -> list:
        if self.keep_candidate_mode == "random_any":
            return [random.choice(candidates)]
        if self.keep_candidate_mode == "all":
            return list(candidates)
        from data_juicer.ops.deduplicator.document_simhash_deduplicator import DocumentSimhashDeduplicator
        from data_juicer.utils.constant import HashKeys

        op = DocumentSimhashDeduplicator(window_size=2)
        hashes = [int(h) for h in op.compute_hash({op.text_key: [remove_special_tokens(chunk)] + list(candidates)})[
            HashKeys.simhash]]
        dist = [bin(hashes[0] ^ h).count("1") for h in hashes[1:]]
        return [candidates[dist.index(min(dist))]]

    def _generate_for(self, row: dict) -> list:
        videos = row.get(self.video_key) or []
        if not videos:
            return []
        tok = special_tokens()
        new = [dict(row, **{self.text_key: ""}) for _ in range(self.new_per_sample)]
        if self.prompt_key_param and isinstance(row.get(self.prompt_key_param), str):
            prompt_text = row[self.prompt_key_param]
        else:
            prompt_text = self.prompt if isinstance(self.prompt, str) and self.prompt else DEFAULT_PROMPT
        offset = 0
        for chunk in (row.get(self.text_key) or "").split(tok["eoc"]):
            count = chunk.count(tok["video"])
            if count == 0 or not chunk:
                continue
            per_video = [self._reduce(chunk, self._captions(self._messages(prompt_text, v)))
                         for v in videos[offset:offset + count]]
            base = only_special_tokens(chunk)
            for i in range(self.new_per_sample):
                text = insert_after_placeholders(base, [tok["video"]] * count, [pv[i] for pv in per_video])
                new[i][self.text_key] += text + tok["eoc"]
            offset += count
        return new

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        out_rows = []
        for i in range(n):
            row = {k: samples[k][i] for k in keys}
            if self.keep_original_sample:
                out_rows.append(row)
            out_rows.extend(self._generate_for(row))
        return {k: [r[k] for r in out_rows] for k in keys}
