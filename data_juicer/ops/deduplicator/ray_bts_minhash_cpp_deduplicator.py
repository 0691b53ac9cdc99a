from typing import Annotated, Optional, Union

from pydantic import Field, PositiveInt

from data_juicer.ops.deduplicator.document_minhash_deduplicator import DocumentMinhashDeduplicator
from data_juicer.ops.deduplicator.ray_bts_minhash_deduplicator import _check_ray_params, _RayMinhashMixin
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("ray_bts_minhash_cpp_deduplicator")
class RayBTSMinhashCppDeduplicator(_RayMinhashMixin, DocumentMinhashDeduplicator):
    """``ray_bts_minhash_deduplicator`` under Data-Juicer's name for its C++-accelerated variant:
    the same signatures (compiled with numba when it is installed), bucket tables sharded over
    Ray actors, and the same kept samples as ``document_minhash_deduplicator``, which it runs as
    on the default executor. The BTS tuning parameters other than ``union_find_parallel_num``
    are accepted and have no effect.
    """

    exec_modes = ("default", "ray", "ray_partitioned")

    def __init__(
        self,
        tokenization: str = "space",
        window_size: PositiveInt = 5,
        lowercase: bool = True,
        ignore_pattern: Optional[str] = None,
        tokenizer_model: Optional[str] = None,
        num_permutations: PositiveInt = 256,
        jaccard_threshold: Annotated[float, Field(ge=0, le=1)] = 0.7,
        num_bands: Optional[PositiveInt] = None,
        num_rows_per_band: Optional[PositiveInt] = None,
        union_find_parallel_num: Union[int, str] = "auto",
        union_threshold: Optional[int] = 256,
        max_pending_edge_buffer_task: Optional[int] = 20,
        num_edge_buffer_task_returns: Optional[int] = 10,
        max_pending_filter_tasks: Optional[int] = 20,
        num_filter_task_returns: Optional[int] = 10,
        merge_batch_size: Optional[int] = 1000,
        **kwargs,
    ):
        """
        :param union_find_parallel_num: number of bucket-table actors, or ``auto`` (the cluster's
            CPUs, at most 16)
        :param union_threshold: accepted for compatibility (no effect)
        :param max_pending_edge_buffer_task: accepted for compatibility (no effect)
        :param num_edge_buffer_task_returns: accepted for compatibility (no effect)
        :param max_pending_filter_tasks: accepted for compatibility (no effect)
        :param num_filter_task_returns: accepted for compatibility (no effect)
        :param merge_batch_size: accepted for compatibility (no effect)
        """
        super().__init__(tokenization=tokenization, window_size=window_size, lowercase=lowercase,
                         ignore_pattern=ignore_pattern, num_permutations=num_permutations,
                         jaccard_threshold=jaccard_threshold, num_bands=num_bands, num_rows_per_band=num_rows_per_band,
                         tokenizer_model=tokenizer_model, **kwargs)
        _check_ray_params(self.name, union_find_parallel_num)
        self.union_find_parallel_num = union_find_parallel_num
        self.union_threshold = union_threshold
        self.max_pending_edge_buffer_task = max_pending_edge_buffer_task
        self.num_edge_buffer_task_returns = num_edge_buffer_task_returns
        self.max_pending_filter_tasks = max_pending_filter_tasks
        self.num_filter_task_returns = num_filter_task_returns
        self.merge_batch_size = merge_batch_size


# the MinHash parameters are documented once, on document_minhash_deduplicator
RayBTSMinhashCppDeduplicator.__init__.__doc__ = (DocumentMinhashDeduplicator.__init__.__doc__.rstrip() + "\n"
                                                    + RayBTSMinhashCppDeduplicator.__init__.__doc__)
