"""Errors shared by every layer."""


class ConfigError(ValueError):
    """A recipe problem, reported to the user without a traceback (exit code 2)."""


class OpError(RuntimeError):
    """An op failed on a sample and ``skip_op_error`` is off."""

    def __init__(self, op: str, index_hint: str, cause: BaseException):
        self.op, self.cause = op, cause
        super().__init__(f"operator '{op}' failed on {index_hint}: {type(cause).__name__}: {cause}")
