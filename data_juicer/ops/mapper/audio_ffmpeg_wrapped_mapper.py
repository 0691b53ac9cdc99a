import os
import subprocess
from typing import Dict, List, Optional

from data_juicer.media.files import atomic_write, transform_file_name
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


def _escape(value, chars: str) -> str:
    text = str(value).replace("\\", "\\\\")
    for c in chars:
        text = text.replace(c, "\\" + c)
    return text


def filter_spec(name: str, kwargs: Optional[dict]) -> str:
    """``name=k1=v1:k2=v2`` with FFmpeg's filter-graph escaping (as ffmpeg-python writes it)."""
    args = ":".join(f"{_escape(k, chr(92) + chr(39) + '=:')}={_escape(v, chr(92) + chr(39) + '=:')}"
                    for k, v in sorted((kwargs or {}).items()))
    return f"{_escape(name, chr(92) + chr(39) + '=:')}={args}" if args else _escape(name, "\\'=:")


def ffmpeg_filter_command(src: str, dst: str, name: str, kwargs: Optional[dict], global_args: Optional[list],
                          overwrite: bool) -> list[str]:
    """The command line ffmpeg-python builds for ``input(src).filter(name, **kwargs).output(dst)``."""
    cmd = ["ffmpeg", "-i", src, "-filter_complex", f"[0]{filter_spec(name, kwargs)}[s0]", "-map", "[s0]", dst]
    cmd += [str(a) for a in (global_args or [])]
    if overwrite:
        cmd.append("-y")
    return cmd


@OPERATORS.register_module("audio_ffmpeg_wrapped_mapper")
class AudioFFmpegWrappedMapper(Mapper):
    """Runs one FFmpeg audio filter (``filter_name`` with ``filter_kwargs``, plus FFmpeg
    ``global_args``) on each audio file and points the sample at the output, written to
    ``save_dir`` (else ``$DJ_PRODUCED_DATA_DIR/audio_ffmpeg_wrapped_mapper``, else
    ``__dj__produced_data__`` beside the source) with the source's extension. The command is the
    one ffmpeg-python builds in Data-Juicer (``ffmpeg -i SRC -filter_complex [0]F[s0] -map [s0]
    DST [global args] [-y]``), run directly; a failing run is an error naming the file with
    FFmpeg's message (``capture_stderr``). Without ``filter_name`` the sample is unchanged.
    Output names derive from the source's content and the parameters (Data-Juicer's carry the
    process id and the time), so a rerun reuses them; ``filter_kwargs`` may be omitted
    (Data-Juicer fails without it). ``__dj__source_file__`` keeps the original paths.
    """

    modality = "audio"
    requires = ()

    def __init__(self, filter_name: Optional[str] = None, filter_kwargs: Optional[Dict] = None,
                 global_args: Optional[List[str]] = None, capture_stderr: bool = True,
                 overwrite_output: bool = True, save_dir: Optional[str] = None, **kwargs):
        """
        :param filter_name: FFmpeg audio filter, e.g. ``atempo`` or ``loudnorm``; None changes nothing
        :param filter_kwargs: the filter's options, e.g. ``{"tempo": 1.5}``
        :param global_args: extra FFmpeg command-line arguments, e.g. ``["-ar", "16000"]``
        :param capture_stderr: keep FFmpeg's messages to report a failure
        :param overwrite_output: let FFmpeg overwrite an existing output file
        :param save_dir: folder the new audios are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        super().__init__(**kwargs)
        self.filter_name, self.filter_kwargs, self.global_args = filter_name, filter_kwargs, global_args
        self.capture_stderr, self.overwrite_output, self.save_dir = capture_stderr, overwrite_output, save_dir
        self.params = {"filter_name": filter_name, "filter_kwargs": filter_kwargs, "global_args": global_args,
                       "capture_stderr": capture_stderr, "overwrite_output": overwrite_output}

    def run_filter(self, src: str) -> str:
        if not os.path.isfile(src):
            raise FileNotFoundError(f"{self.name}: audio '{src}' does not exist; fix the path or remove it")
        out = transform_file_name(src, self.name, self.params, out_dir=self.save_dir)
        if os.path.exists(out):
            return out
        with atomic_write(out) as tmp:
            cmd = ffmpeg_filter_command(src, tmp, self.filter_name, self.filter_kwargs, self.global_args, True)
            res = subprocess.run(["ffmpeg", "-nostdin", *cmd[1:]], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE if self.capture_stderr else None)
            if res.returncode != 0:
                tail = (res.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-3:]
                raise RuntimeError(f"{self.name}: ffmpeg filter '{self.filter_name}' failed on '{src}' "
                                   f"(exit {res.returncode}): {' | '.join(tail)}")
        return out

    def process_batched(self, samples):
        if self.audio_key not in samples:  # no media column: nothing to rewrite
            return samples
        n = len(samples[self.audio_key])
        sources = [None] * n
        for i in range(n):
            paths = samples[self.audio_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths or self.filter_name is None:
                continue
            done = {}
            for p in paths:
                if p not in done:
                    done[p] = self.run_filter(p)
            samples[self.audio_key][i] = [done[p] for p in paths]
        samples[Fields.source_file] = sources
        return samples
