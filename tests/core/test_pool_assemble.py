"""hf_pool._assemble: the chunk files of a pass as one dataset, equal to concatenate_datasets of them."""
import datasets
import pytest
from datasets.arrow_writer import ArrowWriter

from data_juicer.core.backends import hf_pool


def _write(path, rows, features=None):
    w = ArrowWriter(features=features, path=str(path), update_features=True)
    w.write_batch({k: [r[k] for r in rows] for k in rows[0]})
    w.finalize()
    w.close()
    return str(path)


def _slow(files, fp):
    parts = [datasets.Dataset.from_file(p) for p in files]
    out = parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)
    out._fingerprint = fp
    return out


@pytest.mark.parametrize("n_files", [1, 3])
def test_same_schema_equals_concatenate(tmp_path, n_files):
    files = [_write(tmp_path / f"c{i}.arrow", [{"text": f"t{i}{j}", "n": i * 10 + j, "s": {"a": 0.5 * j}}
                                               for j in range(4)]) for i in range(n_files)]
    got, want = hf_pool._assemble(files, "fp1"), _slow(files, "fp1")
    assert got.num_rows == 4 * n_files
    assert got["n"] == list(range(4)) + ([10, 11, 12, 13, 20, 21, 22, 23] if n_files == 3 else [])
    assert got.features == want.features and got.info == want.info
    assert got.data.table.equals(want.data.table)
    assert got.data.table.schema.equals(want.data.table.schema, check_metadata=True)
    assert got.cache_files == want.cache_files and len(got.cache_files) == n_files
    assert got._fingerprint == "fp1"


def test_differing_types_are_aligned(tmp_path):
    # a chunk where a field is all None has another type: concatenate_datasets aligns them as before
    a = _write(tmp_path / "a.arrow", [{"text": "x", "v": None}, {"text": "y", "v": None}])
    b = _write(tmp_path / "b.arrow", [{"text": "z", "v": 1.5}])
    got = hf_pool._assemble([a, b], None)
    assert got["v"] == [None, None, 1.5]
    assert got.features["v"] == datasets.Value("float64")
    assert got._fingerprint  # a fingerprint is always set
