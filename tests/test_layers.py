"""Dependencies point one way: no module imports a higher layer, and no modules import each other in a cycle.

The layers, lowest first (``docs/architecture.md``), each a folder of the installed package:

1. **core**: ``president_env/core/``: the rules, cards, actions, the state, the rule kernels (``trick``, ``manche``),
   the batched engine (``engine``, ``vec_game``), the observation, the deal notation, the presets and the rule space,
   the agent registry, user input;
2. **game**: ``president_env/game/``: one game for people and front ends (``single.SingleGame``, replay, render);
3. **envs**: ``president_env/envs/``: the environments (AEC, Gymnasium single and vector, the SB3 adapter) and
   what they share (``spaces``), with the package's ``__init__``, which re-exports them;
4. **agents**: ``president_env.agents`` (``agents/``);
5. **evaluation**: ``president_env.evaluation`` (``evaluation/``): tournaments, statistics, the ladder, replays
   of sample games, the Ray helpers;
6. **training**: ``president_env.training`` (``training/``);
7. **apps**: ``president_env.apps`` (``apps/``): the terminal game and the web app.

The layer of a module is the folder it lives in: no module lies in ``president_env/`` itself but its ``__init__``.
The check reads the source (``ast``), so it sees every import, also those inside functions, and
``importlib.import_module`` calls with a constant name. A module may import its own layer and the layers below.
Cycles are refused among the imports that run when a module is imported, and among all the imports that run,
those inside functions too: an import inside a function may defer an optional dependency (torch, ray, scipy) or a
costly module, never dodge a cycle. Imports under ``if TYPE_CHECKING:`` never run (annotations only): they must
respect the layers and close no cycle either (the state lives below the rule modules, ``president_env.core.state``,
and what the trainer's rollout and its opponent pool share below both, ``training.acting``).
The game, the envs and the front ends (apps) read no private attribute of another object; the front ends hold the
one-game holder and read no env's rendered text. The ``Rules`` fields that change play are read, in the core, the
game and the envs, only by the rule modules ``trick`` and ``manche`` (each holding a rule area's one form, its
kernels), so a rule change touches one package file.
Benchmarks (``benchmarks/``) and maintenance scripts (``scripts/``) are not installed and not checked.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "game", "envs", "agents", "evaluation", "training", "apps")
PACKAGE = "president_env"
# Inside the envs, the environments stand side by side on the game and the core: none imports another, but an
# adapter at the edge may import the one env it adapts, and the package's ``__init__`` re-exports them all.
SHARED_ENVS = frozenset({PACKAGE, "president_env.envs.spaces"})
ADAPTS = {"president_env.envs.sb3": "president_env.envs.gym_vector_env"}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    when: str  # "import": runs when the source is imported; "call": inside a function; "typing": TYPE_CHECKING only


def layer(module: str) -> str:
    """The layer of ``module``: the package folder it lives in (``president_env.core.rules`` is core); the
    package's ``__init__`` is with the envs it re-exports."""
    if module == PACKAGE:
        return "envs"
    name = module.split(".")[1] if module.startswith(PACKAGE + ".") else ""
    if name not in LAYERS:
        raise ValueError(f"{module} lies in no layer's folder ({', '.join(LAYERS)})")
    return name


def discover(root: Path) -> dict[str, Path]:
    """Every module of the installed packages, by dotted name, from ``pyproject.toml``'s setuptools layout."""
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = setup.get("package-dir", {})
    modules = {}
    for package in setup["packages"]:
        folder = root / folders.get(package, package.replace(".", "/"))
        for path in sorted(folder.glob("*.py")):
            modules[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The imports of ``module`` that name a module of ``modules`` (``from p import m`` names ``p.m``)."""
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: list[Import] = []

    def add(name: str, line: int, when: str) -> None:
        edge = Import(module, name, line, when)
        if name in modules and edge not in found:
            found.append(edge)

    def absolute(name: str | None, level: int) -> str:
        if not level:
            return name or ""
        base = package.split(".")[: len(package.split(".")) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    def visit(node: ast.AST, when: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                # ``import a.b.c`` imports the deepest module that exists.
                name = next(
                    (".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in modules), ""
                )
                add(name, node.lineno, when)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.module, node.level)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                add(submodule if submodule in modules else base, node.lineno, when)
        elif isinstance(node, ast.Call):
            func = node.func
            named = getattr(func, "attr", getattr(func, "id", None)) == "import_module"
            if named and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                name = node.args[0].value
                level = len(name) - len(name.lstrip("."))
                add(absolute(name.lstrip(".") or None, level), node.lineno, when)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, "typing")
            for child in node.orelse:
                visit(child, when)
            return
        inner = (
            "call"
            if when == "import" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            else when
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "import")
    return found


def all_imports(modules: dict[str, Path]) -> list[Import]:
    return [edge for module, path in modules.items() for edge in imports_of(module, path, modules)]


def upward(edges: list[Import]) -> list[str]:
    """Each import of a higher layer, as ``source:line imports target (layer < layer)``."""
    return [
        f"{e.source}:{e.line} imports {e.target} ({layer(e.source)} may not import {layer(e.target)})"
        for e in edges
        if LAYERS.index(layer(e.target)) > LAYERS.index(layer(e.source))
    ]


def envs_on_envs(edges: list[Import]) -> list[str]:
    """Each import of one env by another (the package's ``__init__``, the shared spaces and adapters aside)."""
    return [
        f"{e.source}:{e.line} imports {e.target} (the envs stand side by side)"
        for e in edges
        if layer(e.source) == layer(e.target) == "envs"
        and e.source not in SHARED_ENVS
        and e.target not in SHARED_ENVS
        and ADAPTS.get(e.source) != e.target
    ]


def cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted; self-imports too."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


MODULES = discover(ROOT)
EDGES = all_imports(MODULES)


def test_the_layout_is_read_from_pyproject():
    for module in (
        "president_env.core.rules",
        "president_env.core.registry",
        "president_env.envs.gym_single_env",
        "president_env.core.vec_game",
        "president_env.agents",
        "president_env.agents.torch_policy",
        "president_env.evaluation.tournament",
        "president_env.training.ppo_selfplay",
        "president_env.apps.terminal",
        "president_env.apps.web.server",
    ):
        assert module in MODULES, module
    assert {layer(m) for m in MODULES} == set(LAYERS)
    assert layer("president_env.game.replay") == "game" and layer("president_env.core.registry") == "core"
    assert layer("president_env") == layer("president_env.envs.sb3") == "envs"
    assert layer("president_env.agents.base") == "agents" and layer("president_env.apps.web") == "apps"
    assert layer("president_env.evaluation.ladder") == "evaluation" and layer("president_env.apps.terminal") == "apps"
    assert not any(name.rpartition(".")[2].startswith(("bench", "render_demo", "expert_iteration")) for name in MODULES)


def test_every_module_lies_in_a_layers_folder():
    """``president_env/`` holds the package's ``__init__`` and the layers' folders, no module of its own."""
    assert sorted(p.name for p in (ROOT / PACKAGE).glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in (ROOT / PACKAGE).iterdir() if (p / "__init__.py").is_file()) == [
        "core",
        "envs",
        "game",
    ]
    with pytest.raises(ValueError, match="president_env.engine lies in no layer's folder"):
        layer("president_env.engine")


def test_no_module_imports_a_higher_layer():
    assert upward(EDGES) == []


def test_the_envs_do_not_import_one_another():
    """The AEC env, the Gymnasium single env and the vector env each stand on the game and the core
    (``single.SingleGame``, ``vec_game.VecGame``) and share ``spaces``, not each other; the SB3 adapter stands on
    the vector env it adapts."""
    assert envs_on_envs(EDGES) == []
    assert envs_on_envs(
        [
            Import("president_env.envs.gym_vector_env", "president_env.envs.aec_env", 3, "import"),
            Import("president_env.envs.gym_single_env", "president_env.game.render", 4, "import"),
            Import("president_env.envs.sb3", "president_env.envs.gym_vector_env", 5, "import"),
            Import("president_env.envs.sb3", "president_env.envs.aec_env", 6, "call"),
        ]
    ) == [
        "president_env.envs.gym_vector_env:3 imports president_env.envs.aec_env (the envs stand side by side)",
        "president_env.envs.sb3:6 imports president_env.envs.aec_env (the envs stand side by side)",
    ]


RENDERED = frozenset({"render_text", "render_view", "last_action", "render"})
"""What an env renders (text or picture): a front end shows the one-game holder's facts, never re-reads these."""


def private_reads(modules: dict[str, Path]) -> list[str]:
    """Where the game, an env or a front end (the game, envs and apps layers) reads another object's private
    attribute (``x._name``, not ``self._name``), or a front end an env's rendered text (:data:`RENDERED`), as
    ``module:line reads x._name``."""
    found = []
    for module, path in modules.items():
        if layer(module) not in ("game", "envs", "apps"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute):
                continue
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            rendered = layer(module) == "apps" and node.attr in RENDERED
            if (private and not own) or rendered:
                found.append(f"{module}:{node.lineno} reads {ast.unparse(node)}")
    return found


def test_views_and_front_ends_read_public_state_only(tmp_path):
    """The game, the envs and ``president-play`` / ``president-web`` read what the objects they hold publish (the game's
    ``legal_mask()`` and ``invalidate_mask()``, the action space's ``bind``, ``single.SingleGame``'s attributes:
    ``docs/architecture.md``, One holder for one game), never another object's private state; the front ends
    never an env's render text either."""
    assert private_reads(MODULES) == []
    view, app = tmp_path / "view.py", tmp_path / "app.py"
    view.write_text("self._ok = 1\nspace._legal_mask = f\nself.game._mask = None\ntext = self.render()\n")
    app.write_text("self._ok = 1\ncards = env.unwrapped._cards\ntext = env.render_text()\n")
    assert private_reads({"president_env.envs.gym_vector_env": view, "president_env.apps.demo": app}) == [
        "president_env.envs.gym_vector_env:2 reads space._legal_mask",
        "president_env.envs.gym_vector_env:3 reads self.game._mask",
        "president_env.apps.demo:2 reads env.unwrapped._cards",
        "president_env.apps.demo:3 reads env.render_text",
    ]


# ---- one rule, one file: where the Rules fields that change play are read -----------------------------------------
RULE_MODULES = frozenset({"president_env.core.trick", "president_env.core.manche"})
"""Where the rules are applied: each holds a rule area's NumPy batched form and its compiled per-slot form."""
DESCRIBE = frozenset({"president_env.core.rules", "president_env.core.presets"})
"""Modules that define, validate and name rules rather than apply them: they read every field."""
SIZES = frozenset({"n_players", "decks", "jokers", "n_ranks", "max_count", "n_cards", "num_actions", "copies"})
"""``Rules`` fields and properties that size the game (arrays, spaces): read everywhere."""
DESCRIBED_ELSEWHERE = {
    (
        "president_env.core.actions",
        "twos_wild",
    ): "typed_action: which typed cards name one play (notation, not legality)",
    ("president_env.core.observation", "exchange"): "the bound of the gives segment",
    ("president_env.core.observation", "manches"): "the bounds of the points and manche segments",
    ("president_env.game.render", "manches"): "the header's manche count",
    ("president_env.game.render", "revolution"): "the header says whether the order is turned",
}
"""The few reads of a play field outside the rule modules, each describing the game rather than deciding it."""


def play_fields() -> frozenset[str]:
    """The ``Rules`` fields and derived properties that change how the game plays: all but :data:`SIZES`."""
    rules = importlib.import_module("president_env.core.rules").Rules
    derived = {name for name, value in vars(rules).items() if isinstance(value, functools.cached_property)}
    return frozenset({f.name for f in dataclasses.fields(rules)} | derived) - SIZES


def rule_reads(modules: dict[str, Path], fields: frozenset[str]) -> list[tuple[str, str, int]]:
    """``(module, field, line)`` of each read of one of ``fields`` on a rules object in the core, game and envs:
    ``rules.x``, ``self.rules.x``, ``game._rules.x`` (anything named ``...rules``), or ``getattr(rules, "x")``."""

    def of_rules(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id.endswith("rules")) or (
            isinstance(node, ast.Attribute) and node.attr.endswith("rules")
        )

    found = []
    for module, path in modules.items():
        if layer(module) not in ("core", "game", "envs") or module in DESCRIBE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in fields and of_rules(node.value):
                found.append((module, node.attr, node.lineno))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) >= 2
                and of_rules(node.args[0])
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in fields
            ):
                found.append((module, node.args[1].value, node.lineno))
    return sorted(set(found))


def rule_branches_outside(reads: list[tuple[str, str, int]]) -> list[str]:
    """The reads of :func:`rule_reads` outside :data:`RULE_MODULES` and :data:`DESCRIBED_ELSEWHERE`."""
    return [
        f"{module}:{line} reads rules.{field} (a rule is applied in {' or '.join(sorted(RULE_MODULES))} only)"
        for module, field, line in reads
        if module not in RULE_MODULES and (module, field) not in DESCRIBED_ELSEWHERE
    ]


def test_a_rule_is_applied_in_one_file_of_the_package(tmp_path):
    """A rule change touches one package file (plus the oracle, ``tests/oracle/reference.py``): the fields of
    ``Rules`` that change play are read, in the core, the game and the envs, only by ``trick.py`` (the legal mask
    and the decisions of a manche) and ``manche.py`` (the deal, the exchange, scoring, the game's end), each rule
    once, in a kernel; and each field is applied there (``exchange`` through ``exchange_pairs``; ``top_rank`` serves
    the agents)."""
    fields = play_fields()
    assert {"twos_wild", "equal_rank", "deal_start", "scoring", "exchange_pairs", "manches"} <= fields
    assert not fields & SIZES
    reads = rule_reads(MODULES, fields)
    assert rule_branches_outside(reads) == []
    applied = {field for module, field, _ in reads if module in RULE_MODULES}
    assert applied == fields - {"exchange", "top_rank"}
    assert {(module, field) for module, field, _ in reads if module not in RULE_MODULES} == set(DESCRIBED_ELSEWHERE)
    # A rule branch anywhere else fails, whatever the object is called; the rule modules may branch.
    branch = "def f(rules, game):\n    if rules.twos_wild and game.rules.pass_rule:\n"
    branch += "        return getattr(rules, 'lead')\n"
    for name in ("engine.py", "gym_vector_env.py", "trick.py"):
        (tmp_path / name).write_text(branch)
    made_up = {
        f"president_env.{folder}.{name[:-3]}": tmp_path / name
        for folder, name in (("core", "engine.py"), ("envs", "gym_vector_env.py"), ("core", "trick.py"))
    }
    assert rule_branches_outside(rule_reads(made_up, fields)) == [
        f"president_env.{module}:{line} reads rules.{field} (a rule is applied in president_env.core.manche or "
        "president_env.core.trick only)"
        for module in ("core.engine", "envs.gym_vector_env")
        for field, line in (("lead", 3), ("pass_rule", 2), ("twos_wild", 2))
    ]


def test_the_reference_oracle_lives_outside_the_installed_package():
    """The oracle (``tests/oracle/reference.py``) is checked against, never shipped nor imported by the package."""
    assert (ROOT / "tests" / "oracle" / "reference.py").is_file()
    assert not any(name.endswith(".reference") for name in MODULES)
    importing = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            importing += [f"{module}:{node.lineno}" for name in names if name.split(".")[0] == "oracle"]
    assert importing == []


@pytest.mark.parametrize(
    "kinds",
    [("import",), ("import", "call"), ("import", "call", "typing")],
    ids=["at-import", "in-functions-too", "annotations-too"],
)
def test_no_import_cycles(kinds):
    assert cycles([e for e in EDGES if e.when in kinds]) == []


def test_the_check_finds_upward_imports_and_cycles(tmp_path):
    """The checker on a small made-up package: it reports what it must, with the line."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npackages = ["president_env", "president_env.core", "president_env.envs", '
        '"president_env.agents"]\n[tool.setuptools.package-dir]\n"president_env.agents" = "agents"\n'
    )
    for folder in ("president_env/core", "president_env/envs", "agents"):
        (tmp_path / folder).mkdir(parents=True)
    files = {
        "president_env/__init__.py": "from .envs.gym_env import gym_env\n",
        "president_env/core/rules.py": "import numpy\n\n\ndef f():\n    from president_env.agents import make\n",
        "president_env/core/engine.py": "from . import observation\n",
        "president_env/core/observation.py": "from .engine import step\n",
        "president_env/envs/gym_env.py": "from ..core.rules import Rules\n",
        "agents/__init__.py": "from .base import Agent\nfrom president_env import gym_env\n",
        "agents/base.py": "import importlib\n\n\ndef g():\n    return importlib.import_module('.heavy', __name__)\n",
        "agents/heavy.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .base import Agent\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    modules = discover(tmp_path)
    edges = all_imports(modules)
    assert upward(edges) == [
        "president_env.core.rules:5 imports president_env.agents (core may not import agents)",
    ]
    assert cycles([e for e in edges if e.when == "import"]) == [
        ["president_env.core.engine", "president_env.core.observation"]
    ]
    assert cycles([e for e in edges if e.when != "typing"]) == [  # the upward import inside a function closes one
        ["president_env", "president_env.agents", "president_env.core.rules", "president_env.envs.gym_env"],
        ["president_env.core.engine", "president_env.core.observation"],
    ]
    assert cycles(edges) == [  # annotations only (TYPE_CHECKING) close one more
        ["president_env", "president_env.agents", "president_env.core.rules", "president_env.envs.gym_env"],
        ["president_env.agents.base", "president_env.agents.heavy"],
        ["president_env.core.engine", "president_env.core.observation"],
    ]
    assert Import("president_env.agents", "president_env", 2, "import") in edges
    assert Import("president_env.agents.heavy", "president_env.agents.base", 4, "typing") in edges
