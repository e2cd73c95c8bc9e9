"""The Gymnasium single-agent env: API checks, masks, seeding, opponents."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import president_env as pe
from president_env import agents
from president_env.core import registry
from president_env.core.engine import reward_table, sample_legal
from president_env.envs import gym_single_env
from president_env.envs.gym_single_env import PresidentGymEnv


def masked_action(info, rng):
    return int(sample_legal(info["action_mask"][None].astype(bool), rng)[0])


def play_episode(env, seed, rng):
    obs, info = env.reset(seed=seed)
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"].astype(bool))
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].any()
        obs, reward, terminated, truncated, info = env.step(masked_action(info, rng))
        assert not truncated
        total += reward
        steps += 1
    assert not env.action_masks().any()
    return total, steps, info


@pytest.mark.parametrize("rules", [None, "party", "family", "big_table"])
def test_check_env(rules):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # check_env steps with actions sampled before a reset: the default env replaces illegal ones.
        check_env(pe.gym_env(rules=rules).unwrapped)
        check_env(gymnasium.make("president_env/President-v0", rules=rules).unwrapped)


def test_illegal_actions_raise_or_are_replaced():
    env = pe.gym_env(seat=0, illegal_action="raise")
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="player_0"):
        env.step(illegal)
    obs2, info2 = env._observation()
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(info["action_mask"], info2["action_mask"])
    replacing = pe.gym_env(seat=0)  # the default replaces, warns once, and flags it
    _, info = replacing.reset(seed=0)
    with pytest.warns(UserWarning, match="illegal action"):
        *_, info = replacing.step(illegal)
    assert info["illegal_action"] is True


def test_gymnasium_make_and_spaces():
    env = gymnasium.make("president_env/President-v0", rules=pe.Rules(n_players=5), opponents="random", seat=2)
    obs, info = env.reset(seed=1)
    unwrapped = env.unwrapped
    assert isinstance(unwrapped, PresidentGymEnv)
    assert env.observation_space.shape == obs.shape and obs.dtype == np.float32
    assert env.action_space.n == pe.num_actions(unwrapped.rules)
    assert info["player"] == 2 and unwrapped.game.current_player == 2
    obs, reward, terminated, truncated, info = env.step(masked_action(info, np.random.default_rng(0)))
    assert isinstance(reward, float)


@pytest.mark.parametrize("rules", [pe.Rules(), pe.load_preset("family"), pe.Rules(n_players=3, manches=3)])
def test_random_masked_play_never_errors(rules):
    env = pe.gym_env(rules=rules)
    rng = np.random.default_rng(0)
    table = reward_table(rules)
    for episode in range(15):
        total, steps, info = play_episode(env, episode, rng)
        assert steps > 0
        if rules.manches == 1:
            assert total == pytest.approx(table[info["finish_position"]])
        assert info["winner"] in info["scores"]


def test_seat_none_is_drawn_per_reset_and_reproducible():
    env = pe.gym_env()
    seats = {env.reset(seed=s)[1]["player"] for s in range(30)}
    assert seats == {0, 1, 2, 3}
    assert env.reset(seed=5)[1]["player"] == env.reset(seed=5)[1]["player"]


def test_seeding_reproducible():
    def run(seed):
        env = pe.gym_env(rules="party")
        rng = np.random.default_rng(3)
        obs, info = env.reset(seed=seed)
        seen = [obs.tobytes()]
        terminated = False
        while not terminated:
            obs, reward, terminated, _, info = env.step(masked_action(info, rng))
            seen.append((obs.tobytes(), reward))
        return seen

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_opponents_by_name_list_callable_and_object():
    calls = []

    def first_legal(obs, mask):
        assert obs.dtype == np.float32 and mask.dtype == np.int8
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    class Last:
        def act(self, observation, info):
            assert "role" in info
            return int(np.flatnonzero(observation["action_mask"])[-1])

    rng = np.random.default_rng(0)
    for opponents in ("random", ["random", first_legal, Last()], first_legal, Last()):
        env = pe.gym_env(opponents=opponents, seat=1)
        play_episode(env, 0, rng)
    assert calls
    with pytest.raises(ValueError, match="one per other player"):
        pe.gym_env(opponents=["random", "random"])


def test_unknown_opponent_lists_known_names():
    assert "random" in registry.names()
    with pytest.raises(ValueError, match="unknown agent 'heuristic-9'; known agents: random"):
        pe.gym_env(opponents="heuristic-9")
    with pytest.raises(ValueError, match="no such file: 'no/such/checkpoint.pt'"):
        registry.resolve("no/such/checkpoint.pt", pe.Rules())
    with pytest.raises(ValueError, match="opponent must be"):
        registry.resolve(42, pe.Rules())


def test_one_agent_name_check_serves_every_door():
    """``registry.check_name`` is the one check: ``make``, ``resolve`` and the training config all say the same."""
    assert registry.check_name("heuristic-3") == "heuristic-3"
    assert registry.check_name(Path(__file__)) == str(Path(__file__))
    with pytest.raises(ValueError, match="unknown agent"):
        registry.check_name(str(Path(__file__)), checkpoints=False)
    with pytest.raises(ValueError, match="must be text, got int 3"):
        registry.check_name(3)
    message = "unknown agent 'nobody'; known agents: random, heuristic-1"
    for door in (
        lambda: registry.check_name("nobody"),
        lambda: registry.make("nobody"),
        lambda: registry.resolve("nobody", pe.Rules()),
        lambda: pe.gym_env(opponents="nobody"),
        lambda: pe.vector_env(2, opponents="nobody"),
    ):
        with pytest.raises(ValueError, match=message):
            door()


def test_registered_opponent_plugs_in_by_name(monkeypatch):
    made = []

    def factory(rules, seed):
        made.append(seed)
        return registry.RandomAgent(rules, seed)

    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))  # the registration goes with the test
    registry.register("test-random", factory)
    env = pe.gym_env(opponents="test-random", seat=0)
    play_episode(env, 0, np.random.default_rng(0))
    assert made == [None] * 3


def test_opponents_come_from_the_one_registry():
    """One registry, one random player; the old aliases of ``gym_single_env`` are gone."""
    assert registry.RandomAgent is agents.RandomAgent
    for alias in ("resolve_opponent", "register_opponent", "RandomOpponent"):
        assert not hasattr(gym_single_env, alias)
    env = pe.gym_env(opponents=["random", "heuristic-1", "mc-4"], seat=0)
    assert [type(o).__name__ for o in env.unwrapped.opponents] == ["RandomAgent", "HeuristicAgent", "MonteCarloAgent"]
    assert [o.name for o in env.unwrapped.opponents] == ["random", "heuristic-1", "mc-4"]


def test_random_opponent_is_seeded_by_the_env():
    env_a, env_b = pe.gym_env(seat=0), pe.gym_env(seat=0)
    a = play_episode(env_a, 9, np.random.default_rng(1))
    b = play_episode(env_b, 9, np.random.default_rng(1))
    assert a[0] == b[0] and a[1] == b[1]


def test_bad_arguments():
    with pytest.raises(ValueError, match="seat"):
        pe.gym_env(seat=4)
    with pytest.raises(ValueError, match="reward_mode"):
        pe.gym_env(reward_mode="money")
    with pytest.raises(ValueError, match="illegal_action"):
        pe.gym_env(illegal_action="ignore")
    env = pe.gym_env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    terminated = False
    info = env._observation()[1]
    while not terminated:
        _, _, terminated, _, info = env.step(masked_action(info, rng))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_render_modes(capsys):
    env = pe.gym_env(render_mode="ansi", seat=0)
    env.reset(seed=0)
    text = env.render()
    assert "Hand of player_0" in text
    human = pe.gym_env(render_mode="human", seat=0)
    human.reset(seed=0)
    assert "Hand of player_0" in capsys.readouterr().out


def test_action_space_samples_legal_actions():
    env = pe.gym_env(seat=1)
    env.reset(seed=3)
    env.action_space.seed(0)
    for _ in range(200):
        action = env.action_space.sample()
        assert env.action_masks()[action]
        _, _, terminated, _, _ = env.step(action)
        if terminated:
            env.reset()
    explicit = np.zeros(env.action_space.n, np.int8)
    explicit[5] = 1
    assert env.action_space.sample(mask=explicit) == 5


def test_action_masks_before_reset_is_a_clear_error():
    env = pe.gym_env(opponents="random")
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()


def test_pickled_action_space_alone_is_a_plain_discrete():
    """A saved SB3 model pickles the action space alone: it must not drag the env along."""
    import pickle

    env = pe.gym_env(opponents="random")
    env.reset(seed=0)
    space = pickle.loads(pickle.dumps(env.action_space))
    assert space.n == env.action_space.n and space.contains(space.sample())


@pytest.mark.parametrize("copier", ["deepcopy", "pickle"])
@pytest.mark.parametrize("opponents", ["random", "heuristic-3"])
def test_a_copy_mid_game_continues_the_same_game(copier, opponents):
    import copy
    import pickle

    env = pe.gym_env(rules=pe.Rules(manches=2), opponents=opponents, render_mode="ansi")
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(8):
        obs, _, _, _, info = env.step(masked_action(info, rng))
    twin = copy.deepcopy(env) if copier == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert twin.game is not env.game
    for _ in range(2):
        terminated = False
        while not terminated:
            action = masked_action(info, rng)
            obs, reward, terminated, _, info = env.step(action)
            obs2, reward2, terminated2, _, info2 = twin.step(action)
            np.testing.assert_array_equal(obs, obs2)
            assert (reward, terminated) == (reward2, terminated2)
            assert repr(info) == repr(info2) and env.render() == twin.render()
            assert twin.action_masks()[twin.action_space.sample()] or terminated  # sampling follows the twin
        obs, info = env.reset()
        obs2, info2 = twin.reset()  # the env's np_random was copied too
        np.testing.assert_array_equal(obs, obs2)
        assert repr(info) == repr(info2)


def test_a_failed_reset_leaves_the_env_exactly_as_it_was():
    env, twin = pe.gym_env(opponents="random"), pe.gym_env(opponents="random")
    rng = np.random.default_rng(1)
    for e in (env, twin):
        e.reset(seed=5)
    info = twin._observation()[1]
    for _ in range(3):
        action = masked_action(info, rng)
        env.step(action)
        _, _, _, _, info = twin.step(action)
    before = (env.learner, env.np_random.bit_generator.state, [o.rng.bit_generator.state for o in env.opponents])
    for options in ({"deal": [["3C"]]}, {"roles": {"player_0": "king"}}, {"dealer": 9}, "deal"):
        with pytest.raises(ValueError):
            env.reset(seed=11, options=options)
        assert (env.learner, env.np_random.bit_generator.state, [o.rng.bit_generator.state for o in env.opponents]) == (
            before
        )
    terminated = False
    while not terminated:  # it goes on exactly like the twin that never saw the bad resets
        action = masked_action(info, rng)
        obs, reward, terminated, _, info = twin.step(action)
        obs2, reward2, terminated2, _, _ = env.step(action)
        np.testing.assert_array_equal(obs, obs2)
        assert (reward, terminated) == (reward2, terminated2)
    np.testing.assert_array_equal(env.reset()[0], twin.reset()[0])


def test_step_before_reset_is_a_clear_error():
    env = pe.gym_env()
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(0)


@pytest.mark.parametrize("make_action", [np.int8, np.uint64, lambda a: np.array([a], np.int16)])
def test_numpy_integer_actions_are_taken_as_given(make_action):
    env = pe.gym_env(opponents="random")  # illegal_action="random" would replace an action it cannot read
    twin = pe.gym_env(opponents="random", illegal_action="raise")
    _, info = env.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(10):
        action = masked_action(info, rng)
        obs, _, terminated, _, info = env.step(make_action(action))
        np.testing.assert_array_equal(obs, twin.step(action)[0])
        assert info["illegal_action"] is False
        if terminated:
            break


def test_gym_env_is_a_function_and_the_registered_entry_points_resolve():
    """``pe.gym_env`` is the function (its module is ``gym_single_env``); the id's entry points name real classes."""
    import importlib

    import gymnasium

    from president_env.envs import gym_single_env, gym_vector_env

    assert pe.gym_env is gym_single_env.gym_env and callable(pe.gym_env)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("president_env.gym_env")
    spec = gymnasium.spec("president_env/President-v0")
    assert spec.entry_point == "president_env.envs.gym_single_env:PresidentGymEnv"
    assert spec.vector_entry_point == "president_env.envs.gym_vector_env:PresidentVectorEnv"
    env = gymnasium.make("president_env/President-v0", opponents="random")
    assert isinstance(env.unwrapped, gym_single_env.PresidentGymEnv)
    venv = gymnasium.make_vec("president_env/President-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert isinstance(venv.unwrapped, gym_vector_env.PresidentVectorEnv)
    env.close()
    venv.close()


def test_terminal_observation_is_the_table_after_the_last_play():
    """As the vector env's: final scores, the phase one-hot all 0, from the learner's seat."""
    rules = pe.Rules(manches=2)
    env = pe.gym_env(rules, opponents="heuristic-1", seat=2)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    terminated, reward = False, 0.0
    while not terminated:
        obs, reward, terminated, _, info = env.step(int(sample_legal(info["action_mask"][None].astype(bool), rng)[0]))
    lay = pe.core.observation.layout(rules)
    final = env.game.final
    assert final.phase[0] == pe.core.engine.PHASE_OVER and not info["action_mask"].any()
    np.testing.assert_array_equal(obs, pe.core.observation.observe(rules, final, final.seat_of_player[:, 2])[0])
    assert not obs[lay["phase"]].any()
    assert obs[lay["scores"]][0] == final.last_scores[0, 2] == info["scores"]["player_2"]
    assert reward == reward_table(rules)[final.last_positions[0, 2]]
