"""Forking workers safely under a Python-level SIGTERM handler.

``ray.init`` in the main thread (and our Ray backend's start, which does what it does) installs a
SIGTERM handler that raises ``SystemExit``. A forked child inherits it. A child that the parent stops
with SIGTERM (``Process.terminate``, ``Pool.terminate``) before it has reached its target runs that
handler on the stack it copied from the parent: the ``SystemExit`` is raised at
``self.pid = os.fork()`` inside ``multiprocessing``, outside the child's ``try``/``os._exit``, and the
child goes on running the parent's code (under pytest-xdist it even reports a test failure for the
parent). ``sigterm_held`` around the fork keeps SIGTERM pending in the child until its target calls
``child_default_sigterm``, which restores the default action (die) and releases it.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

_HAS_MASK = hasattr(signal, "pthread_sigmask")


@contextmanager
def sigterm_held() -> Iterator[None]:
    """SIGTERM blocked in this thread (so in the children it forks) for the duration; a SIGTERM sent to this
    process meanwhile is delivered when it ends."""
    if not _HAS_MASK:
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def child_default_sigterm() -> None:
    """In a child forked under ``sigterm_held``: SIGTERM ends it again, as in a process with no handler."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _HAS_MASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
