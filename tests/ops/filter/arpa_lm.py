"""A small real n-gram language model for the KenLM tests, built from text in milliseconds.

``write_arpa`` counts the n-grams of tokenized sentences (padded with ``<s>``/``</s>``) and writes
an interpolated absolute-discounting model in ARPA format, which KenLM loads like any other
ARPA file. The output is deterministic (sorted n-grams, fixed-precision numbers), so another
program given the same file sees the same model.
"""

import math
from collections import Counter, defaultdict


def _log10(p: float) -> float:
    return math.log10(p) if p > 0 else -99.0


def write_arpa(sentences, path: str, order: int = 3, discount: float = 0.5) -> None:
    """Write an ``order``-gram ARPA model of ``sentences`` (lists of tokens) to ``path``."""
    counts = [Counter() for _ in range(order + 1)]  # counts[n][ngram tuple]
    for tokens in sentences:
        padded = ["<s>", *tokens, "</s>"]
        for n in range(1, order + 1):
            for i in range(len(padded) - n + 1):
                counts[n][tuple(padded[i:i + n])] += 1

    # unigrams: relative frequency with one pseudo-count for <unk>; <s> is never predicted
    total = sum(c for g, c in counts[1].items() if g != ("<s>",)) + 1
    prob = {g: (c / total if g != ("<s>",) else 0.0) for g, c in counts[1].items()}
    prob[("<unk>",)] = 1 / total
    backoff = {}
    for n in range(2, order + 1):
        ctx_total, ctx_types = Counter(), Counter()
        for g, c in counts[n].items():
            ctx_total[g[:-1]] += c
            ctx_types[g[:-1]] += 1
        seen = defaultdict(list)
        for g, c in counts[n].items():
            h = g[:-1]
            lower = prob[g[1:]]
            p = max(c - discount, 0) / ctx_total[h] + discount * ctx_types[h] / ctx_total[h] * lower
            prob[g] = p
            seen[h].append((p, lower))
        for h, pairs in seen.items():
            left = 1 - sum(p for p, _ in pairs)
            left_lower = 1 - sum(q for _, q in pairs)
            backoff[h] = left / left_lower if left > 0 and left_lower > 0 else 1.0

    by_order = defaultdict(list)
    for g in prob:
        by_order[len(g)].append(g)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\\data\\\n")
        for n in range(1, order + 1):
            f.write(f"ngram {n}={len(by_order[n])}\n")
        for n in range(1, order + 1):
            f.write(f"\n\\{n}-grams:\n")
            for g in sorted(by_order[n]):
                line = f"{_log10(prob[g]):.6f}\t{' '.join(g)}"
                if n < order and g in backoff:
                    line += f"\t{_log10(backoff[g]):.6f}"
                f.write(line + "\n")
        f.write("\n\\end\\\n")
