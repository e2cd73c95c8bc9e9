"""The decoded view of an observation that every baseline reads, and the agent interface they implement.

The interface (``act``, optional ``act_batch`` and ``reset``), the :class:`Agent` base class and the random player
live in the environment core, :mod:`president_env.registry`, so that the environments can take agents by name
without importing this package; they are re-exported here.

Agents see the observation and the mask only, never the engine's state: what they know is
what the observation holds (``president_env.observation``). :func:`decode` turns a batch of
observations into named arrays (:class:`ObsView`) so that strategies read ``view.hand`` and
``view.trick_rank`` instead of slicing vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from president_env.observation import layout
from president_env.registry import Agent, Policy, RandomAgent, as_agent, check_batch
from president_env.rules import Rules


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


__all__ = ["Agent", "ObsView", "Policy", "RandomAgent", "as_agent", "check_batch", "decode"]
