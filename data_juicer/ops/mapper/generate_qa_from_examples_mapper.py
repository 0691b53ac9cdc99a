import json
import random
import re
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS


def rouge_l_f(hyp: str, ref: str) -> float:
    """ROUGE-L F1 of whitespace tokens (longest common subsequence)."""
    a, b = hyp.split(), ref.split()
    if not a or not b:
        return 0.0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    p, r = lcs / len(a), lcs / len(b)
    return 2 * p * r / (p + r)


@OPERATORS.register_module("generate_qa_from_examples_mapper")
class GenerateQAFromExamplesMapper(LLMOpMixin, Mapper):
    """Synthesises a new (possibly multi-turn) QA sample per row from ``example_num`` seed QA
    samples drawn at random from ``seed_file`` (chatml JSONL: ``{"messages": [...]}``); writes
    ``query_key``, ``response_key`` (the last pair) and ``history_key`` (earlier pairs).

    The answer is split into pairs with ``output_pattern``. A generation whose ROUGE-L F1 against
    any shown seed exceeds ``similarity_threshold`` is discarded (empty query/response), as
    Data-Juicer; ROUGE-L here is the LCS F1 of whitespace tokens (Data-Juicer uses the ``rouge``
    package's). An answer with no pair is asked again up to 3 times, then the sample goes to the
    error ledger with the raw answer (Data-Juicer writes empty fields).
    """

    _accelerator = "cuda"
    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "请认真观察下面几条示例数据的输入与输出，归纳其中的规律，然后写出一组新的【问题】和【回答】。要求：\n"
        "1. 新的【问题】和【回答】不能与示例相同，但格式必须一致。\n"
        "2. 新【问题】的话题或领域不必局限于示例，新【回答】必须正确回答新【问题】。\n"
        "3. 示例可能是多轮对话，新生成的内容也可以是多轮，但格式要保持一致。\n"
        "4. 【问题】和【回答】必须成对出现，且【问题】在【回答】之前。\n"
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = "{}"
    DEFAULT_EXAMPLE_TEMPLATE: ClassVar[str] = "\n下面是一条示例数据：\n{}"
    DEFAULT_QA_PAIR_TEMPLATE: ClassVar[str] = "【问题】\n{}\n【回答】\n{}\n"
    DEFAULT_OUTPUT_PATTERN: ClassVar[str] = r"【问题】(.*?)【回答】(.*?)(?=【问题】|$)"

    def __init__(
        self,
        hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        *,
        seed_file: str = "",
        example_num: PositiveInt = 3,
        similarity_threshold: float = 0.7,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        example_template: Optional[str] = None,
        qa_pair_template: Optional[str] = None,
        output_pattern: Optional[str] = None,
        enable_vllm: bool = False,
        model_params: Optional[Dict] = None,
        sampling_params: Optional[Dict] = None,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face model name or folder (or the served model name with ``base_url``)
        :param seed_file: chatml JSONL file of seed QA samples (required)
        :param example_num: seed samples shown per generation
        :param similarity_threshold: generations more similar (ROUGE-L) to a shown seed are discarded
        :param system_prompt: system prompt
        :param input_template: user prompt template with one ``{}`` for the examples
        :param example_template: template of one example with one ``{}``
        :param qa_pair_template: template of one pair with two ``{}``
        :param output_pattern: regex with two groups, question and answer, found repeatedly
        :param enable_vllm: generate with an in-process vLLM engine (else ``transformers``)
        :param model_params: model arguments, or API client options with ``base_url``
        :param sampling_params: generation settings (e.g. ``temperature``, ``max_tokens``)
        """
        super().__init__(**kwargs)
        if not seed_file:
            raise ValueError(f"{self.name}: `seed_file` is required: a chatml JSONL file of seed QA samples "
                             f'(one {{"messages": [{{"role": "user", ...}}, {{"role": "assistant", ...}}]}} per line)')
        self.seed_file = seed_file
        self.example_num = example_num
        self.similarity_threshold = similarity_threshold
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.example_template = example_template or self.DEFAULT_EXAMPLE_TEMPLATE
        self.qa_pair_template = qa_pair_template or self.DEFAULT_QA_PAIR_TEMPLATE
        self.output_pattern = output_pattern or self.DEFAULT_OUTPUT_PATTERN
        self.seed_qa_samples = self._load_seeds()
        if not self.seed_qa_samples:
            raise ValueError(f"{self.name}: no QA pair could be read from seed_file {seed_file}")
        self.init_llm(model=hf_model, enable_vllm=enable_vllm, is_hf_model=not enable_vllm,
                      model_params=model_params, sampling_params=sampling_params, try_num=3)

    def _load_seeds(self) -> list:
        try:
            f = open(self.seed_file, encoding="utf-8")
        except OSError as e:
            raise FileNotFoundError(f"{self.name}: cannot read seed_file {self.seed_file}: {e}") from e
        seeds = []
        with f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    msgs = json.loads(line)["messages"]
                except (ValueError, KeyError, TypeError) as e:
                    raise ValueError(f"{self.name}: {self.seed_file}:{n} is not a chatml line "
                                     f'({{"messages": [...]}}): {e}') from e
                pairs, user = [], None
                for m in msgs:
                    if m.get("role") == "user":
                        user = m.get("content")
                    elif m.get("role") == "assistant":
                        pairs.append((user, m.get("content")))
                if pairs:
                    seeds.append(pairs)
        return seeds

    def build_input(self, examples: list) -> str:
        def pairs(ex):
            return "".join(self.qa_pair_template.format(q, a) for q, a in ex if q and a)

        return self.input_template.format("".join(self.example_template.format(pairs(ex)) for ex in examples))

    def parse_output(self, raw: str) -> list:
        return [(q.strip(), a.strip()) for q, a in re.findall(self.output_pattern, raw, re.DOTALL)]

    @staticmethod
    def _as_text(pairs) -> str:
        return "\n".join("\n".join(p) for p in pairs) + "\n"

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        n = len(next(iter(samples.values()))) if samples else 0
        shown = [random.sample(self.seed_qa_samples, min(self.example_num, len(self.seed_qa_samples)))
                 for _ in range(n)]
        msgs = [chat_messages(self.build_input(ex), self.system_prompt) for ex in shown]
        results = self.llm_parse(msgs, lambda raw: self.parse_output(raw) or None)
        queries, responses, histories = [], [], []
        for pairs, ex in zip(results, shown):
            sim = max(rouge_l_f(self._as_text(pairs), self._as_text(s)) for s in ex)
            if sim <= self.similarity_threshold:
                (q, a), hist = pairs[-1], [list(p) for p in pairs[:-1]]
            else:
                q, a, hist = "", "", []
            queries.append(q)
            responses.append(a)
            histories.append(hist)
        samples[self.query_key], samples[self.response_key], samples[self.history_key] = queries, responses, histories
        return samples
