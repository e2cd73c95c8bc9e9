"""Sample games of a lineup saved as replays (``president-eval --save-replays N``).

The tournament itself plays thousands of games at once on the batched engine; the replays are
``n`` further games of the same lineup (seated as in the tournament's first rotation), played one
at a time on :class:`~president_env.game.single.SingleGame` (the one-game holder) with agents made from ``seed``, so
that they can be watched move by move in ``president-web``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from president_env import agents as agent_registry
from president_env.core.rules import Rules
from president_env.game.replay import Replay
from president_env.game.single import SingleGame


def record_games(lineup: Sequence[str], rules: Rules, n_games: int, seed: int = 0, source: str = "") -> list[Replay]:
    """``n_games`` games of ``lineup`` (one agent name per player), each a checked :class:`Replay`."""
    if len(lineup) != rules.n_players:
        raise ValueError(f"lineup must name {rules.n_players} agents (one per player), got {len(lineup)}")
    replays = []
    for game_seed in np.random.SeedSequence(seed).spawn(n_games):
        deal_seed, agent_seed = game_seed.spawn(2)
        agents = [
            agent_registry.make(name, rules, seed=child)
            for name, child in zip(lineup, agent_seed.spawn(rules.n_players))
        ]
        game = SingleGame.table(rules, seed=int(deal_seed.generate_state(1)[0]), players=list(lineup), source=source)
        while not game.done:
            player = game.current_player
            game.step(int(agents[player].act(game.observe_player(player), {})))
        replays.append(Replay.of(game))
    return replays


def save_games(
    lineup: Sequence[str], rules: Rules, n_games: int, folder: str | os.PathLike, seed: int = 0, source: str = ""
) -> list[Path]:
    """Record ``n_games`` games (:func:`record_games`) into ``folder/game-001.json`` …; returns the paths."""
    replays = record_games(lineup, rules, n_games, seed, source)
    return [replay.save(Path(folder) / f"game-{i:03d}.json") for i, replay in enumerate(replays, start=1)]
