"""Human annotation through a Label Studio server (``label-studio-sdk``): the base of HumanOPs.

:class:`LabelStudioAnnotationMapper` turns each sample of a batch into a Label Studio task,
waits (optionally) for annotators, and writes the annotations back into the samples.
Data-Juicer's parameters (``project_name_prefix``, ``wait_for_annotations``, ``timeout``,
``poll_interval``, ``max_tasks_per_batch``, ``project_id``, ``notification_config``, ``api_url``,
``api_key``, ...) are kept. What differs, on purpose:

* **resumable** - every task carries a stable key of its sample (``dj_sample_key``). A sample
  whose key is already a task of the project is not imported again, so a rerun after a crash or
  a timeout waits on the same tasks instead of creating duplicates. The project of a job is
  remembered in ``<work dir>/label_studio_<prefix>.json`` (the folder above the job folder, the
  one ``llm_cache`` uses), so a rerun of the same recipe finds it; ``project_id`` pins one.
* **clean timeout** - after ``timeout`` seconds the batch goes on: annotated samples get their
  results, the others are kept unchanged (a warning says how many and where they wait).
* the label config of the op is really used (Data-Juicer 1.6.1 creates the project before the
  config file is read, so the project has no labelling interface).

The API key comes from ``api_key`` or ``$LABEL_STUDIO_API_KEY``; it is never logged.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import smtplib
import time
import uuid
from email.message import EmailMessage
from typing import Any, Optional

from loguru import logger

from data_juicer.ops.base import Mapper
from data_juicer.utils.lazy import require

DEFAULT_EVENTS = {"task_created": False, "batch_created": True, "annotation_completed": False,
                  "batch_annotation_completed": True, "error_occurred": True}


def sample_keys(parts: list[Any]) -> list[str]:
    """A stable key per sample from its identifying content; repeats get ``#2``, ``#3``..."""
    seen: dict[str, int] = {}
    out = []
    for p in parts:
        h = hashlib.sha1(json.dumps(p, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:20]
        seen[h] = seen.get(h, 0) + 1
        out.append(h if seen[h] == 1 else f"{h}#{seen[h]}")
    return out


class LabelStudioAnnotationMapper(Mapper):
    """Base of the Label Studio annotation ops; a subclass defines the task and the write-back."""

    requires = ("label-studio-sdk",)
    KEY_FIELD = "dj_sample_key"

    def __init__(self, api_url: Optional[str] = None, api_key: Optional[str] = None,
                 label_config: Optional[str] = None, *, project_name_prefix: str = "DataJuicer_Annotation",
                 wait_for_annotations: bool = False, timeout: int = 3600, poll_interval: int = 60,
                 samples_per_task: int = 1, max_tasks_per_batch: int = 100, project_id: Optional[int] = None,
                 notification_config: Optional[dict] = None, notification_events: Optional[dict] = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.api_url = (api_url or os.environ.get("LABEL_STUDIO_URL") or "").rstrip("/") or None
        self._api_key = api_key or os.environ.get("LABEL_STUDIO_API_KEY")
        self.label_config = label_config
        self.project_name_prefix = project_name_prefix
        self.wait_for_annotations = bool(wait_for_annotations)
        self.timeout = timeout
        self.poll_interval = poll_interval
        if samples_per_task != 1:
            logger.warning(f"{self.name}: Label Studio tasks hold one sample each; samples_per_task="
                           f"{samples_per_task} is treated as 1")
        self.samples_per_task = 1
        self.max_tasks_per_batch = max(1, int(max_tasks_per_batch))
        self.project_id = project_id
        self.notification_config = dict(notification_config or {})
        self.notification_events = dict(DEFAULT_EVENTS, **(notification_events
                                                            or self.notification_config.get("notification_events")
                                                            or {}))
        self._client = None
        if not self.api_url:
            raise ValueError(f"{self.name}: set `api_url` (the Label Studio server, e.g. http://127.0.0.1:8080) or "
                             "the LABEL_STUDIO_URL environment variable")

    def __repr__(self) -> str:  # never show the key
        return f"<{type(self).__name__} {self.name} {self.api_url} project={self.project_id}>"

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_client"] = None
        return d

    # -- what a subclass defines ---------------------------------------------------------
    def identity(self, sample: dict) -> Any:
        """What makes a sample the same sample in a rerun (hashed into its task key)."""
        raise NotImplementedError

    def format_task(self, sample: dict) -> dict:
        """The task data (the label config's ``$variables``) of one sample."""
        raise NotImplementedError

    def apply_annotation(self, annotation: dict, sample: dict) -> dict:
        """The sample updated with one annotation (a dict with ``result``)."""
        raise NotImplementedError

    # -- Label Studio ----------------------------------------------------------------------
    @property
    def client(self):
        if self._client is None:
            sdk = require("label-studio-sdk", self.name)
            self._client = sdk.LabelStudio(base_url=self.api_url, api_key=self._api_key)
        return self._client

    def _state_path(self) -> Optional[str]:
        if not self.work_dir:
            return None
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.project_name_prefix)
        return os.path.join(os.path.dirname(os.path.abspath(self.work_dir)), f"label_studio_{safe}.json")

    def ensure_project(self) -> int:
        """The project's id: ``project_id``, else the one this job created before, else a new one."""
        if self.project_id is not None:
            return self.project_id
        path = self._state_path()
        if not path:
            return self._find_or_create(None)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".lock", "w") as lock:  # worker processes of one job agree on one project
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return self._find_or_create(path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _find_or_create(self, path: Optional[str]) -> int:
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
            if state.get("api_url") == self.api_url:
                try:
                    self.client.projects.get(id=state["project_id"])
                    self.project_id = state["project_id"]
                    logger.info(f"{self.name}: resuming Label Studio project {self.project_id} ({path})")
                    return self.project_id
                except Exception as e:  # deleted meanwhile: make a new one
                    logger.warning(f"{self.name}: project {state['project_id']} of {path} is gone ({e}); "
                                   "creating a new one")
        title = f"{self.project_name_prefix}_{uuid.uuid4().hex[:6]}"
        project = self.client.projects.create(title=title, description="Created by Data-Juicer",
                                              label_config=self.label_config)
        self.project_id = project.id
        logger.info(f"{self.name}: created Label Studio project {title} (id {self.project_id})")
        if path:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump({"api_url": self.api_url, "project_id": self.project_id, "title": title}, f)
            os.replace(path + ".tmp", path)
        return self.project_id

    def project_tasks(self) -> dict[str, dict]:
        """``{sample key: {"id", "annotations"}}`` of the project's tasks made by this op."""
        out = {}
        for t in self.client.tasks.list(project=self.project_id, fields="all"):
            key = (t.data or {}).get(self.KEY_FIELD)
            if key is not None and key not in out:
                out[key] = {"id": t.id, "annotations": list(t.annotations or [])}
        return out

    @staticmethod
    def first_annotation(task: dict) -> Optional[dict]:
        for a in task.get("annotations") or []:
            a = a if isinstance(a, dict) else a.dict()
            if not a.get("was_cancelled") and a.get("result"):
                return a
        return None

    def project_url(self) -> str:
        return f"{self.api_url}/projects/{self.project_id}"

    # -- notifications -----------------------------------------------------------------------
    def notify(self, event: str, message: str) -> None:
        """Email ``message`` when notifications and this event are enabled; a failure is a warning."""
        cfg = self.notification_config
        email = cfg.get("email") or {}
        if not cfg.get("enabled") or not self.notification_events.get(event) or not email.get("enabled"):
            return
        try:
            msg = EmailMessage()
            msg["Subject"] = f"{email.get('subject', 'Annotation Status Update')}: {event}"
            sender = email.get("sender_email") or email.get("username") or ""
            msg["From"] = f"{email.get('sender_name', '')} <{sender}>"
            msg["To"] = ", ".join(email.get("recipients") or [])
            msg.set_content(f"{message}\n\nProject: {self.project_url()}")
            password = os.environ.get("DJ_EMAIL_PASSWORD") or os.environ.get("EMAIL_PASSWORD") or \
                email.get("password")
            cls = smtplib.SMTP_SSL if int(email.get("smtp_port", 465)) == 465 else smtplib.SMTP
            with cls(email.get("smtp_server"), int(email.get("smtp_port", 465)), timeout=10) as s:
                if password:
                    s.login(email.get("username") or sender, password)
                s.send_message(msg)
        except Exception as e:
            logger.warning(f"{self.name}: could not send the '{event}' email notification ({type(e).__name__}: {e})")

    # -- the batch -------------------------------------------------------------------------
    def process_batched(self, samples: dict) -> dict:
        keys_ = list(samples)
        n = len(samples[keys_[0]]) if keys_ else 0
        if not n:
            return samples
        rows = [{k: samples[k][i] for k in keys_} for i in range(n)]
        keys = sample_keys([self.identity(r) for r in rows])
        self.ensure_project()
        tasks = self.project_tasks()
        new = [i for i, k in enumerate(keys) if k not in tasks]
        for start in range(0, len(new), self.max_tasks_per_batch):
            chunk = new[start:start + self.max_tasks_per_batch]
            data = [dict(self.format_task(rows[i]), **{self.KEY_FIELD: keys[i]}) for i in chunk]
            self.client.projects.import_tasks(id=self.project_id, request=data, return_task_ids=True)
            self.notify("batch_created", f"{len(chunk)} annotation tasks created")
        if new:
            tasks = self.project_tasks()
        logger.info(f"{self.name}: {len(new)} new task(s), {n - len(new)} already in project {self.project_id} "
                    f"({self.project_url()})")
        done = {k for k in keys if k in tasks and self.first_annotation(tasks[k])}
        if self.wait_for_annotations:
            deadline = time.monotonic() + self.timeout
            while len(done) < len(set(keys)):
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = len([k for k in keys if k not in done])
                    logger.warning(f"{self.name}: timed out after {self.timeout}s with {missing} of {n} samples not "
                                   f"annotated; they are kept unchanged and their tasks stay in "
                                   f"{self.project_url()} (a rerun of this recipe waits on the same tasks)")
                    self.notify("error_occurred", f"timed out with {missing} of {n} samples not annotated")
                    break
                time.sleep(min(self.poll_interval, left))
                try:
                    tasks = self.project_tasks()
                except Exception as e:  # a hiccup of the server: poll again
                    logger.warning(f"{self.name}: polling Label Studio failed ({type(e).__name__}: {e})")
                    continue
                done = {k for k in keys if k in tasks and self.first_annotation(tasks[k])}
            else:
                self.notify("batch_annotation_completed", f"all {n} samples annotated")
        written = 0
        for i, k in enumerate(keys):
            ann = self.first_annotation(tasks[k]) if k in done else None
            if ann is not None:
                rows[i] = self.apply_annotation(ann, rows[i])
                written += 1
        logger.info(f"{self.name}: wrote {written} of {n} annotations back")
        out_keys = list(dict.fromkeys(k for r in rows for k in r))
        return {k: [r.get(k) for r in rows] for k in out_keys}
