"""The batched engine and the independent reference implementation agree on every step.

Random legal play over many games and rule combinations (every preset plus random
combinations of every field). At every step: the same player to act and the same
legal mask; at the start of every game: the same seating and dealer (the Trou du cul
when roles are drawn); at every manche end: the same points, finishing positions, next
dealer and seating; at every game end: the same totals and winner. The engine deals; the
reference receives each deal (and checks its hand sizes against dealer and
``deal_start``). Both run in the one lockstep harness of ``lockstep.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import rule_sets, uncovered
from lockstep import lockstep
from oracle.reference import ReferenceGame

from president_env.core.cards import deck
from president_env.core.engine import sample_legal
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame


def _hands_of_manche(game: VecGame, slot: int) -> list[list[str]]:
    """The deal of the slot's current manche (before the exchange), one list of cards per player."""
    cards = deck(game.rules.decks, game.rules.jokers)
    state = game.state
    hands: list[list[str]] = [[] for _ in range(game.rules.n_players)]
    for card_id, seat in enumerate(state.dealt_to[slot]):
        hands[int(state.player_at_seat[slot, seat])].append(cards[card_id])
    return hands


def _regular_sizes(rules: Rules, dealer: int, seat_of_player: list[int]) -> list[int]:
    """Hand size of each player when the deck is dealt one card at a time from ``dealer`` (per ``deal_start``)."""
    n = rules.n_players
    first = dealer + 1 if rules.deal_start == "dealer_left" else dealer
    base, extra = divmod(rules.n_cards, n)
    return [base + ((seat - first) % n < extra) for seat in seat_of_player]


def _start_reference(game: VecGame, slot: int) -> ReferenceGame:
    """The reference game of the slot's first manche. With roles it seats the table and picks the dealer itself
    (the Trou du cul); both must agree with the engine, and the engine's deal must be regular for that dealer."""
    state = game.state
    positions, dealer = None, int(state.dealer[slot])
    if state.roles[slot, 0] >= 0:
        # The full drawn order: several Neutres named by role alone would be ordered by player index.
        seats = state.seat_of_player[slot]
        positions = [int(state.prev_pos[slot, seats[p]]) for p in range(game.rules.n_players)]
        dealer = None
    hands = _hands_of_manche(game, slot)
    ref = ReferenceGame(game.rules, hands, dealer, previous_positions=positions)
    assert ref.seat_of_player == state.seat_of_player[slot].tolist(), f"slot {slot}: first seating differs"
    assert ref.next_dealer == state.dealer[slot], f"slot {slot}: first dealer differs"
    assert [len(h) for h in hands] == _regular_sizes(game.rules, ref.next_dealer, ref.seat_of_player)
    return ref


class EngineSide:
    """The batched engine (``reward_mode="points"``) for the lockstep harness: per slot, who acts, the mask, and
    what a step that ends a manche or a game decides."""

    def __init__(self, game: VecGame) -> None:
        self.game = game

    def facts(self) -> dict:
        return {"player": self.game.current_player.astype(np.int64), "mask": self.game.legal_mask()}

    def step(self, actions: np.ndarray) -> dict:
        game = self.game
        rewards, done = game.step(actions)
        state, results = game.state, {}
        for slot in np.flatnonzero(rewards.any(axis=1) | done):
            result = [rewards[slot].tolist(), game.last_positions[slot].tolist(), bool(done[slot])]
            if done[slot]:
                result += [int(game.last_winner[slot]), state.last_scores[slot].tolist()]
            else:
                result += [int(state.dealer[slot]), state.seat_of_player[slot].tolist()]
            results[f"slot {slot}: points, places, end, winner or next dealer, totals or seating"] = result
        return results


class ReferenceSide:
    """One reference game per slot of ``game``; each new manche receives the engine's deal (the engine deals)."""

    def __init__(self, game: VecGame) -> None:
        self.game = game
        self.refs = [_start_reference(game, slot) for slot in range(game.batch_size)]

    def facts(self) -> dict:
        return {
            "player": np.array([ref.current_player for ref in self.refs], np.int64),
            "mask": np.array([ref.legal_mask() for ref in self.refs], bool),
        }

    def step(self, actions: np.ndarray) -> dict:
        results = {}
        for slot, ref in enumerate(self.refs):
            points = ref.step(int(actions[slot]))
            if points is None:
                continue
            result = [points, ref.finish_positions, ref.done]
            if ref.done:
                result += [ref.winner, ref.scores]
                self.refs[slot] = _start_reference(self.game, slot)  # the engine dealt the next game
            else:
                assert ref.phase == "needs_deal"
                result += [ref.next_dealer, ref.seat_of_player]
                ref.deal(_hands_of_manche(self.game, slot))
            results[f"slot {slot}: points, places, end, winner or next dealer, totals or seating"] = result
        return results


def play_and_compare(rules: Rules, n_games: int, seed: int, batch_size: int = 16, game: VecGame | None = None) -> int:
    """Play until ``n_games`` games have finished, engine and reference in lockstep. Returns the games played.

    ``game``: a prepared batch (``reward_mode="points"``) to start from instead of a fresh one.
    """
    if game is None:
        game = VecGame(rules, batch_size=batch_size, seed=seed, reward_mode="points")
    rng = np.random.default_rng(seed + 1)
    finished = [0]

    def until(result: dict, t: int) -> bool:
        finished[0] += sum(ended for _, _, ended, *_ in result.values())
        assert t < 100_000, "games did not finish"
        return finished[0] >= n_games

    engine_side = EngineSide(game)
    reference_side = ReferenceSide(game)  # built before the first step: the engine's first deals
    lockstep(
        engine_side,
        reference_side,
        choose=lambda facts, t: sample_legal(facts["mask"], rng),
        until=until,
        context=str(rules),
    )
    return finished[0]


@pytest.mark.parametrize(
    "rules", rule_sets(n_random=14, seed=2026), ids=lambda r: f"{r.n_players}p-{r.equal_rank}-{r.pass_rule}"
)
def test_engine_matches_reference(rules: Rules) -> None:
    assert play_and_compare(rules, n_games=12, seed=7) >= 12


MANY_RULE_SETS = list(enumerate(rule_sets(n_random=18, seed=99)))


@pytest.mark.slow
@pytest.mark.parametrize("i, rules", MANY_RULE_SETS, ids=[f"{i}-{r.n_players}p" for i, r in MANY_RULE_SETS])
def test_engine_matches_reference_1000_games_20_rule_sets(i: int, rules: Rules) -> None:
    """At least 1000 games over at least 20 rule sets, one test per rule set (CI's workers share them); the rule
    sets play every value of every field (:func:`test_the_many_rule_sets_cover_every_value_of_every_field`)."""
    assert len(MANY_RULE_SETS) >= 20
    n_games = 1000 // len(MANY_RULE_SETS) + 1
    assert play_and_compare(rules, n_games=n_games, seed=i) >= n_games


def test_the_many_rule_sets_cover_every_value_of_every_field() -> None:
    assert uncovered([rules for _, rules in MANY_RULE_SETS]) == {}


def test_mixed_phases_in_one_batch_match_the_reference() -> None:
    """Slots in the exchange phase and slots mid-trick step together, each as the reference says."""
    rules = Rules(n_players=5, exchange=(2, 1), revolution=True, manches=2)
    game = VecGame(rules, batch_size=8, seed=5, reward_mode="points")
    roles = ["president", "vice_president", "neutre", "vice_trou", "trou_du_cul"]
    game.reset(seed=5, roles=[roles if slot % 2 else None for slot in range(8)])
    assert set(game.state.phase.tolist()) == {0, 1}  # both phases present from the first step
    assert play_and_compare(rules, n_games=8, seed=5, game=game) >= 8
