import hashlib
import os
from typing import Optional

from data_juicer.media.files import atomic_write, file_digest, transform_file_name
from data_juicer.media.image import load_row_images, row_context
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

BLUR_TYPES = ("mean", "box", "gaussian")


def make_blur(blur_type: str, radius: float, who: str):
    """The Pillow filter Data-Juicer uses for ``blur_type`` (``mean`` is ``ImageFilter.BLUR``)."""
    from PIL import ImageFilter

    if blur_type not in BLUR_TYPES:
        raise ValueError(f"{who}: blur_type [{blur_type}] is not supported; use one of {', '.join(BLUR_TYPES)}")
    if radius < 0:
        raise ValueError(f"{who}: radius must be >= 0, got {radius}")
    if blur_type == "mean":
        return ImageFilter.BLUR
    return ImageFilter.BoxBlur(radius) if blur_type == "box" else ImageFilter.GaussianBlur(radius)


def save_image(img, path: str) -> None:
    """Write ``img`` to ``path`` atomically, the format taken from the extension (Pillow defaults, as Data-Juicer)."""
    from PIL import Image

    fmt = Image.registered_extensions().get(os.path.splitext(path)[1].lower())
    with atomic_write(path) as tmp:
        img.save(tmp, format=fmt)


def replace_bytes(samples: dict, bytes_key: str, row: int, paths: list, new_paths: list) -> None:
    """Where the row carries encoded image bytes, give the rewritten images' encoded file bytes."""
    col = samples.get(bytes_key)
    if col is None or not isinstance(col[row], list):
        return
    data = list(col[row])
    for j, (old, new) in enumerate(zip(paths, new_paths)):
        if j < len(data) and new != old and os.path.isfile(new):
            with open(new, "rb") as f:
                data[j] = f.read()
    col[row] = data


@OPERATORS.register_module("image_blur_mapper")
class ImageBlurMapper(Mapper):
    """Blurs each image with probability ``p`` (``mean``, ``box`` or ``gaussian`` kernel of
    ``radius``) and points the sample at the blurred copy, written to ``save_dir`` (else
    ``$DJ_PRODUCED_DATA_DIR/image_blur_mapper``, else ``__dj__produced_data__/image_blur_mapper``
    beside the source) as ``<stem>__dj_hash_#<hash>#<ext>``. ``__dj__source_file__`` keeps the
    original paths.

    Differences from Data-Juicer 1.6.1, on purpose: whether an image is blurred is a draw seeded
    by the image's content and the op's parameters (Data-Juicer draws from the global NumPy
    generator), and the file name's hash is derived from the same (Data-Juicer's includes the
    process id and the time), so a rerun blurs the same images into the same files; where a row
    carries ``image_bytes``, a blurred image's bytes are its encoded file (Data-Juicer stores raw
    pixels there, which no decoder reads).
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("pillow",)

    def __init__(self, p: float = 0.2, blur_type: str = "gaussian", radius: float = 2,
                 save_dir: Optional[str] = None, **kwargs):
        """
        :param p: probability that an image is blurred
        :param blur_type: blur kernel: ``mean``, ``box`` or ``gaussian``
        :param radius: radius of the blur kernel (>= 0)
        :param save_dir: folder the blurred images are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        super().__init__(**kwargs)
        self.blur = make_blur(blur_type, radius, self.name)
        self.p, self.blur_type, self.radius, self.save_dir = p, blur_type, radius, save_dir
        self.params = {"p": p, "blur_type": blur_type, "radius": radius}

    def _draw(self, path: str) -> float:
        """A uniform number in [0, 1) fixed by the image's content and the op's parameters."""
        seed = hashlib.sha256(f"{self.name}|{self.params}|{file_digest(path)}".encode()).digest()
        return int.from_bytes(seed[:8], "big") / 2 ** 64

    def process_batched(self, samples):
        if self.image_key not in samples:  # no media column: nothing to rewrite
            return samples
        n = len(samples[self.image_key])
        sources = [None] * n
        for i in range(n):
            paths = samples[self.image_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths:
                continue
            images = load_row_images(self, samples, i)
            ctx = row_context(samples, i)
            done: dict = {}
            for path in paths:
                if path in done:
                    continue
                if not os.path.isfile(path) or self._draw(path) >= self.p:
                    done[path] = path
                    continue
                out = transform_file_name(path, self.name, self.params, out_dir=self.save_dir)
                if not os.path.exists(out):
                    img = images[path]  # filter() returns a new image: no RGB copy of an RGB image first
                    blurred = (img if img.mode == "RGB" else img.convert("RGB")).filter(self.blur)
                    save_image(blurred, out)
                    if ctx is not None:
                        ctx[out] = blurred
                done[path] = out
            new_paths = [done[p] for p in paths]
            replace_bytes(samples, self.image_bytes_key, i, paths, new_paths)
            samples[self.image_key][i] = new_paths
        samples[Fields.source_file] = sources
        return samples
