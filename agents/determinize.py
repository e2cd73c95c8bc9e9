"""Determinization: the worlds a player cannot tell apart, rebuilt from its observation alone.

Monte-Carlo agents (:mod:`.monte_carlo`) need engine states to roll out, but they see only the
observation (RULES.md, "What every agent may know"). This module turns a batch of observations,
each from the point of view of the player to act, into complete :class:`~president_env.core.engine.GameState`
worlds:

- :func:`information_set` states what the player knows about the hidden hands: the pool of unknown
  cards, the cards a seat surely holds (the exchange), the ranks a seat may still hold, and how many
  cards each seat must receive;
- :func:`sample_worlds` rebuilds every public field from the observation and deals the pool among the
  other seats, uniformly among the worlds consistent with that knowledge (``D`` decisions times ``W``
  worlds in one vectorised pass, no Python loop over decisions or worlds);
- :func:`worlds_consistent` checks worlds against their observations (tests, debug assertions).

World layout: the viewer sits at seat 0 and relative seat ``j`` of the observation is world seat ``j``
(clockwise order is kept); ``player_at_seat`` is the identity.

What the exchange tells (RULES.md, "Exchange"): the lower-ranked player of a pair gives his ``k`` best
cards, the higher one gives back ``k`` of his choice.

- Viewer *higher* (it received the partner's best cards and gave back ``G``): the partner's hand at the
  start of play is ``S + G`` where ``S`` holds no rank above ``m``, the lowest rank received. So the
  partner surely holds ``max(0, G[r] - played_partner[r])`` cards of rank ``r`` and any further card is
  of rank ``<= m``. In the exchange phase the same holds with what has been given back so far.
- Viewer *lower* (it gave its best cards ``G`` and received ``Rv``): the partner kept at least
  ``max(0, G[r] - Rv[r])`` of them, so he surely holds ``max(0, G[r] - Rv[r] - played_partner[r])``;
  nothing bounds his other cards.

Nothing constrains anyone else's cards. Cards are counted by rank, so once the partner has played a rank
he was given, the bound assumes he played the given copies first: still sound, only looser than what the
viewer could narrow it down to, and the worlds are then uniform over that slightly larger set.

What the observation does not hold, and what the worlds use instead:

- the finishing order among several Neutres of the previous manche (roles only say "neutre"). It
  matters only for Neutre-Neutre exchange pairs (``exchange`` with 3+ entries at 6+ players). With
  ``reseat_by_role`` every manche with roles is seated by position, so seats give the order exactly;
  otherwise the viewer's own pair comes from the cards it exchanged and the other Neutres take the
  remaining positions in seat order. For a Neutre viewer outside the exchange phase, which side of its
  pair it was on is inferred from its cards when they tell; when they do not, the partner gets the
  weaker "lower viewer" bound, which holds on both sides;
- what other pairs exchanged: their ``gave``/``received`` are zero (the partner's are the viewer's,
  swapped, which is exact);
- ``dealt_to`` (zeros), ``dealer`` (0), ``manche_steps`` (0), last results (as :func:`engine.allocate`).

Game totals: by default each world is the first manche of a fresh game (``scores`` 0, ``manche`` 0,
``decisive`` False), so that under one-manche rules the world's game ends (``done``) exactly when its
manche does, whatever the real totals — what rollouts want; the world's observation then differs from
the original in the ``scores``, ``manche`` and ``decisive`` segments only. With ``game_totals=True`` they
are copied from the observation (and ``tied`` rebuilt in a decisive manche), and a world seen from seat 0
gives back the observation exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from president_env.core.deals import NEUTRE, PRESIDENT, TROU_DU_CUL, VICE_PRESIDENT, VICE_TROU
from president_env.core.engine import PHASE_EXCHANGE, PHASE_PLAY, GameState, allocate, tables
from president_env.core.observation import layout, observe
from president_env.core.rules import Rules

from .base import ObsView, decode

# Sort keys (see _deal_pool): random bits 8..62, bit 63 marks a real card, the low byte is read back.
_BYTE = np.uint64(0xFF)
_RANDOM_BITS = np.uint64(0x7FFF_FFFF_FFFF_FF00)
_REAL = np.uint64(1 << 63)
_PAD = np.uint64(0xFFFF_FFFF_FFFF_FF00)


@dataclass(frozen=True)
class InformationSet:
    """What the player to act knows about the hidden hands, by *relative* seat (0 = the viewer).

    Shapes: ``D`` decisions, ``P`` seats, ``R`` ranks. A world is consistent when every seat ``j >= 1``
    holds ``lower[d, j]`` plus ``need[d, j]`` cards of the pool, of ranks where ``allowed[d, j]``, and the
    pool is dealt out exactly.
    """

    pool: np.ndarray  # (D,R) int64 unknown cards: deck - own hand - all played - lower of every seat
    lower: np.ndarray  # (D,P,R) int64 cards a seat surely holds (the exchange partner only); 0 for the viewer
    allowed: np.ndarray  # (D,P,R) bool ranks a seat may hold beyond `lower`; all False for the viewer
    need: np.ndarray  # (D,P) int64 cards a seat draws from the pool: held - lower.sum(R); 0 for the viewer


@dataclass(frozen=True)
class _Seating:
    """The exchange set-up the observation implies (see the module docstring for the guesses)."""

    prev_pos: np.ndarray  # (D,P) int8 previous finishing position by relative seat, -1 without roles
    partner: np.ndarray  # (D,P) int8 exchange partner of every seat, -1
    gives_left: np.ndarray  # (D,P) int8 cards every seat still has to give back
    side: np.ndarray  # (D,) int64 +1 viewer is the higher of its pair, -1 the lower, 0 unknown or no pair


def _check_observations(rules: Rules, observations: np.ndarray) -> tuple[np.ndarray, ObsView]:
    """``(D, obs_dim) float32`` observations and their decoded view; ``ValueError`` if the viewer is not to act."""
    obs = np.asarray(observations, np.float32)
    if obs.ndim == 1:
        obs = obs[None]
    dim = layout(rules).size
    if obs.ndim != 2 or obs.shape[1] != dim or obs.shape[0] < 1:
        raise ValueError(f"observations must have shape (D >= 1, {dim}) for these rules, got {obs.shape}")
    view = decode(rules, obs)
    wrong = np.flatnonzero(view.to_act != 0)
    if wrong.size:
        d = int(wrong[0])
        raise ValueError(
            f"observation {d} is not from the player to act (to_act = relative seat {int(view.to_act[d])}); "
            "determinization rebuilds the information set of the player who decides"
        )
    return obs, view


def _lowest_rank(counts: np.ndarray, default: int) -> np.ndarray:
    """``(D,) int64`` lowest rank with a card in ``counts (D,R)``, ``default`` where there is none."""
    return np.where(counts.any(axis=1), np.argmax(counts > 0, axis=1), default)


def _seating(rules: Rules, view: ObsView) -> _Seating:
    """Previous positions, partners and gives left of every seat, and the viewer's side of its pair."""
    tab = tables(rules)
    d_count, p, r = view.hand.shape[0], rules.n_players, rules.n_ranks
    rows = np.arange(d_count)
    roles = view.roles
    has_roles = roles[:, 0] >= 0
    partner = view.exchange_partner
    has_partner = partner >= 0
    partner_seat = np.maximum(partner, 0)
    exchanging = view.exchange
    ranks = np.arange(r)

    # The viewer's side: by role, except for Neutre-Neutre pairs (roles tie) where the cards tell.
    role0 = roles[:, 0]
    high = (role0 == PRESIDENT) | (role0 == VICE_PRESIDENT)
    low = (role0 == VICE_TROU) | (role0 == TROU_DU_CUL)
    neutral = (role0 == NEUTRE) & has_partner
    # Only the higher player of a pair acts in the exchange phase.
    high |= neutral & exchanging
    # Could the viewer have been the lower one? Then every card it held before the exchange above the
    # lowest rank it gave was given: (own cards at the start of play - received)[r] == 0 above that rank.
    start = view.hand + view.played[:, 0]
    above_given = ranks > _lowest_rank(view.gave, r)[:, None]
    could_be_low = ((start - view.received) * above_given == 0).all(axis=1)
    # Could it have been the higher one? Then the partner played nothing above the lowest rank received
    # that it was not given back.
    above_received = ranks > _lowest_rank(view.received, r)[:, None]
    played_partner = view.played[rows, partner_seat]
    could_be_high = ((played_partner > view.gave) & above_received).sum(axis=1) == 0
    undecided = neutral & ~exchanging
    high |= undecided & could_be_high & ~could_be_low
    low |= undecided & could_be_low & ~could_be_high

    # Positions by role; Neutres below.
    pos = np.select(
        [roles == PRESIDENT, roles == VICE_PRESIDENT, roles == VICE_TROU, roles == TROU_DU_CUL],
        [0, 1, p - 2, p - 1],
        -1,
    ).astype(np.int64)
    neutre_positions = tab.role_by_pos == NEUTRE
    is_neutre = roles == NEUTRE
    if is_neutre.any():
        # The viewer's own Neutre pair: the first Neutre pair moving as many cards as it received.
        neutre_pairs = [(hp, lp, k) for hp, lp, k in rules.exchange_pairs if neutre_positions[hp]]
        if neutre_pairs:
            pair_high = np.full(d_count, neutre_pairs[0][0])
            pair_low = np.full(d_count, neutre_pairs[0][1])
            n_received = view.received.sum(axis=1)
            for hp, lp, k in reversed(neutre_pairs):
                match = n_received == k
                pair_high = np.where(match, hp, pair_high)
                pair_low = np.where(match, lp, pair_low)
            own = neutral & has_roles
            viewer_pos = np.where(low, pair_low, pair_high)
            pos[:, 0] = np.where(own, viewer_pos, pos[:, 0])
            other = np.where(low, pair_high, pair_low)
            pos[rows[own], partner_seat[own]] = other[own]
        # The other Neutres take the free Neutre positions in seat order.
        taken = np.zeros((d_count, p + 1), bool)
        taken[rows[:, None], np.where(is_neutre & (pos >= 0), pos, p)] = True
        free = neutre_positions & ~taken[:, :p]
        free_sorted = np.argsort(~free, axis=1, kind="stable")
        unassigned = is_neutre & (pos < 0)
        order = np.maximum(np.cumsum(unassigned, axis=1) - 1, 0)
        pos = np.where(unassigned, np.take_along_axis(free_sorted, order, axis=1), pos)
    if rules.reseat_by_role:
        # Every manche with roles is seated by position: the Président's relative seat gives them all.
        president = np.argmax(roles == PRESIDENT, axis=1)
        by_seat = (president[:, None] - np.arange(p)) % p
        exact = has_roles & (tab.role_by_pos[by_seat] == np.maximum(roles, 0)).all(axis=1)
        pos = np.where(exact[:, None], by_seat, pos)
        side_exact = np.where(pos[:, 0] < pos[rows, partner_seat], 1, -1)
        high = np.where(exact & has_partner, side_exact > 0, high)
        low = np.where(exact & has_partner, side_exact < 0, low)
    pos = np.where(has_roles[:, None], pos, -1)

    partners = np.full((d_count, p), -1, np.int64)
    gives_left = np.zeros((d_count, p), np.int64)
    for hp, lp, k in rules.exchange_pairs:
        seat_high = np.argmax(pos == hp, axis=1)
        seat_low = np.argmax(pos == lp, axis=1)
        sub = rows[has_roles]
        partners[sub, seat_high[sub]] = seat_low[sub]
        partners[sub, seat_low[sub]] = seat_high[sub]
        # Gives go Président first: pairs above the viewer's are done, those below have not started.
        pending = has_roles & exchanging & (hp > pos[:, 0])
        gives_left[rows[pending], seat_high[pending]] = k
    partners[:, 0] = partner
    gives_left[:, 0] = view.gives_left
    side = np.where(has_partner, np.where(high, 1, np.where(low, -1, 0)), 0)
    return _Seating(pos.astype(np.int8), partners.astype(np.int8), gives_left.astype(np.int8), side)


def _information_set(rules: Rules, view: ObsView, seating: _Seating) -> InformationSet:
    d_count, p, r = view.hand.shape[0], rules.n_players, rules.n_ranks
    rows = np.arange(d_count)
    partner = view.exchange_partner
    has_partner = partner >= 0
    seat = np.maximum(partner, 0)
    played_partner = view.played[rows, seat]
    higher = (seating.side > 0) & has_partner
    # Higher viewer: the partner still holds what it was given back and has not played.
    lower_if_higher = np.maximum(view.gave - played_partner, 0)
    # Lower (or undecided) viewer: the partner kept at least what he was given and did not give back.
    lower_if_lower = np.maximum(view.gave - view.received - played_partner, 0)
    partner_lower = np.where(higher[:, None], lower_if_higher, lower_if_lower)
    m = _lowest_rank(view.received, r - 1)
    partner_allowed = ~higher[:, None] | (np.arange(r) <= m[:, None])

    lower = np.zeros((d_count, p, r), np.int64)
    allowed = np.ones((d_count, p, r), bool)
    allowed[:, 0] = False
    sub = rows[has_partner]
    lower[sub, seat[sub]] = partner_lower[sub]
    allowed[sub, seat[sub]] = partner_allowed[sub]
    need = view.held - lower.sum(axis=2)
    need[:, 0] = 0
    pool = np.asarray(rules.copies) - view.hand - view.played.sum(axis=1) - lower.sum(axis=1)

    allowed_pool = (pool[:, None, :] * allowed).sum(axis=2)
    bad = (pool < 0).any(axis=1) | (need < 0).any(axis=1) | (pool.sum(axis=1) != need.sum(axis=1))
    bad |= (allowed_pool < need).any(axis=1)
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"observation {d} is not consistent with any deal: unknown cards by rank {pool[d].tolist()}, "
            f"cards to deal by seat {need[d].tolist()}"
        )
    return InformationSet(pool=pool, lower=lower, allowed=allowed, need=need)


def information_set(rules: Rules, view: ObsView) -> InformationSet:
    """What the player to act knows about the hidden hands, from the decoded observations ``view`` (D rows).

    ``view`` must come from observations of the player to act (``view.to_act == 0``); ``ValueError``
    otherwise, or when an observation is consistent with no deal.
    """
    wrong = np.flatnonzero(view.to_act != 0)
    if wrong.size:
        raise ValueError(f"observation {int(wrong[0])} is not from the player to act")
    return _information_set(rules, view, _seating(rules, view))


def _public_state(rules: Rules, view: ObsView, info: InformationSet, seating: _Seating, game_totals: bool) -> GameState:
    """``D`` slots holding every public field of the observations; hands hold the viewer's own cards and
    the forced ones (``info.lower``) only. Game totals stay at zero unless ``game_totals``."""
    state = allocate(rules, view.hand.shape[0])
    state.hands[:] = info.lower
    state.hands[:, 0] = view.hand
    state.n_held[:] = view.held
    state.played[:] = view.played
    state.passed_bits[:] = np.packbits(view.passed, axis=1, bitorder="little")[:, 0]
    state.holding_bits[:] = np.packbits(view.held > 0, axis=1, bitorder="little")[:, 0]
    out_order, penalized = view.out_order, view.penalized
    gone = out_order >= 0
    # trick._go_out ranks a finisher among the normal finishers, or among the offenders when penalized.
    before = (out_order[:, None, :] < out_order[:, :, None]) & gone[:, None, :]
    same_kind = penalized[:, None, :] == penalized[:, :, None]
    state.out_order[:] = out_order
    state.out_rank[:] = np.where(gone, (before & same_kind).sum(axis=2), -1)
    state.penalized[:] = penalized
    state.n_out[:] = gone.sum(axis=1)
    state.n_penalized[:] = (gone & penalized).sum(axis=1)
    state.n_normal_out[:] = (gone & ~penalized).sum(axis=1)
    state.gives_left[:] = seating.gives_left
    state.partner[:] = seating.partner
    state.gave[:, 0] = view.gave
    state.received[:, 0] = view.received
    # The partner's side of the exchange is the viewer's, swapped.
    rows = np.flatnonzero(view.exchange_partner >= 0)
    state.gave[rows, view.exchange_partner[rows]] = view.received[rows]
    state.received[rows, view.exchange_partner[rows]] = view.gave[rows]
    state.prev_pos[:] = seating.prev_pos
    state.roles[:] = view.roles
    exchanging = view.exchange
    state.phase[:] = np.where(exchanging, PHASE_EXCHANGE, PHASE_PLAY)
    state.current[:] = 0
    lead_role = TROU_DU_CUL if rules.lead == "trou_du_cul" else PRESIDENT
    state.leader[:] = np.where(exchanging, np.argmax(view.roles == lead_role, axis=1), 0)
    state.trick_rank[:] = view.trick_rank
    state.trick_count[:] = view.trick_count
    state.trick_owner[:] = view.trick_owner
    state.revolution[:] = view.revolution
    state.constrained[:] = view.constrained
    if game_totals:
        state.scores[:] = view.scores
        state.manche[:] = view.manche
        state.decisive[:] = view.decisive
        # In a decisive manche the tied players are those with the best total (its points are not added).
        state.tied[:] = view.decisive[:, None] & (view.scores == view.scores.max(axis=1, keepdims=True))
    return state


def _deal_pool(info: InformationSet, n_worlds: int, rng: np.random.Generator) -> np.ndarray:
    """Deal each decision's pool ``n_worlds`` times: ``(D*W, P, R) int64`` cards drawn by every seat.

    Cards are individuals: the pool of decision ``d`` is a list of cards (ranks in order, padded to the
    longest pool). Uniformity: with one constrained seat ``c`` (allowed ranks restricted), the consistent
    deals are "an ``e``-subset of the cards allowed to ``c``, then the other cards split among the other
    seats with their exact counts"; the number of splits is the same multinomial coefficient whatever
    subset ``c`` took, so drawing ``c``'s subset uniformly and then splitting the rest uniformly is exactly
    uniform over card-level deals. Each draw is a random permutation made by sorting 64-bit keys: bit 63
    set and 55 random bits for a real card (0 for a card already given to ``c``, so it sorts first; all
    ones for padding, so it sorts last), and in the low byte what must be read back (the card's rank, or
    its index in stage 1) — ``np.sort`` on integers is vectorised, far faster than ``argsort``. Ties of 55
    random bits (probability below 2**-43 per row) are the only departure from exact uniformity.
    """
    pool, need, allowed = info.pool, info.need, info.allowed
    d_count, p, r = info.lower.shape
    n = d_count * n_worlds
    size = pool.sum(axis=1)
    width = int(size.max())
    if width == 0:
        return np.zeros((n, p, r), np.int64)
    slots = np.arange(width)
    card_rank = (slots[None, :, None] >= np.cumsum(pool, axis=1)[:, None, :]).sum(axis=2)  # (D,L), r = padding

    # The constrained seat draws first; by construction at most one seat (the partner) is restricted.
    restricted = ~allowed[:, 1:, :].all(axis=2) & (need[:, 1:] > 0)
    assert (restricted.sum(axis=1) <= 1).all(), "only the exchange partner may have restricted ranks"
    first = np.where(restricted.any(axis=1), np.argmax(restricted, axis=1) + 1, 0)
    n_first = need[np.arange(d_count), first] * restricted.any(axis=1)
    rest_need = need.copy()
    rest_need[np.arange(d_count), first] -= n_first
    # Seat of every position of the dealt order (D,L): the constrained seat's cards, then seats 1..P-1 in
    # turn, P past the pool.
    ends = n_first[:, None] + np.cumsum(rest_need, axis=1)
    labels = np.where(slots < n_first[:, None], first[:, None], (slots[None, :, None] >= ends[:, None, :]).sum(axis=2))

    # Stage 2 keys (drawn first; stage 1 marks the constrained seat's cards in them).
    prefix = np.where(slots < size[:, None], _REAL, _PAD) | card_rank.astype(np.uint64)
    keys = rng.bit_generator.random_raw((n, width))
    keys &= _RANDOM_BITS
    by_decision = keys.reshape(d_count, n_worlds, width)
    np.bitwise_or(by_decision, prefix[:, None, :], out=by_decision)

    # Stage 1: a uniform subset of the cards allowed to the constrained seat.
    drawing = np.flatnonzero(n_first > 0)
    if drawing.size:
        may = np.concatenate([allowed[drawing, first[drawing]], np.zeros((drawing.size, 1), bool)], axis=1)
        ok_card = np.take_along_axis(may, card_rank[drawing], axis=1)  # (D1,L): may that seat get the card?
        n_ok = ok_card.sum(axis=1)
        width_ok = int(n_ok.max())
        ok_slots = np.argsort(~ok_card, axis=1, kind="stable")[:, :width_ok]  # allowed cards' slots first
        index = np.arange(width_ok)
        prefix_ok = np.where(index < n_ok[:, None], _REAL, _PAD) | index.astype(np.uint64)
        keys_ok = rng.bit_generator.random_raw((drawing.size * n_worlds, width_ok))
        keys_ok &= _RANDOM_BITS
        by_decision = keys_ok.reshape(drawing.size, n_worlds, width_ok)
        np.bitwise_or(by_decision, prefix_ok[:, None, :], out=by_decision)
        keys_ok.sort(axis=1)
        n_take = int(n_first[drawing].max())
        picked = (keys_ok[:, :n_take] & _BYTE).astype(np.intp)  # positions in the allowed list
        take = np.arange(n_take) < np.repeat(n_first[drawing], n_worlds)[:, None]
        picked_slot = np.take_along_axis(np.repeat(ok_slots, n_worlds, axis=0), picked, axis=1)
        world_rows = (drawing[:, None] * n_worlds + np.arange(n_worlds)).reshape(-1, 1)
        chosen = (world_rows * width + picked_slot)[take]
        flat_keys = keys.reshape(-1)
        flat_keys[chosen] &= _BYTE  # keep the rank only: these sort first, onto the constrained seat

    # Stage 2: a uniform order of the cards (the chosen ones first), dealt to the positions' seats.
    keys.sort(axis=1)
    bins = keys.view(np.int64)  # in place: the keys are not needed any more
    bins &= 0xFF  # the rank of the card at each position
    # Bin of (world, seat of the position, rank); the seats' layout is the same for every world of a decision.
    offsets = labels * (r + 1) + (np.arange(d_count) * (n_worlds * (p + 1) * (r + 1)))[:, None]
    by_decision = bins.reshape(d_count, n_worlds, width)
    by_decision += offsets[:, None, :]
    by_decision += (np.arange(n_worlds) * ((p + 1) * (r + 1)))[None, :, None]
    dealt = np.bincount(bins.reshape(-1), minlength=n * (p + 1) * (r + 1)).reshape(n, p + 1, r + 1)
    return dealt[:, :p, :r]


def sample_worlds(
    rules: Rules,
    observations: np.ndarray,
    n_worlds: int,
    rng: np.random.Generator,
    *,
    game_totals: bool = False,
    check: bool = False,
) -> GameState:
    """``n_worlds`` worlds for each of ``D`` decisions, consistent with what the player to act knows.

    Args:
        rules: the rules of the observations (a copy with other ``manches`` has the same layout).
        observations: ``(D, obs_dim) float32``, each from the point of view of the player to act.
        n_worlds: worlds ``W`` per decision.
        rng: the generator the sample is drawn from (the same seed and observations give the same worlds).
        game_totals: copy scores, manche index and ``decisive`` from the observation (default: a fresh
            game, see the module docstring).
        check: assert :func:`worlds_consistent` on the result (debugging; costs about a sampling).

    Returns:
        a ``GameState`` of ``D*W`` slots, slot ``d*W + w`` = world ``w`` of decision ``d``; the viewer sits
        at seat 0 and is to act; hands ``(D*W, P, R) int8``. ``ValueError`` if an observation is not from
        the player to act or is consistent with no deal.
    """
    if isinstance(n_worlds, bool) or not isinstance(n_worlds, (int, np.integer)) or n_worlds < 1:
        raise ValueError(f"n_worlds must be a positive integer, got {n_worlds!r}")
    obs, view = _check_observations(rules, observations)
    seating = _seating(rules, view)
    info = _information_set(rules, view, seating)
    public = _public_state(rules, view, info, seating, game_totals)
    worlds = public.take(np.repeat(np.arange(obs.shape[0]), n_worlds))
    worlds.hands[...] += _deal_pool(info, int(n_worlds), rng).astype(np.int8)  # in place: the state is a named tuple
    if check:
        ok = worlds_consistent(rules, obs, worlds, int(n_worlds), game_totals=game_totals)
        assert ok.all(), f"world {int(np.flatnonzero(~ok)[0])} is not consistent with its observation"
    return worlds


_GAME_SEGMENTS = ("scores", "manche", "decisive")


def worlds_consistent(
    rules: Rules, observations: np.ndarray, state: GameState, n_worlds: int, *, game_totals: bool = False
) -> np.ndarray:
    """``(D*W,) bool``: is slot ``d*W + w`` of ``state`` a world of observation ``d``?

    A world is: seen from seat 0 it gives back the observation exactly (the ``scores``, ``manche`` and
    ``decisive`` segments are compared only with ``game_totals``; otherwise they must be zero, a fresh
    game); it conserves the cards (hands + played = the deck, by rank); ``n_held`` and ``holding_bits``
    match the hands; and the hidden hands respect the exchange knowledge (at least ``lower``, more only
    of ``allowed`` ranks).
    """
    obs, view = _check_observations(rules, observations)
    info = _information_set(rules, view, _seating(rules, view))
    n = obs.shape[0] * n_worlds
    if state.batch_size != n:
        raise ValueError(f"state has {state.batch_size} slots, expected {obs.shape[0]} x {n_worlds} = {n}")
    rows_d = np.repeat(np.arange(obs.shape[0]), n_worlds)
    expected = obs[rows_d]
    if not game_totals:
        lay = layout(rules)
        for name in _GAME_SEGMENTS:
            expected[:, lay[name]] = 0.0
    ok = (observe(rules, state, viewer=np.zeros(n, np.int64)) == expected).all(axis=1)
    hands = state.hands.astype(np.int64)
    ok &= (state.current == 0) & (hands >= 0).all(axis=(1, 2))
    ok &= (hands.sum(axis=1) + state.played.sum(axis=1) == np.asarray(rules.copies)).all(axis=1)
    ok &= (state.n_held == hands.sum(axis=2)).all(axis=1)
    ok &= state.holding_bits == np.packbits(state.n_held > 0, axis=1, bitorder="little")[:, 0]
    extra = hands[:, 1:] - info.lower[rows_d, 1:]
    ok &= (extra >= 0).all(axis=(1, 2)) & ((extra == 0) | info.allowed[rows_d, 1:]).all(axis=(1, 2))
    return ok


__all__ = ["InformationSet", "information_set", "sample_worlds", "worlds_consistent"]
