// president-web client: plain JavaScript, no build step. It polls the JSON API of server.py.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "JK"];
const KEY_RANK = { "0": "10", t: "10", j: "J", q: "Q", k: "K", a: "A" };

const ui = {
  options: null, rules: null, playable: [], game: null, key: null, selected: new Set(), log: [],
  frames: [], frameCount: 0, frame: 0, follow: true, timer: null, busy: false,
  seenResults: 0, summaryOpen: false, trickSignature: "", handBefore: null, arrived: new Set(), arrivedAt: null, hint: null,
  animated: { plays: 0, gives: 0, arrivals: 0 },  // card animations run to their end (the browser tests read it)
};

// ---------------------------------------------------------------- helpers
async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  // The secret of the game you play goes with its requests only (the game id alone acts for no one).
  if (ui.key && ui.game && (path.startsWith(`/api/games/${ui.game.id}`) || path.startsWith(`/api/tables/${ui.game.id}/`))) {
    init.headers["X-Player-Key"] = ui.key;
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch (e) { data = { error: text }; }
  if (!response.ok) { const err = new Error(data.error || `HTTP ${response.status}`); err.status = response.status; throw err; }
  return data;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

function rankOf(card) { return card === "JK" ? "JK" : card.slice(0, -1); }
function suitOf(card) { return card === "JK" ? "" : card.slice(-1); }
function pretty(cards) { return cards.map((c) => rankOf(c) + (SUITS[suitOf(c)] || "")).join(" "); }

function cardNode(card, small = false) {
  const suit = suitOf(card);
  const red = suit === "H" || suit === "D";
  const symbol = SUITS[suit] || "★";
  // Rank and suit in the top-left corner, the part a fanned hand leaves in sight; the suit again bottom-right.
  return el("span", { class: `card${red ? " red" : ""}${small ? " small" : ""}`, "data-card": card,
    title: card, "aria-label": card },
    el("span", { class: "corner" }, el("span", { class: "rank" }, rankOf(card)), el("span", { class: "pip" }, symbol)),
    el("span", { class: "suit" }, symbol));
}

function playerName(p, short = false) {
  // You, a person's name, or the agent that plays the seat ("heuristic-1 (player 2)"; ``short``: "heuristic-1",
  // where the player's number is shown beside it).
  const g = ui.game;
  if (p === null || p === undefined) return "nobody";
  if (g && g.human === p) return "You";
  if (g && g.names && g.names[p]) return g.names[p];
  const agent = g && g.lineup ? g.lineup[p] : "";
  if (!agent || agent === "human") return `player ${p}`;
  return short ? agent : `${agent} (player ${p})`;
}

function sentence(text) { return text ? text[0].toUpperCase() + text.slice(1) : ""; }

function weight(measure, value) {
  // What an agent weighed a move at: a probability as a percentage, other measures as they are.
  return measure === "probability" ? `${(100 * value).toFixed(1)} %` : String(value);
}

function ordinal(n) {
  const s = ["th", "st", "nd", "rd"], v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

function setError(id, message) { $(id).textContent = message || ""; }

// ---------------------------------------------------------------- setup
async function init() {
  ui.options = await api("GET", "/api/options");
  const preset = $("preset");
  for (const name of Object.keys(ui.options.presets)) preset.append(el("option", { value: name }, name));
  preset.addEventListener("change", () => { $("yaml").value = ""; loadRules(); });
  $("check-yaml").addEventListener("click", () => loadRules());
  $("players").addEventListener("change", () => loadRules(Number($("players").value)));
  for (const radio of document.querySelectorAll("input[name=mode]")) radio.addEventListener("change", drawSeats);
  $("seat").addEventListener("change", drawSeats);
  $("pace-setup").addEventListener("input", () => { $("pace-setup-value").textContent = `${$("pace-setup").value} s`; });
  $("setup-form").addEventListener("submit", (e) => { e.preventDefault(); startGame(); });
  $("nav-setup").addEventListener("click", leaveForSetup);
  $("nav-rules").addEventListener("click", showRules);
  $("rules-close").addEventListener("click", () => $("rules-panel").classList.add("hidden"));
  $("replay-file").addEventListener("change", loadReplayFile);
  $("play").addEventListener("click", () => sendMove("play"));
  $("pass").addEventListener("click", () => sendMove("pass"));
  $("clear").addEventListener("click", () => { ui.selected.clear(); renderHand(); });
  $("hint").addEventListener("click", askHint);
  $("continue").addEventListener("click", closeSummary);
  $("join-button").addEventListener("click", joinTable);
  $("table-start").addEventListener("click", startTable);
  $("im-back").addEventListener("click", comeBack);
  $("download").addEventListener("click", saveReplay);
  $("pace").addEventListener("change", setPace);
  $("paused").addEventListener("change", setPace);
  $("first").addEventListener("click", () => stepTo(0));
  $("back").addEventListener("click", () => stepTo(ui.frame - 1));
  $("forward").addEventListener("click", () => stepTo(ui.frame + 1));
  $("last").addEventListener("click", () => stepTo(ui.frameCount - 1));
  $("follow").addEventListener("change", () => { ui.follow = $("follow").checked; if (ui.follow) stepTo(ui.frameCount - 1); });
  document.addEventListener("keydown", onKey);
  document.addEventListener("animationend", (ev) => {
    if (ev.animationName === "card-in") ui.animated.plays += 1;
    else if (ev.animationName === "card-arrive") ui.animated.arrivals += 1;
  });
  // Back and Forward move between the setup and the games opened in this tab (links push pages; see goTo).
  window.addEventListener("popstate", route);
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", clearSeats);
  await loadRules();
  await resumeFromUrl();
}

async function loadRules(players) {
  const yaml = $("yaml").value.trim();
  const body = yaml ? { yaml } : { preset: $("preset").value };
  if (players !== undefined) body.n_players = players;
  try {
    const data = await api("POST", "/api/rules", body);
    ui.rules = data.rules;
    ui.rulesPage = data.page;
    ui.playable = data.agents;
    $("players").value = data.rules.n_players;
    $("manches").value = data.rules.manches;
    $("rules-summary").textContent = `${data.rules.n_players} players, ${data.rules.decks} deck(s), ${data.rules.jokers} joker(s), ` +
      `exchange ${data.rules.exchange.join("/")}, revolution ${data.rules.revolution ? "on" : "off"}, equal rank: ${data.rules.equal_rank}`;
    const hidden = ui.options.agents.filter((a) => !data.agents.includes(a));
    $("agents-note").textContent = hidden.length ? `Agents that cannot play these rules are not offered (${hidden.join(", ")}).` : "";
    setError("setup-error", "");
    drawSeats();
  } catch (err) {
    setError("setup-error", err.message);
  }
}

function mode() { return document.querySelector("input[name=mode]:checked").value; }

function drawSeats() {
  if (!ui.rules) return;
  const n = ui.rules.n_players;
  const seat = $("seat");
  const chosen = Math.min(Number(seat.value || 0), n - 1);
  seat.replaceChildren(...Array.from({ length: n }, (_, i) => el("option", { value: i }, `player ${i}`)));
  seat.value = chosen;
  $("seat-label").classList.toggle("hidden", mode() !== "play");
  $("name-label").classList.toggle("hidden", mode() !== "friends");
  $("clock-label").classList.toggle("hidden", mode() !== "friends");
  const box = $("seats");
  box.classList.toggle("hidden", mode() === "friends");
  const previous = Array.from(box.querySelectorAll("select")).map((s) => s.value);
  box.replaceChildren();
  for (let i = 0; i < n; i++) {
    if (mode() === "play" && i === chosen) { box.append(el("label", {}, `player ${i}: you`)); continue; }
    const select = el("select", { id: `agent-${i}`, "aria-label": `agent of player ${i}` });
    for (const name of ui.playable) select.append(el("option", { value: name }, name));
    select.value = previous[i] && ui.playable.includes(previous[i]) ? previous[i] : "heuristic-3";
    box.append(el("label", {}, `player ${i}: `, select));
  }
}

async function startGame() {
  const n = ui.rules.n_players;
  const m = mode();
  const human = Number($("seat").value);
  const seats = Array.from({ length: n }, (_, i) => (m === "play" && i === human ? "human" : $(`agent-${i}`).value));
  const body = { mode: m, seats, n_players: n, manches: Number($("manches").value), pace: Number($("pace-setup").value) };
  const yaml = $("yaml").value.trim();
  if (yaml) body.yaml = yaml; else body.preset = $("preset").value;
  if (m === "play") body.human = human;
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  if (m === "friends") { delete body.mode; delete body.seats; body.name = $("my-name").value; body.turn_clock = Number($("turn-clock").value); }
  try {
    const data = await api("POST", m === "friends" ? "/api/tables" : "/api/games", body);
    if (data.key) localStorage.setItem(`president-key-${data.id}`, data.key);
    ui.key = data.key || null;
    goTo(`game=${data.id}`);
    openGame(data);
  } catch (err) {
    setError("setup-error", err.message);
  }
}

async function resumeFromUrl() {
  // A game URL (#game=ID) resumes the game, in a reload or another tab; a play game needs this browser's secret.
  // A table's shared link (#table=ID) seats a friend, or resumes the seat this browser already holds.
  const table = /table=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (table) {
    if (localStorage.getItem(`president-key-${table[1]}`)) history.replaceState(null, "", `#game=${table[1]}`);
    else { showJoin(table[1]); return; }
  }
  const match = /game=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (!match || (ui.game && ui.game.id === match[1])) return;
  ui.key = localStorage.getItem(`president-key-${match[1]}`);
  ui.game = { id: match[1] };
  try {
    openGame(await api("GET", `/api/games/${match[1]}`));
  } catch (err) {
    ui.game = null;
    if (err.status === 404) forgetGame(match[1]);
    history.replaceState(null, "", location.pathname);
    showSetup();
    setError("setup-error", err.status === 403 ? sentence(err.message) : `Game not resumed: ${err.message}`);
  }
}

function route() {
  // The page the address shows: a game or a table's link, else the setup.
  if (/(game|table)=/.test(location.hash)) resumeFromUrl();
  else if (ui.game || ui.joining) showSetup();
}

function goTo(hash) {
  // A new page in this tab's history, "game=ID" or "" for the setup: Back returns to the one before.
  if (location.hash.slice(1) !== hash) history.pushState(null, "", hash ? `#${hash}` : location.pathname);
}

function leaveForSetup() {
  // "New game": a game you play goes on without you, so ask first; it stays in "Your games" (and Back).
  const g = ui.game;
  if (g && g.mode === "play" && !g.over && !$("game").classList.contains("hidden")) {
    const away = g.friends && g.friends.started ? " An agent plays for you while you are away (for up to 10 minutes)." : "";
    if (!confirm(`Leave this game?${away} Back, or "Your games" on the setup page, brings you back to it.`)) return;
  }
  goTo("");
  showSetup();
}

// ---------------------------------------------------------------- your games (kept by this browser)
const GAMES_KEY = "president-games";
const GAME_TTL_MS = 30 * 60 * 1000;  // the server drops a game nobody asked about for 30 minutes (--idle-ttl)

function myGames() {
  // The running games opened in this browser, the latest first (a replay is a file: it is loaded again).
  let games = [];
  try { games = JSON.parse(localStorage.getItem(GAMES_KEY) || "[]"); } catch (err) { games = []; }
  const now = Date.now();
  return (Array.isArray(games) ? games : []).filter((e) => e && typeof e.id === "string" && now - e.seen < GAME_TTL_MS);
}

function keepGames(games) { localStorage.setItem(GAMES_KEY, JSON.stringify(games.slice(0, 20))); }

function noteGame(g) {
  if (!g || !g.id || !g.mode || g.mode === "replay") return;
  const others = myGames().filter((e) => e.id !== g.id);
  keepGames(g.over ? others : [{ id: g.id, label: gameLabel(g), seen: Date.now() }, ...others]);
}

function forgetGame(id) { keepGames(myGames().filter((e) => e.id !== id)); }

function mancheLabel(table, rules) {
  return table.decisive ? "decisive manche" : `manche ${table.manche + 1} of ${rules.manches}`;
}

function gameLabel(g) {
  const kind = g.friends ? "Table for friends" : g.mode === "watch" ? "Watching agents" : "Playing against agents";
  const table = g.table || (ui.frames[ui.frame] || {}).table;
  return `${kind}, ${g.rules.n_players} players${table ? ", " + mancheLabel(table, g.rules) : ""}`;
}

function renderMyGames() {
  const games = myGames();
  $("my-games").classList.toggle("hidden", !games.length);
  const time = (ms) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  $("my-games-list").replaceChildren(...games.map((e) => el("li", {},
    el("a", { href: `#game=${e.id}`, "data-game": e.id }, e.label), ` · last seen at ${time(e.seen)}`)));
}

function showJoin(id) {
  clearTimeout(ui.timer);
  ui.joining = id;
  $("setup").classList.add("hidden");
  $("game").classList.add("hidden");
  $("join").classList.remove("hidden");
  $("join-name").focus();
}

async function joinTable() {
  try {
    const data = await api("POST", `/api/tables/${ui.joining}/join`, { name: $("join-name").value });
    localStorage.setItem(`president-key-${data.id}`, data.key);
    ui.key = data.key;
    history.replaceState(null, "", `#game=${data.id}`);  // the table's link becomes your seat's page
    $("join").classList.add("hidden");
    openGame(data);
  } catch (err) {
    setError("join-error", err.message);
  }
}

async function startTable() {
  const g = ui.game;
  try {
    const data = await api("POST", `/api/tables/${g.id}/start`, { agent: $("table-agent").value });
    setError("lobby-error", "");
    absorb(data);
    render();
    schedule();
  } catch (err) {
    setError("lobby-error", err.message);
  }
}

function renderLobby(g) {
  // A table for friends: who sits where, the link to share, and the host's Start.
  const lobby = $("lobby");
  const f = g.friends;
  lobby.classList.toggle("hidden", !f || f.started);
  if (!f || f.started) return;
  $("share").value = `${location.origin}/#table=${g.id}`;
  $("lobby-seats").replaceChildren(...f.seats.map((s) => el("li", {},
    s.name ? `${s.name}${s.host ? " (host)" : ""}${s.you ? " — you" : ""}` : "empty: an agent will play")));
  const host = f.host === g.human;
  $("lobby-clock").textContent = `Turn clock: ${f.turn_clock} s (set by the host). Whoever has not played within it is played for by the agent for that turn, and marked away until they act again.`;
  $("lobby-host").classList.toggle("hidden", !host);
  $("lobby-wait").classList.toggle("hidden", host);
  // The agents offered are those that can play this table's rules (after a reload the setup shows its own).
  const select = $("table-agent");
  if (host && select.dataset.table !== g.id) {
    select.dataset.table = g.id;
    select.replaceChildren();
    $("table-start").disabled = true;
    rulesOfGame(g).then((data) => {
      if (!ui.game || ui.game.id !== g.id) return;
      select.replaceChildren(...data.agents.map((name) => el("option", { value: name }, name)));
      select.value = data.agents.includes("heuristic-3") ? "heuristic-3" : data.agents[0];
      $("table-start").disabled = false;
    }).catch((err) => { select.dataset.table = ""; setError("lobby-error", err.message); });
  }
}

async function rulesOfGame(g) {
  // The rules page and the playable agents of a game's rules, asked once per game.
  if (!ui.gameRules || ui.gameRules.id !== g.id) {
    ui.gameRules = { id: g.id, data: await api("POST", "/api/rules", { yaml: JSON.stringify(g.rules) }) };
  }
  return ui.gameRules.data;
}

function renderAway(g) {
  // A table for friends: the turn clock ran out on your turn, so an agent plays for you until you act again.
  const me = g.friends && g.friends.started ? g.friends.seats[g.human] : null;
  $("away-note").classList.toggle("hidden", !(me && me.idle) || g.over);
  if (me && me.idle) $("away-text").textContent = `You did not play within the turn clock (${g.friends.turn_clock} s): an agent plays for you until you are back.`;
}

async function comeBack() {
  const g = ui.game;
  try {
    absorb(await api("POST", `/api/games/${g.id}/back`, {}));
    render();
    schedule();
  } catch (err) { $("status").textContent = err.message; }
}

async function saveReplay(event) {
  // The replay is fetched with the secret in its header, then saved from memory: no URL ever holds the secret.
  event.preventDefault();
  const g = ui.game;
  try {
    const replay = await api("GET", `/api/games/${g.id}/replay`);
    const url = URL.createObjectURL(new Blob([JSON.stringify(replay)], { type: "application/json" }));
    const link = el("a", { href: url, download: `president-${g.id.slice(0, 8)}.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (err) { $("status").textContent = `Replay not saved: ${err.message}`; }
}

function showSetup() {
  clearTimeout(ui.timer);
  ui.game = null;
  ui.joining = null;
  renderMyGames();
  $("setup").classList.remove("hidden");
  $("game").classList.add("hidden");
  $("join").classList.add("hidden");
  $("summary").classList.add("hidden");
}

async function showRules() {
  // The rules page of the table in play (or of the one being set up), in sentences made from its Rules.
  let page = ui.rulesPage;
  if (ui.game && ui.game.rules) {
    try { page = (await rulesOfGame(ui.game)).page; } catch (err) { /* keep the setup's */ }
  }
  $("rules-lines").replaceChildren(...(page || []).map((line) => el("li", { "data-field": line.field }, line.text)));
  $("rules-panel").classList.remove("hidden");
  $("rules-panel").scrollIntoView({ block: "start" });
}

async function loadReplayFile(event) {
  const file = event.target.files[0];
  event.target.value = "";
  if (!file) return;
  try {
    const data = await api("POST", "/api/replays", await file.text());
    ui.key = null;
    goTo(`game=${data.id}`);
    openGame(data);
  } catch (err) {
    history.replaceState(null, "", location.pathname);
    showSetup();
    setError("setup-error", `Replay not loaded: ${err.message}`);
  }
}

// ---------------------------------------------------------------- game
function openGame(data) {
  clearTimeout(ui.timer);
  ui.game = data; ui.log = []; ui.frames = []; ui.frameCount = 0; ui.frame = 0; ui.follow = data.mode === "watch";
  ui.selected.clear(); ui.seenResults = (data.results || []).length; ui.trickSignature = ""; ui.handBefore = null;
  ui.hint = null; ui.hintAsked = null;
  $("follow").checked = ui.follow;
  $("setup").classList.add("hidden");
  $("game").classList.remove("hidden");
  $("summary").classList.add("hidden");
  $("lobby").classList.add("hidden");
  $("pace").value = data.pace;
  $("pace-value").textContent = `${data.pace} s`;
  const play = data.mode === "play";
  $("me").classList.toggle("hidden", !play);
  $("hands").classList.toggle("hidden", play);
  $("weighed").classList.add("hidden");
  $("exchange").classList.add("hidden");
  $("hint-box").classList.add("hidden");
  $("stepper").classList.toggle("hidden", play);
  $("follow").parentElement.classList.toggle("hidden", data.mode !== "watch");
  // The AI pace: yours to set when watching or playing against agents; at a table for friends, the host's only.
  const setsPace = data.mode === "watch" || (play && (!data.friends || data.friends.host === data.human));
  $("pace").parentElement.classList.toggle("hidden", !setsPace);
  $("paused").parentElement.classList.toggle("hidden", !setsPace);
  $("paused").checked = Boolean(data.paused);
  absorb(data);
  render();
  schedule();
}

function absorb(data) {
  ui.game = data;
  if (data.log) {
    ui.log.length = Math.min(ui.log.length, data.log_start);
    ui.log.push(...data.log);
  }
  if (data.frames) {
    // Frames come a page at a time; ui.frames holds those fetched so far (a replay's are fetched as they are shown).
    data.frames.forEach((frame, k) => { ui.frames[data.frames_start + k] = frame; });
    ui.frameCount = data.frame_count;
    if (ui.follow) ui.frame = data.frame_count - 1;
  }
}

function behind() {
  // More of the log or of the live frames is waiting on the server (responses are paged).
  const g = ui.game;
  if (!g) return false;
  if (g.mode === "play") return ui.log.length < g.log_count;
  return g.mode === "watch" && ui.frames.length < ui.frameCount;
}

function schedule() {
  clearTimeout(ui.timer);
  const g = ui.game;
  if (!g) return;
  if (behind()) { ui.timer = setTimeout(poll, 0); return; }
  if (g.over) return;
  // At a table for friends the page keeps in touch on your turn too (a silent seat is played by an agent).
  if (g.friends) { ui.timer = setTimeout(poll, !g.friends.started ? 1000 : g.legal.length ? 2000 : 250); return; }
  // Nothing changes while a replay is loaded or the server waits for your move.
  if (g.mode === "play" && g.legal.length) return;
  ui.timer = setTimeout(poll, g.mode === "replay" ? 500 : 250);
}

async function poll() {
  const g = ui.game;
  if (!g) return;
  // A replay still loading: ask only how far it is (frames are fetched when shown).
  const query = g.mode === "play" ? `since=${ui.log.length}` : g.mode === "watch" ? `since=${ui.frames.length}` : "since=0&limit=0";
  try {
    const data = await api("GET", `/api/games/${g.id}?${query}`);
    if (ui.game && ui.game.id === data.id) {
      const changed = data.version !== ui.game.version || data.over !== ui.game.over || data.error !== ui.game.error ||
        data.frame_count !== ui.frameCount || JSON.stringify(data.friends) !== JSON.stringify(ui.game.friends);
      absorb(data);
      if (changed) render();
    }
  } catch (err) {
    $("status").textContent = `Connection problem: ${err.message}`;
  }
  schedule();
}

async function fetchFrame(index) {
  // The page of frames holding ``index``, when it has not been fetched yet.
  const g = ui.game;
  if (ui.frames[index]) return;
  const start = index - (index % ui.options.limits.page_frames);
  const data = await api("GET", `/api/games/${g.id}?since=${start}`);
  if (ui.game && ui.game.id === data.id) {
    const follow = ui.follow;
    ui.follow = false;
    absorb(data);
    ui.follow = follow;
  }
}

async function setPace() {
  const g = ui.game;
  const pace = Number($("pace").value);
  $("pace-value").textContent = `${pace} s`;
  if (!g || g.mode === "replay") return;
  try {
    const paused = $("paused").checked;
    await api("POST", `/api/games/${g.id}/pace`, { pace, paused });
    ui.game.paused = paused;
    schedule();
  } catch (err) { $("status").textContent = err.message; }
}

async function sendMove(kind) {
  const g = ui.game;
  if (!g || g.mode !== "play" || ui.busy || ui.summaryOpen) return;
  const exchange = g.table.phase === "exchange";
  const body = { version: g.version, since: ui.log.length };
  if (kind === "pass") body.move = "pass";
  else {
    body.move = exchange ? "give" : "play";
    body.cards = Array.from(ui.selected).sort((a, b) => a - b).map((i) => g.hand[i]);
    if (!body.cards.length) { setError("move-error", exchange ? "Select a card to give back." : "Select cards to play, or pass."); return; }
  }
  // The cards you give leave your hand for your partner's seat once the server has taken them.
  const flights = body.move === "give" ? handRects(Array.from(ui.selected)) : [];
  const partner = g.exchange.partner;
  ui.busy = true;
  try {
    const data = await api("POST", `/api/games/${g.id}/move`, body);
    ui.selected.clear();
    setError("move-error", "");
    absorb(data);
    render();
    flyTo(flights, partner);
    schedule();
  } catch (err) {
    setError("move-error", `Not playable: ${err.message}`);
  } finally {
    ui.busy = false;
  }
}

async function askHint() {
  const g = ui.game;
  if (!g || g.mode !== "play" || !g.legal.length) return;
  $("hint-box").classList.remove("hidden");
  $("hint-box").textContent = "Thinking…";
  ui.hintAsked = g.version;  // a hint is for this position only: a move (a give too) clears it
  try {
    const hint = await api("POST", `/api/games/${g.id}/hint`);
    if (!ui.game || ui.game.id !== g.id || ui.hintAsked !== hint.version || ui.game.version !== hint.version) return;
    ui.hint = hint;
    const why = hint.moves.slice(0, 4).map((m) => el("tr", {}, el("td", {}, m.move), el("td", {}, weight(hint.measure, m.value))));
    $("hint-box").replaceChildren(
      el("div", {}, `${hint.agent} would ${hint.move}`, el("span", { class: "note" }, ` (${hint.measure || "its choice"}; you may ignore it)`)),
      el("table", {}, ...why));
    renderHand();
  } catch (err) {
    if (ui.hintAsked === g.version) $("hint-box").textContent = `No hint: ${err.message}`;
  }
}

// ---------------------------------------------------------------- drawing
function render() {
  const g = ui.game;
  if (!g || !g.mode) return;
  if (g.mode === "play") { renderPlay(); renderAway(g); } else renderFrame();
  renderResults(g.mode === "play" ? g.results : (ui.frames[ui.frame] || {}).results || [], g);
  noteGame(g);
}

function seatNode(p, n, mySeat, total) {
  // A player at their place around the oval: you (or player 0 when watching) at the bottom, the others clockwise.
  const rel = (p.seat - mySeat + total) % total;
  const angle = Math.PI / 2 + (2 * Math.PI * rel) / total;
  const x = 50 + 47 * Math.cos(angle), y = 50 + 50 * Math.sin(angle);
  const role = p.role ? el("span", { class: "role" }, p.role.label) : el("span", { class: "role none" }, "no role yet");
  let state = "";
  if (p.out >= 0) state = `out ${ordinal(p.out + 1)}${p.penalized ? " (penalty)" : ""}`;
  else if (p.passed) state = "passed";
  const friend = ui.game.friends && ui.game.friends.seats[p.player];
  if (friend && friend.away) state = (state ? state + " · " : "") + "away: an agent plays";
  const classes = ["seat", "player"];
  if (p.to_act) classes.push("turn");
  if (p.passed) classes.push("passed");
  if (p.out >= 0) classes.push("out");
  if (ui.game.human === p.player) classes.push("mine");
  // The name in full (an agent's too: "heuristic-1", its player number under it), wrapped rather than cut.
  const agent = playerName(p.player, true) !== playerName(p.player);
  return el("div", { class: classes.join(" "), "data-player": p.player, "data-seat": p.seat, style: `left:${x.toFixed(1)}%;top:${y.toFixed(1)}%` },
    el("div", { class: "name", title: playerName(p.player) }, playerName(p.player, true)), role,
    el("div", { class: "meta" }, el("span", { class: "backs", "aria-hidden": "true" }),
      `${agent ? `player ${p.player} · ` : ""}${plural(p.held, "card")} · ${p.score} pt${state ? " · " + state : ""}`));
}

function clearSeats() {
  // The top and bottom seats reach out of the felt by half their height, which grows with their lines (a long
  // name, "away"): the felt's margins make room for them, so the status line above and your hand below stay clear.
  const felt = $("felt");
  const seats = [...felt.querySelectorAll(".seat")].map((s) => s.getBoundingClientRect());
  if (!seats.length || !felt.offsetParent) return;
  const box = felt.getBoundingClientRect();
  const gap = 6;
  felt.style.marginTop = `${Math.max(0, box.top - Math.min(...seats.map((r) => r.top))) + gap}px`;
  felt.style.marginBottom = `${Math.max(0, Math.max(...seats.map((r) => r.bottom)) - box.bottom) + gap}px`;
}

function renderTable(table) {
  const g = ui.game;
  const viewer = g.human !== null && g.human !== undefined ? g.human : 0;
  const mine = table.players.find((p) => p.player === viewer) || table.players[0];
  $("opponents").replaceChildren(...table.players.map((p) => seatNode(p, table.players.length, mine.seat, table.players.length)));
  clearSeats();
  const trick = $("trick");
  const signature = `${table.manche}:${table.trick.player}:${table.trick.cards.join(",")}`;
  const fresh = signature !== ui.trickSignature;
  ui.trickSignature = signature;
  if (table.trick.cards.length) {
    trick.replaceChildren(...table.trick.cards.map((c) => { const node = cardNode(c); if (fresh) node.classList.add("enter"); return node; }),
      el("div", { class: "who" }, `${playerName(table.trick.player)}${table.phase === "over" ? " played the last cards" : ""}`));
  } else {
    const text = table.phase === "exchange" ? "Exchange of cards" : table.phase === "over" ? "Game over" : "New trick: lead any cards of one rank";
    trick.replaceChildren(el("span", { class: "note" }, text));
  }
  const flags = [];
  if (table.revolution) flags.push(el("span", {}, "Revolution: low ranks beat high"));
  if (table.or_nothing) flags.push(el("span", {}, `${table.trick.rank} or nothing`));
  flags.push(el("span", { class: "manche" }, sentence(mancheLabel(table, g.rules))));
  $("flags").replaceChildren(...flags);
}

function renderPlay() {
  const g = ui.game;
  const table = g.table;
  renderLobby(g);
  renderTable(table);
  const me = table.players.find((p) => p.player === g.human);
  const myTurn = g.legal.length > 0;
  const exchange = table.phase === "exchange";
  let status;
  if (g.over && g.error) status = `Stopped: ${g.error}`;
  else if (g.over) status = g.winner === g.human ? "Game over: you win!" : `Game over: ${playerName(g.winner)} wins.`;
  else if (g.friends && !g.friends.started) status = "A table for friends: waiting for the players";
  else if (myTurn) status = exchange ? `Your turn: give back ${plural(g.exchange.gives_left, "card")} to ${playerName(g.exchange.partner)}` : "Your turn";
  else status = `Waiting for ${playerName(table.to_act)}…`;
  $("status").textContent = status;
  $("me-info").textContent = `You · ${me.role ? me.role.label : "no role yet"} · ${plural(me.held, "card")} · ${me.score} pt`;
  $("play").textContent = exchange ? "Give" : "Play";
  $("play").disabled = !myTurn;
  $("pass").disabled = !myTurn || !g.legal.some((m) => m.kind === "pass");
  $("hint").disabled = !myTurn;
  if (!myTurn || ui.hintAsked !== g.version) { ui.hint = null; ui.hintAsked = null; $("hint-box").classList.add("hidden"); }
  renderExchange(g, exchange);
  $("download").classList.toggle("hidden", !g.over);
  renderHand();
  const log = $("log");
  const shown = ui.log.slice(-60);  // the last 60 moves, numbered from the start of the game
  log.start = ui.log.length - shown.length + 1;
  log.replaceChildren(...shown.map((e) => el("li", {}, describe(e))));
  log.scrollTop = log.scrollHeight;
  maybeSummary();
}

function renderExchange(g, exchange) {
  // The exchange in words: which of your cards you gave, which you received, and with whom.
  const ex = $("exchange");
  const done = g.exchange.done;
  const partner = (p) => (p === null || p === undefined ? "your partner" : playerName(p));
  let text = "";
  const x = g.exchange, me = g.table.players.find((p) => p.player === g.human);
  const low = me && me.role && ["vice_trou", "trou_du_cul"].includes(me.role.name);
  if (exchange && x.partner !== null && x.gives_left > 0) {
    const received = x.received.length ? `You received ${plural(x.received.length, "card")} (${x.received.join(", ")}) from ${partner(x.partner)}. ` : "";
    text = `${received}Give back ${plural(x.gives_left, "card")} of your choice to ${partner(x.partner)}: select ${x.gives_left === 1 ? "it" : "one"}, then Give.`;
  } else if (exchange && x.partner !== null && low && x.received.length < x.gave.length) {
    // A low role gives its best cards at the deal, then waits for its partner's choice.
    const got = x.received.length ? `; you received ${x.received.join(", ")} so far` : "";
    text = `You gave your best ${plural(x.gave.length, "card")} (${x.gave.join(", ")}) to ${partner(x.partner)}${got}. ` +
      `${partner(x.partner)} gives you back ${plural(x.gave.length - x.received.length, "card")} of their choice.`;
  } else if (exchange && x.partner !== null) {
    text = `You gave ${x.gave.join(", ")} to ${partner(x.partner)} and received ${x.received.join(", ")}; ` +
      "the others finish their exchange.";
  } else if (done && (done.gave.length || done.received.length) && g.table.phase !== "over") {
    const gave = done.gave.length ? `you gave ${pretty(done.gave)}` : "you gave nothing";
    const got = done.received.length ? `you received ${pretty(done.received)}` : "you received nothing";
    text = `Exchange with ${partner(done.partner)}: ${gave}; ${got}.`;
  }
  ex.classList.toggle("hidden", !text);
  ex.textContent = text;
}

function describe(e) {
  if (!e) return "";
  let text = `${playerName(e.player)}: `;
  if (e.kind === "pass") text += "pass";
  else if (e.kind === "give") text += e.cards.length ? `gave back ${pretty(e.cards)}` : "gave back a card";
  else text += `played ${pretty(e.cards)}`;
  // What the move did, as the server's event says it.
  if (e.went_out) text += ` — out ${ordinal(e.out_order + 1)}${e.penalized ? " (penalty)" : ""}`;
  if (e.trick_won_by != null) text += ` — ${playerName(e.trick_won_by)} won the trick`;
  if (e.exchange_over) text += " — exchange over";
  if (e.manche_over) text += " — manche over";
  return text;
}

function renderHand() {
  const g = ui.game;
  if (!g || g.mode !== "play") return;
  const playable = new Set(g.legal.filter((m) => m.rank).map((m) => m.rank));
  const hand = $("hand");
  const signature = g.hand.join(" ");
  if (signature !== ui.handSignature) {
    ui.selected.clear();
    // The cards received in the exchange: those a new deal already holds (one card of each rank received), or
    // those that came into the hand shown. They stay outlined while the hand is the same.
    const arrived = new Set();
    if (!ui.handBefore || ui.handManche !== g.table.manche) {
      if (g.table.phase === "exchange") {
        const ranks = g.exchange.received.slice();
        g.hand.forEach((c, i) => { const k = ranks.lastIndexOf(rankOf(c)); if (k >= 0) { ranks.splice(k, 1); arrived.add(i); } });
      }
    } else if (g.hand.length >= ui.handBefore.length) {
      const before = ui.handBefore.slice();
      g.hand.forEach((c, i) => { const k = before.indexOf(c); if (k >= 0) before.splice(k, 1); else arrived.add(i); });
    }
    ui.arrived = arrived.size <= Math.max(0, ...g.rules.exchange) ? arrived : new Set();
    ui.arrivedAt = null;
    ui.handSignature = signature;
    ui.handBefore = g.hand.slice();
    ui.handManche = g.table.manche;
  }
  // They arrive with a short animation once no end-of-manche summary covers the table.
  const covered = ui.summaryOpen || g.results.length > ui.seenResults;
  if (ui.arrived.size && ui.arrivedAt === null && !covered) ui.arrivedAt = performance.now();
  const arriving = ui.arrivedAt !== null && performance.now() - ui.arrivedAt < 600;
  const hinted = new Set();
  if (ui.hint && ui.hint.version === g.version && ui.hint.rank) {
    const want = g.hand.map((c, i) => [c, i]).filter(([c]) => rankOf(c) === ui.hint.rank).slice(0, ui.hint.count).map(([, i]) => i);
    want.forEach((i) => hinted.add(i));
  }
  // Draw the hand again only when something in it changed (a poll that brings nothing new keeps the nodes).
  const drawn = `${signature}|${g.legal.length}|${[...ui.selected].join(",")}|${[...hinted].join(",")}|${[...ui.arrived].join(",")}|${arriving}`;
  if (drawn === ui.handDrawn && hand.children.length === g.hand.length) return;
  ui.handDrawn = drawn;
  const mid = (g.hand.length - 1) / 2;
  const spread = Math.min(3, 30 / Math.max(g.hand.length, 1));
  hand.replaceChildren(...g.hand.map((card, i) => {
    const node = cardNode(card);
    node.tabIndex = 0;
    node.dataset.index = i;
    const lift = ui.selected.has(i) ? -0.8 : Math.abs(i - mid) * 0.05;
    node.style.transform = `rotate(${((i - mid) * spread).toFixed(1)}deg) translateY(${lift.toFixed(2)}rem)`;
    if (ui.selected.has(i)) node.classList.add("selected");
    if (hinted.has(i)) node.classList.add("hinted");
    if (ui.arrived.has(i)) node.classList.add("received");
    if (ui.arrived.has(i) && arriving) node.classList.add("arrive");
    if (g.legal.length && !playable.has(rankOf(card)) && !(g.rules.twos_wild && rankOf(card) === "2")) node.classList.add("dim");
    node.addEventListener("click", () => toggle(i));
    node.addEventListener("keydown", (ev) => { if (ev.key === " ") { ev.preventDefault(); toggle(i); } });
    return node;
  }));
}

function handRects(indices) {
  // Where the cards of your hand at ``indices`` are drawn now: the start of their flight.
  return indices.map((i) => [ui.game.hand[i], document.querySelector(`#hand .card[data-index="${i}"]`)])
    .filter(([, node]) => node).map(([card, node]) => ({ card, rect: node.getBoundingClientRect(), w: node.offsetWidth, h: node.offsetHeight }));
}

function flyTo(flights, player) {
  // A give: each card flies from where it lay in your hand to the seat of ``player`` and fades (about half a
  // second; none when the system asks for reduced motion).
  const seat = document.querySelector(`#opponents .seat[data-player="${player}"]`);
  if (!seat || !flights.length || !seat.animate || matchMedia("(prefers-reduced-motion: reduce)").matches) return;
  const to = seat.getBoundingClientRect();
  flights.forEach(({ card, rect, w, h }, k) => {
    const x = rect.left + rect.width / 2 - w / 2, y = rect.top + rect.height / 2 - h / 2;
    const node = cardNode(card);
    node.classList.add("flying");
    Object.assign(node.style, { left: `${x}px`, top: `${y}px`, width: `${w}px`, height: `${h}px` });
    document.body.append(node);
    const dx = to.left + to.width / 2 - (x + w / 2), dy = to.top + to.height / 2 - (y + h / 2);
    const flight = node.animate(
      [{ transform: "none", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) rotate(10deg) scale(.55)`, opacity: 0.25 }],
      { duration: 550, delay: 80 * k, easing: "ease-in", fill: "forwards" });
    flight.onfinish = () => { node.remove(); ui.animated.gives += 1; };
  });
}

function toggle(index) {
  if (ui.selected.has(index)) ui.selected.delete(index); else ui.selected.add(index);
  setError("move-error", "");
  renderHand();
}

// ---------------------------------------------------------------- end of a manche
function maybeSummary() {
  // A manche just ended: its finishing order, roles and points, and its last trick, until you continue.
  const g = ui.game;
  if (ui.summaryOpen || g.results.length <= ui.seenResults) return;
  const result = g.results[ui.seenResults];
  const rows = result.order.map((p) => el("tr", {}, el("td", {}, ordinal(result.positions[p] + 1)), el("td", {}, playerName(p)),
    el("td", {}, result.roles[p].label), pointsCell(result, p), el("td", {}, String(result.scores[p]))));
  const body = [
    el("h3", {}, result.decisive ? "The decisive manche is over" : `Manche ${result.manche + 1} is over`),
    el("table", {}, el("tr", {}, el("th", {}, "Place"), el("th", {}, "Player"), el("th", {}, "Role earned"), el("th", {}, "Points"), el("th", {}, "Total")), ...rows),
  ];
  if (result.decisive) body.push(el("p", { class: "decisive-note" }, decisiveNote(result)));
  // The whole last trick, from the play that led it (the server's result.last_trick: plays and passes in order).
  const trick = (result.last_trick || []).flatMap((e, k) => [...(k ? ["; "] : []), el("span", { class: "trick-move" },
    `${playerName(e.player)} `, ...(e.kind === "play" ? ["played ", ...e.cards.map((c) => cardNode(c, true))] : ["passed"]))]);
  if (trick.length) body.push(el("div", { class: "last-trick" }, "Last trick: ", ...trick));
  const final = g.over && ui.seenResults === g.results.length - 1;
  if (final && g.winner !== null) body.push(el("div", { class: "winner" }, g.winner === g.human ? "You win the game!" : `${playerName(g.winner)} wins the game.`));
  $("summary-body").replaceChildren(...body);
  $("continue").textContent = final ? "See the table" : "Continue";
  $("summary").classList.remove("hidden");
  ui.summaryOpen = true;
  $("continue").focus();
}

function closeSummary() {
  ui.seenResults += 1;
  ui.summaryOpen = false;
  $("summary").classList.add("hidden");
  if (ui.game) { render(); }
}

// ---------------------------------------------------------------- watch and replay
function renderFrame() {
  const g = ui.game;
  const frame = ui.frames[ui.frame];
  if (!frame) return;
  renderTable(frame.table);
  $("hands").replaceChildren(...frame.table.players.map((p) => el("div", { class: "player", "data-player": p.player },
    el("div", {}, `${playerName(p.player)} · ${p.role ? p.role.label : "no role yet"}`),
    el("div", { class: "hand" }, ...(p.cards || []).map((c) => cardNode(c, true))))));
  const loading = g.mode === "replay" && !g.loaded ? " (checking the replay…)" : g.mode === "watch" && !g.over ? " (live)" : "";
  $("frame-no").textContent = `move ${ui.frame} / ${ui.frameCount - 1}${loading}`;
  $("back").disabled = ui.frame <= 0; $("first").disabled = ui.frame <= 0;
  $("forward").disabled = ui.frame >= ui.frameCount - 1; $("last").disabled = $("forward").disabled;
  let status = frame.event ? describe(frame.event) : "Deal";
  if (frame.over) {
    const scores = frame.scores;
    const best = Math.max(...scores);
    status += ` — game over, winner ${playerName(g.winner !== null ? g.winner : scores.indexOf(best))}`;
  }
  if (g.error) status += ` — ${g.error}`;
  $("status").textContent = (g.mode === "replay" ? "Replay · " : "Watching · ") + status;
  const w = $("weighed");
  if (frame.weighed && frame.weighed.moves && frame.weighed.moves.length) {
    w.classList.remove("hidden");
    const moves = frame.weighed.moves.slice(0, 10);
    const top = Math.max(...moves.map((m) => Math.abs(m.value)), 1e-9);
    w.replaceChildren(el("div", {}, `What ${playerName(frame.event.player)} weighed (${frame.weighed.measure}):`),
      el("table", {}, ...moves.map((m) => el("tr", { class: m.action === frame.weighed.action ? "chosen" : "" },
        el("td", {}, m.move), el("td", {}, weight(frame.weighed.measure, m.value)),
        el("td", {}, el("span", { class: "bar", style: `width:${Math.round(60 * Math.abs(m.value) / top)}px` }))))));
  } else if (frame.event) {
    w.classList.remove("hidden");
    w.textContent = `${playerName(frame.event.player)} had one possible move, or its agent reports no weights.`;
  } else w.classList.add("hidden");
  const log = $("log");
  const shown = ui.frames.slice(Math.max(1, ui.frame - 59), ui.frame + 1).filter((f) => f && f.event);
  log.start = shown.length ? shown[0].index : 1;  // frame N shows move N
  log.replaceChildren(...shown.map((f) => el("li", { value: f.index }, describe(f.event))));
  log.scrollTop = log.scrollHeight;
}

async function stepTo(index) {
  if (!ui.frameCount) return;
  const target = Math.max(0, Math.min(ui.frameCount - 1, index));
  if (ui.game.mode === "watch" && target < ui.frameCount - 1) { ui.follow = false; $("follow").checked = false; }
  try { await fetchFrame(target); } catch (err) { $("status").textContent = `Connection problem: ${err.message}`; return; }
  ui.frame = target;
  render();
}

function pointsCell(result, p) {
  // A decisive manche's points are not added to the totals: shown in brackets.
  return result.decisive ? el("td", { class: "void", title: "not added: the decisive manche only breaks the tie" }, `(+${result.points[p]})`)
    : el("td", {}, `+${result.points[p]}`);
}

function decisiveNote(result) {
  // Why the decisive manche was played and who it made the winner (docs/RULES.md: of the players tied for the
  // highest total, the one who goes out first in it wins; its points are not added).
  const best = Math.max(...result.scores);
  const tied = result.scores.map((score, p) => p).filter((p) => result.scores[p] === best);
  const first = tied.reduce((a, b) => (result.positions[b] < result.positions[a] ? b : a));
  const names = tied.map((p) => playerName(p));
  const list = names.length > 2 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names.join(" and ");
  return `${list} were tied for the lead on ${plural(best, "point")}, so the whole table played a decisive manche. ` +
    `Its points (in brackets) are not added: of the tied players, the first to go out wins the game. ` +
    `${playerName(first)} went out ${ordinal(result.positions[first] + 1)}${first === result.order[0] ? "" : " (the first tied player out)"}.`;
}

function renderResults(results, g) {
  // The standings: a row per player (the leader first), their total, then their place, role and points in each
  // manche (a narrow screen scrolls the manches, never the totals).
  const box = $("results");
  if (!results.length) { box.replaceChildren(); return; }
  const last = results[results.length - 1];
  const decisive = results.filter((r) => r.decisive);
  const rank = (p) => [-last.scores[p], ...decisive.map((r) => r.positions[p]), p];
  const players = last.scores.map((s, p) => p).sort((a, b) => {
    const x = rank(a), y = rank(b);
    const k = x.findIndex((v, i) => v !== y[i]);
    return k < 0 ? 0 : x[k] - y[k];
  });
  const header = el("tr", {}, el("th", {}, "Player"), el("th", { class: "total" }, "Total"),
    ...results.map((r) => el("th", {}, r.decisive ? "Decisive" : `Manche ${r.manche + 1}`)));
  const rows = players.map((p) => el("tr", { "data-player": p }, el("td", {}, playerName(p)), el("th", { class: "total" }, String(last.scores[p])),
    ...results.map((r) => {
      const cell = pointsCell(r, p);
      cell.prepend(`${ordinal(r.positions[p] + 1)} `, el("span", { class: "role-earned" }, r.roles[p].label), " ");
      return cell;
    })));
  const children = [el("div", { class: "standings" }, el("table", {}, header, ...rows))];
  if (decisive.length) children.push(el("p", { class: "decisive-note" }, decisiveNote(decisive[decisive.length - 1])));
  if (g.over && g.winner !== null && g.mode === "play") {
    children.push(el("div", { class: "winner" }, g.winner === g.human ? "You win the game!" : `${playerName(g.winner)} wins the game.`));
  }
  box.replaceChildren(...children);
}

// ---------------------------------------------------------------- keyboard
function onKey(ev) {
  if (ev.target.matches("input, textarea, select")) return;
  const g = ui.game;
  if (!g || !g.mode || $("game").classList.contains("hidden")) return;
  if (ui.summaryOpen) { if (ev.key === "Enter" || ev.key === "Escape") { ev.preventDefault(); closeSummary(); } return; }
  if (g.mode !== "play") {
    if (ev.key === "ArrowLeft") stepTo(ui.frame - 1);
    else if (ev.key === "ArrowRight") stepTo(ui.frame + 1);
    else if (ev.key === "Home") stepTo(0);
    else if (ev.key === "End") stepTo(ui.frameCount - 1);
    return;
  }
  const key = ev.key.toLowerCase();
  if (key === "enter") { ev.preventDefault(); sendMove("play"); return; }
  if (key === "p") { sendMove("pass"); return; }
  if (key === "h") { askHint(); return; }
  if (key === "escape") { ui.selected.clear(); renderHand(); return; }
  const rank = KEY_RANK[key] || (RANKS.includes(key.toUpperCase()) ? key.toUpperCase() : null);
  if (!rank) return;
  const index = g.hand.findIndex((c, i) => rankOf(c) === rank && !ui.selected.has(i));
  if (index >= 0) toggle(index);
}

init().catch((err) => { $("setup-error").textContent = `Could not reach the server: ${err.message}`; });
