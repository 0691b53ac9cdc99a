import tarfile
import zipfile

from loguru import logger

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


class _SizeGuard:
    """Applies the per-file and cumulative size limits (0 = no limit) while reading entries."""

    def __init__(self, archive: str, max_file: int, max_total: int):
        self.archive, self.max_file, self.max_total, self.total = archive, max_file, max_total, 0

    def declared_ok(self, name: str, size: int) -> bool | None:
        """True: read it; False: skip it; None: stop reading the archive."""
        if self.max_file and size > self.max_file:
            logger.warning(
                f"Skipping {name} in {self.archive}: declared size {size} bytes exceeds limit of {self.max_file} bytes"
            )
            return False
        if self.max_total and self.total + size > self.max_total:
            logger.warning(
                f"Cumulative extracted size would exceed limit of {self.max_total} bytes "
                f"in {self.archive}. Skipping remaining files."
            )
            return None
        return True

    def actual_ok(self, name: str, data: bytes) -> bool | None:
        if self.max_file and len(data) > self.max_file:
            logger.warning(
                f"Skipping {name} in {self.archive}: actual size {len(data)} bytes exceeds "
                f"limit of {self.max_file} bytes"
            )
            return False
        self.total += len(data)
        if self.max_total and self.total > self.max_total:
            logger.warning(
                f"Cumulative extracted size {self.total} bytes exceeds limit of "
                f"{self.max_total} bytes in {self.archive}. Skipping remaining files."
            )
            return None
        return True


def _open_tar(path: str) -> tarfile.TarFile:
    return tarfile.open(path, "r:*")  # any compression tarfile knows, whatever the suffix says


def _tar_entries(tf: tarfile.TarFile):
    for member in tf:
        if member.isfile() and member.name.endswith(".tex"):
            yield member.name, member.size, lambda m=member: _read_member(tf, m)


def _read_member(tf: tarfile.TarFile, member) -> bytes | None:
    f = tf.extractfile(member)
    return None if f is None else f.read()


def _zip_entries(zf: zipfile.ZipFile):
    for name in zf.namelist():
        if name.endswith(".tex"):
            yield name, zf.getinfo(name).file_size, lambda n=name: zf.read(n)


@OPERATORS.register_module("latex_merge_tex_mapper")
class LatexMergeTexMapper(Mapper):
    """Reads a compressed LaTeX project (``.tar``, ``.tar.gz``/``.tgz`` or ``.zip``, chosen by
    the path's extension) whose path is in ``compressed_file_key`` and puts all its ``.tex``
    files, in archive order and decoded as UTF-8 (bad bytes replaced), joined by ``separator``
    into the text field. Entries above ``max_file_size`` are skipped; reading stops once
    ``max_total_size`` would be exceeded. An unsupported or unreadable archive gives an empty
    text (a warning is logged). A missing ``compressed_file_key`` field is an error.

    :param compressed_file_key: field holding the archive's path
    :param separator: string put between the contents of the ``.tex`` files
    :param max_file_size: largest uncompressed ``.tex`` entry read, in bytes (0 = no limit)
    :param max_total_size: most uncompressed ``.tex`` bytes read per archive (0 = no limit)
    """

    def __init__(
        self,
        compressed_file_key: str = "compressed_file",
        separator: str = "\n\n",
        max_file_size: int = 50 * 1024 * 1024,
        max_total_size: int = 100 * 1024 * 1024,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if (max_file_size or 0) < 0 or (max_total_size or 0) < 0:
            raise ValueError(f"{self.name}: max_file_size and max_total_size must be >= 0 (0 disables the limit)")
        self.compressed_file_key = compressed_file_key
        self.separator = separator
        self.max_file_size = max_file_size or 0
        self.max_total_size = max_total_size or 0

    def _read(self, path: str) -> list[str]:
        low = path.lower()
        if low.endswith(".zip"):
            opener, entries = zipfile.ZipFile, _zip_entries
        elif low.endswith((".tar.gz", ".tgz", ".tar")):
            opener, entries = _open_tar, _tar_entries
        else:
            logger.warning(f"Unsupported archive format: {path}. Supported formats: .tar, .tar.gz, .tgz, .zip")
            return []
        out: list[str] = []
        guard = _SizeGuard(path, self.max_file_size, self.max_total_size)
        try:
            with opener(path) as arc:
                for name, size, read in entries(arc):
                    ok = guard.declared_ok(name, size)
                    if ok is None:
                        break
                    if not ok:
                        continue
                    data = read()
                    if data is None:
                        continue
                    ok = guard.actual_ok(name, data)
                    if ok is None:
                        break
                    if ok:
                        out.append(data.decode("utf-8", errors="replace"))
        except Exception as e:  # noqa: BLE001 -- any unreadable archive gives an empty text
            logger.warning(f"Failed to read archive {path}: {e!r}")
            return []
        return out

    def process_batched(self, samples):
        if self.compressed_file_key not in samples:
            raise ValueError(
                f"{self.name}: field '{self.compressed_file_key}' (compressed_file_key) is not in the "
                f"samples; available fields: {list(samples)}"
            )
        sep = self.separator
        samples[self.text_key] = [sep.join(self._read(p)) for p in samples[self.compressed_file_key]]
        return samples
