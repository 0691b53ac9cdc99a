from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

LATEX = (
    "\\documentclass{article}\n"
    "\\section{Intro}\n"
    "Body 😀 中文\n"
    "\\bibliography{refs}\n"
    "\\appendix\n"
    "\\section{Proofs}\n"
    "\\end{document}"
)
TEXTS = [
    LATEX, "", "plain text, no LaTeX at all", "中文文档😀",
    "text \\begin{thebibliography}{9}\\bibitem{a} A\\end{thebibliography}",
    "\\bibliography{x",  # no closing brace anywhere after it: kept
    "a \\begin{REFERENCES} b", "\\subparagraph{深}内容\n\\begin{references}\nx",
    "A\\appendix B \\bibliography{y}", "\\Appendix \\begin{References}",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_bibliography_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_cuts_at_first_bibliography_command():
    assert _run([LATEX]) == ["\\documentclass{article}\n\\section{Intro}\nBody 😀 中文\n"]
    assert _run(["x\\appendix y\\bibliography{z}"]) == ["x"]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '\\documentclass{article}\n\\section{Intro}\nBody 😀 中文\n',
        '',
        'plain text, no LaTeX at all',
        '中文文档😀',
        'text ',
        '\\bibliography{x',
        'a ',
        '\\subparagraph{深}内容\n',
        'A',
        '\\Appendix \\begin{References}',
    ]
