"""The shipped universal agent ``ppo-universal``: made for any table of the universal layout by name, listed at
every table (and so offered by both apps), refused in one line outside the layout, small package data, exported
by ``scripts/ship_universal.py`` and measured by ``scripts/measure_universal.py``."""

from __future__ import annotations

import importlib.util
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import president_env as pe  # noqa: E402
from president_env import agents  # noqa: E402
from president_env.agents.checkpoint import load_checkpoint  # noqa: E402
from president_env.agents.universal import UniversalAgent, build_universal, coverage_error  # noqa: E402
from president_env.core.actions import KIND_GIVE, action_tables  # noqa: E402
from president_env.core.engine import tables  # noqa: E402
from president_env.core.presets import PRESETS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAME = "ppo-universal"
pytestmark = pytest.mark.skipif(not agents.shipped_checkpoint(NAME).is_file(), reason="ppo-universal not installed")


def beyond(rules: pe.Rules, **fields) -> pe.Rules:
    """``rules`` with field values ``Rules`` validation refuses (as a later president-env might allow them)."""
    rules = rules.replace()
    for name, value in fields.items():
        object.__setattr__(rules, name, value)
    return rules


@pytest.mark.parametrize("preset", PRESETS)
def test_it_is_made_and_listed_for_every_preset_at_3_5_and_8_players_and_any_match_length(preset):
    for n_players in (3, 5, 8):
        for manches in (1, 7):
            rules = pe.load_preset(preset).replace(n_players=n_players, manches=manches)
            agent = agents.make(NAME, rules, seed=0)
            assert isinstance(agent, UniversalAgent) and agent.name == NAME and agent.rules == rules
            assert NAME in agents.names(rules)
            game = pe.VecGame(rules, batch_size=3, seed=n_players)
            mask = game.legal_mask()
            assert mask[np.arange(3), agent.act_batch(game.observe(), mask)].all()


def test_without_rules_it_plays_the_standard_game_and_any_rules_combination_lists_it():
    assert agents.make(NAME).rules == pe.Rules()
    odd = pe.Rules(n_players=7, decks=2, jokers=3, revolution=True, equal_rank="skip", exchange=(4, 3, 2, 1))
    learned = (NAME, f"{NAME}-search")  # the one learned agent listed, and the search over it
    assert agents.names(odd)[-2:] == learned and agents.names("quebec")[-2:] == learned
    env = pe.gym_env(rules=odd.replace(manches=1), opponents=NAME, seat=0)  # an opponent of the Gym envs by name
    _, info = env.reset(seed=2)
    assert all(type(opponent) is UniversalAgent for opponent in env.unwrapped.opponents)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(env.action_space.sample())
    assert 0 <= info["finish_position"] < odd.n_players


def test_rules_outside_the_universal_layout_are_refused_in_one_line_and_not_listed():
    standard = pe.Rules()
    for fields, words in (
        ({"n_players": 9}, "n_players 9 is outside the universal layout (3 to 8 players)"),
        ({"decks": 3}, "decks 3 is outside the universal layout (1 or 2 decks)"),
        ({"exchange": (1, 1, 1, 1, 1)}, "at most 4 exchange pairs"),
        ({"exchange": (5,)}, "at most 4 cards a pair"),
        ({"equal_rank": "twice"}, "equal_rank 'twice' is outside the universal layout (none, skip, or_nothing)"),
    ):
        rules = beyond(standard, **fields)
        assert words in coverage_error(rules)
        with pytest.raises(ValueError, match=f"^agent 'ppo-universal' plays every table .*{words[:20]}") as caught:
            agents.make(NAME, rules)
        assert "\n" not in str(caught.value)
        assert NAME not in agents.names(rules)
    net = build_universal(load_checkpoint(agents.shipped_checkpoint(NAME)))
    with pytest.raises(ValueError, match="the universal network cannot play these rules: n_players 9"):
        UniversalAgent(beyond(standard, n_players=9), net)  # a checkpoint path fails the same way


def test_an_agent_made_for_one_table_refuses_a_batch_of_another():
    agent = agents.make(NAME, pe.Rules(), seed=0)
    other = pe.VecGame(pe.Rules(n_players=5), batch_size=2, seed=0)
    with pytest.raises(ValueError, match=r"observations must have shape \(B, \d+\) for these rules"):
        agent.act_batch(other.observe(), other.legal_mask())


@pytest.mark.parametrize("rules", [pe.Rules(manches=2), pe.load_preset("party").replace(n_players=5, manches=2)])
def test_a_two_manche_game_through_the_aec_env_with_it_in_every_seat_finishes_through_the_exchange(rules):
    env = pe.env(rules=rules)
    env.reset(seed=3)
    players = {name: agents.make(NAME, rules, seed=i) for i, name in enumerate(env.possible_agents)}
    kind = action_tables(rules)[0]
    gives, rewards = 0, dict.fromkeys(env.possible_agents, 0.0)
    for name in env.agent_iter(max_iter=5_000):
        observation, reward, terminated, truncated, info = env.last()
        rewards[name] += reward
        if terminated or truncated:
            env.step(None)
            continue
        action = players[name].act(observation, info)
        assert observation["action_mask"][action]
        gives += int(kind[action] == KIND_GIVE)
        env.step(action)
    assert not env.agents, "the game did not finish"
    manches = info["manche"] + 1  # a decisive manche may follow a tie; it breaks the tie and scores nothing
    assert manches >= 2 and sum(info["scores"].values()) == rules.manches * int(tables(rules).points.sum())
    assert abs(sum(rewards.values())) < 1e-9  # zero-sum rewards
    assert gives == sum(k for _, _, k in rules.exchange_pairs) * (manches - 1)  # the Présidents gave back


def test_the_shipped_file_is_a_small_universal_policy_without_optimizer_state():
    path = agents.shipped_checkpoint(NAME)
    assert path.stat().st_size < 10_000_000
    checkpoint = load_checkpoint(path)
    assert checkpoint["network"]["kind"] == "universal"
    assert "optimizer" not in checkpoint and "rng" not in checkpoint
    assert checkpoint["progress"]["global_step"] > 0


def _script(name: str):
    """The maintenance script ``scripts/<name>.py`` as a module (scripts are not installed)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ship_script_exports_a_universal_checkpoint_and_refuses_another_in_one_line(tmp_path, capsys):
    ship = _script("ship_universal")
    out = tmp_path / "ppo-universal.pt"
    assert ship.main([str(agents.shipped_checkpoint(NAME)), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"{out}: 2.") and out.stat().st_size < 10_000_000
    shipped, exported = load_checkpoint(agents.shipped_checkpoint(NAME)), load_checkpoint(out)
    assert all(torch.equal(shipped["model"][k], exported["model"][k]) for k in shipped["model"])
    for source, words in (
        (ROOT / "results" / "matches" / "ppo-quebec" / "policy.pt", "is not a universal checkpoint"),
        (tmp_path / "none.pt", "no such file"),
    ):
        with pytest.raises(SystemExit) as caught:
            ship.main([str(source), "--out", str(tmp_path / "refused.pt")])
        err = capsys.readouterr().err
        assert caught.value.code == 2 and words in err and err.count("\n") == 1
        assert not (tmp_path / "refused.pt").exists()


def test_the_web_app_offers_it_at_a_table_without_a_specialist_and_hints_with_it():
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient
    from web_helpers import Keyed

    from president_env.apps.web.server import create_app

    table = "n_players: 6\nrevolution: true\nmanches: 2"
    with TestClient(create_app()) as test_client:
        client = Keyed(test_client)
        offered = client.post("/api/rules", json={"yaml": table}).json()["agents"]
        assert {NAME, f"{NAME}-search"} <= set(offered) and not any(n.startswith("ppo-standard") for n in offered)
        setup = {"mode": "play", "yaml": table, "human": 0, "seed": 1, "pace": 0, "seats": ["human"] + [NAME] * 5}
        created = client.post("/api/games", json=setup)
        assert created.status_code == 201, created.text
        game_id, view, deadline = created.json()["id"], created.json(), time.monotonic() + 60
        while not view["legal"]:
            assert time.monotonic() < deadline and view["error"] is None
            time.sleep(0.01)
            view = client.get(f"/api/games/{game_id}").json()
        hint = client.post(f"/api/games/{game_id}/hint").json()
        assert hint["agent"] == f"{NAME}-search" and hint["action"] in [move["action"] for move in view["legal"]]


def test_the_measuring_script_writes_one_row_per_table_and_refuses_bad_arguments_before_playing(tmp_path, capsys):
    measure = _script("measure_universal")
    assert set(measure.TABLES) >= {"standard", "standard_3p", "standard_5p", *PRESETS}
    for table, (rules, specialist) in measure.TABLES.items():
        assert (ROOT / specialist).is_file() and rules.manches == pe.load_preset("standard").manches, table
    out = tmp_path / "measured"
    argv = ["--seed", "3", "--deals", "1", "--tables", "party", "--opponents", "heuristic-1,specialist"]
    assert measure.main([*argv, "--out", str(out), "--no-progress"]) == 0
    table = (out / "summary.md").read_text()
    specialist = "results_matches_ppo-party_policy.pt"  # the retired agent's checkpoint, as a folder name
    assert "| party " in table and "`results/matches/ppo-party/policy.pt`" in table and "(1)" in table
    assert (out / "party" / specialist / "results.json").is_file() and (out / "party" / "versus.md").is_file()
    resumed = tmp_path / "resumed"  # --resume keeps each table's chunks, and a second run loads them
    for _ in range(2):
        assert measure.main([*argv, "--out", str(resumed), "--no-progress", "--resume"]) == 0
        assert (resumed / "summary.md").read_text() == table
    assert (resumed / "party" / "chunks" / specialist / "chunk-00000.npz").is_file()
    assert (resumed / "party" / "chunks" / "heuristic-1" / "tournament.json").is_file()
    capsys.readouterr()
    for bad, words in (
        (["--tables", "nowhere"], "unknown table(s) nowhere"),
        (["--opponents", "specialist,specialist", "--tables", "party"], "names one opponent twice at party"),
        (["--opponents", "heuristic-9"], "unknown agent 'heuristic-9'"),
        (["--deals", "0"], "deals must be a positive integer"),
    ):
        with pytest.raises(SystemExit) as caught:
            measure.main(["--seed", "3", "--deals", "1", *bad, "--out", str(tmp_path / "refused")])
        err = capsys.readouterr().err
        assert caught.value.code == 2 and words in err.splitlines()[-1], err
        assert not (tmp_path / "refused").exists()


def test_the_measuring_script_pairs_the_agent_with_a_reference_on_the_same_deals(tmp_path):
    measure = _script("measure_universal")
    out = tmp_path / "paired"
    argv = ["--agent", "heuristic-3", "--seed", "3", "--deals", "2", "--tables", "standard", "--no-progress"]
    paired_argv = [*argv, "--opponents", "style-shedder", "--paired-with", "heuristic-2", "--resume"]
    for _ in range(2):  # the second run loads both sides' chunks
        assert measure.main([*paired_argv, "--out", str(out)]) == 0
    cell = json.loads((out / "summary.json").read_text())["tables"]["standard"]["style-shedder"]
    paired = json.loads((out / "standard" / "paired.json").read_text())["opponents"]["style-shedder"]
    assert cell["difference"] == paired["difference"] and cell["advantage"] == paired["advantage"]
    assert "; edge " in (out / "summary.md").read_text()
    assert (out / "standard" / "chunks" / "reference" / "style-shedder" / "chunk-00000.npz").is_file()
    with pytest.raises(SystemExit):
        measure.main(
            [*argv, "--opponents", "heuristic-3", "--paired-with", "heuristic-2", "--out", str(tmp_path / "x")]
        )
    assert not (tmp_path / "x").exists()


def test_president_play_seats_it_at_any_table():
    pytest.importorskip("rich", reason="president-play needs the play extra")
    pytest.importorskip("prompt_toolkit", reason="president-play needs the play extra")
    from president_env.apps.terminal import build_game

    argv = ["--rules", "party", "--opponents", "ppo-universal", "--manches", "2", "--seed", "1"]
    game = build_game(argv, io.StringIO(), io.StringIO())
    assert len(game.agents) == 3 and all(type(agent) is UniversalAgent for agent in game.agents.values())


@pytest.mark.parametrize(
    "change, words",
    [
        ({"progress": [1, 2]}, "progress must be a dict"),
        ({"progress": {"update": 3, "global_step": "many", "elapsed_s": 60.0}}, "progress.global_step must be a"),
        ({"progress": {"update": 3, "global_step": 10, "elapsed_s": -1.0}}, "progress.elapsed_s must be a"),
        ({"metrics": {"eval/advantage": "high"}}, "metrics.eval/advantage must be a finite number"),
    ],
)
def test_the_ship_script_refuses_odd_progress_or_metrics_before_writing(tmp_path, capsys, change, words):
    from president_env.agents.checkpoint import save_checkpoint

    ship = _script("ship_universal")
    source = save_checkpoint(tmp_path / "odd.pt", {**load_checkpoint(agents.shipped_checkpoint(NAME)), **change})
    with pytest.raises(SystemExit) as caught:
        ship.main([str(source), "--out", str(tmp_path / "refused.pt")])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "refused.pt").exists()
