"""The shape shared by the Ultralytics mappers that tag each image of a sample with boxes
(``image_detection_yolo_mapper``, ``image_segment_mapper``): the images of a whole batch are
predicted together and each row gets one list of boxes per image."""

from __future__ import annotations

from data_juicer.models.ultralytics import check_ultralytics_model, load_ultralytics_model, predict_boxes
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import device_for, num_rows, row_images, row_metas
from data_juicer.utils.constant import MetaKeys


class UltralyticsBoxMapper(Mapper):
    """Base of a box-tagging Ultralytics mapper. A subclass names its model ``family``
    (``yolo``/``fastsam``), extra ``predict_kwargs``, and the meta ``tags`` it writes from each
    image's result (``tag_values``)."""

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "ultralytics", "pillow")
    uses_model = True
    family: str = ""
    predict_kwargs: dict = {}
    tags: tuple = (MetaKeys.bbox_tag,)

    def _setup(self, imgsz: int, conf: float, iou: float, model_path: str, kwargs: dict) -> None:
        if kwargs.get("memory") is None and kwargs.get("mem_required") is None:
            kwargs["memory"] = "800MB"
        Mapper.__init__(self, **kwargs)
        self.imgsz = imgsz
        self.conf = conf
        self.iou = iou
        self.model_path = model_path
        check_ultralytics_model(model_path, who=self.name)

    def tag_values(self, result) -> tuple:
        """One value per tag in ``tags`` for one image's prediction."""
        return (result.boxes.xywh.cpu().numpy().tolist(),)

    def process_batched(self, samples):
        metas = row_metas(samples, num_rows(samples))
        col = samples.get(self.image_key)
        rows, flat = [], []  # rows: (row, first image, number of images)
        for i, meta in enumerate(metas):
            if col is None or not col[i]:
                meta.update({tag: [] for tag in self.tags})
                continue
            if self.tags[0] in meta:
                continue
            imgs = list(row_images(self, samples, i).values())
            rows.append((i, len(flat), len(imgs)))
            flat.extend(imgs)
        if not flat:
            return samples
        model = load_ultralytics_model(self.model_path, self.family, device_for(self), who=self.name)
        results = predict_boxes(model, flat, imgsz=self.imgsz, conf=self.conf, iou=self.iou, **self.predict_kwargs)
        for i, start, count in rows:
            per_image = [self.tag_values(r) for r in results[start:start + count]]
            for k, tag in enumerate(self.tags):
                metas[i][tag] = [values[k] for values in per_image]
        return samples
