"""The media layer: images, audio and video opened once per sample, special tokens, output files.

It sits below ``ops/`` (it imports only ``data_juicer.utils``). Ops use it to

- load the media of a row of a batch, sharing what a fused pass already loaded through the
  row's ``__dj__context__`` dict (``load_row_images``, ``load_row_audios``; ``video.py`` for
  videos): each file is decoded once per sample, however many ops of the pass read it;
- split a text into chunks and pair each chunk with its media (``tokens``);
- name the files a mapper writes from their content and the op's parameters, so a rerun gives
  the same paths (``files.transform_file_name``), and write them atomically.

A missing file is a ``FileNotFoundError`` and an unreadable one a ``MediaError``; both name
the path, so the executor's error ledger says which file of which sample failed.
See docs/media.md.
"""

from data_juicer.media.errors import MediaError

__all__ = ["MediaError"]
