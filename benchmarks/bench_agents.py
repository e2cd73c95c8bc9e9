"""Decision latency of the baselines: ``python benchmarks/bench_agents.py``.

Positions are mid-manche decisions of real games (4 players, standard rules by default):
games are played by heuristic-3 for a random number of steps, and the positions where the
player to act has a choice (two or more legal actions) are kept. For every agent the script
prints the time of one decision through ``act`` (median, 90th percentile, max, in ms) and the
time per decision when ``act_batch`` takes 64 of them at once, with the targets (median: mc-4 ≤ 100 ms,
mc-5 ≤ 500 ms, ppo-universal-search ≤ 1 s, the apps' strongest agent) and the ratio to heuristic-3 in the same run.
Learned agents act on one torch thread (``president_env.core.threads``): the figures are one core's.

    python benchmarks/bench_agents.py --agents heuristic-3,ppo-universal,ppo-universal-search --rules big_table
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from president_env import agents
from president_env.core.presets import resolve_rules
from president_env.core.vec_game import VecGame

TARGETS_MS = {"mc-4": 100.0, "mc-5": 500.0, "ppo-universal-search": 1000.0}


def mid_manche_positions(rules, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` observations and masks of decisions with a choice, 8 to 30 decisions into a manche."""
    game = VecGame(rules, batch_size=max(n, 16), seed=seed)
    player = agents.make("heuristic-3", rules)
    rng = np.random.default_rng(seed)
    stop_at = rng.integers(8, 31, size=game.batch_size)
    observations, masks = [], []
    while sum(len(o) for o in observations) < n:
        mask = game.legal_mask()
        take = (game.state.manche_steps == stop_at) & (mask.sum(axis=1) > 1)
        if take.any():
            observations.append(game.observe()[take])
            masks.append(mask[take])
            stop_at[take] = -1  # one position per game
        if (stop_at < 0).all() or (game.state.manche_steps > 60).all():
            stop_at = rng.integers(8, 31, size=game.batch_size)
        game.step(player.act_batch(game.observe(), mask))
    return np.concatenate(observations)[:n], np.concatenate(masks)[:n]


def bench(name: str, rules, observations: np.ndarray, masks: np.ndarray, batch: int = 64) -> dict:
    agent = agents.make(name, rules, seed=0)
    agent.act_batch(observations[:2], masks[:2])  # warm caches
    single = []
    for obs, mask in zip(observations, masks):
        start = time.perf_counter()
        agent.act({"observation": obs, "action_mask": mask.astype(np.int8)})
        single.append(time.perf_counter() - start)
    start = time.perf_counter()
    agent.act_batch(observations[:batch], masks[:batch])
    batched = (time.perf_counter() - start) / min(batch, len(observations))
    ms = np.asarray(single) * 1000
    return {
        "agent": name,
        "median_ms": float(np.median(ms)),
        "p90_ms": float(np.percentile(ms, 90)),
        "max_ms": float(ms.max()),
        "batched_ms_per_decision": batched * 1000,
        "decisions": len(single),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="standard", help="preset name or YAML path (default: standard)")
    parser.add_argument("--positions", type=int, default=40, help="mid-manche decisions timed per agent")
    parser.add_argument("--agents", default="random,heuristic-1,heuristic-2,heuristic-3,mc-4,mc-5")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench_agents.json", help="JSON file for the numbers")
    args = parser.parse_args(argv)
    rules = resolve_rules(args.rules)
    observations, masks = mid_manche_positions(rules, args.positions, args.seed)
    legal = masks.sum(axis=1)
    print(f"{len(observations)} mid-manche positions, legal actions per decision: median {np.median(legal):.0f}")
    print(f"{'agent':<12} {'median ms':>10} {'p90 ms':>8} {'max ms':>8} {'batch64 ms/dec':>15}  target")
    rows = []
    for name in args.agents.split(","):
        row = bench(name, rules, observations, masks)
        rows.append(row)
        target = TARGETS_MS.get(name)
        verdict = "" if target is None else f"≤ {target:.0f} ms: {'met' if row['median_ms'] <= target else 'NOT met'}"
        print(
            f"{name:<12} {row['median_ms']:>10.2f} {row['p90_ms']:>8.2f} {row['max_ms']:>8.2f} "
            f"{row['batched_ms_per_decision']:>15.2f}  {verdict}"
        )
    reference = next((r for r in rows if r["agent"] == "heuristic-3"), None)
    if reference:
        for row in rows:
            row["ratio_to_heuristic_3"] = row["median_ms"] / reference["median_ms"]
        ratios = ", ".join(f"{r['agent']} {r['ratio_to_heuristic_3']:.1f}x" for r in rows)
        print(f"median time relative to heuristic-3: {ratios}")
    Path(args.out).write_text(json.dumps({"rules": rules.to_dict(), "rows": rows}, indent=2))
    return rows


if __name__ == "__main__":
    main()
