from data_juicer.ops.filter.llm_perplexity_filter import LLMPerplexityFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("instruction_following_difficulty_filter")
class InstructionFollowingDifficultyFilter(LLMPerplexityFilter):
    """Keeps samples whose instruction-following difficulty (IFD, https://arxiv.org/abs/2308.12032;
    stat ``ifd_score``) is within [min_score, max_score].

    IFD is the causal LM's mean loss on the response given the query divided by its loss on the
    response alone (below 1: the query helps the model produce the response). The query and
    response come from ``query_template`` / ``response_template`` (or the sample's ``messages``)
    and the losses are counted as in ``llm_perplexity_filter``. The model is loaded offline from
    the models folder.
    """

    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.ifd_score not in s]
        if todo:
            rows = self._rows(samples, todo)
            pairs = [(r, None) for r in rows] + [({**r, "messages": r["messages"][-1:]}, None) for r in rows]
            losses = self.losses(pairs)
            n = len(rows)
            for i, with_q, without_q in zip(todo, losses[:n], losses[n:]):
                stats[i][StatsKeys.ifd_score] = with_q / without_q if without_q else float("nan")
        return samples

    def process_batched(self, samples):
        return [self.get_keep_boolean(s[StatsKeys.ifd_score], self.min_score, self.max_score)
                for s in samples[Fields.stats]]
