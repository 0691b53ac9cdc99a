from typing import List

from pydantic import PositiveInt

from data_juicer.models.tagging import check_ram
from data_juicer.ops.base import Filter
from data_juicer.ops.common.ram_tagging import tag_rows
from data_juicer.ops.common.vision import ANY_OR_ALL, FRAME_SAMPLING, check_choice
from data_juicer.ops.mapper.video_tagging_from_frames_mapper import video_frames_of
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, MetaKeys


@OPERATORS.register_module("video_tagging_from_frames_filter")
class VideoTaggingFromFramesFilter(Filter):
    """Keeps samples whose videos' frame tags (Recognize Anything, as
    ``video_tagging_from_frames_mapper`` makes them, in meta ``tag_field_name``) contain ``any``
    or ``all`` of ``tags`` (case-insensitive); ``any_or_all`` says whether any or all videos
    must. As Data-Juicer: a sample without videos is tagged ``[[]]`` and so kept only when
    ``contain`` is ``all`` and ``tags`` is empty.

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
        tags: List[str] = ["people"],
        contain: str = "any",
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
        tag_field_name: str = MetaKeys.video_frame_tags,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param tags: the tags to look for (RAM's English tag list)
        :param contain: a video passes when it has ``any`` of the tags, or ``all`` of them
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken per video with ``uniform`` sampling
        :param tag_field_name: meta field holding (or receiving) the frame tags
        :param any_or_all: keep a sample when ``any`` of its videos passes, or only when ``all`` do
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "9GB")
        super().__init__(**kwargs)
        if contain not in ("any", "all"):
            raise ValueError(f"{self.name}: the containing type [{contain}] is not supported. "
                             "Can only be one of ['any', 'all'].")
        check_choice(frame_sampling_method, FRAME_SAMPLING, "Frame sampling method", self.name)
        check_choice(any_or_all, ANY_OR_ALL, "Keep strategy", self.name)
        self.tags = {t.lower() for t in tags}
        self.contain_any = contain == "any"
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num
        self.tag_field_name = tag_field_name
        self.any = any_or_all == "any"
        self.ram_path = check_ram(who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_ram(who=getattr(cls, "_name", "") or cls.__name__)]

    def compute_stats_batched(self, samples, context=False):
        return tag_rows(self, samples, video_frames_of(self, samples), self.tag_field_name)

    def _keep(self, video_tags) -> bool:
        if len(video_tags) == 0:
            return True
        flags = []
        for words in video_tags:
            words = {w.lower() for w in words}
            flags.append(bool(self.tags & words) if self.contain_any else self.tags.issubset(words))
        if getattr(self, "reversed_range", False):
            flags = [not f for f in flags]
        return any(flags) if self.any else all(flags)

    def process_batched(self, samples):
        return [self._keep(m[self.tag_field_name]) for m in samples[Fields.meta]]
