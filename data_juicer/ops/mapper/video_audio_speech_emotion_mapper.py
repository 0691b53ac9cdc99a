from data_juicer.models.speech import SENSEVOICE, check_sensevoice, emotion
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.speech import speech_rows
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("video_audio_speech_emotion_mapper")
class VideoAudioSpeechEmotionMapper(Mapper):
    """Recognises the emotion of the speech of each video with FunASR's SenseVoiceSmall
    (HumanVBench): per video, SenseVoice's emotion tag (``NEUTRAL``, ``HAPPY``...) in the sample's
    meta under ``speech_Emo`` when ``video_tagging_from_audio_mapper`` tagged its audio ``Speech``
    (which must run first), ``""`` otherwise, ``EMPTY`` for a video without an audio stream; ``[]``
    for a sample without videos.

    The audio (16 kHz, from the media layer) of every speech video of a batch is recognised
    together; the model class comes from the ``funasr`` package (Data-Juicer clones and patches
    the SenseVoice repository). Differs from Data-Juicer: a stereo track is mixed down
    (Data-Juicer takes the first channel).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "funasr", "kaldi-native-fbank", "av", "soundfile", "librosa")
    uses_model = True

    def __init__(self, model_dir_emo="FunAudioLLM/SenseVoiceSmall", speech_Emo: str = "speech_emotion", **kwargs):
        """
        :param model_dir_emo: the SenseVoiceSmall model: a Hugging Face name (found offline) or a local FunASR folder
        :param speech_Emo: meta field receiving the emotions
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "20GB")
        super().__init__(**kwargs)
        self.model_dir_emo = model_dir_emo
        self.speech_Emo = speech_Emo
        check_sensevoice(model_dir_emo or SENSEVOICE, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_sensevoice(params.get("model_dir_emo") or SENSEVOICE, who=getattr(cls, "_name", "") or "")]

    def process_batched(self, samples):
        return speech_rows(self, samples, self.speech_Emo, self.model_dir_emo, emotion, "")
