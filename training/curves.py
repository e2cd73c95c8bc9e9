"""Learning curves from a run's ``metrics.jsonl``: ``python -m president_env.training.curves RUN_DIR [--out PNG]``.

The curve is the evaluation the trainer runs every ``budget.eval_every`` updates: one learner
against the evaluation opponent in every other seat over duplicate deals, its advantage (points
per manche above the table average) with the 95 % interval, by env steps and by minutes. A universal run's
``rule_eval`` evaluations (against mc-4 and against the champion) are drawn beside it when the metrics hold them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from president_env.core.user_input import ArgumentParser


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``metrics.jsonl`` (a run directory or the file itself)."""
    path = Path(path)
    if path.is_dir():
        path = path / "metrics.jsonl"
    if not path.is_file():
        raise ValueError(f"no metrics file at {str(path)!r}")
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not a JSON line ({err})") from None
    # a resumed run appends (the later record of an update wins) and the final evaluation adds to its update
    by_update: dict[int, dict[str, Any]] = {}
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict) or not isinstance(record.get("update"), int):
            raise ValueError(f"{path}:{number}: not a metrics record (a JSON object with an integer 'update')")
        by_update.setdefault(record["update"], {}).update(record)
    return [by_update[u] for u in sorted(by_update)]


def plot_learning_curve(run: str | Path, out: str | Path | None = None, opponent: str = "heuristic-3") -> Path:
    """Plot ``eval/advantage`` ± CI against env steps (and minutes on the top axis); returns the PNG path."""
    # A bare Figure renders with Agg and leaves pyplot's backend alone (a notebook keeps its inline plots).
    from matplotlib.figure import Figure

    everything = read_metrics(run)
    records = [r for r in everything if "eval/advantage" in r]
    if not records:
        raise ValueError(f"{run}: no evaluation records (budget.eval_every was 0?)")
    steps = [r["global_step"] / 1e6 for r in records]
    adv = [r["eval/advantage"] for r in records]
    ci = [r.get("eval/advantage_ci") or 0.0 for r in records]
    minutes = [r["elapsed_s"] / 60 for r in records]
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    ax.fill_between(steps, [a - c for a, c in zip(adv, ci)], [a + c for a, c in zip(adv, ci)], alpha=0.25, lw=0)
    ax.plot(steps, adv, marker="o", ms=3, label=f"learner vs {opponent} in every other seat")
    # A universal run's rule_eval: its opponent (mc-4) and the champion, each a mean over the rule_eval tables.
    series = sorted({k for r in everything for k in r if k.startswith("rule_eval/") and k.count("/") == 2})
    for key in (k for k in series if k.endswith("/advantage")):
        rows = [r for r in everything if key in r]
        ax.errorbar(
            [r["global_step"] / 1e6 for r in rows],
            [r[key] for r in rows],
            yerr=[r.get(key + "_ci") or 0.0 for r in rows],
            marker="s", ms=3, lw=1, capsize=2, label=f"learner vs {key.split('/')[1]} (drawn rule sets)",
        )  # fmt: skip
    ax.axhline(0.0, color="k", lw=0.8, ls="--", label="table average")
    ax.set_xlabel("env steps (millions)")
    ax.set_ylabel("advantage (points per manche, 95% CI)")
    top = ax.secondary_xaxis("top", functions=_axis_map(steps, minutes))
    top.set_xlabel("minutes")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = (
        Path(out) if out is not None else (Path(run) if Path(run).is_dir() else Path(run).parent) / "learning_curve.png"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out


def _axis_map(steps: list[float], minutes: list[float]) -> tuple[Any, Any]:
    import numpy as np

    # past the last record, minutes grow in proportion to steps (np.interp alone would clamp)
    xs = np.asarray([0.0] + steps + [steps[-1] * 10])
    ys = np.asarray([0.0] + minutes + [minutes[-1] * 10])
    return (lambda x: np.interp(x, xs, ys), lambda y: np.interp(y, ys, xs))


def main(argv: list[str] | None = None) -> int:
    """Plot a run's learning curve and print the PNG's path; a missing or unreadable run is one line, exit 2."""
    parser = ArgumentParser(prog="python -m president_env.training.curves", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory (or its metrics.jsonl)")
    parser.add_argument("--out", help="PNG path (default RUN/learning_curve.png)")
    parser.add_argument("--opponent", default="heuristic-3")
    args = parser.parse_args(argv)
    try:
        print(plot_learning_curve(args.run, args.out, args.opponent))
    except (ValueError, KeyError, TypeError, OSError) as err:
        parser.error(str(err) if isinstance(err, ValueError) else f"{args.run}: {type(err).__name__}: {err}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
