from collections import Counter

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


@OPERATORS.register_module("agent_tool_type_mapper")
class AgentToolTypeMapper(Mapper):
    """Derives the primary and the dominant tool types of a sample from its ``__dj__meta__``
    list of tool types (``agent_tool_types``, as written by ``agent_dialog_normalize_mapper``).

    The entries are turned into stripped strings (empty ones dropped) and counted; the
    ``top_k_dominant`` most frequent (ties in first-seen order) go to ``dominant_key`` and the
    most frequent to ``primary_key``. Without a non-empty list (or with ``top_k_dominant`` < 1)
    the primary type is None and the dominant list empty. Existing values are overwritten.
    """

    def __init__(self, tool_types_meta_key: str = MetaKeys.agent_tool_types,
                 primary_key: str = MetaKeys.primary_tool_type, dominant_key: str = MetaKeys.dominant_tool_types,
                 top_k_dominant: int = 5, **kwargs):
        """
        :param tool_types_meta_key: meta key holding the list of tool types used in the sample
        :param primary_key: meta key receiving the most frequent tool type
        :param dominant_key: meta key receiving the most frequent tool types, most frequent first
        :param top_k_dominant: how many tool types ``dominant_key`` keeps
        """
        super().__init__(**kwargs)
        self.tool_types_meta_key = tool_types_meta_key
        self.primary_key = primary_key
        self.dominant_key = dominant_key
        self.top_k_dominant = top_k_dominant

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        metas = samples.get(Fields.meta) or [None] * n
        new_metas = []
        for meta in metas:
            meta = dict(meta) if meta else {}
            tools = meta.get(self.tool_types_meta_key)
            names = [s for s in (str(t).strip() for t in tools) if s] if isinstance(tools, list) else []
            top = Counter(names).most_common(self.top_k_dominant) if names and self.top_k_dominant > 0 else []
            meta[self.primary_key] = top[0][0] if top else None
            meta[self.dominant_key] = [name for name, _ in top]
            new_metas.append(meta)
        samples[Fields.meta] = new_metas
        return samples
