"""Duplicate-deal tournaments between agents: :func:`evaluate` and :func:`evaluate_against`.

    from president_env.evaluation.tournament import evaluate
    result = evaluate(["heuristic-3", "heuristic-2"], rules="standard", n_deals=200, workers=2)
    print(result.to_markdown())
    result.to_json("results.json"); result.plot("results.png")

A tournament plays ``n_deals`` deal groups, each in every seat rotation, to the end of their games (whole
matches: every manche of a group is dealt the same cards in every rotation, the decisive one too; see
:mod:`~president_env.evaluation.play`), and pools the results by agent name
(:mod:`~president_env.evaluation.report`, with the intervals of :mod:`~president_env.evaluation.statistics`).
The command line is ``president-eval`` (:mod:`~president_env.evaluation.cli`).

**Reproducibility.** The result depends on (lineup, rules, n_deals, seed, chunk_deals, agent_seed) only:
chunk ``i`` draws its deals, its game generator and its agents' seeds from child ``i`` of
``SeedSequence(seed)``, whichever process plays it (:mod:`~president_env.evaluation.backends`), so
``workers`` and Ray change the speed and nothing else; the first ``k`` chunks of a longer tournament are
those of a shorter one with the same seed and ``chunk_deals``. So a long tournament can be stopped and continued
(``resume_dir``, :mod:`~president_env.evaluation.resume`): the chunks a run finished are kept and not played again,
and the result is the uninterrupted run's.
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from president_env.core.presets import resolve_rules
from president_env.core.rules import Rules
from president_env.core.user_input import short_repr

from .backends import run_tasks
from .play import ChunkTask, MancheRecords, agent_name, distinct_agents, seat_lineup, versus_lineup
from .report import TournamentResult, summarize
from .resume import ChunkStore, identity

DEFAULT_DEALS = 200
DEFAULT_CHUNK_DEALS = 50
MAX_DEALS = 10_000_000
"""Most deal groups one tournament plays (days of play on one machine; its task list must fit in memory)."""


def evaluate(
    lineup: Sequence[Any],
    rules: Rules | str | os.PathLike | None = None,
    n_deals: int = DEFAULT_DEALS,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    agent_seed: int | None = None,
    ray_address: str | None = None,
    resume_dir: str | os.PathLike | None = None,
) -> TournamentResult:
    """A duplicate-deal tournament: each of ``n_deals`` deal groups played in all ``P`` seat rotations.

    Args:
        lineup: agent names (for :func:`president_env.agents.make`) or agent objects (with ``act_batch`` or
            ``act``), one per player. A shorter list is repeated around the table, by rule and without a warning
            (player ``i`` gets entry ``i % len(lineup)``): ``[me, "heuristic-3"]`` at 4 players is ``me, h3, me,
            h3``, two seats each, and copies of one name or object are one agent that pools its results. For
            one agent against a table of copies of another, use :func:`evaluate_against` (or give the whole
            lineup, ``[me, *["heuristic-3"] * 3]``). The result's ``config["lineup"]`` lists the seats in full.
        rules: any rules spec of :func:`president_env.core.presets.resolve_rules` (default: the standard game).
        n_deals: deal groups; the tournament plays ``n_deals * P`` games.
        seed: root seed of the deals, the game generators and (unless ``agent_seed``) the agents.
        workers: processes playing chunks in parallel; does not change the result. Agent objects must be
            picklable when ``workers > 1`` (names are made anew in each worker).
        progress: show a tqdm progress bar over deals.
        chunk_deals: deal groups per chunk (one ``VecGame`` of ``chunk_deals * P`` slots); part of the seeding.
        agent_seed: root seed of the agents' generators, to vary deals and agent randomness separately.
            Agent objects with a ``reset(seed)`` method are reseeded at every chunk.
        ray_address: play the chunks as Ray tasks instead (``"local"``, ``"auto"``, ``"ray://host:10001"``;
            see :mod:`president_env.evaluation.distributed`); ``workers`` is then unused. Does not change
            the result either.
        resume_dir: a folder that keeps every finished chunk (:class:`~president_env.evaluation.resume.ChunkStore`);
            the chunks it already holds for this tournament are loaded, not played. ``ValueError`` when it holds
            another tournament's chunks.
    Returns:
        A :class:`TournamentResult`.
    """
    rules = resolve_rules(rules)
    entries = seat_lineup(lineup, rules.n_players)
    check_counts(n_deals=n_deals, chunk_deals=chunk_deals, workers=workers)
    check_seeds(seed=seed, agent_seed=agent_seed)
    specs, entry_agent = distinct_agents(entries)
    if workers > 1 or ray_address is not None:
        for spec in specs:
            if not isinstance(spec, (str, os.PathLike)):
                try:
                    pickle.dumps(spec)
                except Exception as err:
                    raise ValueError(
                        f"agent object {agent_name(spec)!r} cannot be pickled ({err}); play it in this process "
                        "(workers=1, no Ray) or pass its name"
                    ) from None

    starts = list(range(0, n_deals, chunk_deals))
    tasks = [
        ChunkTask(rules, specs, entry_agent, start, min(chunk_deals, n_deals - start), play_seed, agent_seeds)
        for start, (play_seed, agent_seeds) in zip(starts, _chunk_seeds(seed, agent_seed, len(starts), len(specs)))
    ]
    store = None if resume_dir is None else open_store(resume_dir, entries, rules, seed, chunk_deals, agent_seed)
    parts = run_tasks(tasks, workers, progress, n_deals, ray_address, store)
    config = {
        "lineup": [agent_name(spec) for spec in entries],
        "rules": rules.to_dict(),
        "n_deals": int(n_deals),
        "seed": seed,
        "chunk_deals": int(chunk_deals),
        "agent_seed": agent_seed,
    }  # neither workers nor ray_address: they change the speed, not the result
    return summarize(config, config["lineup"], MancheRecords.concatenate(parts))


def open_store(
    folder: str | os.PathLike, lineup: Sequence[Any], rules: Rules, seed: int, chunk_deals: int, agent_seed: int | None
) -> ChunkStore:
    """The :class:`~president_env.evaluation.resume.ChunkStore` of the tournament of ``lineup`` (one entry per
    player) in ``folder``; ``ValueError`` when the folder holds another tournament's chunks or cannot be written."""
    return ChunkStore(folder, identity(list(lineup), rules, seed, chunk_deals, agent_seed))


def against_folder(resume_dir: str | os.PathLike, opponent: Any) -> Path:
    """The resume folder of the tournament against ``opponent`` in :func:`evaluate_against`: ``resume_dir/<name>``
    (characters other than letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``)."""
    return Path(resume_dir) / re.sub(r"[^A-Za-z0-9._-]", "_", agent_name(opponent))


def check_counts(**counts: Any) -> None:
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {short_repr(value)}")
        if name in ("n_deals", "deals") and value > MAX_DEALS:
            raise ValueError(f"{name} must be at most {MAX_DEALS:,}, got {short_repr(value)}")


def check_seeds(**seeds: Any) -> None:
    for name, value in seeds.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer or None, got {short_repr(value)}")


def _chunk_seeds(
    seed: int | None, agent_seed: int | None, n_chunks: int, n_agents: int
) -> list[tuple[np.random.SeedSequence, list[np.random.SeedSequence]]]:
    """Per chunk: the seed of its deals and game generator, and one seed per distinct agent.

    Chunk i uses child i of ``SeedSequence(seed)`` (split into play and agents), or for the agents child i of
    ``SeedSequence(agent_seed)`` when given: a chunk's seeds never depend on who plays it.
    """
    chunks = np.random.SeedSequence(seed).spawn(n_chunks)
    agent_roots = None if agent_seed is None else np.random.SeedSequence(agent_seed).spawn(n_chunks)
    out = []
    for i, chunk in enumerate(chunks):
        play, agents = chunk.spawn(2)
        if agent_roots is not None:
            agents = agent_roots[i]
        out.append((play, agents.spawn(n_agents)))
    return out


def evaluate_against(
    agent: Any, opponents: Sequence[Any], rules: Rules | str | os.PathLike | None = None, **kwargs: Any
) -> dict[str, TournamentResult]:
    """One ``agent`` against ``n_players - 1`` copies of each opponent: one tournament per opponent.

    Every tournament uses the same deals (same ``seed``); ``kwargs`` are :func:`evaluate`'s, and a ``resume_dir``
    keeps each opponent's chunks in its own folder (:func:`against_folder`). Returns ``{opponent name:
    TournamentResult}``; the agent is the first entry of each result's ``agents``.
    """
    rules = resolve_rules(rules)
    resume_dir = kwargs.pop("resume_dir", None)
    return {
        agent_name(opponent): evaluate(
            versus_lineup(agent, opponent, rules.n_players),
            rules,
            resume_dir=None if resume_dir is None else against_folder(resume_dir, opponent),
            **kwargs,
        )
        for opponent in opponents
    }


__all__ = [
    "DEFAULT_CHUNK_DEALS",
    "DEFAULT_DEALS",
    "MAX_DEALS",
    "against_folder",
    "check_counts",
    "check_seeds",
    "evaluate",
    "evaluate_against",
    "open_store",
]
