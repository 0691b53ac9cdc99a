"""Tests of clean_copyright_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("clean_copyright_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('/* Copyright 2020 Foo */\nint main() {}', '\nint main() {}'),
        ('/* just a comment */\ncode', '/* just a comment */\ncode'),
        ('// Copyright\n// more\n\ncode\n// not', 'code\n// not'),
        ('# comment\n#another\nimport os', 'import os'),
        ('-- sql comment\nSELECT 1;', 'SELECT 1;'),
        ('code first\n/* copyright inside */ more', 'code first\n more'),
        ('\n\n\ncode', 'code'),
        ('//only comments', ''),
        ('//a\n', ''),
        ('/* unterminated copyright\n// x\ncode', '/* unterminated copyright\n// x\ncode'),
        ('/** \n * COPYRIGHT (c) \n */\nclass A {}', '\nclass A {}'),
        ('text /* a */ and /* copyright */', 'text /* a */ and /* copyright */'),
        ('/*/ copyright */x', 'x'),
        ('#!/bin/sh\n# (c)\necho hi', 'echo hi'),
        ('  // indented\ncode', '  // indented\ncode'),
        ('\r\n// x\r\ncode', '\r\n// x\r\ncode'),
        ('/* ©opyright */ x', '/* ©opyright */ x'),
        ('-\n--\nx', '-\n--\nx'),
        ('/* COPYRİGHT */y', 'y'),
        ('/*copyright*//*second copyright*/z', '/*second copyright*/z'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_copyright_block_and_leading_comment_lines():
    texts = [
        "/*\n * Copyright (c) 2024 ACME\n */\npackage x;",
        "// SPDX\n# header\n-- sql\n\nbody\n// kept",
        "/* plain note */\n// kept because a block comment exists",
        "",
        "\n\n",
        "代码 /* 版权 copyright */ 结束😀",
    ]
    assert _run(texts) == [
        "\npackage x;",
        "body\n// kept",
        "/* plain note */\n// kept because a block comment exists",
        "",
        "",
        "代码  结束😀",
    ]


def test_very_long_text():
    body = "x = 1\n" * 20000
    assert _run(["// header\n" * 100 + body]) == [body]
    assert _run([body + "/* copyright */"]) == [body]
