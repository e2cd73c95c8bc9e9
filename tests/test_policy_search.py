"""Search over a learned policy: it proposes, rollouts of it decide; decisions from the observation only."""

from __future__ import annotations

import dataclasses
import importlib.util

import numpy as np
import pytest
from helpers import PER_TABLE_CHECKPOINT, hidden_card_twins, mid_manche, position

import president_env as pe
from president_env import agents
from president_env.agents.heuristic import choose, rollout_view
from president_env.agents.monte_carlo import MonteCarloAgent
from president_env.agents.policy_search import SHIPPED_SEARCH, PolicySearchAgent, PolicySearchConfig
from president_env.core.observation import layout, observe

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
SMALL = PolicySearchConfig(worlds=6, candidates=3, confident=0.99)


class LinearPolicy:
    """A fixed random linear policy (what the search needs of a learned agent: ``policy_logits``)."""

    name = "linear"

    def __init__(self, rules: pe.Rules, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.weights = rng.normal(size=(layout(rules).size, rules.num_actions)).astype(np.float32)

    def policy_logits(self, observations: np.ndarray) -> np.ndarray:
        return observations @ self.weights


def greedy(policy, observations, masks):
    return np.where(masks, policy.policy_logits(observations), -np.inf).argmax(axis=1)


def test_one_candidate_or_a_sure_policy_plays_the_policys_choice_without_search(monkeypatch):
    rules = pe.Rules()
    game = mid_manche(rules, 32, seed=4, steps=20)
    obs, mask = game.observe(), game.legal_mask()
    policy = LinearPolicy(rules)
    one = PolicySearchAgent(rules, policy, seed=0, config=PolicySearchConfig(worlds=4, candidates=1))
    np.testing.assert_array_equal(one.act_batch(obs, mask), greedy(policy, obs, mask))

    def no_search(*args, **kwargs):
        raise AssertionError("searched although the policy was sure")

    sure = PolicySearchAgent(rules, policy, seed=0, config=PolicySearchConfig(worlds=4, confident=1e-9))
    monkeypatch.setattr(sure, "action_values", no_search)
    np.testing.assert_array_equal(sure.act_batch(obs, mask), greedy(policy, obs, mask))


@pytest.mark.parametrize("others", [3, None])
def test_only_the_policys_best_candidates_are_searched_and_the_rollouts_play_policy_and_heuristic(others, monkeypatch):
    rules = pe.Rules()
    game = mid_manche(rules, 24, seed=5, steps=30)
    obs, mask = game.observe(), game.legal_mask()
    policy = LinearPolicy(rules, seed=1)
    agent = PolicySearchAgent(rules, policy, seed=0, config=dataclasses.replace(SMALL, others=others))
    probs = agent.probabilities(obs, mask)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert (probs[~mask] == 0).all()
    searched = (mask.sum(axis=1) > 1) & (probs.max(axis=1) < SMALL.confident)
    assert searched.any()
    seen = []
    search = agent.action_values

    def recording(observations, candidates, worlds=None):
        seen.append(candidates.copy())
        return search(observations, candidates, worlds)

    monkeypatch.setattr(agent, "action_values", recording)
    played, seats = [], set()
    rollout = agent.rollout_actions

    def checked(state, rollout_mask):
        actions = rollout(state, rollout_mask)
        expected = greedy(policy, observe(rules, state), rollout_mask)
        if others is not None:  # the searching seat (seat 0 of the worlds) plays the policy, the others heuristic-3
            heuristic = choose(rules, rollout_view(rules, state), rollout_mask, others)
            expected = np.where(state.current == 0, expected, heuristic)
            seats.update(np.unique(state.current).tolist())
        np.testing.assert_array_equal(actions, expected)
        assert rollout_mask[np.arange(actions.size), actions].all()
        played.append(actions.size)
        return actions

    monkeypatch.setattr(agent, "rollout_actions", checked)
    actions = agent.act_batch(obs, mask)
    assert mask[np.arange(mask.shape[0]), actions].all() and played
    assert others is None or seats == set(range(rules.n_players))
    (candidates,) = seen
    n_searched = np.minimum(mask[searched].sum(axis=1), SMALL.candidates)
    np.testing.assert_array_equal(candidates.sum(axis=1), n_searched)
    top = np.sort(np.where(candidates, probs[searched], np.inf), axis=1)[:, 0]  # least probable candidate
    left_out = np.where(mask[searched] & ~candidates, probs[searched], -np.inf).max(axis=1)
    assert (top >= left_out).all()
    assert (candidates[np.arange(candidates.shape[0]), actions[searched]]).all()
    np.testing.assert_array_equal(actions[~searched], greedy(policy, obs, mask)[~searched])


def test_decision_does_not_change_when_only_hidden_cards_change():
    rules = pe.Rules(initial_roles="draw", manches=2)
    obs, obs_other, mask = hidden_card_twins(rules)
    policy = LinearPolicy(rules, seed=2)
    first = PolicySearchAgent(rules, policy, seed=7, config=SMALL).act_batch(obs, mask)
    second = PolicySearchAgent(rules, policy, seed=7, config=SMALL).act_batch(obs_other, mask)
    np.testing.assert_array_equal(first, second)


def test_going_out_now_is_chosen_over_the_policys_choice():
    rules = pe.Rules()
    # Leading, and every other seat holds one card above a 9 (one of 10, J, Q: the rest is played):
    # both 9s end the manche for us; after one 9, the next seat goes out first.
    ranks = "3 4 5 6 7 8 9 10 J Q K A 2".split()
    played = " ".join(
        [r for r in ranks for _ in range(4) if r not in ("9", "10", "J", "Q")] + ["9"] * 2 + ["10", "J", "Q"] * 3
    )
    obs, mask = position(rules, "9 9", held=(1, 1, 1), played=played)
    both, one = pe.encode_play(rules, "9", 2), pe.encode_play(rules, "9", 1)

    class PrefersOneNine(LinearPolicy):  # and for the other seats, any play over a pass
        def policy_logits(self, observations):
            logits = np.zeros((len(observations), rules.num_actions), np.float32)
            logits[:, pe.PASS], logits[:, one], logits[:, both] = -5.0, 2.0, 1.0
            return logits

    agent = PolicySearchAgent(rules, PrefersOneNine(rules), seed=0, config=SMALL)
    assert agent.probabilities(obs, mask)[0].argmax() == one
    assert agent.act_batch(obs, mask)[0] == both
    values = agent.explain({"observation": obs[0], "action_mask": mask[0]})["values"]
    assert values[both] == rules.n_players - 1 and values[one] < values[both]


@pytest.mark.parametrize("preset", ["party", "big_table"])
def test_legal_moves_through_whole_manches_with_the_exchange(preset):
    rules = pe.load_preset(preset).replace(initial_roles="draw")
    game = pe.VecGame(rules, 4, seed=2)
    agent = PolicySearchAgent(rules, LinearPolicy(rules), seed=1, config=PolicySearchConfig(worlds=2))
    for _ in range(40):
        mask = game.legal_mask()
        actions = agent.act_batch(game.observe(), mask)
        assert mask[np.arange(4), actions].all()
        game.step(actions)


def test_same_seed_same_decisions_and_one_row_equals_the_batch():
    rules = pe.Rules()
    game = mid_manche(rules, 8, seed=8, steps=12)
    obs, mask = game.observe(), game.legal_mask()
    policy = LinearPolicy(rules, seed=3)
    one = PolicySearchAgent(rules, policy, seed=3, config=SMALL).act_batch(obs, mask)
    np.testing.assert_array_equal(one, PolicySearchAgent(rules, policy, seed=3, config=SMALL).act_batch(obs, mask))
    single = PolicySearchAgent(rules, policy, seed=3, config=SMALL).act({"observation": obs[0], "action_mask": mask[0]})
    assert single == PolicySearchAgent(rules, policy, seed=3, config=SMALL).act_batch(obs[:1], mask[:1])[0]


def test_bad_configs_and_policies_are_clear_errors():
    with pytest.raises(ValueError, match="worlds must be a positive integer, got 0"):
        PolicySearchConfig(worlds=0)
    with pytest.raises(ValueError, match="candidates must be a positive integer, got 2.5"):
        PolicySearchConfig(candidates=2.5)
    with pytest.raises(ValueError, match=r"confident must be a probability in \(0, 1\], got 1.5"):
        PolicySearchConfig(confident=1.5)
    with pytest.raises(ValueError, match=r"others must be a heuristic level \(1, 2 or 3\) or None, got 4"):
        PolicySearchConfig(others=4)
    with pytest.raises(TypeError, match="policy must have a policy_logits"):
        PolicySearchAgent(pe.Rules(), agents.make("heuristic-3"))
    assert issubclass(PolicySearchAgent, MonteCarloAgent)


def test_the_search_wraps_a_learned_checkpoint_and_explains_its_candidates():
    policy = agents.make(str(PER_TABLE_CHECKPOINT), pe.Rules(), seed=0)
    agent = PolicySearchAgent(policy.rules, policy, seed=0, config=SMALL)
    assert agent.rules == pe.Rules() and agent.policy is policy
    assert "search-ppo-standard-4p" in agents.RETIRED_AGENTS  # its one named search is retired (test_agents.py)
    game = mid_manche(pe.Rules(), 8, seed=6, steps=9)
    mask = game.legal_mask()
    actions = agent.act_batch(game.observe(), mask)
    assert mask[np.arange(8), actions].all()
    explained = agent.explain({"observation": game.observe()[0], "action_mask": mask[0].astype(np.int8)})
    assert explained["action"] in explained["values"] or explained["values"] == {}  # its candidates, or sure
    assert set(explained["values"]) <= set(np.flatnonzero(mask[0]).tolist())


def test_ppo_universal_search_is_the_shipped_policy_with_the_shipped_search_at_any_table():
    """``agents.make("ppo-universal-search", rules)``: the search of :data:`SHIPPED_SEARCH` over ``ppo-universal`` at
    those rules, offered wherever ``ppo-universal`` is, and a search agent of its own at other rules."""
    assert agents.SEARCH_AGENTS == {"ppo-universal-search": "ppo-universal"}
    for preset in ("party", "big_table"):
        assert "ppo-universal-search" in agents.names(preset)
    rules = pe.load_preset("party")
    agent = agents.make("ppo-universal-search", rules, seed=0)
    assert isinstance(agent, PolicySearchAgent) and agent.name == "ppo-universal-search"
    assert agent.search == SHIPPED_SEARCH and agent.rules == rules
    assert agent.policy.name == "ppo-universal" and agent.policy.rules == rules
    again = agent.for_rules(pe.load_preset("big_table"), seed=1)
    assert again.name == "ppo-universal-search" and again.rules.n_players == 8 and again.search == SHIPPED_SEARCH
    game = mid_manche(rules, 4, seed=2, steps=5)
    mask = game.legal_mask()
    actions = agent.act_batch(game.observe(), mask)
    assert mask[np.arange(4), actions].all()
    # reproducible from its seed: a fresh agent with the same seed decides the same
    assert (agents.make("ppo-universal-search", rules, seed=0).act_batch(game.observe(), mask) == actions).all()


def test_a_decision_it_does_not_search_explains_the_policy_s_probabilities():
    policy = LinearPolicy(pe.Rules(), seed=0)
    sure = PolicySearchAgent(pe.Rules(), policy, seed=0, config=PolicySearchConfig(worlds=4, confident=1e-9))
    game = mid_manche(pe.Rules(), 1, seed=6, steps=9)
    mask = game.legal_mask()[0]
    explained = sure.explain({"observation": game.observe()[0], "action_mask": mask.astype(np.int8)})
    assert explained["measure"] == "probability" and set(explained["values"]) == set(np.flatnonzero(mask).tolist())
    assert sum(explained["values"].values()) == pytest.approx(1.0)
    searching = PolicySearchAgent(pe.Rules(), policy, seed=0, config=SMALL)
    explained = searching.explain({"observation": game.observe()[0], "action_mask": mask.astype(np.int8)})
    if mask.sum() > 1:
        assert explained["measure"] == "mean points" and explained["action"] in explained["values"]


def test_worlds_shrink_in_proportion_at_a_larger_deck():
    config = PolicySearchConfig(worlds=128, worlds_at_cards=52)
    assert config.worlds_for(pe.Rules()) == 128 and config.worlds_for(pe.Rules(n_players=3)) == 128
    assert config.worlds_for(pe.load_preset("big_table")) == round(128 * 52 / 108)  # two decks and four jokers
    assert PolicySearchConfig(worlds=20, worlds_at_cards=10).worlds_for(pe.Rules()) == 16  # never below 16
    assert PolicySearchConfig(worlds=128).worlds_for(pe.load_preset("big_table")) == 128  # None: no scaling
    agent = PolicySearchAgent(pe.load_preset("big_table"), LinearPolicy(pe.load_preset("big_table")), config=config)
    assert agent.worlds == 62 and agent.config.worlds == 62
    with pytest.raises(ValueError, match="worlds_at_cards must be a positive integer or None, got 0"):
        PolicySearchConfig(worlds_at_cards=0)
