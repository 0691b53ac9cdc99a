import os
from typing import Optional

from pydantic import NonNegativeFloat

from data_juicer.media.files import transform_file_name
from data_juicer.media.image import load_row_images, row_context
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.faces import load_cascade, resolve_cascade, row_faces
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.mapper.image_blur_mapper import make_blur, replace_bytes, save_image
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars


@OPERATORS.register_module("image_face_blur_mapper")
class ImageFaceBlurMapper(Mapper):
    """Blurs the faces in each image (``mean``, ``box`` or ``gaussian`` kernel of ``radius``
    applied to each face box) and points the sample at the new file; an image without faces is
    left as it is. Faces are found with an OpenCV Haar cascade (``cv_classifier``; default
    OpenCV's ``haarcascade_frontalface_alt.xml``) with Data-Juicer's settings; the cascade is
    loaded once per worker process / Ray actor. Files go to ``save_dir`` (else
    ``$DJ_PRODUCED_DATA_DIR/image_face_blur_mapper``, else ``__dj__produced_data__`` beside the
    source), named from the source's content and the parameters, so a rerun gives the same paths
    (Data-Juicer's names carry the process id and the time). ``__dj__source_file__`` keeps the
    original paths; a row's ``image_bytes`` get the new file's encoded bytes (Data-Juicer stores
    raw pixels there). In a pass that also runs ``image_face_count_filter`` /
    ``image_face_ratio_filter`` with the same cascade file, the faces found for an image are found
    once (``faces.row_faces``), as are its decoded and grey versions.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("opencv-python-headless", "pillow")

    def __init__(self, cv_classifier: str = "", blur_type: str = "gaussian", radius: NonNegativeFloat = 2,
                 save_dir: Optional[str] = None, **kwargs):
        """
        :param cv_classifier: path (or bundled file name) of the OpenCV Haar cascade; empty for
            ``haarcascade_frontalface_alt.xml``
        :param blur_type: blur kernel: ``mean``, ``box`` or ``gaussian``
        :param radius: radius of the blur kernel (>= 0)
        :param save_dir: folder the new images are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        super().__init__(**kwargs)
        self.blur = make_blur(blur_type, radius, self.name)
        self.cv_classifier = resolve_cascade(cv_classifier, self.name)
        load_cascade(self.cv_classifier, self.name)  # a bad file fails when the op is built
        self.blur_type, self.radius, self.save_dir = blur_type, radius, save_dir
        self.params = {"cv_classifier": cv_classifier, "blur_type": blur_type, "radius": radius}

    def blur_faces(self, image, dets):
        out = image.copy()
        for x, y, w, h in dets:
            box = (x, y, x + w, y + h)
            out.paste(image.crop(box).filter(self.blur), box)
        return out

    def process_batched(self, samples):
        if self.image_key not in samples:  # no media column: nothing to rewrite
            return samples
        n = len(samples[self.image_key])
        sources = [None] * n
        cascade = None
        for i in range(n):
            paths = samples[self.image_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths:
                continue
            cascade = cascade or load_cascade(self.cv_classifier, self.name)
            images = load_row_images(self, samples, i)
            ctx = row_context(samples, i)
            done = {}
            for path, img in images.items():
                dets = row_faces(samples, i, path, img, self.cv_classifier, cascade)
                if not dets:
                    done[path] = path
                    continue
                out = transform_file_name(path, self.name, self.params, out_dir=self.save_dir)
                if out != path:
                    blurred = self.blur_faces(img, dets)
                    if not os.path.exists(out):
                        save_image(blurred, out)
                    if ctx is not None:
                        ctx[out] = blurred
                done[path] = out
            new_paths = [done[p] for p in paths]
            replace_bytes(samples, self.image_bytes_key, i, paths, new_paths)
            samples[self.image_key][i] = new_paths
        samples[Fields.source_file] = sources
        return samples
