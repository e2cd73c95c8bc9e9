"""The one-game observation by kernel (``observation.SlotObserver``, ``SingleGame.observe``) and the AEC env's step
path: what a caller is handed is its own (the kernel's buffer is reused), the ended game and a game whose state
field was set from outside observe their own table, and the cheaper wrapper and space checks accept and refuse
what they did."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import president_env as pe
from president_env.core.observation import SlotObserver, observe
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame
from president_env.game.single import SingleGame


def _first_legal(game: SingleGame) -> int:
    return int(np.flatnonzero(game.legal_mask())[0])


def test_last_results_do_not_change_after_later_steps():
    """PettingZoo hands each ``last()`` its own arrays: a later step, which reuses the kernel's buffer, changes no
    observation or mask returned before."""
    env = pe.env(rules=Rules(n_players=4, manches=2))
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    kept = []
    for _ in range(300):
        obs, _, terminated, truncated, _ = env.last()
        kept.append((obs, obs["observation"].copy(), obs["action_mask"].copy()))
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(legal.size)])
        env.step(action)
        if not env.agents:
            env.reset()
    assert len({id(obs["observation"]) for obs, _, _ in kept}) == len(kept)
    for obs, observation, mask in kept:
        assert np.array_equal(obs["observation"], observation)
        assert np.array_equal(obs["action_mask"], mask)
    assert any(not np.array_equal(kept[0][1], observation) for _, observation, _ in kept)


def test_observe_is_the_engine_encoder_on_the_slot_from_every_seat():
    rules = Rules(n_players=5, manches=2)
    game = SingleGame(rules, seed=4)
    vec = VecGame(rules, batch_size=1, seed=4)
    for _ in range(120):
        for seat in range(rules.n_players):
            expected = observe(rules, vec.state, np.array([seat]))[0]
            assert game.observe(seat).tobytes() == expected.tobytes()
        action = _first_legal(game)
        game.step(action)
        vec.step(np.array([action]))


def test_the_ended_game_observes_its_table_before_the_last_play():
    """With autoreset the engine game deals the next game in the step that ends one: ``ended`` observes the table it
    holds (its fields), not the engine game's, and keeps doing so while the next game is played."""
    rules = Rules(n_players=3, manches=1)
    game = SingleGame(rules, seed=1)
    while game.ended is None:
        game.step(_first_legal(game))
    ended = game.ended
    table = ended.to_state()
    before = [ended.observe(seat) for seat in range(rules.n_players)]
    for seat in range(rules.n_players):
        assert before[seat].tobytes() == observe(rules, table, np.array([seat]))[0].tobytes()
    assert any(before[seat].tobytes() != game.observe(seat).tobytes() for seat in range(rules.n_players))
    for _ in range(10):
        game.step(_first_legal(game))
    assert all(ended.observe(seat).tobytes() == before[seat].tobytes() for seat in range(rules.n_players))
    twin = pickle.loads(pickle.dumps(ended))
    assert all(twin.observe(seat).tobytes() == before[seat].tobytes() for seat in range(rules.n_players))


def test_a_field_set_from_outside_is_observed_until_the_next_game():
    rules = Rules(n_players=4)
    game = SingleGame(rules, seed=2)
    for _ in range(5):
        game.step(_first_legal(game))
    game.scores = [9, 0, 3, 1]
    seat = game.current
    expected = observe(rules, game.to_state(), np.array([seat]))[0]
    assert game.observe(seat).tobytes() == expected.tobytes()
    copied = copy.deepcopy(game)
    assert copied.observe(seat).tobytes() == expected.tobytes()
    game.reset(seed=5)  # a new game: its fields are the engine game's again
    vec = VecGame(rules, batch_size=1, seed=5)
    for seat in range(rules.n_players):
        assert game.observe(seat).tobytes() == observe(rules, vec.state, np.array([seat]))[0].tobytes()


def test_slot_observer_returns_new_arrays():
    rules = Rules()
    vec = VecGame(rules, batch_size=1, seed=0)
    observer = SlotObserver(rules, vec.state)
    first = observer.observe(0)
    held = first.copy()
    vec.step(np.array([int(np.flatnonzero(vec.legal_mask()[0])[0])]))
    second = observer.observe(0)
    assert second is not first and np.array_equal(first, held)
    assert second.tobytes() == observe(rules, vec.state, np.array([0]))[0].tobytes()


def test_action_space_contains_as_before():
    space = pe.env().unwrapped.action_space("player_0")
    n = int(space.n)
    for value in (0, n - 1, np.int64(3), np.uint64(2), np.array([5])):
        assert space.contains(value), value
    for value in (-1, n, 2**70, True, 1.0, "1", None, np.array([n])):
        assert not space.contains(value), value


def test_wrapped_step_checks_order_and_bounds():
    env = pe.env()
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        env.step(env.unwrapped.rules.num_actions)
