from dataclasses import dataclass, field
from typing import Dict, List, Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

# balanced {...} at any depth (needs the `regex` module's recursion)
_NB = r"(?:[^{}]|(?P<B>\{(?:[^{}]|(?&B))*\}))*"
# float / display / verbatim environments removed before looking for citing prose
_STRIPPED_ENVS = ("figure", r"figure\*", "wrapfigure", "table", r"table\*", "tabular", r"tabular\*", "equation",
                  r"equation\*", "align", r"align\*", "alignat", r"alignat\*", "gather", r"gather\*", "multline",
                  r"multline\*", "flalign", r"flalign\*", "algorithm", r"algorithm\*", "lstlisting", "verbatim",
                  "minted")


@dataclass
class Fig:
    """One figure (or subfigure): caption, label, image paths, and its subfigures."""

    caption: str = ""
    label: str = ""
    image_paths: List[str] = field(default_factory=list)
    sub_figures: List["Fig"] = field(default_factory=list)


class _Patterns:
    def __init__(self):
        re = require("regex", who="latex_figure_context_extractor_mapper")
        opt, args = r"(?:\[[^\]]*\])*", r"(?:\{[^}]*\})*"
        self.figure_env = re.compile(r"\\begin\{(?P<fig_env>figure\*?|wrapfigure)\}" + opt + args
                                     + r".*?\\end\{(?P=fig_env)\}", re.DOTALL)
        self.subfigure_env = re.compile(r"\\begin\{subfigure\}" + opt + args + r".*?\\end\{subfigure\}", re.DOTALL)
        self.subfig_cmd = re.compile(r"\\(?:subfigure|subfloat)\[([^\]]*)\]\s*\{(" + _NB + r")\}")
        self.subfig_nocap = re.compile(r"\\(?:subfigure|subfloat)(?!\[)\s*\{(" + _NB + r")\}")
        self.captions = [re.compile(r"\\caption\*?(?:\[[^\]]*\])?\{(" + _NB + r")\}"),
                         re.compile(r"\\subcaption(?:\[[^\]]*\])?\{(" + _NB + r")\}"),
                         re.compile(r"\\captionof\{figure\}(?:\[[^\]]*\])?\{(" + _NB + r")\}")]
        self.table_caption = re.compile(r"\\captionof\{table\}(?:\[[^\]]*\])?\{(" + _NB + r")\}")
        self.minipage = re.compile(r"\\begin\{minipage\}" + opt + args + r"(.*?)\\end\{minipage\}", re.DOTALL)
        self.label = re.compile(r"\\label\{([^}]+)\}")
        self.graphics = re.compile(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}")
        self.env_strip = re.compile(r"\\begin\{(" + "|".join(_STRIPPED_ENVS) + r")\}.*?\\end\{\1\}", re.DOTALL)
        self.re = re


@OPERATORS.register_module("latex_figure_context_extractor_mapper")
class LatexFigureContextExtractorMapper(Mapper):
    """Turns a paper's LaTeX source into one row per figure: its images, caption, label and the
    paragraphs that cite it. Samples without any figure holding an ``\\includegraphics`` are dropped.

    Figure environments: ``figure``, ``figure*``, ``wrapfigure``; inside them, subfigures
    (``subfigure`` environments, ``\\subfigure[..]{..}`` / ``\\subfloat[..]{..}`` with or
    without a caption) each give a row carrying the parent's caption and label in
    ``parent_caption_key`` / ``parent_label_key``; a figure made of two or more ``minipage``
    blocks gives one row per minipage with an image (``\\captionof{table}`` ones are skipped).
    Captions come from ``\\caption``, ``\\caption*``, ``\\subcaption`` or
    ``\\captionof{figure}`` (nested braces allowed). Citing paragraphs: the text with float,
    display and verbatim environments removed, split at ``paragraph_separator``, that holds one
    of ``citation_commands`` with the label (also inside a comma-separated list); a subfigure
    also gets its parent's. Each row keeps the input fields; images go to ``image_key``. Same
    parsing and rows as Data-Juicer 1.6.1. ``\\input``/``\\include`` are not followed.
    """

    modality = "multimodal"
    fan_out = True
    requires = ("regex",)

    def __init__(self, citation_commands: Optional[List[str]] = None, paragraph_separator: str = "\n\n",
                 caption_key: str = "caption", label_key: str = "label", context_key: str = "citing_paragraphs",
                 parent_caption_key: str = "parent_caption", parent_label_key: str = "parent_label", **kwargs):
        """
        :param citation_commands: reference commands that cite a figure (default ``\\ref``,
            ``\\cref``, ``\\Cref``, ``\\autoref``)
        :param paragraph_separator: text that separates paragraphs
        :param caption_key: output field of the figure's caption
        :param label_key: output field of the figure's label
        :param context_key: output field of the list of citing paragraphs
        :param parent_caption_key: output field of the parent figure's caption (subfigures; else '')
        :param parent_label_key: output field of the parent figure's label (subfigures; else '')
        """
        super().__init__(**kwargs)
        self.citation_commands = list(citation_commands) if citation_commands is not None else [
            r"\ref", r"\cref", r"\Cref", r"\autoref"]
        self.paragraph_separator = paragraph_separator
        self.caption_key, self.label_key, self.context_key = caption_key, label_key, context_key
        self.parent_caption_key, self.parent_label_key = parent_caption_key, parent_label_key
        self._pat: Optional[_Patterns] = None
        self._cite_cache: Dict[str, object] = {}

    def __getstate__(self):  # compiled patterns are rebuilt in each worker
        state = dict(self.__dict__)
        state["_pat"], state["_cite_cache"] = None, {}
        return state

    @property
    def pat(self) -> _Patterns:
        if self._pat is None:
            self._pat = _Patterns()
        return self._pat

    # -- parsing ---------------------------------------------------------------------------
    def _caption(self, text: str) -> str:
        for p in self.pat.captions:
            m = p.search(text)
            if m:
                return m.group(1).strip()
        return ""

    def _label(self, text: str) -> str:
        m = self.pat.label.search(text)
        return m.group(1).strip() if m else ""

    def _images(self, text: str) -> list:
        return [m.group(1).strip() for m in self.pat.graphics.finditer(text)]

    def parse_figure(self, fig_text: str):
        """A Fig, a list of Figs (minipages), or None (no image) for one figure environment."""
        env = list(self.pat.subfigure_env.finditer(fig_text))
        cmd = list(self.pat.subfig_cmd.finditer(fig_text))
        nocap = list(self.pat.subfig_nocap.finditer(fig_text))
        if env or cmd or nocap:
            pairs = ([(self._caption(m.group(0)), m.group(0)) for m in env]
                     + [(m.group(1).strip(), m.group(2)) for m in cmd] + [("", m.group(1)) for m in nocap])
            subs = [Fig(caption=c, label=self._label(body), image_paths=self._images(body)) for c, body in pairs]
            subs = [s for s in subs if s.image_paths]
            outside = fig_text
            for m in sorted(env + cmd + nocap, key=lambda m: m.start(), reverse=True):
                outside = outside[:m.start()] + outside[m.end():]
            if not subs:
                return None
            return Fig(caption=self._caption(outside), label=self._label(outside), sub_figures=subs)
        minipages = list(self.pat.minipage.finditer(fig_text))
        if len(minipages) >= 2:
            figs = []
            for mp in minipages:
                body = mp.group(1)
                if self.pat.table_caption.search(body):
                    continue
                imgs = self._images(body)
                if imgs:
                    figs.append(Fig(caption=self._caption(body), label=self._label(body), image_paths=imgs))
            return figs or None
        imgs = self._images(fig_text)
        if not imgs:
            return None
        return Fig(caption=self._caption(fig_text), label=self._label(fig_text), image_paths=imgs)

    def parse_figures(self, source: str) -> list:
        figs = []
        for m in self.pat.figure_env.finditer(source):
            res = self.parse_figure(m.group(0))
            if isinstance(res, list):
                figs.extend(res)
            elif res is not None:
                figs.append(res)
        return figs

    def paragraphs(self, source: str) -> list:
        stripped = self.pat.env_strip.sub("", source)
        return [p.strip() for p in stripped.split(self.paragraph_separator) if p.strip()]

    def citing(self, label: str, paragraphs: list) -> list:
        if not label:
            return []
        pat = self._cite_cache.get(label)
        if pat is None:
            re = self.pat.re
            cmds = "|".join(re.escape(c.lstrip("\\")) for c in self.citation_commands)
            pat = re.compile(r"\\(?:" + cmds + r")\{(?:[^},]*,\s*)*" + re.escape(label) + r"\s*(?:,[^}]*)?\}")
            self._cite_cache[label] = pat
        return [p for p in paragraphs if pat.search(p)]

    # -- fan-out ---------------------------------------------------------------------------
    def process_batched(self, samples):
        own = [self.image_key, self.caption_key, self.label_key, self.context_key, self.parent_caption_key,
               self.parent_label_key]
        keys = [k for k in samples if k not in own]
        out: Dict[str, list] = {k: [] for k in keys + own}
        n = len(samples[self.text_key])

        def emit(i, fig, cites, parent=None):
            for k in keys:
                out[k].append(samples[k][i])
            out[self.image_key].append(list(fig.image_paths))
            out[self.caption_key].append(fig.caption)
            out[self.label_key].append(fig.label)
            out[self.context_key].append(cites)
            out[self.parent_caption_key].append(parent.caption if parent else "")
            out[self.parent_label_key].append(parent.label if parent else "")

        for i in range(n):
            source = samples[self.text_key][i] or ""
            figs = self.parse_figures(source)
            if not figs:
                continue
            paras = self.paragraphs(source)
            for fig in figs:
                if fig.sub_figures:
                    parent_cites = self.citing(fig.label, paras)
                    for sub in fig.sub_figures:
                        emit(i, sub, list(dict.fromkeys(parent_cites + self.citing(sub.label, paras))), fig)
                else:
                    emit(i, fig, self.citing(fig.label, paras))
        return out
