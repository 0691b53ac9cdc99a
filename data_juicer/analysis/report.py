"""``analysis/report.html``: one self-contained page (plots embedded as base64 PNG, no external
resources) with the recipe, what each filter threshold would drop, and a table and the plots
of every stat."""

from __future__ import annotations

import base64
import html
import math
import os
from datetime import datetime, timezone
from typing import Optional

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d2733;background:#f5f7fa}
header{background:#1f3b5a;color:#fff;padding:18px 28px}header h1{margin:0 0 6px;font-size:22px}
header p{margin:2px 0;font-size:13px;opacity:.9}main{padding:18px 28px;max-width:1400px}
section{background:#fff;border:1px solid #dde3ea;border-radius:6px;padding:14px 18px;margin:0 0 18px}
h2{font-size:18px;margin:0 0 10px}h3{font-size:16px;margin:0 0 8px}
table{border-collapse:collapse;font-size:13px;margin:6px 0 10px}
th,td{border:1px solid #dde3ea;padding:4px 9px;text-align:right}th{background:#eef2f6}
td.l,th.l{text-align:left}.bar{display:inline-block;height:10px;background:#c0392b;vertical-align:middle}
.plots{display:flex;flex-wrap:wrap;gap:10px}.plots img{max-width:100%;width:480px;border:1px solid #e4e8ee}
.stat{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}.note{color:#555;font-size:13px}
pre{background:#f0f3f6;padding:10px;overflow:auto;font-size:12px}nav a{margin-right:10px;font-size:13px}
"""


def _img(path: Optional[str], alt: str) -> str:
    if not path or not os.path.isfile(path):
        return ""
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    name = html.escape(os.path.basename(path))
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" title="{name}" data-file="{name}">'


def _num(v) -> str:
    if isinstance(v, str):
        return html.escape(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return html.escape(str(v))
    if math.isnan(f):
        return ""
    if f == int(f) and abs(f) < 1e15:
        return f"{int(f):,}"
    return f"{f:.6g}"


def _stat_table(series) -> str:
    rows = "".join(f'<tr><th class="l">{html.escape(str(k))}</th><td>{_num(v)}</td></tr>'
                   for k, v in series.items() if not (isinstance(v, float) and math.isnan(v)))
    return f"<table>{rows}</table>"


def _drops_section(drops, combined_keep, n: int) -> str:
    if not drops:
        return ('<section id="thresholds"><h2>Filter thresholds</h2>'
                '<p class="note">The recipe has no filter.</p></section>')
    rows = []
    for d in drops:
        if d.dropped is None:
            share = f'<td colspan="2" class="l">cannot tell: {html.escape(d.error or "")}</td>'
        else:
            pct = 100 * d.rate
            share = (f'<td>{pct:.1f}% <span class="bar" style="width:{max(1, round(pct))}px"></span></td>'
                     f"<td>{d.dropped:,} of {d.total:,}</td>")
        rows.append(f'<tr><td class="l">{html.escape(d.op)}</td><td class="l">{html.escape(d.settings_text())}</td>'
                    f'<td class="l">{html.escape(", ".join(d.stat_keys))}</td>{share}</tr>')
    sentences = "".join(f"<li>{html.escape(d.sentence())}</li>" for d in drops)
    together = ""
    if combined_keep is not None and n:
        dropped = int(n - combined_keep.sum())
        together = (f"<p><b>All filters together would drop {100 * dropped / n:.1f}% "
                    f"({dropped:,} of {n:,})</b> of the analysed samples.</p>")
    return (
        '<section id="thresholds"><h2>What each filter threshold would drop</h2>'
        '<p class="note">Decided by each filter\'s own code on the computed stats (as dj-process decides), '
        "each filter on all analysed samples, before the recipe's mappers.</p>"
        f"<ul>{sentences}</ul>{together}"
        '<table><tr><th class="l">filter</th><th class="l">settings</th><th class="l">stats</th>'
        f'<th>would drop</th><th>samples</th></tr>{"".join(rows)}</table></section>')


def write_report(path: str, *, columns, overall, plots: dict, drops, combined_keep, n_samples: int,
                 corr_plot: Optional[str] = None, all_plot: Optional[str] = None, recipe_text: str = "",
                 dataset: str = "", seconds: Optional[float] = None, title: str = "Data analysis") -> str:
    """Write the report; ``plots`` maps stat name -> {kind: png path}."""
    by_stat: dict[str, list] = {}
    for d in drops or []:
        for k in d.stat_keys:
            by_stat.setdefault(k, []).append(d)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    parts = [
        f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
        f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><style>{_CSS}</style></head><body>",
        f"<header><h1>{html.escape(title)}</h1><p>{n_samples:,} samples from {html.escape(dataset)}</p>"
        f"<p>{len(columns)} statistics, computed{took}; generated {now} by dj-analyze</p></header><main>",
        "<nav>" + "".join(f'<a href="#stat-{html.escape(c.name)}">{html.escape(c.name)}</a>' for c in columns)
        + '<a href="#correlation">correlation</a><a href="#recipe">recipe</a></nav><br>',
        _drops_section(drops, combined_keep, n_samples),
    ]
    for c in columns:
        notes = "".join(f"<li>{html.escape(d.sentence())}</li>" for d in by_stat.get(c.name, []))
        kind = c.kind + (" list (values flattened)" if c.is_list else "") + (" meta tag" if c.is_meta else "")
        imgs = "".join(_img(p, f"{c.name} {k}") for k, p in (plots.get(c.name) or {}).items())
        table = _stat_table(overall[c.name]) if c.name in getattr(overall, "columns", []) else ""
        parts.append(
            f'<section id="stat-{html.escape(c.name)}"><h2>{html.escape(c.name)}</h2>'
            f'<p class="note">{html.escape(kind)}</p>'
            f'<div class="stat"><div>{table}{f"<ul>{notes}</ul>" if notes else ""}</div>'
            f'<div class="plots">{imgs}</div></div></section>')
    corr_img = _img(corr_plot, "correlation of the stats")
    parts.append('<section id="correlation"><h2>Correlation of the numeric stats (Pearson)</h2>'
                 + (f'<div class="plots">{corr_img}</div>' if corr_img else '<p class="note">No numeric stats.</p>')
                 + "</section>")
    if all_plot:
        parts.append(f'<section id="all-stats"><h2>All stats</h2><div class="plots">'
                     f'{_img(all_plot, "all stats")}</div></section>')
    parts.append(f'<section id="recipe"><h2>Recipe</h2><pre>{html.escape(recipe_text)}</pre></section>')
    parts.append("</main></body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path
