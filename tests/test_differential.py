"""The batched engine and the independent reference implementation agree on every step.

Random legal play over many games and rule combinations (every preset plus random
combinations of every field). At every step: the same player to act and the same
legal mask; at the start of every game: the same seating and dealer (the Trou du cul
when roles are drawn); at every manche end: the same points, finishing positions, next
dealer and seating; at every game end: the same totals and winner. The engine deals; the
reference receives each deal (and checks its hand sizes against dealer and
``deal_start``).
"""

from __future__ import annotations

import numpy as np
import pytest

from president_env.cards import deck
from president_env.engine import sample_legal
from president_env.presets import PRESETS, load_preset
from president_env.reference import ReferenceGame
from president_env.rules import RULE_CHOICES, Rules
from president_env.vec_game import VecGame


def random_rules(rng: np.random.Generator) -> Rules:
    decks = int(rng.integers(1, 3))
    return Rules(
        n_players=int(rng.integers(3, 9)),
        decks=decks,
        jokers=int(rng.integers(0, 2 * decks + 1)),
        reseat_by_role=bool(rng.integers(2)),
        exchange=tuple(int(k) for k in rng.integers(1, 5, size=rng.integers(0, 5))),
        top_rank_ends_trick=bool(rng.integers(2)),
        revolution=bool(rng.integers(2)),
        twos_wild=bool(rng.integers(2)),
        manches=int(rng.integers(1, 4)),
        **{name: str(rng.choice(values)) for name, values in RULE_CHOICES.items()},
    )


def rule_sets(n_random: int, seed: int) -> list[Rules]:
    """Every preset (one manche: the random sets play 1 to 3, so matches are covered at a fifth of the cost of the
    presets' 5), ``n_random`` random rule sets, and as many again seated by a draw before the first manche
    (``initial_roles: draw`` with ``reseat_by_role``)."""
    rng = np.random.default_rng(seed)
    mixed = [random_rules(rng) for _ in range(n_random)]
    drawn = [random_rules(rng).replace(initial_roles="draw", reseat_by_role=True) for _ in range(n_random // 2)]
    return [load_preset(name).replace(manches=1) for name in PRESETS] + mixed + drawn


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


def play_and_compare(rules: Rules, n_games: int, seed: int, batch_size: int = 16, game: VecGame | None = None) -> int:
    """Play until ``n_games`` games have finished; assert agreement throughout. Returns the games played.

    ``game``: a prepared batch (``reward_mode="points"``) to start from instead of a fresh one.
    """
    if game is None:
        game = VecGame(rules, batch_size=batch_size, seed=seed, reward_mode="points")
    batch_size = game.batch_size
    rng = np.random.default_rng(seed + 1)
    refs = [_start_reference(game, slot) for slot in range(batch_size)]
    finished = 0
    for step in range(100_000):
        mask = game.legal_mask()
        players = game.current_player
        for slot, ref in enumerate(refs):
            assert ref.current_player == players[slot], f"step {step} slot {slot}: player to act differs"
            ref_mask = np.array(ref.legal_mask())
            if not np.array_equal(ref_mask, mask[slot]):
                diff = np.flatnonzero(ref_mask != mask[slot]).tolist()
                raise AssertionError(f"{rules}\nstep {step} slot {slot}: masks differ at actions {diff}")
        actions = sample_legal(mask, rng)
        rewards, done = game.step(actions)
        for slot, ref in enumerate(refs):
            points = ref.step(int(actions[slot]))
            if points is None:
                assert not rewards[slot].any() and not done[slot], f"step {step} slot {slot}: engine ended a manche"
                continue
            context = f"step {step} slot {slot}"
            assert rewards[slot].tolist() == points, f"{context}: points differ"
            assert game.last_positions[slot].tolist() == ref.finish_positions, f"{context}: positions differ"
            assert bool(done[slot]) == ref.done, f"{context}: game end differs"
            if ref.done:
                assert game.last_winner[slot] == ref.winner, f"{context}: winner differs"
                assert game.state.last_scores[slot].tolist() == ref.scores, f"{context}: totals differ"
                finished += 1
                refs[slot] = _start_reference(game, slot)
            else:
                assert ref.phase == "needs_deal"
                assert ref.next_dealer == game.state.dealer[slot], f"{context}: next dealer differs"
                assert ref.seat_of_player == game.state.seat_of_player[slot].tolist(), f"{context}: seating differs"
                ref.deal(_hands_of_manche(game, slot))
        if finished >= n_games:
            return finished
    raise AssertionError("games did not finish")


@pytest.mark.parametrize(
    "rules", rule_sets(n_random=14, seed=2026), ids=lambda r: f"{r.n_players}p-{r.equal_rank}-{r.pass_rule}"
)
def test_engine_matches_reference(rules: Rules) -> None:
    assert play_and_compare(rules, n_games=12, seed=7) >= 12


@pytest.mark.slow
def test_engine_matches_reference_2000_games_20_rule_sets() -> None:
    sets = rule_sets(n_random=18, seed=99)
    assert len(sets) >= 20
    total = sum(play_and_compare(rules, n_games=2000 // len(sets) + 1, seed=i) for i, rules in enumerate(sets))
    assert total >= 2000


def test_mixed_phases_in_one_batch_match_the_reference() -> None:
    """Slots in the exchange phase and slots mid-trick step together, each as the reference says."""
    rules = Rules(n_players=5, exchange=(2, 1), revolution=True, manches=2)
    game = VecGame(rules, batch_size=8, seed=5, reward_mode="points")
    roles = ["president", "vice_president", "neutre", "vice_trou", "trou_du_cul"]
    game.reset(seed=5, roles=[roles if slot % 2 else None for slot in range(8)])
    assert set(game.state.phase.tolist()) == {0, 1}  # both phases present from the first step
    assert play_and_compare(rules, n_games=8, seed=5, game=game) >= 8
