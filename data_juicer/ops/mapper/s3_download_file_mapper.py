import os

from data_juicer.ops.base import Mapper
from data_juicer.ops.common import file_transfer as ft
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("s3_download_file_mapper")
class S3DownloadFileMapper(Mapper):
    """Downloads the S3 objects (``s3://bucket/key``) in ``download_field`` (one URL or a list per
    sample) into ``save_dir`` and/or loads their bytes into ``save_field``, with boto3.

    - With ``save_dir``, an object is saved as ``save_dir/<last part of its key>`` and its URL is
      replaced by that path in ``download_field``. With ``resume_download``, a file already there
      is not downloaded again.
    - With ``save_field``, the bytes of each object go into that field (shaped like
      ``download_field``). With neither, the bytes go to ``image_bytes_key`` (``image_bytes``).
    - Local paths are kept as they are (their bytes are read for ``save_field``); http(s) URLs
      are refused (use ``download_file_mapper``).
    - Credentials come from ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``/
      ``AWS_REGION`` when set, else from the parameters; ``endpoint_url`` selects an S3-compatible
      service (MinIO...). Up to ``max_concurrent`` objects of a batch download at once.

    An object that cannot be fetched fails its sample with an error naming the URL and the S3 error."""

    modality = "general"
    requires = ("boto3",)

    def __init__(self, download_field: str | None = None, save_dir: str | None = None,
                 save_field: str | None = None, resume_download: bool = False, timeout: int = 30,
                 max_concurrent: int = 10, aws_access_key_id: str | None = None,
                 aws_secret_access_key: str | None = None, aws_session_token: str | None = None,
                 aws_region: str | None = None, endpoint_url: str | None = None, **kwargs):
        """
        :param download_field: field holding the S3 URL (or list of URLs) of each sample
        :param save_dir: folder to save the files in (created if missing); None: do not save
        :param save_field: field to put the downloaded bytes in (default ``image_bytes`` when
            ``save_dir`` is not given either)
        :param resume_download: keep files already in ``save_dir`` and contents already in
            ``save_field``; fetch only the missing ones
        :param timeout: seconds to wait for S3 to connect or answer a read
        :param max_concurrent: most objects downloading at the same time
        :param aws_access_key_id: access key id (``AWS_ACCESS_KEY_ID`` takes precedence)
        :param aws_secret_access_key: secret access key (``AWS_SECRET_ACCESS_KEY`` takes precedence)
        :param aws_session_token: session token, for temporary credentials (optional)
        :param aws_region: region of the bucket (``AWS_REGION`` takes precedence)
        :param endpoint_url: URL of an S3-compatible service instead of AWS
        """
        super().__init__(**kwargs)
        ft.check_concurrency(self.name, max_concurrent, timeout)
        if not download_field:
            raise ValueError(f"{self.name}: download_field must name the field holding the S3 URLs")
        self.download_field = download_field
        self.save_dir = save_dir
        self.save_field = save_field or (None if save_dir else self.image_bytes_key)
        self.resume_download = resume_download
        self.timeout = timeout
        self.max_concurrent = max_concurrent
        self.endpoint_url = endpoint_url
        # resolved now, as Data-Juicer does; the client itself is made in each worker process
        self.s3_config = ft.s3_config(aws_access_key_id, aws_secret_access_key, aws_session_token, aws_region,
                                      endpoint_url)
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)

    def _client(self):
        if self.s3_config is None:
            raise ValueError("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the "
                             "aws_access_key_id and aws_secret_access_key parameters")
        return ft.s3_client(self.s3_config, self.name, self.timeout)

    def _fetch(self, job):
        """(path for ``download_field``, bytes or None) of one S3 URL/local path."""
        url, want = job
        if url is None:
            return None, None
        if ft.is_http(url):
            raise ValueError("http(s) URLs are not downloaded here (use download_file_mapper); "
                             "this op takes s3:// URLs and local paths")
        if not url.startswith("s3://"):
            return url, ft.read_bytes(url) if want else None
        bucket, key = ft.parse_s3_url(url)
        path = ft.save_path_for(self.save_dir, key, self.name, url) if self.save_dir else None
        if path is not None and self.resume_download and os.path.exists(path):
            return path, ft.read_bytes(path) if want else None
        if path is None and not want:
            return url, None
        from botocore.exceptions import ClientError

        client = self._client()
        try:
            if path is None:
                return url, client.get_object(Bucket=bucket, Key=key)["Body"].read()
            client.download_file(bucket, key, path)  # boto3 writes a temporary file, then renames it
        except ClientError as e:  # say which S3 error it was (NoSuchKey, 403...)
            raise ft.s3_error(e) from None
        return path, ft.read_bytes(path) if want else None

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
