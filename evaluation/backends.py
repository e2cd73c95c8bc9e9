"""Where a tournament's chunks are played: in this process, in a pool of processes, or as Ray tasks.

Each chunk carries its own seeds (:class:`~president_env.evaluation.play.ChunkTask`), so the backend changes
the speed and nothing else. Ray is reached through :mod:`~president_env.evaluation.distributed`. The workers of a
pool end within a second of their parent, even one killed outright (:func:`die_with_parent`).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
import time
from typing import Any

from .play import ChunkTask, MancheRecords, play_chunk
from .resume import ChunkStore


def run_tasks(
    tasks: list[ChunkTask],
    workers: int,
    progress: bool,
    n_deals: int,
    ray_address: str | None = None,
    store: ChunkStore | None = None,
) -> list[MancheRecords]:
    """Play the chunks (in this process, in a pool or on Ray) and return their records in chunk order.

    With a ``store``, the chunks it holds are loaded instead of played, and each chunk played is saved to it as soon
    as it is finished.
    """
    done: dict[int, MancheRecords] = {}
    if store is not None:
        for i, task in enumerate(tasks):
            records = store.load(i, task.first_group, task.n_groups)
            if records is not None:
                done[i] = records
    todo = [i for i in range(len(tasks)) if i not in done]

    def finished(i: int, records: MancheRecords) -> None:
        done[i] = records
        if store is not None:
            store.save(i, tasks[i].first_group, tasks[i].n_groups, records)

    bar = progress_bar(n_deals, progress)
    bar.update(sum(tasks[i].n_groups for i in done))
    try:
        _play(tasks, todo, workers, ray_address, bar, finished)
    finally:
        bar.close()
    return [done[i] for i in range(len(tasks))]


def _play(tasks: list[ChunkTask], todo: list[int], workers: int, ray_address: str | None, bar: Any, finished) -> None:
    """Play the chunks ``todo`` (indices into ``tasks``), calling ``finished(i, records)`` as each one ends."""
    if not todo:
        return
    if ray_address is not None:
        from .distributed import init_ray, map_ordered

        init_ray(ray_address)

        def on_result(k: int, records: MancheRecords) -> None:
            finished(todo[k], records)
            bar.update(tasks[todo[k]].n_groups)

        map_ordered(play_chunk, [tasks[i] for i in todo], on_result=on_result)
        return
    if workers == 1 or len(todo) == 1:
        for i in todo:
            finished(i, play_chunk(tasks[i], report=bar.update))
        return
    # Spawned, not forked: a child forked after the parent ran torch (a checkpoint agent is loaded to check it
    # before playing) deadlocks in torch's thread pool at its first parallel operation.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, len(todo)), mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
    ) as pool:
        futures = {pool.submit(play_chunk, tasks[i]): i for i in todo}
        for future in concurrent.futures.as_completed(futures):
            i = futures[future]
            finished(i, future.result())
            bar.update(tasks[i].n_groups)


PARENT_CHECK_S = 0.5
"""How often a worker checks that the process that started it is alive."""


def die_with_parent(parent: int) -> None:
    """Make this worker process end when ``parent`` does (a pool's initializer).

    A parent killed outright (SIGKILL, the OOM killer) cannot shut its pool down, and its workers would play on
    for minutes. A daemon thread sees the worker reparented (its parent id changes) and ends the process at once.
    """
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar over deals; ``disable`` makes it a no-op (tqdm comes with the ``eval`` extra)."""
    try:
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("tournaments need tqdm: pip install 'president-env[eval]'") from err
    return tqdm(total=total, unit="deal", desc="tournament", disable=not enabled)


__all__ = ["progress_bar", "run_tasks"]
