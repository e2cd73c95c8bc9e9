"""The agent interface and the one agent registry, in the environment core.

    from president_env.core import registry
    agent = registry.make("heuristic-3", rules, seed=0)          # a name, or the path of a checkpoint file
    action = agent.act({"observation": obs, "action_mask": mask}, info)
    registry.register("mine", lambda rules, seed=None: MyAgent(rules, seed))

**The interface** (:class:`Policy`): an agent has ``act(observation_dict, info) -> int``, one decision from a
PettingZoo/Gymnasium observation ``{"observation": (obs_dim,) float32, "action_mask": (A,) int8}``. Optional:

- ``act_batch(observations, masks) -> actions``: ``(B, obs_dim) float32`` and ``(B, A) bool`` to ``(B,) int64``,
  one decision per row (batched callers use it; :func:`as_agent` supplies a row-by-row one where it is missing);
- ``reset(seed)``: reseed the agent (the Gym envs call it at every reset);
- ``name``: what tournaments report it as; ``explain(observation_dict, info)``: the decision and what weighed in it;
- ``needs_observations = False``: it reads the masks only (a batched env may skip computing observations for it);
- ``act_views(views, masks) -> actions``: ``act_batch`` on the observations' named views (the dict
  ``observation.layout(rules).view(observations)`` gives, one ``(B, ...)`` array per segment) instead of the
  vectors; a batched env that holds the state reads them from it (``layout(rules).view_state``) and skips
  encoding and decoding. It must choose what ``act_batch`` chooses on the same observations;
- ``compiled_policy(rules) -> CompiledPolicy | None``: its decision as a Numba function that a batched env's compiled
  loop calls for every opponent decision between two learner turns (:mod:`president_env.core.autoplay`).

:class:`Agent` is the base class the shipped agents share (``act`` is one row of ``act_batch``), and
:class:`RandomAgent` the one random player (``"random"``, registered here).

**The registry** maps names to factories ``factory(rules, seed) -> agent`` and keeps the checkpoint loaders
``loader(path, rules, seed) -> agent or None``; :func:`check_name` is the one check of an agent name. The
environment layer resolves the opponents it is given by name through it (:func:`resolve`), and
``president_env.agents`` is the same registry seen from the agents.
The environment never imports the agents: they fill the registry through the entry-point group
``president_env.opponents`` (see :func:`load_plugins`), loaded on the first lookup. Why an entry point:
``docs/architecture.md``.
"""

from __future__ import annotations

import importlib.metadata
import os
import warnings
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from president_env.core.autoplay import CompiledPolicy, uniform_decision
from president_env.core.engine import sample_legal
from president_env.core.observation import layout
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.rules import Rules
from president_env.core.user_input import RetiredAgentWarning, is_file, short_repr

PLUGIN_GROUP = "president_env.opponents"
"""The entry-point group whose functions fill the registry (called once, without arguments)."""

Seed = int | np.random.SeedSequence | None
AgentFactory = Callable[[Rules, Any], Any]
CheckpointLoader = Callable[[str, Rules, Any], Any]


@runtime_checkable
class Policy(Protocol):
    """What environments, tournaments and the trainer need from an agent; the optional parts are in the module
    docstring (``act_batch``, ``reset``, ``name``, ``explain``)."""

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        """The action (an index into the action space) for one observation dict (``observation``, ``action_mask``)."""


def check_batch(rules: Rules, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert ``act_batch`` inputs: ``(B, obs_dim) float32`` and ``(B, A) bool``."""
    observations = np.asarray(observations, np.float32)
    masks = np.asarray(masks)
    dim = layout(rules).size
    if observations.ndim != 2 or observations.shape[1] != dim:
        raise ValueError(f"observations must have shape (B, {dim}) for these rules, got {observations.shape}")
    if masks.shape != (observations.shape[0], rules.num_actions):
        raise ValueError(f"masks must have shape ({observations.shape[0]}, {rules.num_actions}), got {masks.shape}")
    masks = masks.astype(bool, copy=False)
    if not masks.any(axis=1).all():
        raise ValueError(f"row {int(np.flatnonzero(~masks.any(axis=1))[0])} of masks has no legal action")
    return observations, masks


class Agent:
    """Base class: subclasses implement :meth:`act_batch`; :meth:`act` is one row of it.

    Args:
        rules: the rules the agent plays (sizes the observation it reads).
        seed: seed of the agent's own ``numpy.random.Generator`` (ties, sampling).
    """

    name = "agent"

    def __init__(self, rules: Rules, seed: Seed = None) -> None:
        self.rules = rules
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: Seed = None) -> None:
        """Reseed the agent's generator (the Gym envs call this at every reset)."""
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B,)`` legal actions for ``(B, obs_dim) float32`` observations and ``(B, num_actions) bool`` masks."""
        raise NotImplementedError

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        """The action for one observation dict (``observation``, ``action_mask``): one row of :meth:`act_batch`."""
        obs = np.asarray(observation["observation"], np.float32)[None]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None]
        return int(self.act_batch(obs, mask)[0])

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """One decision and what weighed in it: ``{"action": a, "measure": text or None, "values": {a: number}}``.

        ``values`` scores legal actions in the agent's own terms (``measure`` names them: move
        probabilities, mean points, costs). The base class gives the decision alone.
        """
        return {"action": self.act(observation, info), "measure": None, "values": {}}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own seeded generator.

    ``rules`` may be ``None``: the masks are then checked for shape ``(B, A)`` and a legal action per row only.
    """

    name = "random"
    needs_observations = False  # reads the masks only: batched envs may skip computing observations for it

    def __init__(self, rules: Rules | None = None, seed: Seed = None) -> None:
        super().__init__(rules, seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A uniformly drawn legal action per row of ``masks`` (the observations are not read)."""
        if self.rules is not None:
            _, masks = check_batch(self.rules, observations, masks)
        else:
            masks = np.asarray(masks).astype(bool, copy=False)
            if masks.ndim != 2:
                raise ValueError(f"masks must have shape (B, num_actions), got {masks.shape}")
        return sample_legal(masks, self.rng)

    def compiled_policy(self, rules: Rules) -> CompiledPolicy | None:
        """The same uniform draw for a batched env's compiled loop (:mod:`president_env.core.autoplay`), keyed from
        this agent's generator at each call; ``None`` for a subclass that chooses otherwise."""
        if type(self).act_batch is not RandomAgent.act_batch:
            return None
        return CompiledPolicy(uniform_decision, (), key=lambda: int(self.rng.integers(2**63)))

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The drawn action, with every legal action's probability (``1 / number of legal actions``)."""
        legal = np.flatnonzero(observation["action_mask"])
        values = {int(a): 1.0 / legal.size for a in legal}
        return {"action": self.act(observation, info), "measure": "probability", "values": values}


class CallableAgent:
    """Adapts a function ``f(obs_vector, mask) -> action`` (mask int8) to ``act``."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], int]) -> None:
        self.function = function

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        return self.function(observation["observation"], observation["action_mask"])

    def __repr__(self) -> str:
        return f"CallableAgent({self.function!r})"


def as_agent(agent: Any) -> Any:
    """Objects with ``act`` but no ``act_batch`` get a row-by-row ``act_batch`` (slow, but uniform)."""
    if hasattr(agent, "act_batch"):
        return agent
    return _RowByRow(agent)


class _RowByRow:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        return int(self.agent.act(observation, info))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = [
            self.agent.act({"observation": o, "action_mask": m.astype(np.int8)}, {})
            for o, m in zip(observations, masks)
        ]
        return np.asarray(rows, np.int64)


# ---- the registry ---------------------------------------------------------------------------------------------
_FACTORIES: dict[str, AgentFactory] = {"random": RandomAgent}
_OWN_RULES: set[str] = set()  # names whose factory gets rules=None when the caller gives none
_INSTALLED: dict[str, Callable[[], bool]] = {}  # names listed by names() only while this says their files exist
_CHECKPOINT_LOADERS: list[CheckpointLoader] = []
_PLUGINS_LOADED = False


def load_plugins() -> None:
    """Call, once, every function declared in the entry-point group ``president_env.opponents``.

    Each is called without arguments and registers names (:func:`register`) and checkpoint formats
    (:func:`register_checkpoint_loader`); ``president_env.agents`` declares one. Every other function of this
    registry calls this first, so names resolve without importing the agents here. A plugin that fails to load
    is skipped with a warning naming it.
    """
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for entry_point in importlib.metadata.entry_points(group=PLUGIN_GROUP):
        try:
            entry_point.load()()
        except Exception as err:  # a broken third-party plugin must not take the other names with it
            warnings.warn(
                f"agent plugin {entry_point.name} = {entry_point.value} (entry-point group {PLUGIN_GROUP}) "
                f"failed and was skipped: {type(err).__name__}: {err}",
                RuntimeWarning,
                stacklevel=2,
            )


def register(
    name: str,
    factory: AgentFactory,
    overwrite: bool = False,
    *,
    own_rules: bool = False,
    installed: Callable[[], bool] | None = None,
) -> None:
    """Make :func:`make` return ``factory(rules, seed)`` for ``name``.

    Args:
        name: the agent's name; registering another factory under a taken name needs ``overwrite=True``
            (registering the same factory again does nothing).
        factory: ``factory(rules, seed) -> agent``; ``rules`` is a :class:`~president_env.core.rules.Rules`.
        own_rules: the agent plays the rules it was trained for: ``make(name)`` without rules passes ``None``
            (other factories get the standard game).
        installed: for agents made from files that may be absent: :func:`names` lists ``name`` only while
            ``installed()`` is true (``make`` still calls the factory, which says what is missing).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"agent name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(f"agent {name!r}: factory must be callable, got {factory!r}")
    load_plugins()
    if not overwrite and name in _FACTORIES and _FACTORIES[name] is not factory:
        raise ValueError(f"agent {name!r} is already registered")
    _FACTORIES[name] = factory
    if own_rules:
        _OWN_RULES.add(name)
    else:
        _OWN_RULES.discard(name)
    if installed is None:
        _INSTALLED.pop(name, None)
    else:
        _INSTALLED[name] = installed


def register_checkpoint_loader(loader: CheckpointLoader) -> None:
    """``loader(path, rules, seed)`` returns an agent for a checkpoint file, or ``None`` if not its format.

    Loaders are tried in the order they were registered; the first agent wins.
    """
    if not callable(loader):
        raise ValueError(f"checkpoint loader must be callable, got {loader!r}")
    load_plugins()
    if loader not in _CHECKPOINT_LOADERS:
        _CHECKPOINT_LOADERS.append(loader)


def names() -> tuple[str, ...]:
    """The registered agent names, in registration order (agents made from files only where installed)."""
    load_plugins()
    return tuple(name for name in _FACTORIES if name not in _INSTALLED or _INSTALLED[name]())


def make(name: str | os.PathLike, rules: RulesSpec = None, seed: Any = None) -> Any:
    """An agent from a registered name or a checkpoint path.

    Args:
        name: a registered name (:func:`names`: ``random``, ``heuristic-1|2|3``, ``mc-4|5``, the shipped learned
            agents …) or the path of a checkpoint file (the first registered loader that accepts it).
        rules: a rules spec (``presets.resolve_rules``); default the standard game, or for an agent registered with
            ``own_rules`` the rules it was trained on.
        seed: seed of the agent's generator (an integer >= 0, a ``SeedSequence`` or None); anything else is a
            ``ValueError`` naming ``seed``.
    """
    key = check_name(name)
    check_seed(seed)
    if key in _FACTORIES:
        if rules is None and key in _OWN_RULES:
            return _FACTORIES[key](None, seed)
        return _FACTORIES[key](resolve_rules(rules), seed)
    return _load_checkpoint(key, resolve_rules(rules), seed)


def check_seed(seed: Any) -> None:
    """``ValueError`` naming ``seed`` unless it seeds a ``numpy.random.Generator``: None, an integer >= 0 (not a
    bool), a ``SeedSequence``, a bit generator or a generator."""
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)):
        return
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return
    raise ValueError(f"seed must be None, an integer >= 0 or a numpy SeedSequence, got {short_repr(seed)}")


def check_name(name: Any, checkpoints: bool = True) -> str:
    """The one agent-name check: ``name`` as text if it is a registered name (or, with ``checkpoints``, the path of
    an existing file); else a ``ValueError`` listing the known agents. Every entry point that takes an agent name
    (envs, tournaments, CLIs, training configs) calls it before any long work."""
    if not isinstance(name, (str, os.PathLike)) or not isinstance(os.fspath(name), str):
        raise ValueError(f"an agent name must be text, got {type(name).__name__} {short_repr(name)}")
    key = os.fspath(name)
    load_plugins()
    if key in _FACTORIES or (checkpoints and is_file(key)):
        return key
    paths = " (or a checkpoint file path)" if checkpoints else ""
    if checkpoints and _looks_like_path(key):  # meant as a file: say what is wrong with the file
        what = "not a file" if os.path.isdir(key) else "no such file"
        shown = repr(key) if len(key) <= 200 else repr(key[:200]) + "..."
        raise ValueError(f"{what}: {shown} (an agent is a registered name or a checkpoint file path)")
    raise ValueError(f"unknown agent {short_repr(key)}; known agents: {', '.join(names())}{paths}")


def _looks_like_path(name: str) -> bool:
    """Whether an agent name is meant as a file: it names a folder or has a checkpoint's suffix."""
    return "/" in name or os.sep in name or name.endswith((".pt", ".pth"))


def _load_checkpoint(path: str, rules: Rules, seed: Any) -> Any:
    for loader in _CHECKPOINT_LOADERS:
        agent = loader(path, rules, seed)
        if agent is not None:
            return agent
    raise ValueError(f"no checkpoint loader accepts {path!r} (registered loaders: {len(_CHECKPOINT_LOADERS)})")


def resolve(opponent: Any, rules: Rules, seed: Any = None) -> Any:
    """An object with ``act(observation_dict, info) -> int`` for a name, a checkpoint path, an agent or a callable.

    - a registered name or a checkpoint file path -> :func:`make`;
    - an object with an ``act`` method -> itself;
    - a callable ``f(obs_vector, mask) -> action`` -> wrapped in :class:`CallableAgent`.

    An unknown name is :func:`check_name`'s ``ValueError``; anything else raises one listing the known names.
    """
    if isinstance(opponent, (str, os.PathLike)):
        return make(opponent, rules, seed)
    if callable(getattr(opponent, "act", None)):
        return opponent
    if callable(opponent):
        return CallableAgent(opponent)
    raise ValueError(
        f"opponent must be a name ({', '.join(names())}), a checkpoint path, an object with "
        f"act(observation, info) or a callable f(obs, mask); got {short_repr(opponent)}"
    )


__all__ = [
    "PLUGIN_GROUP",
    "Agent",
    "AgentFactory",
    "CallableAgent",
    "CheckpointLoader",
    "Policy",
    "RandomAgent",
    "RetiredAgentWarning",
    "as_agent",
    "check_batch",
    "check_name",
    "load_plugins",
    "make",
    "names",
    "register",
    "register_checkpoint_loader",
    "resolve",
]
