"""What a new user meets first: ``president-train --help`` answers before torch is imported, ``help(pe.env)``
shows the real keyword arguments, the docstrings name what exists."""

from __future__ import annotations

import inspect
import subprocess
import sys

import president_env as pe

# Reads the arguments, prints the help (or a usage error), and says whether torch was imported meanwhile.
PROBE = """
import sys, contextlib, io
from president_env.training.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit as exit_:
        code = exit_.code
print(code, "torch" in sys.modules, "--resume" in out.getvalue())
"""


def test_president_train_reads_its_arguments_before_importing_torch():
    for argv, expected in ((["--help"], "0 False True"), (["--no-such-flag"], "2 False False")):
        done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
        assert done.stdout.split() == expected.split(), done.stderr


def test_the_console_script_is_the_light_cli():
    from pathlib import Path

    import tomllib

    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["president-train"] == "president_env.training.cli:main"


def test_help_of_env_shows_the_keyword_arguments():
    parameters = inspect.signature(pe.env).parameters
    assert {"rules", "render_mode", "reward_mode"} <= set(parameters)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())  # as env passes them on


def test_load_preset_names_presets_where_they_are():
    assert "pe.PRESETS" not in pe.load_preset.__doc__
    assert "president_env.core.presets.PRESETS" in pe.load_preset.__doc__
    from president_env.core import presets

    assert presets.PRESETS
