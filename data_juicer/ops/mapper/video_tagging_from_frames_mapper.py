from pydantic import PositiveInt

from data_juicer.models.tagging import check_ram
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.ram_tagging import tag_rows
from data_juicer.ops.common.vision import FRAME_SAMPLING, check_choice
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys


def video_frames_of(op, samples):
    """``media(i)``: the sampled frames of each video of row ``i`` (None without videos)."""
    col = samples.get(op.video_key)

    def media(i):
        if col is None or not col[i]:
            return None
        from data_juicer.media.video import load_row_video_frames

        frames = load_row_video_frames(op, samples, i, op.frame_sampling_method, op.frame_num)
        return [frames[p] for p in col[i]]

    return media


@OPERATORS.register_module("video_tagging_from_frames_mapper")
class VideoTaggingFromFramesMapper(Mapper):
    """Tags each video from its sampled frames with Recognize Anything (RAM++): the tags of all
    its frames, counted, most frequent first, one list per video in the sample's meta under
    ``tag_field_name``; ``[[]]`` for a sample without videos.

    Frames are the key frames, or ``frame_num`` uniform frames, through the media layer (shared
    with the other frame ops of a fused pass); every frame of a batch is tagged in one call.
    **Model code not bundled** (no registry package carries recognize-anything): the model
    runs through a plug-in of kind ``ram`` (see ``data_juicer/models/tagging.py``).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("pillow", "numpy", "av")
    uses_model = True
    uses = (InterVars.loaded_videos, InterVars.sampled_frames)

    def __init__(
        self,
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
        tag_field_name: str = MetaKeys.video_frame_tags,
        **kwargs,
    ):
        """
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken per video with ``uniform`` sampling
        :param tag_field_name: meta field receiving the tags (``video_frame_tags``)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "9GB")
        super().__init__(**kwargs)
        check_choice(frame_sampling_method, FRAME_SAMPLING, "Frame sampling method", self.name)
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num
        self.tag_field_name = tag_field_name
        self.ram_path = check_ram(who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_ram(who=getattr(cls, "_name", "") or cls.__name__)]

    def process_batched(self, samples):
        return tag_rows(self, samples, video_frames_of(self, samples), self.tag_field_name)
