from data_juicer.ops.base import Mapper
from data_juicer.ops.common.lambda_string import parse_lambda
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.batch import batch_len


@OPERATORS.register_module("python_lambda_mapper")
class PythonLambdaMapper(Mapper):
    """Applies a Python lambda, given as a string in the recipe, to each sample (a dict of its
    fields) or, with ``batched``, to each batch (a dict of field -> list of values). The lambda
    must return a dict: its keys replace or add fields, and fields it leaves out are kept. An
    empty ``lambda_str`` leaves the data unchanged."""

    modality = "general"

    def __init__(self, lambda_str: str = "", batched: bool = False, **kwargs):
        """
        :param lambda_str: a one-argument lambda as a string, e.g.
            ``"lambda sample: {**sample, 'n': len(sample['text'])}"``; empty means identity
        :param batched: call the lambda once per batch (dict of lists) instead of once per sample
        """
        super().__init__(**kwargs)
        self.lambda_str = lambda_str
        self.batched = bool(batched)
        self.lambda_func = parse_lambda(lambda_str, who=self.name, param="lambda_str") if lambda_str else None

    # the compiled lambda is rebuilt from its source, so the op pickles for worker processes
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "lambda_func"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lambda_func = parse_lambda(self.lambda_str, who=self.name, param="lambda_str") if self.lambda_str else None

    def _call(self, arg: dict) -> dict:
        result = self.lambda_func(arg)
        if not isinstance(result, dict):
            raise ValueError(f"{self.name}: the lambda must return a dict, got {type(result).__name__}")
        return result

    def process_batched(self, samples):
        if self.lambda_func is None:
            return samples
        if self.batched:
            n = batch_len(samples)
            result = self._call(samples)
            bad = [k for k, v in result.items() if not isinstance(v, list) or len(v) != n]
            if bad:
                raise ValueError(f"{self.name}: with batched=True the lambda must return a dict of lists, one "
                                 f"value per sample of the batch ({n}); field(s) {bad} are not. "
                                 "To drop samples, use a filter op.")
            return {**samples, **result}
        rows = [dict(zip(samples, values)) for values in zip(*samples.values())]
        results = [self._call(row) for row in rows]
        out = {k: list(v) for k, v in samples.items()}
        for i, res in enumerate(results):
            for k, v in res.items():
                col = out.get(k)
                if col is None:
                    col = out[k] = [None] * len(rows)
                col[i] = v
        return out
