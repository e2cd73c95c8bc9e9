"""Seating and dealing of a manche that starts with roles (RULES.md "Players and seats", "Deal").

With ``reseat_by_role`` the first manche is seated by the drawn or supplied roles, exactly as later manches
are seated by the previous finish: Président at seat 0, Trou du cul at seat 1 on his left, ..., Vice-Président
at seat P-1 on his right. Every manche with roles is dealt by its Trou du cul; a manche without roles by a
random seat. Fixed deals run on both implementations through ``make_game``; random deals on the engine
(``VecGame``, the AEC env) and the reference (``start_random_game``, ``deal_cards``).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import acts, deal_in_order, legal, make_deal, run
from oracle.reference import ReferenceGame, positions_from_roles, start_random_game, table_for_roles

import president_env as pe
from president_env import PASS, Rules
from president_env.core import manche
from president_env.core.cards import deck
from president_env.core.deals import ROLE_NAMES
from president_env.core.vec_game import VecGame
from president_env.envs.aec_env import raw_env
from president_env.evaluation.play import group_setup

FAMILY = pe.load_preset("family")  # initial_roles: draw, reseat_by_role, deal_start: dealer, lead: president
# Drawn roles by player: player i finished at position (i + 2) mod P in the draw.
DRAWN = {
    4: ["vice_trou", "trou_du_cul", "president", "vice_president"],
    5: ["neutre", "vice_trou", "trou_du_cul", "president", "vice_president"],
    6: ["neutre", "neutre", "vice_trou", "trou_du_cul", "president", "vice_president"],
}
# Their seats: Président (player P-2) at 0, Trou du cul (P-3) at 1, ..., Vice-Président (P-1) at P-1.
SEATS = {4: [2, 1, 0, 3], 5: [3, 2, 1, 0, 4], 6: [4, 3, 2, 1, 0, 5]}
# Cards by seat of a regular deal from the Trou du cul at seat 1 (4 players: with one joker, 53 cards).
SIZES = {
    (4, "dealer"): [13, 14, 13, 13],
    (4, "dealer_left"): [13, 13, 14, 13],
    (5, "dealer"): [10, 11, 11, 10, 10],
    (5, "dealer_left"): [10, 10, 11, 11, 10],
    (6, "dealer"): [8, 9, 9, 9, 9, 8],
    (6, "dealer_left"): [8, 8, 9, 9, 9, 9],
}


def family(n: int, **overrides) -> Rules:
    return FAMILY.replace(n_players=n, jokers=1 if n == 4 else 0, **overrides)


def cards_by_seat(rules: Rules, hands: list[list[str]], seat_of_player: list[int]) -> list[int]:
    sizes = [0] * rules.n_players
    for player, hand in enumerate(hands):
        sizes[seat_of_player[player]] = len(hand)
    return sizes


# ---------------------------------------------------------------- fixed deals, both implementations
@pytest.mark.parametrize("n", [4, 5, 6])
def test_drawn_roles_seat_the_first_manche_and_the_trou_du_cul_deals(make_game, n):
    rules = family(n)
    president, trou, vice_president = n - 2, n - 3, n - 1
    fixed = {f"p{president}": "3C 5C", f"p{trou}": "4C KC"}
    fixed.update({f"p{player}": "6C" if player == 0 else f"{player + 5}D" for player in range(trou)})
    game = make_game(rules, make_deal(rules, rest=vice_president, **fixed), roles=DRAWN[n])
    assert game.seat_of_player == SEATS[n]
    assert game.next_dealer == 1  # the Trou du cul's seat
    assert game.roles == DRAWN[n] and game.manche_index == 0
    # exchange [1]: the Trou du cul's K went to the Président, who gives back first.
    assert game.phase == "exchange" and game.current_player == president
    run(game, rules, f"{president}:g3")
    assert game.hands[trou][:2] == [1, 1]  # 3 and 4
    # The Président leads; then clockwise: the Trou du cul on his left, the Vice-Trou, ..., the Vice-Président.
    run(game, rules, f"{president}:5")
    order = [game.current_player]
    while True:
        game.step(min(legal(game)))  # pass
        if game.current_player == president:
            break
        order.append(game.current_player)
    assert order == [trou, *range(trou - 1, -1, -1), vice_president]


@pytest.mark.parametrize("n", [4, 5, 6])
def test_supplied_roles_without_reseat_keep_the_seats_and_the_trou_du_cul_deals(make_game, n):
    rules = family(n, reseat_by_role=False, initial_roles="none")
    hands = make_deal(rules, rest=n - 1, **{f"p{player}": f"{player + 3}C" for player in range(n - 1)})
    game = make_game(rules, hands, roles=DRAWN[n])
    assert game.seat_of_player == list(range(n))
    assert game.next_dealer == n - 3  # the Trou du cul, at his own seat
    assert game.current_player == n - 2  # the Président gives back first


@pytest.mark.parametrize("n", [4, 5, 6])
def test_a_dealer_with_roles_is_refused(make_game, n):
    rules = family(n)
    hands = make_deal(rules, rest=0, **{f"p{player}": f"{player + 3}C" for player in range(1, n)})
    with pytest.raises(ValueError, match="Trou du cul"):
        make_game(rules, hands, dealer=1, roles=DRAWN[n])
    assert make_game(rules.replace(initial_roles="none"), hands, dealer=2).next_dealer == 2  # no roles: any seat


@pytest.mark.parametrize("deal_start", ["dealer", "dealer_left"])
@pytest.mark.parametrize("n", [4, 5, 6])
def test_the_next_manche_is_dealt_by_the_trou_du_cul_from_his_new_seat(make_game, n, deal_start):
    """The engine checks a redeal's hand sizes against the dealer; the reference checks every later deal."""
    rules = family(n, deal_start=deal_start, manches=2)
    hands = make_deal(rules, rest=n - 1, **{f"p{player}": f"{player + 3}C" for player in range(n - 1)})
    game = make_game(rules, hands, roles=DRAWN[n])
    while game.phase != "needs_deal":
        game.step(min(legal(game)))
    assert game.seat_of_player[game.finish_positions.index(n - 1)] == 1 and game.next_dealer == 1
    regular = deal_in_order(rules, deck(rules.decks, rules.jokers), 1, game.seat_of_player)
    assert cards_by_seat(rules, regular, game.seat_of_player) == SIZES[n, deal_start]
    if SIZES[n, deal_start] != SIZES[n, "dealer_left" if deal_start == "dealer" else "dealer"]:
        wrong = deal_in_order(rules, deck(rules.decks, rules.jokers), 0, game.seat_of_player)
        with pytest.raises(ValueError):
            game.deal(wrong)
    game.deal(regular)
    assert game.phase == "exchange" and game.next_dealer == 1


def test_a_trou_du_cul_dealt_only_the_cards_he_gives_plays_on(make_game):
    rules = family(4)  # exchange [1], the Président leads
    game = make_game(rules, make_deal(rules, rest=3, p0="3C 4C", p1="KC", p2="5C 6C"), roles=DRAWN[4])
    assert game.hands[1] == [0] * rules.n_ranks  # player 1, the Trou du cul, gave his K
    run(game, rules, "2:g5 2:6")  # the Président gives back his 5, then leads a 6
    assert game.current_player == 1 and legal(game) == {PASS}  # the Trou du cul still takes his turn
    run(game, rules, "1:pass 0:pass 3:pass 2:K 1:pass 0:pass 3:pass")  # the Président went out on his K
    assert game.current_player == 1 and legal(game) == acts(rules, "5")  # the next holder on his left leads
    run(game, rules, "1:5")  # the card he got back: he goes out
    assert game.finish_order_so_far == [2, 1]


@pytest.mark.parametrize("n", [4, 5, 6])
def test_a_supplied_deal_too_short_for_the_exchange_is_refused(make_game, n):
    rules = family(n, exchange=(2,))
    hands = make_deal(rules, rest=n - 1, **{f"p{player}": f"{player + 3}C" for player in range(n - 1)})
    with pytest.raises(ValueError, match="must give 2 cards"):
        make_game(rules, hands, roles=DRAWN[n])  # the Trou du cul, player P-3, holds one card


# ---------------------------------------------------------------- random deals
@pytest.mark.parametrize("deal_start", ["dealer", "dealer_left"])
@pytest.mark.parametrize("n", [4, 5, 6])
def test_engine_draw_seats_by_role_and_the_trou_du_cul_gets_the_deal_order(n, deal_start):
    rules = family(n, deal_start=deal_start)
    game = VecGame(rules, batch_size=32, seed=n)
    state = game.state
    roles = state.roles  # by seat
    assert (roles[:, 0] == ROLE_NAMES.index("president")).all()
    assert (roles[:, 1] == ROLE_NAMES.index("trou_du_cul")).all()
    assert (roles[:, n - 1] == ROLE_NAMES.index("vice_president")).all()
    assert (state.dealer == 1).all()
    for slot in range(game.batch_size):
        assert np.bincount(state.dealt_to[slot], minlength=n).tolist() == SIZES[n, deal_start]
        assert state.player_at_seat[slot, state.seat_of_player[slot]].tolist() == list(range(n))
    assert len({tuple(row) for row in state.seat_of_player.tolist()}) > 1  # the draw differs between games


@pytest.mark.parametrize("deal_start", ["dealer", "dealer_left"])
@pytest.mark.parametrize("n", [4, 5, 6])
def test_reference_draw_seats_by_role_and_deals_from_the_trou_du_cul(n, deal_start):
    rules = family(n, deal_start=deal_start, exchange=())  # no exchange: the hands are the dealt ones
    for seed in range(4):
        game = start_random_game(rules, np.random.default_rng(seed))
        seat_of_role = {role: game.seat_of_player[player] for player, role in enumerate(game.roles)}
        assert (seat_of_role["president"], seat_of_role["trou_du_cul"]) == (0, 1)
        assert seat_of_role["vice_president"] == n - 1 and game.next_dealer == 1
        assert cards_by_seat(rules, [["x"] * sum(h) for h in game.hands], game.seat_of_player) == SIZES[n, deal_start]
    with pytest.raises(ValueError):
        start_random_game(rules, np.random.default_rng(0), dealer=1)


def test_reference_refuses_a_dealer_with_roles():
    rules = family(5)
    hands = make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C", p4="6C")
    with pytest.raises(ValueError, match="Trou du cul"):
        ReferenceGame(rules, hands, 0, DRAWN[5])
    with pytest.raises(ValueError, match="Trou du cul"):
        ReferenceGame(rules, hands, 0, previous_positions=[2, 3, 4, 0, 1])
    game = ReferenceGame(rules, hands, previous_positions=[2, 3, 4, 0, 1])
    assert game.seat_of_player == SEATS[5] and game.next_dealer == 1


def test_without_roles_a_random_seat_deals_and_players_keep_their_seats():
    rules = family(5, initial_roles="none")
    game = VecGame(rules, batch_size=64, seed=3)
    assert set(game.state.dealer.tolist()) == set(range(5))
    assert (game.state.seat_of_player == np.arange(5)).all() and (game.state.roles == -1).all()


# ---------------------------------------------------------------- VecGame.reset and the AEC env options
def test_vecgame_reset_roles_per_slot_and_dealers_with_roles_refused():
    rules = family(5, initial_roles="none")
    game = VecGame(rules, batch_size=2, seed=0)
    game.reset(seed=1, roles=[DRAWN[5], None])
    assert game.state.seat_of_player.tolist() == [SEATS[5], list(range(5))]
    assert game.state.dealer[0] == 1 and game.state.roles[1, 0] == -1
    before = game.state.copy()
    with pytest.raises(ValueError, match="slot 0, which starts with roles"):
        game.reset(seed=2, dealers=[1, 0], roles=[DRAWN[5], None])
    with pytest.raises(ValueError, match="initial_roles='draw'"):
        VecGame(family(5), batch_size=1, seed=0).reset(dealers=[1])
    for name in ("hands", "seat_of_player", "dealer", "roles"):
        np.testing.assert_array_equal(getattr(game.state, name), getattr(before, name))
    game.reset(seed=2, dealers=[4, 0])  # without roles a dealer may be given
    assert game.state.dealer.tolist() == [4, 0]


@pytest.mark.parametrize("n", [4, 5, 6])
def test_aec_infos_show_the_seats_of_a_draw(n):
    aec = raw_env(rules=family(n))
    for seed in range(5):
        aec.reset(seed=seed)
        seat = {aec.infos[agent]["role"]: aec.infos[agent]["seat"] for agent in aec.agents}
        assert (seat["president"], seat["trou_du_cul"], seat["vice_president"]) == (0, 1, n - 1)
        assert aec.game.state.dealer[0] == 1
        assert aec.agent_selection == next(a for a in aec.agents if aec.infos[a]["role"] == "president")


@pytest.mark.parametrize("n", [4, 5, 6])
def test_aec_roles_option_seats_the_table_and_refuses_a_dealer(n):
    aec = raw_env(rules=family(n, initial_roles="none"))
    roles = {f"player_{i}": role for i, role in enumerate(DRAWN[n])}
    aec.reset(seed=0, options={"roles": roles})
    assert [aec.infos[f"player_{i}"]["seat"] for i in range(n)] == SEATS[n]
    assert [aec.infos[f"player_{i}"]["role"] for i in range(n)] == DRAWN[n]
    assert aec.game.state.dealer[0] == 1
    state = aec.game.state.copy()
    with pytest.raises(ValueError, match="Trou du cul"):
        aec.reset(seed=1, options={"roles": roles, "dealer": 1})
    for name in ("hands", "seat_of_player", "dealer", "current"):
        np.testing.assert_array_equal(getattr(aec.game.state, name), getattr(state, name))
    aec.reset(seed=1, options={"dealer": 3})  # without roles the dealer option stands
    assert aec.game.state.dealer[0] == 3 and [aec.infos[f"player_{i}"]["seat"] for i in range(n)] == list(range(n))


# ---------------------------------------------------------------- duplicate tournaments
@pytest.mark.parametrize("n", [4, 5, 6])
def test_duplicate_first_deals_are_regular_deals_from_the_drawn_trou_du_cul(n):
    """``evaluation.tournament`` fixes the first deal of a group; under ``family`` it must be the Trou du cul's
    regular deal at the table seated by the draw (``redeal`` checks hand sizes against the dealer)."""
    rules = family(n)
    dealers, deals, roles = group_setup(rules, np.random.default_rng(n), 6)
    assert dealers is None and len(roles) == 6
    for names, group in zip(roles, deals):
        seat_of_player, dealer = table_for_roles(rules, positions_from_roles(names, n))
        assert dealer == 1 and cards_by_seat(rules, group[0], seat_of_player) == SIZES[n, "dealer"]
    game = VecGame(rules, batch_size=6, seed=0)
    game.reset(deals=[group[0] for group in deals], roles=roles)
    game.redeal([group[0] for group in deals])  # raises if a hand size does not fit the engine's dealer
    assert (game.state.dealer == 1).all()


@pytest.mark.parametrize("preset", ["standard", "family", "big_table", "party"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_engines_deal_and_table_are_the_references(preset, seed):
    """Tournaments deal through ``manche.deal_hands`` / ``manche.table_for_roles``: the same cards, seats and dealer
    as the reference's ``deal_cards`` / ``table_for_roles`` from the same generator (the oracle is independent)."""
    from oracle.reference import deal_cards

    from president_env.core import engine

    rules = pe.load_preset(preset)
    n = rules.n_players
    rng = np.random.default_rng(seed)
    role_by_pos = engine.tables(rules).role_by_pos
    for _ in range(5):
        names = [ROLE_NAMES[role_by_pos[pos]] for pos in rng.permutation(n)]
        seat_of_player, dealer = manche.table_for_roles(rules, names)
        assert (seat_of_player, dealer) == table_for_roles(rules, positions_from_roles(names, n))
        state = rng.bit_generator.state
        ours = manche.deal_hands(rules, rng, dealer, seat_of_player)
        rng.bit_generator.state = state
        assert ours == deal_cards(rules, rng, dealer, seat_of_player)
        assert manche.deal_hands(rules, np.random.default_rng(seed), 0) == deal_cards(
            rules, np.random.default_rng(seed), 0, list(range(n))
        )
    with pytest.raises(ValueError, match="seat_of_player"):
        manche.deal_hands(rules, rng, 0, [0] * n)
    with pytest.raises(ValueError, match="dealer"):
        manche.deal_hands(rules, rng, n, None)
