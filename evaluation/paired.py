"""Paired comparisons: two agents, each against copies of the same opponents, on the same deals.

    from president_env.evaluation.paired import evaluate_paired
    result = evaluate_paired("ppo-universal", "heuristic-3", ["style-patient"], rules="standard", n_deals=200)
    print(result.to_markdown())   # each one's advantage, and the difference paired over deal groups

``president-eval --agents A --against O1,O2 --paired-with B`` is the command line. Both agents play every
opponent on the same deal groups in the same seats (the same ``seed``, ``chunk_deals`` and ``agent_seed``:
duplicate deals), so the luck of the cards is common to both; the difference of their advantages is taken deal
group by deal group, and its 95 % interval is over those per-group differences. It is narrower than that of two
independent measurements (about the root of the sum of their squared intervals), so it tells on fewer deals
whether ``A`` does better than ``B`` against an opponent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from president_env.core.presets import resolve_rules

from .play import agent_name
from .report import TournamentResult, dump_json, format_estimate, group_advantages, markdown_table, write_versus
from .statistics import Estimate, mean_ci
from .tournament import evaluate_against

SAME_DEALS = ("rules", "n_deals", "seed", "chunk_deals", "agent_seed")
"""The configuration two tournaments share when they played the same deals (their lineups aside)."""
AGENT, REFERENCE = "agent", "reference"
"""The subfolders of a paired run's output (and of its ``resume_dir``): each side's ``president-eval --against``
files."""


def paired_difference(
    result: TournamentResult, reference: TournamentResult, name: str, reference_name: str
) -> Estimate:
    """``name``'s advantage in ``result`` minus ``reference_name``'s in ``reference``, paired over deal groups.

    ``ValueError`` unless the two tournaments played the same deals with the same other seats: the same rules,
    deal groups, seeds and chunking, and lineups that differ only where one has ``name`` and the other
    ``reference_name``."""
    config, other = result.config, reference.config
    differ = [key for key in SAME_DEALS if config[key] != other[key]]
    swapped = [reference_name if seat == name else seat for seat in config["lineup"]]
    if differ or swapped != other["lineup"]:
        what = ", ".join(differ) or f"lineup ({config['lineup']} against {other['lineup']})"
        raise ValueError(f"a paired difference needs the same deals and the same other seats; these differ in {what}")
    return mean_ci(group_advantages(result, name) - group_advantages(reference, reference_name))


@dataclass
class PairedResult:
    """The agent's and the reference's :func:`evaluate_against` results, by opponent name."""

    agent: str
    reference: str
    agent_results: dict[str, TournamentResult]
    reference_results: dict[str, TournamentResult]

    @property
    def opponents(self) -> list[str]:
        return list(self.agent_results)

    def difference(self, opponent: str) -> Estimate:
        """The agent's advantage over the reference's against ``opponent``, paired over deal groups."""
        return paired_difference(
            self.agent_results[opponent], self.reference_results[opponent], self.agent, self.reference
        )

    def estimates(self, opponent: str) -> tuple[Estimate, Estimate, Estimate]:
        """Against ``opponent``: the agent's advantage, the reference's, and the paired difference."""
        own = self.agent_results[opponent].agents[self.agent].advantage
        ref = self.reference_results[opponent].agents[self.reference].advantage
        return own, ref, self.difference(opponent)

    def to_dict(self) -> dict[str, Any]:
        """Per opponent: each side's advantage and the paired difference (mean, 95 % CI half-width, groups)."""
        out: dict[str, Any] = {"agent": self.agent, "reference": self.reference, "opponents": {}}
        for opponent in self.opponents:
            own, ref, diff = self.estimates(opponent)
            out["opponents"][opponent] = {
                "advantage": own.mean,
                "advantage_ci": own.ci,
                "reference_advantage": ref.mean,
                "reference_advantage_ci": ref.ci,
                "difference": diff.mean,
                "difference_ci": diff.ci,
                "groups": diff.n,
            }
        first = next(iter(self.agent_results.values())).config
        out["config"] = {key: first[key] for key in SAME_DEALS}
        out["notes"] = {
            "difference": "agent's advantage minus the reference's, deal group by deal group (the same deals and "
            "seats against the same opponents); ± = 95 % CI (Student t) over those per-group differences"
        }
        return out

    def to_markdown(self) -> str:
        config = next(iter(self.agent_results.values())).config
        players = len(config["lineup"])
        caption = (
            f"{self.agent} and {self.reference}, each against {players - 1} copies of each opponent on the same "
            f"{config['n_deals']} duplicate deal groups (seed {config['seed']}); the difference is paired over deal "
            "groups; ± = 95 % CI."
        )
        rows = []
        for opponent in self.opponents:
            rows.append([opponent, *(format_estimate(e, signed=True) for e in self.estimates(opponent))])
        header = ["opponents", f"{self.agent}", f"{self.reference}", "difference (paired)"]
        return caption + "\n\n" + markdown_table(header, rows)


def check_opponents(agent: Any, opponents: Sequence[Any]) -> None:
    """``ValueError`` when ``agent`` is among ``opponents``: a paired run needs opponents other than its agent."""
    if agent_name(agent) in {agent_name(opponent) for opponent in opponents}:
        raise ValueError(f"the agent {agent_name(agent)!r} is among the opponents: a paired run needs other opponents")


def evaluate_paired(
    agent: Any, reference: Any, opponents: Sequence[Any], rules: Any = None, **kwargs: Any
) -> PairedResult:
    """``agent`` and ``reference`` each against ``n_players - 1`` copies of each opponent, on the same deals.

    ``kwargs`` are :func:`~.tournament.evaluate`'s; a ``resume_dir`` keeps each side's chunks in its subfolder
    (:data:`AGENT`, :data:`REFERENCE`)."""
    rules = resolve_rules(rules)
    check_opponents(agent, opponents)
    resume_dir = kwargs.pop("resume_dir", None)
    sides = {}
    for side, who in ((AGENT, agent), (REFERENCE, reference)):
        resume = None if resume_dir is None else Path(resume_dir) / side
        sides[side] = evaluate_against(who, opponents, rules, resume_dir=resume, **kwargs)
    return PairedResult(agent_name(agent), agent_name(reference), sides[AGENT], sides[REFERENCE])


def write_paired(result: PairedResult, out: str | os.PathLike) -> Path:
    """``paired.json`` and ``paired.md`` in ``out``, and each side's ``versus`` files in ``out/agent`` and
    ``out/reference``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    write_versus(result.agent_results, folder / AGENT)
    write_versus(result.reference_results, folder / REFERENCE)
    dump_json(result.to_dict(), folder / "paired.json")
    (folder / "paired.md").write_text(result.to_markdown() + "\n", encoding="utf-8")
    return folder


__all__ = [
    "AGENT",
    "REFERENCE",
    "SAME_DEALS",
    "PairedResult",
    "check_opponents",
    "evaluate_paired",
    "paired_difference",
    "write_paired",
]
