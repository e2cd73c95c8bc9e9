"""``president-play``: whole games driven through a fake stdin, invalid input, the exchange, exits and errors.

The fake stdin (:class:`Typist`) reads what the program printed since its last answer and types a reply,
so a test plays like a person at the terminal: it sees the listed legal moves and the hand, and answers.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Callable

import pytest

from president_env.apps.terminal import InputError, build_game, main, parse_command
from president_env.cards import RANK_NAMES
from president_env.engine import tables

CHEAP = ["--opponents", "random,heuristic-1,random"]
# Standard rules, 2 manches, seed 0, seat 0, playing the lowest listed play: you are Président in manche 2.
EXCHANGE_GAME = ["--opponents", "random", "--manches", "2", "--seed", "0", "--seat", "0"]


def listed_moves(text: str) -> list[str]:
    """The legal moves of the last ``Legal moves:`` list in ``text``, as listed (``pass``, ``7 7``, ``give 3``)."""
    lines = text[text.rindex("Legal moves:") + len("Legal moves:") :].split("\n")
    block = lines[0] + "".join(line for line in lines[1:] if line.startswith("  #"))
    return [move.strip() for move in re.findall(r"#\d+ ([^#]+)", block)]


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


def standings(text: str) -> tuple[dict[int, dict[str, int]], dict[str, int]]:
    """Points by manche number and name, and totals by name, read from the final standings."""
    final = text[text.rindex("=== Final standings ===") :]
    manches: dict[int, dict[str, int]] = {}
    for number, body in re.findall(r"^Manche (\d+): (.*)$", final, re.M):
        manches[int(number)] = {name: int(p) for name, p in re.findall(r"\d+\w\w (\S+) → [^+]+\+(\d+)", body)}
    totals = {name: int(p) for name, p in re.findall(r"^  \d+\. (\S+) .*?(\d+) points?", final, re.M)}
    return manches, totals


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
    assert "-- trick to " in text and "-- out 1st: " in text


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
                last.append(("count", f"this trick is played {count} card(s) at a time"))
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
                assert "first give back 2 card(s)" in screen
                steps.append("too many")
                return "give 3 4 5"
            if "give" not in steps:
                assert "you have 2 card(s) left to give back, not 3" in screen
                steps.append("give")
                return f"give {held[0]}"
            steps.append("second")
            assert "You (Président) gave back a 3" in screen
            return moves[0]
        return lowest_play(screen, moves)

    code, text, _ = play(EXCHANGE_GAME, reply)
    assert code == 0
    assert steps == ["pass", "too many", "give", "second"]
    assert "You received: A 2; you give back 2 card(s) at your turn." in text
    assert "Exchange over: you gave 3 " in text and " and received A 2." in text
    manche_2 = text[text.index("=== Manche 2 of 2 ===") :]
    assert re.search(r"Exchange: the 2 best card\(s\) of player_\d \(Trou du cul\) go to You \(Président\)", manche_2)
    assert re.search(r"Exchange: the 1 best card\(s\) of player_\d \(Vice-Trou\) go to player_\d", manche_2)


def test_end_of_input_mid_game_ends_cleanly_with_non_zero_code() -> None:
    answers = iter(["pass", "#1", "#1"])
    code, text, _ = play(CHEAP + ["--seed", "1"], lambda *_: next(answers, None))
    assert code == 1
    assert text.rstrip().endswith("End of input: the game is abandoned.")


def test_quit_and_ctrl_c_end_cleanly() -> None:
    code, text, _ = play(CHEAP + ["--seed", "1"], lambda *_: "quit")
    assert code == 1 and "You quit" in text

    def interrupt(*_) -> str:
        raise KeyboardInterrupt

    code, text, _ = play(CHEAP + ["--seed", "1"], interrupt)
    assert code == 130 and "Interrupted: the game is abandoned." in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--opponents", "random,random"], "--opponents lists 2 agents; these rules seat 4 players, so give 3 names"),
        (["--opponents", "random,nobody,random"], "unknown agent 'nobody'; known agents: random"),
        (["--rules", "nowhere"], "rules 'nowhere' is neither a preset"),
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
    assert code == 0 and text.startswith("Président: 3 players, 2 manche(s)")
    assert "=== Manche 2 of 2 ===" in text


def test_ascii_output_and_ppo_opponent() -> None:
    pytest.importorskip("torch")
    code, text, _ = play(["--opponents", "ppo-standard-4p", "--seed", "0", "--seat", "3", "--ascii"])
    assert code == 0 and "[ppo-standard-4p]" in text and "=== Final standings ===" in text
    assert text.isascii() and re.search(r"Hand of You \(\d+\): (\S+[CDHS] )+", text)


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
    assert cut.returncode == 1 and "End of input" in cut.stdout and "Traceback" not in cut.stderr
