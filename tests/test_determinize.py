"""Determinization (``president_env.agents.determinize``): worlds rebuilt from an observation are worlds
the player cannot tell apart from the real one, respect what the exchange revealed, never exclude the real
world, are uniform where nothing tells the hands apart, and play on as valid engine states."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import rules_strategy, swap_hidden_cards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from president_env.agents.base import decode
from president_env.agents.determinize import information_set, sample_worlds, worlds_consistent
from president_env.core.deals import PRESIDENT, TROU_DU_CUL
from president_env.core.engine import PHASE_EXCHANGE, GameState, legal_mask, sample_legal, step
from president_env.core.observation import layout, observe
from president_env.core.presets import load_preset
from president_env.core.rules import Rules
from president_env.core.state import FIELDS
from president_env.core.vec_game import VecGame

ROLES4 = ["president", "vice_president", "vice_trou", "trou_du_cul"]


def _relative_hands(state: GameState) -> np.ndarray:
    """``(B,P,R) int64`` the true hands in relative seat order from the seat to act."""
    b, p = state.n_held.shape
    seats = (state.current[:, None] + np.arange(p)) % p
    return state.hands[np.arange(b)[:, None], seats].astype(np.int64)


def _decisions(game: VecGame, rng: np.random.Generator, checkpoints: list[int]) -> dict[str, np.ndarray]:
    """Observations, legal masks, true relative hands and phases of the player to act at ``checkpoints``
    (step counts from the reset, increasing)."""
    out: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "hands": [], "phase": []}
    for t in range(max(checkpoints) + 1):
        if t in checkpoints:
            out["obs"].append(game.observe())
            out["mask"].append(game.legal_mask().copy())
            out["hands"].append(_relative_hands(game.state))
            out["phase"].append(game.state.phase.copy())
        game.step(sample_legal(game.legal_mask(), rng))
    return {name: np.concatenate(values) for name, values in out.items()}


def _check_worlds(rules: Rules, data: dict[str, np.ndarray], n_worlds: int, seed: int) -> None:
    """Every sampled world gives back the observation and the legal mask; the real world is admissible."""
    obs = data["obs"]
    worlds = sample_worlds(rules, obs, n_worlds, np.random.default_rng(seed), game_totals=True, check=True)
    n = obs.shape[0] * n_worlds
    assert worlds.batch_size == n
    viewer = np.zeros(n, np.int64)
    np.testing.assert_array_equal(observe(rules, worlds, viewer=viewer), np.repeat(obs, n_worlds, 0))
    np.testing.assert_array_equal(legal_mask(rules, worlds), np.repeat(data["mask"], n_worlds, 0))
    assert worlds_consistent(rules, obs, worlds, n_worlds, game_totals=True).all()
    # By default the same worlds (same seed) are fresh games: only the game segments differ.
    fresh = sample_worlds(rules, obs, n_worlds, np.random.default_rng(seed))
    np.testing.assert_array_equal(fresh.hands, worlds.hands)
    assert (fresh.scores == 0).all() and (fresh.manche == 0).all() and not fresh.decisive.any()
    assert worlds_consistent(rules, obs, fresh, n_worlds).all()
    lay = layout(rules)
    cards = np.ones(lay.size, bool)
    for name in ("scores", "manche", "decisive"):
        cards[lay[name]] = False
    np.testing.assert_array_equal(observe(rules, fresh, viewer=viewer)[:, cards], np.repeat(obs, n_worlds, 0)[:, cards])
    # Card conservation in every world (the engine's invariant).
    copies = np.asarray(rules.copies)
    np.testing.assert_array_equal(
        worlds.hands.sum(axis=1) + worlds.played.sum(axis=1), np.broadcast_to(copies, (n, rules.n_ranks))
    )
    _check_real_world_admissible(rules, obs, data["hands"])


def _check_real_world_admissible(rules: Rules, obs: np.ndarray, true_hands: np.ndarray) -> None:
    """The information set never excludes the real world."""
    info = information_set(rules, decode(rules, obs))
    extra = true_hands[:, 1:] - info.lower[:, 1:]
    assert (extra >= 0).all(), "a seat is forced to hold a card it does not hold"
    assert ((extra == 0) | info.allowed[:, 1:]).all(), "a seat holds a card of a rank it may not hold"
    np.testing.assert_array_equal(extra.sum(axis=1), info.pool)
    np.testing.assert_array_equal(extra.sum(axis=2), info.need[:, 1:])


# ------------------------------------------------------------------ 1. worlds match the observation
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1), draw=st.booleans())
def test_worlds_give_back_the_observation_random_rules(rules: Rules, seed: int, draw: bool) -> None:
    if draw:  # roles from the first manche on, so that most decisions follow an exchange
        rules = rules.replace(initial_roles="draw")
    rng = np.random.default_rng(seed)
    game = VecGame(rules, batch_size=4, seed=seed)
    checkpoints = sorted({0, 1, 2, *rng.integers(3, 250, size=5).tolist()})
    _check_worlds(rules, _decisions(game, rng, checkpoints), n_worlds=3, seed=seed)


@pytest.mark.parametrize(
    "rules",
    [
        load_preset("standard"),
        load_preset("party"),
        load_preset("quebec"),
        load_preset("big_table"),
        Rules(initial_roles="draw", manches=3),
        Rules(n_players=3, initial_roles="draw", exchange=(4,), manches=3),
        Rules(n_players=6, initial_roles="draw", exchange=(2, 1, 1), manches=3, twos_wild=True),
        Rules(n_players=8, decks=2, jokers=3, initial_roles="draw", exchange=(2, 1, 3, 1), manches=3),
        Rules(n_players=8, initial_roles="draw", exchange=(1, 1, 1, 1), reseat_by_role=True, manches=3),
    ],
    ids=lambda r: f"P{r.n_players}-{r.initial_roles}-{'-'.join(map(str, r.exchange))}-reseat{int(r.reseat_by_role)}",
)
def test_worlds_give_back_the_observation_presets(rules: Rules) -> None:
    rng = np.random.default_rng(1)
    game = VecGame(rules, batch_size=16, seed=2)
    # Several manches: steps up to a few hundred reach the second and third manches (exchanges with roles).
    data = _decisions(game, rng, [0, 1, 2, 5, 20, 60, 110, 160, 230, 300, 380])
    if rules.initial_roles == "draw":
        assert (data["phase"] == PHASE_EXCHANGE).any(), "the exchange phase should be covered"
    _check_worlds(rules, data, n_worlds=4, seed=3)


# ------------------------------------------------------------------ 2. the exchange constraints
def _exchange_game(seed: int, batch: int = 32) -> VecGame:
    game = VecGame(Rules(), batch_size=batch, seed=seed)
    rng = np.random.default_rng(seed)
    game.reset(roles=[list(rng.permutation(ROLES4)) for _ in range(batch)])
    return game


def _partner_hands_in_worlds(viewer_role: int, partner_role: int, seed: int, n_worlds: int = 64):
    """Along random exchange games: for the decisions where the viewer has ``viewer_role``, yield its
    decoded view ``v``, the decision of each world ``rows`` and the partner's sampled hands ``(D*W, R)``."""
    rules = Rules()
    game = _exchange_game(seed=seed)
    rng = np.random.default_rng(seed + 1)
    for _ in range(60):
        obs = game.observe()
        view = decode(rules, obs)
        mine = np.flatnonzero((view.roles[:, 0] == viewer_role) & (view.partner >= 0))
        if mine.size:
            v = decode(rules, obs[mine])
            assert (v.roles[np.arange(mine.size), v.partner] == partner_role).all()
            worlds = sample_worlds(rules, obs[mine], n_worlds, rng)
            rows = np.repeat(np.arange(mine.size), n_worlds)
            yield v, rows, worlds.hands[np.arange(rows.size), v.partner[rows]].astype(np.int64)
        game.step(sample_legal(game.legal_mask(), rng))


def test_president_viewer_trou_holds_no_ungiven_card_above_lowest_received() -> None:
    rules = Rules()
    checked = binding = 0
    for v, rows, hands in _partner_hands_in_worlds(PRESIDENT, TROU_DU_CUL, seed=4):
        lowest = np.argmax(v.received > 0, axis=1)[rows]
        given = np.maximum(v.gave - v.played[np.arange(v.batch_size), v.partner], 0)[rows]
        above = np.arange(rules.n_ranks) > lowest[:, None]
        # Above the lowest card received, the trou holds exactly what he was given back and kept.
        assert (np.where(above, hands - given, 0) == 0).all()
        assert (hands >= given).all()
        checked += rows.size
        # The constraint binds where unknown cards above the lowest received exist (held by others).
        pool = information_set(rules, v).pool[rows]
        binding += int(((pool > 0) & above).any(axis=1).sum())
    assert checked > 1000 and binding > 0


def test_trou_viewer_president_holds_the_forced_cards() -> None:
    checked = forced_total = 0
    for v, rows, hands in _partner_hands_in_worlds(TROU_DU_CUL, PRESIDENT, seed=6):
        played = v.played[np.arange(v.batch_size), v.partner]
        forced = np.maximum(v.gave - v.received - played, 0)[rows]
        assert (hands >= forced).all()
        checked += rows.size
        forced_total += int(forced.sum())
    assert checked > 1000 and forced_total > 0


@pytest.mark.parametrize(
    "rules",
    [
        Rules(initial_roles="draw", manches=3),
        Rules(n_players=3, initial_roles="draw", exchange=(4,), manches=3),
        Rules(n_players=6, initial_roles="draw", exchange=(1, 2, 3), manches=3),
        Rules(n_players=8, decks=2, jokers=4, initial_roles="draw", exchange=(2, 1, 3, 4), manches=3),
        Rules(n_players=8, initial_roles="draw", exchange=(1, 1, 1, 1), reseat_by_role=True, manches=3),
        Rules(n_players=5, initial_roles="draw", exchange=(3, 2), twos_wild=True, finish_on_two="penalty"),
    ],
    ids=lambda r: f"P{r.n_players}-{'-'.join(map(str, r.exchange))}-reseat{int(r.reseat_by_role)}",
)
def test_real_world_is_never_excluded(rules: Rules) -> None:
    game = VecGame(rules, batch_size=32, seed=8)
    rng = np.random.default_rng(9)
    restricted = 0
    for _ in range(400):
        obs = game.observe()
        _check_real_world_admissible(rules, obs, _relative_hands(game.state))
        info = information_set(rules, decode(rules, obs))
        restricted += int((~info.allowed[:, 1:].all(axis=(1, 2))).sum())
        game.step(sample_legal(game.legal_mask(), rng))
    assert restricted > 0, "some decisions should restrict the partner's ranks"


# ------------------------------------------------------------------ 3. uniformity
def _position(rules: Rules, seed: int, want, roles: bool) -> np.ndarray:
    """An observation ``(1, obs_dim)`` of the player to act where ``want(view)`` holds (4 players)."""
    game = VecGame(rules, batch_size=64, seed=seed)
    rng = np.random.default_rng(seed)
    if roles:
        game.reset(roles=[list(rng.permutation(ROLES4)) for _ in range(64)])
    for _ in range(200):
        obs = game.observe()
        view = decode(rules, obs)
        ok = np.flatnonzero(want(view))
        if ok.size:
            return obs[ok[:1]]
        game.step(sample_legal(game.legal_mask(), rng))
    raise AssertionError("no such position")


def test_unknown_cards_land_in_proportion_to_held_counts() -> None:
    rules = Rules()
    # Opponents holding clearly different numbers of cards, no exchange.
    obs = _position(rules, 10, lambda v: (np.ptp(v.held[:, 1:], axis=1) >= 3) & (v.held[:, 1:].min(axis=1) > 2), False)
    info = information_set(rules, decode(rules, obs))
    assert info.lower.sum() == 0 and info.allowed[0, 1:].all()
    n_worlds = 4000
    worlds = sample_worlds(rules, obs, n_worlds, np.random.default_rng(11))
    share = info.need[0, 1:] / info.need[0, 1:].sum()
    for rank in np.flatnonzero(info.pool[0]):
        got = worlds.hands[:, 1:, rank].sum(axis=0) / (info.pool[0, rank] * n_worlds)
        # Binomial-ish standard error below 0.008 at 4000 worlds; the bound is loose.
        np.testing.assert_allclose(got, share, atol=0.03)


def test_constrained_partner_draws_uniformly_among_allowed_cards() -> None:
    rules = Rules()
    obs = _position(rules, 13, lambda v: (v.roles[:, 0] == PRESIDENT) & ~v.exchange & (v.held.min(axis=1) >= 6), True)
    info = information_set(rules, decode(rules, obs))
    partner = int(decode(rules, obs).partner[0])
    allowed = info.allowed[0, partner]
    assert not allowed.all()
    n_worlds = 4000
    worlds = sample_worlds(rules, obs, n_worlds, np.random.default_rng(12))
    extra = worlds.hands.astype(np.int64) - info.lower[0]
    pool, need = info.pool[0], info.need[0]
    n_allowed = int((pool * allowed).sum())
    e = int(need[partner])
    others = [s for s in range(1, rules.n_players) if s != partner]
    for rank in np.flatnonzero(pool):
        # The partner takes e of the n_allowed cards he may hold; the other cards split by need.
        to_partner = e * pool[rank] / n_allowed if allowed[rank] else 0.0
        assert abs(extra[:, partner, rank].mean() - to_partner) < 0.03 * pool[rank]
        for seat in others:
            # What the partner leaves of a rank is split among the others in proportion to their counts.
            expected = (pool[rank] - to_partner) * need[seat] / need[others].sum()
            assert abs(extra[:, seat, rank].mean() - expected) < 0.03 * pool[rank]


# ------------------------------------------------------------------ 4. only the observation matters
def test_sample_depends_only_on_the_observation() -> None:
    rules = Rules(initial_roles="draw", n_players=5)
    game = VecGame(rules, batch_size=8, seed=14)
    rng = np.random.default_rng(15)
    for _ in range(30):
        game.step(sample_legal(game.legal_mask(), rng))
    state = game.state
    other = swap_hidden_cards(rules, state)
    obs, obs_other = observe(rules, state), observe(rules, other)
    np.testing.assert_array_equal(obs, obs_other)
    one = sample_worlds(rules, obs, 16, np.random.default_rng(16))
    two = sample_worlds(rules, obs_other, 16, np.random.default_rng(16))
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name), err_msg=name)


# ------------------------------------------------------------------ 5. bad input
def test_observation_of_a_player_not_to_act_raises() -> None:
    rules = Rules()
    game = VecGame(rules, batch_size=4, seed=17)
    players = (game.current_player + 1) % rules.n_players
    with pytest.raises(ValueError, match="not from the player to act"):
        sample_worlds(rules, game.observe(players), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        sample_worlds(rules, game.observe()[:, :-1], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_worlds"):
        sample_worlds(rules, game.observe(), 0, np.random.default_rng(0))


# ------------------------------------------------------------------ 6. playing on
@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(initial_roles="draw", manches=2),
        load_preset("quebec"),
        load_preset("party"),
        Rules(n_players=8, decks=2, jokers=3, initial_roles="draw", exchange=(2, 1, 1, 1), twos_wild=True),
    ],
    ids=["standard", "draw", "quebec", "party", "P8"],
)
def test_sampled_worlds_play_on_to_the_end_of_the_manche(rules: Rules) -> None:
    game = VecGame(rules, batch_size=8, seed=18)
    rng = np.random.default_rng(19)
    data = _decisions(game, rng, [0, 1, 10, 40])
    n_worlds = 8
    worlds = sample_worlds(rules, data["obs"], n_worlds, rng)
    n = worlds.batch_size
    copies = np.broadcast_to(np.asarray(rules.copies), (n, rules.n_ranks))
    running = np.ones(n, bool)
    for _ in range(rules.n_cards * rules.n_players + 20):
        np.testing.assert_array_equal(worlds.hands.sum(axis=1) + worlds.played.sum(axis=1), copies)
        assert (worlds.hands >= 0).all()
        slots = np.flatnonzero(running)
        events = step(rules, worlds, sample_legal(legal_mask(rules, worlds)[slots], rng), rng, slots=slots)
        running[slots[events.manche_over]] = False
        if not running.any():
            break
    assert not running.any(), "every world's manche should end"


def test_take_subsets_and_repeats_slots() -> None:
    game = VecGame(Rules(), batch_size=4, seed=20)
    state = game.state
    rep = state.take(np.repeat(np.arange(4), 3))
    assert rep.batch_size == 12
    np.testing.assert_array_equal(rep.hands[3:6], np.repeat(state.hands[1:2], 3, axis=0))
    sub = state.take(np.array([True, False, True, False]))
    np.testing.assert_array_equal(sub.current, state.current[[0, 2]])
    sub.hands[:] = 0
    assert state.hands.sum() == 52 * 4  # an independent copy
