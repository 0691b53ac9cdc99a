from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

PAPER = r"""\section{Intro}
As shown in Figure~\ref{fig:a}, things work.

\begin{figure}[t]
\centering
\includegraphics[width=0.5\linewidth]{figs/a.png}
\caption{A \textbf{bold {nested}} caption.}
\label{fig:a}
\end{figure}

Both parts \cref{fig:b1, fig:b} matter; \ref{fig:ab} is another label.

\begin{figure*}
\begin{subfigure}{0.4\textwidth}\includegraphics{b1.pdf}\caption{left}\label{fig:b1}\end{subfigure}
\begin{subfigure}{0.4\textwidth}\includegraphics{b2.pdf}\caption{right}\label{fig:b2}\end{subfigure}
\caption{Parent}\label{fig:b}
\end{figure*}

\begin{figure}
\begin{minipage}{0.5\textwidth}\includegraphics{m1.png}\caption{M one}\label{fig:m1}\end{minipage}
\begin{minipage}{0.5\textwidth}\captionof{table}{T}\includegraphics{t.png}\end{minipage}
\begin{minipage}{0.5\textwidth}\includegraphics[scale=2]{m2.png}\captionof{figure}{M two}\label{fig:m2}\end{minipage}
\end{figure}

\begin{equation} x = \ref{fig:m1} \end{equation}
\begin{wrapfigure}{r}{0.3\textwidth}\includegraphics{w.png}\caption*{wrapped}\label{fig:w}\end{wrapfigure}
\begin{figure}\caption{no image}\end{figure}
"""


def make(**kw):
    return OPERATORS.get("latex_figure_context_extractor_mapper")(**kw)


def test_fan_out_rows():
    out = run_ops_on_rows([make()], [{"id": 1, "text": PAPER}, {"id": 2, "text": "no figures at all"}])
    assert [r["images"] for r in out] == [["figs/a.png"], ["b1.pdf"], ["b2.pdf"], ["m1.png"], ["m2.png"], ["w.png"]]
    assert all(r["id"] == 1 and r["text"] == PAPER for r in out)  # paper 2 has no figure: dropped
    a, b1, b2, m1, m2, w = out
    assert a["caption"] == r"A \textbf{bold {nested}} caption." and a["label"] == "fig:a"
    assert a["citing_paragraphs"] == ["\\section{Intro}\nAs shown in Figure~\\ref{fig:a}, things work."]
    assert a["parent_caption"] == "" and a["parent_label"] == ""
    assert (b1["caption"], b1["label"]) == ("left", "fig:b1")
    assert (b1["parent_caption"], b1["parent_label"]) == ("Parent", "fig:b")
    cite_b = r"Both parts \cref{fig:b1, fig:b} matter; \ref{fig:ab} is another label."
    assert b1["citing_paragraphs"] == [cite_b] and b2["citing_paragraphs"] == [cite_b]  # b2 via its parent
    assert (m1["caption"], m2["caption"], m2["label"]) == ("M one", "M two", "fig:m2")
    assert m1["citing_paragraphs"] == []  # the only citation sits in an equation, which is stripped
    assert (w["caption"], w["label"]) == ("wrapped", "fig:w")


def test_custom_keys_and_commands():
    text = "See \\figref{f}.\n\n\\begin{figure}\\includegraphics{x.png}\\caption{X}\\label{f}\\end{figure}"
    out = run_ops_on_rows([make(citation_commands=["\\figref"], caption_key="cap", context_key="ctx",
                                image_key="figs")], [{"text": text}])
    assert out[0]["figs"] == ["x.png"] and out[0]["cap"] == "X" and out[0]["ctx"] == ["See \\figref{f}."]


def test_pickles_without_compiled_patterns():
    import pickle

    op = make()
    op.parse_figures(PAPER)
    clone = pickle.loads(pickle.dumps(op))
    assert clone._pat is None and len(clone.parse_figures(PAPER)) == 5
