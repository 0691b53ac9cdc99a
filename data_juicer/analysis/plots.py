"""The analysis figures, drawn with matplotlib's object API on the Agg canvas (no pyplot state,
no display needed). matplotlib is imported only here, when drawing; it is the ``analysis`` extra.

File names follow Data-Juicer 1.6.1's ``dj-analyze``: ``<stat>-hist.png`` and ``<stat>-box.png``
for numeric stats, ``<stat>-hist.png`` plus top-k bars ``<stat>-topk.png`` for strings (and
``<stat>-wordcloud.png`` when the ``wordcloud`` package is installed), ``stats-corr-pearson.png``,
and ``all-stats.png`` (every stat on one image) when ``save_stats_in_one_file`` is set.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import Optional

import numpy as np

from data_juicer.utils.lazy import require

DPI = 100
SINGLE_SIZE = (8, 5.5)  # inches, per figure
TOP_K = 20
_BAR = "#3b6ea8"
_LINE = "#c0392b"


def require_matplotlib() -> None:
    """Import matplotlib's Agg canvas and Figure (a clear error when matplotlib is missing)."""
    require("matplotlib", who="dj-analyze plots", recipe_hint=False)
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def _figure(size, layout=None, margins=None):
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI, layout=layout)
    if margins:  # fixed margins: much cheaper than a constrained layout
        fig.subplots_adjust(**margins)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str) -> str:
    fig.savefig(path, dpi=DPI, facecolor="white")
    return path


def n_bins(n_values: int) -> int:
    """Data-Juicer's rule: sqrt(number of values), at least 10."""
    return max(int(math.sqrt(n_values)), 10)


def _numeric(col) -> np.ndarray:
    return np.asarray(col.values, dtype=np.float64)


def draw_hist(ax, col, bounds: Optional[dict] = None) -> None:
    data = _numeric(col)
    if data.size == 0:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        return
    lo, hi = float(data.min()), float(data.max())
    bins = n_bins(col.n_values)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(data, bins=bins, range=(lo, hi))
    ax.stairs(counts, edges, fill=True, color=_BAR)
    ax.set_xlabel(col.name)
    ax.set_ylabel("Count")
    _bound_lines(ax, bounds, lo, hi, vertical=True)


def draw_box(ax, col, bounds: Optional[dict] = None) -> None:
    data = _numeric(col)
    if data.size == 0:
        return
    ax.boxplot(data, flierprops={"markersize": 3, "alpha": 0.4, "markeredgecolor": "#555555"})
    ax.set_ylabel(col.name)
    ax.set_xticks([])
    _bound_lines(ax, bounds, float(data.min()), float(data.max()), vertical=False)


def _bound_lines(ax, bounds, lo, hi, vertical: bool) -> None:
    """Recipe thresholds inside the data range, as dashed lines."""
    for name, v in (bounds or {}).items():
        if not lo <= v <= hi:
            continue
        if vertical:
            ax.axvline(v, color=_LINE, linestyle="--", linewidth=1.2)
            ax.annotate(f"{name}={v:g}", (v, 1), xycoords=("data", "axes fraction"), rotation=90,
                        ha="right", va="top", color=_LINE, fontsize=8)
        else:
            ax.axhline(v, color=_LINE, linestyle="--", linewidth=1.2)
            ax.annotate(f"{name}={v:g}", (0.02, v), xycoords=("axes fraction", "data"), ha="left",
                        va="bottom", color=_LINE, fontsize=8)


def top_values(col, k: int = TOP_K) -> list[tuple[str, int]]:
    counts = col.values.value_counts(sort=True)
    return [(str(v), int(c)) for v, c in counts.head(k).items()]


def _short(s: str, n: int = 40) -> str:
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def draw_category_hist(ax, col, k: int = 50) -> None:
    """Counts of the most frequent values, most frequent first (a histogram over categories)."""
    top = top_values(col, k)
    ax.bar(range(len(top)), [c for _, c in top], color=_BAR)
    ax.set_xticks(range(len(top)), [_short(v, 20) for v, _ in top], rotation=60, ha="right", fontsize=7)
    ax.set_xlabel(col.name)
    ax.set_ylabel("Count")


def draw_topk(ax, col, k: int = TOP_K) -> None:
    """Horizontal bars of the k most frequent values with their share of all values."""
    top = top_values(col, k)
    total = max(len(col.values), 1)
    labels = [_short(v) for v, _ in top][::-1]
    counts = [c for _, c in top][::-1]
    ax.barh(range(len(top)), counts, color=_BAR)
    ax.set_xlim(0, max(counts or [1]) * 1.15)  # room for the share labels
    ax.set_yticks(range(len(top)), labels, fontsize=8)
    for y, c in enumerate(counts):
        ax.annotate(f" {100 * c / total:.1f}%", (c, y), va="center", fontsize=7)
    ax.set_xlabel("Count")
    ax.set_title(f"top {len(top)} of {col.values.nunique():,} values of {col.name}", fontsize=9)


_MARGINS = {"left": 0.1, "right": 0.97, "top": 0.95, "bottom": 0.1}
_MARGINS_BY_DRAW = {"draw_category_hist": {"left": 0.1, "right": 0.97, "top": 0.95, "bottom": 0.3},
                    "draw_topk": {"left": 0.38, "right": 0.93, "top": 0.93, "bottom": 0.1}}


def _single(path: str, draw, *args) -> str:
    fig = _figure(SINGLE_SIZE, margins=_MARGINS_BY_DRAW.get(draw.__name__, _MARGINS))
    draw(fig.add_subplot(), *args)
    return _save(fig, path)


def draw_column(col, analysis_dir: str, bounds: Optional[dict] = None) -> dict[str, str]:
    """The per-stat figures of one stat; returns {kind: path}."""
    out = {}
    base = os.path.join(analysis_dir, col.name)
    if col.numeric:
        out["hist"] = _single(f"{base}-hist.png", draw_hist, col, bounds)
        out["box"] = _single(f"{base}-box.png", draw_box, col, bounds)
    else:
        out["hist"] = _single(f"{base}-hist.png", draw_category_hist, col)
        out["topk"] = _single(f"{base}-topk.png", draw_topk, col)
        cloud = draw_wordcloud(col, f"{base}-wordcloud.png")
        if cloud:
            out["wordcloud"] = cloud
    return out


def draw_wordcloud(col, path: str) -> Optional[str]:
    """``<stat>-wordcloud.png`` as Data-Juicer writes it, only when ``wordcloud`` is installed."""
    try:
        import wordcloud
    except ImportError:
        return None
    freqs = Counter(str(v) for v in col.values)
    wordcloud.WordCloud(width=400, height=320).generate_from_frequencies(freqs).to_file(path)
    return path


def draw_all_in_one(columns, path: str, bounds_by_stat: Optional[dict] = None) -> Optional[str]:
    """``all-stats.png``: each stat's two plots side by side, stats on a near-square grid."""
    if not columns:
        return None
    n = len(columns)
    per_row = max(1, round(math.sqrt(n)))
    rows = math.ceil(n / per_row)
    fig = _figure((per_row * 2 * 4, rows * 3.6), layout="constrained")
    grid = fig.add_gridspec(rows, per_row * 2)
    for i, col in enumerate(columns):
        r, c = divmod(i, per_row)
        a1 = fig.add_subplot(grid[r, 2 * c])
        a2 = fig.add_subplot(grid[r, 2 * c + 1])
        bounds = (bounds_by_stat or {}).get(col.name)
        if col.numeric:
            draw_hist(a1, col, bounds)
            draw_box(a2, col, bounds)
        else:
            draw_category_hist(a1, col, k=20)
            draw_topk(a2, col, k=10)
        a1.set_title(col.name, fontsize=10, fontweight="bold", loc="left")
    return _save(fig, path)


def correlation(columns, method: str = "pearson"):
    """Correlation matrix of the numeric stats (not meta tags), as Data-Juicer: list stats by their mean."""
    import pandas as pd

    data = {c.name: c.per_sample for c in columns if c.per_sample is not None and not c.is_meta}
    if not data:
        return None
    return pd.DataFrame(data).corr(method)


def draw_correlation(corr, path: str) -> Optional[str]:
    """``stats-corr-<method>.png``: annotated heatmap."""
    if corr is None or corr.empty:
        return None
    n = len(corr.columns)
    size = max(5.0, 0.9 * n + 3)
    # fixed margins sized from the longest stat name (~7.5 px a character at 10 pt), not a constrained
    # layout: that one lays the figure out in an extra draw pass, a third of the figure's cost
    label_px = 7.5 * max(len(str(c)) for c in corr.columns) + 24
    width_px, height_px = (size + 1.5) * DPI, size * DPI
    fig = _figure((size + 1.5, size), margins={"left": min(0.45, label_px / width_px), "right": 1 - 110 / width_px,
                                               "top": 1 - min(0.4, (0.6 * label_px + 14) / height_px),
                                               "bottom": 0.02})
    ax = fig.add_subplot()
    values = corr.to_numpy(dtype=float)
    im = ax.imshow(values, cmap="YlGn", vmin=-1, vmax=1)
    fig.colorbar(im, ax=ax, label="correlation coefficient", fraction=0.05, pad=0.03)
    ax.set_xticks(range(n), corr.columns, rotation=-35, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n), corr.index)
    ax.tick_params(top=True, bottom=False, labeltop=True, labelbottom=False)
    for i in range(n):
        for j in range(n):
            v = values[i, j]
            ax.text(j, i, "nan" if np.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if not np.isnan(v) and v > 0.5 else "black")
    return _save(fig, path)
