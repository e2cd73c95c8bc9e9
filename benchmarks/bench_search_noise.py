"""How much of the search's gain is noise: ``python benchmarks/bench_search_noise.py``.

Positions are those the search over a one-table policy (``PolicySearchAgent``) searches, from games of the
policy and heuristic-3 (``label_positions`` of ``scripts/expert_iteration.py``, which stores the search's values of the
policy's best moves at the agent's ``worlds``). The same moves are then valued again in ``--truth-worlds``
fresh worlds: the rollout model's "true" values, up to a small noise that does not depend on the choice. The
script prints how often two independent searches choose the same move, and, for the policy's choice, the
search's choice at several bonuses for the policy's move, and the best move under the truth (chosen and scored
with the same values: slightly optimistic), the mean gain in points over the policy's move as the rollout model
sees it (± its standard error over positions).

Reading it: the gap between the search's row and the best row is what more worlds could still win; the gain
of the best row is all the rollout model thinks the search can add. Whether that gain is real at the table
is measured by tournaments, not here.

``--fidelity-games N`` adds how well the rollouts' models of the other seats predict a real opponent: N games
of four ``--opponent`` (mc-5 by default), and at every decision with a choice, how often heuristic-3 (the
rollouts' other seats) and the policy (``PolicySearchConfig(others=None)``) pick the opponent's move.
Needs torch (``president-env[train]``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from president_env import agents
from president_env.agents.policy_search import PolicySearchAgent
from president_env.core.vec_game import VecGame

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the experiment, outside the package
from expert_iteration import label_positions, search_choices  # noqa: E402


def fidelity(policy, opponent: str, games: int, seed: int) -> dict[str, float]:
    """Share of ``opponent``'s decisions with a choice that heuristic-3 and ``policy`` predict, over one manche of
    ``games`` games that ``opponent`` plays at every seat."""
    rules = policy.rules
    game = VecGame(rules, batch_size=games, seed=seed)
    actor, model = agents.make(opponent, rules, seed=seed), agents.make("heuristic-3", rules)
    hits = {"heuristic-3": 0, "policy": 0, "decisions": 0}
    playing = np.ones(games, bool)
    while playing.any():
        obs, mask = game.observe(), game.legal_mask()
        moves = actor.act_batch(obs, mask)
        rows = np.flatnonzero(playing & (mask.sum(axis=1) > 1))
        hits["heuristic-3"] += int((model.act_batch(obs[rows], mask[rows]) == moves[rows]).sum())
        hits["policy"] += int((policy.act_batch(obs[rows], mask[rows]) == moves[rows]).sum())
        hits["decisions"] += rows.size
        playing &= ~game.step(moves)[1]
    return {"decisions": hits["decisions"], **{k: hits[k] / hits["decisions"] for k in ("heuristic-3", "policy")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--policy",
        default="results/matches/ppo-standard-4p/policy.pt",
        help="a one-table checkpoint (default: %(default)s)",
    )
    parser.add_argument("--positions", type=int, default=400, help="searched positions")
    parser.add_argument("--truth-worlds", type=int, default=1024, help="worlds of the second valuation")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--fidelity-games", type=int, default=0, help="games of --opponent to predict (0: none)")
    parser.add_argument("--opponent", default="mc-5", help="the opponent whose moves the models predict")
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args()
    try:
        policy = agents.make(args.policy)
        if not callable(getattr(policy, "policy_logits", None)):
            raise ValueError(f"{args.policy!r} is not a learned policy")
    except ValueError as err:
        parser.error(f"--policy: {err}")
    for flag, value in (("--positions", args.positions), ("--truth-worlds", args.truth_worlds)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    data = label_positions(policy, policy.rules, args.positions, args.seed)
    n, rows = len(data), np.arange(len(data))
    searched = np.isfinite(data.values)
    obs = data.obs.astype(np.float32)
    again = PolicySearchAgent(policy.rules, policy, seed=args.seed + 1).action_values(obs, searched)
    truth = np.concatenate(
        [
            PolicySearchAgent(policy.rules, policy, seed=args.seed + 2).action_values(
                obs[i : i + 50], searched[i : i + 50], args.truth_worlds
            )
            for i in range(0, n, 50)
        ]
    )
    own = data.probs.argmax(axis=1)
    bonus = PolicySearchAgent(policy.rules, policy).search.tie_bonus
    twice = again.copy()
    twice[rows, own] += bonus
    report = {
        "positions": n,
        "worlds": PolicySearchAgent(policy.rules, policy).search.worlds,
        "truth_worlds": args.truth_worlds,
        "two_searches_agree": float((search_choices(data, bonus) == twice.argmax(axis=1)).mean()),
        "gain_over_policy": {},
    }
    choices = {"best under the truth": np.where(searched, truth, -np.inf).argmax(axis=1)}
    for b in (0.0, bonus, 0.05, 0.1, 0.2):
        choices[f"search, bonus {b:g}"] = search_choices(data, b)
    print(f"{n} searched positions; two independent searches agree on {report['two_searches_agree']:.1%} of them")
    print(f"| choice | gain over the policy's move (points, {args.truth_worlds} worlds) | overrides the policy |")
    print("|---|---:|---:|")
    for name, choice in choices.items():
        gain = truth[rows, choice] - truth[rows, own]
        mean, se = float(gain.mean()), float(gain.std() / np.sqrt(n))
        report["gain_over_policy"][name] = {"mean": mean, "se": se, "overrides": float((choice != own).mean())}
        print(f"| {name} | {mean:+.4f} ± {se:.4f} | {(choice != own).mean():.0%} |")
    if args.fidelity_games:
        report["fidelity"] = fidelity(policy, args.opponent, args.fidelity_games, args.seed)
        f = report["fidelity"]
        print(
            f"{args.opponent}'s {f['decisions']} decisions with a choice: "
            f"heuristic-3 predicts {f['heuristic-3']:.1%}, the policy {f['policy']:.1%}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(report, file, indent=2)


if __name__ == "__main__":
    main()
