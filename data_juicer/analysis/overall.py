"""``overall.csv`` / ``overall.md``: pandas ``describe`` of every stat, one column per stat.

Numeric stats get count, mean, std, min, the percentiles (0.25, 0.5, 0.75 plus the recipe's
``percentiles``) and max; string and boolean stats get count, unique, top and freq. The table has
the layout Data-Juicer 1.6.1's ``dj-analyze`` writes (stats as columns, measures as rows).
"""

from __future__ import annotations

import os
from typing import Iterable

DEFAULT_PERCENTILES = (0.25, 0.5, 0.75)


def merged_percentiles(extra: Iterable[float] = ()) -> list[float]:
    pcts = sorted(set(float(p) for p in (extra or ())) | set(DEFAULT_PERCENTILES))
    bad = [p for p in pcts if not 0 <= p <= 1]
    if bad:
        raise ValueError(f"percentiles must be between 0 and 1, got {bad}")
    return pcts


def overall_table(columns, percentiles: Iterable[float] = ()):
    """DataFrame: one column per stat (:class:`~data_juicer.analysis.columns.StatColumn`)."""
    import pandas as pd

    pcts = merged_percentiles(percentiles)
    described = [c.values.describe(percentiles=pcts) for c in columns]
    if not described:
        return pd.DataFrame()
    return pd.DataFrame(described).T


def write_overall(table, analysis_dir: str) -> tuple[str, str]:
    os.makedirs(analysis_dir, exist_ok=True)
    csv_path = os.path.join(analysis_dir, "overall.csv")
    md_path = os.path.join(analysis_dir, "overall.md")
    table.to_csv(csv_path)
    try:
        text = table.to_markdown()
    except ImportError:  # tabulate missing
        text = table.to_string()
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(text)
    return csv_path, md_path
