"""Operator base classes: the op contract every operator and both backends share.

An op is configured only through its constructor's typed signature (that is the recipe schema).
The parameters common to every op are declared here once, keyword-only and typed; a subclass
adds its own parameters and forwards ``**kwargs`` to its base.

Row-wise ops (Mapper, Filter, and a Deduplicator's hashing) work on columnar batches
``dict[str, list]``; dataset-level ops (Deduplicator.process, Selector, Grouper) work on the
dataset facade. See DESIGN.md "The op contract".
"""


from typing import Any, ClassVar, Iterable, Literal, Optional, Union

from pydantic import PositiveInt

from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.batch import iter_rows, rows_to_batch, take_mask
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import MissingDependencyError, is_available, module_name

__all__ = ["OP", "Mapper", "Filter", "Deduplicator", "Selector", "Grouper", "Aggregator", "OPERATORS"]


class OP:
    """Base of all operators.

    Class attributes an op may set:
      ``modality``  text | image | audio | video | multimodal | general
      ``requires``  pip distributions the op imports (checked when the op is built)
      ``uses``      shared intermediate values it can reuse through ``__dj__context__``
      ``fan_out``   a mapper that may return more rows than it got
    """

    _name: ClassVar[str] = ""
    _accelerator: ClassVar[str] = "cpu"
    _batched_op: ClassVar[bool] = True
    op_type: ClassVar[str] = "op"
    modality: ClassVar[str] = "text"
    requires: ClassVar[tuple[str, ...]] = ()
    uses: ClassVar[tuple[str, ...]] = ()
    fan_out: ClassVar[bool] = False
    # executors an op can run on; a Ray recipe with an op lacking "ray" fails at validation
    exec_modes: ClassVar[tuple[str, ...]] = ("default", "ray", "ray_partitioned")
    # hooks the executors read (declared here with their defaults; an op overrides what it needs):
    # loads a model: on Ray its passes run in an actor pool, built once per actor
    uses_model: ClassVar[bool] = False
    # a filter whose place among neighbouring filters does not change the output (op_fusion may reorder it)
    commutable: ClassVar[bool] = True
    # the recipe's use_cache: ops that call a model service cache their responses under work_dir
    use_cache: bool = False

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        # the keyword arguments it was built with (the pass cache's fingerprint is made of them)
        self._init_params = dict(kwargs)
        return self

    def __init__(
        self,
        *,
        text_key: str = "text",
        image_key: str = "images",
        audio_key: str = "audios",
        video_key: str = "videos",
        image_bytes_key: str = "image_bytes",
        system_key: str = "system",
        instruction_key: str = "instruction",
        prompt_key: str = "prompt",
        query_key: str = "query",
        response_key: str = "response",
        history_key: str = "history",
        index_key: Optional[str] = None,
        batch_size: PositiveInt = 1000,
        num_proc: Optional[int] = None,
        accelerator: Optional[Literal["cpu", "cuda"]] = None,
        num_cpus: Optional[float] = None,
        num_gpus: Optional[float] = None,
        memory: Union[str, float, None] = None,
        skip_op_error: bool = True,
        turbo: bool = False,
        work_dir: Optional[str] = None,
        input_columns: Optional[list[str]] = None,
        output_columns: Optional[list[str]] = None,
        auto_op_parallelism: bool = True,
        adaptive_batching: Optional[bool] = None,
        batch_mode: Optional[bool] = None,
        runtime_env: Optional[dict] = None,
        ray_execution_mode: Optional[Literal["actor", "task"]] = None,
        cpu_required: Optional[float] = None,
        gpu_required: Optional[float] = None,
        mem_required: Union[str, float, None] = None,
    ):
        """
        :param text_key: field holding the text to process
        :param image_key: field holding the list of image paths
        :param audio_key: field holding the list of audio paths
        :param video_key: field holding the list of video paths
        :param image_bytes_key: field holding raw image bytes
        :param system_key: field of the system prompt (dialog data)
        :param instruction_key: field of the instruction (dialog data)
        :param prompt_key: field of the prompt
        :param query_key: field of the query (dialog data)
        :param response_key: field of the response (dialog data)
        :param history_key: field of the dialog history
        :param index_key: field holding a sample index, if any
        :param batch_size: samples per batch
        :param num_proc: worker processes for this op (default: the recipe's ``np``)
        :param accelerator: ``cpu`` or ``cuda`` (default: the op's own)
        :param num_cpus: CPUs per worker
        :param num_gpus: GPUs per worker
        :param memory: memory per worker, bytes or a size like ``1500MB``
        :param skip_op_error: record a failing sample in the error ledger and go on
        :param turbo: accepted for compatibility; batches are always used here
        :param work_dir: job folder (set by the executor)
        :param input_columns: columns the op reads (informational)
        :param output_columns: columns the op writes (informational)
        :param auto_op_parallelism: size workers from the op's resources
        :param adaptive_batching: accepted for compatibility
        :param batch_mode: accepted for compatibility
        :param runtime_env: Ray runtime environment for this op
        :param ray_execution_mode: ``actor`` or ``task`` on Ray
        :param cpu_required: deprecated alias of ``num_cpus``
        :param gpu_required: deprecated alias of ``num_gpus``
        :param mem_required: deprecated alias of ``memory``
        """
        self.text_key = text_key
        self.image_key = image_key
        self.audio_key = audio_key
        self.video_key = video_key
        self.image_bytes_key = image_bytes_key
        self.system_key = system_key
        self.instruction_key = instruction_key
        self.prompt_key = prompt_key
        self.query_key = query_key
        self.response_key = response_key
        self.history_key = history_key
        self.index_key = index_key
        self.batch_size = batch_size
        self.num_proc = num_proc
        self.accelerator = accelerator or self._accelerator
        self.num_cpus = num_cpus if num_cpus is not None else cpu_required
        self.num_gpus = num_gpus if num_gpus is not None else gpu_required
        self.memory = memory if memory is not None else mem_required
        self.skip_op_error = skip_op_error
        self.turbo = turbo
        self.work_dir = work_dir
        self.input_columns = input_columns
        self.output_columns = output_columns
        self.auto_op_parallelism = auto_op_parallelism
        self.runtime_env = runtime_env
        self.ray_execution_mode = ray_execution_mode
        self.check_requirements()

    # -- identity and declared needs -------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name or type(self).__name__

    @classmethod
    def required_packages(cls, params: dict) -> tuple[str, ...]:
        """pip distributions this op needs with these parameters (``dj-install`` reads it)."""
        return tuple(cls.requires)

    @classmethod
    def missing_requirements(cls) -> list[str]:
        return [d for d in cls.requires if not is_available(d)]

    def check_requirements(self) -> None:
        missing = self.missing_requirements()
        if missing:
            pkgs = " ".join(f"'{d}'" for d in missing)
            raise MissingDependencyError(
                f"operator '{self.name}' needs {', '.join(missing)} "
                f"(import {', '.join(module_name(d) for d in missing)}), which is not installed. "
                f"Install it with `pip install {pkgs}` or `dj-install --config <your recipe>`."
            )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    @property
    def init_params(self) -> dict:
        """The keyword arguments this op was built with."""
        return self.__dict__.get("_init_params", {})

    @property
    def recipe_ops(self) -> int:
        """How many recipe entries this op stands for (a fused filter: its members)."""
        return 1

    def fields_read(self) -> Optional[set]:
        """Top-level fields this op reads, when it knows them (None: any field). With the fields a
        mapper writes, the adapter may move a filter ahead of a mapper it cannot depend on."""
        return None

    def run_ray(self, ds):
        """A dataset-level op's own Ray implementation: a ``ray.data.Dataset`` in, one out. The
        default, None, means "no Ray-specific path": ``process`` runs on the Ray dataset facade."""
        return None

    # -- the row-wise entry point the executors call ---------------------------------------
    def run_batch(self, samples: dict[str, list]) -> dict[str, list]:
        """Apply this op to one batch inside an execution pass."""
        raise NotImplementedError(f"{self.name} is not a row-wise op")

    @property
    def is_row_wise(self) -> bool:
        return False


class Mapper(OP):
    """Edits samples. Implement ``process_batched`` (fast) or ``process_single``."""

    op_type = "mapper"
    # a mapper that only rewrites the field named by ``text_key`` (no new, dropped or other fields)
    writes_text_only: ClassVar[bool] = False

    def fields_written(self) -> Optional[set]:
        """Top-level fields this mapper may change (None: any field)."""
        return None if not self.writes_text_only or self.fan_out else {self.text_key.split(".")[0]}

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        if type(self).process_single is Mapper.process_single:
            raise NotImplementedError(f"{self.name} implements neither process_batched nor process_single")
        if self.fan_out:
            out: list[dict] = []
            for row in iter_rows(samples):
                res = self.process_single(row)
                out.extend(res if isinstance(res, list) else [res])
            return rows_to_batch(out, keys=samples.keys() if not out else None)
        return rows_to_batch([self.process_single(r) for r in iter_rows(samples)], keys=None) if samples else samples

    def process_single(self, sample: dict) -> dict | list[dict]:
        raise NotImplementedError

    def run_batch(self, samples):
        return self.process_batched(samples)

    @property
    def is_row_wise(self) -> bool:
        return True


class Filter(OP):
    """Scores samples into ``__dj__stats__`` (``compute_stats_*``), then decides (``process_*``).

    Scoring is kept apart from deciding so ``dj-analyze`` runs the same scoring code without
    dropping anything, and a stat already present is reused, not recomputed.
    """

    op_type = "filter"

    def __init__(
        self,
        *,
        min_closed_interval: bool = True,
        max_closed_interval: bool = True,
        reversed_range: bool = False,
        stats_export_path: Optional[str] = None,
        **kwargs: Any,
    ):
        """
        :param min_closed_interval: keep a value equal to the lower bound
        :param max_closed_interval: keep a value equal to the upper bound
        :param reversed_range: keep what is outside the range instead
        :param stats_export_path: accepted for compatibility; stats go to ``<export>_stats.jsonl``
        """
        super().__init__(**kwargs)
        # reversing the range also flips its ends, so the bounds themselves stay kept (as Data-Juicer)
        self.min_closed_interval = min_closed_interval != reversed_range
        self.max_closed_interval = max_closed_interval != reversed_range
        self.reversed_range = reversed_range
        self.stats_export_path = stats_export_path

    def get_keep_boolean(self, val, min_val=None, max_val=None) -> bool:
        keep = True
        if min_val is not None:
            keep = val >= min_val if self.min_closed_interval else val > min_val
        if keep and max_val is not None:
            keep = val <= max_val if self.max_closed_interval else val < max_val
        return not keep if self.reversed_range else keep

    def compute_stats_batched(self, samples: dict[str, list], context: bool = False) -> dict[str, list]:
        if type(self).compute_stats_single is Filter.compute_stats_single:
            raise NotImplementedError(f"{self.name} implements neither compute_stats_batched nor compute_stats_single")
        keys = list(samples)
        stats = samples[Fields.stats]
        ctx = samples.get(Fields.context) if context else None
        for i in range(len(stats)):
            row = {k: samples[k][i] for k in keys}
            res = self.compute_stats_single(row, context=context) if ctx is not None else self.compute_stats_single(row)
            stats[i] = res[Fields.stats]
            if ctx is not None:
                ctx[i] = res.get(Fields.context, ctx[i])
        return samples

    def compute_stats_single(self, sample: dict, context: bool = False) -> dict:
        raise NotImplementedError

    def score_batch(self, samples: dict[str, list]) -> dict[str, list]:
        """``compute_stats_batched`` as every caller runs it: an op that declares ``uses`` gets
        ``context`` (whether ``__dj__context__`` is there to share intermediate values), the
        others are called with the batch alone (both signatures of the op contract work)."""
        if self.uses:
            out = self.compute_stats_batched(samples, context=Fields.context in samples)
        else:
            out = self.compute_stats_batched(samples)
        return samples if out is None else out

    def process_batched(self, samples: dict[str, list]) -> Iterable[bool]:
        return [self.process_single({Fields.stats: s}) for s in samples[Fields.stats]]

    def process_single(self, sample: dict) -> bool:
        raise NotImplementedError

    def decide_batch(self, samples: dict[str, list]) -> tuple[dict[str, list], list[bool]]:
        """Score a batch and decide: (the batch with its stats, keep flag per row)."""
        stats = samples.get(Fields.stats)
        n = len(next(iter(samples.values()))) if samples else 0
        if stats is None:
            samples[Fields.stats] = [{} for _ in range(n)]
        elif any(s is None for s in stats):
            samples[Fields.stats] = [{} if s is None else s for s in stats]
        return self.score_batch(samples), list(self.process_batched(samples))

    def run_batch(self, samples):
        samples, keep = self.decide_batch(samples)
        return samples if all(keep) else take_mask(samples, keep)

    @property
    def is_row_wise(self) -> bool:
        return True


class Deduplicator(OP):
    """Hashes samples row-wise (``compute_hash``), then removes duplicates over the dataset."""

    op_type = "deduplicator"
    exec_modes = ("default", "ray")  # on Ray: run_ray, or process() on the Ray dataset facade

    def compute_hash(self, samples: dict[str, list]) -> dict[str, list]:
        raise NotImplementedError

    def hash_inputs(self) -> Optional[list[str]]:
        """The only columns ``compute_hash`` reads, if known: then a hashing pass of its own reads
        just those and keeps the hashes beside the data instead of rewriting every column."""
        return None

    def run_batch(self, samples):
        return self.compute_hash(samples)

    def process(self, dataset, show_num: int = 0):
        """Return ``(deduplicated dataset, {hash: [dup samples]} for up to show_num pairs)``."""
        raise NotImplementedError


class Selector(OP):
    """Keeps a subset of the dataset chosen with a view of all samples."""

    op_type = "selector"
    modality = "general"
    exec_modes = ("default", "ray")  # on Ray: process() on the Ray dataset facade

    def process(self, dataset):
        raise NotImplementedError


class Grouper(OP):
    """Groups samples into batched samples (one row per group, each field a list)."""

    op_type = "grouper"
    modality = "general"
    exec_modes = ("default", "ray")  # on Ray: process() on the Ray dataset facade

    def process(self, dataset):
        raise NotImplementedError


class Aggregator(OP):
    """Summarises one grouped sample into ``__dj__batch_meta__``."""

    op_type = "aggregator"
    exec_modes = ("default", "ray")

    def process_single(self, sample: dict) -> dict:
        raise NotImplementedError

    def run_batch(self, samples):
        return rows_to_batch([self.process_single(r) for r in iter_rows(samples)]) if samples else samples

    @property
    def is_row_wise(self) -> bool:
        return True


OP_TYPES = {"mapper": Mapper, "filter": Filter, "deduplicator": Deduplicator, "selector": Selector,
            "grouper": Grouper, "aggregator": Aggregator}
