"""The README's commands, as written: every ``president-*`` line of its bash blocks names a real program, flags that
program has, agents that exist, rules and configs that load; and every one of them runs (slow-marked).

Run as written where that is short (the Play line, with scripted input that quits; ``president-web``, answering
on a free port). The long ones run with a smaller budget and nothing else changed (:func:`smaller`): training
stops after its first update (``budget.total_steps=1``) with evaluations of 2 deal groups, tournaments play 1 deal
group of single manches (``--rules "manches: 1"`` where the command names no rules), ``--ray auto`` joins the
test session's Ray instance (tests/conftest.py's ``local_ray``, its address in ``RAY_ADDRESS``) as it would join
this machine's cluster, and every path under ``runs/`` goes to a temporary folder. The test command is the one
CI runs (``.ci/run``)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
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


def readme_lines() -> list[list[list[str]]]:
    """Each line of the README's bash blocks as its chain of commands (``a && b`` gives ``[a, b]``), each split as the
    shell would (comments dropped)."""
    lines = []
    for block in re.findall(r"^```bash\n(.*?)^```", README, re.M | re.S):
        for line in block.splitlines():
            chain: list[list[str]] = [[]]
            for word in shlex.split(line, comments=True):
                if word == "&&":
                    chain.append([])
                else:
                    chain[-1].append(word)
            if chain[0]:
                lines.append(chain)
    return lines


COMMANDS = [command for chain in readme_lines() for command in chain if command[0] in SCRIPTS]


def run(
    program: str, args: list[str], stdin: str = "", timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``program`` (a console script of pyproject.toml) with ``args``, through its entry point (``env``: variables
    set for it beside this process's)."""
    module, function = SCRIPTS[program].split(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
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
            pe.core.presets.resolve_rules(value)
        elif word == "--config":
            pytest.importorskip("pydantic")
            from president_env.training.config import load_config

            load_config(value, [args[j + 1] for j, flag in enumerate(args[:-1]) if flag == "--set"])
        elif word == "--resume":
            assert value.startswith("runs/"), value  # a checkpoint of the training line before it


def test_the_play_line_plays_as_written_and_quits():
    pytest.importorskip("rich", reason="president-play needs the play extra")
    pytest.importorskip("prompt_toolkit", reason="president-play needs the play extra")
    pytest.importorskip("torch", reason="ppo-universal needs the train extra")
    (play,) = [c for c in COMMANDS if c[0] == "president-play"]
    done = run(play[0], play[1:], stdin="quit\n")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "=== Manche 1 of 3 ===" in done.stdout and "You quit" in done.stdout


def test_president_web_answers_help():
    pytest.importorskip("starlette", reason="president-web needs the web extra")
    assert "--port" in help_text("president-web")


def smaller(command: list[str], tmp: Path) -> list[str]:
    """``command`` with the smaller budget of this module's docstring, writing under ``tmp``."""
    out = []
    for i, word in enumerate(command):
        previous = command[i - 1] if i else ""
        if previous == "--deals":
            word = "1"
        elif word.startswith("runs/"):
            word = str(tmp / word)
        out.append(word)
    if command[0] == "president-train":
        config = load_train_config(command)
        sets = ["budget.total_steps=1", "budget.eval_deals=2", f"out_dir={tmp / config.out_dir}"]
        out += [item for value in sets for item in ("--set", value)] + ["--no-progress"]
    elif command[0] == "president-eval":
        out.append("--no-progress")
        if "--rules" not in command:  # one manche a game: mc-5 at a whole match took minutes a deal group
            out += ["--rules", "manches: 1"]
    return out


def load_train_config(command: list[str]):
    from president_env.training.config import load_config

    sets = [command[j + 1] for j, flag in enumerate(command[:-1]) if flag == "--set"]
    return load_config(command[command.index("--config") + 1], sets)


def _main_job() -> list[list[str]]:
    (chain,) = [chain for chain in readme_lines() if any(c[0] == "president-train" for c in chain)][:1]
    return chain


@pytest.mark.slow
def test_the_main_job_runs_and_writes_what_the_readme_says(tmp_path):
    """The quick start's first command: after the install, training then the evaluation of its policy."""
    pytest.importorskip("torch", reason="the main job needs the train extra")
    chain = _main_job()
    assert [c[:2] for c in chain[:4]] == [["python3", "-m"], [".", ".venv/bin/activate"], ["pip", "install"]] + [
        ["pip", "install"]
    ]
    train, evaluate = chain[4], chain[5]
    assert train[0] == "president-train" and evaluate[0] == "president-eval"
    for command in (train, evaluate):
        done = run(command[0], smaller(command, tmp_path)[1:], timeout=900)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    run_dir = tmp_path / load_train_config(train).out_dir
    for name in ("policy.pt", "metrics.jsonl", "learning_curve.png", "config.yaml"):
        assert (run_dir / name).is_file(), name
    assert list(run_dir.glob("events.out.tfevents.*")) or list(run_dir.glob("**/events.out.tfevents.*"))
    versus = (run_dir / "eval" / "versus.md").read_text(encoding="utf-8")
    for opponent in ("heuristic-3", "heuristic-2", "random"):
        assert opponent in versus


def test_the_readme_test_command_is_what_ci_runs():
    """The quick start's second command: the installs, lint and test run of ``.ci/run`` (which adds
    ``--durations``)."""
    ci = [shlex.split(line, comments=True) for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    (chain,) = [chain for chain in readme_lines() if any(c[:3] == ["python", "-m", "pytest"] for c in chain)]
    assert chain[:2] == [["python3", "-m", "venv", ".venv"], [".", ".venv/bin/activate"]]
    for command in chain:
        assert any(words[: len(command)] == command for words in ci), shlex.join(command)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_the_web_line_serves_the_table():
    pytest.importorskip("starlette", reason="president-web needs the web extra")
    pytest.importorskip("uvicorn", reason="president-web needs the web extra")
    (web,) = [c for c in COMMANDS if c[0] == "president-web"]
    port = _free_port()  # the README's line as written, on a free port instead of 8000
    module, function = SCRIPTS[web[0]].split(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    server = subprocess.Popen(
        [sys.executable, "-c", code, *web[1:], "--port", str(port)], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
                    assert reply.status == 200 and "<html" in reply.read().decode().lower()
                    break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "president-web did not answer in 120 s"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _other_commands() -> list:
    """The README's president-eval and president-train lines other than the main job's (the Ray lines)."""
    main_job = _main_job()
    params = []
    for command in COMMANDS:
        if command in main_job or command[0] not in ("president-eval", "president-train"):
            continue
        marks = [pytest.mark.slow]
        if "--ray" in command:
            marks.append(pytest.mark.ray)
        params.append(pytest.param(command, id=" ".join(command)[:60], marks=marks))
    return params


@pytest.mark.parametrize("command", _other_commands())
def test_each_other_readme_command_runs_with_a_smaller_budget(command, tmp_path, request):
    """The Ray training line (``--set rollout.shards=8``) once hung silently on a 2-CPU machine."""
    pytest.importorskip("torch", reason="the learned agents and training need the train extra")
    env = {}
    if "--ray" in command:
        pytest.importorskip("ray", reason="needs the ray extra")
        env["RAY_ADDRESS"] = request.getfixturevalue("local_ray").get_runtime_context().gcs_address
    done = run(command[0], smaller(command, tmp_path)[1:], timeout=900, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
