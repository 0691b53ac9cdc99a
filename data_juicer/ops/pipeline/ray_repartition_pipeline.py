from data_juicer.ops.base import OP
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("ray_repartition_pipeline")
class RayRepartitionPipeline(OP):
    """Repartitions a Ray Dataset into ``num_blocks`` blocks (optionally shuffling rows between
    them) with Ray Data's ``repartition``. Ray executor only: a local dataset has no blocks, so a
    recipe using it with the default executor is rejected when it is validated, before any data
    is read (Data-Juicer fails at run time)."""

    op_type = "other"
    modality = "general"
    exec_modes = ("ray", "ray_partitioned")

    def __init__(self, num_blocks: int = 1, shuffle: bool = False, **kwargs):
        """
        :param num_blocks: target number of Ray Dataset blocks (a positive integer)
        :param shuffle: shuffle the records while repartitioning
        """
        super().__init__(**kwargs)
        if not isinstance(num_blocks, int) or isinstance(num_blocks, bool) or num_blocks <= 0:
            raise ValueError(f"ray_repartition_pipeline: num_blocks must be a positive integer, got {num_blocks!r}")
        self.num_blocks = num_blocks
        self.shuffle = bool(shuffle)

    def run_ray(self, ds):
        """``ds`` (a ``ray.data.Dataset``) in ``num_blocks`` blocks."""
        return ds.repartition(self.num_blocks, shuffle=self.shuffle)

    def process(self, dataset):
        raise RuntimeError("ray_repartition_pipeline needs executor_type: ray (a local dataset has no blocks)")
