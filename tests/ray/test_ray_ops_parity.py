"""Every registered op that can run here gives the same output on Ray as on the default executor.

One small recipe per op (default parameters, or the few in PARAMS an op needs to do something),
run with both executors on the same varied input; outputs and stats files must be equal.
"""
import json
import os

import pytest

from data_juicer.cli.process import main
from data_juicer.ops.registry import OPERATORS
from tests.conftest import read_jsonl, write_jsonl

PARAMS = {
    "remove_long_words_mapper": {"min_len": 1, "max_len": 12},
    "replace_content_mapper": {"pattern": r"\d{2,}", "repl": "<NUM>"},
    "python_lambda_mapper": {"lambda_str": "lambda sample: {**sample, 'text': sample['text'].strip().lower()}"},
    "general_field_filter": {"filter_condition": "meta.length > 40 and meta.lang != 'zh'"},
    "specified_field_filter": {"field_key": "meta.lang", "target_value": ["en", "de"]},
    "specified_numeric_field_filter": {"field_key": "meta.length", "min_value": 20, "max_value": 200},
    "random_selector": {"select_num": 9},
    "range_specified_field_selector": {"field_key": "meta.length", "lower_percentile": 0.25, "upper_percentile": 0.75},
    "topk_specified_field_selector": {"field_key": "meta.length", "topk": 7},
    "frequency_specified_field_selector": {"field_key": "meta.lang", "topk": 2},
    "tags_specified_field_selector": {"field_key": "meta.lang", "target_tags": ["en", "de"]},
    "text_length_filter": {"min_len": 20, "max_len": 300},
    "words_num_filter": {"min_num": 4},
}

TEXTS = [
    "Hello world! Contact me at someone@example.com or visit https://example.org/page?x=1 today.",
    "<html><body><p>Some <b>bold</b> text</p><table><tr><td>a</td><td>b</td></tr></table></body></html>",
    "中文文本的长度超过十个字符了吧。这里还有更多的中文句子，用于测试。",
    "Ein deutscher Satz mit Umlauten: äöü ß. Noch ein Satz hier.",
    "   lots   of\u3000odd\u2003whitespace\t\tand\r\nCRLF lines   ",
    "Copyright (c) 2020 ACME\n# comment\ndef f(x):\n    return x + 1  # inline\n",
    "short",
    "",
    "repeat repeat repeat repeat repeat repeat repeat repeat",
    "Server at 192.168.0.1 and ::1 answered; call 555-123-4567 now!!!",
    "\\documentclass{article}\\newcommand{\\foo}{bar}\\begin{document}\\foo\\end{document}",
    "Emoji 😀 text with curly “quotes” and full-width ＡＢＣ１２３ punctuation，。",
    "Line one.\nLine one.\nLine two is a bit longer than the others.\nLine one.",
    "Hello world! Contact me at someone@example.com or visit https://example.org/page?x=1 today.",
    "hello world! contact me at someone@example.com or visit https://example.org/page?x=1 today.",
    "The quick brown fox jumps over the lazy dog. " * 8,
    "mojibake: cafÃ© and naÃ¯ve words",
    "x" * 300,
    "1234567890 numbers 9876543210 only 42",
    "References\n[1] A. Author. A paper. 2020.\n[2] B. Author. Another. 2021.",
]
LANGS = ["en", "en", "zh", "de", "en", "code", "en", "en", "en", "en", "en", "en", "en", "en", "en", "en", "fr",
         "en", "en", "en"]
ROWS = [{"id": i, "text": t, "meta": {"lang": lang, "length": len(t), "source": f"s{i % 3}"}}
        for i, (t, lang) in enumerate(zip(TEXTS, LANGS))]


def _candidates():
    from data_juicer.core.ray_executor import ray_support

    out = []
    for name, cls in sorted(OPERATORS.items()):
        if getattr(cls, "modality", "text") not in ("text", "general"):
            continue  # no media files in this input
        if ray_support(cls) is not None:
            continue  # rejected at validation (tested in test_ray_executor)
        out.append(name)
    return out


def _run(tmp_path, kind, name, params):
    base = tmp_path / kind
    rows = ROWS
    if name == "document_minhash_deduplicator_with_uid":
        rows = [dict(r, __dj__uid=1000 + r["id"]) for r in ROWS]
    data = write_jsonl(base / "data.jsonl", rows)
    import yaml

    cfg = {"project_name": "parity", "np": 2, "executor_type": kind, "dataset_path": data,
           "export_path": str(base / "out" / "result.jsonl"), "keep_stats_in_res_ds": True,
           "process": [{name: params or None}]}
    path = base / "recipe.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    code = main(["--config", str(path)])
    return code, base / "out"


# the slowest ones (model loads in actors, many LLM round trips: 7-10 s each) run in the slow target
SLOW = {"text_action_filter", "text_entity_dependency_filter", "optimize_prompt_mapper"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in _candidates()])
def test_op_output_equal_on_ray(name, tmp_path, ray_local):
    params = PARAMS.get(name, {})
    try:
        OPERATORS.get(name)(**params)
    except Exception as e:  # a missing optional package or a parameter without a default
        pytest.skip(f"{name} cannot be built here with {params}: {type(e).__name__}: {str(e)[:120]}")
    try:
        code, ref = _run(tmp_path, "default", name, params)
    except Exception as e:
        pytest.skip(f"{name}: the default executor does not run it on this input ({type(e).__name__}: {e})")
    if code != 0:
        pytest.skip(f"{name}: the default executor does not run it on this input (exit {code})")
    code, got = _run(tmp_path, "ray", name, params)
    assert code == 0
    ours, theirs = read_jsonl(got / "result.jsonl"), read_jsonl(ref / "result.jsonl")
    assert ours == theirs, name
    stats = ref / "result_stats.jsonl"
    if stats.exists():
        assert read_jsonl(got / "result_stats.jsonl") == read_jsonl(stats)
    # the job folder (other folders there: e.g. the LLM ops' response cache)
    err_ref = [os.path.join(ref, d, "errors.jsonl") for d in os.listdir(ref) if (ref / d / "summary.json").exists()][0]
    err_got = [os.path.join(got, d, "errors.jsonl") for d in os.listdir(got) if (got / d / "summary.json").exists()][0]
    if os.path.exists(err_ref):
        key = lambda e: json.dumps(e, sort_keys=True)  # noqa: E731
        assert sorted(read_jsonl(err_got), key=key) == sorted(read_jsonl(err_ref), key=key)
