"""The rule-set suite: one agent against copies of each opponent on the N rule sets of a rule seed.

    president-eval --agents ppo-universal --against heuristic-3,mc-4 --rule-suite 20261204:20 --seed 20261205 \
        --deals 100 --out runs/suite
    result = evaluate_suite("ppo-universal", ["heuristic-3"], rule_seed=20261204, n_rules=20, n_deals=100,
                            seed=20261205)

The rule sets are :func:`president_env.core.rule_space.rule_suite` ``(rule_seed, n_rules)``: drawn from the documented
rule space without presets (the presets are measured on their own), every one valid, the same for the same seed
on every machine. Each rule set is one :func:`~.tournament.evaluate_against` over the same ``seed`` (the deals),
so the whole suite is deterministic given the two seeds. The suite's mean advantage against an opponent is the
plain mean over the rule sets, with the interval of a mean of independent estimates (``sqrt(sum ci^2) / N``): a
statement about these N rule sets, not about the whole space.

The held-out seeds, ``HELDOUT_RULE_SEED`` and ``HELDOUT_DEAL_SEED`` of :mod:`president_env.core.rule_space`, are
reserved for the final measurements of issue 33: no training run, evaluation during training or choice of what
to ship may use them (a training config refuses them as ``rule_eval.seed``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from president_env.core.rule_space import describe, rule_suite
from president_env.core.rules import Rules

from .report import TournamentResult, dump_json, format_estimate, write_versus
from .statistics import Estimate
from .tournament import evaluate_against


def suite_folder(out: str | os.PathLike, index: int) -> Path:
    """The folder of rule set ``index`` under ``out`` (``rules-07``)."""
    return Path(out) / f"rules-{index:02d}"


@dataclass
class SuiteResult:
    """The suite's tournaments: ``results[i][opponent]`` is rule set ``i``'s against ``opponent``."""

    agent: str
    rule_seed: int
    rules: list[Rules]
    results: list[dict[str, TournamentResult]]

    @property
    def opponents(self) -> list[str]:
        return list(self.results[0])

    def advantage(self, index: int, opponent: str) -> Estimate:
        result = self.results[index][opponent]
        return result.agents[next(iter(result.agents))].advantage

    def mean(self, opponent: str) -> Estimate:
        """The mean advantage over the rule sets and its 95 % interval (``sqrt(sum ci^2) / N``)."""
        values = [self.advantage(i, opponent) for i in range(len(self.rules))]
        n = len(values)
        ci = math.sqrt(sum(v.ci**2 for v in values)) / n
        return Estimate(sum(v.mean for v in values) / n, ci, n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "rule_seed": self.rule_seed,
            "rules": [r.to_dict() for r in self.rules],
            "advantage": {
                opponent: {
                    "per_rule_set": [
                        {"mean": a.mean, "ci": a.ci, "n": a.n}
                        for a in (self.advantage(i, opponent) for i in range(len(self.rules)))
                    ],
                    "mean": {"mean": self.mean(opponent).mean, "ci": self.mean(opponent).ci, "n": len(self.rules)},
                }
                for opponent in self.opponents
            },
        }

    def to_markdown(self) -> str:
        """A caption and one row per rule set (its fields that differ from the standard game), then the mean."""
        first = self.results[0][self.opponents[0]].config
        caption = (
            f"{self.agent} against copies of each opponent on the {len(self.rules)} rule sets of rule seed "
            f"{self.rule_seed}; {first['n_deals']} duplicate deal groups each, deal seed {first['seed']}; "
            "advantage in points per manche, ± = 95 % CI (the mean's: sqrt(sum ci²) / N)."
        )
        header = ["#", "players", "rules (fields that differ from the standard game)", *self.opponents]
        rows = [
            [str(i), str(r.n_players), describe(r)]
            + [format_estimate(self.advantage(i, o), signed=True) for o in self.opponents]
            for i, r in enumerate(self.rules)
        ]
        rows.append(["mean", "", ""] + [format_estimate(self.mean(o), signed=True) for o in self.opponents])
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return caption + "\n\n" + "\n".join(lines)


def evaluate_suite(agent: str, opponents: Sequence[Any], rule_seed: int, n_rules: int, **kwargs: Any) -> SuiteResult:
    """``agent`` (a name, made anew for each rule set) against ``n_players - 1`` copies of each opponent at every
    rule set of ``rule_suite(rule_seed, n_rules)``; ``kwargs`` are :func:`~.tournament.evaluate`'s (``seed`` is
    the deal seed; a ``resume_dir`` keeps each rule set's chunks in :func:`suite_folder`)."""
    resume_dir = kwargs.pop("resume_dir", None)
    rule_sets = rule_suite(rule_seed, n_rules)
    results = [
        evaluate_against(
            agent,
            opponents,
            rules,
            resume_dir=None if resume_dir is None else suite_folder(resume_dir, i),
            **kwargs,
        )
        for i, rules in enumerate(rule_sets)
    ]
    return SuiteResult(agent, rule_seed, rule_sets, results)


def write_suite(result: SuiteResult, out: str | os.PathLike) -> Path:
    """``suite.json`` and ``suite.md`` in ``out``, and each rule set's ``versus.*`` and ``rules.yaml`` in
    :func:`suite_folder`."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    dump_json(result.to_dict(), folder / "suite.json")
    (folder / "suite.md").write_text(result.to_markdown() + "\n", encoding="utf-8")
    for i, (rules, results) in enumerate(zip(result.rules, result.results)):
        sub = write_versus(results, suite_folder(folder, i))
        rules.to_yaml(sub / "rules.yaml")
    return folder


__all__ = [
    "SuiteResult",
    "evaluate_suite",
    "suite_folder",
    "write_suite",
]
