import hashlib
import re
import string

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from data_juicer.ops.base import Deduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys

# Lines the skip rules exempt, as data (Data-Juicer 1.6.1's definitions):
_BRACKET_CHARS = frozenset("{}[]();")
_LATEX_ENV = re.compile(r"\\(?:begin|end)\{")  # at the start of the stripped line
_HTML_TAG = re.compile(r"</?[a-z][a-z0-9]*[^>]*>?\s*\Z", re.IGNORECASE)  # the whole stripped line
# ``ignore_special_character`` removes Unicode whitespace (str.isspace), decimal digits and ASCII punctuation
_SPECIAL = re.compile(rf"[\s\d{re.escape(string.punctuation)}]+")


@OPERATORS.register_module("document_line_deduplicator")
class DocumentLineDeduplicator(Deduplicator):
    """Removes boilerplate lines: each line (text split on ``\\n``) gets an MD5 hash in
    ``__dj__line_hashes`` (optionally lower-cased and without whitespace, digits and ASCII
    punctuation; then stripped), and every line whose hash occurs in more than
    ``frequency_threshold`` documents is deleted from every document. Documents are kept, even
    when all their lines go. Lines a skip rule matches are never counted nor removed: lines
    shorter than ``min_line_length`` once stripped, lines of only ``{}[]();``, markdown headers
    (``#...``), LaTeX ``\\begin{``/``\\end{`` lines and lines that are a lone HTML tag."""

    def __init__(
        self,
        frequency_threshold: int = 6,
        lowercase: bool = False,
        ignore_special_character: bool = False,
        min_line_length: int = 2,
        skip_brackets: bool = True,
        skip_markdown_headers: bool = True,
        skip_latex_env: bool = True,
        skip_html_tags: bool = True,
        **kwargs,
    ):
        """
        :param frequency_threshold: a line found in more than this many documents is removed
        :param lowercase: compare lines case-insensitively
        :param ignore_special_character: ignore whitespace, digits and ASCII punctuation when comparing lines
        :param min_line_length: never remove lines shorter than this (after stripping)
        :param skip_brackets: never remove lines made only of ``{ } [ ] ( ) ;``
        :param skip_markdown_headers: never remove lines starting with ``#``
        :param skip_latex_env: never remove LaTeX ``\\begin{...}`` / ``\\end{...}`` lines
        :param skip_html_tags: never remove lines that are a single HTML/XML tag
        """
        super().__init__(**kwargs)
        self.frequency_threshold = frequency_threshold
        self.lowercase = lowercase
        self.ignore_special_character = ignore_special_character
        self.min_line_length = min_line_length
        self.skip_brackets = skip_brackets
        self.skip_markdown_headers = skip_markdown_headers
        self.skip_latex_env = skip_latex_env
        self.skip_html_tags = skip_html_tags

    def _skipped(self, stripped: str) -> bool:
        return (len(stripped) < self.min_line_length
                or (self.skip_brackets and _BRACKET_CHARS.issuperset(stripped))
                or (self.skip_markdown_headers and stripped.startswith("#"))
                or (self.skip_latex_env and _LATEX_ENV.match(stripped) is not None)
                or (self.skip_html_tags and _HTML_TAG.match(stripped) is not None))

    def _line_hashes(self, text: str) -> list[str]:
        md5, skipped, lower, special = hashlib.md5, self._skipped, self.lowercase, self.ignore_special_character
        out = []
        for line in text.split("\n"):
            if skipped(line.strip()):
                out.append("")
                continue
            if lower:
                line = line.lower()
            if special:
                line = _SPECIAL.sub("", line)
            out.append(md5(line.strip().encode("utf-8")).hexdigest())
        return out

    def compute_hash(self, samples):
        if HashKeys.line_hashes in samples:
            return samples
        samples[HashKeys.line_hashes] = [self._line_hashes(t) for t in samples[self.text_key]]
        return samples

    def process(self, dataset, show_num: int = 0):
        """Delete the frequent lines; also return up to ``show_num`` removed line hashes (in most
        documents first) with the texts of their first two occurrences, for the tracer."""
        if len(dataset) <= 1:
            return dataset, {}
        col = dataset.arrow_column(HashKeys.line_hashes).combine_chunks()
        flat = pc.list_flatten(col)
        parents = pc.list_parent_indices(col)
        nonempty = pc.greater(pc.utf8_length(flat), 0)
        flat_ne, parents_ne = pc.filter(flat, nonempty), pc.filter(parents, nonempty)
        # document frequency: count each (document, hash) pair once
        pairs = pa.table({"doc": parents_ne, "h": flat_ne}).group_by(["doc", "h"]).aggregate([])
        counts = pc.value_counts(pairs.column("h"))
        freq = counts.field("counts").to_numpy(zero_copy_only=False)
        frequent_mask = freq > self.frequency_threshold
        if not frequent_mask.any():
            return dataset.remove_columns([HashKeys.line_hashes]), {}
        frequent = counts.field("values").filter(pa.array(frequent_mask))
        dup_pairs = self._duplicate_pairs(dataset, flat, parents, frequent, freq[frequent_mask], show_num) \
            if show_num > 0 else {}
        high = set(frequent.to_pylist())
        text_key = self.text_key

        def remove_lines(batch):
            texts = batch[text_key]
            for i, (text, hashes) in enumerate(zip(texts, batch[HashKeys.line_hashes])):
                if high.isdisjoint(hashes):
                    continue
                texts[i] = "\n".join(line for line, h in zip(text.split("\n"), hashes) if not h or h not in high)
            return {text_key: texts}

        dataset = dataset.map_batches(remove_lines, batch_size=self.batch_size, num_proc=self.num_proc,
                                      desc=self.name)
        return dataset.remove_columns([HashKeys.line_hashes]), dup_pairs

    def _duplicate_pairs(self, dataset, flat, parents, frequent, freq, show_num: int) -> dict:
        # most frequent first; ties in order of first occurrence
        hit = pc.is_in(flat, value_set=frequent).to_numpy(zero_copy_only=False)
        hit_pos = np.flatnonzero(hit)
        hit_hashes = flat.take(pa.array(hit_pos)).to_pylist()
        first_seen = {}
        for h in hit_hashes:
            first_seen.setdefault(h, len(first_seen))
        names = frequent.to_pylist()
        order = sorted(range(len(names)), key=lambda j: (-int(freq[j]), first_seen[names[j]]))[:show_num]
        chosen = {names[j]: [] for j in order}
        parent_np = parents.to_numpy(zero_copy_only=False)
        texts = {}
        for pos, h in zip(hit_pos, hit_hashes):
            lst = chosen.get(h)
            if lst is not None and len(lst) < 2:
                doc = int(parent_np[pos])
                if doc not in texts:
                    texts[doc] = dataset.rows([doc])[0][self.text_key]
                lst.append(texts[doc])
        return chosen
