"""The documentation site (``mkdocs.yml``) builds with warnings as errors, and its API reference fails on a
documented name without a docstring (``scripts/docs_site/hooks.py``). Skipped without the docs extra."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings_handlers.python")
griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    """The hooks module, laying the package out in a folder of its own (not the build's)."""
    os.environ["PRESIDENT_DOCS_API_SRC"] = str(tmp_path_factory.mktemp("api_src"))
    try:
        spec = importlib.util.spec_from_file_location("docs_site_hooks", ROOT / "scripts" / "docs_site" / "hooks.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        del os.environ["PRESIDENT_DOCS_API_SRC"]
    return module


def test_the_package_is_laid_out_as_installed(hooks):
    assert (hooks.API_SRC / "president_env" / "agents" / "__init__.py").is_file()
    assert (hooks.API_SRC / "president_env" / "training" / "ppo_selfplay.py").is_file()
    assert hooks.find("president_env.agents.make").is_function
    assert hooks.find("president_env.encode_play").path == "president_env.core.actions.encode_play"  # alias followed


def test_a_name_without_a_docstring_is_found(hooks, tmp_path):
    (tmp_path / "toy.py").write_text(
        textwrap.dedent(
            '''
            """A module."""
            def documented():
                """Has one."""
            def bare():
                pass
            def _private():
                pass
            class Thing:
                """A class."""
                def method(self):
                    pass
                @property
                def size(self):
                    return 1
                def told(self):
                    """Told."""
            '''
        )
    )
    toy = griffe.load("toy", search_paths=[str(tmp_path)], try_relative_path=False)
    assert hooks.undocumented(toy["documented"]) == []
    assert hooks.undocumented(toy["bare"]) == ["toy.bare"]
    assert hooks.undocumented(toy["Thing"]) == ["toy.Thing.method", "toy.Thing.size"]
    assert hooks.undocumented(toy["Thing"], members=["told"]) == []
    assert hooks.undocumented(toy) == ["toy.bare"]  # a module's public members; the private one is not shown


def test_the_blocks_of_a_page_and_their_members(hooks):
    page = "# API\n\n::: president_env.Rules\n    options:\n      members:\n        - replace\n        - to_yaml\n"
    page += "\ntext\n::: president_env.env\n"
    assert hooks.blocks(page) == [("president_env.Rules", ["replace", "to_yaml"]), ("president_env.env", None)]


def test_every_api_block_names_a_documented_object(hooks):
    """What the strict build checks, without building: every ``:::`` of the API pages, fast."""
    found = []
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for identifier, members in hooks.blocks(page.read_text(encoding="utf-8")):
            found += hooks.undocumented(hooks.find(identifier), members)
    assert found == []


def test_the_api_reference_names_the_public_interface():
    text = "".join(page.read_text(encoding="utf-8") for page in (ROOT / "docs" / "api").glob("*.md"))
    for name in ("Rules", "env", "gym_env", "vector_env", "VecGame", "encode_play", "encode_give", "decode"):
        assert f"::: president_env.{name}\n" in text, name
    for name in ("num_actions", "PASS", "agents.make", "agents.Agent", "evaluation.tournament.evaluate"):
        assert f"::: president_env.{name}\n" in text, name


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "PRESIDENT_DOCS_API_SRC": str(tmp_path / "api_src"), "NO_MKDOCS_2_WARNING": "1"}
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    api = (site / "api" / "environment" / "index.html").read_text(encoding="utf-8")
    assert "encode_play" in api and "VecGame" in api
    assert ":func:" not in api  # Sphinx roles shown as code
    assert (site / "results" / "index.html").is_file()  # docs/results/README.md, the results' index


@pytest.mark.slow
def test_the_model_cards_match_the_checkpoints():
    """``docs/models.md`` and the README's figures are what ``scripts/model_cards.py`` writes from the checkpoints."""
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "model_cards.py"), "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_page_of_docs_is_in_the_nav():
    """Each top-level page of ``docs/`` has its place in the site's reading order (``mkdocs.yml``, ``nav``)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)\s*$", config.split("\nnav:", 1)[1], flags=re.MULTILINE))
    pages = {page.relative_to(ROOT / "docs").as_posix() for page in (ROOT / "docs").glob("*.md")}
    assert sorted(pages - nav) == []  # pages the nav leaves out
    assert sorted(name for name in nav if not (ROOT / "docs" / name).is_file()) == []  # nav entries without a page
