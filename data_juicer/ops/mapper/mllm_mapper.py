from data_juicer.models.vision import chunk_size, check_vision_model, load_vision_model, op_device, to_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision import ModelChecks, load_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars
from data_juicer.utils.lazy import require


@OPERATORS.register_module("mllm_mapper")
class MllmMapper(ModelChecks, Mapper):
    """Visual question answering with a Hugging Face multimodal LLM (LLaVA...): for each distinct
    image of a sample, the model answers the sample's text about that image; the text becomes the
    list of decoded outputs (one per image, prompt included, as Data-Juicer decodes them). A sample
    without images is left as it is.

    The prompt is the processor's chat template over ``[text, image]``; the (image, prompt) pairs
    of a whole batch are generated together (left-padded), greedily unless ``num_beams`` > 1
    (``temperature`` / ``top_p`` are passed to ``generate`` as Data-Juicer passes them, without sampling).
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
    uses = (InterVars.loaded_images,)
    model_params = {"hf_model": "llava-hf/llava-v1.6-vicuna-7b-hf"}

    def __init__(
        self,
        hf_model: str = "llava-hf/llava-v1.6-vicuna-7b-hf",
        max_new_tokens=256,
        temperature=0.2,
        top_p=None,
        num_beams=1,
        **kwargs,
    ):
        """
        :param hf_model: multimodal LLM: a Hugging Face model name (found offline) or a local folder
        :param max_new_tokens: most tokens generated per answer
        :param temperature: passed to ``generate`` (no effect without sampling, as in Data-Juicer)
        :param top_p: passed to ``generate``
        :param num_beams: beams of the beam search (1: greedy)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "32GB")
        super().__init__(**kwargs)
        self.hf_model = hf_model
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.num_beams = num_beams
        check_vision_model(hf_model, who=self.name)

    def process_batched(self, samples):
        col = samples.get(self.image_key)
        texts = samples[self.text_key]
        jobs = []  # (row, image, prompt)
        model = proc = None
        for i in range(len(texts)):
            if col is None or not col[i]:
                continue
            if proc is None:
                model, proc = load_vision_model(self.hf_model, who=self.name, device=op_device(self),
                                                fallback_class="AutoModelForImageTextToText")
            conversation = [{"role": "user", "content": [{"type": "text", "text": texts[i]}, {"type": "image"}]}]
            prompt = proc.apply_chat_template(conversation, add_generation_prompt=True)
            jobs += [(i, img, prompt) for img in load_images(self, samples, i).values()]
        if not jobs:
            return samples
        answers = self._generate(model, proc, [(img, p) for _, img, p in jobs])
        out = list(texts)
        for i in {j[0] for j in jobs}:
            out[i] = []
        for (i, _, _), ans in zip(jobs, answers):
            out[i].append(ans)
        samples[self.text_key] = out
        return samples

    def _generate(self, model, proc, pairs):
        torch = require("torch", who=self.name)
        tok = getattr(proc, "tokenizer", proc)
        tok.padding_side = "left"  # a decoder-only model continues each prompt right where it ends
        size = chunk_size(model.device.type) // 4 or 1
        res = []
        with torch.inference_mode():
            for s in range(0, len(pairs), size):
                part = pairs[s:s + size]
                inputs = proc(images=[p[0] for p in part], text=[p[1] for p in part], return_tensors="pt",
                              padding=True)
                ids = model.generate(**to_model(inputs, model), max_new_tokens=self.max_new_tokens,
                                     temperature=self.temperature, top_p=self.top_p, num_beams=self.num_beams)
                pad = inputs["attention_mask"].shape[1] - inputs["attention_mask"].sum(dim=1)
                for k in range(len(part)):  # drop this row's left padding: the unpadded sequence, decoded
                    res.append(proc.decode(ids[k, int(pad[k]):].cpu(), skip_special_tokens=True))
        return res
