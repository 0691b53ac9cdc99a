import re
from typing import Annotated

import regex
from pydantic import Field

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# whitespace other than space and tab (Unicode White_Space): a line holding one is never a table row
_OTHER_SPACE = regex.compile(r"[^\S \t]")
_CELL_GAP = re.compile(r"[ \t]")
# a "|" usable as a column separator inside a space-free cell: not first, not last, not next to another
_INNER_PIPE = re.compile(r"\|.")


def _column_gaps(line: str) -> tuple[int, int] | None:
    """(fewest, most) column separators a non-empty line can be read with, or None when it is no row.

    A row is non-blank pieces separated by single spaces, tabs or "|"; spaces and tabs always
    separate, a "|" may also be part of a piece.
    """
    if _OTHER_SPACE.search(line):
        return None
    cells = _CELL_GAP.split(line)
    if "" in cells:
        return None
    pipes = sum(len(_INNER_PIPE.findall(cell, 1)) for cell in cells if "|" in cell)
    return len(cells) - 1, len(cells) - 1 + pipes


def _drop_tables(lines: list[str], gaps: list, k: int) -> tuple[list[str], list]:
    """Remove runs of 2+ rows with exactly k separators; blank lines inside and after a run go too.

    The first line is never a row (a table must follow a line break), nor is the last piece
    (a row ends with a line break).
    """
    last = len(lines) - 1

    def is_row(j: int) -> bool:
        g = gaps[j]
        return j < last and g is not None and g[0] <= k <= g[1]

    keep_lines, keep_gaps = [lines[0]], [gaps[0]]
    j = 1
    while j <= last:
        if is_row(j):
            rows, end, u = 1, j, j + 1
            while True:
                while u < last and not lines[u]:
                    u += 1
                if not is_row(u):
                    break
                rows, end, u = rows + 1, u, u + 1
            if rows >= 2:
                j = end + 1
                while j < last and not lines[j]:
                    j += 1
                continue
        keep_lines.append(lines[j])
        keep_gaps.append(gaps[j])
        j += 1
    return keep_lines, keep_gaps


def remove_tables(text: str, min_gaps: int, max_gaps: int) -> str:
    if text.count("\n") < 3:  # a line break before the table and after each of its two rows
        return text
    lines = text.split("\n")
    gaps = [None] + [_column_gaps(line) if line else None for line in lines[1:]]
    # one sweep per column count, smallest first; a sweep can join rows a previous one separated
    for k in range(min_gaps, max_gaps + 1):
        if sum(1 for g in gaps if g is not None and g[0] <= k <= g[1]) >= 2:
            lines, gaps = _drop_tables(lines, gaps, k)
    return "\n".join(lines)


@OPERATORS.register_module("remove_table_text_mapper")
class RemoveTableTextMapper(Mapper):
    """Removes table-like text: runs of at least two consecutive lines (blank lines between them
    allowed) that each split into the same number of columns, between ``min_col`` and
    ``max_col``, on single spaces, tabs or ``|``. Column counts are tried from ``min_col`` up, one
    after the other. A table's first row must follow a line break, and each row must end with one.
    Note that ordinary prose lines with equal word counts look like a table to this rule."""

    writes_text_only = True  # rewrites only the text field

    def __init__(
        self,
        min_col: Annotated[int, Field(ge=2, le=20)] = 2,
        max_col: Annotated[int, Field(ge=2, le=20)] = 20,
        **kwargs,
    ):
        """
        :param min_col: fewest columns of a table to remove (2 to 20)
        :param max_col: most columns of a table to remove (2 to 20); nothing is removed when it is
            below ``min_col``
        """
        super().__init__(**kwargs)
        for name, value in (("min_col", min_col), ("max_col", max_col)):
            if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 20:
                raise ValueError(f"{self.name}: `{name}` must be an integer from 2 to 20, got {value!r}")
        self.min_col = min_col
        self.max_col = max_col

    def process_batched(self, samples):
        lo, hi = self.min_col - 1, self.max_col - 1
        samples[self.text_key] = [remove_tables(t, lo, hi) for t in samples[self.text_key]]
        return samples
