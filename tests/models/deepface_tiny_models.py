"""Tiny seeded stand-ins for DeepFace's age / gender / race models (TensorFlow engine).

DeepFace builds each demography model as its VGG-Face trunk (``VGGFace.base_model()``, ~145 M
parameters) plus a 1x1 convolution head on ``layers[-4]`` (101 / 2 / 6 classes), then loads the
weights file. Importing this module swaps the trunk for a tiny one with the same input (224x224x3)
and the same layer positions, so DeepFace's own loaders build the real heads on it and load the
``.h5`` files :func:`write_weights` saves (seeded weights) from ``<home>/.deepface/weights/``.
``$DJ_DEEPFACE_MODULES=tests.models.deepface_tiny_models`` makes every worker (Ray actors too)
import it before DeepFace builds its models.
"""

import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # what deepface.DeepFace sets: tf.keras is tf_keras

from deepface.models.facial_recognition.tf import VGGFace

MODULE = __name__
CLASSES = {"Age": 101, "Gender": 2, "Race": 6}
FILES = {"Age": "age_model_weights.h5", "Gender": "gender_model_weights.h5", "Race": "race_model_single_batch.h5"}


def tiny_trunk():
    """224x224x3 -> (1, 1, 8) features at ``layers[-4]``, then 3 more layers, as VGG-Face's trunk."""
    from tensorflow.keras.layers import Activation, AveragePooling2D, Convolution2D, Dropout, Flatten
    from tensorflow.keras.models import Sequential

    return Sequential([
        AveragePooling2D((32, 32), input_shape=(224, 224, 3)),  # -> 7x7x3
        Convolution2D(8, (7, 7), activation="tanh"),  # -> 1x1x8
        Dropout(0.5),  # layers[-4]: the heads start here
        Convolution2D(16, (1, 1)),
        Flatten(),
        Activation("softmax"),
    ])


VGGFace.base_model = tiny_trunk


def full_model(name: str):
    """The model DeepFace's loader builds for ``name`` (trunk + its head), before weights are loaded."""
    from tensorflow.keras.layers import Activation, Convolution2D, Flatten
    from tensorflow.keras.models import Model

    trunk = tiny_trunk()
    x = Convolution2D(CLASSES[name], (1, 1), name="predictions")(trunk.layers[-4].output)
    return Model(inputs=trunk.inputs, outputs=Activation("softmax")(Flatten()(x)))


def write_weights(home, seed: int = 0) -> str:
    """Seeded weights of the three models, saved as DeepFace's files in ``<home>/.deepface/weights``."""
    import numpy as np

    folder = os.path.join(str(home), ".deepface", "weights")
    os.makedirs(folder, exist_ok=True)
    for k, name in enumerate(CLASSES):
        model = full_model(name)
        rng = np.random.RandomState(seed * 10 + k)
        # large weights on pixel values in [0, 1] so that different faces get different answers
        model.set_weights([rng.normal(0.0, 1.0 if w.ndim > 1 else 0.5, w.shape).astype("float32")
                           for w in model.get_weights()])
        model.save_weights(os.path.join(folder, FILES[name]))
    return str(home)
