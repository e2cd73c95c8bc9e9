"""The heuristics' documented habits on fixed positions, their batching, and their ladder order."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import position, ranks, rules_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import president_env as pe
from president_env import agents
from president_env.agents.heuristic import LEVELS, HeuristicAgent, Weights, choose, costs
from president_env.core import engine
from president_env.core.observation import observe


def decide(rules: pe.Rules, level: int, obs: np.ndarray, mask: np.ndarray) -> tuple:
    return pe.decode(rules, int(HeuristicAgent(rules, level).act_batch(obs, mask)[0]))


STANDARD = pe.Rules()


def test_level1_plays_its_weakest_card_and_breaks_a_pair():
    obs, mask = position(STANDARD, "5 5 7 K", trick="4")
    assert decide(STANDARD, 1, obs, mask) == ("play", "5", 1)


def test_level2_does_not_break_a_pair_when_a_single_will_do():
    obs, mask = position(STANDARD, "5 5 7 K", trick="4")
    assert decide(STANDARD, 2, obs, mask) == ("play", "7", 1)
    assert decide(STANDARD, 3, obs, mask) == ("play", "7", 1)


def test_leading_plays_the_whole_weakest_group():
    obs, mask = position(STANDARD, "4 4 4 9 K")
    for level in (1, 2, 3):
        assert decide(STANDARD, level, obs, mask) == ("play", "4", 3)


def test_level2_keeps_its_twos_while_it_has_many_groups():
    obs, mask = position(STANDARD, "2 A 6 6 8 8", trick="K")
    assert decide(STANDARD, 2, obs, mask) == ("play", "A", 1)
    obs, mask = position(STANDARD, "2 A A 6 6 8 8", trick="K")  # the Ace would break a pair
    assert decide(STANDARD, 1, obs, mask) == ("play", "A", 1)
    assert decide(STANDARD, 2, obs, mask) == ("play", "A", 1)  # breaking costs less than a 2 here


def test_level2_never_keeps_only_twos_under_the_finish_on_two_penalty():
    rules = pe.Rules(finish_on_two="penalty")
    obs, mask = position(rules, "2 9", trick="8")
    assert decide(rules, 1, obs, mask) == ("play", "9", 1)
    assert decide(rules, 2, obs, mask) == ("play", "2", 1)  # keeps the 9 to go out on


def test_level2_goes_out_when_a_play_empties_the_hand():
    obs, mask = position(STANDARD, "Q Q", trick="9 9")
    assert decide(STANDARD, 2, obs, mask) == ("play", "Q", 2)


def test_level3_takes_the_lead_with_a_master_to_go_out():
    obs, mask = position(STANDARD, "2 9")  # leading: the 2 wins the trick, then the 9 goes out
    assert decide(STANDARD, 2, obs, mask) == ("play", "9", 1)
    assert decide(STANDARD, 3, obs, mask) == ("play", "2", 1)


def test_level3_counts_cards_a_master_is_an_ace_once_every_two_is_played():
    obs, mask = position(STANDARD, "A 9", played="2 2 2 2")
    assert decide(STANDARD, 3, obs, mask) == ("play", "A", 1)
    obs, mask = position(STANDARD, "A 9")  # the 2s are still out: the Ace is no master
    assert decide(STANDARD, 3, obs, mask) == ("play", "9", 1)


def test_level3_plays_its_strongest_when_the_next_player_is_about_to_go_out():
    # Seat 1 (next to play) holds one card and could go out over the 5.
    obs, mask = position(STANDARD, "6 9 2 K K", trick="5", owner=3, held=(1, 8, 8))
    assert decide(STANDARD, 2, obs, mask) == ("play", "6", 1)
    assert decide(STANDARD, 3, obs, mask) == ("play", "2", 1)
    # The next player holds two cards: a single cannot take him out, no blocking.
    obs, mask = position(STANDARD, "6 9 2 K K", trick="5", owner=3, held=(2, 8, 8))
    assert decide(STANDARD, 3, obs, mask) == ("play", "6", 1)


def test_level3_leads_its_strongest_when_an_opponent_about_to_finish_could_match_any_lead():
    obs, mask = position(STANDARD, "5 8 J", held=(1, 8, 8))  # singles only, seat 1 holds one card
    assert decide(STANDARD, 2, obs, mask) == ("play", "5", 1)
    assert decide(STANDARD, 3, obs, mask) == ("play", "J", 1)


def test_level2_leads_a_pair_before_a_lower_single():
    obs, mask = position(STANDARD, "5 6 6 J Q")
    assert decide(STANDARD, 1, obs, mask) == ("play", "5", 1)
    assert decide(STANDARD, 2, obs, mask) == ("play", "6", 2)
    obs, mask = position(STANDARD, "5 Q Q J")  # but not a pair far above the single
    assert decide(STANDARD, 2, obs, mask) == ("play", "5", 1)


def test_or_nothing_levels_2_and_3_match_the_rank_in_force_even_breaking_a_pair():
    rules = pe.Rules(equal_rank="or_nothing")
    obs, mask = position(rules, "7 7 9 K", trick="7")
    assert decide(pe.Rules(), 2, *position(pe.Rules(), "7 7 9 K", trick="6")) == ("play", "9", 1)
    for level in (2, 3):
        assert decide(rules, level, obs, mask) == ("play", "7", 1)


def test_level3_starts_a_revolution_with_a_weak_hand_only():
    rules = pe.Rules(revolution=True)
    weak = "4 4 4 4 3 5 6 7"
    obs, mask = position(rules, weak)
    assert decide(rules, 3, obs, mask) == ("play", "4", 4)
    strong = "4 4 4 4 A A K K Q 2"
    obs, mask = position(rules, strong)
    assert decide(rules, 3, obs, mask) != ("play", "4", 4)
    assert decide(rules, 2, obs, mask) == ("play", "4", 4)  # level 2 leads its weakest group regardless


@pytest.mark.parametrize("level", [1, 2, 3])
def test_exchange_gives_back_the_weakest_unmatched_card_never_a_pair(level):
    rules = pe.Rules()
    state = engine.allocate(rules, 1)
    state.hands[0, 0] = ranks("3 3 4 6 6 8 9 9 J 2 2 A K", rules)
    state.n_held[0] = (13, 13, 13, 13)
    state.phase[0] = engine.PHASE_EXCHANGE
    state.gives_left[0, 0] = 2
    obs, mask = observe(rules, state), engine.legal_mask(rules, state)
    assert decide(rules, level, obs, mask) == ("give", "4")


@pytest.mark.parametrize("preset", ["standard", "party", "quebec", "big_table", "family", "or_nothing"])
@pytest.mark.parametrize("level", [1, 2, 3])
def test_heuristics_play_legal_moves_through_whole_games_in_every_preset(preset, level):
    rules = pe.load_preset(preset).replace(manches=2)  # the second manche opens with the exchange; 400 steps end
    # games of two manches, even at big_table (the presets' 5 would need about 800)
    game = pe.VecGame(rules, 64, seed=level)
    agent = agents.make(f"heuristic-{level}", rules)
    finished = 0
    for _ in range(400):
        mask = game.legal_mask()
        actions = agent.act_batch(game.observe(), mask)
        assert mask[np.arange(64), actions].all()
        _, done = game.step(actions)
        finished += int(done.sum())
    assert finished > 0


def test_batched_decisions_equal_one_at_a_time_and_dense_costs_agree():
    rules = pe.load_preset("party")
    game = pe.VecGame(rules, 48, seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        game.step(engine.sample_legal(game.legal_mask(), rng))
    obs, mask = game.observe(), game.legal_mask()
    view = agents.decode(rules, obs)
    for level in (1, 2, 3):
        batched = choose(rules, view, mask, level)
        dense = np.argmin(costs(rules, view, mask, level), axis=1)
        assert (batched == dense).all()
        agent = HeuristicAgent(rules, level)
        single = [agent.act({"observation": o, "action_mask": m.astype(np.int8)}) for o, m in zip(obs, mask)]
        assert (batched == np.array(single)).all()


def test_unknown_level_is_a_clear_error():
    with pytest.raises(ValueError, match="level"):
        HeuristicAgent(STANDARD, level=4)


def test_bad_batch_shapes_are_clear_errors():
    agent = HeuristicAgent(STANDARD, 3)
    obs, mask = position(STANDARD, "5 5 7")
    with pytest.raises(ValueError, match="observations must have shape"):
        agent.act_batch(obs[:, :10], mask)
    with pytest.raises(ValueError, match="masks must have shape"):
        agent.act_batch(obs, mask[:, :10])
    with pytest.raises(ValueError, match="no legal action"):
        agent.act_batch(obs, np.zeros_like(mask))


@pytest.mark.parametrize("opponents", ["heuristic-3", ["heuristic-1", "heuristic-2", "mc-4"]])
def test_baselines_are_gym_env_opponents_by_name(opponents):
    """The agents register their names with the Gym env through the entry point, no import needed."""
    from gymnasium.utils.env_checker import check_env

    env = pe.gym_env(rules=pe.Rules(), opponents=opponents, seat=0)
    expected = [opponents] * 3 if isinstance(opponents, str) else opponents
    assert [o.name for o in env.unwrapped.opponents] == expected
    obs, info = env.reset(seed=0)
    done, steps = False, 0
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, done, truncated, info = env.step(action)
        steps += 1
    assert steps > 0 and not info.get("illegal_action", False)
    if opponents == "heuristic-3":
        check_env(env.unwrapped, skip_render_check=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**16))
def test_every_level_plays_legally_under_random_rule_combinations(rules, seed):
    game = pe.VecGame(rules, 16, seed=seed)
    players = [HeuristicAgent(rules, level) for level in LEVELS]
    for t in range(120):
        mask = game.legal_mask()
        actions = players[t % 3].act_batch(game.observe(), mask)
        assert mask[np.arange(16), actions].all()
        game.step(actions)


def test_custom_weights_drive_the_agent_and_integer_weights_work():
    rules = pe.load_preset("party")
    game = pe.VecGame(rules, 16, seed=9)
    custom = HeuristicAgent(rules, weights=Weights(group=3, control=-100, card_counting=True, block=50, revolt=60))
    assert custom.name == "heuristic-custom"
    for _ in range(60):
        mask = game.legal_mask()
        actions = custom.act_batch(game.observe(), mask)
        assert mask[np.arange(16), actions].all()
        game.step(actions)


def test_weights_for_adjusts_or_nothing_only_for_levels_2_and_3():
    from president_env.agents.heuristic import WEIGHTS, weights_for

    or_nothing = pe.load_preset("or_nothing")
    assert weights_for(STANDARD, 2) == WEIGHTS[2]
    assert weights_for(or_nothing, 1) == WEIGHTS[1]
    assert weights_for(or_nothing, 3).match > 0 and weights_for(or_nothing, 3).break_pairs == 0
    with pytest.raises(ValueError, match="level"):
        weights_for(STANDARD, 0)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_act_views_chooses_what_act_batch_chooses(rules, seed):
    """The vector env's path (lazy views of the state, no observation vectors) plays the same actions."""
    from president_env.core.observation import StateViews, layout

    game = pe.VecGame(rules, batch_size=8, seed=seed)
    rng = np.random.default_rng(seed)
    agents_by_level = [HeuristicAgent(rules, level) for level in LEVELS]
    for _ in range(80):
        mask = game.legal_mask()
        slots = np.flatnonzero(rng.random(8) < 0.6)
        if slots.size:
            for agent in agents_by_level:
                expected = agent.act_batch(observe(rules, game.state)[slots], mask[slots])
                got = agent.act_views(StateViews(layout(rules), game.state, slots=slots), mask[slots])
                np.testing.assert_array_equal(got, expected)
        game.step(engine.sample_legal(mask, rng))


weights_strategy = st.builds(
    Weights,
    step=st.sampled_from([4.0, -4.0, 2.5]),
    group=st.sampled_from([0.0, 1.0, 6.0, 10.0]),
    pass_=st.sampled_from([20.0, 200.0, 1000.0, 1e6]),
    break_=st.sampled_from([0.0, 60.0, 150.0]),
    break_pairs=st.sampled_from([0.0, 1.0]),
    match=st.sampled_from([0.0, 200.0]),
    wild=st.sampled_from([0.0, 25.0]),
    keep_top=st.sampled_from([0.0, 60.0, 300.0]),
    bad_end=st.sampled_from([0.0, 150.0]),
    go_out=st.sampled_from([0.0, -1000.0]),
    card_counting=st.booleans(),
    control=st.sampled_from([0.0, -100.0]),
    control_groups=st.sampled_from([0, 1, 2]),
    block=st.sampled_from([0.0, 50.0]),
    block_following=st.booleans(),
    revolt=st.sampled_from([0.0, 60.0]),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), weights=weights_strategy, seed=st.integers(0, 2**32 - 1))
def test_the_choice_is_the_cheapest_of_the_costs(rules, weights, seed):
    """``choose`` (forced moves unscored) picks what ``costs`` (every legal action scored) ranks first, lowest index
    on ties, and ``costs`` is finite exactly on the legal actions."""
    game = pe.VecGame(rules, batch_size=16, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(100):
        mask = game.legal_mask()
        view = agents.decode(rules, game.observe())
        for level in (*LEVELS, weights):
            dense = costs(rules, view, mask, level)
            np.testing.assert_array_equal(np.isfinite(dense), mask)
            np.testing.assert_array_equal(choose(rules, view, mask, level), np.argmin(dense, 1))
        game.step(engine.sample_legal(mask, rng))
