"""The observation: its two computations agree, its layout is complete, its one-hots are one-hots."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_invariants import rules_strategy

from president_env import observation
from president_env.engine import sample_legal
from president_env.rules import Rules
from president_env.vec_game import VecGame


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_plan_and_segment_observations_agree(rules: Rules, seed: int) -> None:
    game = VecGame(rules, batch_size=8, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(120):
        viewers = rng.integers(0, rules.n_players, 8)
        for seat in (game.state.current, viewers):
            by_segment = observation._observe_by_segment(rules, game.state, seat)
            by_plan = observation._observe_by_plan(rules, game.state, seat)
            np.testing.assert_array_equal(by_plan, by_segment)
        game.step(sample_legal(game.legal_mask(), rng))


def test_layout_covers_the_vector_and_one_hots_are_one_hot() -> None:
    rules = Rules(n_players=5, jokers=2, exchange=(2, 1))
    lay = observation.layout(rules)
    assert sum(size for _, _, size in lay.segments) == lay.size == observation.obs_dim(rules)
    game = VecGame(rules, batch_size=64, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs = game.observe()
        for name in ("to_act", "phase"):
            np.testing.assert_array_equal(obs[:, lay[name]].sum(axis=1), 1)
        assert (obs[:, lay["to_act"]][:, 0] == 1).all()  # the default viewer is the player to act
        for name in ("trick_rank", "trick_count", "trick_owner", "exchange_partner"):
            assert set(np.unique(obs[:, lay[name]].sum(axis=1))) <= {0, 1}
        hand = obs[:, lay["hand"]]
        np.testing.assert_array_equal(hand.sum(axis=1), obs[:, lay["held"]][:, 0])
        game.step(sample_legal(game.legal_mask(), rng))
    assert "| hand | 0..13 | 14 |" in lay.table()
