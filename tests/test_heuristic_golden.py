"""The heuristics' choices are pinned: speed work on :mod:`president_env.agents.heuristic` must not change one.

``tests/data/heuristic_golden.json`` holds, per preset and table size (3 to 8 players, the preset's matches of
several manches, so exchanges and roles show), one SHA-256 per agent of every choice it made in seeded batched
games. It was recorded before the heuristic was made faster, on its NumPy form, which its compiled kernel, now the
only form, must match. At every step each pinned agent chooses for every
slot (leading, following, giving back in the exchange); the games go on with a mix of them and random play, so
the positions are varied. A single different choice fails here.

Regenerate (only for an intended change of play, said in the commit): ``python tests/test_heuristic_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from president_env import VecGame, agents, load_preset
from president_env.core.actions import KIND_GIVE, action_tables
from president_env.core.engine import sample_legal
from president_env.core.presets import PRESETS

GOLDEN_PATH = Path(__file__).parent / "data" / "heuristic_golden.json"
AGENTS = ("heuristic-1", "heuristic-2", "heuristic-3", "style-hoarder", "style-dumper", "style-patient")
PLAYERS = range(3, 9)
BATCH = 24


def choice_digests(preset: str, n_players: int) -> tuple[dict[str, str], int]:
    """``({agent: SHA-256 of its choices}, gives seen)`` over seeded games of ``preset`` at ``n_players``.

    Slot ``s`` is played by ``AGENTS[s % 7 - 1]``, or at random when ``s % 7 == 0``; every agent chooses for
    every slot at every step. ``gives seen``: exchange decisions among the positions (the test wants some).
    """
    rules = load_preset(preset).replace(n_players=n_players)
    game = VecGame(rules, batch_size=BATCH, seed=1000 + n_players)
    rng = np.random.default_rng(n_players)
    players = [agents.make(name, rules) for name in AGENTS]
    steps = 3 * sum(rules.copies)  # about two manches: the second opens with the exchange
    kind = action_tables(rules)[0]
    driver = np.arange(BATCH) % (len(AGENTS) + 1)
    digests = {name: hashlib.sha256() for name in AGENTS}
    gives = 0
    for _ in range(steps):
        obs, mask = game.observe(), game.legal_mask()
        actions = sample_legal(mask, rng)
        for k, (name, agent) in enumerate(zip(AGENTS, players, strict=True)):
            chosen = np.asarray(agent.act_batch(obs, mask), dtype=np.int64)
            digests[name].update(chosen.tobytes())
            actions = np.where(driver == k + 1, chosen, actions)
        gives += int((kind[actions] == KIND_GIVE).sum())
        game.step(actions)
    return {name: d.hexdigest() for name, d in digests.items()}, gives


def _golden() -> dict:
    return json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))


@pytest.mark.parametrize("n_players", PLAYERS)
@pytest.mark.parametrize("preset", PRESETS)
def test_heuristic_choices_are_the_recorded_ones(preset: str, n_players: int) -> None:
    digests, gives = choice_digests(preset, n_players)
    assert gives > 0, "the pinned games must reach an exchange"
    expected = _golden()[f"{preset}/{n_players}"]
    changed = [name for name in AGENTS if digests[name] != expected[name]]
    assert not changed, f"choices changed for {', '.join(changed)} on {preset} with {n_players} players"


def main() -> None:
    """Record the golden digests (an intended change of play only)."""
    golden = {f"{p}/{n}": choice_digests(p, n)[0] for p in PRESETS for n in PLAYERS}
    GOLDEN_PATH.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} entries to {GOLDEN_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
