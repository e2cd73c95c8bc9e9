"""Invariants of the batched engine under random play, over random rule combinations (hypothesis)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import act, make_deal, rules_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president_env.core import engine
from president_env.core.actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_tables
from president_env.core.cards import JOKER, RANK_NAMES, TWO
from president_env.core.engine import PHASE_EXCHANGE, PHASE_OVER, PHASE_PLAY, sample_legal
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame


def _deck_counts(rules: Rules) -> np.ndarray:
    return np.array(rules.copies)


def _check_invariants(rules: Rules, game: VecGame) -> None:
    s = game.state
    b = game.batch_size
    rows = np.arange(b)
    # Cards are conserved: every card is in a hand or among the played ones.
    np.testing.assert_array_equal(
        s.hands.sum(axis=1) + s.played.sum(axis=1), np.broadcast_to(_deck_counts(rules), (b, rules.n_ranks))
    )
    np.testing.assert_array_equal(s.n_held, s.hands.sum(axis=2))
    assert (s.hands >= 0).all()
    # The player to act holds cards and has a legal action.
    assert (s.n_held[rows, s.current] > 0).all()
    mask = game.legal_mask()
    assert mask.any(axis=1).all()
    # In the exchange phase only gives are legal; in play, the leader may not pass.
    exchanging = s.phase == PHASE_EXCHANGE
    assert not mask[exchanging, : 1 + rules.n_ranks * rules.max_count].any()
    assert not mask[(s.trick_rank < 0), 0].any()
    # At least two players hold cards in a manche in progress.
    assert ((s.n_held > 0).sum(axis=1) >= 2).all()
    # Seating is a permutation.
    np.testing.assert_array_equal(
        np.sort(s.player_at_seat, axis=1), np.broadcast_to(np.arange(rules.n_players), (b, rules.n_players))
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=rules_strategy(),
    seed=st.integers(0, 2**32 - 1),
    reward_mode=st.sampled_from(["zero_sum", "normalized", "points"]),
)
def test_random_play_keeps_invariants(rules: Rules, seed: int, reward_mode: str) -> None:
    batch = 6
    game = VecGame(rules, batch_size=batch, seed=seed, reward_mode=reward_mode)
    rng = np.random.default_rng(seed)
    reward_sum = float(engine.reward_table(rules, reward_mode).sum())
    steps_in_manche = np.zeros(batch, int)
    # Every step moves a card or passes; between two plays at most P-1 passes; plus the exchange.
    bound = rules.n_cards * rules.n_players + 4 * 4 + 1
    for _ in range(400):
        _check_invariants(rules, game)
        rewards, done = game.step(sample_legal(game.legal_mask(), rng))
        steps_in_manche += 1
        ended = rewards.any(axis=1) | done
        manche_end = np.flatnonzero(np.abs(rewards).sum(axis=1) > 0)
        for slot in manche_end:
            assert rewards[slot].sum() == pytest.approx(reward_sum, abs=1e-4)
            assert sorted(game.last_positions[slot].tolist()) == list(range(rules.n_players))
        steps_in_manche[ended] = 0
        assert (steps_in_manche <= bound).all()
        for slot in np.flatnonzero(done):
            assert 0 <= game.last_winner[slot] < rules.n_players
            assert (game.state.scores[slot] == 0).all() and game.state.manche[slot] == 0


def test_games_end_at_different_times_and_autoreset_only_those() -> None:
    rules = Rules(manches=2)
    game = VecGame(rules, batch_size=32, seed=3)
    rng = np.random.default_rng(4)
    done_steps = []
    for t in range(2000):
        before = game.state.copy()
        actions = sample_legal(game.legal_mask(), rng)
        _, done = game.step(actions)
        # Slots still in the same manche only changed the acting seat's hand.
        s = game.state
        same_manche = (s.manche == before.manche) & ~done & (s.n_held.sum(axis=1) <= before.n_held.sum(axis=1))
        for slot in np.flatnonzero(same_manche):
            changed = np.flatnonzero((s.hands[slot] != before.hands[slot]).any(axis=1))
            assert set(changed.tolist()) <= {int(before.current[slot]), int(before.partner[slot, before.current[slot]])}
        for slot in np.flatnonzero(done):
            done_steps.append(t)
            assert s.manche[slot] == 0 and (s.scores[slot] == 0).all()
            assert s.hands[slot].sum() == rules.n_cards and (s.played[slot] == 0).all()
    assert len(set(done_steps)) > 10, "games should end at many different steps"


def test_same_seed_same_trajectory_despite_global_rng_noise() -> None:
    rules = Rules(n_players=5, revolution=True, equal_rank="skip", manches=2)

    def trajectory(disturb: bool) -> list:
        game = VecGame(rules, batch_size=16, seed=11)
        rng = np.random.default_rng(12)
        out = []
        for _ in range(300):
            if disturb:
                random.random()
                np.random.seed(random.randint(0, 1000))
                np.random.random(10)
            obs = game.observe()
            actions = sample_legal(game.legal_mask(), rng)
            rewards, done = game.step(actions)
            out.append((obs.sum(), actions.tolist(), rewards.tolist(), done.tolist()))
        return out

    assert trajectory(False) == trajectory(True)


def test_illegal_action_raises_and_leaves_state_unchanged() -> None:
    game = VecGame(Rules(), batch_size=4, seed=0)
    before = game.state.copy()
    actions = sample_legal(game.legal_mask(), np.random.default_rng(0))
    illegal = actions.copy()
    illegal[2] = 0  # the leader may not pass
    with pytest.raises(ValueError, match="slot 2.*may not pass"):
        game.step(illegal)
    for name in ("hands", "current", "trick_rank", "passed", "scores"):
        np.testing.assert_array_equal(getattr(game.state, name), getattr(before, name))
    with pytest.raises(ValueError, match="shape"):
        game.step(actions[:3])
    with pytest.raises(ValueError, match="not in 0"):
        game.step(np.full(4, 999))
    game.step(actions)


def _claims(rules: Rules, state: engine.GameState, slot: int, action: int) -> dict[str, bool]:
    """What each reason of ``engine.ILLEGAL_REASONS`` claims about ``action`` in ``slot``, read from RULES.md and
    the state (not from the engine's tables): for an illegal action exactly one claim holds, for a legal one none."""
    kind, rank, count = (int(table[action]) for table in action_tables(rules))
    seat = int(state.current[slot])
    hand = state.hands[slot, seat]
    phase, trick_rank, trick_count = int(state.phase[slot]), int(state.trick_rank[slot]), int(state.trick_count[slot])
    usable = int(hand[rank]) if rank >= 0 else 0
    if rules.twos_wild and 0 <= rank < TWO and hand[rank] > 0:
        usable += int(hand[TWO])  # 2s complete a natural rank (RULES.md, twos_wild)

    def strength(r: int) -> int:  # jokers stay strongest; a revolution inverts the natural ranks
        return 99 if r == JOKER else (-r if state.revolution[slot] else r)

    play = phase == PHASE_PLAY and kind == KIND_PLAY and usable >= count and trick_rank >= 0
    follows = play and count == trick_count
    beats = (
        rank != trick_rank
        and strength(rank) > strength(trick_rank)
        or (rank == trick_rank and rules.equal_rank != "none")
    )
    return {
        engine.GAME_OVER: phase == PHASE_OVER,
        engine.MUST_GIVE: phase == PHASE_EXCHANGE and kind != KIND_GIVE,
        engine.NOTHING_TO_GIVE: phase == PHASE_EXCHANGE and kind == KIND_GIVE and hand[rank] == 0,
        engine.GIVE_OUTSIDE_EXCHANGE: phase == PHASE_PLAY and kind == KIND_GIVE,
        engine.LEADER_CANNOT_PASS: phase == PHASE_PLAY and kind == KIND_PASS and trick_rank < 0,
        engine.NOT_ENOUGH_CARDS: phase == PHASE_PLAY and kind == KIND_PLAY and usable < count,
        engine.WRONG_COUNT: play and count != trick_count,
        engine.OR_NOTHING: follows and bool(state.constrained[slot]) and rank != trick_rank,
        engine.DOES_NOT_BEAT: follows and not state.constrained[slot] and not beats,
    }


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_why_illegal_gives_the_one_true_reason_of_every_illegal_action_and_refuses_legal_ones(
    rules: Rules, seed: int
) -> None:
    game = VecGame(rules, batch_size=2, seed=seed, autoreset=False)
    rng = np.random.default_rng(seed)
    state = game.state
    for step in range(300):
        mask = engine.legal_mask(rules, state)
        live = np.flatnonzero(state.phase != PHASE_OVER)
        for slot in range(state.batch_size) if step % 4 == 0 or live.size == 0 else ():
            for action in range(rules.num_actions):
                claims = _claims(rules, state, slot, action)
                if mask[slot, action]:
                    assert not any(claims.values()), (action, claims)
                    with pytest.raises(ValueError, match=f"action {action} .* is legal in slot {slot}"):
                        engine.why_illegal(rules, state, slot, action)
                    continue
                why = engine.why_illegal(rules, state, slot, action)
                assert why.reason in engine.ILLEGAL_REASONS and why.action == action
                assert [reason for reason, true in claims.items() if true] == [why.reason], (action, claims)
                assert engine.describe_illegal(rules, state, slot, action)  # the error message's sentence
                if why.reason == engine.GAME_OVER:
                    continue
                seat = state.current[slot]
                kind, rank, count = engine.decode(rules, action)[0], *action_tables(rules)[1:]
                assert (why.player, why.kind, why.rank) == (state.player_at_seat[slot, seat], kind, rank[action])
                assert why.count == (count[action] if kind != "give" else 1)
                assert (why.trick_rank, why.trick_count) == (state.trick_rank[slot], state.trick_count[slot])
                assert (why.revolution, why.constrained) == (state.revolution[slot], state.constrained[slot])
                assert why.gives_left == state.gives_left[slot, seat]
                if why.rank >= 0:
                    assert why.held - why.wild == state.hands[slot, seat, why.rank]
                    assert why.wild in (0, state.hands[slot, seat, TWO])
        if live.size == 0:
            break
        engine.step(rules, state, sample_legal(mask[live], rng), rng, slots=live)


@pytest.mark.parametrize("action", [-1, 66, 999, True, 2.0, "7"])
def test_why_illegal_of_what_is_not_an_action_is_out_of_range(action) -> None:
    game = VecGame(Rules(), batch_size=1, seed=0)
    why = engine.why_illegal(game.rules, game.state, 0, action)
    assert why == engine.IllegalMove(engine.OUT_OF_RANGE, action)
    assert engine.describe_illegal(game.rules, game.state, 0, action) == f"action {action!r} is not in 0..65"


ROLES4 = ["trou_du_cul", "president", "vice_president", "vice_trou"]


def test_describe_illegal_words_each_reason_as_the_engine_errors_always_did() -> None:
    rules = Rules(twos_wild=True, equal_rank="or_nothing")
    hands = make_deal(rules, rest=3, p0="3C 7D 2S 8C 8D 9S", p1="7H 7S 5C 4C 4D 9C", p2="7C 2D 5D 6D 6C 6H")
    game = VecGame(rules, batch_size=1, seed=0)
    engine.new_games(rules, game.state, np.array([0]), game.rng, deals=[hands], dealers=np.array([3]))

    def said(token: str) -> str:
        return engine.describe_illegal(rules, game.state, 0, act(rules, token))

    assert game.current_player[0] == 0  # holds the 3 of clubs
    assert said("pass") == "player_0 leads this trick and may not pass"
    assert said("g3") == "give actions are only legal in the exchange phase"
    assert said("7x3") == "player_0 cannot play 3 × 7: holds 2 usable"
    game.step(np.array([act(rules, "7")]))
    assert said("4x2") == "the trick is played with 1 card(s), not 2"
    assert said("5") == "5 does not beat the trick in force under the current rank order"
    game.step(np.array([act(rules, "7")]))  # player_1 matches: player_2 must play a 7 or pass
    assert said("6") == "or nothing: player must play the same rank as the previous play, or pass"

    engine.new_games(rules, game.state, np.array([0]), game.rng, deals=[hands], roles=[ROLES4])
    giver = int(game.current_player[0])
    assert game.state.phase[0] == PHASE_EXCHANGE and ROLES4[giver] == "president"
    assert said("pass") == f"player_{giver} must give back a card in the exchange phase (a give action), not pass"
    assert said("3") == f"player_{giver} must give back a card in the exchange phase (a give action), not play"
    absent = RANK_NAMES[int(np.flatnonzero(game.hands_by_player()[0][giver] == 0)[0])]
    assert said(f"g{absent}") == f"player_{giver} holds no {absent} to give back"

    over = VecGame(Rules(n_players=3), batch_size=1, seed=1, autoreset=False)
    while not over.game_over[0]:
        over.step(sample_legal(over.legal_mask(), game.rng))
    assert engine.why_illegal(over.rules, over.state, 0, 0) == engine.IllegalMove(engine.GAME_OVER, 0)
    assert engine.describe_illegal(over.rules, over.state, 0, 0) == (
        "the game in this slot is over; start a new game (engine.new_games or VecGame.reset) first"
    )


def test_observation_does_not_depend_on_hidden_cards() -> None:
    """Swapping cards between two other players' hands leaves the viewer's observation unchanged."""
    rules = Rules()
    game = VecGame(rules, batch_size=1, seed=0)
    hands = game.hands_by_player()[0]
    viewer = int(game.current_player[0])
    others = [p for p in range(4) if p != viewer]
    a, b = others[0], others[1]
    obs = game.observe()
    swapped = game.state.copy()
    # move one card of a rank a holds and b does not, and one back the other way, keeping counts
    ra = int(np.flatnonzero((hands[a] > 0) & (hands[b] == 0))[0])
    rb = int(np.flatnonzero((hands[b] > 0) & (hands[a] == 0))[0])
    sa, sb = game.state.seat_of_player[0, a], game.state.seat_of_player[0, b]
    swapped.hands[0, sa, ra] -= 1
    swapped.hands[0, sb, ra] += 1
    swapped.hands[0, sb, rb] -= 1
    swapped.hands[0, sa, rb] += 1
    from president_env.core.observation import observe

    np.testing.assert_array_equal(observe(rules, swapped), obs)
    assert not np.array_equal(swapped.hands, game.state.hands)


@pytest.mark.parametrize("rules", [Rules(), Rules(n_players=8, scoring="president_vice"), Rules(n_players=3)])
def test_reward_modes(rules: Rules) -> None:
    points = engine.reward_table(rules, "points")
    zero_sum = engine.reward_table(rules, "zero_sum")
    normalized = engine.reward_table(rules, "normalized")
    np.testing.assert_allclose(zero_sum, points - points.mean())
    assert abs(zero_sum.sum()) < 1e-5 and abs(normalized.sum()) < 1e-5
    assert np.abs(normalized).max() == pytest.approx(1.0)
    np.testing.assert_allclose(normalized * np.abs(zero_sum).max(), zero_sum, rtol=1e-6)
    with pytest.raises(ValueError, match="reward_mode must be one of"):
        VecGame(rules, reward_mode="bogus")


def test_vecgame_state_dict_restores_the_games_exactly_and_bad_input_changes_nothing():
    rules = Rules()
    game = VecGame(rules, batch_size=16, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(7):
        game.step(sample_legal(game.legal_mask(), rng))
    saved = game.state_dict()
    played = []
    for _ in range(60):  # past the end of some games: the autoreset deals come from the saved generator
        actions = sample_legal(game.legal_mask(), rng)
        played.append(actions)
        game.step(actions)
    after = game.state_dict()

    other = VecGame(rules, batch_size=16, seed=99)
    other.load_state_dict(saved)
    for actions in played:
        other.step(actions)
    for name, array in after["state"].items():
        assert np.array_equal(getattr(other.state, name), array), name

    before = other.state_dict()
    bad = {"state": dict(saved["state"]), "rng": saved["rng"]}
    bad["state"]["hands"] = bad["state"]["hands"][:8]
    with pytest.raises(ValueError, match="'hands' has shape"):
        other.load_state_dict(bad)
    del bad["state"]["hands"]
    with pytest.raises(ValueError, match="lacks the field 'hands'"):
        other.load_state_dict(bad)
    for name, array in before["state"].items():
        assert np.array_equal(getattr(other.state, name), array), name
