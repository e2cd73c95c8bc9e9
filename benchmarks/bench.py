"""Benchmark: ``python benchmarks/bench.py [--quick] [--preset NAME] [--json PATH]``.

Prints two Markdown tables (tabulate, from the ``eval`` extra) and writes JSON. Measured in one run, with
random legal actions:

- ``VecGame`` steps/s at B = 1, 64, 1024, 4096 for (a) legal mask + action
  sampling + step and (b) the same plus the observation;
- the PettingZoo AEC env through ``last()`` / ``step()``, bare (``raw_env``) and
  with PettingZoo's wrappers (``env()``);
- the pure-Python reference implementation, the base of every ratio;
- peak memory of the batched state and of one step's temporaries (tracemalloc);
- the Gymnasium envs, in learner steps/s (one learner decision plus the opponents' until its
  next turn): the single env ``gym_env()`` and the vector env ``vector_env(num_envs=1024)``
  with random and ``heuristic-3`` opponents, and the vector env's ratio to ``VecGame``'s
  (b) step + mask + obs decisions/s at B = 1024, measured in rounds alternating with it (targets
  ``VECTOR_TARGETS``: at a four-player table one learner step covers about four decisions). The
  header says which path the vector env's opponents ran (``numba``: the ``fast`` extra's kernels of
  ``president_env.compiled``; ``numpy`` without it). ``--only vector`` measures just these.

A "step" is one decision of one game. Numbers are wall-clock throughput on
this machine, the best of ``--repeat`` measurements; run it alone for stable figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from president_env import compiled
from president_env.engine import sample_legal
from president_env.evaluation.report import markdown_table
from president_env.presets import load_preset
from president_env.rules import Rules
from president_env.vec_game import VecGame

BATCH_SIZES = (1, 64, 1024, 4096)
VECTOR_ENVS = 1024
# Least learner steps/s of the vector env, as a share of VecGame's (b) decisions/s at the same batch size.
VECTOR_TARGETS = {"random": 0.20, "heuristic-3": 0.09}


def bench_vec(rules: Rules, batch_size: int, with_obs: bool, seconds: float, seed: int = 0) -> float:
    """Steps per second of mask + sample + step (+ observe) at ``batch_size``."""
    game = VecGame(rules, batch_size=batch_size, seed=seed)
    rng = np.random.default_rng(seed + 1)

    def one() -> None:
        mask = game.legal_mask()
        if with_obs:
            game.observe()
        game.step(sample_legal(mask, rng))

    for _ in range(10):
        one()
    steps, start = 0, time.perf_counter()
    while True:
        for _ in range(20):
            one()
        steps += 20 * batch_size
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def bench_aec(rules: Rules, seconds: float, seed: int = 0, wrapped: bool = False) -> float:
    """Steps per second through the PettingZoo AEC loop (``last()`` then ``step()``).

    ``wrapped``: through ``president_env.env()`` (PettingZoo's order and bounds wrappers) instead of ``raw_env``.
    """
    from president_env.aec_env import env as wrapped_env
    from president_env.aec_env import raw_env

    env = (wrapped_env if wrapped else raw_env)(rules=rules)
    rng = np.random.default_rng(seed)
    steps, games, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        games += 1
        for _agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(legal.size)])
                steps += 1
            env.step(action)
    return steps / (time.perf_counter() - start)


def bench_gym_vector(rules: Rules, num_envs: int, opponents: str, seconds: float, seed: int = 0) -> float:
    """Learner steps per second of ``vector_env(num_envs)``, the learners playing random legal actions."""
    from president_env.gym_vector_env import vector_env

    venv = vector_env(num_envs, rules=rules, opponents=opponents)
    venv.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)

    def one() -> None:
        masks = venv.action_masks()
        masks[~masks.any(axis=1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        venv.step(sample_legal(masks, rng))

    for _ in range(3):
        one()
    steps, start = 0, time.perf_counter()
    while True:
        one()
        steps += num_envs
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def bench_plain_loop(rules: Rules, batch_size: int, opponents: str, seconds: float, seed: int = 0) -> float:
    """Learner steps per second of a plain loop over ``VecGame`` (the bound of the vector env's bookkeeping).

    Every slot steps at every engine step: a random learner seat per slot plays random legal actions, the
    other seats ``opponents`` through one ``act_batch``; nobody waits for anybody, so the loop shows what
    the same decisions cost without the Gymnasium contract (each game back at its learner's turn per step).
    """
    from president_env.registry import resolve

    game = VecGame(rules, batch_size=batch_size, seed=seed)
    rng = np.random.default_rng(seed + 1)
    learner = rng.integers(rules.n_players, size=batch_size)
    opponent = resolve(opponents, rules, seed)
    actions = np.empty(batch_size, np.int64)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        mask, obs = game.legal_mask(), game.observe()
        is_learner = game.current_player == learner
        actions[is_learner] = sample_legal(mask[is_learner], rng)
        actions[~is_learner] = opponent.act_batch(obs[~is_learner], mask[~is_learner])
        game.step(actions)
        steps += int(is_learner.sum())
    return steps / (time.perf_counter() - start)


def bench_gym_single(rules: Rules, opponents: str, seconds: float, seed: int = 0) -> float:
    """Learner steps per second of the single Gymnasium env ``gym_env()`` (random legal learner actions)."""
    from president_env.gym_single_env import gym_env

    env = gym_env(rules, opponents=opponents)
    rng = np.random.default_rng(seed)
    steps, games, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, info = env.reset(seed=seed + games)
        games += 1
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(sample_legal(info["action_mask"][None].astype(bool), rng)[0]))
            steps += 1
    return steps / (time.perf_counter() - start)


def bench_reference(rules: Rules, seconds: float, seed: int = 0) -> float:
    """Steps per second of the pure-Python reference implementation (random legal play, whole games)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the oracle lives beside the tests
    from oracle.reference import deal_cards, start_random_game

    rng = np.random.default_rng(seed)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        game = start_random_game(rules, rng)
        while not game.done:
            if game.phase == "needs_deal":
                game.deal(deal_cards(rules, rng, game.next_dealer, game.seat_of_player))
                continue
            legal = np.flatnonzero(game.legal_mask())
            game.step(int(legal[rng.integers(legal.size)]))
            steps += 1
    return steps / (time.perf_counter() - start)


def peak_memory_mb(rules: Rules, batch_size: int, seed: int = 0) -> float:
    """Peak traced memory (MB) of building a batch and running steps with observations."""
    tracemalloc.start()
    game = VecGame(rules, batch_size=batch_size, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        mask = game.legal_mask()
        game.observe()
        game.step(sample_legal(mask, rng))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def best_of(repeat: int, measure, *args, **kwargs) -> float:
    """The best of ``repeat`` throughput measurements: on a shared machine, noise only ever slows a run down."""
    return max(measure(*args, **kwargs) for _ in range(repeat))


def run(rules: Rules, seconds: float, batch_sizes: tuple[int, ...], repeat: int = 3, only: str = "all") -> dict:
    """Every measurement, or with ``only="vector"`` just the Gymnasium envs and their ``VecGame`` base."""
    results: dict = {"rules": rules.to_dict(), "seconds_per_measure": seconds, "repeat": repeat}
    results["python"], results["numpy"] = platform.python_version(), np.__version__
    results["vector_env_path"] = compiled.path_name()
    if only == "vector":
        batch_sizes = ()
    else:
        results["reference_steps_per_s"] = best_of(repeat, bench_reference, rules, seconds)
        results["aec_steps_per_s"] = best_of(repeat, bench_aec, rules, seconds)
        results["aec_wrapped_steps_per_s"] = best_of(repeat, bench_aec, rules, seconds, wrapped=True)
    rows = []
    for b in batch_sizes:
        rows.append(
            {
                "batch_size": b,
                "step_mask_steps_per_s": best_of(repeat, bench_vec, rules, b, with_obs=False, seconds=seconds),
                "step_mask_obs_steps_per_s": best_of(repeat, bench_vec, rules, b, with_obs=True, seconds=seconds),
                "peak_mb": peak_memory_mb(rules, b),
            }
        )
    results["vec"] = rows
    reference = next((row for row in rows if row["batch_size"] == VECTOR_ENVS), None)
    if reference is None:  # the vector env's ratio needs VecGame at its batch size, in this run
        reference = {"step_mask_obs_steps_per_s": best_of(repeat, bench_vec, rules, VECTOR_ENVS, True, seconds)}
    results["vecgame_b_steps_per_s"] = reference["step_mask_obs_steps_per_s"]
    gym = []
    for opponents in VECTOR_TARGETS:
        # The ratios' base is measured again in rounds alternating with the vector env and the plain loop:
        # on a shared machine the load drifts between measurements taken minutes apart.
        rounds = [
            (
                bench_vec(rules, VECTOR_ENVS, True, seconds),
                bench_gym_vector(rules, VECTOR_ENVS, opponents, seconds),
                bench_plain_loop(rules, VECTOR_ENVS, opponents, seconds),
            )
            for _ in range(repeat)
        ]
        base, vector, plain = (max(column) for column in zip(*rounds))
        single = best_of(repeat, bench_gym_single, rules, opponents, seconds)
        gym.append(
            {
                "opponents": opponents,
                "num_envs": VECTOR_ENVS,
                "vecgame_b_steps_per_s": base,
                "vector_learner_steps_per_s": vector,
                "single_learner_steps_per_s": single,
                "plain_loop_learner_steps_per_s": plain,
                "plain_loop_ratio_to_vecgame": plain / base,
                "ratio_to_vecgame": vector / base,
                "target_ratio": VECTOR_TARGETS[opponents],
            }
        )
    results["gym"] = gym
    results["process_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return results


def format_table(results: dict) -> str:
    """The Markdown tables of ``results``: the engine and AEC speeds (when measured), then the Gymnasium envs'."""
    parts = []
    if "reference_steps_per_s" in results:
        ref = results["reference_steps_per_s"]
        aec, wrapped = results["aec_steps_per_s"], results["aec_wrapped_steps_per_s"]
        rows = [
            ["reference (pure Python, 1 game)", "1", f"{ref:,.0f}", "1.0", ""],
            ["PettingZoo AEC `raw_env` (last + step)", "1", f"{aec:,.0f}", f"{aec / ref:.2f}", ""],
            ["PettingZoo AEC `env()`, wrapped (last + step)", "1", f"{wrapped:,.0f}", f"{wrapped / ref:.2f}", ""],
        ]
        for row in results["vec"]:
            b = row["batch_size"]
            a, o = row["step_mask_steps_per_s"], row["step_mask_obs_steps_per_s"]
            rows.append(["VecGame (a) step + mask", str(b), f"{a:,.0f}", f"{a / ref:.1f}", f"{row['peak_mb']:.1f}"])
            rows.append(["VecGame (b) step + mask + obs", str(b), f"{o:,.0f}", f"{o / ref:.1f}", ""])
        parts.append(markdown_table(["what", "B", "steps/s", "× reference", "peak MB"], rows))
    else:
        base = results["vecgame_b_steps_per_s"]
        parts.append(f"VecGame (b) step + mask + obs at B = {VECTOR_ENVS}: {base:,.0f} steps/s (alone)")
    rows = []
    for row in results["gym"]:
        vector, single = row["vector_learner_steps_per_s"], row["single_learner_steps_per_s"]
        met = "met" if row["ratio_to_vecgame"] >= row["target_ratio"] else "NOT met"
        plain = row["plain_loop_learner_steps_per_s"]
        rows.append(
            [
                f"VecGame (b), B = {row['num_envs']}, in the rounds with {row['opponents']} (decisions/s)",
                f"{row['vecgame_b_steps_per_s']:,.0f}",
                "",
                "",
                "",
            ]
        )
        rows.append([f"`gym_env()`, {row['opponents']}", f"{single:,.0f}", "1.0", "", ""])
        rows.append(
            [
                f"plain loop over `VecGame({row['num_envs']})` (no env), {row['opponents']}",
                f"{plain:,.0f}",
                f"{plain / single:,.0f}",
                f"{row['plain_loop_ratio_to_vecgame']:.3f}",
                "",
            ]
        )
        rows.append(
            [
                f"`vector_env({row['num_envs']})`, {row['opponents']}",
                f"{vector:,.0f}",
                f"{vector / single:,.0f}",
                f"{row['ratio_to_vecgame']:.3f}",
                f"≥ {row['target_ratio']:.2f} ({met})",
            ]
        )
    header = ["Gymnasium env, opponents", "learner steps/s", "× single env"]
    header += [f"× VecGame (b) decisions/s at B = {VECTOR_ENVS} (alternating rounds)", "target"]
    parts.append(markdown_table(header, rows))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="standard", help="rules preset (configs/rules/NAME.yaml)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="report the best of this many measurements")
    parser.add_argument("--quick", action="store_true", help="short measurements (0.5 s each, best of 1)")
    parser.add_argument("--json", default="bench_results.json", help="where to write the JSON results")
    parser.add_argument(
        "--only",
        choices=("all", "vector"),
        default="all",
        help=f"vector: only the Gymnasium envs and VecGame (b) at B = {VECTOR_ENVS}, the base of their ratios",
    )
    args = parser.parse_args(argv)
    seconds, repeat = (0.5, 1) if args.quick else (args.seconds, args.repeat)
    results = run(load_preset(args.preset), seconds, BATCH_SIZES, repeat, only=args.only)
    results["preset"] = args.preset
    print(f"president-env benchmark, preset {args.preset}, best of {repeat} × {seconds} s per measurement")
    print(f"vector env opponents' engine path: {results['vector_env_path']} (president_env.compiled)")
    print(format_table(results))
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
