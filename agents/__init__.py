"""Baselines and learned policies behind one interface (``president_env.agents``).

    from president_env import agents
    agent = agents.make("heuristic-3", rules, seed=0)
    action = agent.act({"observation": obs, "action_mask": mask}, info)
    actions = agent.act_batch(observations, masks)       # (B, obs_dim), (B, A) bool -> (B,)

Names: ``random``, ``heuristic-1`` … ``heuristic-3`` (batched rules of conduct,
:mod:`.heuristic`), ``mc-4``, ``mc-5`` (Monte-Carlo determinization over the batched
engine, :mod:`.monte_carlo`), the rule-based styles ``style-hoarder``, ``style-dumper``, ``style-patient``,
``style-controller``, ``style-shedder`` and ``style-drawn`` (:mod:`.styles`), the learned policy shipped in
``checkpoints/`` (``ppo-universal``, one network for every table, :data:`SHIPPED_AGENTS`), the same network with
search at play time (``ppo-universal-search``, :data:`SEARCH_AGENTS`, :mod:`.policy_search`), or the path of a
learned checkpoint (torch checkpoints, ``.pt``, load as :class:`~.torch_policy.TorchPolicyAgent`, or for any table as
:class:`~.universal.UniversalAgent` when trained by ``training/universal.py``; format in :mod:`.checkpoint`;
other formats plug in with :func:`register_checkpoint_loader`). Agents see the observation and the mask,
never the engine's hidden state. The retired per-table agents' names (:data:`RETIRED_AGENTS`) still make
``ppo-universal``, with a :class:`RetiredAgentWarning`, for one deprecation period.

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

import importlib
import importlib.resources
import importlib.util
import warnings
import zipfile
from pathlib import Path
from typing import Any

from president_env.core import registry
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.registry import (
    AgentFactory,
    Policy,
    RandomAgent,
    RetiredAgentWarning,
    as_agent,
    make,
    register,
    register_checkpoint_loader,
)
from president_env.core.rules import Rules

from .base import Agent, ObsView, decode
from .heuristic import HeuristicAgent
from .monte_carlo import MonteCarloAgent
from .styles import DRAWN_STYLE, STYLES, DrawnStyleAgent, style_factory


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
    ``name`` itself when it is a file); ``None`` for an agent without weights (a baseline, a style). A retired name
    gives its replacement's file, with a :class:`RetiredAgentWarning`, as :func:`make` does."""
    if name in RETIRED_AGENTS:
        warnings.warn(retired_message(name), RetiredAgentWarning, stacklevel=2)
        name = REPLACEMENT_AGENT
    if name in SHIPPED_AGENTS:
        return shipped_checkpoint(name)
    return Path(name) if Path(name).is_file() else None


SHIPPED_AGENTS: dict[str, str] = {
    "ppo-universal": "any table: every preset, any combination of the rule fields, 3 to 8 players",
}
"""The learned agents shipped in ``checkpoints/<name>.pt``, each with the tables it plays (its recipe and figures:
``docs/models.md``)."""

UNIVERSAL_AGENTS: tuple[str, ...] = tuple(SHIPPED_AGENTS)
"""The shipped agents with one network for every table (:mod:`.universal`; every shipped agent is one now): they
play any rules the universal layout holds (:func:`~.universal.coverage_error`), any match length, and default to
the standard game."""

SEARCH_AGENTS: dict[str, str] = {
    "ppo-universal-search": "ppo-universal",
}
"""The agents that search at play time over a shipped policy, each with the policy it searches over
(:class:`~.policy_search.PolicySearchAgent` with :data:`~.policy_search.SHIPPED_SEARCH`): the slowest agents,
offered where their policy plays the table (their strength so far: docs/agents.md)."""

REPLACEMENT_AGENT = "ppo-universal"
"""The agent a retired name makes (:data:`RETIRED_AGENTS`)."""

RETIRED_AGENTS: dict[str, RulesSpec] = {
    "ppo-standard-4p": "standard",
    "ppo-standard-4p-long": "standard",
    "search-ppo-standard-4p": "standard",
    "ppo-standard-3p": {"n_players": 3},
    "ppo-standard-5p": {"n_players": 5},
    "ppo-quebec": "quebec",
    "ppo-big_table": "big_table",
    "ppo-family": "family",
    "ppo-party": "party",
    "ppo-or_nothing": "or_nothing",
}
"""The per-table agents, retired: ``ppo-universal`` beats each on its own table (held-out deals, +0.45 to +0.96:
``docs/results/experiments/universal/``), and each name maps to the table it was trained for. For one deprecation
period a retired name still makes :data:`REPLACEMENT_AGENT` (at the rules given, by default at that table) with a
:class:`RetiredAgentWarning`; :func:`names` no longer lists it, so the apps do not offer it."""


def retired_message(name: str) -> str:
    """The one-line warning a retired agent name gives."""
    return (
        f"agent {name!r} was retired: {REPLACEMENT_AGENT} replaces it and plays in its place; name "
        f"{REPLACEMENT_AGENT} instead (retired names stop working in a later release)"
    )


def _shipped(name: str) -> AgentFactory:
    def factory(rules: Rules | None, seed: Any = None) -> Any:
        return _load_shipped(name, rules, seed)

    return factory


def _retired(name: str) -> AgentFactory:
    def factory(rules: Rules | None, seed: Any = None) -> Any:
        warnings.warn(retired_message(name), RetiredAgentWarning, stacklevel=3)  # at the caller of make
        table = resolve_rules(RETIRED_AGENTS[name]) if rules is None else rules
        return _load_shipped(REPLACEMENT_AGENT, table, seed, asked_for=name)

    return factory


def _load_shipped(name: str, rules: Rules | None, seed: Any, asked_for: str | None = None) -> Any:
    """The shipped universal agent ``name`` for ``rules`` (default: the standard game); errors name ``asked_for``,
    the agent the caller asked for."""
    asked_for = asked_for or name
    path = shipped_checkpoint(name)
    if not path.is_file():
        needs = "is" if asked_for == name else "plays with"
        raise ValueError(
            f"agent {asked_for!r} {needs} the packaged checkpoint {path}, which is missing from this installation: "
            "the package was installed without its data (agents.names() lists the shipped agents); train one with "
            f"president-train --config configs/train/universal.yaml and pass its policy.pt path"
        )
    if importlib.util.find_spec("torch") is None:
        raise ValueError(f'agent {asked_for!r} needs torch: pip install "president-env[train]"')
    from .checkpoint import CheckpointError
    from .universal import coverage_error, load_universal

    rules = Rules() if rules is None else rules
    error = coverage_error(rules)
    if error is not None:
        raise ValueError(f"agent {asked_for!r} plays every table of the universal layout, not these rules: {error}")
    agent = load_universal(path, rules, seed)
    if agent is None:
        raise CheckpointError(
            f"checkpoint {path}: agent {asked_for!r} needs a universal network; the file holds another"
        )
    agent.name = name
    return agent


def _searching(name: str) -> AgentFactory:
    def factory(rules: Rules | None, seed: Any = None) -> Any:
        from .policy_search import SHIPPED_SEARCH, PolicySearchAgent

        policy = _load_shipped(SEARCH_AGENTS[name], rules, seed, asked_for=name)
        return PolicySearchAgent(policy.rules, policy, seed=seed, config=SHIPPED_SEARCH, name=name)

    return factory


def _plays(name: str, rules: Rules) -> bool:
    """Whether the agent ``name`` can play ``rules``: any agent but a shipped learned one (or a search over one),
    which plays any rules its universal layout holds, where its checkpoint and torch are installed."""
    name = SEARCH_AGENTS.get(name, name)
    if name not in SHIPPED_AGENTS:
        return True
    if not shipped_checkpoint(name).is_file() or importlib.util.find_spec("torch") is None:
        return False
    from .universal import coverage_error

    return coverage_error(rules) is None


def names(rules: Rules | str | None = None) -> tuple[str, ...]:
    """The registered agent names, in registration order (:func:`president_env.core.registry.names`).

    Given ``rules`` (a ``Rules`` or a preset name), only the agents that can play them: the baselines and
    agents registered by others play any rules; ``ppo-universal`` any rules its layout holds, where torch is
    installed (:data:`UNIVERSAL_AGENTS`). The retired names (:data:`RETIRED_AGENTS`) are not listed.
    """
    listed = registry.names()
    if rules is None:
        return listed
    rules = resolve_rules(rules)
    return tuple(name for name in listed if _plays(name, rules))


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
_STYLES: dict[str, AgentFactory] = {name: style_factory(name) for name in STYLES} | {DRAWN_STYLE: DrawnStyleAgent}
_SHIPPED: dict[str, AgentFactory] = {name: _shipped(name) for name in SHIPPED_AGENTS}
_SEARCHING: dict[str, AgentFactory] = {name: _searching(name) for name in SEARCH_AGENTS}
_RETIRED: dict[str, AgentFactory] = {name: _retired(name) for name in RETIRED_AGENTS}


def _installed(name: str) -> Any:
    return lambda: shipped_checkpoint(name).is_file()


def _never() -> bool:
    return False


def register_opponents() -> None:
    """Fill the agent registry (:mod:`president_env.core.registry`): the baselines, the styles, the shipped learned
    agent and the search over it (listed where its checkpoint is installed), the retired names (never listed) and
    the loaders of torch checkpoint files.

    The entry point of this package in the group ``president_env.opponents``; calling it again changes nothing.
    """
    for name, factory in _BASELINES.items():
        registry.register(name, factory)
    for name, factory in _STYLES.items():
        registry.register(name, factory)
    for name, factory in _SHIPPED.items():  # a universal agent has no rules of its own: the standard game by default
        registry.register(name, factory, installed=_installed(name))
    for name, factory in _SEARCHING.items():
        registry.register(name, factory, installed=_installed(SEARCH_AGENTS[name]))
    for name, factory in _RETIRED.items():  # made without rules at the table it was trained for; never listed
        registry.register(name, factory, own_rules=True, installed=_never)
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
    "REPLACEMENT_AGENT",
    "RETIRED_AGENTS",
    "RetiredAgentWarning",
    "SEARCH_AGENTS",
    "SHIPPED_AGENTS",
    "UNIVERSAL_AGENTS",
    "retired_message",
    "shipped_checkpoint",
    "weights_file",
]
