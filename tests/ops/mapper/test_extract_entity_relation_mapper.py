from tests.llm_fixtures import llm_server  # noqa: F401
from tests.ops.mapper.llm_op_helpers import assert_ledger_has_raw, build, run_rows, sent

NAME = "extract_entity_relation_mapper"
FIRST = ('("entity"<|>"Alex"<|>"person"<|>"Alex leads the team.")##\n'
         '("entity"<|>"Alex"<|>"person"<|>"Alex leads the team.")##\n'
         '("entity"<|>"bad"<|>"record")##\n'
         '("relationship"<|>"Alex"<|>"Sam"<|>"Alex trusts Sam."<|>"trust, teamwork"<|>8)##\n'
         '("relationship"<|>"Alex"<|>"Sam"<|>"x"<|>"y"<|>strong)<|COMPLETE|>')
GLEAN = '("entity"<|>"Sam"<|>"person"<|>"Sam joins later.")<|COMPLETE|>'


def test_gleaning_rounds_and_parse(llm_server):  # noqa: F811
    llm_server.respond("NO", match="Answer YES or NO")
    llm_server.respond(GLEAN, match="Many entities were missed")
    llm_server.respond(FIRST)
    out = run_rows(build(NAME, llm_server, max_gleaning=2, entity_types=["person"]), [{"text": "Alex and Sam."}])
    meta = out[0]["__dj__meta__"]
    assert meta["entity"] == [
        {"entity_name": "Alex", "entity_type": "person", "entity_entity_description": "Alex leads the team."},
        {"entity_name": "Sam", "entity_type": "person", "entity_entity_description": "Sam joins later."}]
    assert meta["relation"] == [{"relation_source_entity": "Alex", "relation_target_entity": "Sam",
                                 "relation_description": "Alex trusts Sam.",
                                 "relation_keywords": ["trust", "teamwork"], "relation_strength": 8.0}]
    calls = sent(llm_server)
    assert [len(c) for c in calls] == [1, 3, 5]  # first round, one gleaning, the YES/NO question (NO: stop)
    assert "Entity_types: [person]\nText:\n```\nAlex and Sam.\n```" in calls[0][0]["content"]


def test_no_relations_gives_the_empty_one_and_no_entities_retries(llm_server):  # noqa: F811
    import pytest

    from data_juicer.models.llm import LLMResponseError

    llm_server.respond('("entity"<|>"A"<|>"geo"<|>"a place")')
    out = run_rows(build(NAME, llm_server, max_gleaning=0), [{"text": "t"}])
    assert out[0]["__dj__meta__"]["relation"] == [{
        "relation_source_entity": "", "relation_target_entity": "", "relation_description": "",
        "relation_keywords": [], "relation_strength": 0.0}]
    llm_server.reset()
    llm_server.respond("nothing")
    with pytest.raises(LLMResponseError, match="nothing"):
        run_rows(build(NAME, llm_server, max_gleaning=0, try_num=2), [{"text": "t"}])
    assert len(sent(llm_server)) == 2


def test_unparsable_answers_go_to_the_ledger(tmp_path, llm_server):  # noqa: F811
    assert_ledger_has_raw(tmp_path, llm_server, NAME, {"try_num": 1, "max_gleaning": 0}, [{"id": 1, "text": "t"}])
