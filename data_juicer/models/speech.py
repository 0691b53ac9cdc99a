"""FunASR SenseVoice (``FunAudioLLM/SenseVoiceSmall``) for the speech ops: found offline, loaded
once per worker, run on many waveforms at once.

Data-Juicer clones the SenseVoice repository and applies a patch to it; the model class is also
in the ``funasr`` package (``funasr.models.sense_voice.model.SenseVoiceSmall``), which is what
is used here. The model folder is FunASR's layout (``config.yaml``, ``model.pt``, the BPE
tokenizer and ``am.mvn``), looked for as every Hugging Face model (``DJ_MODELS_DIR/
FunAudioLLM/SenseVoiceSmall``, the Hugging Face cache...; see docs/models.md).
"""

from __future__ import annotations

import os
from typing import Sequence

from data_juicer.models.loader import ensure_installed, load_once, resolve_hf_model
from data_juicer.utils.lazy import require

SENSEVOICE = "FunAudioLLM/SenseVoiceSmall"
SAMPLING_RATE = 16000
# FunASR computes fbank features with torchaudio or, without it (no torchaudio wheel matches every torch),
# kaldi-native-fbank
DISTS = ("torch", "funasr", "kaldi-native-fbank")


def check_sensevoice(name: str = SENSEVOICE, who: str = "") -> str:
    """At op construction: the local SenseVoice folder (fails now naming every path looked at,
    or when the folder is not a FunASR model folder)."""
    ensure_installed(DISTS, who)
    folder = resolve_hf_model(name, who=who)
    missing = [f for f in ("config.yaml", "model.pt") if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise FileNotFoundError(f"{who + ': ' if who else ''}{folder} is not a FunASR SenseVoice model folder "
                                f"(missing {', '.join(missing)}); download the whole repository of {name}")
    return folder


def load_sensevoice(name: str = SENSEVOICE, device: str = "cpu", who: str = ""):
    """``(model, inference kwargs)`` of SenseVoiceSmall in ``name``'s folder, cached per process."""
    folder = check_sensevoice(name, who)

    def build():
        require("funasr", who=who)
        from funasr.models.sense_voice.model import SenseVoiceSmall

        model, kwargs = SenseVoiceSmall.from_pretrained(model=folder, device=device, disable_update=True)
        model.eval()
        return model, kwargs

    return load_once(("sensevoice", folder, device), build, owner=who or None)


def transcribe(waves: Sequence, name: str = SENSEVOICE, device: str = "cpu", who: str = "",
               batch: int = 16) -> list[str]:
    """SenseVoice's raw output text (``<|lang|><|EMOTION|><|Event|><|woitn|>text``) of each 16 kHz
    waveform, ``batch`` waveforms per forward pass (language ``auto``, no inverse text normalisation,
    as Data-Juicer calls it)."""
    if not waves:
        return []
    torch = require("torch", who=who)
    model, kwargs = load_sensevoice(name, device, who)
    kw = {k: v for k, v in kwargs.items() if k not in ("language", "use_itn", "key", "batch_size")}
    out: list[str] = []
    with torch.inference_mode():
        for s in range(0, len(waves), batch):
            part = [torch.as_tensor(w, dtype=torch.float32) for w in waves[s:s + batch]]
            res = model.inference(data_in=part, language="auto", use_itn=False,
                                  key=[f"w{s + k}" for k in range(len(part))], **kw)
            out += [r["text"] for r in res[0]]
    return out


def language_and_text(raw: str) -> dict:
    """Data-Juicer's reading of a SenseVoice output: the language tag and the text after the
    four tags (``"<|en|><|NEUTRAL|><|Speech|><|woitn|> Hello."`` -> ``{'language': 'en', 'asr': ' Hello.'}``)."""
    return {"language": raw.split("<|", 1)[-1].split("|>")[0], "asr": raw.split("|>", 4)[-1]}


def emotion(raw: str) -> str:
    """The emotion tag of a SenseVoice output (``"<|en|><|NEUTRAL|>..."`` -> ``NEUTRAL``), as Data-Juicer reads it."""
    return raw.split("<|", 2)[-1].split("|>")[0]
