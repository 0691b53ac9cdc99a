from data_juicer.media.tokens import (
    count_media_tokens,
    pair_chunks_with_media,
    remove_special_tokens,
    special_token,
    special_tokens,
    split_chunks,
)

IMG, EOC = "<__dj__image>", "<|__dj__eoc|>"


def test_defaults_and_env(monkeypatch):
    assert special_tokens() == {"image": IMG, "audio": "<__dj__audio>", "video": "<__dj__video>", "eoc": EOC}
    monkeypatch.setenv("_DJ_SPECIAL_TOKEN_IMAGE", "<img>")
    assert special_token("image") == "<img>"
    assert pair_chunks_with_media("a <img> b", ["x"]) == [("a  b", ["x"])]


def test_split_and_count():
    text = f"{IMG} one {EOC} two {IMG}{IMG} {EOC}"
    assert split_chunks(text) == [f"{IMG} one ", f" two {IMG}{IMG} ", ""]
    assert [count_media_tokens(c, IMG) for c in split_chunks(text)] == [1, 2, 0]


def test_pairing_skips_chunks_without_media():
    text = f"{IMG} cat {EOC} no image here {EOC}{IMG} dog {IMG}{EOC}  {IMG}"
    assert pair_chunks_with_media(text, ["a", "b", "c", "d"]) == [
        ("cat", ["a"]), ("dog", ["b", "c"]), ("", ["d"])]


def test_pairing_runs_out_of_media():
    assert pair_chunks_with_media(f"{IMG}{IMG} x", ["only"]) == [("x", ["only"])]


def test_remove_special_tokens():
    assert remove_special_tokens(f"  {IMG} hi <__dj__audio> there {EOC} ") == "hi  there"
