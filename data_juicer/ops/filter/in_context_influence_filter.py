
from data_juicer.ops.filter.llm_perplexity_filter import LLMPerplexityFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


@OPERATORS.register_module("in_context_influence_filter")
class InContextInfluenceFilter(LLMPerplexityFilter):
    """Keeps samples whose in-context influence on a validation set (stat
    ``in_context_influence``) is within [min_score, max_score].

    With ``valid_as_demo: false`` (default) the score is the mean over the validation samples
    of L(A_v | Q_v) / L(A_v | Q, A, task_desc, Q_v): how much the sample, used as a
    demonstration, lowers the causal LM's loss on each validation answer. With
    ``valid_as_demo: true`` it is the mean of L(A | Q) / L(A | task_desc, Q_v, A_v, Q). Losses
    are counted as in ``llm_perplexity_filter`` (its ``hf_model``, ``model_params``,
    ``min_score``, ``max_score`` and templates apply). The model is loaded offline.

    Parameters shared with ``llm_perplexity_filter`` (passed through, as in Data-Juicer):

    :param hf_model: Hugging Face causal LM name (resolved to a local folder) or folder
    :param model_params: extra ``from_pretrained`` arguments; ``max_length`` caps the tokens scored
    :param min_score: smallest influence kept (default 1.0)
    :param max_score: largest influence kept (default 100.0)
    :param query_template: format template of the user message (default: empty)
    :param response_template: format template of the assistant message (default ``{text}``)
    """

    def __init__(
        self,
        valid_dataset: list[dict] | None = None,
        task_desc: str | None = None,
        valid_as_demo: bool = False,
        n_shot: int | None = None,
        **kwargs,
    ):
        """
        :param valid_dataset: the validation samples (list of dicts) (required)
        :param task_desc: task description, put as a system message before each validation sample
        :param valid_as_demo: use the validation samples as demonstrations for the sample
            (instead of the sample as a demonstration for them)
        :param n_shot: use only the first ``n_shot`` validation samples (default: all)
        """
        super().__init__(**kwargs)
        if valid_dataset is None:
            raise ValueError("in_context_influence_filter needs `valid_dataset` (a list of samples to measure "
                             "the influence on); or build it in Python and call prepare_valid_feature(samples).")
        if n_shot is not None and n_shot < 0:
            raise ValueError(f"in_context_influence_filter: n_shot must be >= 0 (0 or null: all), got {n_shot}")
        self.task_desc = task_desc
        self.valid_as_demo = valid_as_demo
        self.valid_feature: dict = {}
        self.prepare_valid_feature(valid_dataset, task_desc, n_shot)

    def prepare_valid_feature(self, dataset=None, task_desc=None, n_shot=None):
        """Keep the first ``n_shot`` (default all) validation samples (a list of dicts or a
        dataset) with their messages; their own losses are computed on first use."""
        rows = [dict(r) for r in dataset]
        keys = {k: None for r in rows for k in r}  # a dataset built from these rows has every key
        rows = [{**keys, **r} for r in rows][: n_shot or len(rows)]
        self.valid_feature = {"valid_samples": [self.sample_with_messages(r, system_prompt=task_desc) for r in rows]}

    @property
    def valid_feature_ready(self) -> bool:
        return "valid_samples" in self.valid_feature

    def _valid_losses(self) -> list[float]:
        if "valid_losses" not in self.valid_feature:
            self.valid_feature["valid_losses"] = self.losses([(v, None) for v in self.valid_feature["valid_samples"]])
        return self.valid_feature["valid_losses"]

    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.in_context_influence not in s]
        valid = self.valid_feature["valid_samples"]
        if not todo:
            return samples
        if not valid:
            for i in todo:
                stats[i][StatsKeys.in_context_influence] = None
            return samples
        rows = self._rows(samples, todo)
        m = len(valid)
        if self.valid_as_demo:
            # L(A|Q) / L(A|Q_v, A_v, Q)
            pairs = [(r, None) for r in rows] + [(r, v) for r in rows for v in valid]
            losses = self.losses(pairs)
            alone, with_demo = losses[:len(rows)], losses[len(rows):]
            for j, i in enumerate(todo):
                scores = [alone[j] / w for w in with_demo[j * m:(j + 1) * m]]
                stats[i][StatsKeys.in_context_influence] = sum(scores) / m
        else:
            # L(A_v|Q_v) / L(A_v|Q, A, Q_v)
            base = self._valid_losses()
            with_demo = self.losses([(v, r) for r in rows for v in valid])
            for j, i in enumerate(todo):
                scores = [b / w for b, w in zip(base, with_demo[j * m:(j + 1) * m])]
                stats[i][StatsKeys.in_context_influence] = sum(scores) / m
        return samples

    def process_batched(self, samples):
        return [True if s[StatsKeys.in_context_influence] is None
                else self.get_keep_boolean(s[StatsKeys.in_context_influence], self.min_score, self.max_score)
                for s in samples[Fields.stats]]
