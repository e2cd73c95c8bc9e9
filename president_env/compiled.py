"""The engine's per-slot work compiled with Numba (the optional ``fast`` extra): legal masks and steps of some slots.

A NumPy call costs about a microsecond whatever its size, so :func:`~president_env.engine.step` and
:func:`~president_env.engine.legal_mask` pay some 60 and 15 of them per call even for one slot, and the end of a
manche some 150. These kernels do the same work slot by slot in compiled loops; ``VecGame`` (hence ``SingleGame``,
one slot, and the vector env) plays through them wherever Numba is available, being faster at every batch size
measured (docs/speed.md). With the NumPy engine they are the package's two implementations of the rules:

- :func:`legal_mask` is ``engine.legal_mask`` for some slots;
- :func:`play` is the part of ``engine.step`` that plays the actions (gives, passes, plays, a player going
  out, the turn order) in place, and says which slots' manches ended;
- :func:`score` and :func:`deal_next` are the engine's ``_end_manche`` for those slots: the scoring and the
  game's end, then the seating by role, the deal and the automatic half of the exchange of the next manche.
  Its one random draw, the shuffled decks (``engine._shuffled_decks``), stays in NumPy, for the same slots in
  the same order, so the games and the generator's draws are the same.

``engine.step(..., compiled=True)`` and ``engine.legal_mask(..., compiled=True)`` use them when
:func:`available` (Numba importable, and the environment variable ``PRESIDENT_ENV_NUMBA`` is not ``0``),
the NumPy code otherwise. One truth: ``tests/test_compiled.py`` plays both paths in lockstep on every preset
and random rule sets and demands equal masks, results and whole states after every step.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

import numpy as np

from .actions import KIND_GIVE, KIND_PASS, KIND_PLAY
from .cards import JOKER, TWO
from .rules import Rules

PHASE_EXCHANGE, PHASE_PLAY, PHASE_OVER = 0, 1, 2  # as engine.PHASE_* (engine imports this module)
PLAY_STATE = (
    "hands", "n_held", "played", "passed_bits", "holding_bits", "out_order", "out_rank", "penalized", "gives_left",
    "partner", "gave", "received", "prev_pos", "current", "leader", "trick_rank", "trick_count", "trick_owner",
    "revolution", "constrained", "phase", "n_out", "n_normal_out", "n_penalized", "manche_steps",
)  # fmt: skip
"""The ``GameState`` fields the play kernel takes, in its order: no other field changes in a play that ends no
manche."""
OUT_CHANGES = ("out_order", "out_rank", "penalized", "holding_bits", "n_out", "n_normal_out", "n_penalized")
"""What a play changes only where its player goes out (``_play_kernel``'s ``went_out`` branch)."""
PLAY_CHANGES = (
    "manche_steps", "n_held", "passed_bits", "current", "trick_rank", "trick_count", "trick_owner", "revolution",
    "constrained",
)  # fmt: skip
"""What a play or a pass (not a give) that ends no manche may change, besides the ``hands`` and ``played`` rows of
the seat that acted and, where that seat went out, :data:`OUT_CHANGES`: the exchange's fields, the leader, the phase
and the scores stay (``_play_kernel``). The one-game holder copies only these after such a step; its lockstep test
(``tests/test_single_game.py``) compares whole states after every step, so a kernel change that writes another
field fails there."""

ENV_SWITCH = "PRESIDENT_ENV_NUMBA"
"""Set to ``0`` to keep the NumPy path even where Numba is installed."""


@lru_cache(maxsize=1)
def _kernels() -> tuple[Any, Any, Any, Any] | None:
    """The compiled ``(mask, play, score, deal)`` kernels, or ``None`` without Numba (each compiled at its first
    call in a process, cached on disk)."""
    try:
        import numba
    except ImportError:
        return None
    jit = numba.njit(cache=True, nogil=True)
    return jit(_mask_kernel), jit(_play_kernel), jit(_score_kernel), jit(_deal_kernel)


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the compiled path runs: Numba importable and ``PRESIDENT_ENV_NUMBA`` not ``0`` (read once; tests
    that switch it call ``available.cache_clear()``)."""
    return os.environ.get(ENV_SWITCH, "1") != "0" and _kernels() is not None


def jit(function: Any) -> Any:
    """``function`` compiled by Numba as the engine's kernels are (nopython, cached on disk), or ``None`` where
    Numba is not importable: for kernels above the engine (the heuristics' choices), each with a NumPy twin."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)(function)


def path_name() -> str:
    """``"numba"`` or ``"numpy"``: the path ``compiled=True`` takes in this process (benchmarks print it)."""
    return "numba" if available() else "numpy"


_ARGS: dict[Rules, tuple] = {}


def _rule_args(rules: Rules, tab: Any) -> tuple:
    """The rules and the engine's tables ``tab`` (``engine.tables(rules)``) as the kernels' arguments."""
    args = _ARGS.get(rules)
    if args is not None:
        return args
    p, c = rules.n_players, rules.max_count
    next_seat = np.full(p * 256, -1, np.int64)  # [start * 256 + bits]: first seat clockwise after start in bits
    for start in range(p):
        for bits in range(1 << p):
            for step in range(1, p + 1):
                if bits >> (start + step) % p & 1:
                    next_seat[start * 256 + bits] = (start + step) % p
                    break
    playable = np.ascontiguousarray(tab.play_words.view(bool).reshape(-1, c))
    equal_rank = {"none": 0, "skip": 1, "or_nothing": 2}[rules.equal_rank]
    flags = np.array(
        [
            p,
            rules.n_ranks,
            c,
            int(rules.twos_wild),
            int(rules.top_rank_ends_trick),
            int(rules.jokers > 0),
            int(rules.revolution),
            int(rules.finish_on_two == "penalty"),
            int(rules.pass_rule == "can_return"),
            equal_rank,
        ],
        np.int64,
    )
    args = _ARGS[rules] = (
        flags,
        np.ascontiguousarray(tab.kind, dtype=np.int64),
        np.ascontiguousarray(tab.rank, dtype=np.int64),
        np.ascontiguousarray(tab.count, dtype=np.int64),
        np.ascontiguousarray(tab.rank_ok),
        playable,
        np.ascontiguousarray(tab.wild_ranks),
        next_seat,
    )
    return args


def legal_mask(rules: Rules, tab: Any, state: Any, slots: np.ndarray) -> np.ndarray:
    """``(n, num_actions) bool``: ``engine.legal_mask`` of the slots ``slots (n,) int64`` (``tab``: the engine's
    tables of ``rules``)."""
    mask_kernel = _kernels()[0]
    flags, kind, rank, count, rank_ok, playable, wild, next_seat = _rule_args(rules, tab)
    mask = np.zeros((slots.size, rules.num_actions), bool)
    mask_kernel(
        flags, rank_ok, playable, wild, slots, state.hands, state.current, state.phase, state.trick_rank,
        state.trick_count, state.revolution, state.constrained, mask,
    )  # fmt: skip
    return mask


def play(rules: Rules, tab: Any, state: Any, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Play legal ``actions (n,) int64`` in ``slots (n,) int64`` as ``engine.step`` does, up to ending manches;
    returns ``(n,) bool``: the rows whose manche ended (the engine scores them)."""
    play_kernel = _kernels()[1]
    flags, kind, rank, count, rank_ok, playable, wild, next_seat = _rule_args(rules, tab)
    ended = np.zeros(slots.size, bool)
    play_kernel(flags, kind, rank, count, next_seat, slots, actions, *[getattr(state, f) for f in PLAY_STATE], ended)
    return ended


SCORE_STATE = (
    "out_rank", "n_normal_out", "n_held", "penalized", "player_at_seat", "scores", "manche", "decisive", "tied",
    "last_positions", "last_winner", "last_scores", "phase",
)  # fmt: skip
"""The ``GameState`` fields the score kernel reads or sets, in its order."""


def score(
    rules: Rules, tab: Any, state: Any, slots: np.ndarray, rows: np.ndarray, result: Any, rewards: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Score the manches that just ended in slots ``slots (n,) int64`` as ``engine._end_manche`` does, into rows
    ``rows`` of the step's ``result`` (``rewards``: ``engine.reward_table``), and mark the games that ended
    ``PHASE_OVER``; returns the finishing positions by player ``(n,P) int64`` and ``(n,) bool`` the games over."""
    flags = np.array([rules.n_players, rules.manches], np.int64)
    positions = np.empty((slots.size, rules.n_players), np.int64)
    over = np.zeros(slots.size, bool)
    _kernels()[2](
        flags, tab.points, rewards, slots, np.asarray(rows, dtype=np.int64), result.rewards, result.manche_over,
        result.game_over, positions, over, *[getattr(state, f) for f in SCORE_STATE],
    )  # fmt: skip
    return positions, over


DEAL_STATE = (
    "seat_of_player", "player_at_seat", "prev_pos", "dealt_to", "hands", "n_held", "played", "gives_left", "partner",
    "gave", "received", "roles", "leader", "current", "phase", "dealer", "manche_steps", "passed_bits", "holding_bits",
    "out_order", "out_rank", "penalized", "trick_rank", "trick_count", "trick_owner", "revolution", "constrained",
    "n_out", "n_normal_out", "n_penalized",
)  # fmt: skip
"""The ``GameState`` fields the deal kernel sets, in its order."""
_DEAL_ARGS: dict[Rules, tuple] = {}


def deal_next(
    rules: Rules, tab: Any, state: Any, slots: np.ndarray, positions: np.ndarray, card_ids: np.ndarray
) -> None:
    """The next manche of slots ``slots (n,) int64`` whose manche ended and whose game goes on, as
    ``engine._seat_for_roles`` then ``engine._deal_and_start`` set it up: ``positions (n,P)`` the finishing positions
    by player, ``card_ids (n,N) int64`` the shuffled decks (``engine._shuffled_decks``, drawn by the caller)."""
    deal_kernel = _kernels()[3]
    args = _DEAL_ARGS.get(rules)
    if args is None:
        lead_pos = rules.n_players - 1 if rules.lead == "trou_du_cul" else 0
        flags = np.array([rules.n_players, int(rules.deal_start == "dealer_left"), int(rules.reseat_by_role), lead_pos])
        pairs = np.array(rules.exchange_pairs, np.int64).reshape(-1, 3)
        args = _DEAL_ARGS[rules] = (
            flags.astype(np.int64),
            np.ascontiguousarray(tab.deck_ranks, dtype=np.int64),
            np.ascontiguousarray(tab.seat_by_pos, dtype=np.int64),
            np.ascontiguousarray(tab.role_by_pos, dtype=np.int64),
            pairs,
        )
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    deal_kernel(*args, slots, positions, card_ids, *[getattr(state, f) for f in DEAL_STATE])


class Slot:
    """The two kernels bound to slot ``slot`` of ``state`` (whose arrays must stay the same objects, as the
    kernels and the engine's manche ends keep them), for a caller that steps one game: the arguments are
    gathered once, so a call pays Numba's dispatch only. Only where :func:`available`."""

    def __init__(self, rules: Rules, tab: Any, state: Any, slot: int = 0) -> None:
        mask_kernel, play_kernel = _kernels()[:2]
        flags, kind, rank, count, rank_ok, playable, wild, next_seat = _rule_args(rules, tab)
        s = state
        self._slots = np.array([slot], np.int64)
        self._action = np.zeros(1, np.int64)
        self._ended = np.zeros(1, bool)
        self._mask = np.zeros((1, rules.num_actions), bool)
        self._mask_call = mask_kernel
        self._mask_args = (
            flags, rank_ok, playable, wild, self._slots, s.hands, s.current, s.phase, s.trick_rank, s.trick_count,
            s.revolution, s.constrained, self._mask,
        )  # fmt: skip
        self._play_call = play_kernel
        fields = [getattr(state, f) for f in PLAY_STATE]
        self._play_args = (flags, kind, rank, count, next_seat, self._slots, self._action, *fields, self._ended)

    def mask_bytes(self) -> bytes:
        """The slot's legal mask (``engine.legal_mask``) as ``num_actions`` bytes 0/1."""
        self._mask_call(*self._mask_args)  # writes every entry
        return self._mask.tobytes()

    def play(self, action: int) -> bool:
        """Play the legal ``action`` as :func:`play` does; whether the slot's manche ended (the engine's
        ``end_manches`` scores it)."""
        self._action[0] = action
        self._ended[0] = False
        self._play_call(*self._play_args)
        return bool(self._ended[0])


# ---- the kernels (plain Python, compiled by _kernels; each line follows engine.py) ------------------------------
def _mask_kernel(
    flags, rank_ok, playable, wild, slots, hands, current, phase, trick_rank, trick_count, revolution, constrained,
    mask,
):  # fmt: skip
    r, c, twos_wild = flags[1], flags[2], flags[3]
    for i in range(slots.size):
        s = slots[i]
        seat = current[s]
        in_play = phase[s] == PHASE_PLAY
        mask[i, 0] = in_play and trick_rank[s] >= 0
        context = (int(revolution[s]) * 2 + int(constrained[s])) * (r + 1) + trick_rank[s] + 1
        tc = trick_count[s]
        twos = hands[s, seat, TWO]
        for k in range(r):
            h = hands[s, seat, k]
            usable = h
            if twos_wild and wild[k] and h > 0:
                usable = min(h + twos, c)
            if not (in_play and rank_ok[context, k]):
                usable = 0
            key = usable * (c + 1) + tc
            for j in range(c):
                mask[i, 1 + k * c + j] = playable[key, j]
            mask[i, 1 + r * c + k] = h > 0 and phase[s] == PHASE_EXCHANGE


def _play_kernel(
    flags, kind_of, rank_of, count_of, next_seat, slots, actions, hands, n_held, played, passed_bits, holding_bits,
    out_order, out_rank, penalized, gives_left, partner, gave, received, prev_pos, current, leader, trick_rank,
    trick_count, trick_owner, revolution, constrained, phase, n_out, n_normal_out, n_penalized, manche_steps, ended,
):  # fmt: skip
    p, twos_wild, top_ends, jokers = flags[0], flags[3], flags[4], flags[5]
    revolution_rule, penalty, can_return, equal_rank = flags[6], flags[7], flags[8], flags[9]
    for i in range(slots.size):
        s = slots[i]
        a = actions[i]
        manche_steps[s] += 1
        kind = kind_of[a]
        rank = rank_of[a]
        cur = current[s]
        if kind == KIND_GIVE:  # engine._apply_gives
            other = partner[s, cur]
            hands[s, cur, rank] -= 1
            hands[s, other, rank] += 1
            n_held[s, cur] -= 1
            n_held[s, other] += 1
            gave[s, cur, rank] += 1
            received[s, other, rank] += 1
            gives_left[s, cur] -= 1
            giver, best = -1, p
            for seat in range(p):  # the pending giver best placed in the previous manche (lowest seat on ties)
                if gives_left[s, seat] > 0 and prev_pos[s, seat] < best:
                    giver, best = seat, prev_pos[s, seat]
            if giver >= 0:
                current[s] = giver
                phase[s] = PHASE_EXCHANGE
            else:
                current[s] = leader[s]
                phase[s] = PHASE_PLAY
            continue
        is_play = kind == KIND_PLAY
        is_pass = kind == KIND_PASS
        count = count_of[a] if is_play else 0
        bit = 1 << cur
        # Cards leave the hand: naturals first, wild 2s complete.
        naturals = min(hands[s, cur, rank], count)
        hands[s, cur, rank] -= naturals
        played[s, cur, rank] += naturals
        used_twos = 0
        if twos_wild:
            used_twos = count - naturals
            hands[s, cur, TWO] -= used_twos
            played[s, cur, TWO] += used_twos
        n_held[s, cur] -= count
        # What the play means, judged by the order in force before it.
        old_rank = trick_rank[s]
        is_match = is_play and old_rank == rank
        ends_by_top = False
        if top_ends:
            top = JOKER if jokers else (0 if revolution[s] else TWO)
            ends_by_top = is_play and rank == top
        if revolution_rule and is_play and count >= 4:
            revolution[s] = not revolution[s]
        holding = np.int64(holding_bits[s])
        went_out = is_play and n_held[s, cur] == 0
        if went_out:  # engine._go_out
            out_order[s, cur] = n_out[s]
            n_out[s] += 1
            bad = penalty and (rank == TWO or rank == JOKER or used_twos > 0)
            penalized[s, cur] = bad
            if bad:
                out_rank[s, cur] = n_penalized[s]
                n_penalized[s] += 1
            else:
                out_rank[s, cur] = n_normal_out[s]
                n_normal_out[s] += 1
            holding = holding & ~bit
            holding_bits[s] = holding
        # Turn order: the next eligible seat clockwise; the trick ends when the turn would reach the last
        # player to have played, or nobody else can act.
        passed = np.int64(passed_bits[s])
        if is_pass:
            passed |= bit
        if can_return and is_play:
            passed = 0
        owner = cur if is_play else trick_owner[s]
        eligible = holding & ~passed & ~bit & 255
        nxt = next_seat[cur * 256 + eligible]
        if equal_rank == 1 and is_match and nxt >= 0:
            nxt = next_seat[nxt * 256 + (eligible & ~(1 << nxt) & 255)]
        trick_ends = nxt < 0 or nxt == owner or ends_by_top
        if trick_ends:
            owner_seat = max(owner, 0)
            if holding & (1 << owner_seat):
                current[s] = owner
            else:
                current[s] = next_seat[owner_seat * 256 + holding]
            trick_rank[s] = -1
            trick_count[s] = 0
            trick_owner[s] = -1
            passed_bits[s] = 0
        else:
            current[s] = nxt
            if is_play:
                trick_rank[s] = rank
                trick_count[s] = count
            trick_owner[s] = owner
            passed_bits[s] = passed
        if equal_rank == 2:
            constrained[s] = (not trick_ends) and is_match
        if went_out:
            left = 0
            for seat in range(p):
                left += (holding >> seat) & 1
            ended[i] = left <= 1


def _score_kernel(
    flags, points, reward_of, slots, rows, rewards, manche_over, game_over, positions, over, out_rank, n_normal_out,
    n_held, penalized, player_at_seat, scores, manche, decisive, tied, last_positions, last_winner, last_scores, phase,
):  # fmt: skip
    p, manches = flags[0], flags[1]
    for i in range(slots.size):
        s, row = slots[i], rows[i]
        normal = n_normal_out[s]
        for seat in range(p):  # engine.final_positions
            if n_held[s, seat] > 0:
                pos = normal
            elif penalized[s, seat]:
                pos = normal + 1 + out_rank[s, seat]
            else:
                pos = out_rank[s, seat]
            positions[i, player_at_seat[s, seat]] = pos
        was_decisive = decisive[s]
        for player in range(p):
            pos = positions[i, player]
            rewards[row, player] = reward_of[pos]
            if not was_decisive:
                scores[s, player] += points[pos]
            last_positions[s, player] = pos
        manche_over[row] = True
        manche[s] += 1
        best = scores[s, 0]
        for player in range(1, p):
            best = max(best, scores[s, player])
        n_tied = 0
        for player in range(p):
            n_tied += scores[s, player] == best
        last_regular = manche[s] >= manches and not was_decisive
        needs_decider = last_regular and n_tied > 1
        ended = was_decisive or (last_regular and not needs_decider)
        if ended:
            # Winner: the best total, or among the tied players the best placed in the decisive manche.
            winner, best_pos = 0, p + 1
            for player in range(p):
                contender = tied[s, player] if was_decisive else scores[s, player] == best
                if contender and positions[i, player] < best_pos:
                    winner, best_pos = player, positions[i, player]
            last_winner[s] = winner
            last_scores[s] = scores[s]
            phase[s] = PHASE_OVER
        decisive[s] = needs_decider
        if needs_decider:
            for player in range(p):
                tied[s, player] = scores[s, player] == best
        game_over[row] = ended
        over[i] = ended


def _deal_kernel(
    flags, deck_ranks, seat_by_pos, role_by_pos, pairs, slots, positions, card_ids, seat_of_player, player_at_seat,
    prev_pos, dealt_to, hands, n_held, played, gives_left, partner, gave, received, roles, leader, current, phase,
    dealer, manche_steps, passed_bits, holding_bits, out_order, out_rank, penalized, trick_rank, trick_count,
    trick_owner, revolution, constrained, n_out, n_normal_out, n_penalized,
):  # fmt: skip
    p, dealer_left, reseat, lead_pos = flags[0], flags[1], flags[2], flags[3]
    r = hands.shape[2]
    for i in range(slots.size):
        s = slots[i]
        # engine._seat_for_roles: seated by role, the previous positions by seat; the Trou du cul deals.
        if reseat:
            for player in range(p):
                seat = seat_by_pos[positions[i, player]]
                seat_of_player[s, player] = seat
                player_at_seat[s, seat] = player
        for player in range(p):
            prev_pos[s, seat_of_player[s, player]] = positions[i, player]
        d, lead = 0, 0
        for seat in range(p - 1, -1, -1):  # the first seat with the position, as engine._first_seat_with
            if prev_pos[s, seat] == p - 1:
                d = seat
            if prev_pos[s, seat] == lead_pos:
                lead = seat
        # engine._deal_and_start: card_ids[i, j] goes to the j-th seat clockwise from the first receiver.
        first = d + 1 if dealer_left else d
        hands[s] = 0
        for j in range(card_ids.shape[1]):
            cid = card_ids[i, j]
            seat = (first + j) % p
            dealt_to[s, cid] = seat
            hands[s, seat, deck_ranks[cid]] += 1
        # engine._start_manche with roles: the automatic half of the exchange, then who acts first.
        gives_left[s] = 0
        partner[s] = -1
        gave[s] = 0
        received[s] = 0
        for m in range(pairs.shape[0]):
            high_pos, low_pos, k = pairs[m, 0], pairs[m, 1], pairs[m, 2]
            high, low = 0, 0
            for seat in range(p - 1, -1, -1):
                if prev_pos[s, seat] == high_pos:
                    high = seat
                if prev_pos[s, seat] == low_pos:
                    low = seat
            above = 0  # the lower-ranked player gives his k best cards: from the strongest rank down
            for rank in range(r - 1, -1, -1):
                held = hands[s, low, rank]
                take = min(max(k - above, 0), held)
                above += held
                hands[s, low, rank] -= take
                hands[s, high, rank] += take
                gave[s, low, rank] = take
                received[s, high, rank] = take
            gives_left[s, high] = k
            partner[s, high] = low
            partner[s, low] = high
        giver, best = -1, p
        for seat in range(p):
            roles[s, seat] = role_by_pos[prev_pos[s, seat]]
            total = 0
            for rank in range(r):
                total += hands[s, seat, rank]
            n_held[s, seat] = total
            if gives_left[s, seat] > 0 and prev_pos[s, seat] < best:  # the Président's pair first
                giver, best = seat, prev_pos[s, seat]
        leader[s] = lead
        if giver >= 0:
            current[s] = giver
            phase[s] = PHASE_EXCHANGE
        else:
            current[s] = lead
            phase[s] = PHASE_PLAY
        dealer[s] = d
        manche_steps[s] = 0
        played[s] = 0
        passed_bits[s] = 0
        holding_bits[s] = (1 << p) - 1
        out_order[s] = -1
        out_rank[s] = -1
        penalized[s] = False
        trick_rank[s] = -1
        trick_count[s] = 0
        trick_owner[s] = -1
        revolution[s] = False
        constrained[s] = False
        n_out[s] = 0
        n_normal_out[s] = 0
        n_penalized[s] = 0
