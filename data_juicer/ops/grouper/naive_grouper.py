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

    def run_ray(self, ds):
        """On Ray: the one batched row is built in a worker from the merged blocks, not on the driver."""
        from data_juicer.ops.grouper._ray_groups import group_all

        if ds.count() == 0:
            return ds
        return group_all(ds)
