"""The compiled (Numba) path of ``engine.step`` / ``engine.legal_mask`` against the NumPy path: one truth.

Two batches from the same seed play the same random legal actions on random subsets of their slots, one through
the NumPy code and one with ``compiled=True``; masks, step results and every field of the state must be equal
after every step, on every preset and random rule sets (gives, passes, skips, revolutions, penalties, manche
and game ends included). Skipped where Numba is not installed (the core install).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import rule_sets, rules_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lockstep import lockstep

from president_env import compiled, engine
from president_env.observation import StateViews, layout, observe
from president_env.rules import Rules
from president_env.vec_game import VecGame

pytest.importorskip("numba")


class EngineSide:
    """A ``VecGame`` stepped through ``engine.step`` on the NumPy path or the compiled one, for the harness."""

    def __init__(self, rules: Rules, seed: int, batch: int, compiled: bool) -> None:
        self.rules, self.game, self.compiled = rules, VecGame(rules, batch_size=batch, seed=seed), compiled

    def facts(self) -> dict:
        state = self.game.state
        fields = {name: getattr(state, name) for name in engine.GameState.__dataclass_fields__}
        return {"mask": engine.legal_mask(self.rules, state, compiled=self.compiled), **fields}

    def step(self, action: tuple) -> dict:
        """``action``: the slots to step (``None``: all) and their actions; the games that end are dealt anew."""
        subset, actions = action
        game = self.game
        mask = engine.legal_mask(self.rules, game.state, subset, compiled=self.compiled)
        whole = engine.legal_mask(self.rules, game.state, compiled=self.compiled)
        assert np.array_equal(mask, whole if subset is None else whole[subset])  # some slots = those of all
        events = engine.step(self.rules, game.state, actions, game.rng, slots=subset, compiled=self.compiled)
        over = np.flatnonzero(game.game_over)
        if over.size:
            game.reset(slots=over)
        return {"mask of the slots": mask, **events._asdict()}


def play_both(rules: Rules, seed: int, steps: int, batch: int = 12) -> None:
    """The NumPy path and the compiled one from one seed: some slots at a time, the whole batch every 5th step."""
    rng = np.random.default_rng(seed + 1)

    def choose(facts: dict, t: int) -> tuple:
        slots = np.flatnonzero(rng.random(batch) < 0.7)
        subset = None if t % 5 == 0 else slots
        mask = facts["mask"] if subset is None else facts["mask"][subset]
        return subset, engine.sample_legal(mask, rng)

    lockstep(
        EngineSide(rules, seed, batch, compiled=False),
        EngineSide(rules, seed, batch, compiled=True),
        choose=choose,
        until=lambda result, t: t >= steps,
        context=f"{rules} seed {seed}",
    )


@pytest.fixture(autouse=True)
def compiled_on(monkeypatch):
    monkeypatch.delenv(compiled.ENV_SWITCH, raising=False)
    compiled.available.cache_clear()
    yield
    compiled.available.cache_clear()


@pytest.mark.parametrize("rules", rule_sets(n_random=8, seed=21), ids=lambda r: f"{r.n_players}p-{r.equal_rank}")
def test_compiled_step_and_mask_equal_the_numpy_path(rules):
    assert compiled.available() and compiled.path_name() == "numba"
    play_both(rules.replace(manches=2), seed=5, steps=300)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_compiled_path_on_random_rule_sets(rules, seed):
    play_both(rules, seed=seed, steps=120, batch=6)


def test_illegal_actions_raise_before_anything_changes():
    rules = Rules()
    game = VecGame(rules, batch_size=3, seed=0)
    before = game.state.copy()
    mask = engine.legal_mask(rules, game.state, compiled=True)
    bad = np.flatnonzero(~mask[1])[0]
    actions = np.array([np.flatnonzero(mask[0])[0], bad, np.flatnonzero(mask[2])[0]])
    with pytest.raises(ValueError, match="slot 1"):
        engine.step(rules, game.state, actions, game.rng, compiled=True)
    for name in engine.GameState.__dataclass_fields__:
        assert np.array_equal(getattr(before, name), getattr(game.state, name)), name


def test_the_switch_keeps_the_numpy_path(monkeypatch):
    monkeypatch.setenv(compiled.ENV_SWITCH, "0")
    compiled.available.cache_clear()
    assert not compiled.available() and compiled.path_name() == "numpy"
    play_both(Rules(), seed=1, steps=40)


def test_state_views_read_from_some_slots_equal_the_decoded_observations():
    rules = Rules(n_players=5, manches=2, twos_wild=True, revolution=True)
    game = VecGame(rules, batch_size=16, seed=2)
    rng = np.random.default_rng(3)
    lay = layout(rules)
    for _ in range(60):
        slots = np.flatnonzero(rng.random(16) < 0.5)
        views = StateViews(lay, game.state, slots=slots)
        decoded = lay.view(observe(rules, game.state)[slots])
        assert list(views) == list(decoded) and len(views) == len(decoded)
        for name, value in decoded.items():
            assert views[name].dtype == value.dtype and np.array_equal(views[name], value), name
        game.step(engine.sample_legal(game.legal_mask(), rng))
