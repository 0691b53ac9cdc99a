"""Parameter validation takes recipe values as Data-Juicer's recipes write them."""
import pytest

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.ops.schema import validate_params


class _SaveDirMapper(Mapper):
    def __init__(self, save_dir: str = None, mode: str = "fast", **kwargs):
        super().__init__(**kwargs)


def test_null_is_accepted_where_the_default_is_null():
    assert validate_params(_SaveDirMapper, {"save_dir": None})["save_dir"] is None


def test_null_is_still_refused_where_the_default_is_a_value():
    with pytest.raises(ValueError, match="parameter 'mode'"):
        validate_params(_SaveDirMapper, {"mode": None})


def test_scientific_notation_strings_are_numbers():
    params = validate_params(OPERATORS.get("text_length_filter"), {"max_len": "2e5", "min_len": "1.5e1"})
    assert params["max_len"] == 200000 and type(params["max_len"]) is int
    assert params["min_len"] == 15


def test_a_non_integral_value_for_an_int_is_still_an_error():
    with pytest.raises(ValueError, match="parameter 'max_len'"):
        validate_params(OPERATORS.get("text_length_filter"), {"max_len": "2.5e0"})
