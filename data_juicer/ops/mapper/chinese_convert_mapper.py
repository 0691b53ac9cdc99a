from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

_MODES = (
    "s2t",
    "t2s",
    "s2tw",
    "tw2s",
    "s2hk",
    "hk2s",
    "s2twp",
    "tw2sp",
    "t2tw",
    "tw2t",
    "hk2t",
    "t2hk",
    "t2jp",
    "jp2t",
)


@OPERATORS.register_module("chinese_convert_mapper")
class ChineseConvertMapper(Mapper):
    """Converts Chinese text between Simplified, Traditional (Taiwan / Hong Kong standards) and
    Japanese Shinjitai forms with OpenCC's bundled phrase and character dictionaries.

    :param mode: the OpenCC conversion: ``s2t`` Simplified to Traditional, ``t2s`` Traditional
        to Simplified, ``s2tw``/``tw2s`` Simplified to/from Taiwan standard, ``s2hk``/``hk2s``
        Simplified to/from Hong Kong variant, ``s2twp``/``tw2sp`` the same with Taiwanese /
        Mainland idioms, ``t2tw``/``tw2t`` and ``t2hk``/``hk2t`` Traditional to/from the Taiwan /
        Hong Kong standard, ``t2jp``/``jp2t`` Traditional (Kyūjitai) to/from Japanese Shinjitai
    """

    writes_text_only = True  # rewrites only the text field

    requires = ("opencc",)

    def __init__(self, mode: str = "s2t", **kwargs):
        super().__init__(**kwargs)
        if mode not in _MODES:
            raise ValueError(f"{self.name}: unknown mode {mode!r}; use one of {', '.join(_MODES)}")
        self.mode = mode
        self._converter = None

    def __getstate__(self):  # the native converter is rebuilt in each worker
        state = self.__dict__.copy()
        state["_converter"] = None
        return state

    def _convert_fn(self):
        if self._converter is None:
            opencc = require("opencc", who=self.name)
            self._converter = opencc.OpenCC(self.mode + ".json")
        return self._converter.convert

    def process_batched(self, samples):
        convert = self._convert_fn()
        samples[self.text_key] = [convert(t) for t in samples[self.text_key]]
        return samples
