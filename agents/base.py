"""The decoded view of an observation that every baseline reads, and the agent interface they implement.

The interface (``act``, optional ``act_batch`` and ``reset``), the :class:`Agent` base class and the random player
live in the environment core, :mod:`president_env.registry`, so that the environments can take agents by name
without importing this package; they are re-exported here.

Agents see the observation and the mask only, never the engine's state: what they know is
what the observation holds (``president_env.observation``). :func:`decode` turns a batch of
observations into named arrays (:class:`ObsView`, the named views of the observation spec) so that
strategies read ``view.hand`` and ``view.trick_rank`` instead of slicing vectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from president_env.observation import layout
from president_env.registry import Agent, Policy, RandomAgent, as_agent, check_batch
from president_env.rules import Rules


@dataclass(frozen=True)
class ObsView:
    """A batch of observations as named arrays, one per segment of the observation spec
    (:func:`president_env.observation.layout`), under the segment's name. Seats are *relative*: 0 is the viewer.

    Shapes: ``B`` rows, ``P`` seats, ``R`` ranks (0 = the 3 … 12 = the 2, 13 = joker). One-hots are decoded to the
    value they mark, ``-1`` where they mark none (``trick_count``: ``0``).
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
    phase: np.ndarray  # (B,) int64 0 exchange, 1 play, -1 the game is over
    gave: np.ndarray  # (B,R) int64
    received: np.ndarray  # (B,R) int64
    exchange_partner: np.ndarray  # (B,) int64 relative seat of the exchange partner, -1
    gives_left: np.ndarray  # (B,) int64
    scores: np.ndarray  # (B,P) int64
    manche: np.ndarray  # (B,) int64
    decisive: np.ndarray  # (B,) bool

    @property
    def batch_size(self) -> int:
        return self.hand.shape[0]

    @property
    def exchange(self) -> np.ndarray:
        """``(B,) bool`` in the exchange phase (giving back cards)."""
        return self.phase == 0

    @property
    def partner(self) -> np.ndarray:
        """``(B,) int64`` the ``exchange_partner`` segment."""
        return self.exchange_partner


class _MappedView(ObsView):
    """An :class:`ObsView` whose fields are looked up in a mapping of named views when first read."""

    def __new__(cls, views: Mapping[str, np.ndarray]) -> _MappedView:
        view = object.__new__(cls)
        object.__setattr__(view, "_views", views)
        return view

    def __init__(self, views: Mapping[str, np.ndarray]) -> None:
        pass

    def __getattr__(self, name: str) -> np.ndarray:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._views[name]
        except KeyError:
            raise AttributeError(name) from None


def view_of(views: Mapping[str, np.ndarray]) -> ObsView:
    """An :class:`ObsView` over the named views ``views`` (``layout(rules).view``, ``view_state`` or the lazy
    ``observation.StateViews``): a segment is read from the mapping only when a strategy reads it."""
    return _MappedView(views)


def decode(rules: Rules, observations: np.ndarray) -> ObsView:
    """Named arrays of a batch ``(B, obs_dim)`` (or one ``(obs_dim,)``, as a batch of 1) of observations."""
    obs = np.asarray(observations)
    return ObsView(**layout(rules).view(obs[None] if obs.ndim == 1 else obs))


__all__ = ["Agent", "ObsView", "Policy", "RandomAgent", "as_agent", "check_batch", "decode", "view_of"]


def legal_probabilities(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``(B, A) float64``: the softmax of ``(B, A)`` logits over the legal actions of ``masks`` (0 elsewhere)."""
    logits = np.where(masks, np.asarray(logits, np.float64), -np.inf)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)
