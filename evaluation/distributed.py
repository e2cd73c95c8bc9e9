"""Ray, to spread work over a cluster: the chunks of a tournament and the trainer's rollout shards.

    president-eval --agents heuristic-3,heuristic-2 --deals 2000 --ray auto
    president-train --config configs/train/quick.yaml --set rollout.shards=8 --ray auto

Nothing here changes a result. A tournament is cut into chunks and a training rollout into shards,
each with seeds of its own (:func:`president_env.evaluation.tournament.evaluate`,
:class:`president_env.training.rollout.RolloutShard`); where they run, in this process or on a
Ray worker, changes the speed only, so the same seeds give the same numbers on one machine or a
cluster (tested on a local two-CPU Ray instance).

``address`` is Ray's: ``"local"`` starts a Ray instance on this machine (``num_cpus`` caps it),
``"auto"`` joins the cluster this machine belongs to (``ray start --head`` ran here), and
``"ray://host:10001"`` connects a client to a remote head. Members that the cluster's CPUs cannot hold at the CPUs
asked share actors (:class:`RayGroup`: 8 rollout shards on 2 CPUs live in 2 actors, 4 each) rather than wait for CPUs
that never free up. Every node needs this package installed
(``pip install "president-env[ray]"``), at the same version, and the same Python.

Ray is an optional extra: it is imported only when one of these functions is called.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any


def require_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError('Ray is not installed: pip install "president-env[ray]" (or pip install ray)') from None
    return ray


def init_ray(address: str | None = "local", num_cpus: int | None = None) -> Any:
    """Connect to Ray (once per process; an existing connection is reused) and return the ``ray`` module."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    if address in (None, "", "local"):
        ray.init(num_cpus=num_cpus, include_dashboard=False)
    else:
        if num_cpus is not None:
            raise ValueError("num_cpus applies to a local Ray instance only (address 'local')")
        ray.init(address=address)
    return ray


def map_ordered(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    on_result: Callable[[int, Any], Any] | None = None,
    num_cpus: float = 1,
) -> list[Any]:
    """``[fn(item) for item in items]`` as Ray tasks; ``on_result(i, result)`` is called as task ``i`` finishes.

    Results come back in the order of ``items`` whatever order the tasks finish in. An exception in a
    task is raised here (wrapped by Ray, which keeps the original type as a base class).
    """
    ray = require_ray()
    remote = ray.remote(num_cpus=num_cpus)(fn)
    refs = [remote.remote(item) for item in items]
    position = {ref: i for i, ref in enumerate(refs)}
    results: list[Any] = [None] * len(refs)
    waiting = list(refs)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        for ref in done:
            i = position[ref]
            results[i] = ray.get(ref)
            if on_result is not None:
                on_result(i, results[i])
    return results


class LocalGroup:
    """Members that live in this process; the same interface as :class:`RayGroup`."""

    local = True

    def __init__(self, members: Sequence[Any]) -> None:
        self.members = list(members)

    def call(self, method: str, *args: Any) -> list[Any]:
        """``method(*args)`` on every member, in order; their results."""
        return [getattr(member, method)(*args) for member in self.members]

    def call_each(self, method: str, args: Sequence[Any]) -> list[Any]:
        """``method(args[i])`` on member ``i``."""
        return [getattr(member, method)(arg) for member, arg in zip(self.members, args)]

    def close(self) -> None:
        pass


def actor_cpus(members: int, requested: float, node_cpus: Sequence[float]) -> float:
    """The CPUs each of ``members`` actors reserves so that all of them fit on nodes of ``node_cpus`` CPUs.

    ``requested`` when they fit; otherwise the largest share below it with which they do (an actor lives on one
    node, so each node holds ``floor(its CPUs / share)`` of them), as Ray accepts it: a whole number from 1 up, or
    a fraction below 1 rounded down to 1e-4. ``ValueError`` when the nodes have no CPU at all.

        actor_cpus(8, 1.0, [2.0])   # 0.25: eight actors share two CPUs
        actor_cpus(2, 1.0, [2.0])   # 1.0: they fit as asked
    """
    if not sum(node_cpus) > 0:
        raise ValueError(f"the Ray cluster has no CPU to place {members} actors on")

    def fits(share: float) -> bool:
        return _actors_held(share, node_cpus) >= members

    if fits(requested):
        return requested
    shares = {cpus / k for cpus in node_cpus for k in range(1, members + 1)}
    shares = {int(share) if share >= 1 else int(share * 1e4) / 1e4 for share in shares}
    return max(share for share in shares if 0 < share < requested and fits(share))


def _actors_held(share: float, node_cpus: Sequence[float]) -> int:
    """How many actors of ``share`` CPUs the nodes hold (an actor lives on one node)."""
    return sum(int(cpus / share + 1e-9) for cpus in node_cpus)


class _Host(LocalGroup):
    """Members of a :class:`RayGroup` that share one Ray actor: built there, on its worker, and called in order."""

    def __init__(self, cls: type, init_args: Sequence[Sequence[Any]]) -> None:
        super().__init__([cls(*args) for args in init_args])


class RayGroup:
    """The members ``cls(*init_args[i])`` on Ray workers: one actor per member (``num_cpus`` reserved each) where the
    cluster's CPUs hold them all, else as many actors as fit, each holding a contiguous run of members that it
    builds and calls in order (a line on stderr says so).

    An actor holds its CPUs for its lifetime, so more actors than the CPUs hold would wait forever; sharing the CPUs
    among them instead costs a process start each (a Python with torch and the kernels: seconds of CPU), which the
    members sharing an actor pay once. The results are the same either way.
    """

    local = False

    def __init__(self, cls: type, init_args: Sequence[Sequence[Any]], num_cpus: float = 1) -> None:
        self.ray = require_ray()
        node_cpus = [node["Resources"].get("CPU", 0.0) for node in self.ray.nodes() if node.get("Alive")]
        n = len(init_args)
        hosts = min(n, max(_actors_held(num_cpus, node_cpus), 1))
        share = actor_cpus(hosts, num_cpus, node_cpus)
        if hosts < n or share != num_cpus:
            print(
                f"ray: {n} members of {num_cpus:g} CPU do not fit the cluster's {sum(node_cpus):g} CPUs; "
                f"{hosts} actors of {share:g} CPU hold them, {n // hosts} or {-(-n // hosts)} each",
                file=sys.stderr,
            )
        bounds = [n * j // hosts for j in range(hosts + 1)]
        self._runs = list(zip(bounds, bounds[1:]))  # each actor's members: init_args[a:b]
        actor = self.ray.remote(num_cpus=share)(_Host)
        self.actors = [actor.remote(cls, list(init_args[a:b])) for a, b in self._runs]

    def call(self, method: str, *args: Any) -> list[Any]:
        """``method(*args)`` on every member; their results, in member order."""
        # Each argument goes into the object store once, however many actors read it (the weights).
        refs = [self.ray.put(arg) for arg in args]
        return _flat(self.ray.get([actor.call.remote(method, *refs) for actor in self.actors]))

    def call_each(self, method: str, args: Sequence[Any]) -> list[Any]:
        """``method(args[i])`` on member ``i``."""
        pieces = [list(args[a:b]) for a, b in self._runs]
        return _flat(self.ray.get([actor.call_each.remote(method, piece) for actor, piece in zip(self.actors, pieces)]))

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


def _flat(lists: Sequence[Sequence[Any]]) -> list[Any]:
    return [item for items in lists for item in items]
