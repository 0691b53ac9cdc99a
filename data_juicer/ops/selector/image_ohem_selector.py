import hashlib
import heapq
import importlib.util
import logging
import math
import os
import sys
from typing import Any, Callable, Optional

from data_juicer.ops.base import Selector
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields

logger = logging.getLogger(__name__)


@OPERATORS.register_module("image_ohem_selector")
class ImageOHEMSelector(Selector):
    """Keeps the hardest image samples (Online Hard Example Mining): the ``topk`` and/or
    ``int(top_ratio * n)`` samples (the smaller wins) with the highest loss, highest first, each
    with its loss in ``__dj__stats__[loss_field]``.

    The loss comes from a user function ``score_fn(model, samples, images, device, **score_kwargs)``
    (given in Python, or by name from the Python file ``score_file``) returning one finite number
    per sample of a batch of ``batch_size`` samples; ``images`` holds each sample's RGB PIL images
    (``image_bytes`` preferred where a sample has them). ``model_factory(**model_kwargs)`` (optional,
    also found in ``score_file``) builds the model once per run; it is moved to ``device`` and put
    in eval mode when it has ``to`` / ``eval``, and moved back to the CPU at the end.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("pillow",)

    def __init__(
        self,
        score_fn: Optional[Callable] = None,
        model_factory: Optional[Callable] = None,
        score_file: str = "",
        score_function: str = "score_fn",
        model_function: str = "model_factory",
        top_ratio: Optional[float] = None,
        topk: Optional[int] = None,
        batch_size: int = 8,
        image_key: str = "images",
        image_bytes_key: str = "image_bytes",
        loss_field: str = "image_ohem_loss",
        device: str = "auto",
        model_kwargs: Optional[dict] = None,
        score_kwargs: Optional[dict] = None,
        **kwargs,
    ):
        """
        :param score_fn: the loss function (Python use); see the op's description
        :param model_factory: builds the model passed to ``score_fn`` (Python use)
        :param score_file: a Python file defining ``score_function`` (and maybe ``model_function``)
        :param score_function: the name of the loss function in ``score_file``
        :param model_function: the name of the model factory in ``score_file`` (optional there)
        :param top_ratio: the fraction of samples to keep, in [0, 1]
        :param topk: the number of samples to keep
        :param batch_size: samples per ``score_fn`` call
        :param image_key: field holding the list of image paths
        :param image_bytes_key: field holding the images' encoded bytes
        :param loss_field: the stat key receiving each kept sample's loss
        :param device: ``auto`` (``cuda`` when there, else ``cpu``), or a torch device name
        :param model_kwargs: keyword arguments of ``model_factory``
        :param score_kwargs: extra keyword arguments of ``score_fn``
        """
        if top_ratio is None and topk is None:
            raise ValueError("image_ohem_selector: at least one of top_ratio or topk must be specified")
        if top_ratio is not None and not 0 <= top_ratio <= 1:
            raise ValueError(f"image_ohem_selector: top_ratio must be in [0, 1], got {top_ratio}")
        if topk is not None and topk < 0:
            raise ValueError(f"image_ohem_selector: topk must be non-negative, got {topk}")
        if batch_size <= 0:
            raise ValueError(f"image_ohem_selector: batch_size must be positive, got {batch_size}")
        super().__init__(image_key=image_key, image_bytes_key=image_bytes_key, batch_size=batch_size, **kwargs)
        self.score_fn = score_fn
        self.model_factory = model_factory
        self.score_file = score_file
        self.score_function = score_function
        self.model_function = model_function
        self.top_ratio, self.topk = top_ratio, topk
        self.loss_field = loss_field
        self.device = device
        self.model_kwargs = dict(model_kwargs or {})
        self.score_kwargs = dict(score_kwargs or {})
        if score_file:
            self._load_user_functions()
        if not callable(self.score_fn):
            raise ValueError("image_ohem_selector needs score_fn, or a score_file defining a callable "
                             f"'{score_function}'")
        if self.model_factory is not None and not callable(self.model_factory):
            raise ValueError("image_ohem_selector: model_factory must be callable or None")

    def _load_user_functions(self):
        path = os.path.abspath(os.path.expanduser(self.score_file))
        if not os.path.isfile(path) or not path.endswith(".py"):
            raise ValueError(f"image_ohem_selector: score_file must be an existing Python (.py) file: {path}")
        name = "data_juicer_image_ohem_" + hashlib.sha256(path.encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception:
            sys.modules.pop(name, None)
            raise
        if not callable(getattr(module, self.score_function, None)):
            raise ValueError(f"image_ohem_selector: function '{self.score_function}' not found in {path}")
        self.score_fn = getattr(module, self.score_function)
        self.model_factory = getattr(module, self.model_function, self.model_factory)
        self.score_file = path

    def _device(self) -> str:
        if self.device != "auto":
            return self.device
        try:
            import torch
        except ImportError:
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    def _images(self, sample: dict) -> list:
        from data_juicer.media.image import load_image

        paths = sample.get(self.image_key) or []
        paths = paths if isinstance(paths, (list, tuple)) else [paths]
        blobs = sample.get(self.image_bytes_key) or []
        out = []
        for k, path in enumerate(paths):
            data = blobs[k] if isinstance(blobs, (list, tuple)) and k < len(blobs) else None
            out.append(load_image(data if isinstance(data, (bytes, bytearray)) and data else path))
        return out

    def _losses(self, dataset) -> list[float]:
        device = self._device()
        model = self.model_factory(**self.model_kwargs) if self.model_factory is not None else None
        if model is not None:
            if hasattr(model, "to"):
                model.to(device)
            if hasattr(model, "eval"):
                model.eval()
        losses: list[float] = []
        try:
            for batch in dataset.iter_batches(self.batch_size):
                keys = list(batch)
                n = len(batch[keys[0]]) if keys else 0
                samples = [{k: batch[k][i] for k in keys} for i in range(n)]
                got: Any = self.score_fn(model, samples, [self._images(s) for s in samples], device,
                                         **self.score_kwargs)
                if hasattr(got, "detach"):
                    got = got.detach().cpu().reshape(-1).tolist()
                vals = [float(v) for v in (got.reshape(-1).tolist() if hasattr(got, "reshape") else list(got))]
                if len(vals) != n:
                    raise ValueError(f"image_ohem_selector: score_fn returned {len(vals)} losses for {n} samples; "
                                     "it must return exactly one loss per sample")
                if not all(math.isfinite(v) for v in vals):
                    raise ValueError("image_ohem_selector: score_fn returned a NaN or infinite loss")
                losses.extend(vals)
        finally:
            if model is not None and hasattr(model, "to"):
                try:
                    model.to("cpu")
                except Exception as e:  # a user model: never fail the run on cleanup
                    logger.warning("image_ohem_selector: could not move the model back to the CPU: %s", e)
        return losses

    def process(self, dataset):
        n = len(dataset) if hasattr(dataset, "__len__") else dataset.num_rows
        if not n:
            return dataset
        losses = self._losses(dataset)
        k = n if self.top_ratio is None else int(self.top_ratio * n)
        if self.topk is not None:
            k = min(k, self.topk)
        indices = heapq.nlargest(k, range(n), losses.__getitem__) if k > 0 else []
        picked = dataset.select(indices)
        if not indices:
            return picked
        picked_losses = [losses[i] for i in indices]
        at = {"row": 0}
        field = self.loss_field

        def attach(batch):  # one sequential pass: the selected rows arrive in order
            stats = batch.get(Fields.stats) or [None] * len(next(iter(batch.values())))
            start = at["row"]
            at["row"] += len(stats)
            batch[Fields.stats] = [{**(s or {}), field: v} for s, v in zip(stats, picked_losses[start:])]
            return batch

        return picked.map_batches(attach, batch_size=max(len(indices), 1))
