"""The training configuration: typed dataclasses loaded from YAML, with command-line overrides.

    config = load_config("configs/train/standard_4p.yaml", overrides=["ppo.learning_rate=3e-4"])
    config.ppo.num_envs          # typed fields, defaults below
    config.save("runs/x/config.yaml")

A file sets any subset of the fields; unknown keys and values of the wrong type are errors that
name the key and what was allowed (a typo must never be silently ignored). Overrides are
``section.field=value`` strings whose value is parsed as YAML (``ppo.update_epochs=4``,
``opponents.baselines={heuristic-3: 1.0}``). YAML is read by ``president_env.user_input.load_yaml``
(``safe_load`` semantics, bounded in size).
"""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from president_env import agents
from president_env.presets import PRESETS, preset_path
from president_env.rules import Rules
from president_env.user_input import load_yaml, read_text, short_repr

TRAIN_CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "train"
"""The shipped training configs (``configs/train/*.yaml``; installed as ``president_env/configs/train``)."""

# Upper bounds of :func:`validate` (sensible, far above the shipped configs: a typo, not a choice, goes past them).
MAX_THREADS = 1024
MAX_NUM_ENVS = 1 << 20
MAX_NUM_STEPS = 1 << 16
MAX_UPDATE_EPOCHS = 1000
MAX_POOL_SIZE = 1000
MAX_EVAL_DEALS = 1_000_000
MAX_HIDDEN = 1 << 16
ACTIVATIONS = ("relu", "tanh")
_BOUND_NOTES = {"rollout.shards": " (ppo.num_envs)"}


@dataclass
class PPOConfig:
    """Masked PPO (CleanRL's ``ppo.py`` defaults where they fit)."""

    num_envs: int = 2048  # games played at once (``VecGame`` slots); every seat acts in one batch
    num_steps: int = 32  # decisions per slot in one rollout (all seats together)
    learning_rate: float = 1e-3  # Adam step size
    anneal_lr: bool = True  # decay the step size linearly to 0 over the budget
    gamma: float = 1.0  # discount per decision of the same seat
    gae_lambda: float = 0.95  # GAE lambda along each seat's own chain of decisions
    num_minibatches: int = 4  # minibatches per epoch
    update_epochs: int = 2  # passes over each rollout
    norm_adv: bool = True  # normalise advantages per minibatch
    clip_coef: float = 0.2  # PPO ratio clip
    clip_vloss: bool = False  # clip the value loss as well
    ent_coef: float = 0.01  # entropy bonus
    vf_coef: float = 0.5  # value-loss weight
    max_grad_norm: float = 0.5  # gradient clipping
    target_kl: float | None = None  # stop an update's epochs early past this approximate KL


@dataclass
class NetworkConfig:
    """The policy-value network (:class:`president_env.agents.torch_policy.PolicyNet`)."""

    hidden: list[int] = field(default_factory=lambda: [256, 256])  # trunk widths
    activation: str = "relu"  # relu | tanh


@dataclass
class OpponentConfig:
    """Who sits at the learner's table; drawn per game, the probabilities sum to 1.

    A game is pure self-play (the learner in every seat) with probability ``self_play``; otherwise
    the learner takes one random seat and one opponent takes all the others: a past snapshot of the
    learner (probability ``snapshots``) or a baseline (``baselines``: name -> probability).
    """

    self_play: float = 0.5
    snapshots: float = 0.2
    baselines: dict[str, float] = field(
        default_factory=lambda: {"heuristic-3": 0.2, "heuristic-2": 0.05, "random": 0.05}
    )
    snapshot_every: int = 10  # updates between two snapshots joining the pool
    pool_size: int = 8  # newest snapshots kept


@dataclass
class BudgetConfig:
    """How long to train and how often to look."""

    total_steps: int = 50_000_000  # env steps: decisions at every seat, learner and opponents
    time_limit_min: float | None = None  # stop earlier after this many minutes (a checkpoint is written)
    eval_every: int = 25  # updates between evaluations against ``eval_opponent`` (0: never)
    eval_deals: int = 100  # duplicate deal groups per evaluation (x players rotations)
    eval_opponent: str = "heuristic-3"
    checkpoint_every: int = 25  # updates between checkpoints (0: only at the end)


@dataclass
class RolloutConfig:
    """Where the rollout's games are played: cut into shards, run in this process or on Ray.

    The ``ppo.num_envs`` games are split evenly into ``shards``; each shard has its own game,
    tables, carried decisions and random streams (children of the run's seed), and all shards'
    decisions form one training batch. ``shards`` is part of the run (it changes the random
    streams); ``ray_address`` is not: for the same seed and shards, a run on Ray is the same run
    as in this process (bit for bit when ``threads`` equals the actors' torch threads, which is
    ``ray_cpus_per_shard`` rounded down, at least 1, so that torch sums in the same order).
    """

    shards: int = 1  # must divide ppo.num_envs
    ray_address: str | None = None  # null: this process; "local", "auto", "ray://host:10001": a Ray actor per shard
    ray_cpus_per_shard: float = 1.0  # CPUs each shard's actor reserves (fractional to fit more shards than CPUs)


@dataclass
class TrainConfig:
    """A whole run: rules, algorithm, network, opponents and budget."""

    rules: str = "standard"  # a preset name or a rules YAML path
    seed: int = 1  # root seed: games, sampling, network initialisation, opponents
    out_dir: str = "runs/ppo"  # checkpoints, config.yaml, metrics.jsonl, TensorBoard events
    threads: int = 0  # torch CPU threads (0: torch's default)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    opponents: OpponentConfig = field(default_factory=OpponentConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)

    def resolve_rules(self) -> Rules:
        """The ``Rules`` named by ``rules`` (a preset name or a YAML file)."""
        if self.rules in PRESETS:
            return Rules.from_yaml(preset_path(self.rules))
        path = Path(self.rules)
        if not os.path.isfile(path):  # False, not OSError, for a name too long for the file system
            raise ValueError(
                f"rules: {short_repr(self.rules, 200)} is neither a preset ({', '.join(PRESETS)}) nor a YAML file"
            )
        return Rules.from_yaml(path)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> Path:
        """Write the resolved config as YAML (loadable with :func:`load_config`)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))
        return path


def validate(config: TrainConfig) -> TrainConfig:
    """Check values beyond their types; raises ``ValueError`` naming the field.

    Every integer has a range, every float must be finite and in its range, the agents named must exist
    and the rules must load: a config that validates can train (see ``docs/training.md``).
    """
    p, o, b, r = config.ppo, config.opponents, config.budget, config.rollout
    # name: (value, low, high) with both bounds inclusive; None: unbounded on that side.
    ints: dict[str, tuple[int, int, int | None]] = {
        "seed": (config.seed, 0, None),
        "threads": (config.threads, 0, MAX_THREADS),
        "ppo.num_envs": (p.num_envs, 1, MAX_NUM_ENVS),
        "ppo.num_steps": (p.num_steps, 1, MAX_NUM_STEPS),
        "ppo.num_minibatches": (p.num_minibatches, 1, None),
        "ppo.update_epochs": (p.update_epochs, 1, MAX_UPDATE_EPOCHS),
        "opponents.snapshot_every": (o.snapshot_every, 1, None),
        "opponents.pool_size": (o.pool_size, 1, MAX_POOL_SIZE),
        "budget.total_steps": (b.total_steps, 1, None),
        "budget.eval_every": (b.eval_every, 0, None),
        "budget.eval_deals": (b.eval_deals, 1, MAX_EVAL_DEALS),
        "budget.checkpoint_every": (b.checkpoint_every, 0, None),
        "rollout.shards": (r.shards, 1, p.num_envs),
        **{f"network.hidden[{i}]": (width, 1, MAX_HIDDEN) for i, width in enumerate(config.network.hidden)},
    }
    for name, (value, low, high) in ints.items():
        if value < low or (high is not None and value > high):
            allowed = f">= {low}" if high is None else f"from {low} to {high}{_BOUND_NOTES.get(name, '')}"
            raise ValueError(f"{name} must be an integer {allowed}, got {short_repr(value)}")
    if p.num_envs % r.shards:
        raise ValueError(f"rollout.shards must divide ppo.num_envs ({p.num_envs}), got {r.shards}")
    if not config.network.hidden:
        raise ValueError("network.hidden must list at least one layer width")
    if config.network.activation not in ACTIVATIONS:
        raise ValueError(
            f"network.activation must be one of {', '.join(ACTIVATIONS)}, got {short_repr(config.network.activation)}"
        )
    # name: (value, low, high, low_open); None values are allowed where the field is optional.
    floats: dict[str, tuple[float | None, float, float, bool]] = {
        "ppo.learning_rate": (p.learning_rate, 0.0, 1.0, True),
        "ppo.gamma": (p.gamma, 0.0, 1.0, False),
        "ppo.gae_lambda": (p.gae_lambda, 0.0, 1.0, False),
        "ppo.clip_coef": (p.clip_coef, 0.0, 10.0, True),
        "ppo.ent_coef": (p.ent_coef, 0.0, 10.0, False),
        "ppo.vf_coef": (p.vf_coef, 0.0, 100.0, False),
        "ppo.max_grad_norm": (p.max_grad_norm, 0.0, 1e6, True),
        "ppo.target_kl": (p.target_kl, 0.0, 1e6, True),
        "budget.time_limit_min": (b.time_limit_min, 0.0, 1e9, True),
        "rollout.ray_cpus_per_shard": (r.ray_cpus_per_shard, 0.0, 1024.0, True),
        "opponents.self_play": (o.self_play, 0.0, 1.0, False),
        "opponents.snapshots": (o.snapshots, 0.0, 1.0, False),
        **{f"opponents.baselines.{_key(k)}": (v, 0.0, 1.0, False) for k, v in o.baselines.items()},
    }
    for name, (value, low, high, low_open) in floats.items():
        if value is None:
            continue
        if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
            allowed = f"{'(' if low_open else '['}{low:g}, {high:g}]"
            raise ValueError(f"{name} must be a finite number in {allowed}, got {short_repr(value)}")
    weights = {
        "self_play": o.self_play,
        "snapshots": o.snapshots,
        **{f"baselines.{k}": v for k, v in o.baselines.items()},
    }
    total = sum(weights.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(
            f"opponents: self_play + snapshots + baselines must sum to 1, got {total:g} ({short_repr(weights, 200)})"
        )
    for name in o.baselines:
        if name not in agents.names():
            raise ValueError(
                f"opponents.baselines: unknown agent {short_repr(name)}; known: {', '.join(agents.names())}"
            )
    if b.eval_opponent not in agents.names() and not os.path.isfile(b.eval_opponent):
        raise ValueError(
            f"budget.eval_opponent: unknown agent {short_repr(b.eval_opponent)}; known: "
            f"{', '.join(agents.names())} (or a checkpoint file path)"
        )
    if not config.out_dir.strip():
        raise ValueError("out_dir must not be empty")
    config.resolve_rules()
    return config


def from_dict(data: dict[str, Any] | None) -> TrainConfig:
    """A validated ``TrainConfig`` from a nested mapping; unknown keys and wrong types raise ``ValueError``."""
    return validate(_build(TrainConfig, data or {}, ""))


def load_config(path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """Load a YAML config (or the defaults when ``path`` is None) and apply ``section.field=value`` overrides.

    ``path`` may also name a shipped config (``"quick"``, ``"standard_4p"``).
    """
    data: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not os.path.isfile(path) and os.path.isfile(TRAIN_CONFIGS / f"{path}.yaml"):
            path = TRAIN_CONFIGS / f"{path}.yaml"  # a shipped config by name: "quick", "standard_4p"
        name = short_repr(str(path), 200)
        if not os.path.isfile(path):  # False, not OSError, for a name too long for the file system
            shipped = ", ".join(sorted(p.stem for p in TRAIN_CONFIGS.glob("*.yaml")))
            raise ValueError(f"config file {name} does not exist (shipped configs by name: {shipped})")
        data = load_yaml(read_text(path, "config file"), f"config file {name}") or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {name} must hold a mapping, got {type(data).__name__}")
    for item in overrides:
        apply_override(data, item)
    return from_dict(data)


def apply_override(data: dict[str, Any], item: str) -> None:
    """Set ``data[section][field]`` from ``"section.field=value"`` (value parsed as YAML)."""
    key, sep, text = item.partition("=")
    shown = short_repr(item)
    if not sep or not key.strip():
        raise ValueError(f"override {shown} must look like section.field=value (e.g. ppo.learning_rate=3e-4)")
    value = load_yaml(text, f"override {shown}") if text.strip() else None
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"override {shown}: {short_repr(part)} is not a section")
        node = child
    node[parts[-1]] = value


def _build(cls: type, data: Any, prefix: str) -> Any:
    where = prefix.rstrip(".") or "config"
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields), key=str)
    if unknown:
        raise ValueError(f"unknown key {short_repr(prefix + str(unknown[0]))} in {where}; allowed: {', '.join(fields)}")
    values = {}
    for name, value in data.items():
        values[name] = _coerce(hints[name], value, f"{prefix}{name}")
    return cls(**values)


def _key(key: str) -> str:
    """A mapping key as part of a field name in a message, cut to 40 characters."""
    return key if len(key) <= 40 else key[:37] + "..."


def _coerce(hint: Any, value: Any, name: str) -> Any:
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, f"{name}.")
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _coerce(inner, value, name)
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{name} must be a list, got {short_repr(value)}")
        return [_coerce(args[0], v, f"{name}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{name} must be a mapping, got {short_repr(value)}")
        return {_coerce(args[0], k, f"{name} key"): _coerce(args[1], v, f"{name}.{_key(k)}") for k, v in value.items()}
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {short_repr(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {short_repr(value)}")
        return value
    if hint is float:
        if isinstance(value, str):  # YAML 1.1 reads "3e-4" (no dot) as a string
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, got {short_repr(value)}")
        try:
            return float(value)
        except OverflowError:  # an integer beyond the float range
            raise ValueError(f"{name} must be a finite number, got {short_repr(value)}") from None
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {short_repr(value)}")
        return value
    raise TypeError(f"unsupported config type {hint!r} for {name}")
