"""Analysis of the statistics ``dj-analyze`` computes: tables, plots and an HTML report.

- :mod:`~data_juicer.analysis.columns`: the stats (and ``__dj__`` meta tags) of a dataset as
  vectorised columns, straight from Arrow.
- :mod:`~data_juicer.analysis.overall`: ``overall.csv`` / ``overall.md`` (pandas ``describe`` per stat).
- :mod:`~data_juicer.analysis.plots`: ``<stat>-hist.png``, ``<stat>-box.png``, top-k bars,
  ``stats-corr-pearson.png`` and ``all-stats.png`` (matplotlib, Agg, imported only when drawing).
- :mod:`~data_juicer.analysis.thresholds`: what each filter of the recipe would drop, decided by the
  filters' own ``process_batched``.
- :mod:`~data_juicer.analysis.report`: one self-contained ``report.html``.

Importing this package is light: pandas and matplotlib are imported by the functions that need them.
"""
