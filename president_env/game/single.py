"""``SingleGame``: the one holder of one game of Président. The AEC and Gymnasium single envs,
``president-play``, ``president-web`` and replays all hold it.

    game = SingleGame(rules, seed=0, players=["you", "heuristic-3", "mc-4", "random"], autoreset=False)
    mask = game.legal_mask()                  # (num_actions,) bool, read-only
    obs = game.observe(seat)                  # (obs_dim,) float32, bit-identical to observation.observe
    event = game.step(action)                 # an Event: who did what, with which cards; rewards where a manche ended
    print(event.text(), game.cards[0])        # "player_1 played 7C 7D", the hand with its suits
    Replay.of(game).save("game.json")         # president_env.game.replay: the record as JSON

The game is a ``VecGame(batch_size=1)`` this object owns: its masks and steps are the engine's kernels, bound
to its one slot (``trick.Slot``), so the random draws, and the games for a seed, are those of
``VecGame(rules, batch_size=1, seed=seed)``. No rule is written here. After every step the slot is copied
into this object's attributes (the fields of :class:`~president_env.core.engine.GameState`, same names and
meanings) as Python ints and lists, which the views read; the observation is the engine's kernel on the slot
(``observation.SlotObserver``).

Beside the engine's counts it keeps, once for every front end:

- ``cards``: each player's cards with their suits, followed from the deal: a play takes the lowest suits of
  its rank (or the ``cards`` named), wild 2s after the naturals; the exchange moves the very cards given;
- ``events``: one :class:`Event` per action, read from the engine's events (a manche ends where the engine
  says so) and state (who went out, who won a trick and leads next, the exchange over), with :meth:`Event.text`
  to show it; :meth:`SingleGame.last_trick`: the trick played now (or the
  last one of a manche just ended), from the play that led it;
- ``record``: a :class:`GameRecord` (the deals, actions, cards and notes; ``replay.Replay.of`` saves it).

With ``autoreset`` (the envs), like ``VecGame``, a finished game is dealt anew in the same call; the
finished game stays readable, before its last play (``ended``, the AEC env's final observation, with its
events and record complete) and after it (``final``, a one-slot ``GameState`` in phase over with the final
scores: the Gymnasium envs' terminal observation). Without it (front ends, replays) the game stays over
(``done``).

``tests/test_single_game.py`` plays this class and a ``VecGame(batch_size=1)`` in lockstep on random
rule sets (``tests/lockstep.py``) and demands the same masks, observations from every seat, rewards, ends and
whole states, and cards that agree with the counts.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from president_env.core import deals, engine, observation, trick
from president_env.core.actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_name, action_tables
from president_env.core.cards import TWO, card_name, card_rank, deck, parse_card, sort_cards, validate_deal
from president_env.core.engine import GameState
from president_env.core.observation import layout
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.rules import Rules
from president_env.core.state import FIELDS, PHASE_PLAY
from president_env.core.user_input import short_repr
from president_env.core.vec_game import VecGame

_SLOT = np.zeros(1, np.int64)  # the engine game's one slot
_FIELD_NAMES = frozenset(FIELDS)
MAX_SEED = 2**63 - 1
MAX_NAME = 100
"""Longest player name, source or note text a record may hold."""


def check_note(rules: Rules, note: Any) -> None:
    """``ValueError`` unless ``note`` is ``None`` or what an agent weighed, as the web app shows it.

    ``{"action": a, "measure": text or null, "moves": [{"action": a, "move": text, "value": number}, ...]}``.
    """
    if note is None:
        return
    if not isinstance(note, dict):
        raise ValueError(f'a note is null or an object {{"action", "measure", "moves"}}, got {type(note).__name__}')
    unknown = sorted(map(str, set(note) - {"action", "measure", "moves"}))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(short_repr, unknown))} (allowed: action, measure, moves)")
    top = rules.num_actions - 1
    if not _is_int(note.get("action")) or not 0 <= note["action"] <= top:
        raise ValueError(f"action must be an index 0..{top}, got {short_repr(note.get('action'))}")
    measure = note.get("measure")
    if measure is not None and (not isinstance(measure, str) or len(measure) > MAX_NAME):
        raise ValueError(f"measure must be null or a text of at most {MAX_NAME} characters, got {short_repr(measure)}")
    moves = note.get("moves", [])
    if not isinstance(moves, list) or len(moves) > rules.num_actions:
        raise ValueError(f"moves must be a list of at most {rules.num_actions} moves, got {short_repr(moves)}")
    for j, move in enumerate(moves):
        if not isinstance(move, dict) or set(move) != {"action", "move", "value"}:
            raise ValueError(
                f'moves[{j}]: expected {{"action": a, "move": text, "value": number}}, got {short_repr(move)}'
            )
        if not _is_int(move["action"]) or not 0 <= move["action"] <= top:
            raise ValueError(f"moves[{j}]: action must be an index 0..{top}, got {short_repr(move['action'])}")
        if not isinstance(move["move"], str) or len(move["move"]) > MAX_NAME:
            raise ValueError(f"moves[{j}]: move must be a text, got {short_repr(move['move'])}")
        value = move["value"]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"moves[{j}]: value must be a finite number, got {short_repr(value)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------------------
# What happened, and the record of a game
# --------------------------------------------------------------------------------------
class MoveError(ValueError):
    """A move :meth:`SingleGame.step` refused; nothing changed. The message names the player and the reason, as
    for any ``ValueError``; front ends read the fields instead of the text.

    Attributes:
        code: which check failed: ``"action"`` (not an integer), ``"over"`` (the game is over), ``"illegal"``
            (against the rules), ``"cards"`` (not card strings), ``"not_held"`` (cards the player does not
            hold), ``"not_taken"`` (held, but not the cards the action takes: its rank, wild 2s after the naturals).
        player: the player to act (``None`` where the check does not concern them).
        detail: the particulars: the engine's reason (``illegal``), the cards missing (``not_held``) or named
            (``not_taken``), the card parser's message (``cards``).
    """

    def __init__(self, code: str, message: str, player: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.code, self.player, self.detail = code, player, detail


@dataclass(slots=True)
class Event:
    """What one action did: every field is public once the action is made, except ``cards`` of a give (known to
    the giver and its ``receiver`` only: :meth:`text` hides it from the others).

    Besides the action, it says what the action did to the table, as the engine decided it in this step (read from
    the engine's state right after its kernel, before a manche's end deals the next one), so a front end tells
    "went out", "won the trick" and "exchange over" from the event, never by comparing states: ``went_out`` (with
    ``out_order``, ``penalized`` and ``finish_position``), ``trick_won_by`` (with ``next_leader``),
    ``exchange_over``, ``manche_over`` (with ``rewards`` and ``positions``) and ``game_over``."""

    index: int
    """0-based number of the action in the game."""
    player: int
    """The player (``player_i``) who acted."""
    action: int
    """The action's index (``actions.action_name`` names it)."""
    move: str
    """``"pass"``, ``"play 7 7"``, ``"give 3"`` (``actions.action_name``)."""
    kind: str
    """``"pass"``, ``"play"`` or ``"give"``."""
    leads: bool
    """A play that opened a trick (the table was empty): a trick runs from such a play to the next one
    (:meth:`SingleGame.last_trick`)."""
    cards: list[str]
    """The cards that left the hand, with suits."""
    receiver: int | None
    """A give: the player who received the card (the giver's exchange partner); else ``None``."""
    manche: int
    """0-based manche the action was made in."""
    decisive: bool
    """The manche is the decisive one (its points are not added)."""
    manche_over: bool
    """The manche ended with this action (a play left one player holding cards): ``rewards`` and ``positions``
    are set, and the next manche is dealt unless ``game_over``."""
    game_over: bool
    """The game ended with this action (its last manche ended)."""
    rewards: list[float] | None
    """The manche's rewards by player when it ended with this action, in the game's ``reward_mode`` (its points
    under ``"points"``)."""
    positions: list[int] | None
    """Finishing positions by player (0 = first) when the manche ended."""
    went_out: bool = False
    """A play that emptied the player's hand: the player is out of the manche (the play that ends a manche
    too)."""
    out_order: int | None = None
    """Where ``went_out``: the players out of the manche before this one (0 = the first out); else ``None``."""
    penalized: bool = False
    """Where ``went_out`` under ``finish_on_two: penalty``: the going-out play held a 2 or a joker, so the player
    is ranked last (below the player left holding cards, and below earlier offenders)."""
    finish_position: int | None = None
    """Where ``went_out``: the player's finishing position in the manche (0 = first), final from now on: the
    place among the players out normally. ``None`` for a ``penalized`` going out (its place is known when the
    manche ends: ``positions``), unless this play ended the manche, and for any other action."""
    trick_won_by: int | None = None
    """A play or pass that closed its trick, the manche going on: the player who won it, the last to have played
    in it (the trick's owner). ``None`` while the trick goes on, for a give, and where the manche ended."""
    exchange_over: bool = False
    """The last give of the manche's exchange: the play of its first trick starts."""
    next_leader: int | None = None
    """Where ``trick_won_by`` is set or ``exchange_over``: the player who leads the next trick (the next action
    is their lead): after a trick, its winner or, where the winner has gone out, the next player clockwise who
    still holds cards. ``None`` otherwise."""

    def text(
        self,
        names: Sequence[str] | None = None,
        show_cards: Callable[[Sequence[str]], str] = " ".join,
        viewer: int | None = None,
    ) -> str:
        """The action in words: ``player_1 played 7C 7D``, ``player_2 passed``, ``player_0 gave back a card``
        (``gave back 3H to player_3`` where ``viewer`` is the giver or the receiver). ``names``: by player
        (default ``player_i``); ``show_cards``: how cards are written (the terminal's suit symbols)."""
        return f"{_name(names, self.player)} {self.what(names, show_cards, viewer)}"

    def what(
        self,
        names: Sequence[str] | None = None,
        show_cards: Callable[[Sequence[str]], str] = " ".join,
        viewer: int | None = None,
    ) -> str:
        """:meth:`text` without the player's name: ``played 7C 7D``, ``passed``, ``gave back a card``."""
        if self.kind == "pass":
            return "passed"
        if self.kind == "play":
            return f"played {show_cards(self.cards)}"
        if viewer is not None and viewer in (self.player, self.receiver):
            return f"gave back {show_cards(self.cards)} to {_name(names, self.receiver)}"
        return "gave back a card"

    def to_dict(self) -> dict[str, Any]:
        """Every field by name (plain lists, ints and texts: JSON as it is)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


OUTCOME_FIELDS = (
    "went_out", "out_order", "penalized", "finish_position", "trick_won_by", "next_leader", "exchange_over",
)  # fmt: skip
"""The fields of an :class:`Event` that say what the action did to the table (besides ``manche_over`` and
``game_over``): public, whoever acted."""


def _name(names: Sequence[str] | None, player: int) -> str:
    return names[player] if names is not None else f"player_{player}"


@dataclass
class GameRecord:
    """Everything needed to play one game again (the fields of a :class:`~president_env.game.replay.Replay` but its
    rules): kept by :class:`SingleGame` as it is played, saved as JSON by ``replay.Replay``."""

    players: list[str]
    """Who played each player (``player_i``): an agent name, ``"human"``, or any label."""
    seed: int | None
    """The int seed that started the game's generator for this game, or ``None`` where none did (a reset without a
    seed or an autoreset goes on with the generator of the game before; a ``Generator`` was given). Playing back
    needs no seed: the deals, dealer and roles recorded fix every draw."""
    dealer: int
    """Seat of the first dealer."""
    deals: list[list[list[str]]]
    """The deal of every manche started, by player, before the exchange."""
    actions: list[int]
    movers: list[int]
    """The player who made each action."""
    cards: list[list[str] | None] | None = None
    """The cards (suits) each action played or gave, where known (``None``: the lowest suits of the rank)."""
    roles: list[str] | None = None
    """Roles by player the first manche starts from (``None``: no roles, as with ``initial_roles: none``)."""
    role_positions: list[int] | None = None
    """The finishing positions by player (0 = Président) those roles come from: unlike the names, they order the
    Neutres (who gives to whom in a 3-pair exchange, and the seats with ``reseat_by_role``)."""
    result: dict[str, Any] | None = None
    """``{"scores": [...], "winner": i, "manches": n}`` once the game is over, else ``None``."""
    source: str = ""
    notes: list[Any] | None = None
    """Optional, one per action: ``None`` or what the agent weighed (:func:`check_note`); not played back."""


def dealt_cards(rules: Rules, state: GameState, slot: int = 0) -> list[list[str]]:
    """The deal of the manche ``state`` holds in ``slot``, by player, before its exchange (sorted card strings)."""
    cards = deck(rules.decks, rules.jokers)
    hands: list[list[str]] = [[] for _ in range(rules.n_players)]
    player_at_seat = state.player_at_seat[slot]
    for card_id, seat in enumerate(state.dealt_to[slot]):
        hands[int(player_at_seat[seat])].append(cards[card_id])
    return [sort_cards(hand) for hand in hands]


def manche_start_cards(rules: Rules, state: GameState, slot: int = 0) -> list[list[str]]:
    """Cards with suits, by player, at the start of the manche ``state`` holds in ``slot``: the deal, then the
    automatic half of the exchange, each low player's best cards (the lowest suits of each rank) moved to its own
    partner: the very cards it gave, whoever else gives the same rank."""
    cards = dealt_cards(rules, state, slot)
    player_at_seat = state.player_at_seat[slot]
    for seat in np.flatnonzero(state.gave[slot].sum(axis=1) > 0):
        partner = state.partner[slot, seat]
        if state.prev_pos[slot, seat] < state.prev_pos[slot, partner]:
            continue  # a higher-ranked player's gives happen later, as decisions
        giver, receiver = int(player_at_seat[seat]), int(player_at_seat[partner])
        for rank in np.flatnonzero(state.gave[slot, seat]):
            for _ in range(int(state.gave[slot, seat, rank])):
                card = next(c for c in cards[giver] if card_rank(c) == rank)
                cards[giver] = _without(cards[giver], [card])
                cards[receiver] = sort_cards([*cards[receiver], card])
    return cards


def starting_roles(rules: Rules, state: GameState, slot: int = 0) -> list[str] | None:
    """Role names by player that the manche ``state`` holds in ``slot`` started from, or ``None`` without roles."""
    roles = state.roles[slot][state.seat_of_player[slot].astype(np.int64)]
    return None if roles[0] < 0 else [deals.ROLE_NAMES[int(code)] for code in roles]


def starting_positions(rules: Rules, state: GameState, slot: int = 0) -> list[int] | None:
    """The finishing positions by player that the roles of the manche ``state`` holds in ``slot`` come from (the
    previous manche's, or drawn), or ``None`` without roles."""
    positions = state.prev_pos[slot][state.seat_of_player[slot].astype(np.int64)]
    return None if positions[0] < 0 else [int(p) for p in positions]


def player_labels(players: Sequence[Any], n: int) -> list[str]:
    """``players`` as the labels a record keeps (the check of a replay's ``players`` on loading,
    :func:`check_label`, passes them): text without control characters (each becomes a space, runs of spaces and
    the ends trimmed), an empty label becomes ``player_i``, and one longer than :data:`MAX_NAME` characters keeps
    its end (a checkpoint path: its file name) after ``…``. ``ValueError`` unless there are ``n``."""
    if isinstance(players, (str, bytes)) or len(players) != n:
        count = "a text" if isinstance(players, (str, bytes)) else len(players)
        raise ValueError(f"players must name {n} players, got {count}")
    labels = []
    for i, name in enumerate(players):
        text = " ".join("".join(ch if ch.isprintable() else " " for ch in str(name)).split())
        text = text or f"player_{i}"
        labels.append(text if len(text) <= MAX_NAME else "…" + text[-(MAX_NAME - 1) :])
    return labels


def check_label(name: Any) -> str | None:
    """Why ``name`` is not a player label a record may hold (a printable text of 1 to :data:`MAX_NAME`
    characters), or ``None``."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or not name.isprintable():
        return f"must be a printable name of 1 to {MAX_NAME} characters, got {short_repr(name)}"
    return None


def _without(hand: list[str], cards: Sequence[str]) -> list[str]:
    """``hand`` without ``cards`` (a multiset: each card once), as a new list."""
    rest = list(hand)
    for card in cards:
        rest.remove(card)
    return rest


def _source_label(source: Any) -> str:
    """The program that plays, as a record keeps it: text of at most :data:`MAX_NAME` characters (its start)."""
    text = str(source)
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))


class SingleGame:
    """One game of ``rules``: the holder every one-game front end holds (the AEC and Gymnasium single envs,
    ``president-play``, ``president-web``, replays); see the module docstring. The attributes named after the
    ``GameState`` fields are those of the one slot.

    Args:
        rules: the rules (any spec ``presets.resolve_rules`` takes).
        seed: the game's generator (deals, dealers); default a fresh int seed. An int is kept in the record.
        reward_mode: of the manches' rewards (``VecGame``'s).
        autoreset: deal the next game in the step that ends one (the envs; the finished game stays readable as
            ``ended`` and ``final``); ``False`` (front ends, replays): the game stays over (``done``).
        players: a label for each player, kept in the record (default ``player_i``; made a label a replay loads
            with, :func:`player_labels`).
        source: the program that plays, kept in the record (at most 100 characters: a longer one is cut).
    """

    def __init__(
        self,
        rules: RulesSpec = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        reward_mode: str = "zero_sum",
        autoreset: bool = True,
        players: Sequence[str] | None = None,
        source: str = "",
    ) -> None:
        self.rules = resolve_rules(rules)
        if seed is None:
            seed = _fresh_seed()
        if _is_int(seed) and not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer from 0 to 2**63-1, got {seed!r}")
        n = self.rules.n_players
        players = [f"player_{i}" for i in range(n)] if players is None else player_labels(players, n)
        self.players, self.source, self.autoreset = players, _source_label(source), autoreset
        # The engine game is not autoreset: the finished game's table is kept (``final``) before the next game
        # is dealt here, with the same draws as VecGame's autoreset.
        self.engine_game = VecGame(self.rules, batch_size=1, seed=seed, reward_mode=reward_mode, autoreset=False)
        self.reward_mode = reward_mode
        self._own_table = False  # observe from this object's fields (``observe``), not from the engine game
        self._bind()
        self.obs_dim = layout(self.rules).size
        self._new_game(seed)

    @classmethod
    def table(
        cls, rules: RulesSpec, seed: int | None = None, players: Sequence[str] | None = None, source: str = ""
    ) -> SingleGame:
        """A game as the front ends and replays hold it: scored in points, and over at its end (no autoreset)."""
        return cls(rules, seed=seed, reward_mode="points", autoreset=False, players=players, source=source)

    def name_players(self, players: Sequence[str], source: str | None = None) -> None:
        """Label the players (an agent name, ``"human"``, a person's name) and, given, the program that plays,
        in this game's record and in those of the games to come."""
        self.players = player_labels(players, self.rules.n_players)
        self.record.players = list(self.players)
        if source is not None:
            self.source = self.record.source = _source_label(source)

    def _bind(self) -> None:
        """The action tables as lists, and the kernels bound to the engine game's slot (the observation's: to the
        table of its own where this is the ``ended`` game, on its first observation)."""
        rules = self.rules
        self._tables = tuple(t.tolist() for t in action_tables(rules))
        self._moves = [action_name(rules, a) for a in range(rules.num_actions)]
        state = self.engine_game.state
        self._slot = trick.Slot(rules, state)  # the kernels keep the arrays too
        self._observer = None if self._own_table else observation.SlotObserver(rules, state)
        self._play_arrays = tuple((name, getattr(state, name)) for name in trick.PLAY_CHANGES)

    def __getstate__(self) -> dict:
        """Pickled without the tables and the bound kernels; rebuilt on load."""
        state = self.__dict__.copy()
        del state["_slot"], state["_observer"], state["_tables"], state["_moves"], state["_play_arrays"]
        return state

    def __setattr__(self, name: str, value: Any) -> None:
        # A state field set from outside (a test setting up a position): observe reads the fields from then on.
        if name in _FIELD_NAMES:
            self.__dict__["_own_table"], self.__dict__["_observer"] = True, None
        object.__setattr__(self, name, value)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    # ---- state ------------------------------------------------------------------------------
    def _load(self, names: tuple[str, ...] = FIELDS) -> None:
        """Copy the engine game's slot into this object's fields (those named ``names``)."""
        state, fields = self.engine_game.state, self.__dict__
        for name in names:
            fields[name] = getattr(state, name).tolist()[0]
        fields["_mask"] = None  # into the dict, as the fields: past __setattr__ (kept for fields set from outside)

    def _load_play(self, seat: int) -> None:
        """After a play or pass of ``seat`` that ended no manche: copy only what it may change
        (``trick.PLAY_CHANGES``, the seat's rows of ``hands`` and ``played``, and ``trick.OUT_CHANGES``
        where the seat went out). The lists are changed in place: ``ended`` never shares them (a game's end
        loads every field anew)."""
        state, fields = self.engine_game.state, self.__dict__
        for name, array in self._play_arrays:
            fields[name] = array.tolist()[0]
        self.hands[seat] = state.hands[0, seat].tolist()
        self.played[seat] = state.played[0, seat].tolist()
        if not self.n_held[seat]:
            for name in trick.OUT_CHANGES:
                fields[name] = getattr(state, name).tolist()[0]
        fields["_mask"] = None

    def _fields(self) -> dict[str, list | int | bool]:
        """The ``GameState`` fields of this game as plain lists and scalars."""
        return {name: getattr(self, name) for name in FIELDS}

    def to_state(self) -> GameState:
        """A new one-slot :class:`GameState` holding this game (for the render and for checks)."""
        state = engine.allocate(self.rules, 1)
        for name, value in self._fields().items():
            getattr(state, name)[0] = value
        return state

    @property
    def state(self) -> GameState:
        """The game as a one-slot :class:`GameState`, like ``VecGame.state`` but a copy: writing to it changes
        nothing (:meth:`to_state`). Hidden information: for referees, spectators and the renderer."""
        return self.to_state()

    def reset(
        self,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        deals: Sequence | None = None,
        dealers: Sequence[int] | None = None,
        roles: Sequence | None = None,
    ) -> None:
        """A new game, as ``VecGame.reset`` of one slot (``deals``, ``dealers``, ``roles``: lists of one entry);
        its record starts afresh, with the int ``seed`` (``None`` without one: the generator goes on).

        Invalid input raises ``ValueError`` and leaves the game as it was.
        """
        if _is_int(seed) and not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer from 0 to 2**63-1, got {seed!r}")
        self.engine_game.reset(seed=seed, deals=deals, dealers=dealers, roles=roles)
        self._new_game(seed)

    def _new_game(self, seed: Any) -> None:
        """Start following the game the engine game holds now: fields, cards, events and record."""
        self.ended: SingleGame | None = None  # after a game ended: that game's table before its last play
        self.final: GameState | None = None  # after a game ended: that game's table after its last play
        self.done = False
        if self._own_table:  # a state field was set from outside: the new game's are the engine game's again
            self.__dict__["_own_table"] = False
            self._bind()
        self._load()
        # An int seed dealt this game; else (a reset without one, an autoreset: the generator of the game before
        # goes on; a Generator or SeedSequence given) no seed reproduces it, and the record says so. Its deals do.
        self.seed = int(seed) if _is_int(seed) else None
        state = self.engine_game.state
        self.record = GameRecord(
            players=list(self.players),
            seed=self.seed,
            dealer=self.dealer,
            deals=[dealt_cards(self.rules, state)],
            actions=[],
            movers=[],
            cards=[],
            roles=starting_roles(self.rules, state),
            role_positions=starting_positions(self.rules, state),
            source=self.source,
            notes=[],
        )
        self.events: list[Event] = []
        self._start_manche()

    def _start_manche(self) -> None:
        """Cards with suits at the start of a manche: the deal, then the automatic half of the exchange."""
        self.cards: list[list[str]] = manche_start_cards(self.rules, self.engine_game.state)
        self.trick_cards: list[str] = []
        self.trick_player: int | None = None

    def redeal(self, deal: Sequence[Sequence[str]]) -> None:
        """Deal ``deal`` (one card list per player) to the manche about to start (before its first decision:
        ``VecGame.redeal``); ``ValueError`` if it cannot. Replays fix every manche's deal this way."""
        wanted = [sort_cards(hand) for hand in deal]
        if wanted == self.record.deals[-1]:
            return
        self.engine_game.redeal([wanted])
        self._load()
        self.record.deals[-1] = dealt_cards(self.rules, self.engine_game.state)
        self._start_manche()

    @property
    def current_player(self) -> int | None:
        """The player (i of ``player_i``) to act; ``None`` once the game is over (``done``)."""
        return None if self.done else self.player_at_seat[self.current]

    @property
    def totals(self) -> list[int]:
        """Game totals by player (the decisive manche's points are not added); the final ones once ``done``."""
        return list(self.last_scores if self.done else self.scores)

    def last_trick(self) -> list[Event]:
        """The plays and passes of the trick played now, from the play that led it (:attr:`Event.leads`): right
        after the step that ended a manche, that manche's last trick. Empty before a manche's first play."""
        events = self.events
        for start in range(len(events) - 1, -1, -1):
            if events[start].kind == "give":
                break
            if events[start].leads:
                return events[start:]
        return []

    # ---- legal actions -------------------------------------------------------------------------
    def mask_bytes(self) -> bytes:
        """The legal mask as ``num_actions`` bytes 0/1 (the engine's, cached until the next step)."""
        mask = self._mask
        if mask is None:
            mask = self.__dict__["_mask"] = self._slot.mask_bytes()
        return mask

    def legal_mask(self) -> np.ndarray:
        """``(num_actions,) bool`` legal actions of the player to act (read-only; all false once ``done``)."""
        return np.frombuffer(self.mask_bytes(), dtype=bool)

    # ---- observation ---------------------------------------------------------------------------
    def observe(self, seat: int) -> np.ndarray:
        """``(obs_dim,) float32`` from ``seat``'s point of view: ``observation.observe`` for one slot (a new array).

        The engine's kernel on the engine game's slot; on a table of this object's fields (:meth:`to_state`) where
        they are not the engine game's: the ``ended`` game, or a state field set from outside."""
        observer = self._observer
        if observer is None:
            observer = observation.SlotObserver(self.rules, self.to_state())
            if self.done:  # the fields change no more (a field set again drops it)
                self._observer = observer
        return observer.observe(seat)

    def observe_player(self, player: int) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``player``, as the AEC env gives it (``int8`` mask, zero unless
        ``player`` is to act): what an agent's ``act`` takes."""
        observation_ = self.observe(self.seat_of_player[player])
        mask = np.zeros(self.rules.num_actions, np.int8)
        if player == self.current_player:
            mask[:] = self.legal_mask()
        return {"observation": observation_, "action_mask": mask}

    # ---- step ----------------------------------------------------------------------------------
    def step(self, action: int, note: Any = None, cards: Sequence[str] | None = None) -> Event:
        """Play ``action`` (an int) for the player to act, by the engine; returns what it did.

        ``note``: what the agent weighed, kept in the record (:func:`check_note`). ``cards``: which cards (suits)
        of the player's hand the action plays or gives; they must be what it takes (its rank, wild 2s after the
        naturals); default the lowest suits of the rank. An illegal action, or bad ``note`` or ``cards``, raises
        ``ValueError`` naming the player and the reason, and changes nothing. Where the game ends it is over
        (``done``), or with ``autoreset`` dealt anew, as ``VecGame`` does.
        """
        if type(action) is not int:
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                message = f"action must be an integer in 0..{self.rules.num_actions - 1}, got {action!r}"
                raise MoveError("action", message)
            action = int(action)
        if self.done:
            raise MoveError("over", "the game is over")
        mask = self.mask_bytes()
        game = self.engine_game
        seat = self.current
        player = self.player_at_seat[seat]
        if not 0 <= action < len(mask) or not mask[action]:
            reason = engine.describe_illegal(self.rules, game.state, 0, action)
            raise MoveError("illegal", f"illegal action {action} for player_{player}: {reason}", player, reason)
        kind, rank, count = self._tables[0][action], self._tables[1][action], self._tables[2][action]
        hand = self.cards[player]
        if cards is None:
            taken = self._taken(hand, kind, rank, count, seat)
        else:
            taken = self._chosen(hand, cards, kind, rank, count, seat)
        if note is not None:
            check_note(self.rules, note)
        manche, decisive = self.manche, self.decisive
        leads = kind == KIND_PLAY and self.trick_rank < 0
        owner = self.trick_owner  # the seat that played last in the trick before this action
        if self._slot.play(action):  # the manche ended: scored, and the next one dealt, by the engine
            state = game.state
            out = int(state.out_order[0, seat]), bool(state.penalized[0, seat])  # as the play left them
            events = engine.end_manches(self.rules, state, _SLOT, game.rng, self.reward_mode)
        else:
            events = None
        manche_over = events is not None and bool(events.manche_over[0])
        done = manche_over and bool(events.game_over[0])
        receiver = self.player_at_seat[self.partner[seat]] if kind == KIND_GIVE else None
        # The cards: the taken ones leave the hand (a give: to the partner). In place: ``ended`` never shares
        # the lists of a game still played (a game's end starts new ones).
        if taken:
            self.cards[player] = _without(hand, taken)
        if receiver is not None:
            self.cards[receiver] = sort_cards([*self.cards[receiver], *taken])
        if kind == KIND_PLAY:
            self.trick_cards, self.trick_player = taken, player
        record = self.record
        record.actions.append(action)
        record.movers.append(player)
        record.cards.append(taken)
        record.notes.append(note)
        event = Event(
            len(self.events), player, action, self._moves[action], _KINDS[kind], leads, taken, receiver, manche,
            decisive, manche_over, done, events.rewards[0].tolist() if manche_over else None, None,
        )  # fmt: skip
        self.events.append(event)
        if not manche_over:  # what the action did, from the fields as the engine's kernel left them
            if kind == KIND_GIVE:
                self._load(trick.PLAY_STATE)
                if self.phase == PHASE_PLAY:  # no give left: the engine turned to the play
                    event.exchange_over, event.next_leader = True, self.player_at_seat[self.current]
            else:
                self._load_play(seat)
                self._tell_play(event, seat, owner)
            if self.trick_rank < 0:
                self.trick_cards, self.trick_player = [], None
            return event
        state = game.state
        event.positions = state.last_positions[0].tolist()
        if out[0] >= 0:  # the play that ends a manche is a going out: its place is final
            event.went_out, (event.out_order, event.penalized) = True, out
            event.finish_position = event.positions[player]
        if done:
            record.result = {
                "scores": state.last_scores[0].tolist(),
                "winner": int(state.last_winner[0]),
                "manches": len(record.deals),
            }
            # The table as it stood before the game's last play (this object's fields, not yet reloaded), with
            # its events, cards and record complete; and the one after it (phase over, final scores).
            ended = object.__new__(SingleGame)
            ended.__dict__.update(self.__dict__, _own_table=True, _observer=None)  # observes its own table
            ended.ended = ended.final = None  # not a chain of every game played
            ended.done = True
            final = state.copy()
            if self.autoreset:  # what VecGame's autoreset does: the next game from the same generator
                game.reset(slots=np.zeros(1, np.int64))
                self._new_game(None)
            else:
                self._load()
                self.done = True
            self.ended, self.final = ended, final
            return event
        self._load()
        self.record.deals.append(dealt_cards(self.rules, state))
        self._start_manche()
        return event

    def _tell_play(self, event: Event, seat: int, owner: int) -> None:
        """Set what the play or pass ``event`` of ``seat`` did, read from this object's fields as the engine's kernel
        left them (a manche going on): a going out, the trick closed (``owner``: the trick's owner before it)."""
        if self.out_order[seat] >= 0:  # -1 while the seat holds cards: the engine placed it in this step
            event.went_out, event.out_order, event.penalized = True, self.out_order[seat], self.penalized[seat]
            event.finish_position = None if event.penalized else self.out_rank[seat]
        if self.trick_rank < 0:  # the engine closed the trick: the last to have played in it, its owner, won it
            event.trick_won_by = event.player if event.kind == "play" else self.player_at_seat[owner]
            event.next_leader = self.player_at_seat[self.current]

    def _taken(self, hand: list[str], kind: int, rank: int, count: int, seat: int) -> list[str]:
        """The cards (lowest suits) that ``kind`` of ``rank`` and ``count`` takes from ``hand`` (``seat``'s)."""
        if kind == KIND_PASS:
            return []
        naturals = min(self.hands[seat][rank], count)
        taken = [c for c in hand if _RANK_OF[c] == rank][:naturals]
        if naturals < count:  # wild 2s complete a play
            taken += [c for c in hand if _RANK_OF[c] == TWO][: count - naturals]
        return taken

    def _chosen(self, hand: list[str], cards: Sequence[str], kind: int, rank: int, count: int, seat: int) -> list[str]:
        """``cards`` (card strings the player named), checked: held, and what the action takes."""
        player = self.player_at_seat[seat]
        if isinstance(cards, (str, bytes)) or not all(isinstance(c, str) for c in cards):
            raise MoveError("cards", f"cards must be a list of card strings, got {short_repr(cards)}", player)
        try:
            wanted = [card_name(*parse_card(c)) for c in cards]
        except ValueError as err:
            raise MoveError("cards", f"cards: {err}", player, str(err)) from None
        missing = " ".join(sorted((Counter(wanted) - Counter(hand)).elements()))
        if missing:
            raise MoveError("not_held", f"player_{player} does not hold {missing}", player, missing)
        expected = Counter(_RANK_OF[c] for c in self._taken(hand, kind, rank, count, seat))
        if Counter(_RANK_OF[c] for c in wanted) != expected:
            named = " ".join(wanted)
            raise MoveError("not_taken", f"cards {named} are not the cards this action takes", player, named)
        return sort_cards(wanted)


_KINDS = ("pass", "play", "give")
_RANK_OF = {card: card_rank(card) for card in deck(1, 2)}
"""The rank of every card string (a second deck repeats the same strings)."""


# --------------------------------------------------------------------------------------
# What the one-game views (the AEC env, the Gymnasium single env) share about a game
# --------------------------------------------------------------------------------------
OPTION_KEYS = ("deal", "roles", "dealer")
"""The reset options of one game."""
INFO_SCHEMAS = ("rich", "numeric")


def check_reset_options(rules: Rules, options: Mapping | None, unknown_keys: str = "raise") -> dict[str, list]:
    """Reset ``options`` of one game, validated: the keyword arguments of :meth:`SingleGame.reset`.

    ``options`` may hold ``"deal"`` (one list of card strings per player), ``"roles"`` (a role per player, or the
    finishing positions they come from) and ``"dealer"`` (a seat). ``ValueError`` naming the bad option; nothing
    changes anywhere. An unknown key (a misspelt ``"deals"`` would deal at random unnoticed) raises too, as in the
    vector env; ``unknown_keys="warn"`` only warns: the AEC env's, since PettingZoo's ``api_test`` resets with
    ``options={"options": 1}``.
    """
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict with keys among {', '.join(OPTION_KEYS)}, got {short_repr(options)}")
    options = dict(options or {})
    unknown = sorted(short_repr(k, 40) for k in options if k not in OPTION_KEYS)
    if unknown:
        message = f"reset: unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}"
        if unknown_keys != "warn":
            raise ValueError(message)
        warnings.warn(f"president_v0.{message} (ignored)", stacklevel=3)
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


def match_positions(scores: Sequence[int], winner: int) -> list[int]:
    """Each player's place in a finished game (0 = the winner): the winner first, then by final total, highest
    first; players with equal totals share a place (the one behind them skips as many). A player tied with the
    winner for the highest total, who lost the decisive manche, is second."""
    return [
        0
        if player == winner
        else 1 + sum(scores[other] > scores[player] for other in range(len(scores)) if other != winner)
        for player in range(len(scores))
    ]


class Standing:
    """Where each player of one game stands, beyond the observation: its place in a manche once final, the game's
    result (totals, winner, each player's place in the game: :func:`match_positions`) once over, and the infos the
    one-game views report from them (``docs/environment.md``, Infos).

    A place appears as soon as it is final and is never revised: on going out (not on a 2 or a joker under
    ``finish_on_two: penalty``), else when the manche ends; until then it is the player's place in the previous
    manche. Call :meth:`reset` with a new game and :meth:`record` with the :class:`Event` of every step, which
    says what it did.
    """

    def __init__(self, n_players: int) -> None:
        self.n_players = n_players
        self.reset()

    def reset(self) -> None:
        self.finish: list[tuple[int, int] | None] = [None] * self.n_players  # (position, manche) once known
        self.positions: list[int] | None = None  # the last finished manche's, by player
        self.result: dict | None = None  # scores, winner, manches, places once the game is over

    def record(self, game: SingleGame, event: Event) -> bool:
        """Note what ``event``, the step just made on ``game``, did; whether the infos changed."""
        if event.manche_over:
            self.positions = list(event.positions)
            self.finish = [(position, event.manche) for position in self.positions]
            if event.game_over:
                scores, winner = list(game.last_scores), game.last_winner
                places = match_positions(scores, winner)
                self.result = {"scores": scores, "winner": winner, "manches": event.manche + 1, "places": places}
            return True
        if event.went_out and event.finish_position is not None:  # out, and not on a 2 under "penalty": final now
            self.finish[event.player] = (event.finish_position, event.manche)
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
                "match_position": -1 if self.result is None else self.result["places"][player],
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
            info["match_position"] = self.result["places"][player]
        return info


__all__ = [
    "INFO_SCHEMAS",
    "OPTION_KEYS",
    "Event",
    "GameRecord",
    "MoveError",
    "OUTCOME_FIELDS",
    "SingleGame",
    "Standing",
    "check_note",
    "check_label",
    "check_reset_options",
    "dealt_cards",
    "manche_start_cards",
    "match_positions",
    "player_labels",
    "starting_positions",
    "starting_roles",
]
