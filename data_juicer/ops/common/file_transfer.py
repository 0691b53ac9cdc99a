"""Moving the files a field names: nested path lists, concurrent transfers, S3 clients.

The download/upload mappers read a field whose value per sample is a path/URL or a list of them.
Here those are flattened to one list per batch, transferred on a thread pool of
``max_concurrent`` workers, and put back in the same shape. Failed transfers are collected and
raised as one ``FileTransferError`` naming each file and why, so the runner can move just the
failing samples to the error ledger.
"""

import os
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

REMOTE_SCHEMES = ("http://", "https://", "s3://", "gs://", "hdfs://")


class FileTransferError(RuntimeError):
    """One or more files of a batch could not be downloaded/uploaded."""


def is_remote(path: str) -> bool:
    """Whether ``path`` is a URL (http, https, s3, gs, hdfs; scheme case-insensitive)."""
    return path.lower().startswith(REMOTE_SCHEMES)


def is_http(path: str) -> bool:
    return path.lower().startswith(("http://", "https://"))


def flatten(nested: Sequence) -> tuple[list, list[tuple[int, int]]]:
    """Items of a column whose values are single items or lists of them, and where each came from
    (``(row, -1)`` for a single item, ``(row, position)`` inside a list)."""
    flat, where = [], []
    for i, value in enumerate(nested):
        if isinstance(value, (list, tuple)):
            flat.extend(value)
            where.extend((i, j) for j in range(len(value)))
        else:
            flat.append(value)
            where.append((i, -1))
    return flat, where


def rebuild(nested: Sequence, where: list[tuple[int, int]], flat_values: Sequence) -> list:
    """A column shaped like ``nested`` holding ``flat_values`` (lists are new lists)."""
    out = [list(value) if isinstance(value, (list, tuple)) else value for value in nested]
    for (i, j), v in zip(where, flat_values):
        if j < 0:
            out[i] = v
        else:
            out[i][j] = v
    return out


def run_concurrently(fn: Callable[[Any], Any], items: Sequence, max_concurrent: int) -> list[tuple[Any, Any]]:
    """``fn`` over ``items`` on up to ``max_concurrent`` threads: ``(result, None)`` or ``(None, exception)``
    per item, in order."""

    def call(item):
        try:
            return fn(item), None
        except Exception as e:  # noqa: BLE001 - collected, reported together by raise_failures
            return None, e

    if len(items) <= 1 or max_concurrent <= 1:
        return [call(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(max_concurrent, len(items))) as pool:
        return list(pool.map(call, items))


def raise_failures(who: str, action: str, items: Sequence, results: Sequence[tuple[Any, Any]]) -> None:
    """Raise one FileTransferError listing every failed item of ``results``, if any."""
    failed = [(item, err) for item, (_, err) in zip(items, results) if err is not None]
    if not failed:
        return
    if len(failed) == 1 and len(items) == 1:
        item, err = failed[0]
        raise FileTransferError(f"{who}: could not {action} {item}: {err}") from err
    details = "; ".join(f"{item}: {err}" for item, err in failed[:20])
    more = f"; and {len(failed) - 20} more" if len(failed) > 20 else ""
    raise FileTransferError(f"{who}: could not {action} {len(failed)} of {len(items)} files: {details}{more}")


def check_concurrency(who: str, max_concurrent: int, timeout: int | None = None) -> None:
    if max_concurrent < 1:
        raise ValueError(f"{who}: max_concurrent must be at least 1, got {max_concurrent}")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"{who}: timeout must be a positive number of seconds, got {timeout}")


def content_slots(who: str, nested: Sequence, samples: dict, save_field: str | None,
                  resume: bool) -> list | None:
    """Per-item contents already there (None: fetch it) for ``save_field``, shaped like ``nested``.

    Without ``resume`` an existing ``save_field`` column is an error; with it, contents already
    present are kept (a list whose length no longer matches its paths is fetched again).
    """
    if not save_field:
        return None
    if save_field in samples and not resume:
        raise ValueError(f"{who}: field '{save_field}' is already in the samples; set resume_download=True to "
                         "keep the contents already there and fetch only the missing ones, or choose another "
                         "save_field")
    old = samples.get(save_field) if resume else None
    slots = []
    for i, value in enumerate(nested):
        have = old[i] if old is not None else None
        if isinstance(value, (list, tuple)):
            ok = isinstance(have, (list, tuple)) and have and len(have) == len(value)
            slots.append(list(have) if ok else [None] * len(value))
        else:
            slots.append(have)
    return slots


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def save_path_for(save_dir: str, url_path: str, who: str, url: str) -> str:
    name = os.path.basename(url_path)
    if not name:
        raise ValueError(f"{who}: {url} names no file (its path ends with '/'), so it has no name to save under")
    return os.path.join(save_dir, name)


def _atomic_write(path: str, write: Callable[[Any], None]) -> None:
    # write beside the target and rename, so an interrupted transfer never leaves a file that looks complete
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def http_download(url: str, timeout: float, save_path: str | None, want_content: bool) -> bytes | None:
    """GET ``url`` (raising on HTTP errors) into ``save_path`` and/or memory; the content if wanted."""
    req = urllib.request.Request(url, headers={"User-Agent": "data-juicer"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if save_path is None:
                return resp.read()
            chunks = [] if want_content else None

            def write(f):
                while block := resp.read(1 << 20):
                    f.write(block)
                    if chunks is not None:
                        chunks.append(block)

            _atomic_write(save_path, write)
            return b"".join(chunks) if chunks is not None else None
    except urllib.error.HTTPError as e:
        raise OSError(f"HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise OSError(f"cannot reach the server ({e.reason})") from None
    except TimeoutError:
        raise OSError(f"no answer within {timeout} s") from None


# -- S3 ------------------------------------------------------------------------------------

def parse_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/key/parts`` -> ``("bucket", "key/parts")``."""
    if not url.startswith("s3://"):
        raise ValueError(f"not an S3 URL: {url}")
    bucket, _, key = url[5:].partition("/")
    return bucket, key


def s3_config(aws_access_key_id: str | None, aws_secret_access_key: str | None, aws_session_token: str | None,
              aws_region: str | None, endpoint_url: str | None) -> dict | None:
    """boto3 client arguments, the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
    ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``) taking precedence over the
    parameters, as Data-Juicer does; None without a key id and secret."""
    env = os.environ
    key_id = env.get("AWS_ACCESS_KEY_ID") or aws_access_key_id
    secret = env.get("AWS_SECRET_ACCESS_KEY") or aws_secret_access_key
    token = env.get("AWS_SESSION_TOKEN") or aws_session_token
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or aws_region
    if not (key_id and secret):
        return None
    config = {"aws_access_key_id": key_id, "aws_secret_access_key": secret}
    if token:
        config["aws_session_token"] = token
    if region:
        config["region_name"] = region
    if endpoint_url:
        config["endpoint_url"] = endpoint_url
    return config


_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def s3_client(config: dict, who: str, timeout: float | None = None):
    """A boto3 S3 client for ``config``, made once per process (clients are thread-safe)."""
    key = (tuple(sorted(config.items())), timeout)
    client = _CLIENTS.get(key)
    if client is None:
        from data_juicer.utils.lazy import require

        boto3 = require("boto3", who=who)
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                extra = {}
                if timeout is not None:
                    from botocore.config import Config

                    extra["config"] = Config(connect_timeout=timeout, read_timeout=timeout)
                client = _CLIENTS[key] = boto3.client("s3", **config, **extra)
    return client


def s3_error(e: Exception) -> Exception:
    """A short message for a botocore error (code and text), or ``e`` itself."""
    resp = getattr(e, "response", None)
    if isinstance(resp, dict) and "Error" in resp:
        err = resp["Error"]
        return OSError(f"S3 {err.get('Code', '?')}: {err.get('Message') or e}")
    return e
