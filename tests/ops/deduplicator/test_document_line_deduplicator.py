import pytest

from data_juicer.core.dataset import DJDataset
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import HashKeys

BOILER = "Copyright 2024 Example Corp. All rights reserved."
NAV = "Home | About | Contact"
SKIPPABLE = "# Header\n{\n}\n\\begin{itemize}\n<div class='x'>"
ARTICLES = [f"Article {i} starts here.\n{NAV}\nUnique content line number {i}.\n{BOILER}\n{SKIPPABLE}\nab\nx"
            for i in range(8)]
TEXTS = ARTICLES + [
    "copyright 2024 example corp. all rights reserved.",
    "COPYRIGHT 2024 EXAMPLE CORP.  ALL RIGHTS RESERVED!!",
    "Home | About | Contact\nHome | About | Contact\nsolo",
    "",
    "中文行重复\n中文行重复",
    "中文行重复\n😀 emoji line",
    "中文行重复", "中文行重复", "中文行重复", "中文行重复 ", "  中文行重复",
    "😀 emoji line\n😀 emoji line",
    "😀 emoji line", "😀 emoji line", "😀 emoji line", "😀 emoji line", "😀 emoji line", "😀 emoji line",
    "line with \r carriage\r\n" + BOILER + "\r",
    "Copyright 2025 Example Corp. All rights reserved.",
    "Copyright 1999 Example Corp; All rights reserved",
    "</p>\n<br/>\n<a href='x'\n<div>text</div>",
]
HTML_TAIL = "</p>\n<br/>\n<a href='x'\n<div>text</div>"
COPYRIGHTS = ["copyright 2024 example corp. all rights reserved.", "COPYRIGHT 2024 EXAMPLE CORP.  ALL RIGHTS RESERVED!!",
              "solo"]
COPY_2 = ["Copyright 2025 Example Corp. All rights reserved.", "Copyright 1999 Example Corp; All rights reserved"]

# values from Data-Juicer 1.6.1
KEPT_DEFAULT = ([f"Article {i} starts here.\nUnique content line number {i}.\n{SKIPPABLE}\nx" for i in range(8)]
                + COPYRIGHTS + [""] * 15 + ["line with \r carriage\r"] + COPY_2 + [HTML_TAIL])
EXPECTED = {
    "default": ({}, KEPT_DEFAULT),
    "t2": ({"frequency_threshold": 2}, KEPT_DEFAULT),
    "t2_special": ({"frequency_threshold": 2, "lowercase": True, "ignore_special_character": True},
                   [SKIPPABLE + "\nx"] * 8 + ["", "", "solo"] + [""] * 15 + ["line with \r carriage\r", "", "",
                                                                          HTML_TAIL]),
    "t2_noskip": ({"frequency_threshold": 2, "min_line_length": 0, "skip_brackets": False,
                   "skip_markdown_headers": False, "skip_latex_env": False, "skip_html_tags": False},
                  [f"Article {i} starts here.\nUnique content line number {i}." for i in range(8)]
                  + COPYRIGHTS + [""] * 15 + ["line with \r carriage\r"] + COPY_2 + [HTML_TAIL]),
    "t0_minlen10": ({"frequency_threshold": 0, "min_line_length": 10},
                    [SKIPPABLE + "\nab\nx"] * 8 + ["", "", "solo", "", "中文行重复\n中文行重复"] + ["中文行重复"] * 4
                    + ["中文行重复 ", "  中文行重复"] + [""] * 10 + ["</p>\n<br/>\n<a href='x'"]),
}
# values from Data-Juicer 1.6.1 (line hashes of the first article; "" marks a skipped line)
HASHES_0 = ["43b34b10ee3b9644d8477ae8ee418683", "ad1f3ccb9d850292d60cacd6c8213eeb", "975e5cc6233423da68e98d53483648d1",
            "3a9e3edb50b94a99f59b25c67f10b82d", "", "", "", "", "", "187ef4436122d1cc2f40dc2b92f0eba0", ""]


def make(**kw):
    return OPERATORS.get("document_line_deduplicator")(**kw)


def run(op, texts=TEXTS, show_num=0):
    ds = DJDataset.from_rows([{"text": t, "id": i} for i, t in enumerate(texts)]).map_batches(op.compute_hash)
    return ds, op.process(ds, show_num=show_num)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_matches_data_juicer(name):
    params, kept = EXPECTED[name]
    hashed, (out, _) = run(make(**params))
    assert out.column("text") == kept
    assert out.column("id") == list(range(len(TEXTS)))  # documents are never dropped
    assert HashKeys.line_hashes not in out.column_names
    if name == "default":
        assert hashed.column(HashKeys.line_hashes)[0] == HASHES_0


def test_hashes_align_with_lines_and_are_reused():
    op = make()
    batch = op.compute_hash({"text": ["a line\n\nanother line", ""]})
    assert [len(h) for h in batch[HashKeys.line_hashes]] == [3, 1]
    assert batch[HashKeys.line_hashes][0][1] == "" and batch[HashKeys.line_hashes][1] == [""]
    again = {"text": ["changed"], HashKeys.line_hashes: [["x"]]}
    assert op.compute_hash(again)[HashKeys.line_hashes] == [["x"]]


def test_no_frequent_line_keeps_texts_and_drops_hashes():
    _, (out, pairs) = run(make(), texts=["one line\nshared", "two line\nshared"])
    assert out.column("text") == ["one line\nshared", "two line\nshared"] and pairs == {}
    assert HashKeys.line_hashes not in out.column_names


def test_single_document_is_returned_as_is():
    hashed, (out, pairs) = run(make(frequency_threshold=0), texts=["dup\ndup"])
    assert out is hashed and pairs == {}


def test_threshold_is_strict_and_counts_documents_not_lines():
    # "boiler" appears 3 times in 2 documents: document frequency 2
    texts = ["boiler\nboiler\nkeep a", "boiler\nkeep b"]
    assert run(make(frequency_threshold=2), texts)[1][0].column("text") == texts
    assert run(make(frequency_threshold=1), texts)[1][0].column("text") == ["keep a", "keep b"]


def test_long_lines():
    long = "z" * 100_000
    out = run(make(frequency_threshold=1), texts=[f"{long}\nA", f"{long}\nB", "C"])[1][0]
    assert out.column("text") == ["A", "B", "C"]


def test_duplicate_pairs_for_tracing():
    _, (_, pairs) = run(make(frequency_threshold=2), show_num=2)
    # most frequent first (in 9 documents), then the 8-document lines in order of first occurrence
    assert list(pairs) == ["ad1f3ccb9d850292d60cacd6c8213eeb", "3a9e3edb50b94a99f59b25c67f10b82d"]
    assert pairs["ad1f3ccb9d850292d60cacd6c8213eeb"] == TEXTS[:2]
    _, (_, repeated) = run(make(frequency_threshold=1), texts=["rep\nrep", "rep", "rep"], show_num=1)
    assert repeated == {"75a384057459ae8e69fb9a98a249b4f4": ["rep\nrep", "rep\nrep"]}
