"""A lineage stage from Python (run from the repo root):

    python demos/lineage_stage.py

First a recipe-style stage (``FanOutStage``, what ``lineage_stage`` in a recipe builds): each
document becomes its paragraphs, registered ops run on the paragraphs batched across documents,
and each document comes back with its surviving paragraphs in order. Then the engine underneath
(``data_juicer.lineage``): a program of domains, calls, expand, filter and reduce. See docs/lineage.md.
"""
from data_juicer.lineage import Call, Program, run_local
from data_juicer.ops.pipeline._lineage_fanout import FanOutStage

docs = [
    {"id": 0, "text": "Recipes are plain YAML files.\n\nOk.\n\nEach operator is named by its registry name."},
    {"id": 1, "text": "Too short.\n\nNope."},
    {"id": 2, "text": "A lineage stage keeps parents and children together."},
]

# 1. the stage a recipe's `lineage_stage` builds, on registered ops
stage = FanOutStage("paragraphs", [{"words_num_filter": {"min_num": 3}}],
                    children_key="paragraphs", child_stats_key="paragraph_stats")
print(stage.plan.describe())
out = stage.run(docs)
for d in out:
    print(d["id"], d["paragraphs"], d["paragraph_stats"])
assert [d["id"] for d in out] == [0, 2]  # document 1 has no paragraph of 3 words: dropped
assert out[0]["paragraphs"] == ["Recipes are plain YAML files.", "Each operator is named by its registry name."]
assert [s["num_words"] for s in out[0]["paragraph_stats"]] == [5, 8]

# 2. the engine: split into sentences, score each sentence, keep the long ones, reduce per document
p = Program("sentence-lengths")
p.domain("document")
p.domain("sentence", parent="document")
parts = p.call(Call("split", lambda texts: [[s for s in t.replace("\n", " ").split(". ") if s] for t in texts]),
               p.input("text"))
sentence = p.expand(parts, "sentence")
length = p.call(Call("words", lambda xs: [len(x.split()) for x in xs], batch_size=4), sentence)
p.output("lengths", p.reduce(p.filter(length, where=lambda n: n >= 3), "document"))
plan = p.compile()
result = run_local(plan, docs)
print(result.values("lengths"), result.metrics["words"])
assert result.values("lengths") == [[5, 8], [], [8]]
assert result.metrics["words"]["batches"] == 2  # 6 sentences of 3 documents, batched 4 at a time
