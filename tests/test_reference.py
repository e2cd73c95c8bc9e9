"""Reference-only API: ``previous_positions`` and ``play_random_game``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import counts, make_deal, run
from oracle.reference import ReferenceGame, play_random_game

from president_env import Rules


def test_previous_positions_order_the_neutres():
    # 6 players, exchange [2, 1, 1]: positions 2 and 3 (two Neutres) form the third pair
    rules = Rules(n_players=6, exchange=[2, 1, 1], initial_roles="draw")
    hands = make_deal(rules, rest=4, p0="3C 4C", p1="3D 4D", p2="3H 4H", p3="3S 4S", p5="5C KC")
    by_name = ReferenceGame(
        rules, hands, roles=["neutre", "president", "vice_president", "vice_trou", "trou_du_cul", "neutre"]
    )
    drawn = ReferenceGame(rules, hands, previous_positions=[3, 0, 1, 4, 5, 2])
    assert by_name.roles == drawn.roles
    assert by_name.hands[0] == counts(rules, "3 4 K") and by_name.hands[5] == counts(rules, "5")
    assert drawn.hands[5] == counts(rules, "4 5 K") and drawn.hands[0] == counts(rules, "3")  # player 0 gives his 4
    run(drawn, rules, "1:g3 1:g4 2:g3")
    assert drawn.current_player == 5
    with pytest.raises(ValueError):
        ReferenceGame(rules, hands, previous_positions=[0, 0, 1, 2, 3, 4])
    with pytest.raises(ValueError):
        ReferenceGame(rules, hands, 0)


def test_play_random_game_finishes():
    for seed in range(6):
        rules = Rules(n_players=3 + seed, manches=2, initial_roles="draw" if seed % 2 else "none")
        game = play_random_game(rules, np.random.default_rng(seed))
        assert game.done and game.winner is not None and game.phase == "over"
        assert sorted(game.finish_positions) == list(range(rules.n_players))
