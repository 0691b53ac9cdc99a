"""video_object_segmenting_mapper on CUDA (fp32 and the default bf16) vs the CPU (fp32), tiny models.

Usage: python benchmarks/sam2/gpu_check.py [WORKDIR]   (needs a GPU; builds the tiny models first)
Prints, per CUDA dtype, whether classes/boxes agree, the largest confidence difference and the
fraction of mask pixels that differ from the CPU run. fp32 should agree up to float rounding;
bf16 flips pixels where the tiny random model's logits are near 0 (they are ~1e-3 in size).
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))


def main():
    import numpy as np
    import torch

    from data_juicer.models.loader import clear_models
    from data_juicer.ops.registry import OPERATORS
    from data_juicer.utils.constant import Fields, MetaKeys

    w = sys.argv[1] if len(sys.argv) > 1 else "/tmp/sam2-gpu-check"
    if not os.path.exists(os.path.join(w, "sam2", "config.json")):
        subprocess.check_call([sys.executable, os.path.join(HERE, "build_models.py"), w])
    if not torch.cuda.is_available():
        sys.exit("no CUDA device: nothing to check")
    rows = {"videos": [[os.path.join(w, "v.mp4")]], "main_character_list": [["dog", "red car"]]}

    def run(accelerator, dtype):
        clear_models()
        op = OPERATORS.get("video_object_segmenting_mapper")(
            sam2_hf_model=os.path.join(w, "sam2"), yoloe_path=os.path.join(w, "yoloe", "yoloe-11l-seg.pt"),
            yoloe_conf=0.98, torch_dtype=dtype, accelerator=accelerator)
        t = time.time()
        tag = op.process_batched(dict(rows))[Fields.meta][0][MetaKeys.video_object_segment_tags]
        return tag, time.time() - t

    cpu, t_cpu = run("cpu", "fp32")
    print(f"cpu fp32: {t_cpu:.2f} s, masks {np.array(cpu['segment_data']).shape}")
    for dtype in ("fp32", "bf16"):
        gpu, t = run("cuda", dtype)
        a, b = np.array(cpu["segment_data"]), np.array(gpu["segment_data"])
        same = a.shape == b.shape
        print(f"cuda {dtype}: {t:.2f} s, classes equal {cpu['object_cls_list'] == gpu['object_cls_list']}, "
              f"conf max diff {np.abs(np.subtract(cpu['yoloe_conf_list'], gpu['yoloe_conf_list'])).max() if same else None}, "
              f"mask pixels differing {float((a != b).mean()) if same else 'shape ' + str(b.shape)}")


if __name__ == "__main__":
    main()
