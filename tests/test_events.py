"""What an :class:`~president_env.game.single.Event` says an action did to the table: a player going out (its order
and finishing position, a penalty), a trick won (by whom, who leads next), the exchange over, the manche over.

Fixed deals pin every field of every event; random games on many rule sets, and the replays saved before these
fields existed, hold the invariants that tie the events together (one going out per finishing player, a trick won
exactly before a lead, one exchange over per exchange).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import act, legal, make_deal, rule_sets, run

from president_env import Rules
from president_env.core.actions import KIND_PLAY, action_tables
from president_env.core.cards import JOKER, TWO
from president_env.core.state import PHASE_EXCHANGE
from president_env.game.replay import Replay, load_replay, replay_steps
from president_env.game.single import OUTCOME_FIELDS, Event, SingleGame

REPLAYS = Path(__file__).parent / "data" / "replays"


def dealt(rules: Rules, deal: list[list[str]]) -> SingleGame:
    game = SingleGame.table(rules, seed=0)
    game.reset(seed=0, deals=[deal], dealers=[0])
    return game


def outcome(event: Event) -> dict:
    """The fields of ``event`` that say what it did, those not at their default only."""
    defaults = {"went_out": False, "penalized": False, "exchange_over": False}
    return {name: getattr(event, name) for name in OUTCOME_FIELDS if getattr(event, name) != defaults.get(name)}


def test_a_manche_of_fixed_deal_says_who_went_out_and_who_won_each_trick_and_the_exchange_ends():
    """Standard rules, 2 manches. Player 1 leads a 3 and goes out 1st on a 9, player 2 2nd on a K; player 3's pass
    closes the trick player 2 won (player 0 passed before): player 2 is out, so player 3 leads, and goes out on
    the last play, which ends the manche. In manche 2 the Président gives back 2 cards and the Vice-Président 1;
    the last give ends the exchange and the Trou du cul (player 0) leads."""
    rules = Rules(manches=2)
    game = dealt(rules, make_deal(rules, rest=0, p1="3C 9H", p2="4C KS", p3="8D 8H"))
    run(game, rules, "1:3 2:4 3:8 0:pass 1:9 2:K 3:pass 3:8")
    events = game.events
    assert [outcome(e) for e in events] == [
        {},
        {},
        {},
        {},
        {"went_out": True, "out_order": 0, "finish_position": 0},
        {"went_out": True, "out_order": 1, "finish_position": 1},
        {"trick_won_by": 2, "next_leader": 3},  # the winner is out: the next holder leads
        {"went_out": True, "out_order": 2, "finish_position": 2},  # ends the manche: no trick to win
    ]
    assert [e.leads for e in events] == [True] + [False] * 6 + [True]
    assert [e.manche_over for e in events] == [False] * 7 + [True]
    assert events[-1].positions == [3, 0, 1, 2] and not events[-1].game_over
    while game.phase == PHASE_EXCHANGE:  # the exchange of manche 2: the lowest gives
        game.step(min(legal(game)))
    gives = events[8:]
    assert [(e.kind, e.player, e.manche) for e in gives] == [("give", 1, 1), ("give", 1, 1), ("give", 2, 1)]
    assert [outcome(e) for e in gives] == [{}, {}, {"exchange_over": True, "next_leader": 0}]
    assert game.current_player == 0


def test_an_unbeatable_play_wins_the_trick_at_once_and_a_going_out_on_a_2_is_placed_at_the_end():
    """``top_rank_ends_trick`` and ``finish_on_two: penalty``: player 1's 2 wins the trick at once and is the
    last card: out 1st but penalized, no position until the manche ends (last), and player 2, the next holder,
    leads. Player 2's own 2 ends the next trick at once and keeps the lead."""
    rules = Rules(manches=1, top_rank_ends_trick=True, finish_on_two="penalty")
    game = dealt(rules, make_deal(rules, rest=0, p1="3C 2H", p2="4C 2S 5S", p3="8D 8H"))
    run(game, rules, "1:3 2:4 3:8 0:pass 1:2")
    assert outcome(game.events[-1]) == {
        "went_out": True, "out_order": 0, "penalized": True, "trick_won_by": 1, "next_leader": 2,
    }  # fmt: skip
    run(game, rules, "2:2")
    assert outcome(game.events[-1]) == {"trick_won_by": 2, "next_leader": 2}
    run(game, rules, "2:5")  # out 2nd, normally: first among the finishers who are not penalized
    assert outcome(game.events[-1]) == {"went_out": True, "out_order": 1, "finish_position": 0}
    while not game.done:  # the lowest legal action everywhere
        game.step(min(legal(game)))
    last = game.events[-1]
    assert last.manche_over and last.went_out and last.out_order == 2
    assert last.positions[1] == 3  # the offender is last, below the player left holding cards
    assert last.finish_position == last.positions[last.player]


def test_a_play_that_wins_its_trick_at_once_without_going_out_keeps_the_lead():
    rules = Rules(manches=1, top_rank_ends_trick=True)
    game = dealt(rules, make_deal(rules, rest=0, p1="3C 2H 5D", p2="4C KS", p3="8D 8H"))
    run(game, rules, "1:3 2:4 3:8 0:pass 1:2")
    assert outcome(game.events[-1]) == {"trick_won_by": 1, "next_leader": 1}
    event = game.step(act(rules, "5"))
    assert event.leads and outcome(event) == {"went_out": True, "out_order": 0, "finish_position": 0}


def check_events(events: list[Event], n_players: int) -> None:
    """The invariants that tie a game's events together (see the module docstring)."""
    manches: dict[int, list[Event]] = {}
    for event in events:
        manches.setdefault(event.manche, []).append(event)
    for manche, group in manches.items():
        outs = [e for e in group if e.went_out]
        assert [e.out_order for e in outs] == list(range(len(outs))), manche
        assert len({e.player for e in outs}) == len(outs) and all(e.kind == "play" for e in outs)
        gives = [e for e in group if e.kind == "give"]
        assert [e.exchange_over for e in gives] == [False] * (len(gives) - 1) + [True] * bool(gives)
        last = group[-1]
        if not last.manche_over:  # the game stopped here (a replay saved mid-manche)
            continue
        assert len(outs) == n_players - 1 and last.went_out, manche  # everyone but the last holder
        for e in outs:
            assert e.finish_position == (last.positions[e.player] if not e.penalized or e is last else None)
    trick: list[Event] = []
    for before, event in zip([None, *events], events):
        opens = before is None or before.trick_won_by is not None or before.exchange_over or before.manche_over
        assert event.leads == (opens and event.kind == "play"), (before, event)
        if before is not None and before.next_leader is not None:
            assert event.player == before.next_leader, (before, event)
        if event.leads:
            trick = []
        if event.kind != "give":
            trick.append(event)
        if event.trick_won_by is not None:  # the last to have played in the trick
            assert event.trick_won_by == [e.player for e in trick if e.kind == "play"][-1]
            assert event.kind in ("play", "pass") and not event.manche_over
        assert (event.next_leader is not None) == (event.trick_won_by is not None or event.exchange_over)
        assert not event.exchange_over or event.kind == "give"
        assert event.went_out or (event.out_order, event.finish_position, event.penalized) == (None, None, False)


def random_player(rules: Rules, rng: np.random.Generator, twos_last: bool) -> Callable[[np.ndarray], int]:
    """A uniformly random legal move, or with ``twos_last`` a 2 or a joker only when nothing else is legal (many
    then go out on one)."""
    kind, rank, _ = action_tables(rules)
    top = (kind == KIND_PLAY) & ((rank == TWO) | (rank == JOKER)) if twos_last else np.zeros(kind.size, bool)

    def choose(mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(rng.choice(legal[~top[legal]] if not top[legal].all() else legal))

    return choose


def play_randomly(rules: Rules, seed: int, twos_last: bool) -> SingleGame:
    """A game of random players (:func:`random_player`), each step's event checked against the hand it left."""
    game = SingleGame.table(rules, seed=seed)
    choose = random_player(rules, np.random.default_rng(seed), twos_last)
    while not game.done:
        event = game.step(choose(game.legal_mask()))
        if not event.manche_over:  # the hand the event says is empty, and no other
            assert (not game.cards[event.player]) == event.went_out, event
    check_events(game.events, rules.n_players)
    return game


@pytest.mark.parametrize("rules", rule_sets(n_random=6, seed=34), ids=lambda r: f"{r.n_players}p-{r.equal_rank}")
def test_random_games_hold_the_event_invariants_and_replays_rebuild_the_same_events(rules):
    """Uniform random players (seeds 0-2) and players who keep their 2s and jokers to the end (seeds 3-5)."""
    rules = rules.replace(manches=2)
    for seed in range(6):
        game = play_randomly(rules, seed, twos_last=seed >= 3)
        replayed = [dataclasses.asdict(e) for _, e in replay_steps(Replay.of(game))]
        assert replayed == [dataclasses.asdict(e) for e in game.events]  # derived on playing back, not stored


@pytest.mark.parametrize("n_players", [3, 4, 6])
def test_players_going_out_on_a_2_under_the_penalty_hold_the_invariants(n_players):
    """Under ``finish_on_two: penalty``, players who keep their 2s and jokers to the end go out on one: their
    events are penalized, placed only at the manche's end (``check_events``), one of them by the manche's last
    play."""
    rules = Rules(n_players=n_players, jokers=2, finish_on_two="penalty", manches=3)
    events = [e for seed in range(4) for e in play_randomly(rules, seed, twos_last=True).events]
    penalized = [e for e in events if e.penalized]
    assert len(penalized) >= 3 and all(any(c[:-1] == "2" or c == "JK" for c in e.cards) for e in penalized)
    assert any(not e.manche_over for e in penalized)


@pytest.mark.parametrize("path", sorted(REPLAYS.glob("*.json")), ids=lambda p: p.stem)
def test_replays_saved_before_yield_events_that_say_what_happened(path):
    replay = load_replay(path)
    events = [event for _, event in replay_steps(replay)]
    assert len(events) == len(replay.actions)
    check_events(events, replay.rules.n_players)
    assert any(e.trick_won_by is not None for e in events) and any(e.went_out for e in events)


def test_event_fields_are_json_values():
    rules = Rules(manches=1)
    game = dealt(rules, make_deal(rules, rest=0, p1="3C 9H", p2="4C KS", p3="8D 8H"))
    run(game, rules, "1:3 2:4 3:8 0:pass 1:9 2:K 3:pass")
    data = game.events[-1].to_dict()
    assert {k: data[k] for k in OUTCOME_FIELDS} == {
        "went_out": False, "out_order": None, "penalized": False, "finish_position": None, "trick_won_by": 2,
        "next_leader": 3, "exchange_over": False,
    }  # fmt: skip
    assert all(type(data[k]) in (bool, int, type(None)) for k in OUTCOME_FIELDS)
