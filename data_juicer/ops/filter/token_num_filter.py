import sys

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("token_num_filter")
class TokenNumFilter(Filter):
    """Keeps samples whose number of tokens (stat ``num_token``) is within [min_num, max_num].

    Tokens are those of a Hugging Face tokenizer, without special tokens. ``hf_tokenizer`` is a
    Hugging Face model id, looked up offline in the model folders and the local Hugging Face
    cache, or the path of a local tokenizer folder (see docs/models.md). Needs ``transformers``.
    """

    requires = ("transformers",)

    def __init__(self, hf_tokenizer: str = "EleutherAI/pythia-6.9b-deduped", min_num: int = 10,
                 max_num: int = sys.maxsize, **kwargs):
        """
        :param hf_tokenizer: Hugging Face model id or local folder of the tokenizer
        :param min_num: smallest number of tokens kept
        :param max_num: largest number of tokens kept
        """
        super().__init__(**kwargs)
        from data_juicer.models.loader import resolve_hf_model

        self.hf_tokenizer = hf_tokenizer
        self.min_num = min_num
        self.max_num = max_num
        self.tokenizer_path = resolve_hf_model(hf_tokenizer, who=self.name, path_param="hf_tokenizer")

    def compute_stats_batched(self, samples):
        key = StatsKeys.num_token
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if key not in s]
        if not todo:
            return samples
        from data_juicer.models.loader import load_hf_tokenizer

        tokenizer = load_hf_tokenizer(self.hf_tokenizer, path=self.tokenizer_path, who=self.name)
        texts = samples[self.text_key]
        ids = tokenizer([texts[i] for i in todo], add_special_tokens=False, return_attention_mask=False,
                        return_token_type_ids=False, verbose=False)["input_ids"]
        for i, tokens in zip(todo, ids):
            stats[i][key] = len(tokens)
        return samples

    def process_batched(self, samples):
        lo, hi = self.min_num, self.max_num
        return [self.get_keep_boolean(s[StatsKeys.num_token], lo, hi) for s in samples[Fields.stats]]
