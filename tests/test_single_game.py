"""``SingleGame`` (the envs' one-game fast path) against ``VecGame(batch_size=1)``: one truth, step by step.

Both start from the same seed (so the same deals), take the same random legal actions, and must show the same
player to act, legal mask, observation from every seat, rewards, game ends, and whole state after every step,
on every preset and on random rule sets. ``test_differential.py`` ties ``VecGame`` to the reference.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers import rule_sets

from president_env.engine import sample_legal
from president_env.observation import observe
from president_env.rules import Rules
from president_env.single import FIELDS, SingleGame
from president_env.vec_game import VecGame


def assert_same_state(single: SingleGame, game: VecGame, context: str) -> None:
    state = single.to_state()
    for name in FIELDS:
        ours, theirs = getattr(state, name), getattr(game.state, name)
        assert np.array_equal(ours, theirs), f"{context}: field {name} differs: {ours} vs {theirs}"


def play_lockstep(rules: Rules, seed: int, n_games: int, reward_mode: str = "zero_sum") -> int:
    single = SingleGame(rules, seed=seed, reward_mode=reward_mode)
    game = VecGame(rules, batch_size=1, seed=seed, reward_mode=reward_mode)
    rng = np.random.default_rng(seed + 1)
    finished = steps = 0
    while finished < n_games:
        context = f"{rules} seed {seed} step {steps}"
        assert_same_state(single, game, context)
        mask = game.legal_mask()[0]
        assert np.array_equal(single.legal_mask(), mask), f"{context}: masks differ"
        assert single.current_player == game.current_player[0]
        for seat in range(rules.n_players):
            expected = observe(rules, game.state, np.array([seat]))[0]
            got = single.observe(seat)
            assert got.dtype == np.float32 and got.tobytes() == expected.tobytes(), f"{context}: seat {seat} view"
        action = int(sample_legal(mask[None], rng)[0])
        before = game.state.copy()
        rewards, done = game.step(np.array([action]))
        got_rewards, got_done = single.step(action)
        assert got_done == bool(done[0]), f"{context}: game end differs"
        if got_done:  # the ended game's table before its last play stays readable
            ended = single.ended.to_state()
            assert all(np.array_equal(getattr(ended, name), getattr(before, name)) for name in FIELDS)
            assert single.ended.ended is None
        if got_rewards is None:
            assert not rewards.any() and not done[0], f"{context}: a manche ended in the engine only"
        else:
            assert np.array_equal(np.array(got_rewards, np.float32), rewards[0]), f"{context}: rewards differ"
        finished += got_done
        steps += 1
    assert_same_state(single, game, f"{rules} seed {seed} at the end")
    return steps


@pytest.mark.parametrize("rules", rule_sets(n_random=8, seed=11), ids=lambda r: f"{r.n_players}p-{r.equal_rank}")
def test_single_game_matches_the_engine_step_by_step(rules):
    assert play_lockstep(rules, seed=3, n_games=2) > 50


def test_observation_with_scores_above_a_byte_matches_the_engine():
    """Scores and the manche index are the only entries that may pass 255 (many manches): the slower path."""
    rules = Rules(n_players=5, manches=3)
    single = SingleGame(rules, seed=0)
    for _ in range(30):
        single.step(int(np.flatnonzero(single.legal_mask())[0]))
    single.scores = [300, 0, 1000, 7, 256]
    single.manche = 400
    state = single.to_state()
    for seat in range(rules.n_players):
        assert single.observe(seat).tobytes() == observe(rules, state, np.array([seat]))[0].tobytes()


def test_illegal_action_raises_and_changes_nothing():
    single = SingleGame(Rules(), seed=1)
    before = single.to_state()
    illegal = int(np.flatnonzero(~single.legal_mask())[1])
    with pytest.raises(ValueError, match=f"illegal action {illegal} for player_{single.current_player}"):
        single.step(illegal)
    with pytest.raises(ValueError, match="not in 0..65"):
        single.step(67)
    for name in FIELDS:
        assert np.array_equal(getattr(single.to_state(), name), getattr(before, name))


def test_reset_with_options_matches_the_engine():
    rules = Rules(n_players=4, manches=2)
    roles = ["trou_du_cul", "president", "vice_president", "vice_trou"]
    single, game = SingleGame(rules, seed=0), VecGame(rules, batch_size=1, seed=0)
    single.reset(seed=9, roles=[roles])
    game.reset(seed=9, roles=[roles])
    assert_same_state(single, game, "after reset with roles")
    with pytest.raises(ValueError):
        single.reset(roles=[["president"] * 4])
    assert_same_state(single, game, "after a refused reset")


@pytest.mark.slow
def test_single_game_matches_the_engine_on_many_rule_sets():
    for i, rules in enumerate(rule_sets(n_random=40, seed=123)):
        play_lockstep(rules, seed=i, n_games=8, reward_mode=("zero_sum", "normalized", "points")[i % 3])


def test_a_pickled_game_observes_and_plays_on_the_same():
    game = SingleGame(Rules(n_players=5), seed=4)
    rng = np.random.default_rng(4)
    for _ in range(20):
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    copy = pickle.loads(pickle.dumps(game))
    for seat in range(5):
        np.testing.assert_array_equal(copy.observe(seat), game.observe(seat))
    action = int(np.flatnonzero(game.legal_mask())[0])
    assert copy.step(action) == game.step(action)
    np.testing.assert_array_equal(copy.observe(0), game.observe(0))
