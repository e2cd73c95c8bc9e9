"""How many CPUs each Ray actor reserves so that a group always fits its cluster (no Ray needed)."""

import pytest

from president_env.evaluation.distributed import actor_cpus


@pytest.mark.parametrize(
    ("members", "requested", "nodes", "share"),
    [
        (2, 1.0, [2.0], 1.0),  # they fit as asked
        (8, 1.0, [2.0], 0.25),  # the README's Ray line on a 2-CPU machine
        (3, 1.0, [2.0], 0.6666),  # rounded down to Ray's 1e-4 precision, so that the three fit
        (10, 1.0, [3.0, 3.0, 3.0], 0.75),  # an actor lives on one node: 0.9 would place only 9
        (4, 2.0, [3.0, 3.0], 1),  # above 1 Ray takes whole CPUs only
        (4, 0.5, [2.0], 0.5),
    ],
)
def test_actor_cpus_is_the_largest_share_that_places_every_actor(members, requested, nodes, share):
    got = actor_cpus(members, requested, nodes)
    assert got == share
    assert sum(int(cpus / got + 1e-9) for cpus in nodes) >= members


def test_a_cluster_without_cpus_is_refused():
    with pytest.raises(ValueError, match="no CPU to place 2 actors"):
        actor_cpus(2, 1.0, [0.0])
