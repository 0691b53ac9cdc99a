"""Ops that load a model run in an actor pool: the model is loaded once per actor, not per batch."""
import textwrap

from data_juicer.cli.process import main
from tests.conftest import read_jsonl

MODEL_OP = textwrap.dedent('''
    import os

    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("fake_model_mapper")
    class FakeModelMapper(Mapper):
        """Tags each sample with how often this op instance loaded its 'model', and where."""

        uses_model = True

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._model = None
            self.loads = 0

        def process_batched(self, samples):
            if self._model is None:
                self._model = object()
                self.loads += 1
            n = len(samples[self.text_key])
            samples["loads"] = [self.loads] * n
            samples["pid"] = [os.getpid()] * n
            return samples
''')


def test_model_op_loads_once_per_actor(make_recipe, tmp_path, ray_local):
    op_file = tmp_path / "model_ops.py"
    op_file.write_text(MODEL_OP)
    rows = [{"id": i, "text": f"sample {i}"} for i in range(300)]
    recipe = make_recipe(rows, [{"fake_model_mapper": {"batch_size": 10, "num_cpus": 1}},
                                {"text_length_filter": {"min_len": 1}}],
                         executor_type="ray", custom_operator_paths=[str(op_file)], override_num_blocks=10)
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in out] == list(range(300))
    assert {r["loads"] for r in out} == {1}  # 30 batches, one load per actor
    assert 1 <= len({r["pid"] for r in out}) <= 2  # an actor pool sized to the 2 CPUs
