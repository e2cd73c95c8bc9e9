"""``SingleGame``: one game of Président in plain Python ints and lists, the fast path of the AEC and Gym envs.

    game = SingleGame(rules, seed=0)
    mask = game.legal_mask()                  # (num_actions,) bool, read-only
    obs = game.observe(seat)                  # (obs_dim,) float32, bit-identical to observation.observe
    rewards, done = game.step(action)         # rewards: list by player where a manche ended, else None

The batched engine pays NumPy's per-call overhead on every operation, which at
one slot costs more than the work itself. This class keeps the state of one slot
(the fields of :class:`~president_env.engine.GameState`, same names and meanings)
as Python ints and lists and plays the decisions inside a manche (gives, passes,
plays, a player going out) in plain Python, transcribing ``engine.step`` for one
slot. Everything rare and random stays with the engine: dealing (``reset``) and
the step that ends a manche (scoring, roles, the next deal or a new game) are
played by a ``VecGame(batch_size=1)`` this object owns, and its state is copied
back. So the random draws, and therefore the games for a given seed, are those
of ``VecGame(rules, batch_size=1, seed=seed)``; like it, a finished game is dealt
anew in the same call (autoreset); the finished game's table stays readable, before its last play
(``ended``, the AEC env's final observation) and after it (``final``, a one-slot ``GameState`` in phase
over with the final scores: the Gymnasium envs' terminal observation).

One tested truth: ``tests/test_single_game.py`` plays this class and a
``VecGame(batch_size=1)`` in lockstep on random rule sets and demands the same
masks, observations from every seat, rewards, ends and whole states at every step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter

import numpy as np

from . import engine, observation
from .actions import KIND_GIVE, KIND_PASS, KIND_PLAY
from .cards import JOKER, TWO
from .engine import PHASE_PLAY, GameState
from .observation import ONE_HOT, OWN, SEATS, layout
from .presets import RulesSpec, resolve_rules
from .rules import Rules
from .vec_game import VecGame

FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(GameState))
BYTE_ROWS = ("hands", "played", "gave", "received")  # (P, R) counts kept as one bytearray per seat


@dataclasses.dataclass(frozen=True)
class _Tables:
    """The engine's per-rules tables as Python lists and bytes, for scalar use."""

    kind: list[int]
    rank: list[int]
    count: list[int]
    next_seat: list[int]  # [start * 256 + seat bits] -> first seat clockwise after start with its bit set, or -1
    rank_ok: list[list[bool]]  # [context] -> may each rank be played
    play_bytes: list[bytes]  # [usable * (C+1) + trick count] -> C mask bytes "play k cards" (k = 1..C)
    wild: list[bool]
    write_observation: Callable[[SingleGame, int], bytes]  # see _observation_writer


@lru_cache(maxsize=64)
def _tables(rules: Rules) -> _Tables:
    tab = engine.tables(rules)
    p, c = rules.n_players, rules.max_count
    starts = np.repeat(np.arange(p), 256)
    bits = np.tile(np.arange(256), p)
    playable = tab.play_words.view(bool).reshape(-1, c)
    return _Tables(
        kind=tab.kind.tolist(),
        rank=tab.rank.tolist(),
        count=tab.count.tolist(),
        next_seat=engine.next_seat_bits(bits.astype(np.uint8), starts, p).tolist(),
        rank_ok=tab.rank_ok.tolist(),
        play_bytes=[row.astype(np.uint8).tobytes() for row in playable],
        wild=tab.wild_ranks.tolist(),
        write_observation=_observation_writer(rules),
    )


def _observation_writer(rules: Rules) -> Callable[[SingleGame, int], bytes]:
    """``write(game, seat)``: the bytes of ``game.observe(seat)``, compiled from the observation spec.

    Each segment becomes one expression over the game's fields (the ``GameState`` names the spec gives), and
    the function joins them in the spec's order, so the scalar path follows the spec with no call per segment.
    ``ValueError`` where a count is above 255.
    """
    p = rules.n_players
    relative = [[(seat + j) % p for j in range(p)] for seat in range(p)]
    names = {
        "relative": relative,
        "in_order": [itemgetter(*seats) for seats in relative],  # per-seat list -> values in relative seat order
        "passed_rows": [[bytes((bits >> s) & 1 for s in seats) for bits in range(256)] for seats in relative],
    }
    parts = []
    for i, seg in enumerate(layout(rules).segments):
        field = f"g.{seg.source}"
        if seg.source == "passed":  # seat bits in the state
            parts.append("passed_rows[seat][g.passed_bits]")
        elif seg.source == "scores":  # by player in the state, by seat in the observation
            parts.append("bytes([g.scores[g.player_at_seat[s]] for s in rel])")
        elif seg.encoding != ONE_HOT and seg.whose == OWN:
            parts.append(f"{field}[seat]" if seg.shape else f"bytes(({field}[seat],))")  # rows are bytearrays
        elif seg.encoding != ONE_HOT and seg.whose == SEATS:
            parts.append(f'b"".join([{field}[s] for s in rel])' if len(seg.shape) > 1 else f"bytes(ordered({field}))")
        elif seg.encoding != ONE_HOT:
            parts.append(f"bytes(({field},))")
        else:
            width = seg.shape[-1]
            names[f"one_hot_{i}"] = [row.tobytes() for row in np.eye(width, dtype=np.uint8)] + [bytes(width)]
            table = f"one_hot_{i}"  # rows by value - first; row `width` (also index -1) is all zeros: none
            if seg.seat:  # an absolute seat (-1: none), shown relative to the viewer
                value = f"{field}[seat]" if seg.whose == OWN else field
                parts.append(f"{table}[(v - seat) % {p} if (v := {value}) >= 0 else -1]")
            else:
                shift = f" - {seg.first}" if seg.first else ""
                if seg.whose == SEATS:
                    parts.append(f'b"".join([{table}[v{shift}] for v in ordered({field})])')
                else:
                    parts.append(f"{table}[{field}{shift}]")
    source = "def write(g, seat):\n    rel, ordered = relative[seat], in_order[seat]\n    return b''.join([\n"
    source += "".join(f"        {part},\n" for part in parts) + "    ])\n"
    exec(compile(source, f"<observation writer for {p} players>", "exec"), names)
    return names["write"]


class SingleGame:
    """One game of ``rules``; see the module docstring. Attributes are the ``GameState`` fields of the one slot."""

    def __init__(
        self,
        rules: RulesSpec = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        reward_mode: str = "zero_sum",
    ) -> None:
        self.rules = resolve_rules(rules)
        self.engine_game = VecGame(self.rules, batch_size=1, seed=seed, reward_mode=reward_mode)
        self.reward_mode = reward_mode
        self._tab = _tables(self.rules)
        self.obs_dim = layout(self.rules).size
        self.ended: SingleGame | None = None  # after a game ended: that game's table before its last play
        self.final: GameState | None = None  # after a game ended: that game's table after its last play
        self._load()

    def __getstate__(self) -> dict:
        """Pickled without the per-rules tables (their observation writer is compiled code); rebuilt on load."""
        state = self.__dict__.copy()
        del state["_tab"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("final", None)
        self._tab = _tables(self.rules)

    # ---- state ------------------------------------------------------------------------------
    def _load(self) -> None:
        """Copy the engine game's slot into this object's fields."""
        state = self.engine_game.state
        for name in FIELDS:
            setattr(self, name, getattr(state, name)[0].tolist())
        for name in BYTE_ROWS:
            setattr(self, name, [bytearray(row) for row in getattr(self, name)])
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
        """The legal mask as ``num_actions`` bytes 0/1 (cached until the next step)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask

    def legal_mask(self) -> np.ndarray:
        """``(num_actions,) bool`` legal actions of the player to act (read-only)."""
        return np.frombuffer(self.mask_bytes(), dtype=bool)

    def _compute_mask(self) -> bytes:
        rules, tab = self.rules, self._tab
        r, c = rules.n_ranks, rules.max_count
        hand = self.hands[self.current]
        if self.phase != PHASE_PLAY:
            return bytes(1 + r * c) + bytes([1 if h > 0 else 0 for h in hand])
        ok = tab.rank_ok[((self.revolution * 2 + self.constrained) * (r + 1)) + self.trick_rank + 1]
        width, tc, play_bytes = c + 1, self.trick_count, tab.play_bytes
        if rules.twos_wild:
            twos = hand[TWO]
            usable = [min(h + twos, c) if w and h > 0 else h for h, w in zip(hand, tab.wild)]
        else:
            usable = hand
        plays = b"".join([play_bytes[(u if o else 0) * width + tc] for u, o in zip(usable, ok)])
        return (b"\x01" if self.trick_rank >= 0 else b"\x00") + plays + bytes(r)

    # ---- observation ---------------------------------------------------------------------------
    def observe(self, seat: int) -> np.ndarray:
        """``(obs_dim,) float32`` from ``seat``'s point of view: ``observation.observe`` for one slot.

        Built as bytes (every entry but the scores and the manche index is a count or flag below 256) by a
        function compiled from the observation spec (``_observation_writer``).
        """
        try:
            data = self._tab.write_observation(self, seat)
        except ValueError:  # a score or manche index above 255: the engine's encoder
            return observation.observe(self.rules, self.to_state(), np.array([seat]))[0]
        return np.frombuffer(data, np.uint8).astype(np.float32)

    # ---- step ----------------------------------------------------------------------------------
    def step(self, action: int) -> tuple[list[float] | None, bool]:
        """Play ``action`` (an int) for the player to act.

        Returns ``(rewards, done)``: ``rewards`` by player where a manche ended (else ``None``), ``done`` where
        the game ended (the game is then dealt anew, as ``VecGame`` does). An illegal action raises
        ``ValueError`` naming the player and the reason, and changes nothing.
        """
        tab = self._tab
        mask = self.mask_bytes()
        if not 0 <= action < len(mask) or not mask[action]:
            reason = engine.describe_illegal(self.rules, self.to_state(), 0, action)
            raise ValueError(f"illegal action {action} for player_{self.current_player}: {reason}")
        kind = tab.kind[action]
        cur = self.current
        if kind == KIND_GIVE:
            self._give(cur, tab.rank[action])
            return None, False
        if kind == KIND_PLAY and self.n_held[cur] == tab.count[action] and _popcount(self.holding_bits) <= 2:
            return self._step_by_engine(action)  # the manche ends: scoring and the next deal are the engine's
        self._mask = None
        self.manche_steps += 1
        rules = self.rules
        is_play = kind == KIND_PLAY
        is_pass = kind == KIND_PASS
        rank = tab.rank[action]
        count = tab.count[action] if is_play else 0
        bit = 1 << cur
        next_seat = tab.next_seat

        used_twos = 0
        if is_play:  # cards leave the hand: naturals first, wild 2s complete
            hand, played = self.hands[cur], self.played[cur]
            naturals = min(hand[rank], count)
            hand[rank] -= naturals
            played[rank] += naturals
            if rules.twos_wild:
                used_twos = count - naturals
                hand[TWO] -= used_twos
                played[TWO] += used_twos
            self.n_held[cur] -= count

        # What the play means, judged by the order in force before it.
        is_match = is_play and self.trick_rank == rank
        ends_by_top = False
        if rules.top_rank_ends_trick and is_play:
            ends_by_top = rank == (JOKER if rules.jokers else (0 if self.revolution else TWO))
        if rules.revolution and is_play and count >= 4:
            self.revolution = not self.revolution

        if is_play and self.n_held[cur] == 0:
            self._go_out(cur, rank, used_twos)
            self.holding_bits &= ~bit

        # Turn order: the next eligible seat clockwise; the trick ends when the turn would reach the last
        # player to have played, or nobody else can act.
        passed = self.passed_bits | (bit if is_pass else 0)
        if is_play and rules.pass_rule == "can_return":
            passed = 0
        owner = cur if is_play else self.trick_owner
        holding = self.holding_bits
        eligible = holding & ~passed & ~bit
        nxt = next_seat[cur * 256 + eligible]
        if is_match and nxt >= 0 and rules.equal_rank == "skip":
            nxt = next_seat[nxt * 256 + (eligible & ~(1 << nxt))]
        trick_ends = nxt < 0 or nxt == owner or ends_by_top
        if trick_ends:
            self.current = owner if holding >> owner & 1 else next_seat[owner * 256 + holding]
            self.trick_rank, self.trick_count, self.trick_owner = -1, 0, -1
            self.passed_bits = 0
        else:
            self.current = nxt
            if is_play:
                self.trick_rank, self.trick_count = rank, count
            self.trick_owner = owner
            self.passed_bits = passed
        if rules.equal_rank == "or_nothing":
            self.constrained = not trick_ends and is_match
        return None, False

    def _give(self, giver: int, rank: int) -> None:
        """Exchange phase: ``giver`` gives one card of ``rank`` back to his partner."""
        self._mask = None
        self.manche_steps += 1
        partner = self.partner[giver]
        self.hands[giver][rank] -= 1
        self.hands[partner][rank] += 1
        self.n_held[giver] -= 1
        self.n_held[partner] += 1
        self.gave[giver][rank] += 1
        self.received[partner][rank] += 1
        self.gives_left[giver] -= 1
        pending = [seat for seat, left in enumerate(self.gives_left) if left > 0]
        if pending:
            self.current = min(pending, key=self.prev_pos.__getitem__)  # the best-placed giver first
        else:
            self.current = self.leader
            self.phase = PHASE_PLAY

    def _go_out(self, seat: int, rank: int, used_twos: int) -> None:
        """``seat`` played its last card and leaves the manche (placed last under ``finish_on_two: penalty``)."""
        self.out_order[seat] = self.n_out
        self.n_out += 1
        bad = self.rules.finish_on_two == "penalty" and (rank == TWO or rank == JOKER or used_twos > 0)
        self.penalized[seat] = bad
        if bad:
            self.out_rank[seat] = self.n_penalized
            self.n_penalized += 1
        else:
            self.out_rank[seat] = self.n_normal_out
            self.n_normal_out += 1

    def _step_by_engine(self, action: int) -> tuple[list[float] | None, bool]:
        """The step that ends a manche, played by the engine game on this game's state; its result copied back."""
        game = self.engine_game
        arrays = {name: np.asarray([value]) for name, value in self._fields().items()}
        game.load_state_dict({"state": arrays, "rng": game.rng.bit_generator.state})
        game.autoreset = False  # the new game is dealt below, with the same draws, once the final table is kept
        try:
            rewards, done = game.step(np.array([action]))
        finally:
            game.autoreset = True
        if done[0]:
            # The table as it stood before the game's last play, and the one after it (phase over, final scores).
            ended = object.__new__(SingleGame)
            ended.__dict__.update(self.__dict__)
            ended.ended = ended.final = None  # not a chain of every game played
            self.ended = ended
            self.final = game.state.copy()
            game.reset(slots=np.zeros(1, np.int64))  # what autoreset does: the next game from the same generator
        self._load()
        return rewards[0].tolist(), bool(done[0])


def _popcount(bits: int) -> int:
    return bin(bits).count("1")


__all__ = ["SingleGame"]
