from typing import Any, Dict, List, Optional

from data_juicer.ops.build import inherited_defaults
from data_juicer.ops.fused import SequentialOps, build_op_list
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("fused_sequential_batch_op")
class FusedSequentialBatchOp(SequentialOps):
    """Runs several batch-local mappers/filters sequentially inside one stage (one pass), then
    drops the helper columns named in ``cleanup_columns``. Ops come from ``op_specs`` (recipe
    entries) and/or ``fused_ops`` (already built op objects, from the Python API)."""

    def __init__(self, op_specs: Optional[List[Dict[str, Any]]] = None, fused_ops: Optional[List[Any]] = None,
                 group_name: str = "", cleanup_columns: Optional[List[str]] = None, **kwargs):
        """
        :param op_specs: the ops to run, as recipe entries (``{op_name: {params}}``)
        :param fused_ops: already built op objects to run after those of ``op_specs``
        :param group_name: a label for the group in logs and reports
        :param cleanup_columns: columns removed from the batch after the last op
        """
        super().__init__(**kwargs)
        self.op_specs, self.fused_ops, self.group_name = op_specs, fused_ops, group_name
        ops = build_op_list(op_specs, "fused_sequential_batch_op.op_specs", inherited_defaults(self)) + \
            build_op_list(fused_ops, "fused_sequential_batch_op.fused_ops", inherited_defaults(self))
        self._setup(ops, group_name or "fused_sequential_batch_op", cleanup_columns)
