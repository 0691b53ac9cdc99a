import os
import re
import tempfile

from data_juicer.models.vision import check_vision_model, op_device
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.frame_captions import build_rows
from data_juicer.ops.common.special_tokens import special_tokens
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

QWEN_AUDIO = "Qwen/Qwen-Audio"
# Qwen-Audio's task tokens for an audio caption, as Data-Juicer prompts it
PROMPT = "<|startoftranscription|><|unknown|><|caption|><|unknown|><|notimestamps|><|wo_itn|>"
_SPECIAL = re.compile(r"<\|.*?\|>")


def clean_response(response: str, audio_path: str) -> str:
    """The caption in a decoded Qwen-Audio answer: the audio path, ``<audio>`` tags and every
    ``<|...|>`` token removed, stripped."""
    response = response.replace(audio_path, "").replace("<audio>", "").replace("</audio>", "")
    return _SPECIAL.sub("", response).strip()


@OPERATORS.register_module("video_captioning_from_audio_mapper")
class VideoCaptioningFromAudioMapper(Mapper):
    """Captions each video from its audio track with Qwen-Audio (``Qwen/Qwen-Audio``) and adds the
    captioned sample after the original (kept when ``keep_original_sample``).

    Per text chunk (split at the end-of-chunk token; blank chunks dropped) each video of the chunk
    whose file has an audio stream gets ``"<video> <caption>"``; the chunk's captions are joined
    and closed by the end-of-chunk token. Videos without audio, or whose caption comes out empty,
    are left out of the new sample's text and its video list. A sample without videos adds none.
    The first audio stream is extracted (ffmpeg, mp3, in a temporary folder: Data-Juicer writes it
    beside the video) and the model is asked ``<audio>{path}</audio>`` + Qwen-Audio's caption task
    tokens; the answer is cleaned of the path, the audio tags and every ``<|...|>`` token.

    **What a user needs.** Qwen-Audio's model and tokenizer code is not in transformers nor in any
    registry package: it ships in the model's own folder (``modeling_qwen.py``,
    ``tokenization_qwen.py``, ``audio.py``), loaded with ``trust_remote_code`` as Data-Juicer
    does. Put the downloaded ``Qwen/Qwen-Audio`` folder (weights and code) under
    ``$DJ_MODELS_DIR/Qwen/Qwen-Audio`` (or in the Hugging Face cache); its code needs
    ``tiktoken``, ``einops``, ``transformers-stream-generator`` and ``accelerate``, and was
    written for transformers 4.3x (check it runs under the installed transformers). The op loads
    it through transformers' real path (``AutoModelForCausalLM`` from the folder's ``auto_map``,
    ``AutoTokenizer``) and relies on the interface that code defines: ``tokenizer.process_audio(query)``
    returning ``audio_info``, ``tokenizer(query, audio_info=...)``, ``model.generate(**inputs,
    audio_info=..., use_cache=False)`` and ``tokenizer.decode(ids, skip_special_tokens=True,
    audio_info=...)``. That interface takes one query at a time, so audios are captioned one by
    one (the model is loaded once per worker). A missing model fails when the op is built, naming
    every path looked at.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "tiktoken", "einops", "av")
    uses_model = True
    fan_out = True

    def __init__(self, keep_original_sample: bool = True, **kwargs):
        """
        :param keep_original_sample: keep the original sample before its captioned one
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "30GB")
        super().__init__(**kwargs)
        self.keep_original_sample = keep_original_sample
        self._hf_qwen_audio = QWEN_AUDIO
        self.prompt = PROMPT
        check_vision_model(QWEN_AUDIO, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_vision_model(QWEN_AUDIO, who=cls.__name__)]

    def process_batched(self, samples):
        n = len(samples[self.text_key])
        col = samples.get(self.video_key)
        rows = []
        with tempfile.TemporaryDirectory(prefix="dj-qwen-audio-") as tmp:
            for i in range(n):
                if self.keep_original_sample:
                    rows.append((i, None))
                videos = col[i] if col is not None else None
                if videos:
                    rows.append((i, self._caption_sample(samples[self.text_key][i] or "", list(videos), tmp)))
        return build_rows(samples, rows)

    def _caption_sample(self, text: str, videos: list, tmp: str) -> dict:
        tok, eoc = special_tokens()["video"], special_tokens()["eoc"]
        out_text, kept, offset = "", [], 0
        for chunk in text.split(eoc):
            if not chunk.strip():
                continue
            count = chunk.count(tok)
            parts = []
            for path in videos[offset:offset + count]:
                caption = self._caption(path, tmp)
                if caption:
                    parts.append(f"{tok} {caption}")
                    kept.append(path)
            offset += count
            out_text += "".join(parts) + eoc
        return {self.text_key: out_text, self.video_key: kept}

    def _extract_audio(self, path: str, tmp: str):
        """The first audio stream of ``path`` as an mp3 in ``tmp``; None when the video has none."""
        from data_juicer.media.video import run_ffmpeg, video_info

        if not video_info(path)["has_audio"]:
            return None
        out = os.path.join(tmp, f"{len(os.listdir(tmp))}_{os.path.basename(path)}_0.mp3")
        return run_ffmpeg(["-loglevel", "error", "-i", path, "-map", "0:a:0", "-vn"], out, what="audio extraction")

    def _caption(self, path: str, tmp: str) -> str:
        audio = self._extract_audio(path, tmp)
        if audio is None:
            return ""
        torch = require("torch", who=self.name)
        from data_juicer.models.vision import load_vision_model

        model, tokenizer = load_vision_model(QWEN_AUDIO, who=self.name, device=op_device(self), trust_remote_code=True,
                                             processor="AutoTokenizer", fallback_class="AutoModelForCausalLM")
        query = f"<audio>{audio}</audio>{self.prompt}"
        try:
            audio_info = tokenizer.process_audio(query)
            inputs = tokenizer(query, return_tensors="pt", audio_info=audio_info).to(model.device)
            with torch.inference_mode():
                ids = model.generate(**inputs, audio_info=audio_info, use_cache=False)
            response = tokenizer.decode(ids[0], skip_special_tokens=True, audio_info=audio_info)
        finally:
            os.remove(audio)
        return clean_response(response, audio)
