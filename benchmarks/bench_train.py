"""Training throughput: ``python benchmarks/bench_train.py [--config F] [--updates N]``.

Measured in one run, on the config's table (default ``docs/results/ppo/recipe.yaml``, the first standard-table
recipe, which ``docs/results/ppo/bench_train.md`` measured):

- **engine**: ``VecGame`` mask + observation + step with random legal actions, at the config's
  ``num_envs`` (the ceiling: what the game alone costs; ``bench_vec`` of ``benchmarks/bench.py``);
- **rollout**: the trainer's rollouts (network forward for the learner's rows, opponents' moves,
  storage), no update;
- **training**: whole PPO updates, rollout + GAE + the optimisation epochs, the figure the
  training throughput target is about.

An env step is one decision of one game at any seat. Each figure is the best of ``--repeat``
measurements of ``--updates`` updates after one warm-up update; the ratios are to the engine in
the same run. Peak resident memory is the process's (``ru_maxrss``). Run it alone: on a shared
2-core machine any other load only ever slows it.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from bench import bench_vec

from president_env.evaluation.report import markdown_table
from president_env.training.config import load_config
from president_env.training.ppo_selfplay import Trainer

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "docs" / "results" / "ppo" / "recipe.yaml"


def steps_per_s(trainer: Trainer, update: Callable[[], Any], updates: int) -> float:
    """Env steps per second of ``updates`` calls of ``update`` (``trainer.rollout`` or ``trainer.train_step``)."""
    start = time.perf_counter()
    for _ in range(updates):
        update()
    elapsed = time.perf_counter() - start
    return updates * trainer.config.ppo.num_envs * trainer.config.ppo.num_steps / elapsed


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--engine-seconds", type=float, default=2.0, help="length of one engine measurement")
    parser.add_argument("--json", default="bench_train.json")
    args = parser.parse_args(argv)
    config = load_config(args.config, args.set)
    trainer = Trainer(config, progress=False)
    trainer.train_step()  # warm-up: allocations, first snapshot, lazy imports
    engine = max(bench_vec(trainer.rules, config.ppo.num_envs, True, args.engine_seconds) for _ in range(args.repeat))
    rollout = max(steps_per_s(trainer, trainer.rollout, args.updates) for _ in range(args.repeat))
    training = max(steps_per_s(trainer, trainer.train_step, args.updates) for _ in range(args.repeat))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "config": str(args.config),
        "overrides": args.set,
        "num_envs": config.ppo.num_envs,
        "num_steps": config.ppo.num_steps,
        "hidden": config.network.hidden,
        "torch_threads": torch.get_num_threads(),
        "engine_steps_per_s": engine,
        "rollout_steps_per_s": rollout,
        "training_steps_per_s": training,
        "peak_rss_mb": peak_mb,
    }
    per_update = f"{config.ppo.num_envs} games x {config.ppo.num_steps} steps per update"
    print(f"training throughput, {config.rules} rules, {per_update}")
    rows = [
        [label, f"{value:,.0f}", f"{value / engine:.2f}"]
        for label, value in (
            ("engine (mask + obs + step)", engine),
            ("rollout (+ network, opponents)", rollout),
            ("training (+ PPO update)", training),
        )
    ]
    print(markdown_table(["what", "env steps/s", "x engine"], rows))
    print(f"peak resident memory: {peak_mb:,.0f} MB; torch threads: {torch.get_num_threads()}")
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
