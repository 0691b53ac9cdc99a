from data_juicer.models.ultralytics import check_ultralytics_model, load_ultralytics_model, predict_boxes
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import device_for, num_rows, row_images, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("image_segment_mapper")
class ImageSegmentMapper(Mapper):
    """Segments everything in each image with a FastSAM model (Ultralytics) and tags the sample with
    the boxes of the segments (``__dj__bbox__``: per image, a list of ``[x_center, y_center, width,
    height]`` in pixels, from full-resolution masks).

    A sample without images gets ``[]``; a sample already tagged keeps its tag. The images of a
    batch are predicted together, batched by image size. The weights (``model_path``, default
    ``FastSAM-x.pt``; ``FastSAM-s.pt`` also works) are a path or a file name looked up in the model
    folders; nothing is downloaded.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "ultralytics", "pillow")
    uses_model = True

    def __init__(self, imgsz: int = 1024, conf: float = 0.05, iou: float = 0.5, model_path: str = "FastSAM-x.pt",
                 **kwargs):
        """
        :param imgsz: resolution the images are resized to for inference
        :param conf: confidence score threshold
        :param iou: IoU (Intersection over Union) threshold of non-maximum suppression
        :param model_path: the FastSAM weights (``FastSAM-x.pt`` or ``FastSAM-s.pt``): a path, or a
            file name in the model folders
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
                continue
            if MetaKeys.bbox_tag in meta:
                continue
            imgs = list(row_images(self, samples, i).values())
            rows.append((i, len(flat), len(imgs)))
            flat.extend(imgs)
        if not flat:
            return samples
        model = load_ultralytics_model(self.model_path, "fastsam", device_for(self), who=self.name)
        results = predict_boxes(model, flat, retina_masks=True, imgsz=self.imgsz, conf=self.conf, iou=self.iou)
        for i, start, count in rows:
            metas[i][MetaKeys.bbox_tag] = [r.boxes.xywh.cpu().numpy().tolist() for r in results[start:start + count]]
        return samples
