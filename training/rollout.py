"""Rollout shards: the training games cut into shares that play in this process or as Ray actors.

The ``ppo.num_envs`` games are cut into ``rollout.shards`` :class:`RolloutShard` s, each with its own
``VecGame``, tables (:class:`~.opponents.OpponentPool`), carried decisions and random streams; they
play in this process or, with ``rollout.ray_address`` set, on Ray actors (one each where the CPUs hold
them), and their decisions form one training batch (:func:`merge_shards`). Where a shard runs never changes the run (see
:mod:`president_env.evaluation.distributed`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from president_env.agents.torch_policy import PolicyNet
from president_env.core.threads import cap_threads
from president_env.core.vec_game import VecGame
from president_env.evaluation.distributed import LocalGroup, RayGroup, init_ray

from .config import RunSeeds, TrainConfig, from_dict
from .opponents import OpponentPool
from .ppo import Pending, Rollout, collect, training_rows

Weights = dict[str, torch.Tensor]


class RolloutShard:
    """``ppo.num_envs / rollout.shards`` of the training games, with what playing them needs.

    Its own ``VecGame``, :class:`OpponentPool` (tables and snapshots), carried decisions
    (:class:`~.ppo.Pending`) and torch generator for sampling, all seeded from shard ``index``'s seed, so
    a shard plays the same games wherever it runs: in the trainer's process (sharing the trainer's
    network) or as a Ray actor (its own copy of the network, given the weights before each
    rollout). :meth:`run` plays a rollout and returns the shard's training rows.
    """

    def __init__(
        self, config: TrainConfig | dict[str, Any], index: int, net: PolicyNet | None = None, threads: int = 0
    ) -> None:
        if isinstance(config, dict):  # a Ray actor is built from plain data
            config = from_dict(config)
        if threads:  # an actor's own process (in the trainer's, ``config.threads`` is already set)
            cap_threads(threads)
        self.config, self.index = config, index
        self.rules = config.resolve_rules()
        batch = config.ppo.num_envs // config.rollout.shards
        game_seed, pool_seed, torch_seed = RunSeeds.of(config).games.spawn(config.rollout.shards)[index].spawn(3)
        self.game = VecGame(self.rules, batch_size=batch, seed=game_seed)
        self.generator = torch.Generator().manual_seed(int(torch_seed.generate_state(1)[0]))
        if net is None:
            net = PolicyNet(self.game.obs_dim, self.game.num_actions, config.network.hidden, config.network.activation)
        self.net = net
        self.pool = OpponentPool(config.opponents, self.rules, batch, np.random.default_rng(pool_seed))
        self.pending = Pending.empty(batch, self.rules.n_players, self.game.obs_dim, self.game.num_actions)

    def set_weights(self, weights: Weights | None) -> None:
        """Load the learner's weights (``None``: the network is the trainer's own, already current)."""
        if weights is not None:
            self.net.load_state_dict(weights)

    def add_snapshot(self, weights: Weights | None = None) -> None:
        self.set_weights(weights)
        self.pool.add_snapshot(self.net)

    def run(self, weights: Weights | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Play one rollout with the given weights; the closed decisions to train on, and statistics.

        The statistics hold sums (decision and game counts; ``tables``: the learner's summed game
        reward and game count per opponent policy id), so shards add up.
        """
        self.set_weights(weights)
        batch, stats = self.batch_from(self.collect())
        stats["tables"] = self.pool.take_tallies()
        return batch, stats

    def collect(self) -> Rollout:
        """One rollout of this shard's games (:func:`~.ppo.collect`)."""
        return collect(self.game, self.net, self.pool, self.generator, self.config.ppo.num_steps)

    def batch_from(self, rollout: Rollout) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """The training rows of ``rollout`` (:func:`~.ppo.training_rows`); carries the open decisions on."""
        batch, self.pending, stats = training_rows(
            rollout, self.pending, self.config.ppo.gamma, self.config.ppo.gae_lambda
        )
        return batch, stats

    def state_dict(self) -> dict[str, Any]:
        game = self.game.state_dict()
        return {
            "game": {name: torch.from_numpy(array) for name, array in game["state"].items()},
            "game_rng": game["rng"],
            "torch_rng": self.generator.get_state(),
            "pool": self.pool.state_dict(),
            "pending": self.pending.state_dict(),
            "game_reward": torch.from_numpy(self.pool.game_reward.copy()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.game.load_state_dict({"state": state["game"], "rng": state["game_rng"]})
        self.generator.set_state(state["torch_rng"])
        self.pool.load_state_dict(state["pool"], self.net)
        self.pending.load_state_dict(state["pending"])
        self.pool.game_reward[...] = state["game_reward"].numpy()


def start_shards(config: TrainConfig, net: PolicyNet) -> LocalGroup | RayGroup:
    """The run's shards: in this process sharing ``net``, or on Ray actors (``rollout.ray_address``: one each, or
    several to an actor where the cluster's CPUs hold fewer: ``evaluation.distributed.RayGroup``)."""
    rollout = config.rollout
    if rollout.ray_address is None:
        return LocalGroup([RolloutShard(config, i, net=net) for i in range(rollout.shards)])
    init_ray(rollout.ray_address)
    data = config.to_dict()
    # As many torch threads as CPUs reserved: more would fight the other shards for the same cores.
    threads = max(1, int(rollout.ray_cpus_per_shard))
    args = [(data, i, None, threads) for i in range(rollout.shards)]
    return RayGroup(RolloutShard, args, num_cpus=rollout.ray_cpus_per_shard)


def merge_shards(results: list[tuple[dict[str, np.ndarray], dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shards' rows as one training batch (tensors, shard order) and their summed statistics."""
    batch = {key: torch.from_numpy(np.concatenate([rows[key] for rows, _ in results])) for key in results[0][0]}
    stats: dict[str, Any] = {}
    for _, shard_stats in results:
        for key, value in shard_stats.items():
            stats[key] = value if key not in stats else _add(stats[key], value)
    return batch, stats


def _add(a: Any, b: Any) -> Any:
    return tuple(x + y for x, y in zip(a, b)) if isinstance(a, tuple) else a + b
