"""Turning a recipe string such as ``"lambda sample: {...}"`` into a function.

A recipe is trusted configuration, like a custom operator file: the lambda runs with the normal
builtins. Only a single lambda expression is accepted, so a recipe value cannot smuggle in
statements, and mistakes are reported with the op and parameter that held them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable


def parse_lambda(source: str, who: str, param: str, n_args: int = 1) -> Callable:
    """Compile ``source`` (one ``lambda`` taking ``n_args`` positional arguments) to a function.

    Raises ValueError naming ``who`` (the op) and ``param`` when it is anything else.
    """
    if not isinstance(source, str):
        raise ValueError(f"{who}: `{param}` must be a string holding a lambda, got {type(source).__name__}")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{who}: `{param}` is not valid Python ({e.msg}): {source!r}; "
                         f"write a single expression like 'lambda x: ...'") from e
    fn = tree.body
    if not isinstance(fn, ast.Lambda):
        raise ValueError(f"{who}: `{param}` must be a lambda expression like 'lambda x: ...', "
                         f"got a {type(fn).__name__} expression: {source!r}")
    args = fn.args
    if len(args.args) != n_args:
        raise ValueError(f"{who}: the lambda in `{param}` must take exactly {n_args} argument(s), "
                         f"it takes {len(args.args)}: {source!r}")
    return eval(compile(tree, f"<{who}.{param}>", "eval"), {"__builtins__": __builtins__})
