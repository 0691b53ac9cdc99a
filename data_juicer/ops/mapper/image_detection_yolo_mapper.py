from data_juicer.ops.common.ultralytics_boxes import UltralyticsBoxMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("image_detection_yolo_mapper")
class ImageDetectionYoloMapper(UltralyticsBoxMapper):
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

    family = "yolo"
    tags = (MetaKeys.bbox_tag, MetaKeys.class_label_tag)

    def __init__(self, imgsz: int = 640, conf: float = 0.05, iou: float = 0.5, model_path: str = "yolo11n.pt",
                 **kwargs):
        """
        :param imgsz: resolution the images are resized to for inference
        :param conf: confidence score threshold
        :param iou: IoU (Intersection over Union) threshold of non-maximum suppression
        :param model_path: the YOLO weights: a path, or a file name in the model folders
        """
        self._setup(imgsz, conf, iou, model_path, kwargs)

    def tag_values(self, result) -> tuple:
        return result.boxes.xywh.cpu().numpy().tolist(), result.boxes.cls.cpu().numpy().tolist()
