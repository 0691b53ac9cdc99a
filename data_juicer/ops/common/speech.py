"""What the SenseVoice speech ops share: the waveforms of the batch's videos tagged ``Speech`` by
``video_tagging_from_audio_mapper``, recognised together, one value per video into meta."""

from __future__ import annotations

from data_juicer.utils.constant import Fields, MetaKeys

NO_AUDIO = "EMPTY"


def speech_rows(op, samples: dict, field: str, model_name: str, read, not_speech) -> dict:
    """For each row lacking ``field``: per video, ``read(raw SenseVoice text)`` when its audio tag
    is ``Speech``, ``EMPTY`` when it has no audio stream, else ``not_speech``; ``[]`` without videos.
    A row whose videos were not tagged by ``video_tagging_from_audio_mapper`` is an error."""
    from data_juicer.media.audio import load_audio
    from data_juicer.media.video import video_info
    from data_juicer.models.speech import SAMPLING_RATE, transcribe
    from data_juicer.models.vision import op_device

    n = len(next(iter(samples.values()))) if samples else 0
    metas = samples.get(Fields.meta) or [None] * n
    metas = [dict(m) if isinstance(m, dict) else {} for m in metas]
    col = samples.get(op.video_key)
    values, waves, where = {}, [], []
    for i in range(n):
        if field in metas[i]:
            continue
        paths = (col[i] if col is not None else None) or []
        if not paths:
            metas[i][field] = []
            continue
        if MetaKeys.video_audio_tags not in metas[i]:
            raise ValueError(f"{op.name} must run after video_tagging_from_audio_mapper (no "
                             f"'{MetaKeys.video_audio_tags}' in this sample's meta); put that op before it")
        tags = metas[i][MetaKeys.video_audio_tags]
        values[i] = []
        for k, path in enumerate(paths):
            if k < len(tags) and tags[k] == "Speech":
                if not video_info(path)["has_audio"]:
                    values[i].append(NO_AUDIO)
                    continue
                values[i].append(None)
                waves.append(load_audio(path, SAMPLING_RATE, op.name)[0])
                where.append((i, k))
            else:
                values[i].append(not_speech() if callable(not_speech) else not_speech)
    for (i, k), raw in zip(where, transcribe(waves, model_name, op_device(op), op.name)):
        values[i][k] = read(raw)
    for i, v in values.items():
        metas[i][field] = v
    samples[Fields.meta] = metas
    return samples
