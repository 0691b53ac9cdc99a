"""A stand-in RAM plug-in for the tagging ops' tests (the real model code is not bundled).

It checks RAM's input contract ((3, 384, 384) float32, ImageNet-normalised) and tags an image
by its colours: the channel with the highest mean ("red" / "green" / "blue"), "bright" or
"dark" by the overall mean of the un-normalised pixels, and always "thing". Importing this
module registers it (``$DJ_MODEL_PLUGINS=tests.models.ram_fake_plugin`` does so in workers).
"""

import numpy as np

from data_juicer.models.plugins import register_plugin

MEAN = np.asarray((0.485, 0.456, 0.406), dtype=np.float32)[:, None, None]
STD = np.asarray((0.229, 0.224, 0.225), dtype=np.float32)[:, None, None]
CALLS = []


def fake_ram(model_path, device, image_size=384):
    with open(model_path, "rb"):
        pass

    def predict(batch):
        CALLS.append(len(batch))
        out = []
        for x in batch:
            assert x.shape == (3, image_size, image_size) and x.dtype == np.float32
            rgb = x * STD + MEAN
            means = rgb.reshape(3, -1).mean(axis=1)
            colour = ("red", "green", "blue")[int(means.argmax())]
            out.append(f"{colour} | {'bright' if means.mean() > 0.5 else 'dark'} | thing")
        return out

    return predict


register_plugin("ram", fake_ram)
