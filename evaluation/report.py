"""Tournament results: :class:`TournamentResult` (its statistics, JSON, Markdown and plot) and the files written.

**Statistics.** Per agent name (copies of one agent pooled), over the regular manches (a decisive manche is
played out but not counted, so every rotation weighs the same): points per manche, *advantage* (own points
minus the mean points of the other seats at that table), finishing position (0 = first), président and
trou-du-cul rates, the share of matches (games) won, and points per manche by the role the seat held as the
manche started (none in a first manche without roles; président … trou du cul after). Every statistic is
averaged within each deal group, then given with its 95 % interval over the groups
(:mod:`~president_env.evaluation.statistics`); a role statistic over the groups where the agent held that role.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from president_env.core import deals

from .play import MancheRecords, rotation_entries
from .statistics import RATING_MEAN, UNBOUNDED, Estimate, bradley_terry, mean_ci

ROLES: tuple[str, ...] = ("none",) + deals.ROLE_NAMES
"""The roles a seat can hold as a manche starts, in the order of the by-role table (``none``: no roles yet)."""
ROLE_LABELS: dict[str, str] = {
    "none": "no role",
    "president": "président",
    "vice_president": "vice-président",
    "neutre": "neutre",
    "vice_trou": "vice-trou",
    "trou_du_cul": "trou du cul",
}


@dataclass(frozen=True)
class AgentStats:
    """One agent name's results: ``manches`` = manches played (seats × manches), each statistic per manche but
    ``won``, the share of its seats' matches it won; ``by_role`` = points per manche by role at the manche's
    start (:data:`ROLES`; ``n`` = 0 where it never held that role)."""

    name: str
    manches: int
    points: Estimate
    advantage: Estimate
    position: Estimate
    president: Estimate
    trou: Estimate
    won: Estimate
    by_role: dict[str, Estimate]
    rating: float


_STAT_FIELDS = ("points", "advantage", "position", "president", "trou", "won")


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
    """The outcome of :func:`~president_env.evaluation.tournament.evaluate`.

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
        """The number of deal groups played (each in every seat rotation)."""
        return int(self.config["n_deals"])

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles some seat held as a manche started in this tournament (:data:`ROLES` order)."""
        return tuple(role for role in ROLES if any(s.by_role[role].n for s in self.agents.values()))

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Plain numbers per agent name: each statistic's mean and its CI half-width (``<stat>_ci``), and per
        role its mean, CI and number of groups (``points_by_role``)."""
        out: dict[str, dict[str, Any]] = {}
        for name, stats in self.agents.items():
            row: dict[str, Any] = {"manches": stats.manches}
            for stat in _STAT_FIELDS:
                estimate = getattr(stats, stat)
                row[stat] = estimate.mean
                row[f"{stat}_ci"] = estimate.ci
                if estimate.clipped:
                    row[f"{stat}_interval"] = [estimate.low, estimate.high]
            row["points_by_role"] = {
                role: {"points": e.mean, "points_ci": e.ci, "groups": e.n} for role, e in stats.by_role.items() if e.n
            }
            row["rating"] = stats.rating
            out[name] = row
        return out

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON values: config, per-agent summary, pairwise wins and notes on each statistic."""
        return {
            "config": self.config,
            "agents": self.summary,
            "pairwise_wins": {"names": list(self.agents), "wins": self.wins.tolist()},
            "notes": {
                "ci": "95 % CI half-widths; unit = deal group (all rotations of one deal), Student t over groups; "
                "where mean ± CI passes the statistic's range (0..1 for a rate), <stat>_interval gives it cut to it",
                "advantage": "own points minus the mean points of the other seats, per manche",
                "won": "share of the agent's seats whose player won the match (a decisive manche breaks ties)",
                "points_by_role": "points per manche by the role held as the manche started; groups = deal groups "
                "in which the agent held it",
                "rating": f"Bradley-Terry, Elo scale (400 log10), mean {RATING_MEAN:g}",
            },
        }

    def to_json(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON."""
        dump_json(self.to_dict(), path)

    def _repr_markdown_(self) -> str:  # a result shows itself as its table in Jupyter
        return self.to_markdown()

    def to_markdown(self) -> str:
        """A caption line, the table agent | manches | points/manche ± CI | advantage ± CI | matches won % |
        mean position | président % | trou % | rating, and with more than one role the table of points per
        manche by role at the manche's start."""
        cfg = self.config
        caption = (
            f"{cfg['n_deals']} duplicate deal groups × {len(cfg['lineup'])} seat rotations, "
            f"{cfg['rules']['manches']} manche(s) per game, seed {cfg['seed']}; ± = 95 % CI over deal groups."
        )
        header = ["agent", "manches", "points/manche", "advantage", "matches won %", "mean position"]
        header += ["président %", "trou %", "rating"]
        rows = [
            [
                name,
                str(s.manches),
                format_estimate(s.points),
                format_estimate(s.advantage, signed=True),
                format_estimate(s.won, scale=100, digits=1),
                format_estimate(s.position),
                format_estimate(s.president, scale=100, digits=1),
                format_estimate(s.trou, scale=100, digits=1),
                f"{s.rating:.0f}",
            ]
            for name, s in self.agents.items()
        ]
        text = caption + "\n\n" + markdown_table(header, rows)
        roles = self.roles
        if len(roles) > 1:
            by_role = [
                [name] + [format_estimate(s.by_role[r]) if s.by_role[r].n else "" for r in roles]
                for name, s in self.agents.items()
            ]
            text += "\n\nPoints per manche by role at the start of the manche:\n\n"
            text += markdown_table(["agent"] + [ROLE_LABELS[r] for r in roles], by_role)
        return text

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
    """``"1.52 ± 0.08"`` (``"+0.31 ± 0.05"`` when signed); the CI is left out when it is undefined, and written
    as its ends, ``"50.0 [0.0, 100.0]"``, when it is cut to the statistic's range (:class:`Estimate`)."""
    sign = "+" if signed else ""
    text = f"{estimate.mean * scale:{sign}.{digits}f}"
    if math.isnan(estimate.ci):
        return text
    if estimate.clipped:  # the interval cut to the statistic's range, e.g. 0 to 100 % for a rate
        return f"{text} [{estimate.low * scale:.{digits}f}, {estimate.high * scale:.{digits}f}]"
    return f"{text} ± {estimate.ci * scale:.{digits}f}"


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
        defined = [not math.isnan(e.ci) for e in estimates]
        errors = [[e.mean - e.low if ok else 0.0 for e, ok in zip(estimates, defined)]]
        errors += [[e.high - e.mean if ok else 0.0 for e, ok in zip(estimates, defined)]]
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


def _per_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """``(n_groups,)`` the mean of ``values`` within each deal group (``group``: each value's); NaN where none."""
    count = np.bincount(group, minlength=n_groups)
    sums = np.bincount(group, weights=values, minlength=n_groups)
    return np.divide(sums, count, out=np.full(n_groups, np.nan), where=count > 0)


def _group_means(
    group: np.ndarray, values: np.ndarray, n_groups: int, bounds: tuple[float, float] = UNBOUNDED
) -> Estimate:
    """:func:`mean_ci` over the groups of the per-group means of ``values``; groups without a value are left out;
    ``bounds``: the statistic's range."""
    means = _per_group(group, values, n_groups)
    return mean_ci(means[~np.isnan(means)], bounds)


def _seats(entry_names: Sequence[str], records: MancheRecords) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct agent names, ``who (n, P)`` the name index at each player of each manche, and each seat's
    advantage ``(n, P)``: its points minus the mean points of the other seats."""
    p = len(entry_names)
    names = list(dict.fromkeys(entry_names))
    name_of_entry = np.array([names.index(n) for n in entry_names])
    who = name_of_entry[rotation_entries(p)[records.rotation]]
    points = records.points
    return names, who, points - (points.sum(axis=1, keepdims=True) - points) / (p - 1)


def group_advantages(result: TournamentResult, name: str) -> np.ndarray:
    """``(n_groups,)`` the advantage of the agent ``name`` in each deal group of ``result`` (its seats' mean over
    the group's rotations and regular manches): the unit its ``advantage`` interval is taken over."""
    names, who, advantage = _seats(result.config["lineup"], result.records)
    if name not in names:
        raise ValueError(f"{name!r} did not play in this tournament; its agents: {', '.join(names)}")
    seat = who == names.index(name)
    group = np.broadcast_to(result.records.group[:, None], who.shape)
    return _per_group(group[seat], advantage[seat], result.n_groups)


def summarize(config: dict[str, Any], entry_names: Sequence[str], records: MancheRecords) -> TournamentResult:
    """Pool the records by agent name into per-group means, their CIs and the Bradley–Terry ratings."""
    p = len(entry_names)
    names, who, advantage = _seats(entry_names, records)  # who: (n, P) name index at each player
    points, positions = records.points, records.positions
    per_seat = {
        "points": points,
        "advantage": advantage,
        "position": positions.astype(np.float64),
        "president": (positions == 0).astype(np.float64),
        "trou": (positions == p - 1).astype(np.float64),
    }
    bounds = {"position": (0.0, p - 1.0), "president": (0.0, 1.0), "trou": (0.0, 1.0), "won": (0.0, 1.0)}
    group = np.broadcast_to(records.group[:, None], who.shape)  # (n, P) deal group of each seat's result
    won = (np.arange(p)[None, :] == records.winner[:, None]).astype(np.float64)  # (n, P) the seat won its match
    first = np.broadcast_to((records.manche == 0)[:, None], who.shape)  # one row per match
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
        estimates = {
            stat: _group_means(group[seat], values[seat], n_groups, bounds.get(stat, UNBOUNDED))
            for stat, values in per_seat.items()
        }
        estimates["won"] = _group_means(group[seat & first], won[seat & first], n_groups, bounds["won"])
        by_role = {}
        for code, role in enumerate(ROLES, start=deals.NO_ROLE):
            held = seat & (records.roles == code)
            by_role[role] = _group_means(group[held], points[held], n_groups)
        stats[name] = AgentStats(
            name=name, manches=int(seat.sum()), rating=float(ratings[k]), by_role=by_role, **estimates
        )
    return TournamentResult(config=config, agents=stats, wins=wins, records=records)


def versus_markdown(results: dict[str, TournamentResult]) -> str:
    """The table of :func:`evaluate_against`: one row per opponent, the agent's statistics against it."""
    first = next(iter(results.values()))
    agent = next(iter(first.agents))
    players, cfg = len(first.config["lineup"]), first.config
    caption = (
        f"{agent} against {players - 1} copies of each opponent; {cfg['n_deals']} duplicate deal groups × "
        f"{players} seat rotations, {cfg['rules']['manches']} manche(s) per game, seed {cfg['seed']}; "
        "± = 95 % CI over deal groups."
    )
    header = ["opponents", "advantage", "points/manche", "opponents' points", "matches won %", "mean position"]
    header += ["président %", "trou %"]
    rows = []
    for opponent, result in results.items():
        own, other = result.agents[agent], result.agents.get(opponent)
        rows.append(
            [
                opponent,
                format_estimate(own.advantage, signed=True),
                format_estimate(own.points),
                format_estimate(other.points) if other is not None and opponent != agent else "",
                format_estimate(own.won, scale=100, digits=1),
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


__all__ = [
    "ROLES",
    "AgentStats",
    "TournamentResult",
    "dump_json",
    "errorbar_png",
    "format_estimate",
    "group_advantages",
    "markdown_table",
    "summarize",
    "versus_markdown",
    "write_outputs",
    "write_versus",
]
