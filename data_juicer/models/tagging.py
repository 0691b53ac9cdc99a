"""Recognize Anything (RAM++) image tagging for the tagging ops, behind a plug-in.

Data-Juicer tags images and video frames with RAM++ (``ram_plus_swin_large_14m.pth``, Swin-L,
384x384 input) from the ``recognize-anything`` research repository, which no registry package
carries (Data-Juicer installs it from git). So the ops here do everything around the model
(finding the weights offline, loading images and sampling frames, RAM's pre-processing,
batching every image of a batch, counting and ordering the tags, writing the meta field) and
call the model through a plug-in of kind ``ram`` (see :mod:`data_juicer.models.plugins`)::

    from data_juicer.models.plugins import register_plugin

    @register_plugin("ram")
    def make_ram(model_path, device, image_size=384):
        from ram.models import ram_plus                      # the user's copy of recognize-anything
        net = ram_plus(pretrained=model_path, image_size=image_size, vit="swin_l").to(device).eval()
        def predict(batch):                                  # batch: list of (3, 384, 384) float arrays
            x = torch.as_tensor(np.stack(batch)).to(device)
            with torch.no_grad():
                tags, _ = net.generate_tag(x)                # one "tag | tag | ..." string per image
            return list(tags)
        return predict

The weights are looked for as every model file here (``DJ_MODELS_DIR`` ... see docs/models.md).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from data_juicer.models import plugins

RAM_KIND = "ram"
RAM_WEIGHTS = "ram_plus_swin_large_14m.pth"
RAM_SIZE = 384
# RAM's get_transform: ImageNet normalisation
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

def check_ram(who: str = "") -> str:
    """At op construction: the local path of the RAM++ weights and a plug-in that runs them;
    fails now naming every path looked at, or saying how to plug the model code in."""
    path = plugins.resolve_plugin_weights(RAM_WEIGHTS, who=who)
    plugins.check_plugin(RAM_KIND, who=who)
    return path


def ram_input(image, size: int = RAM_SIZE):
    """RAM's pre-processing of one PIL image: RGB, resized to ``size`` x ``size`` (bilinear, as
    torchvision's ``Resize`` does a PIL image), [0, 1], ImageNet-normalised; (3, size, size) float32."""
    import numpy as np
    from PIL import Image

    img = image.convert("RGB").resize((size, size), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = (arr - np.asarray(MEAN, dtype=np.float32)) / np.asarray(STD, dtype=np.float32)
    return np.ascontiguousarray(arr.transpose(2, 0, 1), dtype=np.float32)


def ordered_tags(outputs: Sequence[str]) -> list[str]:
    """The tags of one or more RAM outputs (``"a | b"`` strings), most frequent first (ties in
    first-seen order), as Data-Juicer's ``Counter(...).most_common()``."""
    words = [w.strip() for out in outputs for w in str(out).split("|")]
    return [w for w, _ in Counter(words).most_common()]


def tag_images(images: Sequence, model_path: str, device: str = "cpu", who: str = "") -> list[str]:
    """RAM's raw output string for each image, all images through the plug-in in one list."""
    if not images:
        return []
    predictor = plugins.load_plugin(RAM_KIND, model_path, device, who=who, image_size=RAM_SIZE)
    return [str(o) for o in plugins.predict(RAM_KIND, predictor, [ram_input(im) for im in images], who=who)]
