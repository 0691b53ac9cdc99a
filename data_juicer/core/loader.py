"""Loading datasets into the HF backend: local files, folders and weighted mixes.

Formats: jsonl/json, parquet, csv, tsv, and text-like files (one file = one sample), each also
``.gz``/``.zst``/``.bz2``/``.xz``-compressed. Rows whose text is null are moved to the error
ledger, not silently dropped; a malformed JSON line is reported with its file and line number.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from data_juicer.utils.constant import Fields

COMPRESSIONS = (".gz", ".zst", ".bz2", ".xz")
SMALL_BYTES = 16 << 20  # JSONL up to this size is read into memory directly
# larger JSONL is streamed into an Arrow file in blocks of whole lines of about this many bytes, each parsed
# on its own (``pyarrow.json.read_json``, one thread) and written as one record batch, so the process holds
# one block and its table at a time. pyarrow's streaming reader (``open_json``) reads up to 32 blocks ahead
# on its I/O threads, and its 1 MB record batches had to be copied into larger ones (a 2M-row file of 1 MB
# batches has ~4,400 chunks, each with its own arrays in every pass and in the driver): the two left ~60 MB
# more of Arrow's allocator resident while the file was read (alone, 107 MB of JSONL: 107-123 MB anonymous
# peak against 58-64 here). Fewer, larger chunks: the same rows and values.
STREAM_BLOCK_BYTES = 4 << 20
# every block is given the schema of the first SCHEMA_SAMPLE_BYTES of rows
SCHEMA_SAMPLE_BYTES = 8 << 20
JSON_SUFFIXES = (".jsonl", ".json")
TEXT_SUFFIXES = (
    ".txt", ".md", ".tex", ".asm", ".bat", ".cmd", ".c", ".h", ".cs", ".cpp", ".hpp", ".c++", ".h++", ".cc",
    ".hh", ".cmake", ".css", ".dockerfile", ".f90", ".f", ".f03", ".f08", ".f77", ".f95", ".for", ".fpp", ".go",
    ".hs", ".html", ".java", ".js", ".jl", ".lua", ".markdown", ".php", ".pl", ".pm", ".pod", ".perl", ".ps1",
    ".py", ".rb", ".rs", ".sql", ".scala", ".sh", ".bash", ".command", ".zsh", ".ts", ".tsx", ".tex", ".vb",
    ".xml", ".yaml", ".yml",
)


class DataLoadError(ValueError):
    """The data cannot be read as given; the message says which file and what to do."""


@dataclass
class SourceSpec:
    path: str
    weight: float = 1.0


@dataclass
class LoadResult:
    dataset: object  # datasets.Dataset
    rejected: list[dict] = field(default_factory=list)  # ledger records for rows not loaded


def parse_dataset_path(dataset_path: str) -> list[SourceSpec]:
    """``"a.jsonl"`` or the weighted-mix form ``"0.5 a.jsonl 1.0 dir/"`` (weights default to 1.0)."""
    tokens = shlex.split(dataset_path or "")
    specs: list[SourceSpec] = []
    weight: Optional[float] = None
    for tok in tokens:
        try:
            weight = max(float(tok), 0.0)
            continue
        except ValueError:
            pass
        specs.append(SourceSpec(tok, 1.0 if weight is None else weight))
        weight = None
    return specs


def specs_from_dataset_config(dataset_cfg: dict) -> tuple[list[SourceSpec], Optional[int]]:
    specs = []
    for i, c in enumerate(dataset_cfg.get("configs") or []):
        kind = c.get("type", "local")
        if kind != "local":
            raise DataLoadError(
                f"dataset.configs[{i}]: type '{kind}' needs network access, which this executor does not use; "
                f"download the data and point a 'local' config at it")
        if "path" not in c:
            raise DataLoadError(f"dataset.configs[{i}]: a local config needs 'path'")
        specs.append(SourceSpec(c["path"], float(c.get("weight", 1.0))))
    return specs, dataset_cfg.get("max_sample_num")


def format_of(path: str) -> Optional[str]:
    p = path.lower()
    for comp in COMPRESSIONS:
        if p.endswith(comp):
            p = p[: -len(comp)]
            break
    ext = os.path.splitext(p)[1]
    if ext in JSON_SUFFIXES:
        return "json"
    if ext == ".parquet":
        return "parquet"
    if ext == ".csv":
        return "csv"
    if ext == ".tsv":
        return "tsv"
    if ext in TEXT_SUFFIXES or os.path.basename(p) in ("dockerfile", "makefile"):
        return "text"
    return None


def file_suffix(path: str) -> str:
    p = path
    for comp in COMPRESSIONS:
        if p.lower().endswith(comp):
            p = p[: -len(comp)]
    return os.path.splitext(p)[1]


def list_files(path: str, suffixes: list[str]) -> list[str]:
    if not os.path.exists(path):
        raise DataLoadError(f"dataset path '{path}' does not exist; check dataset_path in the recipe")
    if os.path.isfile(path):
        files = [path]
    else:
        files = sorted(os.path.join(root, f) for root, _, names in os.walk(path) for f in names
                       if not f.startswith("."))
    if suffixes:
        want = {s if s.startswith(".") else "." + s for s in suffixes}
        files = [f for f in files if file_suffix(f) in want]
    files = [f for f in files if format_of(f) is not None]
    if not files:
        raise DataLoadError(f"no loadable data files under '{path}' (formats: jsonl, json, parquet, csv, tsv, txt"
                            f"{'; suffixes ' + str(suffixes) if suffixes else ''})")
    return files


def _open_binary(path: str):
    """The bytes of a data file, decompressed by its suffix (gz, zst, bz2, xz)."""
    import fsspec

    return fsspec.open(path, "rb", compression="infer").open()


def _kind(value) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _short(text: str, n: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= n else text[:n] + "..."


def scan_jsonl(path: str, text_key: Optional[str] = None, check_kinds: bool = True):
    """Every line of a JSON Lines file that cannot become a sample, as ``(line number, error type,
    message, line text)``: undecodable bytes (``InvalidUTF8``), bad JSON (``JSONDecodeError``), a
    JSON value that is not an object (``NotAnObject``), a text field that is not a string
    (``WrongType``) and, with ``check_kinds``, a field whose kind (string, number, list...) differs
    from the first line that set it (``WrongType``). Blank lines are skipped, as when loading."""
    kinds: dict[str, tuple[str, int]] = {}
    with _open_binary(path) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield (lineno, "InvalidUTF8", f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} "
                       f"of the line); save the file as UTF-8", raw.decode("utf-8", errors="replace"))
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                yield lineno, "JSONDecodeError", f"not valid JSON ({e})", line
                continue
            if not isinstance(obj, dict):
                what = _kind(obj) or "null"
                yield (lineno, "NotAnObject", f"the line is {what} ({_short(line)}), not a JSON object; each line "
                       f"must be one sample like {{\"text\": \"...\"}}", line)
                continue
            if text_key and _kind(obj.get(text_key)) not in (None, "a string"):
                yield (lineno, "WrongType", f"field '{text_key}' is {_kind(obj[text_key])} "
                       f"({_short(json.dumps(obj[text_key], ensure_ascii=False), 40)}), not a string", line)
                continue
            if check_kinds:
                clash = None
                for k, v in obj.items():
                    kind, seen = _kind(v), kinds.get(k)
                    if kind is not None and seen is not None and seen[0] != kind:
                        clash = (f"field '{k}' is {kind} here but {seen[0]} on line {seen[1]}; a field must hold "
                                 f"one kind of value on every line")
                        break
                if clash:
                    yield lineno, "WrongType", clash, line
                    continue
                for k, v in obj.items():
                    kind = _kind(v)
                    if kind is not None and k not in kinds:
                        kinds[k] = (kind, lineno)


def _first_bad_json_line(path: str, text_key: Optional[str] = None) -> Optional[tuple[int, str]]:
    """(line number, what is wrong) of the first line of ``path`` that cannot be a sample, or None."""
    if _is_json_document(path):
        return None
    for lineno, _, message, _ in scan_jsonl(path, text_key):
        return lineno, message
    return None


def _is_json_document(path: str) -> bool:
    """A ``.json`` file holding one JSON array (the other form the json loader reads), not JSON Lines."""
    if file_suffix(path).lower() != ".json":
        return False
    with _open_binary(path) as f:
        head = f.read(4096).lstrip()
    return head.startswith(b"[")


def _empty_file(path: str) -> Optional[str]:
    """'is empty (0 bytes)' / 'has only blank lines' for a data file without content, else None."""
    if os.path.getsize(path) == 0:
        return "is empty (0 bytes)"
    if any(path.lower().endswith(c) for c in COMPRESSIONS):
        return None
    if os.path.getsize(path) <= 1 << 16:
        with open(path, "rb") as f:
            if not f.read().strip():
                return "has only blank lines"
    return None


def _no_samples_message(path: str, why: str, n_files: int) -> str:
    where = f"'{path}' {why}" if n_files == 1 else f"all {n_files} data files are empty (e.g. '{path}' {why})"
    return (f"no samples to process: {where}. Point dataset_path at data with at least one sample "
            f"(JSON Lines: one JSON object per line)")


def check_json_batch(batch, text_key: str) -> None:
    """A parsed JSON Lines batch or table: valid Arrow, and its ``text_key`` field (if any) strings."""
    import pyarrow as pa

    batch.validate(full=True)
    if text_key in batch.schema.names:
        t = batch.schema.field(text_key).type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)):
            raise TypeError(f"field '{text_key}' is {t}")


def json_lines_error(path: str, text_key: str, e: Exception) -> "DataLoadError":
    """The error to raise for a JSON Lines file that did not parse: its first bad line when one is found."""
    bad = _first_bad_json_line(path, text_key)
    if bad:
        return bad_line_error(path, *bad)
    return DataLoadError(f"could not read {path} as JSON Lines: {type(e).__name__}: {e}")


def bad_line_error(path: str, lineno: int, message: str) -> "DataLoadError":
    return DataLoadError(f"{path}, line {lineno}: {message}. Fix the line, or set `load_jsonl_lenient: true` to "
                         f"skip such lines (each goes to the error ledger with its file and line)")


def check_jsonl_files(files: list[str], text_key: str) -> None:
    """Raise ``DataLoadError`` naming the file and line of the first row of these JSON Lines files
    that cannot be a sample (for readers that would otherwise fail later, or with a misleading
    message, as Ray Data's does). The files are streamed through pyarrow (C++, one block in memory
    at a time); only a file pyarrow rejects is read again line by line to find the culprit."""
    import pyarrow.json as paj

    empty = {f: why for f in files if (why := _empty_file(f))}
    if len(empty) == len(files):
        f = files[0]
        raise DataLoadError(_no_samples_message(f, empty[f], len(files)))
    for f in files:
        if f in empty or _is_json_document(f):
            continue
        try:
            with _open_binary(f) as stream:
                for batch in paj.open_json(stream):
                    check_json_batch(batch, text_key)
        except Exception as e:
            raise json_lines_error(f, text_key, e) from None


def _lenient_jsonl(path: str, tmp_dir: str, text_key: Optional[str] = None) -> tuple[str, list[dict]]:
    """Copy the lines of a JSONL file that can be samples to ``tmp_dir``; return the copy and a
    ledger record (file, line, why, the line's text) for every other line."""
    import hashlib

    os.makedirs(tmp_dir, exist_ok=True)
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:16]
    out_path = os.path.join(tmp_dir, f"lenient-{digest}.jsonl")
    bad = {}
    for lineno, etype, message, line in scan_jsonl(path, text_key):
        bad[lineno] = {"op": "load", "file": path, "line": lineno, "error_type": etype, "message": message,
                       "sample": line[:10000]}
    with _open_binary(path) as f, open(out_path, "wb") as out:
        for lineno, raw in enumerate(f, 1):
            if lineno in bad or not raw.strip():
                continue
            out.write(raw if raw.endswith(b"\n") else raw + b"\n")
    return out_path, list(bad.values())


class Loader:
    def __init__(self, *, text_keys: list[str], media_keys: tuple[str, ...] = ("images", "audios", "videos"),
                 suffixes: Optional[list[str]] = None, add_suffix: bool = False, num_proc: int = 1,
                 cache_dir: Optional[str] = None, lenient: bool = False, tmp_dir: Optional[str] = None,
                 load_kwargs: Optional[dict] = None):
        self.text_keys = text_keys
        self.media_keys = media_keys
        self.suffixes = suffixes or []
        self.add_suffix = add_suffix
        self.num_proc = max(1, num_proc)
        self.cache_dir = cache_dir
        self.lenient = lenient or os.environ.get("DATA_JUICER_JSONL_LENIENT") == "1"
        self.tmp_dir = tmp_dir or os.path.join(os.getcwd(), ".dj_tmp")
        self.load_kwargs = load_kwargs or {}

    # -- public ------------------------------------------------------------------------------
    def load(self, specs: list[SourceSpec], max_sample_num: Optional[int] = None) -> LoadResult:

        if not specs:
            raise DataLoadError("no dataset given: set dataset_path (or dataset.configs) in the recipe")
        rejected: list[dict] = []
        numbers = _sample_numbers([s.weight for s in specs], max_sample_num) if max_sample_num else None
        parts = []
        for i, spec in enumerate(specs):
            if numbers is not None and numbers[i] <= 0:
                continue
            ds = self._load_source(spec.path, rejected)
            if numbers is not None:
                ds = _random_sample(ds, numbers[i])
            parts.append(ds)
        ds = parts[0] if len(parts) == 1 else _concat(parts)
        ds = self._drop_null_text(ds, rejected)
        _release_arrow_memory()
        if ds.num_rows == 0 and rejected:
            first = rejected[0]
            where = f"{first['file']}, line {first['line']}" if "file" in first else f"row {first.get('index')}"
            raise DataLoadError(f"no samples left to process: all {len(rejected)} input rows were rejected while "
                                f"loading (first: {where}: {first['message']})")
        return LoadResult(ds, rejected)

    def load_lean(self, specs: list[SourceSpec], max_sample_num: Optional[int] = None) -> Optional[LoadResult]:
        """``load`` without ``datasets``, for the HF backend's lean path: the same Arrow table (and
        the same file, memory-mapped) as ``load`` gives for one ``dataset_path`` of ``.jsonl`` files
        that need nothing but pyarrow's reader, as an ``ArrowRows``. None for anything else (a
        mix, a sample cap, lenient or extra load arguments, suffixes, an empty file, media fields,
        a null or non-string text, invalid UTF-8, a read pyarrow rejects): ``load`` then reads the
        data, and reports or ledgers what is wrong, as it always does."""
        from data_juicer.core.dataset import ArrowRows

        if (len(specs) != 1 or max_sample_num or self.lenient or self.load_kwargs or self.add_suffix
                or specs[0].weight != 1.0):
            return None
        import pyarrow as pa

        try:
            path = specs[0].path
            files = list_files(path, self.suffixes)
            if not files or not all(format_of(f) == "json" and f.endswith(".jsonl") for f in files):
                return None
            if any(_empty_file(f) for f in files):
                return None
            if sum(os.path.getsize(f) for f in files) <= SMALL_BYTES:
                import pyarrow.json as paj

                tables = [paj.read_json(f) for f in files]
                table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
                rows = ArrowRows(table)
            else:
                arrow = _stream_path(files, self.cache_dir or _default_datasets_cache())
                if not _join_prefetch(arrow):
                    return None
                self._stream_once(files, arrow)
                # what datasets.Dataset.from_file maps (datasets.table._memory_mapped_arrow_table_from_file)
                table = pa.ipc.open_stream(pa.memory_map(arrow)).read_all()
                rows = ArrowRows(table, path=arrow)
        except Exception:  # noqa: BLE001 - load reads the files and reports what is wrong
            return None
        if not _lean_table_ok(table, self.text_keys[0], self.media_keys):
            return None
        _release_arrow_memory()
        return LoadResult(rows, [])

    # -- one dataset_path entry --------------------------------------------------------------
    def _load_source(self, path: str, rejected: list[dict]):

        from loguru import logger

        files = list_files(path, self.suffixes)
        empty = {f: why for f in files if format_of(f) in ("json", "csv", "tsv") and (why := _empty_file(f))}
        if empty and len(empty) == len(files):
            raise DataLoadError(_no_samples_message(files[0], empty[files[0]], len(files)))
        for f, why in empty.items():
            logger.warning(f"skipping '{f}': it {why}")
        files = [f for f in files if f not in empty]
        groups: dict[str, list[str]] = {}
        for f in files:
            groups.setdefault(format_of(f), []).append(f)
        parts = []
        for fmt, fs in groups.items():
            if fmt == "text" or self.add_suffix:
                by_suffix: dict[str, list[str]] = {}
                for f in fs:
                    by_suffix.setdefault(file_suffix(f), []).append(f)
                for suf, sfs in by_suffix.items():
                    ds = self._load_files(fmt, sfs, rejected)
                    if self.add_suffix and Fields.suffix not in ds.column_names:
                        ds = ds.add_column(Fields.suffix, [suf] * ds.num_rows)
                    parts.append(ds)
            else:
                parts.append(self._load_files(fmt, fs, rejected))
        ds = parts[0] if len(parts) == 1 else _concat(parts)
        if not any(k in ds.column_names for k in self.text_keys[:1]):
            raise DataLoadError(
                f"'{path}' has no field '{self.text_keys[0]}' (its fields: {', '.join(ds.column_names)}); "
                f"set text_keys in the recipe to the field that holds the text")
        base = path if os.path.isdir(path) else os.path.dirname(path)
        return self._absolutize_media(ds, base)

    def _load_files(self, fmt: str, files: list[str], rejected: list[dict]):
        import datasets

        kwargs = dict(self.load_kwargs)
        kwargs.setdefault("cache_dir", self.cache_dir)
        if len(files) > 1 and self.num_proc > 1:
            kwargs.setdefault("num_proc", min(self.num_proc, len(files)))
        origin = {f: f for f in files}  # file read -> the user's file (lenient reads a cleaned copy)
        if fmt == "json" and self.lenient:
            origin = {}
            for f in files:
                n_before = len(rejected)
                copy = self._lenient(f, rejected)
                if copy != f and os.path.getsize(copy) == 0:
                    first = rejected[n_before] if len(rejected) > n_before else None
                    if first is None:
                        continue
                    raise DataLoadError(
                        f"no samples left in '{f}': all {len(rejected) - n_before} of its lines were rejected "
                        f"(first: line {first['line']}: {first['message']})")
                origin[copy] = f
            files = list(origin)
        builder, extra = {"json": ("json", {}), "parquet": ("parquet", {}), "csv": ("csv", {}),
                          "tsv": ("csv", {"delimiter": "\t"}), "text": ("text", {"sample_by": "document"})}[fmt]
        extra.update(kwargs)
        small = self._read_small_jsonl(files) if fmt == "json" and not self.load_kwargs else None
        if small is None and fmt == "json" and not self.load_kwargs:
            small = self._stream_large_jsonl(files)
        if small is not None:
            return self._check_json(small, origin, rejected)
        if fmt == "json" and self._coerced_by_builder(files):
            # pyarrow rejects these files but the datasets builder reads a field whose kind changes from
            # line to line as JSON text ("x" becomes "\"x\""): name the line instead of changing the data
            self._raise_bad_line(origin, rejected)
        try:
            ds = datasets.load_dataset(builder, data_files=files, split="train", **extra)
        except Exception as e:  # find the culprit and say where it is
            if fmt == "json":
                self._raise_bad_line(origin, rejected)
            raise DataLoadError(f"could not read {fmt} data from {files[0]}"
                                f"{f' (+{len(files) - 1} more files)' if len(files) > 1 else ''}: "
                                f"{type(e).__name__}: {e}") from e
        if fmt == "json" and _has_json_feature(ds):  # large files: the builder's JSON-text fallback was used
            self._raise_bad_line(origin, rejected)
        return self._check_json(ds, origin, rejected) if fmt == "json" else ds

    def _coerced_by_builder(self, files: list[str]) -> bool:
        """The small-file reader (pyarrow) was tried on ``files`` and failed."""
        return not self.load_kwargs and all(f.endswith(".jsonl") for f in files) and \
            sum(os.path.getsize(f) for f in files) <= SMALL_BYTES

    def _check_json(self, ds, origin: dict, rejected: list[dict]):
        """Loaded JSON rows: every string valid UTF-8 (the JSON readers do not check) and the text
        field a string column; else the error names the first bad line."""
        import pyarrow as pa

        table = ds.data.table
        key = self.text_keys[0]
        ok = True
        try:
            table.validate(full=True)
        except pa.ArrowInvalid:
            ok = False
        if ok and key in table.column_names:
            t = table.schema.field(key).type
            ok = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)
        if not ok:
            self._raise_bad_line(origin, rejected)
            raise DataLoadError(f"{', '.join(origin.values())}: the field '{key}' must hold strings, and every "
                                f"string must be valid UTF-8")
        return ds

    def _raise_bad_line(self, origin: dict, rejected: list[dict]) -> None:
        """Raise the error naming the first line of the user's files that cannot be a sample (lines
        already in the ledger under lenient loading do not count); return if none is found."""
        skipped = {(r.get("file"), r.get("line")) for r in rejected}
        for src in origin.values():
            if _is_json_document(src):
                continue
            for lineno, _, message, _ in scan_jsonl(src, self.text_keys[0]):
                if (src, lineno) not in skipped:
                    raise bad_line_error(src, lineno, message) from None

    def _read_small_jsonl(self, files: list[str]):
        """Small uncompressed JSONL straight into memory with pyarrow (same table the datasets json
        builder makes), skipping the builder's start-up and cache files; None to use the builder."""
        import datasets
        import pyarrow as pa
        import pyarrow.json as paj
        from datasets.table import InMemoryTable

        if not all(f.endswith(".jsonl") for f in files) or sum(os.path.getsize(f) for f in files) > SMALL_BYTES:
            return None
        try:
            tables = [paj.read_json(f) for f in files]
            table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
            return datasets.Dataset(InMemoryTable(table))
        except Exception:  # anything unusual: let the datasets builder read it (and report errors)
            return None

    def _stream_large_jsonl(self, files: list[str]):
        """Larger uncompressed JSONL: streamed by pyarrow, block by block, into one Arrow file in the
        datasets cache folder, then memory-mapped (what the datasets json builder does, without its
        machinery: ~0.45 CPU s and a third of the wall time less on 108 MB). The file is named after
        the inputs (path, size, mtime), so a rerun reuses it (and the pass cache files beside it), as
        it would reuse the builder's. Only when every block has the first block's schema: a field
        that appears later or changes kind, a bad line, anything unusual returns None, and the
        builder reads the files (and reports errors) as before."""
        import datasets

        if not all(f.endswith(".jsonl") for f in files):
            return None
        try:
            path = _stream_path(files, self.cache_dir or datasets.config.HF_DATASETS_CACHE)
            if not _join_prefetch(path):
                return None  # the read in the background failed: the builder reads the files (as below)
            self._stream_once(files, path)
            return datasets.Dataset.from_file(path)
        except Exception:  # anything unusual: let the datasets builder read it (and report errors)
            return None

    def prefetch(self, specs: list[SourceSpec], max_sample_num: Optional[int] = None) -> bool:
        """Start reading the JSONL input into its Arrow file (``_stream_large_jsonl``) in a background
        thread, so pyarrow's parse (C++, without the GIL) runs while this process imports ``datasets``
        and builds the ops; ``load`` then waits for it and goes on as if it had read the file itself.
        Only where ``load`` would take that path for certain (one ``dataset_path`` of uncompressed
        ``.jsonl`` files over ``SMALL_BYTES``, nothing that changes how they are read); False when
        nothing was started. ``DJ_PREFETCH=0`` turns it off."""
        if os.environ.get("DJ_PREFETCH", "1").strip().lower() in ("0", "false", "no", "off"):
            return False
        try:
            if len(specs) != 1 or max_sample_num or self.lenient or self.load_kwargs or self.add_suffix:
                return False
            files = list_files(specs[0].path, self.suffixes)
            files = [f for f in files if not (format_of(f) in ("json", "csv", "tsv") and _empty_file(f))]
            if not files or not all(format_of(f) == "json" and f.endswith(".jsonl") for f in files):
                return False
            if sum(os.path.getsize(f) for f in files) <= SMALL_BYTES:
                return False
            path = _stream_path(files, self.cache_dir or _default_datasets_cache())
        except Exception:  # noqa: BLE001 - load finds and reports whatever this tripped on
            return False
        if os.path.exists(path) or path in _PREFETCH:
            return False
        job = _Prefetch(files, path)
        _PREFETCH[path] = job
        job.start()
        return True

    def _stream_once(self, files, path: str) -> None:
        """Write ``files`` as the Arrow stream file ``path`` unless it exists, atomically (a temporary
        file beside it, then a rename), so a crash or a concurrent run never leaves a partial file."""
        if os.path.exists(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp-{os.getpid()}"
        try:
            self._stream_to(files, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    @staticmethod
    def _stream_to(files: list[str], path: str) -> None:
        import pyarrow as pa
        import pyarrow.json as paj

        # the schema of the first SCHEMA_SAMPLE_BYTES of rows, given to every block (the schema still comes
        # from thousands of rows, so a field that is null all through one block keeps its type)
        parse = None
        head = _head_lines(files[0], SCHEMA_SAMPLE_BYTES)
        if head:
            sample = paj.read_json(pa.BufferReader(head), read_options=paj.ReadOptions(use_threads=False))
            parse = paj.ParseOptions(explicit_schema=sample.schema)
            del sample
        del head
        writer, schema = None, None
        with pa.OSFile(path, "wb") as sink:
            try:
                for f in files:
                    for block in _line_blocks(f, STREAM_BLOCK_BYTES):
                        # one parse block for the whole buffer: one chunk a column, one record batch
                        opts = paj.ReadOptions(use_threads=False, block_size=block.size + 1)
                        table = paj.read_json(block, read_options=opts, parse_options=parse)
                        del block
                        if writer is None:
                            schema = table.schema
                            writer = pa.ipc.new_stream(sink, schema)
                        elif not table.schema.equals(schema):
                            raise ValueError("a later block has another schema")
                        if table.num_rows:
                            for batch in table.to_batches():
                                writer.write_batch(batch)
                        del table
                if writer is None:
                    raise ValueError("no rows")
            finally:
                if writer is not None:
                    writer.close()

    def _lenient(self, path: str, rejected: list[dict]) -> str:
        if not file_suffix(path) == ".jsonl":
            return path
        out, bad = _lenient_jsonl(path, self.tmp_dir, self.text_keys[0])
        rejected.extend(bad)
        return out

    def _absolutize_media(self, ds, base: str):
        keys = [k for k in self.media_keys if k in ds.column_names]
        if not keys or not base:
            return ds

        def rel2abs(batch):
            for k in keys:
                batch[k] = [[p if (not isinstance(p, str) or os.path.isabs(p) or "://" in p) else
                             os.path.join(base, p) for p in paths] if paths else paths for paths in batch[k]]
            return batch

        return ds.map(rel2abs, batched=True, desc="Resolving media paths")

    def _drop_null_text(self, ds, rejected: list[dict]):
        import pyarrow.compute as pc

        key = self.text_keys[0]
        col = ds.data.column(key)
        nulls = col.null_count
        if not nulls:
            return ds
        mask = pc.is_null(col).to_numpy(zero_copy_only=False)
        bad_idx = np.flatnonzero(mask)
        for i in bad_idx[:100000]:
            rejected.append({"op": "load", "index": int(i), "error_type": "NullText",
                             "message": f"field '{key}' is null", "sample": ds[int(i)]})
        return ds.select(np.flatnonzero(~mask))


def _lean_table_ok(table, text_key: str, media_keys) -> bool:
    """A loaded table the full load would take as it is: valid UTF-8 throughout (``_check_json``), the
    text a string column without nulls (``_drop_null_text``), no media fields (``_absolutize_media``
    rewrites their paths), and only types ``datasets`` keeps as they are (no extension types)."""
    import pyarrow as pa

    if text_key not in table.column_names or any(k in table.column_names for k in media_keys):
        return False
    t = table.schema.field(text_key).type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)) or table.column(text_key).null_count:
        return False

    def plain(tp) -> bool:
        if isinstance(tp, pa.ExtensionType):
            return False
        return all(plain(tp.field(i).type) for i in range(tp.num_fields))

    if not all(plain(f.type) for f in table.schema):
        return False
    try:
        _validate_handing_back(table)
    except pa.ArrowInvalid:
        return False
    return True


def _validate_handing_back(table) -> None:
    """``table.validate(full=True)`` (raises ``ArrowInvalid``), one column chunk (a streamed block) at a
    time, each chunk's memory-mapped text handed back once it is checked: the whole-table check read
    every page of the Arrow file into the process at once (peers' MinHash run: ~95 MB of the 107 MB
    file resident at the end of the load, the run's peak PSS); the same checks, a block's text at a time."""
    import pyarrow as pa

    from data_juicer.core.exporter import _mapped_text
    from data_juicer.ops.common.mapped_pages import MappedPages

    table.validate()
    for i, field in enumerate(table.schema):
        col = table.column(i)
        text = pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
        m, first = MappedPages(col) if text else None, 0
        for chunk in col.chunks:
            chunk.validate(full=True)
            if m is not None:
                m.drop_rows(first, first + len(chunk))
            first += len(chunk)
    for _, m in _mapped_text(table):  # struct fields' text, and pages cut by the chunks' edges
        m.drop_all()


def _head_lines(path: str, limit: int) -> bytes:
    """The whole lines in the first ``limit`` bytes of ``path`` (b"" when its first line is longer)."""
    with open(path, "rb") as f:
        head = f.read(limit)
    if len(head) < limit:
        return head
    return head[:head.rfind(b"\n") + 1]


def _line_blocks(path: str, size: int):
    """The file as ``pyarrow.Buffer`` blocks of whole lines, about ``size`` bytes each (a line longer than
    ``size``: a block that holds it whole; the last block: the rest of the file, with or without its
    final newline). Each block is read once; the next one starts at the line its predecessor cut off."""
    import pyarrow as pa

    with open(path, "rb") as f:
        while True:
            start, want = f.tell(), size
            while True:
                chunk = f.read(want)
                if len(chunk) < want:  # the end of the file
                    cut = len(chunk)
                    break
                cut = chunk.rfind(b"\n") + 1
                if cut:
                    break
                f.seek(start)  # no newline in ``want`` bytes: read the long line again, whole
                want *= 2
            if not cut:
                return
            f.seek(start + cut)
            yield pa.py_buffer(chunk).slice(0, cut)
            del chunk


def _stream_path(files: list[str], cache_root) -> str:
    """The Arrow file ``_stream_large_jsonl`` writes for ``files``: named after the inputs (path, size,
    mtime), pyarrow's version and the block size, under ``<cache_root>/dj_jsonl``."""
    import hashlib

    import pyarrow as pa

    key = json.dumps([[os.path.abspath(f), os.path.getsize(f), os.stat(f).st_mtime_ns] for f in files]
                     + [pa.__version__, STREAM_BLOCK_BYTES, SCHEMA_SAMPLE_BYTES, "read_json blocks"])
    folder = os.path.join(cache_root, "dj_jsonl", hashlib.sha256(key.encode()).hexdigest()[:24])
    return os.path.join(folder, "data.arrow")


def _default_datasets_cache() -> str:
    """``datasets.config.HF_DATASETS_CACHE`` as datasets derives it from the environment, without
    importing datasets (the point of a prefetch is to run while it is imported). Should it differ,
    ``load`` computes its own path, and the file read ahead is removed unused (``_join_prefetch``)."""
    home = os.path.expanduser(os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"),
                                                                "huggingface")))
    return os.getenv("HF_DATASETS_CACHE", os.path.join(home, "datasets"))


class _Prefetch:
    """One JSONL -> Arrow read in a daemon thread (``Loader.prefetch``)."""

    def __init__(self, files: list[str], path: str):
        import threading

        self.files, self.path, self.error = files, path, None
        self.thread = threading.Thread(target=self._run, name="dj-jsonl-prefetch", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        tmp = f"{self.path}.tmp-{os.getpid()}-prefetch"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            Loader._stream_to(self.files, tmp)
            os.replace(tmp, self.path)
        except BaseException as e:  # noqa: BLE001 - load falls back as it does when it reads itself
            self.error = e
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


_PREFETCH: dict[str, _Prefetch] = {}


def _join_prefetch(path: Optional[str] = None) -> bool:
    """Wait for the background read of ``path`` (if one was started); False when it failed. Reads of
    other paths (started for a cache folder the load did not use) are waited for and their files
    removed. Without ``path``: wait for every read still running (a run that ends before its load)."""
    ok = True
    for p in list(_PREFETCH):
        job = _PREFETCH.pop(p)
        job.thread.join()
        if p == path:
            ok = job.error is None
        elif path is not None and job.error is None:
            try:
                os.remove(p)
            except OSError:
                pass
    return ok


def _release_arrow_memory() -> None:
    """Give back to the system what Arrow's allocator keeps after parsing (the JSON blocks: ~100 MB of
    anonymous memory on 108 MB of JSONL, held for the whole run and inherited by forked workers)."""
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except Exception:  # an allocator without it
        pass


def _has_json_feature(ds) -> bool:
    json_type = getattr(__import__("datasets").features, "Json", None)
    return json_type is not None and any(isinstance(f, json_type) for f in ds.features.values())


def _concat(parts):
    import datasets

    cols: dict[str, None] = {}
    for p in parts:
        for c in p.column_names:
            cols.setdefault(c, None)
    aligned = []
    for p in parts:
        for c in cols:
            if c not in p.column_names:
                p = p.add_column(c, [None] * p.num_rows)
        aligned.append(p.select_columns(list(cols)))
    try:
        return datasets.concatenate_datasets(aligned)
    except Exception as e:
        raise DataLoadError(f"the data files do not share a schema that can be combined: {e}") from e


def _sample_numbers(weights: list[float], max_sample_num: int) -> list[int]:
    w = np.asarray(weights, dtype=np.float64)
    if w.sum() <= 0:
        raise DataLoadError("dataset weights must not all be zero")
    w = w / w.sum()
    wanted = [int(np.ceil(max_sample_num * x)) for x in w]
    out, acc = [], 0
    for n in wanted:
        out.append(min(n, max_sample_num - acc))
        acc += out[-1]
    return out


def _random_sample(ds, number: int, seed: int = 42):
    """Same selection as Data-Juicer: shuffle with seed 42, then take (repeating if needed)."""
    total = ds.num_rows
    if number == total or total == 0:
        return ds
    reps, rem = divmod(number, total)
    index = np.concatenate([np.tile(np.arange(total), reps), np.arange(rem)]) if reps else np.arange(number)
    return ds.shuffle(seed=seed).select(index)
