"""Parse and validate a recipe: YAML + env (DJ_PROCESS_*) + command line, then every op.

Everything is checked before any data is read: op names (with close matches), op parameter
names and types (from each op's constructor signature, by jsonargparse), global key types, the
dataset path and the export folder. Problems raise ``ConfigError`` with one clear message.
"""

from __future__ import annotations

import copy
import difflib
import importlib
import importlib.util
import os
import re
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Mapping, Optional

import yaml

from data_juicer.config.schema import EXTRA_KEYS, GLOBAL_KEYS, build_parser
from data_juicer.ops.build import INHERITED, OpEntry, resolve_entry
from data_juicer.ops.registry import OPERATORS
from data_juicer.ops.schema import check_executor_rules, validate_op  # noqa: F401  (re-exported)
from data_juicer.utils.errors import ConfigError

# one resolved op of a recipe: name, class, full validated params, what the recipe gave
OpSpec = OpEntry
_OP_OVERRIDE = re.compile(r"^--([A-Za-z_][\w]*)\.([A-Za-z_][\w]*)(?:=(.*))?$")


@dataclass(frozen=True)
class Recipe:
    """A parsed, validated recipe; immutable, with every derived value computed once here."""

    cfg: Mapping[str, Any]  # resolved global keys (read-only)
    ops: tuple  # OpSpec per process entry
    config_path: Optional[str]
    argv: tuple = ()
    raw_yaml: Optional[str] = None
    # derived
    text_key: str = "text"
    id_keys: tuple = ("id",)
    executor_type: str = "default"
    work_dir: str = "."  # the folder job folders go in
    job_id: str = ""
    job_dir: str = "."
    checkpoint_dir: str = "."
    # typed global settings the runtime reads, taken from the validated keys once (``typed_settings``):
    # core/ reads these, never ``cfg[...]`` (tests/config/test_recipe_settings.py greps for that)
    dataset_path: str = ""
    dataset_config: Optional[Mapping[str, Any]] = None  # ``dataset`` as {configs: [...], max_sample_num}
    text_keys: tuple = ("text",)
    image_key: str = "images"
    audio_key: str = "audios"
    video_key: str = "videos"
    suffixes: tuple = ()
    add_suffix: bool = False
    load_jsonl_lenient: bool = False
    load_dataset_kwargs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    read_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    override_num_blocks: Optional[int] = None
    ds_cache_dir: Optional[str] = None
    np: int = 4
    use_cache: bool = True
    cache_compress: Optional[str] = None
    skip_op_error: bool = True
    use_checkpoint: bool = False
    checkpoint: Optional[Mapping[str, Any]] = None
    op_fusion: bool = False
    fusion_strategy: str = "probe"
    adaptive_batch_size: bool = False
    open_tracer: bool = False
    op_list_to_trace: tuple = ()
    trace_num: int = 10
    trace_keys: tuple = ()
    export_path: str = "./outputs/hello_world/hello_world.jsonl"
    export_type: Optional[str] = None
    export_shard_size: int = 0
    export_in_parallel: bool = False
    keep_stats_in_res_ds: bool = False
    keep_hashes_in_res_ds: bool = False
    ray_address: str = "auto"
    percentiles: tuple = ()
    save_stats_in_one_file: bool = False

    @property
    def media_keys(self) -> tuple:
        """(image_key, audio_key, video_key)."""
        return (self.image_key, self.audio_key, self.video_key)

    def __getattr__(self, item):  # the other cfg keys as attributes: recipe.project_name
        try:
            return self.__dict__["cfg"][item]
        except KeyError:
            raise AttributeError(item) from None

    def get(self, key: str, default=None):
        return self.cfg.get(key, default)

    def __getitem__(self, key: str):
        return self.cfg[key]

    @property
    def process(self) -> list[dict]:
        return [{s.name: dict(s.given)} for s in self.ops]

    @property
    def op_defaults(self) -> dict:
        """What every op of this recipe inherits from the globals unless it sets it."""
        return _op_defaults(self.cfg)


_SETTINGS = ("dataset_path", "image_key", "audio_key", "video_key", "add_suffix", "load_jsonl_lenient",
             "override_num_blocks", "ds_cache_dir", "np", "use_cache", "cache_compress", "skip_op_error",
             "use_checkpoint", "op_fusion", "fusion_strategy", "adaptive_batch_size", "open_tracer", "trace_num",
             "export_path", "export_type", "export_shard_size", "export_in_parallel", "keep_stats_in_res_ds",
             "keep_hashes_in_res_ds", "ray_address", "save_stats_in_one_file")
_SEQUENCES = ("text_keys", "suffixes", "op_list_to_trace", "trace_keys", "percentiles")
_MAPPINGS = ("load_dataset_kwargs", "read_options", "checkpoint")


def _frozen(value):
    """A read-only view of a top-level mapping (its values are handed on as they are: to
    ``datasets.load_dataset``, pyarrow options...)."""
    return MappingProxyType(dict(value)) if isinstance(value, Mapping) else value


def typed_settings(cfg: Mapping[str, Any]) -> dict:
    """The ``Recipe`` fields of the global settings, from the resolved keys: scalars as they are,
    lists as tuples, mappings read-only, ``dataset`` normalised to ``{configs: [...], ...}``."""
    out = {k: cfg[k] for k in _SETTINGS if k in cfg}
    for k in _SEQUENCES:
        if k in cfg:
            v = cfg[k]
            out[k] = (v,) if isinstance(v, str) else tuple(v or ())
    for k in _MAPPINGS:
        if k in cfg:
            out[k] = None if cfg[k] is None and k == "checkpoint" else _frozen(cfg[k] or {})
    ds = cfg.get("dataset")
    out["dataset_config"] = _frozen(ds if isinstance(ds, dict) else {"configs": list(ds)}) if ds else None
    return out


def _op_defaults(cfg: Mapping[str, Any]) -> dict:
    out = {k: cfg[k] for k in INHERITED if k in cfg and k != "work_dir"}  # cfg work_dir: job folders' base
    out["text_key"] = cfg["text_keys"][0]
    out["num_proc"] = cfg["np"]
    return out


def _job_paths(cfg: dict, where: str) -> tuple[str, str, str, str]:
    """(job id, folder of job folders, job folder, checkpoint folder)."""
    job_id = cfg.get("job_id") or f"{datetime.now(timezone.utc).strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
    work_dir = cfg.get("work_dir") or os.path.dirname(os.path.abspath(cfg["export_path"]))
    if "{job_id}" in work_dir:
        if not work_dir.rstrip("/").endswith("{job_id}"):
            raise ConfigError(f"{where}: work_dir: '{{job_id}}' must be the last part of the path")
        job_dir = work_dir.replace("{job_id}", job_id)
        base = work_dir.replace("{job_id}", "")
    else:
        job_dir = os.path.join(work_dir, job_id)
        base = work_dir
    ckpt = cfg.get("checkpoint_dir") or os.path.join(base, "ckpt")
    return job_id, os.path.abspath(base), os.path.abspath(job_dir), ckpt


# -- helpers -----------------------------------------------------------------------------------
def _config_path(argv: list[str]) -> Optional[str]:
    for i, a in enumerate(argv):
        if a == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--config="):
            return a.split("=", 1)[1]
    return os.environ.get("DJ_PROCESS_CONFIG")


def _read_yaml(path: str) -> tuple[dict, str]:
    if not os.path.isfile(path):
        raise ConfigError(f"recipe file '{path}' does not exist")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from e
    if data is None:
        raise ConfigError(f"{path}: the recipe file is empty{' (only comments)' if text.strip() else ''}; a recipe "
                          f"needs at least dataset_path, export_path and a process list of ops (see "
                          f"configs/demo/process.yaml)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a recipe is a mapping of keys (project_name, dataset_path, process, ...)")
    return data, text


def import_custom_ops(paths: list[str]) -> None:
    """Import files or packages that register extra ops."""
    for p in paths or []:
        if not os.path.exists(p):
            raise ConfigError(f"custom_operator_paths: '{p}' does not exist")
        p = os.path.abspath(p)
        if os.path.isdir(p):
            parent, name = os.path.split(p.rstrip(os.sep))
            if parent not in sys.path:
                sys.path.insert(0, parent)
            importlib.import_module(name)
            continue
        name = "dj_custom_" + os.path.splitext(os.path.basename(p))[0]
        spec = importlib.util.spec_from_file_location(name, p)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise ConfigError(f"custom_operator_paths: importing '{p}' failed: {type(e).__name__}: {e}") from e


def _plugin_ops() -> None:
    """Register third-party ops from the ``data_juicer.ops`` entry-point group."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="data_juicer.ops"):
        try:
            ep.load()
        except Exception as e:
            raise ConfigError(f"op plugin '{ep.name}' failed to load: {type(e).__name__}: {e}") from e


_OP_PARSERS: dict[type, Any] = {}


def _op_parser(cls: type):
    parser = _OP_PARSERS.get(cls)
    if parser is None:
        from jsonargparse import ArgumentParser

        parser = ArgumentParser(exit_on_error=False)
        parser.add_class_arguments(cls, fail_untyped=False)
        _OP_PARSERS[cls] = parser
    return parser


def _clean_error(e: BaseException) -> str:
    msg = str(e).strip()
    msg = re.sub(r"\s*For further information visit \S+", "", msg)
    msg = re.sub(r"\n\s*\n", "\n", msg)
    return msg


def _known_params(parser) -> list[str]:
    return [a.dest for a in parser._actions if a.dest not in ("help", "config")]


# -- main entry --------------------------------------------------------------------------------
def load_recipe(argv: list[str], prog: str = "dj-process", check_paths: bool = True) -> Recipe:
    argv = list(argv)
    cfg_path = _config_path(argv)
    data, raw = _read_yaml(cfg_path) if cfg_path else ({}, None)
    where = cfg_path or "command line"

    # --<op>.<param> overrides: take them out before jsonargparse sees the global keys
    overrides: dict[str, dict[str, str]] = {}
    rest = []
    i = 0
    while i < len(argv):
        m = _OP_OVERRIDE.match(argv[i])
        if m and m.group(1) in OPERATORS:
            value = m.group(3)
            if value is None:
                if i + 1 >= len(argv):
                    raise ConfigError(f"command line: {argv[i]} needs a value")
                value = argv[i + 1]
                i += 1
            overrides.setdefault(m.group(1), {})[m.group(2)] = value
        else:
            rest.append(argv[i])
        i += 1

    known = {k for k, *_ in GLOBAL_KEYS + EXTRA_KEYS}
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.7)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ConfigError(f"{where}: unknown key '{key}'.{hint}")

    parser = build_parser(prog)
    try:
        ns = parser.parse_args(rest)
    except Exception as e:
        raise ConfigError(f"{where}: {_clean_error(e)}") from e
    cfg = ns.as_dict()
    cfg.pop("config", None)
    cfg["text_keys"] = [cfg["text_keys"]] if isinstance(cfg["text_keys"], str) else list(cfg["text_keys"] or ["text"])
    if isinstance(cfg.get("suffixes"), str):
        cfg["suffixes"] = [cfg["suffixes"]]
    cfg["suffixes"] = cfg.get("suffixes") or []

    import_custom_ops(cfg["custom_operator_paths"])
    _plugin_ops()
    ops = _resolve_ops(cfg, overrides, where)
    executor_type = cfg.get("executor_type") or "default"
    if executor_type in ("default", "ray"):
        check_executor_rules(ops, executor_type, where)
    if any(o.name == "suffix_filter" for o in ops):
        cfg["add_suffix"] = True
    if check_paths:
        check_io(cfg, where)
    job_id, work_dir, job_dir, ckpt = _job_paths(cfg, where)
    if check_paths:
        check_work_dirs(cfg, job_dir, ckpt, where)
    cfg["job_id"] = job_id
    cfg["id_keys"] = list(cfg.get("id_keys") or ["id"])
    return Recipe(cfg=MappingProxyType(cfg), ops=tuple(ops), config_path=cfg_path, argv=tuple(argv), raw_yaml=raw,
                  text_key=cfg["text_keys"][0], id_keys=tuple(cfg["id_keys"]), executor_type=executor_type,
                  work_dir=work_dir, job_id=job_id, job_dir=job_dir, checkpoint_dir=ckpt, **typed_settings(cfg))


def _resolve_ops(cfg: dict, overrides: dict[str, dict[str, str]], where: str) -> list[OpSpec]:
    process = cfg.get("process") or []
    if not isinstance(process, list):
        raise ConfigError(f"{where}: 'process' must be a list of {{op_name: {{param: value}}}} items")
    for name in overrides:
        if not any(isinstance(it, dict) and name in it for it in process):
            raise ConfigError(f"command line: --{name}.* given, but '{name}' is not in the recipe's process list")
    specs = []
    defaults = _op_defaults(cfg)  # an op's work_dir (the job folder) is filled in when the ops are built
    for idx, item in enumerate(process):
        here = f"{where}, process[{idx}]"
        if isinstance(item, str):
            item = {item: None}
        if not isinstance(item, dict) or len(item) != 1:
            raise ConfigError(f"{here}: each op is a one-key mapping like `- text_length_filter: {{min_len: 10}}`")
        (name, params), = item.items()
        params = copy.deepcopy(params) or {}
        if not isinstance(params, dict):
            raise ConfigError(f"{here}: the parameters of '{name}' must be a mapping, got {params!r}")
        given = dict(params)
        if name in overrides:  # command line wins; jsonargparse parses the strings to the right types
            given.update(_parse_cli_values(OPERATORS.get(name), name, overrides[name], here))
        specs.append(resolve_entry({name: given}, defaults, here, given=given))
    return specs


def _parse_cli_values(cls: type, name: str, values: dict[str, str], where: str) -> dict:
    parser = _op_parser(cls)
    known = _known_params(parser)
    args = []
    for k, v in values.items():
        if k not in known:
            close = difflib.get_close_matches(k, known, n=3, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ConfigError(f"command line: operator '{name}' has no parameter '{k}'.{hint}")
        args += [f"--{k}", v]
    try:
        ns = parser.parse_args(args, defaults=False)
    except Exception as e:
        raise ConfigError(f"command line: operator '{name}': {_clean_error(e)}") from e
    return {k: ns[k] for k in values}


def check_io(cfg: dict, where: str) -> None:
    from data_juicer.core.exporter import ExportError, export_format
    from data_juicer.core.loader import parse_dataset_path, specs_from_dataset_config

    try:
        if cfg.get("dataset"):
            dcfg = cfg["dataset"] if isinstance(cfg["dataset"], dict) else {"configs": cfg["dataset"]}
            specs, _ = specs_from_dataset_config(dcfg)
        else:
            specs = parse_dataset_path(cfg["dataset_path"])
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from e
    if not specs and not cfg.get("generated_dataset_config"):
        raise ConfigError(f"{where}: no input data: set dataset_path (or dataset.configs)")
    for s in specs:
        if not os.path.exists(s.path):
            raise ConfigError(f"{where}: dataset path '{s.path}' does not exist "
                              f"(relative paths are relative to the current folder, {os.getcwd()})")
    export_path = cfg["export_path"]
    if export_path.endswith(os.sep) or os.path.isdir(export_path):
        raise ConfigError(f"{where}: export_path '{export_path}' is a folder; give a file like "
                          f"'{os.path.join(export_path, 'result.jsonl')}'")
    try:
        export_format(export_path, cfg.get("export_type"))
    except ExportError as e:
        raise ConfigError(f"{where}: {e}") from e
    check_folder(os.path.dirname(os.path.abspath(export_path)), "export folder", "export_path", where)
    _check_export_not_input(cfg, specs, where)


def check_folder(folder: str, what: str, key: str, where: str) -> None:
    """``folder`` exists as a writable folder or can be created: its nearest existing ancestor is a
    writable folder (not a file)."""
    probe = folder
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise ConfigError(f"{where}: cannot write to the {what} '{folder}': '{probe}' is a file, not a folder; "
                          f"change {key}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: cannot write to the {what} '{folder}' ('{probe}' is not writable); "
                          f"change {key} or the folder's permissions")


def check_work_dirs(cfg: dict, job_dir: str, checkpoint_dir: str, where: str) -> None:
    """The folders a run writes besides the export: the job folder, the event logs, checkpoints."""
    check_folder(job_dir, "job folder", "work_dir", where)
    if cfg.get("event_log_dir"):
        check_folder(os.path.abspath(cfg["event_log_dir"]), "event log folder", "event_log_dir", where)
    if cfg.get("use_checkpoint"):
        check_folder(os.path.abspath(checkpoint_dir), "checkpoint folder", "checkpoint_dir", where)
    for s in _input_specs(cfg):
        src = os.path.realpath(s.path)
        if os.path.isdir(src) and os.path.realpath(job_dir).startswith(src.rstrip(os.sep) + os.sep):
            raise ConfigError(f"{where}: the job folder '{job_dir}' is inside the dataset folder '{s.path}': its "
                              f"files would be read as input by the next run; set work_dir outside it")


def _input_specs(cfg: dict) -> list:
    from data_juicer.core.loader import parse_dataset_path, specs_from_dataset_config

    try:
        if cfg.get("dataset"):
            dcfg = cfg["dataset"] if isinstance(cfg["dataset"], dict) else {"configs": cfg["dataset"]}
            return specs_from_dataset_config(dcfg)[0]
        return parse_dataset_path(cfg["dataset_path"])
    except ValueError:
        return []


def _check_export_not_input(cfg: dict, specs: list, where: str) -> None:
    """The result (or its stats file) may never overwrite an input file, nor land in an input folder
    (the next run would read it as input)."""
    from data_juicer.core.exporter import export_format, stats_path_for

    export_path = cfg["export_path"]
    outputs = {"export_path": export_path,
               "the stats file of export_path": stats_path_for(export_path, export_format(export_path,
                                                                                           cfg.get("export_type")))}
    for s in specs:
        src = os.path.realpath(s.path)
        for what, out in outputs.items():
            dst = os.path.realpath(out)
            if os.path.isfile(src) and dst == src:
                raise ConfigError(f"{where}: {what} '{out}' is the input file '{s.path}': the result would overwrite "
                                  f"the data it is made from; choose another export_path")
        dst = os.path.realpath(export_path)
        if os.path.isdir(src) and dst.startswith(src.rstrip(os.sep) + os.sep):
            raise ConfigError(f"{where}: export_path '{export_path}' is inside the dataset folder '{s.path}': the "
                              f"result would be read as input by the next run (or overwrite an input file); "
                              f"export outside it")
