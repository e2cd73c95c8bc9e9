"""``SingleGame``: one game of Président, the core of the AEC and Gym envs.

    game = SingleGame(rules, seed=0)
    mask = game.legal_mask()                  # (num_actions,) bool, read-only
    obs = game.observe(seat)                  # (obs_dim,) float32, bit-identical to observation.observe
    rewards, done = game.step(action)         # rewards: list by player where a manche ended, else None

The game is a ``VecGame(batch_size=1)`` this object owns: its masks and steps are the engine's, played by
the compiled per-slot kernels where Numba is available and by the NumPy engine otherwise
(:mod:`president_env.compiled`), so the random draws, and the games for a seed, are those of
``VecGame(rules, batch_size=1, seed=seed)``. No rule is written here. After every step the slot is copied
into this object's attributes (the fields of :class:`~president_env.engine.GameState`, same names and
meanings) as Python ints, lists and per-seat ``bytearray`` rows, which the views read and from which the
observation is joined as bytes. Like ``VecGame``, a finished game is dealt anew in the same call
(autoreset); the finished game's table stays readable, before its last play (``ended``, the AEC env's final
observation) and after it (``final``, a one-slot ``GameState`` in phase over with the final scores: the
Gymnasium envs' terminal observation).

``tests/test_single_game.py`` plays this class and a NumPy ``VecGame(batch_size=1)`` in lockstep on random
rule sets and demands the same masks, observations from every seat, rewards, ends and whole states.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter

import numpy as np

from . import compiled as _compiled
from . import deals, engine, observation
from .cards import validate_deal
from .engine import GameState
from .observation import ONE_HOT, OWN, SEATS, TABLE, Segment, layout
from .presets import RulesSpec, resolve_rules
from .rules import Rules
from .user_input import short_repr
from .vec_game import VecGame

FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(GameState))
BYTE_ROWS = ("hands", "played", "gave", "received")  # (P, R) counts kept as one bytearray per seat
_SLOT = np.zeros(1, np.int64)  # the engine game's one slot


@lru_cache(maxsize=4)
def _split(names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` as (fields copied as Python values, fields copied as per-seat bytearrays)."""
    return tuple(n for n in names if n not in BYTE_ROWS), tuple(n for n in names if n in BYTE_ROWS)


@lru_cache(maxsize=64)
def _writer(rules: Rules) -> Callable[[SingleGame, int], bytes]:
    """The observation writer of ``rules``, built once per rules."""
    return _observation_writer(rules)


def _observation_writer(rules: Rules) -> Callable[[SingleGame, int], bytes]:
    """``write(game, seat)``: the bytes of ``game.observe(seat)``, read from the observation spec.

    Each segment of :func:`~president_env.observation.layout` falls in one of a few kinds (its encoding, whose value
    it shows, its shape); ``write`` fills every segment of a kind in one loop over the game's fields (the
    ``GameState`` names the spec gives) and joins the parts in the spec's order. A loop per kind, not a function
    per segment, keeps the cost near that of one expression per segment. ``ValueError`` where a count is above 255.
    """
    p = rules.n_players
    relative = [tuple((seat + j) % p for j in range(p)) for seat in range(p)]
    in_order = [itemgetter(*seats) for seats in relative]  # per-seat list -> values in relative seat order
    segments = layout(rules).segments
    kinds: dict[str, list[tuple]] = {kind: [] for kind in _WRITER_KINDS}
    for i, seg in enumerate(segments):
        kind = _writer_kind(seg)
        if seg.encoding != ONE_HOT:
            kinds[kind].append((i, seg.source))
        else:  # rows by value - first; row `width` (also index -1) is all zeros: the one-hot marks no value
            table = [row.tobytes() for row in np.eye(seg.shape[-1], dtype=np.uint8)] + [bytes(seg.shape[-1])]
            kinds[kind].append((i, seg.source, table, seg.first))
    own_rows, own_values, seat_rows, seat_values, table_values = (
        tuple(kinds[k]) for k in ("own_rows", "own_values", "seat_rows", "seat_values", "table_values")
    )
    own_seats, table_seats, seat_hots, table_hots = (
        tuple(kinds[k]) for k in ("own_seat_hots", "table_seat_hots", "seat_hots", "table_hots")
    )
    passed_at = [i for i, name in kinds["passed"]]
    scores_at = [i for i, name in kinds["scores"]]
    passed_rows = [[bytes((bits >> s) & 1 for s in seats) for bits in range(256)] for seats in relative]
    size = len(segments)

    def write(game: SingleGame, seat: int) -> bytes:
        fields = game.__dict__
        rel, ordered = relative[seat], in_order[seat]
        out = [b""] * size
        for i, name in own_rows:  # (P, R) counts kept as one bytearray per seat
            out[i] = fields[name][seat]
        for i, name in own_values:
            out[i] = bytes((fields[name][seat],))
        for i, name in seat_rows:
            rows = fields[name]
            out[i] = b"".join([rows[s] for s in rel])
        for i, name in seat_values:
            out[i] = bytes(ordered(fields[name]))
        for i, name in table_values:
            out[i] = bytes((fields[name],))
        for i, name, table, _ in own_seats:  # an absolute seat (-1: none), shown relative to the viewer
            v = fields[name][seat]
            out[i] = table[(v - seat) % p if v >= 0 else -1]
        for i, name, table, _ in table_seats:
            v = fields[name]
            out[i] = table[(v - seat) % p if v >= 0 else -1]
        for i, name, table, first in seat_hots:
            out[i] = b"".join([table[v - first] for v in ordered(fields[name])])
        for i, name, table, first in table_hots:
            out[i] = table[fields[name] - first]
        for i in passed_at:  # seat bits in the state
            out[i] = passed_rows[seat][fields["passed_bits"]]
        for i in scores_at:  # by player in the state, by seat in the observation
            scores, player_at_seat = fields["scores"], fields["player_at_seat"]
            out[i] = bytes([scores[player_at_seat[s]] for s in rel])
        return b"".join(out)

    return write


_WRITER_KINDS = (
    "own_rows", "own_values", "seat_rows", "seat_values", "table_values",
    "own_seat_hots", "table_seat_hots", "seat_hots", "table_hots", "passed", "scores",
)  # fmt: skip


def _writer_kind(seg: Segment) -> str:
    """Which loop of ``_observation_writer`` writes ``seg``."""
    if seg.source in ("passed", "scores"):  # derived: seat bits; by player in the state
        return seg.source
    if seg.encoding == ONE_HOT:
        kind = {(OWN, True): "own_seat_hots", (TABLE, True): "table_seat_hots"}.get((seg.whose, seg.seat))
        kind = kind or {(SEATS, False): "seat_hots", (TABLE, False): "table_hots"}.get((seg.whose, seg.seat))
        if kind is None:
            raise NotImplementedError(
                f"segment {seg.name}: no scalar writer for a one-hot of {seg.whose} (seat {seg.seat})"
            )
        return kind
    if seg.whose == OWN:
        return "own_rows" if seg.shape else "own_values"
    if seg.whose == SEATS:
        return "seat_rows" if len(seg.shape) > 1 else "seat_values"
    return "table_values"


class SingleGame:
    """One game of ``rules``; see the module docstring. Attributes are the ``GameState`` fields of the one slot.
    ``compiled=False`` keeps the NumPy engine where Numba is available too (as ``VecGame``'s ``compiled``)."""

    def __init__(
        self,
        rules: RulesSpec = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        reward_mode: str = "zero_sum",
        compiled: bool = True,
    ) -> None:
        self.rules = resolve_rules(rules)
        # Not autoreset: the finished game's table is kept (``final``) before the next game is dealt, with the
        # same draws as VecGame's autoreset.
        self.engine_game = VecGame(
            self.rules, batch_size=1, seed=seed, reward_mode=reward_mode, autoreset=False, compiled=compiled
        )
        self.reward_mode = reward_mode
        self._bind()
        self.obs_dim = layout(self.rules).size
        self.ended: SingleGame | None = None  # after a game ended: that game's table before its last play
        self.final: GameState | None = None  # after a game ended: that game's table after its last play
        self._load()

    def _bind(self) -> None:
        """The observation writer, and the compiled kernels bound to the engine game's slot where it plays
        through them (else ``None``: the engine game's NumPy step)."""
        self._write = _writer(self.rules)
        game = self.engine_game
        self._slot = None
        if game.compiled and _compiled.available():
            self._slot = _compiled.Slot(self.rules, engine.tables(self.rules), game.state)

    def __getstate__(self) -> dict:
        """Pickled without the observation writer (it holds closures) and the bound kernels; rebuilt on load."""
        state = self.__dict__.copy()
        del state["_write"], state["_slot"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    # ---- state ------------------------------------------------------------------------------
    def _load(self, names: tuple[str, ...] = FIELDS) -> None:
        """Copy the engine game's slot into this object's fields (those named ``names``)."""
        state, fields, width = self.engine_game.state, self.__dict__, self.rules.n_ranks
        values, rows = _split(names)
        for name in values:
            fields[name] = getattr(state, name).tolist()[0]
        for name in rows:  # int8 counts, one bytearray per seat
            data = getattr(state, name)[0].tobytes()
            fields[name] = [bytearray(data[i : i + width]) for i in range(0, len(data), width)]
        self._mask: bytes | None = None

    def _fields(self) -> dict[str, list | int | bool]:
        """The ``GameState`` fields of this game as plain lists and scalars."""
        fields = {name: getattr(self, name) for name in FIELDS}
        for name in BYTE_ROWS:
            fields[name] = [list(row) for row in fields[name]]
        return fields

    def to_state(self) -> GameState:
        """A new one-slot :class:`GameState` holding this game (for the render and for checks)."""
        state = engine.allocate(self.rules, 1)
        for name, value in self._fields().items():
            getattr(state, name)[0] = value
        return state

    @property
    def state(self) -> GameState:
        """The game as a one-slot :class:`GameState`, like ``VecGame.state`` but a copy: writing to it changes
        nothing (:meth:`to_state`)."""
        return self.to_state()

    def reset(
        self,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        deals: Sequence | None = None,
        dealers: Sequence[int] | None = None,
        roles: Sequence | None = None,
    ) -> None:
        """A new game, as ``VecGame.reset`` of one slot (``deals``, ``dealers``, ``roles``: lists of one entry).

        Invalid input raises ``ValueError`` and leaves the game as it was.
        """
        self.engine_game.reset(seed=seed, deals=deals, dealers=dealers, roles=roles)
        self.ended = self.final = None
        self._load()

    @property
    def current_player(self) -> int:
        """The player (i of ``player_i``) to act."""
        return self.player_at_seat[self.current]

    # ---- legal actions -------------------------------------------------------------------------
    def mask_bytes(self) -> bytes:
        """The legal mask as ``num_actions`` bytes 0/1 (the engine's, cached until the next step)."""
        if self._mask is None:
            slot = self._slot
            self._mask = self.engine_game.legal_mask().tobytes() if slot is None else slot.mask_bytes()
        return self._mask

    def legal_mask(self) -> np.ndarray:
        """``(num_actions,) bool`` legal actions of the player to act (read-only)."""
        return np.frombuffer(self.mask_bytes(), dtype=bool)

    # ---- observation ---------------------------------------------------------------------------
    def observe(self, seat: int) -> np.ndarray:
        """``(obs_dim,) float32`` from ``seat``'s point of view: ``observation.observe`` for one slot.

        Built as bytes (every entry but the scores and the manche index is a count or flag below 256), one part per
        segment of the observation spec (``_observation_writer``).
        """
        try:
            data = self._write(self, seat)
        except ValueError:  # a score or manche index above 255: the engine's encoder
            return observation.observe(self.rules, self.to_state(), np.array([seat]))[0]
        return np.frombuffer(data, np.uint8).astype(np.float32)

    # ---- step ----------------------------------------------------------------------------------
    def step(self, action: int) -> tuple[list[float] | None, bool]:
        """Play ``action`` (an int) for the player to act, by the engine.

        Returns ``(rewards, done)``: ``rewards`` by player where a manche ended (else ``None``), ``done`` where
        the game ended (the game is then dealt anew, as ``VecGame`` does). An illegal action raises
        ``ValueError`` naming the player and the reason, and changes nothing.
        """
        mask = self.mask_bytes()
        game = self.engine_game
        if not 0 <= action < len(mask) or not mask[action]:
            reason = engine.describe_illegal(self.rules, game.state, 0, action)
            raise ValueError(f"illegal action {action} for player_{self.current_player}: {reason}")
        if self._slot is None:
            events = game.step_events(np.array([action]))
        elif self._slot.play(action):  # the manche ended: scored, and the next one dealt, by the engine
            events = engine.end_manches(self.rules, game.state, _SLOT, game.rng, self.reward_mode)
        else:
            self._load(_compiled.PLAY_STATE)
            return None, False
        done = bool(events.game_over[0])
        if done:
            # The table as it stood before the game's last play (this object's fields, not yet reloaded), and
            # the one after it (phase over, final scores).
            ended = object.__new__(SingleGame)
            ended.__dict__.update(self.__dict__)
            ended.ended = ended.final = None  # not a chain of every game played
            self.ended = ended
            self.final = game.state.copy()
            game.reset(slots=np.zeros(1, np.int64))  # what autoreset does: the next game from the same generator
        self._load()
        return (events.rewards[0].tolist() if events.manche_over[0] else None), done


# --------------------------------------------------------------------------------------
# What the one-game views (the AEC env, the Gymnasium single env) share about a game
# --------------------------------------------------------------------------------------
OPTION_KEYS = ("deal", "roles", "dealer")
"""The reset options of one game."""
INFO_SCHEMAS = ("rich", "numeric")


def check_reset_options(rules: Rules, options: Mapping | None, warn: bool = True) -> dict[str, list]:
    """Reset ``options`` of one game, validated: the keyword arguments of :meth:`SingleGame.reset`.

    ``options`` may hold ``"deal"`` (one list of card strings per player), ``"roles"`` (a role per player) and
    ``"dealer"`` (a seat). ``ValueError`` naming the bad option (nothing changes anywhere); unknown keys only warn
    (when ``warn``).
    """
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict with keys among {', '.join(OPTION_KEYS)}, got {short_repr(options)}")
    options = dict(options or {})
    unknown = sorted(str(k) for k in options if k not in OPTION_KEYS)
    if unknown and warn:
        warnings.warn(
            f"president_v0.reset: ignoring unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}",
            stacklevel=3,
        )
    deal, roles, dealer = options.get("deal"), options.get("roles"), options.get("dealer")
    chosen: dict[str, list] = {}
    if deal is not None:
        chosen["deals"] = [validate_deal(deal, rules.n_players, rules.decks, rules.jokers)]
    if roles is not None:
        deals.parse_roles(rules, roles)
        chosen["roles"] = [roles]
    if dealer is not None:
        is_int = isinstance(dealer, (int, np.integer)) and not isinstance(dealer, bool)
        if not is_int or not 0 <= dealer < rules.n_players:
            raise ValueError(f"dealer must be a seat number in 0..{rules.n_players - 1}, got {short_repr(dealer)}")
        chosen["dealers"] = [int(dealer)]
    return chosen


class Standing:
    """Where each player of one game stands, beyond the observation: its place in a manche once final, the game's
    result once over, and the infos the one-game views report from them (``docs/environment.md``, Infos).

    A place appears as soon as it is final and is never revised: on going out (not on a 2 or a joker under
    ``finish_on_two: penalty``), else when the manche ends; until then it is the player's place in the previous
    manche. Call :meth:`reset` with a new game and :meth:`record` after every step.
    """

    def __init__(self, n_players: int) -> None:
        self.n_players = n_players
        self.reset()

    def reset(self) -> None:
        self.finish: list[tuple[int, int] | None] = [None] * self.n_players  # (position, manche) once known
        self.positions: list[int] | None = None  # the last finished manche's, by player
        self.result: dict | None = None  # scores, winner, manches once the game is over

    def record(self, game: SingleGame, player: int, seat: int, manche: int, manche_over: bool, done: bool) -> bool:
        """Note what the step of ``player`` (at ``seat``, in manche ``manche``) just did to ``game``; whether the
        infos changed."""
        if manche_over:
            self.positions = list(game.last_positions)
            self.finish = [(position, manche) for position in self.positions]
        if done:
            self.result = {"scores": list(game.last_scores), "winner": game.last_winner, "manches": manche + 1}
            return True
        if manche_over:
            return True
        if game.n_held[seat] == 0 and not game.penalized[seat]:  # out, and not on a 2 under "penalty": final now
            self.finish[player] = (game.out_rank[seat], manche)
            return True
        return False

    def info(self, game: SingleGame, player: int, agents: Sequence[str], schema: str = "rich") -> dict:
        """The info of ``player`` (``agents``: the players' names) about ``game`` (the ended game once over)."""
        seat = game.seat_of_player[player]
        role = game.roles[seat]
        scores = self.result["scores"] if self.result else list(game.scores)
        finish = self.finish[player]
        if schema == "numeric":
            return {
                "role": role,
                "seat": seat,
                "manche": game.manche,
                "decisive": int(game.decisive),
                "scores": np.array(scores, np.int64),
                "finish_position": -1 if finish is None else finish[0],
                "finish_manche": -1 if finish is None else finish[1],
                "winner": -1 if self.result is None else self.result["winner"],
            }
        info = {
            "role": deals.ROLE_NAMES[role] if role >= 0 else None,
            "seat": seat,
            "manche": game.manche,
            "decisive": game.decisive,
            "scores": dict(zip(agents, scores)),
        }
        if finish is not None:
            info["finish_position"], info["finish_manche"] = finish
        if self.result is not None:
            info["winner"] = agents[self.result["winner"]]
        return info


__all__ = ["INFO_SCHEMAS", "OPTION_KEYS", "SingleGame", "Standing", "check_reset_options"]
