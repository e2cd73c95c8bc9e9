"""How every kernel compiles and on how many threads it runs.

The rules are written once, as per-slot loops that Numba compiles (:mod:`president_env.core.trick`: the legal mask and
the decisions; :mod:`president_env.core.manche`: the deal, the exchange's automatic half, scoring; the observation in
:mod:`president_env.core.observation`; the heuristics' scorer in ``agents/heuristic.py``). Numba is a core dependency
(wheels for Python 3.10 to 3.13); each kernel compiles at its first call in a process and is cached on disk
(docs/speed.md: where the cache lives, ``NUMBA_CACHE_DIR``). Processes that start together on an empty cache compile
each kernel once: the first to need it holds a lock file beside its cache while it compiles, the others wait, then
load its machine code (:func:`_cached`).

:func:`jit` compiles a kernel twice: one form runs its slots in order on the calling thread, the other splits them
over threads (``numba.prange``). :func:`run` takes the threaded form for batches of at least
:data:`PARALLEL_FROM` slots, on :func:`kernel_threads` threads: the CPUs the process is given (its affinity mask)
or fewer (``threads.cap_threads``, or ``PRESIDENT_ENV_THREADS=1`` to force one). Every slot is computed alone, so
the results are the same whatever the number of threads (``tests/test_kernel_threads.py``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import types
from collections.abc import Iterator
from typing import Any, NamedTuple

import numba
from numba.core.compiler_lock import global_compiler_lock

from president_env.core.threads import kernel_threads

PARALLEL_FROM = 256
"""The fewest slots a kernel call splits over threads; below, starting the threads costs more than they save."""


class Kernel(NamedTuple):
    """A kernel compiled twice: ``serial`` (on the calling thread) and ``parallel`` (its slots over threads)."""

    serial: Any
    parallel: Any


def jit(function: Any, counted: bool = True) -> Kernel:
    """``function`` compiled by Numba (nopython, no GIL, cached on disk, at its first call in a process) as a
    :class:`Kernel`: its ``prange`` loop runs in order in ``serial`` and over threads in ``parallel``.

    The threaded form compiles a copy of ``function`` named ``<name>_threaded``: Numba names a kernel's disk cache
    after the function and keys its entries by argument types only, so the two forms of one function would load
    each other's machine code (a threaded one loaded as the serial form ran no slot at all). ``counted=False``:
    without reference counting, as :func:`borrowing`."""
    threaded = _renamed_copy(function, "threaded")
    options = {"cache": True, "nogil": True} if counted else {"cache": True, "nogil": True, "_nrt": False}
    return Kernel(
        _cached(numba.njit(**options)(function)),
        _cached(numba.njit(parallel=True, **options)(threaded)),
    )


def slot_function(function: Any) -> Any:
    """``function``, the work of one slot or row, compiled by Numba for the kernels that call it (nopython, no GIL,
    cached on disk with its callers, inlined into them): the heuristics' scoring of one row serves their batched
    kernel and the vector env's compiled opponents' loop (``president_env.core.autoplay``)."""
    return _cached(numba.njit(cache=True, nogil=True, inline="always")(function))


def borrowing(function: Any) -> Any:
    """``function`` compiled by Numba without reference counting (``_nrt=False``), on the calling thread: for a
    function that allocates nothing and only reads and writes the arrays it is given (the caller keeps them alive),
    called often. Otherwise each array it binds, or a :func:`slot_function` inlined into it takes, costs two atomic
    counter updates a call, more than a heuristic's scoring of a row (``agents/heuristic.py``'s batched kernel; the
    vector env's compiled opponents' loop is compiled so by ``jit(..., counted=False)``)."""
    uncounted = _renamed_copy(function, "borrowing")
    return _cached(numba.njit(cache=True, nogil=True, _nrt=False)(uncounted))


def _renamed_copy(function: Any, suffix: str) -> Any:
    """A copy of ``function`` whose qualified name ends in ``_<suffix>``: Numba names a disk cache after it, so each
    compiled form of one function keeps its own cache."""
    copy = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__qualname__ = f"{function.__qualname__}_{suffix}"
    return copy


_STALE_INDEX = (ImportError, AttributeError, EOFError, pickle.UnpicklingError)
"""What reading a cache index written by another layout of the package raises: Numba unpickles the whole index,
argument types included (the state's named tuples name their module), before it checks the source stamp."""


def _cached(dispatcher: Any) -> Any:
    """``dispatcher`` with its disk cache tolerant of a stale index (:func:`_rebuild_stale_cache`) and compiled once
    by processes that need it together (:func:`_compile_once`)."""
    return _compile_once(_rebuild_stale_cache(dispatcher))


def _compile_once(dispatcher: Any) -> Any:
    """``dispatcher`` whose compilations hold :func:`_compile_lock`: a process that needs a signature another one is
    compiling waits, then loads it from the disk cache (Numba looks there before compiling) instead of compiling it
    too. A signature already compiled in this process never reaches ``compile``."""
    compile_signature = dispatcher.compile  # what the dispatcher's own _compile_for_args calls, as self.compile

    def compile_locked(signature: Any) -> Any:
        # Numba's own lock first: one thread of this process compiles at a time, so two threads never wait on each
        # other's lock files (a kernel's compilation compiles the kernels it calls, inside its own).
        with global_compiler_lock, _compile_lock(dispatcher):
            return compile_signature(signature)

    dispatcher.compile = compile_locked
    return dispatcher


_held: set[str] = set()  # the lock files this process holds (taken under Numba's compiler lock)


@contextlib.contextmanager
def _compile_lock(dispatcher: Any) -> Iterator[None]:
    """An exclusive lock (``flock``) on a file beside ``dispatcher``'s disk cache, held while the block runs; none
    where the platform has no ``fcntl``, the dispatcher keeps no disk cache, the folder takes no file, or this
    process already holds it. The system releases it if the process dies: a crash mid-compile leaves nobody
    waiting."""
    try:
        import fcntl
    except ImportError:  # Windows: each process compiles for itself, as without the lock
        yield
        return
    cache_path = getattr(dispatcher._cache, "cache_path", None)  # a dispatcher without a disk cache has none
    path = cache_path and os.path.join(
        cache_path, f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}.lock"
    )
    handle = None
    if path and path not in _held:
        with contextlib.suppress(OSError):  # a folder that takes no file: no lock
            os.makedirs(cache_path, exist_ok=True)
            handle = open(path, "a")  # noqa: SIM115 (held across the yield)
    if handle is None:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _held.add(path)
        try:
            yield
        finally:
            _held.discard(path)
            fcntl.flock(handle, fcntl.LOCK_UN)


def _rebuild_stale_cache(dispatcher: Any) -> Any:
    """``dispatcher`` with its disk cache made tolerant of a stale index (one that names a module or class no
    longer there, e.g. from before an upgrade moved a module): the index is emptied and the kernel compiles anew
    instead of failing with ``ModuleNotFoundError`` (``tests/test_kernel_threads.py``)."""
    cache = dispatcher._cache  # Numba's FunctionCache: no public hook exists for this
    load, save = cache.load_overload, cache.save_overload

    def emptied() -> bool:
        try:
            cache.flush()  # writes an empty index over the stale one
        except OSError:
            return False
        return True

    def load_overload(signature: Any, target_context: Any) -> Any:
        try:
            return load(signature, target_context)
        except _STALE_INDEX:
            emptied()
            return None

    def save_overload(signature: Any, compiled: Any) -> None:
        try:
            save(signature, compiled)
        except _STALE_INDEX:
            if emptied():
                save(signature, compiled)

    cache.load_overload, cache.save_overload = load_overload, save_overload
    return dispatcher


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


def numba_entry(kernel: Any, args: tuple) -> Any:
    """``kernel``'s compiled entry point for the types of ``args``: a call skips the dispatcher's typing of its
    arguments (a named tuple is typed in Python, some microseconds a call), for a caller that calls the kernel
    again and again with arguments of these types (``trick.Slot``, ``observation.SlotObserver``)."""
    return kernel.compile(tuple(numba.typeof(arg) for arg in args))
