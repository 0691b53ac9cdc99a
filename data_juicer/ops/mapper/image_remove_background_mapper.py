import io
import os
from typing import Optional

from data_juicer.models.vision_other import load_rembg_session, resolve_rembg_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import device_for, row_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import require


@OPERATORS.register_module("image_remove_background_mapper")
class ImageRemoveBackgroundMapper(Mapper):
    """Removes the background of each image with rembg (U^2-Net, ONNX) and writes the cut-out as a
    PNG (RGBA, or on ``bgcolor``), replacing the image's path in the sample; ``__dj__source_file__``
    keeps the original path.

    The output goes to ``save_dir`` (else ``$DJ_PRODUCED_DATA_DIR/<op>``, else a
    ``__dj__produced_data__`` folder beside the source) under a name derived from the source's
    content and the parameters, so a rerun finds the file already there and skips the model. The
    model is rembg's default ``u2net.onnx``, looked up in the model folders and in rembg's own
    folder (``$U2NET_HOME``, ``~/.u2net``); it is never downloaded.

    Data-Juicer calls ``rembg.remove`` without a session, so the model depends on the rembg
    version installed (``u2net`` up to rembg 2.0.6x, a 1 GB ``bria-rmbg`` model in recent ones);
    this op always uses ``u2net``, the model of the rembg releases Data-Juicer 1.6 was built with.

    Differences from Data-Juicer: a sample without images is kept unchanged (Data-Juicer returns
    an empty list for it); ``image_bytes`` get the PNG file's bytes (Data-Juicer writes raw
    pixels there, which no image decoder reads back).
    """

    modality = "image"
    requires = ("rembg", "onnxruntime", "pillow")
    uses_model = True

    def __init__(
        self,
        alpha_matting: bool = False,
        alpha_matting_foreground_threshold: int = 240,
        alpha_matting_background_threshold: int = 10,
        alpha_matting_erode_size: int = 10,
        bgcolor: Optional[tuple[int, int, int, int]] = None,
        save_dir: Optional[str] = None,
        **kwargs,
    ):
        """
        :param alpha_matting: refine the mask edges with alpha matting
        :param alpha_matting_foreground_threshold: mask value above which a pixel is sure foreground
        :param alpha_matting_background_threshold: mask value below which a pixel is sure background
        :param alpha_matting_erode_size: erosion size of the sure regions for alpha matting
        :param bgcolor: an RGBA colour to put behind the cut-out (default: transparent)
        :param save_dir: folder for the output images (default: ``$DJ_PRODUCED_DATA_DIR/<op>``, else
            beside each source)
        """
        super().__init__(**kwargs)
        self.alpha_matting = alpha_matting
        self.alpha_matting_foreground_threshold = alpha_matting_foreground_threshold
        self.alpha_matting_background_threshold = alpha_matting_background_threshold
        self.alpha_matting_erode_size = alpha_matting_erode_size
        self.bgcolor = tuple(bgcolor) if bgcolor is not None else None
        self.save_dir = save_dir
        self._params = {"alpha_matting": alpha_matting,
                        "alpha_matting_foreground_threshold": alpha_matting_foreground_threshold,
                        "alpha_matting_background_threshold": alpha_matting_background_threshold,
                        "alpha_matting_erode_size": alpha_matting_erode_size,
                        "bgcolor": list(self.bgcolor) if self.bgcolor else None}
        resolve_rembg_model(self.name)

    def _remove(self, image):
        rembg = require("rembg", who=self.name)
        session = load_rembg_session(device_for(self), who=self.name)
        return rembg.remove(image, session=session, alpha_matting=self.alpha_matting,
                            alpha_matting_foreground_threshold=self.alpha_matting_foreground_threshold,
                            alpha_matting_background_threshold=self.alpha_matting_background_threshold,
                            alpha_matting_erode_size=self.alpha_matting_erode_size, bgcolor=self.bgcolor)

    def process_batched(self, samples):
        from data_juicer.media.files import atomic_write, transform_file_name

        col = samples.get(self.image_key)
        if col is None:
            return samples
        n = len(col)
        sources = samples.get(Fields.source_file) or [None] * n
        sources = list(sources)
        ctxs = samples.get(Fields.context)
        has_bytes = self.image_bytes_key in samples
        new_col = []
        for i in range(n):
            paths = col[i]
            if not paths:
                new_col.append(paths)
                continue
            if not sources[i]:
                sources[i] = list(paths)
            images = row_images(self, samples, i)
            out_of: dict = {}
            for path, image in images.items():
                out = transform_file_name(path, self.name, self._params, ext=".png", out_dir=self.save_dir)
                if out != path and os.path.exists(out):
                    out_of[path] = (out, None)  # done by an earlier run
                    continue
                cut = self._remove(image)
                if out != path:
                    with atomic_write(out) as tmp:
                        cut.save(tmp, format="PNG")
                out_of[path] = (out, cut)
                if ctxs is not None and ctxs[i] is not None:
                    ctxs[i][out] = cut
            if has_bytes and samples[self.image_bytes_key][i] is not None:
                row_bytes = list(samples[self.image_bytes_key][i])
                for k, path in enumerate(paths):
                    if k < len(row_bytes):
                        out, cut = out_of[path]
                        if cut is None:
                            with open(out, "rb") as f:
                                row_bytes[k] = f.read()
                        else:
                            buf = io.BytesIO()
                            cut.save(buf, format="PNG")
                            row_bytes[k] = buf.getvalue()
                samples[self.image_bytes_key][i] = row_bytes
            src = list(sources[i])
            for k, path in enumerate(paths):
                if k < len(src) and src[k] != path and out_of[path][0] != path:
                    src[k] = out_of[path][0]
            sources[i] = src
            new_col.append([out_of[p][0] for p in paths])
        samples[self.image_key] = new_col
        samples[Fields.source_file] = sources
        return samples
