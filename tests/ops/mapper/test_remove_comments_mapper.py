from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

TEXTS = [
    "\\begin{document}\n\\title{Notes} % the title\n%\\section{Hidden}\nBody 50\\% done.\n\\end{document}",
    "", "no comments here", "%only a comment\n%another\nkeep % drop\nx%\n\\%kept 100\\% % gone",
    "中文 %注释\n😀%emoji comment\n  % indented comment line",
    "a\n%b\n%c",  # the character before "%" may be a newline: lines get joined
    "%%\n%\n%x", "100%\n50% off",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_comments_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_removes_inline_and_whole_line_comments():
    assert _run(["a % note\n% line\nb"]) == ["a\nb"]
    assert _run(["a % note\n% line\nb"], inline=False) == ["a % note\nb"]
    assert _run(["a % note\n% line\nb"], multiline=False) == ["a\nb"]  # inline takes "\n% line" too
    assert _run(["a % note\n% line\nb"], inline=False, multiline=False) == ["a % note\n% line\nb"]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '\\begin{document}\n\\title{Notes}\nBody 50\\% done.\n\\end{document}',
        '',
        'no comments here',
        'keep\nx%\n\\%kept 100\\%',
        '中文\n\n ',
        'a',
        '',
        '100%\n5',
    ]
    assert _run(TEXTS, inline=False) == [
        '\\begin{document}\n\\title{Notes} % the title\nBody 50\\% done.\n\\end{document}',
        '',
        'no comments here',
        'keep % drop\nx%\n\\%kept 100\\% % gone',
        '中文 %注释\n😀%emoji comment\n  % indented comment line',
        'a\n',
        '',
        '100%\n50% off',
    ]
    assert _run(TEXTS, multiline=False) == [
        '\\begin{document}\n\\title{Notes}\nBody 50\\% done.\n\\end{document}',
        '',
        'no comments here',
        '%only a comment\nkeep\nx%\n\\%kept 100\\%',
        '中文\n\n ',
        'a',
        '%%\n%',
        '100%\n5',
    ]
