"""The observation: one flat float32 vector per slot, from one seat's point of view.

Seats appear in *relative* order: relative seat ``j`` is the seat ``j`` places
clockwise from the viewer (``0`` is the viewer). The vector is a sufficient
statistic of what that player may know (RULES.md, last section): nothing in it
depends on another player's hidden cards. :func:`layout` gives the index table;
``layout(rules).table()`` prints it as Markdown.

With ``P`` players, ``R`` ranks and ``C = 4*decks``, the segments in order are:

=================  ==========  ===========================================================
name               size        meaning
=================  ==========  ===========================================================
hand               R           own cards, count per rank
played             P*R         cards each relative seat played this manche, count per rank
held               P           cards each relative seat holds
trick_rank         R           one-hot rank of the play to beat (all 0: the next play leads)
trick_count        C           one-hot card count of the trick (all 0: lead)
trick_owner        P           one-hot relative seat that made the play to beat
passed             P           1 where the relative seat has passed (see ``pass_rule``)
out_order          P*P         one-hot order in which each relative seat went out
penalized          P           1 where the seat went out on a 2/joker (``finish_on_two``)
roles              P*5         one-hot role of each seat (président, vice, neutre, vice-trou, trou)
revolution         1           1 while the rank order is inverted
constrained        1           1 while "or nothing" binds the player to act
to_act             P           one-hot relative seat of the player to act
phase              2           one-hot exchange / play (both 0 once the game is over)
gave               R           cards this seat gave in the exchange, per rank
received           R           cards this seat received in the exchange, per rank
exchange_partner   P           one-hot relative seat of this seat's exchange partner
gives_left         1           cards this seat still has to give back
scores             P           game totals of each relative seat's player
manche             1           index of the manche in the game (0-based)
decisive           1           1 in a decisive manche
=================  ==========  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .engine import SEAT_BITS, GameState
from .rules import Rules


@dataclass(frozen=True)
class Layout:
    """Named slices of the observation vector."""

    segments: tuple[tuple[str, int, int], ...]  # (name, offset, size)
    size: int

    def __post_init__(self) -> None:
        slices = {name: slice(offset, offset + size) for name, offset, size in self.segments}
        object.__setattr__(self, "_slices", slices)

    def __getitem__(self, name: str) -> slice:
        try:
            return self._slices[name]
        except KeyError:
            names = ", ".join(s[0] for s in self.segments)
            raise KeyError(f"no observation segment {name!r}; segments: {names}") from None

    def table(self) -> str:
        """The index table as Markdown."""
        lines = ["| name | indices | size |", "|---|---|---|"]
        lines += [f"| {n} | {o}..{o + s - 1} | {s} |" for n, o, s in self.segments]
        return "\n".join(lines)


@lru_cache(maxsize=64)
def layout(rules: Rules) -> Layout:
    p, r, c = rules.n_players, rules.n_ranks, rules.max_count
    sizes = [
        ("hand", r),
        ("played", p * r),
        ("held", p),
        ("trick_rank", r),
        ("trick_count", c),
        ("trick_owner", p),
        ("passed", p),
        ("out_order", p * p),
        ("penalized", p),
        ("roles", p * 5),
        ("revolution", 1),
        ("constrained", 1),
        ("to_act", p),
        ("phase", 2),
        ("gave", r),
        ("received", r),
        ("exchange_partner", p),
        ("gives_left", 1),
        ("scores", p),
        ("manche", 1),
        ("decisive", 1),
    ]
    segments, offset = [], 0
    for name, size in sizes:
        segments.append((name, offset, size))
        offset += size
    return Layout(tuple(segments), offset)


def obs_dim(rules: Rules) -> int:
    return layout(rules).size


@lru_cache(maxsize=8)
def _relative_flags_table(p: int) -> np.ndarray:
    """``table[seat * 256 + bits]``: the ``(P,) float32`` flags of seat bits, in relative order from ``seat``."""
    bits = np.arange(256)
    table = np.zeros((p, 256, p), np.float32)
    for seat in range(p):
        for j in range(p):
            table[seat, :, j] = (bits >> ((seat + j) % p)) & 1
    table = table.reshape(p * 256, p)
    table.flags.writeable = False
    return table


@lru_cache(maxsize=8)
def _relative_tables(p: int) -> tuple[np.ndarray, np.ndarray]:
    """``rel[seat]``: absolute seat of each relative seat; ``to_rel[seat]``: relative index of each absolute seat."""
    seats = np.arange(p)
    return (seats[:, None] + seats) % p, (seats[None, :] - seats[:, None]) % p


def _one_hot(out: np.ndarray, rows: np.ndarray, start: int, value: np.ndarray, valid: np.ndarray | None = None) -> None:
    """``out[b, start + value[b]] = 1`` (only where ``valid``; ``value`` must be in range everywhere)."""
    out[rows, start + value] = 1.0 if valid is None else valid


def _per_seat_one_hot(out: np.ndarray, start: int, values: np.ndarray, width: int) -> None:
    """For values ``(B,P)``: set ``out[b, start + j*width + values[b, j]] = 1`` where the value is >= 0."""
    slot, seat = np.nonzero(values >= 0)
    out[slot, start + seat * width + values[slot, seat]] = 1.0


# Below this batch size the observation is one gather through a plan (few NumPy calls, cheap at B = 1);
# above it, segment by segment (fewer bytes moved per slot). Both give the same array (tested).
PLAN_BELOW = 64


def observe(rules: Rules, state: GameState, viewer: np.ndarray | None = None) -> np.ndarray:
    """``(B, obs_dim) float32`` from seat ``viewer (B,)`` (default: the seat to act)."""
    seat = state.current if viewer is None else np.asarray(viewer, dtype=np.int64)
    if state.batch_size < PLAN_BELOW:
        return _observe_by_plan(rules, state, seat)
    return _observe_by_segment(rules, state, seat)


def _observe_by_segment(rules: Rules, state: GameState, seat: np.ndarray) -> np.ndarray:
    """Each segment filled by a few whole-batch operations."""
    lay = layout(rules)
    b, p = state.batch_size, rules.n_players
    rows = np.arange(b)
    rel_table, to_rel_table = _relative_tables(p)
    rel = rel_table[seat]  # (B,P) absolute seat of each relative seat
    to_rel = to_rel_table[seat]  # (B,P) relative index of each absolute seat
    own = rows * p + seat  # rows of (B*P, ...) views for the viewer's seat
    flat_rel = rows[:, None] * p + rel  # rows of (B*P, ...) views, in relative seat order
    out = np.zeros((b, lay.size), np.float32)

    def put(name: str, values: np.ndarray) -> None:
        out[:, lay[name]] = values.reshape(b, -1)

    def rotate(values: np.ndarray) -> np.ndarray:
        return values.reshape(b * p, -1).take(flat_rel.ravel(), axis=0).reshape(b, p, *values.shape[2:])

    def own_row(values: np.ndarray) -> np.ndarray:
        return values.reshape(b * p, -1).take(own, axis=0)

    def relative(abs_seat: np.ndarray) -> np.ndarray:
        return to_rel[rows, np.maximum(abs_seat, 0)]

    put("hand", own_row(state.hands))
    put("played", rotate(state.played))
    put("held", rotate(state.n_held))
    in_trick = state.trick_rank >= 0
    _one_hot(out, rows, lay["trick_rank"].start, np.maximum(state.trick_rank, 0), in_trick)
    _one_hot(out, rows, lay["trick_count"].start, np.maximum(state.trick_count - 1, 0), in_trick)
    _one_hot(out, rows, lay["trick_owner"].start, relative(state.trick_owner), in_trick)
    # Passes are kept as seat bits: one lookup gives them in relative order.
    put("passed", _relative_flags_table(p).take(seat * 256 + state.passed_bits, axis=0))
    _per_seat_one_hot(out, lay["out_order"].start, rotate(state.out_order), p)
    put("penalized", rotate(state.penalized))
    _per_seat_one_hot(out, lay["roles"].start, rotate(state.roles), 5)
    out[:, lay["revolution"].start] = state.revolution
    out[:, lay["constrained"].start] = state.constrained
    _one_hot(out, rows, lay["to_act"].start, relative(state.current))
    in_game = state.phase <= 1  # a finished game (PHASE_OVER) shows neither phase
    _one_hot(out, rows, lay["phase"].start, np.minimum(state.phase, 1).astype(np.int64), in_game)
    put("gave", own_row(state.gave))
    put("received", own_row(state.received))
    partner = state.partner.ravel()[own]
    _one_hot(out, rows, lay["exchange_partner"].start, relative(partner), partner >= 0)
    out[:, lay["gives_left"].start] = state.gives_left.ravel()[own]
    players = rotate(state.player_at_seat)
    put("scores", state.scores.ravel().take(rows[:, None] * p + players))
    out[:, lay["manche"].start] = state.manche
    out[:, lay["decisive"].start] = state.decisive
    return out


# --------------------------------------------------------------------------------------
# The plan: the observation as one gather from the state's arrays laid side by side
# --------------------------------------------------------------------------------------
_PER_SEAT_RANKS = ("hands", "played", "gave", "received")  # (B,P,R) arrays
_PER_SEAT = ("n_held", "passed", "out_order", "penalized", "roles", "gives_left", "partner", "scores")  # (B,P)
_PER_SLOT = ("trick_rank", "trick_count", "trick_owner", "revolution", "constrained", "current", "phase", "manche")
_PER_SLOT += ("decisive",)


@dataclass(frozen=True)
class _Plan:
    """``obs[b, i] = src[b, index[seat, i]]``, or ``== pattern[seat, i]`` where ``one_hot[i]``."""

    index: np.ndarray  # (P, D) int64 column of the source for each entry, by viewer seat
    pattern: np.ndarray  # (P, D) int32 value that sets a one-hot entry
    one_hot: np.ndarray  # (D,) bool


@lru_cache(maxsize=64)
def _plan(rules: Rules) -> _Plan:
    lay = layout(rules)
    p, r = rules.n_players, rules.n_ranks
    column, offset = {}, 0
    for name in _PER_SEAT_RANKS + _PER_SEAT + _PER_SLOT:
        column[name] = offset
        offset += p * r if name in _PER_SEAT_RANKS else p if name in _PER_SEAT else 1
    index = np.zeros((p, lay.size), np.int64)
    pattern = np.full((p, lay.size), -1000, np.int32)  # never a state value: entry is not a one-hot

    def plain(seat: int, segment: str, source: str, per: int = 1) -> None:
        """Segment = the source's columns of the seats in relative order (``per`` columns a seat)."""
        for j in range(lay[segment].stop - lay[segment].start):
            rel_seat, k = divmod(j, per)
            index[seat, lay[segment].start + j] = column[source] + ((seat + rel_seat) % p) * per + k

    def one_hot(seat: int, segment: str, source: str, values, per_seat: bool = False) -> None:
        """Segment = one-hot of the source value over ``values`` (per relative seat if ``per_seat``)."""
        start, width = lay[segment].start, len(values)
        for rel_seat in range(p if per_seat else 1):
            src = column[source] + ((seat + rel_seat) % p if per_seat else 0)
            for k, value in enumerate(values):
                index[seat, start + rel_seat * width + k] = src
                pattern[seat, start + rel_seat * width + k] = value

    for seat in range(p):
        relative_seats = [(seat + j) % p for j in range(p)]
        for segment, source in (("hand", "hands"), ("gave", "gave"), ("received", "received")):
            for k in range(r):
                index[seat, lay[segment].start + k] = column[source] + seat * r + k
        plain(seat, "played", "played", per=r)
        for segment, source in (("held", "n_held"), ("passed", "passed"), ("penalized", "penalized")):
            plain(seat, segment, source)
        plain(seat, "scores", "scores")
        one_hot(seat, "trick_rank", "trick_rank", range(r))
        one_hot(seat, "trick_count", "trick_count", range(1, rules.max_count + 1))
        one_hot(seat, "trick_owner", "trick_owner", relative_seats)
        one_hot(seat, "out_order", "out_order", range(p), per_seat=True)
        one_hot(seat, "roles", "roles", range(5), per_seat=True)
        one_hot(seat, "to_act", "current", relative_seats)
        one_hot(seat, "phase", "phase", range(2))
        for k, value in enumerate(relative_seats):  # the viewer's own partner, as a relative seat
            index[seat, lay["exchange_partner"].start + k] = column["partner"] + seat
            pattern[seat, lay["exchange_partner"].start + k] = value
        index[seat, lay["gives_left"].start] = column["gives_left"] + seat
        for name in ("revolution", "constrained", "manche", "decisive"):
            index[seat, lay[name].start] = column[name]
    for table in (index, pattern):
        table.flags.writeable = False
    return _Plan(index, pattern, pattern[0] != -1000)


def _observe_by_plan(rules: Rules, state: GameState, seat: np.ndarray) -> np.ndarray:
    """The state's arrays side by side, one gather, one comparison for the one-hots."""
    b, p = state.batch_size, rules.n_players
    plan = _plan(rules)
    rows = np.arange(b)[:, None]
    scores_by_seat = state.scores.ravel().take(rows * p + state.player_at_seat)
    per_seat = [getattr(state, name).reshape(b, -1) for name in _PER_SEAT_RANKS]
    per_seat += [state.n_held, SEAT_BITS[state.passed_bits, :p], state.out_order, state.penalized, state.roles]
    per_seat += [state.gives_left, state.partner, scores_by_seat]
    per_slot = [getattr(state, name)[:, None] for name in _PER_SLOT]
    source = np.concatenate(per_seat + per_slot, axis=1, dtype=np.int32, casting="unsafe")
    values = source.ravel().take(rows * source.shape[1] + plan.index[seat])
    return np.where(plan.one_hot, values == plan.pattern[seat], values).astype(np.float32)
