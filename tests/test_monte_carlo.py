"""Monte-Carlo determinization agents: decisions from the observation only, exact values where the
outcome is forced, legal play in every preset and phase, reproducibility from a seed."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hidden_card_twins, mid_manche, position

import president_env as pe
from president_env import agents
from president_env.agents.monte_carlo import LEVELS, MonteCarloAgent, SearchConfig
from president_env.core import engine
from president_env.core.observation import observe

SMALL = SearchConfig(worlds=6, rollout_level=2)  # cheap searches where only correctness is tested


@pytest.mark.parametrize("level", [4, 5])
def test_decision_does_not_change_when_only_hidden_cards_change(level):
    rules = pe.Rules(initial_roles="draw", manches=2)
    obs, obs_other, mask = hidden_card_twins(rules)
    first = agents.make(f"mc-{level}", rules, seed=7).act_batch(obs, mask)
    second = agents.make(f"mc-{level}", rules, seed=7).act_batch(obs_other, mask)
    assert (first == second).all()


def test_going_out_now_is_worth_exactly_first_place_in_every_world():
    rules = pe.Rules()
    obs, mask = position(rules, "9 9", held=(17, 17, 16))  # leading: both 9s end the manche for us
    agent = MonteCarloAgent(rules, config=SMALL, seed=0)
    values = agent.action_values(obs, mask)
    both = pe.encode_play(rules, "9", 2)
    assert values[0, both] == rules.n_players - 1
    assert values[0, pe.encode_play(rules, "9", 1)] <= values[0, both]
    assert np.isinf(values[0, ~mask[0]]).all()
    assert agent.act_batch(obs, mask)[0] == both


def test_values_are_mean_points_within_the_possible_range():
    rules = pe.load_preset("party")
    game = mid_manche(rules, 8, seed=11, steps=20)
    agent = MonteCarloAgent(rules, config=SMALL, seed=0)
    values = agent.action_values(game.observe(), game.legal_mask())
    legal = game.legal_mask()
    assert np.isfinite(values[legal]).all() and np.isinf(values[~legal]).all()
    assert (values[legal] >= 0).all() and (values[legal] <= rules.n_players - 1).all()


def test_a_single_legal_action_is_played_without_search(monkeypatch):
    rules = pe.Rules()
    obs, mask = position(rules, "3 4", trick="2", held=(17, 17, 16))  # nothing beats a 2: pass
    agent = MonteCarloAgent(rules, level=4, seed=0)

    def no_search(*args, **kwargs):
        raise AssertionError("searched a forced move")

    monkeypatch.setattr(agent, "action_values", no_search)
    assert agent.act_batch(obs, mask)[0] == pe.PASS


@pytest.mark.parametrize("preset", ["standard", "party", "quebec", "big_table", "family", "or_nothing"])
def test_legal_moves_through_whole_manches_in_every_preset_and_the_exchange(preset):
    rules = pe.load_preset(preset).replace(initial_roles="draw")  # every manche has an exchange
    game = pe.VecGame(rules, 4, seed=2)
    agent = MonteCarloAgent(rules, config=SearchConfig(worlds=3, rollout_level=1), seed=1)
    gave = False
    for _ in range(50):
        mask = game.legal_mask()
        gave |= bool(mask[:, 1 + rules.n_ranks * rules.max_count :].any())
        actions = agent.act_batch(game.observe(), mask)
        assert mask[np.arange(4), actions].all()
        game.step(actions)
    assert gave


def test_same_seed_same_decisions():
    rules = pe.Rules()
    game = mid_manche(rules, 16, seed=5, steps=15)
    obs, mask = game.observe(), game.legal_mask()
    one = MonteCarloAgent(rules, level=4, seed=3).act_batch(obs, mask)
    two = MonteCarloAgent(rules, level=4, seed=3).act_batch(obs, mask)
    assert (one == two).all()


def test_act_on_one_observation_equals_the_batch_row():
    rules = pe.Rules()
    game = mid_manche(rules, 4, seed=8, steps=10)
    obs, mask = game.observe(), game.legal_mask()
    batched = MonteCarloAgent(rules, config=SMALL, seed=0).act_batch(obs[:1], mask[:1])
    single = MonteCarloAgent(rules, config=SMALL, seed=0).act({"observation": obs[0], "action_mask": mask[0]})
    assert batched[0] == single


def test_levels_and_bad_input():
    assert LEVELS[5].worlds + LEVELS[5].refine_worlds > LEVELS[4].worlds
    with pytest.raises(ValueError, match="level"):
        MonteCarloAgent(pe.Rules(), level=3)
    with pytest.raises(ValueError, match="unknown agent"):
        agents.make("mc-6")


@pytest.mark.parametrize("level", [4, 5])
def test_each_decision_plays_the_rollouts_of_its_level_and_forced_moves_none(level, monkeypatch):
    """A level's cost is its rollouts per decision (timing is left to ``bench_agents``): ``worlds`` per legal
    action, then at level 5 ``refine_worlds`` for each of its ``refine_top`` best actions; a decision with
    one legal action is not searched."""
    rules = pe.Rules()
    game = mid_manche(rules, 24, seed=5, steps=30)
    obs, mask = game.observe(), game.legal_mask()
    n_legal = mask.sum(axis=1)
    searched = n_legal[n_legal > 1]
    assert 0 < searched.size < n_legal.size, "the batch must mix searched and forced decisions"
    rollouts = []

    def count_rollouts(self, state, first_actions):
        assert state.batch_size == first_actions.size
        rollouts.append(first_actions.size)
        return np.zeros(first_actions.size)

    monkeypatch.setattr(MonteCarloAgent, "_play_out", count_rollouts)
    actions = MonteCarloAgent(rules, level=level, seed=0).act_batch(obs, mask)
    assert mask[np.arange(mask.shape[0]), actions].all()
    config = LEVELS[level]
    expected = [config.worlds * int(searched.sum())]
    if config.refine_top:
        expected.append(config.refine_worlds * int(np.minimum(searched, config.refine_top).sum()))
    assert rollouts == expected


def test_latency_benchmark_script_runs_and_writes_its_report(tmp_path):
    """A smoke test of the script; the milliseconds it measures are not asserted (they depend on the machine)."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_agents.py"
    spec = importlib.util.spec_from_file_location("bench_agents", script)
    bench_agents = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_agents)
    rows = bench_agents.main(["--positions", "3", "--agents", "heuristic-3,mc-4", "--out", str(tmp_path / "b.json")])
    assert [row["agent"] for row in rows] == ["heuristic-3", "mc-4"]
    assert (tmp_path / "b.json").exists()


@pytest.mark.parametrize("preset", ["standard", "party", "family", "big_table"])
def test_rollout_view_equals_the_decoded_observation(preset):
    """Rollouts read the acting seat's view straight from the state; it must be what its observation says."""
    from president_env.agents.heuristic import rollout_view
    from president_env.core.observation import SEGMENT_NAMES

    rules = pe.load_preset(preset).replace(manches=3, initial_roles="draw")
    game = pe.VecGame(rules, 32, seed=4)
    rng = np.random.default_rng(4)
    for _ in range(120):
        decoded, direct = agents.decode(rules, observe(rules, game.state)), rollout_view(rules, game.state)
        for name in SEGMENT_NAMES:
            np.testing.assert_array_equal(getattr(direct, name), getattr(decoded, name), name)
        game.step(engine.sample_legal(game.legal_mask(), rng))


@pytest.mark.parametrize("preset", ["standard", "party", "family", "big_table", "or_nothing"])
def test_rollout_moves_gathered_from_the_state_are_the_heuristics_moves_on_the_view(preset):
    """``choose_in_state``'s kernel gathers each row's segments from the state itself: every level must choose what
    ``choose`` chooses on the acting seat's view, in every phase (exchange, leading, following, passes)."""
    from president_env.agents.heuristic import choose, choose_in_state, rollout_view

    rules = pe.load_preset(preset).replace(manches=3, initial_roles="draw")
    game = pe.VecGame(rules, 48, seed=8)
    rng = np.random.default_rng(8)
    for _ in range(150):
        mask = game.legal_mask()
        for level in (1, 2, 3):
            on_view = choose(rules, rollout_view(rules, game.state), mask, level)
            np.testing.assert_array_equal(choose_in_state(rules, game.state, mask, level), on_view, str(level))
        game.step(engine.sample_legal(mask, rng))
