"""data_juicer: recipe-driven data processing for foundation models (Data-Juicer 1.6 recipes)."""

__version__ = "0.1.0"
from data_juicer.api import analyze, process  # noqa: E402,F401  (the Python API: docs/python-api.md)
