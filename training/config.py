"""The training configuration: pydantic models loaded from YAML, with command-line overrides.

    config = load_config("configs/train/quick.yaml", overrides=["ppo.learning_rate=3e-4"])
    config.ppo.num_envs          # typed fields, defaults below
    config.save("runs/x/config.yaml")

The file's ``kind`` picks the run: ``ppo`` (the default) is a :class:`TrainConfig`, one table;
``universal`` a :class:`UniversalConfig`, one network on a mixture of tables. Both share :class:`RunConfig`.
A file sets any subset of the fields. Overrides are ``section.field=value`` strings whose value is
parsed as YAML (``ppo.update_epochs=4``, ``opponents.baselines={heuristic-3: 1.0}``) and merged into
the file's mapping. YAML is read by ``president_env.core.user_input.load_yaml`` (``safe_load`` semantics,
bounded in size). The merged mapping is validated once, by pydantic in strict mode: no value changes
type (``1`` is not ``true``, ``"4"`` is not ``4``), except that a float field reads a string that
spells a number (YAML 1.1 reads ``3e-4``, with no dot, as a string). Each field carries its range
(``Field(ge=..., le=...)``; floats must be finite); validators check the agents named, the rules, and
what spans fields (the opponent probabilities sum to 1, ``rollout.shards`` divides ``ppo.num_envs``, one rollout
fits in this machine's memory: :func:`check_rollout_memory`).
A config that validates can train. Any refusal is a ``ValueError`` of one short line that names the
key and what it allows (an unknown key lists the allowed ones: a typo is never silently ignored).
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from president_env.core.presets import resolve_rules
from president_env.core.registry import check_name
from president_env.core.rule_space import HELDOUT_DEAL_SEED, HELDOUT_RULE_SEED, RuleSpace
from president_env.core.rules import MAX_MANCHES, Rules
from president_env.core.user_input import load_yaml, read_text, short_repr

TRAIN_CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "train"
"""The shipped training configs (``configs/train/*.yaml``; installed as ``president_env/configs/train``)."""

# Upper bounds of the fields (sensible, far above the shipped configs: a typo, not a choice, goes past them).
MAX_THREADS = 1024
MAX_NUM_ENVS = 1 << 20
MAX_NUM_STEPS = 1 << 16
MAX_UPDATE_EPOCHS = 1000
MAX_POOL_SIZE = 1000
MAX_EVAL_DEALS = 1_000_000
MAX_HIDDEN = 1 << 16


def _number_from_text(value: Any) -> Any:
    """A string that spells a number, as that number (YAML 1.1 reads ``3e-4``, with no dot, as a string)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


Number = Annotated[float, BeforeValidator(_number_from_text), Field(allow_inf_nan=False)]
"""A finite float; an int or a string that spells a number is read as one (a bool is not)."""


class _Section(BaseModel):
    # strict: no coercion between types; validate_default: the defaults pass the same checks as a file.
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


SectionT = typing.TypeVar("SectionT", bound=_Section)


class PPOConfig(_Section):
    """Masked PPO (CleanRL's ``ppo.py`` defaults where they fit)."""

    num_envs: int = Field(2048, ge=1, le=MAX_NUM_ENVS)  # games played at once (``VecGame`` slots); every seat acts
    num_steps: int = Field(32, ge=1, le=MAX_NUM_STEPS)  # decisions per slot in one rollout (all seats together)
    learning_rate: Number = Field(1e-3, gt=0, le=1)  # Adam step size
    anneal_lr: bool = True  # decay the step size linearly to 0 over the budget
    gamma: Number = Field(1.0, ge=0, le=1)  # discount per decision of the same seat
    gae_lambda: Number = Field(0.95, ge=0, le=1)  # GAE lambda along each seat's own chain of decisions
    num_minibatches: int = Field(4, ge=1)  # minibatches per epoch
    update_epochs: int = Field(2, ge=1, le=MAX_UPDATE_EPOCHS)  # passes over each rollout
    norm_adv: bool = True  # normalise advantages per minibatch
    clip_coef: Number = Field(0.2, gt=0, le=10)  # PPO ratio clip
    clip_vloss: bool = False  # clip the value loss as well
    ent_coef: Number = Field(0.01, ge=0, le=10)  # entropy bonus
    vf_coef: Number = Field(0.5, ge=0, le=100)  # value-loss weight
    max_grad_norm: Number = Field(0.5, gt=0, le=1e6)  # gradient clipping
    target_kl: Number | None = Field(None, gt=0, le=1e6)  # stop an update's epochs early past this approximate KL


class NetworkConfig(_Section):
    """The policy-value network (:class:`president_env.agents.torch_policy.PolicyNet`)."""

    hidden: list[Annotated[int, Field(ge=1, le=MAX_HIDDEN)]] = Field(
        default_factory=lambda: [256, 256], min_length=1
    )  # trunk widths
    activation: Literal["relu", "tanh"] = "relu"


Probability = Annotated[Number, Field(ge=0, le=1)]


class OpponentConfig(_Section):
    """Who sits at the learner's table; drawn per game, the probabilities sum to 1.

    A game is pure self-play (the learner in every seat) with probability ``self_play``; otherwise
    the learner takes one random seat and one opponent takes all the others: a past snapshot of the
    learner (probability ``snapshots``) or a baseline (``baselines``: agent name -> probability).
    """

    self_play: Probability = 0.5
    snapshots: Probability = 0.2
    baselines: dict[str, Probability] = Field(
        default_factory=lambda: {"heuristic-3": 0.2, "heuristic-2": 0.05, "random": 0.05}
    )
    # baseline -> the most players at a table it sits at (a search's cost grows with the table); at a larger
    # table its probability goes to the other opponents, in proportion
    max_players: dict[str, Annotated[int, Field(ge=3, le=8)]] = Field(default_factory=dict)
    snapshot_every: int = Field(10, ge=1)  # updates between two snapshots joining the pool
    pool_size: int = Field(8, ge=1, le=MAX_POOL_SIZE)  # newest snapshots kept

    @field_validator("baselines")
    @classmethod
    def _known_agents(cls, baselines: dict[str, float]) -> dict[str, float]:
        for name in baselines:
            check_name(name)
        return baselines

    @model_validator(mode="after")
    def _caps_of_baselines(self) -> OpponentConfig:
        for name in self.max_players:
            if name not in self.baselines:
                raise ValueError(f"max_players names {name!r}, which is not among the baselines")
        return self

    @model_validator(mode="after")
    def _sum_to_one(self) -> OpponentConfig:
        weights = {"self_play": self.self_play, "snapshots": self.snapshots}
        weights.update({f"baselines.{k}": v for k, v in self.baselines.items()})
        total = sum(weights.values())
        if abs(total - 1.0) > 1e-6:
            raise ValueError(
                f"self_play + snapshots + baselines must sum to 1, got {total:g} ({short_repr(weights, 200)})"
            )
        return self


class BudgetConfig(_Section):
    """How long to train and how often to look."""

    total_steps: int = Field(50_000_000, ge=1)  # env steps: decisions at every seat, learner and opponents
    anneal_steps: int | None = Field(None, ge=1)  # with ppo.anneal_lr, the step size is 0 here (null: total_steps)
    time_limit_min: Number | None = Field(None, gt=0, le=1e9)  # stop once the run, all sittings, trained this long
    eval_every: int = Field(25, ge=0)  # updates between evaluations against ``eval_opponent`` (0: never)
    eval_deals: int = Field(100, ge=1, le=MAX_EVAL_DEALS)  # duplicate deal groups per evaluation (x rotations)
    eval_opponent: str = "heuristic-3"  # an agent name or a checkpoint file
    checkpoint_every: int = Field(25, ge=0)  # updates between checkpoints (0: only at the end)

    @field_validator("eval_opponent")
    @classmethod
    def _known_agent(cls, name: str) -> str:
        return check_name(name)


class RolloutConfig(_Section):
    """Where the rollout's games are played: cut into shards, run in this process or on Ray.

    The ``ppo.num_envs`` games are split evenly into ``shards``; each shard has its own game,
    tables, carried decisions and random streams (children of the run's seed), and all shards'
    decisions form one training batch. ``shards`` is part of the run (it changes the random
    streams); ``ray_address`` is not: for the same seed and shards, a run on Ray is the same run
    as in this process (bit for bit when ``threads`` equals the actors' torch threads, which is
    ``ray_cpus_per_shard`` rounded down, at least 1, so that torch sums in the same order).
    """

    shards: int = Field(1, ge=1)  # must divide ppo.num_envs
    ray_address: str | None = None  # null: this process; "local", "auto", "ray://host:10001": on Ray actors
    ray_cpus_per_shard: Number = Field(1.0, gt=0, le=1024)  # per shard (shards beyond the CPUs share actors)


class InitConfig(_Section):
    """Where the learner starts: fresh weights (the default), or those of a learned agent (a best response starts
    from its target's, so that it starts at the target's strength)."""

    weights: str | None = None  # a shipped learned agent's name or a checkpoint file; the network must be its shape
    grow: bool = False  # the held network may be narrower or shallower: grown into this one, same function (grow.py)
    critic_warmup: int = Field(0, ge=0)  # first updates that train the critic only (the actor frozen)

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, weights: str | None) -> str | None:
        return None if weights is None else check_name(weights)


class RunConfig(_Section):
    """What every run has: its seed, folder and threads, where the learner starts, the algorithm, network,
    opponents and budget."""

    seed: int = Field(1, ge=0)  # root seed: games, sampling, network initialisation, opponents
    out_dir: str = "runs/ppo"  # checkpoints, config.yaml, metrics.jsonl, TensorBoard events
    threads: int = Field(0, ge=0, le=MAX_THREADS)  # torch CPU threads, at most the process's CPUs (0: all of them)
    device: Literal["cpu", "cuda", "auto"] = "cpu"  # where the learner's update runs (auto: cuda when present)
    init: InitConfig = Field(default_factory=InitConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    opponents: OpponentConfig = Field(default_factory=OpponentConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)

    @field_validator("out_dir")
    @classmethod
    def _out_dir_named(cls, out_dir: str) -> str:
        if not out_dir.strip():
            raise ValueError("must not be empty")
        return out_dir

    def to_dict(self) -> dict[str, Any]:
        """The config as plain nested data (what :func:`from_dict` reads back, and checkpoints store)."""
        return self.model_dump()

    def save(self, path: str | Path) -> Path:
        """Write the resolved config as YAML (loadable with :func:`load_config`)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))
        return path


class TrainConfig(RunConfig):
    """A run at one table (:class:`~.ppo_selfplay.Trainer`): its rules, and where its games are played."""

    kind: Literal["ppo"] = "ppo"
    rules: str = "standard"  # a preset name, a rules YAML path or YAML text (president_env.core.presets.resolve_rules)
    manches: int | None = Field(None, ge=1, le=MAX_MANCHES)  # null: the rules' own; 1: single manches
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)

    @field_validator("rules")
    @classmethod
    def _rules_load(cls, rules: str) -> str:
        resolve_rules(rules)
        return rules

    @model_validator(mode="after")
    def _shards_divide_the_games(self) -> TrainConfig:
        if self.ppo.num_envs % self.rollout.shards:
            raise ValueError(
                f"rollout.shards must divide ppo.num_envs ({self.ppo.num_envs}), got {self.rollout.shards}"
            )
        check_rollout_memory(self.ppo, [self.resolve_rules()])
        return self

    def resolve_rules(self) -> Rules:
        """The ``Rules`` named by ``rules`` (a preset name, a YAML file or YAML text, through the one door), with
        ``manches`` in place of theirs when it is set."""
        rules = resolve_rules(self.rules)
        return rules if self.manches is None else rules.replace(manches=self.manches)


class TableConfig(_Section):
    """One table of a universal run: a preset (or rules YAML) at a table size."""

    rules: str = "standard"
    n_players: int | None = Field(None, ge=3, le=8)  # null: the preset's

    @field_validator("rules")
    @classmethod
    def _rules_load(cls, rules: str) -> str:
        resolve_rules(rules)
        return rules


class UniversalNetworkConfig(NetworkConfig):
    """:class:`president_env.agents.universal.UniversalNet`: actor and critic trunks of these widths."""

    critic: Literal["plain", "perfect"] = "plain"  # "perfect": the critic also sees every hand in training (PerfectDou)


class RuleSpaceConfig(_Section):
    """Tables drawn from the rule space (:class:`president_env.core.rule_space.RuleSpace`) at every segment.

    ``preset_share``, ``presets`` and ``weights`` are the space's (``weights``: field -> value -> weight; a field
    named replaces its defaults whole). Validation fills in the defaults, so a run's saved config holds its whole
    distribution: a later change of the defaults does not change a run that resumes.
    """

    draws: int = Field(8, ge=1, le=1024)  # rule sets drawn each segment, each a table of ppo.num_envs games
    preset_share: Number = Field(0.25, ge=0, le=1)
    presets: list[dict[str, Any]] | None = None  # [{rules: PRESET, n_players: N or null, weight: W}] (null: defaults)
    weights: dict[str, dict[Any, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _a_valid_space(self) -> RuleSpaceConfig:
        data = {"preset_share": self.preset_share, "weights": self.weights}
        if self.presets is not None:
            data["presets"] = self.presets
        full = RuleSpace.from_dict(data).to_dict()
        self.__dict__.update(presets=full["presets"], weights=full["weights"])
        return self

    def space(self) -> RuleSpace:
        """The :class:`~president_env.core.rule_space.RuleSpace` this section describes."""
        return RuleSpace.from_dict(
            {"preset_share": self.preset_share, "presets": self.presets, "weights": self.weights}
        )


class RuleEvalConfig(_Section):
    """Evaluation on rule sets drawn from the suite's distribution with a training-side rule ``seed`` (never the
    held-out one): against ``opponent`` every ``every`` updates, and against the champion (the best frozen
    policy so far) every ``champion_every`` updates; the learner becomes the champion when it beats it (the
    interval above 0)."""

    seed: int = Field(3301, ge=0)  # the evaluation tables' rule seed (president_env.core.rule_space.rule_suite)
    tables: int = Field(0, ge=0, le=64)  # rule sets evaluated (0: none); the first drawn with <= max_players
    max_players: int = Field(5, ge=3, le=8)  # keeps a searching opponent affordable
    opponent: str = "mc-4"
    deals: int = Field(8, ge=1, le=MAX_EVAL_DEALS)  # deal groups a table against ``opponent``
    every: int = Field(0, ge=0)  # updates between evaluations against ``opponent`` (0: never)
    champion_deals: int = Field(30, ge=1, le=MAX_EVAL_DEALS)  # deal groups a table against the champion
    champion_every: int = Field(0, ge=0)  # updates between evaluations against the champion (0: never)

    @field_validator("opponent")
    @classmethod
    def _known_agent(cls, name: str) -> str:
        return check_name(name)

    @field_validator("seed")
    @classmethod
    def _not_held_out(cls, seed: int) -> int:
        if seed in (HELDOUT_RULE_SEED, HELDOUT_DEAL_SEED):
            raise ValueError(f"{seed} is a held-out seed of the rule-set suite, reserved for final measurements")
        return seed


class UniversalRolloutConfig(_Section):
    """Where the tables play: ``workers`` processes (Ray actors), each a share of the tables; the same run
    wherever (each table has its own seeds and sampling generator; the rows are merged in table order)."""

    workers: int = Field(1, ge=0, le=MAX_THREADS)  # 1: this process; 0: one per CPU this process is given
    ray_address: str | None = None  # Ray: "local" (also what workers != 1 starts when null), "auto", "ray://..."


class UniversalConfig(RunConfig):
    """One learner for a mixture of tables (:class:`~.universal.UniversalTrainer`); ``ppo.num_envs`` and
    ``ppo.num_steps`` are per table."""

    kind: Literal["universal"] = "universal"
    tables: list[TableConfig] = Field(default_factory=lambda: [TableConfig()])  # fixed tables, every segment
    manches: int | None = Field(3, ge=1, le=MAX_MANCHES)  # every fixed table's match length (null: the preset's)
    rule_space: RuleSpaceConfig | None = None  # tables drawn from the rule space each segment (null: none)
    rule_eval: RuleEvalConfig = Field(default_factory=RuleEvalConfig)
    rollout: UniversalRolloutConfig = Field(default_factory=UniversalRolloutConfig)
    eval_tables: list[int] = Field(default_factory=lambda: [0])  # indices of ``tables`` evaluated every eval_every
    out_dir: str = "runs/universal"
    threads: int = Field(1, ge=0, le=MAX_THREADS)
    ppo: PPOConfig = Field(default_factory=lambda: PPOConfig(num_envs=64, num_steps=32))
    network: UniversalNetworkConfig = Field(default_factory=UniversalNetworkConfig)

    @model_validator(mode="after")
    def _some_table(self) -> UniversalConfig:
        if not self.tables and self.rule_space is None:
            raise ValueError("tables: a run needs at least one table, or a rule_space to draw them from")
        return self

    @model_validator(mode="after")
    def _eval_tables_exist(self) -> UniversalConfig:
        for index in self.eval_tables:
            if not 0 <= index < len(self.tables):
                raise ValueError(f"eval_tables: {index} is not the index of a table (0..{len(self.tables) - 1})")
        if self.budget.eval_every and not self.eval_tables and not self.rule_eval.tables:
            raise ValueError("eval_tables: budget.eval_every needs eval_tables or rule_eval.tables to evaluate")
        check_rollout_memory(self.ppo, self.table_rules() + self.largest_drawn_tables())
        return self

    def table_rules(self) -> list[Rules]:
        """The ``Rules`` of every table."""
        out = []
        for table in self.tables:
            changes = {"n_players": table.n_players, "manches": self.manches}
            out.append(resolve_rules(table.rules).replace(**{k: v for k, v in changes.items() if v is not None}))
        return out

    def largest_drawn_tables(self) -> list[Rules]:
        """For the memory check: ``rule_space.draws`` tables at the largest rules the space can draw (8 players, two
        decks with jokers: the ``big_table`` preset), since a segment's draws are not known before it starts."""
        if self.rule_space is None:
            return []
        return [resolve_rules("big_table")] * self.rule_space.draws


def rollout_bytes(rules: Rules, num_envs: int, num_steps: int) -> int:
    """About the most memory one rollout of ``num_envs`` games x ``num_steps`` steps at ``rules`` holds: every
    decision kept as a training row (observation float32, mask, action, log-probability, value, advantage,
    return), once in the rollout and once in the batch, the per-step bookkeeping, and one pending decision per
    seat of every game (:mod:`.ppo`)."""
    from president_env.core.observation import obs_dim

    row = 4 * obs_dim(rules) + rules.num_actions + 24
    return num_envs * num_steps * (2 * row + 14 + 4 * rules.n_players) + num_envs * rules.n_players * row


def memory_available() -> int:
    """This machine's physical memory in bytes (1 TiB where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 1 << 40


def check_rollout_memory(ppo: PPOConfig, tables: list[Rules]) -> None:
    """``ValueError`` naming ``ppo.num_envs`` and ``ppo.num_steps`` when one rollout at ``tables`` (each with
    ``num_envs`` games) needs more memory than this machine has: values that each validate can be impossible
    together (1,048,576 games x 65,536 steps), and are refused before a run starts, not by the allocator."""
    need = sum(rollout_bytes(rules, ppo.num_envs, ppo.num_steps) for rules in tables)
    have = memory_available()
    if need > have:
        raise ValueError(
            f"ppo.num_envs x ppo.num_steps = {ppo.num_envs:,} x {ppo.num_steps:,} decisions"
            f"{f' at each of {len(tables)} tables' if len(tables) > 1 else ''} need about {_gib(need)} for one "
            f"rollout; this machine has {_gib(have)}: lower ppo.num_envs or ppo.num_steps"
        )


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:,.0f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:,.0f} MiB"


KINDS: dict[str, type[RunConfig]] = {"ppo": TrainConfig, "universal": UniversalConfig}
"""The runs by their config's ``kind`` (absent: ``ppo``)."""


@dataclass
class RunSeeds:
    """The run's random streams, all children of ``SeedSequence(config.seed)``."""

    network: int  # the network's initial weights
    learn: int  # minibatch order of the updates
    eval: int  # the evaluation tournaments
    games: np.random.SeedSequence  # the games: rollout shards' or tables' deals, tables and sampling

    @classmethod
    def of(cls, config: RunConfig) -> RunSeeds:
        network, learn, evaluation, games = np.random.SeedSequence(config.seed).spawn(4)
        first = (int(s.generate_state(1)[0]) for s in (network, learn, evaluation))
        return cls(*first, games=games)


def from_dict(data: dict[str, Any] | None) -> TrainConfig | UniversalConfig:
    """A validated config from a nested mapping (None: the defaults), a ``TrainConfig`` or, with ``kind:
    universal``, a ``UniversalConfig``; ``ValueError`` naming the key."""
    data = {} if data is None else data
    kind = data.get("kind", "ppo")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {short_repr(kind)}")
    return validated(KINDS[kind], data)


def validated(model: type[SectionT], data: Any) -> SectionT:
    """``model`` (a config section: strict, unknown keys refused) validated from ``data``; ``ValueError`` of one line
    naming the key (the league's config, :mod:`.league`, is read through it too)."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        # An unknown key first: a typo explains the errors it causes.
        first = min(errors, key=lambda e: e["type"] not in ("extra_forbidden", "invalid_key"))
        raise ValueError(_message(first, model)) from None


def load_config(
    path: str | Path | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> TrainConfig | UniversalConfig:
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
            # league*.yaml configure training/league.py, not a run
            runs = (p.stem for p in TRAIN_CONFIGS.glob("*.yaml") if not p.stem.startswith("league"))
            shipped = ", ".join(sorted(runs))
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
    key = key.strip()
    if not sep or not key:
        raise ValueError(
            f"override {short_repr(item)} must look like section.field=value (e.g. ppo.learning_rate=3e-4)"
        )
    shown = f"override {_key(key)}={short_repr(text)}"  # the key whole (up to 40 characters), the value cut
    value = load_yaml(text, shown) if text.strip() else None
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"override {shown}: {short_repr(part)} is not a section")
        node = child
    node[parts[-1]] = value


# ---------------------------------------------------------------- pydantic's errors as one line each
def _message(error: ErrorDetails, model: type[BaseModel]) -> str:
    """One of pydantic's errors about ``model`` as a line that names the field: what it allows and what it got (an
    unknown key: the allowed ones; a validator's refusal: the validator's words)."""
    name, node, metadata = "", model, []
    loc = list(error["loc"])
    while loc:
        node, metadata, _ = _unwrap(node, metadata)
        part = loc.pop(0)
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                allowed = ", ".join(node.model_fields)
                return f"unknown key {short_repr(_join(name, str(part)))} in {name or 'config'}; allowed: {allowed}"
            name, node, metadata = _join(name, part), field.annotation, list(field.metadata)
        elif typing.get_origin(node) is list:
            name, node, metadata = f"{name}[{part}]", typing.get_args(node)[0], []
        elif loc[:1] == ["[key]"]:  # a mapping's key that is not of the key type
            loc.pop(0)
            name, node, metadata = f"{name} key", typing.get_args(node)[0], []
        else:  # a mapping's value
            name, node, metadata = _join(name, _key(str(part))), typing.get_args(node)[1], []
    if error["type"] == "value_error":  # one of the validators above
        return f"{name}: {error['ctx']['error']}" if name else str(error["ctx"]["error"])
    return f"{name or 'config'} must be {_allowed(*_unwrap(node, metadata))}, got {short_repr(error['input'])}"


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _key(key: str) -> str:
    """A mapping key as part of a field name in a message, cut to 40 characters."""
    return key if len(key) <= 40 else key[:37] + "..."


def _unwrap(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any], bool]:
    """``annotation`` without its ``Annotated`` and ``| None`` layers, the constraints met on the way added to
    ``metadata``, and whether None is allowed."""
    nullable = False
    while True:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is Annotated:
            annotation = args[0]
            for extra in args[1:]:
                metadata = metadata + (extra.metadata if isinstance(extra, FieldInfo) else [extra])
        elif origin in (typing.Union, types.UnionType) and type(None) in args:
            nullable = True
            (annotation,) = [a for a in args if a is not type(None)]
        else:
            return annotation, metadata, nullable


def _allowed(annotation: Any, metadata: list[Any], nullable: bool) -> str:
    """What a field of this type and these constraints (``Field(gt=, ge=, le=, min_length=)``) accepts, in words."""
    bounds = {key: getattr(m, key) for m in metadata for key in ("gt", "ge", "le", "min_length") if hasattr(m, key)}
    if annotation is bool:
        text = "true or false"
    elif annotation is int:
        low, high = bounds.get("ge"), bounds.get("le")
        text = "an integer" + (f" from {low} to {high}" if high is not None else f" >= {low}")
    elif annotation is float:
        low = f"({bounds['gt']:g}" if "gt" in bounds else f"[{bounds['ge']:g}" if "ge" in bounds else None
        text = f"a finite number in {low}, {bounds['le']:g}]" if low and "le" in bounds else "a finite number"
    elif annotation is str:
        text = "a string"
    elif typing.get_origin(annotation) is Literal:
        text = "one of " + ", ".join(typing.get_args(annotation))
    elif typing.get_origin(annotation) is list:
        text = "a non-empty list" if bounds.get("min_length") else "a list"
    else:  # a section or a dict
        text = "a mapping"
    return text + (" or null" if nullable else "")
