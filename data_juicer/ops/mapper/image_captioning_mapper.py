from typing import Optional

from loguru import logger
from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.captions import (CANDIDATE_MODES, MAX_NEW_TOKENS, choose_captions, generate_captions,
                                             insert_after_tokens, only_special_tokens)
from data_juicer.ops.common.fan_out import expand_rows
from data_juicer.ops.common.special_tokens import remove_special_tokens, special_tokens
from data_juicer.ops.common.vision import ModelChecks, check_choice, load_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars


@OPERATORS.register_module("image_captioning_mapper")
class ImageCaptioningMapper(ModelChecks, Mapper):
    """Captions each image with a Hugging Face image-to-text model (BLIP-2, BLIP...) and adds new
    samples whose text is the original special tokens with each image's caption after its token.

    Every image of a whole batch is captioned in sub-batches of ``gpu_batch_size``, ``caption_num``
    sampled captions each; ``keep_candidate_mode`` keeps a random one, the one closest to the
    chunk's original text (simhash), or all (one new sample per candidate). A new sample is added
    after its original (kept when ``keep_original_sample``); a sample without images adds none.
    Differs from Data-Juicer on purpose: with several images in a chunk, each caption follows its
    own image token (Data-Juicer puts them all after the first one).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
    fan_out = True
    uses = (InterVars.loaded_images,)
    model_params = {"hf_img2seq": "Salesforce/blip2-opt-2.7b"}

    def __init__(
        self,
        hf_img2seq: str = "Salesforce/blip2-opt-2.7b",
        trust_remote_code: bool = False,
        caption_num: PositiveInt = 1,
        keep_candidate_mode: str = "random_any",
        keep_original_sample: bool = True,
        prompt: Optional[str] = None,
        prompt_key: Optional[str] = None,
        gpu_batch_size: PositiveInt = 8,
        **kwargs,
    ):
        """
        :param hf_img2seq: image-to-text model: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param caption_num: sampled candidate captions per image
        :param keep_candidate_mode: ``random_any`` (one random candidate), ``similar_one_simhash``
            (the candidate closest to the original text) or ``all`` (one new sample per candidate)
        :param keep_original_sample: keep the original sample before its new ones
        :param prompt: a text prompt for every image (e.g. BLIP-2's "Question: ... Answer:")
        :param prompt_key: field holding a per-sample prompt (used before ``prompt`` when a string)
        :param gpu_batch_size: images per generation call
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "16GB")
        super().__init__(**kwargs)
        check_choice(keep_candidate_mode, CANDIDATE_MODES, "Keep strategy", self.name)
        self.hf_img2seq = hf_img2seq
        self.trust_remote_code = trust_remote_code
        self.caption_num = caption_num
        self.keep_candidate_mode = keep_candidate_mode
        self.keep_original_sample = keep_original_sample
        self.prompt = prompt
        self.prompt_key = prompt_key
        self.gpu_batch_size = gpu_batch_size
        self.max_new_tokens = MAX_NEW_TOKENS  # Data-Juicer's fixed generation length
        self.num_newly_generated_samples = caption_num if keep_candidate_mode == "all" else 1
        if prompt and prompt_key:
            logger.warning(f"{self.name}: both `prompt` and `prompt_key` are set; `prompt_key` is used first")
        check_vision_model(hf_img2seq, who=self.name)

    def _prompt(self, samples, i):
        if self.prompt_key and self.prompt_key in samples and isinstance(samples[self.prompt_key][i], str):
            return samples[self.prompt_key][i]
        return self.prompt if isinstance(self.prompt, str) else None

    def process_batched(self, samples):
        tok, eoc = special_tokens()["image"], special_tokens()["eoc"]
        col = samples.get(self.image_key)
        n = len(samples[self.text_key])
        images, prompts, where = [], [], []  # where: (row, chunk index, image index in chunk)
        for i in range(n):
            if col is None or not col[i]:
                continue
            loaded = load_images(self, samples, i)
            paths, offset = col[i], 0
            for c, chunk in enumerate(samples[self.text_key][i].split(eoc)):
                if not chunk.strip():
                    continue
                count = chunk.count(tok)
                for k in range(count):
                    images.append(loaded[paths[offset + k]])
                    prompts.append(self._prompt(samples, i))
                    where.append((i, c, k))
                offset += count
        if not images:
            return samples if self.keep_original_sample else {key: [] for key in samples}
        model, proc = load_vision_model(self.hf_img2seq, who=self.name, device=op_device(self),
                                        trust_remote_code=self.trust_remote_code,
                                        fallback_class="AutoModelForVision2Seq")
        if getattr(model.config, "model_type", "") == "blip-2":
            model.config.image_token_index = 50265  # as Data-Juicer sets it for BLIP-2 OPT
        caps = generate_captions(model, proc, images, prompts if any(p is not None for p in prompts) else None,
                                 self.caption_num, self.gpu_batch_size, max_new_tokens=self.max_new_tokens)
        by_chunk = {w: c for w, c in zip(where, caps)}
        texts_per_row = []
        for i in range(n):
            texts = [samples[self.text_key][i]] if self.keep_original_sample else []
            if col is not None and col[i]:
                texts += self._new_texts(samples[self.text_key][i], i, by_chunk, tok, eoc)
            texts_per_row.append(texts)
        return expand_rows(samples, self.text_key, texts_per_row)

    def _new_texts(self, text, i, by_chunk, tok, eoc):
        new = [""] * self.num_newly_generated_samples
        for c, chunk in enumerate(text.split(eoc)):
            if not chunk.strip():
                continue
            tokens_only = only_special_tokens(chunk)
            count = chunk.count(tok)
            per_image = [choose_captions(self.keep_candidate_mode, remove_special_tokens(chunk),
                                         by_chunk.get((i, c, k), [""] * self.caption_num)) for k in range(count)]
            for s in range(self.num_newly_generated_samples):
                filled = insert_after_tokens(tokens_only, tok, [p[s] for p in per_image]) if count else tokens_only
                new[s] += f"{filled}{eoc}"
        return new
