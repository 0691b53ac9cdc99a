from data_juicer.models.vision import chunk_size, check_vision_model, load_vision_model, op_device, to_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

SAMPLING_RATE = 16000  # what the AudioSet AST models take
NO_AUDIO = "EMPTY"


@OPERATORS.register_module("video_tagging_from_audio_mapper")
class VideoTaggingFromAudioMapper(ModelChecks, Mapper):
    """Tags each video by its audio track with an Audio Spectrogram Transformer (AudioSet labels):
    the most likely label per video (``EMPTY`` for a video without audio), a list in the sample's
    meta under ``tag_field_name``, one entry per path of the video field.

    The audio (first stream, resampled to 16 kHz) comes from the media layer; the waveforms of a
    whole batch go through the feature extractor and the model together. Differs from
    Data-Juicer in the audio it feeds: a stereo track is mixed down (Data-Juicer takes the first
    channel) and resampled with librosa (Data-Juicer: torchaudio), so scores can differ slightly.
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "transformers", "av", "soundfile", "librosa")
    uses_model = True
    model_params = {"hf_ast": "MIT/ast-finetuned-audioset-10-10-0.4593"}

    def __init__(
        self,
        hf_ast: str = "MIT/ast-finetuned-audioset-10-10-0.4593",
        trust_remote_code: bool = False,
        tag_field_name: str = MetaKeys.video_audio_tags,
        **kwargs,
    ):
        """
        :param hf_ast: audio classifier: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param tag_field_name: meta field receiving the tags
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "500MB")
        super().__init__(**kwargs)
        self.hf_ast = hf_ast
        self.trust_remote_code = trust_remote_code
        self.tag_field_name = tag_field_name
        check_vision_model(hf_ast, who=self.name)

    def process_batched(self, samples):
        from data_juicer.media.audio import load_audio
        from data_juicer.media.video import video_info

        n = len(next(iter(samples.values()))) if samples else 0
        metas = samples.get(Fields.meta) or [None] * n
        metas = [dict(m) if isinstance(m, dict) else {} for m in metas]
        col = samples.get(self.video_key)
        waves, where, tags = [], [], {}
        for i in range(n):
            if self.tag_field_name in metas[i]:
                continue
            paths = (col[i] if col is not None else None) or []
            tags[i] = [NO_AUDIO] * len(paths)
            for k, path in enumerate(paths):
                if video_info(path)["has_audio"]:
                    waves.append(load_audio(path, SAMPLING_RATE, self.name)[0])
                    where.append((i, k))
        if waves:
            for (i, k), label in zip(where, self._classify(waves)):
                tags[i][k] = label
        for i, t in tags.items():
            metas[i][self.tag_field_name] = t
        samples[Fields.meta] = metas
        return samples

    def _classify(self, waves):
        torch = require("torch", who=self.name)
        model, fe = load_vision_model(self.hf_ast, who=self.name, device=op_device(self),
                                      trust_remote_code=self.trust_remote_code, processor="AutoFeatureExtractor")
        out = []
        with torch.inference_mode():
            size = chunk_size(model.device.type)
            for s in range(0, len(waves), size):
                inputs = to_model(fe(list(waves[s:s + size]), sampling_rate=SAMPLING_RATE, return_tensors="pt"), model)
                ids = model(**inputs).logits.argmax(dim=-1).tolist()
                out += [model.config.id2label[j] for j in ids]
        return out
