from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

LATEX = (
    "\\documentclass{article}\n"
    "\\title{Notes}\n"
    "\\begin{document}\n"
    "\\section{Intro}\n"
    "Body 😀\n"
    "\\subsection*[短]{细节}\n"
    "\\end{document}"
)
TEXTS = [
    LATEX, "", "plain text, no LaTeX at all", "中文文档😀 without header",
    "intro\n\\paragraph{P}\\chapter{C}", "\\sections{x}\n\\part*{Part}",
    "\\section[short]{never closed", "pre \\subsection[a]{b} post", "x \\subparagraph{深}内容",
    "\\chapter\n{spans}\nlines", "\\section_x{no} \\subsubsection*{yes}",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_header_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_drops_preamble_and_keeps_first_header():
    assert _run([LATEX]) == ["\\section{Intro}\nBody 😀\n\\subsection*[短]{细节}\n\\end{document}"]


def test_text_without_header_is_emptied_not_dropped():
    assert _run(["no header", "pre \\part{P} x"]) == ["", "\\part{P} x"]
    assert _run(["no header", "pre \\part{P} x"], drop_no_head=False) == ["no header", "\\part{P} x"]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '\\section{Intro}\nBody 😀\n\\subsection*[短]{细节}\n\\end{document}',
        '',
        '',
        '',
        '\\paragraph{P}\\chapter{C}',
        '\\part*{Part}',
        '',
        '\\subsection[a]{b} post',
        '\\subparagraph{深}内容',
        '',
        '\\subsubsection*{yes}',
    ]
    assert _run(TEXTS, drop_no_head=False) == [
        '\\section{Intro}\nBody 😀\n\\subsection*[短]{细节}\n\\end{document}',
        '',
        'plain text, no LaTeX at all',
        '中文文档😀 without header',
        '\\paragraph{P}\\chapter{C}',
        '\\part*{Part}',
        '\\section[short]{never closed',
        '\\subsection[a]{b} post',
        '\\subparagraph{深}内容',
        '\\chapter\n{spans}\nlines',
        '\\subsubsection*{yes}',
    ]
