"""Building ops from recipe-style entries: the one function every caller uses.

The executor (a recipe's ``process`` list), fused ops (``general_fused_op``'s ``fused_op_list``)
and lineage stages (``child_ops``, ``expand``) all build their ops here, so an op gets the same
parameters wherever it is written: its own, then the ``defaults`` its caller passes (a recipe's
global keys, or the enclosing op's common keys), then its constructor's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from data_juicer.ops.registry import OPERATORS, UnknownOpError
from data_juicer.ops.schema import validate_op
from data_juicer.utils.errors import ConfigError

# common keys an op inherits from the recipe's globals (as Data-Juicer does), and a nested op
# from the op it sits in, unless it sets them itself
INHERITED = ("text_key", "image_key", "audio_key", "video_key", "image_bytes_key", "turbo", "skip_op_error",
             "work_dir")


@dataclass(frozen=True)
class OpEntry:
    """One resolved entry: the op class, its full validated keyword arguments, and what was given."""

    name: str
    cls: type
    params: Mapping[str, Any]
    given: Mapping[str, Any]

    def build(self):
        return self.cls(**dict(self.params))


def parse_entry(item, where: str) -> tuple[str, dict]:
    """``{name: {params}}`` or a bare ``name`` -> (name, params)."""
    if isinstance(item, str):
        item = {item: None}
    if not isinstance(item, dict) or len(item) != 1:
        raise ConfigError(f"{where}: write an op as a one-key mapping like `- text_length_filter: {{min_len: 10}}` "
                          f"(or its bare name), got {item!r}")
    (name, params), = item.items()
    if params is not None and not isinstance(params, dict):
        raise ConfigError(f"{where}: the parameters of '{name}' must be a mapping, got {params!r}")
    return name, dict(params or {})


def lookup(name: str, where: str) -> type:
    try:
        return OPERATORS.get(name)
    except UnknownOpError as e:
        raise ConfigError(f"{where}: {e}") from None


def resolve_entry(item, defaults: Optional[Mapping[str, Any]], where: str,
                  given: Optional[Mapping[str, Any]] = None) -> OpEntry:
    """Validate one entry with ``defaults`` filled in where the entry does not set them.

    ``given`` (default: the entry's own params) is what the user wrote, kept for reports and
    checkpoints."""
    name, params = parse_entry(item, where)
    cls = lookup(name, where)
    given = dict(params) if given is None else dict(given)
    full = dict(params)
    for k, v in (defaults or {}).items():
        full.setdefault(k, v)
    return OpEntry(name, cls, validate_op(name, cls, full, where), given)


def build_entry(entry: OpEntry, where: str):
    try:
        return entry.build()
    except ImportError as e:
        raise ConfigError(f"{where}: {e}") from e
    except ConfigError:
        raise
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{where}: operator '{entry.name}': {e}") from e


def build_ops(entries: Iterable[Any], defaults: Optional[Mapping[str, Any]] = None, where: str = "process",
              row_wise_only: bool = False) -> list:
    """Ops from entries (``{name: {params}}``, a bare name, a resolved ``OpEntry``, or an op
    already built, which is kept as it is), with ``defaults`` for what an entry leaves out."""
    from data_juicer.ops.base import OP

    ops = []
    for i, item in enumerate(entries or []):
        here = f"{where}[{i}]"
        if isinstance(item, OP):
            op = item
        else:
            entry = item if isinstance(item, OpEntry) else resolve_entry(item, defaults, here)
            if isinstance(item, OpEntry) and defaults:
                extra = {k: v for k, v in defaults.items() if item.params.get(k) is None and k in item.params}
                if extra:
                    entry = OpEntry(item.name, item.cls, {**item.params, **extra}, item.given)
            op = build_entry(entry, here)
        if row_wise_only and not op.is_row_wise:
            raise ConfigError(f"{where}: '{op.name}' works on the whole dataset and cannot run inside a fused op; "
                              "put it in the recipe's process list instead")
        ops.append(op)
    return ops


def inherited_defaults(op) -> dict:
    """The common keys an op passes on to the ops it contains."""
    return {k: getattr(op, k) for k in INHERITED if hasattr(op, k)}
