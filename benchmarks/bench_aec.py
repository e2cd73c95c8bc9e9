"""The AEC env against PettingZoo's own ``leduc_holdem_v4`` AEC, in the same run.

    python benchmarks/bench_aec.py [--seconds 2] [--rounds 5] [--rules standard]

Both envs are built by their standard constructors (``president_env.env()``, ``leduc_holdem_v4.env()``, each
with its PettingZoo wrappers) and played the same way: random legal play, ``last()`` then ``step()``, a
reset whenever every agent has left. Rounds alternate between the two so that both see the same machine
load; the rate of each is the median over its rounds, in agent steps per second (the dead steps that end a
game included, as in PettingZoo's own loop). Prints the rates, the ratio of the medians (goal: at least
:data:`GOAL`), the range and each round's ratio, and the machine's load average before and after. ``--cpu`` times
by the process's CPU time (a busy shared machine). The defaults take about 30 s.
Needs the ``bench`` extra (``pettingzoo[classic]``: rlcard, pygame).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

import president_env as pe
from president_env.core.presets import PRESETS

GOAL = 1.6
"""The ratio to ``leduc_holdem_v4`` the AEC env is to reach (issue 34)."""
OURS, PEER = "president_env.env()", "leduc_holdem_v4.env()"


def steps_per_second(env, seconds: float, seed: int, clock=time.perf_counter) -> float:
    """Random legal play for about ``seconds`` of ``clock``: agent steps (``last()`` + ``step()``) per second."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = clock()
    deadline = start + seconds
    while True:
        for _ in range(200):
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(legal.size)])
            env.step(action)
            if not env.agents:
                env.reset()
        steps += 200
        if clock() >= deadline:
            return steps / (clock() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one round (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per env, alternating (default 5)")
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS), help="preset (default standard)")
    parser.add_argument(
        "--cpu", action="store_true", help="time by the process's CPU time, not the wall clock (a busy shared machine)"
    )
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be positive and --rounds at least 1")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from pettingzoo.classic import leduc_holdem_v4
    except ImportError as error:
        print(f"bench_aec: the peer needs pettingzoo[classic] (pip install president-env[bench]): {error}")
        return 2
    envs = {OURS: pe.env(rules=args.rules), PEER: leduc_holdem_v4.env()}
    rates: dict[str, list[float]] = {name: [] for name in envs}
    load_before = _load_average()
    for env in envs.values():
        steps_per_second(env, 0.3, seed=0)  # warm-up
    for round_index in range(args.rounds):
        for name, env in envs.items():
            rates[name].append(steps_per_second(env, args.seconds, seed=round_index, clock=clock))
    median = {name: statistics.median(values) for name, values in rates.items()}
    by_round = [ours / theirs for ours, theirs in zip(rates[OURS], rates[PEER])]
    ratio = median[OURS] / median[PEER]
    timed = "CPU" if args.cpu else "wall-clock"
    print(f"AEC random legal play, last() + step(), median of {args.rounds} rounds of {args.seconds:g} s ({timed}),")
    print(f"rules {args.rules}; load average {load_before} before, {_load_average()} after")
    for name, value in median.items():
        spread = ", ".join(f"{v:,.0f}" for v in rates[name])
        print(f"  {name:<24} {value:>10,.0f} steps/s   (rounds: {spread})")
    verdict = "met" if ratio >= GOAL else "not met"
    print(
        f"  ratio {OURS} / {PEER}   {ratio:.2f}   (rounds {min(by_round):.2f}-{max(by_round):.2f}; "
        f"goal >= {GOAL}: {verdict})"
    )
    print(f"    by round: {', '.join(f'{value:.2f}' for value in by_round)}")
    return 0


def _load_average() -> str:
    """The 1-minute load average, or ``?`` where the system does not say."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
