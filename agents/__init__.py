"""Baselines and learned policies behind one interface (``president_env.agents``).

    from president_env import agents
    agent = agents.make("heuristic-3", rules, seed=0)
    action = agent.act({"observation": obs, "action_mask": mask}, info)
    actions = agent.act_batch(observations, masks)       # (B, obs_dim), (B, A) bool -> (B,)

Names: ``random``, ``heuristic-1`` … ``heuristic-3`` (batched rules of conduct,
:mod:`.heuristic`), ``mc-4``, ``mc-5`` (Monte-Carlo determinization over the batched
engine, :mod:`.monte_carlo`), the rule-based styles ``style-hoarder``, ``style-dumper``, ``style-patient``
(:mod:`.styles`), the learned policies shipped in ``checkpoints/``
(``ppo-standard-4p``, the longer run's ``ppo-standard-4p-long``, one per table, and ``ppo-universal``, one network
for every table, :data:`SHIPPED_AGENTS`),
``search-ppo-standard-4p`` (the first with Monte-Carlo search on top, :mod:`.policy_search`), or the path of a
learned checkpoint
(torch checkpoints, ``.pt``, load as :class:`~.torch_policy.TorchPolicyAgent`, or for any table as
:class:`~.universal.UniversalAgent` when trained by ``training/universal.py``; format in :mod:`.checkpoint`;
other formats plug in with :func:`register_checkpoint_loader`). Agents see the observation and the mask,
never the engine's hidden state.

The registry behind :func:`make`, :func:`names`, :func:`register` and :func:`register_checkpoint_loader` is
:mod:`president_env.core.registry`, in the environment core, where the Gym envs resolve their opponents' names.
This package fills it with :func:`register_opponents`, the function it declares in the entry-point group
``president_env.opponents``: the core calls it on its first name lookup, so the environments never import
the agents.

Importing this package needs only the core install (no torch): ``TorchPolicyAgent``, ``PolicyNet`` and
``CheckpointError`` are attributes loaded on first use, and torch is imported only when
a learned agent is made (``pip install "president-env[train]"``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import importlib.util
import zipfile
from pathlib import Path
from typing import Any

from president_env.core import registry
from president_env.core.presets import resolve_rules
from president_env.core.registry import (
    AgentFactory,
    Policy,
    RandomAgent,
    as_agent,
    make,
    register,
    register_checkpoint_loader,
)
from president_env.core.rules import Rules

from .base import Agent, ObsView, decode
from .heuristic import HeuristicAgent
from .monte_carlo import MonteCarloAgent
from .styles import STYLES, style_factory


def _heuristic(level: int) -> AgentFactory:
    def factory(rules: Rules, seed: Any = None) -> HeuristicAgent:
        return HeuristicAgent(rules, level=level, seed=seed)

    return factory


def _monte_carlo(level: int) -> AgentFactory:
    def factory(rules: Rules, seed: Any = None) -> MonteCarloAgent:
        return MonteCarloAgent(rules, level=level, seed=seed)

    return factory


def shipped_checkpoint(name: str) -> Path:
    """Where the checkpoint of the packaged learned agent ``name`` lives (``checkpoints/<name>.pt``; may be absent)."""
    return Path(str(importlib.resources.files("president_env.agents") / "checkpoints" / f"{name}.pt"))


def weights_file(name: str) -> Path | None:
    """The checkpoint file that holds the weights of the learned agent ``name`` (a shipped agent's packaged file, or
    ``name`` itself when it is a file); ``None`` for an agent without weights (a baseline, a style)."""
    if name in SHIPPED_AGENTS:
        return shipped_checkpoint(name)
    return Path(name) if Path(name).is_file() else None


SHIPPED_AGENTS: dict[str, str] = {
    "ppo-standard-4p": "the standard preset (4 players)",
    "ppo-standard-4p-long": "the standard preset (4 players)",
    "ppo-standard-3p": "the standard rules at 3 players",
    "ppo-standard-5p": "the standard rules at 5 players",
    "ppo-quebec": "the quebec preset",
    "ppo-big_table": "the big_table preset (8 players, two decks, four jokers)",
    "ppo-family": "the family preset",
    "ppo-party": "the party preset",
    "ppo-or_nothing": "the or_nothing preset",
    "ppo-universal": "any table: every preset, any combination of the rule fields, 3 to 8 players",
}
"""The learned agents shipped in ``checkpoints/<name>.pt`` (the recipe of each is ``configs/train/<name without ppo-
and with _ for ->.yaml``). Each but those of :data:`UNIVERSAL_AGENTS` was trained for one table and plays only the
rules it was trained on, in matches of any length (:func:`~.torch_policy.rule_differences` leaves ``manches``
out)."""

UNIVERSAL_AGENTS: tuple[str, ...] = ("ppo-universal",)
"""The shipped agents with one network for every table (:mod:`.universal`): they play any rules the universal
layout holds (:func:`~.universal.coverage_error`), any match length, and default to the standard game."""


def _shipped(name: str) -> AgentFactory:
    def factory(rules: Rules | None, seed: Any = None) -> Any:
        return _load_shipped(name, rules, seed)

    return factory


def _load_shipped(name: str, rules: Rules | None, seed: Any, asked_for: str | None = None) -> Any:
    """The shipped learned agent ``name`` (errors name ``asked_for``, the agent the caller asked for)."""
    asked_for = asked_for or name
    path = shipped_checkpoint(name)
    if not path.is_file():
        recipe = name.removeprefix("ppo-").replace("-", "_")
        needs = "is" if asked_for == name else "plays with"
        raise ValueError(
            f"agent {asked_for!r} {needs} the packaged checkpoint {path}, which is missing from this installation: "
            "the package was installed without its data, or this table's training has not yet produced an "
            f"agent that beats heuristic-3 (agents.names() lists the shipped ones); train one with "
            f"president-train --config configs/train/{recipe}.yaml and pass its policy.pt path"
        )
    if importlib.util.find_spec("torch") is None:
        raise ValueError(f'agent {asked_for!r} needs torch: pip install "president-env[train]"')
    if name in UNIVERSAL_AGENTS:
        return _load_universal(name, rules, seed, asked_for)
    from .checkpoint import checkpoint_rules, load_checkpoint
    from .torch_policy import TorchPolicyAgent, rule_differences

    checkpoint = load_checkpoint(path)
    trained = checkpoint_rules(checkpoint)
    differences = "" if rules is None else rule_differences(trained, rules, label="trained")
    if differences:
        raise ValueError(
            f"agent {asked_for!r} was trained for {SHIPPED_AGENTS[name]} and plays only those rules "
            f"(any number of manches); the requested rules differ in {differences}"
        )
    agent = TorchPolicyAgent.from_checkpoint(checkpoint, trained if rules is None else rules, seed)
    agent.name = name
    return agent


def _load_universal(name: str, rules: Rules | None, seed: Any, asked_for: str) -> Any:
    """The shipped universal agent ``name`` for ``rules`` (default: the standard game)."""
    from .checkpoint import CheckpointError
    from .universal import coverage_error, load_universal

    rules = Rules() if rules is None else rules
    error = coverage_error(rules)
    if error is not None:
        raise ValueError(f"agent {asked_for!r} plays every table of the universal layout, not these rules: {error}")
    path = shipped_checkpoint(name)
    agent = load_universal(path, rules, seed)
    if agent is None:
        raise CheckpointError(
            f"checkpoint {path}: agent {asked_for!r} needs a universal network; the file holds another"
        )
    agent.name = name
    return agent


@functools.cache
def _trained_rules(path: Path) -> Rules | None:
    """The rules of the checkpoint at ``path``, read once; ``None`` where it is absent or torch is not installed."""
    if not path.is_file() or importlib.util.find_spec("torch") is None:
        return None
    from .checkpoint import checkpoint_rules, load_checkpoint

    return checkpoint_rules(load_checkpoint(path))


def _plays(name: str, rules: Rules) -> bool:
    """Whether the agent ``name`` can play ``rules``: any agent but a shipped learned one (or its search), which
    plays the rules it was trained on, any number of manches, or for a universal one any rules its layout holds."""
    shipped = name.removeprefix(SEARCHING_PREFIX) if name in _SEARCHING else name
    if shipped not in SHIPPED_AGENTS:
        return True
    if shipped in UNIVERSAL_AGENTS:
        if not shipped_checkpoint(shipped).is_file() or importlib.util.find_spec("torch") is None:
            return False
        from .universal import coverage_error

        return coverage_error(rules) is None
    trained = _trained_rules(shipped_checkpoint(shipped))
    if trained is None:
        return False
    from .torch_policy import rule_differences

    return not rule_differences(trained, rules)


def names(rules: Rules | str | None = None) -> tuple[str, ...]:
    """The registered agent names, in registration order (:func:`president_env.core.registry.names`).

    Given ``rules`` (a ``Rules`` or a preset name), only the agents that can play them: the baselines and
    agents registered by others play any rules; a shipped learned agent, and the search on top of it, only the
    rules it was trained on, in matches of any length, and only where torch is installed; ``ppo-universal`` any
    rules (:data:`UNIVERSAL_AGENTS`). Each checkpoint's
    rules are read once per process.
    """
    listed = registry.names()
    if rules is None:
        return listed
    rules = resolve_rules(rules)
    return tuple(name for name in listed if _plays(name, rules))


def _searching(name: str) -> AgentFactory:
    def factory(rules: Rules | None, seed: Any = None) -> Any:
        from .policy_search import PolicySearchAgent

        policy = _load_shipped(name, rules, seed, asked_for=SEARCHING_PREFIX + name)
        return PolicySearchAgent(policy.rules, policy, seed=seed)

    return factory


# A checkpoint is ours when its suffix says so or when its first bytes are those of torch.save's zip archive
# (or of a legacy torch/pickle file). ``.ckpt`` is shared with other frameworks, so it counts by content only.
_TORCH_SUFFIXES = (".pt", ".pth")
_ZIP_MAGIC, _PICKLE_PROTOCOL = b"PK\x03\x04", b"\x80"


def _looks_like_torch_checkpoint(path: str) -> bool:
    if Path(path).suffix.lower() in _TORCH_SUFFIXES:
        return True
    with open(path, "rb") as file:
        head = file.read(4)
    if head.startswith(_PICKLE_PROTOCOL):
        return True
    if not head.startswith(_ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            # torch.save writes "<name>/data.pkl"; other zip formats (e.g. Stable-Baselines3 models) are not ours.
            return any(entry.endswith("data.pkl") for entry in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return True  # a damaged archive: loading says why


def _load_torch_agent(path: str, rules: Rules, seed: Any) -> Any:
    if importlib.util.find_spec("torch") is None:
        raise ValueError(f'{path} is a torch checkpoint; loading it needs torch: pip install "president-env[train]"')
    from .torch_policy import TorchPolicyAgent

    return TorchPolicyAgent.from_checkpoint(path, rules, seed)


def _torch_checkpoint_loader(path: str, rules: Rules, seed: Any = None) -> Any:
    """Checkpoint loader: a :class:`~.torch_policy.TorchPolicyAgent`, or ``None`` for a file that is not a torch one.

    A file that looks like ours but cannot be used raises :class:`~.checkpoint.CheckpointError` (a ``ValueError``).
    """
    if not _looks_like_torch_checkpoint(path):
        return None
    return _load_torch_agent(path, rules, seed)


def _universal_checkpoint_loader(path: str, rules: Rules, seed: Any = None) -> Any:
    """Checkpoint loader: a :class:`~.universal.UniversalAgent` (any table), or ``None`` for another network's file."""
    if not _looks_like_torch_checkpoint(path) or importlib.util.find_spec("torch") is None:
        return None
    from .universal import load_universal

    return load_universal(path, rules, seed)


_BASELINES: dict[str, AgentFactory] = {
    "heuristic-1": _heuristic(1),
    "heuristic-2": _heuristic(2),
    "heuristic-3": _heuristic(3),
    "mc-4": _monte_carlo(4),
    "mc-5": _monte_carlo(5),
}
_STYLES: dict[str, AgentFactory] = {name: style_factory(name) for name in STYLES}
_SHIPPED: dict[str, AgentFactory] = {name: _shipped(name) for name in SHIPPED_AGENTS}
SEARCHING_PREFIX = "search-"
"""``search-<shipped agent>``: that agent with Monte-Carlo search on top (:mod:`.policy_search`). Named only
where the search was measured (the standard table); ``PolicySearchAgent`` wraps any other learned policy."""
_SEARCHING: dict[str, AgentFactory] = {SEARCHING_PREFIX + name: _searching(name) for name in ("ppo-standard-4p",)}


def _installed(name: str) -> Any:
    return lambda: shipped_checkpoint(name).is_file()


def register_opponents() -> None:
    """Fill the agent registry (:mod:`president_env.core.registry`): the baselines, the shipped learned agents (which
    play the rules they were trained for, and are listed where their checkpoint is installed) and the loader of
    torch checkpoint files.

    The entry point of this package in the group ``president_env.opponents``; calling it again changes nothing.
    """
    for name, factory in _BASELINES.items():
        registry.register(name, factory)
    for name, factory in _STYLES.items():
        registry.register(name, factory)
    for name, factory in _SHIPPED.items():  # a universal agent has no rules of its own: the standard game by default
        registry.register(name, factory, own_rules=name not in UNIVERSAL_AGENTS, installed=_installed(name))
    for name, factory in _SEARCHING.items():
        registry.register(name, factory, own_rules=True, installed=_installed(name.removeprefix(SEARCHING_PREFIX)))
    registry.register_checkpoint_loader(_universal_checkpoint_loader)  # before the torch loader, which it defers to
    registry.register_checkpoint_loader(_torch_checkpoint_loader)


# Loaded on first use, so that importing the agents needs no torch (the learned ones do).
_LAZY = {
    "TorchPolicyAgent": "torch_policy",
    "PolicyNet": "torch_policy",
    "CheckpointError": "checkpoint",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Agent",
    "ObsView",
    "Policy",
    "RandomAgent",
    "as_agent",
    "decode",
    "make",
    "names",
    "register",
    "register_checkpoint_loader",
    "register_opponents",
    "SEARCHING_PREFIX",
    "SHIPPED_AGENTS",
    "UNIVERSAL_AGENTS",
    "shipped_checkpoint",
    "weights_file",
]
