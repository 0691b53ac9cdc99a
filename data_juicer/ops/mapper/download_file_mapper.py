import os
import urllib.parse

from data_juicer.ops.base import Mapper
from data_juicer.ops.common import file_transfer as ft
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("download_file_mapper")
class DownloadFileMapper(Mapper):
    """Downloads the http(s) URLs in ``download_field`` (one URL or a list per sample) into
    ``save_dir`` and/or loads their bytes into ``save_field``.

    - With ``save_dir``, a URL is saved as ``save_dir/<last part of its path>`` and replaced by
      that path in ``download_field``; a file already there is not downloaded again.
    - With ``save_field``, the bytes of each file go into that field (shaped like
      ``download_field``). With neither, the bytes go to ``image_bytes_key`` (``image_bytes``).
    - Local paths are kept as they are (their bytes are read for ``save_field``).
    - Up to ``max_concurrent`` files of a batch download at once.

    A file that cannot be fetched (HTTP error, server unreachable, timeout, missing local file)
    fails its sample with an error naming the URL and the reason; the other samples go on."""

    modality = "general"

    def __init__(self, download_field: str | None = None, save_dir: str | None = None, save_field: str | None = None,
                 resume_download: bool = False, timeout: int = 30, max_concurrent: int = 10, **kwargs):
        """
        :param download_field: field holding the URL (or list of URLs) of each sample
        :param save_dir: folder to save the files in (created if missing); None: do not save
        :param save_field: field to put the downloaded bytes in (default ``image_bytes`` when
            ``save_dir`` is not given either)
        :param resume_download: allow ``save_field`` to exist already: contents already there are kept
            and only the missing ones are fetched
        :param timeout: seconds to wait for a server (to connect and for each read)
        :param max_concurrent: most files downloading at the same time
        """
        super().__init__(**kwargs)
        ft.check_concurrency(self.name, max_concurrent, timeout)
        if not download_field:
            raise ValueError(f"{self.name}: download_field must name the field holding the URLs")
        self.download_field = download_field
        self.save_dir = save_dir
        self.save_field = save_field or (None if save_dir else self.image_bytes_key)
        self.resume_download = resume_download
        self.timeout = timeout
        self.max_concurrent = max_concurrent
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)

    def _fetch(self, job):
        """(path for ``download_field``, bytes or None) of one URL/path."""
        url, want = job
        if url is None:
            return None, None
        if not ft.is_remote(url):
            return url, ft.read_bytes(url) if want else None
        if not ft.is_http(url):
            raise ValueError("only http(s) URLs can be downloaded here (use s3_download_file_mapper for s3://)")
        if not self.save_dir:
            return url, ft.http_download(url, self.timeout, None, True) if want else None
        path = ft.save_path_for(self.save_dir, urllib.parse.urlparse(url).path, self.name, url)
        if os.path.exists(path):
            return path, ft.read_bytes(path) if want else None
        return path, ft.http_download(url, self.timeout, path, want)

    def process_batched(self, samples):
        nested = samples.get(self.download_field)
        if not nested:
            return samples
        slots = ft.content_slots(self.name, nested, samples, self.save_field, self.resume_download)
        urls, where = ft.flatten(nested)
        wants = [not c for c in ft.flatten(slots)[0]] if slots is not None else [False] * len(urls)
        results = ft.run_concurrently(self._fetch, list(zip(urls, wants)), self.max_concurrent)
        ft.raise_failures(self.name, "download", urls, results)
        if self.save_dir:
            samples[self.download_field] = ft.rebuild(nested, where, [res[0] for res, _ in results])
        if slots is not None:
            kept = ft.flatten(slots)[0]
            samples[self.save_field] = ft.rebuild(
                nested, where, [res[1] if w else old for (res, _), w, old in zip(results, wants, kept)])
        return samples
