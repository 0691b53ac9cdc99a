import re
from typing import Union

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# up to this many characters, one str.replace each is faster than a regex character class
_MAX_REPLACE_LOOP = 64


@OPERATORS.register_module("remove_specific_chars_mapper")
class RemoveSpecificCharsMapper(Mapper):
    """Deletes every occurrence of the given characters from the text (by default a set of
    decorative symbols: ◆●■►▼▲▴∆▻▷❖♡□)."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, chars_to_remove: Union[str, list[str]] = "◆●■►▼▲▴∆▻▷❖♡□", **kwargs):
        """
        :param chars_to_remove: the characters to delete, as one string or a list of strings
            (every character of every item is deleted); empty means delete nothing
        """
        super().__init__(**kwargs)
        items = [chars_to_remove] if isinstance(chars_to_remove, str) else list(chars_to_remove or ())
        if not all(isinstance(c, str) for c in items):
            raise ValueError(f"{self.name}: `chars_to_remove` must be a string or a list of strings, "
                             f"got {chars_to_remove!r}")
        self.chars_to_remove = chars_to_remove
        self._chars = tuple(dict.fromkeys("".join(items)))
        self._class = re.compile("[" + "".join(map(re.escape, self._chars)) + "]") \
            if len(self._chars) > _MAX_REPLACE_LOOP else None

    def _remove(self, text: str) -> str:
        for c in self._chars:
            if c in text:
                text = text.replace(c, "")
        return text

    def process_batched(self, samples):
        if not self._chars:
            return samples
        if self._class is not None:
            sub = self._class.sub
            samples[self.text_key] = [sub("", t) for t in samples[self.text_key]]
        else:
            samples[self.text_key] = [self._remove(t) for t in samples[self.text_key]]
        return samples
