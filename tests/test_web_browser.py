"""``president-web`` in a real browser: the system Chromium driven by Selenium (chromium-driver).

Plays two manches by clicking against ``heuristic-1`` opponents (the second one opens with the exchange,
told in words, and the card you give is seen on its way to your partner's seat; each ends with its summary),
asks for a hint, checks a screenshot of the table, then loads the game's replay and steps through it; resumes
a game from its URL (a reload, a second tab) and refuses it to a browser without its secret; shows the rules
page and offers only the agents that can play the chosen rules; plays 8 players at phone width (seat order,
the lit seat, Play and Pass on the first screen); watches 8 agents; seats four people in four Chromium
profiles at a table for friends of 8, who play one manche at once. ``PRESIDENT_WEB_SCREENSHOTS=docs`` keeps
the screenshots of ``docs/web.md``.
Skipped when Chromium, chromium-driver or Selenium are missing (``.ci/run`` installs them).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from web_helpers import first_move, live_server

from president_env.game.replay import loads

pytestmark = [pytest.mark.browser, pytest.mark.slow]

webdriver = pytest.importorskip("selenium.webdriver")
httpx = pytest.importorskip("httpx")
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("Chromium and chromium-driver are not installed", allow_module_level=True)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)


def chromium(width: int = 1100, height: int = 900):
    """A headless Chromium with a profile of its own (its own localStorage: one person), and that profile."""
    profile = tempfile.mkdtemp(prefix="president-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    except WebDriverException as err:
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"Chromium does not start here: {err.msg}")
    driver.set_page_load_timeout(30)
    return driver, profile


@pytest.fixture(scope="module")
def browser():
    driver, profile = chromium()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait(driver, condition, timeout=30):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def game_state(driver):
    return driver.execute_script("return ui.game")


def click_move(driver, move: dict, hand: list[str] | None = None, at_once: bool = False) -> None:
    """Click the cards of ``move`` in the hand (``hand``: the cards shown, else read from the page), then
    Play/Give, or Pass. ``at_once``: one script clicks them all (the page gets the same click events, in one
    WebDriver round trip instead of two per click)."""
    indices = []
    if move["kind"] != "pass":
        hand = hand or game_state(driver)["hand"]
        rank = move["rank"]
        indices = [i for i, card in enumerate(hand) if (card[:-1] if card != "JK" else "JK") == rank][: move["count"]]
        if len(indices) < move["count"]:  # wild 2s complete the play
            indices += [i for i, card in enumerate(hand) if card[:-1] == "2"][: move["count"] - len(indices)]
    button = "pass" if move["kind"] == "pass" else "play"
    if at_once:
        driver.execute_script(CLICK_ALL, indices, button)
        return
    for index in indices:
        click(driver, f'#hand .card[data-index="{index}"]')
    driver.find_element(By.ID, button).click()


CLICK_ALL = """
for (const i of arguments[0]) document.querySelector(`#hand .card[data-index="${i}"]`).click();
document.getElementById(arguments[1]).click();
"""


def click(driver, css: str) -> None:
    """Click an element the page may be drawing again (a poll's answer) at that moment."""
    for _ in range(5):
        try:
            driver.find_element(By.CSS_SELECTOR, css).click()
            return
        except StaleElementReferenceException:
            continue
    driver.find_element(By.CSS_SELECTOR, css).click()


SHOTS = os.environ.get("PRESIDENT_WEB_SCREENSHOTS")  # a folder (docs/) to keep pictures of the table in


def shoot(driver, name: str) -> bytes:
    """A screenshot once the card animations have ended (kept as ``name`` under ``PRESIDENT_WEB_SCREENSHOTS``)."""
    wait(driver, lambda d: d.execute_script("return document.getAnimations().every(a => a.playState !== 'running')"))
    png = driver.get_screenshot_as_png()
    if SHOTS:
        Path(SHOTS, name).write_bytes(png)
    return png


def fill_setup(driver, url: str, mode: str, preset: str, manches: int = 1, pace: float = 0) -> None:
    """The setup page with ``mode`` and ``preset`` chosen (their seats drawn), ``manches`` and the AI pace set."""
    driver.get(url + "/")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#seats select"))
    driver.find_element(By.CSS_SELECTOR, f"input[name=mode][value={mode}]").click()
    Select(driver.find_element(By.ID, "preset")).select_by_value(preset)
    n = {"big_table": 8}.get(preset, 4)
    selects = n - 1 if mode == "play" else n
    wait(
        driver,
        lambda d: d.execute_script(
            "return ui.rules && ui.rules.n_players === arguments[0] && "
            "document.querySelectorAll('#seats select').length === arguments[1]",
            n,
            selects,
        ),
    )
    manches_box = driver.find_element(By.ID, "manches")
    manches_box.clear()
    manches_box.send_keys(str(manches))
    driver.execute_script("document.getElementById('pace-setup').value = arguments[0]", str(pace))


def start_game(driver, url: str, preset: str, agent: str, manches: int = 1, seed: int = 11) -> dict:
    fill_setup(driver, url, "play", preset, manches)
    for select in driver.find_elements(By.CSS_SELECTOR, "#seats select"):
        Select(select).select_by_value(agent)
    driver.find_element(By.ID, "seed").send_keys(str(seed))
    driver.find_element(By.ID, "start").click()
    return wait(
        driver, lambda d: (s := game_state(d)) and s.get("table") and d.find_element(By.ID, "game").is_displayed() and s
    )


# In-page wait for the next turn of this browser's player at or after a version (or the summary, the end, a
# refused move): one WebDriver round trip per turn, the page checking every 20 ms; returns the game's view with
# ``summary`` (the end-of-manche summary is open) and ``error`` (the page's answer to a refused move).
NEXT_TURN = """
const after = arguments[0], done = arguments[arguments.length - 1];
(function check() {
  const g = ui.game, error = document.getElementById("move-error").textContent;
  const ready = g && g.table && (!g.friends || g.friends.started) && !ui.busy;
  if (ready && (ui.summaryOpen || g.over || error || (g.legal.length && g.version > after))) {
    done(Object.assign({}, g, { summary: ui.summaryOpen, error }));
  } else setTimeout(check, 20);
})();
"""


def play_until(driver, stop, deadline_s: float = 150, on_turn=None) -> dict:
    """Click moves (the first listed play, else pass) until ``stop(state)``, closing each end-of-manche summary;
    ``on_turn(state)`` may act first (True: it moved). The page itself waits for each turn (:data:`NEXT_TURN`)."""
    driver.set_script_timeout(deadline_s)
    deadline = time.monotonic() + deadline_s
    after = -1
    while True:
        assert time.monotonic() < deadline, "the game did not get there in time"
        state = driver.execute_async_script(NEXT_TURN, after)
        if stop(state):
            return state
        if state["summary"]:
            driver.find_element(By.ID, "continue").click()
            continue
        if state["over"]:
            return state
        after = state["version"]
        if on_turn is not None and on_turn(state):
            continue
        legal = state["legal"]
        plays = [m for m in legal if m["kind"] != "pass"]
        click_move(driver, plays[0] if plays else legal[0], state["hand"])


# Hold the flight of a given card halfway; the heights of its centre, of the partner's seat and of your hand.
HOLD_FLIGHT = """
const node = document.querySelector(".card.flying"), flight = node.getAnimations()[0];
flight.pause();
flight.currentTime = 300;
const middle = (el) => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; };
return { card: middle(node), hand: middle(document.getElementById("hand")),
         seat: middle(document.querySelector(`#opponents .seat[data-player="${arguments[0]}"]`)) };
"""


def test_play_two_manches_with_exchange_then_replay(browser, tmp_path):
    with live_server() as (url, app):
        driver = browser
        driver.set_window_size(1100, 900)
        start_game(driver, url, "standard", "heuristic-1", manches=2, seed=14)  # you give back in manche 2
        shots = {}
        tried = {"illegal": False, "keys": False, "hint": False, "give": False}
        summaries = []

        def on_turn(state) -> bool:
            table = state["table"]
            if (
                "table" not in shots
                and table["phase"] == "play"
                and len(state["hand"]) >= 8
                and table["trick"]["count"]
            ):
                shots["table"] = shoot(driver, "web-table.png")
            exchange = driver.find_element(By.ID, "exchange")
            if table["manche"] == 1 and exchange.is_displayed() and "exchange" not in shots:
                # In words: the cards received and those to give back, or, once done, both with suits.
                text = exchange.text
                assert ("You received" in text and "Give back" in text) or re.search(
                    r"Exchange with .*: you gave .*[♣♦♥♠]; you received .*[♣♦♥♠]", text
                ), text
                shots["exchange"] = shoot(driver, "web-exchange.png")
            if table["phase"] == "exchange" and state["legal"]:
                # The card you give flies from your hand to your partner's seat (the flight ends, then is counted).
                # Slowed down 20 times and held halfway, it lies between your hand and your partner's seat.
                gives = driver.execute_script("return ui.animated.gives")
                driver.execute_cdp_cmd("Animation.enable", {})
                driver.execute_cdp_cmd("Animation.setPlaybackRate", {"playbackRate": 0.05})
                click_move(driver, state["legal"][0])
                wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".card.flying"))
                where = driver.execute_script(HOLD_FLIGHT, state["exchange"]["partner"])
                assert where["seat"] < where["card"] < where["hand"], where
                shoot(driver, "web-give.png")
                driver.execute_cdp_cmd("Animation.setPlaybackRate", {"playbackRate": 1})
                driver.execute_script("document.querySelector('.card.flying').getAnimations()[0].play()")
                wait(driver, lambda d: d.execute_script("return ui.animated.gives") == gives + 1)
                tried["give"] = True
                return True
            if not tried["hint"]:
                driver.find_element(By.ID, "hint").click()
                box = wait(
                    driver,
                    lambda d: "would" in d.find_element(By.ID, "hint-box").text and d.find_element(By.ID, "hint-box"),
                )
                assert state["version"] == game_state(driver)["version"]  # a hint plays nothing
                assert driver.find_elements(By.CSS_SELECTOR, "#hand .card.hinted")  # its cards are outlined
                shoot(driver, "web-hint.png")
                tried["hint"] = bool(box)
            if not tried["illegal"] and table["trick"]["count"] == 0 and table["phase"] == "play":
                ranks = {}
                for i, card in enumerate(state["hand"]):
                    ranks.setdefault(card[:-1], i)
                if len(ranks) >= 2:
                    first, second = list(ranks.values())[:2]
                    driver.find_element(By.CSS_SELECTOR, f'#hand .card[data-index="{first}"]').click()
                    driver.find_element(By.CSS_SELECTOR, f'#hand .card[data-index="{second}"]').click()
                    driver.find_element(By.ID, "play").click()
                    error = wait(driver, lambda d: d.find_element(By.ID, "move-error").text)
                    assert "one rank" in error
                    assert game_state(driver)["version"] == state["version"]
                    driver.find_element(By.ID, "clear").click()
                    tried["illegal"] = True
            singles = [m for m in state["legal"] if m["kind"] == "play" and m["count"] == 1 and m["rank"] != "JK"]
            if not tried["keys"] and singles:
                body = driver.find_element(By.TAG_NAME, "body")
                body.send_keys("0" if singles[0]["rank"] == "10" else singles[0]["rank"].lower())
                assert len(driver.find_elements(By.CSS_SELECTOR, "#hand .card.selected")) == 1
                body.send_keys("\ue007")  # Enter
                tried["keys"] = True
                return True
            return False

        def summary_open(state) -> bool:
            if driver.execute_script("return ui.summaryOpen"):
                text = driver.find_element(By.ID, "summary").text
                summaries.append(text)
                # The whole last trick, one entry per move from the play that led it, each with its cards.
                trick = driver.execute_script("return ui.game.results[ui.seenResults].last_trick")
                shown = driver.find_elements(By.CSS_SELECTOR, "#summary .last-trick .trick-move")
                assert trick and len(shown) == len(trick), (trick, text)
                for move, node in zip(trick, shown):
                    assert ("played" if move["kind"] == "play" else "passed") in node.text
                    assert len(node.find_elements(By.CSS_SELECTOR, ".card")) == len(move["cards"])
                if len(summaries) == 1:
                    assert "Manche 1 is over" in text and "Last trick" in text and "Role earned" in text
                    shoot(driver, "web-summary.png")
            return False

        state = play_until(
            driver,
            lambda s: summary_open(s) or s["over"] and not driver.execute_script("return ui.summaryOpen"),
            on_turn=on_turn,
        )
        assert all(tried.values()), tried
        # Plays land on the trick, the cards received in the exchange arrive in the hand: each animation ran.
        animated = driver.execute_script("return ui.animated")
        assert animated["plays"] > 0 and animated["arrivals"] >= 1 and animated["gives"] >= 1, animated
        assert "exchange" in shots and len(summaries) >= 2
        assert len(state["results"]) >= 2
        # The log tells what each move did, as the game's events say: going out, the trick won, the exchange over.
        log = driver.execute_script("return ui.log.map(describe)")
        events = driver.execute_script("return ui.log")
        for line, event in zip(log, events):
            assert (" — out " in line) == event["went_out"], (line, event)
            assert (" won the trick" in line) == (event["trick_won_by"] is not None), (line, event)
            assert line.endswith(" — exchange over") == event["exchange_over"], (line, event)
        assert any(event["went_out"] for event in events) and sum(event["exchange_over"] for event in events) == 1
        assert any(re.fullmatch(r".+: (played|pass) .*— .+ won the trick", line) for line in log), log
        wait(driver, lambda d: "win" in d.find_element(By.ID, "results").text)
        # The final table: every player with the role they earned, not a fresh deal.
        roles = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#opponents .seat .role")]
        assert len(roles) == 4 and "no role yet" not in roles
        driver.execute_script("document.getElementById('results').scrollIntoView({block: 'end'})")
        shoot(driver, "web-final.png")
        check_screenshot(shots["table"])

        # "Save replay" fetches the replay with the secret in a header and saves it from memory: no URL holds it.
        key = driver.execute_script("return ui.key")
        assert key not in driver.find_element(By.ID, "download").get_attribute("href")
        driver.execute_script(
            "const make = URL.createObjectURL; window.savedReplay = null;"
            "URL.createObjectURL = (blob) => { blob.text().then((t) => { window.savedReplay = t; });"
            " return make(blob); };"
        )
        driver.find_element(By.ID, "download").click()
        replay_text = wait(driver, lambda d: d.execute_script("return window.savedReplay"))
        assert (
            loads(replay_text).actions
            == loads(httpx.get(f"{url}/api/games/{state['id']}/replay", headers={"X-Player-Key": key}).text).actions
        )
        # The replay of the game steps through every move.
        path = tmp_path / "game.json"
        path.write_text(replay_text, encoding="utf-8")
        driver.find_element(By.ID, "replay-file").send_keys(str(path))
        wait(driver, lambda d: (s := game_state(d)) and s["mode"] == "replay" and s["loaded"])
        assert driver.execute_script("return ui.frameCount") == state["version"] + 1
        assert "move 0 /" in driver.find_element(By.ID, "frame-no").text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#opponents .seat")) == 4
        assert len(driver.find_elements(By.CSS_SELECTOR, "#hands .card")) == 52  # every hand is shown in a replay
        for _ in range(3):
            driver.find_element(By.ID, "forward").click()
        wait(driver, lambda d: d.find_element(By.ID, "frame-no").text.startswith("move 3 /"))
        driver.find_element(By.ID, "back").click()
        wait(driver, lambda d: d.find_element(By.ID, "frame-no").text.startswith("move 2 /"))
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue014")  # the right arrow key steps forward
        wait(driver, lambda d: d.find_element(By.ID, "frame-no").text.startswith("move 3 /"))
        driver.find_element(By.ID, "last").click()
        wait(driver, lambda d: "game over" in d.find_element(By.ID, "status").text)


def test_game_url_resumes_and_the_rules_page(browser):
    with live_server() as (url, app):
        driver = browser
        driver.set_window_size(1100, 900)
        state = start_game(driver, url, "standard", "heuristic-2")
        game_url = driver.current_url
        assert f"#game={state['id']}" in game_url
        key = driver.execute_script("return ui.key")
        assert key and key not in game_url  # the secret stays in this browser, not in the link
        state = play_until(driver, lambda s: bool(s["legal"]))
        driver.refresh()  # a reload resumes the same game, same hand
        again = wait(driver, lambda d: (s := game_state(d)) and s.get("hand") and s)
        assert again["id"] == state["id"] and again["hand"] == state["hand"]
        first_tab = driver.current_window_handle
        driver.switch_to.new_window("tab")  # so does a second tab of the same browser
        driver.get(game_url)
        again = wait(driver, lambda d: (s := game_state(d)) and s.get("hand") and s)
        assert again["id"] == state["id"] and again["hand"] == state["hand"] and again["legal"] == state["legal"]
        driver.close()
        driver.switch_to.window(first_tab)
        # The rules page of the table, in sentences.
        driver.find_element(By.ID, "nav-rules").click()
        lines = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#rules-lines li"))
        assert len(lines) == 17 and any("3 of clubs" in line.text for line in lines)
        shoot(driver, "web-rules.png")
        driver.find_element(By.ID, "rules-close").click()
        # The setup offers the agents that can play the chosen rules (the family preset starts with roles): the one
        # learned agent where installed, never a retired per-table name.
        if "ppo-universal" in driver.execute_script("return ui.options.agents"):
            driver.find_element(By.ID, "nav-setup").click()
            wait(driver, lambda d: d.switch_to.alert).accept()  # "Leave this game?" (it stays in "Your games")
            Select(driver.find_element(By.ID, "preset")).select_by_value("family")
            wait(driver, lambda d: d.execute_script("return ui.rules.initial_roles !== 'none'"))
            offered = {o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#seats select option")}
            assert "heuristic-3" in offered and "ppo-universal" in offered
            assert not offered & {"ppo-family", "ppo-standard-4p", "ppo-standard-4p-long", "search-ppo-standard-4p"}
        # Another browser (no secret) with the same link cannot see or play the game.
        driver.execute_script("localStorage.clear()")
        driver.get(url + "/")
        # The page's start is asynchronous: wait until it has drawn the setup (its hash listener is then in
        # place) before the link's fragment-only navigation, which a busy machine could otherwise interleave.
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#seats select"))
        driver.get(game_url)
        error = wait(driver, lambda d: d.find_element(By.ID, "setup-error").text)
        assert "another browser" in error
        assert app.state.store.sessions[state["id"]].version == state["version"]


def test_eight_players_at_phone_width(browser):
    with live_server() as (url, app):
        driver = browser
        driver.set_window_size(390, 844)
        try:
            state = start_game(driver, url, "big_table", "heuristic-1")
            rects = driver.execute_script(
                "return [...document.querySelectorAll('#opponents .seat')].map(s => "
                "({seat: Number(s.dataset.seat), x: s.getBoundingClientRect().x, y: s.getBoundingClientRect().y}))"
            )
            assert len(rects) == 8
            # Around the table in seat order: you at the bottom, the next seat on your left, and so on clockwise.
            boxes = {r["seat"]: r for r in rects}
            me = next(p for p in state["table"]["players"] if p["player"] == state["human"])["seat"]
            bottom = boxes[me]
            assert bottom["y"] >= max(b["y"] for b in boxes.values()) - 1
            assert boxes[(me + 2) % 8]["x"] < bottom["x"] < boxes[(me + 6) % 8]["x"]
            assert boxes[(me + 4) % 8]["y"] <= min(b["y"] for b in boxes.values()) + 1
            state = play_until(driver, lambda s: bool(s["legal"]) and s["table"]["trick"]["count"] > 0)
            lit = driver.find_elements(By.CSS_SELECTOR, "#opponents .seat.turn")
            assert len(lit) == 1 and lit[0].get_attribute("data-player") == str(state["human"])
            # Play and Pass are on the first screen, and the page does not run off to the side.
            for name in ("play", "pass"):
                rect = driver.execute_script(
                    f"return document.getElementById('{name}').getBoundingClientRect().toJSON()"
                )
                assert 0 <= rect["top"] and rect["bottom"] <= driver.execute_script("return window.innerHeight"), (
                    name,
                    rect,
                )
            assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
            shoot(driver, "web-phone-8p.png")
            state = play_until(driver, lambda s: s["over"] and not driver.execute_script("return ui.summaryOpen"))
            assert state["over"] and state["winner"] is not None
        finally:
            driver.set_window_size(1100, 900)


def test_watch_eight_agents_on_the_table(browser):
    with live_server() as (url, app):
        driver = browser
        driver.set_window_size(1100, 900)
        fill_setup(driver, url, "watch", "big_table", pace=0.05)
        driver.find_element(By.ID, "start").click()
        wait(
            driver,
            lambda d: (
                (s := game_state(d)) and s.get("mode") == "watch" and d.execute_script("return ui.frameCount") > 40
            ),
        )
        assert len(driver.find_elements(By.CSS_SELECTOR, "#opponents .seat")) == 8
        assert len(driver.find_elements(By.CSS_SELECTOR, "#hands .player")) == 8
        shoot(driver, "web-watch.png")


def biggest_play(legal: list[dict]) -> dict:
    """The play of the most cards (the first listed of them), else pass: a quick way to the end of a manche."""
    plays = [m for m in legal if m["kind"] != "pass"]
    return max(plays, key=lambda m: m["count"]) if plays else legal[0]


def play_seat(driver, shot: str | None = None, timeout: float = 120) -> dict:
    """Play this browser's seat by clicking until the game is over and its summary closed; returns the seat, the
    hand first shown (its deal: one manche has no exchange), the moves made and the final names around the table.
    ``shot``: the screenshot to take at the first turn with cards on the trick."""
    driver.set_script_timeout(timeout)
    version, first, moves = -1, None, 0
    while True:
        turn = driver.execute_async_script(NEXT_TURN, version)
        assert not turn["error"], turn["error"]
        if turn["summary"]:
            driver.find_element(By.ID, "continue").click()
            continue
        if turn["over"]:
            names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#opponents .seat .name")]
            roles = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#opponents .seat .role")]
            return {"human": turn["human"], "deal": first, "moves": moves, "names": names, "roles": roles}
        first = first or turn["hand"]
        if shot and turn["table"]["trick"]["count"]:
            shoot(driver, shot)
            shot = None
        click_move(driver, biggest_play(turn["legal"]), turn["hand"], at_once=True)
        version, moves = turn["version"], moves + 1


def join_table(driver, link: str, name: str) -> int:
    """A friend opens the shared link in their browser and takes a seat; returns their player."""
    driver.get(link)
    wait(driver, lambda d: d.find_element(By.ID, "join").is_displayed())
    driver.find_element(By.ID, "join-name").send_keys(name)
    driver.find_element(By.ID, "join-button").click()
    return wait(driver, lambda d: (s := game_state(d)) and s.get("friends") and s)["human"]


def test_a_table_for_friends_four_browsers_and_four_agents(browser):
    """Four people in four Chromium profiles (four secrets) at a table of 8: the host sets it up and shares its
    link, three friends open it and take seats, ``heuristic-1`` fills the other four; the four play at once, each
    browser showing only its own hand (its deal, checked against the replay) and the final table with every
    name."""
    people = ("Alice", "Bob", "Carol", "Dan")
    with live_server() as (url, app), ThreadPoolExecutor(max_workers=4) as pool:
        starting = [pool.submit(chromium) for _ in people[1:]]  # the friends' browsers start while the host sets up
        try:
            host = browser
            host.set_window_size(1100, 900)
            fill_setup(host, url, "friends", "big_table")
            name = host.find_element(By.ID, "my-name")
            name.clear()
            name.send_keys(people[0])
            host.find_element(By.ID, "start").click()
            link = wait(host, lambda d: d.find_element(By.ID, "share").get_attribute("value"))
            game_id = game_state(host)["id"]
            assert link == f"{url}/#table={game_id}"
            drivers = [host] + [future.result()[0] for future in starting]
            seated = list(pool.map(join_table, drivers[1:], [link] * 3, people[1:]))
            assert sorted(seated) == [1, 2, 3]
            lobby = wait(
                host,
                lambda d: (
                    len(d.find_elements(By.CSS_SELECTOR, "#lobby-seats li")) == 8
                    and all(p in d.find_element(By.ID, "lobby").text for p in people)
                    and d.find_element(By.ID, "lobby").text
                ),
            )
            assert lobby.count("empty: an agent will play") == 4
            shoot(host, "web-friends-lobby.png")
            for driver in drivers[1:]:  # only the host starts; everyone sees the host's turn clock
                assert not driver.find_element(By.ID, "table-start").is_displayed()
                assert "Turn clock: 60 s (set by the host)" in driver.find_element(By.ID, "lobby-clock").text
            Select(host.find_element(By.ID, "table-agent")).select_by_value("heuristic-1")
            host.find_element(By.ID, "table-start").click()
            started = time.perf_counter()
            shots = [None, "web-friends-table.png", None, None]
            seats = list(pool.map(play_seat, drivers, shots))
            print(f"\n4 browsers and 4 agents played a manche of 8 in {time.perf_counter() - started:.1f} s")
        finally:
            for future in starting:  # every friend's browser that started is closed, whatever happened
                if future.exception() is None:
                    driver, profile = future.result()
                    driver.quit()
                    shutil.rmtree(profile, ignore_errors=True)
        key = host.execute_script("return ui.key")
        replay = loads(httpx.get(f"{url}/api/games/{game_id}/replay", headers={"X-Player-Key": key}).text)
    assert [replay.players[p] for p in [0] + seated] == list(people) and replay.players[4:] == ["heuristic-1"] * 4
    assert sorted(seat["human"] for seat in seats) == [0, 1, 2, 3]
    for seat in seats:
        player = seat["human"]
        assert sorted(seat["deal"]) == sorted(replay.deals[0][player]) and seat["moves"] > 0  # its own hand only
        names, others = seat["names"], [p for p in people if p != replay.players[player]]
        assert names.count("You") == 1 and set(others) <= set(names) and sum("heuristic-1" in n for n in names) == 4
        assert len(seat["roles"]) == 8 and "no role yet" not in seat["roles"]  # the final table


def check_screenshot(png: bytes | None) -> None:
    """The table is drawn (the green felt in its wooden rim) and the hand shows cards (light faces, red ink)."""
    assert png, "no screenshot was taken during play"
    image_module = pytest.importorskip("PIL.Image")
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    width, height = image.size
    assert width >= 600 and height >= 400
    pixels = np.asarray(image, dtype=np.int16).reshape(-1, 3)
    r, g, b = pixels.T
    felt = int(((g > 80) & (r < 60) & (b < 90) & (g > r + 40)).sum())
    wood = int(((abs(r - 0x5B) < 12) & (abs(g - 0x3A) < 12) & (abs(b - 0x1E) < 12)).sum())
    card = int(((r > 245) & (g > 245) & (b > 235)).sum())
    red = int(((r > 170) & (g < 60) & (b < 70)).sum())
    assert felt > 0.08 * len(pixels), "the green table is not drawn"
    assert wood > 0.005 * len(pixels), "the table's wooden rim is not drawn"
    assert card > 0.01 * len(pixels), "no card faces are visible"
    assert red > 50, "no red suits are visible"


def test_the_turn_clock_marks_a_friend_away_until_they_are_back(browser):
    """A friend's browser at a table whose host (a script) set a 10 s turn clock, on a fake clock: the lobby says
    it; past the clock on the friend's turn the page says an agent plays for them, and *I'm back* ends it."""
    now = [0.0]
    with live_server(clock=lambda: now[0]) as (url, app), httpx.Client(base_url=url, timeout=30) as http:
        table = {"preset": "standard", "manches": 1, "seed": 9, "pace": 0, "name": "Ann", "turn_clock": 10}
        created = http.post("/api/tables", json=table).json()
        game_id, host_key = created["id"], {"X-Player-Key": created["key"]}
        browser.set_window_size(1100, 900)
        player = join_table(browser, f"{url}/#table={game_id}", "Bob")
        lobby = wait(browser, lambda d: d.find_element(By.ID, "lobby-clock").text)
        assert "Turn clock: 10 s (set by the host)" in lobby
        assert (
            http.post(f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"}, headers=host_key).status_code
            == 200
        )
        store = app.state.store
        deadline = time.monotonic() + 60
        while store.sessions[game_id].game.current_player != player or not browser.execute_script(
            "return ui.game.legal.length"
        ):
            assert time.monotonic() < deadline, "the friend's turn did not come"
            view = http.get(f"/api/games/{game_id}", headers=host_key).json()
            if view["legal"]:
                http.post(f"/api/games/{game_id}/move", json=first_move(view), headers=host_key)
            time.sleep(0.02)
        assert not browser.find_element(By.ID, "away-note").is_displayed()
        now[0] += 11  # the friend's page is open, polling, but they do not play
        note = wait(
            browser, lambda d: d.find_element(By.ID, "away-note").is_displayed() and d.find_element(By.ID, "away-note")
        )
        assert "did not play within the turn clock (10 s)" in note.text
        assert store.sessions[game_id].seats[player].idle
        browser.find_element(By.ID, "im-back").click()
        wait(browser, lambda d: not d.find_element(By.ID, "away-note").is_displayed())
        assert not store.sessions[game_id].seats[player].idle
