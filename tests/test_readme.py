"""The Python examples of the README and of docs/examples.md run as a new user would run them: each block alone, in a
fresh interpreter; and the README stays the short first page (at most 250 lines, no figures).

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
PAGES = (README, ROOT / "docs" / "examples.md")  # the pages whose every Python block is an example to run
OPTIONAL = {"sb3_contrib": "sb3", "ray": "ray"}  # module a block imports -> the extra that provides it


def python_blocks(page: Path) -> list[tuple[str, str]]:
    """``(id, code)`` of every ```python block of ``page``, the id naming the page and the section it sits in."""
    blocks, section = [], "top"
    for match in re.finditer(r"^## ([^\n]+)$|^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S):
        if match.group(1):
            section = match.group(1).strip()
            continue
        name = f"{page.stem.lower()}-" + re.sub(r"\W+", "-", section.lower()).strip("-")
        blocks.append((f"{name}-{sum(1 for b in blocks if b[0].startswith(name))}", match.group(2)))
    return blocks


BLOCKS = [block for page in PAGES for block in python_blocks(page)]


def test_the_readme_is_a_first_page():
    """At most 250 lines (issue 35: it had grown to 763, most of them result tables): no table of results and no
    figure but the browser's screenshot; the numbers live in docs/, which it links."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert re.findall(r"!\[[^]]*\]\(([^)]+)\)", text) == ["docs/web-table.png"]
    assert not re.search(r"^\|.*± ", text, re.M), "a result table belongs in docs/"
    assert "shared/" not in text
    for page in ("docs/agents.md", "docs/examples.md", "docs/reproducing.md", "docs/results/README.md", "LICENSE"):
        assert f"]({page}" in text and (ROOT / page).is_file(), page


def test_the_readme_has_the_examples_the_users_path_promises():
    readme = "\n".join(code for _, code in python_blocks(README))
    for needle in ("pe.env(", "make_vec(", "agents.make(", "evaluate("):  # the AEC env, the vector env, an agent
        assert needle in readme, needle
    more = "\n".join(code for _, code in python_blocks(PAGES[1]))
    for needle in ("pe.gym_env(", "pe.VecGame(", "MaskablePPO", "ppo_config(", "PresidentSB3VecEnv("):
        assert needle in more, needle


def _block(name: str, code: str):
    """A block that starts Ray is marked ``ray``, which joins the Ray tests' xdist group (tests/conftest.py)."""
    marks = [pytest.mark.ray] if re.search(r"^(from|import) ray\b", code, re.M) else []
    return pytest.param(code, id=name, marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize("code", [_block(name, code) for name, code in BLOCKS])
def test_readme_example_runs(code, tmp_path):
    for module, extra in OPTIONAL.items():
        if re.search(rf"^(from|import) {module}\b", code, re.M):
            pytest.importorskip(module if module != "ray" else "ray.rllib", reason=f"needs the {extra} extra")
    lines = code.count("\n")
    assert lines <= 14, f"an example should stay short, this one has {lines} lines"
    done = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"example failed:\n{code}\n--- stderr ---\n{done.stderr[-4000:]}"
    # Issue 35: the pipeline example printed +nan (the mean of no finished game); every number printed is a number.
    assert done.stdout.strip() and not re.search(r"\bnan\b", done.stdout, re.I), done.stdout


def _ladder_table(*args: str) -> subprocess.CompletedProcess:
    script = ROOT / "scripts" / "ladder_table.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)


def test_the_baselines_page_ladder_table_is_the_ladders_output():
    """docs/baselines.md shows a copy of ``docs/results/ladder/ladder.md``, kept by ``scripts/ladder_table.py``."""
    done = _ladder_table("--check")
    assert done.returncode == 0, done.stderr


def test_the_ladder_table_script_replaces_only_the_marked_block(tmp_path):
    readme, table = tmp_path / "baselines.md", tmp_path / "ladder.md"
    readme.write_text("intro\n<!-- ladder-table -->\nold\n<!-- /ladder-table -->\nrest\n")
    table.write_text("| a |\n|---|\n| 1 |\n")
    assert _ladder_table("--page", str(readme), "--table", str(table), "--check").returncode == 1
    assert _ladder_table("--page", str(readme), "--table", str(table)).returncode == 0
    assert readme.read_text() == "intro\n<!-- ladder-table -->\n| a |\n|---|\n| 1 |\n<!-- /ladder-table -->\nrest\n"
    assert _ladder_table("--page", str(readme), "--table", str(table), "--check").returncode == 0
    readme.write_text("no markers\n")
    done = _ladder_table("--page", str(readme), "--table", str(table))
    assert done.returncode == 2 and "ladder-table" in done.stderr and "Traceback" not in done.stderr
