"""Président as a Gymnasium vector env: ``N`` games in one batch, one learner seat each, opponents in batches.

    venv = president_env.vector_env(num_envs=1024, rules=rules, opponents="heuristic-3", seat=None)
    # or gymnasium.make_vec("president_env/President-v0", num_envs=1024, vectorization_mode="vector_entry_point", ...)
    obs, info = venv.reset(seed=0)                   # obs (N, obs_dim) float32; info["action_mask"] (N, A) int8
    obs, reward, terminated, truncated, info = venv.step(actions)   # actions (N,) int

A :class:`gymnasium.vector.VectorEnv` over one :class:`~president_env.VecGame` of ``N`` slots (not
``N`` single envs): game ``i`` is the single env :func:`president_env.gym_env` played in slot ``i``.

- **Spaces**: ``single_observation_space`` / ``single_action_space`` are the single env's
  (``Box(0, high, (obs_dim,), float32)``, ``Discrete(num_actions)``); ``observation_space`` and
  ``action_space`` are their batched forms ``(N, obs_dim)`` and ``MultiDiscrete([A] * N)``.
  ``action_space.sample()`` without a mask draws each learner's legal actions, as the single env's
  does (:class:`~president_env.envs.spaces.LegalMultiDiscrete`; an explicit ``mask`` is used as given).
- **Learner**: one player per game, ``seat=int`` (that player in every game) or ``seat=None``
  (drawn for every new game from the env's ``np_random``); ``info["player"]`` ``(N,)`` says which.
- **Opponents**: as for the single env (a name, a checkpoint path, an agent, a callable
  ``f(obs, mask)``, or a list with one per other player in player order; see
  :func:`president_env.core.registry.resolve`; an object with only ``act_batch`` is
  accepted too). After the learners' actions the opponents act
  until every game is back at its learner's turn or over: at each engine step, each distinct
  opponent object gets one ``act_batch(observations, masks)`` call for all the games where it is to
  act (one forward pass for a torch policy); objects without ``act_batch`` are asked row by row
  through ``act``. A single name or object serves every opponent seat (it acts for a batch of
  rows, so sharing it changes nothing but the number of calls).
- **Step**: ``reward (N,) float32`` the learner's manche rewards that fell during the step (its
  action and the opponents' until its next turn); ``terminated (N,) bool`` at the end of the game;
  ``truncated`` always False. ``info``: ``action_mask (N, A) int8`` (all 0 for a finished game),
  ``player (N,)``, ``scores (N, P) int32`` game totals by player, and with ``illegal_action="random"``
  ``illegal_action (N,) bool``. ``action_masks()`` gives the masks as bool.
- **Illegal actions**: as the single env. ``"random"`` (default) replaces each illegal learner
  action by a uniformly random legal one (``info["illegal_action"]``; the first time warns);
  ``"raise"`` raises ``ValueError`` naming the game and the reason, and changes nothing.
- **Autoreset** (``autoreset_mode``, declared in ``metadata["autoreset_mode"]``):
  ``"next_step"`` (default, Gymnasium's): the step that ends a game returns its final
  observation; the next ``step`` ignores that game's action, starts a new game and returns its
  first observation with reward 0. ``"same_step"``: the step that ends a game already returns the
  new game's first observation; the final one is in ``info["final_obs"]`` (object array, ``None``
  elsewhere, with the bool mask ``info["_final_obs"]``) and the finished games' infos in
  ``info["final_info"]`` (a dict of batched arrays with ``"_key"`` masks, as Gymnasium's
  ``SyncVectorEnv``). ``"disabled"``: a finished game stays finished (stepping it raises) until
  ``reset(options={"reset_mask": mask})``.
- **Terminal observation**: the table after the game's last play, from the learner's seat
  (final scores, the phase one-hot all 0), as the single env's (the AEC env's is the table before
  that play: ``docs/environment.md``).
- **Speed**: opponents with a compiled policy (``compiled_policy(rules)``: the registry's random agent, the
  heuristics; one object, or several offering the same, e.g. ``["heuristic-3"] * 3``) play all their decisions
  between two learner turns in one kernel call
  (:mod:`president_env.core.autoplay`, parallel over the games); the engine scores the manches that end there and
  deals the next in the order the Python loop deals them. The random agent's draws come from a counter-based stream
  per game keyed from its own generator at each step (the same whatever the number of threads). Other opponents act
  through Python, one call per engine step; their masks and steps run in the engine's compiled kernels, and those
  with ``act_views`` read the state's named views (:class:`~president_env.core.observation.StateViews`).
- **Seeding**: ``reset(seed=int)`` seeds the env's ``np_random``, which draws the seats, the
  game generator's seed and the opponents' seeds (``opponent.reset(seed=...)`` where they have
  one); a list of ``N`` seeds (Gymnasium's per-sub-env form) is folded into one ``SeedSequence``.
  The same seed and actions give the same games. ``reset()`` without a seed continues the streams.
  A seed that is not a non-negative integer (a float, text, ``None`` or a negative number, alone or in
  the list) raises ``ValueError`` naming it, as do options that are not a mapping; the env stays as it
  was. ``reset`` and ``step`` after ``close()`` raise ``RuntimeError`` (a closed env is not reopened).
- **Reset options**: ``"deals"`` (one deal per game, each one list of card strings per player),
  ``"dealers"`` (first dealer seat per game), ``"roles"`` (per game ``None`` or a role
  assignment), ``"seats"`` (the learner's player per game, for this reset), and
  ``"reset_mask"`` ``(N,) bool``: reset only those games (the others keep their state, and the
  returned arrays show them as they are). Per-game lists follow the reset games.
- **Render**: ``render_mode="ansi"``; ``render()`` returns the text of game ``render_index``
  (a constructor option, also an attribute) from its learner's seat.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from president_env.core import autoplay, engine, registry
from president_env.core.observation import StateViews, layout, observe
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.rules import Rules
from president_env.core.user_input import short_repr
from president_env.core.vec_game import VecGame
from president_env.envs.spaces import ILLEGAL_ACTION_MODES, LegalMultiDiscrete, observation_box
from president_env.game.render import render_for_mode, render_table

AUTORESET_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}
OPTION_KEYS = ("deals", "dealers", "roles", "seats", "reset_mask")
# The opponents' loop moves the still-running games to a smaller batch once they are fewer than
# this share of the batch they run in (and that batch is larger than _COMPACT_MIN).
_COMPACT_BELOW = 0.25
_COMPACT_MIN = 64
# A game the opponents finish before its learner's first decision is dealt again, at most this often.
_MAX_REDEALS = 100


class PresidentVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of one ``Rules``, one learner seat each; see the module docstring."""

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        rules: RulesSpec = None,
        opponents: Any = "random",
        seat: int | None = None,
        reward_mode: str = "zero_sum",
        render_mode: str | None = None,
        illegal_action: str = "random",
        autoreset_mode: str | AutoresetMode = "next_step",
        render_index: int = 0,
    ) -> None:
        self.rules = resolve_rules(rules)
        n = self.rules.n_players
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n
        ):
            raise ValueError(f"seat must be None or a player index in 0..{n - 1}, got {seat!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {', '.join(self.metadata['render_modes'])}")
        modes = {**AUTORESET_MODES, **{m: m for m in AUTORESET_MODES.values()}}
        if not isinstance(autoreset_mode, (str, AutoresetMode)) or autoreset_mode not in modes:
            raise ValueError(f"autoreset_mode must be one of {', '.join(AUTORESET_MODES)}, got {autoreset_mode!r}")
        self.autoreset_mode = modes[autoreset_mode]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.render_index = self._check_index(render_index)
        self.illegal_action = illegal_action
        self.seat = None if seat is None else int(seat)
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != n - 1:
                raise ValueError(f"opponents: expected one per other player ({n - 1}), got {len(opponents)}")
            self.opponents = [_resolve(o, self.rules) for o in opponents]
        else:
            self.opponents = [_resolve(opponents, self.rules)] * (n - 1)
        # Distinct opponent objects, and for each opponent position (0..P-2) the object that plays it.
        self._distinct: list[Any] = []
        for opponent in self.opponents:
            if not any(opponent is o for o in self._distinct):
                self._distinct.append(opponent)
        self._object_of_position = np.array(
            [next(k for k, o in enumerate(self._distinct) if o is opponent) for opponent in self.opponents]
        )
        # Opponents with ``act_views`` get the named views read from the state; those that declare
        # ``needs_observations = False`` (they read the masks only) get zeros; the others, the observations.
        self._by_views = [callable(getattr(o, "act_views", None)) for o in self._distinct]
        self._needs_observations = any(
            getattr(o, "needs_observations", True) and not views for o, views in zip(self._distinct, self._by_views)
        )
        # The registry's RandomAgent draws straight from its generator: what its act_batch does, less the checks
        # of masks that the engine made.
        self._draws = [type(o) is registry.RandomAgent for o in self._distinct]
        # Opponents that offer one compiled policy (the same decide and params: one object, or several alike, e.g.
        # three "heuristic-3" or three "random") play in one kernel call per loop (_play_compiled); the policies are
        # asked for at each call (a reseeded agent keys its own from its new generator).
        self._compiled = _one_policy([autoplay.compiled_policy(o, self.rules) for o in self._distinct]) is not None
        self._decisions = np.zeros(self.num_envs, np.int64)  # each game's opponent decisions in the compiled loop
        self.game = VecGame(self.rules, batch_size=self.num_envs, reward_mode=reward_mode, autoreset=False)
        self.obs_dim = layout(self.rules).size
        self.num_actions = self.rules.num_actions
        self.single_observation_space = observation_box(self.rules)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        # sample() draws each learner's legal actions, as the single env's action_space.sample() does.
        self.action_space = LegalMultiDiscrete(self.num_envs, self.num_actions, self._sampling_mask)
        self.learner = np.zeros(self.num_envs, np.int64) if seat is None else np.full(self.num_envs, seat, np.int64)
        self._rows = np.arange(self.num_envs)
        self._carried = np.zeros(self.num_envs, np.float32)
        self._needs_reset = np.zeros(self.num_envs, bool)  # next_step mode: games to restart at the next step
        self._mask: np.ndarray | None = None  # the learners' legal mask of the current state
        self._warned_illegal = False
        self._started = False

    # ---- helpers ------------------------------------------------------------------
    def _check_index(self, index: Any) -> int:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < self.num_envs:
            raise ValueError(f"render_index must be a game index in 0..{self.num_envs - 1}, got {index!r}")
        return int(index)

    def _sampling_mask(self) -> np.ndarray | None:
        """The learners' legal actions for ``action_space.sample()``; ``None`` before the first reset."""
        return self.game.legal_mask() if self._started else None

    def __setstate__(self, state: dict) -> None:
        # The action space comes back without its link to the game (see spaces._BoundToGame): rebind it.
        self.__dict__.update(state)
        self.action_space.bind(self._sampling_mask)

    def _require_open(self, what: str) -> None:
        if self.closed:
            raise RuntimeError(f"{what}() after close(): the env is closed, make a new one")

    def _require_reset(self, what: str) -> None:
        if not self._started:
            raise RuntimeError(f"{what}() before reset(): call reset() first")

    def _learner_player_at_turn(self, state: engine.GameState, rows: np.ndarray, games: np.ndarray) -> np.ndarray:
        """``(n,) bool``: in rows ``rows`` of ``state`` (games ``games``), is the learner to act?"""
        return state.player_at_seat[rows, state.current[rows]] == self.learner[games]

    def _opponent_actions(
        self, work: engine.GameState, active: np.ndarray, obs: np.ndarray, mask: np.ndarray, games: np.ndarray
    ) -> np.ndarray:
        """Actions of the opponents to act in rows ``active`` of ``work`` (games ``games``); ``obs`` and ``mask``
        follow ``active``."""
        acting = work.player_at_seat[active, work.current[active]].astype(np.int64)
        position = acting - (acting > self.learner[games])  # index among the other players
        objects = self._object_of_position[position]
        actions = np.empty(acting.size, np.int64)
        for k in range(len(self._distinct)):
            rows = np.flatnonzero(objects == k)
            if rows.size:
                views = StateViews(layout(self.rules), work, slots=active[rows]) if self._by_views[k] else None
                actions[rows] = self._act(k, None if obs is None else obs[rows], views, mask[rows])
        return actions

    def _act(self, k: int, obs: np.ndarray | None, views: dict | None, mask: np.ndarray) -> np.ndarray:
        """Actions of the distinct opponent ``k`` for the rows of ``obs`` / ``views`` / ``mask`` (``obs`` is
        ``None`` where no opponent reads observations: zeros are made for those that take them anyway)."""
        opponent = self._distinct[k]
        if self._draws[k]:
            return engine.sample_legal(mask, opponent.rng)
        if obs is None:
            obs = np.zeros((mask.shape[0], self.obs_dim), np.float32)
        if self._by_views[k]:
            return np.asarray(opponent.act_views(views, mask), dtype=np.int64).reshape(-1)
        if hasattr(opponent, "act_batch"):
            return np.asarray(opponent.act_batch(obs, mask), dtype=np.int64).reshape(-1)
        masks = mask.astype(np.int8)
        return np.array(
            [opponent.act({"observation": obs[i], "action_mask": masks[i]}, {}) for i in range(obs.shape[0])],
            dtype=np.int64,
        )

    def _advance(self, games: np.ndarray, reward: np.ndarray, terminated: np.ndarray) -> None:
        """Opponents act in ``games`` until each is at its learner's turn or over; adds the learner's rewards
        to ``reward (N,)`` and marks ended games in ``terminated (N,)``. Games already waiting never move."""
        state = self.game.state
        active = games[~self._learner_player_at_turn(state, games, games) & (state.phase[games] != engine.PHASE_OVER)]
        try:
            if self._compiled:
                self._play_compiled(active, reward, terminated)
            else:
                self._play_opponents(active, reward, terminated)
        finally:
            self.game.invalidate_mask()

    def _play_compiled(self, active: np.ndarray, reward: np.ndarray, terminated: np.ndarray) -> None:
        """The loop of :meth:`_advance` over the games ``active`` for an opponent with a compiled policy: one kernel
        call plays every game to its learner's turn or its manche's end (``autoplay.play``). The manches that end
        are scored and dealt by the engine in the order :meth:`_play_opponents` deals them, by the opponents'
        decision at which they ended, then by game (the same deals from the game's generator), and their games go
        on. All that ended are dealt at once; where a game so continued ends a manche again before the last of
        them ended (a whole manche without its learner: rare), that batch is undone and dealt decision by
        decision (:meth:`_deal_by_decision`)."""
        policies = [autoplay.compiled_policy(o, self.rules) for o in self._distinct]
        policy = _one_policy(policies)
        drawn = np.array([p.key() if p.key is not None else 0 for p in policies], np.uint64)  # one per object
        keys = drawn[self._object_of_position]  # by opponent position
        self._decisions[active] = 0
        ended = self._autoplay(active, policy, keys)
        while ended.size:
            decided = self._decisions[ended]
            ended = ended[np.lexsort((ended, decided))]  # by decision, then by game
            last = int(decided.max())
            saved = None
            if int(decided.min()) < last:  # a game dealt now may end again before the last of them ended
                saved = (self.game.state.take(ended), self.game.rng.bit_generator.state,  # (a new dict)
                         reward[ended], terminated[ended], self._decisions[ended])  # fmt: skip
            again = self._autoplay(self._end_manches(ended, reward, terminated), policy, keys)
            if saved is not None and self._ended_again_too_soon(again, last):
                _write_back(self.game.state, saved[0], ended)
                self.game.rng.bit_generator.state = saved[1]
                reward[ended], terminated[ended], self._decisions[ended] = saved[2:]
                self._deal_by_decision(ended, policy, keys, reward, terminated)
                return
            ended = again

    def _ended_again_too_soon(self, again: np.ndarray, last: int) -> bool:
        """Whether a game of ``again`` (its manche dealt in this batch ended too) ended it at or before decision
        ``last``, the batch's latest: its deal would then come before some of the batch's in the Python loop."""
        return bool(again.size) and int(self._decisions[again].min()) <= last

    def _autoplay(self, games: np.ndarray, policy: autoplay.CompiledPolicy, keys: np.ndarray) -> np.ndarray:
        """The compiled loop over ``games``; the games among them whose manche ended."""
        if not games.size:
            return games
        status = autoplay.play(self.rules, self.game.state, games, self.learner, policy, keys, self._decisions)
        if (status == autoplay.ILLEGAL).any():
            raise ValueError(f"an opponent chose an illegal action in game {int(games[status == autoplay.ILLEGAL][0])}")
        return games[status == autoplay.MANCHE_OVER]

    def _end_manches(self, games: np.ndarray, reward: np.ndarray, terminated: np.ndarray) -> np.ndarray:
        """Score the manches just ended in ``games`` and deal the next ones, in that order; the games that go on."""
        game = self.game
        events = engine.end_manches(self.rules, game.state, games, game.rng, game.reward_mode)
        reward[games] += events.rewards[np.arange(games.size), self.learner[games]]
        terminated[games[events.game_over]] = True
        return games[~events.game_over]

    def _deal_by_decision(
        self,
        ended: np.ndarray,
        policy: autoplay.CompiledPolicy,
        keys: np.ndarray,
        reward: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """:meth:`_play_compiled`'s exact order where a game ends several manches: the ended manches of the
        earliest decision first, and their games played on, until none ends."""
        while ended.size:
            decided = self._decisions[ended]
            first = decided == decided.min()
            now, ended = np.sort(ended[first]), ended[~first]
            ended = np.concatenate((ended, self._autoplay(self._end_manches(now, reward, terminated), policy, keys)))

    def _play_opponents(self, active: np.ndarray, reward: np.ndarray, terminated: np.ndarray) -> None:
        """The loop of :meth:`_advance` over the games ``active`` (their opponent is to act), each opponent decision
        a Python round trip: for opponents without a compiled policy."""
        rules, game, learner = self.rules, self.game, self.learner
        state = game.state
        work, work_games = state, None  # the batch the loop steps, and the game of each of its rows
        # The compiled kernels touch the acting rows only; observations are computed for a whole batch.
        compact = self._needs_observations
        single = len(self._distinct) == 1
        any_views = any(self._by_views)
        check = not all(self._draws)  # the random draws come from the engine's mask: legal by construction
        try:
            while active.size:
                if compact and active.size <= _COMPACT_BELOW * work.batch_size and work.batch_size > _COMPACT_MIN:
                    if work_games is not None:
                        _write_back(state, work, work_games)
                    active_games = active if work_games is None else work_games[active]
                    work, work_games = state.take(active_games), active_games
                    active = np.arange(active_games.size)
                active_games = active if work_games is None else work_games[active]
                slots = None if active.size == work.batch_size else active
                mask = engine.legal_mask(rules, work, slots)
                obs = None
                if self._needs_observations:
                    obs = observe(rules, work)
                    obs = obs if slots is None else obs[active]
                if single:
                    views = StateViews(layout(rules), work, slots=slots) if any_views else None
                    actions = self._act(0, obs, views, mask)
                else:
                    actions = self._opponent_actions(work, active, obs, mask, active_games)
                try:
                    events = engine.step(
                        rules,
                        work,
                        actions,
                        game.rng,
                        mask=mask,
                        reward_mode=game.reward_mode,
                        slots=slots,
                        check=check,
                    )
                except ValueError as error:
                    raise ValueError(f"an opponent chose an illegal action: {error}") from None
                going_on = ~self._learner_player_at_turn(work, active, active_games)
                ended = events.manche_over.nonzero()[0]
                if ended.size:
                    ended_games = active_games[ended]
                    reward[ended_games] += events.rewards[ended, learner[ended_games]]
                    terminated[ended_games[events.game_over[ended]]] = True
                    going_on &= ~events.game_over
                active = active[going_on]
        finally:  # the games moved to a smaller batch go back, also when an opponent failed
            if work_games is not None:
                _write_back(state, work, work_games)

    def _deal(self, games: np.ndarray, options: dict[str, Any], where: np.ndarray, seats: np.ndarray | None) -> None:
        """New games in ``games``: the learner's player (given, fixed or drawn) and the deal (``options`` of the
        reset games, ``where`` the positions of ``games`` among them)."""
        if seats is not None:
            self.learner[games] = seats[where]
        elif self.seat is None:
            self.learner[games] = self.np_random.integers(self.rules.n_players, size=games.size)
        self.game.reset(slots=games, **_pick(options, where))

    def _start_games(self, games: np.ndarray, options: dict[str, Any], seats: np.ndarray | None) -> np.ndarray:
        """New games in ``games`` (sorted; options validated), opponents played to each learner's first turn;
        returns the learner's rewards carried to its first step. Redeals the rare games the opponents end alone."""
        self._deal(games, options, np.arange(games.size), seats)
        carried = np.zeros(self.num_envs, np.float32)
        over = np.zeros(self.num_envs, bool)
        self._advance(games, carried, over)
        self._redeal_finished(games, options, seats, carried, over)
        return carried[games]

    def _redeal_finished(self, games, options, seats, carried: np.ndarray, over: np.ndarray) -> None:
        """Deal again the games of ``games`` that ``over`` marks (the opponents ended them before the learner's
        first decision), as the single env does, updating ``carried``."""
        todo = np.flatnonzero(over)
        for _ in range(_MAX_REDEALS):
            if not todo.size:
                return
            self._deal(todo, options, np.searchsorted(games, todo), seats)
            carried[todo] = 0.0
            over[:] = False
            self._advance(todo, carried, over)
            todo = np.flatnonzero(over)
        raise RuntimeError(f"the opponents finished {_MAX_REDEALS} games in a row without the learner acting")

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        state = self.game.state
        viewer = state.seat_of_player[self._rows, self.learner].astype(np.int64)
        obs = observe(self.rules, state, viewer)
        self._mask = self.game.legal_mask()
        info: dict[str, Any] = {
            "action_mask": self._mask.astype(np.int8),
            "player": self.learner.copy(),
            "scores": state.scores.copy(),
        }
        return obs, info

    def _final(self, ended: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Final observations and infos of the games ``ended`` (same-step autoreset), before they restart."""
        final = self.game.state.take(ended)
        viewer = final.seat_of_player[np.arange(ended.size), self.learner[ended]].astype(np.int64)
        info = {
            "action_mask": np.zeros((ended.size, self.num_actions), np.int8),
            "player": self.learner[ended],
            "scores": final.scores,
        }
        return observe(self.rules, final, viewer), info

    # ---- gymnasium API ------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(N, num_actions) bool``: each learner's legal actions now (all False for a finished game)."""
        self._require_reset("action_masks")
        return self.game.legal_mask().copy()

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game anew (``seed``: one seed, or one per game); ``(observations (N, obs_dim), info)`` with
        ``info["action_mask"]``."""
        self._require_open("reset")
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(
                f"options must be a dict with keys among {', '.join(OPTION_KEYS)}, got {short_repr(options)}"
            )
        options = dict(options or {})
        seeds = self._check_seed(seed)  # everything is checked before the env changes
        unknown = sorted(str(k) for k in options if k not in OPTION_KEYS)
        if unknown:
            raise ValueError(f"reset: unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}")
        games = self._reset_games(options.pop("reset_mask", None))
        seats = self._check_seats(options.pop("seats", None), games.size)
        _check_options(self.rules, options, games.size)
        if isinstance(seeds, list):
            self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seeds)))
            self._np_random_seed = -1
        elif seeds is not None:
            super().reset(seed=seeds)
        if seed is not None or not self._started:
            rng = self.np_random
            self.game.rng = np.random.default_rng(int(rng.integers(2**63)))
            for opponent in self._distinct:
                if hasattr(opponent, "reset"):
                    opponent.reset(seed=int(rng.integers(2**63)))
        self._started = True
        self._carried[games] = self._start_games(games, options, seats)
        self._needs_reset[games] = False
        obs, info = self._observe()
        return obs, info

    def _check_seed(self, seed: Any) -> int | list[int] | None:
        """``seed`` as ``None``, a non-negative int, or a list of ``num_envs`` of them; ``ValueError`` naming the
        bad value (a float, text, a negative number, ``None`` in a list) and changing nothing."""
        usage = f"seed must be None, a non-negative integer or a list of num_envs={self.num_envs} of them"
        if seed is None:
            return None
        if isinstance(seed, (list, tuple, np.ndarray)):
            values = list(np.asarray(seed, dtype=object).ravel()) if isinstance(seed, np.ndarray) else list(seed)
            if len(values) != self.num_envs or (isinstance(seed, np.ndarray) and seed.ndim != 1):
                raise ValueError(f"{usage}; got a list of {len(values)}")
            for i, value in enumerate(values):
                if not _is_seed(value):
                    raise ValueError(f"{usage}; entry {i} of the list is {short_repr(value)}")
            return [int(value) for value in values]
        if not _is_seed(seed):
            raise ValueError(f"{usage}; got {short_repr(seed)}")
        return int(seed)

    def _reset_games(self, reset_mask: Any) -> np.ndarray:
        if reset_mask is None:
            return self._rows.copy()
        mask = np.asarray(reset_mask)
        if mask.shape != (self.num_envs,) or mask.dtype != bool:
            raise ValueError(
                f"reset_mask must be a bool array of shape ({self.num_envs},), got {mask.dtype} {mask.shape}"
            )
        if not self._started and not mask.all():
            raise ValueError("the first reset() must reset every game (no reset_mask, or one of all True)")
        return np.flatnonzero(mask)

    def _check_seats(self, seats: Any, n: int) -> np.ndarray | None:
        if seats is None:
            return None
        values = np.asarray(seats)
        p = self.rules.n_players
        if values.shape != (n,) or values.dtype.kind not in "iu" or np.any((values < 0) | (values >= p)):
            raise ValueError(f"seats: expected {n} player indices in 0..{p - 1} (one per reset game), got {seats!r}")
        return values.astype(np.int64)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner action per game, then the opponents' until each learner acts again; finished games are dealt anew
        (Gymnasium autoreset)."""
        self._require_open("step")
        self._require_reset("step")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), got {actions.dtype} {actions.shape}"
            )
        actions = actions.astype(np.int64)
        restart = self._needs_reset if self.autoreset_mode == AutoresetMode.NEXT_STEP else None
        mask = self.game.legal_mask() if self._mask is None else self._mask
        over = self.game.game_over
        playing = ~over if restart is None else ~over & ~restart
        if self.autoreset_mode == AutoresetMode.DISABLED and over.any():
            raise ValueError(
                f"game {int(np.flatnonzero(over)[0])} is over: reset it (reset(options={{'reset_mask': mask}})) "
                "before stepping it (autoreset_mode='disabled')"
            )
        in_range = (actions >= 0) & (actions < self.num_actions)
        legal = in_range & mask[self._rows, np.where(in_range, actions, 0)]
        illegal = playing & ~legal
        if illegal.any():
            if self.illegal_action == "raise":
                i = int(np.flatnonzero(illegal)[0])
                reason = engine.describe_illegal(self.rules, self.game.state, i, int(actions[i]))
                raise ValueError(
                    f"illegal action {int(actions[i])} in game {i} (learner player_{self.learner[i]}): {reason}"
                )
            if not self._warned_illegal:
                warnings.warn(
                    "president vector env: illegal learner action(s) replaced by random legal ones "
                    "(info['illegal_action']); pass illegal_action='raise' to get an error instead",
                    stacklevel=2,
                )
                self._warned_illegal = True
            actions[illegal] = engine.sample_legal(mask[illegal], self.np_random)
        reward = np.zeros(self.num_envs, np.float32)
        terminated = np.zeros(self.num_envs, bool)
        # Next-step autoreset: the finished games are dealt anew now, and their opponents play to the learner's
        # first turn in the same batch as the other games' opponents.
        restarted = np.flatnonzero(restart) if restart is not None else np.zeros(0, np.int64)
        if restarted.size:
            self._deal(restarted, {}, np.arange(restarted.size), None)
            restart[:] = False
        rows = np.flatnonzero(playing)
        going_on = rows
        if rows.size:
            whole = rows.size == self.num_envs
            game = self.game
            events = engine.step(  # every action of the playing games is legal now (checked or replaced above)
                self.rules,
                game.state,
                actions if whole else actions[rows],
                game.rng,
                reward_mode=game.reward_mode,
                slots=None if whole else rows,
                check=False,
            )
            game.invalidate_mask()
            reward[rows] = self._carried[rows] + events.rewards[np.arange(rows.size), self.learner[rows]]
            self._carried[rows] = 0.0
            terminated[rows] = events.game_over
            going_on = rows[~events.game_over]
        if restarted.size:
            moving = np.zeros(self.num_envs, bool)
            moving[going_on] = True
            moving[restarted] = True
            going_on = np.flatnonzero(moving)
        self._advance(going_on, reward, terminated)
        if restarted.size:
            self._carried[restarted] = reward[restarted]
            reward[restarted] = 0.0
            over = np.zeros(self.num_envs, bool)
            over[restarted] = terminated[restarted]
            terminated[restarted] = False
            self._redeal_finished(restarted, {}, None, self._carried, over)
        final: tuple[np.ndarray, dict[str, Any]] | None = None
        ended = np.flatnonzero(terminated)
        if ended.size:
            if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                self._needs_reset[ended] = True
            elif self.autoreset_mode == AutoresetMode.SAME_STEP:
                final = self._final(ended)
                self._carried[ended] = self._start_games(ended, {}, None)
        obs, info = self._observe()
        if final is not None:
            # As Gymnasium's SyncVectorEnv: final_obs an object array, final_info a dict of batched arrays,
            # each with its "_key" mask of the games it holds.
            info["final_obs"] = np.full(self.num_envs, None, dtype=object)
            for k, i in enumerate(ended):
                info["final_obs"][i] = final[0][k]
            final_info: dict[str, np.ndarray] = {}
            for key, value in final[1].items():
                batched = np.zeros((self.num_envs, *value.shape[1:]), value.dtype)
                batched[ended] = value
                final_info[key], final_info[f"_{key}"] = batched, terminated.copy()
            info["final_info"] = final_info
            info["_final_obs"] = terminated.copy()
            info["_final_info"] = terminated.copy()
        if self.illegal_action == "random":
            info["illegal_action"] = illegal
        return obs, reward, terminated, np.zeros(self.num_envs, bool), info

    def render(self) -> str | None:
        """Game ``render_index`` as text, from its learner's seat."""
        self._require_reset("render")
        i = self.render_index
        return render_for_mode(
            self.render_mode,
            lambda: f"game {i}:\n" + render_table(self.rules, self.game, i, int(self.learner[i])),
            "president_env.vector_env()",
        )


def _resolve(opponent: Any, rules: Rules) -> Any:
    """An object with ``act_batch`` as it is (batched play needs nothing else), else the single env's resolution."""
    if not isinstance(opponent, str) and callable(getattr(opponent, "act_batch", None)):
        return opponent
    return registry.resolve(opponent, rules, None)


def _one_policy(policies: list[autoplay.CompiledPolicy | None]) -> autoplay.CompiledPolicy | None:
    """The compiled policy every opponent object offers (one ``decide``, the same ``params`` and scratch; each object
    keeps its own random key), else ``None``."""
    first = policies[0]
    for p in policies:
        if p is None or p.decide is not first.decide or p.params is not first.params or p.scratch != first.scratch:
            return None
    return first


def _is_seed(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 0


def _write_back(state: engine.GameState, work: engine.GameState, games: np.ndarray) -> None:
    """Copy the rows of ``work`` back to ``state`` at ``games``."""
    for whole, rows in zip(state, work):  # a GameState is a named tuple of arrays
        whole[games] = rows


def _check_options(rules: Rules, options: dict[str, Any], n: int) -> None:
    """Reset options of ``n`` games, validated by dealing them into a scratch batch (nothing of the env changes)."""
    for key in ("deals", "dealers", "roles"):
        value = options.get(key)
        if value is not None and (isinstance(value, (str, bytes)) or len(value) != n):
            raise ValueError(f"{key}: expected a list of {n} entries (one per reset game), got {value!r:.80}")
    if n and any(options.get(key) is not None for key in ("deals", "dealers", "roles")):
        scratch = engine.allocate(rules, n)
        engine.new_games(rules, scratch, np.arange(n), np.random.default_rng(0), **_pick(options, np.arange(n)))


def _pick(options: dict[str, Any], where: np.ndarray) -> dict[str, Any]:
    """The reset options of the games at positions ``where`` of the reset games."""
    picked = {}
    for key in ("deals", "dealers", "roles"):
        if options.get(key) is not None:
            value = options[key]
            picked[key] = [value[int(i)] for i in where]
    return picked


def vector_env(
    num_envs: int = 1,
    rules: RulesSpec = None,
    opponents: Any = "random",
    seat: int | None = None,
    reward_mode: str = "zero_sum",
    render_mode: str | None = None,
    **kwargs: Any,
) -> PresidentVectorEnv:
    """A :class:`PresidentVectorEnv` of ``num_envs`` games (see the module docstring for the options)."""
    return PresidentVectorEnv(
        num_envs=num_envs,
        rules=rules,
        opponents=opponents,
        seat=seat,
        reward_mode=reward_mode,
        render_mode=render_mode,
        **kwargs,
    )


__all__ = ["AUTORESET_MODES", "PresidentVectorEnv", "vector_env"]
