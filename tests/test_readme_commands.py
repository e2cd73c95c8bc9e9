"""The README's commands, as written: every ``president-*`` line of its bash blocks names a real program, flags that
program has, agents that exist, rules and configs that load; the Play line is played (scripted input that quits)
and ``president-web --help`` answers. The long ones (training, 200-deal tournaments) are checked, not run."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

import president_env as pe
from president_env import agents

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


def readme_commands() -> list[list[str]]:
    """Each ``president-*`` command of the README's bash blocks, split as the shell would (comments dropped;
    a chain ``a && b`` gives each command)."""
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", README, re.M | re.S):
        for line in block.splitlines():
            command: list[str] = []
            for word in [*shlex.split(line, comments=True), "&&"]:
                if word != "&&":
                    command.append(word)
                    continue
                if command and command[0] in SCRIPTS:
                    commands.append(command)
                command = []
    return commands


COMMANDS = readme_commands()


def run(program: str, args: list[str], stdin: str = "", timeout: int = 300) -> subprocess.CompletedProcess:
    """``program`` (a console script of pyproject.toml) with ``args``, through its entry point."""
    module, function = SCRIPTS[program].split(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@cache
def help_text(program: str) -> str:
    done = run(program, ["--help"])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


# Programs whose --help needs an extra (they say so and exit 2 without it): on a core install their flags go
# unchecked, their agents and rules are still checked.
EXTRA_MODULES = {"president-play": ("rich", "prompt_toolkit")}


def installed(program: str) -> bool:
    return all(importlib.util.find_spec(module) is not None for module in EXTRA_MODULES.get(program, ()))


def test_the_readme_shows_every_program():
    assert {command[0] for command in COMMANDS} == set(SCRIPTS)


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_each_readme_command_names_real_flags_agents_rules_and_configs(command):
    program, args = command[0], command[1:]
    shown = help_text(program) if installed(program) else None
    known = set(agents.names())
    for i, word in enumerate(args):
        if word.startswith("--") and shown is not None:
            assert re.search(rf"{re.escape(word.split('=')[0])}\b", shown), f"{program} has no flag {word}"
        value = args[i + 1] if i + 1 < len(args) else ""
        if word in ("--agents", "--against", "--opponents"):
            for name in value.split(","):
                assert name in known or name.startswith("runs/"), f"unknown agent {name}"  # runs/: trained just before
        elif word == "--rules":
            pe.presets.resolve_rules(value)
        elif word == "--config":
            pytest.importorskip("pydantic")
            from president_env.training.config import load_config

            load_config(value, [args[j + 1] for j, flag in enumerate(args[:-1]) if flag == "--set"])
        elif word == "--resume":
            assert value.startswith("runs/"), value  # a checkpoint of the training line before it


def test_the_play_line_plays_as_written_and_quits():
    pytest.importorskip("rich", reason="president-play needs the play extra")
    pytest.importorskip("prompt_toolkit", reason="president-play needs the play extra")
    pytest.importorskip("torch", reason="ppo-standard-4p needs the train extra")
    (play,) = [c for c in COMMANDS if c[0] == "president-play"]
    done = run(play[0], play[1:], stdin="quit\n")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "=== Manche 1 of 3 ===" in done.stdout and "You quit" in done.stdout


def test_president_web_answers_help():
    pytest.importorskip("starlette", reason="president-web needs the web extra")
    assert "--port" in help_text("president-web")
