"""Card notation, parsing and deal validation: errors name the problem."""

from __future__ import annotations

import numpy as np
import pytest

from president_env.core.cards import (
    JOKER,
    RANK_NAMES,
    TWO,
    card_name,
    deck,
    format_cards,
    hand_counts,
    parse_card,
    rank_index,
    validate_deal,
)


def deal_round_robin(cards: list[str], n_players: int) -> list[list[str]]:
    return [cards[i::n_players] for i in range(n_players)]


# ---- ranks and cards ---------------------------------------------------------


def test_rank_names_run_weakest_to_strongest():
    assert RANK_NAMES == ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "JK")
    assert rank_index("2") == TWO == 12
    assert rank_index("JK") == JOKER == 13


@pytest.mark.parametrize(("name", "index"), [("3", 0), ("10", 7), ("T", 7), ("t", 7), (" q ", 9), ("A", 11), (5, 5)])
def test_rank_index_accepts_names_t_and_indices(name, index):
    assert rank_index(name) == index


@pytest.mark.parametrize("bad", ["1", "11", "X", "", "JOKER", -1, 14, True])
def test_rank_index_rejects_unknown_ranks(bad):
    with pytest.raises(ValueError, match="rank"):
        rank_index(bad)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("3C", (0, "C")), ("10H", (7, "H")), ("TH", (7, "H")), ("th", (7, "H")), ("QS", (9, "S")), ("2d", (12, "D"))],
)
def test_parse_card_reads_rank_and_suit(text, parsed):
    assert parse_card(text) == parsed


def test_parse_card_reads_the_joker():
    assert parse_card("JK") == (JOKER, "")
    assert parse_card("jk") == (JOKER, "")


@pytest.mark.parametrize("bad", ["", "H", "1H", "11H", "10X", "10", "JKH", "ZZ", "3 C", "C3"])
def test_parse_card_rejects_bad_card_text(bad):
    with pytest.raises(ValueError, match="card"):
        parse_card(bad)


@pytest.mark.parametrize("bad", [7, None, ("3", "C")])
def test_parse_card_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="string"):
        parse_card(bad)


def test_card_name_inverts_parse_card_and_writes_10_not_t():
    for card in deck(1, 2):
        assert card_name(*parse_card(card)) == card
    assert card_name(*parse_card("TC")) == "10C"


@pytest.mark.parametrize(("decks", "jokers"), [(1, 0), (1, 2), (2, 0), (2, 4)])
def test_deck_holds_every_copy(decks, jokers):
    cards = deck(decks, jokers)
    assert len(cards) == 52 * decks + jokers
    assert cards.count("3C") == decks
    assert cards.count("JK") == jokers
    counts = hand_counts(cards, 13 + (jokers > 0))
    assert counts[:13].tolist() == [4 * decks] * 13


def test_hand_counts_counts_per_rank():
    counts = hand_counts(["3C", "3D", "TH", "2S", "JK"], 14)
    assert counts.dtype == np.int8
    assert counts.tolist() == [2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1]
    assert format_cards(counts) == "3 3 10 2 JK"


def test_hand_counts_rejects_a_joker_without_jokers():
    with pytest.raises(ValueError, match="JK"):
        hand_counts(["JK"], 13)


# ---- deal validation ------------------------------------------------------------


@pytest.mark.parametrize(("n_players", "decks", "jokers"), [(3, 1, 0), (4, 1, 0), (5, 1, 2), (8, 2, 4)])
def test_a_full_deal_is_accepted(n_players, decks, jokers):
    hands = deal_round_robin(deck(decks, jokers), n_players)
    assert validate_deal(hands, n_players, decks, jokers) == hands


def test_deal_accepts_t_for_10_and_normalises_it():
    hands = deal_round_robin(deck(), 4)
    written = [[card.replace("10", "T").lower() for card in hand] for hand in hands]
    assert validate_deal(written, 4, 1, 0) == hands


def test_deal_missing_a_card_names_it():
    hands = deal_round_robin(deck(), 4)
    removed = hands[2].pop(5)
    with pytest.raises(ValueError, match=f"missing {removed}$"):
        validate_deal(hands, 4, 1, 0)


def test_deal_with_a_duplicate_card_names_it():
    hands = deal_round_robin(deck(), 4)
    hands[1].append("7H")
    with pytest.raises(ValueError, match="too many copies: 7H"):
        validate_deal(hands, 4, 1, 0)


def test_deal_with_a_duplicate_in_place_of_a_card_names_both():
    hands = deal_round_robin(deck(), 4)
    hands[0][0] = hands[1][0]
    with pytest.raises(ValueError) as err:
        validate_deal(hands, 4, 1, 0)
    message = str(err.value)
    assert f"missing {deck()[0]}" in message
    assert f"too many copies: {hands[1][0]}" in message


def test_deal_with_a_joker_not_in_the_deck_names_it():
    hands = deal_round_robin(deck(), 4)
    hands[3].append("JK")
    with pytest.raises(ValueError, match="JK"):
        validate_deal(hands, 4, 1, 0)


@pytest.mark.parametrize("n_hands", [3, 5])
def test_deal_with_the_wrong_player_count_says_so(n_hands):
    hands = deal_round_robin(deck(), n_hands)
    with pytest.raises(ValueError, match=f"deal has {n_hands} hands, expected one per player \\(4\\)"):
        validate_deal(hands, 4, 1, 0)


def test_deal_with_an_empty_hand_names_the_hand():
    hands = deal_round_robin(deck(), 3) + [[]]
    with pytest.raises(ValueError, match="hand 3 is empty"):
        validate_deal(hands, 4, 1, 0)


def test_deal_with_bad_card_text_names_the_hand_and_card():
    hands = deal_round_robin(deck(), 4)
    hands[1][4] = "1H"
    with pytest.raises(ValueError, match="hand 1: bad card '1H'"):
        validate_deal(hands, 4, 1, 0)


@pytest.mark.parametrize("bad", ["3C 4C", None, 5])
def test_deal_that_is_not_a_list_of_hands_is_rejected(bad):
    with pytest.raises(ValueError, match="deal"):
        validate_deal(bad, 4, 1, 0)


def test_deal_with_a_hand_given_as_a_string_is_rejected():
    hands: list = deal_round_robin(deck(), 4)
    hands[0] = " ".join(hands[0])
    with pytest.raises(ValueError, match="hand 0 must be a list"):
        validate_deal(hands, 4, 1, 0)
