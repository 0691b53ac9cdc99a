"""Skip the interpreter's teardown after a command-line run of ``dj-process``.

When a run ends, Python tears down its ~1,700 modules (datasets, pandas, numba, pyarrow...) and collects
their objects: ~0.5-1 CPU s and as much wall time on this project's runs, for nothing (measured on the
500-document benchmark run: 1.0 CPU s between the end of ``main()`` and the process's exit; 0.04 with
this). ``arm(rc)`` at the end of a command-line ``main()`` registers an exit hook that runs first at
exit: it runs every other exit hook (``atexit``: logging's flush, temporary folders, multiprocessing's
clean-up), flushes the standard streams and ends the process with ``rc`` without the teardown. Not for
``main([...])`` called from Python (tests, the API); not when the program ended with an uncaught
exception; ``DJ_FAST_EXIT=0`` turns it off.
"""

from __future__ import annotations

import atexit
import os
import sys

ENV_SWITCH = "DJ_FAST_EXIT"
_STATE: dict = {}


def arm(rc) -> None:
    if os.environ.get(ENV_SWITCH, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if _STATE.get("armed"):
        atexit.unregister(_exit_now)
    _STATE.update(armed=True, rc=rc)
    atexit.register(_exit_now)  # the last registered runs first


def _exit_now() -> None:
    rc = _STATE.get("rc")
    if getattr(sys, "last_value", None) is not None or getattr(sys, "last_exc", None) is not None:
        return  # an uncaught exception: keep Python's exit code and its normal exit
    atexit.unregister(_exit_now)
    try:
        atexit._run_exitfuncs()  # every other exit hook, once, in their usual order
    except Exception:  # noqa: BLE001 - as at a normal exit: a failing hook does not stop the others
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream
            pass
    os._exit(rc if isinstance(rc, int) else 0)
