"""The tiny seeded SAM2 video model and YOLOE of the tests, and the test video, under a folder."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.models.tiny_models_b import build_yoloe
from tests.models.tiny_sam2_models import build_sam2_video
from tests.ops.vision_other_helpers import write_video

root = sys.argv[1]
build_sam2_video(os.path.join(root, "sam2"))
build_yoloe(os.path.join(root, "yoloe"), seed=1, std=0.3)
write_video(os.path.join(root, "v.mp4"), frames=5, w=64, h=48)
