"""League training with exploiters: a generation trains an exploiter of the main and seats it in the main's pool,
the league resumes mid-phase and never redoes a finished phase, a changed config or a held-out seed is refused,
and the command line's refusals are one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")

from president_env.agents.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from president_env.agents.styles import HELD_OUT_STYLES  # noqa: E402
from president_env.agents.universal import UniversalAgent, UniversalNet  # noqa: E402
from president_env.core.presets import resolve_rules  # noqa: E402
from president_env.training import league  # noqa: E402
from president_env.training.curves import read_metrics  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY_RUN = ["ppo.num_envs=4", "ppo.num_steps=8", "ppo.num_minibatches=2", "threads=1"]
TINY_RUN += ["budget.eval_every=1", "budget.eval_deals=1", "budget.checkpoint_every=1"]
STEPS = 64  # two updates of 4 games x 8 steps at one table, each phase


def tiny_league(tmp_path, **changes) -> str:
    """A league config in ``tmp_path``: a 16-unit universal main at the 3-player standard table, single manches,
    two updates a phase; ``changes`` replace top-level sections' keys."""
    net = UniversalNet([16], "relu", "perfect")
    start = tmp_path / "start.pt"
    if not start.exists():
        rules = resolve_rules("standard")
        save_checkpoint(start, {"rules": rules.to_dict(), "network": net.spec(), "model": net.state_dict()})
    data = {
        "seed": 7,
        "generations": 1,
        "main": {
            "recipe": "universal",
            "steps": STEPS,
            "set": [
                "tables=[{rules: standard, n_players: 3}]",
                "manches=1",
                "eval_tables=[0]",
                "network.hidden=[16]",
                f"init.weights={start}",
                *TINY_RUN,
                "opponents={self_play: 0.5, snapshots: 0.2, baselines: {random: 0.3}, snapshot_every: 1, pool_size: 2}",
            ],  # fmt: skip
        },
        "exploiters": {
            "tables": [{"rules": "standard", "n_players": 3}],
            "steps": STEPS,
            "share": 0.5,
            "set": [*TINY_RUN, "init.critic_warmup=0"],
        },
    }
    for section, value in changes.items():
        data[section] = {**data[section], **value} if isinstance(value, dict) else value
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def updates(run_dir) -> list[int]:
    return [record["update"] for record in read_metrics(run_dir)]


def test_a_generation_seats_its_exploiter_and_the_league_resumes_mid_phase_without_redoing_a_phase(
    tmp_path, monkeypatch
):
    config, out = tiny_league(tmp_path), tmp_path / "out"
    # an invocation whose time is spent after one update: the exploiter stops mid-phase, checkpointed
    with monkeypatch.context() as patch:
        patch.setattr(league.League, "minutes_left", lambda self: 1e-4)
        state = league.run_league(config, out, progress=False)
    assert state["generation"] == 1 and state["phase"] == "exploiter" and state["history"] == []
    exploiter_run = out / "exploiters" / "gen-1" / "run"
    assert updates(exploiter_run) == [1]

    state = league.run_league(config, out, progress=False)  # the same command: it goes on from update 1
    assert updates(exploiter_run) == [1, 2]
    assert state["generation"] == 2 and state["phase"] == "exploiter" and state["ended"].startswith("1 generations")
    (record,) = state["history"]
    assert record["exploiter"]["env_steps"] == STEPS and record["exploiter"]["target"] == "snapshots/main-0.pt"
    assert "advantage" in record["exploiter"] and "advantage" in record["main"]
    assert record["main"]["exploiter_shares"] == {"exploiter-1": 0.5}
    assert [json.loads(line) for line in (out / "league.jsonl").read_text().splitlines()] == [record]
    assert json.loads((out / "league.json").read_text())["generation"] == 2
    for name in ("main-0", "exploiter-1", "main-1"):
        assert (out / "snapshots" / f"{name}.pt").is_file()

    # the exploiter is one of the main's opponents, and its pool seats it
    exploiter = str(out.resolve() / "snapshots" / "exploiter-1.pt")
    held = load_checkpoint(out / "main" / "checkpoint.pt")
    assert held["config"]["opponents"]["baselines"] == {"random": 0.15, exploiter: 0.5}
    assert held["progress"]["global_step"] == STEPS
    main = league.MainTrainer.resume(out / "main" / "checkpoint.pt", progress=False)
    try:
        pool = main.groups.members[0].tables[0].pool
        assert pool.baseline_names == ["random", exploiter]
        assert isinstance(pool.baselines[1], UniversalAgent)
        exploiter_id = 1 + pool.baseline_names.index(exploiter)
        seated = 0
        for _ in range(20):
            pool.draw(np.arange(len(pool.owner)))
            seated += int((pool.owner == exploiter_id).any(axis=1).sum())
        assert seated > 0  # half the games, about 40 of 80
    finally:
        main.close()

    # a longer league: generation 1 is not trained again; the main goes on from its own checkpoint
    main_updates = updates(out / "main")
    state = league.run_league(config, out, generations=2, progress=False)
    assert updates(exploiter_run) == [1, 2]
    assert updates(out / "main") == [*main_updates, 3, 4]
    assert state["generation"] == 3 and [r["generation"] for r in state["history"]] == [1, 2]
    assert state["history"][1]["exploiter"]["target"] == "snapshots/main-1.pt"
    assert load_checkpoint(out / "main" / "checkpoint.pt")["progress"]["global_step"] == 2 * STEPS


def test_a_league_folder_moved_mid_phase_resumes_where_it_is_now(tmp_path, monkeypatch):
    config, first = tiny_league(tmp_path), tmp_path / "first"
    with monkeypatch.context() as patch:  # one update of the exploiter, then the time is spent
        patch.setattr(league.League, "minutes_left", lambda self: 1e-4)
        league.run_league(config, first, progress=False)
    moved = tmp_path / "elsewhere" / "league"
    moved.parent.mkdir()
    first.rename(moved)

    state = league.run_league(config, moved, progress=False)
    assert state["generation"] == 2 and not first.exists()
    assert updates(moved / "exploiters" / "gen-1" / "run") == [1, 2]
    exploiter_run = load_checkpoint(moved / "exploiters" / "gen-1" / "run" / "checkpoint.pt")["config"]
    target = str(moved.resolve() / "snapshots" / "main-0.pt")
    assert exploiter_run["out_dir"] == str(moved.resolve() / "exploiters" / "gen-1" / "run")
    assert exploiter_run["opponents"]["baselines"] == {target: 1.0}
    main_run = load_checkpoint(moved / "main" / "checkpoint.pt")["config"]
    assert main_run["out_dir"] == str(moved.resolve() / "main")
    assert set(main_run["opponents"]["baselines"]) == {"random", str(moved.resolve() / "snapshots" / "exploiter-1.pt")}
    assert "out_dir" not in json.loads((moved / "league.json").read_text())["main_config"]


def started_league(tmp_path, **changes):
    """A league that has started (its main's run at update 0, its state), trained nothing."""
    config, out = tiny_league(tmp_path, **changes), tmp_path / "out"
    out.mkdir()
    league.League(league.load_league_config(config), out.resolve(), None, False).start()
    return out


def test_a_changed_config_is_refused_naming_the_key_and_the_state_is_left_as_it_was(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text((ROOT / "configs" / "train" / "universal.yaml").read_text())
    main = {"recipe": str(recipe)}
    out = started_league(tmp_path, main=main)
    before = (out / "league.json").read_bytes()
    with pytest.raises(ValueError, match=r"exploiters\.share was 0\.5, is 0\.25"):
        league.run_league(tiny_league(tmp_path, main=main, exploiters={"share": 0.25}), out, progress=False)
    recipe.write_text(recipe.read_text().replace("ent_coef: 0.02", "ent_coef: 0.03"))  # the recipe file edited
    with pytest.raises(ValueError, match=r"main run's ppo\.ent_coef was 0\.02, is 0\.03"):
        league.run_league(tiny_league(tmp_path, main=main), out, progress=False)
    assert (out / "league.json").read_bytes() == before


def test_held_out_seeds_are_refused(tmp_path):
    with pytest.raises(ValueError, match="seed = 5150 gives a run a held-out seed"):
        league.run_league(tiny_league(tmp_path, seed=5150), tmp_path / "out", progress=False)
    with pytest.raises(ValueError, match=r"seed \+ 2 \(exploiter 2\) = 5150"):
        league.run_league(tiny_league(tmp_path, seed=5148, generations=3), tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "league.json").exists()


def test_the_exploiters_share_the_pool_uniformly_or_the_newest_most():
    base = {"self_play": 0.5, "snapshots": 0.2, "baselines": {"heuristic-3": 0.3}, "pool_size": 4}
    uniform = league.league_opponents(base, ["a.pt", "b.pt", "c.pt"], league.ExploiterConfig(steps=1, share=0.3))
    assert uniform["self_play"] == pytest.approx(0.35) and uniform["pool_size"] == 4
    assert uniform["baselines"] == pytest.approx({"heuristic-3": 0.21, "a.pt": 0.1, "b.pt": 0.1, "c.pt": 0.1})
    recent = league.ExploiterConfig(steps=1, share=0.3, keep=2, weighting="recent")
    assert league.league_opponents(base, ["a.pt", "b.pt", "c.pt"], recent)["baselines"] == pytest.approx(
        {"heuristic-3": 0.21, "b.pt": 0.1, "c.pt": 0.2}
    )
    assert league.league_opponents(base, [], recent) == base


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "missing.yaml"], "config file 'missing.yaml' does not exist"),
        (["--generations", "0"], "--generations must be from 1 to 10000"),
        (["--minutes", "-1"], "--minutes must be a positive number"),
        (["--config", "BAD"], "unknown key 'typo' in config; allowed: seed, generations, main, exploiters"),
        (["--config", "SHARE"], "exploiters.share must be a finite number in [0, 1], got 2"),
        (["--config", "SET"], "exploiters: unknown key 'ppo.typo' in ppo; allowed: num_envs"),
        (["--out", "FILE"], "--out"),
    ],
)
def test_bad_input_is_one_line_and_leaves_no_state(tmp_path, capsys, args, message):
    good = tiny_league(tmp_path)
    bad, share, typo = tmp_path / "bad.yaml", tmp_path / "share.yaml", tmp_path / "typo.yaml"
    data = yaml.safe_load(open(good))
    bad.write_text(yaml.safe_dump({**data, "typo": 1}))
    share.write_text(yaml.safe_dump({**data, "exploiters": {**data["exploiters"], "share": 2}}))
    typo.write_text(yaml.safe_dump({**data, "exploiters": {**data["exploiters"], "set": ["ppo.typo=1"]}}))
    (tmp_path / "a-file").write_text("")
    where = {"BAD": str(bad), "SHARE": str(share), "SET": str(typo), "FILE": str(tmp_path / "a-file" / "out")}
    argv = {"--config": good, "--out": str(tmp_path / "out")}
    for key, value in zip(args[::2], args[1::2]):
        argv[key] = where.get(value, value)
    try:
        code = league.main([part for pair in argv.items() for part in pair] + ["--no-progress"])
    except SystemExit as exit_:  # a usage error, from the parser
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "league.json").exists()


def test_a_stop_file_ends_an_invocation_before_the_next_phase_and_is_removed(tmp_path):
    out = started_league(tmp_path)
    (out / "STOP").touch()
    state = league.run_league(tiny_league(tmp_path), out, progress=False)
    assert state["ended"].endswith("asks to stop") and state["generation"] == 1 and state["phase"] == "exploiter"
    assert not (out / "STOP").exists() and not (out / "exploiters").exists()


@pytest.mark.parametrize("name", ["league", "league_short"])
def test_the_shipped_league_configs_resolve(tmp_path, monkeypatch, name):
    monkeypatch.chdir(ROOT)  # their tables name files of the repository
    config = league.load_league_config(ROOT / "configs" / "train" / f"{name}.yaml")
    built = league.League(config, tmp_path, None, False)  # the main's and the exploiters' run configs, the seeds
    assert built.run_config.init.weights == "ppo-universal" and built.run_config.seed == config.seed
    assert [t.rules for t in built.exploiter_config.tables] == [t.rules for t in config.exploiters.tables]
    # like every shipped run config: one torch thread, and no held-out style among the opponents
    assert built.run_config.threads == built.exploiter_config.threads == 1
    assert not set(HELD_OUT_STYLES) & set(built.run_config.opponents.baselines)


def test_a_config_with_integer_keys_compares_equal_to_its_state_read_back():
    """A rule space's weights by player count have integer keys, which league.json holds as strings: reading the
    state back is no change of config."""
    given = {"rule_space": {"weights": {"n_players": {3: 1.0, 4: 2.0}}}}
    held = json.loads(json.dumps(given))
    assert league.first_difference(held, given) is not None  # what the league compared before
    assert league.first_difference(held, league.as_json(given)) is None
