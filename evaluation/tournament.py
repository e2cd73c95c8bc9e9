"""Duplicate-deal tournaments between agents: :func:`evaluate`, :class:`TournamentResult` and ``president-eval``.

    from president_env.evaluation.tournament import evaluate
    result = evaluate(["heuristic-3", "heuristic-2"], rules="standard", n_deals=200, workers=2)
    print(result.to_markdown())
    result.to_json("results.json"); result.plot("results.png")

**Duplicate deals.** Card luck dominates a single manche, so every *deal group* (the
deals of one game: one per manche, plus one kept for a possible decisive manche, and
the first dealer) is played ``P`` times, the lineup rotated one seat further each time:
rotation ``s`` puts ``lineup[(i - s) % P]`` at player ``i``. Every agent thus plays
every player's cards of the deal. The first manche of every rotation starts from
identical hands by player; later manches redeal the group's hands by player too
(only the cards needed to match a different dealer's hand sizes move), though roles
and the exchange then follow each rotation's own results.

**Batched play.** A chunk of ``chunk_deals`` groups runs as one :class:`~president_env.VecGame`
with ``chunk_deals * P`` slots; at each step every distinct agent gets one ``act_batch``
call for the live slots where it is to act. Slots whose game has ended only fill in
legal moves until the whole chunk is done.

**Reproducibility.** The result depends on (lineup, rules, n_deals, seed, chunk_deals,
agent_seed) only: chunk ``i`` draws its deals, its game generator and its agents' seeds
from child ``i`` of ``SeedSequence(seed)``, whichever process plays it, so ``workers``
changes the speed and nothing else.

**Statistics** (:class:`TournamentResult`). Per agent name (copies of one agent pooled),
over the regular manches (a decisive manche is played out but not counted, so every
rotation weighs the same): points per manche, *advantage* (own points minus the mean
points of the other seats at that table), finishing position (0 = first), président and
trou-du-cul rates. Rotations of a deal share its cards, so they are not independent: the
unit of a confidence interval is the deal group. Each statistic is averaged within each
group, then reported as mean ± t(0.975, n-1)·sd/√n over the n groups (:func:`mean_ci`).
Ratings are Bradley–Terry strengths on the Elo scale fitted (by choix) to every pairwise
finishing comparison between seats of *different* agents (:func:`bradley_terry`); unlike
online Elo they do not depend on the order of the games.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import math
import multiprocessing
import os
import pickle
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from president_env import agents as agent_registry
from president_env import engine
from president_env.presets import PRESETS, load_preset, resolve_rules
from president_env.rules import Rules
from president_env.user_input import check_writable_dir, short_repr
from president_env.vec_game import VecGame

DEFAULT_DEALS = 200
DEFAULT_CHUNK_DEALS = 50
MAX_DEALS = 10_000_000
"""Most deal groups one tournament plays (days of play on one machine; its task list must fit in memory)."""
RATING_MEAN = 1500.0
"""Ratings are anchored so that their mean over the agents of a tournament is this value."""


# --------------------------------------------------------------------------------------
# Confidence intervals and ratings
# --------------------------------------------------------------------------------------
def t_quantile_975(df: int) -> float:
    """Student's t quantile t(0.975, df), from ``scipy.stats.t`` (scipy comes with the ``eval`` extra)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    try:
        from scipy.stats import t
    except ImportError as err:
        raise ImportError("confidence intervals need scipy: pip install 'president-env[eval]'") from err
    return float(t.ppf(0.975, df))


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` independent units with the half-width ``ci`` of its 95 % confidence interval."""

    mean: float
    ci: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.ci

    @property
    def high(self) -> float:
        return self.mean + self.ci


def mean_ci(values: np.ndarray | Sequence[float]) -> Estimate:
    """Mean of ``values (n,)`` (one per independent unit) ± t(0.975, n-1)·sd/√n; ``ci`` is NaN when n < 2."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return Estimate(math.nan, math.nan, 0)
    if n == 1:
        return Estimate(float(values[0]), math.nan, 1)
    half = t_quantile_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
    return Estimate(float(values.mean()), half, n)


def bradley_terry(wins: np.ndarray) -> np.ndarray:
    """Bradley–Terry ratings on the Elo scale from ``wins (K, K)``: ``wins[a, b]`` = times a finished ahead of b.

    The maximum-likelihood fit of ``P(a ahead of b) = gamma_a / (gamma_a + gamma_b)``, by choix's iterative Luce
    spectral ranking (:func:`choix.ilsr_pairwise_dense`; choix comes with the ``eval`` extra). Every pair that met
    also gets one virtual draw (half a win each way), so that an agent that always wins or always loses keeps a
    finite rating; against thousands of comparisons its weight is negligible. Returns ``(K,) float64`` ratings
    ``400·log10(gamma)`` shifted to mean :data:`RATING_MEAN` (so a 400-point gap means 10:1 odds of finishing
    ahead). Agents that met nobody get the mean; ValueError when the others fall into groups that never met.
    """
    wins = np.asarray(wins, dtype=np.float64)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or not np.isfinite(wins).all() or (wins < 0).any():
        raise ValueError(f"wins must be a square matrix of counts >= 0, got shape {wins.shape}")
    met = (wins + wins.T) > 0
    active = met.any(axis=1)
    ratings = np.zeros(wins.shape[0])
    if active.sum() >= 2:
        try:
            import choix
            from scipy.sparse.csgraph import connected_components
        except ImportError as err:
            raise ImportError("ratings need choix and scipy: pip install 'president-env[eval]'") from err
        among = np.ix_(active, active)
        parts, _ = connected_components(met[among], directed=False)
        if parts > 1:
            raise ValueError(f"the comparisons fall into {parts} groups of agents that never met: no common scale")
        # ``strengths`` = ln(gamma), centred on 0 over the agents that met someone.
        strengths = choix.ilsr_pairwise_dense((wins + 0.5 * met)[among], max_iter=1000, tol=1e-12)
        ratings[active] = 400.0 / math.log(10.0) * strengths
    return ratings - ratings.mean() + RATING_MEAN


# --------------------------------------------------------------------------------------
# Lineups, rules and seeds
# --------------------------------------------------------------------------------------
def load_rules(spec: Rules | str | os.PathLike | None) -> Rules:
    """Rules from a ``Rules``, a preset name, the path of a YAML file, or ``None`` (the standard game)."""
    if spec is None or isinstance(spec, Rules):
        return resolve_rules(spec)
    text = os.fspath(spec)
    if text in PRESETS:
        return load_preset(text)
    if os.path.isfile(text):  # False, not OSError, for a name too long for the file system
        return Rules.from_yaml(Path(text))
    raise ValueError(f"rules {short_repr(text, 200)} is neither a preset ({', '.join(PRESETS)}) nor a YAML file")


def agent_name(spec: Any) -> str:
    """The name results are reported under: the spec itself for a name, else the agent's ``name`` attribute."""
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec)
    return str(getattr(spec, "name", type(spec).__name__))


def check_agent_name(name: str) -> None:
    """``ValueError`` listing the known agents unless ``name`` is registered or an existing checkpoint file."""
    if name not in agent_registry.names() and not os.path.isfile(name):
        raise ValueError(
            f"unknown agent {short_repr(name)}; known agents: {', '.join(agent_registry.names())} "
            "(or a checkpoint file path)"
        )


def seat_lineup(lineup: Sequence[Any], n_players: int) -> list[Any]:
    """The lineup checked and with one entry per player: a shorter lineup is repeated cyclically.

    ``ValueError`` for a longer lineup, an unknown agent name or an object that cannot act.
    """
    if isinstance(lineup, (str, bytes)) or not isinstance(lineup, Sequence) or len(lineup) == 0:
        raise ValueError("lineup must be a non-empty list of agent names or agent objects")
    if len(lineup) > n_players:
        raise ValueError(f"lineup has {len(lineup)} agents but the rules seat {n_players} players")
    for spec in lineup:
        if isinstance(spec, (str, os.PathLike)):
            check_agent_name(os.fspath(spec))
        elif not (hasattr(spec, "act_batch") or hasattr(spec, "act")):
            raise ValueError(f"lineup entry {spec!r} is neither an agent name nor an object with act_batch or act")
    return [lineup[i % len(lineup)] for i in range(n_players)]


def rotation_entries(n_players: int) -> np.ndarray:
    """``(P rotations, P players) int64``: the lineup entry at each player; rotation s seats entry (i - s) % P at i."""
    players = np.arange(n_players)
    return (players[None, :] - players[:, None]) % n_players


def _distinct(entries: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Distinct agents (names by value, objects by identity) in order of appearance, and each entry's index."""
    keys: list[Any] = []
    index = []
    for spec in entries:
        key = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else id(spec)
        if key not in keys:
            keys.append(key)
        index.append(keys.index(key))
    first = [entries[index.index(k)] for k in range(len(keys))]
    return first, np.array(index, np.int64)


# --------------------------------------------------------------------------------------
# Playing one chunk of deal groups
# --------------------------------------------------------------------------------------
@dataclass
class MancheRecords:
    """Every regular manche played, one row each (``n`` rows, ``P`` players).

    group ``(n,) int64`` deal group (global index); rotation ``(n,) int64``; manche ``(n,) int64`` index in
    the game; decisions ``(n,) int64`` decisions taken in the manche (exchange and play); points ``(n, P)
    float64`` raw points by player; positions ``(n, P) int64`` finishing position by player (0 = first).
    """

    group: np.ndarray
    rotation: np.ndarray
    manche: np.ndarray
    decisions: np.ndarray
    points: np.ndarray
    positions: np.ndarray

    @classmethod
    def concatenate(cls, parts: Sequence[MancheRecords]) -> MancheRecords:
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in names))


@dataclass
class _ChunkTask:
    """What a worker needs to play one chunk (picklable)."""

    rules: Rules
    specs: list[Any]  # distinct agents: names (made in the worker) or objects
    entry_agent: np.ndarray  # (P,) distinct-agent index of each lineup entry
    first_group: int
    n_groups: int
    seed: np.random.SeedSequence  # deals and game generator
    agent_seeds: list[np.random.SeedSequence]  # one per distinct agent


def _make_agents(task: _ChunkTask) -> list[Any]:
    made = []
    for spec, seed in zip(task.specs, task.agent_seeds):
        if isinstance(spec, (str, os.PathLike)):
            agent = agent_registry.make(spec, task.rules, seed=seed)
        else:
            agent = spec
            # Reseeding per chunk keeps an object's decisions independent of which process plays the chunk.
            if callable(getattr(agent, "reset", None)):
                agent.reset(seed)
        made.append(agent_registry.as_agent(agent))
    return made


def _group_setup(rules: Rules, rng: np.random.Generator, n_groups: int) -> tuple[np.ndarray | None, list, list | None]:
    """Per group: the first dealer ``(G,)``, the deals by player (one per manche + one for a decisive manche),
    and with ``initial_roles: draw`` the drawn roles by player (else ``None``; with them the first dealer is
    ``None``: the drawn Trou du cul deals the first manche)."""
    p = rules.n_players
    dealers = rng.integers(0, p, size=n_groups)
    identity = list(range(p))
    deals = [[engine.deal_hands(rules, rng, int(d), identity) for _ in range(rules.manches + 1)] for d in dealers]
    roles = None
    if rules.initial_roles == "draw":
        # The draw is part of the deal group: every rotation starts from the same roles by player.
        role_by_pos = engine.tables(rules).role_by_pos
        roles = [[engine.ROLE_NAMES[role_by_pos[pos]] for pos in rng.permutation(p)] for _ in range(n_groups)]
        for group_deals, names in zip(deals, roles):
            # The table seated by the draw (reseat_by_role); its Trou du cul deals the first manche.
            seat_of_player, dealer = engine.table_for_roles(rules, names)
            group_deals[0] = engine.deal_hands(rules, rng, dealer, seat_of_player)
        dealers = None
    return dealers, deals, roles


def _fit_hand_sizes(hands: list[list[str]], sizes: Sequence[int]) -> list[list[str]]:
    """The deal ``hands`` with the fewest cards moved so that player i holds ``sizes[i]`` cards.

    With ``N mod P != 0`` cards the dealer decides who holds one card more; rotations of a group have
    different dealers after the first manche, so a few cards move from the players with one too many to
    those with one too few (the last cards of a hand, i.e. the last cards dealt to it).
    """
    fitted = [list(hand) for hand in hands]
    spare: list[str] = []
    for hand, size in zip(fitted, sizes):
        while len(hand) > size:
            spare.append(hand.pop())
    for hand, size in zip(fitted, sizes):
        while len(hand) < size:
            hand.append(spare.pop())
    return fitted


def _redeal(game: VecGame, slots: np.ndarray, deals: list, group_of_slot: np.ndarray) -> None:
    """Give ``slots``, whose previous manche just ended, their group's deal for the manche about to start."""
    rules, state = game.rules, game.state
    first = (state.dealer[slots] + (1 if rules.deal_start == "dealer_left" else 0)) % rules.n_players
    sizes_by_seat = engine.deal_sizes(rules, first)  # the engine's own rule for a regular deal's hand sizes
    sizes = np.take_along_axis(sizes_by_seat, state.seat_of_player[slots].astype(np.int64), axis=1)
    chosen = [_fit_hand_sizes(deals[group_of_slot[s]][state.manche[s]], sizes[i].tolist()) for i, s in enumerate(slots)]
    game.redeal(chosen, slots)


def _choose_actions(
    agents: Sequence[Any], names: Sequence[str], agent_at: np.ndarray, game: VecGame, live: np.ndarray
) -> np.ndarray:
    """One action per slot: each agent decides, in one ``act_batch`` call, for the live slots where it is to act.

    ``agent_at (B, P)`` is the distinct-agent index at each player. Finished slots get their first legal action
    (nobody reads their outcome). Raises ``ValueError`` naming the agent if it returns an illegal action.
    """
    mask = game.legal_mask()
    actions = mask.argmax(axis=1).astype(np.int64)
    slots = np.arange(game.batch_size)
    acting = agent_at[slots, game.current_player]
    obs = game.observe()
    for a, agent in enumerate(agents):
        rows = np.flatnonzero(live & (acting == a))
        if rows.size == 0:
            continue
        chosen = np.asarray(agent.act_batch(obs[rows], mask[rows]), dtype=np.int64).reshape(-1)
        if chosen.shape != rows.shape:
            raise ValueError(f"agent {names[a]!r} returned {chosen.size} actions for {rows.size} observations")
        legal = (chosen >= 0) & (chosen < game.num_actions)
        legal[legal] = mask[rows[legal], chosen[legal]]
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"agent {names[a]!r} chose illegal action {int(chosen[bad])} (slot {int(rows[bad])})")
        actions[rows] = chosen
    return actions


def _play_chunk(task: _ChunkTask, report: Callable[[int], Any] | None = None) -> MancheRecords:
    """Play every rotation of ``task.n_groups`` deal groups to the end of their game; the regular manches.

    ``report(k)``, when given, is called whenever k more groups have finished all their rotations.
    """
    rules = task.rules
    p = rules.n_players
    deal_seed, game_seed = task.seed.spawn(2)
    dealers, deals, roles = _group_setup(rules, np.random.default_rng(deal_seed), task.n_groups)
    agents = _make_agents(task)
    names = [agent_name(spec) for spec in task.specs]

    n_slots = task.n_groups * p
    group_of_slot = np.repeat(np.arange(task.n_groups), p)  # slot = group * P + rotation
    rotation_of_slot = np.tile(np.arange(p), task.n_groups)
    agent_at = task.entry_agent[rotation_entries(p)[rotation_of_slot]]  # (B, P) distinct agent at each player

    game = VecGame(rules, batch_size=n_slots, seed=np.random.default_rng(game_seed), reward_mode="points")
    game.reset(
        deals=[deals[g][0] for g in group_of_slot],
        dealers=None if dealers is None else dealers[group_of_slot],
        roles=None if roles is None else [roles[g] for g in group_of_slot],
    )
    live = np.ones(n_slots, bool)
    reported = 0
    rows: list[tuple[np.ndarray, ...]] = []
    while live.any():
        actions = _choose_actions(agents, names, agent_at, game, live)
        was_decisive = game.state.decisive.copy()
        manche = game.state.manche.astype(np.int64)
        decisions = game.state.manche_steps.astype(np.int64) + 1
        points, ended, done = game.step_events(actions)
        ended &= live
        regular = np.flatnonzero(ended & ~was_decisive)
        if regular.size:
            rows.append((regular, manche[regular], decisions[regular], points[regular], game.last_positions[regular]))
        live &= ~done
        if report is not None and done.any():
            finished = int((~live).reshape(task.n_groups, p).all(axis=1).sum())
            if finished > reported:
                report(finished - reported)
                reported = finished
        next_manche = np.flatnonzero(ended & live)
        if next_manche.size:
            _redeal(game, next_manche, deals, group_of_slot)

    slots, manches, decisions, pts, positions = (np.concatenate(parts) for parts in zip(*rows))
    order = np.lexsort((manches, slots))  # a canonical row order: slot, then manche
    slots = slots[order]
    return MancheRecords(
        group=task.first_group + group_of_slot[slots],
        rotation=rotation_of_slot[slots],
        manche=manches[order],
        decisions=decisions[order],
        points=pts[order].astype(np.float64),
        positions=positions[order].astype(np.int64),
    )


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentStats:
    """One agent name's results: ``manches`` = manches played (seats × manches), each statistic per manche."""

    name: str
    manches: int
    points: Estimate
    advantage: Estimate
    position: Estimate
    president: Estimate
    trou: Estimate
    rating: float


_STAT_FIELDS = ("points", "advantage", "position", "president", "trou")


def dump_json(data: Any, path: str | os.PathLike) -> None:
    """Write ``data`` as indented JSON; NaN (an undefined CI) becomes ``null`` so that strict parsers read it."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    Path(path).write_text(json.dumps(clean(data), indent=2, allow_nan=False) + "\n", encoding="utf-8")


@dataclass
class TournamentResult:
    """The outcome of :func:`evaluate`.

    config: lineup (names, one per player), rules (``Rules.to_dict()``), n_deals, seed, chunk_deals, agent_seed.
    agents: ``{name: AgentStats}`` in lineup order. wins: ``(K, K) int64`` over those K names, ``wins[a, b]`` =
    times a finished ahead of b at one table. records: every regular manche (not written to JSON).
    """

    config: dict[str, Any]
    agents: dict[str, AgentStats]
    wins: np.ndarray
    records: MancheRecords = field(repr=False, compare=False)

    @property
    def n_groups(self) -> int:
        return int(self.config["n_deals"])

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Plain numbers per agent name: each statistic's mean and its CI half-width (``<stat>_ci``)."""
        out: dict[str, dict[str, Any]] = {}
        for name, stats in self.agents.items():
            row: dict[str, Any] = {"manches": stats.manches}
            for stat in _STAT_FIELDS:
                estimate = getattr(stats, stat)
                row[stat] = estimate.mean
                row[f"{stat}_ci"] = estimate.ci
            row["rating"] = stats.rating
            out[name] = row
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "agents": self.summary,
            "pairwise_wins": {"names": list(self.agents), "wins": self.wins.tolist()},
            "notes": {
                "ci": "95 % CI half-widths; unit = deal group (all rotations of one deal), Student t over groups",
                "advantage": "own points minus the mean points of the other seats, per manche",
                "rating": f"Bradley-Terry, Elo scale (400 log10), mean {RATING_MEAN:g}",
            },
        }

    def to_json(self, path: str | os.PathLike) -> None:
        dump_json(self.to_dict(), path)

    def _repr_markdown_(self) -> str:  # a result shows itself as its table in Jupyter
        return self.to_markdown()

    def to_markdown(self) -> str:
        """A caption line and a table: agent | manches | points/manche ± CI | advantage ± CI | mean position |
        président % | trou % | rating."""
        cfg = self.config
        caption = (
            f"{cfg['n_deals']} duplicate deal groups × {len(cfg['lineup'])} seat rotations, "
            f"{cfg['rules']['manches']} manche(s) per game, seed {cfg['seed']}; ± = 95 % CI over deal groups."
        )
        header = ["agent", "manches", "points/manche", "advantage", "mean position", "président %", "trou %", "rating"]
        rows = [
            [
                name,
                str(s.manches),
                format_estimate(s.points),
                format_estimate(s.advantage, signed=True),
                format_estimate(s.position),
                format_estimate(s.president, scale=100, digits=1),
                format_estimate(s.trou, scale=100, digits=1),
                f"{s.rating:.0f}",
            ]
            for name, s in self.agents.items()
        ]
        return caption + "\n\n" + markdown_table(header, rows)

    def plot(self, path: str | os.PathLike) -> None:
        """A PNG of points per manche with 95 % CI error bars, one bar per agent."""
        names = list(self.agents)
        errorbar_png(
            path,
            groups={"": (names, [self.agents[n].points for n in names])},
            ylabel="points per manche",
            title=f"{self.config['n_deals']} duplicate deal groups; lineup: {', '.join(self.config['lineup'])}",
        )


def format_estimate(estimate: Estimate, signed: bool = False, scale: float = 1.0, digits: int = 2) -> str:
    """``"1.52 ± 0.08"`` (``"+0.31 ± 0.05"`` when signed); the CI is left out when it is undefined."""
    sign = "+" if signed else ""
    text = f"{estimate.mean * scale:{sign}.{digits}f}"
    return text if math.isnan(estimate.ci) else f"{text} ± {estimate.ci * scale:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int = 1) -> str:
    """A GitHub Markdown table (tabulate's ``pipe`` format; tabulate comes with the ``eval`` extra): the first
    ``text_columns`` columns left-aligned, the numbers right-aligned; cells are written as given."""
    try:
        from tabulate import tabulate
    except ImportError as err:
        raise ImportError("Markdown tables need tabulate: pip install 'president-env[eval]'") from err
    align = ["left"] * text_columns + ["right"] * (len(header) - text_columns)
    return tabulate(rows, headers=header, tablefmt="pipe", colalign=align, disable_numparse=True)


def errorbar_png(
    path: str | os.PathLike,
    groups: dict[str, tuple[Sequence[str], Sequence[Estimate]]],
    ylabel: str,
    title: str,
) -> None:
    """Write a PNG of means with 95 % CI error bars: one cluster per group (``{group: (labels, estimates)}``)."""
    try:
        from matplotlib.figure import Figure  # a bare Figure renders with Agg and leaves pyplot's backend alone
    except ImportError as err:
        raise ImportError("plots need matplotlib: pip install 'president-env[eval]'") from err
    width = max(5.0, 1.2 * sum(len(labels) for labels, _ in groups.values()) + 1.5)
    fig = Figure(figsize=(width, 4.0), layout="constrained")
    ax = fig.add_subplot()
    x = 0.0
    ticks, tick_labels = [], []
    for group, (labels, estimates) in groups.items():
        xs = x + np.arange(len(labels))
        means = [e.mean for e in estimates]
        errors = [0.0 if math.isnan(e.ci) else e.ci for e in estimates]
        ax.bar(xs, means, yerr=errors, capsize=4, label=group or None)
        ticks += xs.tolist()
        tick_labels += list(labels)
        x += len(labels) + 1
    ax.set_xticks(ticks, tick_labels, rotation=20, ha="right")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_ylabel(ylabel)
    ax.set_title("\n".join(textwrap.wrap(title, width=int(12 * width))), fontsize=9)
    if any(groups):
        ax.legend()
    fig.savefig(path, dpi=120)


def _summarize(config: dict[str, Any], entry_names: Sequence[str], records: MancheRecords) -> TournamentResult:
    """Pool the records by agent name into per-group means, their CIs and the Bradley–Terry ratings."""
    p = len(entry_names)
    names = list(dict.fromkeys(entry_names))
    name_of_entry = np.array([names.index(n) for n in entry_names])
    who = name_of_entry[rotation_entries(p)[records.rotation]]  # (n, P) name index at each player
    points, positions = records.points, records.positions
    others_mean = (points.sum(axis=1, keepdims=True) - points) / (p - 1)
    per_seat = {
        "points": points,
        "advantage": points - others_mean,
        "position": positions.astype(np.float64),
        "president": (positions == 0).astype(np.float64),
        "trou": (positions == p - 1).astype(np.float64),
    }
    group = np.broadcast_to(records.group[:, None], who.shape)  # (n, P) deal group of each seat's result
    n_groups = int(config["n_deals"])

    # Every pair of seats held by different agents at one table is one finishing comparison.
    wins = np.zeros((len(names), len(names)), np.int64)
    for i in range(p):
        for j in range(p):
            pair = (who[:, i] != who[:, j]) & (positions[:, i] < positions[:, j])
            np.add.at(wins, (who[pair, i], who[pair, j]), 1)
    ratings = bradley_terry(wins)

    stats = {}
    for k, name in enumerate(names):
        seat = who == k
        # Within a group every rotation and manche weighs the same; the groups are the independent units.
        groups_of_seat = group[seat]
        count = np.bincount(groups_of_seat, minlength=n_groups)
        estimates = {
            stat: mean_ci(np.bincount(groups_of_seat, weights=values[seat], minlength=n_groups) / count)
            for stat, values in per_seat.items()
        }
        stats[name] = AgentStats(name=name, manches=int(seat.sum()), rating=float(ratings[k]), **estimates)
    return TournamentResult(config=config, agents=stats, wins=wins, records=records)


# --------------------------------------------------------------------------------------
# The tournament
# --------------------------------------------------------------------------------------
def evaluate(
    lineup: Sequence[Any],
    rules: Rules | str | os.PathLike | None = None,
    n_deals: int = DEFAULT_DEALS,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
    agent_seed: int | None = None,
    ray_address: str | None = None,
) -> TournamentResult:
    """A duplicate-deal tournament: each of ``n_deals`` deal groups played in all ``P`` seat rotations.

    Args:
        lineup: agent names (for :func:`president_env.agents.make`) or agent objects (with ``act_batch`` or
            ``act``), one per player; a shorter list is repeated to fill the table. Copies of one name are
            one agent and pool their results.
        rules: a ``Rules``, a preset name or a YAML path (default: the standard game).
        n_deals: deal groups; the tournament plays ``n_deals * P`` games.
        seed: root seed of the deals, the game generators and (unless ``agent_seed``) the agents.
        workers: processes playing chunks in parallel; does not change the result. Agent objects must be
            picklable when ``workers > 1`` (names are made anew in each worker).
        progress: show a tqdm progress bar over deals.
        chunk_deals: deal groups per chunk (one ``VecGame`` of ``chunk_deals * P`` slots); part of the seeding.
        agent_seed: root seed of the agents' generators, to vary deals and agent randomness separately.
            Agent objects with a ``reset(seed)`` method are reseeded at every chunk.
        ray_address: play the chunks as Ray tasks instead (``"local"``, ``"auto"``, ``"ray://host:10001"``;
            see :mod:`president_env.evaluation.distributed`); ``workers`` is then unused. Does not change
            the result either.
    Returns:
        A :class:`TournamentResult`.
    """
    rules = load_rules(rules)
    entries = seat_lineup(lineup, rules.n_players)
    _check_counts(n_deals=n_deals, chunk_deals=chunk_deals, workers=workers)
    _check_seeds(seed=seed, agent_seed=agent_seed)
    specs, entry_agent = _distinct(entries)
    if workers > 1 or ray_address is not None:
        for spec in specs:
            if not isinstance(spec, (str, os.PathLike)):
                try:
                    pickle.dumps(spec)
                except Exception as err:
                    raise ValueError(
                        f"agent object {agent_name(spec)!r} cannot be pickled ({err}); play it in this process "
                        "(workers=1, no Ray) or pass its name"
                    ) from None

    starts = list(range(0, n_deals, chunk_deals))
    tasks = [
        _ChunkTask(rules, specs, entry_agent, start, min(chunk_deals, n_deals - start), play_seed, agent_seeds)
        for start, (play_seed, agent_seeds) in zip(starts, _chunk_seeds(seed, agent_seed, len(starts), len(specs)))
    ]
    parts = _run_tasks(tasks, workers, progress, n_deals, ray_address)
    config = {
        "lineup": [agent_name(spec) for spec in entries],
        "rules": rules.to_dict(),
        "n_deals": int(n_deals),
        "seed": seed,
        "chunk_deals": int(chunk_deals),
        "agent_seed": agent_seed,
    }  # neither workers nor ray_address: they change the speed, not the result
    return _summarize(config, config["lineup"], MancheRecords.concatenate(parts))


def _check_counts(**counts: Any) -> None:
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {short_repr(value)}")
        if name in ("n_deals", "deals") and value > MAX_DEALS:
            raise ValueError(f"{name} must be at most {MAX_DEALS:,}, got {short_repr(value)}")


def _check_seeds(**seeds: Any) -> None:
    for name, value in seeds.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer or None, got {short_repr(value)}")


def _chunk_seeds(
    seed: int | None, agent_seed: int | None, n_chunks: int, n_agents: int
) -> list[tuple[np.random.SeedSequence, list[np.random.SeedSequence]]]:
    """Per chunk: the seed of its deals and game generator, and one seed per distinct agent.

    Chunk i uses child i of ``SeedSequence(seed)`` (split into play and agents), or for the agents child i of
    ``SeedSequence(agent_seed)`` when given: a chunk's seeds never depend on who plays it.
    """
    chunks = np.random.SeedSequence(seed).spawn(n_chunks)
    agent_roots = None if agent_seed is None else np.random.SeedSequence(agent_seed).spawn(n_chunks)
    out = []
    for i, chunk in enumerate(chunks):
        play, agents = chunk.spawn(2)
        if agent_roots is not None:
            agents = agent_roots[i]
        out.append((play, agents.spawn(n_agents)))
    return out


def _run_tasks(
    tasks: list[_ChunkTask], workers: int, progress: bool, n_deals: int, ray_address: str | None = None
) -> list[MancheRecords]:
    """Play the chunks (in this process, in a pool or on Ray) and return their records in chunk order."""
    if ray_address is not None:
        from .distributed import init_ray, map_ordered

        init_ray(ray_address)
    bar = _progress_bar(n_deals, progress)
    try:
        if ray_address is not None:
            return map_ordered(_play_chunk, tasks, on_result=lambda i: bar.update(tasks[i].n_groups))
        if workers == 1 or len(tasks) == 1:
            return [_play_chunk(task, report=bar.update) for task in tasks]
        results: dict[int, MancheRecords] = {}
        # Spawned, not forked: a child forked after the parent ran torch (a checkpoint agent is loaded to check it
        # before playing) deadlocks in torch's thread pool at its first parallel operation.
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context) as pool:
            futures = {pool.submit(_play_chunk, task): i for i, task in enumerate(tasks)}
            for future in concurrent.futures.as_completed(futures):
                i = futures[future]
                results[i] = future.result()
                bar.update(tasks[i].n_groups)
        return [results[i] for i in range(len(tasks))]
    finally:
        bar.close()


def _progress_bar(total: int, enabled: bool) -> Any:
    """A tqdm bar over deals; ``disable`` makes it a no-op (tqdm comes with the ``eval`` extra)."""
    try:
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("tournaments need tqdm: pip install 'president-env[eval]'") from err
    return tqdm(total=total, unit="deal", desc="tournament", disable=not enabled)


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="president-eval",
        description="Duplicate-deal tournament between agents; writes results.json, results.md and results.png.",
    )
    parser.add_argument(
        "--agents",
        required=True,
        help="comma-separated lineup, one agent per seat (repeated cyclically if shorter), "
        "e.g. heuristic-3,heuristic-2,heuristic-2,heuristic-2",
    )
    parser.add_argument("--rules", default="standard", help="preset name or YAML path (default: standard)")
    parser.add_argument("--deals", type=int, default=DEFAULT_DEALS, help="duplicate deal groups (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default: %(default)s)")
    parser.add_argument("--agent-seed", type=int, default=None, help="separate root seed for the agents")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (default: %(default)s)")
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the chunks on Ray instead of --workers: 'local' (a Ray instance on this machine), 'auto' "
        "(this machine's cluster) or 'ray://host:10001'; the results are the same (needs the ray extra)",
    )
    parser.add_argument(
        "--chunk-deals", type=int, default=DEFAULT_CHUNK_DEALS, help="deal groups per batch (default: %(default)s)"
    )
    parser.add_argument(
        "--against",
        help="comma-separated opponents: one tournament per opponent, the single agent of --agents against "
        "n_players - 1 copies of it (writes versus.json|md|png and one folder per opponent)",
    )
    parser.add_argument("--out", default="results/eval", help="output folder (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--save-replays",
        type=int,
        default=0,
        metavar="N",
        help="also play N games of the lineup (with --against: the agent against the first opponent) one at a time "
        "and save them as JSON replays in OUT/replays/ (docs/replay.md)",
    )
    return parser


def evaluate_against(
    agent: Any, opponents: Sequence[Any], rules: Rules | str | os.PathLike | None = None, **kwargs: Any
) -> dict[str, TournamentResult]:
    """One ``agent`` against ``n_players - 1`` copies of each opponent: one tournament per opponent.

    Every tournament uses the same deals (same ``seed``); ``kwargs`` are :func:`evaluate`'s. Returns
    ``{opponent name: TournamentResult}``; the agent is the first entry of each result's ``agents``.
    """
    rules = load_rules(rules)
    return {
        agent_name(opponent): evaluate([agent] + [opponent] * (rules.n_players - 1), rules, **kwargs)
        for opponent in opponents
    }


def versus_markdown(results: dict[str, TournamentResult]) -> str:
    """The table of :func:`evaluate_against`: one row per opponent, the agent's statistics against it."""
    first = next(iter(results.values()))
    agent = next(iter(first.agents))
    players, cfg = len(first.config["lineup"]), first.config
    caption = (
        f"{agent} against {players - 1} copies of each opponent; {cfg['n_deals']} duplicate deal groups × "
        f"{players} seat rotations, seed {cfg['seed']}; ± = 95 % CI over deal groups."
    )
    header = ["opponents", "advantage", "points/manche", "opponents' points", "mean position", "président %", "trou %"]
    rows = []
    for opponent, result in results.items():
        own, other = result.agents[agent], result.agents.get(opponent)
        rows.append(
            [
                opponent,
                format_estimate(own.advantage, signed=True),
                format_estimate(own.points),
                format_estimate(other.points) if other is not None and opponent != agent else "",
                format_estimate(own.position),
                format_estimate(own.president, scale=100, digits=1),
                format_estimate(own.trou, scale=100, digits=1),
            ]
        )
    return caption + "\n\n" + markdown_table(header, rows)


def write_versus(results: dict[str, TournamentResult], out: str | os.PathLike) -> Path:
    """``versus.json``, ``versus.md``, ``versus.png`` in ``out``, and each tournament's files in ``out/<opponent>/``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    agent = next(iter(next(iter(results.values())).agents))
    dump_json({opponent: result.to_dict() for opponent, result in results.items()}, folder / "versus.json")
    (folder / "versus.md").write_text(versus_markdown(results) + "\n", encoding="utf-8")
    errorbar_png(
        folder / "versus.png",
        groups={"": (list(results), [r.agents[agent].advantage for r in results.values()])},
        ylabel="advantage (points per manche)",
        title=f"{agent} against each opponent (x{len(next(iter(results.values())).config['lineup']) - 1})",
    )
    for opponent, result in results.items():
        write_outputs(result, folder / _safe_folder(opponent))
    return folder


def _safe_folder(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def write_outputs(result: TournamentResult, out: str | os.PathLike) -> Path:
    """Write ``results.json``, ``results.md`` and ``results.png`` into ``out`` (created); returns the folder."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    result.to_json(folder / "results.json")
    (folder / "results.md").write_text(result.to_markdown() + "\n", encoding="utf-8")
    result.plot(folder / "results.png")
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    """``president-eval``: run a tournament from the command line and print its Markdown table."""
    parser = _parser()
    args = parser.parse_args(argv)
    lineup = [name.strip() for name in args.agents.split(",") if name.strip()]
    against = [name.strip() for name in (args.against or "").split(",") if name.strip()]
    if args.against is not None and (len(lineup) != 1 or not against):
        parser.error("--against needs exactly one agent in --agents and at least one opponent")
    if args.save_replays < 0:
        parser.error(f"--save-replays must be >= 0, got {args.save_replays}")
    # Everything the user named is checked before the tournament runs: a typo must not cost its whole time.
    try:
        rules = load_rules(args.rules)
        seat_lineup(lineup, rules.n_players)
        for name in dict.fromkeys(lineup + against):
            check_agent_name(name)
            # Made once here: a checkpoint file that cannot load, or a learned agent of other rules, is refused now.
            agent_registry.make(name, rules)
        _check_counts(deals=args.deals, chunk_deals=args.chunk_deals, workers=args.workers)
        _check_seeds(seed=args.seed, agent_seed=args.agent_seed)
        if args.ray is not None:
            from .distributed import require_ray

            require_ray()
        check_writable_dir(args.out, "--out")
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    started = time.perf_counter()
    options = dict(
        n_deals=args.deals,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        chunk_deals=args.chunk_deals,
        agent_seed=args.agent_seed,
        ray_address=args.ray,
    )
    if args.against is not None:
        results = evaluate_against(lineup[0], against, rules, **options)
        folder, table = write_versus(results, args.out), versus_markdown(results)
    else:
        result = evaluate(lineup, rules=rules, **options)
        folder, table = write_outputs(result, args.out), result.to_markdown()
    if args.save_replays:
        from .replays import save_games

        games = seat_lineup(lineup if not against else lineup + against[:1] * (rules.n_players - 1), rules.n_players)
        save_games(games, rules, args.save_replays, Path(folder) / "replays", args.seed, source="president-eval")
    print(table)
    print(f"\n{time.perf_counter() - started:.1f} s; results in {folder}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
