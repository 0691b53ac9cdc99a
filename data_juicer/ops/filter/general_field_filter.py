import ast
import operator
from collections.abc import Callable
from typing import Any

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

# An evaluator reads row i of a columnar batch: (samples, i) -> value
Evaluator = Callable[[dict, int], Any]

_COMPARISONS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.Compare, ast.Name, ast.Load, ast.Attribute,
            ast.Constant, ast.UnaryOp, ast.List, ast.Tuple, ast.Set, *_COMPARISONS, *_UNARY)
_GRAMMAR = ("comparisons (<, <=, >, >=, ==, !=, in, not in; chains like 1 < x <= 3), and / or / not, "
            "unary + and -, field names with dots (e.g. __dj__meta__.lang), constants, and list / tuple / "
            "set literals")


def parse_condition(condition: str, who: str = "general_field_filter") -> ast.Expression:
    """Parse a filter condition, refusing anything beyond the condition grammar (no calls,
    arithmetic, subscripts, lambdas...), so a recipe can never run arbitrary code."""
    try:
        tree = ast.parse(condition, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"{who}: invalid filter_condition {condition!r}: {e.msg} (column {e.offset}).") from e
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            col = getattr(node, "col_offset", None)
            where = f" at column {col + 1}" if col is not None else ""
            snippet = ast.get_source_segment(condition, node) if col is not None else None
            shown = f" '{snippet}'" if snippet else ""
            raise ValueError(f"{who}: filter_condition {condition!r} uses {type(node).__name__}{shown}{where}, "
                             f"which is not allowed. Allowed: {_GRAMMAR}.")
    return tree


def compile_condition(tree: ast.Expression) -> Evaluator:
    """Turn a parsed condition into one nested closure per node (no per-row tree walk)."""
    return _compile(tree.body)


def _compile(node: ast.AST) -> Evaluator:
    if isinstance(node, ast.Constant):
        value = node.value
        return lambda s, i: value
    if isinstance(node, ast.Name):
        name = node.id
        return lambda s, i: s[name][i] if name in s else None
    if isinstance(node, ast.Attribute):
        inner, attr = _compile(node.value), node.attr

        def field(s, i):
            # only records are looked into; attributes of other values are not exposed
            v = inner(s, i)
            return v.get(attr) if isinstance(v, dict) else None
        return field
    if isinstance(node, ast.UnaryOp):
        inner, op = _compile(node.operand), _UNARY[type(node.op)]
        return lambda s, i: op(inner(s, i))
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda s, i: all(p(s, i) for p in parts)
        return lambda s, i: any(p(s, i) for p in parts)
    if isinstance(node, ast.Compare):
        return _compile_compare(node)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        parts = [_compile(e) for e in node.elts]
        build = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
        return lambda s, i: build(p(s, i) for p in parts)
    raise ValueError(f"unsupported expression node {type(node).__name__}")  # parse_condition rejects these


def _compile_compare(node: ast.Compare) -> Evaluator:
    first = _compile(node.left)
    rest = [_compile(c) for c in node.comparators]
    ops = [(type(op), _COMPARISONS[type(op)]) for op in node.ops]

    def compare(s, i):
        left = first(s, i)
        rights = [r(s, i) for r in rest]  # every operand is read, as Data-Juicer does
        for (kind, op), right in zip(ops, rights):
            if left is None or right is None:
                # a missing value makes the whole comparison false, except for `not in`
                return kind is ast.NotIn
            if not op(left, right):
                return False
            left = right
        return True
    return compare


@OPERATORS.register_module("general_field_filter")
class GeneralFieldFilter(Filter):
    """Keeps samples for which a boolean condition over their fields holds, e.g.
    ``10 < num <= 30 and text != 'nothing here' and __dj__meta__.a == 3``.

    The condition may use comparisons (chained too), ``and`` / ``or`` / ``not``, field names
    with dots into nested fields, constants and list / tuple / set literals; anything else
    (calls, arithmetic, subscripts) is refused when the op is built. A comparison with a
    missing (None) operand is false (``not in`` is true). The result is stored in the stat
    ``general_field_filter_condition``; an empty condition keeps every sample."""

    modality = "general"

    def __init__(self, filter_condition: str = "", **kwargs):
        """
        :param filter_condition: the condition a sample must meet to be kept
        """
        super().__init__(**kwargs)
        self.filter_condition = (filter_condition or "").strip()
        self._tree = parse_condition(self.filter_condition, self.name) if self.filter_condition else None
        self._evaluate: Evaluator | None = None

    def __getstate__(self):
        # closures do not pickle; workers rebuild them from the parsed tree
        state = dict(self.__dict__)
        state["_evaluate"] = None
        return state

    def compute_stats_batched(self, samples):
        if self._tree is None:
            return samples
        if self._evaluate is None:
            self._evaluate = compile_condition(self._tree)
        evaluate, key = self._evaluate, StatsKeys.general_field_filter_condition
        for i, stat in enumerate(samples[Fields.stats]):
            if key not in stat:
                stat[key] = evaluate(samples, i)
        return samples

    def process_batched(self, samples):
        key = StatsKeys.general_field_filter_condition
        return [bool(stat.get(key, True)) for stat in samples[Fields.stats]]
