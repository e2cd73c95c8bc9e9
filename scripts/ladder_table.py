"""Copy the ladder's table into docs/baselines.md: ``python scripts/ladder_table.py [--check]``.

The ladder (``python -m president_env.evaluation.ladder --out docs/results/ladder``) writes its table to
``docs/results/ladder/ladder.md``; docs/baselines.md shows a copy between the ``<!-- ladder-table -->`` and
``<!-- /ladder-table -->`` markers. This repository-maintenance script replaces that copy; ``--check`` only
compares them (exit 1 when they differ). ``tests/test_readme.py`` runs the same comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path

from president_env.core.user_input import ArgumentParser

ROOT = Path(__file__).resolve().parents[1]
TABLE_START, TABLE_END = "<!-- ladder-table -->", "<!-- /ladder-table -->"


def split_page(text: str) -> tuple[str, str, str]:
    """``(before, table, after)``: the page around and between the ladder markers; ValueError without them."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"no {TABLE_START} ... {TABLE_END} block")
    head = start + len(TABLE_START)
    return text[:head], text[head:end].strip("\n"), text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python scripts/ladder_table.py", description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=Path, default=ROOT / "docs" / "baselines.md")
    parser.add_argument("--table", type=Path, default=ROOT / "docs" / "results" / "ladder" / "ladder.md")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when the page's copy differs")
    args = parser.parse_args(argv)
    try:
        text = args.page.read_text(encoding="utf-8")
        table = args.table.read_text(encoding="utf-8").strip("\n")
        before, copy, after = split_page(text)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        parser.error(f"{args.page if isinstance(err, ValueError) else ''} {err}".strip())
    if copy == table:
        print(f"{args.page}: the ladder table is up to date")
        return 0
    if args.check:
        print(f"{args.page}: the ladder table differs from {args.table}", file=sys.stderr)
        return 1
    args.page.write_text(f"{before}\n{table}\n{after}", encoding="utf-8")
    print(f"{args.page}: ladder table replaced from {args.table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
