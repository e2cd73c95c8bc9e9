"""How every kernel compiles: :func:`jit`, Numba's ``njit`` with the project's options.

The rules are written once, as per-slot loops that Numba compiles (:mod:`president_env.trick`: the legal mask and
the decisions; :mod:`president_env.manche`: the deal, the exchange's automatic half, scoring; the heuristics' scorer
in ``agents/heuristic.py``). Numba is a core dependency (wheels for every supported Python); each kernel compiles at
its first call in a process and is cached on disk (``NUMBA_CACHE_DIR``, docs/speed.md).
"""

from __future__ import annotations

from typing import Any

import numba


def jit(function: Any) -> Any:
    """``function`` compiled by Numba: nopython, no GIL, cached on disk (compiled at its first call in a process)."""
    return numba.njit(cache=True, nogil=True)(function)
