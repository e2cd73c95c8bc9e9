"""One learner for every table: masked PPO self-play on a mixture of tables.

    president-train --config configs/train/universal.yaml
    president-train --resume runs/universal/checkpoint.pt --set budget.time_limit_min=120

The learner is a :class:`~president_env.agents.universal.UniversalNet`: every table's observations and
actions are laid out in one universal layout (:mod:`president_env.agents.universal`), so one network
plays them all. :class:`UniversalTrainer` is a :class:`~.ppo_selfplay.Run`: the loop, the update, the log
and the budget are the one-table trainer's. What it plays:

1. **Rollout, table by table.** Each table of ``tables`` (a preset at a table size, playing matches of
   ``manches`` manches), and with a ``rule_space`` each of the ``rule_space.draws`` rule sets drawn for the
   segment (:func:`segment_rules`, :mod:`president_env.core.rule_space`), runs ``ppo.num_envs`` games.
   :func:`.ppo.collect` plays ``ppo.num_steps`` steps of them through a :class:`UniversalGame` (the table seen
   in the universal layout) and
   :func:`.ppo.training_rows` turns the learner's decisions into rows, GAE along each seat's own chain.
   Rewards are ``normalized`` (each manche's points scaled into [-1, 1]), so the tables weigh alike.
   All tables' rows form one batch for :func:`.ppo.ppo_update`.
2. **Population.** Each game draws its table (:class:`~.opponents.OpponentPool`): the learner everywhere,
   or one learner against past versions of itself, the baselines or the rule-based styles
   (:mod:`president_env.agents.styles`; keep one out to measure against).

**Where the tables play.** :class:`TableGroup` s hold them: one in the trainer's process, or
``rollout.workers`` Ray actors (table ``i`` in group ``i % workers``). Each table has its own seeds and sampling
generator and the rows are merged in table order, so the split never changes the run.

**Evaluation.** Every ``budget.eval_every`` updates, ``budget.eval_opponent`` at ``eval_tables`` and at the
``rule_eval`` tables (drawn with the training-side ``rule_eval.seed``); on their own schedules,
``rule_eval.opponent`` (mc-4) and the champion, the best frozen policy so far, at the ``rule_eval`` tables
(:meth:`UniversalTrainer.rule_evaluations`).

**Segments and resuming.** A run is cut into segments of ``budget.checkpoint_every`` updates. A segment
starts from the learner alone: fresh games dealt from ``(seed, segment)`` and a pool holding only the
current policy, which then gains a snapshot every ``opponents.snapshot_every`` updates. So the compact
checkpoint written at each segment's end (policy, critic, optimizer, counters and the learning
generator and the champion; no games, no pool) is all a later sitting needs to continue the run exactly, on any machine.
The decisions still open when a segment ends are not trained. To end a sitting cleanly before its
budget, create ``STOP`` in the run's folder: the update in progress finishes and the checkpoint is written.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from president_env.agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from president_env.agents.universal import (
    NUM_ACTIONS,
    UniversalAgent,
    UniversalNet,
    encode,
    hidden_hands,
    to_native,
    to_universal,
    universal_mask,
)
from president_env.core.presets import rules_source
from president_env.core.rule_space import rule_suite
from president_env.core.rules import Rules
from president_env.core.threads import available_cpus, cap_threads
from president_env.core.vec_game import VecGame
from president_env.evaluation.distributed import LocalGroup, RayGroup, init_ray
from president_env.evaluation.play import versus_lineup
from president_env.evaluation.tournament import evaluate

from .bookkeeping import evaluate_learner
from .config import OpponentConfig, RunSeeds, TableConfig, UniversalConfig, from_dict
from .opponents import OpponentPool
from .ppo import Pending, collect, training_rows
from .ppo_selfplay import MAX_COUNT, Run, check_resume_checkpoint, restoring


# ---------------------------------------------------------------------------------------------
# A table in the universal layout
# ---------------------------------------------------------------------------------------------
class UniversalGame:
    """A ``VecGame`` seen through the universal layout: what :func:`.ppo.collect` needs of a game.

    ``observe()`` gives the encoding (with the perfect critic, followed by every hand), ``legal_mask()`` the
    universal mask, ``step`` takes universal actions. The table's own last observation and mask are kept for
    the opponents that read them (``native_obs``, ``native_mask``).
    """

    def __init__(self, rules: Rules, batch_size: int, seed: np.random.SeedSequence, perfect: bool) -> None:
        self.rules, self.perfect = rules, perfect
        self.game = VecGame(rules, batch_size=batch_size, seed=seed, reward_mode="normalized")
        self.batch_size = batch_size
        self.native_obs = self.native_mask = None

    @property
    def current_player(self) -> np.ndarray:
        return self.game.current_player

    def observe(self) -> np.ndarray:
        self.native_obs = self.game.observe()
        x = encode(self.rules, self.native_obs)
        if self.perfect:
            x = np.concatenate([x, hidden_hands(self.game.state, self.game.current_seat)], axis=1)
        return x

    def legal_mask(self) -> np.ndarray:
        self.native_mask = self.game.legal_mask()
        return universal_mask(self.rules, self.native_mask)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.game.step(to_native(self.rules, actions))


class TablePool(OpponentPool):
    """:class:`~.opponents.OpponentPool` at a :class:`UniversalGame`: baselines and styles act on the table's own
    observations (the rows ``collect`` hands them are those the pool's owner gives ``policy_id`` now)."""

    def __init__(self, config: OpponentConfig, game: UniversalGame, rng: np.random.Generator) -> None:
        super().__init__(config, game.rules, game.batch_size, rng)
        self.game = game

    def act(self, policy_id: int, obs: np.ndarray, mask: np.ndarray, generator: torch.Generator) -> np.ndarray:
        if policy_id >= self.first_snapshot_id:
            return super().act(policy_id, obs, mask, generator)
        rows = np.arange(self.game.batch_size)
        sel = self.owner[rows, self.game.current_player] == policy_id
        native = self.baselines[policy_id - 1].act_batch(self.game.native_obs[sel], self.game.native_mask[sel])
        return to_universal(self.rules, native)


class Table:
    """One training table: its games, its population, its sampling generator and the learner's decisions carried
    between rollouts; all seeded from ``seed``, so a table plays the same games in whichever process it runs."""

    def __init__(self, rules: Rules, config: UniversalConfig, seed: np.random.SeedSequence, input_dim: int) -> None:
        game_seed, pool_seed, torch_seed = seed.spawn(3)
        batch = config.ppo.num_envs
        self.rules = rules
        self.game = UniversalGame(rules, batch, game_seed, config.network.critic == "perfect")
        self.pool = TablePool(config.opponents, self.game, np.random.default_rng(pool_seed))
        self.generator = torch.Generator().manual_seed(int(torch_seed.generate_state(1)[0]))
        self.pending = Pending.empty(batch, rules.n_players, input_dim, NUM_ACTIONS)


def table_name(rules: Rules, spec: TableConfig) -> str:
    """``<preset or file stem>-<N>p``, or ``inline-<N>p`` for rules given as YAML text (the probe's table), whose
    text would make a metric's name."""
    source = "inline" if rules_source(spec.rules) == "text" else Path(spec.rules).stem
    return f"{source}-{rules.n_players}p"


def games_root(config: UniversalConfig) -> int:
    """The root of the run's game streams: table ``i`` of segment ``s`` is ``SeedSequence(root, spawn_key=(s, i))``."""
    return int(RunSeeds.of(config).games.generate_state(1)[0])


RULES_STREAM = 0x72756C65
"""Mixed into the entropy of the segment's rule draws, so that they are a stream apart from the tables' seeds."""


def segment_rules(config: UniversalConfig, segment: int) -> tuple[list[Rules], list[str]]:
    """The tables of ``segment`` and their names: the fixed ``tables``, then ``rule_space.draws`` rule sets drawn
    from the rule space with the run's seed and the segment (``drawn-0``, ``drawn-1``, ...)."""
    rules = config.table_rules()
    names = [table_name(r, t) for r, t in zip(rules, config.tables)]
    if config.rule_space is not None:
        root = games_root(config)
        seed = np.random.SeedSequence([root, RULES_STREAM], spawn_key=(segment,))
        rules += config.rule_space.space().draw(seed, config.rule_space.draws)
        names += [f"drawn-{i}" for i in range(config.rule_space.draws)]
    return rules, names


class TableGroup:
    """A share of a segment's tables (those of ``indices``) and a network to act with: where rollouts play.

    In the trainer's process it shares the trainer's network; as a Ray actor (built from plain data) it holds a
    copy, given the weights before each rollout and snapshot. Every table's seeds come from ``(seed, segment,
    its index)``, so a group plays its tables exactly as any other split of the tables would.
    """

    def __init__(
        self, config: UniversalConfig | dict[str, Any], indices: list[int], net: UniversalNet | None = None,
        threads: int = 0,
    ) -> None:  # fmt: skip
        if isinstance(config, dict):
            config = from_dict(config)
        if threads:
            cap_threads(threads)
        self.config, self.indices = config, list(indices)
        if net is None:
            n = config.network
            net = UniversalNet(n.hidden, n.activation, n.critic)
        self.net = net
        self.tables: list[Table] = []

    def set_weights(self, weights: dict[str, torch.Tensor] | None) -> None:
        if weights is not None:
            self.net.load_state_dict(weights)

    def start(self, segment: int, rules: list[dict[str, Any]], weights: dict[str, torch.Tensor] | None) -> None:
        """Fresh games of ``segment`` at this group's tables and a pool of the current policy alone."""
        self.set_weights(weights)
        root = games_root(self.config)
        self.tables = [
            Table(
                Rules.from_dict(rules[i]), self.config, np.random.SeedSequence(root, spawn_key=(segment, i)),
                self.net.input_dim,
            )
            for i in self.indices
        ]  # fmt: skip
        snapshots: list = []
        for table in self.tables:
            table.pool.snapshots = snapshots  # one pool of past versions, shared by every table
        self.add_snapshot(None)

    def add_snapshot(self, weights: dict[str, torch.Tensor] | None) -> None:
        self.set_weights(weights)
        if self.tables:
            self.tables[0].pool.add_snapshot(self.net)

    def run(self, weights: dict[str, torch.Tensor] | None) -> list[tuple[int, dict[str, np.ndarray], float, Any]]:
        """One rollout at each table: ``(table index, training rows, trained decisions, opponent tallies)``."""
        self.set_weights(weights)
        p = self.config.ppo
        out = []
        for index, table in zip(self.indices, self.tables):
            rollout = collect(table.game, self.net, table.pool, table.generator, p.num_steps)
            batch, table.pending, counts = training_rows(rollout, table.pending, p.gamma, p.gae_lambda)
            out.append((index, batch, counts["rollout/trained_decisions"], table.pool.take_tallies()))
        return out


def rollout_workers(config: UniversalConfig) -> int:
    """The processes the tables are spread over: ``rollout.workers``, 0 meaning every CPU this process is given."""
    return config.rollout.workers or available_cpus()


# ---------------------------------------------------------------------------------------------
# The trainer
# ---------------------------------------------------------------------------------------------
class UniversalTrainer(Run):
    """A run on a mixture of tables with one :class:`UniversalNet`; :meth:`save` writes the compact checkpoint."""

    RESUME_OVERRIDES = ("budget.", "device", "threads", "rollout.", "rule_eval.")
    """What a resumed run may change: its budget, where it runs and on how many torch threads (a sitting may get
    another machine), and its evaluations; none changes what is trained, float rounding aside."""

    config: UniversalConfig

    def __init__(self, config: UniversalConfig, progress: bool = True) -> None:
        self.rules, self.names = segment_rules(config, 0)
        super().__init__(config, progress)
        self.steps_per_update = config.ppo.num_envs * config.ppo.num_steps * len(self.rules)
        self.segment = self.segment_start = 0
        self.groups = self.start_groups()
        self.champion = copy.deepcopy(self.net).eval().requires_grad_(False)  # the best frozen policy so far
        self.champion_generation = 0
        self.eval_rules = self.rule_eval_tables()
        self.start_segment()

    def build_net(self) -> UniversalNet:
        """The learner's ``UniversalNet`` (one network for every table)."""
        n = self.config.network
        return UniversalNet(n.hidden, n.activation, n.critic)

    def start_groups(self) -> LocalGroup | RayGroup:
        """The table groups: one in this process, or ``rollout_workers`` Ray actors (table ``i`` in group
        ``i % workers``)."""
        workers = min(rollout_workers(self.config), len(self.rules))
        if workers == 1 and self.config.rollout.ray_address is None:
            return LocalGroup([TableGroup(self.config, list(range(len(self.rules))), net=self.net)])
        init_ray(
            self.config.rollout.ray_address or "local",
            workers if self.config.rollout.ray_address in (None, "local") else None,
        )
        data = self.config.to_dict()
        args = [(data, list(range(w, len(self.rules), workers)), None, 1) for w in range(workers)]
        return RayGroup(TableGroup, args, num_cpus=1)

    def weights(self) -> dict[str, torch.Tensor] | None:
        """The network's weights for table groups in other processes; ``None`` where every table plays here (they
        share the network itself)."""
        return None if self.groups.local else self.net.state_dict()

    def close(self) -> None:
        """Stop the table groups' workers (Ray actors or processes) the trainer started."""
        self.groups.close()

    def start_segment(self) -> None:
        """Fresh games and a pool of the current policy alone, all from ``(seed, segment)``; with a rule space, the
        segment's own drawn tables."""
        self.rules, self.names = segment_rules(self.config, self.segment)
        self.groups.call("start", self.segment, [r.to_dict() for r in self.rules], self.weights())
        self.segment_start = self.update

    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """One rollout at every table; their rows form one batch, in table order (whatever the groups)."""
        results = sorted(
            (row for group in self.groups.call("run", self.weights()) for row in group), key=lambda r: r[0]
        )
        stats = {}
        for index, _, trained, tallies in results:
            self.rewards.add(*tallies)
            stats[f"rollout/{self.names[index]}/trained_decisions"] = trained
        batches = [batch for _, batch, _, _ in results]
        return {k: torch.from_numpy(np.concatenate([b[k] for b in batches])) for k in batches[0]}, stats

    def add_snapshot(self) -> None:
        """Add the current weights to the pool of past versions the tables share."""
        self.groups.call("add_snapshot", self.weights())

    def checkpoint(self) -> None:
        """End the segment (when it has trained): save the compact checkpoint, then start the next segment."""
        if self.update == self.segment_start:  # nothing trained since: save again (the last evaluation) only
            self.save(self.out_dir / "checkpoint.pt")
            return
        self.segment += 1
        self.save(self.out_dir / "checkpoint.pt")
        self.start_segment()

    # ----- evaluation and checkpoints ----------------------------------------------------------
    def agent(self, rules: Rules) -> UniversalAgent:
        """The current policy as a greedy agent at ``rules`` (a frozen copy)."""
        return UniversalAgent(rules, copy.deepcopy(self.net).eval(), seed=0, name="learner")

    def evaluate(self) -> dict[str, float]:
        """The greedy learner against ``budget.eval_opponent`` at each of ``eval_tables`` (``eval/NAME/...``) and at
        each rule set of ``rule_eval`` (``eval/rules-J/...``); their mean as ``eval/advantage`` (the learning
        curve)."""
        out: dict[str, float] = {}
        tables = [(self.names[i], self.rules[i]) for i in self.config.eval_tables]
        tables += [(f"rules-{j}", rules) for j, rules in enumerate(self.eval_rules)]
        for name, rules in tables:
            result = evaluate_learner(self.agent(rules), rules, self.config.budget, self.eval_seed)
            out.update({k.replace("eval/", f"eval/{name}/"): v for k, v in result.items()})
        for key in ("advantage", "advantage_ci"):
            values = [out[f"eval/{name}/{key}"] for name, _ in tables]
            out[f"eval/{key}"] = (
                float(np.mean(values))
                if key == "advantage"
                else float(np.sqrt(np.mean(np.square(values)) / len(values)))
            )
        return out

    # ----- evaluation on drawn rule sets: against a searcher, and against the champion ---------------------
    def rule_eval_tables(self) -> list[Rules]:
        """``rule_eval.tables`` rule sets of ``rule_suite(rule_eval.seed, ...)``: the first with at most
        ``rule_eval.max_players`` players (deterministic in the seed)."""
        e = self.config.rule_eval
        if not e.tables:
            return []
        return [r for r in rule_suite(e.seed, 50 * e.tables) if r.n_players <= e.max_players][: e.tables]

    def versus_rules(self, opponent: Any, n_deals: int) -> dict[str, float]:
        """The greedy learner against ``opponent`` (a name, or a function of the rules giving an agent) at every
        rule set of :meth:`rule_eval_tables`: each table's advantage and interval, their mean and its interval."""
        out: dict[str, float] = {}
        for j, rules in enumerate(self.eval_rules):
            other = opponent(rules) if callable(opponent) else opponent
            lineup = versus_lineup(self.agent(rules), other, rules.n_players)
            row = evaluate(lineup, rules, n_deals=n_deals, seed=self.eval_seed, progress=False).summary["learner"]
            out[f"{j}/advantage"], out[f"{j}/advantage_ci"] = float(row["advantage"]), float(row["advantage_ci"])
        n = len(self.eval_rules)
        out["advantage"] = float(np.mean([out[f"{j}/advantage"] for j in range(n)]))
        out["advantage_ci"] = float(np.sqrt(np.nansum([out[f"{j}/advantage_ci"] ** 2 for j in range(n)])) / n)
        return out

    def champion_agent(self, rules: Rules) -> UniversalAgent:
        """The champion (the best frozen policy so far) as an agent at ``rules``."""
        return UniversalAgent(rules, self.champion, seed=0, name="champion")

    def rule_evaluations(self) -> dict[str, float]:
        """The evaluations of ``rule_eval`` due at this update (``rule_eval/...`` scalars). The learner becomes
        the champion when its mean advantage over the champion has its interval above 0."""
        e, out = self.config.rule_eval, {}
        if not self.eval_rules:
            return out
        start = time.perf_counter()
        if e.every and self.update % e.every == 0:
            out.update({f"rule_eval/{e.opponent}/{k}": v for k, v in self.versus_rules(e.opponent, e.deals).items()})
        if e.champion_every and self.update % e.champion_every == 0:
            result = self.versus_rules(self.champion_agent, e.champion_deals)
            if result["advantage"] - result["advantage_ci"] > 0:
                self.champion = copy.deepcopy(self.net).eval().requires_grad_(False)
                self.champion_generation += 1
            out.update({f"rule_eval/champion/{k}": v for k, v in result.items()})
            out["rule_eval/champion/generation"] = float(self.champion_generation)
        if out:
            out["charts/rule_eval_seconds"] = time.perf_counter() - start
            self.elapsed += out["charts/rule_eval_seconds"]
        return out

    def train_step(self) -> dict[str, float]:
        """One update (:meth:`Run.train_step`), then the rule-set evaluations that are due."""
        stats = super().train_step()
        stats.update(self.rule_evaluations())
        return stats

    def save(self, path: str | Path) -> Path:
        """The compact resume checkpoint: :meth:`Run.state`, the segment and the champion (no games, no pool)."""
        state = self.state()
        state["rules"] = self.rules[0].to_dict()
        state["progress"]["segment"] = self.segment
        state["champion"] = {"model": self.champion.state_dict(), "generation": self.champion_generation}
        return save_checkpoint(path, state)

    @classmethod
    def resume(
        cls, path: str | Path, progress: bool = True, overrides: list[str] | tuple[str, ...] = ()
    ) -> UniversalTrainer:
        """A trainer continuing the run of a compact checkpoint; ``overrides`` may change only ``budget.*``."""
        checkpoint = load_checkpoint(path)
        network = checkpoint.get("network")
        if not isinstance(network, dict) or network.get("kind") != "universal":
            raise CheckpointError(f"checkpoint {path}: not a checkpoint of a universal run")
        missing = [key for key in ("config", "optimizer", "rng", "progress") if key not in checkpoint]
        if missing:
            raise CheckpointError(
                f"checkpoint {path}: an exported policy, not a training checkpoint (no {', '.join(missing)}); "
                "resume from the run's checkpoint.pt"
            )
        check_resume_checkpoint(checkpoint, path)
        segment = checkpoint["progress"].get("segment")
        if not isinstance(segment, int) or isinstance(segment, bool) or not 0 <= segment <= MAX_COUNT:
            raise CheckpointError(f"checkpoint {path}: progress.segment must be an integer >= 0, got {segment!r}")
        trainer = cls(cls.resume_config({**checkpoint["config"], "kind": "universal"}, overrides), progress)
        with restoring(trainer, path):
            trainer.restore(checkpoint)
            trainer.segment = segment
            champion = checkpoint.get("champion")  # absent before the champion existed: the checkpoint's policy
            trainer.champion.load_state_dict(champion["model"] if champion else checkpoint["model"])
            trainer.champion_generation = int(champion["generation"]) if champion else 0
            trainer.start_segment()
        return trainer
