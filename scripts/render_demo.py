"""A rendered demo game: ``python scripts/render_demo.py [--preset NAME] [--seed N]`` (not installed).

Random players play one game through the AEC env; the table is printed after
every move (the hand shown is that of the player to act next).
"""

from __future__ import annotations

import sys

import numpy as np

from president_env.core.engine import sample_legal
from president_env.core.presets import PRESETS, load_preset
from president_env.core.user_input import ArgumentParser
from president_env.envs.aec_env import raw_env


def play(preset: str = "standard", seed: int = 0, out=None) -> int:
    """Play one game with random players, writing the table after each move to ``out``; returns the moves made."""
    out = sys.stdout if out is None else out
    aec = raw_env(rules=load_preset(preset), render_mode="ansi")
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    print(aec.render(), file=out)
    moves = 0
    for _ in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(int(sample_legal(observation["action_mask"][None].astype(bool), rng)[0]))
        moves += 1
        print(f"\n--- move {moves} ---", file=out)
        print(aec.render(), file=out)
    return moves


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description="Play one game of Président with random players, rendered as text.")
    parser.add_argument("--preset", default="standard", choices=PRESETS, help="rules preset (default: standard)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the players (default: 0)")
    args = parser.parse_args(argv)
    play(args.preset, args.seed)


if __name__ == "__main__":
    main()
