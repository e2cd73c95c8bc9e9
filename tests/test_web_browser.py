"""``president-web`` in a real browser: the system Chromium driven by Selenium (chromium-driver).

Plays two manches by clicking against ``heuristic-1`` opponents (the second one opens with the
exchange), checks a screenshot of the table, then loads the game's replay and steps through it.
Skipped when Chromium, chromium-driver or Selenium are missing (``.ci/run`` installs them).
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from web_helpers import live_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

webdriver = pytest.importorskip("selenium.webdriver")
httpx = pytest.importorskip("httpx")
from selenium.common.exceptions import WebDriverException  # noqa: E402
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


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="president-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1100,900")
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    except WebDriverException as err:
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"Chromium does not start here: {err.msg}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait(driver, condition, timeout=30):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def game_state(driver):
    return driver.execute_script("return ui.game")


def click_move(driver, move: dict) -> None:
    """Click the cards of ``move`` in the hand, then Play/Give, or Pass."""
    if move["kind"] == "pass":
        driver.find_element(By.ID, "pass").click()
        return
    hand = game_state(driver)["hand"]
    rank = move["rank"]
    indices = [i for i, card in enumerate(hand) if (card[:-1] if card != "JK" else "JK") == rank][: move["count"]]
    if len(indices) < move["count"]:  # wild 2s complete the play
        indices += [i for i, card in enumerate(hand) if card[:-1] == "2"][: move["count"] - len(indices)]
    for index in indices:
        driver.find_element(By.CSS_SELECTOR, f'#hand .card[data-index="{index}"]').click()
    driver.find_element(By.ID, "play").click()


def test_play_two_manches_with_exchange_then_replay(browser, tmp_path):
    with live_server() as (url, app):
        driver = browser
        driver.get(url + "/")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#seats select")) == 3)
        Select(driver.find_element(By.ID, "preset")).select_by_value("standard")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#seats select")) == 3)
        for select in driver.find_elements(By.CSS_SELECTOR, "#seats select"):
            Select(select).select_by_value("heuristic-1")
        manches = driver.find_element(By.ID, "manches")
        manches.clear()
        manches.send_keys("2")
        driver.find_element(By.ID, "seed").send_keys("11")
        driver.execute_script("document.getElementById('pace-setup').value = '0'")
        driver.find_element(By.ID, "start").click()
        wait(driver, lambda d: game_state(d) is not None and d.find_element(By.ID, "game").is_displayed())

        screenshot = later = None
        tried_illegal = exchanged = used_keys = False
        deadline = time.monotonic() + 150
        while not game_state(driver)["over"]:
            assert time.monotonic() < deadline, "the game did not finish in time"
            state = wait(driver, lambda d: (s := game_state(d)) and (s["legal"] or s["over"]) and s)
            if state["over"]:
                break
            version = state["version"]
            if state["table"]["phase"] == "exchange":
                exchanged = True
            if screenshot is None and state["table"]["phase"] == "play" and len(state["hand"]) >= 8:
                screenshot = driver.get_screenshot_as_png()
            table = state["table"]
            if later is None and table["manche"] == 1 and table["trick"]["count"] and len(state["hand"]) >= 6:
                later = driver.get_screenshot_as_png()  # the second manche: roles, the exchange, the first results
            legal = state["legal"]
            if not tried_illegal and state["table"]["trick"]["count"] == 0 and state["table"]["phase"] == "play":
                # Two cards of different ranks: refused, with the reason shown, and nothing changes.
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
                    assert game_state(driver)["version"] == version
                    driver.find_element(By.ID, "clear").click()
                    tried_illegal = True
            plays = [m for m in legal if m["kind"] != "pass"]
            singles = [m for m in plays if m["kind"] == "play" and m["count"] == 1 and m["rank"] != "JK"]
            if not used_keys and singles:
                # The keyboard: the rank's key selects a card of it, Enter plays.
                body = driver.find_element(By.TAG_NAME, "body")
                body.send_keys("0" if singles[0]["rank"] == "10" else singles[0]["rank"].lower())
                assert len(driver.find_elements(By.CSS_SELECTOR, "#hand .card.selected")) == 1
                body.send_keys("\ue007")  # Enter
                used_keys = True
            else:
                click_move(driver, plays[0] if plays else legal[0])
            wait(driver, lambda d, v=version: game_state(d)["version"] > v or game_state(d)["over"])

        state = game_state(driver)
        assert tried_illegal and used_keys
        assert exchanged or any(r["manche"] == 0 for r in state["results"])
        assert len(state["results"]) >= 2
        wait(driver, lambda d: "win" in d.find_element(By.ID, "results").text)
        assert driver.find_elements(By.CSS_SELECTOR, "#results table tr")

        check_screenshot(screenshot)
        target = os.environ.get("PRESIDENT_WEB_SCREENSHOT")  # where to keep a picture of the table (docs/)
        if target:
            Path(target).write_bytes(later or screenshot)

        # At phone width the page fits the screen: nothing runs off to the side.
        driver.set_window_size(390, 844)
        wide = driver.execute_script(
            "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > "
            "window.innerWidth + 1).map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5)"
        )
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), wide
        driver.set_window_size(1100, 900)

        # The exchange of the second manche was shown to the player (what was received and given).
        replay_text = httpx.get(f"{url}/api/games/{state['id']}/replay").text
        path = tmp_path / "game.json"
        path.write_text(replay_text, encoding="utf-8")
        driver.find_element(By.ID, "replay-file").send_keys(str(path))
        wait(driver, lambda d: (s := game_state(d)) and s["mode"] == "replay")
        frames = driver.execute_script("return ui.frames.length")
        assert frames == state["version"] + 1
        assert "move 0 /" in driver.find_element(By.ID, "frame-no").text
        # Every hand is shown in a replay.
        assert len(driver.find_elements(By.CSS_SELECTOR, "#opponents .player")) == 4
        assert len(driver.find_elements(By.CSS_SELECTOR, "#opponents .card")) == 52
        for _ in range(3):
            driver.find_element(By.ID, "forward").click()
        assert driver.find_element(By.ID, "frame-no").text.startswith("move 3 /")
        driver.find_element(By.ID, "back").click()
        assert driver.find_element(By.ID, "frame-no").text.startswith("move 2 /")
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue014")  # the right arrow key steps forward
        assert driver.find_element(By.ID, "frame-no").text.startswith("move 3 /")
        driver.find_element(By.ID, "last").click()
        assert "game over" in driver.find_element(By.ID, "status").text


def check_screenshot(png: bytes | None) -> None:
    """The table is drawn (the green felt) and the hand shows cards (light card faces with red and dark ink)."""
    assert png, "no screenshot was taken during play"
    image_module = pytest.importorskip("PIL.Image")
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    width, height = image.size
    assert width >= 600 and height >= 400
    pixels = np.asarray(image, dtype=np.int16).reshape(-1, 3)
    r, g, b = pixels.T
    felt = int(((g > 80) & (r < 60) & (b < 90) & (g > r + 40)).sum())
    card = int(((r > 245) & (g > 245) & (b > 235)).sum())
    red = int(((r > 170) & (g < 60) & (b < 70)).sum())
    assert felt > 0.2 * len(pixels), "the green table is not drawn"
    assert card > 0.01 * len(pixels), "no card faces are visible"
    assert red > 50, "no red suits are visible"
