"""The vector env's games are pinned: speed work on its opponents' loop or the engine's manche ends must not change
one observation, mask, reward or termination.

``tests/data/vector_env_golden.json`` holds, per preset and opponents, one SHA-256 of everything a seeded
``vector_env`` returned over ``STEPS`` steps of seeded random learner actions (observations, masks, rewards,
terminations, seats, scores, and with same-step autoreset the final observations). Random opponents run with
next-step autoreset, heuristic-3 with same-step autoreset; the games of two manches end and restart, so
exchanges, manche ends, game ends and new deals all show. It was recorded before the vector step was made faster,
on the NumPy engine and checked on the Numba kernels, now the only form. The random opponents' entries were recorded
again once, when those opponents moved into the compiled loop (``president_env.core.autoplay``): their draws now come
from a counter-based stream per game (the same on any number of threads) instead of one generator drawn row by row,
so their games changed; the heuristic-3 entries, whose choices do not draw, hold unchanged
(``tests/test_autoplay.py`` checks the new draws: uniform over the legal actions, the same on one thread and two).

Regenerate (only for an intended change of the games, said in the commit): ``python tests/test_vector_env_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import president_env as pe
from president_env import load_preset
from president_env.core.engine import sample_legal
from president_env.core.presets import PRESETS

GOLDEN_PATH = Path(__file__).parent / "data" / "vector_env_golden.json"
OPPONENTS = {"random": "next_step", "heuristic-3": "same_step"}  # opponents: the autoreset mode they run with
NUM_ENVS = 32
STEPS = 100
MANCHES = 2  # short games: several end and restart within the pinned steps


def trajectory_digest(preset: str, opponents: str) -> tuple[str, int]:
    """``(SHA-256 of every step's returns, games ended)`` of a seeded vector env of ``preset`` against ``opponents``."""
    rules = load_preset(preset).replace(manches=MANCHES)
    venv = pe.vector_env(NUM_ENVS, rules=rules, opponents=opponents, autoreset_mode=OPPONENTS[opponents])
    rng = np.random.default_rng(7)
    digest = hashlib.sha256()
    obs, info = venv.reset(seed=11)
    ended = 0
    for _ in range(STEPS):
        for value in (obs, info["action_mask"], info["player"], info["scores"]):
            digest.update(np.ascontiguousarray(value).tobytes())
        for final in info.get("final_obs", ()):
            if final is not None:
                digest.update(final.tobytes())
        mask = info["action_mask"].astype(bool)
        mask[~mask.any(axis=1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        obs, reward, terminated, _, info = venv.step(sample_legal(mask, rng))
        digest.update(reward.tobytes())
        digest.update(terminated.tobytes())
        ended += int(terminated.sum())
    venv.close()
    return digest.hexdigest(), ended


@pytest.mark.parametrize("opponents", OPPONENTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_vector_env_games_are_the_recorded_ones(preset: str, opponents: str) -> None:
    digest, ended = trajectory_digest(preset, opponents)
    assert ended > 0, "the pinned steps must end some games"
    expected = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))[f"{preset}/{opponents}"]
    assert digest == expected, f"the vector env's games changed on {preset} against {opponents}"


def main() -> None:
    """Record the golden digests (an intended change of the games only)."""
    golden = {f"{p}/{o}": trajectory_digest(p, o)[0] for p in PRESETS for o in OPPONENTS}
    GOLDEN_PATH.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} entries to {GOLDEN_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
