"""One learner for every table: masked PPO self-play on a mixture of tables.

    president-train --config configs/train/universal.yaml
    president-train --resume runs/universal/checkpoint.pt --set budget.time_limit_min=120

The learner is a :class:`~president_env.agents.universal.UniversalNet`: every table's observations and
actions are laid out in one universal layout (:mod:`president_env.agents.universal`), so one network
plays them all. :class:`UniversalTrainer` is a :class:`~.ppo_selfplay.Run`: the loop, the update, the log
and the budget are the one-table trainer's. What it plays:

1. **Rollout, table by table.** Each table of ``tables`` (a preset at a table size, playing matches of
   ``manches`` manches) runs ``ppo.num_envs`` games. :func:`.ppo.collect` plays ``ppo.num_steps`` steps of
   them through a :class:`UniversalGame` (the table seen in the universal layout) and
   :func:`.ppo.training_rows` turns the learner's decisions into rows, GAE along each seat's own chain.
   Rewards are ``normalized`` (each manche's points scaled into [-1, 1]), so the tables weigh alike.
   All tables' rows form one batch for :func:`.ppo.ppo_update`.
2. **Population.** Each game draws its table (:class:`~.opponents.OpponentPool`): the learner everywhere,
   or one learner against past versions of itself, the baselines or the rule-based styles
   (:mod:`president_env.agents.styles`; keep one out to measure against).

**Segments and resuming.** A run is cut into segments of ``budget.checkpoint_every`` updates. A segment
starts from the learner alone: fresh games dealt from ``(seed, segment)`` and a pool holding only the
current policy, which then gains a snapshot every ``opponents.snapshot_every`` updates. So the compact
checkpoint written at each segment's end (policy, critic, optimizer, counters and the learning
generator; no games, no pool) is all a later sitting needs to continue the run exactly, on any machine.
The decisions still open when a segment ends are not trained. To end a sitting cleanly before its
budget, create ``STOP`` in the run's folder: the update in progress finishes and the checkpoint is written.
"""

from __future__ import annotations

import copy
from pathlib import Path

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
from president_env.rules import Rules
from president_env.vec_game import VecGame

from .bookkeeping import evaluate_learner
from .config import OpponentConfig, TableConfig, UniversalConfig
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
    """One training table: its games, its population and the learner's decisions carried between rollouts."""

    def __init__(self, rules: Rules, config: UniversalConfig, seed: np.random.SeedSequence, input_dim: int) -> None:
        game_seed, pool_seed = seed.spawn(2)
        batch = config.ppo.num_envs
        self.rules = rules
        self.game = UniversalGame(rules, batch, game_seed, config.network.critic == "perfect")
        self.pool = TablePool(config.opponents, self.game, np.random.default_rng(pool_seed))
        self.pending = Pending.empty(batch, rules.n_players, input_dim, NUM_ACTIONS)


def table_name(rules: Rules, spec: TableConfig) -> str:
    return f"{Path(spec.rules).stem}-{rules.n_players}p"


# ---------------------------------------------------------------------------------------------
# The trainer
# ---------------------------------------------------------------------------------------------
class UniversalTrainer(Run):
    """A run on a mixture of tables with one :class:`UniversalNet`; :meth:`save` writes the compact checkpoint."""

    config: UniversalConfig

    def __init__(self, config: UniversalConfig, progress: bool = True) -> None:
        self.rules = config.table_rules()
        self.names = [table_name(r, t) for r, t in zip(self.rules, config.tables)]
        super().__init__(config, progress)
        self.steps_per_update = config.ppo.num_envs * config.ppo.num_steps * len(self.rules)
        self.segment = self.segment_start = 0
        self.tables: list[Table] = []
        self.start_segment()

    def build_net(self) -> UniversalNet:
        """The learner's ``UniversalNet`` (one network for every table)."""
        n = self.config.network
        return UniversalNet(n.hidden, n.activation, n.critic)

    def start_segment(self) -> None:
        """Fresh games and a pool of the current policy alone, all from ``(seed, segment)``."""
        root = int(self.seeds.games.generate_state(1)[0])
        seed = np.random.SeedSequence(root, spawn_key=(self.segment,))
        self.tables = [
            Table(r, self.config, s, self.net.input_dim) for r, s in zip(self.rules, seed.spawn(len(self.rules)))
        ]
        snapshots: list = []
        for table in self.tables:
            table.pool.snapshots = snapshots  # one pool of past versions, shared by every table
        self.add_snapshot()
        self.segment_start = self.update

    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """One rollout at every table; their rows form one batch."""
        p = self.config.ppo
        batches, stats = [], {}
        for name, table in zip(self.names, self.tables):
            rollout = collect(table.game, self.net, table.pool, self.generator, p.num_steps)
            batch, table.pending, counts = training_rows(rollout, table.pending, p.gamma, p.gae_lambda)
            batches.append(batch)
            self.rewards.add(*table.pool.take_tallies())
            stats[f"rollout/{name}/trained_decisions"] = counts["rollout/trained_decisions"]
        return {k: torch.from_numpy(np.concatenate([b[k] for b in batches])) for k in batches[0]}, stats

    def add_snapshot(self) -> None:
        """Add the current weights to the pool of past versions the tables share."""
        self.tables[0].pool.add_snapshot(self.net)

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
        """The greedy learner against ``budget.eval_opponent`` at each of ``eval_tables``; their mean as
        ``eval/advantage`` (the learning curve)."""
        out: dict[str, float] = {}
        for index in self.config.eval_tables:
            rules = self.rules[index]
            result = evaluate_learner(self.agent(rules), rules, self.config.budget, self.eval_seed)
            out.update({k.replace("eval/", f"eval/{self.names[index]}/"): v for k, v in result.items()})
        for key in ("advantage", "advantage_ci"):
            values = [out[f"eval/{self.names[i]}/{key}"] for i in self.config.eval_tables]
            out[f"eval/{key}"] = (
                float(np.mean(values))
                if key == "advantage"
                else float(np.sqrt(np.mean(np.square(values)) / len(values)))
            )
        return out

    def save(self, path: str | Path) -> Path:
        """The compact resume checkpoint: :meth:`Run.state` and the segment (no games, no pool)."""
        state = self.state()
        state["rules"] = self.rules[0].to_dict()
        state["progress"]["segment"] = self.segment
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
            trainer.start_segment()
        return trainer
