"""MkDocs hooks of the documentation site (``mkdocs.yml``): the API reference's source tree and its checks.

**The source tree.** The repository keeps ``president_env.agents`` in ``agents/``, ``president_env.training`` in
``training/`` and so on (``pyproject.toml``, ``[tool.setuptools.package-dir]``). Griffe, which reads the
docstrings for mkdocstrings, finds packages by folder, so on loading this module copies the package's ``.py``
files into :data:`API_SRC` laid out as installed (``build/api_src/president_env/agents/`` ...); ``mkdocs.yml``
points mkdocstrings there. Griffe reads them statically: building the site imports none of the package.

**Every documented name has a docstring.** Each ``::: name`` block of a page, and each public function, class and
property of a documented class, must have a docstring: a missing one is a warning, which ``mkdocs build --strict``
turns into a failed build.

**Sphinx roles.** Docstrings name code with Sphinx roles (``:func:`make```); the page shows them as plain code.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the docs extra installs tomli
    import tomli as tomllib

import griffe

ROOT = Path(__file__).resolve().parents[2]
API_SRC = Path(os.environ.get("PRESIDENT_DOCS_API_SRC") or ROOT / "build" / "api_src")
"""Where the package is laid out as installed, for griffe: ``build/api_src`` (ignored by git), or the folder
``PRESIDENT_DOCS_API_SRC`` names, an absolute path (``mkdocs.yml`` reads the same variable): concurrent builds
each take their own."""
PACKAGE = "president_env"

log = logging.getLogger("mkdocs.hooks.api_reference")  # a warning under mkdocs.* fails a --strict build

BLOCK = re.compile(r"^::: +([\w.]+)[ \t]*\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.MULTILINE)
MEMBERS = re.compile(r"^\s+members:\s*\n((?:\s+- .*\n)+)", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const):<code>~?\.*([^<]*)</code>")


def package_dirs() -> dict[str, Path]:
    """Each installed package's folder in the repository, from ``pyproject.toml``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def lay_out_sources(target_root: Path = API_SRC) -> None:
    """Copy the package's modules into ``target_root`` at their installed paths (a fresh copy each build)."""
    shutil.rmtree(target_root, ignore_errors=True)
    for name, folder in package_dirs().items():
        target = target_root.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in folder.glob("*.py"):
            shutil.copy2(source, target / source.name)


lay_out_sources()
_loader = griffe.GriffeLoader(search_paths=[str(API_SRC)])


def find(identifier: str) -> griffe.Object:
    """The object ``identifier`` names in the laid-out package, aliases followed (``KeyError`` when none)."""
    if PACKAGE not in _loader.modules_collection:
        _loader.load(PACKAGE, try_relative_path=False)
        _loader.resolve_aliases(implicit=False, external=False)
    obj = _loader.modules_collection[identifier]
    return obj.final_target if obj.is_alias else obj


def _documented(obj: griffe.Object | griffe.Alias) -> bool:
    return bool(obj.docstring and obj.docstring.value.strip())


def undocumented(obj: griffe.Object, members: list[str] | None = None) -> list[str]:
    """The names that a ``:::`` block of ``obj`` shows without a docstring: the object itself and, for a class or
    a module, its public functions, classes and properties (only ``members``, when the block lists them)."""
    missing = [] if _documented(obj) else [obj.path]
    if obj.is_class or obj.is_module:
        for name, member in obj.members.items():
            if members is not None and name not in members:
                continue
            if members is None and (name.startswith("_") or (obj.is_module and member.is_alias)):
                continue  # private, or a module's import
            target = member.final_target if member.is_alias else member
            shown = target.is_function or target.is_class or "property" in target.labels
            if shown and not _documented(target):
                missing.append(f"{obj.path}.{name}")
    return missing


def blocks(markdown: str) -> list[tuple[str, list[str] | None]]:
    """Each ``::: identifier`` block of a page, with the ``members`` its options list (``None``: all public)."""
    out = []
    for match in BLOCK.finditer(markdown):
        listed = MEMBERS.search(match.group(2))
        out.append((match.group(1), re.findall(r"- +(\w+)", listed.group(1)) if listed else None))
    return out


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Warn (a failed ``--strict`` build) for every name the page's ``:::`` blocks show without a docstring."""
    for identifier, members in blocks(markdown):
        try:
            obj = find(identifier)
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError) as error:
            log.warning("%s: ::: %s names nothing griffe can find (%s)", page.file.src_uri, identifier, error)
            continue
        for name in undocumented(obj, members):
            log.warning("%s: %s has no docstring", page.file.src_uri, name)
    return markdown


def on_post_page(output: str, **kwargs: Any) -> str:
    """Sphinx roles in docstrings (``:func:`make```) shown as the code they name."""
    return ROLE.sub(r"<code>\1</code>", output)
