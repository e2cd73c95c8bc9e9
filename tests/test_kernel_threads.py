"""The kernels split a large batch over threads (``president_env.core.compiled.run``): the same games on one thread and
on two, the number of threads capped to the process's CPUs and settable, with a clear error on a bad setting."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from president_env.core import compiled, threads
from president_env.core.engine import sample_legal
from president_env.core.state import FIELDS
from president_env.core.vec_game import VecGame


@pytest.fixture
def kernel_threads(monkeypatch):
    """Set the kernels' threads for one test (the setting is restored after it)."""
    monkeypatch.setattr(threads, "_kernel_threads", None)
    monkeypatch.delenv(threads.KERNEL_THREADS_VARIABLE, raising=False)
    return threads.kernel_threads


def play(n_threads: int, steps: int = 120) -> tuple[list[np.ndarray], np.ndarray]:
    """Every state array and the last observation after ``steps`` random steps of a batch big enough to be split."""
    threads.kernel_threads(n_threads)
    game = VecGame("party", batch_size=2 * compiled.PARALLEL_FROM, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(steps):
        game.step(sample_legal(game.legal_mask(), rng))
    return [array.copy() for array in game.state], game.observe()


def test_one_thread_and_two_play_the_same_games(kernel_threads):
    if threads.available_cpus() < 2:
        pytest.skip("needs two CPUs")
    one, two = play(1), play(2)
    assert kernel_threads() == 2
    manche = FIELDS.index("manche")
    assert (one[0][manche] > 0).sum() > 100  # the games were played: many manches ended
    for a, b in zip(one[0], two[0]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one[1], two[1])


# A small kernel made by ``compiled.jit``, run by ``compiled.run`` in a fresh process on the cache folder it is given:
# ``python small_kernel.py N`` doubles 1..N (threaded from PARALLEL_FROM slots) and prints whether every slot was.
SMALL_KERNEL = """
import sys
import numba
import numpy as np
from president_env.core import compiled, threads


def _double(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = 2 * x[i]


double = compiled.jit(_double)
threads.kernel_threads(2)
n = int(sys.argv[1])
x, out = np.arange(1.0, n + 1), np.zeros(n)
compiled.run(double, n, x, out)
print(int((out == 2 * x).all()))
"""


def small_kernel(folder, n: int) -> subprocess.CompletedProcess:
    """Run :data:`SMALL_KERNEL` on ``n`` slots in a fresh process, its disk cache in ``folder / "cache"``. The module is
    written once: rewriting it would change its source stamp, and the next process would compile instead of
    loading the cache under test."""
    module = folder / "small_kernel.py"
    if not module.exists():
        module.write_text(SMALL_KERNEL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache")}
    return subprocess.run(
        [sys.executable, str(folder / "small_kernel.py"), str(n)], env=env, capture_output=True, text=True, timeout=600
    )


def test_the_serial_and_threaded_kernels_keep_their_own_disk_cache(tmp_path):
    """One process fills a fresh disk cache with the threaded form, the next runs the serial form on that cache: it
    must not load the threaded one's machine code (both were once cached under one name, and a threaded kernel
    loaded as the serial one ran no slot at all)."""
    if threads.available_cpus() < 2:
        pytest.skip("needs two CPUs")
    for n in (2 * compiled.PARALLEL_FROM, 1, 2 * compiled.PARALLEL_FROM):
        done = small_kernel(tmp_path, n)
        assert done.returncode == 0 and done.stdout.strip() == "1", (n, done.stdout, done.stderr)
    assert len(list((tmp_path / "cache").rglob("*_double-*.nbi"))) == 1
    assert len(list((tmp_path / "cache").rglob("*_double_threaded-*.nbi"))) == 1


def test_the_threads_are_capped_by_the_cpus_and_by_cap_threads(kernel_threads):
    assert kernel_threads() == min(threads.available_cpus(), compiled.numba.config.NUMBA_NUM_THREADS)
    assert kernel_threads(10_000) <= threads.available_cpus()
    threads.cap_threads(1)
    assert kernel_threads() == 1
    with pytest.raises(ValueError, match="threads must be a positive integer, got 0"):
        kernel_threads(0)


def test_the_environment_variable_forces_one_thread_and_a_bad_value_is_refused(kernel_threads, monkeypatch):
    monkeypatch.setenv(threads.KERNEL_THREADS_VARIABLE, "1")
    assert kernel_threads() == 1
    monkeypatch.setattr(threads, "_kernel_threads", None)
    monkeypatch.setenv(threads.KERNEL_THREADS_VARIABLE, "many")
    with pytest.raises(ValueError, match="PRESIDENT_ENV_THREADS must be a positive integer, got 'many'"):
        kernel_threads()


def test_a_process_pinned_to_one_cpu_runs_the_kernels_on_one_thread():
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from president_env.core.threads import kernel_threads; print(kernel_threads())"
    )
    if not hasattr(__import__("os"), "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "1"


def test_a_cache_index_naming_a_module_no_longer_there_is_rebuilt(tmp_path):
    """An upgrade that moves a module leaves disk caches whose index names the old module (Numba unpickles the
    index before it checks the source stamp): the kernel compiles anew and rewrites the index, not fails."""
    assert small_kernel(tmp_path, 3).stdout.strip() == "1"
    indexes = sorted((tmp_path / "cache").rglob("*_double-*.nbi"))
    assert indexes
    (tmp_path / "gone.py").write_text("class Gone:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import gone

        for index in indexes:
            with open(index, "rb") as f:
                version = pickle.load(f)
                stamp, overloads = pickle.loads(f.read())
            overloads[(gone.Gone(),)] = "stale.nbc"
            with open(index, "wb") as f:
                pickle.dump(version, f)
                f.write(pickle.dumps((stamp, overloads)))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("gone", None)
    (tmp_path / "gone.py").unlink()
    again = small_kernel(tmp_path, 3)
    assert again.returncode == 0 and again.stdout.strip() == "1", again.stderr
    assert small_kernel(tmp_path, 3).stdout.strip() == "1"  # and the rewritten index loads


# ``python racing_kernel.py GO``: waits for the file GO, then runs a small kernel on the cache folder its environment
# names and prints how many times this process compiled it (Numba's cache misses) and loaded it (hits).
RACING_KERNEL = """
import os
import sys
import time
import numpy as np
from president_env.core import compiled


def _triple(x, out):
    for i in range(x.shape[0]):
        out[i] = 3 * x[i] + np.sin(x[i]) * np.cos(x[i]) - np.sqrt(abs(x[i]) + 1.0)


triple = compiled.jit(_triple)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.005)
x = np.arange(4.0)
compiled.run(triple, 4, x, np.zeros(4))
stats = triple.serial.stats
print(sum(stats.cache_misses.values()), sum(stats.cache_hits.values()))
"""


def test_processes_starting_together_on_an_empty_cache_compile_a_kernel_once(tmp_path):
    """Both processes call the kernel at the same moment: one compiles it while the other waits on the lock beside
    the cache, then loads the machine code the first wrote (``compiled._compile_once``)."""
    pytest.importorskip("fcntl")
    (tmp_path / "racing_kernel.py").write_text(RACING_KERNEL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, str(tmp_path / "racing_kernel.py"), str(go)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        go.touch()  # both are past their imports or about to be: they call the kernel within milliseconds
        counts = sorted(tuple(int(n) for n in racer.communicate(timeout=300)[0].split()) for racer in racers)
    finally:
        for racer in racers:
            racer.kill()
    assert counts == [(0, 1), (1, 0)]  # one compiled (a miss), the other loaded (a hit)
