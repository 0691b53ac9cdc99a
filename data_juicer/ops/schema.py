"""An op's parameter schema, read from its constructor signatures (the class and its bases).

Validation uses pydantic on the annotated signature: the same types jsonargparse reads
(``PositiveInt``, ``Annotated[int, Field(ge=2)]``, ``Optional``, ``Union``, ``Literal``...), built
once per class in milliseconds, so checking a long recipe costs almost nothing at start-up.
"""

import inspect
import re
import typing
from typing import Any, Optional

_MODELS: dict[type, Any] = {}


def signature_params(cls: type) -> dict[str, tuple[Any, Any]]:
    """name -> (annotation, default or ...) over the constructors of ``cls`` and its bases."""
    out: dict[str, tuple[Any, Any]] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            hints = typing.get_type_hints(init, include_extras=True)
        except Exception:  # an annotation that cannot be resolved is not checked
            hints = {}
        for p in inspect.signature(init).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in out:
                continue
            default = ... if p.default is inspect.Parameter.empty else p.default
            ann = hints.get(p.name, Any)
            if default is None:
                # `save_dir: str = None`, as Data-Juicer writes it: null is allowed and means the default
                ann = Optional[ann]
            out[p.name] = (ann, default)
    return out


def signature_model(cls: type):
    model = _MODELS.get(cls)
    if model is None:
        from pydantic import ConfigDict, create_model

        fields = {name: (ann, default) for name, (ann, default) in signature_params(cls).items()}
        config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=())
        model = create_model(f"{cls.__name__}Params", __config__=config, **fields)
        _MODELS[cls] = model
    return model


_SCI_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$")


def validate_params(cls: type, params: dict) -> dict:
    """Validated keyword arguments (defaults filled in); raises ValueError with readable text."""
    from pydantic import ValidationError

    model = signature_model(cls)
    try:
        inst = model(**params)
    except ValidationError as e:
        # YAML 1.1 reads `2e5` as a string; Data-Juicer's recipes write numbers so (max_len: 2e5)
        numeric = {k: float(v) for k, v in params.items() if isinstance(v, str) and _SCI_NUMBER.match(v)}
        if numeric:
            try:
                inst = model(**{**params, **numeric})
                return {name: getattr(inst, name) for name in model.model_fields}
            except ValidationError:
                pass
        parts = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "?"
            parts.append(f"parameter '{loc}': {err['msg']} (got {err.get('input')!r})")
        raise ValueError("; ".join(parts)) from None
    return {name: getattr(inst, name) for name in model.model_fields}


def validate_op(name: str, cls: type, params: dict, where: str) -> dict:
    """Type-check ``params`` against ``cls``'s signature; return the full keyword arguments.

    Raises ``ConfigError`` naming ``where``, the op and the parameter (with close names for a
    parameter the op does not have)."""
    import difflib

    from data_juicer.utils.errors import ConfigError

    known = list(signature_params(cls))
    for p in params:
        if p not in known:
            close = difflib.get_close_matches(p, known, n=3, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ConfigError(f"{where}: operator '{name}' has no parameter '{p}'.{hint}")
    try:
        return validate_params(cls, params)
    except ValueError as e:
        raise ConfigError(f"{where}: operator '{name}': {e}") from None


def executor_rule(cls: type, executor_type: str):
    """None if ops of ``cls`` can run with ``executor_type``, else why not (from ``exec_modes``)."""
    modes = tuple(getattr(cls, "exec_modes", ("default",)))
    if executor_type in modes:
        return None
    if executor_type == "ray":
        return f"it declares exec_modes={modes}"
    return f"it runs only with executor_type: {' or '.join(modes)}"


def check_executor_rules(ops, executor_type: str, where: str) -> None:
    """Every op can run with ``executor_type`` (so ``--dry_run`` catches what the run would reject)."""
    from data_juicer.utils.errors import ConfigError

    for i, o in enumerate(ops):
        why = executor_rule(o.cls, executor_type)
        if why is None:
            continue
        if executor_type == "ray":
            raise ConfigError(
                f"{where}: process[{i}]: operator '{o.name}' ({o.cls.op_type}) cannot run with executor_type "
                f"'ray': {why}. Alternative: run this recipe with `executor_type: default`, or split it in two: the "
                f"ops before '{o.name}' on Ray, then a default-executor recipe from '{o.name}' on")
        modes = tuple(getattr(o.cls, "exec_modes", ()))
        raise ConfigError(f"{where}: operator '{o.name}' runs only with executor_type: "
                          f"{' or '.join(modes)}; set `executor_type: ray` or remove it from the recipe")
