"""The Gymnasium spaces every view of the game shares: the observation's ``Box`` and the legal-sampling ``Discrete``.

The AEC env, the Gymnasium single env and the vector env stand side by side on the core; what they share about
spaces lives here, once: the observation ``Box`` with the bound of the observation spec
(:attr:`~president_env.observation.ObservationSpec.high`), the action space whose ``sample()`` draws a legal
action, and the illegal-action modes of the Gymnasium envs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import spaces

from .actions import as_action
from .observation import layout
from .rules import Rules

ILLEGAL_ACTION_MODES = ("raise", "random")
"""What the Gymnasium envs do with an illegal learner action: raise ``ValueError``, or play a random legal one."""


def observation_box(rules: Rules) -> spaces.Box:
    """``Box(0, high, (obs_dim,), float32)``: the observation vector of ``rules``, bounded by its spec."""
    spec = layout(rules)
    return spaces.Box(0.0, float(spec.high), (spec.size,), np.float32)


class LegalActionSpace(spaces.Discrete):
    """``Discrete(num_actions)`` whose ``sample()`` without a mask draws among the actions legal now.

    ``contains`` is the plain discrete check; only sampling looks at the game, so that
    ``action_space.sample()`` (random exploration, the env checkers of Gymnasium and RLlib) gives an
    action the env accepts when its owner is to act. An explicit ``mask`` or ``probability`` is used
    as given, and when no action is legal (not this agent's turn, or the game is over) the draw is
    over the whole space.
    """

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._legal_mask: Callable[[], np.ndarray] | None = legal_mask

    def bind(self, legal_mask: Callable[[], np.ndarray]) -> None:
        """Draw :meth:`sample` among the actions ``legal_mask()`` allows: the owning env links its space to its game
        on creation and again after unpickling (a pickled space samples like a plain ``Discrete``)."""
        self._legal_mask = legal_mask

    def __getstate__(self) -> dict:
        # Pickled alone (a saved SB3 model keeps its action space), the space must not drag its env along:
        # the copy samples like a plain Discrete. Pickled with its env, the env rebinds it in __setstate__.
        state = self.__dict__.copy()
        state["_legal_mask"] = None
        return state

    def contains(self, x) -> bool:
        """In range and an integer as the env accepts it (:func:`~president_env.actions.as_action`): also NumPy
        integers of any dtype (``uint64`` included) and integer arrays of shape ``(1,)``."""
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


__all__ = ["ILLEGAL_ACTION_MODES", "LegalActionSpace", "observation_box"]
