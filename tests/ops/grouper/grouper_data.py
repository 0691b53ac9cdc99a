ROWS = [
    {"text": "a", "meta": {"lang": "en", "n": 1}, "tags": ["x"], "score": 1.0, "__dj__stats__": {"len": 1}},
    {"text": "b", "meta": {"lang": "zh", "n": 2}, "tags": [], "score": 2.5, "__dj__stats__": {"len": 2}},
    {"text": "a", "meta": {"lang": "en", "n": 3}, "tags": ["y", "z"], "score": 1.0, "__dj__stats__": {"len": 1}},
    {"text": "中文", "meta": {"lang": "zh", "n": 4}, "tags": ["x"], "score": None, "__dj__stats__": {"len": 2}},
    {"text": "😀", "meta": {"lang": None, "n": 5}, "tags": ["x"], "score": 2.5, "__dj__stats__": {"len": 1}},
]
E2E_ROWS = [{"id": i, "text": t, "meta": {"lang": lang}}
            for i, (t, lang) in enumerate([("hello", "en"), ("你好", "zh"), ("world", "en"), ("😀", None)])]


def as_rows(ds):
    cols = ds.column_names
    return [dict(zip(cols, vals)) for vals in zip(*(ds.column(c) for c in cols))]
