"""The agent interface, and the decoded view of an observation that every baseline reads.

Every agent has

- ``act(observation_dict, info=None) -> int``: one decision from a PettingZoo/Gymnasium
  observation ``{"observation": (obs_dim,) float32, "action_mask": (A,) int8}``;
- ``act_batch(observations, masks) -> actions``: ``(B, obs_dim) float32`` and ``(B, A) bool``
  to ``(B,) int64``, one decision per row, all rows at once.

Agents see the observation and the mask only, never the engine's state: what they know is
what the observation holds (``president_env.observation``). :func:`decode` turns a batch of
observations into named arrays (:class:`ObsView`) so that strategies read ``view.hand`` and
``view.trick_rank`` instead of slicing vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from president_env.engine import sample_legal
from president_env.observation import layout
from president_env.rules import Rules


@runtime_checkable
class Policy(Protocol):
    """What tournaments, environments and the training loop need from an agent."""

    name: str

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int: ...

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


class Agent:
    """Base class: subclasses implement :meth:`act_batch`; :meth:`act` is one row of it.

    Args:
        rules: the rules the agent plays (sizes the observation it reads).
        seed: seed of the agent's own ``numpy.random.Generator`` (ties, sampling).
    """

    name = "agent"

    def __init__(self, rules: Rules, seed: int | np.random.SeedSequence | None = None) -> None:
        self.rules = rules
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Reseed the agent's generator (the Gym env calls this at every reset)."""
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        obs = np.asarray(observation["observation"], np.float32)[None]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None]
        return int(self.act_batch(obs, mask)[0])

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """One decision and what weighed in it: ``{"action": a, "measure": text or None, "values": {a: number}}``.

        ``values`` scores legal actions in the agent's own terms (``measure`` names them: move
        probabilities, mean points, costs). The base class gives the decision alone.
        """
        return {"action": self.act(observation, info), "measure": None, "values": {}}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def check_batch(rules: Rules, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert ``act_batch`` inputs: ``(B, obs_dim) float32`` and ``(B, A) bool``."""
    observations = np.asarray(observations, np.float32)
    masks = np.asarray(masks)
    dim = layout(rules).size
    if observations.ndim != 2 or observations.shape[1] != dim:
        raise ValueError(f"observations must have shape (B, {dim}) for these rules, got {observations.shape}")
    if masks.shape != (observations.shape[0], rules.num_actions):
        raise ValueError(f"masks must have shape ({observations.shape[0]}, {rules.num_actions}), got {masks.shape}")
    masks = masks.astype(bool, copy=False)
    if not masks.any(axis=1).all():
        raise ValueError(f"row {int(np.flatnonzero(~masks.any(axis=1))[0])} of masks has no legal action")
    return observations, masks


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"
    needs_observations = False  # reads the masks only: batched envs may skip computing observations for it

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        _, masks = check_batch(self.rules, observations, masks)
        return sample_legal(masks, self.rng)

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        legal = np.flatnonzero(observation["action_mask"])
        values = {int(a): 1.0 / legal.size for a in legal}
        return {"action": self.act(observation, info), "measure": "probability", "values": values}


@dataclass(frozen=True)
class ObsView:
    """A batch of observations as named arrays. Seats are *relative*: 0 is the viewer (the player to act).

    Shapes: ``B`` rows, ``P`` seats, ``R`` ranks (0 = the 3 … 12 = the 2, 13 = joker).
    """

    hand: np.ndarray  # (B,R) int64 own cards by rank
    played: np.ndarray  # (B,P,R) int64 cards each seat played this manche
    held: np.ndarray  # (B,P) int64 cards each seat holds
    trick_rank: np.ndarray  # (B,) int64 rank to beat, -1 when the next play leads
    trick_count: np.ndarray  # (B,) int64 cards per play in this trick, 0 when leading
    trick_owner: np.ndarray  # (B,) int64 relative seat that made the play to beat, -1
    passed: np.ndarray  # (B,P) bool
    out_order: np.ndarray  # (B,P) int64 order of going out, -1 still in
    penalized: np.ndarray  # (B,P) bool
    roles: np.ndarray  # (B,P) int64 role code (0 président … 4 trou du cul), -1 none
    revolution: np.ndarray  # (B,) bool
    constrained: np.ndarray  # (B,) bool
    to_act: np.ndarray  # (B,) int64 relative seat to act (0 when the viewer acts)
    exchange: np.ndarray  # (B,) bool: exchange phase (giving back cards)
    gave: np.ndarray  # (B,R) int64
    received: np.ndarray  # (B,R) int64
    partner: np.ndarray  # (B,) int64 relative seat of the exchange partner, -1
    gives_left: np.ndarray  # (B,) int64
    scores: np.ndarray  # (B,P) int64
    manche: np.ndarray  # (B,) int64
    decisive: np.ndarray  # (B,) bool

    @property
    def batch_size(self) -> int:
        return self.hand.shape[0]


def _index_of_one(one_hot: np.ndarray) -> np.ndarray:
    """Index of the 1 along the last axis, -1 where all are 0."""
    return np.where(one_hot.any(axis=-1), one_hot.argmax(axis=-1), -1)


def decode(rules: Rules, observations: np.ndarray) -> ObsView:
    """Named arrays of a batch ``(B, obs_dim)`` of observations (see :class:`ObsView`)."""
    obs = np.asarray(observations)
    if obs.ndim == 1:
        obs = obs[None]
    lay = layout(rules)
    b, p, r = obs.shape[0], rules.n_players, rules.n_ranks

    def seg(name: str) -> np.ndarray:
        return obs[:, lay[name]]

    def counts(name: str) -> np.ndarray:
        return np.rint(seg(name)).astype(np.int64)

    trick_count = _index_of_one(seg("trick_count") > 0.5) + 1
    return ObsView(
        hand=counts("hand"),
        played=counts("played").reshape(b, p, r),
        held=counts("held"),
        trick_rank=_index_of_one(seg("trick_rank") > 0.5),
        trick_count=trick_count,
        trick_owner=_index_of_one(seg("trick_owner") > 0.5),
        passed=seg("passed") > 0.5,
        out_order=_index_of_one(seg("out_order").reshape(b, p, p) > 0.5),
        penalized=seg("penalized") > 0.5,
        roles=_index_of_one(seg("roles").reshape(b, p, 5) > 0.5),
        revolution=seg("revolution")[:, 0] > 0.5,
        constrained=seg("constrained")[:, 0] > 0.5,
        to_act=_index_of_one(seg("to_act") > 0.5),
        exchange=seg("phase")[:, 0] > 0.5,
        gave=counts("gave"),
        received=counts("received"),
        partner=_index_of_one(seg("exchange_partner") > 0.5),
        gives_left=counts("gives_left")[:, 0],
        scores=counts("scores"),
        manche=counts("manche")[:, 0],
        decisive=seg("decisive")[:, 0] > 0.5,
    )


def as_agent(agent: Any) -> Any:
    """Objects with ``act`` but no ``act_batch`` get a row-by-row ``act_batch`` (slow, but uniform)."""
    if hasattr(agent, "act_batch"):
        return agent
    return _RowByRow(agent)


class _RowByRow:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        return int(self.agent.act(observation, info))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = [
            self.agent.act({"observation": o, "action_mask": m.astype(np.int8)}, {})
            for o, m in zip(observations, masks)
        ]
        return np.asarray(rows, np.int64)
