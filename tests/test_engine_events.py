"""The engine's step events: manche over, game over, terminal slots, stepping a subset of slots."""

from __future__ import annotations

import numpy as np
import pytest

import president_env as pe
from president_env.core import engine
from president_env.core.engine import PHASE_OVER, sample_legal
from president_env.core.observation import layout
from president_env.core.state import FIELDS


def play(game, rng, steps):
    for _ in range(steps):
        mask = game.legal_mask()
        if not mask.any(axis=1).all():
            return
        yield game.step_events(sample_legal(mask, rng))


# party in 2 manches: its games end within the 400 steps (its 5-manche match would not).
@pytest.mark.parametrize(
    "rules", [pe.Rules(manches=3), pe.load_preset("party").replace(manches=2)], ids=["3 manches", "party"]
)
def test_events_match_the_state_and_autoreset_keeps_the_old_outputs(rules):
    fresh = pe.VecGame(rules, batch_size=32, seed=1)
    kept = pe.VecGame(rules, batch_size=32, seed=1, autoreset=False)
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    games_over = 0
    for _ in range(400):
        manche_before = kept.state.manche.copy()
        mask = kept.legal_mask()
        if kept.game_over.any():
            break
        events = kept.step_events(sample_legal(mask, rng_b))
        rewards, done = fresh.step(sample_legal(fresh.legal_mask(), rng_a))
        np.testing.assert_array_equal(events.rewards, rewards)
        np.testing.assert_array_equal(events.game_over, done)
        np.testing.assert_array_equal(events.manche_over, kept.state.manche != manche_before)
        assert not (events.rewards.any(axis=1) & ~events.manche_over).any()
        assert (events.manche_over >= events.game_over).all()
        games_over += int(events.game_over.sum())
    assert games_over > 0
    over = np.flatnonzero(kept.game_over)
    assert (kept.state.phase[over] == PHASE_OVER).all() and not kept.legal_mask()[over].any()
    assert not kept.observe()[over][:, layout(rules)["phase"]].any()
    actions = np.argmax(kept.legal_mask(), axis=1)
    before = kept.state_dict()["state"]
    with pytest.raises(ValueError, match="is over"):
        kept.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(value, kept.state_dict()["state"][name], err_msg=name)
    kept.reset(slots=over)
    assert not kept.game_over.any() and (kept.state.manche[over] == 0).all()


def test_stepping_a_subset_leaves_the_other_slots_alone():
    rules = pe.Rules(n_players=5, twos_wild=True, revolution=True)
    game = pe.VecGame(rules, batch_size=12, seed=3)
    rng = np.random.default_rng(4)
    for _ in range(30):
        game.step(sample_legal(game.legal_mask(), rng))
    whole = game.state.copy()
    part = game.state.copy()
    actions = sample_legal(engine.legal_mask(rules, whole), rng)
    slots = np.array([1, 4, 5, 10])
    full_events = engine.step(rules, whole, actions, np.random.default_rng(5))
    events = engine.step(rules, part, actions[slots], np.random.default_rng(5), slots=slots)
    np.testing.assert_array_equal(events.rewards, full_events.rewards[slots])
    np.testing.assert_array_equal(events.manche_over, full_events.manche_over[slots])
    others = np.setdiff1d(np.arange(12), slots)
    for name in FIELDS:
        if name == "dealt_to" and full_events.manche_over.any():
            continue  # a new manche is dealt from the generator, whose draws differ
        np.testing.assert_array_equal(getattr(part, name)[slots], getattr(whole, name)[slots], err_msg=name)
        np.testing.assert_array_equal(getattr(part, name)[others], getattr(game.state, name)[others], err_msg=name)
    with pytest.raises(ValueError, match="actions"):
        engine.step(rules, part, actions, np.random.default_rng(5), slots=slots)


def test_reset_slots_validates():
    game = pe.VecGame(pe.Rules(), batch_size=4, seed=0)
    for slots in ([4], [1, 1], [[0]], [0.5]):
        with pytest.raises(ValueError, match="slots"):
            game.reset(slots=slots)
    with pytest.raises(ValueError, match="autoreset"):
        pe.VecGame(pe.Rules(), autoreset="yes")


def test_an_unchecked_step_plays_what_a_checked_one_does():
    """``check=False`` (a caller's own legal draws) skips the legality check and changes nothing else: two copies of
    a batch stepped on subsets of slots, manche and game ends included, stay equal field by field."""
    rules = pe.load_preset("party").replace(manches=2)
    checked = engine.allocate(rules, 16)
    engine.new_games(rules, checked, np.arange(16), np.random.default_rng(0))
    unchecked = checked.copy()
    rng_a, rng_b, draws = np.random.default_rng(1), np.random.default_rng(1), np.random.default_rng(2)
    ends = 0
    for _ in range(300):
        slots = np.flatnonzero((checked.phase != PHASE_OVER) & (draws.random(16) < 0.7))
        if not slots.size:
            continue
        mask = engine.legal_mask(rules, checked, slots)
        actions = sample_legal(mask, draws)
        a = engine.step(rules, checked, actions, rng_a, mask=mask, slots=slots)
        b = engine.step(rules, unchecked, actions, rng_b, mask=mask, slots=slots, check=False)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        ends += int(a.manche_over.sum())
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(checked, name), getattr(unchecked, name), err_msg=name)
    assert ends > 0 and (checked.phase == PHASE_OVER).any()
