"""data_juicer: recipe-driven data processing for foundation models (Data-Juicer 1.6 recipes)."""

__version__ = "0.1.0"
