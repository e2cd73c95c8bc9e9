"""Thread pools capped to the CPUs the process is given (``president_env.core.threads``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from president_env.core.threads import available_cpus, cap_threads

pytest.importorskip("threadpoolctl")
pytest.importorskip("torch")

# In a fresh process ("cap": pinned to one CPU): the threads of torch and OpenBLAS before and after.
PROBE = """
import os, sys
if sys.argv[1] == "cap":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numpy, torch
from threadpoolctl import threadpool_info
def blas():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
what = sys.argv[1]
if what == "cap":
    from president_env.core.threads import cap_threads
    print(cap_threads(), torch.get_num_threads(), blas())
elif what == "agent":
    import president_env as pe
    from president_env import agents
    before = blas()
    agents.make("ppo-universal", pe.load_preset("standard"))
    print(before, torch.get_num_threads(), blas())
"""


def probe(what: str) -> str:
    pools = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  # the pools' own defaults
    env = {key: value for key, value in os.environ.items() if key not in pools}
    done = subprocess.run([sys.executable, "-c", PROBE, what], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_available_cpus_is_the_affinity_mask():
    assert available_cpus() == len(os.sched_getaffinity(0))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_a_process_given_one_cpu_runs_one_thread_per_pool():
    assert probe("cap") == "1 1 [1]"


@pytest.mark.skipif(available_cpus() < 2, reason="one CPU: every pool has one thread anyway")
def test_a_learned_agent_caps_the_pools_when_it_is_made():
    """OpenBLAS starts a thread per CPU; a learned agent acts with one (its NumPy forward), torch keeps the CPUs."""
    cpus = available_cpus()
    assert probe("agent") == f"[{cpus}] {cpus} [1]"


def test_threads_are_never_more_than_the_cpus_and_must_be_positive():
    import torch

    before = torch.get_num_threads()
    try:
        assert cap_threads(available_cpus() + 5) == available_cpus() == torch.get_num_threads()
        assert cap_threads(1) == 1 == torch.get_num_threads()
        assert cap_threads() == 1  # a smaller count already set is kept
        for bad in (0, -1, 1.5, True, "2"):
            with pytest.raises(ValueError, match="threads must be a positive integer"):
                cap_threads(bad)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, "1000"),  # OpenMP's default spin (300,000 checks) stalls the kernels on a busy machine (docs/speed.md)
        ({"GOMP_SPINCOUNT": "50000"}, "50000"),
        ({"OMP_WAIT_POLICY": "active"}, None),  # the user's choice of policy is left alone
    ],
)
def test_importing_the_package_sets_openmp_s_spin_count_unless_the_user_did(given, expected):
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    code = "import os, president_env; print(os.environ.get('GOMP_SPINCOUNT'))"
    done = subprocess.run(
        [sys.executable, "-c", code], env={**env, **given}, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(expected)
