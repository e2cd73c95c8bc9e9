"""``president-web``'s limits: every request does bounded work, whichever door the rules or the replay come in by.

The limits are those of ``docs/web.md`` (``GET /api/options`` sends them): at most 20 manches (setup form,
pasted YAML and replays alike), 3 to 8 players, 64 kB request bodies, 20,000 characters of YAML, 4 MB and
10,000 moves of replay, 100 frames or 500 log entries per response, 4 loads at once.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from web_helpers import OPPONENTS, SETUP, STALL, Keyed, live_server, play_game  # noqa: E402

from president_env.apps.web import games  # noqa: E402
from president_env.apps.web.server import create_app  # noqa: E402
from president_env.core.presets import load_preset  # noqa: E402
from president_env.game.replay import Replay  # noqa: E402
from president_env.game.single import SingleGame  # noqa: E402


@pytest.fixture
def client():
    with TestClient(create_app()) as test_client:
        yield Keyed(test_client)


def post_replay(http, data) -> httpx.Response:
    text = data if isinstance(data, str) else json.dumps(data)
    return http.post("/api/replays", content=text, headers={"content-type": "application/json"})


def random_replay(preset: str, manches: int, seed: int = 1) -> str:
    """A whole game of random legal moves as a replay file's text."""
    rules = load_preset(preset).replace(manches=manches)
    game = SingleGame.table(rules, seed=seed, players=["random"] * rules.n_players)
    rng = np.random.default_rng(seed)
    while not game.done:
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    return Replay.of(game).dumps()


def wait_loaded(http, game_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while not (view := http.get(f"/api/games/{game_id}?limit=0").json())["over"]:
        assert time.monotonic() < deadline, "the replay did not finish loading"
        time.sleep(0.05)
    return view


def test_options_list_every_limit(client):
    limits = client.get("/api/options").json()["limits"]
    assert limits == {
        "max_manches": 20,
        "players": [3, 8],
        "max_body_bytes": 64_000,
        "max_yaml_chars": 20_000,
        "max_replay_bytes": 4_000_000,
        "max_replay_moves": 10_000,
        "page_frames": 100,
        "page_log": 500,
        "max_loading": 4,
        "max_games_per_client": 20,
        "create_burst": 20,
        "create_every_s": 3.0,
        "turn_clock_s": [10, 600],
        "turn_clock_default_s": 60,
    }


def test_pasted_yaml_meets_the_same_limits_as_the_form(client):
    setup = {key: value for key, value in SETUP.items() if key != "manches"}  # the YAML's manches, not the form's
    for path, body in (
        ("/api/rules", {"yaml": "manches: 50"}),
        ("/api/games", {**setup, "seats": OPPONENTS, "yaml": "manches: 50"}),
        ("/api/games", {**setup, "seats": OPPONENTS, "mode": "watch", "yaml": "manches: 21\nrevolution: true"}),
    ):
        before = len(client.app.state.store.sessions)
        response = client.post(path, json={**body, "seats": ["heuristic-1"] * 4} if body.get("mode") else body)
        assert response.status_code == 400, response.text
        assert "the web app plays at most 20" in response.json()["error"]
        assert len(client.app.state.store.sessions) == before
    # The form's own field: 21 is refused, 20 accepted; the YAML's 20 too.
    assert "from 1 to 20" in client.post("/api/rules", json={"preset": "standard", "manches": 21}).json()["error"]
    assert client.post("/api/rules", json={"yaml": "manches: 20"}).json()["rules"]["manches"] == 20
    # Players: the rules' own bounds, whichever door.
    for body in ({"yaml": "n_players: 9"}, {"preset": "party", "n_players": 9}):
        assert "from 3 to 8" in client.post("/api/rules", json=body).json()["error"]
    # YAML that is not a mapping is refused; a file name pasted as YAML is text, never opened.
    for text in ("- 1\n- 2", "configs/rules/party.yaml", "pyproject.toml"):
        response = client.post("/api/rules", json={"yaml": text})
        assert response.status_code == 400 and "is not a mapping of rules fields" in response.json()["error"]
    # Characters and bytes.
    assert client.post("/api/rules", json={"yaml": "#" * 20_001}).status_code == 400
    assert client.post("/api/rules", content="x" * 64_001).status_code == 413


def finished_replay(client, preset: str = "standard", manches: int = 1, seed: int = 3) -> dict:
    setup = {"mode": "watch", "preset": preset, "manches": manches, "seed": seed, "pace": 0}
    seats = ["heuristic-1"] * load_preset(preset).n_players
    game_id = client.post("/api/games", json={**setup, "seats": seats}).json()["id"]
    deadline = time.monotonic() + 60
    while not client.get(f"/api/games/{game_id}?limit=0").json()["over"]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return json.loads(client.get(f"/api/games/{game_id}/replay").text)


def test_replays_meet_the_limits(client):
    data = finished_replay(client)
    too_long = {**data, "rules": {**data["rules"], "manches": 21}}
    response = post_replay(client, too_long)
    assert response.status_code == 400 and "the web app plays at most 20" in response.json()["error"]
    many = {**data, "actions": [{"player": 0, "action": 0}] * 10_001, "notes": None, "result": None}
    response = post_replay(client, many)
    assert response.status_code == 413 and "at most 10000" in response.json()["error"]
    response = post_replay(client, " " * 4_000_001)
    assert response.status_code == 413
    assert not client.app.state.store.sessions or all(
        s.mode != "replay" for s in client.app.state.store.sessions.values()
    )


def _name_with_surrogate(data):
    return {**data, "players": ["\ud800"] + data["players"][1:]}


MALFORMED = {
    "notes of the wrong type": lambda d: {**d, "notes": "moves"},
    "a note whose moves are a string": lambda d: {
        **d,
        "notes": [{"action": a["action"], "measure": "x", "moves": "abc"} for a in d["actions"]],
    },
    "a lone-surrogate name": _name_with_surrogate,
    "deals of numbers": lambda d: {**d, "deals": [[[1, 2]] * len(d["players"])]},
    "deals of the wrong shape": lambda d: {**d, "deals": [["3C"]]},
    "a deal that is an object": lambda d: {**d, "deals": [{"a": 1}]},
    "cards of numbers": lambda d: {**d, "actions": [{**d["actions"][0], "cards": [5]}] + d["actions"][1:]},
    "a move out of turn": lambda d: {
        **d,
        "actions": [{**d["actions"][0], "player": (d["actions"][0]["player"] + 1) % 4}],
    },
    "version true": lambda d: {**d, "version": True},
    "roles of numbers": lambda d: {**d, "roles": [1, 2, 3, 4]},
    "rules of the wrong type": lambda d: {**d, "rules": "standard"},
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_replays_get_400_never_500(client, case):
    data = MALFORMED[case](finished_replay(client))
    text = json.dumps(data)  # a lone surrogate travels as its JSON escape
    response = post_replay(client, text)
    assert response.status_code == 400, (case, response.status_code, response.text[:200])
    assert response.json()["error"]


def test_nan_in_a_request_is_not_json(client):
    response = client.post("/api/rules", content='{"yaml": NaN}', headers={"content-type": "application/json"})
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]


def test_replays_that_start_with_roles_load(client):
    """The family preset draws the roles before the first manche: its replays, the app's own downloads, load."""
    data = finished_replay(client, "family", manches=2)
    assert data["roles"] is not None
    response = post_replay(client, data)
    assert response.status_code == 201, response.text
    view = wait_loaded(client, response.json()["id"])
    assert view["error"] is None and view["frame_count"] == len(data["actions"]) + 1
    assert view["winner"] == data["result"]["winner"]


def test_views_are_paged(client, monkeypatch):
    setup = {"mode": "watch", "preset": "big_table", "manches": 1, "seed": 2, "pace": 0, "seats": ["heuristic-1"] * 8}
    game_id = client.post("/api/games", json=setup).json()["id"]
    deadline = time.monotonic() + 60
    while not (view := client.get(f"/api/games/{game_id}?limit=0").json())["over"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    count = view["frame_count"]
    assert count > 150
    first = client.get(f"/api/games/{game_id}").json()
    assert len(first["frames"]) == 100 and first["frames_start"] == 0 and first["frames"][0]["index"] == 0
    rest = client.get(f"/api/games/{game_id}?since=100").json()["frames"]
    assert [f["index"] for f in rest] == list(range(100, min(200, count)))
    assert client.get(f"/api/games/{game_id}?limit=101").status_code == 400
    # Play mode pages its log the same way.
    monkeypatch.setattr(games, "PAGE_LOG", 5)
    _, final = play_game(client, {**SETUP, "seats": OPPONENTS})
    assert len(final["log"]) <= 5 and final["log_count"] > 5
    page = client.get(f"/api/games/{final['id']}?since=5").json()
    assert page["log_start"] == 5 and len(page["log"]) == min(5, final["log_count"] - 5)


def test_busy_server_refuses_at_once(client):
    store = client.app.state.store
    data = finished_replay(client)
    before = set(store.sessions)
    learned = [n for n in client.get("/api/options").json()["agents"] if n == "ppo-universal"][:1]
    store.loading = games.MAX_LOADING
    try:
        started = time.perf_counter()
        refused = [post_replay(client, data)]
        if learned:  # a learned agent not loaded yet would wait for the loader
            refused.append(client.post("/api/games", json={**SETUP, "seats": ["human"] + learned * 3}))
        for response in refused:
            assert response.status_code == 503 and "try again" in response.json()["error"]
        assert time.perf_counter() - started < STALL
        assert set(store.sessions) == before
        # Baselines are made at once, never refused as busy.
        assert client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).status_code == 201
    finally:
        store.loading = 0
    assert post_replay(client, data).status_code == 201


def test_learned_agents_are_loaded_once_and_each_game_gets_its_own_seed(client):
    name = "ppo-universal"
    if name not in client.get("/api/options").json()["agents"]:
        pytest.skip("the shipped learned agent is not installed")
    pytest.importorskip("torch")
    store = client.app.state.store
    ids = [
        client.post("/api/games", json={**SETUP, "seed": seed, "seats": ["human", name, name, "random"]}).json()["id"]
        for seed in (1, 2)
    ]
    assert list(store.cache._networks) == [name]
    a, b = (store.sessions[i].agents[1] for i in ids)
    assert a is not b and a._layers[0][0] is b._layers[0][0]  # the weights are shared, the agents are not
    assert a.rng.bit_generator.state != b.rng.bit_generator.state


def latencies_during(url: str, work, minimum: float = 1.0) -> tuple[float, list[float]]:
    """Run ``work()`` in a thread while another game's view is asked for; (seconds of work, request latencies)."""
    with httpx.Client(base_url=url, timeout=60) as raw:
        http = Keyed(raw)
        other = http.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()["id"]
        times: list[float] = []
        done = threading.Event()
        spent = [0.0]

        def run() -> None:
            started = time.perf_counter()
            work()
            spent[0] = time.perf_counter() - started
            done.set()

        thread = threading.Thread(target=run)
        thread.start()
        started = time.perf_counter()
        while not done.is_set() or time.perf_counter() - started < minimum:
            t0 = time.perf_counter()
            assert http.get(f"/api/games/{other}").status_code == 200
            times.append(time.perf_counter() - t0)
            time.sleep(0.02)
        thread.join()
    return spent[0], times


@pytest.mark.slow
def test_a_replay_near_the_limits_loads_without_stalling_other_games():
    """20 manches at 8 players, about 6,000 moves: the upload is answered in about a second with the first
    frames, the rest is checked in the background, no response is over a few MB, and other games stay quick."""
    text = random_replay("big_table", 20)
    assert len(json.loads(text)["actions"]) > 5000
    with live_server() as (url, _):
        with httpx.Client(base_url=url, timeout=60) as http:
            answer: dict = {}

            def upload() -> None:
                started = time.perf_counter()
                response = post_replay(http, text)
                answer.update(status=response.status_code, seconds=time.perf_counter() - started, view=response.json())
                answer["size"] = len(response.content)
                wait_loaded(http, answer["view"]["id"], timeout=300)

            spent, times = latencies_during(url, upload)
            assert answer["status"] == 201, answer
            print(
                f"\nreplay upload answered in {answer['seconds']:.2f} s ({answer['size']} bytes), "
                f"loaded in {spent:.1f} s"
            )
            print(f"other game: {len(times)} requests, median {np.median(times) * 1000:.0f} ms, max {max(times):.2f} s")
            assert answer["seconds"] < 3.0 and answer["size"] < 2_000_000
            assert max(times) < STALL
            game_id = answer["view"]["id"]
            view = http.get(f"/api/games/{game_id}?since=0&limit=0").json()
            count = view["frame_count"]
            assert count == len(json.loads(text)["actions"]) + 1 and view["error"] is None
            last = http.get(f"/api/games/{game_id}?since={count - 1}")
            assert len(last.content) < 2_000_000 and last.json()["frames"][0]["over"]
            biggest = max(len(http.get(f"/api/games/{game_id}?since={i}").content) for i in range(0, count, 1000))
            print(f"largest page of frames: {biggest} bytes")
            assert biggest < 2_000_000


@pytest.mark.slow
def test_making_a_learned_agent_does_not_stall_other_games():
    name = "ppo-universal"
    with live_server() as (url, app):
        with httpx.Client(base_url=url, timeout=60) as http:
            if name not in http.get("/api/options").json()["agents"] or importlib.util.find_spec("torch") is None:
                pytest.skip("the shipped learned agent or torch is not installed")
            first_load = "torch" not in sys.modules  # then the load below imports torch too
            setup = {"mode": "watch", "preset": "big_table", "pace": 0.5, "seats": [name] * 8}
            statuses = []

            def create() -> None:
                statuses.append(http.post("/api/games", json=setup).status_code)

            spent, times = latencies_during(url, create)
            print(
                f"\nfirst game with {name} (torch imported then: {first_load}): {spent:.2f} s; "
                f"other game max {max(times):.2f} s over {len(times)} requests"
            )
            assert statuses == [201]
            assert max(times) < STALL
            started = time.perf_counter()
            assert http.post("/api/games", json=setup).status_code == 201
            again = time.perf_counter() - started
            print(f"second game with {name}: {again:.3f} s")
            assert again < STALL
