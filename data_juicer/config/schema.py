"""The global recipe keys (Data-Juicer 1.6.1 names and defaults) as a jsonargparse parser."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from jsonargparse import ActionConfigFile, ArgumentParser
from jsonargparse.typing import ClosedUnitInterval, NonNegativeInt, PositiveInt

# (key, type, default, help) — order follows Data-Juicer's config for easy comparison
GLOBAL_KEYS: list[tuple[str, Any, Any, str]] = [
    ("project_name", str, "hello_world", "name of the project (a label)"),
    ("executor_type", Literal["default", "ray", "ray_partitioned"], "default",
     "`default` runs on Hugging Face datasets; `ray` on a Ray cluster"),
    ("strict_preflight", bool, True, "validate ops and data schema before running"),
    ("dataset_path", str, "", "data file or folder, or a weighted mix `w1 path1 w2 path2`"),
    ("dataset", Optional[Union[Dict, List[Dict]]], None, "dataset configs: {configs: [{type: local, path, weight}], "
                                                          "max_sample_num}"),
    ("generated_dataset_config", Optional[Dict], None, "config of a formatter that generates the dataset"),
    ("validators", List[Dict], [], "validators run on the loaded data"),
    ("load_dataset_kwargs", Dict, {}, "extra keyword arguments for datasets.load_dataset"),
    ("load_jsonl_lenient", bool, False, "skip malformed JSONL lines (they go to the error ledger)"),
    ("read_options", Dict, {}, "Ray: pyarrow JSON read options"),
    ("override_num_blocks", Optional[int], None, "Ray: read parallelism"),
    ("work_dir", Optional[str], None, "base folder of job folders (default: the export folder)"),
    ("export_path", str, "./outputs/hello_world/hello_world.jsonl", "result file; its suffix sets the format"),
    ("export_type", Optional[str], None, "force the export format: jsonl, json or parquet"),
    ("export_shard_size", NonNegativeInt, 0, "bytes per output shard; 0 writes one file"),
    ("export_in_parallel", bool, False, "write output shards in parallel"),
    ("export_extra_args", Dict, {}, "extra exporter arguments"),
    ("export_aws_credentials", Optional[Dict], None, "credentials for S3 export"),
    ("decrypt_after_reading", bool, False, "decrypt input files in memory after reading"),
    ("encrypt_before_export", bool, False, "encrypt output files"),
    ("encryption_key_path", Optional[str], None, "Fernet key file"),
    ("keep_stats_in_res_ds", bool, False, "keep __dj__stats__ and __dj__meta__ in the result"),
    ("keep_hashes_in_res_ds", bool, False, "keep dedup hash columns in the result"),
    ("text_keys", Union[str, List[str]], "text", "text field(s); the first one is each op's text_key"),
    ("image_key", str, "images", "field of image paths"),
    ("image_bytes_key", str, "image_bytes", "field of image bytes"),
    ("image_special_token", str, "<__dj__image>", "placeholder of an image in the text"),
    ("audio_key", str, "audios", "field of audio paths"),
    ("audio_special_token", str, "<__dj__audio>", "placeholder of an audio in the text"),
    ("video_key", str, "videos", "field of video paths"),
    ("video_special_token", str, "<__dj__video>", "placeholder of a video in the text"),
    ("eoc_special_token", str, "<|__dj__eoc|>", "end-of-chunk marker in the text"),
    ("suffixes", Optional[Union[str, List[str]]], [], "only load files with these suffixes"),
    ("turbo", bool, False, "compatibility flag; batches are always used"),
    ("skip_op_error", bool, True, "record samples an op fails on in the error ledger and go on"),
    ("use_cache", bool, True, "reuse Hugging Face datasets cache files"),
    ("ds_cache_dir", Optional[str], None, "datasets cache folder (default HF_DATASETS_CACHE)"),
    ("cache_compress", Optional[Literal["gzip", "zstd", "lz4"]], None, "compress cache files between ops"),
    ("open_monitor", bool, False, "monitor resources per op"),
    ("use_checkpoint", bool, False, "save the dataset after ops and resume from it"),
    ("event_log_dir", Optional[str], None, "folder of logs (default: <job folder>/logs)"),
    ("checkpoint_dir", Optional[str], None, "folder of checkpoints (default: <job folder>/checkpoints)"),
    ("job_id", Optional[str], None, "job id (default: YYYYMMDD_HHMMSS_<6 hex>)"),
    ("resume", Optional[str], None, "ray_partitioned: resume this job id"),
    ("temp_dir", Optional[str], None, "temporary folder when the cache is off"),
    ("open_tracer", bool, False, "record samples changed or removed by each op"),
    ("op_list_to_trace", List[str], [], "ops to trace (empty: all)"),
    ("trace_num", PositiveInt, 10, "samples recorded per op"),
    ("trace_keys", List[str], [], "extra fields copied into trace entries"),
    ("open_insight_mining", bool, False, "per-op statistics shift analysis"),
    ("op_list_to_mine", List[str], [], "ops to mine (empty: all)"),
    ("min_common_dep_num_to_combine", int, -1, "Ray: runtime_env merging"),
    ("conflict_resolve_strategy", str, "split", "Ray: runtime_env conflict strategy"),
    ("op_fusion", bool, False, "fuse filters that share intermediate values"),
    ("fusion_strategy", Literal["greedy", "probe"], "probe", "how fused filters are ordered"),
    ("mapper_fusion", bool, True, "fuse opted-in GPU mappers (with op_fusion)"),
    ("mapper_fusion_vram_limit", float, 0.9, "VRAM budget of fused mappers"),
    ("adaptive_batch_size", bool, False, "size batches from a probe run"),
    ("process", Optional[List[Any]], None, "the ops, in order: a list of {op_name: {param: value}}"),
    ("percentiles", List[float], [], "extra percentiles in analysis"),
    ("export_original_dataset", bool, False, "analysis: also export the data with stats"),
    ("save_stats_in_one_file", bool, False, "analysis: one combined figure"),
    ("np", PositiveInt, 4, "worker processes (clamped to the CPUs there are)"),
    ("auto_op_parallelism", bool, True, "size each op's workers from its resources"),
    ("ray_address", str, "auto", "Ray cluster address"),
    ("partition", Optional[Dict], None, "ray_partitioned: partition settings"),
    ("partition_size", Optional[int], None, "deprecated alias of partition.size"),
    ("partition_dir", Optional[str], None, "ray_partitioned: partition folder"),
    ("checkpoint", Optional[Dict], None, "ray_partitioned: checkpoint settings"),
    ("event_logging", Optional[Dict], None, "job event logging settings"),
    ("elastic_juicer_adaptive_batching", bool, False, "Ray: adaptive micro-batches for CUDA mappers"),
    ("elastic_juicer_profile_seed", bool, False, "Ray: seed of the adaptive batching profile"),
    ("data_probe_algo", str, "uniform", "sandbox: probe sampling"),
    ("data_probe_ratio", ClosedUnitInterval, 1.0, "sandbox: probe ratio"),
    ("hpo_config", Optional[str], None, "sandbox: HPO config"),
    ("use_dag", Optional[bool], None, "execution plan monitoring"),
    ("custom_operator_paths", List[str], [], "files or packages of extra ops, imported at start"),
    ("debug", bool, False, "debug logging"),
    ("auto", bool, False, "analyzer: analyse with every stats op instead of a recipe"),
    ("auto_num", PositiveInt, 1000, "analyzer: samples analysed in auto mode"),
    ("add_suffix", bool, False, "add the source file suffix to each sample (__dj__suffix__)"),
    ("notification", Optional[Dict], None, "job notification settings (accepted, not used)"),
    ("annotation", Optional[Dict], None, "human annotation settings (accepted, not used)"),
]

# our additions (not in Data-Juicer)
EXTRA_KEYS: list[tuple[str, Any, Any, str]] = [
    ("id_keys", List[str], ["id", "uid", "doc_id"], "fields that identify a sample in the error ledger"),
]


def build_parser(prog: str, description: str = "") -> ArgumentParser:
    parser = ArgumentParser(prog=prog, description=description, default_env=True, exit_on_error=False)
    parser.add_argument("--config", action=ActionConfigFile, help="path of the recipe YAML")
    for key, typ, default, helptext in GLOBAL_KEYS + EXTRA_KEYS:
        parser.add_argument(f"--{key}", type=typ, default=default, help=helptext)
    return parser
