from data_juicer.models.vision import check_vision_model, load_vision_model, op_device, to_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require

DEFAULT_MODEL = "audeering/wav2vec2-large-robust-24-ft-age-gender"
SAMPLING_RATE = 16000


@OPERATORS.register_module("video_audio_detect_age_gender_mapper")
class VideoAudioDetectAgeGenderMapper(ModelChecks, Mapper):
    """Estimates the speaker's age and gender from each video's audio with audEERING's wav2vec2
    age/gender model, for the videos ``video_tagging_from_audio_mapper`` tagged ``Speech`` (it must
    run first): meta ``tag_field_name`` gets, per video, ``{"Age": [years], "female": [p],
    "male": [p], "child": [p]}``, or ``[]`` for a video without speech.

    Audio comes from the media layer (first stream, 16 kHz). Each waveform is one forward pass:
    the model mean-pools over time without a padding mask, so batching padded audio would change
    its values. Stereo tracks are mixed down (Data-Juicer takes the first channel).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "transformers", "av", "soundfile", "librosa")
    uses_model = True
    model_params = {"hf_audio_mapper": DEFAULT_MODEL}

    def __init__(self, hf_audio_mapper: str = None, tag_field_name: str = MetaKeys.audio_speech_attribute, **kwargs):
        """
        :param hf_audio_mapper: the wav2vec2 age/gender model: a Hugging Face name (found offline) or a local
            folder; empty means ``audeering/wav2vec2-large-robust-24-ft-age-gender``
        :param tag_field_name: meta field receiving the per-video results
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "7GB")
        super().__init__(**kwargs)
        self.hf_audio_mapper = hf_audio_mapper or DEFAULT_MODEL
        self.tag_field_name = tag_field_name
        check_vision_model(self.hf_audio_mapper, who=self.name)

    def process_batched(self, samples):
        from data_juicer.media.audio import load_audio

        n = len(next(iter(samples.values()))) if samples else 0
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        col = samples.get(self.video_key)
        for i in range(n):
            paths = (col[i] if col is not None else None) or []
            if not paths:
                metas[i][self.tag_field_name] = []
                continue
            tags = metas[i].get(MetaKeys.video_audio_tags)
            if tags is None:
                raise ValueError(f"{self.name} must run after video_tagging_from_audio_mapper (meta "
                                 f"'{MetaKeys.video_audio_tags}' is missing)")
            res = []
            for path, tag in zip(paths, tags):
                res.append(self._predict(load_audio(path, SAMPLING_RATE, self.name)[0]) if tag == "Speech" else [])
            metas[i][self.tag_field_name] = res
        samples[Fields.meta] = metas
        return samples

    def _predict(self, wave):
        torch = require("torch", who=self.name)
        model, fe = load_vision_model(self.hf_audio_mapper, who=self.name, device=op_device(self),
                                      arch="wav2vec2_age_gender", processor="Wav2Vec2FeatureExtractor")
        with torch.inference_mode():
            x = to_model(fe(wave, sampling_rate=SAMPLING_RATE, return_tensors="pt"), model)["input_values"]
            _, age, gender = model(x)
            age, (female, male, child) = float(age[0, 0]), gender[0].float().tolist()
        return {"Age": [int(age * 100)], "female": [female], "male": [male], "child": [child]}
