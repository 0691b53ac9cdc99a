"""Generate docs/recipes.md (every global recipe key) from the config schema.

    python tools/recipe_docs.py            # rewrite docs/recipes.md
    python tools/recipe_docs.py --check    # exit 1 when the committed file is stale
"""

import argparse
import os
import sys
import typing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from data_juicer.config.schema import EXTRA_KEYS, GLOBAL_KEYS  # noqa: E402

TARGET = os.path.join(ROOT, "docs", "recipes.md")

HEADER = """# Recipe reference: the global keys

A recipe is a YAML file: these global keys, then `process:`, the list of ops in order (each op's
parameters are in `Operators.md`). Keys and defaults are Data-Juicer 1.6.1's, so its recipes run here
unchanged. Precedence, low to high: these defaults < environment (`DJ_PROCESS_<KEY>`, e.g.
`DJ_PROCESS_NP=4`) < the recipe < the command line (`--np 4`). Unknown keys are an error with a close
match. Generated from `data_juicer/config/schema.py` by `tools/recipe_docs.py`; do not edit by hand.
"""


def _type_name(t) -> str:
    origin = typing.get_origin(t)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(t))
    if origin is typing.Union:
        args = [a for a in typing.get_args(t) if a is not type(None)]
        inner = " or ".join(_type_name(a) for a in args)
        return f"{inner} (optional)" if len(args) < len(typing.get_args(t)) else inner
    if origin in (list, typing.List):
        args = typing.get_args(t)
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin in (dict, typing.Dict):
        return "mapping"
    name = getattr(t, "__name__", None) or str(t)
    return {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "Dict": "mapping",
            "List": "list", "PositiveInt": "integer > 0", "NonNegativeInt": "integer >= 0",
            "ClosedUnitInterval": "number in [0, 1]", "PositiveFloat": "number > 0",
            "NonNegativeFloat": "number >= 0"}.get(name, name)


def _default(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return f"`{v}`" if v else '`""`'
    return f"`{v!r}`".replace("True", "true").replace("False", "false")


def _table(keys) -> list[str]:
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, typ, default, helptext in keys:
        rows.append(f"| `{key}` | {_type_name(typ)} | {_default(default)} | {helptext.replace('|', '/')} |")
    return rows


def render() -> str:
    lines = [HEADER, f"## Data-Juicer's keys ({len(GLOBAL_KEYS)})", ""] + _table(GLOBAL_KEYS)
    lines += ["", f"## Keys of this project ({len(EXTRA_KEYS)})", ""] + _table(EXTRA_KEYS) + [""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render()
    if args.check:
        current = open(TARGET, encoding="utf-8").read() if os.path.exists(TARGET) else ""
        if current != text:
            print("docs/recipes.md is stale: run `python tools/recipe_docs.py`", file=sys.stderr)
            return 1
        return 0
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {TARGET} ({len(GLOBAL_KEYS) + len(EXTRA_KEYS)} keys)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
