"""The decoded view of an observation that every baseline reads, and the agent interface they implement.

The interface (``act``, optional ``act_batch`` and ``reset``), the :class:`Agent` base class and the random player
live in the environment core, :mod:`president_env.core.registry`, so that the environments can take agents by name
without importing this package; they are re-exported here.

Agents see the observation and the mask only, never the engine's state: what they know is
what the observation holds (``president_env.core.observation``). :func:`decode` turns a batch of
observations into named arrays (:class:`ObsView`, the named views of the observation spec, by the spec's names) so that
strategies read ``view.hand`` and ``view.trick_rank`` instead of slicing vectors.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from president_env.core.observation import SEGMENT_NAMES, layout
from president_env.core.registry import Agent, Policy, RandomAgent, as_agent, check_batch
from president_env.core.rules import Rules


class ObsView:
    """A batch of observations as named arrays: ``view.NAME`` is the segment ``NAME`` of the observation spec.

    The names, shapes and meanings are the spec's (:func:`president_env.core.observation.layout`;
    ``layout(rules).table()`` is the index table), not declared again here: a segment added to the spec is readable
    here at once. Values are the spec's named views (``ObservationSpec.view``, ``view_state`` or the lazy
    ``observation.StateViews``), each read only when a strategy reads it: ``(B, ...)`` counts as ``int64``, flags as
    ``bool``, one-hots as the value they mark (``first - 1`` where they mark none: ``-1``, ``trick_count`` ``0``).
    Seats are *relative*: 0 is the viewer. Read-only.
    """

    __slots__ = ("_views",)

    def __init__(self, views: Mapping[str, np.ndarray] | None = None, /, **segments: np.ndarray) -> None:
        object.__setattr__(self, "_views", segments if views is None else views)

    def __getattr__(self, name: str) -> np.ndarray:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._views[name]
        except KeyError:
            raise AttributeError(f"no observation segment {name!r}; segments: {', '.join(SEGMENT_NAMES)}") from None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("an ObsView is read-only")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(SEGMENT_NAMES))

    @property
    def batch_size(self) -> int:
        """The number of observations ``B`` this view holds."""
        return self.hand.shape[0]

    @property
    def exchange(self) -> np.ndarray:
        """``(B,) bool`` in the exchange phase (giving back cards)."""
        return self.phase == 0

    @property
    def partner(self) -> np.ndarray:
        """``(B,) int64`` the ``exchange_partner`` segment."""
        return self.exchange_partner


def view_of(views: Mapping[str, np.ndarray]) -> ObsView:
    """An :class:`ObsView` over the named views ``views`` (``layout(rules).view``, ``view_state`` or the lazy
    ``observation.StateViews``): a segment is read from the mapping only when a strategy reads it."""
    return ObsView(views)


def decode(rules: Rules, observations: np.ndarray) -> ObsView:
    """Named arrays of a batch ``(B, obs_dim)`` (or one ``(obs_dim,)``, as a batch of 1) of observations."""
    obs = np.asarray(observations)
    return ObsView(layout(rules).view(obs[None] if obs.ndim == 1 else obs))


__all__ = ["Agent", "ObsView", "Policy", "RandomAgent", "as_agent", "check_batch", "decode", "view_of"]


def legal_probabilities(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``(B, A) float64``: the softmax of ``(B, A)`` logits over the legal actions of ``masks`` (0 elsewhere)."""
    logits = np.where(masks, np.asarray(logits, np.float64), -np.inf)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)
