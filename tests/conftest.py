"""Shared fixtures for the rules tests (plain helper functions live in ``helpers.py``).

``make_game`` is parametrised over implementations of the one-game interface
(``ReferenceGame``'s public attributes and methods). Tests must use only that
interface, so that the same scripts check every implementation; an adapter for
the batched engine joins ``IMPLEMENTATIONS`` with the same signature.
"""

from __future__ import annotations

import os

# Under pytest-xdist (CI runs ``-n 2``) the workers share the CPUs: each worker's torch and BLAS pools (and those
# of the programs its tests start) get their share, set before NumPy or torch is imported. A pool per worker as
# wide as the machine oversubscribes it, and OpenBLAS's threads spin while they wait (president_env/core/threads.py).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    _share = max(1, _cpus // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_pool, str(_share))

import pytest  # noqa: E402
from engine_adapter import EngineGame
from oracle.reference import ReferenceGame

from president_env import Rules

IMPLEMENTATIONS = ["reference", "engine"]


def _make_reference(rules: Rules, hands: list[list[str]], dealer: int | None = None, roles: list[str] | None = None):
    if dealer is None and roles is None:
        dealer = 0
    return ReferenceGame(rules, hands, dealer, roles)


_FACTORIES = {"reference": _make_reference, "engine": EngineGame}


@pytest.fixture(params=IMPLEMENTATIONS)
def make_game(request):
    """``make_game(rules, hands, dealer=None, roles=None)`` -> a game with the ReferenceGame interface.

    ``dealer`` defaults to seat 0 without roles; with roles the Trou du cul deals and a dealer raises ValueError.
    """
    return _FACTORIES[request.param]


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny networks: torch's thread pool costs more than it saves (QR in orthogonal init, most of all)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray instance (2 CPUs) for the whole session, started at the first test that asks: starting one
    costs seconds of CPU and its daemons, so the Ray test modules share it (under xdist they share a worker: the
    ``ray`` group). Code under test that connects (``evaluation.distributed.init_ray``) reuses it."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


# ---- CI runs each test once: the core install's step logs what passed there, the full install's step skips it ----
def pytest_addoption(parser):
    group = parser.getgroup("president-env CI")
    group.addoption("--passed-log", metavar="FILE", help="append the node id of each test that passed to FILE")
    group.addoption(
        "--skip-passed",
        metavar="FILE",
        help="deselect the tests that FILE lists as passed (a --passed-log of another environment)",
    )


def pytest_itemcollected(item):
    """A test marked ``ray`` joins the xdist group ``ray``: one local Ray instance at a time under ``-n 2``."""
    if item.get_closest_marker("ray") and not item.get_closest_marker("xdist_group"):
        item.add_marker(pytest.mark.xdist_group("ray"))


def pytest_collection_modifyitems(config, items):
    path = config.getoption("--skip-passed")
    if not path:
        return
    with open(path, encoding="utf-8") as log:
        passed = {line.strip() for line in log if line.strip()}
    keep, deselected = [], []
    for item in items:
        (deselected if item.nodeid in passed else keep).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = keep


def pytest_runtest_logreport(report):
    path = _PASSED_LOG
    if path and report.passed and report.when == "call":
        with open(path, "a", encoding="utf-8") as log:
            log.write(report.nodeid + "\n")


_PASSED_LOG: str | None = None


def pytest_configure(config):
    global _PASSED_LOG
    if not hasattr(config, "workerinput"):  # xdist: the controller receives every worker's reports
        _PASSED_LOG = config.getoption("--passed-log")
