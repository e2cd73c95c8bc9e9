"""``VecGame``: many games at once over the batched engine, with autoreset.

The batched game itself, every seat's decisions in one array; not a Gymnasium ``VectorEnv`` (that is
:func:`president_env.vector_env` in ``gym_vector_env.py``, one learner seat per game, built on a ``VecGame``).

    game = VecGame(rules, batch_size=4096, seed=0)
    mask = game.legal_mask()                 # (B, A) bool
    obs = game.observe()                     # (B, obs_dim) float32, acting seat's view
    rewards, done = game.step(actions)       # rewards (B, P) by player; done (B,) bool
    events = game.step_events(actions)       # StepResult(rewards, manche_over, game_over)

With ``autoreset=True`` (default) slots whose game ended are dealt a new game in
the same call (their rewards and ``done`` describe the game that ended;
``last_positions`` and ``last_winner`` keep its outcome). With
``autoreset=False`` they stay terminal (no legal action, the final table
observable) until ``reset(slots=...)``. All randomness comes from one
``numpy.random.Generator`` seeded at construction or by ``reset(seed=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from president_env.core import engine
from president_env.core.observation import layout, observe
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.state import FIELDS


class VecGame:
    """A batch of ``batch_size`` independent games of one ``Rules``.

    Args:
        rules: a rules spec (``Rules``, preset name, YAML path, mapping or YAML text: ``presets.resolve_rules``).
        batch_size: number of slots ``B``.
        seed: seed of the batch's random generator (an int, a ``SeedSequence`` or a ``Generator``).
        reward_mode: ``"zero_sum"`` (points minus the table mean, default), ``"normalized"`` (the same
            scaled into [-1, 1]) or ``"points"`` (raw points); see :func:`engine.reward_table`.
        autoreset: deal a new game into a slot in the step that ended its game (default); with ``False`` the
            slot stays terminal (:attr:`game_over`) until :meth:`reset` with ``slots``.
    """

    def __init__(
        self,
        rules: RulesSpec = None,
        batch_size: int = 1,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        reward_mode: str = "zero_sum",
        autoreset: bool = True,
    ) -> None:
        self.rules = resolve_rules(rules)
        if not isinstance(autoreset, (bool, np.bool_)):
            raise ValueError(f"autoreset must be True or False, got {autoreset!r}")
        self.autoreset = bool(autoreset)
        self.last_events: engine.StepResult | None = None
        engine.reward_table(self.rules, reward_mode)  # validates reward_mode
        self.reward_mode = reward_mode
        self.state = engine.allocate(self.rules, batch_size)
        self.num_actions = self.rules.num_actions
        self.obs_dim = layout(self.rules).size
        self._mask: np.ndarray | None = None
        self.reset(seed=seed)

    @property
    def batch_size(self) -> int:
        """The number of games ``B`` played at once."""
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
        slots: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        """Start a new game in every slot, or in ``slots`` only (the others are left as they are).

        Args:
            seed: reseeds the generator when given.
            deals: optional list of deals, one per reset slot, each one list of card strings per player.
            dealers: optional list of first dealers (seats), one per reset slot; else random. Only for games whose
                first manche has no roles: with drawn or supplied roles the Trou du cul deals (else ``ValueError``).
            roles: optional list of role assignments (``None`` or per-player role names), one per reset slot.
            slots: the slots to reset (default: all).
        Invalid input raises ``ValueError`` and leaves the games as they were.
        """
        if slots is None:
            index = np.arange(self.batch_size)
        else:
            index = np.asarray(slots)
            if (
                index.ndim != 1
                or index.dtype.kind not in "iu"
                or np.any((index < 0) | (index >= self.batch_size))
                or np.unique(index).size != index.size
            ):
                raise ValueError(f"slots must be distinct slot numbers in 0..{self.batch_size - 1}, got {slots!r}")
            index = index.astype(np.int64)
        rng = self.rng if seed is None and hasattr(self, "rng") else np.random.default_rng(seed)
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

    def invalidate_mask(self) -> None:
        """Forget the cached :meth:`legal_mask`: for a caller that changed :attr:`state` itself (``engine.step`` on
        some slots, as the vector env does) rather than through :meth:`step`, :meth:`reset` or :meth:`redeal`."""
        self._mask = None

    def legal_mask(self) -> np.ndarray:
        """``(B, num_actions) bool`` legal actions of the player to act (read-only, cached until the next step, or
        until :meth:`invalidate_mask`)."""
        if self._mask is None:
            self._mask = engine.legal_mask(self.rules, self.state)
            self._mask.flags.writeable = False
        return self._mask

    def observe(
        self, players: np.ndarray | None = None, out: np.ndarray | None = None, slots: np.ndarray | None = None
    ) -> np.ndarray:
        """``(B, obs_dim) float32`` observation of the player to act, or of ``players (B,)`` when given; with
        ``slots (n,) int``, of those slots only (``players`` then follows ``slots``). Written by the observation
        kernel into ``out`` when given (a caller's buffer, ``(n, obs_dim) float32`` with contiguous rows: nothing is
        copied), and returned (``observation.observe``)."""
        viewer = None
        if players is not None:
            rows = np.arange(self.batch_size) if slots is None else np.asarray(slots, dtype=np.int64)
            players = np.asarray(players, dtype=np.int64)
            viewer = self.state.seat_of_player[rows, players].astype(np.int64)
        return observe(self.rules, self.state, viewer, out=out, slots=slots)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Play ``actions (B,) int``; returns ``rewards (B, P) float32`` by player and ``done (B,) bool``."""
        events = self.step_events(actions)
        return events.rewards, events.game_over

    def step_events(self, actions: np.ndarray) -> engine.StepResult:
        """Play ``actions (B,) int``; returns the engine's :class:`~president_env.core.engine.StepResult`
        ``(rewards (B, P), manche_over (B,), game_over (B,))``, also kept as :attr:`last_events`.

        With ``autoreset`` the slots whose game ended are dealt a new game before this returns.
        Stepping a terminal slot (``autoreset=False``) raises ``ValueError``.
        """
        mask = self.legal_mask()
        events = engine.step(self.rules, self.state, actions, self.rng, mask=mask, reward_mode=self.reward_mode)
        self._mask = None
        if self.autoreset and events.game_over.any():
            engine.new_games(self.rules, self.state, np.flatnonzero(events.game_over), self.rng)
        self.last_events = events
        return events

    @property
    def game_over(self) -> np.ndarray:
        """``(B,) bool``: slots whose game ended and that wait for :meth:`reset` (only with ``autoreset=False``)."""
        return self.state.phase == engine.PHASE_OVER

    def state_dict(self) -> dict[str, Any]:
        """Everything the batch holds, to restore it exactly: ``{"state": {field: array copy}, "rng": dict}``."""
        arrays = {name: getattr(self.state, name).copy() for name in FIELDS}
        return {"state": arrays, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output (arrays may be anything ``np.asarray`` reads, e.g. tensors).

        Every field must be present with this batch's shape; otherwise ``ValueError`` names the field and
        the games are left as they were.
        """
        arrays = {}
        for name in FIELDS:
            current = getattr(self.state, name)
            if name not in state.get("state", {}):
                raise ValueError(f"game state lacks the field {name!r}")
            value = np.asarray(state["state"][name])
            if value.shape != current.shape:
                raise ValueError(f"game state field {name!r} has shape {value.shape}, this batch needs {current.shape}")
            arrays[name] = value
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
