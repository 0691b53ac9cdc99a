from data_juicer.models.speech import SENSEVOICE, check_sensevoice, language_and_text
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.speech import speech_rows
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("video_audio_ASR_mapper")
class VideoAudioASRMapper(Mapper):
    """Transcribes the speech of each video with FunASR's SenseVoiceSmall (HumanVBench): per
    video, ``{'language': ..., 'asr': text}`` in the sample's meta under ``speech_ASR`` when
    ``video_tagging_from_audio_mapper`` tagged its audio ``Speech`` (which must run first),
    ``{'language': '', 'asr': ''}`` otherwise, ``EMPTY`` for a video without an audio stream;
    ``[]`` for a sample without videos.

    The audio (16 kHz, from the media layer) of every speech video of a batch is recognised
    together (language ``auto``, no inverse text normalisation, as Data-Juicer runs it). The
    model class comes from the ``funasr`` package (Data-Juicer clones and patches the SenseVoice
    repository). Differs from Data-Juicer: a stereo track is mixed down (Data-Juicer takes the
    first channel).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "funasr", "kaldi-native-fbank", "av", "soundfile", "librosa")
    uses_model = True

    def __init__(self, model_dir_ASR="FunAudioLLM/SenseVoiceSmall", speech_ASR: str = MetaKeys.speech_ASR,
                 **kwargs):
        """
        :param model_dir_ASR: the SenseVoiceSmall model: a Hugging Face name (found offline) or a local FunASR folder
        :param speech_ASR: meta field receiving the transcripts
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "20GB")
        super().__init__(**kwargs)
        self.model_dir_ASR = model_dir_ASR
        self.speech_ASR = speech_ASR
        check_sensevoice(model_dir_ASR or SENSEVOICE, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_sensevoice(params.get("model_dir_ASR") or SENSEVOICE, who=getattr(cls, "_name", "") or "")]

    def process_batched(self, samples):
        return speech_rows(self, samples, self.speech_ASR, self.model_dir_ASR, language_and_text,
                           lambda: {"language": "", "asr": ""})
