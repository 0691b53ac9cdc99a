"""Building the output batch of a 1->many mapper (``fan_out = True``)."""

from data_juicer.utils.constant import Fields


def expand_rows(samples: dict, text_key: str, texts_per_row: list) -> dict:
    """A new batch with one row per text in ``texts_per_row[i]`` for each input row ``i``.

    The other fields are copied from the row each text comes from; every new row gets its own
    ``__dj__stats__`` dict (filters write into it) and an empty ``__dj__context__`` (intermediate
    values of the original text do not hold for the new one). A row with no texts disappears.
    """
    counts = [len(t) for t in texts_per_row]
    out = {}
    for key, col in samples.items():
        if key == text_key:
            out[key] = [t for ts in texts_per_row for t in ts]
        elif key == Fields.stats:
            out[key] = [dict(v) if isinstance(v, dict) else v for v, k in zip(col, counts) for _ in range(k)]
        elif key == Fields.context:
            out[key] = [{} for k in counts for _ in range(k)]
        else:
            out[key] = [v for v, k in zip(col, counts) for _ in range(k)]
    return out
