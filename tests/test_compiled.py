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

from president_env import compiled, engine
from president_env.observation import StateViews, layout, observe
from president_env.rules import Rules
from president_env.vec_game import VecGame

pytest.importorskip("numba")


def play_both(rules: Rules, seed: int, steps: int, batch: int = 12) -> None:
    numpy_game, compiled_game = (VecGame(rules, batch_size=batch, seed=seed) for _ in range(2))
    rng = np.random.default_rng(seed + 1)
    for t in range(steps):
        slots = np.flatnonzero(rng.random(batch) < 0.7)
        subset = None if t % 5 == 0 else slots  # the whole batch sometimes
        expected = engine.legal_mask(rules, numpy_game.state)
        expected = expected if subset is None else expected[subset]
        got = engine.legal_mask(rules, compiled_game.state, subset, compiled=True)
        assert got.dtype == bool and np.array_equal(got, expected), f"{rules} step {t}: masks"
        assert np.array_equal(engine.legal_mask(rules, numpy_game.state, subset), expected)  # NumPy, some slots
        actions = engine.sample_legal(expected, rng)
        ours = engine.step(rules, numpy_game.state, actions, numpy_game.rng, slots=subset)
        theirs = engine.step(rules, compiled_game.state, actions, compiled_game.rng, slots=subset, compiled=True)
        for name, a, b in zip(ours._fields, ours, theirs):
            assert np.array_equal(a, b), f"{rules} step {t}: {name}"
        for name in engine.GameState.__dataclass_fields__:
            a, b = getattr(numpy_game.state, name), getattr(compiled_game.state, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), f"{rules} step {t}: field {name}"
        over = np.flatnonzero(numpy_game.game_over)
        if over.size:
            numpy_game.reset(slots=over)
            compiled_game.reset(slots=over)


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
