from typing import Dict, List

from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields

# Data-Juicer's default prompt and tag list (recipe defaults; kept verbatim for compatibility)
DEFAULT_CLASSIFICATION_PROMPT = """
请对下面的example文本回复的任务类别进行检测,并进行分类。
备选的分类包括：{tag_list}。
只回复对应的分类,不回复其他内容。
example文本:
{text}
"""  # noqa
DEFAULT_CLASSIFICATION_LIST = ["数学", "代码", "翻译", "角色扮演", "开放领域问答", "特定领域问答", "提取", "生成",
                               "头脑风暴", "分类", "总结", "改写", "其他"]


@OPERATORS.register_module("text_tagging_by_prompt_mapper")
class TextTaggingByPromptMapper(LLMOpMixin, Mapper):
    """Asks an instruction LLM to put each text into one of ``tag_list`` and stores the answer
    (stripped, as a one-item list) in ``__dj__text_tags__``.

    ``prompt`` is filled with ``{text}`` and ``{tag_list}``. vLLM is the default engine
    (``enable_vllm``: ``tensor_parallel_size``, ``max_model_len``, ``max_num_seqs`` go to it);
    ``enable_vllm: false`` uses ``transformers``; ``model_params.base_url`` sends the requests to
    an OpenAI-compatible server serving ``hf_model`` instead. The answer is not checked against
    the list (as Data-Juicer); an empty answer is asked again up to 3 times, then the sample
    goes to the error ledger.
    """

    _accelerator = "cuda"

    def __init__(
        self,
        hf_model: str = "Qwen/Qwen2.5-7B-Instruct",
        trust_remote_code: bool = False,
        prompt: str = DEFAULT_CLASSIFICATION_PROMPT,
        tag_list: List[str] = DEFAULT_CLASSIFICATION_LIST,
        enable_vllm: bool = True,
        tensor_parallel_size: int = None,
        max_model_len: int = None,
        max_num_seqs: int = 256,
        model_params: Dict = None,
        sampling_params: Dict = None,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face model name or folder (or the served model name with ``base_url``)
        :param trust_remote_code: let the model folder run its own code
        :param prompt: prompt template with ``{text}`` and ``{tag_list}``
        :param tag_list: the candidate tags
        :param enable_vllm: generate with an in-process vLLM engine (else ``transformers``)
        :param tensor_parallel_size: vLLM: GPUs per engine
        :param max_model_len: vLLM: longest context
        :param max_num_seqs: vLLM: most sequences scheduled at once
        :param model_params: model arguments, or API client options with ``base_url``
        :param sampling_params: generation settings (e.g. ``temperature``, ``max_tokens``)
        """
        super().__init__(**kwargs)
        self.prompt = prompt
        self.tag_list = list(tag_list)
        mp = dict(model_params or {})
        if not mp.get("base_url"):
            mp["trust_remote_code"] = trust_remote_code
            if enable_vllm:
                mp["max_num_seqs"] = max_num_seqs
                if tensor_parallel_size is not None:
                    mp["tensor_parallel_size"] = tensor_parallel_size
                if max_model_len is not None:
                    mp["max_model_len"] = max_model_len
        self.init_llm(model=hf_model, enable_vllm=enable_vllm, is_hf_model=not enable_vllm, model_params=mp,
                      sampling_params=sampling_params, try_num=3)

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        texts = samples[self.text_key]
        msgs = [chat_messages(self.prompt.format(text=t, tag_list=self.tag_list)) for t in texts]
        answers = self.llm_parse(msgs, lambda raw: raw.strip() or None)
        samples[Fields.text_tags] = [[a] for a in answers]
        return samples
