"""Golden runs of ``president-train``: fixed seeds give the metrics and weights recorded in ``data/ppo_golden.json``.

The values were recorded from the trainer before it was split into modules (``ppo``, ``ppo_selfplay``,
``opponents``, ``rollout``, ``run_state``, ``bookkeeping``), and still hold now that one loop (``ppo_selfplay.Run``)
serves the universal trainer too and ``run_state`` is folded into it; any change of what a seed trains fails here.
Integer metrics (counts, steps) must match exactly; float metrics and weight sums to a relative 1e-4 (absolute 1e-7
near zero), the slack that another CPU's torch kernels need: on a machine with other vector instructions the
summation order changes and losses near zero moved by up to 1.4e-4 relative (1.4e-8 absolute) after five
updates. On one machine the runs are bit for bit the same.

Regenerate the file only when a change of the training is meant: ``python tests/test_ppo_golden.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from president_env.training.bookkeeping import TIMING  # noqa: E402
from president_env.training.cli import main  # noqa: E402

GOLDEN = Path(__file__).parent / "data" / "ppo_golden.json"
ONE_MANCHE = Path(__file__).parent / "data" / "standard_one_manche.yaml"  # the runs were recorded on one manche
TINY = [
    f"rules={ONE_MANCHE}",
    "ppo.num_envs=64",
    "ppo.num_steps=16",
    "ppo.num_minibatches=2",
    "network.hidden=[32]",
    "threads=1",
    "budget.eval_every=2",
    "budget.eval_deals=4",
    "budget.checkpoint_every=1",
    "opponents.snapshot_every=1",
    "opponents.pool_size=2",
]
SHARDS = TINY + ["budget.total_steps=4096", "rollout.shards=2", "opponents.baselines={heuristic-3: 0.2, random: 0.1}"]


def train(out: Path, *args: str) -> None:
    assert main([*args, "--out-dir", str(out), "--no-progress"]) == 0


def settings(items: list[str]) -> list[str]:
    return [arg for item in items for arg in ("--set", item)]


def record(out: Path) -> dict:
    """``metrics.jsonl`` without its timing fields, and per-tensor sums of the checkpoint's weights."""
    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    checkpoint = torch.load(out / "checkpoint.pt", weights_only=False)
    return {
        "metrics": [{k: v for k, v in line.items() if k not in TIMING} for line in lines],
        "weights": {
            k: [v.double().sum().item(), v.double().abs().sum().item()] for k, v in checkpoint["model"].items()
        },
    }


def run_golden(tmp: Path) -> dict:
    train(tmp / "shards", *settings(SHARDS))
    golden = {"shards": record(tmp / "shards")}
    train(tmp / "resume", *settings(TINY + ["budget.total_steps=2048"]))
    golden["before_resume"] = record(tmp / "resume")
    assert (
        main(["--resume", str(tmp / "resume" / "checkpoint.pt"), "--no-progress", "--set", "budget.total_steps=5120"])
        == 0
    )
    golden["resumed"] = record(tmp / "resume")
    return golden


def assert_same(got, want, where: str = "") -> None:
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}/{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-4, abs=1e-7), where
    else:
        assert got == want, where


def test_fixed_seeds_train_the_recorded_runs(tmp_path):
    assert_same(run_golden(tmp_path), json.loads(GOLDEN.read_text()))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(run_golden(Path(tmp)), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
