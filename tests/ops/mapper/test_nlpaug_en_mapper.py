import random

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

np = pytest.importorskip("numpy")
pytest.importorskip("nlpaug")
pytestmark = pytest.mark.slow  # importing nlpaug's augmenters imports torch and transformers: seconds

NAME = "nlpaug_en_mapper"
EN = ["The quick brown fox jumps over the lazy dog.", "I love LLM and data processing!", "", "a",
      "Hello, world. 123 numbers & symbols; 中文 mixed 😀"]

# values from Data-Juicer 1.6.1, seeding random and numpy.random with 7 right before processing:
# (params, [(index of the source text, text), ...])
EN_CASES = [({'aug_num': 2, 'delete_random_word': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick jumps the lazy dog.'),
              (0, 'Quick brown fox jumps over lazy dog.'), (1, 'I love LLM and data processing!'), (1, 'Love and processing!'),
              (1, 'Love LLM and processing!'), (2, ''), (3, 'a'), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'), (4, ',. 123 & symbols; 中文 😀'),
              (4, ',. 123 &; 中文 mixed 😀')]),
            ({'swap_random_word': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The brown fox quick over jumps the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'LLM I love data and processing!'), (2, ''), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, ', world hello. 123 & numbers symbols; mixed 中文 😀')]),
            ({'split_random_word': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick br own fox j umps ov er the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'I lo ve LLM and da ta process ing!'), (2, ''), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, 'H ello, wor ld. 123 numbers & sy mbols; 中文 m ixed 😀')]),
            ({'keyboard_error_char': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick nrowG fox Nu,ps ICer the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'I :oFe LLM and sa%a LrISessing!'), (2, ''), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, 'H3llP, w9rlR. 123 mumb$Ds & symbols; 中文 mixWw 😀')]),
            ({'aug_num': 2, 'ocr_error_char': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick 6ruwn fox jumps uvek the lazy dog.'),
              (0, 'The 9uicr brown fox jumps over the lazy du9.'), (1, 'I love LLM and data processing!'),
              (1, 'I love LLM and data processing!'), (1, '1 10ve LLM and data processing!'), (2, ''), (3, 'a'), (3, 'a'),
              (3, 'a'), (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, 'Hello, world. 123 nombek8 & symbols; 中文 mixed 😀'),
              (4, 'Hello, world. 123 num6ek8 8 symbols; 中文 mixed 😀')]),
            ({'delete_random_char': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick row fox ump ov the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'I ve LLM and at poesing!'), (2, ''), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'), (4, 'Hel, world. 123 mber & sbls; 中文 mxd 😀')]),
            ({'swap_random_char': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick rbonw fox mjups vore the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'I olev LLM and adat porcsesign!'), (2, ''), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, 'Lhelo, wrodl. 123 numbesr & ysbmlos; 中文 mixed 😀')]),
            ({'insert_random_char': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The quick Mbrow&n fox bju#mps 1ove3r the lazy dog.'),
              (1, 'I love LLM and data processing!'), (1, 'I Plov_e LLM and d+aHta )procesFsincg!'), (2, ''), (3, 'a'),
              (3, 'a'), (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'),
              (4, 'nHell+o, w+orlNd. 123 nIu(mbeMrs & symbols; 中文 @mixead 😀')]),
            ({'aug_num': 2, 'delete_random_word': True, 'keyboard_error_char': True, 'sequential': True},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (0, 'The Suic. j tmpD the lQzJ dog.'),
              (0, 'wuicl brown fox jumps (ve4 lSsy dog.'), (1, 'I love LLM and data processing!'), (1, 'L)v2 and orovessint!'),
              (1, 'I ?)ve procWssonf!'), (2, ''), (3, 'a'), (3, 'a'), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀'), (4, 'jePlo, . numh2rD & CyKvols; 中文'),
              (4, 'H3plo, Q*rld. & shmho/s; mixed')]),
            ({'insert_random_char': True, 'keep_original_sample': False, 'swap_random_word': True},
             [(0, 'The brown fox quick over jumps the lazy dog.'), (0, 'The 3qLuick brown fox Ljumeps over the Plaz_y dog.'),
              (1, 'LLM I love data and processing!'), (1, 'I l*oSve LLM and )danta p(rMovcessing!'), (3, 'a'), (3, 'a'),
              (4, ', hello. world 123 & numbers; symbols 中文 mixed 😀'),
              (4, 'Hello, wKorlfd. 123 nu5mbrer@s & 1sy$mbPols; 中文 m!iTxed 😀')]),
            ({'keep_original_sample': False}, []),
            ({},
             [(0, 'The quick brown fox jumps over the lazy dog.'), (1, 'I love LLM and data processing!'), (2, ''), (3, 'a'),
              (4, 'Hello, world. 123 numbers & symbols; 中文 mixed 😀')])]


def _run(texts=EN, seed=7, **params):
    op = OPERATORS.get(NAME)(**params)
    random.seed(seed)
    np.random.seed(seed)
    return [(r["id"], r["text"]) for r in run_ops_on_rows([op], [{"text": t, "id": i} for i, t in enumerate(texts)])]


@pytest.mark.parametrize("params,expected", EN_CASES)
def test_matches_data_juicer(params, expected):
    assert _run(**params) == expected


def test_spelling_errors_are_repeatable():
    # nlpaug lists misspellings out of a set, so Data-Juicer's picks change with PYTHONHASHSEED;
    # here the lists are sorted, so a seeded run gives these in every process
    assert _run(spelling_error_word=True, aug_num=2) == [
        (0, "The quick brown fox jumps over the lazy dog."), (0, "The qchick Brow fox jumps ower the lazy dog."),
        (0, "Te quick brwon fox jumps over te lazy dog."), (1, "I love LLM and data processing!"),
        (1, "A law LLM and data procession!"), (1, "I'm love LLM and datas procession!"), (2, ""), (3, "a"),
        (3, "g"), (3, "as"), (4, "Hello, world. 123 numbers & symbols; 中文 mixed 😀"),
        (4, "Hallow, word. 123 nunbers & symblos; 中文 mixed 😀"), (4, "Holla, wolrd. 123 numbers & symblos; 中文 mixt 😀")]


def test_counts_fields_and_stats():
    op = OPERATORS.get(NAME)(delete_random_char=True, swap_random_char=True, aug_num=3)
    out = op.process_batched({"text": ["some words to change here", "more text"], "meta": [1, 2],
                              Fields.stats: [{"s": 1}, {}]})
    assert len(out["text"]) == 2 * (1 + 2 * 3)
    assert out["text"][0] == "some words to change here" and out["text"][7] == "more text"
    assert out["meta"] == [1] * 7 + [2] * 7
    assert out[Fields.stats][1] == {"s": 1} and out[Fields.stats][1] is not out[Fields.stats][0]
    seq = OPERATORS.get(NAME)(delete_random_char=True, swap_random_char=True, aug_num=3, sequential=True,
                              keep_original_sample=False)
    assert len(seq.process_batched({"text": ["some words to change here"]})["text"]) == 3


def test_op_pickles_without_its_augmenters():
    import pickle

    op = OPERATORS.get(NAME)(ocr_error_char=True)
    clone = pickle.loads(pickle.dumps(op))
    assert clone._aug is None
    random.seed(1)
    np.random.seed(1)
    a = clone.process_batched({"text": ["hello world"]})["text"]
    random.seed(1)
    np.random.seed(1)
    assert op.process_batched({"text": ["hello world"]})["text"] == a
