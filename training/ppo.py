"""Masked PPO where every seat's decisions form a chain of their own: the algorithm, top to bottom.

After CleanRL's ``ppo.py``, with what a seated card game changes:

1. :func:`.acting.sample` draws an action per row from masked logits (Gumbel-max with an explicit generator).
2. :func:`collect` plays ``num_steps`` engine steps. At each step every game has one player to act; the
   rows the learner owns go through the network in one batch, each opponent's rows through the opponent
   pool. Only the learner's decisions are stored: observation, legal mask, action, log-probability, value.
   The exchange (giving cards back) is a decision like any other and is learned the same way.
3. :func:`seat_gae`: in a four-player game the next state of a decision is not the next engine step but
   the same player's next decision, three or more steps later. Rewards (points at the end of a manche) go
   to every player's latest decision; the end of a game cuts the chain.
4. :func:`training_rows`: the closed decisions become training rows. A decision whose successor is not yet
   known when the rollout ends is not bootstrapped from a guess: it is carried into the next rollout
   (:class:`Pending`) and trained there, once its chain has closed.
5. :func:`ppo_update`: clipped PPO over those rows, with the stored masks applied to the logits again, so
   illegal actions have probability exactly 0 in the ratio and the entropy.

The loop that runs these (shards, snapshots, logging, checkpoints) is :mod:`.ppo_selfplay`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from president_env.agents.torch_policy import PolicyNet, masked_entropy
from president_env.core.vec_game import VecGame

from .acting import LEARNER, sample
from .config import PPOConfig

if TYPE_CHECKING:
    from .opponents import OpponentPool


# ---------------------------------------------------------------------------------------------
# 1-2. Acting: sampling (.acting) and the rollout
# ---------------------------------------------------------------------------------------------
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


def collect(game: VecGame, net: PolicyNet, pool: OpponentPool, generator: torch.Generator, num_steps: int) -> Rollout:
    """Play ``num_steps`` steps of every game in ``game``; the learner's decisions and every step's outcome.

    The learner acts through ``net`` in the seats ``pool.owner`` gives it, the opponents through
    ``pool.act``; ``pool.end_step`` sees each step's rewards and deals new tables where games ended.
    """
    batch = game.batch_size
    rows = np.arange(batch)
    rollout = Rollout(num_steps, batch, game.rules.n_players)
    net.eval()
    for t in range(num_steps):
        actor = game.current_player
        owner = pool.owner[rows, actor]
        obs, mask = game.observe(), game.legal_mask()
        actions = np.empty(batch, dtype=np.int64)
        own = owner == LEARNER
        with torch.no_grad():
            logits, value = net(torch.from_numpy(obs[own]), torch.from_numpy(mask[own]))
            action = sample(logits, generator)
            logp = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
        actions[own] = action.numpy()
        for policy_id in np.unique(owner[~own]):
            sel = owner == policy_id
            actions[sel] = pool.act(int(policy_id), obs[sel], mask[sel], generator)
        rollout.actor[t], rollout.learner[t] = actor, own
        rollout.value[t, own] = value.numpy()
        rollout.obs.append(obs[own])
        rollout.mask.append(mask[own])
        rollout.action.append(actions[own])
        rollout.logp.append(logp.numpy())
        rollout.reward[t], rollout.done[t] = game.step(actions)
        pool.end_step(rollout.reward[t], rollout.done[t])
    return rollout


# ---------------------------------------------------------------------------------------------
# 3-4. GAE along each seat's chain of decisions, and the rows to train on
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


def training_rows(
    rollout: Rollout, pending: Pending, gamma: float, lam: float
) -> tuple[dict[str, np.ndarray], Pending, dict[str, float]]:
    """GAE, then the training rows of closed decisions, the decisions carried on, and counts to log."""
    pend = pending
    gae = seat_gae(
        rollout.actor,
        rollout.learner,
        rollout.value,
        rollout.reward,
        rollout.done,
        pend.valid,
        pend.value,
        pend.reward,
        gamma,
        lam,
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
    new = Pending.empty(*pend.valid.shape, pend.obs.shape[-1], pend.mask.shape[-1])
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
    stats = {
        "rollout/learner_decisions": float(flat.sum()),
        "rollout/trained_decisions": float(len(batch["action"])),
        "rollout/carried_decisions": float(new.valid.sum()),
        "rollout/games_ended": float(rollout.done.sum()),
    }
    return batch, new, stats


# ---------------------------------------------------------------------------------------------
# 5. The update
# ---------------------------------------------------------------------------------------------
def ppo_update(
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    p: PPOConfig,
    generator: torch.Generator,
) -> dict[str, float]:
    """``p.update_epochs`` epochs of clipped PPO over ``batch`` (minibatch order from ``generator``); losses to log."""
    n = len(batch["action"])
    minibatch = max(1, math.ceil(n / p.num_minibatches))
    net.train()
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
    for _epoch in range(p.update_epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, minibatch):
            idx = order[start : start + minibatch]
            logits, value = net(batch["obs"][idx], batch["mask"][idx])
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
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
            optimizer.step()
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
    out["charts/learning_rate"] = optimizer.param_groups[0]["lr"]
    return out
