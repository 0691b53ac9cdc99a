"""``c_build``: a library is compiled once per source and machine, then loaded from the cache; a source
that does not compile gives a clear error, and ``load`` answers None (the numba or Python paths run)."""
import pytest

from data_juicer.ops.common import c_build

SOURCE = "int dj_twice(int x) { return 2 * x; }\n"


def test_built_once_then_loaded_and_called(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_JUICER_CACHE_HOME", str(tmp_path))
    if c_build.load(SOURCE, "twice", "DJ_TWICE_C", lambda lib: None) is None:
        pytest.skip("no C compiler here")
    built = sorted(p.name for p in (tmp_path / "kernels").iterdir())
    assert len(built) == 1 and built[0].startswith("dj_twice_") and built[0].endswith(".so")
    seen = []
    lib = c_build.load(SOURCE, "twice", "DJ_TWICE_C", seen.append)
    assert seen == [lib] and lib.dj_twice(21) == 42
    assert sorted(p.name for p in (tmp_path / "kernels").iterdir()) == built  # the cached library, no temporaries
    assert c_build.build(SOURCE + "\n", "twice") != str(tmp_path / "kernels" / built[0])  # another source, another key


def test_compile_error_and_switches(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_JUICER_CACHE_HOME", str(tmp_path))
    if c_build.load(SOURCE, "twice", "DJ_TWICE_C", lambda lib: None) is None:
        pytest.skip("no C compiler here")
    with pytest.raises(RuntimeError, match="failed: .*error"):
        c_build.build("int broken( {", "broken")
    assert c_build.load("int broken( {", "broken", "DJ_TWICE_C", lambda lib: None) is None
    assert c_build.load(SOURCE, "twice", "DJ_TWICE_C", lambda lib: 1 / 0) is None  # a failed probe
    monkeypatch.setenv("DJ_TWICE_C", "no")
    assert c_build.load(SOURCE, "twice", "DJ_TWICE_C", lambda lib: None) is None
    assert not c_build.enabled("DJ_TWICE_C") and c_build.enabled("DJ_OTHER_C")
    monkeypatch.setenv("DJ_C_KERNELS", "0")
    assert not c_build.enabled("DJ_OTHER_C")
    assert not [p for p in (tmp_path / "kernels").iterdir() if p.name.startswith(".")]  # no temporaries left
