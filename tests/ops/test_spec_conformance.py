"""Every built-in op matches Data-Juicer's interface in ops.json: name, type, params, defaults."""
import ast
import inspect
import json
import os
import sys

import pytest

from data_juicer.ops.base import OP
from data_juicer.ops.registry import OPERATORS

# Data-Juicer 1.6's operator spec, kept in the repository as test data
SPEC_PATH = os.path.join(os.path.dirname(__file__), "..", "data", "spec", "ops.json")
SPEC = {o["name"]: o for o in json.load(open(SPEC_PATH))}
BUILTIN = sorted(OPERATORS.builtin)


def _own_params(cls):
    """The constructor parameters declared below the common bases, in order."""
    params = []
    for klass in cls.__mro__:
        if klass.__module__ == "data_juicer.ops.base" or klass is OP:
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name == "self":
                continue
            if p.name not in {q.name for q in params}:
                params.append(p)
    return params


def _spec_default(text):
    if text == "sys.maxsize":
        return sys.maxsize
    if text == "-sys.maxsize":
        return -sys.maxsize
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


# parameters a Data-Juicer op inherits from base classes that are not ops themselves (so ops.json, which lists
# a class's own parameters, does not name them), and that its published recipes set
DJ_BASE_CLASS_PARAMS = {
    # BaseAnnotationMapper / LabelStudioAnnotationMapper (dj_recipes/annotation/*.yaml)
    "human_preference_annotation_mapper": {
        "api_url", "api_key", "label_config", "project_name_prefix", "wait_for_annotations", "timeout",
        "poll_interval", "samples_per_task", "max_tasks_per_batch", "project_id", "notification_config",
        "notification_events"},
}


@pytest.mark.parametrize("name", BUILTIN)
def test_op_matches_spec(name):
    cls = OPERATORS.get(name)
    if name not in SPEC:  # an op of ours beyond Data-Juicer's catalogue must say so
        assert getattr(cls, "extension", False), f"{name} is not a Data-Juicer op (set `extension = True` if intended)"
        return
    spec = SPEC[name]
    assert cls.op_type == spec["type"]
    assert cls.modality == spec["modality"], f"{name}: modality {cls.modality} != {spec['modality']}"
    ours = {p.name: p for p in _own_params(cls)}
    for sp in spec["params"]:
        assert sp["name"] in ours, f"{name}: missing parameter {sp['name']}"
        want = _spec_default(sp["default"])
        got = ours[sp["name"]].default
        if isinstance(want, str) and not isinstance(got, str) and got is not None:
            continue  # a default given as an expression in the spec (e.g. a module constant)
        assert got == want, f"{name}.{sp['name']}: default {got!r} != {want!r}"
    extra = set(ours) - {sp["name"] for sp in spec["params"]}
    # parameters inherited from another Data-Juicer op, as Data-Juicer's class does (e.g. in_context_influence_filter
    # extends llm_perplexity_filter)
    by_class = {o["class_name"]: o for o in SPEC.values()}
    for base in cls.__mro__[1:]:
        if base.__name__ in by_class:
            extra -= {sp["name"] for sp in by_class[base.__name__]["params"]}
    extra -= DJ_BASE_CLASS_PARAMS.get(name, set())
    extra -= set(getattr(cls, "extension_params", ()))  # ours beyond Data-Juicer's, declared by the op
    assert not extra, f"{name}: parameters not in Data-Juicer: {extra}"


@pytest.mark.parametrize("name", BUILTIN)
def test_op_has_docstring_for_each_param(name):
    cls = OPERATORS.get(name)
    assert (cls.__doc__ or "").strip(), f"{name} has no docstring"
    doc = (cls.__doc__ or "") + (cls.__init__.__doc__ or "")
    for p in _own_params(cls):
        assert f":param {p.name}:" in doc, f"{name}: parameter {p.name} is not documented"
