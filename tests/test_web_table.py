"""What the browser table is sent: the manche a finished game shows, illegal moves in the player's words, the icon.

(What the page draws from it is checked in Chromium: ``tests/test_web_browser_table.py``.)
"""

from __future__ import annotations

import re
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from web_helpers import OPPONENTS, SETUP, Keyed, first_move, play_game  # noqa: E402

from president_env.apps.web.server import create_app  # noqa: E402
from president_env.core.cards import RANK_NAMES  # noqa: E402


@pytest.fixture
def client():
    with TestClient(create_app()) as test_client:
        yield Keyed(test_client)


def test_a_finished_game_shows_its_last_manche(client):
    """Not one past it ("Manche 3 of 2"): the final table is the last manche's, decisive or not, in play and watch."""
    # Seed 5: players 0 and 1 tie on 5 points after two manches; a decisive third manche breaks the tie.
    _, tied = play_game(client, {**SETUP, "manches": 2, "seed": 5, "seats": OPPONENTS})
    _, plain = play_game(client, {**SETUP, "manches": 2, "seed": 0, "seats": OPPONENTS})
    assert [r["decisive"] for r in tied["results"]] == [False, False, True]
    assert tied["table"]["manche"] == 2 and tied["table"]["decisive"]
    assert [r["decisive"] for r in plain["results"]] == [False, False]
    assert plain["table"]["manche"] == 1 and not plain["table"]["decisive"]
    watch = client.post("/api/games", json={**SETUP, "mode": "watch", "seats": ["heuristic-1"] * 4}).json()
    deadline = time.monotonic() + 30
    while not watch["over"]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
        watch = client.get(f"/api/games/{watch['id']}?since={watch['frame_count'] - 1}").json()
    last = watch["frames"][-1]
    assert last["over"] and last["table"]["manche"] == 0 and last["table"]["phase"] == "over"


def test_illegal_moves_are_told_in_the_players_words(client):
    """A pass when you lead and a play that does not beat the trick: "you lead", the rank on the table; never
    the engine's "you leads" or "under the current rank order"."""
    view = client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()
    game_id, told = view["id"], {}
    deadline = time.monotonic() + 60
    while not view["over"] and len(told) < 2:
        assert time.monotonic() < deadline
        if not view["legal"]:
            time.sleep(0.01)
            view = client.get(f"/api/games/{game_id}").json()
            continue
        trick = view["table"]["trick"]
        if trick["rank"] is None and "lead" not in told:
            told["lead"] = refused(client, game_id, view, "pass", [])
        elif trick["rank"] is not None and "beat" not in told:
            below = RANK_NAMES.index(trick["rank"])  # the standard order: 3 lowest, 2 highest; no revolution yet
            for rank in RANK_NAMES[:below]:
                cards = [c for c in view["hand"] if c[:-1] == rank][: trick["count"]]
                if len(cards) == trick["count"] and rank != "2" and not view["table"]["revolution"]:
                    told["beat"] = refused(client, game_id, view, "play", cards), rank, trick["rank"]
                    break
        view = client.post(f"/api/games/{game_id}/move", json=first_move(view)).json()
    assert told["lead"] == "you lead this trick: play cards of one rank (you may not pass)"
    message, rank, on_table = told["beat"]
    assert message == f"{rank} does not beat the {on_table} on the table"
    for text in (told["lead"], message):
        assert not re.search(r"player_\d|you leads|rank order", text)


def test_a_move_other_than_a_give_in_the_exchange_is_told_what_to_do(client):
    # Drawn roles, seed 6: you are the Président and give back two cards first.
    setup = {**SETUP, "yaml": "initial_roles: draw", "seed": 6, "seats": ["human"] + ["heuristic-1"] * 3}
    view = client.post("/api/games", json=setup).json()
    assert view["table"]["phase"] == "exchange" and view["exchange"]["gives_left"] == 2
    expected = "it is the exchange: give back 2 cards of your choice (select one, then Give)"
    assert refused(client, view["id"], view, "pass", []) == expected
    assert refused(client, view["id"], view, "play", view["hand"][:1]) == expected


def refused(client, game_id: str, view: dict, move: str, cards: list[str]) -> str:
    """The error of a move the server refuses, checked to change nothing."""
    body = {"version": view["version"], "move": move, "cards": cards}
    response = client.post(f"/api/games/{game_id}/move", json=body)
    assert response.status_code == 400, response.text
    assert client.get(f"/api/games/{game_id}").json()["version"] == view["version"]
    return response.json()["error"]


def test_the_page_has_an_icon(client):
    page = client.get("/").text
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert icon, "the page names no icon: the browser asks for /favicon.ico and gets 404"
    response = client.get(icon.group(1))
    assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
    assert response.text.lstrip().startswith("<svg")
