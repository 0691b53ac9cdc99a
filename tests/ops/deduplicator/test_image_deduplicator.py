import pytest
from media_test_data import real_images, synthetic_images

pytest.importorskip("PIL")
pytest.importorskip("scipy")

from data_juicer.core.dataset import DJDataset  # noqa: E402
from data_juicer.ops import OPERATORS  # noqa: E402
from data_juicer.ops.common.image_hashes import image_hash  # noqa: E402
from data_juicer.ops.common.media import load_image  # noqa: E402
from data_juicer.utils.constant import Fields, HashKeys  # noqa: E402

METHODS = ("phash", "dhash", "whash", "ahash")
# values from Data-Juicer 1.6.1 (imagededup 0.3.3, Pillow 13.0): "phash dhash whash ahash" of each image
HASHES = {
    "syn_checker.png": "ffaaffaaffaaffaa db24db24db24db24 33cc33cc33cc33cc 4db24db24db24db2",
    "syn_flat.png": "ffffffffffffffff 0000000000000000 ffffffffffffffff ffffffffffffffff",
    "syn_gradient.png": "aa7fff7fff7fff7f ffffffffffffffff 07070f0f0f1f1f1f 07070f0f0f0f1f1f",
    "syn_rgb.png": "953e71664953d52b fefefef8f6eedcda 0000020e3e7fffff 0000061e3f7fffff",
    "syn_rgb_mirror.png": "c06b66331c0fe17f 808080a09088c4a4 000040707cfeffff 00006078fcfeffff",
    "syn_rgb_small.png": "953e71664953d52b fefefef8f6eedcda 0000020e3e7fffff 0000061e3f7fffff",
}
REAL_HASHES = {
    "IMG_20191224_234846.jpg": "ca2e8bf22dd02f99 656d6167c22998f3 1713153170fcfc78 1301110020f4fc78",
    "IMG_20200124_231153.jpg": "9272ed29c1ced4b3 0309acccdddcfec2 000004246f7fffff 0000043c4f7fffff",
    "IMG_20200608_111614.jpg": "98ece9761a673163 aeb7b27c2d4dcfb8 ffff7f1e0404000e d7ff7f1c0400000c",
    "IMG_20200827_231612.jpg": "c5d90262fcf80bf3 94c4423242c8c6e6 ff7ffafae0600000 ff7ffafae0200000",
    "astronaut.png": "c2924c5d32bddfc8 cd8dd91d897293a7 7f775fc744f80040 7f7f7fc744f8d050",
    "astronaut_bright.png": "c2924c5d32bddfc8 cd8dd91d897293a7 7f775fc744f80040 7f7f7fc744f8d050",
    "astronaut_copy.png": "c2924c5d32bddfc8 cd8dd91d897293a7 7f775fc744f80040 7f7f7fc744f8d050",
    "astronaut_crop.png": "d2924c5532bfddc8 8dad991d895213a6 7f755fc744f88040 7f7f7fc744f89050",
    "astronaut_q70.jpg": "c2924c5d32bddfc8 cd8dd91d897293a7 7f775fc744f80040 7f7f7fc744f8d050",
    "astronaut_small.png": "c2924c5d32bddfc8 cd8dd91d897293a7 7f775fc744f80040 7f7f7fc744f8d050",
    "camera.png": "bff1c1c0434e8cbe 509a3c7fbc756cec ffcf8f0107171606 ffcf8f07071f1f1f",
    "chelsea.png": "b15fe6465121975e 5414589aab6fa785 c2c08e4b09a377f7 82808e4b09a373e7",
    "chelsea_flip.png": "f40ab33b5474c68f d5d7e5a62a091a4e 430371d290c5eeef 410171d290c5cee7",
    "chelsea_rgba.png": "b15fe6465121975e 5414589aab6fa785 c2c08e4b09a377f7 82808e4b09a373e7",
    "chessboard_GRAY.png": "ffffffffffffffff 5aa55aa55aa55aa5 aa55aa55aa55aa55 aa55aa55aa55aa55",
    "coffee.png": "bb8320376c0f3677 f3e96933160b1b36 3f7f3fbb818080c1 3f3fbfbb838081c3",
    "coins.png": "e4d5b5a92b56523a a2e285a553d5264f ffff80fc01399201 ffffe0f001218003",
    "d-debian.jpg": "80ab6f892f856f8d c3888c8cd8cc9665 016c76766e7e7e00 016c7e7e7e7e7e00",
    "d-debian.ppm": "80ab6f892f856f8d c3888c8cd8cc966d 016c76766e7e7e00 016c7e7e7e7e7e00",
    "debian_logo.png": "bbe86bb03026e733 932b6b26990c5d73 c399ab97cfff0000 c399abdfdfff0000",
    "empty.jpg": "ffffffffffffffff 0000000000000000 ffffffffffffffff ffffffffffffffff",  # 161 x 1 pixels
    "european-honey-bee.jpg": "903742fdcb4b25cd c88cdcd9b2b6b1e1 0e060f0f1f1e5c7d 06060f0f1f0e5c78",
    "hubble_deep_field.jpg": "84cc4f96ba4d333e 60d6caa435546458 387a62f08f369aac 387860f09706900c",
    "logo.png": "bec9e036859cc33b 0e3369235f6d3f0f ffc18999818583e7 e7818901018183e7",
    "motorcycle_left.png": "c507c66b9370aa77 ccc6c696d81380e0 3c3a22420cf8f8ff 343a02020cc8e8fe",
    "motorcycle_right.png": "d507c36b9378aa53 ccc4c4b4903510e0 6c3e26424af0f0fe 7c36060608d0f0fe",
    "no_time_for_that_tiny.gif": "ecc2ed19d2dc929a 33a7e3c5ed153687 fff3f120000093ff fff3f120000093ff",
    "rocket.jpg": "c0371bec1bed1267 c0c0c0d0909090d1 000070fcfcfcfc7c 00002078f8fcfc7c",
}
# (id, text, images): exact copies, near duplicates, a mirror image, repeated images in one
# sample, samples without images, and format twins (ppm / jpg)
SAMPLES = [
    (0, "a", ["astronaut.png"]), (1, "b", ["astronaut_copy.png"]), (2, "a", ["astronaut_small.png"]),
    (3, "c", ["astronaut_q70.jpg"]), (4, "d", ["astronaut_bright.png"]), (5, "e", ["astronaut_crop.png"]),
    (6, "f", []), (7, "f", []), (8, "g", ["chelsea.png", "coffee.png"]), (9, "g", ["chelsea_rgba.png", "coffee.png"]),
    (10, "h", ["coffee.png", "chelsea.png"]), (11, "i", ["chelsea.png", "chelsea.png", "coffee.png"]),
    (12, "j", ["chelsea_flip.png"]), (13, "k", ["d-debian.ppm"]), (14, "k", ["d-debian.jpg"]),
    (15, "l", ["syn_rgb.png"]), (16, "m", ["syn_rgb_small.png"]), (17, "n", ["syn_rgb_mirror.png"]),
    (18, "o", ["motorcycle_left.png"]), (19, "p", ["motorcycle_right.png"]), (20, "q", ["syn_flat.png"]),
    (21, "a", ["astronaut.png"]),
]
# values from Data-Juicer 1.6.1: ids kept, per method, without and with consider_text
KEPT = {
    "phash": ([0, 5, 6, 7, 8, 10, 12, 13, 15, 17, 18, 19, 20],
              [0, 1, 3, 4, 5, 6, 8, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20]),
    "dhash": ([0, 5, 6, 7, 8, 10, 12, 13, 14, 15, 17, 18, 19, 20],
              [0, 1, 3, 4, 5, 6, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
    "whash": ([0, 5, 6, 7, 8, 10, 12, 13, 15, 17, 18, 19, 20],
              [0, 1, 3, 4, 5, 6, 8, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20]),
    "ahash": ([0, 5, 6, 7, 8, 10, 12, 13, 15, 17, 18, 19, 20],
              [0, 1, 3, 4, 5, 6, 8, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20]),
}


def make(**kw):
    return OPERATORS.get("image_deduplicator")(**kw)


def hashes_of(folder, names, method):
    op = make(method=method)
    batch = {"text": [""] * len(names), "images": [[str(folder / n)] for n in names]}
    return op.compute_hash(batch)[HashKeys.imagehash]


@pytest.mark.parametrize("method", METHODS)
def test_synthetic_hashes_match_data_juicer(tmp_path, method):
    names = sorted(HASHES)
    got = hashes_of(synthetic_images(tmp_path), names, method)
    assert got == [HASHES[n].split()[METHODS.index(method)] for n in names]


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    return synthetic_images(real_images(folder))


@pytest.mark.slow  # 12-megapixel phone photos
def test_real_hashes_match_data_juicer(image_dir):
    names = sorted(REAL_HASHES)
    assert hashes_of(image_dir, names, "phash") == [REAL_HASHES[n].split()[0] for n in names]
    for n in names:  # each image loaded once for the four methods
        img = load_image(str(image_dir / n))
        assert " ".join(image_hash(img, m) for m in METHODS) == REAL_HASHES[n], n


@pytest.mark.parametrize("method", METHODS)
def test_kept_samples_match_data_juicer(image_dir, method):
    rows = [{"id": i, "text": t, "images": [str(image_dir / n) for n in imgs]} for i, t, imgs in SAMPLES]
    for consider_text, want in zip((False, True), KEPT[method]):
        op = make(method=method, consider_text=consider_text)
        out, pairs = op.process(DJDataset.from_rows(rows).map_batches(op.compute_hash, batch_size=7), show_num=2)
        assert out.column("id") == want
        assert all(len(v) == 2 for v in pairs.values()) and len(pairs) == 2


def test_traced_pairs_and_bytes(tmp_path):
    folder = synthetic_images(tmp_path)
    names = ["syn_rgb.png", "syn_flat.png", "syn_rgb_small.png", "syn_rgb.png", "syn_flat.png", "syn_checker.png"]
    rows = [{"id": i, "images": [str(folder / n)]} for i, n in enumerate(names)]
    rows.append({"id": 6, "images": []})
    rows.append({"id": 7, "images": []})
    op = make(method="dhash")
    out, pairs = op.process(DJDataset.from_rows(rows).map_batches(op.compute_hash), show_num=5)
    assert out.column("id") == [0, 1, 5, 6, 7]  # samples without images are kept
    # most duplicated first: syn_rgb (3 samples), then syn_flat (2)
    assert {k: [r["id"] for r in v] for k, v in pairs.items()} == {"fefefef8f6eedcda": [0, 2],
                                                                    "0000000000000000": [1, 4]}
    # images read from the bytes field where it holds bytes, at the path's first position
    data = (folder / "syn_checker.png").read_bytes()
    batch = {"images": [[str(folder / "syn_rgb.png"), str(folder / "syn_flat.png")]], "image_bytes": [[data, None]]}
    assert op.compute_hash(batch)[HashKeys.imagehash] == ["db24db24db24db24" "0000000000000000"]


def test_context_reuse_edge_cases_and_errors(tmp_path):
    folder = synthetic_images(tmp_path)
    op = make(method="ahash")
    ctx = [{}]
    batch = {"images": [[str(folder / "syn_rgb.png")]], Fields.context: ctx}
    assert op.compute_hash(batch)[HashKeys.imagehash] == ["0000061e3f7fffff"]
    assert list(ctx[0]) == [str(folder / "syn_rgb.png")]  # the loaded image is shared with fused ops
    assert op.compute_hash({"text": ["x"]})[HashKeys.imagehash] == [""]  # no image field
    assert op.compute_hash({"images": [["a"]], HashKeys.imagehash: ["h"]})[HashKeys.imagehash] == ["h"]  # reused
    single, pairs = op.process(DJDataset.from_rows([{"images": [], HashKeys.imagehash: ""}]))
    assert len(single) == 1 and pairs == {}
    with pytest.raises(ValueError, match="unknown method 'md5'"):
        make(method="md5")
    with pytest.raises(FileNotFoundError):
        op.compute_hash({"images": [[str(folder / "missing.png")]]})
