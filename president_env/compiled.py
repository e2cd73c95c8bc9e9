"""How every kernel compiles and on how many threads it runs.

The rules are written once, as per-slot loops that Numba compiles (:mod:`president_env.trick`: the legal mask and
the decisions; :mod:`president_env.manche`: the deal, the exchange's automatic half, scoring; the observation in
:mod:`president_env.observation`; the heuristics' scorer in ``agents/heuristic.py``). Numba is a core dependency
(wheels for Python 3.10 to 3.13); each kernel compiles at its first call in a process and is cached on disk
(docs/speed.md: where the cache lives, ``NUMBA_CACHE_DIR``).

:func:`jit` compiles a kernel twice: one form runs its slots in order on the calling thread, the other splits them
over threads (``numba.prange``). :func:`run` takes the threaded form for batches of at least
:data:`PARALLEL_FROM` slots, on :func:`kernel_threads` threads: the CPUs the process is given (its affinity mask)
or fewer (``threads.cap_threads``, or ``PRESIDENT_ENV_THREADS=1`` to force one). Every slot is computed alone, so
the results are the same whatever the number of threads (``tests/test_kernel_threads.py``).
"""

from __future__ import annotations

import os
import threading
import types
from typing import Any, NamedTuple

import numba

from .threads import kernel_threads

PARALLEL_FROM = 256
"""The fewest slots a kernel call splits over threads; below, starting the threads costs more than they save."""


class Kernel(NamedTuple):
    """A kernel compiled twice: ``serial`` (on the calling thread) and ``parallel`` (its slots over threads)."""

    serial: Any
    parallel: Any


def jit(function: Any) -> Kernel:
    """``function`` compiled by Numba (nopython, no GIL, cached on disk, at its first call in a process) as a
    :class:`Kernel`: its ``prange`` loop runs in order in ``serial`` and over threads in ``parallel``.

    The threaded form compiles a copy of ``function`` named ``<name>_threaded``: Numba names a kernel's disk cache
    after the function and keys its entries by argument types only, so the two forms of one function would load
    each other's machine code (a threaded one loaded as the serial form ran no slot at all)."""
    threaded = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    threaded.__qualname__ = f"{function.__qualname__}_threaded"
    return Kernel(
        numba.njit(cache=True, nogil=True)(function),
        numba.njit(cache=True, nogil=True, parallel=True)(threaded),
    )


_lock = threading.Lock()  # one threaded launch at a time: some threading layers (workqueue) allow no more
_owner_pid = os.getpid()  # a forked child (process pools) runs serially: OpenMP's threads do not survive a fork


def run(kernel: Kernel, slots: int, *args: Any) -> None:
    """Call ``kernel`` on ``args``: over threads where ``slots`` (the slots it loops over) reach
    :data:`PARALLEL_FROM` and more than one thread is allowed, else on the calling thread."""
    if slots >= PARALLEL_FROM and os.getpid() == _owner_pid:
        threads = kernel_threads()
        if threads > 1 and _lock.acquire(blocking=False):
            try:
                numba.set_num_threads(threads)
                kernel.parallel(*args)
                return
            finally:
                _lock.release()
    kernel.serial(*args)
