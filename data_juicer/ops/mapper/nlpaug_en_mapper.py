from loguru import logger
from pydantic import PositiveInt

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.fan_out import expand_rows
from data_juicer.ops.registry import OPERATORS

# parameter -> (nlpaug module, augmenter class, action or None), in Data-Juicer's pipeline order
_METHODS = {
    "delete_random_word": ("word", "RandomWordAug", "DELETE"),
    "swap_random_word": ("word", "RandomWordAug", "SWAP"),
    "spelling_error_word": ("word", "SpellingAug", None),
    "split_random_word": ("word", "SplitAug", None),
    "keyboard_error_char": ("char", "KeyboardAug", None),
    "ocr_error_char": ("char", "OcrAug", None),
    "delete_random_char": ("char", "RandomCharAug", "DELETE"),
    "swap_random_char": ("char", "RandomCharAug", "SWAP"),
    "insert_random_char": ("char", "RandomCharAug", "INSERT"),
}


@OPERATORS.register_module("nlpaug_en_mapper")
class NlpaugEnMapper(Mapper):
    """Generates augmented copies of English texts with nlpaug: random word deletion or swap,
    spelling errors, word splits, keyboard and OCR typos, random character deletion, swap or
    insertion (nlpaug's default settings; the data they need ships with nlpaug).

    Each enabled method makes ``aug_num`` new samples per sample (other fields copied), or, with
    ``sequential``, the methods are chained and ``aug_num`` samples are made in all. The original
    sample comes first unless ``keep_original_sample`` is off. An empty text gets no augmented
    copies. nlpaug draws from Python's and NumPy's global random generators, so seed both
    (``random.seed``, ``numpy.random.seed``) for repeatable output. Enable 1-3 methods at a time
    to keep the meaning of the texts."""

    fan_out = True
    requires = ("nlpaug",)

    def __init__(self, sequential: bool = False, aug_num: PositiveInt = 1, keep_original_sample: bool = True,
                 delete_random_word: bool = False, swap_random_word: bool = False,
                 spelling_error_word: bool = False, split_random_word: bool = False,
                 keyboard_error_char: bool = False, ocr_error_char: bool = False,
                 delete_random_char: bool = False, swap_random_char: bool = False,
                 insert_random_char: bool = False, **kwargs):
        """
        :param sequential: chain the enabled methods (one output per chain) instead of each method
            making its own outputs
        :param aug_num: augmented samples made per sample (per method when not ``sequential``)
        :param keep_original_sample: keep the original sample before its augmented copies
        :param delete_random_word: delete random words ("I love LLM" -> "I LLM")
        :param swap_random_word: swap random adjacent words ("I love LLM" -> "Love I LLM")
        :param spelling_error_word: put common misspellings in ("I love LLM" -> "Ai love LLM")
        :param split_random_word: split random words in two ("I love LLM" -> "I love LL M")
        :param keyboard_error_char: typos of neighbouring keys ("I love LLM" -> "I ;ov4 LLM")
        :param ocr_error_char: OCR confusions ("I love LLM" -> "I 10ve LLM")
        :param delete_random_char: delete random characters ("I love LLM" -> "I oe LLM")
        :param swap_random_char: swap random adjacent characters ("I love LLM" -> "I ovle LLM")
        :param insert_random_char: insert random characters ("I love LLM" -> "I ^lKove LLM")
        """
        flags = locals()
        super().__init__(**kwargs)
        self.sequential = sequential
        self.aug_num = aug_num
        self.keep_original_sample = keep_original_sample
        self.methods = [name for name in _METHODS if flags[name]]
        if aug_num >= 10:
            logger.warning(f"{self.name}: aug_num={aug_num} makes many new samples per sample (memory, disk)")
        self._aug = None
        self._augmenters()  # now, as Data-Juicer: importing nlpaug draws random numbers


    def __getstate__(self):  # workers rebuild the augmenters
        state = dict(self.__dict__)
        state["_aug"] = None
        return state

    def _augmenters(self):
        if self._aug is None:
            from data_juicer.utils.lazy import require

            require("nlpaug", who=self.name)
            import nlpaug.augmenter.char as nac
            import nlpaug.augmenter.word as naw
            import nlpaug.flow as naf
            from nlpaug.util import Action

            mods = {"word": naw, "char": nac}
            augs = []
            for name in self.methods:
                mod, cls, action = _METHODS[name]
                kw = {"action": getattr(Action, action)} if action else {}
                aug = getattr(mods[mod], cls)(**kw)
                if cls == "SpellingAug":
                    # its candidate lists come out of a set (order varies with PYTHONHASHSEED): sort
                    # them, so a seeded run gives the same misspellings in every process
                    for values in aug.model.dict.values():
                        values.sort()
                augs.append(aug)
            self._aug = naf.Sequential(augs) if self.sequential else augs
        return self._aug

    def _augment(self, text: str) -> list:
        aug = self._augmenters()
        if self.sequential:
            out = aug.augment(text, n=self.aug_num)
        else:
            out = []
            for method in aug:
                out += method.augment(text, n=self.aug_num)
        return out if isinstance(out, list) else [out]

    def process_batched(self, samples):
        if not self.methods:
            return samples if self.keep_original_sample else {key: [] for key in samples}
        keep = self.keep_original_sample
        texts = [([t] if keep else []) + self._augment(t) for t in samples[self.text_key]]
        return expand_rows(samples, self.text_key, texts)
