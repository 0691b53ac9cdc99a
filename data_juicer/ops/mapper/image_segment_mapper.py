from data_juicer.ops.common.ultralytics_boxes import UltralyticsBoxMapper
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("image_segment_mapper")
class ImageSegmentMapper(UltralyticsBoxMapper):
    """Segments everything in each image with a FastSAM model (Ultralytics) and tags the sample with
    the boxes of the segments (``__dj__bbox__``: per image, a list of ``[x_center, y_center, width,
    height]`` in pixels, from full-resolution masks).

    A sample without images gets ``[]``; a sample already tagged keeps its tag. The images of a
    batch are predicted together, batched by image size. The weights (``model_path``, default
    ``FastSAM-x.pt``; ``FastSAM-s.pt`` also works) are a path or a file name looked up in the model
    folders; nothing is downloaded.
    """

    family = "fastsam"
    predict_kwargs = {"retina_masks": True}

    def __init__(self, imgsz: int = 1024, conf: float = 0.05, iou: float = 0.5, model_path: str = "FastSAM-x.pt",
                 **kwargs):
        """
        :param imgsz: resolution the images are resized to for inference
        :param conf: confidence score threshold
        :param iou: IoU (Intersection over Union) threshold of non-maximum suppression
        :param model_path: the FastSAM weights (``FastSAM-x.pt`` or ``FastSAM-s.pt``): a path, or a
            file name in the model folders
        """
        self._setup(imgsz, conf, iou, model_path, kwargs)
