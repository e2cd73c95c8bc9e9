"""Where a tournament's chunks are played: in this process, in a pool of processes, or as Ray tasks.

Each chunk carries its own seeds (:class:`~president_env.evaluation.play.ChunkTask`), so the backend changes
the speed and nothing else. Ray is reached through :mod:`~president_env.evaluation.distributed`.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from typing import Any

from .play import ChunkTask, MancheRecords, play_chunk


def run_tasks(
    tasks: list[ChunkTask], workers: int, progress: bool, n_deals: int, ray_address: str | None = None
) -> list[MancheRecords]:
    """Play the chunks (in this process, in a pool or on Ray) and return their records in chunk order."""
    if ray_address is not None:
        from .distributed import init_ray, map_ordered

        init_ray(ray_address)
    bar = progress_bar(n_deals, progress)
    try:
        if ray_address is not None:
            return map_ordered(play_chunk, tasks, on_result=lambda i: bar.update(tasks[i].n_groups))
        if workers == 1 or len(tasks) == 1:
            return [play_chunk(task, report=bar.update) for task in tasks]
        results: dict[int, MancheRecords] = {}
        # Spawned, not forked: a child forked after the parent ran torch (a checkpoint agent is loaded to check it
        # before playing) deadlocks in torch's thread pool at its first parallel operation.
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context) as pool:
            futures = {pool.submit(play_chunk, task): i for i, task in enumerate(tasks)}
            for future in concurrent.futures.as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                bar.update(tasks[i].n_groups)
        return [results[i] for i in range(len(tasks))]
    finally:
        bar.close()


def progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar over deals; ``disable`` makes it a no-op (tqdm comes with the ``eval`` extra)."""
    try:
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("tournaments need tqdm: pip install 'president-env[eval]'") from err
    return tqdm(total=total, unit="deal", desc="tournament", disable=not enabled)


__all__ = ["progress_bar", "run_tasks"]
