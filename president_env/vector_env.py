"""``VecGame``: many games at once over the batched engine, with autoreset.

    game = VecGame(rules, batch_size=4096, seed=0)
    mask = game.legal_mask()                 # (B, A) bool
    obs = game.observe()                     # (B, obs_dim) float32, acting seat's view
    rewards, done = game.step(actions)       # rewards (B, P) by player; done (B,) bool

Slots whose game ended are dealt a new game in the same call (their rewards
and ``done`` describe the game that ended; ``last_positions`` and
``last_winner`` keep its outcome). All randomness comes from one
``numpy.random.Generator`` seeded at construction or by ``reset(seed=...)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import engine
from .observation import layout, observe
from .presets import resolve_rules
from .rules import Rules


class VecGame:
    """A batch of ``batch_size`` independent games of one ``Rules``.

    Args:
        rules: the rules, or a preset name (default: the standard game).
        batch_size: number of slots ``B``.
        seed: seed of the batch's random generator (an int, a ``SeedSequence`` or a ``Generator``).
        reward_mode: ``"zero_sum"`` (points minus the table mean, default), ``"normalized"`` (the same
            scaled into [-1, 1]) or ``"points"`` (raw points); see :func:`engine.reward_table`.
    """

    def __init__(
        self,
        rules: Rules | str | None = None,
        batch_size: int = 1,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        reward_mode: str = "zero_sum",
    ) -> None:
        self.rules = resolve_rules(rules)
        engine.reward_table(self.rules, reward_mode)  # validates reward_mode
        self.reward_mode = reward_mode
        self.state = engine.allocate(self.rules, batch_size)
        self.num_actions = self.rules.num_actions
        self.obs_dim = layout(self.rules).size
        self._mask: np.ndarray | None = None
        self.reset(seed=seed)

    @property
    def batch_size(self) -> int:
        return self.state.batch_size

    @property
    def current_player(self) -> np.ndarray:
        """``(B,) int64``: the player (i of ``player_i``) to act in each slot."""
        return self.state.player_at_seat[np.arange(self.batch_size), self.state.current].astype(np.int64)

    @property
    def current_seat(self) -> np.ndarray:
        """``(B,) int64``: the seat to act in each slot."""
        return self.state.current

    def reset(
        self,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        deals: Sequence | None = None,
        dealers: Sequence[int] | None = None,
        roles: Sequence | None = None,
    ) -> None:
        """Start a new game in every slot.

        Args:
            seed: reseeds the generator when given.
            deals: optional list of ``B`` deals, each one list of card strings per player.
            dealers: optional list of ``B`` first dealers (seats); else random. Only for games whose first
                manche has no roles: with drawn or supplied roles the Trou du cul deals (else ``ValueError``).
            roles: optional list of ``B`` role assignments (``None`` or per-player role names).
        Invalid input raises ``ValueError`` and leaves the games as they were.
        """
        rng = self.rng if seed is None and hasattr(self, "rng") else np.random.default_rng(seed)
        index = np.arange(self.batch_size)
        engine.new_games(self.rules, self.state, index, rng, deals=deals, dealers=dealers, roles=roles)
        self.rng = rng
        self._mask = None

    def redeal(self, deals: Sequence, slots: Sequence[int] | np.ndarray | None = None) -> None:
        """Replace the deal of the manche that ``slots`` (default: all) are about to play.

        Allowed only before the manche's first decision (right after ``reset`` or the step that
        ended the previous manche): duplicate tournaments and replays fix every manche's deal this
        way. Roles, dealer and seating are kept; the automatic half of the exchange is redone.
        """
        index = np.arange(self.batch_size) if slots is None else np.asarray(slots, dtype=np.int64)
        engine.redeal(self.rules, self.state, index, deals)
        self._mask = None

    def legal_mask(self) -> np.ndarray:
        """``(B, num_actions) bool`` legal actions of the player to act (read-only, cached until the next step)."""
        if self._mask is None:
            self._mask = engine.legal_mask(self.rules, self.state)
            self._mask.flags.writeable = False
        return self._mask

    def observe(self, players: np.ndarray | None = None) -> np.ndarray:
        """``(B, obs_dim) float32`` observation of the player to act, or of ``players (B,)`` when given."""
        viewer = None
        if players is not None:
            players = np.asarray(players, dtype=np.int64)
            viewer = self.state.seat_of_player[np.arange(self.batch_size), players].astype(np.int64)
        return observe(self.rules, self.state, viewer)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions (B,) int``; returns ``rewards (B, P) float32`` by player and ``done (B,) bool``."""
        mask = self.legal_mask()
        rewards, done = engine.step(self.rules, self.state, actions, self.rng, mask=mask, reward_mode=self.reward_mode)
        self._mask = None
        return rewards, done

    def state_dict(self) -> dict[str, Any]:
        """Everything the batch holds, to restore it exactly: ``{"state": {field: array copy}, "rng": dict}``."""
        arrays = {f.name: getattr(self.state, f.name).copy() for f in dataclasses.fields(engine.GameState)}
        return {"state": arrays, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output (arrays may be anything ``np.asarray`` reads, e.g. tensors).

        Every field must be present with this batch's shape; otherwise ``ValueError`` names the field and
        the games are left as they were.
        """
        arrays = {}
        for f in dataclasses.fields(engine.GameState):
            current = getattr(self.state, f.name)
            if f.name not in state.get("state", {}):
                raise ValueError(f"game state lacks the field {f.name!r}")
            value = np.asarray(state["state"][f.name])
            if value.shape != current.shape:
                raise ValueError(
                    f"game state field {f.name!r} has shape {value.shape}, this batch needs {current.shape}"
                )
            arrays[f.name] = value
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]  # raises on a malformed generator state, before any change
        for name, value in arrays.items():
            getattr(self.state, name)[...] = value
        self.rng = rng
        self._mask = None

    def hands_by_player(self) -> np.ndarray:
        """``(B, P, R) int8`` every player's hand (hidden information: for tests and tools, not agents)."""
        seats = self.state.seat_of_player.astype(np.int64)
        return np.take_along_axis(self.state.hands, seats[:, :, None], axis=1)

    @property
    def last_positions(self) -> np.ndarray:
        """``(B, P) int8`` finishing position of each player in the last finished manche (-1 before any)."""
        return self.state.last_positions

    @property
    def last_winner(self) -> np.ndarray:
        """``(B,) int8`` the player who won the last finished game in each slot (-1 before any)."""
        return self.state.last_winner
