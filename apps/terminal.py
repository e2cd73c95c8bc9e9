"""``president-play``: play a game of Président in the terminal against AI opponents.

Needs the ``play`` extra (``pip install "president-env[play]"``: rich and prompt_toolkit, used through
``president_env.apps.terminal_ui``); without it the command says so and exits with code 2.

    president-play                                        # you against three heuristic-3, standard rules
    president-play --opponents mc-5,heuristic-3,ppo-universal --manches 3 --seed 7
    president-play --rules quebec --opponents random --seat 0 --name Alice --ascii
    python -m president_env.apps.terminal --rules configs/rules/party.yaml --manches 2

**Options.**

- ``--opponents NAMES``: comma-separated agent names as accepted by ``president_env.agents.make``
  (``random``, ``heuristic-1|2|3``, ``mc-4``, ``mc-5``, ``ppo-universal`` or a checkpoint path);
  only agents that can play the chosen rules (``president_env.agents.names(rules)``) are accepted.
  Either one name, which then plays every other seat, or exactly ``n_players - 1`` names, which
  sit clockwise from your left: the first name is the player after you. Any other count is an
  error naming the expected count (default: ``heuristic-3``).
- ``--rules PRESET|PATH``: a preset of ``configs/rules/`` (``standard``, ``quebec``, ``big_table``,
  ``family``, ``party``, ``or_nothing``) or a rules YAML file (default: ``standard``).
- ``--manches N``: a game is a fixed number of manches, the ``manches`` field of the rules; this
  overrides it (default: the rules' own value, 5 in every preset). A tie for the best total adds
  one decisive manche, whose points are not added (docs/RULES.md).
- ``--seat S``: you are ``player_S`` and sit at seat ``S`` at the start (with ``reseat_by_role``
  the seats follow the roles, from the first manche on when roles are drawn). Default: drawn from
  the seed, so a replay with the same ``--seed`` puts you in the same seat.
- ``--seed N``: one ``numpy.random.SeedSequence`` whose children drive the deals, your seat and
  each AI's own generator: the same seed and the same inputs replay the same game. Without it a
  fresh seed is drawn and printed.
- ``--save-replay PATH``: write the game as a JSON replay (``docs/replay.md``) when it ends or is
  abandoned; ``president-web`` plays it back. The path is checked before the game: a new file in a
  folder that can be written (folders are created); an existing file is refused, never overwritten.
- ``--name NAME`` (default ``You``), ``--ascii`` (suit letters C D H S and plain ASCII instead of
  ♣ ♦ ♥ ♠; chosen automatically when the output's encoding is not UTF).

**Output** goes through rich: hearts and diamonds in red, each finished manche (then its last trick) and the
standings as tables sized to the terminal. It is plain text, without escape codes, when the output is not a
terminal or ``NO_COLOR`` is set.

**What you type** when it is your turn (case does not matter; ``help`` lists it):

- ``7 7`` or ``7x2``: play two 7s; ``10``/``T``, ``J``, ``Q``, ``K``, ``A``, ``2``, ``JK``;
  ``play`` in front is allowed. With wild 2s, ``7 7 2`` is three 7s (naturals are used first).
- ``pass`` or ``p``.
- ``give 3`` in the exchange phase (the Président and Vice-Président give back cards of their
  choice); ``give 3 5`` gives several at once.
- ``#N``: move ``N`` of the listed legal moves. A bare number is a rank when it names one (``7``
  plays one 7, as the list writes it) and a move number otherwise (``1``, ``11``).
- ``hand``, ``table``, ``moves``, ``help``, ``quit``.

At a terminal the line is edited with prompt_toolkit: Tab completes the legal moves of the
position (as listed, and ``7x2`` for several cards), the up arrow recalls earlier lines, and the
bottom toolbar counts the legal moves. Piped input (scripts, tests) is read line by line and echoed
after the prompt.

Invalid input (anything else, numbers in digits other than ASCII 0-9 such as ``²`` or ``①``
included) is answered with the reason and a new prompt; why a move is illegal is the engine's
decision (``engine.why_illegal``), worded here by :func:`illegal_text`. **Exit codes**: 0 the game
was played to its end (the standings are printed) or the player left (``quit``, or Ctrl-D: the end of
input), the two ways to leave; 2 bad arguments (an unknown agent or one that cannot play the rules, a
wrong number of opponents, bad rules, a ``--save-replay`` path that exists or cannot be written), in one
line before any game starts; 130 interrupted (Ctrl-C).

The game runs on the AEC env (``president_env.env(render_mode="ansi", reward_mode="points")``), whose
one-game holder (``env.unwrapped.game``, :class:`president_env.game.single.SingleGame`) follows the cards with
their suits, says what each step did (its events) and records the replay; the table is drawn from it by
``president_env.game.render``, the AI seats act through ``agent.act(observation, info)``, each manche's points are
the env's rewards, and typed cards become an action by ``actions.typed_action``, as in ``president-web``.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

import president_env as pe
from president_env import agents as agent_registry
from president_env.core import engine
from president_env.core.actions import typed_action
from president_env.core.cards import JOKER, RANK_NAMES, TWO, card_rank, format_cards, parse_card, rank_index
from president_env.core.deals import ROLE_NAMES
from president_env.core.engine import IllegalMove, tables
from president_env.core.presets import resolve_rules
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser, RetiredAgentWarning, one_line_warnings, short_repr
from president_env.game.render import ROLE_LABELS, ordinal, pretty_cards, render_table
from president_env.game.replay import Replay, check_new_file
from president_env.game.single import Event, SingleGame

try:
    from . import terminal_ui as ui
except ModuleNotFoundError as err:  # the play extra is missing: main() says so
    if (err.name or "").partition(".")[0] not in ("rich", "prompt_toolkit"):
        raise
    ui = None  # type: ignore[assignment]

EXIT_DONE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130
DEFAULT_OPPONENT = "heuristic-3"
NEEDS_PLAY_EXTRA = 'president-play needs the play extra: pip install "president-env[play]"'

_RANK_TOKEN = re.compile(r"(10|[2-9TJQKA]|JK)(?:X([0-9]+))?")  # ASCII digits only: int() reads "²" too

HELP = """\
Moves:  7 7 | 7x2     play two 7s (10 or T, J, Q, K, A, 2, JK; "play" in front is allowed)
        pass | p      pass (not when you lead the trick)
        give 3        exchange phase: give back one 3 (give 3 5: several cards)
        #2            move 2 of the list (a bare number is a rank, 7, or else a move number, 1 or 11)
Other:  hand (your cards), table (the whole table), moves (the legal moves), help, quit
At a terminal, Tab completes the legal moves and the up arrow recalls what you typed."""


class InputError(ValueError):
    """A line the player typed that cannot be played now; the message says why."""


class EndOfInput(Exception):
    """Standard input was closed."""


class QuitGame(Exception):
    """The player typed ``quit``."""


@dataclass(frozen=True)
class MancheResult:
    """One finished manche, by player index."""

    number: int
    """1-based; the decisive manche is numbered after the regular ones."""
    decisive: bool
    positions: tuple[int, ...]
    """Finishing position (0 = out first)."""
    points: tuple[float, ...]
    """The env's rewards for the manche (``reward_mode="points"``): its points."""


# --------------------------------------------------------------------------------------
# Parsing what the player types
# --------------------------------------------------------------------------------------
def parse_ranks(tokens: list[str]) -> list[int]:
    """Ranks of tokens like ``7``, ``t``, ``jk`` or ``7x2`` (two 7s); ``InputError`` naming a bad token."""
    ranks: list[int] = []
    for token in tokens:
        match = _RANK_TOKEN.fullmatch(token.upper())
        if match is None:
            if _is_card(token):
                rank = RANK_NAMES[parse_card(token)[0]]
                raise InputError(f"type ranks without suits ({rank}, not {token}): suits do not matter")
            raise InputError(
                f"{short_repr(token, 40)} is not a rank; ranks are 3 4 5 6 7 8 9 10 J Q K A 2 (T for 10) and JK"
            )
        if match[2] is not None and len(match[2].lstrip("0")) > 2:
            raise InputError(f"{short_repr(token, 40)}: a play holds at most 8 cards of one rank")
        count = int(match[2]) if match[2] else 1
        if count < 1:
            raise InputError(f"{token}: the number after x counts cards and must be at least 1")
        ranks += [rank_index(match[1])] * count
    return ranks


def parse_command(line: str) -> tuple:
    """One typed line as a command tuple: ``("play", ranks)``, ``("give", ranks)``, ``("pass",)``,
    ``("pick", n)``, ``("number", n)`` (a bare number), ``("help",)``, ``("hand",)``, ``("table",)``,
    ``("moves",)``, ``("quit",)`` or ``("empty",)``. ``InputError`` for text that is none of them."""
    text = re.sub(r"\s*[x×*]\s*(?=[0-9])", "x", line.strip().lower().replace(",", " "))
    words = text.split()
    if not words:
        return ("empty",)
    head, rest = words[0], words[1:]
    simple = {"pass": "pass", "p": "pass", "help": "help", "?": "help", "hand": "hand", "table": "table"}
    simple.update({"moves": "moves", "quit": "quit", "exit": "quit"})
    if head in simple and not rest:
        return (simple[head],)
    if head in ("give", "g"):
        if not rest:
            raise InputError("give what? e.g. give 3")
        return ("give", parse_ranks(rest))
    if head.startswith("#"):
        if rest or _DIGITS.fullmatch(head[1:]) is None:
            raise InputError(f"{short_repr(text, 40)}: a move number is # and digits, e.g. #2")
        return ("pick", _move_number(head[1:]))
    if head == "play":
        if not rest:
            raise InputError("play what? e.g. play 7 7")
        return ("play", parse_ranks(rest))
    if _DIGITS.fullmatch(head) and not rest:
        return ("number", _move_number(head))
    if _RANK_TOKEN.fullmatch(head.upper()) is None and not _is_card(head):
        raise InputError(
            f"unknown command {short_repr(line.strip(), 40)}; type a move such as 7 7, 7x2, pass or #1 (help lists all)"
        )
    return ("play", parse_ranks(words))


_DIGITS = re.compile("[0-9]+")


def _move_number(digits: str) -> int:
    """A number typed in ASCII digits; one past any list of moves stays an ``InputError``, not a huge ``int``."""
    if len(digits.lstrip("0")) > 6:
        raise InputError(f"no move has a number of {len(digits.lstrip('0'))} digits: the list is much shorter")
    return int(digits)


def _is_card(token: str) -> bool:
    try:
        parse_card(token)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------
class TerminalGame:
    """One game: a human at one seat, AI agents at the others, text in and out.

    Args:
        rules: the rules (``manches`` already set).
        opponents: agent name by player index, ``None`` at the human's seat.
        human: the human's player index.
        seed: the root ``SeedSequence`` (deals, and one child per AI).
        stdin, stdout: the streams of the conversation.
        name: the human's display name.
        ascii_only: plain ASCII output.
    """

    def __init__(
        self,
        rules: Rules,
        opponents: list[str | None],
        human: int,
        seed: np.random.SeedSequence,
        stdin: TextIO,
        stdout: TextIO,
        name: str = "You",
        ascii_only: bool = False,
    ) -> None:
        self.rules, self.human, self.name = rules, human, name
        self.lineup = opponents
        self.screen = ui.Screen(stdout, ascii_only)
        self.completer = ui.MoveCompleter()
        self.keyboard = ui.Keyboard(stdin, stdout, self.screen, self.completer)
        env_seed, agent_seeds = seed.spawn(2)
        self.env_seed = int(env_seed.generate_state(1)[0])
        seeds = agent_seeds.spawn(rules.n_players)
        self.agents: dict[int, Any] = {}
        # A learned agent warns when it plays other rules than it was trained for: tell the player on our stream.
        # A retired name is the command line's business: its warning goes on (one line on stderr in main).
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for player, agent in enumerate(opponents):
                if agent is not None:
                    self.agents[player] = agent_registry.make(agent, rules, seed=seeds[player])
        retired = {str(w.message): w for w in caught if issubclass(w.category, RetiredAgentWarning)}
        for note in retired.values():
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
        self.notes = sorted({str(w.message) for w in caught} - set(retired))
        self.env = pe.env(rules=rules, render_mode="ansi", reward_mode="points")
        self.raw = self.env.unwrapped
        self.agent_names = list(self.raw.possible_agents)
        self.results: list[MancheResult] = []
        self.totals: list[int] = [0] * rules.n_players
        self.winner: int | None = None
        self.replay_path: str | None = None

    # ---- output -----------------------------------------------------------------
    def say(self, text: str = "", style: str = "") -> None:
        self.screen.say(text, style)

    def ask(self, prompt: str) -> str:
        try:
            return self.keyboard.read(prompt)
        except EOFError:
            raise EndOfInput from None

    def label(self, player: int) -> str:
        return self.name if player == self.human else self.agent_names[player]

    def who(self, player: int) -> str:
        """``player_2 (Vice-Trou)``: the name and the current role."""
        role = self.raw.infos[self.agent_names[player]].get("role")
        return self.label(player) + (f" ({ROLE_LABELS[ROLE_NAMES.index(role)]})" if role else "")

    @property
    def game(self) -> SingleGame:
        """The one-game holder the env holds: cards with suits, events, record."""
        return self.raw.game

    def cards(self, player: int) -> str:
        return pretty_cards(self.game.cards[player])

    def verb(self, player: int, third: str, second: str) -> str:
        """``third`` (``leads``) after a player's name, ``second`` (``lead``) after the human's name ``You``."""
        return second if player == self.human and self.name.lower() == "you" else third

    def trick_won(self, event: Event) -> str:
        """Who won the trick ``event`` closed and who leads the next (``trick_won_by``, ``next_leader``):
        ``player_1 won the trick and is out; You lead``."""
        taker, leader = event.trick_won_by, event.next_leader
        if leader == taker:
            return f"{self.label(taker)} won the trick and {self.verb(taker, 'leads', 'lead')}"
        # The winner does not lead: out (a player going out leaves the lead to the next one holding cards).
        out = f" and {self.verb(taker, 'is', 'are')} out"
        return f"{self.label(taker)} won the trick{out}; {self.label(leader)} {self.verb(leader, 'leads', 'lead')}"

    # ---- what the human sees ------------------------------------------------------
    def view(self) -> Any:
        """The human's observation, decoded (``president_env.agents.decode``): one row, relative seats."""
        return agent_registry.decode(self.rules, self.raw.observe(self.agent_names[self.human])["observation"])

    def relative(self, player: int) -> int:
        """Where ``player`` sits in the human's observation (0 = the human, then clockwise)."""
        seat = self.raw.infos[self.agent_names[player]]["seat"]
        return (seat - self.raw.infos[self.agent_names[self.human]]["seat"]) % self.rules.n_players

    # ---- the game loop -------------------------------------------------------------
    def run(self) -> int:
        """Play the game to its end; returns the exit code."""
        try:
            self.env.reset(seed=self.env_seed)
            self.game.name_players([agent or "human" for agent in self.lineup], source="president-play")
            self.introduce()
            self.start_manche()
            for agent in self.env.agent_iter():
                observation, _, terminated, truncated, info = self.env.last()
                if terminated or truncated:
                    self.env.step(None)
                    continue
                player = self.agent_names.index(agent)
                if player == self.human:
                    actions = self.ask_move(observation)
                else:
                    actions = [int(self.agents[player].act(observation, info))]
                for action in actions:
                    self.step(player, action)
            self.say()
            self.standings(final=True)
            self.save_replay()
            return EXIT_DONE
        except EndOfInput:
            return self.abandon("End of input: the game is abandoned.", EXIT_DONE)
        except QuitGame:
            return self.abandon("You quit: the game is abandoned.", EXIT_DONE)
        except KeyboardInterrupt:
            return self.abandon("Interrupted: the game is abandoned.", EXIT_INTERRUPTED)

    def save_replay(self) -> None:
        """Write the game so far to ``--save-replay``'s path, if one was given."""
        if self.replay_path and self.raw.last_event is not None:
            game = self.game.ended or self.game  # the env deals the next game in the step that ends one
            try:
                path = Replay.of(game).save(self.replay_path, overwrite=False)
            except (OSError, ValueError) as err:
                self.say(f"Could not save the replay: {err}")
                return
            self.say(f"Replay saved to {path}.")

    def abandon(self, message: str, code: int) -> int:
        self.save_replay()
        self.say()
        self.say(message)
        if self.results:
            self.standings(final=False)
        return code

    def introduce(self) -> None:
        rules = self.rules
        self.say(f"Président: {rules.n_players} players, {_count(rules.manches, 'manche')}, {rules.n_cards} cards.")
        for note in self.notes:
            self.say(f"Note: {note}")
        seats = []
        seat_of = [self.raw.infos[self.agent_names[player]]["seat"] for player in range(rules.n_players)]
        for player in sorted(range(rules.n_players), key=seat_of.__getitem__):  # seated by a draw: not player i
            agent = self.lineup[player]
            seats.append(f"seat {seat_of[player]} {self.label(player)}" + (f" [{agent}]" if agent else " (you)"))
        self.say("At the table, clockwise: " + ", ".join(seats) + ".")
        self.say('Type "help" at your turn for the moves you can type.')

    def start_manche(self) -> None:
        """Announce a manche: its number, roles, and the public half of the exchange."""
        info = self.raw.infos[self.agent_names[self.human]]
        if info["decisive"]:
            tied = [self.label(p) for p, tied in enumerate(self.game.tied) if tied]
            title = f"Decisive manche (tied: {', '.join(tied)}; its points are not added)"
        else:
            title = f"Manche {info['manche'] + 1} of {self.rules.manches}"
        self.say()
        self.say(f"=== {title} ===", "bold")
        roles = [self.who(p) for p in range(self.rules.n_players) if self.raw.infos[self.agent_names[p]]["role"]]
        if roles:
            self.say("Roles: " + ", ".join(roles) + ".")
        self.announce_exchange()
        self.say(f"Your hand ({len(self.game.cards[self.human])}): {self.cards(self.human)}")

    def announce_exchange(self) -> None:
        """Who exchanges with whom and how many cards (public), and what the human gave or received."""
        # The pairs follow the previous finishing positions (the engine's state, which the table renderer reads
        # too); roles alone cannot tell two Neutres apart when an exchange entry pairs them.
        game = self.game
        player_with_pos = {position: game.player_at_seat[seat] for seat, position in enumerate(game.prev_pos)}
        if -1 in player_with_pos:
            return  # no roles, no exchange
        view = self.view()
        for high_pos, low_pos, k in self.rules.exchange_pairs:
            high, low = player_with_pos[high_pos], player_with_pos[low_pos]
            self.say(
                f"Exchange: {_best(k)} of {self.who(low)} {'go' if k > 1 else 'goes'} to {self.who(high)}, "
                f"who gives back {_count(k, 'card')} of their choice."
            )
            if self.human == low:
                self.say(f"  You gave your {_best(k).removeprefix('the ')}: {_rank_list(view.gave[0])}.")
            elif self.human == high:
                self.say(
                    f"  You received: {_rank_list(view.received[0])}; you give back {_count(k, 'card')} at your turn."
                )

    def step(self, player: int, action: int) -> None:
        """Play ``action`` for ``player`` and tell the table what happened, as the step's :class:`Event` says: the
        action, and what it did to the table (who went out, who won the trick, the exchange over, the manche over)."""
        actor = self.who(player)
        self.env.step(action)
        event = self.raw.last_event  # the holder's record of the step
        what = event.what(show_cards=pretty_cards)
        if event.kind == "give" and player == self.human:
            what = f"gave back a {pe.decode(self.rules, action)[1]}"
        self.say(f"  {actor} {what}")
        if event.manche_over:
            self.end_manche(event)
            return
        if event.went_out:
            penalty = f" (on {offence(event.cards)}: ranked last)" if event.penalized else ""
            self.say(f"  -- out {ordinal(event.out_order + 1)}: {self.label(player)}{penalty}")
        if event.trick_won_by is not None:
            self.say(f"  -- {self.trick_won(event)}")
        if event.exchange_over:
            view = self.view()
            if view.gave[0].any() or view.received[0].any():
                gave, received = _rank_list(view.gave[0]), _rank_list(view.received[0])
                self.say(f"  Exchange over: you gave {gave} and received {received}.")

    def end_manche(self, event: Event) -> None:
        """The manche ``event`` ended: its result, the standings so far, its last trick, and the next manche."""
        infos = [self.raw.infos[a] for a in self.agent_names]
        result = MancheResult(
            number=event.manche + 1,
            decisive=event.decisive,
            positions=tuple(event.positions),
            points=tuple(float(points) for points in event.rewards),
        )
        self.results.append(result)
        self.totals = [int(infos[0]["scores"][a]) for a in self.agent_names]
        if "winner" in infos[0]:
            self.winner = self.agent_names.index(infos[0]["winner"])
        self.show_result(result)
        trick = (self.game.ended or self.game).last_trick()  # the game that just ended, if it did
        self.say("Last trick: " + "; ".join(f"{self.label(e.player)} {e.what(show_cards=pretty_cards)}" for e in trick))
        if not any(self.raw.terminations.values()):
            self.start_manche()

    def show_result(self, result: MancheResult) -> None:
        """A finished manche as a table: finishing order, the role won, the manche's points and the totals."""
        order = sorted(range(self.rules.n_players), key=result.positions.__getitem__)
        role_by_pos = tables(self.rules).role_by_pos
        title = "Decisive manche (its points are not added)" if result.decisive else f"Manche {result.number}"
        self.say()
        self.say(f"{title} over:", "bold")
        rows = [
            [
                ordinal(result.positions[p] + 1),
                self.label(p),
                ROLE_LABELS[role_by_pos[result.positions[p]]],
                f"+{_number(result.points[p])}",
                str(self.totals[p]),
            ]
            for p in order
        ]
        self.screen.table(["Place", "Player", "Role", "Points", "Total"], rows, right=[False] * 3 + [True] * 2)

    def standings(self, final: bool) -> None:
        """The ranking as a table: each player's points in every manche (the finishing place in a decisive
        manche, whose points are not added), the total and the winner."""
        self.say("=== Final standings ===" if final else "=== Standings so far ===", "bold")
        regular = [r for r in self.results if not r.decisive]
        decisive = [r for r in self.results if r.decisive]
        headers = ["Place", "Player", "Agent", *(f"Manche {r.number}" for r in regular)]
        headers += ["Decisive"] * len(decisive) + ["Total", ""]
        # The winner of a decisive manche goes first among the tied.
        ranking = sorted(range(self.rules.n_players), key=lambda p: (-self.totals[p], p != self.winner, p))
        rows = [
            [
                f"{place}.",
                self.label(player),
                self.lineup[player] or "you",
                *(f"+{_number(r.points[player])}" for r in regular),
                *(ordinal(r.positions[player] + 1) for r in decisive),
                str(self.totals[player]),
                "<- winner" if player == self.winner else "",
            ]
            for place, player in enumerate(ranking, start=1)
        ]
        self.screen.table(headers, rows, right=[False] * 3 + [True] * (len(self.results) + 1))

    # ---- the human's turn ----------------------------------------------------------
    def ask_move(self, observation: dict) -> list[int]:
        """Show the table and the legal moves, read lines until one is playable; returns its action(s)."""
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        self.completer.moves = [self.move_forms(action) for action in legal]
        self.say()
        self.show_table()
        self.show_moves(legal)
        while True:
            line = self.ask(f"{self.name}> ")
            try:
                command = parse_command(line)
                if command[0] == "quit":
                    raise QuitGame
                if command[0] in ("help", "hand", "table", "moves", "empty"):
                    self.show(command[0], legal)
                    continue
                return self.resolve(command, legal)
            except InputError as err:
                self.say(f"  Not possible: {err}. Try again.")

    def show(self, what: str, legal: list[int]) -> None:
        if what == "help":
            self.say(HELP)
        elif what == "hand":
            self.say(f"Your hand ({len(self.game.cards[self.human])}): {self.cards(self.human)}")
        elif what == "table":
            self.show_table()
        else:
            self.show_moves(legal)

    def show_table(self) -> None:
        game = self.game
        names = [self.label(player) for player in range(self.rules.n_players)]
        you = self.human if self.name.lower() == "you" else None  # "You lead", "You give back"
        self.say(
            render_table(
                self.rules, game.state, 0, self.human, game.cards, trick_cards=game.trick_cards, names=names, you=you
            )
        )

    def move_text(self, action: int) -> str:
        """What to type for ``action``: ``pass``, ``give 3``, ``7 7`` (with wild 2s: ``7 7 2``)."""
        decoded = pe.decode(self.rules, action)
        if decoded[0] != "play":
            return " ".join(decoded)
        rank, count = rank_index(decoded[1]), decoded[2]
        naturals = min(count, int(self.view().hand[0, rank]))
        return " ".join([decoded[1]] * naturals + [RANK_NAMES[TWO]] * (count - naturals))

    def move_forms(self, action: int) -> tuple[str, ...]:
        """The ways to type ``action`` that Tab completes: the listed text, then ``7x2`` for several cards."""
        decoded = pe.decode(self.rules, action)
        text = self.move_text(action)
        return (text, f"{decoded[1]}x{decoded[2]}") if decoded[0] == "play" and decoded[2] > 1 else (text,)

    def show_moves(self, legal: list[int]) -> None:
        self.screen.moves("Legal moves:", [(f"#{i}", self.move_text(a)) for i, a in enumerate(legal, start=1)])

    def resolve(self, command: tuple, legal: list[int]) -> list[int]:
        """The action(s) of a parsed command, or ``InputError`` saying why it cannot be played now."""
        kind = command[0]
        if kind == "pick":
            if not 1 <= command[1] <= len(legal):
                raise InputError(f"there is no move #{command[1]}; the moves are #1 to #{len(legal)}")
            return [legal[command[1] - 1]]
        if kind == "number":
            return [self.resolve_number(command[1], legal)]
        if kind == "pass":
            return [self.check(pe.PASS, legal)]
        if kind == "give":
            return self.resolve_give(command[1], legal)
        return [self.check(self.typed("play", command[1]), legal)]

    def resolve_number(self, number: int, legal: list[int]) -> int:
        """A bare number: one card of that rank when it names a rank (``7``, as the list writes a single 7),
        else the number of a listed move (``1``, ``11``). A rank is never read as a move number, so a
        mistyped card is an error with a hint, not a move the player did not mean."""
        if str(number) not in RANK_NAMES:
            return self.resolve(("pick", number), legal)[0]
        try:
            return self.resolve(("play", [rank_index(str(number))]), legal)[0]
        except InputError as err:
            hint = f" (for move #{number} type #{number})" if number <= len(legal) else ""
            raise InputError(f"{err}{hint}") from None

    def typed(self, kind: str, ranks: list[int]) -> int:
        """The action of typed cards (``actions.typed_action``, the web app's too); ``InputError`` for cards that are
        no action of these rules (whether it is legal now is for :meth:`check` to say)."""
        try:
            return typed_action(self.rules, kind, ranks)
        except ValueError as err:
            raise InputError(str(err)) from None

    def resolve_give(self, ranks: list[int], legal: list[int]) -> list[int]:
        """The gives of ``give 3`` or ``give 3 5``: the engine judges the first; several must fit the hand and the
        cards left to give back."""
        actions = [self.typed("give", [rank]) for rank in ranks]
        self.check(actions[0], legal)
        view = self.view()
        left = int(view.gives_left[0])
        if len(ranks) > left:
            raise InputError(f"you have {_count(left, 'card')} left to give back, not {len(ranks)}")
        for rank, wanted in Counter(ranks).items():
            held, name = int(view.hand[0, rank]), RANK_NAMES[rank]
            if held < wanted:
                raise InputError(f"you hold only {held} × {name}" if held else f"you hold no {name}")
        return actions

    def check(self, action: int, legal: list[int]) -> int:
        """``action`` if it is legal now, else ``InputError`` with the engine's reason in the human's terms."""
        if action in legal:
            return action
        raise InputError(illegal_text(engine.why_illegal(self.rules, self.game.state, 0, action)))


def illegal_text(why: IllegalMove) -> str:
    """The human's sentence for each reason of ``engine.ILLEGAL_REASONS`` (the engine decides which)."""
    reason = why.reason
    rank = RANK_NAMES[why.rank] if why.rank >= 0 else ""
    on_pile = " ".join([RANK_NAMES[why.trick_rank]] * why.trick_count) if why.trick_rank >= 0 else ""
    if reason == engine.OUT_OF_RANGE:
        return f"{short_repr(why.action, 20)} is not a move of this game"
    if reason == engine.GAME_OVER:
        return "the game is over"
    if reason == engine.MUST_GIVE:
        return f"first give back {_count(why.gives_left, 'card')} to your exchange partner: give RANK"
    if reason == engine.NOTHING_TO_GIVE:
        return f"you hold no {rank}"
    if reason == engine.GIVE_OUTSIDE_EXCHANGE:
        return "give is for the exchange at the start of a manche; now play cards or pass"
    if reason == engine.LEADER_CANNOT_PASS:
        return "you lead this trick, so you cannot pass: play any cards of one rank"
    if reason == engine.NOT_ENOUGH_CARDS:
        if why.held == 0:
            return f"you hold no {rank}"
        wild = " (wild 2s included)" if why.wild else ""
        return f"you hold only {why.held} × {rank}{wild}, not {why.count}"
    if reason == engine.WRONG_COUNT:
        return f"this trick is played {_count(why.trick_count, 'card')} at a time (on the pile: {on_pile})"
    if reason == engine.OR_NOTHING:
        return f"or nothing: you must play {RANK_NAMES[why.trick_rank]} again, or pass"
    if reason == engine.DOES_NOT_BEAT:
        order = " (revolution: lower ranks are stronger now)" if why.revolution else ""
        return f"{' '.join([rank] * why.count)} does not beat the {on_pile} on the pile{order}"
    raise ValueError(f"unknown reason {reason!r}")


def offence(cards: list[str]) -> str:
    """What a penalized going-out play held (``finish_on_two: penalty``): ``a 2``, ``a joker`` or ``a 2 and a
    joker``."""
    held = [name for name, rank in (("a 2", TWO), ("a joker", JOKER)) if any(card_rank(c) == rank for c in cards)]
    return " and ".join(held)


def _count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _best(k: int) -> str:
    """``the best card``, ``the 2 best cards``."""
    return "the best card" if k == 1 else f"the {k} best cards"


def _rank_list(counts: np.ndarray) -> str:
    return format_cards(counts) or "nothing yet"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------
def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="president-play",
        description="Play Président in the terminal against AI opponents.",
        epilog="At your turn type a move (7 7, 7x2, pass, give 3, #2) or help.",
    )
    parser.add_argument(
        "--opponents",
        default=DEFAULT_OPPONENT,
        help="comma-separated agents: one name for every other seat, or n_players - 1 names clockwise from your "
        f"left ({', '.join(agent_registry.names())}, or a checkpoint path; default: %(default)s)",
    )
    parser.add_argument("--rules", default="standard", help="rules preset name or YAML path (default: standard)")
    parser.add_argument("--manches", type=int, help="manches in the game (default: the rules' value)")
    parser.add_argument("--seat", type=int, help="your seat, 0..n_players-1 (default: drawn from the seed)")
    parser.add_argument("--seed", type=int, help="seed of the deals, your seat and the AIs (default: a fresh one)")
    parser.add_argument("--name", default="You", help="your name at the table (default: %(default)s)")
    parser.add_argument("--ascii", action="store_true", help="plain ASCII: suit letters C D H S instead of symbols")
    parser.add_argument("--save-replay", metavar="PATH", help="write the game as a JSON replay to PATH when it ends")
    return parser


def build_game(argv: list[str] | None, stdin: TextIO, stdout: TextIO) -> TerminalGame:
    """The game the arguments describe; ``ValueError`` naming the problem for bad arguments."""
    args = _parser().parse_args(argv)
    if args.save_replay is not None:
        check_new_file(args.save_replay, "--save-replay")
    rules = resolve_rules(args.rules)
    if args.manches is not None:
        if args.manches < 1:
            raise ValueError(f"--manches must be at least 1, got {args.manches}")
        rules = rules.replace(manches=args.manches)
    n = rules.n_players
    names = [name.strip() for name in args.opponents.split(",")]
    if any(not name for name in names):
        raise ValueError(f"--opponents {short_repr(args.opponents)} has an empty name")
    if len(names) not in (1, n - 1):
        raise ValueError(
            f"--opponents lists {len(names)} agents; these rules seat {n} players, so give {n - 1} names "
            "(one per other seat, clockwise from your left) or a single name for every seat"
        )
    playable = agent_registry.names(rules)
    for name in names:
        check_name(name)
        if name not in playable and name in agent_registry.names():
            raise ValueError(
                f"agent {name} cannot play these rules; the agents that can: {', '.join(playable)} "
                "(or a checkpoint file path)"
            )
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.seat is not None and not 0 <= args.seat < n:
        raise ValueError(f"--seat must be a seat from 0 to {n - 1}, got {args.seat}")
    if not args.name.strip():
        raise ValueError("--name must not be empty")
    root = np.random.SeedSequence(args.seed)
    seat_seed, game_seed = root.spawn(2)
    human = args.seat if args.seat is not None else int(np.random.default_rng(seat_seed).integers(n))
    lineup: list[str | None] = [None] * n
    for offset in range(1, n):
        lineup[(human + offset) % n] = names[(offset - 1) % len(names)]
    game = TerminalGame(rules, lineup, human, game_seed, stdin, stdout, name=args.name.strip(), ascii_only=args.ascii)
    game.replay_path = args.save_replay
    if args.seed is None:
        game.say(f"Seed {root.entropy} (replay this game with --seed {root.entropy}).")
    return game


@one_line_warnings("president-play")
def main(
    argv: list[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """``president-play``: play one game; returns the exit code (see the module docstring)."""
    if stdin is None and callable(getattr(sys.stdin, "reconfigure", None)):
        sys.stdin.reconfigure(errors="replace")  # bytes that are not UTF-8 become an unknown command, not a crash
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    if ui is None:
        stderr.write(f"{NEEDS_PLAY_EXTRA}\n")
        return EXIT_USAGE
    try:
        # argparse prints --help to stdout and its errors to stderr, then exits: keep both on our streams.
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                game = build_game(argv, stdin, stdout)
            except SystemExit as exit_:
                return int(exit_.code or 0)
    except ValueError as err:
        stderr.write(f"president-play: error: {err}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        stdout.write("\nInterrupted.\n")
        return EXIT_INTERRUPTED
    return game.run()


if __name__ == "__main__":
    raise SystemExit(main())
