"""An on-disk cache of LLM responses, keyed by (model, prompt, params, attempt).

Used when the recipe's ``use_cache`` is on, so a rerun of the same recipe on the same data
replays the responses instead of paying for them again. One SQLite file in the work folder;
safe for several threads and worker processes (SQLite locks; WAL journal).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Optional

CACHE_FILE = "llm_cache.sqlite"


class LLMCache:
    def __init__(self, folder: str):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, CACHE_FILE)
        self._lock = threading.Lock()
        self._local = threading.local()
        con = self._con()
        con.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        con.commit()

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():
            con = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            con.execute("PRAGMA journal_mode=WAL")
            self._local.con, self._local.pid = con, os.getpid()
        return con

    def get(self, key: str) -> Optional[str]:
        row = self._con().execute("SELECT text FROM responses WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, text: str) -> None:
        with self._lock:
            con = self._con()
            con.execute("INSERT OR REPLACE INTO responses (key, text) VALUES (?, ?)", (key, text))
            con.commit()

    def __len__(self) -> int:
        return self._con().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def __getstate__(self):  # travels to worker processes as its path only
        return {"path": self.path}

    def __setstate__(self, state):
        self.__init__(os.path.dirname(state["path"]))
