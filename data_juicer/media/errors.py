"""The error a media file that cannot be read raises."""


class MediaError(ValueError):
    """A media file exists but cannot be decoded (corrupt, truncated, unsupported format)."""

    def __init__(self, kind: str, path: str, cause: BaseException | str):
        self.kind, self.path = kind, path
        why = f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else cause
        super().__init__(f"cannot read {kind} '{path}' ({why}); check that the file is a complete, "
                         f"valid {kind} file, or remove it from the sample")


def missing_file(kind: str, path: str) -> FileNotFoundError:
    """A FileNotFoundError for a media path that does not exist, saying what to do."""
    return FileNotFoundError(f"{kind} '{path}' does not exist; fix the path in the sample (relative paths are "
                             f"resolved against the dataset file's folder) or remove it")
