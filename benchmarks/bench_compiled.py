"""``VecGame`` on the compiled kernels against the NumPy engine, batch size by batch size, in the same run.

    python benchmarks/bench_compiled.py [--seconds 0.5] [--rounds 2] [--batch-sizes 1 4 16 64 256 1024 4096]

Random legal play (mask + sample + step, autoreset), the two paths alternating within each round; prints
steps/s of each and their ratio per round. A crossover would be a batch size from which the NumPy engine is
faster; none was found, so ``VecGame`` plays through the kernels at every size (docs/speed.md). Needs Numba.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from president_env import compiled
from president_env.engine import sample_legal
from president_env.vec_game import VecGame


def steps_per_second(batch_size: int, use_kernels: bool, seconds: float, seed: int = 0) -> float:
    """Decisions per second of ``VecGame(batch_size, compiled=use_kernels)`` under random legal play."""
    game = VecGame("standard", batch_size=batch_size, seed=seed, compiled=use_kernels)
    rng = np.random.default_rng(seed + 1)
    steps, start = 0, time.perf_counter()
    while True:
        for _ in range(20):
            game.step(sample_legal(game.legal_mask(), rng))
        steps += 20 * batch_size
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one measurement (default 0.5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per batch size (default 2)")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16, 64, 256, 1024, 4096])
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1 or min(args.batch_sizes) < 1:
        parser.error("--seconds must be positive, --rounds and every batch size at least 1")
    if not compiled.available():
        print("bench_compiled: the compiled path needs Numba (pip install president-env[fast])")
        return 2
    steps_per_second(1, True, 0.2)  # compile (or load from the cache) before measuring
    print("VecGame random legal play, steps/s: compiled kernels / NumPy engine (ratio), per round")
    for b in args.batch_sizes:
        rounds = []
        for round_index in range(args.rounds):
            numpy_rate = steps_per_second(b, False, args.seconds, seed=round_index)
            kernel_rate = steps_per_second(b, True, args.seconds, seed=round_index)
            rounds.append(f"{kernel_rate:,.0f} / {numpy_rate:,.0f} ({kernel_rate / numpy_rate:.2f})")
        print(f"  B = {b:<6} " + "   ".join(rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
