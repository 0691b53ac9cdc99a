import os
from pathlib import Path
from typing import Union

from data_juicer.models.plugins import check_plugin, load_plugin, predict, resolve_plugin_weights
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import ASSETS_CACHE, device_for, num_rows, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys

KIND = "video_depth"
_INPUT_SIZE = 518  # Video Depth Anything's inference resolution (Data-Juicer's input_size)


def write_point_cloud(path: str, points, colors) -> None:
    """An ASCII PLY point cloud (xyz float, rgb uchar), the file open3d writes for Data-Juicer."""
    import numpy as np

    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    rgb = np.clip(np.asarray(colors).reshape(-1, 3) * 255.0 + 0.5, 0, 255).astype(np.uint8)
    with open(path, "w") as f:
        f.write(f"ply\nformat ascii 1.0\nelement vertex {len(pts)}\nproperty double x\nproperty double y\n"
                "property double z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n")
        for (x, y, z), (r, g, b) in zip(pts, rgb):
            f.write(f"{x} {y} {z} {r} {g} {b}\n")


@OPERATORS.register_module("video_depth_estimation_mapper")
class VideoDepthEstimationMapper(Mapper):
    """Estimates per-frame depth of a sample's first video with Video Depth Anything and tags it
    (``__dj__meta__['video_depth_tags'] = {'depth_data': (T, H, W) depths, 'fps': fps}``; a
    sample without videos gets ``{'depth_data': [], 'fps': -1}``).

    **Model code not bundled**: Video Depth Anything's code is only in its research repository
    (Data-Juicer clones it at run time). Plug it in as a ``video_depth`` plug-in
    (``data_juicer/models/plugins.py``); this op does the rest: it finds the weights
    (``video_depth_model_path``, a path or a file name in the model folders), decodes every frame
    (RGB), shrinks frames whose longer edge exceeds ``max_res`` (as the repository's
    ``read_video_frames``), calls the plug-in once per video, and for a metric model (a weight file
    name containing ``metric``) writes one PLY point cloud per frame to
    ``point_cloud_dir_for_metric`` (focal length 470.4 px, as Data-Juicer). Visualisation videos
    (``if_save_visualization``) are written with the depths normalised to grey or to a colour map.
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("torch", "av", "pillow")
    uses_model = True

    def __init__(self, video_depth_model_path: str = "video_depth_anything_vitb.pth",
                 point_cloud_dir_for_metric: Union[str, Path] = ASSETS_CACHE,
                 max_res: int = 1280, torch_dtype: str = "fp16", if_save_visualization: bool = False,
                 save_visualization_dir: Union[str, Path] = ASSETS_CACHE,
                 grayscale: bool = False, **kwargs):
        """
        :param video_depth_model_path: the Video Depth Anything weights (a path, or a file name in the
            model folders); a name containing ``metric`` switches to metric mode (point clouds)
        :param point_cloud_dir_for_metric: folder of the per-frame point clouds of a metric model
            (default: Data-Juicer's assets cache, ``$DATA_JUICER_ASSETS_CACHE``)
        :param max_res: frames whose longer edge exceeds this are shrunk to it first
        :param torch_dtype: ``fp16`` or ``fp32`` inference (passed to the plug-in as ``fp32``)
        :param if_save_visualization: write ``<video>_src.mp4`` and ``<video>_vis.mp4``
        :param save_visualization_dir: folder of the visualisation videos
        :param grayscale: grey depth visualisation instead of a colour map
        """
        super().__init__(**kwargs)
        if torch_dtype not in ("fp16", "fp32"):
            raise ValueError(f"{self.name}: torch_dtype must be 'fp16' or 'fp32', got {torch_dtype!r}")
        self.video_depth_model_path = video_depth_model_path
        self.metric = "metric" in video_depth_model_path
        self.point_cloud_dir_for_metric = os.path.expanduser(str(point_cloud_dir_for_metric))
        self.max_res = max_res
        self.torch_dtype = torch_dtype
        self.if_save_visualization = if_save_visualization
        self.save_visualization_dir = os.path.expanduser(str(save_visualization_dir))
        self.grayscale = grayscale
        self.tag_field_name = MetaKeys.video_depth_tags
        self._weights = resolve_plugin_weights(video_depth_model_path, self.name, "video_depth_model_path")
        check_plugin(KIND, self.name)

    def _frames(self, path: str):
        import numpy as np

        from data_juicer.media.video import iter_frames, open_video, video_info

        with open_video(path) as c:
            fps = float(video_info(path, c)["fps"])
            frames = [f.to_image() for f in iter_frames(c, path)]
        if frames and self.max_res > 0 and max(frames[0].size) > self.max_res:
            w, h = frames[0].size
            scale = self.max_res / max(h, w)
            size = (round(w * scale), round(h * scale))
            frames = [f.resize(size) for f in frames]
        return np.stack([np.asarray(f) for f in frames]) if frames else np.zeros((0, 0, 0, 3), np.uint8), fps

    def _save_visualization(self, path, frames, depths, fps):
        import av
        import numpy as np

        os.makedirs(self.save_visualization_dir, exist_ok=True)
        stem = os.path.splitext(os.path.basename(path))[0]
        d = np.asarray(depths, dtype=np.float64)
        norm = ((d - d.min()) / max(d.max() - d.min(), 1e-12) * 255).astype(np.uint8)
        vis = np.repeat(norm[..., None], 3, axis=-1)
        if not self.grayscale:  # a simple blue -> red ramp in place of matplotlib's inferno
            vis = np.stack([norm, np.zeros_like(norm), 255 - norm], axis=-1)
        for name, arr in ((f"{stem}_src.mp4", frames), (f"{stem}_vis.mp4", vis)):
            with av.open(os.path.join(self.save_visualization_dir, name), "w") as out:
                st = out.add_stream("mpeg4", rate=max(int(round(fps)), 1))
                st.height, st.width = arr.shape[1] // 2 * 2, arr.shape[2] // 2 * 2
                st.pix_fmt = "yuv420p"
                for img in arr:
                    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(img[:st.height, :st.width]), format="rgb24")
                    for pkt in st.encode(frame):
                        out.mux(pkt)
                for pkt in st.encode():
                    out.mux(pkt)

    def _point_clouds(self, frames, depths):
        import numpy as np

        os.makedirs(self.point_cloud_dir_for_metric, exist_ok=True)
        h, w = np.asarray(depths[0]).shape[-2:]
        x, y = np.meshgrid(np.arange(w), np.arange(h))
        x, y = (x - w / 2) / 470.4, (y - h / 2) / 470.4
        for i, (img, depth) in enumerate(zip(frames, depths)):
            z = np.asarray(depth)
            pts = np.stack((x * z, y * z, z), axis=-1)
            write_point_cloud(os.path.join(self.point_cloud_dir_for_metric, f"point{i:04d}.ply"), pts,
                              np.asarray(img).reshape(-1, 3) / 255.0)

    def process_batched(self, samples):
        import numpy as np

        metas = row_metas(samples, num_rows(samples))
        vids = samples.get(self.video_key)
        todo = []
        for i, meta in enumerate(metas):
            if self.tag_field_name in meta:
                continue
            if vids is None or not vids[i]:
                meta[self.tag_field_name] = {"depth_data": [], "fps": -1}
                continue
            todo.append(i)
        if not todo:
            return samples
        inputs, frames_of = [], []
        for i in todo:
            frames, fps = self._frames(vids[i][0])
            frames_of.append(frames)
            inputs.append({"frames": frames, "fps": fps, "input_size": _INPUT_SIZE,
                           "fp32": self.torch_dtype == "fp32"})
        predictor = load_plugin(KIND, self._weights, device_for(self), who=self.name)
        for i, inp, out in zip(todo, inputs, predict(KIND, predictor, inputs, self.name)):
            depths = np.asarray(out["depths"], dtype=np.float32)
            if self.if_save_visualization:
                self._save_visualization(vids[i][0], inp["frames"], depths, out["fps"])
            if self.metric:
                self._point_clouds(inp["frames"], depths)
            metas[i][self.tag_field_name] = {"depth_data": depths.tolist(), "fps": float(out["fps"])}
        return samples
