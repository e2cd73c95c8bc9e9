"""``president-web`` against other clients: a foreign page cannot create, join or act (Origin, Host, JSON only),
one client cannot hold the server (games per client, a create rate), secrets never travel in a URL, and a learned
agent's network is loaded once whatever the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from web_helpers import OPPONENTS, SETUP, live_server  # noqa: E402

from president_env import agents as agent_registry  # noqa: E402
from president_env.apps.web import games  # noqa: E402
from president_env.apps.web.server import create_app  # noqa: E402
from president_env.core.presets import load_preset  # noqa: E402

STATIC = Path(games.__file__).resolve().parent / "static"
GAME = {**SETUP, "seats": OPPONENTS}
TABLE = {"preset": "standard", "manches": 1, "pace": 0, "name": "Ann"}
EVIL = "http://evil.example"


def test_a_foreign_page_cannot_create_join_or_act():
    with TestClient(create_app()) as client:
        store = client.app.state.store
        table = client.post("/api/tables", json=TABLE).json()
        game = client.post("/api/games", json=GAME).json()
        before = (len(store.sessions), len(store.sessions[table["id"]].seats), game["version"])
        move = {"version": game["version"], "move": "pass"}
        foreign = [
            {"Origin": EVIL},
            {"Origin": "null"},  # a sandboxed frame or a file
            {"Origin": "http://testserver.evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Host": "evil.example"},  # a page that rebound its own name to this server
            {"Host": "evil.example", "Origin": EVIL},
        ]
        for headers in foreign:
            for path, body in (
                ("/api/games", GAME),
                ("/api/tables", TABLE),
                (f"/api/tables/{table['id']}/join", {"name": "Eve"}),
                (f"/api/games/{game['id']}/move", move),
            ):
                response = client.post(path, json=body, headers={**headers, "X-Player-Key": game["key"]})
                assert response.status_code == 403, (headers, path, response.text)
            assert (
                client.delete(f"/api/games/{game['id']}", headers={**headers, "X-Player-Key": game["key"]}).status_code
                == 403
            )
        # A form or a text/plain post (what a foreign page sends without asking) is not JSON: 415, nothing made.
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
            headers = {"content-type": content_type} if content_type else {}
            response = client.post("/api/games", content=json.dumps(GAME), headers=headers)
            assert response.status_code == 415, (content_type, response.text)
            assert "application/json" in response.json()["error"]
            join = client.post(f"/api/tables/{table['id']}/join", content='{"name": "Eve"}', headers=headers)
            assert join.status_code == 415
        assert (
            len(store.sessions),
            len(store.sessions[table["id"]].seats),
            client.get(f"/api/games/{game['id']}", headers={"X-Player-Key": game["key"]}).json()["version"],
        ) == before
        # The page's own requests pass: same origin, or no Origin at all (scripts), by the server's own name.
        assert client.post("/api/games", json=GAME, headers={"Origin": "http://testserver"}).status_code == 201
        assert client.post(
            "/api/games", json=GAME, headers={"content-type": "application/json; charset=utf-8"}
        ).status_code in (201,)
        assert client.get("/api/options", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200


def test_the_server_answers_to_its_own_names_only():
    with live_server() as (url, _):
        port = url.rsplit(":", 1)[1]
        with httpx.Client(base_url=url, timeout=30) as http:
            assert http.get("/api/options").status_code == 200  # its address
            assert http.get("/api/options", headers={"Host": f"localhost:{port}"}).status_code == 200  # loopback
            refused = http.get("/api/options", headers={"Host": f"rebound.example:{port}"})
            assert refused.status_code == 403 and "--allow-host" in refused.json()["error"]
            # Same origin by name: the Origin must be the Host the request came by.
            ok = {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
            assert http.post("/api/rules", json={"preset": "standard"}, headers=ok).status_code == 200
            crossed = {"Host": f"127.0.0.1:{port}", "Origin": f"http://localhost:{port}"}
            assert http.post("/api/rules", json={"preset": "standard"}, headers=crossed).status_code == 403
            assert http.get("/").status_code == 200  # the page itself is plain static content
    with TestClient(create_app(hosts=["president.lan"]), base_url="http://president.lan:8000") as client:
        assert client.post("/api/games", json=GAME).status_code == 201  # a name given with --allow-host


def test_one_client_holds_a_bounded_number_of_games_and_creates_them_at_a_bounded_rate():
    now = [0.0]
    app = create_app(per_client=3, create_burst=5, create_every=2.0, clock=lambda: now[0])
    with TestClient(app) as client, TestClient(app, client=("10.0.0.2", 4000)) as other:
        store = app.state.store
        made = [client.post("/api/games", json=GAME).json() for _ in range(2)]
        made.append(client.post("/api/tables", json=TABLE).json())
        assert all("id" in m for m in made)
        # Games, tables and replays count alike: the fourth live one is refused, and nothing is made.
        for path, body in (("/api/games", GAME), ("/api/tables", TABLE)):
            response = client.post(path, json=body)
            assert response.status_code == 429 and "finish or close one" in response.json()["error"], response.text
        replay = client.post("/api/replays", content=b"{}", headers={"content-type": "application/json"})
        assert replay.status_code == 429
        assert len(store.sessions) == 3
        # Another client is not held up by this one.
        assert other.post("/api/games", json=GAME).status_code == 201
        # A game closed (or finished) frees its place.
        assert client.delete(f"/api/games/{made[0]['id']}", headers={"X-Player-Key": made[0]["key"]}).status_code == 204
        assert client.post("/api/games", json=GAME).status_code == 201
        # The rate: 5 creations at once (4 made so far, the refused ones cost nothing), then one every 2 s.
        client.delete(f"/api/games/{made[1]['id']}", headers={"X-Player-Key": made[1]["key"]})
        assert client.post("/api/games", json={**GAME, "mode": "watch", "seats": ["random"] * 4}).status_code == 201
        for game_id in [g for g, s in store.sessions.items() if s.owner == "testclient"]:
            store.close(game_id)
        refused = client.post("/api/games", json=GAME)
        assert refused.status_code == 429 and "one every 2 s" in refused.json()["error"]
        assert int(refused.headers["Retry-After"]) == 2
        now[0] += 2.0
        assert client.post("/api/games", json=GAME).status_code == 201
        assert client.post("/api/games", json=GAME).status_code == 429
    limits = TestClient(create_app()).get("/api/options").json()["limits"]
    assert limits["max_games_per_client"] == games.MAX_PER_CLIENT
    assert (limits["create_burst"], limits["create_every_s"]) == (games.CREATE_BURST, games.CREATE_EVERY)


def test_secrets_never_travel_in_a_url():
    with TestClient(create_app()) as client:
        game = client.post("/api/games", json=GAME).json()
        for path in (f"/api/games/{game['id']}", f"/api/games/{game['id']}/replay"):
            response = client.get(f"{path}?key={game['key']}")
            assert response.status_code == 403, response.text
    # The page sends the secret in a header only; "Save replay" fetches the replay and saves it from memory.
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    assert "key=" not in script and "encodeURIComponent(ui.key)" not in script
    assert 'init.headers["X-Player-Key"] = ui.key' in script and "URL.createObjectURL" in script


def test_a_learned_network_is_loaded_once_whatever_the_rules(monkeypatch):
    pytest.importorskip("torch")
    if "ppo-universal" not in agent_registry.names():
        pytest.skip("the shipped learned agent is not installed")
    from president_env.agents import universal

    loads = []
    load_universal = universal.load_universal
    monkeypatch.setattr(universal, "load_universal", lambda *a, **k: loads.append(a) or load_universal(*a, **k))
    with TestClient(create_app()) as client:
        store = client.app.state.store
        variants = [
            {"preset": "standard", "manches": 1},
            {"preset": "standard", "manches": 3},
            {"preset": "standard", "n_players": 5},
            {"preset": "big_table"},
            {"preset": "quebec", "manches": 2},
        ]
        made = []
        for i, variant in enumerate(variants):
            n = load_preset(variant["preset"]).n_players if "n_players" not in variant else variant["n_players"]
            seats = ["random"] * n
            seats[1] = "ppo-universal"
            response = client.post("/api/games", json={**variant, "mode": "watch", "seats": seats, "seed": i})
            assert response.status_code == 201, response.text
            made.append(store.sessions[response.json()["id"]].agents[1])
            # Once loaded, a learned agent is made at once for any rules it plays (no loader, never "busy").
            assert store.cache.ready("ppo-universal", load_preset("party"))
        assert len(loads) == 1, "the universal network was loaded more than once"
        weights = made[0]._layers[0][0]
        assert all(agent._layers[0][0] is weights for agent in made)  # one copy of the weights
        assert len({id(agent) for agent in made}) == len(made) and len({a.rules for a in made}) == len(made)
        # A retired per-table name is never offered; a request naming it gets a seat of the same one network.
        assert not set(agent_registry.RETIRED_AGENTS) & set(client.get("/api/options").json()["agents"])
        body = {"preset": "quebec", "mode": "watch", "seats": ["ppo-quebec"] + ["random"] * 3}
        response = client.post("/api/games", json=body)
        assert response.status_code == 201, response.text
        session = store.sessions[response.json()["id"]]
        assert session.agents[0]._layers[0][0] is weights and len(loads) == 1
        assert session.lineup[0] == "ppo-universal"


def test_a_body_that_is_not_json_is_refused_on_every_request_that_changes_something():
    with TestClient(create_app()) as client:
        host = client.post("/api/tables", json={**TABLE, "turn_clock": 10}).json()
        game = client.post("/api/games", json=GAME).json()
        form = {"content": "a=1", "headers": {"content-type": "application/x-www-form-urlencoded"}}
        for path, key in (
            (f"/api/games/{host['id']}/back", host["key"]),
            (f"/api/games/{game['id']}/hint", game["key"]),
            (f"/api/games/{game['id']}/pace", game["key"]),
        ):
            response = client.post(path, content=form["content"], headers={**form["headers"], "X-Player-Key": key})
            assert response.status_code == 415, (path, response.text)
        closing = client.request(
            "DELETE",
            f"/api/games/{game['id']}",
            content="x",
            headers={"X-Player-Key": game["key"], "content-type": "text/plain"},
        )
        assert closing.status_code == 415 and game["id"] in client.app.state.store.sessions
        # No body at all is fine where none is needed.
        assert client.post(f"/api/games/{game['id']}/hint", headers={"X-Player-Key": game["key"]}).status_code == 200
