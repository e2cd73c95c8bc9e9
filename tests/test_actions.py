"""The action space: layout, encode/decode round trip, and errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

import president_env as pe
from president_env.core.actions import action_name, action_tables, typed_action
from president_env.core.cards import RANK_NAMES
from president_env.core.rules import Rules

RULES_UNDER_TEST = [
    Rules(),
    Rules(n_players=3, exchange=[1]),
    Rules(jokers=1),
    Rules(decks=2),
    Rules(n_players=8, decks=2, jokers=4),
    Rules(twos_wild=True, revolution=True, equal_rank="or_nothing"),
]
IDS = ["standard", "three_players", "one_joker", "two_decks", "big_table", "variants"]


def encode(rules: Rules, decoded: tuple) -> int:
    if decoded[0] == "pass":
        return pe.PASS
    if decoded[0] == "play":
        return pe.encode_play(rules, rank=decoded[1], count=decoded[2])
    return pe.encode_give(rules, rank=decoded[1])


def test_pass_is_action_zero():
    assert pe.PASS == 0
    assert pe.decode(Rules(), pe.PASS) == ("pass",)


def test_standard_layout_matches_the_documented_examples():
    rules = Rules()
    assert pe.num_actions(rules) == 66
    assert pe.encode_play(rules, rank="3", count=1) == 1
    assert pe.encode_play(rules, rank="7", count=2) == 1 + 4 * 4 + 1
    assert pe.encode_play(rules, rank="2", count=4) == 52
    assert pe.encode_give(rules, rank="3") == 53
    assert pe.encode_give(rules, rank="2") == 65
    assert pe.decode(rules, 18) == ("play", "7", 2)
    assert pe.decode(rules, 65) == ("give", "2")


@pytest.mark.parametrize("rules", RULES_UNDER_TEST, ids=IDS)
def test_every_action_round_trips_through_decode_and_encode(rules):
    assert pe.num_actions(rules) == rules.num_actions
    kinds = {"pass": 0, "play": 0, "give": 0}
    for action in range(rules.num_actions):
        decoded = pe.decode(rules, action)
        kinds[decoded[0]] += 1
        assert encode(rules, decoded) == action
        assert pe.decode(rules, np.int64(action)) == decoded
    assert kinds == {"pass": 1, "play": rules.n_ranks * rules.max_count, "give": rules.n_ranks}


@pytest.mark.parametrize("rules", RULES_UNDER_TEST, ids=IDS)
def test_every_play_and_give_has_its_own_index(rules):
    plays = [
        pe.encode_play(rules, rank=RANK_NAMES[r], count=k)
        for r in range(rules.n_ranks)
        for k in range(1, rules.max_count + 1)
    ]
    gives = [pe.encode_give(rules, rank=RANK_NAMES[r]) for r in range(rules.n_ranks)]
    assert sorted(plays + gives) == list(range(1, rules.num_actions))
    for r in range(rules.n_ranks):
        for k in range(1, rules.max_count + 1):
            assert pe.decode(rules, pe.encode_play(rules, rank=RANK_NAMES[r], count=k)) == ("play", RANK_NAMES[r], k)


@pytest.mark.parametrize("rules", RULES_UNDER_TEST, ids=IDS)
def test_action_tables_agree_with_decode_and_are_read_only(rules):
    kind, rank, count = action_tables(rules)
    assert kind.shape == rank.shape == count.shape == (rules.num_actions,)
    for action in range(rules.num_actions):
        decoded = pe.decode(rules, action)
        if decoded[0] == "play":
            assert (kind[action], RANK_NAMES[rank[action]], count[action]) == (1, decoded[1], decoded[2])
        elif decoded[0] == "give":
            assert (kind[action], RANK_NAMES[rank[action]], count[action]) == (2, decoded[1], 1)
        else:
            assert (kind[action], rank[action], count[action]) == (0, -1, 0)
    with pytest.raises(ValueError):
        kind[0] = 1


def test_rank_may_be_given_as_t_or_in_lower_case():
    rules = Rules()
    assert pe.encode_play(rules, rank="T", count=3) == pe.encode_play(rules, rank="10", count=3)
    assert pe.encode_give(rules, rank="t") == pe.encode_give(rules, rank="10")
    assert pe.encode_play(rules, rank="j", count=1) == pe.encode_play(rules, rank="J", count=1)


@pytest.mark.parametrize("rank", [7, np.int64(7), 7.0, None, True, b"7"])
def test_encode_refuses_a_rank_that_is_not_a_name(rank):
    """``rank=7`` once meant rank index 7 (a 10): only rank names are accepted now, with a clear error."""
    with pytest.raises(ValueError, match="rank must be a rank name"):
        pe.encode_play(Rules(), rank=rank, count=1)
    with pytest.raises(ValueError, match="rank must be a rank name"):
        pe.encode_give(Rules(), rank=rank)


def test_action_name_is_short_human_text():
    rules = Rules()
    assert action_name(rules, pe.PASS) == "pass"
    assert action_name(rules, pe.encode_play(rules, rank="7", count=2)) == "play 7 7"
    assert action_name(rules, pe.encode_give(rules, rank="3")) == "give 3"


@pytest.mark.parametrize("rank", ["1", "X", "11", "", 14, -1])
def test_encode_rejects_a_bad_rank(rank):
    with pytest.raises(ValueError, match="rank"):
        pe.encode_play(Rules(), rank=rank, count=1)
    with pytest.raises(ValueError, match="rank"):
        pe.encode_give(Rules(), rank=rank)


def test_encode_rejects_the_joker_without_jokers():
    with pytest.raises(ValueError, match="JK"):
        pe.encode_play(Rules(), rank="JK", count=1)
    with pytest.raises(ValueError, match="JK"):
        pe.encode_give(Rules(), rank="JK")
    assert pe.decode(Rules(jokers=1), pe.encode_play(Rules(jokers=1), rank="JK", count=1)) == ("play", "JK", 1)


@pytest.mark.parametrize(("rules", "count"), [(Rules(), 0), (Rules(), 5), (Rules(), -1), (Rules(decks=2), 9)])
def test_encode_rejects_a_count_outside_1_to_the_largest_play(rules, count):
    with pytest.raises(ValueError, match="count"):
        pe.encode_play(rules, rank="5", count=count)


@pytest.mark.parametrize("count", [True, 1.0, "2", None])
def test_encode_rejects_a_count_that_is_not_an_integer(count):
    with pytest.raises(ValueError, match="count"):
        pe.encode_play(Rules(), rank="5", count=count)


def test_eight_of_a_rank_is_a_play_with_two_decks():
    rules = Rules(decks=2)
    assert pe.decode(rules, pe.encode_play(rules, rank="A", count=8)) == ("play", "A", 8)


@pytest.mark.parametrize("rules", RULES_UNDER_TEST, ids=IDS)
def test_decode_rejects_out_of_range_actions(rules):
    for action in (-1, rules.num_actions, rules.num_actions + 100):
        with pytest.raises(ValueError, match="out of range"):
            pe.decode(rules, action)


@pytest.mark.parametrize("action", [True, 1.0, "3", None])
def test_decode_rejects_non_integer_actions(action):
    with pytest.raises(ValueError, match="integer"):
        pe.decode(Rules(), action)


def _ranks(text: str) -> list[int]:
    return [RANK_NAMES.index(name) for name in text.split()]


def test_typed_cards_become_one_action_with_wild_twos_after_the_naturals():
    """The one door for typed or picked cards (president-play and president-web both call it)."""
    wild, plain = Rules(twos_wild=True), Rules()
    assert typed_action(plain, "play", _ranks("7 7")) == pe.encode_play(plain, "7", 2)
    assert typed_action(plain, "play", _ranks("2 2")) == pe.encode_play(plain, "2", 2)
    assert typed_action(wild, "play", _ranks("7 2 7")) == pe.encode_play(wild, "7", 3)
    assert typed_action(wild, "give", _ranks("Q")) == pe.encode_give(wild, "Q")
    refused = [
        (plain, "play", "7 2", "a play is cards of one rank, not 7 2 (2s are not wild in these rules)"),
        (wild, "play", "7 8 2", "a play is cards of one rank, not 7 8 2"),
        (plain, "play", "JK", "there are no jokers in this game"),
        (plain, "play", "7 7 7 7 7", "a play holds at most 4 cards of one rank"),
        (plain, "give", "3 4", "give back one card at a time"),
        (plain, "play", "", "play what? name one or more cards"),
    ]
    for rules, kind, text, message in refused:
        with pytest.raises(ValueError) as caught:
            typed_action(rules, kind, _ranks(text))
        assert str(caught.value) == message
