import io
import os
from typing import Optional

from loguru import logger
from pydantic import Field, PositiveInt
from typing_extensions import Annotated

from data_juicer.models.diffusion import DTYPES, check_diffusion_model, load_diffusion_pipeline, seeded_generators
from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.captions import MAX_NEW_TOKENS, generate_captions
from data_juicer.ops.common.frame_captions import build_rows
from data_juicer.ops.common.special_tokens import remove_special_tokens
from data_juicer.ops.common.vision import ModelChecks, check_choice, load_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars

CANVAS = 512  # Data-Juicer resizes every image to 512x512 for the pipeline
NSFW_RETRIES = 5


@OPERATORS.register_module("image_diffusion_mapper")
class ImageDiffusionMapper(ModelChecks, Mapper):
    """Makes ``aug_num`` new variants of every image with a Stable Diffusion image-to-image
    pipeline guided by a caption, and adds one new sample per variant (its images replaced by
    the generated ones) after the original (kept when ``keep_original_sample``); a sample
    without images adds none.

    Captions come from ``caption_key`` (one string for all images of a sample, or a list with
    one per image; empty means an unconditional prompt), else an image-to-text model
    (``hf_img2seq``) captions each image with the prompt "A photo of a " (the caption is that
    prompt followed by the generated text, as Data-Juicer builds it). Each image is resized to
    512x512 (bilinear), transformed with ``strength`` and ``guidance_scale``, and resized back
    to its own size; the pipeline's safety checker, when it has one, makes an image be drawn
    again. Images of a whole batch go through the pipeline together.

    Generated files are named from the source file's content, the parameters, the caption and
    the variant number (``<stem>__dj_hash_#<h>#<ext>`` in ``save_dir``, ``$DJ_PRODUCED_DATA_DIR/
    <op>/`` or ``__dj__produced_data__/<op>/`` beside the source) and written atomically.
    Differs from Data-Juicer on purpose: each image's noise comes from a generator seeded by its
    output file name (source content, parameters, caption, variant), so a rerun gives the same
    images and the same paths (Data-Juicer's paths hold the process id and time); an image
    flagged NSFW is drawn again at most 5 times (Data-Juicer loops until it is not); an image read
    from ``image_bytes_key`` gets its variant as PNG bytes there (Data-Juicer stores raw pixel bytes).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "diffusers", "transformers", "pillow")
    uses_model = True
    fan_out = True
    uses = (InterVars.loaded_images,)

    def __init__(
        self,
        hf_diffusion: str = "CompVis/stable-diffusion-v1-4",
        trust_remote_code: bool = False,
        torch_dtype: str = "fp32",
        revision: str = "main",
        strength: Annotated[float, Field(ge=0, le=1)] = 0.8,
        guidance_scale: float = 7.5,
        aug_num: PositiveInt = 1,
        keep_original_sample: bool = True,
        caption_key: Optional[str] = None,
        hf_img2seq: str = "Salesforce/blip2-opt-2.7b",
        save_dir: str = None,
        **kwargs,
    ):
        """
        :param hf_diffusion: the image-to-image diffusion pipeline: a Hugging Face model name
            (found offline) or a local folder saved with ``save_pretrained``
        :param trust_remote_code: allow the model folder's own code
        :param torch_dtype: weight precision on the GPU: ``fp32``, ``fp16`` or ``bf16`` (the CPU uses fp32)
        :param revision: the model revision (models are read from a local folder, whose revision is used)
        :param strength: how far the image is transformed (0-1): more noise, and more denoising
            steps, the higher it is; 1 ignores the image
        :param guidance_scale: classifier-free guidance scale; above 1 images follow the caption more closely
        :param aug_num: new images (and samples) made per image
        :param keep_original_sample: keep the original sample before its new ones
        :param caption_key: field holding the caption(s) of a sample's images; when unset,
            captions are generated with ``hf_img2seq``
        :param hf_img2seq: image-to-text model captioning the images when ``caption_key`` is unset
        :param save_dir: folder of the generated images (else ``$DJ_PRODUCED_DATA_DIR`` or beside the sources)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "8GB")
        super().__init__(**kwargs)
        check_choice(torch_dtype, DTYPES, "torch_dtype", self.name)
        self.hf_diffusion = hf_diffusion
        self.trust_remote_code = trust_remote_code
        self.torch_dtype = torch_dtype
        self.revision = revision
        self.strength = strength
        self.guidance_scale = guidance_scale
        self.aug_num = aug_num
        self.keep_original_sample = keep_original_sample
        self.caption_key = caption_key
        self.hf_img2seq = hf_img2seq
        self.save_dir = save_dir
        self.prompt = "A photo of a "
        self.canvas = CANVAS
        self.num_inference_steps = 50  # the pipelines' default, which Data-Juicer keeps
        self.max_new_tokens = MAX_NEW_TOKENS
        check_diffusion_model(hf_diffusion, who=self.name)
        if not caption_key:
            check_vision_model(hf_img2seq, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        who = getattr(cls, "_name", "") or cls.__name__
        found = [check_diffusion_model(params.get("hf_diffusion") or "CompVis/stable-diffusion-v1-4", who=who)]
        if not params.get("caption_key"):
            found.append(check_vision_model(params.get("hf_img2seq") or "Salesforce/blip2-opt-2.7b", who=who))
        return found

    # -- captions ------------------------------------------------------------------------------
    def _given_captions(self, samples, i, n):
        col = samples.get(self.caption_key)
        caps = col[i] if col is not None else None
        if not caps:
            caps = [""] * n
        elif not isinstance(caps, list):
            caps = [caps] * n
        elif len(caps) != n:
            raise ValueError(f"{self.name}: sample {i} has {len(caps)} captions in '{self.caption_key}' for {n} "
                             "images; give one caption per image (None or \"\" for no guidance), or one string")
        return [remove_special_tokens(c) if isinstance(c, str) else "" for c in caps]

    def _generated_captions(self, images):
        if not images:
            return []
        model, proc = load_vision_model(self.hf_img2seq, who=self.name, device=op_device(self),
                                        fallback_class="AutoModelForVision2Seq")
        if getattr(model.config, "model_type", "") == "blip-2":
            model.config.image_token_index = 50265  # as Data-Juicer sets it for BLIP-2 OPT
        caps = generate_captions(model, proc, images, [self.prompt] * len(images), 1, 8,
                                 max_new_tokens=self.max_new_tokens)
        return [self.prompt + remove_special_tokens(c[0]) for c in caps]

    # -- generation ----------------------------------------------------------------------------
    def _out_path(self, path, caption, aug):
        from data_juicer.media.files import transform_file_name

        params = {"hf_diffusion": self.hf_diffusion, "torch_dtype": self.torch_dtype, "revision": self.revision,
                  "strength": self.strength, "guidance_scale": self.guidance_scale, "caption": caption,
                  "aug": aug, "steps": self.num_inference_steps}
        return transform_file_name(path, self.name, params, out_dir=self.save_dir)

    def _run_pipeline(self, jobs):
        """``jobs``: (image, caption, output key) -> the generated images (each at its source's size)."""
        from PIL import Image

        device = op_device(self)
        pipe = load_diffusion_pipeline(self.hf_diffusion, "image2image", who=self.name, device=device,
                                       dtype=self.torch_dtype, revision=self.revision,
                                       trust_remote_code=self.trust_remote_code)
        step = 8 if device != "cpu" else 2
        gens = seeded_generators([k for _, _, k in jobs])
        out = [None] * len(jobs)
        for s in range(0, len(jobs), step):
            todo = list(range(s, min(s + step, len(jobs))))
            for attempt in range(NSFW_RETRIES + 1):
                res = pipe(image=[jobs[k][0].resize((self.canvas, self.canvas), Image.BILINEAR) for k in todo],
                           prompt=[jobs[k][1] for k in todo], strength=self.strength,
                           guidance_scale=self.guidance_scale, num_inference_steps=self.num_inference_steps,
                           generator=[gens[k] for k in todo])
                flags = getattr(res, "nsfw_content_detected", None)
                again = []
                for k, img, flagged in zip(todo, res.images, flags or [False] * len(todo)):
                    out[k] = img
                    if flagged and getattr(pipe, "safety_checker", None) is not None:
                        again.append(k)
                if not again:
                    break
                if attempt == NSFW_RETRIES:
                    logger.warning(f"{self.name}: {len(again)} image(s) still flagged NSFW after "
                                   f"{NSFW_RETRIES} redraws; kept as the pipeline returned them")
                todo = again
        return [img.resize(jobs[k][0].size, Image.BILINEAR) for k, img in enumerate(out)]

    def process_batched(self, samples):
        from data_juicer.media.files import atomic_write

        n = len(samples[self.text_key]) if self.text_key in samples else len(samples[self.image_key])
        col = samples.get(self.image_key)
        rows_with = [i for i in range(n) if col is not None and col[i]]
        loaded = {i: load_images(self, samples, i) for i in rows_with}
        captions = {}
        if self.caption_key:
            for i in rows_with:
                captions[i] = self._given_captions(samples, i, len(col[i]))
        else:
            flat = [(i, loaded[i][p]) for i in rows_with for p in col[i]]
            gen = self._generated_captions([img for _, img in flat])
            for (i, _), c in zip(flat, gen):
                captions.setdefault(i, []).append(c)
        jobs, where = [], []  # where: (row, aug, image index, output path)
        for aug in range(self.aug_num):
            for i in rows_with:
                for k, p in enumerate(col[i]):
                    out = self._out_path(p, captions[i][k], aug)
                    key = os.path.basename(out) if out != p else f"{p}\n{aug}\n{captions[i][k]}"
                    jobs.append((loaded[i][p], captions[i][k], key))
                    where.append((i, aug, k, out))
        images = self._run_pipeline(jobs) if jobs else []
        new_paths: dict = {}
        new_bytes: dict = {}
        bytes_col = samples.get(self.image_bytes_key) if self.image_bytes_key else None
        for (i, aug, k, out), img in zip(where, images):
            src = col[i][k]
            if out != src:
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with atomic_write(out) as tmp:
                    img.save(tmp)
            new_paths.setdefault((i, aug), list(col[i]))[k] = out
            if bytes_col is not None and bytes_col[i] is not None and k < len(bytes_col[i]):
                buf = io.BytesIO()
                img.save(buf, format="PNG")
                new_bytes.setdefault((i, aug), list(bytes_col[i]))[k] = buf.getvalue()
        rows = []
        for i in range(n):
            if self.keep_original_sample:
                rows.append((i, None))
            if i not in loaded:
                continue
            for aug in range(self.aug_num):
                new = {self.image_key: new_paths[(i, aug)]}
                if (i, aug) in new_bytes:
                    new[self.image_bytes_key] = new_bytes[(i, aug)]
                rows.append((i, new))
        return build_rows(samples, rows)
