import contextlib
import io
import random

from loguru import logger
from pydantic import PositiveInt

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.fan_out import expand_rows
from data_juicer.ops.registry import OPERATORS

# parameter -> (nlpcda class, extra arguments), in Data-Juicer's pipeline order
_METHODS = {
    "replace_similar_word": ("Similarword", {}),
    "replace_homophone_char": ("Homophone", {}),
    "delete_random_char": ("RandomDeleteChar", {}),
    "swap_random_char": ("CharPositionExchange", {"char_gram": 1}),  # one character: small changes
    "replace_equivalent_num": ("EquivalentChar", {}),
}
_SEED = 1  # nlpcda's default seed


@OPERATORS.register_module("nlpcda_zh_mapper")
class NlpcdaZhMapper(Mapper):
    """Generates augmented copies of Chinese texts with nlpcda: synonyms for words, homophones
    for characters, random character deletion, swapping nearby characters, and equivalent forms
    of numerals (nlpcda's default settings and bundled dictionaries).

    Each enabled method makes up to ``aug_num`` new samples per sample (other fields copied), or,
    with ``sequential``, the methods are chained. A method makes fewer (or no) copies when the
    text gives it nothing to change; nlpcda removes newlines and the whitespace at the ends of
    the augmented texts. The original sample comes first unless ``keep_original_sample`` is off.
    The random choices come from a generator seeded like nlpcda's (seed 1) when the op is
    created, so a run is repeatable. Enable 1-3 methods at a time to keep the meaning of the texts."""

    fan_out = True
    requires = ("nlpcda",)

    def __init__(self, sequential: bool = False, aug_num: PositiveInt = 1, keep_original_sample: bool = True,
                 replace_similar_word: bool = False, replace_homophone_char: bool = False,
                 delete_random_char: bool = False, swap_random_char: bool = False,
                 replace_equivalent_num: bool = False, **kwargs):
        """
        :param sequential: chain the enabled methods (each augments the previous one's outputs)
            instead of each method making its own outputs
        :param aug_num: augmented samples made per sample (per method when not ``sequential``)
        :param keep_original_sample: keep the original sample before its augmented copies
        :param replace_similar_word: replace words by synonyms ("这里一共有5种不同的数据增强方法" ->
            "这边一共有5种不同的数据增强方法")
        :param replace_homophone_char: replace characters by homophones ("...数据增强方法" -> "...数据增强方丕")
        :param delete_random_char: delete random characters ("...数据增强方法" -> "...数据增强")
        :param swap_random_char: swap random nearby characters ("...数据增强方法" -> "...数据强增方法")
        :param replace_equivalent_num: write numerals another way ("这里一共有5种..." -> "这里一共有伍种...")
        """
        flags = locals()
        super().__init__(**kwargs)
        self.sequential = sequential
        self.aug_num = aug_num
        self.keep_original_sample = keep_original_sample
        self.methods = [name for name in _METHODS if flags[name]]
        if aug_num >= 10:
            logger.warning(f"{self.name}: aug_num={aug_num} makes many new samples per sample (memory, disk)")
        self._tools = None
        self._rng = random.Random(_SEED)
        self._build()

    def __getstate__(self):  # workers rebuild the tools (large dictionaries)
        state = dict(self.__dict__)
        state["_tools"] = None
        return state

    def _build(self):
        if self._tools is None:
            from data_juicer.utils.lazy import require

            # nlpcda prints while it loads, and its tools reseed Python's global random generator:
            # silence the first and undo the second (each tool draws from this op's generator)
            state = random.getstate()
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    nlpcda = require("nlpcda", who=self.name)
                    tools = []
                    for i, name in enumerate(self.methods):
                        cls, extra = _METHODS[name]
                        # a tool's first output is its input: ask for one more; chained, each
                        # tool after the first makes one augmented text per input
                        create_num = self.aug_num + 1 if not self.sequential or i == 0 else 2
                        tool = getattr(nlpcda, cls)(create_num=create_num, **extra)
                        tool.random = self._rng
                        tools.append(tool)
            finally:
                random.setstate(state)
            self._tools = tools
        return self._tools

    def _augment(self, text: str) -> list:
        tools = self._build()
        with contextlib.redirect_stdout(io.StringIO()):  # nlpcda prints on some inputs
            if not self.sequential:
                return [t for tool in tools for t in tool.replace(text)[1:]]
            texts = [text]
            for tool in tools:
                nxt = []
                for t in texts:
                    res = tool.replace(t)
                    nxt += res[1:] if len(res) > 1 else res
                texts = nxt
        return [] if len(texts) == 1 and texts[0] == text else texts

    def process_batched(self, samples):
        if not self.methods:
            return samples if self.keep_original_sample else {key: [] for key in samples}
        keep = self.keep_original_sample
        texts = [([t] if keep else []) + self._augment(t) for t in samples[self.text_key]]
        return expand_rows(samples, self.text_key, texts)
