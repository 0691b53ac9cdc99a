"""Process a list of dicts in memory with the Python API (run from the repo root):

    python demos/process_in_memory.py

``data_juicer.process`` takes the samples and a recipe (a dict, a YAML path, or just the list of
ops) and returns the kept samples; ``data_juicer.analyze`` returns each sample's filter
statistics without dropping any. Both run the same executor as dj-process.
"""
from data_juicer import analyze, process

samples = [
    {"id": 1, "text": "Data-Juicer recipes are lists of operators.  Mail me: a@b.com"},
    {"id": 2, "text": "too short"},
    {"id": 3, "text": "Data-Juicer recipes are lists of operators.  Mail me: a@b.com"},  # a repeat of 1
    {"id": 4, "text": "Filters score every sample first, then decide whether to keep it."},
]
recipe = {
    "np": 1,
    "process": [
        {"clean_email_mapper": None},
        {"text_length_filter": {"min_len": 20}},
        {"document_deduplicator": None},
    ],
}

kept = process(samples, recipe, keep_stats_in_res_ds=True)
for s in kept:
    print(s["id"], repr(s["text"]), s["__dj__stats__"])
assert [s["id"] for s in kept] == [1, 4]
assert kept[0]["text"] == "Data-Juicer recipes are lists of operators.  Mail me: "

# a recipe file works as well, with global keys overridden by keyword
kept = process(samples, "configs/demo/process.yaml", np=1)
print("configs/demo/process.yaml kept ids", [s["id"] for s in kept])
assert [s["id"] for s in kept] == [1, 4]

stats = analyze(samples, [{"text_length_filter": {}}, {"words_num_filter": {}}])
print("stats:", stats)
assert [s["text_len"] for s in stats] == [61, 9, 61, 65]
