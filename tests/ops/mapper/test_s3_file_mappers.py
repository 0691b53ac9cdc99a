"""s3_download_file_mapper and s3_upload_file_mapper against a local S3-compatible server (moto)."""
import json

import pytest

from data_juicer.core.runner import FusedRun, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.batch import rows_to_batch
from data_juicer.utils.constant import Fields

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

BUCKET = "test-bucket"
OBJECTS = {"docs/a.txt": b"hello A", "b.bin": b"\x00bin\xff", "deep/x/c.txt": b"deep C"}


@pytest.fixture(scope="module")
def endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=url, aws_access_key_id="key", aws_secret_access_key="secret",
                          region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    for key, body in OBJECTS.items():
        client.put_object(Bucket=BUCKET, Key=key, Body=body)
    yield url
    server.stop()


@pytest.fixture(autouse=True)
def _no_aws_env(monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def s3(endpoint):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="key", aws_secret_access_key="secret",
                        region_name="us-east-1")


def _cred(endpoint):
    return {"aws_access_key_id": "key", "aws_secret_access_key": "secret", "aws_region": "us-east-1",
            "endpoint_url": endpoint}


def _download(endpoint, **kw):
    return OPERATORS.get("s3_download_file_mapper")(download_field="urls", **_cred(endpoint), **kw)


def _upload(endpoint, **kw):
    return OPERATORS.get("s3_upload_file_mapper")(upload_field="paths", s3_bucket=BUCKET, **_cred(endpoint), **kw)


def _urls(local):
    return [[f"s3://{BUCKET}/docs/a.txt", f"s3://{BUCKET}/deep/x/c.txt"], [f"s3://{BUCKET}/b.bin"],
            [local, f"s3://{BUCKET}/docs/a.txt"], []]


@pytest.fixture
def local_file(tmp_path):
    path = tmp_path / "local.txt"
    path.write_bytes(b"local L")
    return str(path)


@pytest.mark.parametrize("save_dir,save_field", [(True, None), (False, "bytes"), (True, "bytes"), (False, None)])
def test_download_matches_data_juicer(endpoint, local_file, tmp_path, save_dir, save_field):
    out = tmp_path / "out"
    params = {"save_dir": str(out)} if save_dir else {}
    urls = _urls(local_file)
    rows = run_ops_on_rows([_download(endpoint, save_field=save_field, **params)], [{"urls": u} for u in urls])
    # values from Data-Juicer 1.6.1 (OUT = save_dir)
    o = str(out)
    want_urls = [[f"{o}/a.txt", f"{o}/c.txt"], [f"{o}/b.bin"], [local_file, f"{o}/a.txt"], []] if save_dir else urls
    assert [r["urls"] for r in rows] == want_urls
    field = save_field or ("image_bytes" if not save_dir else None)
    if field:
        assert [r[field] for r in rows] == [[b"hello A", b"deep C"], [b"\x00bin\xff"], [b"local L", b"hello A"], []]
    else:
        assert "image_bytes" not in rows[0]
    if save_dir:
        assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.bin", "c.txt"]
        assert (out / "c.txt").read_bytes() == b"deep C"


def test_download_single_urls_and_resume(endpoint, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"stale")
    rows = [{"urls": f"s3://{BUCKET}/docs/a.txt"}]
    # without resume_download the file is fetched again; with it, the file already there is used
    assert run_ops_on_rows([_download(endpoint, save_dir=str(tmp_path), save_field="b")], rows)[0]["b"] == b"hello A"
    (tmp_path / "a.txt").write_bytes(b"stale")
    out = run_ops_on_rows([_download(endpoint, save_dir=str(tmp_path), save_field="b", resume_download=True)], rows)
    assert out[0] == {"urls": str(tmp_path / "a.txt"), "b": b"stale"}
    # contents already in save_field are kept with resume_download
    rows = [{"urls": [f"s3://{BUCKET}/docs/a.txt", f"s3://{BUCKET}/b.bin"], "b": [b"kept", None]}]
    out = run_ops_on_rows([_download(endpoint, save_field="b", resume_download=True)], rows)
    assert out[0]["b"] == [b"kept", b"\x00bin\xff"]


def test_download_failures_go_to_the_error_ledger(endpoint, tmp_path):
    rows = [{"id": 0, "urls": [f"s3://{BUCKET}/docs/a.txt"]}, {"id": 1, "urls": [f"s3://{BUCKET}/missing.txt"]},
            {"id": 2, "urls": ["s3://no-such-bucket/k.txt"]}, {"id": 3, "urls": ["http://example.com/x.txt"]},
            {"id": 4, "urls": [str(tmp_path / "nope.txt")]}]
    for params in ({"save_field": "b"}, {"save_dir": str(tmp_path / "out")}):
        out = FusedRun([_download(endpoint, **params)])(rows_to_batch(rows))
        errors = {i: json.loads(e)["message"] for i, e in zip(out["id"], out[Fields.error]) if e}
        ok = [i for i, e in zip(out["id"], out[Fields.error]) if not e]
        assert ok == ([0] if "save_field" in params else [0, 4])  # a local path is only read for its bytes
        assert "missing.txt" in errors[1] and ("NoSuchKey" in errors[1] or "404" in errors[1])
        assert "no-such-bucket" in errors[2]
        assert "download_file_mapper" in errors[3]


def test_download_needs_credentials(endpoint):
    op = OPERATORS.get("s3_download_file_mapper")(download_field="urls", save_field="b", skip_op_error=False)
    with pytest.raises(Exception, match="AWS_ACCESS_KEY_ID"):
        op.process_batched({"urls": [f"s3://{BUCKET}/docs/a.txt"]})


def test_environment_credentials_take_precedence(endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    op = OPERATORS.get("s3_download_file_mapper")(download_field="u", aws_access_key_id="p", aws_secret_access_key="q",
                                                  aws_region="eu-west-1", endpoint_url=endpoint)
    assert op.s3_config == {"aws_access_key_id": "env-key", "aws_secret_access_key": "env-secret",
                            "region_name": "eu-west-1", "endpoint_url": endpoint}


def test_upload_matches_data_juicer(endpoint, s3, tmp_path):
    for name in ("u1.txt", "u2.txt"):
        (tmp_path / name).write_text(name)
    u1, u2 = str(tmp_path / "u1.txt"), str(tmp_path / "u2.txt")
    rows = [{"paths": [u1, "s3://other/k"]}, {"paths": u2}, {"paths": []}, {"paths": None}]
    # values from Data-Juicer 1.6.1: s3:// values stay, the prefix gets its final "/"
    for prefix, key_prefix in (("up/load", "up/load/"), ("", "")):
        out = run_ops_on_rows([_upload(endpoint, s3_prefix=prefix)], rows)
        assert [r["paths"] for r in out] == [[f"s3://{BUCKET}/{key_prefix}u1.txt", "s3://other/k"],
                                             f"s3://{BUCKET}/{key_prefix}u2.txt", [], None]
        assert s3.get_object(Bucket=BUCKET, Key=f"{key_prefix}u2.txt")["Body"].read() == b"u2.txt"
    assert (tmp_path / "u1.txt").exists()


def test_upload_skip_existing_and_remove_local(endpoint, s3, tmp_path):
    s3.put_object(Bucket=BUCKET, Key="skip/f.txt", Body=b"old")
    path = tmp_path / "f.txt"
    path.write_bytes(b"new")
    run_ops_on_rows([_upload(endpoint, s3_prefix="skip/")], [{"paths": str(path)}])
    assert s3.get_object(Bucket=BUCKET, Key="skip/f.txt")["Body"].read() == b"old"
    out = run_ops_on_rows([_upload(endpoint, s3_prefix="skip/", skip_existing=False, remove_local=True)],
                          [{"paths": str(path)}])
    assert out[0]["paths"] == f"s3://{BUCKET}/skip/f.txt"
    assert s3.get_object(Bucket=BUCKET, Key="skip/f.txt")["Body"].read() == b"new"
    assert not path.exists()


def test_upload_then_download_round_trip(endpoint, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    files = {f"r{i}.bin": bytes(range(i, i + 50)) * 100 for i in range(5)}
    for name, data in files.items():
        (src / name).write_bytes(data)
    up = _upload(endpoint, s3_prefix="round", max_concurrent=3)
    down = OPERATORS.get("s3_download_file_mapper")(download_field="paths", save_dir=str(tmp_path / "dst"),
                                                    max_concurrent=3, **_cred(endpoint))
    rows = run_ops_on_rows([up, down], [{"paths": [str(src / n)]} for n in files])
    assert [r["paths"] for r in rows] == [[str(tmp_path / "dst" / n)] for n in files]
    assert all((tmp_path / "dst" / n).read_bytes() == d for n, d in files.items())


def test_upload_failures_and_bad_params(endpoint, tmp_path):
    rows = [{"id": 0, "paths": str(tmp_path / "missing.txt")}]
    out = FusedRun([_upload(endpoint)])(rows_to_batch(rows))
    assert "local file not found" in json.loads(out[Fields.error][0])["message"]
    (tmp_path / "f.txt").write_text("x")
    op = OPERATORS.get("s3_upload_file_mapper")(upload_field="paths", s3_bucket="no-such-bucket-x",
                                                **_cred(endpoint))
    out = FusedRun([op])(rows_to_batch([{"paths": str(tmp_path / "f.txt")}]))
    assert "NoSuchBucket" in json.loads(out[Fields.error][0])["message"]
    make = OPERATORS.get("s3_upload_file_mapper")
    with pytest.raises(ValueError, match="s3_bucket"):
        make(upload_field="p", **_cred(endpoint))
    with pytest.raises(ValueError, match="AWS credentials"):
        make(upload_field="p", s3_bucket=BUCKET)
    with pytest.raises(ValueError, match="max_concurrent"):
        make(upload_field="p", s3_bucket=BUCKET, max_concurrent=0, **_cred(endpoint))

