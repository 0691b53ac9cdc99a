"""A tiny seeded SAM2 video model (``transformers.Sam2VideoModel`` + ``Sam2VideoProcessor``) saved
with ``save_pretrained`` into the folder layout ``video_object_segmenting_mapper`` loads by name.

Which dims must agree (transformers 5.x ``Sam2Video*`` classes):

- the memory attention's cross-attention takes keys/values of width 64, fixed in the code
  (``kv_in_dim=64``), so ``memory_encoder_output_channels`` (``mem_dim``) stays 64;
- the object pointers are split into ``hidden / mem_dim`` tokens; with ``hidden == mem_dim`` the
  unsplit pointers keep an extra axis and the memory concatenation fails, so the shared hidden
  size (FPN, prompt encoder, mask decoder, memory attention, memory encoder, mask downsampler,
  memory fuser) is a multiple of 64 above it: 128;
- a global-attention Hiera block must not be the first block of a query-pooling stage (the
  window size it pools to is 0), so stage 3 has two blocks and the global one is its second;
- ``backbone_feature_sizes`` are the image size over 4, 8, 16; the rotary feature size of the
  memory attention is the last of them; the processor resizes frames to the model's image size.
"""
from __future__ import annotations

import os

SIZE = 128


def sam2_video_config(size: int = SIZE):
    from transformers import Sam2VideoConfig

    hidden = 128
    backbone = {"model_type": "sam2_hiera_det_model", "hidden_size": 16, "num_attention_heads": 1,
                "image_size": [size, size], "blocks_per_stage": [1, 1, 2, 1],
                "embed_dim_per_stage": [16, 32, 64, 128], "num_attention_heads_per_stage": [1, 1, 1, 1],
                "window_size_per_stage": [4, 4, 4, 4], "global_attention_blocks": [3],
                "window_positional_embedding_background_size": [4, 4]}
    vision = {"model_type": "sam2_vision_model", "backbone_config": backbone,
              "backbone_channel_list": [128, 64, 32, 16],
              "backbone_feature_sizes": [[size // 4] * 2, [size // 8] * 2, [size // 16] * 2],
              "fpn_hidden_size": hidden}
    return Sam2VideoConfig(
        vision_config=vision,
        prompt_encoder_config={"hidden_size": hidden, "image_size": size, "patch_size": 16},
        mask_decoder_config={"hidden_size": hidden, "mlp_dim": 128, "num_attention_heads": 2,
                             "iou_head_hidden_dim": 64},
        image_size=size, num_maskmem=3,
        memory_attention_hidden_size=hidden, memory_attention_num_layers=1,
        memory_attention_feed_forward_hidden_size=128, memory_attention_rope_feat_sizes=[size // 16] * 2,
        memory_encoder_hidden_size=hidden, memory_encoder_output_channels=64, mask_downsampler_embed_dim=hidden,
        memory_fuser_embed_dim=hidden, memory_fuser_intermediate_dim=128, memory_fuser_num_layers=1)


def build_sam2_video(folder: str, seed: int = 0, std: float = 0.0, size: int = SIZE,
                     object_bias: float = 5.0) -> str:
    """The tiny SAM2 video model, seeded (transformers' initialisation under ``torch.manual_seed``;
    with ``std`` > 0 every weight is then redrawn from N(0, std)), and its processor, saved in
    ``folder``; returns ``folder``. ``object_bias`` is added to the object-score head's output
    bias, so the random model sees every object as present on every frame (else the masks after
    the prompted frame are all empty)."""
    import torch
    import transformers
    from transformers import Sam2VideoModel, Sam2VideoProcessor, Sam2VideoVideoProcessor

    # transformers 5 names the (torchvision) image processor Sam2ImageProcessor, 4.x Sam2ImageProcessorFast
    image_processor = getattr(transformers, "Sam2ImageProcessor", None) or transformers.Sam2ImageProcessorFast

    torch.manual_seed(seed)
    model = Sam2VideoModel(sam2_video_config(size)).eval()
    if std > 0:
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * std)
    with torch.no_grad():
        model.mask_decoder.pred_obj_score_head.proj_out.bias += object_bias
        # one random Fourier matrix for image and prompt positions, as in the released checkpoints
        # (transformers 4.x ties the two buffers at load; 5.x loads each as saved)
        model.prompt_encoder.shared_embedding.positional_embedding.copy_(
            model.shared_image_embedding.positional_embedding)
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    hw = {"height": size, "width": size}
    Sam2VideoProcessor(image_processor=image_processor(size=hw),
                       video_processor=Sam2VideoVideoProcessor(size=hw)).save_pretrained(folder)
    return folder
