"""Scripted fixed-deal tests: one or more per rule and per variant value of RULES.md.

Every test goes through the one-game interface of ``make_game`` only (see conftest), asserting exact
legal action sets, the exact sequence of players to act (``run`` checks who acts before each step) and
exact outcomes. Deals are whole decks with most cards in one "rest" hand, so the interesting hands stay short.
"""

from __future__ import annotations

import pytest
from helpers import H, act, acts, counts, deal_in_order, legal, make_deal, run, snapshot

from president_env import PASS, Rules
from president_env.core.cards import deck


def play_passive(game, rules: Rules) -> list[float]:
    """Finish the current manche with the lowest legal action everywhere: gives of the lowest rank, PASS
    whenever allowed, else the leader's single lowest card. So the leader plays out his whole hand, then the
    next holder clockwise, and so on: the finishing order is clockwise from the leader."""
    while True:
        action = min(legal(game))
        result = game.step(action)
        if result is not None:
            return result


def give_lowest(game, player: int) -> None:
    """Exchange phase: ``player`` (asserted to act) gives back his lowest card."""
    assert game.phase == "exchange" and game.current_player == player
    game.step(min(legal(game)))


def deal_sorted(game, rules: Rules) -> None:
    """Start the pending manche with the sorted deck dealt regularly from ``next_dealer``."""
    game.deal(deal_in_order(rules, deck(rules.decks, rules.jokers), game.next_dealer, game.seat_of_player))


# ---------------------------------------------------------------- playing a trick, players 3 / 4 / 5 / 8
@pytest.mark.parametrize(
    "scoring, points",
    [
        ("per_opponent_behind", [0.0, 3.0, 2.0, 1.0]),
        ("president_vice", [0.0, 2.0, 1.0, 0.0]),
    ],
)
def test_four_player_manche_follows_tricks_and_scores(make_game, scoring, points):
    rules = Rules(scoring=scoring, manches=1)  # one manche: the game ends with it
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 9H", p2="4C KS", p3="8D 8H"), dealer=0)
    assert game.phase == "play" and game.roles is None and game.manche_index == 0
    assert game.current_player == 1  # holder of the 3 of clubs
    assert legal(game) == acts(rules, "3 9")  # the leader may not pass
    run(game, rules, "1:3")
    assert legal(game) == acts(rules, "pass 4 K")
    run(game, rules, "2:4")
    assert legal(game) == acts(rules, "pass 8")  # k = 1 is fixed for the trick
    run(game, rules, "3:8 0:pass")
    assert legal(game) == acts(rules, "pass 9")
    run(game, rules, "1:9")
    assert game.finish_order_so_far == [1]
    run(game, rules, "2:K")
    assert game.finish_order_so_far == [1, 2]
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "3:pass")
    # player 0 passed earlier in this trick: it is over. Won by player 2, who is out: the next holder leads
    assert game.current_player == 3 and legal(game) == acts(rules, "8")
    assert run(game, rules, "3:8") == points
    assert game.finish_positions == [3, 0, 1, 2]
    assert game.finish_order_so_far == [1, 2, 3]
    assert game.scores == [int(p) for p in points]
    assert game.done and game.phase == "over" and game.winner == 1 and game.current_player == -1
    assert legal(game) == set()


@pytest.mark.parametrize(
    "scoring, points",
    [
        ("per_opponent_behind", [0.0, 2.0, 1.0]),
        ("president_vice", [0.0, 2.0, 0.0]),  # 3 players: no Vice-Président, the second scores 0
    ],
)
def test_three_player_manche(make_game, scoring, points):
    rules = Rules(n_players=3, scoring=scoring)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5D", p2="4H 6S"), dealer=2)
    run(game, rules, "1:3 2:4 0:pass")
    assert legal(game) == acts(rules, "pass 5")
    run(game, rules, "1:5")
    assert legal(game) == acts(rules, "pass 6")
    assert run(game, rules, "2:6") == points
    assert game.finish_positions == [2, 0, 1]


def test_five_player_roles_deal_sizes_and_exchange(make_game):
    rules = Rules(n_players=5, manches=2)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C", p4="6C"), dealer=0)
    assert run(game, rules, "1:3 2:4 3:5 4:6") == [0.0, 4.0, 3.0, 2.0, 1.0]
    assert game.phase == "needs_deal" and game.current_player == -1 and not game.done
    assert game.manche_index == 1 and game.finish_positions == [4, 0, 1, 2, 3]
    assert game.roles == ["trou_du_cul", "president", "vice_president", "neutre", "vice_trou"]
    assert game.next_dealer == 0  # the Trou du cul (player 0, seat 0) deals
    assert legal(game) == set()
    cards = deck()
    # 52 cards from seat 0, dealer_left: seats 1 and 2 hold 11 cards, the others 10
    good = deal_in_order(rules, cards, 0, [0, 1, 2, 3, 4])
    assert [len(h) for h in good] == [10, 11, 11, 10, 10]
    bad = deal_in_order(rules, cards, 4, [0, 1, 2, 3, 4])  # seats 0 and 1 hold 11
    before = snapshot(game)
    with pytest.raises(ValueError):
        game.deal(bad)
    assert snapshot(game) == before
    game.deal(good)
    assert game.phase == "exchange" and game.current_player == 1
    # the Trou du cul (player 0) holds 4C 5D 6H 7S 9C 10D JH QS AC 2D: he gives 2D and AC
    assert game.hands[0] == counts(rules, "4 5 6 7 9 10 J Q")
    assert game.hands[1] == counts(rules, "3 4 5 6 8 9 10 J K A A 2 2")
    assert sum(game.hands[4]) == 9 and sum(game.hands[2]) == 12
    run(game, rules, "1:g3")
    assert legal(game) == acts(rules, "g4 g5 g6 g8 g9 g10 gJ gK gA g2")
    run(game, rules, "1:g2")
    assert game.current_player == 2  # the Vice-Président gives back next
    give_lowest(game, 2)
    assert game.phase == "play" and game.current_player == 0  # the Trou du cul leads
    assert [sum(h) for h in game.hands] == [10, 11, 11, 10, 10]


def test_eight_players(make_game):
    rules = Rules(n_players=8, manches=2)
    hands = {f"p{i}": f"{r}C" for i, r in enumerate("3 4 5 6 7 8 9".split(), start=1)}
    game = make_game(rules, make_deal(rules, rest=0, **hands), dealer=5)
    assert run(game, rules, "1:3 2:4 3:5 4:6 5:7 6:8 7:9") == [0.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    assert game.roles == [
        "trou_du_cul",
        "president",
        "vice_president",
        "neutre",
        "neutre",
        "neutre",
        "neutre",
        "vice_trou",
    ]
    assert game.next_dealer == 0
    good = deal_in_order(rules, deck(), 0, list(range(8)))
    assert [len(h) for h in good] == [6, 7, 7, 7, 7, 6, 6, 6]
    with pytest.raises(ValueError):
        game.deal(deal_in_order(rules, deck(), 1, list(range(8))))
    game.deal(good)
    # exchange [2, 1]: Président <-> Trou du cul (2 cards), Vice-Président <-> Vice-Trou (1 card)
    assert [sum(h) for h in game.hands] == [4, 9, 8, 7, 7, 6, 6, 5]
    give_lowest(game, 1)
    give_lowest(game, 1)
    give_lowest(game, 2)
    assert game.phase == "play" and game.current_player == 0


# ---------------------------------------------------------------- decks, jokers
def test_two_decks_plays_up_to_eight_and_three_of_clubs_lookup(make_game):
    rules = Rules(decks=2)
    sevens = "7C 7C 7D 7D 7H 7H 7S 7S"
    # dealer 1: the 3C holders clockwise from seat 2 are looked up 2, 3, 0, 1 (dealer last)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C " + sevens, p2="4C", p3="5C"), dealer=0)
    assert game.current_player == 1
    assert legal(game) == acts(rules, "3 " + " ".join(f"7x{k}" for k in range(1, 9)))
    run(game, rules, "1:7x8")
    assert legal(game) == acts(rules, "pass")
    game = make_game(rules, make_deal(rules, rest=2, p1="3C 3C", p0="4C", p3="5C"), dealer=1)
    assert game.current_player == 1  # the dealer holds both: he is reached last, but he is the only holder
    game = make_game(rules, make_deal(rules, rest=2, p1="3C", p3="3C", p0="4C"), dealer=1)
    assert game.current_player == 3
    game = make_game(rules, make_deal(rules, rest=2, p1="3C", p0="3C", p3="4C"), dealer=1)
    assert game.current_player == 0
    game = make_game(rules, make_deal(rules, rest=0, p1="3C", p2="3C", p3="4C"), dealer=3)
    assert game.current_player == 1  # lookup 0, 1, 2, 3


def test_two_decks_deal_sizes(make_game):
    rules = Rules(decks=2, n_players=6, manches=2)
    hands = {f"p{i}": f"{i + 2}C" for i in range(1, 6)}  # 3C .. 7C
    game = make_game(rules, make_deal(rules, rest=0, **hands), dealer=0)
    run(game, rules, "1:3 2:4 3:5 4:6 5:7")
    good = deal_in_order(rules, deck(2), 0, list(range(6)))
    assert [len(h) for h in good] == [17, 18, 18, 17, 17, 17]
    with pytest.raises(ValueError):
        game.deal(deal_in_order(rules, deck(2), 2, list(range(6))))
    game.deal(good)
    assert game.phase == "exchange"


def test_jokers_rank_above_two_and_are_given_first(make_game):
    rules = Rules(jokers=2)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 2H", p2="JK 4D", p3="JK 2S 5S"), dealer=0)
    run(game, rules, "1:3 2:4 3:5 0:pass")
    run(game, rules, "1:2")
    assert legal(game) == acts(rules, "pass JK")
    run(game, rules, "2:JK")  # player 2 out
    assert legal(game) == acts(rules, "pass")  # a joker does not beat a joker
    run(game, rules, "3:pass")
    assert game.current_player == 3 and legal(game) == acts(rules, "2 JK")
    # the exchange: the Trou du cul's best cards are the jokers
    hands = make_deal(rules, rest=1, p0="JK JK 3D 4D", p2="5D", p3="6D")
    game = make_game(rules, hands, roles=["trou_du_cul", "vice_president", "president", "vice_trou"])
    assert game.current_player == 2
    assert game.hands[2] == counts(rules, "5 JK JK")
    assert game.hands[0] == counts(rules, "3 4")
    assert legal(game) == acts(rules, "g5 gJK")


def test_joker_pair_needs_two_jokers(make_game):
    rules = Rules(jokers=2)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 3D JK", p2="JK 4D", p3="5S"), dealer=0)
    assert legal(game) == acts(rules, "3 3x2 JK")
    run(game, rules, "1:3x2")
    assert legal(game) == acts(rules, "pass")


# ---------------------------------------------------------------- roles, exchange, lead
ROLES4 = ["trou_du_cul", "president", "vice_president", "vice_trou"]


@pytest.mark.parametrize("lead, leader", [("trou_du_cul", 0), ("president", 1)])
def test_exchange_two_one_and_lead(make_game, lead, leader):
    rules = Rules(lead=lead)
    hands = make_deal(rules, rest=0, p1="3C 4D 5H", p2="3D 6S", p3="7C KD 9H")
    game = make_game(rules, hands, roles=ROLES4)
    assert game.roles == ROLES4 and game.phase == "exchange"
    # automatic: the Trou du cul gives his two best (two 2s), the Vice-Trou his best (K)
    assert game.hands[1] == counts(rules, "3 4 5 2 2")
    assert game.hands[2] == counts(rules, "3 6 K")
    assert game.hands[3] == counts(rules, "7 9")
    assert sum(game.hands[0]) == 52 - 8 - 2
    assert game.current_player == 1 and legal(game) == acts(rules, "g3 g4 g5 g2")
    run(game, rules, "1:g3")
    assert legal(game) == acts(rules, "g4 g5 g2")
    run(game, rules, "1:g2")
    assert game.current_player == 2 and legal(game) == acts(rules, "g3 g6 gK")
    run(game, rules, "2:g3")
    assert game.phase == "play" and game.current_player == leader
    assert game.hands[1] == counts(rules, "4 5 2")
    assert game.hands[2] == counts(rules, "6 K")
    assert game.hands[3] == counts(rules, "3 7 9")
    assert game.hands[0][0] == 3 and game.hands[0][12] == 3  # 3D, 3H, 3S; 2s: 4 - 2 + 1


def test_exchange_one_pair_only(make_game):
    rules = Rules(exchange=[1])
    hands = make_deal(rules, rest=0, p1="3C 4D 5H", p2="3D 6S", p3="7C KD 9H")
    game = make_game(rules, hands, roles=ROLES4)
    assert game.hands[1] == counts(rules, "3 4 5 2") and game.hands[3] == counts(rules, "7 9 K")
    assert game.current_player == 1
    run(game, rules, "1:g5")
    assert game.phase == "play" and game.current_player == 0
    assert game.hands[1] == counts(rules, "3 4 2") and game.hands[2] == counts(rules, "3 6")


def test_three_players_use_only_the_first_exchange_entry(make_game):
    rules = Rules(n_players=3, exchange=[2, 1])
    hands = make_deal(rules, rest=0, p1="3C 4D", p2="5D 6S")
    game = make_game(rules, hands, roles=["trou_du_cul", "president", "neutre"])
    assert game.hands[1] == counts(rules, "3 4 2 2") and game.hands[2] == counts(rules, "5 6")
    run(game, rules, "1:g4 1:g2")
    assert game.phase == "play" and game.current_player == 0
    assert game.hands[1] == counts(rules, "3 2") and game.hands[2] == counts(rules, "5 6")


def test_supplied_neutres_are_ordered_by_player_index(make_game):
    # 6 players, exchange [2, 1, 1]: the third pair is position 2 (neutre) <-> position 3 (neutre)
    rules = Rules(n_players=6, exchange=[2, 1, 1])
    roles = ["neutre", "president", "vice_president", "vice_trou", "trou_du_cul", "neutre"]
    hands = make_deal(rules, rest=4, p0="3C 4C", p1="3D 4D", p2="3H 4H", p3="3S 4S", p5="5C KC")
    game = make_game(rules, hands, roles=roles)
    assert game.hands[0] == counts(rules, "3 4 K")  # player 0 is position 2, player 5 position 3
    assert game.hands[5] == counts(rules, "5")
    assert game.hands[2] == counts(rules, "3 4 4")  # the Vice-Trou's best: a 4
    run(game, rules, "1:g3 1:g4")
    assert game.current_player == 2
    run(game, rules, "2:g3")
    assert game.current_player == 0 and legal(game) == acts(rules, "g3 g4 gK")
    run(game, rules, "0:gK")
    assert game.phase == "play" and game.current_player == 4


def test_initial_roles_draw_needs_roles(make_game):
    rules = Rules(initial_roles="draw")
    hands = make_deal(rules, rest=0, p1="3C 4D 5H", p2="3D 6S", p3="7C KD 9H")
    with pytest.raises(ValueError):
        make_game(rules, hands, dealer=0)
    game = make_game(rules, hands, roles=ROLES4)
    assert game.phase == "exchange" and game.current_player == 1


@pytest.mark.parametrize(
    "roles",
    [
        ["president", "president", "vice_trou", "trou_du_cul"],
        ["president", "neutre", "vice_trou", "trou_du_cul"],
        ["president", "trou_du_cul", "vice_president"],
    ],
)
def test_invalid_roles_raise(make_game, roles):
    rules = Rules()
    with pytest.raises(ValueError):
        make_game(rules, make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C"), roles=roles)


@pytest.mark.parametrize("dealer, leader", [(0, 1), (2, 3), (3, 0)])
def test_first_lead_dealer_left(make_game, dealer, leader):
    rules = Rules(first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=2, p0="4C", p1="5C", p3="6C"), dealer=dealer)
    assert game.current_player == leader


def test_first_lead_three_of_clubs_ignores_dealer(make_game):
    rules = Rules()
    for dealer in range(4):
        game = make_game(rules, make_deal(rules, rest=0, p1="4C", p2="5C", p3="3C"), dealer=dealer)
        assert game.current_player == 3


# ---------------------------------------------------------------- pass_rule
def test_pass_rule_out_until_trick_end(make_game):
    rules = Rules(pass_rule="out_until_trick_end")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 6H 10D", p2="5C 7D", p3="4S KD"), dealer=0)
    assert run(game, rules, "1:3") is None
    assert legal(game) == acts(rules, "pass 5 7")
    run(game, rules, "2:pass 3:4 0:pass 1:6")
    assert game.current_player == 3  # player 2 passed: out of this trick
    assert legal(game) == acts(rules, "pass K")
    run(game, rules, "3:K")
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "1:pass")
    # player 3 won the trick but is out: player 0 leads
    assert game.current_player == 0 and PASS not in legal(game)


def test_pass_rule_can_return(make_game):
    rules = Rules(pass_rule="can_return")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 6H 10D", p2="5C 7D", p3="4S KD"), dealer=0)
    run(game, rules, "1:3 2:pass 3:4 0:pass 1:6")
    assert game.current_player == 2  # somebody played since his pass
    assert legal(game) == acts(rules, "pass 7")
    run(game, rules, "2:7 3:K")
    assert game.current_player == 0  # player 0 passed earlier and may play again
    run(game, rules, "0:pass")
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "1:pass 2:pass")
    assert game.current_player == 0 and PASS not in legal(game)


def test_can_return_trick_ends_when_back_at_last_player(make_game):
    rules = Rules(pass_rule="can_return")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 6H 10D", p2="5C 7D", p3="4S KD"), dealer=0)
    run(game, rules, "1:3 2:5 3:pass 0:pass 1:pass")
    assert game.current_player == 2 and legal(game) == acts(rules, "7")  # he won the trick


# ---------------------------------------------------------------- top_rank_ends_trick
@pytest.mark.parametrize("variant", [False, True])
def test_top_rank_two_ends_trick_without_jokers(make_game, variant):
    rules = Rules(top_rank_ends_trick=variant)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 2H 5D", p2="4C 6D", p3="7C 8D"), dealer=0)
    run(game, rules, "1:3 2:4 3:7 0:pass 1:2")
    if variant:
        assert game.current_player == 1 and legal(game) == acts(rules, "5")
    else:
        assert game.current_player == 2 and legal(game) == acts(rules, "pass")


def test_top_rank_with_jokers_is_the_joker(make_game):
    rules = Rules(top_rank_ends_trick=True, jokers=1)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 2H 5D", p2="4C 6D", p3="7C JK 8D"), dealer=0)
    run(game, rules, "1:3 2:4 3:7 0:pass 1:2")
    assert game.current_player == 2 and legal(game) == acts(rules, "pass")  # the 2 does not end it
    run(game, rules, "2:pass")
    assert legal(game) == acts(rules, "pass JK")
    run(game, rules, "3:JK")
    assert game.current_player == 3 and legal(game) == acts(rules, "8")


def test_top_rank_going_out_passes_the_lead_clockwise(make_game):
    rules = Rules(top_rank_ends_trick=True)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 2H", p2="4C 6D", p3="7C 8D"), dealer=0)
    run(game, rules, "1:3 2:4 3:7 0:pass 1:2")
    assert game.finish_order_so_far == [1]
    assert game.current_player == 2 and legal(game) == acts(rules, "6")


NINES = "9C 9D 9H 9S"


def test_top_rank_in_revolution_is_the_three(make_game):
    rules = Rules(top_rank_ends_trick=True, revolution=True)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5D " + NINES, p2="4C 4D", p3="8C"), dealer=0)
    run(game, rules, "1:9x4")
    assert game.revolution
    run(game, rules, "2:pass 3:pass 0:pass")
    assert game.current_player == 1 and legal(game) == acts(rules, "3 5")
    run(game, rules, "1:3")  # the strongest rank during a revolution
    assert game.current_player == 1 and legal(game) == acts(rules, "5")


def test_top_rank_in_revolution_with_jokers_stays_the_joker(make_game):
    rules = Rules(top_rank_ends_trick=True, revolution=True, jokers=1)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5D " + NINES, p2="4C 4D", p3="8C JK"), dealer=0)
    run(game, rules, "1:9x4 2:pass 3:pass 0:pass 1:3")
    assert game.current_player == 2 and legal(game) == acts(rules, "pass")
    run(game, rules, "2:pass")
    assert legal(game) == acts(rules, "pass JK")
    run(game, rules, "3:JK")
    assert game.current_player == 3 and legal(game) == acts(rules, "8")


def test_top_rank_is_judged_before_the_plays_own_revolution(make_game):
    # four 2s are the top rank in the normal order; they also start a revolution
    rules = Rules(top_rank_ends_trick=True, revolution=True)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5D 2C 2D 2H 2S", p2="4C 4D", p3="8C"), dealer=0)
    run(game, rules, "1:2x4")
    assert game.revolution and game.current_player == 1 and legal(game) == acts(rules, "3 5")


# ---------------------------------------------------------------- revolution
def test_revolution_inverts_and_jokers_stay_top(make_game):
    rules = Rules(revolution=True, jokers=1)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5D " + NINES, p2="4C 7D JK", p3="8C 8D 8H 8S KC"), dealer=0)
    run(game, rules, "1:9x4")
    assert game.revolution
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "2:pass")
    assert legal(game) == acts(rules, "pass 8x4")  # 8 is now stronger than 9
    run(game, rules, "3:pass")
    mask = legal(game)
    assert act(rules, "6x4") in mask and act(rules, "10x4") not in mask
    run(game, rules, "0:pass")
    assert game.current_player == 1 and legal(game) == acts(rules, "3 5")
    run(game, rules, "1:5")
    assert legal(game) == acts(rules, "pass 4 JK")  # 4 beats 5, 7 does not; the joker is strongest
    run(game, rules, "2:4")
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "3:pass 0:pass")
    assert legal(game) == acts(rules, "pass 3")


def test_revolution_flips_back_within_a_trick(make_game):
    rules = Rules(revolution=True)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C " + NINES, p2="4C 7D", p3="8C 8D 8H 8S KC"), dealer=0)
    run(game, rules, "1:9x4 2:pass")
    assert game.revolution
    run(game, rules, "3:8x4")
    assert not game.revolution
    mask = legal(game)
    assert act(rules, "10x4") in mask and act(rules, "7x4") not in mask
    run(game, rules, "0:pass 1:pass")
    assert game.current_player == 3 and legal(game) == acts(rules, "K")
    run(game, rules, "3:K 0:pass 1:pass")
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "2:pass")
    assert game.current_player == 0


def test_no_revolution_without_the_variant(make_game):
    rules = Rules()
    game = make_game(rules, make_deal(rules, rest=0, p1="3C " + NINES, p2="4C 7D", p3="8C 8D 8H 8S KC"), dealer=0)
    run(game, rules, "1:9x4 2:pass")
    assert not game.revolution and legal(game) == acts(rules, "pass")


def test_revolution_ends_with_the_manche(make_game):
    rules = Rules(revolution=True, manches=2)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C " + NINES, p2="4C", p3="5C"), dealer=0)
    run(game, rules, "1:9x4 2:pass 3:pass 0:pass 1:3 2:pass 3:pass 0:pass 2:4 3:pass 0:pass")
    assert game.revolution
    assert run(game, rules, "3:5") is not None
    deal_sorted(game, rules)
    assert not game.revolution


# ---------------------------------------------------------------- equal_rank
def test_equal_rank_none_forbids_matching(make_game):
    rules = Rules()
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 7C 9D", p2="7D 8C", p3="5C 6C"), dealer=0)
    run(game, rules, "1:7")
    assert legal(game) == acts(rules, "pass 8")


def test_equal_rank_skip(make_game):
    rules = Rules(equal_rank="skip")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 7C 9D", p2="7D 8C", p3="5C 6C"), dealer=0)
    run(game, rules, "1:7")
    assert legal(game) == acts(rules, "pass 7 8")
    run(game, rules, "2:7")
    assert game.current_player == 0  # player 3 is skipped
    assert act(rules, "7") in legal(game)
    run(game, rules, "0:pass")
    assert legal(game) == acts(rules, "pass 9")
    run(game, rules, "1:pass")
    # the turn comes back to the matcher: he wins the trick (player 3, skipped, never acted)
    assert game.current_player == 2 and legal(game) == acts(rules, "8")


def test_equal_rank_skip_skips_the_next_eligible_player(make_game):
    rules = Rules(equal_rank="skip")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 5C 9D", p2="4C 6D", p3="7C 8C"), dealer=0)
    run(game, rules, "1:5 2:pass 3:7 0:7")
    assert game.current_player == 3  # player 1 skipped, player 2 passed
    assert legal(game) == acts(rules, "pass 8")
    run(game, rules, "3:8")
    assert game.current_player == 0


def test_equal_rank_skip_back_to_matcher_ends_trick(make_game):
    rules = Rules(n_players=3, equal_rank="skip")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 7C 9D", p2="4C 5C"), dealer=0)
    run(game, rules, "1:7 2:pass 0:7")
    # player 1 skipped, player 2 passed: back to the matcher, who wins and leads
    assert game.current_player == 0 and PASS not in legal(game)


def test_equal_rank_or_nothing_binds_one_player(make_game):
    rules = Rules(equal_rank="or_nothing")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 7C 9D", p2="7D 8C KD", p3="5C 7H 10C"), dealer=0)
    run(game, rules, "1:7")
    assert legal(game) == acts(rules, "pass 7 8 K")
    run(game, rules, "2:7")
    assert legal(game) == acts(rules, "pass 7")  # match or nothing: not the 10
    run(game, rules, "3:pass")
    mask = legal(game)
    assert acts(rules, "pass 7 8 9 10 J Q K A 2") == mask  # the constraint is gone
    run(game, rules, "0:pass")
    assert legal(game) == acts(rules, "pass 9")
    run(game, rules, "1:9")
    assert legal(game) == acts(rules, "pass K")


def test_equal_rank_or_nothing_chains(make_game):
    rules = Rules(equal_rank="or_nothing")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 7C 9D", p2="7D 8C KD", p3="5C 7H 10C"), dealer=0)
    run(game, rules, "1:7 2:7 3:7")
    assert legal(game) == acts(rules, "pass 7")  # player 0 holds the last 7
    run(game, rules, "0:7")
    assert legal(game) == acts(rules, "pass")  # player 1 has no 7
    run(game, rules, "1:pass")
    assert legal(game) == acts(rules, "pass 8 K")


# ---------------------------------------------------------------- finish_on_two
@pytest.mark.parametrize("jokers, last_card", [(0, "2C"), (1, "JK")])
@pytest.mark.parametrize("finish_on_two", ["allowed", "penalty"])
def test_finish_on_two_one_offender(make_game, jokers, last_card, finish_on_two):
    rules = Rules(finish_on_two=finish_on_two, jokers=jokers)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C " + last_card, p2="4C 5D", p3="6C 8D"), dealer=0)
    run(game, rules, "1:3 2:4 3:6 0:pass")
    run(game, rules, "1:" + ("JK" if jokers else "2"))
    assert game.finish_order_so_far == [1]
    run(game, rules, "2:pass 3:pass")
    assert game.current_player == 2
    run(game, rules, "2:5")
    assert legal(game) == acts(rules, "pass 8")
    points = run(game, rules, "3:8")
    assert game.finish_order_so_far == [1, 2, 3]
    if finish_on_two == "penalty":
        assert game.finish_positions == [2, 3, 0, 1] and points == [1.0, 0.0, 3.0, 2.0]
    else:
        assert game.finish_positions == [3, 0, 1, 2] and points == [0.0, 3.0, 2.0, 1.0]


def test_finish_on_two_two_offenders(make_game):
    rules = Rules(finish_on_two="penalty")
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 2C", p2="4C 2D", p3="6C 8D"), dealer=0)
    run(game, rules, "1:3 2:4 3:6 0:pass 1:2")
    assert legal(game) == acts(rules, "pass")
    run(game, rules, "2:pass 3:pass")
    assert game.current_player == 2 and legal(game) == acts(rules, "2")
    run(game, rules, "2:2 3:pass 0:pass")
    assert game.current_player == 3
    points = run(game, rules, "3:8")
    # normal finishers (3), then the holder (0), then the offenders in order (1, then 2)
    assert game.finish_positions == [1, 2, 3, 0] and points == [2.0, 1.0, 0.0, 3.0]


def test_finish_on_two_wild_two_counts(make_game):
    rules = Rules(finish_on_two="penalty", twos_wild=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="7C 2C", p2="5D", p3="6C"), dealer=0)
    assert legal(game) == acts(rules, "7 7x2 2")
    run(game, rules, "1:7x2 2:pass 3:pass 0:pass")
    assert game.current_player == 2
    points = run(game, rules, "2:5 3:6")
    assert game.finish_positions == [2, 3, 0, 1] and points == [1.0, 0.0, 3.0, 2.0]


# ---------------------------------------------------------------- twos_wild
def test_twos_wild_mask_and_naturals_first(make_game):
    rules = Rules(twos_wild=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="7C 7D 2C 9H", p2="9C 2D", p3="3C AC"), dealer=0)
    assert legal(game) == acts(rules, "7 7x2 7x3 9 9x2 2")
    run(game, rules, "1:7x2")
    assert game.hands[1] == counts(rules, "9 2")  # naturals first: the 2 is kept
    assert legal(game) == acts(rules, "pass 9x2")  # 9 + wild 2; one 2 is not a pair of 2s
    run(game, rules, "2:9x2")
    assert game.hands[2] == counts(rules, "") and game.finish_order_so_far == [2]
    assert legal(game) == acts(rules, "pass")  # one A and no 2: no pair


def test_twos_wild_completion_and_twos_only(make_game):
    rules = Rules(twos_wild=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="5H 2C 2D", p2="AC AD", p3="3C"), dealer=0)
    assert legal(game) == acts(rules, "5 5x2 5x3 2 2x2")
    run(game, rules, "1:5x3")
    assert game.hands[1] == counts(rules, "")
    game = make_game(rules, make_deal(rules, rest=0, p1="5H 2C 2D", p2="AC AD", p3="3C"), dealer=0)
    run(game, rules, "1:2x2")  # a play of only 2s is a play of 2s: the aces cannot follow
    assert legal(game) == acts(rules, "pass")


def test_twos_wild_never_completes_jokers_and_counts_for_revolution(make_game):
    rules = Rules(twos_wild=True, jokers=1, revolution=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="JK 2C 7C 7D 7H", p2="AC", p3="3C"), dealer=0)
    assert legal(game) == acts(rules, "JK 2 7 7x2 7x3 7x4")
    run(game, rules, "1:7x4")
    assert game.revolution and game.hands[1] == counts(rules, "JK")


def test_twos_wild_max_count_is_the_copies(make_game):
    rules = Rules(twos_wild=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="7C 7D 7H 7S 2C", p2="AC", p3="3C"), dealer=0)
    assert legal(game) == acts(rules, "7 7x2 7x3 7x4 2")
    run(game, rules, "1:7x4")
    assert game.hands[1] == counts(rules, "2")


# ---------------------------------------------------------------- reseat_by_role, deal_start
@pytest.mark.parametrize("deal_start, big", [("dealer_left", [4, 3]), ("dealer", [0, 4])])
def test_reseat_by_role_and_deal_start(make_game, deal_start, big):
    rules = Rules(n_players=5, manches=2, reseat_by_role=True, deal_start=deal_start)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C", p4="6C"), dealer=0)
    assert game.seat_of_player == [0, 1, 2, 3, 4]  # the first manche keeps the seating
    run(game, rules, "1:3 2:4 3:5 4:6")
    # Président (1) at seat 0, then clockwise Trou du cul (0), Vice-Trou (4), Neutre (3), Vice-Président (2)
    assert game.seat_of_player == [1, 0, 4, 3, 2]
    assert game.next_dealer == 1  # the Trou du cul's seat
    sizes = [10] * 5
    for player in big:
        sizes[player] = 11
    good = deal_in_order(rules, deck(), 1, game.seat_of_player)
    assert [len(h) for h in good] == sizes
    with pytest.raises(ValueError):
        game.deal(deal_in_order(rules, deck(), 0, game.seat_of_player))
    game.deal(good)
    give_lowest(game, 1)
    give_lowest(game, 1)
    give_lowest(game, 2)
    assert game.phase == "play" and game.current_player == 0
    play_passive(game, rules)
    # play_passive: clockwise from the leader (player 0 at seat 1): seats 1, 2, 3, 4, 0
    assert game.finish_positions == [0, 4, 3, 2, 1]


def test_three_player_reseat_and_three_way_tie(make_game):
    rules = Rules(n_players=3, manches=2, reseat_by_role=True)
    game = make_game(rules, make_deal(rules, rest=0, p1="3C", p2="4C"), dealer=0)
    assert run(game, rules, "1:3 2:4") == [0.0, 2.0, 1.0]
    assert game.seat_of_player == [1, 0, 2] and game.next_dealer == 1
    deal_sorted(game, rules)
    assert game.current_player == 1
    assert play_passive(game, rules) == [2.0, 0.0, 1.0]  # player 0 leads from seat 1, then seat 2 (player 2)
    assert game.scores == [2, 2, 2] and game.phase == "needs_deal" and game.manche_index == 2
    assert game.roles == ["president", "trou_du_cul", "neutre"]
    assert game.seat_of_player == [0, 1, 2] and game.next_dealer == 1
    deal_sorted(game, rules)
    assert play_passive(game, rules) == [0.0, 2.0, 1.0]
    assert game.scores == [2, 2, 2] and game.done and game.winner == 1 and game.phase == "over"


# ---------------------------------------------------------------- manches and the decisive manche
def _two_manche_game(make_game, rules):
    game = make_game(rules, make_deal(rules, rest=0, p1="5C", p2="3C", p3="4C"), dealer=1)
    run(game, rules, "2:3 3:4 0:pass 1:5")
    return game


def test_decisive_manche_on_a_tie(make_game):
    rules = Rules(manches=2, scoring="president_vice")
    game = _two_manche_game(make_game, rules)
    assert game.finish_positions == [3, 2, 0, 1] and game.scores == [0, 0, 2, 1]
    assert game.roles == ["trou_du_cul", "vice_trou", "president", "vice_president"]
    assert game.phase == "needs_deal" and game.next_dealer == 0 and game.manche_index == 1
    deal_sorted(game, rules)
    assert game.current_player == 2  # the Président gives back first
    assert play_passive(game, rules) == [2.0, 1.0, 0.0, 0.0]  # the Trou du cul (0) leads
    assert game.scores == [2, 1, 2, 1] and not game.done
    assert game.phase == "needs_deal" and game.manche_index == 2 and game.next_dealer == 3
    deal_sorted(game, rules)
    assert game.current_player == 0
    assert play_passive(game, rules) == [1.0, 0.0, 0.0, 2.0]  # player 3 leads and wins, but is not tied
    assert game.scores == [2, 1, 2, 1]  # the decisive manche adds nothing
    assert game.done and game.winner == 0 and game.finish_positions == [1, 2, 3, 0]
    assert game.manche_index == 2 and game.current_player == -1
    with pytest.raises(ValueError):
        game.step(PASS)
    with pytest.raises(ValueError):
        game.deal(deal_in_order(rules, deck(), 0, [0, 1, 2, 3]))


def test_no_decisive_manche_without_a_tie(make_game):
    rules = Rules(manches=2)
    game = _two_manche_game(make_game, rules)
    assert game.scores == [0, 1, 3, 2]
    deal_sorted(game, rules)
    assert play_passive(game, rules) == [3.0, 2.0, 1.0, 0.0]
    assert game.scores == [3, 3, 4, 2] and game.done and game.winner == 2 and game.manche_index == 1


# ---------------------------------------------------------------- illegal actions
def test_illegal_actions_raise_and_change_nothing(make_game):
    rules = Rules()
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 9H", p2="4C KS", p3="8D 8H"), dealer=0)
    before = snapshot(game)
    for action in [PASS, act(rules, "9x2"), act(rules, "K"), act(rules, "g3"), -1, rules.num_actions]:
        with pytest.raises(ValueError):
            game.step(action)
        assert snapshot(game) == before
    with pytest.raises(ValueError):
        game.deal(make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C"))
    assert snapshot(game) == before
    run(game, rules, "1:3")
    before = snapshot(game)
    for action in [act(rules, "3"), act(rules, "9"), act(rules, "4x2"), act(rules, "g4")]:
        with pytest.raises(ValueError):
            game.step(action)
        assert snapshot(game) == before
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 4D 5H", p2="3D 6S", p3="7C KD 9H"), roles=ROLES4)
    before = snapshot(game)
    for action in [PASS, act(rules, "3"), act(rules, "gK")]:
        with pytest.raises(ValueError):
            game.step(action)
        assert snapshot(game) == before


def test_bad_deals_raise(make_game):
    rules = Rules()
    with pytest.raises(ValueError):
        make_game(rules, [H("3C")] * 4)
    hands = make_deal(rules, rest=0, p1="3C", p2="4C", p3="5C")
    with pytest.raises(ValueError):
        make_game(rules, hands[:3])
    with pytest.raises(ValueError):
        make_game(rules, hands, dealer=4)


def test_finish_on_two_penalty_whatever_the_revolution(make_game):
    rules = Rules(finish_on_two="penalty", revolution=True, first_lead="dealer_left")
    game = make_game(rules, make_deal(rules, rest=0, p1="2C " + NINES, p2="4C", p3="5C"), dealer=0)
    run(game, rules, "1:9x4 2:pass 3:pass 0:pass 1:2")  # the 2 is the weakest rank now, still penalised
    assert legal(game) == acts(rules, "pass 4")
    run(game, rules, "2:4")
    assert legal(game) == acts(rules, "pass")
    points = run(game, rules, "3:pass 0:pass 3:5")
    assert game.finish_positions == [2, 3, 0, 1] and points == [1.0, 0.0, 3.0, 2.0]


def test_empty_exchange_list_means_roles_without_exchange(make_game):
    rules = Rules(exchange=[])
    game = make_game(rules, make_deal(rules, rest=0, p1="3C 4D 5H", p2="3D 6S", p3="7C KD 9H"), roles=ROLES4)
    assert game.phase == "play" and game.current_player == 0 and game.hands[1] == counts(rules, "3 4 5")
