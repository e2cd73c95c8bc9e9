"""Ray as a backend changes the speed, never the result: tournaments and training rollouts on a local Ray instance.

One local Ray instance with 2 CPUs serves the module. Each test runs the same seeds once in this process
and once on Ray and compares the outcomes exactly.
"""

import json

import numpy as np
import pytest

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from president_env.evaluation import cli, tournament  # noqa: E402
from president_env.evaluation.distributed import LocalGroup, RayGroup, init_ray, map_ordered  # noqa: E402
from president_env.training.config import load_config  # noqa: E402
from president_env.training.ppo_selfplay import Trainer  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # marked ray: one Ray at a time under xdist (tests/conftest.py)

TINY = [
    "ppo.num_envs=64",
    "ppo.num_steps=8",
    "ppo.num_minibatches=2",
    "network.hidden=[32]",
    "budget.total_steps=100000",
    "budget.eval_every=0",
    "budget.checkpoint_every=0",
    "opponents.snapshot_every=1",
    "opponents.pool_size=2",
    "opponents.self_play=0.4",
    "opponents.snapshots=0.3",
    "opponents.baselines={heuristic-3: 0.2, random: 0.1}",
    "rollout.shards=2",
    "threads=1",  # the same torch thread count in the driver and the actors: sums in the same order
]


def test_map_ordered_returns_results_in_item_order_and_reports_each(local_ray):
    seen = []
    square = lambda x: x * x  # noqa: E731 -- pickled by value: Ray workers cannot import this test module
    assert map_ordered(square, [3, 1, 2, 5], on_result=lambda i, result: seen.append((i, result))) == [9, 1, 4, 25]
    assert sorted(seen) == [(0, 9), (1, 1), (2, 4), (3, 25)]
    assert init_ray("local") is local_ray  # an existing connection is reused


def test_a_tournament_on_ray_equals_the_same_tournament_in_process(local_ray, tmp_path):
    lineup = ["heuristic-3", "heuristic-2", "random", "heuristic-2"]
    options = dict(rules="standard", n_deals=12, seed=7, chunk_deals=4, progress=False)
    here = tournament.evaluate(lineup, **options)
    there = tournament.evaluate(lineup, ray_address="local", resume_dir=tmp_path / "chunks", **options)
    assert here.to_dict() == there.to_dict()
    assert here.config == there.config  # the backend is not part of the result
    # Ray's finished chunks are kept as they come back, and a resumed run in this process loads them all.
    assert len(list((tmp_path / "chunks").glob("chunk-*.npz"))) == 3
    assert tournament.evaluate(lineup, resume_dir=tmp_path / "chunks", **options).to_dict() == here.to_dict()


def test_president_eval_ray_flag_writes_the_same_results(local_ray, tmp_path, capsys):
    args = ["--agents", "heuristic-2,random", "--deals", "6", "--chunk-deals", "2", "--seed", "3", "--no-progress"]
    assert cli.main([*args, "--out", str(tmp_path / "here")]) == 0
    assert cli.main([*args, "--ray", "local", "--out", str(tmp_path / "ray")]) == 0
    here = json.loads((tmp_path / "here" / "results.json").read_text())
    there = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert here == there
    capsys.readouterr()


def _trainer(tmp_path, *extra):
    return Trainer(load_config(None, TINY + [f"out_dir={tmp_path}", *extra]), progress=False)


def test_training_with_shards_on_ray_is_the_same_run_as_in_process(local_ray, tmp_path):
    here = _trainer(tmp_path / "here")
    there = _trainer(tmp_path / "ray", "rollout.ray_address=local")
    assert isinstance(here.shards, LocalGroup) and isinstance(there.shards, RayGroup)
    try:
        for _ in range(3):  # snapshots join after every update: the actors' pools must follow
            stats_here, stats_there = here.train_step(), there.train_step()
            for key in ("rollout/trained_decisions", "rollout/carried_decisions", "losses/policy_loss"):
                assert stats_here[key] == stats_there[key], key
        for a, b in zip(here.net.state_dict().values(), there.net.state_dict().values()):
            assert torch.equal(a, b)
        states_here, states_there = here.shards.call("state_dict"), there.shards.call("state_dict")
        for a, b in zip(states_here, states_there):
            assert torch.equal(a["game"]["hands"], b["game"]["hands"])
            assert torch.equal(a["pending"]["obs"], b["pending"]["obs"])
            assert torch.equal(a["pool"]["owner"], b["pool"]["owner"])
    finally:
        there.close()


def test_a_ray_run_resumes_in_process_exactly(local_ray, tmp_path):
    """The checkpoint of a run on Ray continues in this process (and vice versa): where shards run is not the run."""
    there = _trainer(tmp_path / "ray", "rollout.ray_address=local")
    try:
        there.train_step()
        path = there.save(tmp_path / "checkpoint.pt")
        there.train_step()
    finally:
        there.close()
    resumed = Trainer.resume(path, progress=False, overrides=["rollout.ray_address=null"])
    assert isinstance(resumed.shards, LocalGroup)
    resumed.train_step()
    for a, b in zip(there.net.state_dict().values(), resumed.net.state_dict().values()):
        assert torch.equal(a, b)


def test_shards_split_the_games_and_have_their_own_streams(tmp_path):
    trainer = _trainer(tmp_path)
    first, second = trainer.shards.members
    assert first.game.batch_size == second.game.batch_size == 32
    assert not np.array_equal(first.game.state.hands, second.game.state.hands)
    batch, stats = trainer.rollout()
    assert len(batch["action"]) == stats["rollout/trained_decisions"]


def test_president_train_ray_flag_runs_the_shards_as_actors(local_ray, tmp_path, capsys):
    from president_env.training.cli import main

    overrides = [item for pair in (("--set", o) for o in TINY + ["budget.total_steps=1024"]) for item in pair]
    assert main([*overrides, "--ray", "local", "--no-progress", "--out-dir", str(tmp_path)]) == 0
    assert (tmp_path / "policy.pt").is_file()
    assert "rollout:\n  shards: 2\n  ray_address: local" in (tmp_path / "config.yaml").read_text()
    capsys.readouterr()


def test_more_shards_than_cpus_share_actors_and_make_the_same_run(local_ray, tmp_path, capsys):
    """Four shards of one CPU on a two-CPU instance live two by two in two actors instead of waiting forever for
    CPUs (the README's ``--set rollout.shards=8 --ray local`` once hung silently; that line runs in
    tests/test_readme_commands.py), and the run is the in-process one."""
    here = _trainer(tmp_path / "here", "rollout.shards=4")
    there = _trainer(tmp_path / "ray", "rollout.shards=4", "rollout.ray_address=local")
    try:
        err = capsys.readouterr().err
        assert "4 members of 1 CPU do not fit the cluster's 2 CPUs; 2 actors of 1 CPU hold them, 2 or 2 each" in err
        assert len(there.shards.actors) == 2
        stats_here, stats_there = here.train_step(), there.train_step()
        assert stats_here["losses/policy_loss"] == stats_there["losses/policy_loss"]
    finally:
        there.close()
