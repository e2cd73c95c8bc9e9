"""Monte-Carlo determinization, levels 4 and 5: sample the hidden cards, play every move out, keep the best.

For each decision (a row of ``act_batch``) the agent

1. rebuilds the information set from the observation alone and samples ``worlds``
   deals of the hidden cards consistent with it (:mod:`.determinize`: counts, cards
   played, what the exchange revealed);
2. copies every world once per legal action, applies that action, and plays the manche
   to its end with batched heuristic play for every seat (:mod:`.heuristic`) on the
   engine — all decisions, worlds and actions of the call in one batch;
3. takes the action with the best mean points over the worlds. The same worlds serve
   every action (common random numbers), so differences between actions are not
   drowned by the luck of the sample; ties go to the heuristic's own choice.

Levels (:data:`LEVELS`): ``mc-4`` plays every legal action out in 24 worlds; ``mc-5`` in 48,
then gives its three best actions 160 fresh worlds each (successive halving) and chooses by
the mean over all of them. Both roll out with heuristic-3. Only decisions with more than
one legal action are searched; the others cost a heuristic call.
The agent never reads hidden state: its only inputs are the observation and the mask
(tests prove the decision does not change when only the hidden cards change).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from president_env.core import engine
from president_env.core.registry import Seed
from president_env.core.rules import Rules

from .base import Agent, check_batch, decode
from .determinize import sample_worlds
from .heuristic import choose, choose_in_state


@dataclass(frozen=True)
class SearchConfig:
    """How hard a level searches."""

    worlds: int  # sampled deals of the hidden cards per decision, for every legal action
    rollout_level: int  # heuristic level that plays every seat in the rollouts
    refine_top: int = 0  # then the best few actions ...
    refine_worlds: int = 0  # ... are played out in this many fresh worlds each (successive halving)
    tie_bonus: float = 0.02  # points credited to the heuristic's own choice (breaks ties, damps noise)


LEVELS = {
    4: SearchConfig(worlds=24, rollout_level=3),
    5: SearchConfig(worlds=48, rollout_level=3, refine_top=3, refine_worlds=160),
}
# A rollout batch shrinks to its unfinished slots once this share of them has finished.
_COMPACT_AT = 0.3


class MonteCarloAgent(Agent):
    """Determinized Monte-Carlo search of ``level`` 4 or 5 (see the module docstring).

    Args:
        rules: the rules of the game.
        level: 4 or 5 (:data:`LEVELS`), or pass ``config`` for a custom search.
        seed: seed of the generator that samples the worlds.
        config: overrides the level's :class:`SearchConfig`.
    """

    def __init__(self, rules: Rules, level: int = 4, seed: Seed = None, config: SearchConfig | None = None) -> None:
        if config is None and level not in LEVELS:
            raise ValueError(f"Monte-Carlo level must be one of {tuple(LEVELS)}, got {level!r}")
        super().__init__(rules, seed)
        self.level = level
        self.config = config or LEVELS[level]
        self.name = f"mc-{level}"
        # Rollouts stop at the end of the manche: one-manche games, raw points as rewards.
        self._rollout_rules = rules.replace(manches=1)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The searched choice per row: each legal candidate scored by rollouts over sampled hidden hands."""
        observations, masks = check_batch(self.rules, observations, masks)
        view = decode(self.rules, observations)
        actions = choose(self.rules, view, masks, self.config.rollout_level)
        searched = np.flatnonzero(masks.sum(axis=1) > 1)
        if searched.size == 0:
            return actions
        config = self.config
        obs, legal = observations[searched], masks[searched]
        rows = np.arange(searched.size)
        values = self.action_values(obs, legal, config.worlds)
        values[rows, actions[searched]] += config.tie_bonus
        if config.refine_top and config.refine_worlds:
            # Successive halving: the best few actions get many more worlds, and the final
            # choice is by the mean over all the worlds each of them was played in.
            best = np.argsort(-values, axis=1, kind="stable")[:, : config.refine_top]
            finalists = np.zeros_like(legal)
            finalists[rows[:, None], best] = True
            finalists &= legal
            more = self.action_values(obs, finalists, config.refine_worlds)
            total = config.worlds + config.refine_worlds
            values = np.where(finalists, (values * config.worlds + more * config.refine_worlds) / total, -np.inf)
        actions[searched] = np.argmax(values, axis=1)
        return actions

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The decision and the mean points of every legal action over the worlds it was played out in.

        The values are those ``act`` computes (recorded on their way, not searched twice); an action
        refined by successive halving shows its mean over all its worlds. A decision with one legal
        action is not searched and shows no values.
        """
        passes: list[tuple[np.ndarray, np.ndarray, int]] = []
        search = self.action_values

        def recording(observations: np.ndarray, masks: np.ndarray, worlds: int | None = None) -> np.ndarray:
            values = search(observations, masks, worlds)
            passes.append((masks[0].copy(), values[0].copy(), worlds or self.config.worlds))
            return values

        self.action_values = recording
        try:
            action = self.act(observation, info)
        finally:
            del self.action_values
        totals: dict[int, float] = {}
        weights: dict[int, int] = {}
        for mask, values, worlds in passes:
            for a in np.flatnonzero(mask):
                totals[int(a)] = totals.get(int(a), 0.0) + float(values[a]) * worlds
                weights[int(a)] = weights.get(int(a), 0) + worlds
        values = {a: totals[a] / weights[a] for a in totals}
        return {"action": action, "measure": "mean points", "values": values}

    def action_values(self, observations: np.ndarray, masks: np.ndarray, worlds: int | None = None) -> np.ndarray:
        """``(D, A) float64``: mean points of each action of ``masks`` over ``worlds`` sampled worlds.

        Actions outside ``masks`` get ``-inf``. ``worlds`` defaults to the level's ``config.worlds``.
        """
        rules = self._rollout_rules
        worlds = worlds or self.config.worlds
        state = sample_worlds(rules, observations, worlds, self.rng)
        decision, action = np.nonzero(masks)  # one search branch per legal (decision, action)
        branch = np.repeat(np.arange(decision.size), worlds)
        world = np.repeat(decision * worlds, worlds) + np.tile(np.arange(worlds), decision.size)
        points = self._play_out(state.take(world), action[branch])
        totals = np.bincount(branch, weights=points, minlength=decision.size)
        values = np.full(masks.shape, -np.inf)
        values[decision, action] = totals / worlds
        return values

    def _play_out(self, state: engine.GameState, first_actions: np.ndarray) -> np.ndarray:
        """Play ``first_actions`` then :meth:`rollout_actions` to the end of the manche; ``(N,)`` points of seat 0.

        The rollout rules have one manche, so the step that ends it reports ``game_over`` and leaves
        the slot terminal: only the unfinished slots are stepped (``engine.step(slots=...)``), and the
        batch shrinks to them once enough have finished. Every action is drawn from the legal mask, so
        the steps skip the legality check, and they run on the Numba kernels where installed (the same
        games, faster).
        """
        rules = self._rollout_rules
        points = np.zeros(state.batch_size)
        alive = np.arange(state.batch_size)  # the slot of `points` each row of `state` plays
        finished = np.zeros(state.batch_size, bool)
        running = None  # rows of `state` still playing (None: all)
        actions = first_actions
        while True:
            events = engine.step(rules, state, actions, self.rng, reward_mode="points", slots=running, check=False)
            if events.game_over.any():
                rows = np.flatnonzero(~finished)[events.game_over] if running is not None else events.game_over
                points[alive[rows]] = events.rewards[events.game_over, 0]
                finished[rows] = True
                if finished.all():
                    return points
                if finished.mean() >= _COMPACT_AT:
                    keep = np.flatnonzero(~finished)
                    state, alive, finished = state.take(keep), alive[keep], finished[keep]
                running = np.flatnonzero(~finished) if finished.any() else None
            mask = engine.legal_mask(rules, state)
            if running is not None:
                mask[finished, 0] = True  # terminal rows get a dummy choice, never played
            actions = self.rollout_actions(state, mask)
            if running is not None:
                actions = actions[running]

    def rollout_actions(self, state: engine.GameState, mask: np.ndarray) -> np.ndarray:
        """``(N,)`` the move of the seat to act in every rollout slot (heuristic play at the level's
        ``rollout_level``); a subclass changes who plays the rollouts here."""
        return choose_in_state(self._rollout_rules, state, mask, self.config.rollout_level)
