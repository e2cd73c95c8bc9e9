"""``SingleGame`` (the envs' one game) against the engine's ``VecGame(batch_size=1)``.

``SingleGame`` steps through the kernels bound to its slot and copies the slot into Python fields after every
step (only what a play may change, ``trick.PLAY_CHANGES``), and writes the observation itself. Both start from
the same seed (so the same deals), take the same random legal actions, and must show the same player to act,
legal mask, observation from every seat, rewards, game ends, and whole state after every step, on every preset and
on random rule sets (through the one harness of ``lockstep.py``).
``test_differential.py`` ties ``VecGame`` to the reference.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers import rule_sets, uncovered
from lockstep import lockstep

from president_env.core.cards import hand_counts
from president_env.core.engine import sample_legal
from president_env.core.observation import observe
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame
from president_env.game.single import FIELDS, SingleGame


def assert_same_state(single: SingleGame, game: VecGame, context: str) -> None:
    state = single.to_state()
    for name in FIELDS:
        ours, theirs = getattr(state, name), getattr(game.state, name)
        assert np.array_equal(ours, theirs), f"{context}: field {name} differs: {ours} vs {theirs}"


class SingleSide:
    """``SingleGame`` for the lockstep harness."""

    def __init__(self, rules: Rules, seed: int, reward_mode: str) -> None:
        self.game = SingleGame(rules, seed=seed, reward_mode=reward_mode)
        self.rules = rules

    def facts(self) -> dict:
        game, state = self.game, self.game.to_state()
        for player, hand in enumerate(game.cards):  # the cards with suits are the engine's counts
            seat = game.seat_of_player[player]
            assert hand_counts(hand, self.rules.n_ranks).tolist() == list(game.hands[seat]), (player, hand)
        views = {f"view of seat {seat}": game.observe(seat) for seat in range(self.rules.n_players)}
        return {"player": game.current_player, "mask": game.legal_mask().copy(), **views, **_fields(state)}

    def step(self, action: int) -> dict:
        before = self.game.to_state()
        event = self.game.step(action)
        record = (self.game.ended if event.game_over else self.game).record  # an ended game keeps its record
        assert (record.actions[-1], record.movers[-1], len(record.actions)) == (action, event.player, event.index + 1)
        if event.game_over:  # the ended game's table before its last play stays readable
            assert _fields(self.game.ended.to_state()) == _fields(before) and self.game.ended.ended is None
        rewards = event.rewards
        return {"rewards": np.zeros(self.rules.n_players, np.float32) if rewards is None else np.float32(rewards),
                "done": event.game_over}  # fmt: skip


class EngineSide:
    """``VecGame(batch_size=1)`` for the lockstep harness."""

    def __init__(self, rules: Rules, seed: int, reward_mode: str) -> None:
        self.game = VecGame(rules, batch_size=1, seed=seed, reward_mode=reward_mode)
        self.rules = rules

    def facts(self) -> dict:
        game, state, n = self.game, self.game.state, self.rules.n_players
        views = {f"view of seat {seat}": observe(self.rules, state, np.array([seat]))[0] for seat in range(n)}
        return {"player": int(game.current_player[0]), "mask": game.legal_mask()[0], **views, **_fields(state)}

    def step(self, action: int) -> dict:
        rewards, done = self.game.step(np.array([action]))
        return {"rewards": rewards[0], "done": bool(done[0])}


def _fields(state) -> dict:
    """Every ``GameState`` field of slot 0, as bytes with its dtype (comparable with ``==``)."""
    return {name: (getattr(state, name).dtype.str, getattr(state, name)[0].tobytes()) for name in FIELDS}


def play_lockstep(rules: Rules, seed: int, n_games: int, reward_mode: str = "zero_sum") -> int:
    """``SingleGame`` and ``VecGame(batch_size=1)`` from one seed, random legal actions, ``n_games`` games."""
    rng = np.random.default_rng(seed + 1)
    finished = [0]

    def until(result: dict, t: int) -> bool:
        finished[0] += result["done"]
        return finished[0] >= n_games

    return lockstep(
        SingleSide(rules, seed, reward_mode),
        EngineSide(rules, seed, reward_mode),
        choose=lambda facts, t: int(sample_legal(facts["mask"][None], rng)[0]),
        until=until,
        context=f"{rules} seed {seed}",
    )


@pytest.mark.parametrize("rules", rule_sets(n_random=8, seed=11), ids=lambda r: f"{r.n_players}p-{r.equal_rank}")
def test_single_game_matches_the_engine_step_by_step(rules):
    assert play_lockstep(rules, seed=3, n_games=2) > 50


def test_the_harness_names_the_first_difference():
    """Two sides that differ in one fact fail at the first step where it differs, naming it."""
    rules = Rules()

    class Drifting(SingleSide):
        def facts(self) -> dict:
            facts = super().facts()
            if self.game.manche_steps >= 3:
                facts["n_held"] = ("<i2", b"")
            return facts

    with pytest.raises(AssertionError, match=r"step 3: n_held differs"):
        lockstep(
            Drifting(rules, 0, "zero_sum"),
            EngineSide(rules, 0, "zero_sum"),
            choose=lambda facts, t: int(np.flatnonzero(facts["mask"])[0]),
            until=lambda result, t: t >= 10,
        )


def test_observation_with_scores_above_a_byte_matches_the_engine():
    """Scores and the manche index are the only entries that may pass 255 (many manches): the slower path."""
    rules = Rules(n_players=5, manches=3)
    single = SingleGame(rules, seed=0)
    for _ in range(30):
        single.step(int(np.flatnonzero(single.legal_mask())[0]))
    single.scores = [300, 0, 1000, 7, 256]
    single.manche = 400
    state = single.to_state()
    for seat in range(rules.n_players):
        assert single.observe(seat).tobytes() == observe(rules, state, np.array([seat]))[0].tobytes()


def test_illegal_action_raises_and_changes_nothing():
    single = SingleGame(Rules(), seed=1)
    before = single.to_state()
    illegal = int(np.flatnonzero(~single.legal_mask())[1])
    with pytest.raises(ValueError, match=f"illegal action {illegal} for player_{single.current_player}"):
        single.step(illegal)
    with pytest.raises(ValueError, match="not in 0..65"):
        single.step(67)
    for name in FIELDS:
        assert np.array_equal(getattr(single.to_state(), name), getattr(before, name))


def test_reset_with_options_matches_the_engine():
    rules = Rules(n_players=4, manches=2)
    roles = ["trou_du_cul", "president", "vice_president", "vice_trou"]
    single, game = SingleGame(rules, seed=0), VecGame(rules, batch_size=1, seed=0)
    single.reset(seed=9, roles=[roles])
    game.reset(seed=9, roles=[roles])
    assert_same_state(single, game, "after reset with roles")
    with pytest.raises(ValueError):
        single.reset(roles=[["president"] * 4])
    assert_same_state(single, game, "after a refused reset")


MANY_RULE_SETS = list(enumerate(rule_sets(n_random=40, seed=123)))


def test_the_many_rule_sets_cover_every_value_of_every_field():
    """Fewer games on each rule set, never fewer rule sets: together they still play every value of every field."""
    assert uncovered([rules for _, rules in MANY_RULE_SETS]) == {}


@pytest.mark.slow
@pytest.mark.parametrize("i, rules", MANY_RULE_SETS, ids=[f"{i}-{r.n_players}p" for i, r in MANY_RULE_SETS])
def test_single_game_matches_the_engine_on_many_rule_sets(i, rules):
    """Every preset and 60 random rule sets (every value of every rules field among them:
    :func:`test_the_many_rule_sets_cover_every_value_of_every_field`), 2 games each (one test per rule set, so that
    CI's workers share them; 2 games rather than 8 since the presets play 5-manche matches: 0.28 CPU-s a game, and
    the rule sets, not more games on each, are what this test spreads)."""
    reward_mode = ("zero_sum", "normalized", "points")[i % 3]
    assert play_lockstep(rules, seed=i, n_games=2, reward_mode=reward_mode) >= 2 * (rules.n_players - 1)


def test_a_pickled_game_observes_and_plays_on_the_same():
    game = SingleGame(Rules(n_players=5), seed=4)
    rng = np.random.default_rng(4)
    for _ in range(20):
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    copy = pickle.loads(pickle.dumps(game))
    for seat in range(5):
        np.testing.assert_array_equal(copy.observe(seat), game.observe(seat))
    action = int(np.flatnonzero(game.legal_mask())[0])
    assert copy.step(action) == game.step(action)
    np.testing.assert_array_equal(copy.observe(0), game.observe(0))


TRICK_RULES = [Rules(manches=2), *rule_sets(n_random=3, seed=5)[-3:]]


@pytest.mark.parametrize("rules", TRICK_RULES, ids=[f"{i}-{r.n_players}p" for i, r in enumerate(TRICK_RULES)])
def test_last_trick_runs_from_the_play_that_led_it(rules):
    """At every step of random games, an event ``leads`` exactly where the engine refused a pass (the table was
    empty), and ``last_trick`` is the trick being played: from that lead to the step just made, plays and passes
    of one manche, no other lead; empty in an exchange. Right after a manche ends it is that manche's last trick
    (what the front ends' summaries show whole), several plays long in some games of the standard rules."""
    longest = 0
    for seed in range(6):
        game = SingleGame.table(rules, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.done:
            mask = game.legal_mask()
            event = game.step(int(rng.choice(np.flatnonzero(mask))))
            assert event.leads == (event.kind == "play" and not mask[0]), (seed, event)
            trick = game.last_trick()
            if event.kind == "give":
                assert trick == []
                continue
            assert trick[-1] is event and trick[0].leads and not any(e.leads for e in trick[1:]), (seed, trick)
            assert all(e.kind in ("play", "pass") and e.manche == event.manche for e in trick)
            if event.manche_over:
                longest = max(longest, sum(e.kind == "play" for e in trick))
    assert longest >= 2 or rules is not TRICK_RULES[0]  # standard rules, seeds 0-5: a 2-play last trick
