"""The games of ``president-web``: one :class:`Session` per game id, the views sent to clients, and the store.

Modes:

- ``play``: one human seat, agents at the others; or a table for friends (:meth:`Store.create_table`):
  people at several seats, each with a secret of their own, agents at the others. A person's view
  (:func:`player_view`) is built from their own observation, their own cards and the public events
  only; other hands never leave the server until played (a give is shown to its two partners).
- ``watch``: agents at every seat; the client gets spectator frames (every hand, and what each
  agent weighed at its decision) and steps through them.
- ``replay``: frames of a recorded game (:mod:`president_env.game.replay`), checked move by move.

Every mutation happens on the server's event loop; agents decide in a worker thread pool
(:class:`Store`), from a copy of their observation, so a Monte-Carlo agent never blocks the server.
Learned agents are loaded in a worker thread too, once per server (:class:`AgentCache`), and replays are
checked and turned into frames in a worker thread, a chunk of moves at a time (:class:`ReplayLoader`).

Every request does bounded work: the limits below bind the setup form, pasted YAML and replays alike,
and views send at most a page of log entries or frames (``docs/web.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import secrets
import threading
import time
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from president_env import agents as agent_registry
from president_env.core import engine, registry
from president_env.core.actions import action_name, action_tables, typed_action
from president_env.core.cards import RANK_NAMES, card_name, parse_card
from president_env.core.deals import ROLE_NAMES
from president_env.core.presets import PRESETS, load_preset
from president_env.core.rules import Rules
from president_env.game.render import ROLE_LABELS, sort_cards
from president_env.game.replay import MAX_BYTES as MAX_REPLAY_BYTES
from president_env.game.replay import Replay, replay_steps
from president_env.game.replay import start_replay as replay_start
from president_env.game.single import OUTCOME_FIELDS, Event, MoveError, SingleGame

HUMAN = "human"
MODES = ("play", "watch", "replay")
MAX_PACE = 10.0
UNWATCHED = 120.0
"""Seconds without a request after which a game's agents stop playing (they resume on the next one)."""

# ---- limits (docs/web.md lists them; tests/test_web.py tests each one) ------------------------------
MAX_MANCHES = 20
"""Most manches of a game the web app plays, watches or replays (form, pasted YAML and replays alike)."""
MAX_REPLAY_ACTIONS = 10_000
"""Longest replay the web app plays back, in moves."""
PAGE_FRAMES = 100
"""Most spectator frames in one response (watch and replay views are paged)."""
PAGE_LOG = 500
"""Most log entries in one response (play views are paged)."""
REPLAY_CHUNK = 200
"""Moves of a replay checked and turned into frames per turn of the replay worker (a fraction of a second)."""
QUICK_AGENTS = frozenset({"random", "heuristic-1", "heuristic-2", "heuristic-3", "mc-4", "mc-5"})
"""Agents made in microseconds (no file to load): made on the event loop, never refused as busy."""
HINT_AGENTS = ("ppo-universal-search", "ppo-universal")
"""Hints come from the first of these that plays the table (``ppo-universal-search``, which searches over
``ppo-universal`` in about 0.4 s a searched decision at 4 players and up to 1.5 s at 8 players with two decks; both
play every table where torch is installed), else the table's shipped learned agent, else heuristic-3."""
DROP_AFTER = 20.0
"""Seconds without a request after which a person at a table for friends is away: an agent plays for them."""
RETURN_WITHIN = 600.0
"""Seconds an away person may take to come back through their link; past it their seat is the agent's."""
MAX_LOADING = 4
"""Replays and agent lineups with a learned agent to load, at once; past it a new one is refused at once with 503."""
MAX_PER_CLIENT = 20
"""Live (not finished) games, tables and replays one client, by its address, holds at once; past it 429."""
CREATE_BURST = 20
CREATE_EVERY = 3.0
"""The rate of new games, tables and replays per client, a token bucket: :data:`CREATE_BURST` at once, then one
per :data:`CREATE_EVERY` seconds; past it 429 with ``Retry-After``."""
TURN_CLOCK = 60.0
TURN_CLOCK_RANGE = (10, 600)
"""A table for friends: seconds a person has to act on their turn (the host sets it, in this range); past it the
stand-in plays that turn and the person is away until they act again."""
NAME_CHARS = 24
"""Longest name of a person at a table for friends, in characters."""


class RequestError(ValueError):
    """A request that cannot be served; ``status`` is the HTTP code (4xx)."""

    def __init__(self, message: str, status: int = 400, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        """Seconds after which the same request may succeed (429: sent as ``Retry-After``)."""


def within_limits(rules: Rules, what: str = "the rules") -> Rules:
    """``rules`` if the web app serves them, else :class:`RequestError` naming the limit (``what``: whose rules)."""
    if rules.manches > MAX_MANCHES:
        raise RequestError(f"{what} ask for {rules.manches} manches; the web app plays at most {MAX_MANCHES}")
    return rules


class FrameLog:
    """The spectator frames of a game, in pages of :data:`PAGE_FRAMES`.

    Full pages are kept as compressed JSON (a long replay's frames take a few MB, not hundreds); the
    last page grows as frames come. Appended to on the event loop only.
    """

    def __init__(self) -> None:
        self._pages: list[bytes] = []
        self._open: list[dict] = []
        self._decoded: tuple[int, list[dict]] = (-1, [])

    def __len__(self) -> int:
        return len(self._pages) * PAGE_FRAMES + len(self._open)

    def append(self, frame: dict) -> None:
        self._open.append(frame)
        if len(self._open) == PAGE_FRAMES:
            self._pages.append(zlib.compress(json.dumps(self._open, separators=(",", ":")).encode(), 6))
            self._open = []

    def extend(self, frames: Sequence[dict]) -> None:
        for frame in frames:
            self.append(frame)

    def _page(self, number: int) -> list[dict]:
        if number == len(self._pages):
            return self._open
        if self._decoded[0] != number:
            self._decoded = (number, json.loads(zlib.decompress(self._pages[number])))
        return self._decoded[1]

    def slice(self, start: int, limit: int = PAGE_FRAMES) -> list[dict]:
        """At most ``limit`` frames from ``start`` on."""
        out: list[dict] = []
        index = start
        while len(out) < limit and index < len(self):
            page = self._page(index // PAGE_FRAMES)
            offset = index % PAGE_FRAMES
            out.extend(page[offset : offset + limit - len(out)])
            index = start + len(out)
        return out

    def last(self) -> dict | None:
        return self.slice(len(self) - 1, 1)[0] if len(self) else None


@dataclass
class Seat:
    """A person at a table: the name they gave, when they were last heard from, whether they host it."""

    name: str
    seen: float
    host: bool = False
    gone: bool = False
    """Away longer than :data:`RETURN_WITHIN`: the seat is the stand-in agent's for the rest of the game."""
    idle: bool = False
    """The turn clock ran out on their turn: the stand-in plays for them until they act again (a move, or
    ``POST /api/games/{id}/back``)."""

    def away(self, now: float) -> bool:
        """An agent plays for this person: not heard from for :data:`DROP_AFTER` seconds, idle, or gone."""
        return self.gone or self.idle or now - self.seen > DROP_AFTER


@dataclass
class Session:
    """One game and what its clients are shown."""

    id: str
    mode: str
    rules: Rules
    game: SingleGame
    lineup: list[str]
    """Agent name by player (``"human"`` at the human's seat)."""
    human: int | None
    agents: dict[int, Any]
    pace: float
    created: float
    touched: float
    frames: FrameLog = field(default_factory=FrameLog)
    """Spectator frames (watch and replay)."""
    log: list[Event] = field(default_factory=list)
    """Play mode: the events (a give's card is shown only to the giver and its receiver)."""
    results: list[dict] = field(default_factory=list)
    """Finished manches: positions, roles earned and points by player."""
    error: str | None = None
    runner: asyncio.Task | None = None
    paused: bool = False
    closed: bool = False
    keys: dict[str, int] = field(default_factory=dict)
    """Play mode: the secret of each human seat (a key of the game URL kept by its browser) -> the player."""
    seats: dict[int, Seat] = field(default_factory=dict)
    """Play mode: the people at the table by player (one for a game against agents; a table for friends: all
    who joined)."""
    friends: bool = False
    """A table for friends: people join with their own secrets, the host starts, stand-ins play for the away."""
    started: bool = True
    standins: dict[int, Any] = field(default_factory=dict)
    """A table for friends: the agent that plays for each person while they are away."""
    exchanges: dict[tuple[int, int], dict] = field(default_factory=dict)
    """Play mode: by (player, manche), the cards a person gave and received in the exchange (their own cards)."""
    hinter: tuple[str, Any] | None = None
    """Play mode: the agent that gives hints, made at the first one."""
    replay: Replay | None = None
    """Replay mode: the replay being shown (its moves are checked and framed in the background)."""
    loaded: bool = True
    """Replay mode: every move has been checked and framed."""
    owner: str = ""
    """The address of the client that created it (the limits per client count its live games)."""
    turn_clock: float = TURN_CLOCK
    """A table for friends: seconds a person has to act on their turn."""
    turn_since: float = 0.0
    """When the player to act got the turn (the store's clock)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by every request for the game: the agents' task, waiting on a person's turn clock, looks again."""

    @property
    def over(self) -> bool:
        if self.mode == "replay":
            return self.loaded or self.error is not None
        return self.game.done or self.error is not None

    @property
    def version(self) -> int:
        """Number of actions played so far (replay mode: checked so far)."""
        if self.mode == "replay":
            return len(self.frames) - 1
        return len(self.game.events)


# --------------------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------------------
def _role(code: int) -> dict | None:
    return None if code < 0 else {"name": ROLE_NAMES[code], "label": ROLE_LABELS[code]}


def public_table(session: Session, viewer: int) -> dict[str, Any]:
    """The public part of the table, read from ``viewer``'s observation (no hidden card in it)."""
    game, rules = session.game, session.rules
    view = agent_registry.decode(rules, game.observe_player(viewer)["observation"])
    seating = game.player_at_seat  # who sits where is public
    my_seat = game.seat_of_player[viewer]
    players = []
    for rel in range(rules.n_players):
        player = int(seating[(my_seat + rel) % rules.n_players])
        players.append(
            {
                "player": player,
                "seat": (my_seat + rel) % rules.n_players,
                "agent": session.lineup[player],
                "held": int(view.held[0, rel]),
                "role": _role(int(view.roles[0, rel])),
                "passed": bool(view.passed[0, rel]),
                "out": int(view.out_order[0, rel]),
                "penalized": bool(view.penalized[0, rel]),
                "score": int(view.scores[0, rel]),
                "to_act": session.started and not game.done and game.current_player == player,
            }
        )
    players.sort(key=lambda p: p["seat"])
    manche, decisive = game.manche, bool(view.decisive[0])
    if game.done and session.results:
        # The engine has dealt a next game already: the final table is the last manche's end.
        last = session.results[-1]
        manche, decisive = last["manche"], last["decisive"]
        for entry in players:
            p = entry["player"]
            entry.update(
                held=len(game.cards[p]),
                role=last["roles"][p],
                out=last["positions"][p],
                passed=False,
                score=game.totals[p],
            )
    rank = int(view.trick_rank[0])
    return {
        "players": players,
        "trick": {
            "rank": RANK_NAMES[rank] if rank >= 0 else None,
            "count": int(view.trick_count[0]),
            "cards": list(game.trick_cards) if rank >= 0 or game.done else [],
            "player": game.trick_player if rank >= 0 or game.done else None,
        },
        "revolution": bool(view.revolution[0]),
        "or_nothing": bool(view.constrained[0]),
        "phase": "over" if game.done else "exchange" if view.exchange[0] else "play",
        "manche": manche,
        "decisive": decisive,
        "to_act": game.current_player if session.started else None,
    }


def game_header(session: Session) -> dict[str, Any]:
    """What every view of ``session`` starts with (a replay's game belongs to its loader: read from frames)."""
    if session.mode == "replay":
        last = session.frames.last() or {}
        scores = last.get("scores", [0] * session.rules.n_players)
        result = session.replay.result if session.replay is not None and session.loaded else None
        winner = None if result is None else result.get("winner")
    else:
        scores = session.game.totals
        result = session.game.record.result if session.game.done else None
        winner = None if result is None else result["winner"]
    return {
        "id": session.id,
        "mode": session.mode,
        "version": session.version,
        "over": session.over,
        "error": session.error,
        "pace": session.pace,
        "paused": session.paused,
        "rules": session.rules.to_dict(),
        "lineup": session.lineup,
        "human": session.human,
        "scores": scores,
        "results": session.results,
        "winner": winner,
        "loaded": session.loaded,
    }


def player_view(session: Session, since: int = 0, me: int | None = None, now: float | None = None) -> dict[str, Any]:
    """What player ``me`` (default the session's human) sees: the public table, their own hand, their own legal
    moves, the log as they may see it (``now``: the store's clock, for who is away at a table for friends)."""
    game, rules = session.game, session.rules
    me = session.human if me is None else me
    assert me is not None
    view = agent_registry.decode(rules, game.observe_player(me)["observation"])
    out = game_header(session)
    out["human"] = me
    out["names"] = {p: seat.name for p, seat in session.seats.items()}
    if session.friends:
        out["friends"] = friends_view(session, me, time.monotonic() if now is None else now)
    out["table"] = public_table(session, me)
    out["hand"] = sort_cards(game.cards[me])
    partner = int(view.partner[0])
    seating = game.player_at_seat
    my_seat = game.seat_of_player[me]
    out["exchange"] = {
        "partner": None if partner < 0 else int(seating[(my_seat + partner) % rules.n_players]),
        "gives_left": int(view.gives_left[0]),
        "gave": _ranks(view.gave[0]),
        "received": _ranks(view.received[0]),
        "done": session.exchanges.get((me, game.manche)),
    }
    legal = []
    if game.current_player == me and not session.over and session.started:
        kinds, ranks, counts = action_tables(rules)
        for a in np.flatnonzero(game.legal_mask()):
            legal.append(
                {
                    "action": int(a),
                    "move": action_name(rules, int(a)),
                    "kind": ("pass", "play", "give")[int(kinds[a])],
                    "rank": RANK_NAMES[int(ranks[a])] if kinds[a] else None,
                    "count": int(counts[a]),
                }
            )
    out["legal"] = legal
    out["log"] = [_event_dict(session, event, viewer=me) for event in session.log[since : since + PAGE_LOG]]
    out["log_start"] = min(since, len(session.log))
    out["log_count"] = len(session.log)
    return out


def friends_view(session: Session, me: int, now: float) -> dict[str, Any]:
    """A table for friends as player ``me`` sees it: who sits where, who hosts, who is away, whether it started."""
    seats = []
    for player in range(session.rules.n_players):
        seat = session.seats.get(player)
        seats.append(
            {
                "player": player,
                "name": seat.name if seat else None,
                "agent": None if seat else session.lineup[player] if session.started else None,
                "host": bool(seat and seat.host),
                "away": seat is not None and seat.away(now),
                "idle": bool(seat and seat.idle),
                "you": player == me,
            }
        )
    game = session.game
    to_act = game.current_player if session.started and not session.over else None
    person = session.seats.get(to_act) if to_act is not None else None
    turn_left = None
    if person is not None and not person.away(now):
        turn_left = round(max(0.0, session.turn_since + session.turn_clock - now), 1)
    return {
        "started": session.started,
        "seats": seats,
        "host": next(p for p, s in session.seats.items() if s.host),
        "turn_clock": session.turn_clock,
        "turn_left": turn_left,
    }


def note_exchange(session: Session) -> None:
    """Play mode: once a manche's exchange is over, keep which of their own cards each person gave and received."""
    for me in session.seats:
        _note_exchange(session, me)


def _note_exchange(session: Session, me: int) -> None:
    game = session.game
    if game.done or (me, game.manche) in session.exchanges:
        return
    view = agent_registry.decode(session.rules, game.observe_player(me)["observation"])
    if view.exchange[0]:
        return
    dealt, hand = Counter(game.record.deals[-1][me]), Counter(game.cards[me])
    partner_seat = game.partner[game.seat_of_player[me]]
    partner = game.player_at_seat[partner_seat] if partner_seat >= 0 else None
    session.exchanges[(me, game.manche)] = {
        "partner": partner,
        "gave": sort_cards(list((dealt - hand).elements())),
        "received": sort_cards(list((hand - dealt).elements())),
    }


def _ranks(counts: np.ndarray) -> list[str]:
    return [RANK_NAMES[r] for r, n in enumerate(counts) for _ in range(int(n))]


def spectator_frame(session: Session, event: Event | None, weighed: dict | None, index: int) -> dict[str, Any]:
    """Everything at the table after ``event`` (every hand visible): frame ``index`` of watch and replay modes."""
    game = session.game
    table = public_table(session, 0)
    for entry in table["players"]:
        entry["cards"] = sort_cards(game.cards[entry["player"]])
    return {
        "index": index,
        "table": table,
        "event": None if event is None else _event_dict(session, event),
        "weighed": weighed,
        "scores": game.totals,
        "results": list(session.results),
        "over": game.done,
    }


def _event_dict(session: Session, event: Event, viewer: int | None = None) -> dict:
    """An event for a client; ``viewer`` set: a give's card shown only to the two partners."""
    data = {
        "index": event.index,
        "player": event.player,
        "kind": event.kind,
        "action": event.action,
        "move": event.move,
        "cards": list(event.cards),
        "manche": event.manche,
        "decisive": event.decisive,
        "manche_over": event.manche_over,
        "game_over": event.game_over,
        **{name: getattr(event, name) for name in OUTCOME_FIELDS},  # public: the client's log tells them
    }
    if event.kind == "give" and viewer is not None and viewer not in (event.player, event.receiver):
        data["cards"] = []
        data["move"] = "give"
        data["action"] = None
    if event.manche_over:
        data["points"] = event.rewards
        data["positions"] = event.positions
    return data


def _manche_result(session: Session, event: Event) -> dict[str, Any]:
    role_by_pos = engine.tables(session.rules).role_by_pos
    positions = event.positions or []
    order = sorted(range(len(positions)), key=positions.__getitem__)
    return {
        "manche": event.manche,
        "decisive": event.decisive,
        "order": order,
        "positions": positions,
        "roles": [_role(int(role_by_pos[p])) for p in positions],
        "points": event.rewards,
        "scores": session.game.totals,
        "last_trick": [{"player": e.player, "kind": e.kind, "cards": list(e.cards)} for e in session.game.last_trick()],
    }


# --------------------------------------------------------------------------------------
# Moves
# --------------------------------------------------------------------------------------
def human_action(session: Session, body: Any, me: int) -> tuple[int, list[str] | None]:
    """The action player ``me``'s request asks for and the cards it names, or :class:`RequestError` (4xx) saying
    why it cannot be asked for; whether it is legal the game says when it is played (:meth:`Store.apply`)."""
    game, rules = session.game, session.rules
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    version = body.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RequestError('"version" (the number of moves the client has seen) must be an integer')
    if session.over:
        raise RequestError("the game is over", 409)
    if not session.started:
        raise RequestError("the host has not started the game yet", 409)
    if version != session.version:
        raise RequestError(f"the game has moved on (version {session.version}, the request was for {version})", 409)
    if game.current_player != me:
        raise RequestError("it is not your turn", 409)
    kind = body.get("move")
    cards = None
    if kind == "pass":
        action = 0
    elif kind in ("play", "give"):
        cards = body.get("cards")
        if not isinstance(cards, list) or not cards or not all(isinstance(c, str) for c in cards):
            raise RequestError(f"{kind}: select one or more cards of your hand")
        if len(cards) > rules.max_count + 4 * rules.decks:
            raise RequestError(f"{kind}: too many cards selected")
        action = _cards_action(rules, game.cards[me], kind, cards)
    else:
        raise RequestError('"move" must be "play", "pass" or "give"')
    return action, cards  # the game checks it is legal (Store.apply: its MoveError says why not)


def _cards_action(rules: Rules, hand: Sequence[str], kind: str, cards: list[str]) -> int:
    """The action of the cards a person selected: held, then ``actions.typed_action`` (the one door for typed
    cards, shared with ``president-play``)."""
    try:
        ranks = [parse_card(c)[0] for c in cards]
    except ValueError as err:
        raise RequestError(str(err)) from None
    have = Counter(hand)
    for card, n in Counter(c.strip().upper() for c in cards).items():
        if have[card] < n:
            raise RequestError(f"you do not hold {card}" if not have[card] else f"you hold only {have[card]} × {card}")
    try:
        return typed_action(rules, kind, ranks)
    except ValueError as err:
        raise RequestError(str(err)) from None


def _why_illegal(session: Session, action: int, me: int) -> str:
    """The engine's reason (:func:`engine.why_illegal`) in the player's words: it names only the player's own cards
    and the table."""
    why = engine.why_illegal(session.rules, session.game.state, 0, action)
    rank = RANK_NAMES[why.rank] if why.rank >= 0 else ""
    trick = RANK_NAMES[why.trick_rank] if why.trick_rank >= 0 else ""
    if why.reason == engine.MUST_GIVE:
        return f"it is the exchange: give back {plural(why.gives_left, 'card')} of your choice (select one, then Give)"
    if why.reason == engine.NOTHING_TO_GIVE:
        return f"you hold no {rank} to give back"
    if why.reason == engine.GIVE_OUTSIDE_EXCHANGE:
        return "cards are given back only in the exchange, before the first trick"
    if why.reason == engine.LEADER_CANNOT_PASS:
        return "you lead this trick: play cards of one rank (you may not pass)"
    if why.reason == engine.NOT_ENOUGH_CARDS:
        return f"you cannot play {why.count} × {rank}: you have {why.held}" + (" counting your 2s" if why.wild else "")
    if why.reason == engine.WRONG_COUNT:
        return f"this trick is played {plural(why.trick_count, 'card')} at a time, not {why.count}"
    if why.reason == engine.OR_NOTHING:
        return f"{trick} or nothing: play {trick} or pass"
    if why.revolution:
        return f"{rank} does not beat the {trick} on the table (revolution: the lower rank wins)"
    return f"{rank} does not beat the {trick} on the table"


def plural(count: int, word: str) -> str:
    """``"1 card"``, ``"2 cards"``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _refused_move(err: MoveError, session: Session, action: int) -> str:
    """A move the game refused (:class:`~president_env.game.single.MoveError`), told to the person who made it: an
    illegal one in the words of :func:`_why_illegal`."""
    if err.code == "not_held":
        return f"you do not hold {err.detail}"
    if err.code == "not_taken":
        return (
            f"cards {err.detail} are not the cards this action takes "
            "(wild 2s complete a play only after every natural card of its rank)"
        )
    if err.code == "illegal":
        return _why_illegal(session, action, err.player)
    if err.code == "over":
        return "the game is over"
    return str(err)


# --------------------------------------------------------------------------------------
# Names at a table for friends
# --------------------------------------------------------------------------------------
def name_key(name: str) -> str:
    """``name`` as the names at a table are compared: case and accents folded, every run of other characters than
    letters and digits one space (``"  Ánn-Marie "`` -> ``"ann marie"``)."""
    folded = unicodedata.normalize("NFKD", name.casefold())
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(re.split(r"[\W_]+", plain)).strip()


PAGE_LABELS = ("you", *ROLE_LABELS, *ROLE_NAMES)
"""Words the page writes beside or instead of a name (``You``, ``Ann — you``, a role): no name holds one (nor an
agent's name, nor ``player N``, the page's name for a seat without one)."""
PAGE_NAMES = ("human", "nobody", "empty", "agent", "away", "me")
"""Words the page uses for a seat or a person: no name is one of them alone (``(host)`` is refused by its brackets)."""


@functools.cache
def _page_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:data:`PAGE_LABELS` with the agents' names, and :data:`PAGE_NAMES`, as :func:`name_key` folds them."""
    labels = (*PAGE_LABELS, *agent_registry.names())
    return tuple(dict.fromkeys(map(name_key, labels))), tuple(map(name_key, PAGE_NAMES))


def seat_name(name: Any, taken: Sequence[str] = ()) -> str:
    """The name a person gives at a table for friends, trimmed; or :class:`RequestError` (400) saying why not.

    A name is 1 to :data:`NAME_CHARS` printable characters, unique at the table (``taken``: the names seated) by
    :func:`name_key` (case, accents and punctuation aside); it holds no bracket (``Ann (host)``), none of the
    words of :data:`PAGE_LABELS` or an agent's name (``You``, ``Président``, ``heuristic-3``, ``player 2``), is
    none of :data:`PAGE_NAMES` (``nobody``) and holds no card (``AS``): nobody passes for someone or something else.
    """
    if not isinstance(name, str) or not name.isprintable() or not 1 <= len(name.strip()) <= NAME_CHARS:
        raise RequestError(f'"name": the name the others will see, 1 to {NAME_CHARS} printable characters')
    name = " ".join(name.split())
    key = name_key(name)
    if not key:
        raise RequestError(f'"name": {name!r} has no letter or digit')
    if any(ch in name for ch in "()[]{}<>"):
        raise RequestError(f'"name": {name!r} holds a bracket; the page writes "(host)" after the host\'s name')
    labels, names = _page_words()
    padded = f" {key} "
    label = key if key in names else next((word for word in labels if f" {word} " in padded), None)
    label = label or (match.group() if (match := re.search(r"\bplayer ?\d+\b", key)) else None)
    if label is not None:
        raise RequestError(f'"name": {name!r} holds "{label}", a word the page uses for its own labels; pick another')
    for word in [name, *name.split()]:  # the name, or a word of it written as the page writes cards
        try:
            card = card_name(*parse_card(word))
        except ValueError:
            continue
        if word in (name, card):
            raise RequestError(f'"name": {name!r} holds {word!r}, which reads as a card; pick another')
    if any(name_key(other) == key for other in taken):
        raise RequestError(f'"name": someone at this table is already called {name!r}; pick another')
    return name


# --------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------
def make_lineup(rules: Rules, seats: Sequence[str], human: int | None) -> list[str]:
    """Validate the agent names (one per player; ``"human"`` only at ``human``) by the registry's one check
    (``registry.check_name``): registered names only, never the path of a file on the server. A retired name
    (``agents.RETIRED_AGENTS``, never offered) seats the agent that replaces it, under that agent's name."""
    if len(seats) != rules.n_players:
        raise RequestError(f"give one agent per player ({rules.n_players}), got {len(seats)}")
    lineup = []
    for player, name in enumerate(seats):
        if player == human:
            lineup.append(HUMAN)
            continue
        try:
            name = registry.check_name(name, checkpoints=False)
            lineup.append(agent_registry.REPLACEMENT_AGENT if name in agent_registry.RETIRED_AGENTS else name)
        except ValueError as err:
            raise RequestError(f"player {player}: {err}") from None
    return lineup


class Store:
    """Every live game by id; expires idle and finished games and bounds their number.

    Learned agents are made in a loader thread and kept (:class:`AgentCache`); replays are checked in a
    replay thread. At most :data:`MAX_LOADING` of either are in progress; past it, 503 at once.

    Args:
        executor: where agents decide (a thread pool).
        idle_ttl: seconds after which a game nobody looked at is dropped.
        finished_ttl: seconds a finished game stays readable.
        max_games: games held at once; a new game past it first evicts the stalest, else 503.
        per_client: live games, tables and replays one client address holds at once (:data:`MAX_PER_CLIENT`).
        create_burst, create_every: the create rate per client, a token bucket (:data:`CREATE_BURST` at once, then
            one per :data:`CREATE_EVERY` seconds).
        clock: ``time.monotonic`` (tests pass a fake one).
    """

    def __init__(
        self,
        executor: Executor,
        idle_ttl: float = 1800.0,
        finished_ttl: float = 600.0,
        max_games: int = 200,
        per_client: int = MAX_PER_CLIENT,
        create_burst: int = CREATE_BURST,
        create_every: float = CREATE_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.executor = executor
        self.idle_ttl, self.finished_ttl, self.max_games = idle_ttl, finished_ttl, max_games
        self.per_client, self.create_burst, self.create_every = per_client, create_burst, create_every
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        """By client address: the creations it may still make at once, and when that was counted."""
        self._creating: Counter = Counter()
        """By client address: creations in progress (waiting for agents or a replay's first moves)."""
        self.sessions: dict[str, Session] = {}
        self.cache = AgentCache()
        self.loader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-loader")
        self.replayer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replays")
        self.loading = 0
        """Agent lineups and replays being loaded now (at most :data:`MAX_LOADING`)."""

    def get(self, game_id: str) -> Session:
        self.expire()
        session = self.sessions.get(game_id)
        if session is None:
            raise RequestError("no such game (it never existed or it expired)", 404)
        session.touched = self.clock()
        return session

    def player_of(self, session: Session, key: str | None) -> int:
        """The person whose secret ``key`` is (403 for a play game without it: the id alone acts for no one).

        At a table for friends, a person away longer than :data:`RETURN_WITHIN` has lost their seat to its agent.
        """
        for secret, player in session.keys.items():
            if isinstance(key, str) and secrets.compare_digest(secret.encode(), key.encode()):
                seat = session.seats[player]
                if session.friends and (seat.gone or self.clock() - seat.seen > RETURN_WITHIN):
                    seat.gone = True
                    raise RequestError(
                        f"you were away more than {RETURN_WITHIN:.0f} s: an agent plays your seat to the end", 403
                    )
                now = self.clock()
                if session.friends and now - seat.seen > DROP_AFTER and session.game.current_player == player:
                    session.turn_since = now  # back on their turn after a drop: their clock starts again
                seat.seen = now
                return player
        raise RequestError("this game is played from another browser: open it from the link it was started with", 403)

    def away(self, session: Session, player: int) -> bool:
        """An agent plays for the person at ``player`` (:meth:`Seat.away`)."""
        return session.seats[player].away(self.clock())

    def back(self, session: Session, player: int) -> None:
        """The person at ``player`` acted: no longer idle; on their turn, their clock starts again."""
        seat = session.seats[player]
        if seat.idle:
            seat.idle = False
            if session.game.current_player == player:
                session.turn_since = self.clock()
        session.wake.set()

    @contextlib.contextmanager
    def admit(self, client: str):
        """Hold the creation of a game, table or replay by ``client`` (its address) within the limits per client:
        429 when it holds :attr:`per_client` live ones, or made its burst of creations too fast (``Retry-After``)."""
        live = sum(1 for s in self.sessions.values() if s.owner == client and not s.over) + self._creating[client]
        if live >= self.per_client:
            raise RequestError(
                f"you hold {live} live games, tables and replays on this server, the most one client may; "
                "finish or close one first",
                429,
            )
        now = self.clock()
        tokens, since = self._buckets.get(client, (float(self.create_burst), now))
        tokens = min(float(self.create_burst), tokens + (now - since) / self.create_every)
        if tokens < 1:
            wait = (1 - tokens) * self.create_every
            raise RequestError(
                f"too many new games from you: {self.create_burst} at once, then one every {self.create_every:g} s; "
                f"try again in {wait:.0f} s",
                429,
                retry_after=wait,
            )
        self._buckets[client] = (tokens - 1, now)
        self._creating[client] += 1
        try:
            yield
        finally:
            self._creating[client] -= 1
            if not self._creating[client]:
                del self._creating[client]

    def expire(self) -> int:
        """Drop expired games; returns how many."""
        now = self.clock()
        dead = [
            s.id
            for s in self.sessions.values()
            if now - s.touched > self.idle_ttl or (s.over and now - s.touched > self.finished_ttl)
        ]
        for game_id in dead:
            self.close(game_id)
        full = [
            client
            for client, (tokens, since) in self._buckets.items()
            if tokens + (now - since) / self.create_every >= self.create_burst
        ]
        for client in full:  # a full bucket is the default: forget it
            del self._buckets[client]
        return len(dead)

    def close(self, game_id: str) -> None:
        session = self.sessions.pop(game_id, None)
        if session is not None:
            session.closed = True
            if session.runner is not None and not session.runner.done():
                session.runner.cancel()

    def _new_id(self) -> str:
        self.expire()
        if len(self.sessions) >= self.max_games:
            stalest = min(self.sessions.values(), key=lambda s: (not s.over, s.touched))
            if not stalest.over and self.clock() - stalest.touched < 60:
                raise RequestError("the server holds too many games; try again later", 503)
            self.close(stalest.id)
        return secrets.token_urlsafe(24)

    async def create(
        self,
        mode: str,
        rules: Rules,
        seats: Sequence[str],
        human: int | None = None,
        seed: int | None = None,
        pace: float = 0.6,
        client: str = "",
    ) -> Session:
        """A new play or watch game (``human`` is the human's player in play mode) for ``client`` (its address,
        :meth:`admit`); its agents are made off the event loop (:meth:`make_agents`)."""
        within_limits(rules)
        lineup = make_lineup(rules, seats, human)
        with self.admit(client):
            game = SingleGame.table(rules, seed=seed, players=lineup, source="president-web")
            root = np.random.SeedSequence(game.record.seed)
            agents = await self.make_agents(lineup, rules, root.spawn(rules.n_players))
            now = self.clock()
            session = Session(self._new_id(), mode, rules, game, lineup, human, agents, pace, now, now, owner=client)
        if human is not None:
            session.keys[secrets.token_urlsafe(24)] = human
            session.seats[human] = Seat("you", now, host=True)
            note_exchange(session)
        if mode == "watch":
            session.frames.append(spectator_frame(session, None, None, 0))
        self.sessions[session.id] = session
        return session

    def create_table(
        self,
        rules: Rules,
        name: Any,
        seed: int | None = None,
        pace: float = 0.6,
        turn_clock: float = TURN_CLOCK,
        client: str = "",
    ) -> tuple[Session, str]:
        """A table for friends for ``client`` (its address), its host, called ``name``, at player 0; returns it and
        the host's secret. Nothing plays until :meth:`start_table`; each person then has ``turn_clock`` seconds
        to act on their turn."""
        within_limits(rules)
        name = seat_name(name)
        low, high = TURN_CLOCK_RANGE
        if isinstance(turn_clock, bool) or not isinstance(turn_clock, (int, float)) or not low <= turn_clock <= high:
            raise RequestError(f"turn_clock must be a number of seconds from {low} to {high}, got {turn_clock!r}")
        lineup = [HUMAN] * rules.n_players
        with self.admit(client):
            game = SingleGame.table(rules, seed=seed, players=lineup, source="president-web")
            now = self.clock()
            session = Session(self._new_id(), "play", rules, game, lineup, 0, {}, pace, now, now, owner=client)
        session.friends, session.started, session.turn_clock = True, False, float(turn_clock)
        self.sessions[session.id] = session
        return session, self.join_table(session, name, host=True)

    def join_table(self, session: Session, name: Any, host: bool = False) -> str:
        """Seat a person called ``name`` (:func:`seat_name`) at the first free place of a table not yet started;
        returns their secret."""
        name = seat_name(name, [seat.name for seat in session.seats.values()])
        if not session.friends:
            raise RequestError("this game is not a table for friends", 409)
        if session.started:
            raise RequestError("the game at this table has started; ask the host for the next one", 409)
        free = [p for p in range(session.rules.n_players) if p not in session.seats]
        if not free:
            raise RequestError(f"this table is full ({session.rules.n_players} players)", 409)
        key = secrets.token_urlsafe(24)
        session.keys[key] = free[0]
        session.seats[free[0]] = Seat(name, self.clock(), host=host)
        return key

    async def start_table(self, session: Session, player: int, agent: str) -> None:
        """The host starts: ``agent`` takes every empty seat and stands in for anyone away."""
        if not session.seats[player].host:
            raise RequestError("only the host starts the game", 403)
        if session.started:
            raise RequestError("the game has started", 409)
        rules = session.rules
        seated = set(session.seats)
        lineup = [HUMAN if p in seated else agent for p in range(rules.n_players)]
        make_lineup(rules, [agent if name == HUMAN else name for name in lineup], None)
        root = np.random.SeedSequence(session.game.record.seed)
        seeds = root.spawn(2 * rules.n_players)
        agents = await self.make_agents(lineup, rules, seeds[: rules.n_players])
        standins = await self.make_agents([agent] * rules.n_players, rules, seeds[rules.n_players :])
        if session.started:
            raise RequestError("the game has started", 409)
        if set(session.seats) != seated:
            raise RequestError("someone took a seat meanwhile: start again", 409)
        session.lineup[:] = lineup
        session.game.name_players(
            [session.seats[p].name if p in session.seats else agent for p in range(rules.n_players)]
        )
        session.agents = agents
        session.standins = {p: standins[p] for p in session.seats}
        session.started = True
        session.turn_since = self.clock()
        note_exchange(session)
        self.start_agents(session)

    async def open_replay(self, raw: bytes, client: str = "") -> Session:
        """A replay session from the bytes of a replay file: parsed, limited and its first moves checked in the
        replay worker (``RequestError`` 400 for a bad replay, 413 past the limits, 503 when busy); the rest of the
        moves are checked and framed in the background, a chunk at a time (a later bad move ends the session
        with the error shown). ``client``: its address (:meth:`admit`)."""
        with self.admit(client):
            game_id = self._new_id()
            self._reserve()
            loop = asyncio.get_running_loop()
            try:
                loader, frames = await loop.run_in_executor(self.replayer, start_replay, raw)
            except BaseException:
                self.loading -= 1
                raise
        now = self.clock()
        replay = loader.replay
        session = Session(
            game_id, "replay", replay.rules, loader.scratch.game, list(replay.players), None, {}, 0.0, now, now,
            owner=client,
        )  # fmt: skip
        session.replay, session.loaded = replay, loader.done
        session.frames.extend(frames)
        session.results = list(loader.scratch.results)
        self.sessions[session.id] = session
        if loader.done:
            self.loading -= 1
        else:
            session.runner = loop.create_task(self._load_rest(session, loader))
        return session

    async def _load_rest(self, session: Session, loader: ReplayLoader) -> None:
        loop = asyncio.get_running_loop()
        try:
            while not loader.done and not session.closed:
                frames = await loop.run_in_executor(self.replayer, loader.chunk)
                session.frames.extend(frames)
                session.results = list(loader.scratch.results)
            session.loaded = loader.done
        except RequestError as err:
            session.error = str(err)
        finally:
            self.loading -= 1

    def _reserve(self) -> None:
        """Count one more load in progress, or 503 at once when :data:`MAX_LOADING` are."""
        if self.loading >= MAX_LOADING:
            raise RequestError(
                f"the server is busy loading {self.loading} other games or replays; try again in a few seconds", 503
            )
        self.loading += 1

    async def make_agents(self, lineup: list[str], rules: Rules, seeds: Sequence[Any]) -> dict[int, Any]:
        """The agents of a lineup: at once when each is quick to make (a baseline, or a learned agent already
        loaded), else in the loader thread (a learned one is loaded once per server)."""
        if all(name == HUMAN or self.cache.ready(name, rules) for name in lineup):
            return self.cache.make_lineup(lineup, rules, seeds)
        self._reserve()
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self.loader, self.cache.make_lineup, lineup, rules, seeds
            )
        finally:
            self.loading -= 1

    async def playable_agents(self, rules: Rules) -> list[str]:
        """The agents that can play ``rules`` (the first call reads the learned agents' rules: the loader thread)."""
        loop = asyncio.get_running_loop()
        return list(await loop.run_in_executor(self.loader, agent_registry.names, rules))

    async def hint(self, session: Session, me: int) -> dict[str, Any]:
        """What the strongest agent for the table (:data:`HINT_AGENTS`) would play in the human's place, and what it
        weighed.

        It sees only the human's observation; learned agents for the table come first, else ``heuristic-3``.
        """
        game = session.game
        if session.over or not session.started or game.current_player != me:
            raise RequestError("a hint is for your turn", 409)
        version = session.version
        if session.hinter is None:
            playable = await self.playable_agents(session.rules)
            name = next((n for n in HINT_AGENTS if n in playable), None)
            name = name or next((n for n in playable if n in agent_registry.SHIPPED_AGENTS), "heuristic-3")
            agents = await self.make_agents([name], session.rules, [np.random.SeedSequence(0)])
            session.hinter = (name, agents[0])
        name, agent = session.hinter
        observation = game.observe_player(me)
        loop = asyncio.get_running_loop()
        decision = await loop.run_in_executor(self.executor, _decide, agent, observation, True)
        weighed = _json_weighed(session.rules, decision)
        kinds, ranks, counts = action_tables(session.rules)
        action = weighed["action"]
        return {
            "agent": name,
            "version": version,
            "action": action,
            "move": action_name(session.rules, action),
            "kind": ("pass", "play", "give")[int(kinds[action])],
            "rank": RANK_NAMES[int(ranks[action])] if kinds[action] else None,
            "count": int(counts[action]),
            "measure": weighed["measure"],
            "moves": weighed["moves"][:6],
        }

    def warm(self) -> None:
        """Before serving (``president-web``; the loader thread): load the shipped learned agents, and deal and
        observe a table of each preset, so that the engine's compiled kernels (one and two decks, 3 to 8 players)
        are loaded once, not during a request: then a game with a learned agent is made in tens of milliseconds
        for any rules it plays (measured: 25 to 56 ms for five rules variants never seen before; without this,
        the first table of a kind took 0.3 to 1.9 s)."""
        self.cache.warm()
        for name in PRESETS:
            rules = load_preset(name)
            game = SingleGame.table(rules, seed=0, players=[HUMAN] * rules.n_players)
            game.observe_player(game.current_player)

    def shutdown(self) -> None:
        """Drop every game and stop the worker threads the store started."""
        for game_id in list(self.sessions):
            self.close(game_id)
        self.loader.shutdown(wait=False, cancel_futures=True)
        self.replayer.shutdown(wait=False, cancel_futures=True)

    # ---- playing ----------------------------------------------------------------
    def apply(
        self, session: Session, action: int, weighed: dict | None = None, cards: list[str] | None = None
    ) -> Event:
        """Play ``action`` (with ``cards``, the suits chosen) for the player to act; update what clients see.

        ``RequestError`` (nothing changed) when the cards are not those the action takes.
        """
        note = None if weighed is None else _json_weighed(session.rules, weighed)
        try:
            event = session.game.step(action, note, cards)
        except MoveError as err:
            raise RequestError(_refused_move(err, session, action)) from None
        session.turn_since = self.clock()
        if event.manche_over:
            session.results.append(_manche_result(session, event))
        if session.mode == "play":
            session.log.append(event)  # shown to each person as they may see it (player_view)
            if event.exchange_over or event.manche_over:  # a manche's exchange is over, or the next has none
                note_exchange(session)
        else:
            session.frames.append(spectator_frame(session, event, note, len(session.frames)))
        return event

    def start_agents(self, session: Session) -> None:
        """Let the agents play until the human is to act or the game ends (a task on the event loop)."""
        if session.over or session.mode == "replay":
            return
        session.wake.set()  # a runner waiting on a person's turn clock looks again
        if session.runner is None or session.runner.done():
            session.runner = asyncio.get_running_loop().create_task(self._run_agents(session))

    async def _run_agents(self, session: Session) -> None:
        loop = asyncio.get_running_loop()
        while not session.closed and not session.over and session.started:
            player = session.game.current_player
            if session.paused:
                return
            agent = session.agents.get(player)
            if player in session.seats:
                if not session.friends:
                    return  # the person to play
                if not self.away(session, player):
                    left = session.turn_since + session.turn_clock - self.clock()
                    if left > 0:  # the person's turn: wait for their move, their clock or the next request
                        session.wake.clear()
                        with contextlib.suppress(asyncio.TimeoutError):
                            await asyncio.wait_for(session.wake.wait(), left)
                        continue
                    session.seats[player].idle = True  # the turn clock ran out: away until they act again
                agent = session.standins[player]
            if self.clock() - session.touched > UNWATCHED:
                return  # nobody is looking: the agents wait until the next request for the game
            if session.pace > 0:
                await asyncio.sleep(session.pace)
                if session.closed or session.paused or session.game.current_player != player:
                    continue
                if player in session.seats and not self.away(session, player):
                    continue  # back in time: their move
            observation = session.game.observe_player(player)
            explain = session.mode == "watch"
            try:
                decision = await loop.run_in_executor(self.executor, _decide, agent, observation, explain)
                if session.closed:
                    return
                self.apply(session, int(decision["action"]), decision if explain else None)
            except Exception as err:  # an agent that fails ends its game, not the server
                session.error = f"{session.lineup[player]} (player {player}) failed: {type(err).__name__}: {err}"
                return


def _decide(agent: Any, observation: dict, explain: bool) -> dict:
    if explain and hasattr(agent, "explain"):
        return agent.explain(observation, {})
    return {"action": int(agent.act(observation, {}))}


def _json_weighed(rules: Rules, decision: dict) -> dict:
    """What an agent weighed, for JSON: moves by name, numbers rounded, best first."""
    values = decision.get("values") or {}
    moves = [
        {"action": int(a), "move": action_name(rules, int(a)), "value": round(float(v), 4)}
        for a, v in values.items()
        if np.isfinite(v)
    ]
    moves.sort(key=lambda m: m["value"], reverse="cost" not in str(decision.get("measure")))
    return {"action": int(decision["action"]), "measure": decision.get("measure"), "moves": moves}


# --------------------------------------------------------------------------------------
# Loading off the event loop
# --------------------------------------------------------------------------------------
def parse_json(body: bytes | str) -> Any:
    """A request body as JSON: 400 if it is not JSON, holds ``NaN``/``Infinity`` or text UTF-8 cannot encode."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        data = json.loads(body, parse_constant=constant)
    except (ValueError, RecursionError):
        raise RequestError("the request body is not valid JSON") from None
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError("the request holds text that UTF-8 cannot encode (a lone surrogate)") from None
    except RecursionError:
        raise RequestError("the request body is nested too deeply") from None
    return data


def start_replay(raw: bytes) -> tuple[ReplayLoader, list[dict]]:
    """Parse a replay file, check it against the limits and frame its first chunk of moves (in the replay thread)."""
    if len(raw) > MAX_REPLAY_BYTES:
        raise RequestError(f"the replay is {len(raw)} bytes; at most {MAX_REPLAY_BYTES}", 413)
    data = parse_json(raw)
    try:
        loader = ReplayLoader(Replay.from_dict(data))
        return loader, loader.chunk()
    except RequestError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as err:
        raise RequestError(f"bad replay: {err}") from None


class ReplayLoader:
    """Plays a replay back on the engine and frames it, :data:`REPLAY_CHUNK` moves per :meth:`chunk` call.

    It owns its game: only :meth:`chunk` touches it, one call at a time, in the replay thread.
    """

    def __init__(self, replay: Replay) -> None:
        within_limits(replay.rules, "the replay's rules")
        if len(replay.actions) > MAX_REPLAY_ACTIONS:
            raise RequestError(
                f"the replay has {len(replay.actions)} moves; the web app shows at most {MAX_REPLAY_ACTIONS}", 413
            )
        self.replay = replay
        game = replay_start(replay)  # the one game replay_steps plays on
        self.scratch = Session("", "replay", replay.rules, game, list(replay.players), None, {}, 0.0, 0.0, 0.0)
        self._steps = replay_steps(replay, game)
        self.framed = 0
        self.done = False

    def chunk(self) -> list[dict]:
        """The frames of the next moves (the first call: the deal too); ``RequestError`` naming a bad move."""
        frames = []
        if self.framed == 0:
            frames.append(spectator_frame(self.scratch, None, None, 0))
        try:
            for _ in range(REPLAY_CHUNK):
                step = next(self._steps, None)
                if step is None:
                    self.done = True
                    break
                event = step[1]
                if event.manche_over:
                    self.scratch.results.append(_manche_result(self.scratch, event))
                note = self.replay.notes[event.index] if self.replay.notes is not None else None
                self.framed += 1
                frames.append(spectator_frame(self.scratch, event, _shown_note(note), self.framed))
        except (ValueError, TypeError, KeyError, IndexError) as err:
            raise RequestError(f"bad replay: {err}") from None
        return frames


def _shown_note(note: Any) -> dict | None:
    """A replay's note as the page shows it (what the agent weighed), ``None`` for a note of another shape."""
    if not isinstance(note, dict) or not _is_index(note.get("action")):
        return None
    measure, moves = note.get("measure"), note.get("moves", [])
    if not (measure is None or isinstance(measure, str)) or not isinstance(moves, list):
        return None
    for move in moves:
        if not isinstance(move, dict) or not _is_index(move.get("action")) or not isinstance(move.get("move"), str):
            return None
        value = move.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            return None
    return {"action": note["action"], "measure": measure, "moves": moves}


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class AgentCache:
    """Makes agents. A learned agent's network is loaded once per server, whatever the rules: each game gets an
    agent for its rules and its own seed that shares those weights (``for_rules``), so a rules variant costs only
    its small tables, and once the network is loaded an agent is made at once for any rules it plays.

    Used from the event loop and the loader thread; holds one agent per learned agent name (the registered ones).
    """

    def __init__(self) -> None:
        self._networks: dict[str, Any] = {}
        """By learned agent name: the agent made first, whose weights every later one shares."""
        self._lock = threading.Lock()

    def ready(self, name: str, rules: Rules) -> bool:
        """``name`` is made for ``rules`` in microseconds: a baseline, or a learned agent already loaded that plays
        ``rules`` (else its error is made in the loader thread)."""
        if name in QUICK_AGENTS:
            return True
        with self._lock:
            loaded = name in self._networks
        return loaded and name in agent_registry.names(rules)

    def make(self, name: str, rules: Rules, seed: Any) -> Any:
        with self._lock:
            network = self._networks.get(name)
        if network is not None and name in agent_registry.names(rules):
            return network.for_rules(rules, seed)
        agent = agent_registry.make(name, rules, seed=seed)
        if _is_learned(agent):
            with self._lock:
                self._networks.setdefault(name, agent)
        return agent

    def warm(self) -> None:
        """Load every installed shipped learned agent (server start-up)."""
        for name in agent_registry.names():
            if name in agent_registry.SHIPPED_AGENTS:
                try:
                    agent = agent_registry.make(name)
                except (ValueError, OSError):
                    continue  # not usable here: a game asking for it gets the reason
                if _is_learned(agent):
                    with self._lock:
                        self._networks.setdefault(name, agent)
                    agent_registry.names(agent.rules)  # reads every learned agent's rules once

    def make_lineup(self, lineup: Sequence[str], rules: Rules, seeds: Sequence[Any]) -> dict[int, Any]:
        agents = {}
        for player, name in enumerate(lineup):
            if name != HUMAN:
                try:
                    agents[player] = self.make(name, rules, seeds[player])
                except (ValueError, OSError) as err:
                    raise RequestError(f"player {player}: {err}") from None
        return agents


def _is_learned(agent: Any) -> bool:
    """A network policy, per-table or universal: one that plays other rules on the same weights (``for_rules``;
    its weights are read-only when acting, so agents may share them)."""
    return callable(getattr(agent, "for_rules", None))
