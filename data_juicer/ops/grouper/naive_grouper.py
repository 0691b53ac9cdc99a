from data_juicer.ops.base import Grouper
from data_juicer.ops.common.grouping import group_rows
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("naive_grouper")
class NaiveGrouper(Grouper):
    """Groups the whole dataset into one batched sample: a single row whose every field is the
    list of that field's values over all samples, in order. An empty dataset stays empty."""

    def process(self, dataset):
        if len(dataset) == 0:
            return dataset
        return group_rows(dataset, [range(len(dataset))])
