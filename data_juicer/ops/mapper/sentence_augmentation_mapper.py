import logging

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

logger = logging.getLogger(__name__)

# Data-Juicer 1.6.1's prompts, kept byte for byte (their runs of spaces included): outputs depend on them
DEFAULT_SYSTEM_PROMPT = ("A chat between a curious user and an artificial     intelligence assistant. The assistant "
                         "gives helpful, detailed, and         polite answers to the user's questions.")
_VICUNA_USER = ' USER: Here                 is a sentence: "'
_CHAT_USER = 'Here is a sentence: "'


@OPERATORS.register_module("sentence_augmentation_mapper")
class SentenceAugmentationMapper(Mapper):
    """Asks a Hugging Face instruction LLM to rewrite the sentence in ``text_key`` following
    ``task_sentence`` and writes the answer (stripped of spaces and double quotes) to
    ``text_key_second``.

    The prompt is ``Here is a sentence: "<text>". <task_sentence>`` under ``system_prompt``,
    rendered with the model's chat template (a plain ``USER: ... ASSISTANT:`` prompt for models
    whose name contains ``vicuna``). Works best on single sentences. Without a
    ``task_sentence`` both fields are set to ``""`` (as Data-Juicer). The model is loaded
    offline from the models folder.
    """

    _accelerator = "cuda"
    requires = ("torch", "transformers")

    def __init__(
        self,
        hf_model: str = "Qwen/Qwen2-7B-Instruct",
        system_prompt: str | None = None,
        task_sentence: str | None = None,
        max_new_tokens=256,
        temperature=0.2,
        top_p=None,
        num_beams=1,
        text_key=None,
        text_key_second=None,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face causal LM name (resolved to a local folder) or folder
        :param system_prompt: system prompt (default: a generic helpful-assistant prompt)
        :param task_sentence: the instruction, e.g. ``Please rewrite it in a formal tone.``
        :param max_new_tokens: most tokens generated per sample
        :param temperature: sampling temperature (used when the model's generation config samples)
        :param top_p: nucleus sampling probability mass
        :param num_beams: beam search width
        :param text_key: field holding the sentence (default: ``text``)
        :param text_key_second: field receiving the augmented sentence (required)
        """
        if text_key is not None:
            kwargs["text_key"] = text_key
        super().__init__(**kwargs)
        if not text_key_second:
            raise ValueError("sentence_augmentation_mapper writes its output to `text_key_second`: "
                             "set it to the field that should receive the augmented sentence.")
        if task_sentence is None:
            logger.warning("sentence_augmentation_mapper: task_sentence is not set, so every sample's "
                           "'%s' and '%s' become empty strings (as in Data-Juicer)", self.text_key, text_key_second)
        else:
            from data_juicer.models.hf import check_hf_model

            check_hf_model(hf_model, who=self.name)
        self.hf_model = hf_model
        self.system_prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.task_sentence = task_sentence
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.num_beams = num_beams
        self.text_key_second = text_key_second

    def _prompt(self, tok, text: str) -> str:
        if "vicuna" in self.hf_model:
            return self.system_prompt + _VICUNA_USER + text + '". ' + self.task_sentence + " ASSISTANT:"
        messages = [{"role": "system", "content": self.system_prompt},
                    {"role": "user", "content": _CHAT_USER + text + '". ' + self.task_sentence}]
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def process_batched(self, samples):
        texts = samples[self.text_key]
        if self.task_sentence is None:
            samples[self.text_key] = [""] * len(texts)
            samples[self.text_key_second] = [""] * len(texts)
            return samples
        from data_juicer.models.hf import load_hf_model, pick_device
        from data_juicer.utils.lazy import require

        torch = require("torch", who=self.name)
        model, processor = load_hf_model(self.hf_model, who=self.name, device=pick_device(self.accelerator))
        tok = getattr(processor, "tokenizer", processor)
        outs = []
        # one prompt per generate() call: batched generation pads, which can change the result
        with torch.no_grad():
            for text in texts:
                inputs = processor(self._prompt(tok, text), return_tensors="pt").to(model.device)
                gen = model.generate(**inputs, max_new_tokens=self.max_new_tokens, eos_token_id=tok.eos_token_id,
                                     top_p=self.top_p, temperature=self.temperature, num_beams=self.num_beams)
                n = inputs["input_ids"].shape[1]
                outs.append(tok.batch_decode(gen[:, n:], skip_special_tokens=True)[0].strip().strip('"'))
        samples[self.text_key_second] = outs
        return samples
