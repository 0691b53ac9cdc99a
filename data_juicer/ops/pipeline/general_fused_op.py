from typing import List, Optional

from data_juicer.ops.build import inherited_defaults
from data_juicer.ops.fused import SequentialOps, build_op_list
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("general_fused_op")
class GeneralFusedOP(SequentialOps):
    """User-declared fusion: runs the listed mappers and filters one after another on each batch,
    in a single pass over the data (a filter drops its rejected rows before the next op runs).
    Each entry is written as in a recipe's ``process`` list and validated the same way."""

    def __init__(self, batch_size: int = 1, fused_op_list: Optional[List] = None, **kwargs):
        """
        :param batch_size: samples per batch
        :param fused_op_list: the ops to run, as recipe entries (``- words_num_filter: {min_num: 5}``)
        """
        super().__init__(batch_size=batch_size, **kwargs)
        self.fused_op_list = fused_op_list
        self._setup(build_op_list(fused_op_list, "general_fused_op.fused_op_list", inherited_defaults(self)), "general_fused_op")
