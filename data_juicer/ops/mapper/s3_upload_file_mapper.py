import os

from loguru import logger

from data_juicer.ops.base import Mapper
from data_juicer.ops.common import file_transfer as ft
from data_juicer.ops.registry import OPERATORS


def _normalize_prefix(prefix: str) -> str:
    # "a/b" -> "a/b/"; "" stays "" (Data-Juicer's rule)
    return prefix + "/" if prefix and not prefix.endswith("/") else prefix or ""


@OPERATORS.register_module("s3_upload_file_mapper")
class S3UploadFileMapper(Mapper):
    """Uploads the local files named in ``upload_field`` (one path or a list per sample) to
    ``s3://<s3_bucket>/<s3_prefix><file name>`` with boto3, and replaces each path by its S3 URL.

    Values that already are ``s3://`` URLs are left as they are. With ``skip_existing``, an object
    already in the bucket under that key is not uploaded again (its URL is still used). With
    ``remove_local``, the local file is deleted once it is in S3. Credentials come from
    ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``/``AWS_REGION`` when set,
    else from the parameters; ``endpoint_url`` selects an S3-compatible service (MinIO...).
    Up to ``max_concurrent`` files of a batch upload at once.

    A file that cannot be uploaded (missing, S3 error) fails its sample with an error naming the
    file and the reason."""

    modality = "general"
    requires = ("boto3",)

    def __init__(self, upload_field: str | None = None, s3_bucket: str | None = None, s3_prefix: str = "",
                 aws_access_key_id: str | None = None, aws_secret_access_key: str | None = None,
                 aws_session_token: str | None = None, aws_region: str | None = None,
                 endpoint_url: str | None = None, remove_local: bool = False, skip_existing: bool = True,
                 max_concurrent: int = 10, **kwargs):
        """
        :param upload_field: field holding the local path (or list of paths) of each sample
        :param s3_bucket: bucket to upload to (required)
        :param s3_prefix: key prefix ("folder") in the bucket, e.g. ``videos/``; a missing final
            ``/`` is added
        :param aws_access_key_id: access key id (``AWS_ACCESS_KEY_ID`` takes precedence)
        :param aws_secret_access_key: secret access key (``AWS_SECRET_ACCESS_KEY`` takes precedence)
        :param aws_session_token: session token, for temporary credentials (optional)
        :param aws_region: region of the bucket (``AWS_REGION`` takes precedence)
        :param endpoint_url: URL of an S3-compatible service instead of AWS
        :param remove_local: delete each local file once it is in S3
        :param skip_existing: do not upload a file whose key is already in the bucket
        :param max_concurrent: most files uploading at the same time
        """
        super().__init__(**kwargs)
        ft.check_concurrency(self.name, max_concurrent)
        if not upload_field:
            raise ValueError(f"{self.name}: upload_field must name the field holding the local paths")
        if not s3_bucket:
            raise ValueError(f"{self.name}: s3_bucket must be specified")
        self.upload_field = upload_field
        self.s3_bucket = s3_bucket
        self.s3_prefix = _normalize_prefix(s3_prefix)
        self.endpoint_url = endpoint_url
        self.remove_local = remove_local
        self.skip_existing = skip_existing
        self.max_concurrent = max_concurrent
        self.s3_config = ft.s3_config(aws_access_key_id, aws_secret_access_key, aws_session_token, aws_region,
                                      endpoint_url)
        if self.s3_config is None:
            raise ValueError(f"{self.name}: AWS credentials are needed: set AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY, or the aws_access_key_id and aws_secret_access_key parameters")

    def _exists(self, client, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            client.head_object(Bucket=self.s3_bucket, Key=key)
            return True
        except ClientError:
            return False

    def _upload(self, path):
        """The S3 URL of one local file (uploaded unless already there)."""
        if path is None or path.startswith("s3://"):
            return path
        if not os.path.exists(path):
            raise FileNotFoundError(f"local file not found: {path}")
        from botocore.exceptions import ClientError

        key = self.s3_prefix + os.path.basename(path)
        client = ft.s3_client(self.s3_config, self.name)
        if not (self.skip_existing and self._exists(client, key)):
            try:
                client.upload_file(path, self.s3_bucket, key)
            except ClientError as e:
                raise ft.s3_error(e) from None
        if self.remove_local:
            try:
                os.remove(path)
            except OSError as e:  # the upload itself succeeded (as Data-Juicer: a warning only)
                logger.warning(f"{self.name}: could not remove {path} after uploading it: {e}")
        return f"s3://{self.s3_bucket}/{key}"

    def process_batched(self, samples):
        nested = samples.get(self.upload_field)
        if not nested:
            return samples
        paths, where = ft.flatten(nested)
        results = ft.run_concurrently(self._upload, paths, self.max_concurrent)
        ft.raise_failures(self.name, "upload", paths, results)
        samples[self.upload_field] = ft.rebuild(nested, where, [url for url, _ in results])
        return samples
