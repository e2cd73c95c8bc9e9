"""Masked PPO self-play on the batched engine, in one file (after CleanRL's ``ppo.py``).

    president-train --config configs/train/standard_4p.yaml
    president-train --config configs/train/quick.yaml --set ppo.learning_rate=3e-4 --set seed=2
    president-train --resume runs/standard_4p/checkpoint.pt
    president-train --config configs/train/standard_4p.yaml --set rollout.shards=8 --ray auto

Read top to bottom:

0. **Shards.** The ``ppo.num_envs`` games are cut into ``rollout.shards`` :class:`RolloutShard` s, each
   with its own ``VecGame``, tables, carried decisions and random streams; they play in this process
   or, with ``--ray ADDRESS``, as one Ray actor each, and their decisions form one training batch.
   Where a shard runs never changes the run (see :mod:`president_env.training.distributed`).
1. **Tables.** Each game draws who sits at the table when
   it is dealt (:class:`OpponentPool`): with probability ``opponents.self_play`` the learner plays
   every seat; otherwise the learner takes one random seat and a single opponent takes the others,
   either a past snapshot of the learner or a baseline (``heuristic-3``…). Snapshots join the pool
   every ``opponents.snapshot_every`` updates, so the learner keeps meeting its older selves and
   does not cycle.
2. **Rollout.** ``ppo.num_steps`` engine steps. At each step every game has one player to act; the
   rows the learner owns go through the network in one batch (masked logits, Gumbel-max sampling
   from the trainer's torch generator), each opponent's rows through its own ``act_batch``. Only
   the learner's decisions are stored: observation, legal mask, action, log-probability, value.
   The exchange (giving cards back) is a decision like any other and is learned the same way.
3. **GAE along each seat's own chain** (:func:`seat_gae`). In a four-player game the next state of
   a decision is not the next engine step but the same player's next decision, three or more
   steps later. Rewards (points at the end of a manche) go to every player's latest decision. The
   advantage of a decision chains to that player's next decision in the same game; the end of a
   game cuts the chain. A decision whose successor is not yet known when the rollout ends is not
   bootstrapped from a guess: it is carried into the next rollout (:class:`Pending`) and trained
   there, once its chain has closed.
4. **Update.** Clipped PPO over the learner's closed decisions, with the stored masks applied to
   the logits again, so illegal actions have probability exactly 0 in the ratio and the entropy.
5. **Bookkeeping.** tqdm progress, TensorBoard scalars and ``metrics.jsonl`` (losses, entropy,
   steps/s, evaluation against ``budget.eval_opponent`` over duplicate deals every
   ``budget.eval_every`` updates), atomic checkpoints that hold everything needed to continue the
   run exactly (weights, optimizer, config, rules, games in flight, carried decisions, snapshot
   pool, every generator's state), and ``policy.pt``, the small weights-only file to share.

Env steps (the throughput unit) count every decision of every seat, learner and opponents alike.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from president_env import agents
from president_env.agents.checkpoint import CheckpointError, export_policy, load_checkpoint, save_checkpoint
from president_env.agents.torch_policy import PolicyNet, TorchPolicyAgent, masked_entropy
from president_env.observation import obs_dim as observation_size
from president_env.rules import Rules
from president_env.user_input import check_writable_dir, short_repr
from president_env.vector_env import VecGame

from .config import OpponentConfig, TrainConfig, apply_override, from_dict, load_config
from .distributed import LocalGroup, RayGroup, init_ray

LEARNER = 0  # policy id of the learner in ``OpponentPool.owner``
RESUME_OVERRIDES = ("budget.", "rollout.ray_")
"""What ``--resume`` may change: the budget, and where the shards run (not what they play)."""


# ---------------------------------------------------------------------------------------------
# 1. Tables: who plays which seat in every game
# ---------------------------------------------------------------------------------------------
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
        # categories: self-play, snapshot, baseline 0, baseline 1, ...
        weights = [config.self_play, config.snapshots] + [config.baselines[n] for n in self.baseline_names]
        self.category_p = np.asarray(weights, dtype=np.float64) / sum(weights)
        self.owner = np.zeros((batch_size, rules.n_players), dtype=np.int64)
        self.draw(np.arange(batch_size))

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


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from masked logits (Gumbel-max; illegal actions are never drawn)."""
    uniform = torch.rand(logits.shape, generator=generator).clamp_(min=1e-20)
    return (logits - torch.log(-torch.log(uniform))).argmax(-1)


# ---------------------------------------------------------------------------------------------
# 2-3. Rollout storage and GAE along each seat's chain of decisions
# ---------------------------------------------------------------------------------------------
@dataclass
class Pending:
    """Learner decisions whose successor was not seen yet, one at most per (game, player).

    ``valid (B, P) bool``; ``obs (B, P, D)``, ``mask (B, P, A)``, ``action``, ``logp``, ``value``
    of the decision; ``reward (B, P)`` the reward it has collected so far.
    """

    valid: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    logp: np.ndarray
    value: np.ndarray
    reward: np.ndarray

    @classmethod
    def empty(cls, batch_size: int, n_players: int, obs_dim: int, num_actions: int) -> Pending:
        shape = (batch_size, n_players)
        return cls(
            valid=np.zeros(shape, dtype=bool),
            obs=np.zeros(shape + (obs_dim,), dtype=np.float32),
            mask=np.zeros(shape + (num_actions,), dtype=bool),
            action=np.zeros(shape, dtype=np.int64),
            logp=np.zeros(shape, dtype=np.float32),
            value=np.zeros(shape, dtype=np.float32),
            reward=np.zeros(shape, dtype=np.float32),
        )

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {f.name: torch.from_numpy(getattr(self, f.name).copy()) for f in dataclasses.fields(self)}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for f in dataclasses.fields(self):
            getattr(self, f.name)[...] = state[f.name].numpy()


@dataclass
class SeatGAE:
    """Output of :func:`seat_gae`.

    ``advantage (T, B)`` and ``closed (T, B) bool`` (the advantage is final) for the rollout's
    decisions; ``open_reward (T, B)`` the reward collected after a decision that is still open;
    ``pending_advantage``/``pending_closed (B, P)`` for the decisions carried in; ``pending_reward
    (B, P)`` the carried decisions' reward including this rollout's.
    """

    advantage: np.ndarray
    closed: np.ndarray
    open_reward: np.ndarray
    pending_advantage: np.ndarray
    pending_closed: np.ndarray
    pending_reward: np.ndarray


def seat_gae(
    actor: np.ndarray,
    learner: np.ndarray,
    value: np.ndarray,
    reward: np.ndarray,
    done: np.ndarray,
    pending_valid: np.ndarray,
    pending_value: np.ndarray,
    pending_reward: np.ndarray,
    gamma: float,
    lam: float,
) -> SeatGAE:
    """Generalised advantage estimation where a decision's successor is its own player's next decision.

    Args:
        actor: ``(T, B) int`` player who acted at step ``t`` in game ``b``.
        learner: ``(T, B) bool`` the decision is the learner's (only those are chained; an opponent
            player's decisions never are, and a player's owner is fixed for a whole game).
        value: ``(T, B) float`` value estimate of each learner decision.
        reward: ``(T, B, P) float`` rewards by player returned by step ``t`` (after its action).
        done: ``(T, B) bool`` the game ended at step ``t``; the slot's next step is a new game.
        pending_valid, pending_value, pending_reward: ``(B, P)`` decisions carried in from the
            previous rollout (see :class:`Pending`), which come before step 0.
        gamma, lam: discount and GAE lambda, per decision of the same player.

    For a learner decision at ``t`` by player ``p`` with next decision at ``t'`` (same game):
    ``r = sum(reward[t:t', b, p])``, ``delta = r + gamma * V(t') - V(t)``, ``A(t) = delta + gamma *
    lam * A(t')``. If the game ends at step ``s`` before ``t'``: ``r = sum(reward[t:s+1, b, p])``
    and ``A(t) = r - V(t)``. Otherwise the decision is open (``closed`` False).
    """
    n_steps, batch = actor.shape
    n_players = reward.shape[2]
    rows = np.arange(batch)
    next_value = np.zeros((batch, n_players), dtype=np.float32)
    next_adv = np.zeros((batch, n_players), dtype=np.float32)
    collected = np.zeros((batch, n_players), dtype=np.float32)  # reward since the chain's next decision
    has_next = np.zeros((batch, n_players), dtype=bool)  # a successor (or the game's end) is known
    advantage = np.zeros((n_steps, batch), dtype=np.float32)
    closed = np.zeros((n_steps, batch), dtype=bool)
    open_reward = np.zeros((n_steps, batch), dtype=np.float32)
    for t in range(n_steps - 1, -1, -1):
        ended = done[t]
        if ended.any():  # what follows in this slot is another game: the chains end here
            next_value[ended] = 0.0
            next_adv[ended] = 0.0
            collected[ended] = 0.0
            has_next[ended] = True
        collected += reward[t]
        p = actor[t]
        own = learner[t]
        r = collected[rows, p]
        delta = r + gamma * next_value[rows, p] - value[t]
        adv = delta + gamma * lam * next_adv[rows, p]
        known = has_next[rows, p] & own
        advantage[t] = np.where(known, adv, 0.0)
        closed[t] = known
        open_reward[t] = np.where(own & ~known, r, 0.0)
        b = rows[own]
        next_value[b, p[own]] = value[t, own]
        next_adv[b, p[own]] = np.where(known[own], adv[own], 0.0)
        collected[b, p[own]] = 0.0
        has_next[b, p[own]] = True
    # decisions carried in sit before step 0
    r = pending_reward + collected
    pending_adv = r + gamma * next_value - pending_value + gamma * lam * next_adv
    pending_closed = pending_valid & has_next
    return SeatGAE(
        advantage=advantage,
        closed=closed,
        open_reward=open_reward,
        pending_advantage=np.where(pending_closed, pending_adv, 0.0).astype(np.float32),
        pending_closed=pending_closed,
        pending_reward=np.where(pending_valid & ~has_next, r, 0.0).astype(np.float32),
    )


class Rollout:
    """One rollout's storage: ``(T, B)`` bookkeeping for every step, tensors for the learner's rows."""

    def __init__(self, n_steps: int, batch: int, n_players: int) -> None:
        self.actor = np.zeros((n_steps, batch), dtype=np.int64)
        self.learner = np.zeros((n_steps, batch), dtype=bool)
        self.value = np.zeros((n_steps, batch), dtype=np.float32)
        self.reward = np.zeros((n_steps, batch, n_players), dtype=np.float32)
        self.done = np.zeros((n_steps, batch), dtype=bool)
        self.obs: list[np.ndarray] = []  # learner rows of each step, in slot order
        self.mask: list[np.ndarray] = []
        self.action: list[np.ndarray] = []
        self.logp: list[np.ndarray] = []


# ---------------------------------------------------------------------------------------------
# A rollout shard: a share of the games, where the rollout is played
# ---------------------------------------------------------------------------------------------
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


class RolloutShard:
    """``ppo.num_envs / rollout.shards`` of the training games, with what playing them needs.

    Its own ``VecGame``, :class:`OpponentPool` (tables and snapshots), carried decisions
    (:class:`Pending`) and torch generator for sampling, all seeded from shard ``index``'s seed, so
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
            torch.set_num_threads(threads)
        self.config, self.index = config, index
        self.rules = config.resolve_rules()
        batch = config.ppo.num_envs // config.rollout.shards
        game_seed, pool_seed, torch_seed = RunSeeds.of(config).shards[index].spawn(3)
        self.game = VecGame(self.rules, batch_size=batch, seed=game_seed)
        self.generator = torch.Generator().manual_seed(int(torch_seed.generate_state(1)[0]))
        if net is None:
            net = PolicyNet(self.game.obs_dim, self.game.num_actions, config.network.hidden, config.network.activation)
        self.net = net
        self.pool = OpponentPool(config.opponents, self.rules, batch, np.random.default_rng(pool_seed))
        self.pending = Pending.empty(batch, self.rules.n_players, self.game.obs_dim, self.game.num_actions)
        self.game_reward = np.zeros((batch, self.rules.n_players), dtype=np.float32)  # for logging
        n_ids = OpponentPool.policy_count(config.opponents)
        self.table_reward, self.table_games = np.zeros(n_ids), np.zeros(n_ids, dtype=np.int64)

    def set_weights(self, weights: dict[str, torch.Tensor] | None) -> None:
        """Load the learner's weights (``None``: the network is the trainer's own, already current)."""
        if weights is not None:
            self.net.load_state_dict(weights)

    def add_snapshot(self, weights: dict[str, torch.Tensor] | None = None) -> None:
        self.set_weights(weights)
        self.pool.add_snapshot(self.net)

    def run(self, weights: dict[str, torch.Tensor] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Play one rollout with the given weights; the closed decisions to train on, and statistics.

        The statistics hold sums (decision and game counts; ``tables``: the learner's summed game
        reward and game count per opponent policy id), so shards add up.
        """
        self.set_weights(weights)
        batch, stats = self.batch_from(self.collect())
        stats["tables"] = (self.table_reward.copy(), self.table_games.copy())
        self.table_reward[:] = 0.0
        self.table_games[:] = 0
        return batch, stats

    def collect(self) -> Rollout:
        p = self.config.ppo
        game, pool = self.game, self.pool
        batch = game.batch_size
        rows = np.arange(batch)
        rollout = Rollout(p.num_steps, batch, self.rules.n_players)
        self.net.eval()
        for t in range(p.num_steps):
            actor = game.current_player
            owner = pool.owner[rows, actor]
            obs, mask = game.observe(), game.legal_mask()
            actions = np.empty(batch, dtype=np.int64)
            own = owner == LEARNER
            with torch.no_grad():
                logits, value = self.net(torch.from_numpy(obs[own]), torch.from_numpy(mask[own]))
                action = sample(logits, self.generator)
                logp = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
            actions[own] = action.numpy()
            for policy_id in np.unique(owner[~own]):
                sel = owner == policy_id
                actions[sel] = pool.act(int(policy_id), obs[sel], mask[sel], self.generator)
            rollout.actor[t], rollout.learner[t] = actor, own
            rollout.value[t, own] = value.numpy()
            rollout.obs.append(obs[own])
            rollout.mask.append(mask[own])
            rollout.action.append(actions[own])
            rollout.logp.append(logp.numpy())
            rollout.reward[t], rollout.done[t] = game.step(actions)
            self.game_reward += rollout.reward[t]
            if rollout.done[t].any():
                ended = np.flatnonzero(rollout.done[t])
                self.record_tables(ended)
                pool.draw(ended)
                self.game_reward[ended] = 0.0
        return rollout

    def batch_from(self, rollout: Rollout) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """GAE, then the training rows of closed decisions; carries the open ones to the next rollout."""
        p, pend = self.config.ppo, self.pending
        gae = seat_gae(
            rollout.actor,
            rollout.learner,
            rollout.value,
            rollout.reward,
            rollout.done,
            pend.valid,
            pend.value,
            pend.reward,
            p.gamma,
            p.gae_lambda,
        )
        obs, mask = np.concatenate(rollout.obs), np.concatenate(rollout.mask)
        action, logp = np.concatenate(rollout.action), np.concatenate(rollout.logp)
        flat = rollout.learner.ravel()  # rows of ``obs`` are the learner's (t, b) in row-major order
        value = rollout.value.ravel()[flat]
        closed = gae.closed.ravel()[flat]
        adv = gae.advantage.ravel()[flat]
        carried = gae.pending_closed
        batch = {
            "obs": np.concatenate([obs[closed], pend.obs[carried]]),
            "mask": np.concatenate([mask[closed], pend.mask[carried]]),
            "action": np.concatenate([action[closed], pend.action[carried]]),
            "logp": np.concatenate([logp[closed], pend.logp[carried]]),
            "value": np.concatenate([value[closed], pend.value[carried]]),
            "advantage": np.concatenate([adv[closed], gae.pending_advantage[carried]]),
        }
        batch["return"] = batch["advantage"] + batch["value"]
        # the new carried decisions: open ones of this rollout, and carried ones still open
        still_open = pend.valid & ~gae.pending_closed
        new = Pending.empty(*pend.valid.shape, self.game.obs_dim, self.game.num_actions)
        for name in ("obs", "mask", "action", "logp", "value"):
            getattr(new, name)[still_open] = getattr(pend, name)[still_open]
        new.reward[still_open] = gae.pending_reward[still_open]
        new.valid[still_open] = True
        open_t, open_b = np.nonzero(rollout.learner & ~gae.closed)
        index = np.flatnonzero(flat)  # flat (t, b) index of each learner row
        row_of = np.empty(flat.size, dtype=np.int64)
        row_of[index] = np.arange(index.size)
        rows = row_of[open_t * rollout.learner.shape[1] + open_b]
        players = rollout.actor[open_t, open_b]
        new.valid[open_b, players] = True
        new.obs[open_b, players] = obs[rows]
        new.mask[open_b, players] = mask[rows]
        new.action[open_b, players] = action[rows]
        new.logp[open_b, players] = logp[rows]
        new.value[open_b, players] = value[rows]
        new.reward[open_b, players] = gae.open_reward[open_t, open_b]
        self.pending = new
        stats = {
            "rollout/learner_decisions": float(flat.sum()),
            "rollout/trained_decisions": float(len(batch["action"])),
            "rollout/carried_decisions": float(new.valid.sum()),
            "rollout/games_ended": float(rollout.done.sum()),
        }
        return batch, stats

    def record_tables(self, ended: np.ndarray) -> None:
        """Add the learner's game reward at the ended tables that had an opponent (logging only)."""
        owner = self.pool.owner[ended]
        opponent = owner.max(axis=1)
        learner_player = owner.argmin(axis=1)
        reward = self.game_reward[ended, learner_player]
        has_opponent = opponent > LEARNER
        np.add.at(self.table_reward, opponent[has_opponent], reward[has_opponent])
        np.add.at(self.table_games, opponent[has_opponent], 1)

    def state_dict(self) -> dict[str, Any]:
        game = self.game.state_dict()
        return {
            "game": {name: torch.from_numpy(array) for name, array in game["state"].items()},
            "game_rng": game["rng"],
            "torch_rng": self.generator.get_state(),
            "pool": self.pool.state_dict(),
            "pending": self.pending.state_dict(),
            "game_reward": torch.from_numpy(self.game_reward.copy()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.game.load_state_dict({"state": state["game"], "rng": state["game_rng"]})
        self.generator.set_state(state["torch_rng"])
        self.pool.load_state_dict(state["pool"], self.net)
        self.pending.load_state_dict(state["pending"])
        self.game_reward[...] = state["game_reward"].numpy()


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


# ---------------------------------------------------------------------------------------------
# The trainer
# ---------------------------------------------------------------------------------------------
class Trainer:
    """Everything a run holds; :meth:`train` runs it, :meth:`save` and :meth:`resume` make it resumable.

    The games live in ``rollout.shards`` :class:`RolloutShard` s (``self.shards``): in this process,
    or one Ray actor each when ``rollout.ray_address`` is set. Call :meth:`close` (``train`` does) to
    release the actors.
    """

    def __init__(self, config: TrainConfig, progress: bool = True) -> None:
        self.config = config
        self.rules = config.resolve_rules()
        self.out_dir = Path(config.out_dir)
        self.progress = progress
        for name in config.opponents.baselines:
            if name not in agents.names():
                raise ValueError(f"opponents.baselines: unknown agent {name!r}; known: {', '.join(agents.names())}")
        if config.threads:
            torch.set_num_threads(config.threads)
        seeds = RunSeeds.of(config)
        self.eval_seed = seeds.eval
        self.generator = torch.Generator().manual_seed(seeds.learn)
        obs_dim, num_actions = observation_size(self.rules), self.rules.num_actions
        with torch.random.fork_rng():
            torch.manual_seed(seeds.network)
            self.net = PolicyNet(obs_dim, num_actions, config.network.hidden, config.network.activation)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.shards = self._start_shards()
        if config.opponents.snapshots > 0:
            self.shards.call("add_snapshot", self.weights())
        self.update = 0
        self.global_step = 0
        self.elapsed = 0.0
        self.last_eval: dict[str, float] = {}
        self.opponent_ids = OpponentPool.kinds_of(config.opponents)
        n_ids = OpponentPool.policy_count(config.opponents)
        self.table_reward, self.table_games = np.zeros(n_ids), np.zeros(n_ids, dtype=np.int64)

    def _start_shards(self) -> LocalGroup | RayGroup:
        rollout = self.config.rollout
        if rollout.ray_address is None:
            return LocalGroup([RolloutShard(self.config, i, net=self.net) for i in range(rollout.shards)])
        init_ray(rollout.ray_address)
        data = self.config.to_dict()
        # As many torch threads as CPUs reserved: more would fight the other shards for the same cores.
        threads = max(1, int(rollout.ray_cpus_per_shard))
        args = [(data, i, None, threads) for i in range(rollout.shards)]
        return RayGroup(RolloutShard, args, num_cpus=rollout.ray_cpus_per_shard)

    def weights(self) -> dict[str, torch.Tensor] | None:
        """What the shards need to act as the learner now (nothing for shards that share its network)."""
        # state_dict() tensors are detached; RayGroup.call serializes them at once, before any update.
        return None if self.shards.local else self.net.state_dict()

    def close(self) -> None:
        """Release the shards' Ray actors (nothing to do for shards in this process)."""
        self.shards.close()

    # ----- rollout --------------------------------------------------------------------------
    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """Every shard plays one rollout with the current weights; one training batch and statistics."""
        batch, stats = merge_shards(self.shards.call("run", self.weights()))
        table_reward, table_games = stats.pop("tables")
        self.table_reward += table_reward
        self.table_games += table_games
        self.global_step += self.config.ppo.num_envs * self.config.ppo.num_steps
        return batch, stats

    def table_stats(self) -> dict[str, float]:
        """Mean game reward of the learner against each opponent kind since the last call."""
        stats = {}
        for name, ids in self.opponent_ids.items():
            games = self.table_games[ids].sum()
            if games:
                stats[f"rollout/reward_vs_{name}"] = float(self.table_reward[ids].sum() / games)
        self.table_reward[:] = 0.0
        self.table_games[:] = 0
        return stats

    # ----- update ---------------------------------------------------------------------------
    def learn(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        p = self.config.ppo
        if p.anneal_lr:
            frac = max(0.0, 1.0 - self.global_step / self.config.budget.total_steps)
            self.optimizer.param_groups[0]["lr"] = frac * p.learning_rate
        n = len(batch["action"])
        minibatch = max(1, math.ceil(n / p.num_minibatches))
        self.net.train()
        stats: dict[str, list[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")
        }
        for _epoch in range(p.update_epochs):
            order = torch.randperm(n, generator=self.generator)
            for start in range(0, n, minibatch):
                idx = order[start : start + minibatch]
                logits, value = self.net(batch["obs"][idx], batch["mask"][idx])
                log_p = torch.log_softmax(logits, -1)
                new_logp = log_p.gather(1, batch["action"][idx, None]).squeeze(1)
                entropy = masked_entropy(log_p).mean()
                log_ratio = new_logp - batch["logp"][idx]
                ratio = log_ratio.exp()
                adv = batch["advantage"][idx]
                if p.norm_adv and len(idx) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - p.clip_coef, 1 + p.clip_coef)).mean()
                returns, old_value = batch["return"][idx], batch["value"][idx]
                if p.clip_vloss:
                    clipped = old_value + (value - old_value).clamp(-p.clip_coef, p.clip_coef)
                    v_loss = 0.5 * torch.max((value - returns) ** 2, (clipped - returns) ** 2).mean()
                else:
                    v_loss = 0.5 * ((value - returns) ** 2).mean()
                loss = pg_loss - p.ent_coef * entropy + p.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), p.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["policy_loss"].append(pg_loss.item())
                    stats["value_loss"].append(v_loss.item())
                    stats["entropy"].append(entropy.item())
                    stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                    stats["clipfrac"].append(((ratio - 1).abs() > p.clip_coef).float().mean().item())
            if p.target_kl is not None and n and np.mean(stats["approx_kl"][-p.num_minibatches :]) > p.target_kl:
                break
        with torch.no_grad():
            returns, values = batch["return"], batch["value"]
            var = returns.var().item() if n > 1 else 0.0
            explained = 1 - (returns - values).var().item() / var if var > 0 else None
        # A rollout with no learner decision has no losses, one with constant returns no explained variance:
        # such metrics are left out of the record rather than written as NaN.
        out = {f"losses/{k}": float(np.mean(v)) for k, v in stats.items() if v}
        if explained is not None:
            out["losses/explained_variance"] = explained
        out["charts/learning_rate"] = self.optimizer.param_groups[0]["lr"]
        return out

    # ----- evaluation -------------------------------------------------------------------------
    def agent(self, greedy: bool = True) -> TorchPolicyAgent:
        """The current policy behind the agent interface (a frozen copy)."""
        net = copy.deepcopy(self.net).eval()
        return TorchPolicyAgent(self.rules, net, seed=0, greedy=greedy, name="learner")

    def evaluate(self, n_deals: int | None = None) -> dict[str, float]:
        """One learner against ``eval_opponent`` in every other seat, over duplicate deals."""
        from .evaluate import evaluate

        budget = self.config.budget
        lineup = [self.agent()] + [budget.eval_opponent] * (self.rules.n_players - 1)
        result = evaluate(lineup, self.rules, n_deals=n_deals or budget.eval_deals, seed=self.eval_seed, progress=False)
        row = result.summary[lineup[0].name]
        stats = {"advantage": "advantage", "advantage_ci": "advantage_ci", "points": "points"}
        stats.update({"mean_position": "position", "president": "president"})
        return {
            f"eval/{key}": float(row[field]) for key, field in stats.items()
        }  # plain floats: checkpoints hold data only

    # ----- checkpoints --------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "network": self.net.spec(),
            "model": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "config": self.config.to_dict(),
            "rng": {"learn": self.generator.get_state()},
            "progress": {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed},
            "metrics": dict(self.last_eval),
            "greedy": True,
            "trainer": {"shards": self.shards.call("state_dict")},
        }

    def save(self, path: str | Path) -> Path:
        return save_checkpoint(path, self.state_dict())

    @classmethod
    def resume(cls, path: str | Path, progress: bool = True, overrides: list[str] | tuple[str, ...] = ()) -> Trainer:
        """A trainer restored from a full checkpoint (``overrides`` may extend the budget, not change the run)."""
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
        if config.resolve_rules().to_dict() != checkpoint["rules"]:
            raise CheckpointError(f"{path}: its rules differ from those its config names ({config.rules!r})")
        trainer = cls(config, progress=progress)
        try:
            trainer.net.load_state_dict(checkpoint["model"])
            trainer.optimizer.load_state_dict(checkpoint["optimizer"])
            trainer.generator.set_state(checkpoint["rng"]["learn"])
            shard_states = checkpoint["trainer"]["shards"]
            if len(shard_states) != config.rollout.shards:
                raise ValueError(f"{len(shard_states)} shard states for rollout.shards={config.rollout.shards}")
            trainer.shards.call_each("load_state_dict", shard_states)
        except (KeyError, RuntimeError, ValueError, TypeError) as err:
            trainer.close()
            raise CheckpointError(
                f"{path}: training state does not match its config ({type(err).__name__}: {err})"
            ) from None
        progress_state = checkpoint["progress"]
        trainer.update = int(progress_state["update"])
        trainer.global_step = int(progress_state["global_step"])
        trainer.elapsed = float(progress_state["elapsed_s"])
        trainer.last_eval = dict(checkpoint.get("metrics", {}))
        return trainer

    # ----- the loop --------------------------------------------------------------------------------
    def train_step(self) -> dict[str, float]:
        """One rollout and one update; returns the scalars to log."""
        start = time.perf_counter()
        batch, stats = self.rollout()
        collected = time.perf_counter()
        stats.update(self.learn(batch))
        self.update += 1
        if self.config.opponents.snapshots > 0 and self.update % self.config.opponents.snapshot_every == 0:
            self.shards.call("add_snapshot", self.weights())
        end = time.perf_counter()
        steps = self.config.ppo.num_envs * self.config.ppo.num_steps
        stats["charts/steps_per_s"] = steps / (end - start)
        stats["charts/rollout_steps_per_s"] = steps / (collected - start)
        stats.update(self.table_stats())
        self.elapsed += end - start
        return stats

    def train(self) -> dict[str, float]:
        """Run until the step budget or the time limit; returns the last evaluation."""
        config, budget = self.config, self.config.budget
        self.out_dir.mkdir(parents=True, exist_ok=True)
        config.save(self.out_dir / "config.yaml")
        self.rules.to_yaml(self.out_dir / "rules.yaml")
        writer = _summary_writer(self.out_dir)
        bar = _progress_bar(budget.total_steps, self.global_step, self.progress)
        deadline = None if budget.time_limit_min is None else budget.time_limit_min * 60.0
        # A new run starts its own log; a resumed one continues it (re-running into a folder must not mix runs).
        with open(self.out_dir / "metrics.jsonl", "a" if self.update else "w") as log:
            while self.global_step < budget.total_steps and (deadline is None or self.elapsed < deadline):
                try:
                    stats = self.train_step()
                except KeyboardInterrupt:
                    # A half-done rollout cannot be saved consistently; the last checkpoint stays intact.
                    print(f"\ninterrupted: resume with --resume {self.out_dir / 'checkpoint.pt'}", file=sys.stderr)
                    if writer is not None:
                        writer.close()
                    raise
                if budget.eval_every and self.update % budget.eval_every == 0:
                    t0 = time.perf_counter()
                    self.last_eval = self.evaluate()
                    stats.update(self.last_eval)
                    stats["charts/eval_seconds"] = time.perf_counter() - t0
                    self.elapsed += stats["charts/eval_seconds"]
                record = {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed, **stats}
                log.write(_json_line(record) + "\n")
                log.flush()
                if writer is not None:
                    for key, value in stats.items():
                        if math.isfinite(value):
                            writer.add_scalar(key, value, self.global_step)
                bar.update(self.config.ppo.num_envs * self.config.ppo.num_steps)
                postfix = {"sps": f"{stats['charts/steps_per_s']:,.0f}"}
                if "losses/entropy" in stats:
                    postfix["ent"] = f"{stats['losses/entropy']:.2f}"
                if self.last_eval:
                    postfix["vs " + budget.eval_opponent] = f"{self.last_eval['eval/advantage']:+.2f}"
                bar.set_postfix(postfix)
                if budget.checkpoint_every and self.update % budget.checkpoint_every == 0:
                    self.save(self.out_dir / "checkpoint.pt")
        bar.close()
        if budget.eval_every and (not self.last_eval or self.update % budget.eval_every != 0):
            self.last_eval = self.evaluate()
            # the final evaluation is the learning curve's last point
            record = {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed}
            with open(self.out_dir / "metrics.jsonl", "a") as log:
                log.write(_json_line({**record, **self.last_eval}) + "\n")
        self.save(self.out_dir / "checkpoint.pt")
        export_policy(self.out_dir / "checkpoint.pt", self.out_dir / "policy.pt")
        if writer is not None:
            writer.close()
        if budget.eval_every:
            try:
                from .curves import plot_learning_curve

                plot_learning_curve(self.out_dir, opponent=budget.eval_opponent)
            except ImportError:  # matplotlib is in the eval extra; the curve's data is in metrics.jsonl
                pass
        return self.last_eval


def _json_line(record: dict[str, Any], indent: int | None = None) -> str:
    """``record`` as strict JSON: an undefined value (NaN, such as the CI of a single deal group) is ``null``."""
    clean = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()}
    return json.dumps(clean, allow_nan=False, indent=indent)


def _summary_writer(out_dir: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the train extra; metrics.jsonl is always written
        print("tensorboard is not installed: logging to metrics.jsonl only", file=sys.stderr)
        return None
    return SummaryWriter(str(out_dir / "tb"))


def _progress_bar(total: int, done: int, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=done, unit="step", unit_scale=True, dynamic_ncols=True, disable=not enabled)


# ---------------------------------------------------------------------------------------------
# Command line: president-train
# ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="president-train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="a YAML file of configs/train/ (default: the built-in defaults)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. ppo.learning_rate=3e-4"
    )
    parser.add_argument("--out-dir", help="where the run writes (overrides out_dir)")
    parser.add_argument("--resume", metavar="CHECKPOINT", help="continue a run exactly from its checkpoint.pt")
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the rollout shards (rollout.shards) as Ray actors: 'local', 'auto' or 'ray://host:10001' "
        "(sets rollout.ray_address; the run is the same, only faster; needs the ray extra)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.ray is not None:
        args.set.append(f"rollout.ray_address={args.ray}")
    if args.resume and args.config:
        parser.error("--resume takes the config stored in the checkpoint; drop --config")
    try:
        if args.resume:
            if not os.path.isfile(args.resume):
                raise ValueError(f"--resume {short_repr(args.resume, 200)}: no such checkpoint file")
            trainer = Trainer.resume(args.resume, progress=not args.no_progress, overrides=args.set)
            try:
                trainer.out_dir = check_writable_dir(args.out_dir or Path(args.resume).parent, "--out-dir")
            except ValueError:
                trainer.close()
                raise
        else:
            overrides = list(args.set) + ([f"out_dir={args.out_dir}"] if args.out_dir else [])
            config = load_config(args.config, overrides)
            check_writable_dir(config.out_dir, "--out-dir" if args.out_dir else "out_dir")
            trainer = Trainer(config, progress=not args.no_progress)
    except (ValueError, CheckpointError, ImportError) as err:
        print(f"president-train: error: {err}", file=sys.stderr)
        return 2
    try:
        result = trainer.train()
    except KeyboardInterrupt:
        return 130
    finally:
        trainer.close()
    print(_json_line({"update": trainer.update, "global_step": trainer.global_step, **result}, indent=2))
    print(f"checkpoint: {trainer.out_dir / 'checkpoint.pt'}\npolicy: {trainer.out_dir / 'policy.pt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
