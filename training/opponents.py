"""Who sits at each training table: the learner, past snapshots of it, and the baselines.

Each game draws its table when it is dealt: with probability ``opponents.self_play`` the learner
plays every seat; otherwise the learner takes one random seat and a single opponent takes the
others, either a past snapshot of the learner or a baseline (``heuristic-3``...). Snapshots join
the pool every ``opponents.snapshot_every`` updates, so the learner keeps meeting its older selves
and does not cycle.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from president_env import agents
from president_env.agents.torch_policy import PolicyNet
from president_env.core.rules import Rules

from .acting import LEARNER, sample
from .config import OpponentConfig


class OpponentPool:
    """Past snapshots of the learner plus the baselines, drawn per game.

    ``owner (B, P) int64`` gives the policy id of every player of every game: ``0`` the learner,
    ``1..len(baselines)`` the baselines in config order, then one id per snapshot slot. Snapshot
    slots form a ring of ``pool_size``: a new snapshot overwrites the oldest, and a game in progress
    with that slot simply meets the newer snapshot from then on.
    """

    def __init__(self, config: OpponentConfig, rules: Rules, batch_size: int, rng: np.random.Generator) -> None:
        self.config, self.rules, self.rng = config, rules, rng
        self.baseline_names = self.baselines_of(config)
        seeds = rng.bit_generator.seed_seq.spawn(len(self.baseline_names)) if self.baseline_names else []
        self.baselines = [agents.make(name, rules, seed=s) for name, s in zip(self.baseline_names, seeds)]
        self.snapshots: list[PolicyNet] = []
        self.next_snapshot = 0  # ring position the next snapshot overwrites
        # categories: self-play, snapshot, baseline 0, baseline 1, ...; a baseline capped below this table's size
        # (opponents.max_players) keeps its id but never sits here
        weights = [config.self_play, config.snapshots] + [
            config.baselines[n] if rules.n_players <= config.max_players.get(n, rules.n_players) else 0.0
            for n in self.baseline_names
        ]
        if sum(weights) == 0:  # every opponent is capped out: the learner plays itself here
            weights[0] = 1.0
        self.category_p = np.asarray(weights, dtype=np.float64) / sum(weights)
        self.owner = np.zeros((batch_size, rules.n_players), dtype=np.int64)
        self.draw(np.arange(batch_size))
        # logging only: every player's reward in the game in progress, and per policy id the learner's
        # summed game reward and game count at the tables that ended since :meth:`take_tallies`
        self.game_reward = np.zeros((batch_size, rules.n_players), dtype=np.float32)
        n_ids = self.policy_count(config)
        self.table_reward, self.table_games = np.zeros(n_ids), np.zeros(n_ids, dtype=np.int64)

    @property
    def first_snapshot_id(self) -> int:
        return 1 + len(self.baselines)

    @staticmethod
    def baselines_of(config: OpponentConfig) -> list[str]:
        """The baselines that can sit at a table, in config order (policy ids 1, 2, ...)."""
        return [name for name, weight in config.baselines.items() if weight > 0]

    @classmethod
    def policy_count(cls, config: OpponentConfig) -> int:
        """Policy ids in use: the learner, the baselines, the snapshot slots."""
        return 1 + len(cls.baselines_of(config)) + config.pool_size

    @classmethod
    def kinds_of(cls, config: OpponentConfig) -> dict[str, list[int]]:
        """Policy ids by opponent name (all snapshots under ``snapshot``)."""
        names = cls.baselines_of(config)
        kinds = {name: [i + 1] for i, name in enumerate(names)}
        kinds["snapshot"] = list(range(1 + len(names), 1 + len(names) + config.pool_size))
        return kinds

    def add_snapshot(self, net: PolicyNet) -> None:
        frozen = copy.deepcopy(net).eval().requires_grad_(False)
        if len(self.snapshots) < self.config.pool_size:
            self.snapshots.append(frozen)
        else:
            self.snapshots[self.next_snapshot] = frozen
        self.next_snapshot = (self.next_snapshot + 1) % self.config.pool_size

    def draw(self, slots: np.ndarray) -> None:
        """New tables for the games in ``slots`` (at the start and whenever a game ends)."""
        n = len(slots)
        if n == 0:
            return
        category = self.rng.choice(len(self.category_p), size=n, p=self.category_p)
        learner_seat = self.rng.integers(self.rules.n_players, size=n)
        opponent = np.zeros(n, dtype=np.int64)
        is_snapshot = category == 1
        if self.snapshots:
            opponent[is_snapshot] = self.first_snapshot_id + self.rng.integers(len(self.snapshots), size=n)[is_snapshot]
        else:  # no snapshot yet: those tables are self-play
            category = np.where(is_snapshot, 0, category)
        is_baseline = category >= 2
        opponent[is_baseline] = 1 + category[is_baseline] - 2
        owner = np.repeat(opponent[:, None], self.rules.n_players, axis=1)
        owner[np.arange(n), learner_seat] = LEARNER
        owner[category == 0] = LEARNER
        self.owner[slots] = owner

    def end_step(self, reward: np.ndarray, done: np.ndarray) -> None:
        """After an engine step: add its ``reward (B, P)``; tally and redeal the games ``done (B,)`` ended."""
        self.game_reward += reward
        if done.any():
            ended = np.flatnonzero(done)
            self.tally(ended)
            self.draw(ended)
            self.game_reward[ended] = 0.0

    def tally(self, ended: np.ndarray) -> None:
        """Add the learner's game reward at the ended tables that had an opponent (logging only)."""
        owner = self.owner[ended]
        opponent = owner.max(axis=1)
        learner_player = owner.argmin(axis=1)
        reward = self.game_reward[ended, learner_player]
        has_opponent = opponent > LEARNER
        np.add.at(self.table_reward, opponent[has_opponent], reward[has_opponent])
        np.add.at(self.table_games, opponent[has_opponent], 1)

    def take_tallies(self) -> tuple[np.ndarray, np.ndarray]:
        """The learner's summed game reward and game count per opponent policy id since the last call."""
        tallies = self.table_reward.copy(), self.table_games.copy()
        self.table_reward[:] = 0.0
        self.table_games[:] = 0
        return tallies

    def act(self, policy_id: int, obs: np.ndarray, mask: np.ndarray, generator: torch.Generator) -> np.ndarray:
        """Actions of an opponent (baseline or snapshot) for its rows."""
        if policy_id < self.first_snapshot_id:
            return self.baselines[policy_id - 1].act_batch(obs, mask)
        net = self.snapshots[policy_id - self.first_snapshot_id]
        with torch.no_grad():
            logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
            return sample(logits, generator).numpy()

    def state_dict(self) -> dict[str, Any]:
        return {
            "owner": torch.from_numpy(self.owner.copy()),
            "rng": self.rng.bit_generator.state,
            "baseline_rngs": [getattr(a, "rng", None) and a.rng.bit_generator.state for a in self.baselines],
            "snapshots": [net.state_dict() for net in self.snapshots],
            "next_snapshot": self.next_snapshot,
        }

    def load_state_dict(self, state: dict[str, Any], template: PolicyNet) -> None:
        self.owner[...] = state["owner"].numpy()
        self.rng.bit_generator.state = state["rng"]
        for agent, rng_state in zip(self.baselines, state["baseline_rngs"]):
            if rng_state is not None:
                agent.rng.bit_generator.state = rng_state
        self.snapshots = []
        for weights in state["snapshots"]:
            net = copy.deepcopy(template).eval().requires_grad_(False)
            net.load_state_dict(weights)
            self.snapshots.append(net)
        self.next_snapshot = int(state["next_snapshot"])
