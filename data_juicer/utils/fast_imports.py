"""Import-time savings that do not change behaviour.

numba, when it first loads its array functions (``numba.np.arraymath``, at import or at the first
compile), checks once whether BLAS is there for ``np.dot`` on floats by importing
``scipy.linalg.cython_blas``, which imports all of ``scipy.linalg`` (about 0.6-1 CPU s, more than
numba itself). None of our kernels calls ``np.dot`` or ``np.linalg``, and numba's linear-algebra
functions still import scipy themselves when they are compiled. So while the module ``numba.np.arraymath`` runs
its own import, ``scipy.linalg.cython_blas`` is marked as absent; numba then uses its loop for
``np.dot`` and takes the BLAS one only if scipy was imported before numba. The mark is removed right
after, so any later ``import scipy.linalg`` works as usual.

``install()`` adds a finder to ``sys.meta_path`` that acts only on the first import of
``numba.np.arraymath`` and then removes itself. Only our command-line programs call it (``dj-process`` and
``dj-analyze``, first thing in their ``main``): a program that imports ``data_juicer`` as a library keeps
numba's usual BLAS check for its own numba code. ``DJ_NUMBA_BLAS_CHECK=1`` turns it off for the CLIs too.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

_BLAS = "scipy.linalg.cython_blas"
_TARGET = "numba.np.arraymath"


class _NumbaWithoutBlasCheck(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        _remove()
        if "scipy.linalg" in sys.modules:  # scipy is loaded anyway: nothing to save
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        marked = _BLAS not in sys.modules
        if marked:
            sys.modules[_BLAS] = None  # "import scipy.linalg.cython_blas" raises ImportError
        try:
            self.inner.exec_module(module)
        finally:
            if marked and _BLAS in sys.modules and sys.modules[_BLAS] is None:
                del sys.modules[_BLAS]

    def __getattr__(self, name):  # get_code, get_filename, ... of the real loader
        return getattr(self.inner, name)


_FINDER = _NumbaWithoutBlasCheck()


def _remove() -> None:
    try:
        sys.meta_path.remove(_FINDER)
    except ValueError:
        pass


def install() -> None:
    """Add the finder (once), unless numba's array functions are loaded already or ``DJ_NUMBA_BLAS_CHECK=1``."""
    if _TARGET in sys.modules or os.environ.get("DJ_NUMBA_BLAS_CHECK") == "1" or _FINDER in sys.meta_path:
        return
    sys.meta_path.insert(0, _FINDER)
