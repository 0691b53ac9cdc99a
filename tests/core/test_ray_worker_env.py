"""Ray workers see the driver's DJ_* environment variables even when set after Ray started (and an
op's own runtime_env env_vars on top); the default executor, in-process, sees them anyway."""
import os
import textwrap

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

OPS = textwrap.dedent('''
    import os

    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("dj_env_probe_mapper")
    class DjEnvProbeMapper(Mapper):
        """Writes what the worker sees of two environment variables into the text."""

        def process_batched(self, samples):
            seen = f"{os.environ.get('DJ_PRODUCED_DATA_DIR')}|{os.environ.get('DJ_ENV_PROBE_OWN')}"
            samples[self.text_key] = [seen for _ in samples[self.text_key]]
            return samples
''')


def test_workers_see_driver_dj_env(make_recipe, tmp_path, executor_type, monkeypatch):
    ops = tmp_path / "env_ops.py"
    ops.write_text(OPS)
    produced = str(tmp_path / "produced")
    # set after Ray started (the executor_type fixture starts it): workers would not inherit it
    monkeypatch.setenv("DJ_PRODUCED_DATA_DIR", produced)
    process = [{"dj_env_probe_mapper": {"runtime_env": {"env_vars": {"DJ_ENV_PROBE_OWN": "own"}}}}]
    recipe = make_recipe([{"id": i, "text": "x"} for i in range(4)], process, executor_type=executor_type,
                         custom_operator_paths=[str(ops)])
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    want_own = "own" if executor_type == "ray" else "None"  # runtime_env is a Ray setting
    assert [r["text"] for r in out] == [f"{produced}|{want_own}"] * 4


def test_runtime_env_merges_driver_and_op(monkeypatch):
    from data_juicer.core.ray_dataset import runtime_env_for

    class Op:
        def __init__(self, runtime_env):
            self.runtime_env = runtime_env

    for k in [k for k in os.environ if k.startswith("DJ_")]:
        monkeypatch.delenv(k)
    assert runtime_env_for([Op(None)]) is None
    monkeypatch.setenv("DJ_MODELS_DIR", "/m")
    monkeypatch.setenv("DJ_MODEL_PLUGINS", "a.b")
    monkeypatch.setenv("OTHER_VAR", "no")
    env = runtime_env_for([Op({"env_vars": {"DJ_MODELS_DIR": "/op", "X": "1"}, "pip": ["p"]}),
                           Op({"pip": ["q"], "env_vars": {"Y": "2"}})])
    assert env == {"pip": ["p"], "env_vars": {"DJ_MODELS_DIR": "/op", "DJ_MODEL_PLUGINS": "a.b", "X": "1", "Y": "2"}}


def test_runtime_env_leaves_out_what_the_workers_inherited(monkeypatch):
    """A local Ray this process started has the DJ_* variables set before it in every worker: they are
    not sent as env_vars (which would make Ray start fresh workers for each pass); ones set or changed
    after it still are, and nothing is left out when the workers' environment is unknown."""
    from data_juicer.core import ray_dataset as rd

    for k in [k for k in os.environ if k.startswith("DJ_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("DJ_MODELS_DIR", "/m")
    monkeypatch.setenv("DJ_RAY_WARM_UP", "1")
    try:
        rd.set_inherited_env(dict(os.environ))
        assert rd.runtime_env_for() is None
        monkeypatch.setenv("DJ_MODELS_DIR", "/changed")
        monkeypatch.setenv("DJ_PRODUCED_DATA_DIR", "/p")
        assert rd.runtime_env_for() == {"env_vars": {"DJ_MODELS_DIR": "/changed", "DJ_PRODUCED_DATA_DIR": "/p"}}
    finally:
        rd.set_inherited_env(None)
    assert rd.runtime_env_for() == {"env_vars": {"DJ_MODELS_DIR": "/changed", "DJ_PRODUCED_DATA_DIR": "/p",
                                                 "DJ_RAY_WARM_UP": "1"}}
