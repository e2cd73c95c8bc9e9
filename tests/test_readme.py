"""The README's Python examples run as a new user would run them: each block alone, in a fresh interpreter.

A block whose library is not installed (SB3, RLlib: optional extras) is skipped, not failed; CI installs every
extra, so there every block runs. Blocks must stay self-contained: that is what a reader copies.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OPTIONAL = {"sb3_contrib": "sb3", "ray": "ray"}  # module a block imports -> the extra that provides it


def python_blocks() -> list[tuple[str, str]]:
    """``(id, code)`` of every ```python block, the id naming the section it sits in."""
    blocks, section = [], "top"
    for match in re.finditer(r"^## ([^\n]+)$|^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S):
        if match.group(1):
            section = match.group(1).strip()
            continue
        name = re.sub(r"\W+", "-", section.lower()).strip("-")
        blocks.append((f"{name}-{sum(1 for b in blocks if b[0].startswith(name))}", match.group(2)))
    return blocks


BLOCKS = python_blocks()


def test_the_readme_has_the_examples_the_users_path_promises():
    code = "\n".join(code for _, code in BLOCKS)
    for needle in (
        "pe.env(",
        "pe.gym_env(",
        "pe.VecGame(",
        "MaskablePPO",
        "ppo_config(",
        "make_vec(",
        "PresidentSB3VecEnv(",
    ):
        assert needle in code, needle


def _block(name: str, code: str):
    """A block that starts Ray joins the Ray tests' xdist group: one local Ray instance at a time in CI."""
    marks = [pytest.mark.xdist_group("ray")] if re.search(r"^(from|import) ray\b", code, re.M) else []
    return pytest.param(code, id=name, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("code", [_block(name, code) for name, code in BLOCKS])
def test_readme_example_runs(code, tmp_path):
    for module, extra in OPTIONAL.items():
        if re.search(rf"^(from|import) {module}\b", code, re.M):
            pytest.importorskip(module if module != "ray" else "ray.rllib", reason=f"needs the {extra} extra")
    lines = code.count("\n")
    assert lines <= 12, f"a README example should stay about ten lines, this one has {lines}"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"README example failed:\n{code}\n--- stderr ---\n{done.stderr[-4000:]}"


def _readme_ladder(*args: str) -> subprocess.CompletedProcess:
    script = ROOT / "scripts" / "readme_ladder.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)


def test_the_readme_ladder_table_is_the_ladders_output():
    """The README shows a copy of ``docs/results/ladder/ladder.md``, kept by ``scripts/readme_ladder.py``."""
    done = _readme_ladder("--check")
    assert done.returncode == 0, done.stderr


def test_the_readme_ladder_script_replaces_only_the_marked_block(tmp_path):
    readme, table = tmp_path / "README.md", tmp_path / "ladder.md"
    readme.write_text("intro\n<!-- ladder-table -->\nold\n<!-- /ladder-table -->\nrest\n")
    table.write_text("| a |\n|---|\n| 1 |\n")
    assert _readme_ladder("--readme", str(readme), "--table", str(table), "--check").returncode == 1
    assert _readme_ladder("--readme", str(readme), "--table", str(table)).returncode == 0
    assert readme.read_text() == "intro\n<!-- ladder-table -->\n| a |\n|---|\n| 1 |\n<!-- /ladder-table -->\nrest\n"
    assert _readme_ladder("--readme", str(readme), "--table", str(table), "--check").returncode == 0
    readme.write_text("no markers\n")
    done = _readme_ladder("--readme", str(readme), "--table", str(table))
    assert done.returncode == 2 and "ladder-table" in done.stderr and "Traceback" not in done.stderr
