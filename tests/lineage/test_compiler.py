import pytest

from data_juicer.lineage import Call, Program, ProgramError


def ident(xs):
    return list(xs)


def base():
    p = Program("t")
    p.domain("doc")
    p.domain("chunk", parent="doc")
    return p


def problems(p):
    with pytest.raises(ProgramError) as e:
        p.compile()
    return str(e.value)


def test_valid_program_compiles_and_describes():
    p = base()
    t = p.input("text")
    parts = p.call(Call("split", ident, batch_size=8, policy="single"), t, out="parts")
    ch = p.expand(parts, "chunk", out="c")
    bc = p.broadcast(t, "chunk", out="doc_text")
    sc = p.call(Call("score", ident), ch, bc, out="score")
    kept = p.filter(sc, where=bool, out="kept")
    p.output("scores", p.reduce(kept, "doc", out="scores"))
    plan = p.compile()
    assert [n.out for n in plan.calls] == ["parts", "score"]
    assert plan.port_domain == {"text": "doc", "parts": "doc", "c": "chunk", "doc_text": "chunk", "score": "chunk",
                                "kept": "chunk", "scores": "doc"}
    text = plan.describe()
    assert text.splitlines()[0] == "lineage program 't': domains doc > chunk; 7 nodes, 2 calls"
    assert "call split(text) -> parts   [batch 8, single parent, on_error=split" in text
    assert "filter score where bool -> kept" in text
    lines = text.splitlines()
    assert "  doc    output scores <- scores" in lines
    assert lines[-3].startswith("  pools (one per call, alive for the whole run; cpus 'auto'")
    assert lines[-2:] == ["    split  1 x (auto CPU, 0 GPU)  batch 8 (single parent)",
                          "    score  1 x (auto CPU, 0 GPU)  batch 64 (any parent)"]
    assert plan.describe({"CPU": 2}).splitlines()[-2:] == ["    split  1 x (1 CPU, 0 GPU)  batch 8 (single parent)",
                                                           "    score  1 x (1 CPU, 0 GPU)  batch 64 (any parent)"]


def test_cycle_is_reported_with_its_path():
    p = base()
    p.input("text")
    p.call(Call("a", ident), "b", out="a")
    p.call(Call("b", ident), "a", out="b")
    p.output("o", "a")
    assert "the program has a cycle: a -> b -> a" in problems(p) or "b -> a -> b" in problems(p)


def test_unknown_port_and_domain_get_suggestions():
    p = base()
    t = p.input("text")
    p.call(Call("a", ident), "txt", out="a")
    p.expand(t, "chunks", out="e")
    p.output("o", "a")
    msg = problems(p)
    assert "call 'a' reads port 'txt', which no node produces (did you mean 'text'?)" in msg
    assert "expand 'e' names unknown domain 'chunks' (did you mean 'chunk'?)" in msg


def test_expand_without_reduce():
    p = base()
    t = p.input("text")
    p.expand(t, "chunk", out="c")
    p.output("o", t)
    assert "expand 'c' into 'chunk' has no matching reduce: add program.reduce(<a 'chunk' port>, 'doc')" in problems(p)


def test_domain_mixing_needs_broadcast():
    p = base()
    t = p.input("text")
    c = p.expand(t, "chunk", out="c")
    s = p.call(Call("mix", ident), c, t, out="s")
    p.output("o", p.reduce(s, "doc"))
    assert "call 'mix' mixes domains: c (chunk), text (doc); bring an ancestor's value down with broadcast()" \
        in problems(p)


def test_output_in_child_domain_and_wrong_levels():
    p = base()
    p.domain("page", parent="doc")
    t = p.input("text")
    c = p.expand(t, "chunk", out="c")
    p.reduce(c, "chunk", out="r")  # chunk's parent is doc
    p.broadcast(c, "page", out="b")  # chunk is not an ancestor of page
    p.output("o", c)
    msg = problems(p)
    assert "reduce 'r' goes from 'chunk' to 'chunk', but the parent of 'chunk' is 'doc'" in msg
    assert "broadcast 'b' goes from 'chunk' to 'page', but 'chunk' is not an ancestor of 'page'" in msg
    assert "output 'o' is port 'c' in domain 'chunk'; outputs belong to the root domain 'doc' (reduce it first)" in msg


def test_expand_must_go_one_level_down_and_once():
    p = base()
    p.domain("sent", parent="chunk")
    t = p.input("text")
    s = p.expand(t, "sent", out="s")
    c1 = p.expand(t, "chunk", out="c1")
    c2 = p.expand(t, "chunk", out="c2")
    p.output("o", p.reduce(c1, "doc", out="r1"))
    p.output("o2", p.reduce(c2, "doc", out="r2"))
    p.reduce(s, "chunk", out="r3")
    msg = problems(p)
    assert "expand 's' goes from 'doc' to 'sent', but the parent of 'sent' is 'chunk'" in msg
    assert "domain 'chunk' is expanded twice ('c1' and 'c2')" in msg


def test_domain_tree_errors():
    p = Program("t")
    p.domain("a")
    p.domain("b")
    p.input("x")
    p.output("o", "x")
    assert "exactly one root domain is needed" in problems(p)
    p = Program("t")
    p.domain("a", parent="zz")
    assert "domain 'a' has unknown parent 'zz'" in problems(p)


def test_duplicate_port_no_output_and_builder_errors():
    p = base()
    p.input("text")
    p.call(Call("a", ident), "text", out="text")
    msg = problems(p)
    assert "port 'text' is produced twice (input and call)" in msg
    assert "the program has no output" in msg
    with pytest.raises(ValueError, match="exactly one"):
        p.filter("text")
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        Call("x", ident, batch_size=0)
    with pytest.raises(ValueError, match="policy must be 'any' or 'single'"):
        Call("x", ident, policy="some")
