"""The agent interface and registry: names, checkpoint loaders, decoding observations."""

from __future__ import annotations

import importlib
import importlib.util

import numpy as np
import pytest

import president_env as pe
from president_env import agents, engine
from president_env.agents import Agent, RandomAgent

HAS_TORCH = importlib.util.find_spec("torch") is not None


BASELINES = ("random", "heuristic-1", "heuristic-2", "heuristic-3", "mc-4", "mc-5")


@pytest.mark.parametrize(
    "name, preset",
    [(name, "party") for name in BASELINES]
    + [pytest.param("ppo-standard-4p", "standard", marks=pytest.mark.skipif(not HAS_TORCH, reason="needs torch"))],
)
def test_every_agent_name_makes_an_agent_with_both_methods(name, preset):
    rules = pe.load_preset(preset)
    game = pe.VecGame(rules, 8, seed=0)
    obs, mask = game.observe(), game.legal_mask()
    assert agents.names() == BASELINES + ("ppo-standard-4p",)
    agent = agents.make(name, rules, seed=0)
    assert agent.name == name and isinstance(agent, agents.Policy)
    actions = agent.act_batch(obs, mask)
    assert actions.shape == (8,) and mask[np.arange(8), actions].all()
    # act() is one row of act_batch(): fresh agents with one seed agree.
    single = agents.make(name, rules, seed=1).act({"observation": obs[0], "action_mask": mask[0].astype(np.int8)})
    assert single == agents.make(name, rules, seed=1).act_batch(obs[:1], mask[:1])[0]


def test_make_accepts_a_preset_name_and_defaults_to_the_standard_game():
    assert agents.make("heuristic-2").rules == pe.Rules()
    assert agents.make("heuristic-2", "party").rules == pe.load_preset("party")


def test_unknown_names_and_double_registration_are_clear_errors():
    with pytest.raises(ValueError, match="unknown agent 'heuristic-9'.*heuristic-3"):
        agents.make("heuristic-9")
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", lambda rules, seed=None: RandomAgent(rules, seed))


@pytest.fixture
def checkpoint_loaders():
    """The process-wide checkpoint-loader registry, restored after the test: loaders a test adds go away."""
    registry = importlib.import_module("president_env.gym_env")
    registry._load_plugins()  # the entry-point loaders join once, before the snapshot
    saved = list(registry._CHECKPOINT_LOADERS)
    yield registry._CHECKPOINT_LOADERS
    registry._CHECKPOINT_LOADERS[:] = saved


def test_checkpoint_paths_go_through_registered_loaders(tmp_path, checkpoint_loaders):
    path = tmp_path / "always_first.ckpt"
    path.write_text("first-legal-action")

    class FirstLegal(Agent):
        name = "first-legal"

        def act_batch(self, observations, masks):
            return np.argmax(masks, axis=1)

    def loader(file, rules, seed):
        return FirstLegal(rules, seed) if open(file).read() == "first-legal-action" else None

    other = tmp_path / "other.ckpt"
    other.write_text("something else")
    with pytest.raises(ValueError, match="no checkpoint loader accepts"):
        agents.make(str(other))
    agents.register_checkpoint_loader(loader)
    assert checkpoint_loaders[-1] is loader
    assert agents.make(str(path)).name == "first-legal"
    env = pe.gym_env(opponents=str(path), seat=0)  # the Gym env uses the same registry
    assert all(o.name == "first-legal" for o in env.unwrapped.opponents)
    with pytest.raises(ValueError, match="no checkpoint loader accepts"):
        agents.make(str(other))


def test_decode_reads_back_the_state_the_observation_was_made_from():
    rules = pe.Rules(initial_roles="draw", manches=2, revolution=True)
    game = pe.VecGame(rules, 32, seed=1)
    rng = np.random.default_rng(1)
    for _ in range(40):
        game.step(engine.sample_legal(game.legal_mask(), rng))
    view = agents.decode(rules, game.observe())
    state, rows = game.state, np.arange(32)
    np.testing.assert_array_equal(view.hand, state.hands[rows, state.current])
    np.testing.assert_array_equal(view.held[:, 0], state.n_held[rows, state.current])
    np.testing.assert_array_equal(view.trick_rank, state.trick_rank)
    np.testing.assert_array_equal(view.trick_count, state.trick_count)
    np.testing.assert_array_equal(view.revolution, state.revolution)
    np.testing.assert_array_equal(view.exchange, state.phase == engine.PHASE_EXCHANGE)
    assert (view.to_act == 0).all()


def test_random_agent_is_uniform_over_legal_actions_and_seeded():
    rules = pe.Rules()
    mask = np.zeros((4000, rules.num_actions), bool)
    mask[:, [0, 5, 9]] = True
    obs = np.zeros((4000, pe.VecGame(rules).obs_dim), np.float32)
    first = RandomAgent(rules, seed=3).act_batch(obs, mask)
    assert set(np.unique(first)) == {0, 5, 9}
    assert np.abs(np.bincount(first, minlength=10)[[0, 5, 9]] / 4000 - 1 / 3).max() < 0.03
    assert (RandomAgent(rules, seed=3).act_batch(obs, mask) == first).all()
