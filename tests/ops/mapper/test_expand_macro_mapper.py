from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

LATEX = (
    "\\documentclass{article}\n"
    "\\newcommand{\\R}{\\mathbb{R}}\n"
    "\\newcommand*{\\eps}{\\varepsilon}\n"
    "\\def\\name{Data-Juicer 😀}\n"
    "\\begin{document}\n"
    "\\section{Intro}\n"
    "Let $x \\in \\R$, $\\eps>0$ and \\name. 50\\% done.\n"
    "Body \\Rx \\R\n"
    "\\end{document}"
)
TEXTS = [
    LATEX, "", "plain text, no LaTeX at all", "中文文档😀 \\R without definitions",
    "\\newcommand{\\a}{A}\\a \\a\\a \\a",  # the definition must end its line
    "\\def \\b {x}\n\\b\\b, \\b",  # the character after a use is consumed
    "\\def\\v{\\1 \\g<0> é\t😀}\nuse \\v here",  # values are literal, escapes and all
    "\\newcommand{\\m}{one}\n\\def\\m{two}\n\\m.",  # \def wins over \newcommand
    "\\def\\m{x}\n\\m",  # a use at the very end of the text stays
]


def _run(texts, **params):
    op = OPERATORS.get("expand_macro_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_expands_macros_in_body_and_definitions():
    out = _run([LATEX])[0]
    assert "Let $x \\in \\mathbb{R}$, $\\varepsilon>0$ and Data-Juicer 😀." in out
    assert "\\newcommand{\\mathbb{R}}{\\mathbb{R}}" in out  # the definition line is expanded too
    assert "Body \\Rx \\mathbb{R}" in out  # \Rx is another word


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        ('\\documentclass{article}\n'
         '\\newcommand{\\mathbb{R}}{\\mathbb{R}}\n'
         '\\newcommand*{\\varepsilon}{\\varepsilon}\n'
         '\\defData-Juicer 😀{Data-Juicer 😀}\n'
         '\\begin{document}\n'
         '\\section{Intro}\n'
         'Let $x \\in \\mathbb{R}$, $\\varepsilon>0$ and Data-Juicer 😀. 50\\% done.\n'
         'Body \\Rx \\mathbb{R}\n'
         '\\end{document}'),
        '',
        'plain text, no LaTeX at all',
        '中文文档😀 \\R without definitions',
        '\\newcommand{\\a}{A}\\a \\a\\a \\a',
        '\\def x {x}\nx\\b, \\b',
        '\\def\\1 \\g<0> é\t😀{\\1 \\g<0> é\t😀}\nuse \\1 \\g<0> é\t😀 here',
        '\\newcommand{two}{one}\n\\deftwo{two}\ntwo.',
        '\\defx{x}\n\\m',
    ]
