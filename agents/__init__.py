"""Baselines and learned policies behind one interface (``president_env.agents``).

    from president_env import agents
    agent = agents.make("heuristic-3", rules, seed=0)
    action = agent.act({"observation": obs, "action_mask": mask}, info)
    actions = agent.act_batch(observations, masks)       # (B, obs_dim), (B, A) bool -> (B,)

Names: ``random``, ``heuristic-1`` … ``heuristic-3`` (batched rules of conduct,
:mod:`.heuristic`), ``mc-4``, ``mc-5`` (Monte-Carlo determinization over the batched
engine, :mod:`.monte_carlo`), or the path of a learned checkpoint (loaders register
with :func:`register_checkpoint_loader`). Agents see the observation and the mask,
never the engine's hidden state.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from president_env.presets import resolve_rules
from president_env.rules import Rules

from .base import Agent, ObsView, Policy, RandomAgent, as_agent, decode

AgentFactory = Callable[[Rules, Any], Any]


def _heuristic(level: int) -> AgentFactory:
    def factory(rules: Rules, seed: Any = None) -> Any:
        from .heuristic import HeuristicAgent

        return HeuristicAgent(rules, level=level, seed=seed)

    return factory


def _monte_carlo(level: int) -> AgentFactory:
    def factory(rules: Rules, seed: Any = None) -> Any:
        from .monte_carlo import MonteCarloAgent

        return MonteCarloAgent(rules, level=level, seed=seed)

    return factory


_FACTORIES: dict[str, AgentFactory] = {
    "random": lambda rules, seed=None: RandomAgent(rules, seed),
    "heuristic-1": _heuristic(1),
    "heuristic-2": _heuristic(2),
    "heuristic-3": _heuristic(3),
    "mc-4": _monte_carlo(4),
    "mc-5": _monte_carlo(5),
}


def names() -> tuple[str, ...]:
    """The registered agent names."""
    return tuple(_FACTORIES)


def register(name: str, factory: AgentFactory, overwrite: bool = False) -> None:
    """Make ``make(name, rules, seed)`` return ``factory(rules, seed)``."""
    if not overwrite and name in _FACTORIES:
        raise ValueError(f"agent {name!r} is already registered")
    _FACTORIES[name] = factory


def register_checkpoint_loader(loader: Callable[[str, Rules, Any], Any]) -> None:
    """``loader(path, rules, seed)`` returns an agent for a checkpoint file, or ``None`` if not its format.

    One registry serves ``make`` and the Gym env's opponents (it lives with the env, the lower layer).
    """
    _gym_env().register_checkpoint_loader(loader)


def _gym_env() -> Any:
    # ``president_env.gym_env`` the module (the package re-exports a function of that name).
    return importlib.import_module("president_env.gym_env")


def make(name: str | os.PathLike, rules: Rules | str | None = None, seed: Any = None) -> Any:
    """An agent from a registered name or a checkpoint path.

    Args:
        name: ``random``, ``heuristic-1|2|3``, ``mc-4|5``, another registered name, or a checkpoint file.
        rules: the rules (or a preset name); default the standard game.
        seed: seed of the agent's generator (int or ``SeedSequence``).
    """
    rules = resolve_rules(rules)
    key = os.fspath(name)
    if key in _FACTORIES:
        return _FACTORIES[key](rules, seed)
    if os.path.isfile(key):
        return _gym_env().load_checkpoint(key, rules, seed)
    raise ValueError(f"unknown agent {key!r}; known agents: {', '.join(names())} (or a checkpoint file path)")


def register_opponents() -> None:
    """Entry point (group ``president_env.opponents``): every agent name becomes a Gym env opponent."""
    for agent_name in names():
        _gym_env().register_opponent(agent_name, _opponent_factory(agent_name), overwrite=True)


def _opponent_factory(agent_name: str) -> Callable[[Rules, Any], Any]:
    def factory(rules: Rules, seed: Any = None) -> Any:
        return make(agent_name, rules, seed)

    return factory


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
]
