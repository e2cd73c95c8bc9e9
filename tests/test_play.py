"""``president-play``: whole games driven through a fake stdin, invalid input, the exchange, exits and errors.

The fake stdin (:class:`Typist`) reads what the program printed since its last answer and types a reply,
so a test plays like a person at the terminal: it sees the listed legal moves and the hand, and answers.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import os
import re
import subprocess
import sys
from collections.abc import Callable

import pytest

pytest.importorskip("rich", reason="president-play needs the play extra")
pytest.importorskip("prompt_toolkit", reason="president-play needs the play extra")

import numpy as np  # noqa: E402
from helpers import make_deal  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from prompt_toolkit.completion import CompleteEvent  # noqa: E402
from prompt_toolkit.document import Document  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output import DummyOutput  # noqa: E402

import president_env as pe  # noqa: E402
from president_env import Rules, agents
from president_env.apps import terminal_ui as ui  # noqa: E402
from president_env.apps.terminal import (  # noqa: E402
    InputError,
    TerminalGame,
    build_game,
    illegal_text,
    main,
    offence,
    parse_command,
)
from president_env.core import engine  # noqa: E402
from president_env.core.cards import RANK_NAMES  # noqa: E402
from president_env.core.engine import (  # noqa: E402
    DOES_NOT_BEAT,
    GIVE_OUTSIDE_EXCHANGE,
    LEADER_CANNOT_PASS,
    MUST_GIVE,
    NOT_ENOUGH_CARDS,
    NOTHING_TO_GIVE,
    OR_NOTHING,
    WRONG_COUNT,
    tables,
)
from president_env.core.vec_game import VecGame  # noqa: E402
from president_env.game.render import ordinal  # noqa: E402
from president_env.game.single import SingleGame  # noqa: E402

CHEAP = ["--opponents", "random,heuristic-1,random"]
# Standard rules, 2 manches, seed 0, seat 0, playing the lowest listed play: you are Président in manche 2.
EXCHANGE_GAME = ["--opponents", "random", "--manches", "2", "--seed", "0", "--seat", "0"]


def listed_moves(text: str) -> list[str]:
    """The legal moves of the last ``Legal moves:`` list in ``text``, as listed (``pass``, ``7 7``, ``give 3``).

    The list is laid out in columns, entries three spaces apart or more, on lines that start with a ``#`` entry.
    """
    lines = text[text.rindex("Legal moves:") + len("Legal moves:") :].split("\n")
    block = [lines[0], *itertools.takewhile(lambda line: line.lstrip().startswith("#"), lines[1:])]
    return [move for line in block for move in re.findall(r"#\d+ (\S+(?: \S+)*)", line)]


def hand_ranks(text: str) -> list[str]:
    """Ranks of the last ``Hand of You`` line, weakest first, one per card."""
    cards = re.findall(r"Hand of You \(\d+\): (.*)", text)[-1].split()
    return [card[:-1] for card in cards]


def lowest_play(screen: str, moves: list[str], text: str = "") -> str:
    """The first listed move that is not a pass; some plays of several cards typed as ``8x2``, others ``8 8``."""
    plays = [move for move in moves if move != "pass"]
    if not plays:
        return "pass"
    move = plays[0]
    ranks = move.split()
    if len(ranks) > 1 and len(set(ranks)) == 1 and (RANK_NAMES.index(ranks[0]) + len(ranks)) % 2:
        return f"{ranks[0]}x{len(ranks)}"
    return move


class Typist:
    """A stdin whose lines are chosen by ``reply(screen, moves, text)`` from what the program printed.

    ``screen``: the output since the previous answer; ``moves``: the legal moves listed last; ``text``:
    all the output. ``reply`` returns the line to type, or ``None`` for end of input.
    """

    def __init__(self, out: io.StringIO, reply: Callable[..., str | None], limit: int = 3000) -> None:
        self.out, self.reply, self.limit = out, reply, limit
        self.seen = 0
        self.typed: list[str] = []

    def readline(self) -> str:
        text = self.out.getvalue()
        screen, self.seen = text[self.seen :], len(text)
        assert len(self.typed) < self.limit, "the game does not end"
        line = self.reply(screen, listed_moves(text), text)
        if line is None:
            return ""
        self.typed.append(line)
        return line + "\n"


def play(argv: list[str], reply=lowest_play) -> tuple[int, str, Typist]:
    out = io.StringIO()
    typist = Typist(out, reply)
    code = main(argv, typist, out)
    return code, out.getvalue(), typist


def table_rows(block: str) -> list[dict[str, str]]:
    """The rows of the first table in ``block`` (a header line, a rule of ``─``, or ``-`` in ASCII, rows up to
    a blank line), as ``{header: cell}``; cells are two spaces apart or more and hold no such gap."""
    lines = block.strip("\n").split("\n")
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) in ({"─"}, {"-"}))
    headers = re.split(r" {2,}", lines[rule - 1].strip())
    rows = itertools.takewhile(str.strip, lines[rule + 1 :])
    return [dict(zip(headers, re.split(r" {2,}", row.strip()))) for row in rows]


def standings(text: str) -> tuple[dict[int, dict[str, int]], dict[str, int]]:
    """Points by manche number and name, and totals by name, read from the final standings table."""
    rows = table_rows(text[text.rindex("=== Final standings ===") :].split("\n", 1)[1])
    numbers = [int(h.split()[1]) for h in rows[0] if h.startswith("Manche ")]
    manches = {n: {row["Player"]: int(row[f"Manche {n}"]) for row in rows} for n in numbers}
    return manches, {row["Player"]: int(row["Total"]) for row in rows}


def test_full_game_by_typed_moves_reaches_standings_whose_points_are_the_rewards() -> None:
    out = io.StringIO()
    typist = Typist(out, lowest_play)
    game = build_game([*CHEAP, "--manches", "2", "--seed", "5", "--seat", "1"], typist, out)
    # Record the env's rewards at every manche end, as the env hands them out.
    rewards: list[dict[str, float]] = []
    scores: dict[str, int] = {}
    env_step = game.raw.step

    def step(action):
        env_step(action)
        if any(game.raw.rewards.values()):
            rewards.append(dict(game.raw.rewards))
            if all(game.raw.terminations.values()):  # the game's last step: its totals
                scores.update(game.raw.infos["player_0"]["scores"])

    game.raw.step = step
    assert game.run() == 0
    text = out.getvalue()
    # Both ways of typing several cards were used: "7 7" and "8x2".
    assert any(re.fullmatch(r"(\S+)( \1)+", line) for line in typist.typed)
    assert any(re.fullmatch(r"\S+x\d", line) for line in typist.typed)
    assert len(rewards) == len(game.results) >= 2

    manches, totals = standings(text)
    name = {f"player_{p}": game.label(p) for p in range(4)}
    for result, reward in zip(game.results, rewards):
        if not result.decisive:
            assert manches[result.number] == {name[a]: int(r) for a, r in reward.items()}
        # The env's rewards are the manche's points of RULES.md: one per player out after you.
        assert [int(r) for r in reward.values()] == [int(tables(game.rules).points[pos]) for pos in result.positions]
    regular = [reward for reward, result in zip(rewards, game.results) if not result.decisive]
    assert totals == {name[a]: int(sum(r[a] for r in regular)) for a in name}
    assert totals == {name[a]: s for a, s in scores.items()}


def test_game_shows_hand_trick_counts_roles_and_opponent_plays() -> None:
    code, text, _ = play([*CHEAP, "--manches", "2", "--seed", "0", "--seat", "0", "--name", "Ann"])
    assert code == 0
    assert "At the table, clockwise: seat 0 Ann (you), seat 1 player_1 [random], seat 2 player_2 [heuristic-1]" in text
    hand = re.findall(r"Hand of Ann \(\d+\): (.*)", text)[0].split()
    assert all(card[-1] in "♣♦♥♠" for card in hand)
    ranks = [RANK_NAMES.index(card[:-1]) for card in hand]
    assert ranks == sorted(ranks)  # sorted by rank
    assert re.search(r"Trick: \S+.* \(\d × \S+\) by player_\d", text)
    assert re.search(r"seat 1  player_1  +\S.* +\d+ cards", text)  # every player's count, with roles
    assert re.search(r"player_2 \(\w[^)]*\) played \S+[♣♦♥♠]", text)  # an opponent's play, by role, with suits
    assert "Roles: Ann (" in text and "Trou du cul" in text
    assert " won the trick and lead" in text and "-- out 1st: " in text


def test_each_manche_summary_names_the_whole_last_trick() -> None:
    """After each manche, ``Last trick:`` names every move since the terminal last said a trick was won (or the
    manche began), in order: two plays in manche 1 and three in manche 2 of this seeded game, not the last one."""
    code, text, _ = play([*CHEAP, "--manches", "2", "--seed", "7", "--seat", "0", "--ascii"])
    assert code == 0
    moves: list[str] = []
    shown = []
    for line in text.splitlines():
        if "won the trick" in line or line.startswith("=== "):
            moves = []
        elif move := re.fullmatch(r"  (You|player_\d)(?: \([^)]*\))? (played .+|passed)", line):
            moves.append(f"{move[1]} {move[2]}")
        elif line.startswith("Last trick: "):
            assert line == "Last trick: " + "; ".join(moves)
            shown.append(len(moves))
    assert shown == [2, 3]


def test_invalid_input_of_each_kind_gets_the_reason_and_a_new_prompt() -> None:
    expected = {
        "unknown": ("foo bar", "unknown command 'foo bar'"),
        "suits": ("7h", "without suits"),
        "number": ("#99", "there is no move #99"),
        "give": ("give 3", "give is for the exchange"),
    }
    pending = dict(expected)
    answered: dict[str, str] = {}
    last: list[str] = []

    def reply(screen: str, moves: list[str], text: str) -> str:
        if last:  # the previous line was invalid: the answer is the reason and a prompt, not a new turn
            kind, reason = last.pop()
            assert "Not possible: " in screen and reason in screen and "Legal moves" not in screen, screen
            answered[kind] = screen
        trick = re.findall(r"Trick: .*\((\d) × (\S+)\)", screen)
        held = hand_ranks(text)
        if pending:
            kind, (line, reason) = pending.popitem()
            last.append((kind, reason))
            return line
        if "lead" not in answered and "pass" not in moves and "Trick: none" in screen:
            last.append(("lead", "you lead this trick, so you cannot pass"))
            return "pass"
        missing = [r for r in RANK_NAMES[:13] if r not in held]
        if "not held" not in answered and held and missing:
            last.append(("not held", f"you hold no {missing[0]}"))
            return missing[0]
        if trick and held:
            count, rank = int(trick[0][0]), trick[0][1]
            lower = [r for r in held if RANK_NAMES.index(r) < RANK_NAMES.index(rank) and held.count(r) >= count]
            if "lower" not in answered and lower:
                last.append(("lower", f"does not beat the {' '.join([rank] * count)} on the pile"))
                return " ".join([lower[0]] * count)
            other = [r for r in held if held.count(r) >= count + 1]
            if "count" not in answered and other:
                last.append(("count", f"this trick is played {count} card{'s' if count != 1 else ''} at a time"))
                return " ".join([other[0]] * (count + 1))
        return lowest_play(screen, moves)

    code, text, _ = play([*CHEAP, "--manches", "1", "--seed", "2", "--seat", "2"], reply)
    assert code == 0 and "=== Final standings ===" in text
    assert set(answered) == {*expected, "lead", "not held", "lower", "count"}
    assert "Traceback" not in text


def test_give_during_the_exchange_as_president() -> None:
    steps: list[str] = []

    def reply(screen: str, moves: list[str], text: str) -> str:
        if moves and moves[0].startswith("give"):
            held = hand_ranks(text)
            if "pass" not in steps:
                steps.append("pass")
                return "pass"
            if "too many" not in steps:
                assert "first give back 2 cards" in screen
                steps.append("too many")
                return "give 3 4 5"
            if "give" not in steps:
                assert "you have 2 cards left to give back, not 3" in screen
                steps.append("give")
                return f"give {held[0]}"
            steps.append("second")
            assert "You (Président) gave back a 3" in screen
            return moves[0]
        return lowest_play(screen, moves)

    code, text, _ = play(EXCHANGE_GAME, reply)
    assert code == 0
    assert steps == ["pass", "too many", "give", "second"]
    assert "You received: A 2; you give back 2 cards at your turn." in text
    assert "Exchange over: you gave 3 " in text and " and received A 2." in text
    manche_2 = text[text.index("=== Manche 2 of 2 ===") :]
    assert re.search(r"Exchange: the 2 best cards of player_\d \(Trou du cul\) go to You \(Président\)", manche_2)
    assert re.search(r"Exchange: the best card of player_\d \(Vice-Trou\) goes to player_\d", manche_2)


def test_end_of_input_mid_game_ends_cleanly_with_code_0() -> None:
    """Ctrl-D (end of input) is a documented way to leave: not an error."""
    answers = iter(["pass", "#1", "#1"])
    code, text, _ = play(CHEAP + ["--seed", "1"], lambda *_: next(answers, None))
    assert code == 0
    assert text.rstrip().endswith("End of input: the game is abandoned.")


def test_quit_and_ctrl_c_end_cleanly() -> None:
    code, text, _ = play(CHEAP + ["--seed", "1"], lambda *_: "quit")
    assert code == 0 and "You quit" in text

    def interrupt(*_) -> str:
        raise KeyboardInterrupt

    code, text, _ = play(CHEAP + ["--seed", "1"], interrupt)
    assert code == 130 and "Interrupted: the game is abandoned." in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--opponents", "random,random"], "--opponents lists 2 agents; these rules seat 4 players, so give 3 names"),
        (["--opponents", "random,nobody,random"], "unknown agent 'nobody'; known agents: random"),
        (["--rules", "nowhere"], "'nowhere'"),
        (["--seat", "4"], "--seat must be a seat from 0 to 3"),
        (["--manches", "0"], "--manches must be at least 1"),
        (["--seed", "x"], "argument --seed: invalid int value"),
    ],
)
def test_bad_arguments_are_a_clear_error_with_exit_code_2(argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(argv, io.StringIO(), out, err) == 2
    assert message in err.getvalue()
    assert "Traceback" not in err.getvalue() and out.getvalue() == ""


def test_same_seed_and_input_replay_the_same_game_and_one_name_fills_every_seat() -> None:
    first = play(["--opponents", "heuristic-2", "--seed", "11"])[1]
    assert first == play(["--opponents", "heuristic-2", "--seed", "11"])[1]
    assert first.count("[heuristic-2]") == 3
    assert play(["--opponents", "heuristic-2", "--seed", "12"])[1] != first


def test_opponents_sit_clockwise_from_the_left_and_rules_and_manches_apply(tmp_path) -> None:
    code, text, _ = play(["--opponents", "random,heuristic-1,heuristic-2", "--seat", "2", "--seed", "3"])
    assert code == 0
    assert (
        "seat 0 player_0 [heuristic-1], seat 1 player_1 [heuristic-2], seat 2 You (you), seat 3 player_3 [random]"
        in text
    )
    rules = tmp_path / "three.yaml"
    rules.write_text("n_players: 3\nscoring: president_vice\n", encoding="utf-8")
    code, text, _ = play(["--rules", str(rules), "--manches", "2", "--opponents", "random", "--seed", "4"])
    assert code == 0 and text.startswith("Président: 3 players, 2 manches")
    assert "=== Manche 2 of 2 ===" in text


def test_ascii_output_and_ppo_opponent() -> None:
    pytest.importorskip("torch")
    code, text, _ = play(["--opponents", "ppo-universal", "--seed", "0", "--seat", "3", "--ascii", "--manches", "1"])
    assert code == 0 and "[ppo-universal]" in text and "=== Final standings ===" in text
    assert text.isascii() and re.search(r"Hand of You \(\d+\): (\S+[CDHS] )+", text)


def test_a_retired_agent_name_plays_as_ppo_universal_with_one_warning_line_on_stderr() -> None:
    pytest.importorskip("torch")
    out, err = io.StringIO(), io.StringIO()
    argv = ["--opponents", "ppo-party", "--rules", "party", "--manches", "1", "--seed", "2", "--ascii"]
    assert main(argv, Typist(out, lowest_play), out, err) == 0
    assert err.getvalue() == f"president-play: warning: {agents.retired_message('ppo-party')}\n"  # one line, once
    assert "retired" not in out.getvalue() and "=== Final standings ===" in out.getvalue()


def test_parse_command_grammar() -> None:
    assert parse_command("7 7") == ("play", [4, 4])
    assert parse_command(" 7X2 ") == ("play", [4, 4])
    assert parse_command("play t t") == ("play", [7, 7])
    assert parse_command("q q") == ("play", [9, 9])  # two queens, not quit
    assert parse_command("P") == ("pass",)
    assert parse_command("give 3 5") == ("give", [0, 2])
    assert parse_command("#3") == ("pick", 3)
    assert parse_command("7") == ("number", 7)
    assert parse_command("") == ("empty",)
    with pytest.raises(InputError, match="without suits"):
        parse_command("7S 7H")


def test_entry_point_runs_as_a_module_with_piped_stdin() -> None:
    command = [sys.executable, "-m", "president_env.apps.terminal", *CHEAP, "--seed", "0", "--ascii"]
    done = subprocess.run(command, input="#1\n" * 300, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "=== Final standings ===" in done.stdout and "Traceback" not in done.stderr
    cut = subprocess.run(command, input="#1\n", capture_output=True, text=True, timeout=120)
    assert cut.returncode == 0 and "End of input" in cut.stdout and "Traceback" not in cut.stderr


# ---------------------------------------------------------------------------------------------- rich and prompt_toolkit
@pytest.fixture(autouse=True)
def plain_environment(monkeypatch) -> None:
    """rich reads these: a forced colour or terminal would put escape codes into the text the tests read, and
    the width (a terminal's own, else ``COLUMNS``, else 80) lays out the list of moves and the tables."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "80")


def first_decision(argv: list[str]):
    """A game built from ``argv`` (not run), stepped by its agents to the human's first decision."""
    game = build_game(argv, io.StringIO(), io.StringIO())
    game.env.reset(seed=game.env_seed)
    for agent in game.env.agent_iter():
        observation, _, _, _, info = game.env.last()
        player = game.agent_names.index(agent)
        if player == game.human:
            return game, [int(a) for a in np.flatnonzero(observation["action_mask"])]
        game.env.step(int(game.agents[player].act(observation, info)))
    raise AssertionError("the human never acts")


def completed(completer, typed: str) -> list[tuple[int, str]]:
    """What Tab offers after ``typed``: ``(move number, text)``, each replacing the whole line typed so far."""
    found = list(completer.get_completions(Document(typed), CompleteEvent(completion_requested=True)))
    assert all(c.start_position == -len(typed) for c in found)
    return [(int(c.display_meta_text.removeprefix("#")), c.text) for c in found]


def test_tab_completes_the_legal_moves_of_a_fixed_deal_filtered_by_what_is_typed() -> None:
    game, legal = first_decision(["--opponents", "random", "--seed", "3", "--seat", "0"])
    # Hand 3♣ 3♥ 3♠ 6♠ 7♥ 7♠ 8♣ 10♦ 10♥ J♦ A♣ 2♦ 2♠; the human leads (no pass).
    listed = ["3", "3 3", "3 3 3", "6", "7", "7 7", "8", "10", "10 10", "J", "A", "2", "2 2"]
    assert [game.move_text(a) for a in legal] == listed
    game.completer.moves = [game.move_forms(a) for a in legal]  # as ask_move sets them before the prompt
    assert completed(game.completer, "") == list(enumerate(listed, start=1))
    assert completed(game.completer, "3") == [(1, "3"), (2, "3 3"), (3, "3 3 3")]
    assert completed(game.completer, "3x") == [(2, "3x2"), (3, "3x3")]
    assert completed(game.completer, " 3  3 ") == [(3, "3 3 3")]
    assert completed(game.completer, "1") == [(8, "10"), (9, "10 10")]
    assert completed(game.completer, "10X") == [(9, "10x2")]
    assert completed(game.completer, "j") == [(10, "J")]
    assert completed(game.completer, "2") == [(12, "2"), (13, "2 2")]
    for nothing in ("p", "pass", "#", "4", "3 4", "give"):
        assert completed(game.completer, nothing) == [], nothing
    for number, text in completed(game.completer, "") + completed(game.completer, "3x"):
        assert game.resolve(parse_command(text), legal) == [legal[number - 1]], text


def test_completions_at_the_prompt_are_the_listed_moves() -> None:
    """In a whole game, at every prompt, Tab offers exactly the moves just listed, numbered as listed."""
    checked: list[int] = []

    def reply(screen: str, moves: list[str], text: str) -> str:
        assert completed(game.completer, "") == list(enumerate(moves, start=1))
        checked.append(len(moves))
        return lowest_play(screen, moves)

    out = io.StringIO()
    game = build_game(EXCHANGE_GAME, Typist(out, reply), out)
    assert game.run() == 0
    assert len(checked) > 10 and max(checked) > 5


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(["standard", "family", "big_table", "quebec", "party", "or_nothing"]),
    seed=st.integers(0, 2**16),
    decisions=st.integers(0, 40),
    data=st.data(),
)
def test_every_completion_parses_back_to_its_legal_move(rules, seed, decisions, data) -> None:
    """Random play (two manches: exchanges too) to a decision of the human; there Tab offers each legal move once
    with the listed text, every way of typing a move that it offers plays that move, and a prefix of one of them
    (any case, any spaces) keeps that move among the completions, all of which start with the prefix."""
    game = build_game(["--rules", rules, "--opponents", "random", "--manches", "2", "--seed", str(seed)], *(None, None))
    rng = np.random.default_rng(seed)
    game.env.reset(seed=game.env_seed)
    seen = -1
    for agent in game.env.agent_iter():  # to the human's decision number `decisions`, if the game lasts so long
        observation, _, terminated, truncated, _ = game.env.last()
        if terminated or truncated:
            game.env.step(None)
            continue
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        if game.agent_names.index(agent) == game.human:
            seen += 1
            if seen == decisions:
                break
        game.env.step(int(rng.choice(legal)))
    else:
        return
    game.completer.moves = moves = [game.move_forms(a) for a in legal]
    assert completed(game.completer, "") == [(i, forms[0]) for i, forms in enumerate(moves, start=1)]
    assert [forms[0] for forms in moves] == [game.move_text(a) for a in legal]
    for action, forms in zip(legal, moves):
        for form in forms:
            assert game.resolve(parse_command(form), legal) == [action], form
    number = data.draw(st.integers(1, len(moves)), label="move")
    form = data.draw(st.sampled_from(moves[number - 1]), label="form")
    prefix = form[: data.draw(st.integers(0, len(form)), label="cut")]
    typed = data.draw(st.sampled_from([prefix, prefix.lower(), " " + prefix.replace(" ", "   ")]), label="typed")
    offered = completed(game.completer, typed)
    assert number in [n for n, _ in offered]
    for n, text in offered:
        assert " ".join(text.lower().split()).startswith(" ".join(typed.lower().split()))
        assert game.resolve(parse_command(text), legal) == [legal[n - 1]]


def test_up_arrow_recalls_earlier_lines_in_the_terminal_prompt() -> None:
    screen = ui.Screen(io.StringIO())
    with create_pipe_input() as keys:
        keyboard = ui.Keyboard(io.StringIO(), io.StringIO(), screen, ui.MoveCompleter(), (keys, DummyOutput()))
        keys.send_text("7 7\r")
        assert keyboard.read("You> ") == "7 7"
        keys.send_text("pass\r")
        assert keyboard.read("You> ") == "pass"
        keys.send_text("\x1b[A\r")  # up: the last line
        assert keyboard.read("You> ") == "pass"
        keys.send_text("\x1b[A\x1b[A\x1b[A\r")  # three up: pass, pass (the recalled one), 7 7
        assert keyboard.read("You> ") == "7 7"


class TypingAtThePrompt(ui.Keyboard):
    """A keyboard whose PromptSession reads keys from a pipe: each prompt gets the next keys, sent as it opens
    (keys sent all at once would be typed ahead, before the session has loaded its history)."""

    def __init__(self, game, pipe, keys: list[str]) -> None:
        super().__init__(io.StringIO(), io.StringIO(), game.screen, game.completer, (pipe, DummyOutput()))
        self.pipe, self.keys = pipe, iter(keys)

    def read(self, prompt: str) -> str:
        self.pipe.send_text(next(self.keys))
        return super().read(prompt)


def test_a_game_at_the_terminal_prompt_plays_by_history_and_ends_cleanly_on_ctrl_d_and_ctrl_c() -> None:
    """The whole game through the PromptSession: "#1" once, then the up arrow and Enter recall it at every turn."""

    def run(keys: list[str]) -> tuple[int, str, ui.Keyboard]:
        out = io.StringIO()
        game = build_game(CHEAP + ["--seed", "1", "--seat", "0"], io.StringIO(), out)
        with create_pipe_input() as pipe:
            game.keyboard = TypingAtThePrompt(game, pipe, keys)
            return game.run(), out.getvalue(), game.keyboard

    code, text, keyboard = run(["#1\r"] + ["\x1b[A\r"] * 400)
    assert code == 0 and "=== Final standings ===" in text and "Traceback" not in text
    assert set(keyboard.session.history.get_strings()) == {"#1"}
    assert text.count("  You played ") + text.count("  You passed") > 5
    count = len(listed_moves(text))
    assert keyboard.toolbar().startswith(f" {count} legal move{'s' if count != 1 else ''} · Tab completes")
    code, text, _ = run(["#1\r", "\x04"])  # Ctrl-D on an empty line
    assert code == 0 and text.rstrip().endswith("End of input: the game is abandoned.")
    code, text, _ = run(["#1\r", "\x03"])  # Ctrl-C
    assert code == 130 and "Interrupted: the game is abandoned." in text


class TerminalOut(io.StringIO):
    """An output that says it is a terminal: rich then colours it."""

    def isatty(self) -> bool:
        return True


def test_no_escape_codes_off_a_terminal_or_with_no_color_and_red_cards_at_a_terminal(monkeypatch) -> None:
    argv = [*CHEAP, "--seed", "0", "--manches", "2"]
    piped = io.StringIO()
    assert main(argv, io.StringIO("#1\n" * 400), piped) == 0
    assert "\x1b" not in piped.getvalue() and "♥" in piped.getvalue()
    terminal = TerminalOut()
    assert main(argv, io.StringIO("#1\n" * 400), terminal) == 0
    coloured = terminal.getvalue()
    assert re.search(r"\x1b\[31m(10|[2-9JQKA])♥\x1b\[0m", coloured)  # hearts in red
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == piped.getvalue()  # the same text
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = TerminalOut()
    assert main(argv, io.StringIO("#1\n" * 400), terminal) == 0
    assert terminal.getvalue() == piped.getvalue()  # no colour, no bold: no escape code at all


def test_ascii_output_when_asked_or_when_the_stream_cannot_encode_the_suits() -> None:
    argv = [*CHEAP, "--seed", "0", "--manches", "2"]
    out = io.StringIO()
    assert main([*argv, "--ascii"], io.StringIO("#1\n" * 400), out) == 0
    asked = out.getvalue()
    assert asked.isascii() and "=== Final standings ===" in asked
    assert re.search(r"Hand of You \(13\): (\S+[CDHS] )+", asked)
    assert table_rows(asked[asked.rindex("Final standings") :].split("\n", 1)[1])[0]["Place"] == "1."
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", write_through=True)
    assert main(argv, io.StringIO("#1\n" * 400), stream) == 0
    assert raw.getvalue().decode("ascii").replace("\r\n", "\n") == asked


# One fixed deal (standard deck, 4 players, player_0 leads with the 3 of clubs) under rules where every reason of
# engine.ILLEGAL_REASONS can arise: wild 2s, revolution, "or nothing".
ILLEGAL_RULES = Rules(twos_wild=True, revolution=True, equal_rank="or_nothing")
ILLEGAL_DEAL = make_deal(
    ILLEGAL_RULES,
    rest=3,
    p0="3C 7D 2S 8C 8D 9S KH 5C 5D 5H 5S",
    p1="3D 4C 4D 9C 10C",
    p2="3H 6D 6C 6H 4H",
)
ROLES4 = {"player_0": "trou_du_cul", "player_1": "president", "player_2": "vice_president", "player_3": "vice_trou"}
# (reason, moves played from the deal, what the player to act types, the terminal's answer)
TYPED_ILLEGAL = [
    (LEADER_CANNOT_PASS, "", "pass", "you lead this trick, so you cannot pass: play any cards of one rank"),
    (GIVE_OUTSIDE_EXCHANGE, "", "give 3", "give is for the exchange at the start of a manche; now play cards or pass"),
    (NOT_ENOUGH_CARDS, "", "Q", "you hold no Q"),
    (NOT_ENOUGH_CARDS, "", "2 2", "you hold only 1 × 2, not 2"),
    (NOT_ENOUGH_CARDS, "", "9 9 9", "you hold only 2 × 9 (wild 2s included), not 3"),
    (WRONG_COUNT, "8x2", "10", "this trick is played 2 cards at a time (on the pile: 8 8)"),
    (DOES_NOT_BEAT, "8x2", "4 4", "4 4 does not beat the 8 8 on the pile"),
    (OR_NOTHING, "3 3", "6", "or nothing: you must play 3 again, or pass"),
    (
        DOES_NOT_BEAT,
        "5x4 pass pass pass 7",
        "9",
        "9 does not beat the 7 on the pile (revolution: lower ranks are stronger now)",
    ),
    (MUST_GIVE, "roles", "pass", "first give back 2 cards to your exchange partner: give RANK"),
    (MUST_GIVE, "roles", "J", "first give back 2 cards to your exchange partner: give RANK"),
    (NOTHING_TO_GIVE, "roles", "give 5", "you hold no 5"),
]


def legal_now(game: TerminalGame) -> list[int]:
    return [int(a) for a in np.flatnonzero(game.env.last()[0]["action_mask"])]


def terminal_at(moves: str) -> TerminalGame:
    """A terminal game on ILLEGAL_DEAL after ``moves`` typed in turn (``roles``: dealt with ROLES4, so in the
    exchange); the human is the player to act."""
    options = {"deal": ILLEGAL_DEAL, "roles": ROLES4} if moves == "roles" else {"deal": ILLEGAL_DEAL, "dealer": 3}
    game = TerminalGame(ILLEGAL_RULES, [None] * 4, 0, np.random.SeedSequence(0), io.StringIO(), io.StringIO())
    game.env.reset(seed=0, options=options)
    for line in moves.split() if moves != "roles" else ():
        game.env.step(*game.resolve(parse_command(line), legal_now(game)))
    game.human = game.agent_names.index(game.env.agent_selection)
    return game


def typed_action(game: TerminalGame, line: str) -> int:
    """The action of a typed ``pass``, ``give R`` or play, legal or not."""
    command = parse_command(line)
    if command[0] == "pass":
        return pe.PASS
    if command[0] == "give":
        return pe.encode_give(game.rules, RANK_NAMES[command[1][0]])
    ranks = [RANK_NAMES.index(str(command[1]))] if command[0] == "number" else command[1]  # "9": one 9
    return game.typed("play", ranks)


@pytest.mark.parametrize("reason, moves, line, answer", TYPED_ILLEGAL)
def test_the_terminal_words_each_reason_the_engine_gives_for_a_typed_move(reason, moves, line, answer) -> None:
    game = terminal_at(moves)
    with pytest.raises(InputError) as caught:
        game.resolve(parse_command(line), legal_now(game))
    assert str(caught.value) == answer
    assert engine.why_illegal(game.rules, game.raw.game.state, 0, typed_action(game, line)).reason == reason


def test_the_terminal_has_a_sentence_for_every_reason_of_the_engine() -> None:
    game = terminal_at("")
    state = game.raw.game.state
    assert illegal_text(engine.why_illegal(game.rules, state, 0, game.rules.num_actions)) == (
        f"{game.rules.num_actions} is not a move of this game"
    )
    over = VecGame(ILLEGAL_RULES, batch_size=1, seed=0, autoreset=False)
    rng = np.random.default_rng(0)
    while not over.game_over[0]:
        over.step(engine.sample_legal(over.legal_mask(), rng))
    assert illegal_text(engine.why_illegal(over.rules, over.state, 0, pe.PASS)) == "the game is over"
    typed = {reason for reason, *_ in TYPED_ILLEGAL}
    assert typed | {engine.OUT_OF_RANGE, engine.GAME_OVER} == set(engine.ILLEGAL_REASONS)
    with pytest.raises(ValueError, match="unknown reason 'bogus'"):
        illegal_text(engine.IllegalMove("bogus", 0))


@pytest.mark.parametrize(
    "line, answer",
    [
        ("give 4 4 9", "you have 2 cards left to give back, not 3"),
        ("give 4 5", "you hold no 5"),
        ("give 9 9", "you hold only 1 × 9"),
        ("give JK", "there are no jokers in this game"),
    ],
)
def test_several_gives_at_once_must_fit_the_hand_and_the_cards_left_to_give(line, answer) -> None:
    game = terminal_at("roles")  # player_1, the Président, gives back 2 cards: 3 4 4 9 10 K 2
    with pytest.raises(InputError, match=f"^{re.escape(answer)}$"):
        game.resolve(parse_command(line), legal_now(game))
    assert game.resolve(parse_command("give 4 4"), legal_now(game)) == [pe.encode_give(game.rules, "4")] * 2


def test_save_replay_path_is_checked_before_the_game(tmp_path) -> None:
    """An existing file is refused, never overwritten; a missing or read-only folder too; all before any game."""
    existing = tmp_path / "old.json"
    existing.write_text("keep me")
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    cases = [
        (existing, "already exists"),
        (tmp_path, "is a folder"),
        (tmp_path / "old.json" / "x.json", "is not a folder"),
    ]
    if not os.access(folder, os.W_OK):  # root writes anywhere
        cases.append((folder / "game.json", "cannot write"))
    for path, message in cases:
        out, err = io.StringIO(), io.StringIO()
        assert main(CHEAP + ["--seed", "1", "--save-replay", str(path)], io.StringIO("#1\n" * 300), out, err) == 2
        assert message in err.getvalue() and len(err.getvalue().splitlines()) == 1, err.getvalue()
        assert out.getvalue() == ""
    assert existing.read_text() == "keep me"
    folder.chmod(0o700)
    new = tmp_path / "sub" / "new.json"
    code, _, _ = play(CHEAP + ["--seed", "1", "--save-replay", str(new)], lambda *_: "quit")
    assert code == 0 and new.is_file()


def test_the_words_agree_with_who_is_meant() -> None:
    """ "You lead", not "You leads"; a trick won by a player who just went out says who leads next."""
    code, text, _ = play(["--seed", "3", "--manches", "2", "--opponents", "heuristic-1"], lambda *_: "#1")
    assert code == 0
    assert not re.search(r"\bYou (\([^)]*\) )?(leads|gives)\b", text)
    assert re.search(r"\bYou (\([^)]*\) )?lead\b", text)
    assert "-- trick to" not in text
    won = re.findall(r"-- (.+) won the trick(.*)", text)
    assert won and all(rest.startswith((" and lead", "; ", " and is out; ")) for _, rest in won)
    out = re.search(r"-- out 1st: (\S+)\n(?:.*\n)*?  -- \1 won the trick and is out; (\S+) leads", text)
    assert out and out[2] != out[1]


def test_toolbar_counts_one_move_in_the_singular() -> None:
    completer = ui.MoveCompleter()
    keyboard = ui.Keyboard(io.StringIO(), io.StringIO(), ui.Screen(io.StringIO()), completer)
    completer.moves = [("pass",)]
    assert keyboard.toolbar().startswith(" 1 legal move · Tab completes it ·")
    completer.moves = [("pass",), ("7",)]
    assert keyboard.toolbar().startswith(" 2 legal moves · Tab completes them ·")


@pytest.mark.parametrize("line", ["#" + "1" * 30, "1" * 30, "7x" + "1" * 30, "z" * 60, "play " + "z" * 60])
def test_error_messages_quote_what_was_typed_in_balanced_quotes(line) -> None:
    with pytest.raises(InputError) as err:
        parse_command(line)
    message = str(err.value)
    assert message.count("'") % 2 == 0 and message.count('"') % 2 == 0, message


def test_help_lists_every_agent_of_the_registry(monkeypatch):
    from president_env import agents
    from president_env.apps.terminal import main as play_main

    monkeypatch.setenv("COLUMNS", "10000")  # no line breaks inside a name
    out = io.StringIO()
    assert play_main(["--help"], io.StringIO(), out, io.StringIO()) == 0
    text = out.getvalue()
    assert "ppo-universal" in agents.names()
    for name in agents.names():
        assert re.search(rf"[ (]{re.escape(name)},", text), name


def told(event, label) -> list[str]:
    """The lines the terminal owes the table for ``event`` beyond the move (``label``: the name of a player)."""
    if event.manche_over:  # the manche's result says it all
        return []
    lines = []
    if event.went_out:
        lines.append(f"  -- out {ordinal(event.out_order + 1)}: {label(event.player)}")
    if event.trick_won_by is not None:
        taker, leader = label(event.trick_won_by), label(event.next_leader)
        leads = "lead" if leader == "You" else "leads"
        if taker == leader:
            lines.append(f"  -- {taker} won the trick and {leads}")
        else:
            lines.append(f"  -- {taker} won the trick and {'are' if taker == 'You' else 'is'} out; {leader} {leads}")
    return lines


def test_the_terminal_tells_going_out_tricks_won_and_the_exchange_over_from_the_events(monkeypatch) -> None:
    """Every ``--`` line and ``Exchange over`` is what a step's ``Event`` says, in order; with those fields of the
    events blanked, the same game (same seed, same moves) tells none of it: nothing is read by comparing states."""
    step = SingleGame.step
    events: list = []

    def recorded(game, *args, **kwargs):
        event = step(game, *args, **kwargs)
        events.append(event)
        return event

    monkeypatch.setattr(SingleGame, "step", recorded)
    code, text, typist = play(EXCHANGE_GAME)
    assert code == 0
    label = lambda player: "You" if player == 0 else f"player_{player}"  # noqa: E731  (--seat 0)
    expected = [line for event in events for line in told(event, label)]
    assert [line for line in text.splitlines() if line.startswith("  -- ")] == expected
    assert sum(e.exchange_over for e in events) == 1 and text.count("Exchange over: you gave") == 1
    assert any(e.went_out for e in events) and any(e.trick_won_by is not None for e in events)

    blank = dict(went_out=False, out_order=None, trick_won_by=None, next_leader=None, exchange_over=False)
    monkeypatch.setattr(SingleGame, "step", lambda *a, **k: dataclasses.replace(step(*a, **k), **blank))
    moves = iter(typist.typed)
    code, silent, _ = play(EXCHANGE_GAME, lambda *_: next(moves))
    assert code == 0 and "=== Final standings ===" in silent
    assert " -- " not in silent and "Exchange over" not in silent


def test_a_penalized_going_out_names_what_it_went_out_on() -> None:
    """Under ``finish_on_two: penalty`` a going out on a joker was told "on a 2"; it names what the play held."""
    assert offence(["2H"]) == "a 2" and offence(["7C", "7D", "2S"]) == "a 2"  # a wild 2 counts
    assert offence(["JK"]) == "a joker" and offence(["JK", "JK"]) == "a joker"
