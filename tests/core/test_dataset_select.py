"""DJDataset.select with numpy row numbers: the indices mapping built directly equals HF's select."""
import datasets
import numpy as np
import pytest

from data_juicer.core.dataset import DJDataset


def _ds(n=50):
    return datasets.Dataset.from_dict({"text": [f"t{i}" for i in range(n)], "n": list(range(n)),
                                       "s": [{"a": i / 7} for i in range(n)]})


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("pre", [False, True])
def test_same_rows_as_hf_select(dtype, pre):
    ds = _ds()
    if pre:  # a dataset that already has a row selection
        ds = ds.select(np.array([49, 3, 4, 10, 11, 12, 20, 30, 31, 40, 41, 42, 43]))
    idx = np.array([0, 2, 5, 6, 7, 12], dtype=dtype)
    got = DJDataset(ds).select(idx).hf
    want = ds.select(idx)
    assert got._indices is not None
    assert got.to_dict() == want.to_dict()
    assert got.features == want.features
    assert got["n"] == ([49, 4, 12, 20, 30, 43] if pre else [0, 2, 5, 6, 7, 12])
    assert got.flatten_indices().data.table.equals(want.flatten_indices().data.table)
    # the same selection of the same input: the same fingerprint; another one: another
    assert DJDataset(ds).select(idx).hf._fingerprint == got._fingerprint
    assert DJDataset(ds).select(idx[:-1]).hf._fingerprint != got._fingerprint


def test_extra_columns_follow_and_other_inputs_use_hf_select():
    import pyarrow as pa

    ds = _ds(5)
    dj = DJDataset(ds, {"h": pa.chunked_array([pa.array([10, 11, 12, 13, 14])])})
    out = dj.select(np.array([4, 1]))
    assert out.column("h") == [14, 11] and out.column("n") == [4, 1]
    assert DJDataset(ds).select([3, 1]).column("n") == [3, 1]  # a list: HF's select
    assert DJDataset(ds).select(np.array([], dtype=np.int64)).num_rows == 0
    with pytest.raises(IndexError):
        DJDataset(ds).select(np.array([7]))  # out of range: HF's select and its error
