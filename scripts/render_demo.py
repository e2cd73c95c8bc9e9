"""A rendered demo game: ``python scripts/render_demo.py [--preset NAME] [--seed N] [--manches N] [--gif PATH]``
(not installed).

Random players play one game through the AEC env; the table is printed after
every move (the hand shown is that of the player to act next). With ``--gif``
the game is instead drawn (``render_mode="rgb_array"``) and written as an
animated GIF, one frame every ``--every`` moves plus the first and the last:
``docs/render-demo.gif`` is ``--manches 2 --seed 0 --gif docs/render-demo.gif``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from president_env.core.engine import sample_legal
from president_env.core.presets import PRESETS, load_preset
from president_env.core.user_input import ArgumentParser
from president_env.envs.aec_env import raw_env


def renders(preset: str = "standard", seed: int = 0, manches: int | None = None, render_mode: str = "ansi") -> Iterator:
    """Play one game with random players; yield the render before the first move and after each move."""
    rules = load_preset(preset)
    if manches is not None:
        rules = rules.replace(manches=manches)
    aec = raw_env(rules=rules, render_mode=render_mode)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    yield aec.render()
    for _ in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(int(sample_legal(observation["action_mask"][None].astype(bool), rng)[0]))
        yield aec.render()


def play(preset: str = "standard", seed: int = 0, out=None, manches: int | None = None) -> int:
    """Play one game with random players, writing the table after each move to ``out``; returns the moves made."""
    out = sys.stdout if out is None else out
    moves = -1
    for moves, text in enumerate(renders(preset, seed, manches)):
        if moves:
            print(f"\n--- move {moves} ---", file=out)
        print(text, file=out)
    return moves


def write_gif(
    path: Path, preset: str = "standard", seed: int = 0, manches: int | None = None, every: int = 3, scale: float = 0.75
) -> int:
    """Draw one game and write it to ``path`` as a GIF (frames scaled by ``scale``); returns the frames written."""
    from PIL import Image

    frames = list(renders(preset, seed, manches, render_mode="rgb_array"))
    kept = frames[:-1:every] + frames[-1:]
    size = (round(kept[0].shape[1] * scale), round(kept[0].shape[0] * scale))
    images = [Image.fromarray(f).resize(size, Image.Resampling.LANCZOS) for f in kept]
    # One palette for all: the GIF writer then stores only what changed from the frame before.
    palette = Image.fromarray(np.concatenate([np.asarray(image) for image in images])).quantize(64)
    images = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    durations = [700] * (len(images) - 1) + [4000]  # ms; the result stays longer
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True)
    return len(images)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description="Play one game of Président with random players, rendered as text or a GIF.")
    parser.add_argument("--preset", default="standard", choices=PRESETS, help="rules preset (default: standard)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the players (default: 0)")
    parser.add_argument("--manches", type=int, default=None, help="manches in the game (default: the preset's)")
    parser.add_argument("--gif", type=Path, default=None, help="write the game as an animated GIF here instead")
    parser.add_argument("--every", type=int, default=3, help="with --gif: one frame every N moves (default: 3)")
    args = parser.parse_args(argv)
    if args.gif is None:
        play(args.preset, args.seed, manches=args.manches)
    else:
        count = write_gif(args.gif, args.preset, args.seed, args.manches, max(1, args.every))
        print(f"wrote {args.gif} ({count} frames, {args.gif.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
