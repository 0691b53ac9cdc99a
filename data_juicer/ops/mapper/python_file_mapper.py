import importlib.util
import inspect
import os
import traceback

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.batch import batch_len
from data_juicer.utils.constant import Fields


class PythonFileNotFoundError(FileNotFoundError, ValueError):
    """``file_path`` names no file (a ValueError too, so it reads as a bad parameter)."""


class PythonFileError(ValueError):
    """The file cannot be imported (a syntax error, a missing import...); the message names the file and line."""


# internal columns a batched function may leave out when it changes the number of samples
_INTERNAL_FILL = {Fields.row_index: lambda: None, Fields.context: dict}


def load_function(file_path: str, function_name: str, who: str = "python_file_mapper"):
    """The function ``function_name`` of the Python file ``file_path``; it must take exactly one
    positional parameter."""
    if not os.path.isfile(file_path):
        raise PythonFileNotFoundError(f"{who}: file_path '{file_path}' does not exist (or is not a file); "
                                      "give the path of a .py file that defines the function")
    if not file_path.endswith(".py"):
        raise ValueError(f"{who}: file_path '{file_path}' is not a Python file; it must end with .py")
    module_name = os.path.splitext(os.path.basename(file_path))[0]
    spec = importlib.util.spec_from_file_location(module_name, file_path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:  # (IndentationError too) the file and line, not a traceback
        line = f": {e.text.strip()}" if e.text and e.text.strip() else ""
        raise PythonFileError(f"{who}: '{file_path}', line {e.lineno}: {type(e).__name__}: {e.msg}{line}; fix the "
                              f"file") from None
    except Exception as e:  # an import it needs is missing, or its top-level code fails
        lineno = next((fr.lineno for fr in reversed(traceback.extract_tb(e.__traceback__))
                       if os.path.abspath(fr.filename) == os.path.abspath(file_path)), None)
        at = f", line {lineno}" if lineno else ""
        hint = " (install it, or remove the import)" if isinstance(e, ImportError) else ""
        raise PythonFileError(f"{who}: importing '{file_path}' failed{at}: {type(e).__name__}: {e}{hint}") from None
    if not hasattr(module, function_name):
        raise ValueError(f"{who}: function '{function_name}' not found in '{file_path}'; "
                         "set function_name to a function defined there")
    func = getattr(module, function_name)
    if not callable(func):
        raise ValueError(f"{who}: '{function_name}' in '{file_path}' is not callable; function_name must name a "
                         "function")
    if len(inspect.getfullargspec(func).args) != 1:
        raise ValueError(f"{who}: function '{function_name}' must take exactly one argument (the sample, or the "
                         "batch when batched=True)")
    return func


@OPERATORS.register_module("python_file_mapper")
class PythonFileMapper(Mapper):
    """Applies a function loaded from a Python file to each sample (a dict of its fields) or,
    with ``batched``, to each batch (a dict of field -> list of values). The function takes one
    argument and must return a dict: its keys replace or add fields, and fields it leaves out
    are kept. A batched function may return a different number of samples if it returns every
    field. An empty ``file_path`` leaves the data unchanged."""

    modality = "general"

    def __init__(self, file_path: str = "", function_name: str = "process_single", batched: bool = False,
                 **kwargs):
        """
        :param file_path: path of the ``.py`` file defining the function; empty means identity
        :param function_name: name of the function in that file
        :param batched: call the function once per batch (dict of lists) instead of once per sample
        """
        super().__init__(**kwargs)
        self.file_path = file_path
        self.function_name = function_name
        self.batched = bool(batched)
        self.func = self._load()

    def _load(self):
        return load_function(self.file_path, self.function_name, who=self.name) if self.file_path else None

    # the function is loaded again from its file, so the op pickles for worker processes
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "func"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.func = self._load()

    def _call(self, arg: dict) -> dict:
        result = self.func(arg)
        if not isinstance(result, dict):
            raise ValueError(f"{self.name}: function '{self.function_name}' must return a dict, got "
                             f"{type(result).__name__}")
        return result

    def process_batched(self, samples):
        if self.func is None:
            return samples
        if self.batched:
            return self._merge_batch(samples, self._call(samples))
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

    def _merge_batch(self, samples: dict, result: dict) -> dict:
        lengths = {}
        for k, v in result.items():
            if not isinstance(v, list):
                raise ValueError(f"{self.name}: with batched=True, function '{self.function_name}' must return a "
                                 f"dict of lists; field '{k}' is a {type(v).__name__}")
            lengths[k] = len(v)
        n_in = batch_len(samples)
        n_out = next(iter(lengths.values()), n_in)
        if any(n != n_out for n in lengths.values()):
            raise ValueError(f"{self.name}: function '{self.function_name}' returned fields of different lengths "
                             f"{lengths}; all must have one value per sample")
        if n_out == n_in:
            return {**samples, **result}
        missing = [k for k in samples if k not in result and k not in _INTERNAL_FILL]
        if missing:
            raise ValueError(f"{self.name}: function '{self.function_name}' turned {n_in} samples into {n_out} "
                             f"but did not return field(s) {missing}; when it changes the number of samples it "
                             "must return every field")
        out = {k: [fill() for _ in range(n_out)] for k, fill in _INTERNAL_FILL.items()
               if k in samples and k not in result}
        out.update(result)
        return {k: out[k] for k in [*samples, *(k for k in result if k not in samples)]}
