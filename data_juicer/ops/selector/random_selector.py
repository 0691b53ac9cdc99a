from typing import Annotated, Optional

import numpy as np
from pydantic import Field, PositiveInt

from data_juicer.ops.base import Selector
from data_juicer.ops.registry import OPERATORS

# Data-Juicer shuffles with this fixed seed, so a selection is reproducible run to run
SEED = 42


@OPERATORS.register_module("random_selector")
class RandomSelector(Selector):
    """Keeps a random subset of ``int(select_ratio * n)`` and/or ``select_num`` samples (the
    smaller wins when both are set), in shuffled order.

    The shuffle is fixed (seed 42, NumPy's default generator), giving exactly the samples
    Data-Juicer 1.6 keeps. Its quirks are kept too: a selection that rounds to 0 samples keeps
    the whole dataset, and a ``select_num`` above the dataset size repeats samples (the whole
    shuffled dataset, again, then its first rows)."""

    def __init__(self, select_ratio: Optional[Annotated[float, Field(ge=0, le=1)]] = None,
                 select_num: Optional[PositiveInt] = None, **kwargs):
        """
        :param select_ratio: the fraction of samples to keep
        :param select_num: the number of samples to keep
        """
        super().__init__(**kwargs)
        self.select_ratio = select_ratio
        self.select_num = select_num

    def process(self, dataset):
        n = len(dataset)
        if n <= 1 or (self.select_ratio is None and self.select_num is None):
            return dataset
        if not self.select_ratio:  # a ratio of 0 counts as unset
            if self.select_num is None:
                return dataset
            k = self.select_num
        else:
            k = int(self.select_ratio * n)
            if self.select_num and self.select_num < k:
                k = self.select_num
        if k <= 0 or k == n:
            return dataset
        order = np.random.default_rng(SEED).permutation(n)
        if k > n:
            order = np.concatenate([np.tile(order, k // n), order[:k % n]])
        return dataset.select(order[:k])
