"""Thread pools sized to the CPUs this process is given.

    from president_env.core.threads import cap_threads
    cap_threads()    # torch <= the CPUs of this process's affinity mask; NumPy's BLAS: one thread
    cap_threads(4)   # torch: 4 threads, or fewer if the process is given fewer CPUs

By default OpenBLAS and torch start one thread per core of the machine, whatever share of it the process
is given (``taskset``, a container's CPU set, a Ray actor) and however busy it is. On a loaded 2-core machine
a learned agent's NumPy forward at B = 256 (a 3 × 512 one-table network) took 73-190 ms with OpenBLAS's two
threads and 10-23 ms with one (docs/training.md). The learned agents, the trainer and the CLIs call
:func:`cap_threads`. NumPy's BLAS pool is capped through ``threadpoolctl`` where it is installed (the
``train`` extra); without it only torch is capped.
"""

from __future__ import annotations

import os
import sys

_blas_capped: int | None = None


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one, else all of them)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def cap_threads(threads: int | None = None, blas: int = 1) -> int:
    """Cap torch's intra-op pool, NumPy's BLAS pool and, given ``threads``, the engine's kernels
    (:func:`kernel_threads`) to the CPUs this process is given; returns torch's cap.

    Args:
        threads: torch's threads (default: every CPU of the affinity mask); never more than that mask holds.
            Without ``threads`` a smaller count already set (``threads: 1`` of a training config) is kept.
        blas: NumPy's BLAS threads (default 1: acting multiplies small matrices, which one thread does fastest
            on a busy machine), also never more than the mask holds.

    torch is capped only if it is already imported (this module never imports it).
    """
    for name, value in (("threads", threads), ("blas", blas)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    cpus = available_cpus()
    cap = min(threads or cpus, cpus)
    if threads is not None:  # the engine's kernels too
        kernel_threads(cap)
    torch = sys.modules.get("torch")
    if torch is not None and (threads is not None or torch.get_num_threads() > cap):
        torch.set_num_threads(cap)
    _cap_blas(min(blas, cpus))
    return cap if torch is None else torch.get_num_threads()


def _cap_blas(threads: int) -> None:
    global _blas_capped
    if _blas_capped == threads:  # asking threadpoolctl again costs milliseconds
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=threads, user_api="blas")  # process-wide: the limit is kept, not restored
    _blas_capped = threads


KERNEL_THREADS_VARIABLE = "PRESIDENT_ENV_THREADS"
"""Environment variable: the most threads the engine's kernels use (``1`` forces one, the calling thread)."""
_kernel_threads: int | None = None


def kernel_threads(threads: int | None = None) -> int:
    """The threads the engine's kernels split a large batch over (``president_env.core.compiled.run``).

    ``threads``, when given, is kept for the calls to come (``cap_threads`` passes its own); else the last kept,
    else ``PRESIDENT_ENV_THREADS``, else every CPU of the process's affinity mask. Never more than that mask, nor
    Numba's pool (``NUMBA_NUM_THREADS``). The results are the same whatever the number.
    """
    global _kernel_threads
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        _kernel_threads = threads
    elif _kernel_threads is None:
        value = os.environ.get(KERNEL_THREADS_VARIABLE, "").strip()
        if value and (not value.isdigit() or int(value) < 1):
            raise ValueError(f"{KERNEL_THREADS_VARIABLE} must be a positive integer, got {value!r}")
        _kernel_threads = int(value) if value else available_cpus()
    import numba  # a core dependency; imported here so that reading the CPUs stays cheap

    return max(1, min(_kernel_threads, available_cpus(), numba.config.NUMBA_NUM_THREADS))


SPIN_COUNT_VARIABLE = "GOMP_SPINCOUNT"
KERNEL_SPIN_COUNT = "1000"
"""How many times an idle thread of GNU OpenMP (Numba's threading layer on Linux) checks for work before it sleeps,
unless ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` is set: OpenMP's default (300,000) spins a kernel's idle threads on
the cores another process needs. With one busy process beside it on 2 cores, VecGame (b) at B = 4096 on two
threads ran 151,000 steps/s with the default, 1.66 M with 1000 (one thread: 1.47 M); on the quiet machine 3.1 M
against 3.4 M (docs/speed.md, "A busy machine"). Set at import, before Numba starts its threads."""

if SPIN_COUNT_VARIABLE not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
    os.environ[SPIN_COUNT_VARIABLE] = KERNEL_SPIN_COUNT

__all__ = ["available_cpus", "cap_threads", "kernel_threads"]
