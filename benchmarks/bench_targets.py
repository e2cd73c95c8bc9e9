"""The engine's speed targets in one run of interleaved rounds: ``python benchmarks/bench_targets.py [--rounds 5]``.

At B = 4096 on the standard rules, with random legal actions:

- ``VecGame`` (a) legal mask + sampling + step and (b) the same plus the observation (``bench.vec_rates``), each
  against PGX's ``leduc_holdem`` on CPU JAX: ``jit(vmap(step))`` with PGX's auto-reset and a random legal action
  drawn inside the jitted step (PGX's step computes the mask and the observation too), in a child process (with JAX
  in the same process, a first try on a loaded machine ran the kernels several times slower). Targets:
  (a) ≥ 2.5×, (b) ≥ 1.5×. Needs ``pip install pgx`` (JAX); without it these rows are skipped.
- (b) in a process pinned to two cores against one pinned to one (``taskset -c 0,1`` / ``taskset -c 0``: the
  kernels use the CPUs of the process's affinity mask, ``president_env.core.threads``). Target ≥ 1.6×.
- The vector env ``vector_env(1024)`` with random and with heuristic-3 opponents, in learner steps/s (a learner's
  decision and its opponents' until its next turn), against VecGame (b) at B = 1024 in decisions/s
  (``bench.gym_vector_rates``, ``bench.vec_rates``). Targets ``bench.VECTOR_TARGETS``: ≥ 0.25× and ≥ 0.20×.
  ``--only vector`` measures just these three (no PGX, no ``taskset``).
- The AEC env ``president_env.env()`` against PettingZoo's ``leduc_holdem_v4`` AEC, agent steps/s of random legal
  play (``last()`` + ``step()``, ``bench_aec.steps_per_second``). Target ``bench_aec.GOAL``: ≥ 1.6×. Needs the
  ``bench`` extra (``pettingzoo[classic]``); without it these rows are skipped.

Each round measures every system for ``--seconds`` (the order rotates from round to round) and takes each ratio
within its round, so the drifting load of a shared machine weighs on both sides alike; the table gives the median
ratio and its range over the rounds. A "step" is one decision of one game (PGX: one step of one Leduc game; the
AEC envs: one agent step).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import warnings
from functools import cache

from bench import VECTOR_ENVS, VECTOR_TARGETS, Rates, _rates, gym_vector_rates, vec_rates
from bench_aec import GOAL as AEC_GOAL
from bench_aec import steps_per_second as aec_steps_per_second

import president_env as pe
from president_env.core.presets import load_preset

BATCH = 4096
TARGETS = {
    "vecgame_a_vs_pgx": 2.5,
    "vecgame_b_vs_pgx": 1.5,
    "two_cores_vs_one": 1.6,
    **{f"vector_{opponents}_vs_vecgame_b": target for opponents, target in VECTOR_TARGETS.items()},
    "aec_vs_leduc": AEC_GOAL,
}
VECTOR_SYSTEMS = ("vecgame_b_1024", *(f"vector_{opponents}" for opponents in VECTOR_TARGETS))


def pgx_rates(batch_size: int, seconds: float, seed: int = 0) -> Rates | None:
    """Steps per second of PGX's ``leduc_holdem``: ``batch_size`` games, auto-reset, random legal actions; ``None``
    without PGX."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return None
    env = pgx.make("leduc_holdem")
    step = auto_reset(env.step, env.init)

    def one_game(state, key):
        act, reset = jax.random.split(key)
        action = jax.random.categorical(act, jnp.where(state.legal_action_mask, 0.0, -jnp.inf))
        return step(state, action, reset)

    @jax.jit
    def step_all(state, key):
        key, sub = jax.random.split(key)
        return jax.vmap(one_game)(state, jax.random.split(sub, batch_size)), key

    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(seed), batch_size))
    key = jax.random.PRNGKey(seed + 1)
    box = [state, key]

    def twenty() -> None:
        for _ in range(20):
            box[0], box[1] = step_all(box[0], box[1])
        box[0].current_player.block_until_ready()

    twenty()  # compile
    return _rates(twenty, 20 * batch_size, seconds)


def child_rates(mode: str, seconds: float, seed: int, cpus: str | None = None) -> float | None:
    """Wall-clock steps/s that a fresh process of this script measures: ``mode`` "pgx" (PGX's Leduc) or "vecgame"
    (VecGame (b)), pinned to ``cpus`` with ``taskset`` if named; ``None`` where that cannot run here (no PGX, no
    ``taskset``, fewer CPUs than named)."""
    command = [sys.executable, __file__, "--child", mode, "--seconds", str(seconds), "--seed", str(seed)]
    if cpus is not None:
        if shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < len(cpus.split(",")):
            return None
        command = ["taskset", "-c", cpus, *command]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    last = done.stdout.strip().splitlines()[-1]
    return None if last == "none" else float(last)


@cache
def aec_envs() -> dict[str, object] | None:
    """The two AEC envs, built and warmed once (``"aec"``, ``"leduc_aec"``), or ``None`` without PettingZoo's
    classic games."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from pettingzoo.classic import leduc_holdem_v4
    except ImportError:
        return None
    envs = {"aec": pe.env(rules="standard"), "leduc_aec": leduc_holdem_v4.env()}
    for env in envs.values():
        aec_steps_per_second(env, 0.3, seed=0)
    return envs


def aec_rate(name: str, seconds: float, seed: int) -> float | None:
    envs = aec_envs()
    return None if envs is None else aec_steps_per_second(envs[name], seconds, seed=seed)


def one_round(seconds: float, r: int, only: str = "all") -> dict[str, float | None]:
    """Every system once (``only="vector"``: the vector env's and their base), in an order rotated by ``r``: their
    wall-clock steps/s."""
    rules = load_preset("standard")
    systems = {
        "pgx": lambda: child_rates("pgx", seconds, r),
        "vecgame_a": lambda: vec_rates(rules, BATCH, False, seconds, seed=r).wall,
        "vecgame_b": lambda: vec_rates(rules, BATCH, True, seconds, seed=r).wall,
        "one_core": lambda: child_rates("vecgame", seconds, r, cpus="0"),
        "two_cores": lambda: child_rates("vecgame", seconds, r, cpus="0,1"),
        "vecgame_b_1024": lambda: vec_rates(rules, VECTOR_ENVS, True, seconds, seed=r).wall,
        **{
            f"vector_{opponents}": lambda opponents=opponents: (
                gym_vector_rates(rules, VECTOR_ENVS, opponents, seconds, seed=r).wall
            )
            for opponents in VECTOR_TARGETS
        },
        "aec": lambda: aec_rate("aec", seconds, r),
        "leduc_aec": lambda: aec_rate("leduc_aec", seconds, r),
    }
    if only == "vector":
        systems = {name: systems[name] for name in VECTOR_SYSTEMS}
    names = list(systems)
    order = names[r % len(names) :] + names[: r % len(names)]
    return {name: systems[name]() for name in order}


def ratios(rate: dict[str, float | None]) -> dict[str, float | None]:
    """The target ratios of one round."""

    def over(a: str, b: str) -> float | None:
        return rate[a] / rate[b] if rate.get(a) and rate.get(b) else None

    return {
        "vecgame_a_vs_pgx": over("vecgame_a", "pgx"),
        "vecgame_b_vs_pgx": over("vecgame_b", "pgx"),
        "two_cores_vs_one": over("two_cores", "one_core"),
        **{f"vector_{o}_vs_vecgame_b": over(f"vector_{o}", "vecgame_b_1024") for o in VECTOR_TARGETS},
        "aec_vs_leduc": over("aec", "leduc_aec"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default: 5)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per system per round (default: 2)")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--only",
        choices=("all", "vector"),
        default="all",
        help="vector: only the vector env's rows and their base (no PGX, no taskset)",
    )
    parser.add_argument("--child", choices=("pgx", "vecgame"), help=argparse.SUPPRESS)  # a child's measurement
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds positive")
    if args.child == "pgx":
        rate = pgx_rates(BATCH, args.seconds, seed=args.seed)
        print("none" if rate is None else rate.wall)
        return
    if args.child == "vecgame":
        vec_rates(load_preset("standard"), BATCH, True, 0.2, seed=args.seed)  # warm: load the kernels
        print(vec_rates(load_preset("standard"), BATCH, True, args.seconds, seed=args.seed).wall)
        return
    rounds = []
    for r in range(args.rounds):
        rate = one_round(args.seconds, r, args.only)
        rounds.append((rate, ratios(rate)))
        shown = ", ".join(f"{k} {v:,.0f}" for k, v in rate.items() if v)
        print(f"round {r + 1}: {shown} steps/s", file=sys.stderr)
    load = os.getloadavg()[0]
    print(
        f"B = {BATCH} (the vector env's rows: N = {VECTOR_ENVS}), standard rules, {args.rounds} rounds of "
        f"{args.seconds:g} s per system, load {load:.1f}"
    )
    print()
    print("| | median steps/s | |")
    print("|---|---:|---|")
    for name in rounds[0][0]:
        values = [rate[name] for rate, _ in rounds if rate[name]]
        print(f"| {name} | {statistics.median(values):,.0f} |" if values else f"| {name} | not measured |", "|")
    print()
    print("| ratio | median | range over rounds | target | met |")
    print("|---|---:|---|---:|---|")
    for name, target in TARGETS.items():
        values = [ratio[name] for _, ratio in rounds if ratio[name]]
        if not values and args.only == "vector" and not name.startswith("vector_"):
            continue
        if not values:
            print(f"| {name} | not measured | | ≥ {target} | |")
            continue
        median = statistics.median(values)
        span = f"{min(values):.2f}-{max(values):.2f}"
        print(f"| {name} | {median:.2f}× | {span} | ≥ {target}× | {'yes' if median >= target else 'no'} |")


if __name__ == "__main__":
    main()
