"""Replays: one game as a versioned JSON document, recorded while it is played and played back on the engine.

    from president_env.replay import RecordedGame, Replay, load_replay, replay_steps
    game = RecordedGame(rules, seed=7, players=["you", "heuristic-3", "mc-4", "random"], source="my-script")
    while not game.done:
        game.step(choose(game.observe(game.current_player)))   # illegal: ValueError, nothing changes
    game.replay().save("game.json")
    for game, event in replay_steps(load_replay("game.json")):   # every action re-checked by the engine
        print(event.move, game.cards)

A replay holds the rules (every field), the seed, the first dealer, the roles the first manche
starts from (``initial_roles: draw``), the name of the agent of every player, the deal of every
manche (before its exchange, by player, card strings with suits) and the actions in order. Playing
it back deals exactly the recorded cards at every manche (``VecGame.redeal``), so it does not depend
on how the engine draws its random numbers, and checks every action against the legal moves of the
moment. The format is documented in ``docs/replay.md``.

:class:`RecordedGame` is one game on the engine (``VecGame`` with one slot) that follows the cards
with their suits (a play takes the lowest suits of the rank, as the AEC env's renderer does) and
records itself; :class:`ReplayRecorder` records a game that someone else steps (the AEC env of
``president-play``).
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .actions import KIND_PASS, KIND_PLAY, action_name, action_tables
from .cards import TWO, card_name, deck, hand_counts, move_cards, parse_card, sort_cards
from .engine import ROLE_NAMES
from .rules import Rules
from .user_input import short_repr
from .vec_game import VecGame

FORMAT = "president-replay"
VERSION = 1
MAX_BYTES = 4_000_000
"""Largest replay file accepted by :func:`load_replay` / :func:`loads` (a long game is about 100 kB)."""
MAX_ACTIONS = 50_000
MAX_SEED = 2**63 - 1
MAX_NAME = 100
"""Longest player name, source or note text a replay may hold."""


@dataclass
class Replay:
    """One game: everything needed to play it again, move by move (see ``docs/replay.md``)."""

    rules: Rules
    players: list[str]
    """Who played each player (``player_i``): an agent name, ``"human"``, or any label."""
    seed: int
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
    result: dict[str, Any] | None = None
    """``{"scores": [...], "winner": i, "manches": n}`` once the game is over, else ``None``."""
    source: str = ""
    notes: list[Any] | None = None
    """Optional, one per action: ``None`` or what the agent weighed (:func:`check_note`); not played back."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Other top-level keys, kept as they are."""

    # ---- JSON -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "source": self.source,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "dealer": self.dealer,
            "players": list(self.players),
            "roles": None if self.roles is None else list(self.roles),
            "deals": self.deals,
            "actions": [self._action_entry(i) for i in range(len(self.actions))],
            "result": self.result,
        }
        if self.notes is not None:
            data["notes"] = self.notes
        return {**self.extra, **data}

    def _action_entry(self, index: int) -> dict[str, Any]:
        action = self.actions[index]
        entry = {"player": self.movers[index], "action": int(action), "move": action_name(self.rules, action)}
        cards = None if self.cards is None else self.cards[index]
        if cards:
            entry["cards"] = list(cards)
        return entry

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str | os.PathLike) -> Path:
        """Write the replay as JSON to ``path`` (folders created); returns the path.

        Atomic: the text goes to a temporary file in the same folder, flushed to disk, which then replaces
        ``path``, so a failure part-way leaves what was there. ``ValueError`` for text UTF-8 cannot hold.
        """
        path = Path(path)
        data = self.to_dict()
        where = _unencodable(data)
        if where is not None:
            raise ValueError(f"replay {where} holds text that UTF-8 cannot encode (a lone surrogate)")
        encoded = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(encoded)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def from_dict(cls, data: Any) -> Replay:
        """A replay from its JSON object: ``ValueError`` naming the first problem (format, fields, deals, moves)."""
        if not isinstance(data, dict):
            raise ValueError(f"a replay is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ValueError(f'not a replay: "format" must be "{FORMAT}", got {data.get("format")!r}')
        version = data.get("version")
        if not (_is_int(version) and version == VERSION):
            raise ValueError(f"replay version {version!r} is not supported (this reader reads {VERSION})")
        for key in ("rules", "seed", "dealer", "players", "deals", "actions"):
            if key not in data:
                raise ValueError(f"replay lacks the field {key!r}")
        where = _unencodable(data)
        if where is not None:
            raise ValueError(f"replay {where} holds text that UTF-8 cannot encode (a lone surrogate)")
        try:
            rules = Rules.from_dict(data["rules"])
        except (TypeError, ValueError) as err:
            raise ValueError(f"replay rules: {err}") from None
        n = rules.n_players
        seed = data["seed"]
        if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"replay seed must be an integer from 0 to 2**63-1, got {seed!r}")
        dealer = data["dealer"]
        if not _is_int(dealer) or not 0 <= dealer < n:
            raise ValueError(f"replay dealer must be a seat from 0 to {n - 1}, got {dealer!r}")
        players = data["players"]
        if not isinstance(players, list) or len(players) != n:
            raise ValueError(f"replay players must be a list of {n} names (one per player)")
        for i, name in enumerate(players):
            if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or not name.isprintable():
                raise ValueError(
                    f"replay players[{i}] must be a printable name of 1 to {MAX_NAME} characters, "
                    f"got {short_repr(name)}"
                )
        source = data.get("source", "")
        if not isinstance(source, str) or len(source) > MAX_NAME:
            raise ValueError(f"replay source must be a text of at most {MAX_NAME} characters, got {short_repr(source)}")
        roles = data.get("roles")
        if roles is not None and (
            not isinstance(roles, list) or len(roles) != n or not all(r in ROLE_NAMES for r in roles)
        ):
            raise ValueError(f"replay roles must be null or {n} role names ({', '.join(ROLE_NAMES)})")
        deals = data["deals"]
        if not isinstance(deals, list) or not deals:
            raise ValueError("replay deals must be a non-empty list (one deal per manche)")
        actions_data = data["actions"]
        if not isinstance(actions_data, list) or len(actions_data) > MAX_ACTIONS:
            raise ValueError(f"replay actions must be a list of at most {MAX_ACTIONS} moves")
        actions, movers, cards = [], [], []
        for i, entry in enumerate(actions_data):
            if not isinstance(entry, dict):
                raise ValueError(f'replay action {i}: expected an object {{"player": i, "action": a}}, got {entry!r}')
            action, player = entry.get("action"), entry.get("player")
            if not _is_int(action) or not 0 <= action < rules.num_actions:
                raise ValueError(
                    f"replay action {i}: action must be an index 0..{rules.num_actions - 1}, got {action!r}"
                )
            if not _is_int(player) or not 0 <= player < n:
                raise ValueError(f"replay action {i}: player must be 0..{n - 1}, got {player!r}")
            played = entry.get("cards")
            if played is not None and (
                not isinstance(played, list) or len(played) > 16 or not all(isinstance(c, str) for c in played)
            ):
                raise ValueError(f"replay action {i}: cards must be a list of card strings, got {played!r}")
            actions.append(int(action))
            movers.append(int(player))
            cards.append(played)
        notes = data.get("notes")
        if notes is not None:
            if not isinstance(notes, list):
                raise ValueError(f"replay notes must be null or a list, got {type(notes).__name__}")
            if len(notes) != len(actions):
                raise ValueError(f"replay notes must be one entry per action ({len(actions)}), got {len(notes)}")
            for i, note in enumerate(notes):
                try:
                    check_note(rules, note)
                except ValueError as err:
                    raise ValueError(f"replay notes[{i}]: {err}") from None
        result = data.get("result")
        if result is not None:
            _check_result(result, n)
        known = {"format", "version", "source", "rules", "seed", "dealer", "players", "roles", "deals"}
        known |= {"actions", "result", "notes"}
        return cls(
            rules=rules,
            players=list(players),
            seed=int(seed),
            dealer=int(dealer),
            deals=deals,
            actions=actions,
            movers=movers,
            cards=cards,
            roles=None if roles is None else list(roles),
            result=result,
            source=source,
            notes=notes,
            extra={k: v for k, v in data.items() if k not in known},
        )

    def check(self) -> None:
        """Play the replay back to its end: ``ValueError`` naming the first deal or move that does not fit."""
        for _ in replay_steps(self):
            pass


def loads(text: str | bytes) -> Replay:
    """Parse and check a replay from JSON text: bounded size, valid JSON, valid fields, every move legal."""
    if len(text) > MAX_BYTES:
        raise ValueError(f"replay is {len(text)} bytes; at most {MAX_BYTES} are accepted")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"replay is not valid JSON: {err}") from None
    replay = Replay.from_dict(data)
    replay.check()
    return replay


def load_replay(path: str | os.PathLike) -> Replay:
    """Read and check a replay file (see :func:`loads`); ``ValueError`` for a missing, large or bad file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"replay file {str(path)!r} does not exist or is not a file")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"replay file {str(path)!r} is {size} bytes; at most {MAX_BYTES} are accepted")
    return loads(path.read_bytes())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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


def _check_result(result: Any, n: int) -> None:
    """``ValueError`` unless ``result`` is ``{"scores": [n integers], "winner": seat, "manches": count}``."""
    if not isinstance(result, dict):
        raise ValueError(f"replay result must be null or an object, got {type(result).__name__}")
    scores, winner, manches = result.get("scores"), result.get("winner"), result.get("manches")
    if not isinstance(scores, list) or len(scores) != n or not all(_is_int(x) for x in scores):
        raise ValueError(f"replay result: scores must be a list of {n} integers, got {short_repr(scores)}")
    if not _is_int(winner) or not 0 <= winner < n:
        raise ValueError(f"replay result: winner must be a player 0..{n - 1}, got {short_repr(winner)}")
    if not _is_int(manches) or manches < 1:
        raise ValueError(f"replay result: manches must be a positive integer, got {short_repr(manches)}")


def _unencodable(data: Any) -> str | None:
    """Where in ``data`` (JSON values) a text UTF-8 cannot encode lies (``players[0]``), or ``None``."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where or "text"
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):
                    stack.append((where, key))
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


# --------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------
def dealt_cards(game: VecGame, slot: int = 0) -> list[list[str]]:
    """The deal of the manche ``slot`` is playing, by player, before its exchange (sorted card strings)."""
    state = game.state
    cards = deck(game.rules.decks, game.rules.jokers)
    hands: list[list[str]] = [[] for _ in range(game.rules.n_players)]
    player_at_seat = state.player_at_seat[slot]
    for card_id, seat in enumerate(state.dealt_to[slot]):
        hands[int(player_at_seat[seat])].append(cards[card_id])
    return [sort_cards(hand) for hand in hands]


def starting_roles(game: VecGame, slot: int = 0) -> list[str] | None:
    """Role names by player that the manche being played started from, or ``None`` without roles."""
    state = game.state
    roles = state.roles[slot][state.seat_of_player[slot].astype(np.int64)]
    return None if roles[0] < 0 else [ROLE_NAMES[int(code)] for code in roles]


class ReplayRecorder:
    """Records a game played on ``game`` (a ``VecGame``, slot 0) by someone else.

    Create it right after the game's reset, call :meth:`record` after every successful step, and
    :meth:`replay` for the replay so far.
    """

    def __init__(self, game: VecGame, seed: int, players: Sequence[str], source: str = "") -> None:
        if len(players) != game.rules.n_players:
            raise ValueError(f"players must name {game.rules.n_players} players, got {len(players)}")
        self.game = game
        self.seed = int(seed)
        self.players = [str(p) for p in players]
        self.source = source
        self.dealer = int(game.state.dealer[0])
        self.roles = starting_roles(game)
        self.deals = [dealt_cards(game)]
        self.actions: list[int] = []
        self.movers: list[int] = []
        self.cards: list[list[str] | None] = []
        self.notes: list[Any] = []
        self.result: dict[str, Any] | None = None

    def record(
        self, player: int, action: int, done: bool = False, note: Any = None, cards: Sequence[str] | None = None
    ) -> None:
        """Add ``action`` (just played by ``player``; ``cards``: the cards it moved, when known).

        ``done``: the game ended with it (the engine has dealt a new one).
        """
        self.actions.append(int(action))
        self.movers.append(int(player))
        self.cards.append(None if cards is None else list(cards))
        self.notes.append(note)
        if done:
            state = self.game.state
            self.result = {
                "scores": [int(x) for x in state.last_scores[0]],
                "winner": int(state.last_winner[0]),
                "manches": len(self.deals),
            }
        elif int(self.game.state.manche_steps[0]) == 0:
            self.deals.append(dealt_cards(self.game))

    def replay(self) -> Replay:
        return Replay(
            rules=self.game.rules,
            players=list(self.players),
            seed=self.seed,
            dealer=self.dealer,
            deals=[[list(h) for h in deal] for deal in self.deals],
            actions=list(self.actions),
            movers=list(self.movers),
            cards=list(self.cards),
            roles=self.roles,
            result=None if self.result is None else dict(self.result),
            source=self.source,
            notes=list(self.notes) if any(n is not None for n in self.notes) else None,
        )


@dataclass(frozen=True)
class Event:
    """What one action did (every field is public once the action is made, except ``cards`` of a give)."""

    index: int
    """0-based number of the action in the game."""
    player: int
    action: int
    move: str
    """``"pass"``, ``"play 7 7"``, ``"give 3"``."""
    kind: str
    """``"pass"``, ``"play"`` or ``"give"``."""
    cards: list[str]
    """The cards that left the hand, with suits (a give: the card given back, known to the two partners)."""
    manche: int
    """0-based manche the action was made in."""
    decisive: bool
    """The manche is the decisive one (its points are not added)."""
    manche_over: bool
    game_over: bool
    points: list[float] | None
    """Points of the manche by player when it ended with this action."""
    positions: list[int] | None
    """Finishing positions by player (0 = first) when the manche ended."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class RecordedGame:
    """One game on the engine, cards followed with their suits, recorded as it is played.

    Args:
        rules: the rules.
        seed: seed of the game's generator (deals, first dealer); default a fresh one (kept in the replay).
        players: a label for each player (agent names); default ``player_i``.
        deal, dealer, roles: optional first deal (one card list per player), first dealer seat,
            starting roles (role names by player).
        source: the program that records (kept in the replay).
    """

    def __init__(
        self,
        rules: Rules,
        seed: int | None = None,
        players: Sequence[str] | None = None,
        deal: Sequence[Sequence[str]] | None = None,
        dealer: int | None = None,
        roles: Sequence[str] | None = None,
        source: str = "",
    ) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))
        if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an integer from 0 to 2**63-1, got {seed!r}")
        self.rules = rules
        players = [f"player_{i}" for i in range(rules.n_players)] if players is None else list(players)
        self.game = VecGame(rules, batch_size=1, seed=seed, reward_mode="points")
        if deal is not None or dealer is not None or roles is not None:
            self.game.reset(
                seed=seed,
                deals=None if deal is None else [deal],
                dealers=None if dealer is None else [dealer],
                roles=None if roles is None else [list(roles)],
            )
        self.recorder = ReplayRecorder(self.game, seed, players, source)
        self._kind, _, _ = action_tables(rules)
        self.events: list[Event] = []
        self.done = False
        self._start_manche()

    # ---- state ------------------------------------------------------------------
    @property
    def state(self):
        """The engine state (slot 0): hidden information, for referees and spectators only."""
        return self.game.state

    @property
    def manche(self) -> int:
        return len(self.recorder.deals) - 1

    @property
    def current_player(self) -> int | None:
        """The player to act, ``None`` once the game is over."""
        return None if self.done else int(self.game.current_player[0])

    def legal_mask(self) -> np.ndarray:
        """``(num_actions,) bool`` legal actions now (all false once the game is over)."""
        if self.done:
            return np.zeros(self.rules.num_actions, bool)
        return self.game.legal_mask()[0].copy()

    def observe(self, player: int) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``player``, as the AEC env gives it (mask zero unless to act)."""
        observation = self.game.observe(players=np.array([player]))[0]
        mask = np.zeros(self.rules.num_actions, np.int8)
        if player == self.current_player:
            mask[:] = self.game.legal_mask()[0]
        return {"observation": observation, "action_mask": mask}

    def replay(self) -> Replay:
        return self.recorder.replay()

    def _start_manche(self) -> None:
        """Cards with suits at the start of a manche: the deal, then the automatic half of the exchange."""
        deal = self.recorder.deals[-1]
        self.cards: list[list[str]] = [list(hand) for hand in deal]
        counts = self._counts_from(self.cards)
        self.cards, _ = move_cards(self.cards, counts, self._counts())
        self.trick_cards: list[str] = []
        self.trick_player: int | None = None

    def _counts(self) -> np.ndarray:
        state = self.game.state
        return state.hands[0][state.seat_of_player[0]].astype(np.int64)

    def _counts_from(self, cards: list[list[str]]) -> np.ndarray:
        return np.stack([hand_counts(hand, self.rules.n_ranks) for hand in cards]).astype(np.int64)

    # ---- play -------------------------------------------------------------------
    def step(self, action: int, note: Any = None, cards: Sequence[str] | None = None) -> Event:
        """Play ``action`` for the player to act; ``ValueError`` (nothing changed) if it is illegal or the game over.

        ``note``: optional, what the agent weighed, kept in the replay with the action (see :func:`check_note`).
        ``cards``: which cards (suits) of the player's hand the action plays or gives; they must be what
        the action takes (its rank, wild 2s after the naturals). Default: the lowest suits of the rank.
        """
        if self.done:
            raise ValueError("the game is over")
        check_note(self.rules, note)
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer in 0..{self.rules.num_actions - 1}, got {action!r}")
        action = int(action)
        if not 0 <= action < self.rules.num_actions:
            raise ValueError(f"action must be an integer in 0..{self.rules.num_actions - 1}, got {action}")
        player = int(self.game.current_player[0])
        manche = self.manche
        decisive = bool(self.game.state.decisive[0])
        before = self._counts()
        kind, rank, count = (int(t[action]) for t in action_tables(self.rules))
        taken = before[player] * 0
        naturals = min(int(before[player, rank]), count)
        if kind != KIND_PASS:
            taken[rank] += naturals
            taken[TWO] += count - naturals  # wild 2s complete a play
        hand = self.cards[player]
        if cards is not None:
            hand = self._chosen_first(hand, cards, taken)
        rewards, done = self.game.step(np.array([action]))  # ValueError before any change
        done = bool(done[0])
        manche_over = done or int(self.game.state.manche_steps[0]) == 0  # the step dealt a new manche
        # After the step that ends a manche the engine holds the next one: the last play comes from the action.
        after = before.copy() if manche_over else self._counts()
        if manche_over:
            after[player] -= taken
        self.cards[player] = hand
        self.cards, _ = move_cards(self.cards, before, after)
        cards = _removed(hand, self.cards[player])
        self.cards[player] = sort_cards(self.cards[player])
        self.recorder.record(player, action, done, note, cards)
        event = Event(
            index=len(self.events),
            player=player,
            action=action,
            move=action_name(self.rules, action),
            kind=("pass", "play", "give")[kind],
            cards=cards,
            manche=manche,
            decisive=decisive,
            manche_over=manche_over,
            game_over=done,
            points=[float(x) for x in rewards[0]] if manche_over else None,
            positions=[int(x) for x in self.game.last_positions[0]] if manche_over else None,
        )
        self.events.append(event)
        self.done = done
        if kind == KIND_PLAY:
            self.trick_cards, self.trick_player = cards, player
        if manche_over and not done:
            self._start_manche()
        elif not done and int(self.game.state.trick_rank[0]) < 0:
            self.trick_cards, self.trick_player = [], None
        return event

    def redeal(self, deal: Sequence[Sequence[str]]) -> None:
        """Deal ``deal`` (one card list per player) to the manche about to start; ``ValueError`` if it cannot."""
        wanted = [sort_cards(hand) for hand in deal]
        if wanted == self.recorder.deals[-1]:
            return
        self.game.redeal([wanted])
        self.recorder.deals[-1] = dealt_cards(self.game)
        self._start_manche()

    def _chosen_first(self, hand: list[str], cards: Sequence[str], taken: np.ndarray) -> list[str]:
        """``hand`` with ``cards`` moved to the front (so that they are the ones that leave), after checking them."""
        if isinstance(cards, (str, bytes)) or not all(isinstance(c, str) for c in cards):
            raise ValueError(f"cards must be a list of card strings, got {cards!r}")
        try:
            wanted = [card_name(*parse_card(c)) for c in cards]
        except ValueError as err:
            raise ValueError(f"cards: {err}") from None
        missing = Counter(wanted) - Counter(hand)
        if missing:
            raise ValueError(f"player_{self.current_player} does not hold {' '.join(sorted(missing.elements()))}")
        if (hand_counts(wanted, self.rules.n_ranks) != taken).any():
            raise ValueError(f"cards {' '.join(wanted)} are not the cards this action takes")
        rest = list(hand)
        for card in wanted:
            rest.remove(card)
        return wanted + rest

    @property
    def scores(self) -> list[int]:
        """Game totals by player (the decisive manche's points are not added)."""
        state = self.game.state
        return [int(x) for x in (state.last_scores[0] if self.done else state.scores[0])]


def _removed(before: list[str], after: list[str]) -> list[str]:
    """The cards of ``before`` that are not in ``after`` (multisets)."""
    left = Counter(before) - Counter(after)
    return sort_cards(list(left.elements()))


def replay_steps(replay: Replay) -> Iterator[tuple[RecordedGame, Event]]:
    """Play ``replay`` back on the engine: yields the game and the event after every action.

    Every manche is dealt the recorded cards; ``ValueError`` names the first deal or action that does not fit.
    """
    rules = replay.rules
    try:
        game = RecordedGame(
            rules,
            seed=replay.seed,
            players=replay.players,
            deal=replay.deals[0],
            # A manche with roles is dealt by its Trou du cul: the recorded dealer is then implied, not given.
            dealer=None if replay.roles is not None else replay.dealer,
            roles=replay.roles,
            source=replay.source,
        )
    except ValueError as err:
        raise ValueError(f"replay manche 1: {err}") from None
    for index, action in enumerate(replay.actions):
        if game.done:
            raise ValueError(f"replay action {index}: the game was already over ({len(replay.actions)} actions given)")
        player = game.current_player
        if replay.movers[index] != player:
            raise ValueError(
                f"replay action {index}: recorded for player_{replay.movers[index]}, but player_{player} is to act"
            )
        try:
            played = None if replay.cards is None else replay.cards[index]
            note = None if replay.notes is None else replay.notes[index]
            event = game.step(action, note, played if played else None)
        except ValueError as err:
            raise ValueError(
                f"replay action {index} ({action_name(rules, action)} by player_{player}): {err}"
            ) from None
        if event.manche_over and not event.game_over:
            number = game.manche
            if number >= len(replay.deals):
                raise ValueError(f"replay has no deal for manche {number + 1}")
            try:
                game.redeal(replay.deals[number])
            except ValueError as err:
                raise ValueError(f"replay manche {number + 1}: {err}") from None
        yield game, event
    if len(replay.deals) != game.manche + 1:
        raise ValueError(f"replay has {len(replay.deals)} deals but its actions start {game.manche + 1} manche(s)")
    if replay.result is not None:
        actual = game.replay().result
        if actual is None:
            raise ValueError(f"replay has a result but its {len(replay.actions)} actions do not finish the game")
        if any(replay.result.get(key) != actual[key] for key in ("scores", "winner", "manches")):
            raise ValueError(f"replay result {short_repr(replay.result)} differs from the game played back ({actual})")


__all__ = [
    "FORMAT",
    "MAX_BYTES",
    "VERSION",
    "Event",
    "RecordedGame",
    "Replay",
    "ReplayRecorder",
    "check_note",
    "dealt_cards",
    "load_replay",
    "loads",
    "replay_steps",
    "starting_roles",
]
