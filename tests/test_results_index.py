"""docs/results/README.md lists every result folder (two levels deep) and no folder that is gone; docs/ holds no
binary, and results/README.md lists the binaries the results measured, each beside its docs/results folder."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def test_every_result_folder_has_its_line_in_the_index():
    index = (RESULTS / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([^`]+)/` \|", index, flags=re.MULTILINE))
    folders = {
        path.relative_to(RESULTS).as_posix() for path in [*RESULTS.glob("*/"), *RESULTS.glob("*/*/")] if path.is_dir()
    }
    assert sorted(folders - listed) == []  # folders without a line
    assert sorted(listed - folders) == []  # lines without a folder


ROOT = RESULTS.parents[1]
BINARIES = ROOT / "results"
PAGE_SUFFIXES = {".md", ".json", ".jsonl", ".yaml", ".csv", ".txt", ".py", ".png"}
"""What docs/ may hold: text a page shows or names, and PNG images; checkpoints, chunks and events live in results/."""


IMAGE_MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".gif": b"GIF89a"}
"""The pictures docs/ may hold, each by the first bytes of its format."""


def test_docs_hold_no_binary_files():
    found = []
    for path in (ROOT / "docs").rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        data = path.read_bytes()
        if path.suffix in IMAGE_MAGIC:  # the pages' pictures
            ok = data.startswith(IMAGE_MAGIC[path.suffix])
        else:
            ok = path.suffix in PAGE_SUFFIXES and b"\0" not in data
        if not ok:
            found.append(path.relative_to(ROOT).as_posix())
    assert found == []  # binaries belong in results/ (results/README.md)


def test_every_listed_binary_exists_beside_its_page_folder():
    index = (BINARIES / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([^`]+)` \|", index, flags=re.MULTILINE)
    assert listed, "results/README.md lists no file"
    assert sorted(name for name in listed if not (BINARIES / name).is_file()) == []  # listed, missing
    assert sorted(name for name in listed if not (RESULTS / name).parent.is_dir()) == []  # no page folder


def test_every_binary_a_page_names_exists():
    """A page that points at ``results/<path>.pt`` points at a committed file (a ``git show ... > results/...``
    restoring a file that left the tree aside)."""
    named = set()
    for page in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.py")]:
        named |= set(re.findall(r"(?<!> )(?<![\w/.-])results/[\w./-]+\.pt\b", page.read_text(encoding="utf-8")))
    assert named  # the pages name their binaries
    assert sorted(name for name in named if not (ROOT / name).is_file()) == []
