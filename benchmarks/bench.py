"""Benchmark: ``python benchmarks/bench.py [--quick] [--preset NAME] [--only vector] [--json PATH]``.

Prints two Markdown tables (tabulate, from the ``eval`` extra) and writes JSON. Measured in one run, with
random legal actions:

- ``VecGame`` steps/s at B = 1, 64, 1024, 4096 for (a) legal mask + action
  sampling + step and (b) the same plus the observation;
- the PettingZoo AEC env through ``last()`` / ``step()``, bare (``raw_env``) and
  with PettingZoo's wrappers (``env()``);
- the pure-Python reference implementation, the base of every ratio;
- peak memory of the batched state and of one step's temporaries (tracemalloc);
- the Gymnasium envs, in learner steps/s (one learner decision plus the opponents' until its next turn):
  the vector env ``vector_env(num_envs=1024)`` with random and ``heuristic-3`` opponents, in interleaved
  rounds with ``VecGame``'s (b) step + mask + obs at B = 1024 (:func:`vector_rounds`: the three take turns
  within each round, the ratio of each env to VecGame's decisions/s is taken within its round; the table
  gives the median ratio and its range over ``--rounds`` rounds, against ``VECTOR_TARGETS``; the same ratio in
  CPU time beside it, which a loaded machine disturbs less), and the single
  env ``gym_env()`` (best of ``--repeat``). ``--only vector`` measures just these.

A "step" is one decision of one game. Numbers are wall-clock throughput on
this machine, the best of ``--repeat`` measurements (the vector env's: medians of rounds); run it alone for
stable figures, and on a shared machine read the ratios.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import NamedTuple

import numpy as np

from president_env.core.engine import sample_legal
from president_env.core.presets import load_preset
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame
from president_env.evaluation.report import markdown_table

BATCH_SIZES = (1, 64, 1024, 4096)
VECTOR_ENVS = 1024
# Least learner steps/s of the vector env, as a share of VecGame's (b) decisions/s at the same batch size (issue 34).
VECTOR_TARGETS = {"random": 0.25, "heuristic-3": 0.20}


class Rates(NamedTuple):
    """Units per second of one measurement, by the wall clock and by this process's CPU time (on a loaded machine
    the CPU time shows what the code costs, the wall clock what it got)."""

    wall: float
    cpu: float


def _rates(one, units: int, seconds: float) -> Rates:
    """:class:`Rates` of calling ``one`` (``units`` steps each) until ``seconds`` of wall clock have passed."""
    steps, start, cpu = 0, time.perf_counter(), time.process_time()
    while True:
        one()
        steps += units
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Rates(steps / elapsed, steps / max(time.process_time() - cpu, 1e-9))


def vec_rates(rules: Rules, batch_size: int, with_obs: bool, seconds: float, seed: int = 0) -> Rates:
    """Steps per second of mask + sample + step (+ observe) at ``batch_size``."""
    game = VecGame(rules, batch_size=batch_size, seed=seed)
    rng = np.random.default_rng(seed + 1)

    def one() -> None:
        mask = game.legal_mask()
        if with_obs:
            game.observe()
        game.step(sample_legal(mask, rng))

    def twenty() -> None:
        for _ in range(20):
            one()

    for _ in range(10):
        one()
    return _rates(twenty, 20 * batch_size, seconds)


def bench_vec(rules: Rules, batch_size: int, with_obs: bool, seconds: float, seed: int = 0) -> float:
    """Wall-clock steps per second of :func:`vec_rates`."""
    return vec_rates(rules, batch_size, with_obs, seconds, seed).wall


def bench_aec(rules: Rules, seconds: float, seed: int = 0, wrapped: bool = False) -> float:
    """Steps per second through the PettingZoo AEC loop (``last()`` then ``step()``).

    ``wrapped``: through ``president_env.env()`` (PettingZoo's order and bounds wrappers) instead of ``raw_env``.
    """
    from president_env.envs.aec_env import env as wrapped_env
    from president_env.envs.aec_env import raw_env

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


def gym_vector_rates(rules: Rules, num_envs: int, opponents: str, seconds: float, seed: int = 0) -> Rates:
    """Learner steps per second of ``vector_env(num_envs)``, the learners playing random legal actions."""
    from president_env.envs.gym_vector_env import vector_env

    venv = vector_env(num_envs, rules=rules, opponents=opponents)
    venv.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)

    def one() -> None:
        masks = venv.action_masks()
        masks[~masks.any(axis=1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        venv.step(sample_legal(masks, rng))

    for _ in range(3):
        one()
    return _rates(one, num_envs, seconds)


def bench_gym_single(rules: Rules, opponents: str, seconds: float, seed: int = 0) -> float:
    """Learner steps per second of the single Gymnasium env ``gym_env()`` (random legal learner actions)."""
    from president_env.envs.gym_single_env import gym_env

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


def run(
    rules: Rules, seconds: float, batch_sizes: tuple[int, ...], repeat: int = 3, only: str = "all", rounds: int = 5
) -> dict:
    """Every measurement, or with ``only="vector"`` just the Gymnasium envs and their ``VecGame`` base."""
    results: dict = {"rules": rules.to_dict(), "seconds_per_measure": seconds, "repeat": repeat}
    results["python"], results["numpy"] = platform.python_version(), np.__version__
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
    results["vector_rounds"] = vector_rounds(rules, seconds, rounds)
    single = {o: best_of(repeat, bench_gym_single, rules, o, seconds) for o in VECTOR_TARGETS}
    results["gym"] = [summarize(o, results["vector_rounds"], single[o]) for o in VECTOR_TARGETS]
    results["process_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return results


def vector_rounds(rules: Rules, seconds: float, rounds: int) -> list[dict]:
    """Interleaved rounds: in each, ``VecGame`` (b) at B = VECTOR_ENVS, then the vector env with each
    opponent of ``VECTOR_TARGETS`` take turns (the order rotates from round to round), ``seconds`` each; the
    ratio of each env to VecGame is taken within its round, so the load of a shared machine, which drifts from
    minute to minute, weighs on both sides of a ratio alike."""
    systems = ("vecgame", *VECTOR_TARGETS)
    out = []
    for r in range(rounds):
        rates = {}
        for system in systems[r % len(systems) :] + systems[: r % len(systems)]:
            if system == "vecgame":
                rates[system] = vec_rates(rules, VECTOR_ENVS, True, seconds, seed=r)
            else:
                rates[system] = gym_vector_rates(rules, VECTOR_ENVS, system, seconds, seed=r)
        wall = {system: rate.wall for system, rate in rates.items()}
        cpu = {system: rate.cpu for system, rate in rates.items()}
        wall["ratios"] = {o: wall[o] / wall["vecgame"] for o in VECTOR_TARGETS}
        wall["cpu_ratios"] = {o: cpu[o] / cpu["vecgame"] for o in VECTOR_TARGETS}
        wall["cpu"] = cpu
        out.append(wall)
    return out


def summarize(opponents: str, rounds: list[dict], single: float) -> dict:
    """One row of the Gymnasium table: medians over ``rounds`` (of :func:`vector_rounds`), the ratios' range."""
    ratios = [r["ratios"][opponents] for r in rounds]
    median = statistics.median(ratios)
    cpu_ratios = [r["cpu_ratios"][opponents] for r in rounds]
    return {
        "opponents": opponents,
        "num_envs": VECTOR_ENVS,
        "rounds": len(rounds),
        "vecgame_b_steps_per_s": statistics.median(r["vecgame"] for r in rounds),
        "vector_learner_steps_per_s": statistics.median(r[opponents] for r in rounds),
        "single_learner_steps_per_s": single,
        "ratio_to_vecgame": median,
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "cpu_ratio": statistics.median(cpu_ratios),
        "cpu_ratio_min": min(cpu_ratios),
        "cpu_ratio_max": max(cpu_ratios),
        "target_ratio": VECTOR_TARGETS[opponents],
        "met": median >= VECTOR_TARGETS[opponents],
    }


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
    rows = []
    for row in results["gym"]:
        vector, single = row["vector_learner_steps_per_s"], row["single_learner_steps_per_s"]
        rows.append(
            [
                f"`vector_env({row['num_envs']})`, {row['opponents']}",
                f"{row['vecgame_b_steps_per_s']:,.0f}",
                f"{vector:,.0f}",
                f"{single:,.0f}",
                f"{vector / single:,.0f}",
                f"**{row['ratio_to_vecgame']:.3f}** ({row['ratio_min']:.3f}–{row['ratio_max']:.3f})",
                f"{row['cpu_ratio']:.3f} ({row['cpu_ratio_min']:.3f}–{row['cpu_ratio_max']:.3f})",
                f"≥ {row['target_ratio']:.2f} ({'met' if row['met'] else 'NOT met'})",
            ]
        )
    header = ["env, opponents", f"VecGame (b) B = {VECTOR_ENVS} decisions/s", "learner steps/s"]
    header += ["`gym_env()` learner steps/s", "× single env", "× VecGame (b): median (range) of rounds"]
    header += ["the same in CPU time", "target (on the wall-clock ratio)"]
    parts.append(markdown_table(header, rows))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="standard", help="rules preset (configs/rules/NAME.yaml)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="report the best of this many measurements")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the vector env and VecGame")
    parser.add_argument("--quick", action="store_true", help="short measurements (0.5 s each, best of 1, 2 rounds)")
    parser.add_argument("--json", default="bench_results.json", help="where to write the JSON results")
    parser.add_argument(
        "--only",
        choices=("all", "vector"),
        default="all",
        help=f"vector: only the Gymnasium envs and VecGame (b) at B = {VECTOR_ENVS}, the base of their ratios",
    )
    args = parser.parse_args(argv)
    seconds, repeat, rounds = (0.5, 1, 2) if args.quick else (args.seconds, args.repeat, args.rounds)
    if min(seconds, repeat, rounds) <= 0:
        parser.error("--seconds, --repeat and --rounds must be positive")
    results = run(load_preset(args.preset), seconds, BATCH_SIZES, repeat, only=args.only, rounds=rounds)
    results["preset"] = args.preset
    print(f"president-env benchmark, preset {args.preset}, best of {repeat} × {seconds} s per measurement")
    print(f"vector envs: {rounds} interleaved rounds of {seconds} s per system")
    print(format_table(results))
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
