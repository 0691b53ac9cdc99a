import os
from typing import Literal, Optional, Union

from loguru import logger
from pydantic import NonNegativeInt, PositiveInt

from data_juicer.ops.base import OP
from data_juicer.ops.build import inherited_defaults
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("lineage_stage")
class LineageStage(OP):
    """Expands each sample into ordered children, runs per-child ops batched across samples, and
    reduces the children's results back to their sample, on the lineage engine (docs/lineage.md).

    A child is its sample with the text replaced by one piece (built-in ``expand``), a row of a
    fan-out mapper (``expand: {text_chunk_mapper: {max_len: 200}}``), or one clip / frame of a
    ``video_split_by_duration_mapper``, ``video_split_by_key_frame_mapper``,
    ``video_split_by_scene_mapper`` or ``video_extract_frames_mapper`` expand (its
    ``video_key`` / ``image_key`` holds that one clip or frame; ``children_key`` gets them). Child ops are registered
    mappers and filters, written like a ``process`` list; a filter drops the children it rejects.
    Each kept sample gets its surviving children (in order) in ``children_key`` and their stats in
    ``child_stats_key``. Children an op failed on go to the job's error ledger.

    :param expand: how a sample becomes children: ``paragraphs`` (split on blank lines), ``lines``
        (non-blank lines), ``chunks`` (``chunk_size`` characters each), or a fan-out mapper as
        ``{mapper_name: {params}}``
    :param child_ops: registered mappers and filters run on every child, as in ``process``
    :param chunk_size: characters per child for ``expand: chunks``
    :param children_key: field receiving a sample's surviving children in order (their text, their
        clip or frame for a video expand, or dicts of ``child_fields``); ``null`` to leave it out
    :param child_fields: child fields to keep in ``children_key`` instead of the text alone
    :param child_stats_key: field receiving the surviving children's stats in order; ``null`` to leave it out
    :param drop_parents: drop a sample when ``no_survivors`` (no child kept: all filtered or failed, or none),
        when ``all_failed`` (it had children and every one failed), or ``never``
    :param output: ``parents`` (one row per kept sample) or ``children`` (the surviving child rows, flat)
    :param batch_policy: ``any``: a child batch mixes samples; ``single``: one sample per batch
    :param on_error: a child op raising: ``split`` the batch down to the failing child and fail only it,
        ``fail`` the whole batch, or ``abort`` the run at the failing child (also when ``skip_op_error`` is false)
    :param retries: reruns of a batch that raised before ``on_error`` applies
    :param engine: ``local`` (in this process) or ``ray`` (one actor pool per child op)
    :param replicas: actors per child op when ``engine`` is ``ray``
    :param stream: pass each finished sample on to the per-sample ops after this stage in the
        recipe (mappers and filters up to the next dataset-level op) as soon as it is finished, so
        they do not wait for the slowest sample; the output is the same, in input order. ``false``:
        those ops start when the whole stage is done
    :param max_live_samples: samples held by the stage at once (read, not yet finished and handed
        on): the input is read a batch at a time and each sample's state is dropped as soon as it
        is finished, so the stage's memory does not grow with the dataset
    """

    extension = True  # ours, beyond Data-Juicer's catalogue

    op_type = "other"  # as Data-Juicer types the ops in ops/pipeline/
    modality = "general"
    exec_modes = ("default", "ray")

    def __init__(
        self,
        expand: Union[str, dict] = "paragraphs",
        child_ops: Optional[list[Union[str, dict]]] = None,
        chunk_size: PositiveInt = 512,
        children_key: Optional[str] = "children",
        child_fields: Optional[list[str]] = None,
        child_stats_key: Optional[str] = "children_stats",
        drop_parents: Literal["no_survivors", "all_failed", "never"] = "no_survivors",
        output: Literal["parents", "children"] = "parents",
        batch_policy: Literal["any", "single"] = "any",
        on_error: Literal["split", "fail", "abort"] = "split",
        retries: NonNegativeInt = 0,
        engine: Literal["local", "ray"] = "local",
        replicas: PositiveInt = 1,
        stream: bool = True,
        max_live_samples: PositiveInt = 1024,
        **kwargs,
    ):
        super().__init__(**kwargs)
        from data_juicer.ops.pipeline._lineage_fanout import FanOutStage

        self.stream = stream
        self.max_live_samples = max_live_samples
        self.stage = FanOutStage(
            expand, child_ops, text_key=self.text_key, chunk_size=chunk_size, children_key=children_key,
            child_fields=child_fields, child_stats_key=child_stats_key, drop_parents=drop_parents, output=output,
            batch_policy=batch_policy, on_error=on_error if self.skip_op_error else "abort", retries=retries,
            engine=engine, replicas=replicas, op_defaults=inherited_defaults(self))

    def process(self, dataset):
        """The stage's output as a dataset, in sample order. A dataset type that builds itself from
        row chunks (``from_row_chunks``, the Ray one) gets the rows as they come, in bounded
        bursts; the others are built from the whole list."""
        from_chunks = getattr(type(dataset), "from_row_chunks", None)
        if from_chunks is not None:
            def chunks():
                for burst in self.iter_bursts(dataset, order="input"):
                    rows = [r for _, rs in burst for r in rs]
                    if rows:
                        yield rows
            out = from_chunks(chunks())
            return out if len(out) else dataset.select([])
        rows: list = []
        for burst in self.iter_bursts(dataset):
            rows.extend(burst)
        rows.sort(key=lambda x: x[0])
        out = [r for _, rs in rows for r in rs]
        if not out:
            return dataset.select([])
        return type(dataset).from_rows(out)

    def iter_bursts(self, dataset, order: str = "completion"):
        """The stage's output as it comes: lists of ``(sample index, output rows)``, one list per
        burst of samples finished together (``order``: ``completion``, sort by index for input
        order; or ``input``). The samples are read from ``dataset`` a batch at a time and the
        engine forgets each one once it is finished, so at most ``max_live_samples`` are held at
        once. Failed children and samples go to the job's ledger (at the end; per burst with
        ``order='input'``)."""
        from data_juicer.lineage import LineageAbort
        from data_juicer.ops.pipeline._lineage_fanout import ledger_writer
        from data_juicer.utils.batch import iter_rows

        rows = (r for batch in dataset.iter_batches(self.batch_size) for r in iter_rows(batch))
        errors_path = os.path.join(self.work_dir, "errors.jsonl") if self.work_dir else None
        job_ledger = getattr(dataset, "ledger", None)  # the job's, passed in with the data (counted in summary.json)
        if job_ledger is not None:
            ledger, errors_path = job_ledger.record, job_ledger.path
        else:
            ledger = ledger_writer(errors_path) if errors_path else None
        try:
            yield from self.stage.iter_bursts(rows, ledger=ledger, order=order, window=self.max_live_samples)
        except LineageAbort as e:  # skip_op_error is off: stop like any other op, naming the sample
            from data_juicer.utils.errors import OpError

            path = e.keys[0].path
            sid = (self.stage.parent(path[0]) or {}).get("id", f"#{path[0]}")
            where = f"child {path[1]} of sample {sid!r}" if len(path) > 1 else f"sample {sid!r}"
            raise OpError(f"{self.name}/{e.call}", where, e.cause) from e
        r = self.stage.report
        logger.info(f"[{self.name}] {r.parents_in} samples -> {r.children} children ({r.children_kept} kept, "
                    f"{r.children_failed} failed) -> {r.rows_out} rows in {r.seconds:.2f}s "
                    f"(at most {r.peak_live_roots} samples held at once)")
        if r.children_failed and errors_path:
            logger.warning(f"[{self.name}] {r.children_failed} children failed; see {errors_path}")
