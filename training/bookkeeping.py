"""A run's bookkeeping: ``metrics.jsonl``, TensorBoard scalars, the progress bar and the evaluation schedule.

Nothing here changes what is trained. :class:`RunLog` writes one JSON line per update (losses, entropy,
steps/s, table rewards, and every ``budget.eval_every`` updates the evaluation against
``budget.eval_opponent`` over duplicate deals, :func:`evaluate_learner`) and the same scalars to
TensorBoard when it is installed; :func:`plot_curve` draws the learning curve at the end of a run.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from president_env.agents.torch_policy import TorchPolicyAgent
from president_env.core.rules import Rules

from .config import BudgetConfig, OpponentConfig
from .opponents import OpponentPool

TIMING = ("elapsed_s", "charts/steps_per_s", "charts/rollout_steps_per_s", "charts/eval_seconds")
"""The fields of a ``metrics.jsonl`` record that measure time (the others are the same for the same seed)."""


def evaluate_learner(
    agent: TorchPolicyAgent, rules: Rules, budget: BudgetConfig, seed: int, n_deals: int | None = None
) -> dict[str, float]:
    """``agent`` against ``budget.eval_opponent`` in every other seat, over duplicate deals; ``eval/`` scalars."""
    from president_env.evaluation.play import versus_lineup
    from president_env.evaluation.tournament import evaluate

    lineup = versus_lineup(agent, budget.eval_opponent, rules.n_players)
    result = evaluate(lineup, rules, n_deals=n_deals or budget.eval_deals, seed=seed, progress=False)
    row = result.summary[agent.name]
    stats = {"advantage": "advantage", "advantage_ci": "advantage_ci", "points": "points"}
    stats.update({"mean_position": "position", "president": "president"})
    return {
        f"eval/{key}": float(row[field]) for key, field in stats.items()
    }  # plain floats: checkpoints hold data only


class TableRewards:
    """The learner's mean game reward against each opponent kind (``rollout/reward_vs_NAME``), between two logs."""

    def __init__(self, config: OpponentConfig) -> None:
        self.kinds = OpponentPool.kinds_of(config)
        n_ids = OpponentPool.policy_count(config)
        self.reward, self.games = np.zeros(n_ids), np.zeros(n_ids, dtype=np.int64)

    def add(self, reward: np.ndarray, games: np.ndarray) -> None:
        """Summed game reward and game count per opponent policy id (:meth:`OpponentPool.take_tallies`)."""
        self.reward += reward
        self.games += games

    def take_means(self) -> dict[str, float]:
        """The mean per opponent kind met since the last call (kinds not met are left out)."""
        stats = {}
        for name, ids in self.kinds.items():
            games = self.games[ids].sum()
            if games:
                stats[f"rollout/reward_vs_{name}"] = float(self.reward[ids].sum() / games)
        self.reward[:] = 0.0
        self.games[:] = 0
        return stats


def json_line(record: dict[str, Any], indent: int | None = None) -> str:
    """``record`` as strict JSON: an undefined value (NaN, such as the CI of a single deal group) is ``null``."""
    clean = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()}
    return json.dumps(clean, allow_nan=False, indent=indent)


def continue_metrics(path: Path, update: int) -> TextIO:
    """``path`` opened to append after the records of updates ``<= update`` (the resumed checkpoint's).

    The records an interrupted session wrote after its last checkpoint, and a line torn by a crash, are
    dropped: they will be written again, so each update appears once.
    """
    kept = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("update"), int) and record["update"] <= update:
                kept.append(line + "\n")
    path.write_text("".join(kept))
    return open(path, "a")


class RunLog:
    """``out_dir/metrics.jsonl``, TensorBoard events in ``out_dir/tb`` and a tqdm bar, for one session of a run.

    A new run (``resumed_at`` 0) starts its own log, so re-running into a folder never mixes runs; a run
    resumed from the checkpoint of update ``resumed_at`` continues it (:func:`continue_metrics`). Use as a
    context manager: leaving it closes the file, the writer and the bar.
    """

    def __init__(
        self, out_dir: Path, budget: BudgetConfig, global_step: int, resumed_at: int, progress: bool = True
    ) -> None:
        from tqdm.auto import tqdm

        self.eval_opponent = budget.eval_opponent
        self.writer = _summary_writer(out_dir)
        self.bar = tqdm(
            total=budget.total_steps,
            initial=min(global_step, budget.total_steps),
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            disable=not progress,
        )
        path = out_dir / "metrics.jsonl"
        self.metrics = continue_metrics(path, resumed_at) if resumed_at else open(path, "w")

    def record(
        self, progress: dict[str, Any], stats: dict[str, float], steps: int, last_eval: dict[str, float]
    ) -> None:
        """One update: ``progress`` (update, global_step, elapsed_s) and ``stats``; ``steps`` env steps done."""
        self.metrics.write(json_line({**progress, **stats}) + "\n")
        self.metrics.flush()
        if self.writer is not None:
            for key, value in stats.items():
                if math.isfinite(value):
                    self.writer.add_scalar(key, value, progress["global_step"])
        # The last update may pass budget.total_steps (whole rollouts): the bar stops at 100 %.
        self.bar.update(max(0, min(steps, self.bar.total - self.bar.n)))
        postfix = {"sps": f"{stats['charts/steps_per_s']:,.0f}"}
        if "losses/entropy" in stats:
            postfix["ent"] = f"{stats['losses/entropy']:.2f}"
        if last_eval:
            postfix["vs " + self.eval_opponent] = f"{last_eval['eval/advantage']:+.2f}"
        self.bar.set_postfix(postfix)

    def record_final(self, progress: dict[str, Any], evaluation: dict[str, float]) -> None:
        """The evaluation after the last update, when the schedule did not fall on it."""
        self.metrics.write(json_line({**progress, **evaluation}) + "\n")
        self.metrics.flush()

    def close(self) -> None:
        self.bar.close()
        self.metrics.close()
        if self.writer is not None:
            self.writer.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plot_curve(out_dir: Path, opponent: str) -> None:
    """``out_dir/learning_curve.png`` from ``metrics.jsonl``, when matplotlib (the eval extra) is installed."""
    try:
        from .curves import plot_learning_curve

        plot_learning_curve(out_dir, opponent=opponent)
    except ImportError:  # the curve's data is in metrics.jsonl
        pass


def _summary_writer(out_dir: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the train extra; metrics.jsonl is always written
        print("tensorboard is not installed: logging to metrics.jsonl only", file=sys.stderr)
        return None
    return SummaryWriter(str(out_dir / "tb"))
