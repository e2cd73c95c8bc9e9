"""What a run is made of, to start it from a seed and to continue it exactly from a checkpoint.

:class:`RunSeeds` splits ``config.seed`` into the run's random streams. :func:`run_state` is the full
training checkpoint: weights, optimizer, config, rules, progress, the last evaluation, the learning
generator and every shard's games in flight, carried decisions, snapshot pool and generators; so
:func:`read_checkpoint` + :func:`restore` continue the run as if it had never stopped. ``policy.pt``
(:func:`president_env.agents.checkpoint.export_policy`) is the small weights-only file to share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from president_env.agents.checkpoint import CheckpointError, load_checkpoint
from president_env.agents.torch_policy import PolicyNet
from president_env.evaluation.distributed import LocalGroup, RayGroup
from president_env.rules import Rules

from .config import TrainConfig, apply_override, from_dict

RESUME_OVERRIDES = ("budget.", "rollout.ray_", "manches")
"""What ``--resume`` may change: the budget, where the shards run, and ``manches`` only to name again the match
length the checkpoint trained on (the rules check below refuses any other): a run started before the presets
played matches resumes with ``--set manches=1``."""


@dataclass
class RunSeeds:
    """The run's random streams, all children of ``SeedSequence(config.seed)``."""

    network: int  # the network's initial weights
    learn: int  # minibatch order of the updates
    eval: int  # the evaluation tournaments
    shards: list[np.random.SeedSequence]  # one per rollout shard: its deals, tables and sampling

    @classmethod
    def of(cls, config: TrainConfig) -> RunSeeds:
        network, learn, evaluation, shards = np.random.SeedSequence(config.seed).spawn(4)
        return cls(
            network=int(network.generate_state(1)[0]),
            learn=int(learn.generate_state(1)[0]),
            eval=int(evaluation.generate_state(1)[0]),
            shards=shards.spawn(config.rollout.shards),
        )


class Run(Protocol):
    """What a checkpoint holds of a run (the trainer, :class:`president_env.training.ppo_selfplay.Trainer`)."""

    config: TrainConfig
    rules: Rules
    net: PolicyNet
    optimizer: torch.optim.Optimizer
    generator: torch.Generator
    shards: LocalGroup | RayGroup
    update: int
    global_step: int
    elapsed: float
    last_eval: dict[str, float]

    def close(self) -> None: ...


def run_state(run: Run) -> dict[str, Any]:
    """The full training checkpoint of ``run`` (plain data and tensors, for ``save_checkpoint``)."""
    return {
        "rules": run.rules.to_dict(),
        "network": run.net.spec(),
        "model": run.net.state_dict(),
        "optimizer": run.optimizer.state_dict(),
        "config": run.config.to_dict(),
        "rng": {"learn": run.generator.get_state()},
        "progress": {"update": run.update, "global_step": run.global_step, "elapsed_s": run.elapsed},
        "metrics": dict(run.last_eval),
        "greedy": True,
        "trainer": {"shards": run.shards.call("state_dict")},
    }


def read_checkpoint(
    path: str | Path, overrides: list[str] | tuple[str, ...] = ()
) -> tuple[TrainConfig, dict[str, Any]]:
    """The config (with ``overrides``, which may extend the budget, not change the run) and state to resume."""
    checkpoint = load_checkpoint(path)
    if "trainer" not in checkpoint or "optimizer" not in checkpoint:
        raise CheckpointError(
            f"{path}: not a full training checkpoint (no trainer state); exported policies cannot resume"
        )
    if "shards" not in checkpoint["trainer"]:
        raise CheckpointError(
            f"{path}: written by an older trainer (before rollout shards) and cannot resume; "
            "its policy still loads as an agent"
        )
    data = checkpoint["config"]
    for item in overrides:
        key = item.partition("=")[0].strip()
        if not key.startswith(RESUME_OVERRIDES):
            raise ValueError(
                f"--resume accepts {', '.join(k + '*' for k in RESUME_OVERRIDES)} overrides only "
                f"(the run must continue as it was); got {key!r}"
            )
        apply_override(data, item)
    config = from_dict(data)
    named, trained = config.resolve_rules().to_dict(), checkpoint["rules"]
    if named != trained:
        fields = [key for key in named if named[key] != trained.get(key)]
        hint = f"; resume with --set manches={trained['manches']}" if fields == ["manches"] else ""
        raise CheckpointError(
            f"{path}: its rules differ from those its config names ({config.rules!r}) in "
            f"{', '.join(fields) or 'their fields'}{hint}"
        )
    return config, checkpoint


def restore(run: Run, checkpoint: dict[str, Any], path: str | Path) -> None:
    """Put ``checkpoint``'s state into ``run``, a fresh run of the checkpoint's config (closed on failure)."""
    try:
        run.net.load_state_dict(checkpoint["model"])
        run.optimizer.load_state_dict(checkpoint["optimizer"])
        run.generator.set_state(checkpoint["rng"]["learn"])
        shard_states = checkpoint["trainer"]["shards"]
        if len(shard_states) != run.config.rollout.shards:
            raise ValueError(f"{len(shard_states)} shard states for rollout.shards={run.config.rollout.shards}")
        run.shards.call_each("load_state_dict", shard_states)
    except (KeyError, RuntimeError, ValueError, TypeError) as err:
        run.close()
        raise CheckpointError(
            f"{path}: training state does not match its config ({type(err).__name__}: {err})"
        ) from None
    progress = checkpoint["progress"]
    run.update = int(progress["update"])
    run.global_step = int(progress["global_step"])
    run.elapsed = float(progress["elapsed_s"])
    run.last_eval = dict(checkpoint.get("metrics", {}))
