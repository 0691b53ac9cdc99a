"""Moved to ``data_juicer.ops.schema`` (the op schema belongs to the ops layer)."""

from data_juicer.ops.schema import signature_model, signature_params, validate_op, validate_params  # noqa: F401
