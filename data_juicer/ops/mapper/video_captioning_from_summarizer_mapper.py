from typing import Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model, load_vision_model, op_device, to_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.frame_captions import build_rows
from data_juicer.ops.common.special_tokens import remove_special_tokens, special_tokens
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

DEFAULT_SUMMARIZER = "mrm8488/flan-t5-large-finetuned-openai-summarize_from_feedback"
# the captioners / taggers Data-Juicer composes, in its order
CAPTIONERS = (("consider_video_caption_from_video", "video_captioning_from_video_mapper", "vid_cap_from_vid_args"),
              ("consider_video_caption_from_audio", "video_captioning_from_audio_mapper", None),
              ("consider_video_caption_from_frames", "video_captioning_from_frames_mapper", "vid_cap_from_frm_args"))
TAGGERS = (("consider_video_tags_from_audio", "video_tagging_from_audio_mapper", "vid_tag_from_aud_args"),
           ("consider_video_tags_from_frames", "video_tagging_from_frames_mapper", "vid_tag_from_frm_args"))
FIXED_ARGS = {"caption_num": 1, "keep_candidate_mode": "random_any", "keep_original_sample": False}


@OPERATORS.register_module("video_captioning_from_summarizer_mapper")
class VideoCaptioningFromSummarizerMapper(ModelChecks, Mapper):
    """Captions each video chunk by summarizing what other ops say about its videos: the tags of
    their audio and of their frames and the captions from the videos, their audio and their
    frames, joined with ", " and summarized by a Hugging Face seq2seq model (by default
    ``mrm8488/flan-t5-large-finetuned-openai-summarize_from_feedback``, greedy, 128 new tokens).

    The sub-ops are this registry's ``video_tagging_from_audio_mapper``,
    ``video_tagging_from_frames_mapper``, ``video_captioning_from_video_mapper``,
    ``video_captioning_from_audio_mapper`` and ``video_captioning_from_frames_mapper``, built
    with the ``vid_*_args`` given (only the parameters each takes; one caption, ``random_any``,
    no original kept), each run once over every video chunk of the whole batch; the summaries of
    a batch are generated together. A new sample follows its original (kept when
    ``keep_original_sample``): each chunk with videos becomes ``<video>... <summary><eoc>``,
    other chunks are kept; a sample without videos adds none. A ``consider_*`` switch whose op
    does not exist here (the video-BLIP and audio captioners are not built yet) fails at build,
    naming the switch to turn off.
    Differs from Data-Juicer on purpose: the ``keep_tag_num`` most frequent frame tags are kept
    per video (Data-Juicer indexes one tag, ``tags[keep_tag_num]``, and adds its characters).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "av")
    uses_model = True
    fan_out = True

    def __init__(
        self,
        hf_summarizer: str = None,
        trust_remote_code: bool = False,
        consider_video_caption_from_video: bool = True,
        consider_video_caption_from_audio: bool = True,
        consider_video_caption_from_frames: bool = True,
        consider_video_tags_from_audio: bool = True,
        consider_video_tags_from_frames: bool = True,
        vid_cap_from_vid_args: Optional[Dict] = None,
        vid_cap_from_frm_args: Optional[Dict] = None,
        vid_tag_from_aud_args: Optional[Dict] = None,
        vid_tag_from_frm_args: Optional[Dict] = None,
        keep_tag_num: PositiveInt = 5,
        keep_original_sample: bool = True,
        **kwargs,
    ):
        """
        :param hf_summarizer: the seq2seq summarizer: a Hugging Face model name (found offline) or
            a local folder (default ``mrm8488/flan-t5-large-finetuned-openai-summarize_from_feedback``)
        :param trust_remote_code: allow the model folder's own code
        :param consider_video_caption_from_video: use ``video_captioning_from_video_mapper``'s captions
        :param consider_video_caption_from_audio: use ``video_captioning_from_audio_mapper``'s captions
        :param consider_video_caption_from_frames: use ``video_captioning_from_frames_mapper``'s captions
        :param consider_video_tags_from_audio: use ``video_tagging_from_audio_mapper``'s tags
        :param consider_video_tags_from_frames: use ``video_tagging_from_frames_mapper``'s tags
        :param vid_cap_from_vid_args: parameters of the captioner from videos
        :param vid_cap_from_frm_args: parameters of the captioner from frames
        :param vid_tag_from_aud_args: parameters of the tagger from audio
        :param vid_tag_from_frm_args: parameters of the tagger from frames
        :param keep_tag_num: the most frequent frame tags kept per video
        :param keep_original_sample: keep the original sample before its new one
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "40GB")
        super().__init__(**kwargs)
        self.hf_summarizer = hf_summarizer
        self._hf_summarizer = hf_summarizer or DEFAULT_SUMMARIZER
        self.trust_remote_code = trust_remote_code
        self.keep_tag_num = keep_tag_num
        self.keep_original_sample = keep_original_sample
        self.max_new_tokens = 128  # Data-Juicer's fixed summary length
        switches = dict(consider_video_caption_from_video=consider_video_caption_from_video,
                        consider_video_caption_from_audio=consider_video_caption_from_audio,
                        consider_video_caption_from_frames=consider_video_caption_from_frames,
                        consider_video_tags_from_audio=consider_video_tags_from_audio,
                        consider_video_tags_from_frames=consider_video_tags_from_frames)
        given = dict(vid_cap_from_vid_args=vid_cap_from_vid_args, vid_cap_from_frm_args=vid_cap_from_frm_args,
                     vid_tag_from_aud_args=vid_tag_from_aud_args, vid_tag_from_frm_args=vid_tag_from_frm_args)
        for k, v in switches.items():
            setattr(self, k, v)
        for k, v in given.items():
            setattr(self, k, v)
        check_vision_model(self._hf_summarizer, who=self.name)
        self.cap_ops = [self._sub_op(s, op, given.get(a) if a else None) for s, op, a in CAPTIONERS if switches[s]]
        self.tag_ops = [self._sub_op(s, op, given.get(a) if a else None) for s, op, a in TAGGERS if switches[s]]

    def _sub_op(self, switch: str, op_name: str, args: Optional[dict]):
        import inspect

        try:
            cls = OPERATORS.get(op_name)
        except KeyError:
            cls = None
        if cls is None:
            raise ValueError(f"{self.name}: `{switch}` needs the op {op_name}, which this version does not have; "
                             f"set `{switch}: false`")
        accepted = set()
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is not None:
                accepted |= set(inspect.signature(init).parameters)
        params = {k: v for k, v in {**(args or {}), **FIXED_ARGS}.items() if k in accepted}
        params["accelerator"] = self.accelerator
        return cls(**params)

    def process_batched(self, samples):
        tok, eoc = special_tokens()["video"], special_tokens()["eoc"]
        n = len(samples[self.text_key])
        col = samples.get(self.video_key)
        chunks = []  # (row, chunk text, [videos]) of every chunk with videos
        for i in range(n):
            if col is None or not col[i] or not (self.cap_ops or self.tag_ops):
                continue
            offset = 0
            for chunk in (samples[self.text_key][i] or "").split(eoc):
                count = chunk.count(tok)
                if chunk.strip() and count:
                    chunks.append((i, chunk, list(col[i][offset:offset + count])))
                    offset += count
        texts = self._texts_to_summarize(chunks)
        summaries = self._summarize(texts)
        by_chunk = {}
        for (i, chunk, vids), s in zip(chunks, summaries):
            by_chunk.setdefault(i, []).append(f"{tok * len(vids)} {s}")
        rows = []
        for i in range(n):
            if self.keep_original_sample:
                rows.append((i, None))
            if i not in by_chunk:
                continue
            done, parts = iter(by_chunk[i]), []
            for chunk in (samples[self.text_key][i] or "").split(eoc):
                if not chunk.strip():
                    continue
                parts.append((next(done) if chunk.count(tok) else chunk) + eoc)
            rows.append((i, {self.text_key: "".join(parts)}))
        return build_rows(samples, rows)

    def _texts_to_summarize(self, chunks) -> list[str]:
        """For each chunk: its videos' audio tags, frame tags and captions, joined with ', '."""
        if not chunks:
            return []
        temp = {self.text_key: [c for _, c, _ in chunks], self.video_key: [v for _, _, v in chunks],
                Fields.meta: [{} for _ in chunks], Fields.stats: [{} for _ in chunks]}
        for op in self.tag_ops:
            temp = op.process_batched(temp)
        parts = [[] for _ in chunks]
        for k, meta in enumerate(temp[Fields.meta]):
            parts[k] += list(meta.get(MetaKeys.video_audio_tags, []))
            for tags in meta.get(MetaKeys.video_frame_tags, []):
                parts[k] += list(tags)[: self.keep_tag_num]
        for op in self.cap_ops:
            out = op.process_batched({self.text_key: list(temp[self.text_key]),
                                      self.video_key: list(temp[self.video_key]),
                                      Fields.stats: [{} for _ in chunks]})
            caps = out[self.text_key]
            if len(caps) != len(chunks):
                raise RuntimeError(f"{self.name}: {op.name} returned {len(caps)} captions for {len(chunks)} "
                                   "video chunks")
            for k, cap in enumerate(caps):
                parts[k].append(remove_special_tokens(cap))
        return [", ".join(p) for p in parts]

    def _summarize(self, texts: list[str]) -> list[str]:
        if not texts:
            return []
        from data_juicer.utils.lazy import require

        torch = require("torch", who=self.name)
        model, tok = load_vision_model(self._hf_summarizer, who=self.name, device=op_device(self),
                                       trust_remote_code=self.trust_remote_code, processor="AutoTokenizer",
                                       fallback_class="AutoModelForSeq2SeqLM")
        out = []
        with torch.inference_mode():
            for s in range(0, len(texts), 16):
                enc = to_model(tok(texts[s:s + 16], return_tensors="pt", padding=True), model)
                inputs = {k: enc[k] for k in ("input_ids", "attention_mask") if k in enc}
                ids = model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
                out += tok.batch_decode(ids, skip_special_tokens=True)
        return out

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        who = getattr(cls, "_name", "") or cls.__name__
        return [check_vision_model(params.get("hf_summarizer") or DEFAULT_SUMMARIZER, who=who)]
