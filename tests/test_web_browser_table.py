"""What a player sees at the browser table, in Chromium at desktop (1100x900) and phone (390x844) width.

One server and one browser for the module. The page itself sets up each game (its setup form and ``startGame``)
and plays the human's moves (the first listed play, else pass, as ``tests/web_helpers.first_move``) through its own
``sendMove``, in one WebDriver round trip per game. Checked: a finished game's manche label, the standings and
the end-of-manche summary fit a phone (the totals in sight), a decisive manche is explained, opponents are named
by their agent, the status line clears the top seat, the log numbers moves from the start, every card of a fanned
hand shows its rank and suit, the exchange sentence of a low role, a hint cleared by a give and shown in %,
"New game" asks before leaving a game and lists it (Back returns to it), the lobby offers the agents of the
table's rules after a reload, a friend does not see the host's pace controls, and a refused game URL says why once.
"""

from __future__ import annotations

import re
import shutil

import pytest
from web_helpers import OPPONENTS, live_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from test_web_browser import chromium, shoot, wait  # noqa: E402  (skips the module where Chromium is missing)

DESKTOP, PHONE = (1100, 900), (390, 844)

# The setup form filled and submitted by the page (arguments[0]: mode, preset or yaml, manches, seed, pace, human,
# seats, name); answers the new game's id.
CREATE = """
const setup = arguments[0], done = arguments[arguments.length - 1];
(async () => {
  document.querySelector(`input[name=mode][value=${setup.mode}]`).checked = true;
  $("yaml").value = setup.yaml || "";
  $("preset").value = setup.preset || "standard";
  await loadRules();
  $("manches").value = setup.manches;
  $("seed").value = setup.seed;
  $("pace-setup").value = setup.pace;
  if (setup.mode === "play") { $("seat").value = setup.human || 0; drawSeats(); }
  (setup.seats || []).forEach((name, i) => { const s = $(`agent-${i}`); if (s) s.value = name; });
  if (setup.name) $("my-name").value = setup.name;
  await startGame();
  done(ui.game && ui.game.id ? ui.game.id : $("setup-error").textContent);
})();
"""

# The human's moves through the page until the game is over (each end-of-manche summary closed).
AUTOPLAY = """
const done = arguments[arguments.length - 1];
(async function step() {
  const g = ui.game;
  if (ui.summaryOpen) closeSummary();
  if (g.over && !ui.summaryOpen && ui.seenResults >= g.results.length) return done(g.version);
  if (g.legal.length && !ui.busy && !ui.summaryOpen) {
    const plays = g.legal.filter((m) => m.kind !== "pass"), move = (plays.length ? plays : g.legal)[0];
    ui.selected.clear();
    if (move.kind !== "pass") {
      const picked = g.hand.map((c, i) => i).filter((i) => rankOf(g.hand[i]) === move.rank).slice(0, move.count);
      const twos = g.hand.map((c, i) => i).filter((i) => rankOf(g.hand[i]) === "2" && !picked.includes(i));
      picked.push(...twos.slice(0, move.count - picked.length));
      picked.forEach((i) => ui.selected.add(i));
    }
    await sendMove(move.kind === "pass" ? "pass" : "play");
  } else if (!g.legal.length) await poll();
  setTimeout(step, 5);
})();
"""


@pytest.fixture(scope="module")
def server():
    with live_server() as (url, app):
        yield url, app


@pytest.fixture(scope="module")
def browser():
    driver, profile = chromium(*DESKTOP)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_setup(driver, url: str) -> None:
    driver.get(url + "/")
    wait(driver, lambda d: d.execute_script("return Boolean(ui.rules) && !$('setup').classList.contains('hidden')"))


def create(driver, url: str, **setup) -> str:
    """A new game set up and started by the page; its id."""
    open_setup(driver, url)
    driver.set_script_timeout(60)
    game_id = driver.execute_async_script(CREATE, {"mode": "play", "manches": 1, "pace": 0, "human": 0, **setup})
    assert game_id == driver.execute_script("return ui.game && ui.game.id"), game_id
    return game_id


def play_to_the_end(driver) -> dict:
    driver.set_script_timeout(120)
    driver.execute_async_script(AUTOPLAY)
    return driver.execute_script("return ui.game")


def view_after(driver, version: int) -> dict:
    """The game's view once it has moved past ``version``."""
    return wait(driver, lambda d: (g := d.execute_script("return ui.game")) and g["version"] > version and g)


def rect(driver, css: str) -> dict:
    return driver.execute_script(f"return document.querySelector({css!r}).getBoundingClientRect().toJSON()")


def check_fits(driver) -> None:
    """Nothing runs off the side of the page; the status line sits above the top seat."""
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    seats = driver.execute_script(
        "return [...document.querySelectorAll('#opponents .seat')].map(s => s.getBoundingClientRect().top)"
    )
    assert rect(driver, "#status")["bottom"] <= min(seats) + 0.5, "the status line is under the top seat"


def check_names(driver, game: dict) -> None:
    """Each seat shows its agent's name in full (or the person's name, or You)."""
    for player, agent in enumerate(game["lineup"]):
        name = driver.find_element(By.CSS_SELECTOR, f'#opponents .seat[data-player="{player}"] .name')
        assert name.text == ("You" if player == game["human"] else agent), name.text
        assert driver.execute_script(ONE_LINE, name), f"{name.text!r} is cut or split"


# A name fits its seat on one line (no word split, nothing cut off).
ONE_LINE = """
const node = arguments[0], range = document.createRange();
range.selectNodeContents(node);
return range.getClientRects().length === 1 && node.scrollWidth <= node.clientWidth + 1;
"""


def check_standings(driver, game: dict) -> None:
    """A row per player with their total in sight (a narrow screen scrolls the manches, not the totals)."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#results tr[data-player]")
    assert len(rows) == game["rules"]["n_players"]
    width = driver.execute_script("return window.innerWidth")
    last = game["results"][-1]
    for row in rows:
        total = row.find_element(By.CSS_SELECTOR, "th.total")
        assert total.text == str(last["scores"][int(row.get_attribute("data-player"))])
        assert driver.execute_script("return arguments[0].getBoundingClientRect().right", total) <= width


def check_summary(driver, index: int, shot: str | None) -> str:
    """The end-of-manche summary of result ``index``, opened again: its Total column in sight; its text."""
    driver.execute_script("ui.seenResults = arguments[0]; ui.summaryOpen = false; maybeSummary()", index)
    box = driver.find_element(By.ID, "summary")
    assert box.is_displayed()
    assert driver.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", box)
    right = driver.execute_script("return arguments[0].getBoundingClientRect().right", box)
    total = driver.execute_script("return [...document.querySelectorAll('#summary th')].pop().getBoundingClientRect()")
    assert total["right"] <= right and total["left"] >= 0
    text = box.text
    if shot:
        shoot(driver, shot)
    driver.execute_script("closeSummary()")
    return text


def test_finished_games_at_desktop_and_phone_width(browser, server):
    url, app = server
    driver = browser
    driver.set_window_size(*DESKTOP)
    finished = []
    # 8 players, one manche; then a match of two manches that ends tied (players 0 and 1 on 5 points) and is
    # broken by a decisive manche, won by player 1 who goes out first in it.
    for setup in (
        {"preset": "big_table", "seats": ["human"] + ["heuristic-1"] * 7, "seed": 11},
        {"preset": "standard", "seats": OPPONENTS, "seed": 5, "manches": 2},
    ):
        game_id = create(driver, url, **setup)
        game = play_to_the_end(driver)
        finished.append(game_id)
        decisive = game["results"][-1]["decisive"]
        assert decisive == (setup["seed"] == 5)
        for size in (DESKTOP, PHONE):
            driver.set_window_size(*size)
            manche = driver.find_element(By.CSS_SELECTOR, "#flags .manche").text
            assert manche == ("Decisive manche" if decisive else "Manche 1 of 1"), manche
            check_fits(driver)
            check_names(driver, game)
            check_standings(driver, game)
            log = driver.execute_script("return [$('log').start, $('log').children.length, ui.log.length]")
            assert log[0] + log[1] - 1 == log[2] > 60, log  # numbered from the game's first move
            shot = decisive and size == PHONE  # the pictures of docs/web.md
            summary = check_summary(driver, len(game["results"]) - 1, "web-phone-decisive.png" if shot else None)
            if decisive:
                note = driver.find_element(By.CSS_SELECTOR, "#results .decisive-note").text
                for text in (summary, note):
                    assert "You and heuristic-1 (player 1) were tied for the lead on 5 points" in text, text
                    assert "not added" in text and "heuristic-1 (player 1) went out 1st" in text, text
                assert "The decisive manche is over" in summary
                assert "(+" in summary  # its points, in brackets
                assert "heuristic-1 (player 1) wins the game" in driver.find_element(By.ID, "results").text
            else:
                assert "Manche 1 is over" in summary
            if shot:
                driver.execute_script("$('results').scrollIntoView({block: 'end'})")
                shoot(driver, "web-phone-standings.png")
        driver.set_window_size(*DESKTOP)
    # A finished game is not among "Your games".
    driver.find_element(By.ID, "nav-setup").click()
    listed = [a.get_attribute("data-game") for a in driver.find_elements(By.CSS_SELECTOR, "#my-games-list a")]
    assert not set(finished) & set(listed)


def test_exchange_words_hint_and_suits(browser, server):
    url, app = server
    driver = browser
    seats = ["human"] + ["heuristic-1"] * 3
    # Drawn roles: seed 3 makes you the Trou, whose two best cards went at the deal (the AI's pace holds the
    # Président's answer for 10 s).
    create(driver, url, yaml="initial_roles: draw", seats=seats, seed=3, pace=10)
    for size in (DESKTOP, PHONE):
        driver.set_window_size(*size)
        text = wait(driver, lambda d: d.find_element(By.ID, "exchange").text)
        assert text.startswith("You gave your best 2 cards (") and "to heuristic-1 (player 1)" in text, text
        assert "gives you back 2 cards of their choice" in text and "Give back" not in text, text
    # Seed 6 makes you the Président, giving back two cards: a hint, then one give, and it is your turn again.
    for size in (DESKTOP, PHONE):
        driver.set_window_size(*size)
        create(driver, url, yaml="initial_roles: draw", seats=seats, seed=6)
        state = wait(driver, lambda d: (g := d.execute_script("return ui.game")) and g["legal"] and g)
        assert "Give back 2 cards" in driver.find_element(By.ID, "exchange").text
        wait(driver, lambda d: d.execute_script(SETTLED))  # the cards received have arrived
        shown = driver.execute_script(CORNERS)  # each card of the fanned hand shows its rank and suit
        assert len(shown) == len(state["hand"]) >= 13 and all(shown), str(shown)
        if size == PHONE:
            shoot(driver, "web-phone-hand.png")
        driver.find_element(By.ID, "hint").click()
        box = driver.find_element(By.ID, "hint-box")
        wait(driver, lambda d, box=box: "would" in box.text)
        hint = driver.execute_script("return ui.hint")
        if hint["measure"] == "probability":
            values = [td.text for td in box.find_elements(By.CSS_SELECTOR, "td:last-child")]
            assert values and all(re.fullmatch(r"\d{1,3}\.\d %", v) for v in values), values  # not "0.7666"
        driver.execute_script(
            "ui.selected.clear(); ui.selected.add(ui.game.hand.findIndex((c) => rankOf(c) === arguments[0]))",
            hint["rank"],
        )
        driver.find_element(By.ID, "play").click()
        after = view_after(driver, state["version"])
        assert after["legal"] and after["exchange"]["gives_left"] == 1  # your turn again: one more card to give
        assert not driver.find_element(By.ID, "hint-box").is_displayed()  # the hint was for the other position
        assert "Give back 1 card " in driver.find_element(By.ID, "exchange").text
    driver.set_window_size(*DESKTOP)
    assert driver.execute_script("return [weight('probability', 0.7666), weight('mean points', 1.25)]") == [
        "76.7 %",
        "1.25",
    ]


SETTLED = "return document.getAnimations().every((a) => a.playState !== 'running')"

# For each card of the hand: the top-left corner (rank and suit) is what the page shows at its centre.
CORNERS = """
return [...document.querySelectorAll("#hand .card")].map((card) => {
  const pip = card.querySelector(".corner .pip"), r = pip.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return Boolean(pip.textContent) && hit !== null && hit.closest(".card") === card;
});
"""


def test_new_game_asks_first_lists_it_and_back_returns(browser, server):
    url, app = server
    driver = browser
    driver.set_window_size(*DESKTOP)
    game_id = create(driver, url, yaml="initial_roles: draw", seats=["human"] + ["heuristic-1"] * 3, seed=6)
    wait(driver, lambda d: d.execute_script("return ui.game.legal.length > 0"))
    driver.find_element(By.ID, "nav-setup").click()
    alert = wait(driver, lambda d: d.switch_to.alert)
    assert "Leave this game?" in alert.text
    alert.dismiss()  # stay
    assert driver.find_element(By.ID, "game").is_displayed() and driver.current_url.endswith(f"#game={game_id}")
    driver.find_element(By.ID, "nav-setup").click()
    wait(driver, lambda d: d.switch_to.alert).accept()
    wait(driver, lambda d: d.find_element(By.ID, "setup").is_displayed())
    assert "#" not in driver.current_url
    link = driver.find_element(By.CSS_SELECTOR, f'#my-games-list a[data-game="{game_id}"]')
    assert "Playing against agents, 4 players" in link.text
    driver.back()  # Back returns to the game
    wait(driver, lambda d: d.find_element(By.ID, "game").is_displayed())
    assert driver.execute_script("return ui.game.id") == game_id and driver.current_url.endswith(f"#game={game_id}")
    driver.back()  # and Back again to the setup it was started from
    wait(driver, lambda d: d.find_element(By.ID, "setup").is_displayed())
    driver.find_element(By.CSS_SELECTOR, f'#my-games-list a[data-game="{game_id}"]').click()  # so does its link
    wait(driver, lambda d: d.find_element(By.ID, "game").is_displayed() and d.execute_script("return ui.game.legal"))
    assert driver.execute_script("return ui.game.id") == game_id


def test_lobby_agents_after_reload_and_a_friend_sees_no_host_controls(browser, server):
    url, app = server
    driver = browser
    driver.set_window_size(*DESKTOP)
    table_id = create(driver, url, mode="friends", preset="big_table", name="Ann", seed=1)
    playable = httpx.post(f"{url}/api/rules", json={"preset": "big_table"}).json()["agents"]
    offered = "return [...document.querySelectorAll('#table-agent option')].map(o => o.value)"
    assert wait(driver, lambda d: d.execute_script(offered)) == playable
    assert driver.find_element(By.ID, "pace").is_displayed() and driver.find_element(By.ID, "paused").is_displayed()
    driver.refresh()  # the setup behind the lobby now shows its default rules (4 players), not the table's
    wait(driver, lambda d: d.find_element(By.ID, "lobby").is_displayed())
    assert wait(driver, lambda d: d.execute_script(offered)) == playable
    # Another browser (no secret) opening the host's game URL is told why, once.
    driver.execute_script("localStorage.clear()")
    driver.delete_all_cookies()
    open_setup(driver, url)
    driver.get(f"{url}/#game={table_id}")
    error = wait(driver, lambda d: d.find_element(By.ID, "setup-error").text)
    assert error.lower().count("another browser") == 1 and error[0].isupper(), error
    # A friend takes a seat through the shared link: the pace belongs to the host, so it is not offered.
    driver.get(f"{url}/#table={table_id}")
    wait(driver, lambda d: d.find_element(By.ID, "join").is_displayed())
    driver.find_element(By.ID, "join-name").send_keys("Bob")
    driver.find_element(By.ID, "join-button").click()
    wait(driver, lambda d: d.find_element(By.ID, "lobby").is_displayed())
    assert driver.execute_script("return ui.game.human") == 1
    assert not driver.find_element(By.ID, "pace").is_displayed()
    assert not driver.find_element(By.ID, "paused").is_displayed()
