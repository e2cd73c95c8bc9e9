"""``benchmarks/bench.py``'s vector-env measurement: interleaved rounds, a ratio per round, medians and ranges; bad
arguments end with exit code 2."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from president_env import Rules

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"


@pytest.fixture
def bench():
    spec = importlib.util.spec_from_file_location("bench_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_round_takes_its_own_ratio_and_the_systems_take_turns(bench, monkeypatch):
    calls = []
    load = iter([1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0])  # the machine slows down round by round

    def fake_vec(rules, batch_size, with_obs, seconds, seed=0):
        calls.append("vecgame")
        return bench.Rates(1000.0 / next(load), 250.0)

    def fake_vector(rules, num_envs, opponents, seconds, seed=0):
        calls.append(opponents)
        speed = {"random": 300.0, "heuristic-3": 200.0}[opponents]
        return bench.Rates(speed / next(load), speed / 2)

    monkeypatch.setattr(bench, "vec_rates", fake_vec)
    monkeypatch.setattr(bench, "gym_vector_rates", fake_vector)
    rounds = bench.vector_rounds(Rules(), 0.0, 3)
    assert calls == ["vecgame", "random", "heuristic-3", "random", "heuristic-3", "vecgame"] + [
        "heuristic-3",
        "vecgame",
        "random",
    ]
    # Within a round the load is the same for all: the ratio does not see it.
    assert [r["ratios"] for r in rounds] == [{"random": 0.3, "heuristic-3": 0.2}] * 3
    assert rounds[0]["cpu_ratios"] == {"random": 0.6, "heuristic-3": 0.4}
    row = bench.summarize("heuristic-3", rounds, single=10.0)
    assert row["ratio_to_vecgame"] == row["ratio_min"] == row["ratio_max"] == 0.2
    assert row["vecgame_b_steps_per_s"] == 500.0 and row["vector_learner_steps_per_s"] == 100.0
    assert row["met"] is True and row["target_ratio"] == bench.VECTOR_TARGETS["heuristic-3"]


@pytest.mark.parametrize("args", [("--rounds", "0"), ("--seconds", "0"), ("--only", "engine")])
def test_bad_arguments_are_refused(args):
    result = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
