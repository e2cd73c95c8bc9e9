"""Random legal play through the one-game interface: invariants that hold in every state and every variant."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import deal_in_order, legal, snapshot
from oracle.reference import ROLE_NAMES, table_for_roles

from president_env import Rules
from president_env.core.cards import deck

VARIANTS = [
    {},
    {"n_players": 3, "scoring": "president_vice", "manches": 3},
    {"n_players": 5, "reseat_by_role": True, "deal_start": "dealer", "manches": 3},
    {"n_players": 8, "decks": 2, "jokers": 4, "exchange": [3, 2, 1, 1], "manches": 2},
    {"initial_roles": "draw", "lead": "president", "exchange": [1], "manches": 2},
    {"first_lead": "dealer_left", "pass_rule": "can_return", "equal_rank": "skip", "jokers": 1},
    {"top_rank_ends_trick": True, "revolution": True, "equal_rank": "or_nothing", "twos_wild": True},
    {"finish_on_two": "penalty", "twos_wild": True, "jokers": 2, "revolution": True, "manches": 2},
    {
        "n_players": 6,
        "decks": 2,
        "twos_wild": True,
        "revolution": True,
        "top_rank_ends_trick": True,
        "pass_rule": "can_return",
        "equal_rank": "skip",
        "finish_on_two": "penalty",
        "reseat_by_role": True,
        "manches": 2,
        "scoring": "president_vice",
    },
]


def manche_point_sum(rules: Rules) -> int:
    n = rules.n_players
    if rules.scoring == "per_opponent_behind":
        return n * (n - 1) // 2
    return 3 if n >= 4 else 2


@pytest.mark.parametrize("overrides", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "standard")
def test_random_games_keep_invariants(make_game, overrides):
    rules = Rules(**overrides)
    n = rules.n_players
    rng = np.random.default_rng(len(str(overrides)))
    for _ in range(4):
        dealer = int(rng.integers(n))
        cards = [deck(rules.decks, rules.jokers)[i] for i in rng.permutation(rules.n_cards)]
        roles, seat_of_player = None, list(range(n))
        if rules.initial_roles == "draw":
            positions = [int(p) for p in rng.permutation(n)]
            roles = [["president", "vice_president", "vice_trou", "trou_du_cul"][pos] for pos in positions]
            seat_of_player, dealer = table_for_roles(rules, positions)  # the drawn Trou du cul deals
        hands = deal_in_order(rules, cards, dealer, seat_of_player)
        game = make_game(rules, hands, dealer=None if roles else dealer, roles=roles)
        totals = [0] * n
        manches_played = 0
        while not game.done:
            if game.phase == "needs_deal":
                assert game.current_player == -1 and legal(game) == set()
                assert all(role in ROLE_NAMES for role in game.roles)
                assert sorted(game.seat_of_player) == list(range(n))
                cards = [deck(rules.decks, rules.jokers)[i] for i in rng.permutation(rules.n_cards)]
                game.deal(deal_in_order(rules, cards, game.next_dealer, game.seat_of_player))
                continue
            assert game.phase in ("exchange", "play")
            mask = legal(game)
            assert mask and 0 <= game.current_player < n
            assert sum(map(sum, game.hands)) <= rules.n_cards
            if not rules.revolution:
                assert not game.revolution
            illegal = sorted(set(range(rules.num_actions)) - mask)
            if illegal and rng.random() < 0.05:
                before = snapshot(game)
                with pytest.raises(ValueError):
                    game.step(illegal[int(rng.integers(len(illegal)))])
                assert snapshot(game) == before
            out_before = list(game.finish_order_so_far)
            points = game.step(sorted(mask)[int(rng.integers(len(mask)))])
            if points is None:
                assert game.finish_order_so_far[: len(out_before)] == out_before
                continue
            assert sorted(game.finish_positions) == list(range(n))
            assert sum(points) == manche_point_sum(rules)
            if manches_played < rules.manches:
                totals = [t + int(p) for t, p in zip(totals, points)]
            manches_played += 1
            assert game.scores == totals
        assert game.phase == "over" and game.current_player == -1
        assert manches_played in (rules.manches, rules.manches + 1)
        best = max(totals)
        assert totals[game.winner] == best
        if manches_played == rules.manches:
            assert totals.count(best) == 1
        else:
            tied = [p for p in range(n) if totals[p] == best]
            assert len(tied) > 1
            assert game.winner == min(tied, key=lambda p: game.finish_positions[p])
