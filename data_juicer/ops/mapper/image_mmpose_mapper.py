import os
from typing import Optional, Sequence, Union

from data_juicer.models.plugins import check_plugin, load_plugin, predict
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import device_for, num_rows, row_images, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys

KIND = "mmpose"
_RESULT_KEYS = ("keypoints", "keypoint_scores", "bboxes", "bbox_scores", "keypoint_names")


def _plain(value):
    return value.tolist() if hasattr(value, "tolist") else value


@OPERATORS.register_module("image_mmpose_mapper")
class ImageMMPoseMapper(Mapper):
    """Detects human keypoints in each image with an MMPose model (deployed with MMDeploy) and tags
    the sample: ``__dj__meta__[pose_key]`` = per image ``{'keypoints', 'keypoint_scores', 'bboxes',
    'bbox_scores', 'keypoint_names'}``.

    **Model code not bundled**: MMPose needs mmcv, which has no wheel for this project's torch
    (Data-Juicer installs it at run time with ``mim``). Plug the model in as an ``mmpose`` plug-in
    (``data_juicer/models/plugins.py``): its factory gets ``deploy_cfg``, ``model_cfg`` and
    ``model_files`` and returns a predictor over BGR images. This op checks those files exist when
    it is built, reads the images (all images of a batch go to the predictor together), writes the
    tags, and with ``visualization_dir`` draws the keypoints on ``<image name>.png`` there.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("pillow",)
    uses_model = True

    def __init__(self, deploy_cfg: Optional[str] = None, model_cfg: Optional[str] = None,
                 model_files: Optional[Union[str, Sequence[str]]] = None, pose_key: str = MetaKeys.pose_info,
                 visualization_dir: Optional[str] = None, **kwargs):
        """
        :param deploy_cfg: the MMDeploy deployment config file
        :param model_cfg: the MMPose model config file
        :param model_files: the model weight file(s)
        :param pose_key: the meta key of the pose tags
        :param visualization_dir: folder for images with the keypoints drawn (none by default)
        """
        super().__init__(**kwargs)
        self.deploy_cfg = deploy_cfg
        self.model_cfg = model_cfg
        self.model_files = [model_files] if isinstance(model_files, str) else list(model_files or [])
        self.pose_key = pose_key
        self.visualization_dir = visualization_dir
        missing = [f"{what} {p!r}" for what, p in [("deploy_cfg", deploy_cfg), ("model_cfg", model_cfg)] +
                   [("model_files", f) for f in self.model_files] if not p or not os.path.exists(p)]
        if not self.model_files:
            missing.append("model_files (none given)")
        if missing:
            raise FileNotFoundError(f"{self.name}: these MMPose files are missing: {'; '.join(missing)}; give "
                                    "existing paths for deploy_cfg, model_cfg and model_files")
        check_plugin(KIND, self.name)

    def _draw(self, image, result, path):
        from PIL import ImageDraw

        img = image.copy()
        draw = ImageDraw.Draw(img)
        for person in result.get("keypoints") or []:
            for x, y in person:
                draw.ellipse((x - 2, y - 2, x + 2, y + 2), outline=(255, 0, 0))
        os.makedirs(self.visualization_dir, exist_ok=True)
        img.save(os.path.join(self.visualization_dir, os.path.splitext(os.path.basename(path))[0] + ".png"))

    def process_batched(self, samples):
        import numpy as np

        metas = row_metas(samples, num_rows(samples))
        col = samples.get(self.image_key)
        rows, flat, paths = [], [], []
        for i, meta in enumerate(metas):
            if self.pose_key in meta or col is None or not col[i]:
                continue
            imgs = row_images(self, samples, i)
            rows.append((i, len(flat), list(col[i])))
            for p, img in imgs.items():
                flat.append(img)
                paths.append(p)
        if not flat:
            return samples
        predictor = load_plugin(KIND, None, device_for(self), who=self.name, deploy_cfg=self.deploy_cfg,
                                model_cfg=self.model_cfg, model_files=self.model_files)
        bgr = [np.ascontiguousarray(np.asarray(img)[..., ::-1]) for img in flat]
        results = [{k: _plain(r.get(k, [])) for k in _RESULT_KEYS} for r in predict(KIND, predictor, bgr, self.name)]
        by_path = dict(zip(paths, results))
        for i, _, row_paths in rows:
            metas[i][self.pose_key] = [by_path[p] for p in row_paths]
        if self.visualization_dir:
            for p, img in zip(paths, flat):
                self._draw(img, by_path[p], p)
        return samples
