from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "extract_keyword_mapper"


def test_prompt_parse_retry_drop_text(llm_server):  # noqa: F811
    llm_server.respond("no records here", times=1)
    llm_server.respond('("content_keywords" "harbour life, decline")\n("content_keywords" "同伴，成长")<|COMPLETE|>')
    out = run_rows(build(NAME, llm_server, drop_text=True), [{"text": "A story.", "id": 1}])
    assert out[0]["__dj__meta__"]["keyword"] == ["harbour life", "decline", "同伴", "成长"]
    assert "text" not in out[0]
    first, second = sent(llm_server)
    assert first == second and len(first) == 1 and first[0]["role"] == "user"
    assert first[0]["content"].endswith("Text:\n```\nA story.\n```\n######################\nOutput:\n")
    assert "output <|COMPLETE|>" in first[0]["content"]


def test_existing_keywords_are_kept(llm_server):  # noqa: F811
    row = {"text": "t", "__dj__meta__": {"keyword": ["k"]}}
    assert run_rows(build(NAME, llm_server), [row])[0]["__dj__meta__"]["keyword"] == ["k"]
    assert sent(llm_server) == []


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 2}, [{"id": 1, "text": "t"}])
