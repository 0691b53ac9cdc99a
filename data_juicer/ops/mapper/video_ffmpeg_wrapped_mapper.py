from typing import Dict, List, Optional

from data_juicer.media.files import transform_file_name
from data_juicer.media.video import check_video_path, ffmpeg_filter
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.video_rewrite import rewrite_videos
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("video_ffmpeg_wrapped_mapper")
class VideoFFmpegWrappedMapper(Mapper):
    """Runs one ffmpeg video filter (``filter_name`` with ``filter_kwargs``, e.g. ``scale`` with
    ``{width: 320, height: -2}``) on every video and points the sample at the outputs; without
    ``filter_name`` samples pass unchanged.

    The command is the one ffmpeg-python builds for Data-Juicer: ``ffmpeg -i <in>
    -filter_complex "[0]<filter>=<k>=<v>:...[s0]" -map "[s0]" <global_args> <out>`` (the
    filtered video stream only). Outputs are named ``<stem>__dj_hash_#<content+params>#.<ext>``
    in ``save_dir`` and written under a temporary name first; ffmpeg's error output names the
    failing file in the error ledger (``capture_stderr``/``overwrite_output`` are accepted for
    compatibility: stderr is always captured, outputs always overwritten).
    """

    modality = "video"

    def __init__(self, filter_name: Optional[str] = None, filter_kwargs: Optional[Dict] = None,
                 global_args: Optional[List[str]] = None, capture_stderr: bool = True,
                 overwrite_output: bool = True, save_dir: str = None, **kwargs):
        """
        :param filter_name: the ffmpeg video filter (None: do nothing)
        :param filter_kwargs: the filter's options
        :param global_args: extra ffmpeg arguments
        :param capture_stderr: accepted for compatibility (stderr is always captured for errors)
        :param overwrite_output: accepted for compatibility (outputs are always replaced)
        :param save_dir: folder of the new videos (default: ``__dj__produced_data__`` beside the
            source, or ``$DJ_PRODUCED_DATA_DIR/<op>``)
        """
        super().__init__(**kwargs)
        self.filter_name = filter_name
        self.filter_kwargs = dict(filter_kwargs or {})
        self.global_args = list(global_args or [])
        self.capture_stderr = capture_stderr
        self.overwrite_output = overwrite_output
        self.save_dir = save_dir

    def _apply(self, path):
        check_video_path(path)
        params = dict(filter_name=self.filter_name, filter_kwargs=self.filter_kwargs, global_args=self.global_args)
        out = transform_file_name(path, self.name, params, out_dir=self.save_dir)
        return ffmpeg_filter(path, out, self.filter_name, self.filter_kwargs, self.global_args)

    def process_batched(self, samples):
        if self.filter_name is None:
            return rewrite_videos(self, samples, lambda p: p)
        return rewrite_videos(self, samples, self._apply)
