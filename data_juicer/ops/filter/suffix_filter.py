from typing import List, Union

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


@OPERATORS.register_module("suffix_filter")
class SuffixFilter(Filter):
    """Keeps samples whose source-file suffix (the ``__dj__suffix__`` field the loader adds,
    e.g. ``.jsonl``) is one of ``suffixes``; with no suffixes every sample is kept.
    ``reversed_range`` keeps the other suffixes instead. Writes no stats."""

    modality = "general"

    def __init__(self, suffixes: Union[str, List[str]] = [], **kwargs):
        """
        :param suffixes: the suffix or suffixes to keep, compared exactly as written
            (e.g. ``.txt`` or ``['.txt', '.pdf']``)
        """
        super().__init__(**kwargs)
        if suffixes is None:
            suffixes = []
        self.suffixes = [suffixes] if isinstance(suffixes, str) else list(suffixes)
        self._allowed = frozenset(self.suffixes)

    def compute_stats_batched(self, samples):
        return samples

    def process_batched(self, samples):
        n = len(samples[Fields.stats])
        if not self._allowed:
            return [True] * n
        if Fields.suffix not in samples:
            raise KeyError(f"{self.name}: the samples have no '{Fields.suffix}' field, which the loader "
                           f"adds with each file's suffix; load the data from files, or add the field.")
        flip = self.reversed_range
        return [(s in self._allowed) != flip for s in samples[Fields.suffix]]
