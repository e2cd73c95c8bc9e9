"""The switch of the compiled path (the optional ``fast`` extra, Numba): whether it runs, and how kernels compile.

The rules are written twice, in two forms side by side in each rule module: a NumPy form over a batch and a
per-slot form in plain loops that Numba compiles (:mod:`president_env.trick`: the legal mask and the decisions;
:mod:`president_env.manche`: scoring and the next deal). A NumPy call costs about a microsecond whatever its size,
so for a few slots the compiled loops win; ``VecGame`` (hence ``SingleGame``, one slot, and the vector env) plays
through them wherever they are :func:`available`, being faster at every batch size measured (docs/speed.md).

``engine.step(..., compiled=True)`` and ``engine.legal_mask(..., compiled=True)`` take the compiled forms when
:func:`available` (Numba importable, and the environment variable ``PRESIDENT_ENV_NUMBA`` is not ``0``), the NumPy
forms otherwise. Kernels above the engine (the heuristics' choices) compile through :func:`jit` too. One truth:
``tests/test_compiled.py`` plays both forms in lockstep on every preset and random rule sets and demands equal
masks, results and whole states after every step.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

ENV_SWITCH = "PRESIDENT_ENV_NUMBA"
"""Set to ``0`` to keep the NumPy path even where Numba is installed."""


@lru_cache(maxsize=1)
def _njit() -> Any:
    """``numba.njit(cache=True, nogil=True)``, or ``None`` where Numba is not importable."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the compiled path runs: Numba importable and ``PRESIDENT_ENV_NUMBA`` not ``0`` (read once; tests
    that switch it call ``available.cache_clear()``)."""
    return os.environ.get(ENV_SWITCH, "1") != "0" and _njit() is not None


def jit(function: Any) -> Any:
    """``function`` compiled by Numba (nopython, no GIL, cached on disk; compiled at its first call in a process),
    or ``None`` where Numba is not importable. Each kernel has a NumPy twin in its own module."""
    njit = _njit()
    return None if njit is None else njit(function)


def path_name() -> str:
    """``"numba"`` or ``"numpy"``: the path ``compiled=True`` takes in this process (benchmarks print it)."""
    return "numba" if available() else "numpy"
