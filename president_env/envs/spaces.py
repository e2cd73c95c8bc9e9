"""The Gymnasium spaces every view of the game shares: the observation's ``Box`` and the legal-sampling ``Discrete``.

The AEC env, the Gymnasium single env and the vector env stand side by side on the core; what they share about
spaces lives here, once: the observation ``Box`` with the bound of the observation spec
(:attr:`~president_env.core.observation.ObservationSpec.high`), the action spaces whose ``sample()`` draws legal
actions (one game's, and the vector env's batch), and the illegal-action modes of the Gymnasium envs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import spaces

from president_env.core.actions import as_action
from president_env.core.observation import layout
from president_env.core.rules import Rules

ILLEGAL_ACTION_MODES = ("raise", "random")
"""What the Gymnasium envs do with an illegal learner action: raise ``ValueError``, or play a random legal one."""


def observation_box(rules: Rules) -> spaces.Box:
    """``Box(0, high, (obs_dim,), float32)``: the observation vector of ``rules``, bounded by its spec."""
    spec = layout(rules)
    return spaces.Box(0.0, float(spec.high), (spec.size,), np.float32)


class _BoundToGame:
    """The link of an action space to the legal actions of its env's game: set on creation and after unpickling by
    the env (:meth:`bind`), dropped when the space is pickled alone (a saved SB3 model keeps its action space: the
    copy must not drag its env along, and samples like the plain space)."""

    _legal_mask: Callable[[], np.ndarray | None] | None

    def bind(self, legal_mask: Callable[[], np.ndarray | None]) -> None:
        """Draw :meth:`sample` among the actions ``legal_mask()`` allows (``None``: no game yet, the whole space)."""
        self._legal_mask = legal_mask

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_legal_mask"] = None
        return state


class LegalActionSpace(_BoundToGame, spaces.Discrete):
    """``Discrete(num_actions)`` whose ``sample()`` without a mask draws among the actions legal now.

    ``contains`` is the plain discrete check; only sampling looks at the game, so that
    ``action_space.sample()`` (random exploration, the env checkers of Gymnasium and RLlib) gives an
    action the env accepts when its owner is to act. An explicit ``mask`` or ``probability`` is used
    as given, and when no action is legal (not this agent's turn, or the game is over) the draw is
    over the whole space.
    """

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._low, self._high = int(self.start), int(self.start + self.n)
        self.bind(legal_mask)

    def contains(self, x) -> bool:
        """In range and an integer as the env accepts it (:func:`~president_env.core.actions.as_action`): also NumPy
        integers of any dtype (``uint64`` included) and integer arrays of shape ``(1,)``."""
        if type(x) is int:  # the common case (every step of the AEC env's out-of-bounds check), without as_action
            return self._low <= x < self._high
        try:
            value = as_action(x, int(self.n))
        except ValueError:
            return False
        return int(self.start) <= value < int(self.start + self.n)

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self._legal_mask is not None:
            legal = self._legal_mask()
            if legal.any():
                mask = legal.astype(np.int8)
        return super().sample(mask=mask, probability=probability)


class LegalMultiDiscrete(_BoundToGame, spaces.MultiDiscrete):
    """``MultiDiscrete([num_actions] * num_envs)``, the vector env's ``action_space``, whose ``sample()`` without a
    mask draws, for every game, among its learner's actions legal now, as :class:`LegalActionSpace` does for one
    game: so ``venv.step(venv.action_space.sample())`` plays legal moves. A game with no legal action (finished, or
    before the first reset) draws over the whole space (its action is ignored); an explicit ``mask`` or
    ``probability`` (Gymnasium's tuples, one array per game) is used as given."""

    def __init__(self, num_envs: int, num_actions: int, legal_mask: Callable[[], np.ndarray | None]) -> None:
        super().__init__(np.full(num_envs, num_actions, np.int64))
        self.bind(legal_mask)

    def sample(self, mask: tuple | None = None, probability: tuple | None = None) -> np.ndarray:
        legal = None
        if mask is None and probability is None and self._legal_mask is not None:
            legal = self._legal_mask()
        if legal is None:
            return super().sample(mask=mask, probability=probability)
        legal = np.array(legal, dtype=bool)
        legal[~legal.any(axis=1)] = True
        counts = legal.sum(axis=1)
        pick = (self.np_random.random(counts.size) * counts).astype(np.int64)
        return (legal.cumsum(axis=1) > pick[:, None]).argmax(axis=1).astype(self.dtype)


__all__ = ["ILLEGAL_ACTION_MODES", "LegalActionSpace", "LegalMultiDiscrete", "observation_box"]
