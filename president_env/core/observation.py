"""The observation: one flat float32 vector per slot, from one seat's point of view, and its spec.

Seats appear in *relative* order: relative seat ``j`` is the seat ``j`` places
clockwise from the viewer (``0`` is the viewer). The vector is a sufficient
statistic of what that player may know (RULES.md, last section): nothing in it
depends on another player's hidden cards.

One spec says what the vector holds, OpenSpiel-style: :func:`layout` gives the
:class:`ObservationSpec` of a ``Rules``, an ordered list of named :class:`Segment`
(shape, encoding, the state field it shows, bounds, meaning). Everything else is
read from it: the encoder :func:`observe` (a kernel writing into the caller's buffer), the decoder
``layout(rules).view(obs)["hand"]`` (named arrays, batched or not), the same named
arrays read straight from a state (``view_state``, the Monte-Carlo rollouts), the
encoder bound to one slot (:class:`SlotObserver`, which
:class:`~president_env.game.single.SingleGame` observes with) and the index table of
``docs/environment.md`` (``layout(rules).table()``). The segments, in order, are
``_SEGMENTS`` below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from president_env.core.compiled import jit, numba_entry, run
from president_env.core.engine import GameState, tables
from president_env.core.rules import Rules
from president_env.core.trick import index_range

COUNT, FLAG, ONE_HOT = "count", "flag", "one_hot"
"""Encodings: the value itself; 0 or 1; a 1 at ``value - first`` (all 0 when the value is out of range)."""
OWN, SEATS, TABLE = "own", "seats", "table"
"""Whose value a segment shows: the viewer's row of a per-seat field; every seat's, in relative order; the table's."""

# name, symbolic shape (the one-hot width last), encoding, GameState field, whose, bound of a count, meaning.
# One-hot options: "first" (the value of the first entry), "seat" (an absolute seat, shown as a relative one).
# fmt: off
_SEGMENTS: tuple[tuple, ...] = (
    ("hand", ("R",), COUNT, "hands", OWN, "copies", "own cards, count per rank"),
    ("played", ("P", "R"), COUNT, "played", SEATS, "copies",
     "cards each relative seat played this manche, per rank (wild 2s as 2s)"),
    ("held", ("P",), COUNT, "n_held", SEATS, "cards", "cards each relative seat holds"),
    ("trick_rank", ("R",), ONE_HOT, "trick_rank", TABLE, {},
     "rank of the play to beat (all 0 when the next play leads)"),
    ("trick_count", ("C",), ONE_HOT, "trick_count", TABLE, {"first": 1},
     "cards per play in this trick (all 0 when the next play leads)"),
    ("trick_owner", ("P",), ONE_HOT, "trick_owner", TABLE, {"seat": True}, "relative seat that made the play to beat"),
    ("passed", ("P",), FLAG, "passed", SEATS, None,
     "seats that have passed (in this trick; since the last play with `can_return`)"),
    ("out_order", ("P", "P"), ONE_HOT, "out_order", SEATS, {},
     "per seat, the order in which it went out (all 0 while it plays)"),
    ("penalized", ("P",), FLAG, "penalized", SEATS, None,
     "seats that went out on a 2 or a joker under `finish_on_two: penalty`"),
    ("roles", ("P", "5"), ONE_HOT, "roles", SEATS, {},
     "per seat, its role: président, vice-président, neutre, vice-trou, trou du cul"),
    ("revolution", (), FLAG, "revolution", TABLE, None, "the rank order is inverted"),
    ("constrained", (), FLAG, "constrained", TABLE, None, '"or nothing" binds the player to act'),
    ("to_act", ("P",), ONE_HOT, "current", TABLE, {"seat": True}, "relative seat of the player to act"),
    ("phase", ("2",), ONE_HOT, "phase", TABLE, {}, "exchange, play (all 0 once the game is over)"),
    ("gave", ("R",), COUNT, "gave", OWN, "copies", "cards this seat gave in the exchange, per rank"),
    ("received", ("R",), COUNT, "received", OWN, "copies", "cards this seat received in the exchange, per rank"),
    ("exchange_partner", ("P",), ONE_HOT, "partner", OWN, {"seat": True}, "relative seat this seat exchanges with"),
    ("gives_left", (), COUNT, "gives_left", OWN, "gives", "cards this seat still has to give back"),
    ("scores", ("P",), COUNT, "scores", SEATS, "points", "game totals of each relative seat's player"),
    ("manche", (), COUNT, "manche", TABLE, "manches",
     "index of the manche in the game (0-based; the decisive one last)"),
    ("decisive", (), FLAG, "decisive", TABLE, None, "this is a decisive manche"),
)
# fmt: on
SEGMENT_NAMES: tuple[str, ...] = tuple(row[0] for row in _SEGMENTS)
"""The segments' names, in order (the same for every ``Rules``; their sizes depend on the rules)."""


@dataclass(frozen=True)
class Segment:
    """One named piece of the observation vector: ``vector[offset : offset + size]``, ``shape`` flattened in C order.

    Its *view* (:meth:`ObservationSpec.view`) is the value it encodes: ``shape`` for counts (``int64``) and flags
    (``bool``); ``shape[:-1]`` for one-hots (``int64``: ``first`` + the index of the 1, ``first - 1`` where all are 0).
    """

    name: str
    offset: int
    shape: tuple[int, ...]
    dims: tuple[str, ...]  # the shape in symbols: P players, R ranks, C = 4 * decks, or a number
    encoding: str  # COUNT, FLAG or ONE_HOT
    source: str  # the GameState field it shows ("passed": the seats' pass flags; "scores": each seat's player's)
    whose: str  # OWN, SEATS or TABLE
    high: int  # entries lie in 0..high
    meaning: str
    first: int = 0  # one-hot: the value of the first entry
    seat: bool = False  # one-hot: the value is an absolute seat, encoded relative to the viewer
    size: int = field(init=False)
    slice: slice = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", math.prod(self.shape))
        object.__setattr__(self, "slice", slice(self.offset, self.offset + self.size))

    @property
    def view_shape(self) -> tuple[int, ...]:
        """Shape of the segment's view for one observation."""
        return self.shape[:-1] if self.encoding == ONE_HOT else self.shape


@dataclass(frozen=True)
class ObservationSpec:
    """The ordered segments of the observation vector for one ``Rules``; ``spec["hand"]`` is the segment's slice."""

    segments: tuple[Segment, ...]
    size: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {s.name: s for s in self.segments})

    @property
    def names(self) -> tuple[str, ...]:
        """The segments' names, in their order in the vector."""
        return tuple(s.name for s in self.segments)

    def segment(self, name: str) -> Segment:
        """The segment called ``name``; an unknown name is a ``KeyError`` listing the segments."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no observation segment {name!r}; segments: {', '.join(self.names)}") from None

    def __getitem__(self, name: str) -> slice:
        return self.segment(name).slice

    @property
    def high(self) -> int:
        """Bound of every entry (the low bound is 0)."""
        return max(s.high for s in self.segments)

    def view(self, observations: np.ndarray) -> dict[str, np.ndarray]:
        """The named views of observations ``(..., size)``: each of shape ``(...) + segment.view_shape``."""
        obs = np.asarray(observations)
        if obs.ndim < 1 or obs.shape[-1] != self.size:
            raise ValueError(f"observations must have shape (..., {self.size}) for these rules, got {obs.shape}")
        lead = obs.shape[:-1]
        views = {}
        for seg in self.segments:
            x = obs[..., seg.slice].reshape(lead + seg.shape)
            if seg.encoding == COUNT:
                views[seg.name] = np.rint(x).astype(np.int64)
            elif seg.encoding == FLAG:
                views[seg.name] = x > 0.5
            else:
                hot = x > 0.5
                views[seg.name] = np.where(hot.any(axis=-1), hot.argmax(axis=-1) + seg.first, seg.first - 1)
        return views

    def view_state(
        self, state: GameState, viewer: np.ndarray | None = None, slots: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """What ``view(observe(rules, state, viewer))`` gives, read straight from the state (batched, cheaper);
        with ``slots (n,) int``, of those slots only (``viewer``, when given, follows ``slots``)."""
        return dict(StateViews(self, state, viewer, slots))

    def table(self) -> str:
        """The index table as Markdown (the one of ``docs/environment.md`` for the standard rules)."""
        lines = ["| segment | indices | shape | values | meaning |", "|---|---|---|---|---|"]
        for s in self.segments:
            dims = "×".join(s.dims) or "1"
            shape = (
                dims if dims == "1" or all(d.isdigit() for d in s.dims) else f"{dims} = {'×'.join(map(str, s.shape))}"
            )
            if s.encoding == ONE_HOT:
                values = f"one-hot of {s.first}..{s.first + s.shape[-1] - 1}"
            else:
                values = f"0..{s.high}" if s.encoding == COUNT else "0/1"
            indices = f"{s.offset}" if s.size == 1 else f"{s.offset}..{s.offset + s.size - 1}"
            lines.append(f"| `{s.name}` | {indices} | {shape} | {values} | {s.meaning} |")
        return "\n".join(lines)


@lru_cache(maxsize=64)
def layout(rules: Rules) -> ObservationSpec:
    """The :class:`ObservationSpec` of ``rules``."""
    p, r, c = rules.n_players, rules.n_ranks, rules.max_count
    sizes = {"P": p, "R": r, "C": c}
    points = int(tables(rules).points.max())
    bounds = {
        "copies": max(rules.copies),
        "cards": rules.n_cards,
        "gives": max(rules.exchange, default=0),
        "points": rules.manches * max(points, 0),  # the decisive manche's points are not added
        "manches": rules.manches,  # the decisive manche is the one after the last regular one
    }
    segments, offset = [], 0
    for name, dims, encoding, source, whose, extra, meaning in _SEGMENTS:
        shape = tuple(sizes[d] if d in sizes else int(d) for d in dims)
        options = extra if encoding == ONE_HOT else {}
        high = bounds[extra] if encoding == COUNT else 1
        segment = Segment(name, offset, shape, dims, encoding, source, whose, high, meaning, **options)
        segments.append(segment)
        offset += segment.size
    return ObservationSpec(tuple(segments), offset)


def obs_dim(rules: Rules) -> int:
    return layout(rules).size


_DERIVED = frozenset(("passed", "scores"))


def _source(state: GameState, name: str) -> np.ndarray:
    """The state field a segment shows: ``(B,P,...)`` for per-seat fields, ``(B,)`` for the table's."""
    if name not in _DERIVED:
        return getattr(state, name)
    if name == "passed":
        return state.passed
    b, p = state.scores.shape  # scores: by player in the state, by seat in the observation
    return state.scores.ravel().take(np.arange(b)[:, None] * p + state.player_at_seat)


class StateViews(Mapping):
    """The named views of :meth:`ObservationSpec.view_state` as a mapping that reads each segment from the state
    when it is first looked up: a reader of a few segments (the heuristics) pays for those only.

    The state must not change while the mapping is in use.
    """

    def __init__(
        self, spec: ObservationSpec, state: GameState, viewer: np.ndarray | None = None, slots: np.ndarray | None = None
    ) -> None:
        if slots is not None:
            slots = np.asarray(slots, dtype=np.int64)
        seat = state.current if viewer is None else np.asarray(viewer, dtype=np.int64)
        if viewer is None and slots is not None:
            seat = seat.take(slots)
        self._spec, self._state, self._seat, self._slots = spec, state, seat, slots
        self._n = state.batch_size if slots is None else slots.size
        self._rows: tuple[np.ndarray, np.ndarray] | None = None
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        value = self._cache.get(name)
        if value is None:
            seg = self._spec.segment(name)
            values = _segment_values(seg, self._state, self._seat, self._slots, self._flat_rows())
            if seg.encoding == FLAG:
                values = values.astype(bool)
            elif seg.encoding == ONE_HOT:
                top = seg.first + seg.shape[-1]
                values = np.where((values >= seg.first) & (values < top), values, seg.first - 1)
            else:
                values = values.astype(np.int64)
            value = self._cache[name] = values.reshape((self._n,) + seg.view_shape)
        return value

    def __iter__(self):
        return iter(self._spec.names)

    def __len__(self) -> int:
        return len(self._spec.segments)

    def _flat_rows(self) -> tuple[np.ndarray, np.ndarray]:
        if self._rows is None:
            self._rows = _flat_rows(self._state, self._seat, self._slots)
        return self._rows


def _flat_rows(state: GameState, seat: np.ndarray, slots: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``(B*P, ...)`` views of seat-indexed fields: the viewer's ``(n,)`` and every seat's in relative
    order ``(n*P,)``, for the slots ``slots`` (default: all) seen from ``seat (n,)``."""
    b, p = state.hands.shape[:2]
    rows = np.arange(b) if slots is None else slots
    return rows * p + seat, (rows[:, None] * p + _relative_seats(p)[seat]).ravel()


def _segment_values(
    seg: Segment, state: GameState, seat: np.ndarray, slots: np.ndarray | None, flat_rows: tuple
) -> np.ndarray:
    """One segment's values ``(n, k)`` seen from ``seat (n,)``: in the state's dtype, or ``int64`` relative seats."""
    b, p = state.hands.shape[:2]
    own, flat_rel = flat_rows
    n = own.size
    values = _source(state, seg.source)
    if seg.whose == OWN:
        values = values.reshape(b * p, -1).take(own, axis=0)
    elif seg.whose == SEATS:
        values = values.reshape(b * p, -1).take(flat_rel, axis=0).reshape(n, -1)
    else:
        values = (values if slots is None else values.take(slots)).reshape(n, 1)
    if seg.encoding == ONE_HOT:
        values = values.astype(np.int64)
    if seg.seat:
        values = np.where(values >= 0, (values - seat[:, None]) % p, -1)
    return values


@lru_cache(maxsize=8)
def _relative_seats(p: int) -> np.ndarray:
    """``rel[seat]``: absolute seat of each relative seat."""
    seats = np.arange(p)
    return (seats[:, None] + seats) % p


def observe(
    rules: Rules,
    state: GameState,
    viewer: np.ndarray | None = None,
    out: np.ndarray | None = None,
    slots: np.ndarray | None = None,
) -> np.ndarray:
    """``(n, obs_dim) float32``: the observation of every slot (or of ``slots (n,) int``) from seat ``viewer (n,)``
    (default: the seat to act), written by a kernel (:func:`_observe_kernel`) into ``out`` when given (a caller's
    buffer: ``(n, obs_dim) float32``, rows C-contiguous, e.g. a rollout buffer's rows; nothing is copied) and
    returned."""
    index = index_range(state.batch_size) if slots is None else np.asarray(slots, dtype=np.int64)
    seat = state.current.take(index) if viewer is None else np.asarray(viewer, dtype=np.int64)
    n, size = index.size, layout(rules).size
    if out is None:
        out = np.empty((n, size), np.float32)
    elif (
        not isinstance(out, np.ndarray)
        or out.dtype != np.float32
        or out.shape != (n, size)
        or out.strides[1] != out.itemsize
        or not out.flags.writeable
    ):
        what = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"out must be a writeable float32 array of shape ({n}, {size}), rows contiguous; got {what}")
    if seat.shape != (n,):
        raise ValueError(f"viewer must hold one seat per observed slot, shape ({n},), got {seat.shape}")
    run(_observe_kernel(), n, _plan(rules), state, index, seat, out)
    return out


OBSERVE_STATE = (
    "hands", "played", "n_held", "passed_bits", "out_order", "penalized", "roles", "partner", "gives_left", "gave",
    "received", "scores", "player_at_seat", "current", "trick_rank", "trick_count", "trick_owner", "revolution",
    "constrained", "phase", "manche", "decisive",
)  # fmt: skip
"""The ``GameState`` fields the observation kernel reads (:func:`_observe_slots`)."""
ObserveFields = NamedTuple("ObserveFields", [(name, np.ndarray) for name in OBSERVE_STATE])
"""Those fields by name: what :class:`SlotObserver` hands the kernel (it reads fields by name, as in a
``GameState``), so a call converts fewer arrays."""


class SlotObserver:
    """:func:`observe` bound to slot ``slot`` of ``state`` (whose arrays must stay the same objects), for a caller
    that observes one game again and again (``SingleGame``): the kernel's arguments are gathered and typed once
    (:func:`~president_env.core.compiled.numba_entry`), with only the fields it reads (:data:`ObserveFields`), and
    it writes into a buffer of its own."""

    def __init__(self, rules: Rules, state: GameState, slot: int = 0) -> None:
        self._viewer = np.zeros(1, np.int64)
        self._out = np.zeros((1, layout(rules).size), np.float32)
        fields = ObserveFields(*(getattr(state, name) for name in OBSERVE_STATE))
        self._args = (_plan(rules), fields, np.array([slot], np.int64), self._viewer, self._out)
        self._call = numba_entry(_observe_kernel().serial, self._args)

    def observe(self, seat: int) -> np.ndarray:
        """``(obs_dim,) float32``: the slot's observation from ``seat``, a new array (the buffer is copied)."""
        self._viewer[0] = seat
        self._call(*self._args)
        return self._out[0].copy()


# --------------------------------------------------------------------------------------
# The plan: the observation as one gather from the state's fields laid side by side
# --------------------------------------------------------------------------------------
class _Columns(NamedTuple):
    """Where each field the spec shows starts in a slot's fields laid side by side (-1: not shown), and the width.
    A segment of a field not named here is refused by :func:`_plan` (the kernel would not lay it out)."""

    hands: int
    played: int
    n_held: int
    trick_rank: int
    trick_count: int
    trick_owner: int
    passed: int  # the seats' pass flags, from passed_bits
    out_order: int
    penalized: int
    roles: int
    revolution: int
    constrained: int
    current: int
    phase: int
    gave: int
    received: int
    partner: int
    gives_left: int
    scores: int  # each seat's player's total
    manche: int
    decisive: int
    width: int


class _Plan(NamedTuple):
    """The observation of a slot as writes from its fields laid side by side (``src``, at ``columns``), seen from the
    viewer's seat (the first axis): a plain entry ``obs[plain_dst[j]] = src[plain_src[seat, j]]``; a one-hot group
    of ``group_width[g]`` entries from ``group_dst[g]``, whose 1 is at ``src[group_src[seat, g]] - group_first[g]``
    (a seat shown relative to the viewer where ``group_seat[g]``), all 0 when out of range."""

    columns: _Columns
    plain_dst: np.ndarray  # (N,) int64
    plain_src: np.ndarray  # (P, N) int64
    group_dst: np.ndarray  # (G,) int64
    group_src: np.ndarray  # (P, G) int64
    group_first: np.ndarray  # (G,) int64
    group_width: np.ndarray  # (G,) int64
    group_seat: np.ndarray  # (G,) bool


@lru_cache(maxsize=64)
def _plan(rules: Rules) -> _Plan:
    spec = layout(rules)
    p = rules.n_players
    column, offset = {}, 0
    for seg in spec.segments:  # the source columns: P rows of the view's size, or the view itself
        if seg.source not in column:
            if seg.source not in _Columns._fields:
                raise ValueError(f"segment {seg.name!r} shows {seg.source!r}, which _observe_slots does not lay out")
            column[seg.source] = offset
            offset += math.prod(seg.view_shape) * (p if seg.whose == OWN else 1)
    columns = _Columns(**{name: column.get(name, -1) for name in _Columns._fields if name != "width"}, width=offset)
    plain_dst, plain_src, group_dst, group_src, group_first, group_width, group_seat = [], [], [], [], [], [], []
    for seg in spec.segments:
        n = math.prod(seg.view_shape)  # values of the view
        position = np.arange(n)
        by_seat = []
        for seat in range(p):
            if seg.whose == OWN:
                by_seat.append(column[seg.source] + seat * n + position)
            elif seg.whose == SEATS:
                per_seat = n // p  # relative seat k's values come from absolute seat (seat + k) % P
                rows = ((seat + position // per_seat) % p) * per_seat
                by_seat.append(column[seg.source] + rows + position % per_seat)
            else:
                by_seat.append(column[seg.source] + position)
        if seg.encoding != ONE_HOT:
            plain_dst.append(seg.offset + position)
            plain_src.append(np.stack(by_seat))
            continue
        width = seg.shape[-1]
        group_dst.append(seg.offset + position * width)
        group_src.append(np.stack(by_seat))
        group_first.append(np.full(n, seg.first))
        group_width.append(np.full(n, width))
        group_seat.append(np.full(n, seg.seat))
    plan = _Plan(
        columns,
        np.concatenate(plain_dst).astype(np.int64),
        np.concatenate(plain_src, axis=1).astype(np.int64),
        np.concatenate(group_dst).astype(np.int64),
        np.concatenate(group_src, axis=1).astype(np.int64),
        np.concatenate(group_first).astype(np.int64),
        np.concatenate(group_width).astype(np.int64),
        np.concatenate(group_seat).astype(bool),
    )
    for table in plan[1:]:
        table.flags.writeable = False
    return plan


@lru_cache(maxsize=1)
def _observe_kernel():
    """:func:`_observe_slots` compiled."""
    return jit(_observe_slots)


def _observe_slots(plan, state, slots, viewers, out):
    """``out[i]``: the observation of slot ``slots[i]`` from seat ``viewers[i]``: the slot's fields laid side by side
    at the columns ``plan.columns``, then the plain entries copied and one 1 set per one-hot group (:class:`_Plan`)."""
    c = plan.columns
    p, r = state.hands.shape[1], state.hands.shape[2]
    # Bound by name before the loop: Numba's threaded loop cannot take a named tuple's fields inside it (numba 0.68
    # drops writes through them and fails to compile some reads).
    plan_group_dst = plan.group_dst
    plan_group_first = plan.group_first
    plan_group_seat = plan.group_seat
    plan_group_src = plan.group_src
    plan_group_width = plan.group_width
    plan_plain_dst = plan.plain_dst
    plan_plain_src = plan.plain_src
    constrained = state.constrained
    current = state.current
    decisive = state.decisive
    gave = state.gave
    gives_left = state.gives_left
    hands = state.hands
    manche = state.manche
    n_held = state.n_held
    out_order = state.out_order
    partner = state.partner
    passed_bits = state.passed_bits
    penalized = state.penalized
    phase = state.phase
    played = state.played
    player_at_seat = state.player_at_seat
    received = state.received
    revolution = state.revolution
    roles = state.roles
    scores = state.scores
    trick_count = state.trick_count
    trick_owner = state.trick_owner
    trick_rank = state.trick_rank
    c_constrained = c.constrained
    c_current = c.current
    c_decisive = c.decisive
    c_gave = c.gave
    c_gives_left = c.gives_left
    c_hands = c.hands
    c_manche = c.manche
    c_n_held = c.n_held
    c_out_order = c.out_order
    c_partner = c.partner
    c_passed = c.passed
    c_penalized = c.penalized
    c_phase = c.phase
    c_played = c.played
    c_received = c.received
    c_revolution = c.revolution
    c_roles = c.roles
    c_scores = c.scores
    c_trick_count = c.trick_count
    c_trick_owner = c.trick_owner
    c_trick_rank = c.trick_rank
    c_width = c.width
    for i in numba.prange(slots.size):
        s, seat = slots[i], viewers[i]
        src = np.empty(c_width, np.int32)  # each slot its own: the slots may run on several threads
        for q in range(p):
            for k in range(r):
                if c_hands >= 0:
                    src[c_hands + q * r + k] = hands[s, q, k]
                if c_played >= 0:
                    src[c_played + q * r + k] = played[s, q, k]
                if c_gave >= 0:
                    src[c_gave + q * r + k] = gave[s, q, k]
                if c_received >= 0:
                    src[c_received + q * r + k] = received[s, q, k]
            if c_n_held >= 0:
                src[c_n_held + q] = n_held[s, q]
            if c_passed >= 0:
                src[c_passed + q] = (passed_bits[s] >> q) & 1
            if c_out_order >= 0:
                src[c_out_order + q] = out_order[s, q]
            if c_penalized >= 0:
                src[c_penalized + q] = penalized[s, q]
            if c_roles >= 0:
                src[c_roles + q] = roles[s, q]
            if c_partner >= 0:
                src[c_partner + q] = partner[s, q]
            if c_gives_left >= 0:
                src[c_gives_left + q] = gives_left[s, q]
            if c_scores >= 0:  # by player in the state, by seat in the observation
                src[c_scores + q] = scores[s, player_at_seat[s, q]]
        if c_trick_rank >= 0:
            src[c_trick_rank] = trick_rank[s]
        if c_trick_count >= 0:
            src[c_trick_count] = trick_count[s]
        if c_trick_owner >= 0:
            src[c_trick_owner] = trick_owner[s]
        if c_revolution >= 0:
            src[c_revolution] = revolution[s]
        if c_constrained >= 0:
            src[c_constrained] = constrained[s]
        if c_current >= 0:
            src[c_current] = current[s]
        if c_phase >= 0:
            src[c_phase] = phase[s]
        if c_manche >= 0:
            src[c_manche] = manche[s]
        if c_decisive >= 0:
            src[c_decisive] = decisive[s]
        row = out[i]
        row[:] = 0.0
        for j in range(plan_plain_dst.size):
            row[plan_plain_dst[j]] = src[plan_plain_src[seat, j]]
        for g in range(plan_group_dst.size):
            v = src[plan_group_src[seat, g]]
            if plan_group_seat[g]:  # an absolute seat, shown relative to the viewer
                v = (v - seat) % p if v >= 0 else -1
            k = v - plan_group_first[g]
            if 0 <= k < plan_group_width[g]:
                row[plan_group_dst[g] + k] = 1.0
