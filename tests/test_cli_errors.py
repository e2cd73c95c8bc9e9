"""Every command line reports a usage error as one line, ``PROG: error: ...``, and exit code 2 (issue 36): all of
them parse with :class:`president_env.core.user_input.ArgumentParser`, never argparse's own, which prints its usage
block first."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from president_env.core.user_input import ArgumentParser

ROOT = Path(__file__).resolve().parents[1]
CLI_SOURCES = sorted(
    path
    for folder in ("president_env", "agents", "evaluation", "training", "apps", "scripts")
    for path in (ROOT / folder).rglob("*.py")
)


def test_no_command_line_builds_argparses_own_parser():
    offenders = []
    for path in CLI_SOURCES:
        if path.name == "user_input.py":  # the one subclass
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "ArgumentParser":
                if isinstance(node.value, ast.Name) and node.value.id == "argparse":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"use president_env.core.user_input.ArgumentParser: {offenders}"


def test_the_parser_reports_an_error_in_one_line_and_exits_2(capsys):
    parser = ArgumentParser(prog="tool")
    parser.add_argument("--count", type=int, required=True)
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--count", "x"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "tool: error: argument --count: invalid int value: 'x'\n"
    with pytest.raises(SystemExit):
        parser.error("two\nlines")
    assert capsys.readouterr().err == "tool: error: two lines\n"
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--help"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.startswith("usage: tool")


def _modules() -> list[tuple[str, str, list[str]]]:
    """(module, prog, a bad argv) of each installed command line."""
    return [
        ("president_env.evaluation.cli", "president-eval", ["--agents", "random", "--deals", "x"]),
        ("president_env.evaluation.ladder", "python -m president_env.evaluation.ladder", ["--seed", "x"]),
        ("president_env.apps.web.server", "president-web", ["--port", "x"]),
        ("president_env.training.cli", "president-train", ["--bogus"]),
        ("president_env.training.probe", "python -m president_env.training.probe", ["--out", "x"]),
        ("president_env.training.curves", "python -m president_env.training.curves", []),
    ]


@pytest.mark.parametrize(("module", "prog", "argv"), _modules(), ids=[m[0].split(".")[-1] for m in _modules()])
def test_each_command_line_reports_a_usage_error_in_one_line(module, prog, argv, capsys):
    needs = {"training": "torch", "web": "starlette"}
    for part, dependency in needs.items():
        if part in module and importlib.util.find_spec(dependency) is None:
            pytest.skip(f"needs {dependency}")
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": error: " in err and err.startswith(prog), err


def test_president_play_reports_a_usage_error_in_one_line(capsys):
    pytest.importorskip("rich")
    pytest.importorskip("prompt_toolkit")
    from president_env.apps.terminal import main

    assert main(["--seat", "x"]) == 2
    err = capsys.readouterr().err
    assert err == "president-play: error: argument --seat: invalid int value: 'x'\n", err


def test_a_missing_checkpoint_file_is_named_as_such_not_as_an_unknown_agent(tmp_path, capsys):
    from president_env.evaluation.cli import main

    missing = tmp_path / "nowhere" / "policy.pt"
    with pytest.raises(SystemExit) as exit_info:
        main(["--agents", f"random,{missing}", "--deals", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert f"no such file: '{missing}'" in err and "unknown agent" not in err, err
    with pytest.raises(SystemExit):
        main(["--agents", f"random,{tmp_path}", "--deals", "1", "--no-progress"])
    assert f"not a file: '{tmp_path}'" in capsys.readouterr().err


def test_learning_curves_of_a_missing_or_malformed_run_are_one_line_and_exit_2(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "metrics.jsonl").write_text('{"global_step": 3}\n')
    for run in (tmp_path / "missing", tmp_path / "bad"):
        done = subprocess.run(
            [sys.executable, "-m", "president_env.training.curves", str(run)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "curves: error: " in done.stderr, done.stderr
