"""``dj-process``: run a recipe. Thin: parse, call the executor, report."""

from __future__ import annotations

import sys

USAGE_EXTRA = """
extra commands:
  --list_ops         print every registered operator as name<TAB>type<TAB>modality and exit
  --dry_run          validate the recipe, print the resolved plan and exit
  --<op>.<param> V   override a parameter of every occurrence of <op> in the recipe
"""


def _fail(msg: str, code: int = 2) -> int:
    print(f"dj-process: error: {msg}", file=sys.stderr)
    return code


def setup_logging(debug: bool = False) -> None:
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if debug else "INFO",
               format="<green>{time:HH:mm:ss}</green> | <level>{level: <7}</level> | {message}")


def list_ops(out=None) -> None:
    from data_juicer.ops.registry import OPERATORS

    out = out or sys.stdout
    for name, cls in OPERATORS.items():
        out.write(f"{name}\t{cls.op_type}\t{cls.modality}\n")


def format_plan(recipe) -> str:

    lines = [f"recipe: {recipe.config_path}", f"dataset: {recipe.cfg.get('dataset') or recipe.cfg['dataset_path']}",
             f"export: {recipe.cfg['export_path']}", f"np: {recipe.cfg['np']}", "ops (execution order):"]
    for i, spec in enumerate(recipe.ops, 1):
        own = _own_params(spec)
        args = ", ".join(f"{k}={v!r}" for k, v in own.items())
        lines.append(f"  {i:2d}. {spec.name} [{spec.cls.op_type}] ({args})")
    return "\n".join(lines)


def _own_params(spec) -> dict:
    """The op's own parameters (not the common base ones), plus base ones the recipe set."""
    import inspect

    own = {}
    for klass in spec.cls.__mro__:
        if klass.__module__.startswith("data_juicer.ops.base"):
            break
        init = klass.__dict__.get("__init__")
        for name in inspect.signature(init).parameters if init else ():
            if name in spec.params and name not in own:
                own[name] = spec.params[name]
    for k in spec.given:
        own.setdefault(k, spec.params.get(k))
    return own


_RUN: dict = {}  # the recipe being run, for the one line printed on Ctrl-C


def main(argv: list[str] | None = None) -> int:
    """``dj-process``; Ctrl-C stops it with one line saying where to resume (exit 130), no traceback."""
    import os
    import signal

    from data_juicer.utils import fast_imports

    fast_imports.install()  # numba without its scipy.linalg BLAS check (utils/fast_imports.py)

    main_pid = os.getpid()
    previous = signal.getsignal(signal.SIGINT)

    interrupted = []

    def on_sigint(signum, frame):
        if os.getpid() != main_pid:  # a forked worker: the main process stops it, quietly
            return
        interrupted.append(True)
        raise KeyboardInterrupt

    in_main_thread = _is_main_thread()
    if in_main_thread:
        signal.signal(signal.SIGINT, on_sigint)
    _RUN.clear()
    try:
        rc = _main(argv)
        if argv is None:  # a command line: no interpreter teardown at exit (cli/fast_exit.py)
            from data_juicer.cli import fast_exit

            fast_exit.arm(rc)
        return rc
    except BaseException as e:
        # a library cleaning up after the interrupt may raise something else (a worker pool's TimeoutError)
        if not isinstance(e, KeyboardInterrupt) and not interrupted:
            raise
        print(f"dj-process: interrupted (Ctrl-C); {_resume_hint()}", file=sys.stderr)
        return 130
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
        _RUN.clear()


def _is_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _resume_hint() -> str:
    recipe = _RUN.get("recipe")
    if recipe is None:
        return "nothing was run"
    if recipe.cfg.get("use_checkpoint"):
        return (f"run the same command again to resume from the last checkpoint saved in {recipe.checkpoint_dir} "
                f"(job folder: {recipe.job_dir})")
    return (f"nothing was exported; job folder: {recipe.job_dir}. Run the same command again to start over "
            f"(with `use_checkpoint: true` a rerun resumes after the last finished op)")


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--list_ops" in argv:
        list_ops()
        return 0
    if "-h" in argv or "--help" in argv:
        from data_juicer.config.schema import build_parser

        build_parser("dj-process", "Process a dataset with a Data-Juicer recipe.").print_help()
        print(USAGE_EXTRA)
        return 0
    dry_run = "--dry_run" in argv
    argv = [a for a in argv if a != "--dry_run"]
    setup_logging(debug="--debug" in argv)

    from data_juicer.config.recipe import ConfigError, load_recipe

    try:
        recipe = load_recipe(argv, "dj-process", check_paths=True)
    except ConfigError as e:
        return _fail(str(e))
    _RUN["recipe"] = recipe
    executor_type = recipe.executor_type
    if executor_type not in ("default", "ray"):
        return _fail(f"executor_type '{executor_type}' is not available yet in this version; use 'default' or 'ray'")
    if dry_run:
        # building the ops finds what only they can check before any data is read: model files,
        # cascades, user code (models themselves load lazily, on first use)
        from data_juicer.ops.build import build_ops

        try:
            build_ops(recipe.ops, {"work_dir": recipe.job_dir}, where=str(recipe.config_path))
        except ConfigError as e:
            return _fail(str(e))
        except (FileNotFoundError, ImportError, ValueError, TypeError) as e:
            return _fail(f"{recipe.config_path}: {e}")
        print(format_plan(recipe))
        return 0

    from data_juicer.core.executor import Executor
    from data_juicer.core.loader import DataLoadError
    from data_juicer.core.runner import OpError

    try:
        report = Executor(recipe).run()
    except ConfigError as e:
        return _fail(str(e))
    except DataLoadError as e:
        return _fail(f"{recipe.config_path}: {e}")
    except OpError as e:
        return _fail(f"{recipe.config_path}: {e} (set skip_op_error: true to record such samples and go on)", 1)
    except OSError as e:  # e.g. the disk filled up while writing: no file that looks whole was left
        return _fail(f"{recipe.config_path}: {type(e).__name__}: {e}", 1)
    _print_report(report)
    return 0


def _print_report(r) -> None:
    print(f"Processed {r.rows_in} samples -> kept {r.rows_out} in {r.seconds:.2f}s "
          f"({r.rows_in / max(r.seconds, 1e-9):,.0f} samples/s)")
    width = max([len(o.name) for o in r.ops] + [2])
    print(f"  {'op':<{width}}  {'in':>9} {'out':>9} {'errors':>7} {'seconds':>8}")
    for o in r.ops:
        print(f"  {o.name:<{width}}  {o.rows_in:>9} {o.rows_out:>9} {o.errors:>7} {o.seconds:>8.2f}")
    for f in r.export_files:
        print(f"Output: {f}")
    if r.stats_file:
        print(f"Stats:  {r.stats_file}")
    print(f"Job folder: {r.job_dir}")
    if r.errors:
        print(f"Errors: {r.errors} samples were not processed; see {r.job_dir}/errors.jsonl")


if __name__ == "__main__":
    sys.exit(main())
