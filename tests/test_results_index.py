"""docs/results/README.md lists every result folder (two levels deep) and no folder that is gone."""

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
