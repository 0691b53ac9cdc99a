"""A pass that is only a deduplicator's hashing (the second and later dedups of a chain on Ray)
hands the ops the hash input columns alone and appends the hashes to the block as it is: the
same samples, stats and bytes as the default executor's merged hashing."""
import os

from tests.conftest import read_jsonl


def _bytes(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def test_a_dedup_chain_on_ray_keeps_the_default_output(run_both):
    base = ["the quick brown fox jumps over the lazy dog number {}", "a completely different sentence here {}",
            "the quick brown fox jumps over the lazy dog number {}!"]
    rows = [{"id": i, "text": base[i % 3].format(i // 9), "meta": {"n": i}} for i in range(60)]
    process = [{"words_num_filter": {"min_num": 3}}, {"document_deduplicator": None},
               {"document_minhash_deduplicator": None}, {"document_simhash_deduplicator": None}]
    d, r = run_both(rows, process, keep_stats_in_res_ds=True)
    out = read_jsonl(os.path.join(d, "result.jsonl"))
    assert _bytes(r, "result.jsonl") == _bytes(d, "result.jsonl")
    assert _bytes(r, "result_stats.jsonl") == _bytes(d, "result_stats.jsonl")
    # 60 rows are 21 distinct texts (7 per template); near-duplicates ("!") go with MinHash/SimHash
    assert 0 < len(out) < 21 and [x["meta"]["n"] for x in out] == sorted(x["meta"]["n"] for x in out)
    assert not any(k.startswith("__dj__hash") or "minhash" in k or "simhash" in k for x in out for k in x)
