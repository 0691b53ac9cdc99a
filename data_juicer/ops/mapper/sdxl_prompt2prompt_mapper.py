import hashlib
import os

from data_juicer.models.diffusion import DTYPES, check_diffusion_model, load_diffusion_pipeline, seeded_generators
from data_juicer.models.vision import op_device
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision import ModelChecks, check_choice
from data_juicer.ops.common.vision_other import ASSETS_CACHE
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields

OP_NAME = "sdxl_prompt2prompt_mapper"
SDXL = "stabilityai/stable-diffusion-xl-base-1.0"


@OPERATORS.register_module(OP_NAME)
class SDXLPrompt2PromptMapper(ModelChecks, Mapper):
    """Generates a pair of similar images from two related captions with a Stable Diffusion XL
    pipeline under prompt-to-prompt attention control.

    The captions are read from ``text_key`` and ``text_key_second``; both images start from the
    same noise, and the second one takes the first one's cross-attention maps for the tokens the
    two captions share (aligned token by token) and, during the first 40% of the steps, its
    self-attention maps in the low-resolution layers (Data-Juicer's ``refine`` edit; see
    ``data_juicer.models.prompt2prompt``), so the pair differs mainly where the captions differ.
    The images are written as JPEG to ``<output_dir>/__dj__produced_data__/sdxl_prompt2prompt_mapper/``
    and their paths stored in the sample's ``image_path1`` and ``image_path2`` fields.

    Differs from Data-Juicer on purpose: the noise comes from a generator seeded by the two
    captions and the parameters, and the file names (``image_pair_<hash>_1.jpg`` / ``_2.jpg``) are
    derived from the same, so a rerun gives the same images under the same paths (Data-Juicer
    draws a random seed and names files by time and a random number); a missing
    ``text_key_second`` is refused when the op is built, and a sample whose caption is missing or
    not a string raises an error naming the field (Data-Juicer logs an error, then fails on the
    missing key); with ``guidance_scale`` <= 1 the edit applies to the whole (unguided) batch.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "diffusers", "transformers", "pillow")
    uses_model = True

    def __init__(
        self,
        hf_diffusion: str = SDXL,
        trust_remote_code=False,
        torch_dtype: str = "fp32",
        num_inference_steps: float = 50,
        guidance_scale: float = 7.5,
        text_key=None,
        text_key_second=None,
        output_dir=ASSETS_CACHE,
        **kwargs,
    ):
        """
        :param hf_diffusion: the SDXL pipeline: a Hugging Face model name (found offline) or a
            local folder saved with ``save_pretrained``
        :param trust_remote_code: allow the model folder's own code
        :param torch_dtype: weight precision on the GPU: ``fp32``, ``fp16`` or ``bf16`` (the CPU uses fp32)
        :param num_inference_steps: denoising steps; more give better images and take longer
        :param guidance_scale: classifier-free guidance scale; above 1 images follow the captions more closely
        :param text_key: the field of the first caption of the pair (default: the op's ``text_key``, ``text``)
        :param text_key_second: the field of the second caption of the pair (required)
        :param output_dir: the folder under which the generated images are stored (default:
            Data-Juicer's assets cache, ``$DATA_JUICER_ASSETS_CACHE``)
        """
        if text_key is not None:
            kwargs["text_key"] = text_key
        kwargs.setdefault("memory", kwargs.get("mem_required") or "38GB")
        super().__init__(**kwargs)
        check_choice(torch_dtype, DTYPES, "torch_dtype", self.name)
        if not text_key_second:
            raise ValueError(f"{self.name} generates an image pair from two captions: set `text_key_second` to "
                             f"the field of the second caption (the first one is read from `text_key`, "
                             f"'{self.text_key}')")
        steps = int(num_inference_steps)
        if steps != num_inference_steps or steps < 1:
            raise ValueError(f"{self.name}: num_inference_steps must be a positive whole number, "
                             f"got {num_inference_steps!r}")
        self.hf_diffusion = hf_diffusion
        self.trust_remote_code = trust_remote_code
        self.torch_dtype = torch_dtype
        self.num_inference_steps = steps
        self.guidance_scale = guidance_scale
        self.text_key_second = text_key_second
        self.output_dir = str(output_dir)
        check_diffusion_model(hf_diffusion, who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        who = getattr(cls, "_name", "") or cls.__name__
        return [check_diffusion_model(params.get("hf_diffusion") or SDXL, who=who)]

    def _caption(self, sample, key):
        value = sample.get(key)
        if not isinstance(value, str) or not value:
            got = "missing" if key not in sample else f"{type(value).__name__} {value!r}"[:80]
            raise ValueError(f"{self.name}: the sample's caption field '{key}' must be a non-empty string "
                             f"(got {got}); give every sample both captions or drop the ones without")
        return value

    def _pair_key(self, prompts):
        params = {"hf_diffusion": self.hf_diffusion, "torch_dtype": self.torch_dtype,
                  "steps": self.num_inference_steps, "guidance_scale": self.guidance_scale, "prompts": prompts}
        text = "\n".join([OP_NAME] + [f"{k}={params[k]!r}" for k in sorted(params)])
        return hashlib.md5(text.encode("utf-8")).hexdigest()

    def process_single(self, sample):
        from data_juicer.media.files import atomic_write
        from data_juicer.models.prompt2prompt import generate_pair

        prompts = [self._caption(sample, self.text_key), self._caption(sample, self.text_key_second)]
        device = op_device(self)
        pipe = load_diffusion_pipeline(self.hf_diffusion, "text2image", who=self.name, device=device,
                                       dtype=self.torch_dtype, trust_remote_code=self.trust_remote_code,
                                       pipeline_class="StableDiffusionXLPipeline")
        key = self._pair_key(prompts)
        gen = seeded_generators([key], device="cpu")[0]
        images = generate_pair(pipe, prompts, num_inference_steps=self.num_inference_steps,
                               guidance_scale=self.guidance_scale, generator=gen)
        folder = os.path.join(self.output_dir, Fields.multimodal_data_output_dir, OP_NAME)
        os.makedirs(folder, exist_ok=True)
        for idx, img in enumerate(images, start=1):
            path = os.path.join(folder, f"image_pair_{key}_{idx}.jpg")
            with atomic_write(path) as tmp:
                img.save(tmp, format="JPEG")
            sample["image_path" + str(idx)] = path
        return sample
