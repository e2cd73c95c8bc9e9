"""``president-eval``: a duplicate-deal tournament from the command line (:func:`main`).

    president-eval --agents heuristic-3,heuristic-2 --deals 200 --workers 2 --out runs/eval
    president-eval --agents ppo-universal --against heuristic-3,mc-4 --deals 200 --out runs/vs
    president-eval --agents ppo-universal --against mc-5 --rules big_table --resume runs/vs/chunks ...
    president-eval --agents ppo-universal --against heuristic-3,mc-4 --rule-suite 7:20 --deals 100 --out runs/suite

Writes ``results.json``, ``results.md`` and ``results.png`` (with ``--against``: ``versus.*`` and one folder
per opponent) and prints the Markdown table. Everything the user named is checked before any game is
played; a bad argument, or a Ray that cannot start, is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from president_env import agents as agent_registry
from president_env.core.presets import resolve_rules
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser, check_writable_dir, one_line_warnings

from .play import seat_lineup, versus_lineup
from .report import versus_markdown, write_outputs, write_versus
from .tournament import (
    DEFAULT_CHUNK_DEALS,
    DEFAULT_DEALS,
    against_folder,
    check_counts,
    check_seeds,
    evaluate,
    evaluate_against,
    open_store,
)


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="president-eval",
        description="Duplicate-deal tournament between agents; writes results.json, results.md and results.png.",
    )
    parser.add_argument(
        "--agents",
        required=True,
        help="comma-separated lineup, one agent per seat (repeated cyclically if shorter), "
        "e.g. heuristic-3,heuristic-2,heuristic-2,heuristic-2",
    )
    parser.add_argument("--rules", default=None, help="preset name or YAML path (default: standard)")
    parser.add_argument(
        "--rule-suite",
        metavar="SEED:N",
        help="with --against, instead of --rules: every rule set of the suite president_env.core.rule_space.rule_suite("
        "SEED, N), drawn from the rule space (docs/training.md); writes suite.json|md with each rule set's advantage "
        "and their mean, and one folder per rule set",
    )
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
    parser.add_argument(
        "--paired-with",
        metavar="AGENT",
        help="with --against: AGENT plays every opponent too, on the same deals in the same seats, and paired.json|md "
        "give each one's advantage and the difference, paired over deal groups (evaluation/paired.py; each side's "
        "files in OUT/agent and OUT/reference)",
    )
    parser.add_argument(
        "--out", default="runs/eval", help="output folder (default: %(default)s, beside the training runs)"
    )
    parser.add_argument(
        "--resume",
        metavar="DIR",
        help="keep every finished chunk in DIR and load the chunks DIR already holds instead of playing them: a "
        "stopped tournament continues where it stopped, with the result of an uninterrupted run (with --against, "
        "one subfolder per opponent)",
    )
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


def start_ray(address: str) -> None:
    """Connect to Ray at ``address`` now; ``ImportError`` without Ray, ``ValueError`` (one line) when it cannot
    start or connect."""
    from .distributed import init_ray, require_ray

    require_ray()
    try:
        init_ray(address)
    except Exception as err:  # Ray raises many types (RuntimeError, ConnectionError, TimeoutError, ...)
        detail = " ".join(str(err).split())[:300] or type(err).__name__
        raise ValueError(f"--ray {address}: Ray could not start ({type(err).__name__}: {detail})") from None


def _tournaments(resume: str, lineup: list[str], against: list[str], n_players: int) -> list[tuple[Path, list]]:
    """``(resume folder, lineup seated)`` of each tournament the command runs."""
    if not against:
        return [(Path(resume), seat_lineup(lineup, n_players))]
    return [(against_folder(resume, name), versus_lineup(lineup[0], name, n_players)) for name in against]


@one_line_warnings("president-eval")
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
    if args.paired_with is not None and (args.against is None or args.rule_suite is not None):
        parser.error("--paired-with needs --against (and --rules, not --rule-suite)")
    if args.rule_suite is not None:
        return _suite_main(parser, args, lineup, against)
    if args.paired_with is not None:
        return _paired_main(parser, args, lineup[0], against)
    # Everything the user named is checked before the tournament runs: a typo must not cost its whole time.
    try:
        rules = resolve_rules(args.rules or "standard")
        seat_lineup(lineup, rules.n_players)
        _check_and_start(args, lineup, against, [(rules, args.resume)])
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    started = time.perf_counter()
    options = _tournament_options(args)
    if args.against is not None:
        results = evaluate_against(lineup[0], against, rules, **options)
        folder, table = write_versus(results, args.out), versus_markdown(results)
    else:
        result = evaluate(lineup, rules=rules, **options)
        folder, table = write_outputs(result, args.out), result.to_markdown()
    if args.save_replays:
        from .replays import save_games

        n_players = rules.n_players
        games = versus_lineup(lineup[0], against[0], n_players) if against else seat_lineup(lineup, n_players)
        save_games(games, rules, args.save_replays, Path(folder) / "replays", args.seed, source="president-eval")
    print(table)
    print(f"\n{time.perf_counter() - started:.1f} s; results in {folder}/", file=sys.stderr)
    return 0


def _check_and_start(
    args: argparse.Namespace, lineup: list[str], against: list[str], tables: list[tuple[Rules, str | None]]
) -> None:
    """Everything the user named, checked before any game (a typo must not cost a tournament's time), then Ray if
    asked; ``ValueError`` or ``ImportError`` says what is wrong.

    ``tables``: each rules the tournaments play, with its resume folder (``None``: a fresh start). Every agent is
    made once at each rules, so a checkpoint that cannot load, or a learned agent of other rules, is refused now;
    a resume folder's stores are opened, so one of another tournament is refused now too.
    """
    names = list(dict.fromkeys(lineup + against))
    for name in names:
        check_name(name)
    for rules, _ in tables:
        for name in names:
            agent_registry.make(name, rules)
    check_counts(deals=args.deals, chunk_deals=args.chunk_deals, workers=args.workers)
    check_seeds(seed=args.seed, agent_seed=args.agent_seed)
    check_writable_dir(args.out, "--out")
    for rules, resume in tables:
        if resume is not None:
            for folder, seats in _tournaments(resume, lineup, against, rules.n_players):
                open_store(folder, seats, rules, args.seed, args.chunk_deals, args.agent_seed)
    if args.ray is not None:
        start_ray(args.ray)


def _tournament_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of a tournament (``evaluate``, ``evaluate_against``, ``evaluate_suite``) the command
    line sets."""
    return dict(
        n_deals=args.deals,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
        chunk_deals=args.chunk_deals,
        agent_seed=args.agent_seed,
        ray_address=args.ray,
        resume_dir=args.resume,
    )


def _paired_main(parser: ArgumentParser, args: argparse.Namespace, agent: str, against: list[str]) -> int:
    """``--paired-with B``: the agent and ``B`` each against every opponent on the same deals."""
    from .paired import AGENT, REFERENCE, check_opponents, evaluate_paired, write_paired

    if args.save_replays:
        parser.error("--save-replays does not apply to --paired-with")
    reference = args.paired_with.strip()
    try:
        check_opponents(agent, against)
        rules = resolve_rules(args.rules or "standard")
        _check_and_start(args, [agent, reference], against, [(rules, None)])
        sides = () if args.resume is None else ((AGENT, agent), (REFERENCE, reference))
        for side, who in sides:  # a resume folder of another run is refused now
            for folder, seats in _tournaments(f"{args.resume}/{side}", [who], against, rules.n_players):
                open_store(folder, seats, rules, args.seed, args.chunk_deals, args.agent_seed)
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    started = time.perf_counter()
    result = evaluate_paired(agent, reference, against, rules, **_tournament_options(args))
    folder = write_paired(result, args.out)
    print(result.to_markdown())
    print(f"\n{time.perf_counter() - started:.1f} s; results in {folder}/", file=sys.stderr)
    return 0


def _suite_main(parser: ArgumentParser, args: argparse.Namespace, lineup: list[str], against: list[str]) -> int:
    """``--rule-suite SEED:N``: the agent against each opponent at every rule set of the suite."""
    from president_env.core.rule_space import parse_suite, rule_suite

    from .suite import evaluate_suite, suite_folder, write_suite

    if args.against is None:
        parser.error("--rule-suite needs --against (one agent in --agents against copies of each opponent)")
    if args.rules is not None:
        parser.error("--rule-suite and --rules exclude each other: the suite names its own rule sets")
    if args.save_replays:
        parser.error("--save-replays does not apply to --rule-suite")
    try:
        rule_seed, n_rules = parse_suite(args.rule_suite)
        rule_sets = rule_suite(rule_seed, n_rules)
        resumes = [None if args.resume is None else str(suite_folder(args.resume, i)) for i in range(n_rules)]
        _check_and_start(args, lineup, against, list(zip(rule_sets, resumes)))
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    started = time.perf_counter()
    result = evaluate_suite(lineup[0], against, rule_seed, n_rules, **_tournament_options(args))
    folder = write_suite(result, args.out)
    print(result.to_markdown())
    print(f"\n{time.perf_counter() - started:.1f} s; results in {folder}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
