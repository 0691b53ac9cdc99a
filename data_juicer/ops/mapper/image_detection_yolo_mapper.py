from data_juicer.models.ultralytics import check_ultralytics_model, load_ultralytics_model, predict_boxes
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import device_for, num_rows, row_images, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("image_detection_yolo_mapper")
class ImageDetectionYoloMapper(Mapper):
    """Detects objects in each image with an Ultralytics YOLO model and tags the sample with the
    boxes (``__dj__bbox__``: per image, a list of ``[x_center, y_center, width, height]`` in pixels)
    and their class ids (``__dj__class_label__``: per image, a list of floats).

    A sample without images gets ``[]`` boxes and ``[]`` class labels. (Data-Juicer writes class
    label ``-1`` there; a column mixing ``-1`` with lists cannot be stored in Arrow, so a recipe
    with images and image-less samples fails on Ray and in mixed batches; ``[]`` says the same:
    no image, no labels.) A sample already tagged keeps its tags. The images of a whole batch are predicted together, batched by
    image size so each image's result equals a prediction on it alone. The weights
    (``model_path``, default ``yolo11n.pt``) are a path or a file name looked up in the model
    folders; nothing is downloaded.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "ultralytics", "pillow")
    uses_model = True

    def __init__(self, imgsz: int = 640, conf: float = 0.05, iou: float = 0.5, model_path: str = "yolo11n.pt",
                 **kwargs):
        """
        :param imgsz: resolution the images are resized to for inference
        :param conf: confidence score threshold
        :param iou: IoU (Intersection over Union) threshold of non-maximum suppression
        :param model_path: the YOLO weights: a path, or a file name in the model folders
        """
        if kwargs.get("memory") is None and kwargs.get("mem_required") is None:
            kwargs["memory"] = "800MB"
        super().__init__(**kwargs)
        self.imgsz = imgsz
        self.conf = conf
        self.iou = iou
        self.model_path = model_path
        check_ultralytics_model(model_path, who=self.name)

    def process_batched(self, samples):
        n = num_rows(samples)
        metas = row_metas(samples, n)
        col = samples.get(self.image_key)
        rows, flat = [], []
        for i, meta in enumerate(metas):
            if col is None or not col[i]:
                meta[MetaKeys.bbox_tag] = []
                meta[MetaKeys.class_label_tag] = []
                continue
            if MetaKeys.bbox_tag in meta:
                continue
            imgs = list(row_images(self, samples, i).values())
            rows.append((i, len(flat), len(imgs)))
            flat.extend(imgs)
        if not flat:
            return samples
        model = load_ultralytics_model(self.model_path, "yolo", device_for(self), who=self.name)
        results = predict_boxes(model, flat, imgsz=self.imgsz, conf=self.conf, iou=self.iou)
        for i, start, count in rows:
            res = results[start:start + count]
            metas[i][MetaKeys.bbox_tag] = [r.boxes.xywh.cpu().numpy().tolist() for r in res]
            metas[i][MetaKeys.class_label_tag] = [r.boxes.cls.cpu().numpy().tolist() for r in res]
        return samples
