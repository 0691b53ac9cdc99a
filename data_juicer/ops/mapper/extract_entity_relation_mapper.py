import re
from typing import Optional

from data_juicer.ops.common.dialog_llm import batch_len
from data_juicer.ops.common.extract_llm import COMMON_DOCS, MetaLLMMapper, is_float, split_text_by_punctuation, unique
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("extract_entity_relation_mapper")
class ExtractEntityRelationMapper(MetaLLMMapper):
    """Asks an LLM for a knowledge graph of the text: typed entities with descriptions and the
    relations between them, with keywords and a strength score (LightRAG-style prompt), plus up to
    ``max_gleaning`` follow-up rounds that ask for missed entities.

    Records ``("entity"<|>name<|>type<|>description)`` and ``("relationship"<|>source<|>target<|>
    description<|>keywords<|>strength)`` are parsed from all rounds' answers (records with the
    wrong number of fields, or a non-numeric strength, are dropped; repeats removed, first first -
    Data-Juicer's order is random). ``meta[entity_key]`` gets ``{entity_name, entity_type,
    entity_entity_description}`` dicts and ``meta[relation_key]`` ``{relation_source_entity,
    relation_target_entity, relation_description, relation_keywords (split on punctuation),
    relation_strength}`` dicts (one empty relation when none parsed, as Data-Juicer). Samples that
    already have both keys are skipped. An extraction without an entity after ``try_num`` attempts
    sends the sample to the error ledger with the raw answers.
    """

    DEFAULT_PROMPT_TEMPLATE = """-Goal-
You get a text document and a list of entity types. Find every entity of those types in the text, and every relationship among the entities you found.

-Steps-
1. Find all entities. For each one give:
- entity_name: the entity's name
- entity_type: one of these types: [{entity_types}]
- entity_description: a full description of the entity's attributes and activities
Write each entity as ("entity"{tuple_delimiter}<entity_name>{tuple_delimiter}<entity_type>{tuple_delimiter}<entity_description>)

2. Among the entities of step 1, find every pair (source_entity, target_entity) that is *clearly related*. For each pair give:
- source_entity: the source entity's name, as in step 1
- target_entity: the target entity's name, as in step 1
- relationship_description: why you think the two are related
- relationship_keywords: one or more high-level keywords summing up the nature of the relationship (concepts or themes, not details)
- relationship_strength: a number for how strong the relationship is
Write each relationship as ("relationship"{tuple_delimiter}<source_entity>{tuple_delimiter}<target_entity>{tuple_delimiter}<relationship_description>{tuple_delimiter}<relationship_keywords>{tuple_delimiter}<relationship_strength>)

3. Answer in the language of the text with one list of all entities and relationships from steps 1 and 2, using **{record_delimiter}** between items.

4. When you are done, output {completion_delimiter}

######################
-Examples-
######################
Example 1:

Entity_types: [person, organization, location]
Text:
```
Dr. Lena Ortiz left the Northfield Observatory after twelve years to lead a small telescope-building cooperative in Valparaíso. Her former student, Tomás Reyes, followed her there a month later, saying he had learned more from her night shifts than from any lecture.
```
################
Output:
("entity"{tuple_delimiter}"Lena Ortiz"{tuple_delimiter}"person"{tuple_delimiter}"Lena Ortiz is an astronomer who worked at Northfield Observatory for twelve years and now leads a telescope-building cooperative."){record_delimiter}
("entity"{tuple_delimiter}"Tomás Reyes"{tuple_delimiter}"person"{tuple_delimiter}"Tomás Reyes is Lena Ortiz's former student who joined her in Valparaíso."){record_delimiter}
("entity"{tuple_delimiter}"Northfield Observatory"{tuple_delimiter}"organization"{tuple_delimiter}"Northfield Observatory is where Lena Ortiz worked before leaving."){record_delimiter}
("entity"{tuple_delimiter}"Valparaíso"{tuple_delimiter}"location"{tuple_delimiter}"Valparaíso is the city where the cooperative is based."){record_delimiter}
("relationship"{tuple_delimiter}"Tomás Reyes"{tuple_delimiter}"Lena Ortiz"{tuple_delimiter}"Tomás Reyes was taught by Lena Ortiz and followed her to her new work."{tuple_delimiter}"mentorship, loyalty"{tuple_delimiter}9){record_delimiter}
("relationship"{tuple_delimiter}"Lena Ortiz"{tuple_delimiter}"Northfield Observatory"{tuple_delimiter}"Lena Ortiz worked at the observatory for twelve years before leaving."{tuple_delimiter}"employment, career change"{tuple_delimiter}6){completion_delimiter}
#############################
Example 2:

Entity_types: [人物, 组织, 地点]
Text:
```
老周在县城开了三十年的修表铺，去年把铺子交给了徒弟小林。小林把店搬到了新开的商业街，还和本地的职业学校合作开了一门钟表维修课。
```
#############
Output:
("entity"{tuple_delimiter}"老周"{tuple_delimiter}"人物"{tuple_delimiter}"老周在县城经营修表铺三十年，去年把铺子交给徒弟。"){record_delimiter}
("entity"{tuple_delimiter}"小林"{tuple_delimiter}"人物"{tuple_delimiter}"小林是老周的徒弟，接手修表铺并把店搬到商业街。"){record_delimiter}
("entity"{tuple_delimiter}"职业学校"{tuple_delimiter}"组织"{tuple_delimiter}"本地的职业学校与小林合作开设钟表维修课。"){record_delimiter}
("relationship"{tuple_delimiter}"小林"{tuple_delimiter}"老周"{tuple_delimiter}"小林是老周的徒弟，接手了他的修表铺。"{tuple_delimiter}"师徒, 传承"{tuple_delimiter}9){record_delimiter}
("relationship"{tuple_delimiter}"小林"{tuple_delimiter}"职业学校"{tuple_delimiter}"小林与职业学校合作开设课程。"{tuple_delimiter}"合作, 教学"{tuple_delimiter}7){completion_delimiter}
#############################
-Real Data-
######################
Entity_types: [{entity_types}]
Text:
```
{input_text}
```
######################
Output:
"""
    DEFAULT_CONTINUE_PROMPT = "Many entities were missed in the last extraction. Add them below in the same format:\n"
    DEFAULT_IF_LOOP_PROMPT = ("It looks like some entities may still be missing. Answer YES or NO: are there still "
                              "entities to add?\n")
    DEFAULT_ENTITY_TYPES = ["organization", "person", "geo", "event"]
    DEFAULT_TUPLE_DELIMITER = "<|>"
    DEFAULT_RECORD_DELIMITER = "##"
    DEFAULT_COMPLETION_DELIMITER = "<|COMPLETE|>"
    DEFAULT_ENTITY_PATTERN = r'\("entity"(.*?)\)'
    DEFAULT_RELATION_PATTERN = r'\("relationship"(.*?)\)'

    def __init__(self, api_model: str = "gpt-4o", entity_types: list[str] = None, *,
                 entity_key: str = MetaKeys.entity, relation_key: str = MetaKeys.relation,
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 prompt_template: Optional[str] = None, tuple_delimiter: Optional[str] = None,
                 record_delimiter: Optional[str] = None, completion_delimiter: Optional[str] = None,
                 max_gleaning: int = 1, continue_prompt: Optional[str] = None, if_loop_prompt: Optional[str] = None,
                 entity_pattern: Optional[str] = None, relation_pattern: Optional[str] = None, try_num: int = 3,
                 drop_text: bool = False, model_params: dict = {}, sampling_params: dict = {},  # noqa: B006
                 **kwargs):
        super().__init__(**kwargs)
        self.entity_types = entity_types or self.DEFAULT_ENTITY_TYPES
        self.entity_key, self.relation_key = entity_key, relation_key
        self.prompt_template = prompt_template or self.DEFAULT_PROMPT_TEMPLATE
        self.tuple_delimiter = tuple_delimiter or self.DEFAULT_TUPLE_DELIMITER
        self.record_delimiter = record_delimiter or self.DEFAULT_RECORD_DELIMITER
        self.completion_delimiter = completion_delimiter or self.DEFAULT_COMPLETION_DELIMITER
        self.max_gleaning = int(max_gleaning)
        self.continue_prompt = continue_prompt or self.DEFAULT_CONTINUE_PROMPT
        self.if_loop_prompt = if_loop_prompt or self.DEFAULT_IF_LOOP_PROMPT
        self.entity_pattern = entity_pattern or self.DEFAULT_ENTITY_PATTERN
        self.relation_pattern = relation_pattern or self.DEFAULT_RELATION_PATTERN
        self.init_common(api_model, api_endpoint, response_path, try_num, drop_text, model_params, sampling_params)

    __init__.__doc__ = """
        :param api_model: model name at the API endpoint
        :param entity_types: the entity types to look for (default organization, person, geo, event)
        :param entity_key: meta key receiving the entities
        :param relation_key: meta key receiving the relations
        :param prompt_template: the prompt (``{entity_types}``, ``{tuple_delimiter}``,
            ``{record_delimiter}``, ``{completion_delimiter}``, ``{input_text}``)
        :param tuple_delimiter: separator of the fields of a record
        :param record_delimiter: separator of the records
        :param completion_delimiter: end-of-answer marker
        :param max_gleaning: follow-up rounds asking for missed entities
        :param continue_prompt: the follow-up request
        :param if_loop_prompt: the YES/NO question whether to go on gleaning
        :param entity_pattern: regex whose group 1 is an entity record's fields
        :param relation_pattern: regex whose group 1 is a relation record's fields""" + COMMON_DOCS

    def _fields(self, record: str) -> tuple:
        out = []
        for item in record.split(self.tuple_delimiter):
            item = item.strip()
            if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
                item = item[1:-1]
            if item.strip():
                out.append(item.strip())
        return tuple(out)

    def parse(self, text):
        """``(entities, relations)``; None when there is no entity."""
        text = text or ""
        ents = [f for f in (self._fields(r) for r in re.findall(self.entity_pattern, text, re.VERBOSE | re.DOTALL))
                if len(f) == 3]
        rels = [f for f in (self._fields(r) for r in re.findall(self.relation_pattern, text, re.VERBOSE | re.DOTALL))
                if len(f) == 5 and is_float(f[4])]
        if not ents:
            return None
        entities = [{MetaKeys.entity_name: a, MetaKeys.entity_type: b, MetaKeys.entity_description: c}
                    for a, b, c in unique(ents)]
        relations = [{MetaKeys.source_entity: a, MetaKeys.target_entity: b, MetaKeys.relation_description: c,
                      MetaKeys.relation_keywords: split_text_by_punctuation(d), MetaKeys.relation_strength: float(e)}
                     for a, b, c, d, e in unique(rels)]
        return entities, relations

    def _extract(self, prompts: list, attempt: int) -> list:
        """The concatenated answers of the first round and the gleaning rounds, per prompt."""
        hist = [[{"role": "user", "content": p}] for p in prompts]
        answers = self.llm.chat(hist, attempt=attempt)
        final = list(answers)
        hist = [h + [{"role": "assistant", "content": a}] for h, a in zip(hist, answers)]
        active = list(range(len(prompts)))
        for g in range(self.max_gleaning):
            if not active:
                break
            for i in active:
                hist[i] = hist[i] + [{"role": "user", "content": self.continue_prompt}]
            gleaned = self.llm.chat([hist[i] for i in active], attempt=attempt)
            for i, a in zip(active, gleaned):
                hist[i] = hist[i] + [{"role": "assistant", "content": a}]
                final[i] += a
            if g == self.max_gleaning - 1:
                break
            loop = self.llm.chat([hist[i] + [{"role": "user", "content": self.if_loop_prompt}] for i in active],
                                 attempt=attempt)
            active = [i for i, a in zip(active, loop) if a.strip().strip("\"'").lower() == "yes"]
        return final

    def process_batched(self, samples):
        from data_juicer.models.llm import LLMResponseError

        n = batch_len(samples)
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        pending = [i for i in range(n) if not (self.entity_key in metas[i] and self.relation_key in metas[i])]
        raws = {}
        for attempt in range(max(1, self.try_num)):
            if not pending:
                break
            prompts = [self.prompt_template.format(
                tuple_delimiter=self.tuple_delimiter, record_delimiter=self.record_delimiter,
                completion_delimiter=self.completion_delimiter, entity_types=", ".join(self.entity_types),
                input_text=samples[self.text_key][i]) for i in pending]
            still = []
            for i, text in zip(pending, self._extract(prompts, attempt)):
                raws[i] = text
                got = self.parse(text)
                if got is None:
                    still.append(i)
                    continue
                entities, relations = got
                metas[i][self.entity_key] = entities
                metas[i][self.relation_key] = relations or [{
                    MetaKeys.source_entity: "", MetaKeys.target_entity: "", MetaKeys.relation_description: "",
                    MetaKeys.relation_keywords: [], MetaKeys.relation_strength: 0.0}]
            pending = still
        if pending:
            raise LLMResponseError("no entity record in the extraction", raw=raws[pending[0]],
                                   attempts=max(1, self.try_num), model=self.llm_model)
        samples[Fields.meta] = metas
        if self.drop_text:
            samples.pop(self.text_key, None)
        return samples
