"""Compile every kernel into Numba's disk cache: ``python scripts/compile_kernels.py [--jobs N]`` (not installed).

Each kernel compiles at its first call in a process and is cached on disk (docs/speed.md), so a fresh install pays
the compilation once, in whichever process first plays: about a minute and a half on one core. Run this once after
installing, or before starting many processes at once (a tournament's workers, Ray actors, a test run under
pytest-xdist), and they load the kernels instead. ``--jobs N`` plays the warm-up games in N processes, each starting
at another game of the list: a kernel that two of them need is compiled by one while the other waits for it
(``president_env.core.compiled``: the lock beside each cache), so N cores share the work.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable

from president_env.core.compiled import PARALLEL_FROM
from president_env.core.threads import available_cpus
from president_env.core.user_input import ArgumentParser

BIG = 2 * PARALLEL_FROM
"""Games in a batch the kernels split over threads (their threaded forms)."""


def batched_games(batch_size: int) -> None:
    """The rule kernels (mask, play, deal, scoring) and the observation, on ``batch_size`` games."""
    import numpy as np

    import president_env as pe
    from president_env.core.engine import sample_legal

    game = pe.VecGame("party", batch_size=batch_size, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        game.step(sample_legal(game.legal_mask(), rng))
        game.observe()


def vector_env(opponents: str, num_envs: int) -> None:
    """The vector env's compiled opponents' loop with ``opponents`` (``random`` or a heuristic)."""
    import numpy as np

    import president_env as pe
    from president_env.core.engine import sample_legal

    venv = pe.vector_env(num_envs, rules=pe.load_preset("party"), opponents=opponents)
    _, info = venv.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(30):
        mask = info["action_mask"].astype(bool)
        mask[~mask.any(axis=1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        _, _, _, _, info = venv.step(sample_legal(mask, rng))


def single_game() -> None:
    """The single-game path of the AEC and Gymnasium envs (one slot's kernels) and a heuristic agent's choice."""
    import president_env as pe
    from president_env import agents

    env = pe.env(rules="party")
    env.reset(seed=0)
    heuristic = agents.make("heuristic-3", "party", seed=0)
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else heuristic.act(observation))
    game = pe.VecGame("party", 8, seed=0)
    agents.make("heuristic-1", "party", seed=0).act_batch(game.observe(), game.legal_mask())


WARM_UPS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("batched games", lambda: batched_games(8)),
    ("batched games, threaded", lambda: batched_games(BIG)),
    ("single game and agents", single_game),
    ("vector env, random opponents", lambda: vector_env("random", 8)),
    ("vector env, heuristic opponents, threaded", lambda: vector_env("heuristic-3", BIG)),
    ("vector env, heuristic opponents", lambda: vector_env("heuristic-3", 8)),
    ("vector env, random opponents, threaded", lambda: vector_env("random", BIG)),
)
"""The warm-up games; together they call every kernel of the package in the forms the envs and agents use. Ordered
so that two jobs (starting at the first and the fifth) share the work about evenly: the threaded heuristic
opponents' loop alone is a third of it."""


def warm_up(start: int) -> list[tuple[str, float]]:
    """Play every warm-up game, from the ``start``-th on (then around the list); the seconds each took."""
    seconds = []
    for k in range(len(WARM_UPS)):
        name, play = WARM_UPS[(start + k) % len(WARM_UPS)]
        begun = time.perf_counter()
        play()
        seconds.append((name, time.perf_counter() - begun))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description="Compile every kernel of president_env into Numba's disk cache.")
    cpus = available_cpus()
    parser.add_argument("--jobs", type=int, default=cpus, help=f"processes sharing the work (default: {cpus})")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")
    jobs = min(args.jobs, len(WARM_UPS))
    begun = time.perf_counter()
    starts = [round(k * len(WARM_UPS) / jobs) for k in range(jobs)]
    if jobs == 1:
        results = [warm_up(0)]
    else:  # spawned: each job imports the package afresh, as the processes it prepares will
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(warm_up, starts)
    for job, seconds in enumerate(results):
        print(f"job {job}: " + ", ".join(f"{name} {s:.1f} s" for name, s in seconds))
    print(f"kernels compiled or loaded in {time.perf_counter() - begun:.1f} s on {jobs} process(es)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
