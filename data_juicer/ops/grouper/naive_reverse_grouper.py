import json
import os

from data_juicer.ops.base import Grouper
from data_juicer.ops.common.grouping import ungroup_rows
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


@OPERATORS.register_module("naive_reverse_grouper")
class NaiveReverseGrouper(Grouper):
    """Splits batched samples (rows whose fields are lists, as groupers make) back into
    individual samples, in order. The batched samples' ``__dj__batch_meta__`` (written by
    aggregators) is dropped, after being written to ``batch_meta_export_path`` as JSON lines
    (one per batched sample) when that is set. An empty dataset is returned as is."""

    def __init__(self, batch_meta_export_path=None, **kwargs):
        """
        :param batch_meta_export_path: file to write each batched sample's batch meta to, one
            JSON line each; None drops the batch meta
        """
        super().__init__(**kwargs)
        if batch_meta_export_path is not None and not isinstance(batch_meta_export_path, (str, os.PathLike)):
            raise ValueError(f"batch_meta_export_path must be a file path or None, got {batch_meta_export_path!r}")
        self.batch_meta_export_path = batch_meta_export_path

    def process(self, dataset):
        if len(dataset) == 0:
            return dataset
        has_meta = Fields.batch_meta in dataset.column_names
        result = ungroup_rows(dataset, drop=(Fields.batch_meta,))
        if self.batch_meta_export_path is not None:
            metas = dataset.arrow_column(Fields.batch_meta).to_pylist() if has_meta else []
            path = os.path.abspath(self.batch_meta_export_path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(m, ensure_ascii=False) + "\n" for m in metas)
        return result

    def run_ray(self, ds):
        """On Ray: every block unbatched in the workers; the batch meta export written per block,
        then its parts appended in order (nothing gathered on the driver)."""
        from data_juicer.ops.grouper._ray_groups import ungroup

        if ds.count() == 0:
            return ds
        return ungroup(ds, self.batch_meta_export_path)
