"""The batched engine behind the one-game interface of ``ReferenceGame``, for the scripted rule tests.

A ``VecGame`` with one slot and raw-points rewards. After a manche the engine
has already dealt the next one at random; the adapter reports phase
``"needs_deal"`` until ``deal()`` replaces that deal (``VecGame.redeal``).
"""

from __future__ import annotations

import numpy as np

from president_env import Rules
from president_env.core.deals import ROLE_NAMES
from president_env.core.engine import PHASE_EXCHANGE
from president_env.core.vec_game import VecGame


class EngineGame:
    def __init__(self, rules: Rules, hands: list[list[str]], dealer: int | None = None, roles: list[str] | None = None):
        if roles is None and rules.initial_roles == "draw":
            raise ValueError("initial_roles='draw': the caller must pass the drawn roles (roles=...)")
        if dealer is None and roles is None:
            dealer = 0
        self.rules = rules
        self.game = VecGame(rules, batch_size=1, seed=0, reward_mode="points")
        self.game.reset(deals=[hands], dealers=None if dealer is None else [dealer], roles=[roles])
        self.finish_positions: list[int] | None = None
        self.done = False
        self.winner: int | None = None
        self._needs_deal = False
        self._final_scores: list[int] | None = None
        self._final_manche = 0
        self._frozen_order: list[int] | None = None  # the finished manche's order, until the next deal

    @property
    def state(self):
        return self.game.state

    @property
    def phase(self) -> str:
        if self.done:
            return "over"
        if self._needs_deal:
            return "needs_deal"
        return "exchange" if self.state.phase[0] == PHASE_EXCHANGE else "play"

    @property
    def current_player(self) -> int:
        return -1 if self.done or self._needs_deal else int(self.game.current_player[0])

    def legal_mask(self) -> list[bool]:
        if self.done or self._needs_deal:
            return [False] * self.rules.num_actions
        return self.game.legal_mask()[0].tolist()

    def step(self, action: int) -> list[float] | None:
        if self.done or self._needs_deal:
            raise ValueError(f"no action expected in phase {self.phase!r}")
        order, actor, manche = self.finish_order_so_far, self.current_player, int(self.state.manche[0])
        rewards, done = self.game.step(np.array([action]))
        if not (rewards.any() or done[0]):
            return None
        # A manche ends when its second-to-last player goes out: the one who just played.
        self._frozen_order = order + [actor]
        self.finish_positions = self.game.last_positions[0].tolist()
        if done[0]:
            self.done = True
            self.winner = int(self.game.last_winner[0])
            self._final_scores = self.state.last_scores[0].tolist()
            self._final_manche = manche
        else:
            self._needs_deal = True
        return rewards[0].tolist()

    def deal(self, hands: list[list[str]]) -> None:
        if not self._needs_deal:
            raise ValueError(f"deal() is only allowed in phase 'needs_deal', not {self.phase!r}")
        self.game.redeal([hands])
        self._needs_deal = False
        self._frozen_order = None

    @property
    def next_dealer(self) -> int:
        return int(self.state.dealer[0])

    @property
    def finish_order_so_far(self) -> list[int]:
        if self._frozen_order is not None:
            return list(self._frozen_order)
        order = self.state.out_order[0]
        seats = [int(s) for s in np.argsort(order) if order[s] >= 0]
        return [int(self.state.player_at_seat[0, s]) for s in seats]

    @property
    def scores(self) -> list[int]:
        return self._final_scores if self.done else self.state.scores[0].tolist()

    @property
    def roles(self) -> list[str] | None:
        by_seat = self.state.roles[0]
        if by_seat[0] < 0:
            return None
        return [ROLE_NAMES[by_seat[self.state.seat_of_player[0, p]]] for p in range(self.rules.n_players)]

    @property
    def seat_of_player(self) -> list[int]:
        return self.state.seat_of_player[0].tolist()

    @property
    def hands(self) -> list[list[int]]:
        return self.game.hands_by_player()[0].tolist()

    @property
    def revolution(self) -> bool:
        return bool(self.state.revolution[0])

    @property
    def manche_index(self) -> int:
        return self._final_manche if self.done else int(self.state.manche[0])
