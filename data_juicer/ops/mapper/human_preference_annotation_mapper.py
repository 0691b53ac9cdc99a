import os
from typing import Optional

from loguru import logger

from data_juicer.ops.common.label_studio import LabelStudioAnnotationMapper
from data_juicer.ops.registry import OPERATORS

DEFAULT_LABEL_CONFIG = """<View className="root">
  <Style>
    .root { font-family: sans-serif; line-height: 1.5; background: #f4f5f7; padding: 12px; }
    .prompt { padding: 16px; background: #1f6feb; color: #fff; border-radius: 6px; margin-bottom: 16px; }
    .answers { display: flex; gap: 16px; flex-wrap: wrap; }
    .answer { flex: 1 1 45%; padding: 16px; background: #24292f; color: #fff; border-radius: 6px; }
  </Style>
  <View className="prompt">
    <Text name="prompt" value="$prompt"/>
  </View>
  <Pairwise name="comparison" toName="answer1,answer2" leftChoiceValue="answer1" rightChoiceValue="answer2"/>
  <View className="answers">
    <View className="answer"><Text name="answer1" value="$answer1"/></View>
    <View className="answer"><Text name="answer2" value="$answer2"/></View>
  </View>
</View>"""


@OPERATORS.register_module("human_preference_annotation_mapper")
class HumanPreferenceAnnotationMapper(LabelStudioAnnotationMapper):
    """Sends (prompt, answer1, answer2) samples to human annotators in Label Studio, who pick the
    better answer; writes the picked answer to ``chosen_key`` and the other to ``rejected_key``.

    Each sample becomes one task (``prompt``, ``answer1``, ``answer2``, plus ``meta:<field>`` for
    its other scalar fields) of a pairwise-comparison project. With ``wait_for_annotations`` the
    op polls every ``poll_interval`` seconds until all samples of the batch are annotated or
    ``timeout`` passes; samples still unannotated then are kept without ``chosen``/``rejected``.
    A rerun of the same recipe (after a crash or a timeout) finds the project and its tasks
    again instead of creating duplicates. Label Studio connection and project settings:
    ``api_url``, ``api_key`` (or ``$LABEL_STUDIO_API_KEY``), ``project_name_prefix``,
    ``project_id``, ``max_tasks_per_batch``, ``notification_config`` (email on the events of
    ``notification_events``).

    :param api_url: the Label Studio server URL (or ``$LABEL_STUDIO_URL``)
    :param api_key: its API token (default ``$LABEL_STUDIO_API_KEY``; never logged)
    :param label_config: the labelling interface XML (overrides ``label_config_file``)
    :param project_name_prefix: project title prefix (a random suffix is added)
    :param wait_for_annotations: wait for the annotations before the batch goes on
    :param timeout: most seconds to wait per batch
    :param poll_interval: seconds between checks for new annotations
    :param samples_per_task: accepted for compatibility; always 1 sample per task
    :param max_tasks_per_batch: most tasks imported in one request
    :param project_id: use this existing project
    :param notification_config: ``{enabled, email: {enabled, smtp_server, smtp_port, username,
        sender_email, sender_name, recipients, subject}, notification_events}``; the password comes
        from ``$DJ_EMAIL_PASSWORD`` / ``$EMAIL_PASSWORD``
    :param notification_events: which events send a notification (task_created, batch_created,
        annotation_completed, batch_annotation_completed, error_occurred)
    """

    def __init__(self, label_config_file: str = None, answer1_key: str = "answer1", answer2_key: str = "answer2",
                 prompt_key: str = "prompt", chosen_key: str = "chosen", rejected_key: str = "rejected", **kwargs):
        """
        :param label_config_file: a file with the labelling interface XML (default: a built-in
            pairwise view of ``$prompt``, ``$answer1``, ``$answer2``)
        :param answer1_key: field of the first answer
        :param answer2_key: field of the second answer
        :param prompt_key: field of the prompt
        :param chosen_key: field receiving the preferred answer
        :param rejected_key: field receiving the other answer
        """
        kwargs.setdefault("text_key", prompt_key)
        if kwargs.get("label_config") is None:
            if label_config_file:
                if not os.path.isfile(label_config_file):
                    raise FileNotFoundError(f"human_preference_annotation_mapper: label_config_file "
                                            f"'{label_config_file}' does not exist; give the path of a Label Studio "
                                            "labelling config XML, or leave it out for the built-in one")
                with open(label_config_file, encoding="utf-8") as f:
                    kwargs["label_config"] = f.read().strip()
            else:
                kwargs["label_config"] = DEFAULT_LABEL_CONFIG
        super().__init__(prompt_key=prompt_key, **kwargs)
        self.label_config_file = label_config_file
        self.answer1_key, self.answer2_key = answer1_key, answer2_key
        self.chosen_key, self.rejected_key = chosen_key, rejected_key

    def identity(self, sample):
        return [sample.get("id"), sample.get(self.prompt_key), sample.get(self.answer1_key),
                sample.get(self.answer2_key)]

    def format_task(self, sample):
        data = {}
        for name, key, missing in (("prompt", self.prompt_key, "No prompt provided"),
                                   ("answer1", self.answer1_key, "No answer 1 provided"),
                                   ("answer2", self.answer2_key, "No answer 2 provided")):
            if sample.get(key) is None:
                logger.warning(f"{self.name}: a sample has no '{key}'; the task shows '{missing}'")
            data[name] = missing if sample.get(key) is None else sample[key]
        for k, v in sample.items():
            if k not in (self.prompt_key, self.answer1_key, self.answer2_key) and \
                    (v is None or isinstance(v, (str, int, float, bool))):
                data[f"meta:{k}"] = "" if v is None else str(v)
        return data

    def apply_annotation(self, annotation, sample):
        picked = None
        for item in annotation.get("result") or []:
            if item.get("type") == "pairwise" and (item.get("value") or {}).get("selected"):
                sel = item["value"]["selected"]
                picked = {"left": self.answer1_key, "answer1": self.answer1_key, "right": self.answer2_key,
                          "answer2": self.answer2_key}.get(sel, sel)
                break
        if picked not in (self.answer1_key, self.answer2_key):
            logger.warning(f"{self.name}: an annotation has no pairwise choice ({annotation.get('result')!r}); "
                           "the sample is kept without a preference")
            return sample
        other = self.answer2_key if picked == self.answer1_key else self.answer1_key
        sample[self.chosen_key], sample[self.rejected_key] = sample.get(picked), sample.get(other)
        return sample
