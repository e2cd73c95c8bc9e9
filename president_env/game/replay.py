"""Replays: one game as a versioned JSON document, recorded while it is played and played back on the engine.

    from president_env.game.replay import Replay, load_replay, replay_steps
    from president_env.game.single import SingleGame
    game = SingleGame.table(rules, seed=7, players=["you", "heuristic-3", "mc-4", "random"], source="my-script")
    while not game.done:
        game.step(choose(game.observe_player(game.current_player)))   # illegal: ValueError, nothing changes
    Replay.of(game).save("game.json")
    for game, event in replay_steps(load_replay("game.json")):   # every action re-checked by the engine
        print(event.text(), game.cards)

A replay holds the rules (every field), the seed (``None`` where none dealt the game), the first
dealer, the roles the first manche starts from (``initial_roles: draw``) with the finishing positions they come
from (which order the Neutres), the name of the agent of
every player, the deal of every manche (before its exchange, by player, card strings with suits) and
the actions in order: the :class:`~president_env.game.single.GameRecord` the one-game holder keeps, with
the rules. Playing it back deals exactly the recorded cards at every manche (``VecGame.redeal``), so
it depends neither on the seed nor on how the engine draws its random numbers, and checks every action
against the legal moves of the moment. The format is documented in ``docs/replay.md``.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from president_env.core.actions import action_name
from president_env.core.deals import ROLE_NAMES, parse_roles, role_by_position
from president_env.core.rules import Rules
from president_env.core.user_input import short_repr
from president_env.game.single import MAX_NAME, MAX_SEED, Event, GameRecord, SingleGame, check_label, check_note

FORMAT = "president-replay"
VERSION = 1
MAX_BYTES = 4_000_000
"""Largest replay file accepted by :func:`load_replay` / :func:`loads` (a 5-manche game is about 10 to 100 kB; the
longest game the rules allow, ``rules.MAX_MANCHES``, without notes at most about 3.6 MB: 101 manches of 108 leads
followed by 7 passes each, about 35 kB a manche)."""
MAX_ACTIONS = 100_000
"""Most actions a replay holds: the longest game the rules allow has at most 88,374 (``rules.MAX_MANCHES``)."""


@dataclass
class Replay(GameRecord):
    """One game: everything needed to play it again, move by move (see ``docs/replay.md``): the rules and the
    game's :class:`~president_env.game.single.GameRecord`."""

    rules: Rules = field(kw_only=True)
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True)
    """Other top-level keys, kept as they are."""

    @classmethod
    def of(cls, game: SingleGame) -> Replay:
        """The replay of ``game`` so far (a copy of its record; ``game.ended``'s for a game an autoreset ended)."""
        record = game.record
        return cls(
            rules=game.rules,
            players=list(record.players),
            seed=record.seed,
            dealer=record.dealer,
            deals=[[list(h) for h in deal] for deal in record.deals],
            actions=list(record.actions),
            movers=list(record.movers),
            cards=[None if c is None else list(c) for c in record.cards],
            roles=None if record.roles is None else list(record.roles),
            role_positions=None if record.role_positions is None else list(record.role_positions),
            result=None if record.result is None else dict(record.result),
            source=record.source,
            notes=list(record.notes) if any(n is not None for n in record.notes) else None,
        )

    # ---- JSON -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The replay as the JSON document of ``docs/replay.md`` (format, version, rules, deals, every move)."""
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
        if self.role_positions is not None:
            data["role_positions"] = list(self.role_positions)
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
        """:meth:`to_dict` as compact JSON text (UTF-8 card names kept as they are)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    def save(self, path: str | os.PathLike, overwrite: bool = True) -> Path:
        """Write the replay as JSON to ``path`` (folders created); returns the path.

        Atomic: the text goes to a temporary file in the same folder, flushed to disk, which then replaces
        ``path``, so a failure part-way leaves what was there. ``ValueError`` for text UTF-8 cannot hold;
        ``FileExistsError`` when ``path`` exists and ``overwrite`` is false (the file is left as it is).
        """
        path = Path(path)
        data = self.to_dict()
        Replay.from_dict(data)  # what load_replay would refuse is not written (it names the field)
        encoded = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        # A short name of its own: the target's name may already be the longest the file system allows.
        temporary = path.with_name(f".replay-{os.getpid()}-{secrets.token_hex(4)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(encoded)
                file.flush()
                os.fsync(file.fileno())
            if overwrite:
                os.replace(temporary, path)
            else:
                os.link(temporary, path)  # fails, atomically, if path exists
                temporary.unlink()
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
        if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
            raise ValueError(f"replay seed must be null or an integer from 0 to 2**63-1, got {seed!r}")
        dealer = data["dealer"]
        if not _is_int(dealer) or not 0 <= dealer < n:
            raise ValueError(f"replay dealer must be a seat from 0 to {n - 1}, got {dealer!r}")
        players = data["players"]
        if not isinstance(players, list) or len(players) != n:
            raise ValueError(f"replay players must be a list of {n} names (one per player)")
        for i, name in enumerate(players):
            reason = check_label(name)
            if reason is not None:
                raise ValueError(f"replay players[{i}] {reason}")
        source = data.get("source", "")
        if not isinstance(source, str) or len(source) > MAX_NAME:
            raise ValueError(f"replay source must be a text of at most {MAX_NAME} characters, got {short_repr(source)}")
        roles = data.get("roles")
        if roles is not None and (
            not isinstance(roles, list) or len(roles) != n or not all(r in ROLE_NAMES for r in roles)
        ):
            raise ValueError(f"replay roles must be null or {n} role names ({', '.join(ROLE_NAMES)})")
        role_positions = data.get("role_positions")
        if role_positions is not None:
            role_positions = _check_role_positions(rules, role_positions, roles)
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
        known |= {"actions", "result", "notes", "role_positions"}
        return cls(
            rules=rules,
            players=list(players),
            seed=None if seed is None else int(seed),
            dealer=int(dealer),
            deals=deals,
            actions=actions,
            movers=movers,
            cards=cards,
            roles=None if roles is None else list(roles),
            role_positions=role_positions,
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
    except ValueError as err:  # Python's limit on integer digits; no replay field needs such a number
        if "integer string conversion" not in str(err):
            raise
        raise ValueError("replay holds an integer of more than 4300 digits; no replay field takes one") from None
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


def check_new_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` if a new file can be written there (its folder exists and is writable, or can be created);
    else a ``ValueError`` that starts with ``what`` (``--save-replay``). An existing file is refused: the
    caller writes with ``overwrite=False`` and never replaces one. Checked before any long work."""
    path = Path(path)
    name = short_repr(str(path), 200)
    if path.is_dir():
        raise ValueError(f"{what} {name} is a folder; give the path of a new file")
    if path.exists() or path.is_symlink():
        raise ValueError(f"{what} {name} already exists; give a new path (an existing file is never overwritten)")
    folder = path.parent
    while not folder.exists():  # the first folder that exists: the others are created on saving
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{what} {name}: {short_repr(str(folder), 200)} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {name}: cannot write in the folder {short_repr(str(folder), 200)}")
    return path


def _check_role_positions(rules: Rules, positions: Any, roles: list[str] | None) -> list[int]:
    """``positions`` (a replay's ``role_positions``), checked: each of ``0..n-1`` once, and the positions of the
    recorded ``roles`` (required with them)."""
    n = rules.n_players
    if roles is None:
        raise ValueError("replay role_positions are given without roles")
    try:
        if not isinstance(positions, list) or not all(_is_int(p) for p in positions):
            raise ValueError("not a list of integers")
        parsed = parse_roles(rules, positions)
    except ValueError:
        raise ValueError(
            f"replay role_positions must be null or {n} finishing positions (each of 0..{n - 1} once), "
            f"got {short_repr(positions)}"
        ) from None
    if [ROLE_NAMES[code] for code in role_by_position(n)[parsed]] != roles:
        raise ValueError(f"replay role_positions {positions} do not give the roles {roles}")
    return [int(p) for p in positions]


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


def start_replay(replay: Replay) -> SingleGame:
    """The game ``replay`` starts: its first deal, roles and dealer, on a holder that stays over at the end and
    scores in points; ``ValueError`` (``replay manche 1: ...``) if the first manche cannot be dealt so."""
    try:
        game = SingleGame.table(replay.rules, seed=replay.seed, players=replay.players, source=replay.source)
        game.reset(
            seed=replay.seed,
            deals=[replay.deals[0]],
            # A manche with roles is dealt by its Trou du cul: the recorded dealer is then implied, not given.
            dealers=None if replay.roles is not None else [replay.dealer],
            roles=None if replay.roles is None else [list(replay.role_positions or replay.roles)],
        )
    except ValueError as err:
        raise ValueError(f"replay manche 1: {err}") from None
    return game


def replay_steps(replay: Replay, game: SingleGame | None = None) -> Iterator[tuple[SingleGame, Event]]:
    """Play ``replay`` back on the engine: yields the game and the event after every action.

    ``game``: the game :func:`start_replay` started for ``replay``, to play it on (default: started here, when the
    first step is asked for). Every manche is dealt the recorded cards; ``ValueError`` names the first deal or
    action that does not fit.
    """
    rules = replay.rules
    if game is None:
        game = start_replay(replay)
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
            number = len(game.record.deals) - 1
            if number >= len(replay.deals):
                raise ValueError(f"replay has no deal for manche {number + 1}")
            try:
                game.redeal(replay.deals[number])
            except ValueError as err:
                raise ValueError(f"replay manche {number + 1}: {err}") from None
        yield game, event
    if len(replay.deals) != len(game.record.deals):
        raise ValueError(
            f"replay has {len(replay.deals)} deals but its actions start {len(game.record.deals)} manche(s)"
        )
    if replay.result is not None:
        actual = game.record.result
        if actual is None:
            raise ValueError(f"replay has a result but its {len(replay.actions)} actions do not finish the game")
        if any(replay.result.get(key) != actual[key] for key in ("scores", "winner", "manches")):
            raise ValueError(f"replay result {short_repr(replay.result)} differs from the game played back ({actual})")


__all__ = [
    "FORMAT",
    "MAX_BYTES",
    "VERSION",
    "Replay",
    "check_new_file",
    "load_replay",
    "loads",
    "replay_steps",
    "start_replay",
]
