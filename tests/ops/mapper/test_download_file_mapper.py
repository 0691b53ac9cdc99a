import functools
import http.server
import json
import socket
import threading
import time

import pytest

from data_juicer.core.runner import FusedRun, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.common.file_transfer import FileTransferError
from data_juicer.utils.batch import rows_to_batch
from data_juicer.utils.constant import Fields

NAME = "download_file_mapper"
FILES = {"a.txt": b"hello file A", "b.bin": b"\x00\x01binary\xff", "sub/c.txt": b"nested C", "slow.txt": b"slow"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    active = 0
    peak = 0
    lock = threading.Lock()

    def do_GET(self):
        if self.path.startswith("/slow"):
            cls = type(self)
            with cls.lock:
                cls.active += 1
                cls.peak = max(cls.peak, cls.active)
            time.sleep(0.1)
            with cls.lock:
                cls.active -= 1
        return super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("www")
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    for i in range(6):
        (root / f"slow{i}.txt").write_bytes(b"s%d" % i)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def local_file(tmp_path):
    path = tmp_path / "local.txt"
    path.write_bytes(b"local L")
    return str(path)


def _make(**kw):
    return OPERATORS.get(NAME)(download_field="urls", **kw)


def _batch(base, local):
    return [[f"{base}/a.txt", f"{base}/sub/c.txt"], [f"{base}/b.bin"], [local, f"{base}/a.txt"], [],
            [f"{base}/sub/c.txt?x=1"]]


def test_save_dir_matches_data_juicer(server, local_file, tmp_path):
    out = tmp_path / "out"
    rows = run_ops_on_rows([_make(save_dir=str(out))], [{"urls": u} for u in _batch(server, local_file)])
    # values from Data-Juicer 1.6.1 (with OUT = save_dir): local paths stay, URLs become saved files
    o = str(out)
    assert [r["urls"] for r in rows] == [[f"{o}/a.txt", f"{o}/c.txt"], [f"{o}/b.bin"], [local_file, f"{o}/a.txt"], [],
                                         [f"{o}/c.txt"]]
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.bin", "c.txt"]
    assert (out / "b.bin").read_bytes() == FILES["b.bin"]
    assert "image_bytes" not in rows[0]


@pytest.mark.parametrize("params,field", [({"save_field": "bytes"}, "bytes"), ({}, "image_bytes")])
def test_contents_match_data_juicer(server, local_file, params, field):
    urls = _batch(server, local_file)
    rows = run_ops_on_rows([_make(**params)], [{"urls": u} for u in urls])
    # values from Data-Juicer 1.6.1: the URLs stay, the bytes go to the field
    assert [r["urls"] for r in rows] == urls
    assert [r[field] for r in rows] == [[b"hello file A", b"nested C"], [b"\x00\x01binary\xff"],
                                        [b"local L", b"hello file A"], [], [b"nested C"]]


def test_single_urls_and_both_outputs(server, local_file, tmp_path):
    out = tmp_path / "out"
    rows = run_ops_on_rows([_make(save_dir=str(out), save_field="bytes")],
                           [{"urls": f"{server}/a.txt"}, {"urls": local_file}, {"urls": None}])
    assert [r["urls"] for r in rows] == [str(out / "a.txt"), local_file, None]
    # Data-Juicer 1.6.1 fails on single (not list) URLs with save_field (TypeError); here they work
    assert [r["bytes"] for r in rows] == [b"hello file A", b"local L", None]


def test_existing_file_is_not_downloaded_again(server, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"already here")
    rows = run_ops_on_rows([_make(save_dir=str(tmp_path), save_field="bytes")], [{"urls": [f"{server}/a.txt"]}])
    assert rows[0]["bytes"] == [b"already here"]


def test_resume_keeps_contents_already_there(server):
    rows = [{"urls": [f"{server}/a.txt", f"{server}/b.bin"], "bytes": [b"kept", None]}]
    with pytest.raises(ValueError, match="resume_download=True"):
        _make(save_field="bytes", skip_op_error=False).process_batched(rows_to_batch(rows))
    out = run_ops_on_rows([_make(save_field="bytes", resume_download=True)], rows)
    assert out[0]["bytes"] == [b"kept", FILES["b.bin"]]


def _closed_port_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/x.txt"


def test_failures_go_to_the_error_ledger_per_sample(server, tmp_path):
    unreachable = _closed_port_url()
    rows = [{"id": 0, "urls": [f"{server}/a.txt"]}, {"id": 1, "urls": [f"{server}/missing.txt"]},
            {"id": 2, "urls": [unreachable]}, {"id": 3, "urls": [str(tmp_path / "nope.txt")]},
            {"id": 4, "urls": ["s3://bucket/key"]}]
    out = FusedRun([_make(save_field="bytes", timeout=5)])(rows_to_batch(rows))
    errors = {i: json.loads(e)["message"] for i, e in zip(out["id"], out[Fields.error]) if e}
    assert [i for i, e in zip(out["id"], out[Fields.error]) if not e] == [0]
    assert "missing.txt" in errors[1] and "HTTP 404" in errors[1]
    assert unreachable in errors[2] and "cannot reach the server" in errors[2]
    assert "nope.txt" in errors[3]
    assert "s3_download_file_mapper" in errors[4]
    # saving needs a file name from the URL's path
    with pytest.raises(FileTransferError, match="names no file"):
        _make(save_dir=str(tmp_path)).process_batched({"urls": [f"{server}/"]})


def test_a_failing_batch_names_every_file(server):
    op = _make(save_field="bytes")
    with pytest.raises(FileTransferError, match=r"could not download 2 of 3 files: .*missing1.*404.*missing2"):
        op.process_batched({"urls": [[f"{server}/a.txt", f"{server}/missing1"], f"{server}/missing2"]})


def test_max_concurrent_bounds_parallel_downloads(server):
    urls = [[f"{server}/slow{i}.txt"] for i in range(6)]
    for limit in (1, 3):
        _Handler.peak = 0
        rows = run_ops_on_rows([_make(save_field="bytes", max_concurrent=limit)], [{"urls": u} for u in urls])
        assert [r["bytes"] for r in rows] == [[b"s%d" % i] for i in range(6)]
        assert 1 <= _Handler.peak <= limit
    assert _Handler.peak > 1  # three at a time really overlap (each answer takes 0.1 s)


def test_bad_params():
    make = OPERATORS.get(NAME)
    with pytest.raises(ValueError, match="download_field"):
        make()
    with pytest.raises(ValueError, match="max_concurrent"):
        make(download_field="u", max_concurrent=0)
    with pytest.raises(ValueError, match="timeout"):
        make(download_field="u", timeout=0)
    assert make(download_field="u").save_field == "image_bytes"
    assert make(download_field="u").process_batched({"text": ["x"]}) == {"text": ["x"]}  # no such field: unchanged
