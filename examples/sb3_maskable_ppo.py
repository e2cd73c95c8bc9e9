"""Train Stable-Baselines3's ``MaskablePPO`` (sb3-contrib) on president_env, batched or one game at a time.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo.py --timesteps 500000 --rules standard --opponents heuristic-2
    python examples/sb3_maskable_ppo.py --env single --timesteps 50000     # the single Gymnasium env

``--env vector`` (default) trains on :class:`president_env.envs.sb3.PresidentSB3VecEnv`, SB3's ``VecEnv``
over the batched Gymnasium vector env (``--num-envs`` games in one engine batch, the opponents
playing in batches); ``--env single`` on the single env ``pe.gym_env`` as is, through SB3's
``DummyVecEnv``. Either way:

- the observation is already a flat ``Box(float32)`` vector, so ``"MlpPolicy"`` takes it as it is;
- the masks come from an ``action_masks()`` method that ``MaskablePPO`` finds by itself (the adapter's
  ``env_method("action_masks")``, or the single env's through SB3's ``Monitor`` and ``DummyVecEnv``);
- the env is built with ``illegal_action="raise"``, so that an illegal action would stop the run
  with a ``ValueError`` instead of being silently replaced by a random legal one: a finished run
  proves that masking worked.

``--max-minutes`` stops training after a wall-clock budget. After training, the model plays
``--eval-episodes`` games greedily (masked ``predict`` with ``deterministic=True``) against the same
opponents, and a random legal player plays the same seeds (same deals, seats and opponent seeds). The
reward is the env's default, zero-sum: the learner's points minus the table mean (standard scoring:
from +1.5 for first to -1.5 for last of 4).

:class:`MaskablePPOAgent` turns the model into a president_env agent (``act`` / ``act_batch``),
usable as a Gym env opponent or in a duplicate-deal tournament (``--duplicate-deals`` groups against
each of ``--tournaments``, played by :func:`president_env.evaluation.tournament.evaluate`, the engine of
``president-eval``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

import president_env as pe
from president_env.core.presets import resolve_rules
from president_env.core.registry import RandomAgent
from president_env.envs.gym_single_env import PresidentGymEnv
from president_env.envs.sb3 import PresidentSB3VecEnv
from president_env.evaluation.report import format_estimate
from president_env.evaluation.statistics import mean_ci

# Evaluation games draw their seeds far from the training seed, so no evaluation game replays a training one.
EVAL_SEED_OFFSET = 1_000_000


class MaskablePPOAgent:
    """A trained ``MaskablePPO`` behind president_env's agent interface: ``act`` and ``act_batch``.

    Greedy by default (``deterministic=True``); the mask always restricts the choice to legal actions.
    """

    name = "maskable-ppo"

    def __init__(self, model: MaskablePPO, deterministic: bool = True) -> None:
        self.model = model
        self.deterministic = deterministic

    def act(self, observation: dict[str, np.ndarray], info: dict | None = None) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        action, _ = self.model.predict(observation["observation"], action_masks=mask, deterministic=self.deterministic)
        return int(action)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks).astype(bool)
        actions, _ = self.model.predict(observations, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, np.int64).reshape(-1)


def parse_opponents(text: str, rules: pe.Rules) -> str | list[str]:
    """``heuristic-2`` (every other seat) or a comma-separated list with one name per other seat."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if len(names) == 1:
        return names[0]
    if len(names) != rules.n_players - 1:
        raise ValueError(f"--opponents: one name, or one per other seat ({rules.n_players - 1}), got {len(names)}")
    return names


def play_games(env: PresidentGymEnv, agent: Any, seeds: Sequence[int]) -> dict[str, np.ndarray]:
    """One game per seed, the learner's seat played by ``agent.act``: its total reward, finishing position, win."""
    rewards, positions, wins = [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        if hasattr(agent, "reset"):
            agent.reset(seed=seed)
        total, terminated = 0.0, False
        while not terminated:
            action = agent.act({"observation": obs, "action_mask": info["action_mask"]}, info)
            obs, reward, terminated, _, info = env.step(action)
            total += reward
        rewards.append(total)
        positions.append(info["finish_position"])
        wins.append(info["winner"] == f"player_{info['player']}")
    return {"reward": np.array(rewards), "position": np.array(positions), "win": np.array(wins, float)}


def mean_ci_text(values: np.ndarray) -> str:
    """``mean ± 95 % interval``, as the project's tournaments compute it (Student's t over games)."""
    return format_estimate(mean_ci(values), signed=True, digits=3)


def report(label: str, stats: dict[str, np.ndarray], n_players: int) -> str:
    """One line: reward ± 95 % interval, games won, mean finishing position (0 = out first), share per position."""
    shares = np.bincount(stats["position"], minlength=n_players) / len(stats["position"])
    by_position = " ".join(f"{share:.0%}" for share in shares)
    return (
        f"{label:<22} reward {mean_ci_text(stats['reward'])}   wins {stats['win'].mean():.1%}   "
        f"mean position {stats['position'].mean():.2f}   positions 0..{n_players - 1}: {by_position}"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--timesteps", type=int, default=50_000, help="learner decisions to train on")
    parser.add_argument("--rules", default="standard", help="rules preset name, YAML path or YAML text")
    parser.add_argument(
        "--opponents", default="heuristic-2", help="opponent name, or comma-separated names, one per other seat"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--eval-episodes", type=int, default=1000, help="games for the greedy and random evaluation (0: none)"
    )
    parser.add_argument(
        "--duplicate-deals", type=int, default=200, help="deal groups of a duplicate-deal tournament (0: none)"
    )
    parser.add_argument("--env", choices=("vector", "single"), default="vector", help="batched adapter or single env")
    parser.add_argument("--num-envs", type=int, default=64, help="games in the batch (--env vector)")
    parser.add_argument("--max-minutes", type=float, help="stop training after this many minutes")
    parser.add_argument(
        "--tournaments",
        help="comma-separated opponents, one duplicate-deal tournament against each (default: --opponents)",
    )
    parser.add_argument(
        "--speed",
        type=float,
        metavar="SECONDS",
        help="only measure: MaskablePPO steps/s on the adapter and on the single env, SECONDS each, same run",
    )
    parser.add_argument("--n-steps", type=int, help="PPO rollout length per env (default: 128 vector, 2048 single)")
    parser.add_argument("--batch-size", type=int, help="PPO minibatch size (default: 512 vector, 64 single)")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--save", metavar="PATH", help="save the model here (SB3 zip; MaskablePPO.load reads it)")
    args = parser.parse_args(argv)
    if args.eval_episodes == 1:
        parser.error("--eval-episodes: 0 (none) or at least 2, for an interval")
    if args.num_envs < 1:
        parser.error("--num-envs: at least 1")
    vector = args.env == "vector"
    args.n_steps = args.n_steps or (128 if vector or args.speed else 2048)
    args.batch_size = args.batch_size or (512 if vector or args.speed else 64)
    return args


class TimeBudget(BaseCallback):
    """Stops ``learn()`` once ``minutes`` of wall-clock time have passed."""

    def __init__(self, minutes: float) -> None:
        super().__init__()
        self.deadline = time.perf_counter() + 60 * minutes

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


def compare_with_random(
    model: MaskablePPO, rules: pe.Rules, opponents: str | list[str], n_games: int, seed: int
) -> dict[str, dict[str, np.ndarray]]:
    """The model (greedy) and a random legal player, each over the same ``n_games`` seeds; prints the table."""
    # Same seeds, hence the same deals, seats and opponent seeds: the comparison is paired game by game.
    seeds = range(EVAL_SEED_OFFSET + seed, EVAL_SEED_OFFSET + seed + n_games)
    env = pe.gym_env(rules=rules, opponents=opponents, illegal_action="raise")
    start = time.perf_counter()
    stats = {
        "MaskablePPO (greedy)": play_games(env, MaskablePPOAgent(model), seeds),
        "random legal": play_games(env, RandomAgent(rules), seeds),
    }
    print(f"\n{n_games} games against {opponents}, same seeds ({time.perf_counter() - start:.1f} s):")
    for label, games in stats.items():
        print(report(label, games, rules.n_players))
    difference = stats["MaskablePPO (greedy)"]["reward"] - stats["random legal"]["reward"]
    print(f"{'difference (paired)':<22} reward {mean_ci_text(difference)}")
    return stats


def duplicate_tournament(
    model: MaskablePPO, rules: pe.Rules, opponents: str | list[str], n_deals: int, seed: int
) -> None:
    """The model in president-eval's duplicate-deal tournament: the adapter is an agent like the baselines."""
    from president_env.evaluation.tournament import evaluate

    others = [opponents] * (rules.n_players - 1) if isinstance(opponents, str) else opponents
    start = time.perf_counter()
    result = evaluate([MaskablePPOAgent(model), *others], rules, n_deals=n_deals, seed=seed, progress=False)
    seconds = time.perf_counter() - start
    print(
        f"\nduplicate-deal tournament against {opponents}, {n_deals} deal groups × {rules.n_players} rotations "
        f"({seconds:.1f} s):"
    )
    print(result.to_markdown())


def measure_speed(rules: pe.Rules, opponents: str | list[str], args: argparse.Namespace) -> None:
    """MaskablePPO's training steps/s (rollouts and updates) on the adapter and on the single env, in one run.

    The adapter runs with ``--num-envs``, ``--n-steps`` and ``--batch-size`` (their vector defaults unless
    given); the single env with SB3's defaults (2048 steps per rollout, minibatches of 64).
    """
    speeds = {}
    seconds, seed = args.speed, args.seed
    for kind in ("vector", "single"):
        if kind == "vector":
            venv = PresidentSB3VecEnv(args.num_envs, rules=rules, opponents=opponents, illegal_action="raise")
            env = VecMonitor(venv)
            model = MaskablePPO(
                "MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, seed=seed, verbose=0
            )
        else:
            env = pe.gym_env(rules=rules, opponents=opponents, illegal_action="raise")
            model = MaskablePPO("MlpPolicy", env, n_steps=2048, batch_size=64, seed=seed, verbose=0)
        start = time.perf_counter()
        model.learn(total_timesteps=10**9, callback=TimeBudget(seconds / 60))
        speeds[kind] = model.num_timesteps / (time.perf_counter() - start)
        print(f"MaskablePPO on {kind:<6} env: {model.num_timesteps:>9} timesteps, {speeds[kind]:8.0f} steps/s")
    print(f"adapter / single env: {speeds['vector'] / speeds['single']:.1f}x")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # SB3's network is tiny and its minibatches small: more threads only add synchronisation (on this project's
    # busy 2-core machine, 2 threads made a short learn() 9 times slower than 1).
    torch.set_num_threads(args.torch_threads)
    try:
        rules = resolve_rules(args.rules)
        opponents = parse_opponents(args.opponents, rules)
    except ValueError as err:
        print(f"sb3_maskable_ppo.py: error: {err}", file=sys.stderr)
        return 2
    if args.speed:
        measure_speed(rules, opponents, args)
        return 0
    # seat=None: the learner's seat is drawn for every game, so the policy learns every seat.
    if args.env == "vector":
        env = VecMonitor(PresidentSB3VecEnv(args.num_envs, rules=rules, opponents=opponents, illegal_action="raise"))
    else:
        env = pe.gym_env(rules=rules, opponents=opponents, illegal_action="raise")
    print(f"rules {args.rules} ({rules.n_players} players), opponents {args.opponents}, env {args.env}")
    print(f"observation {env.observation_space}, actions {env.action_space}")

    model = MaskablePPO(
        "MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, ent_coef=0.01, seed=args.seed, verbose=1
    )
    start = time.perf_counter()
    callback = TimeBudget(args.max_minutes) if args.max_minutes else None
    model.learn(total_timesteps=args.timesteps, callback=callback)
    seconds = time.perf_counter() - start
    print(f"trained {model.num_timesteps} timesteps in {seconds:.1f} s ({model.num_timesteps / seconds:.0f} steps/s)")
    if args.save:
        model.save(args.save)
        print(f"saved {args.save}")

    if args.eval_episodes > 0:
        compare_with_random(model, rules, opponents, args.eval_episodes, args.seed)
    if args.duplicate_deals > 0:
        names = [n.strip() for n in args.tournaments.split(",") if n.strip()] if args.tournaments else [opponents]
        for name in names:
            duplicate_tournament(model, rules, name, args.duplicate_deals, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
