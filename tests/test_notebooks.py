"""The notebooks of ``notebooks/``: committed without outputs, and each one runs top to bottom.

Running them needs the ``notebooks`` extra (nbclient, nbformat, ipykernel; the tests are skipped without it).
ipykernel installed in the interpreter that runs the tests provides the ``python3`` kernel the notebooks name
(``sys.prefix/share/jupyter/kernels/python3``, whose ``python`` command jupyter_client maps to this
interpreter), so a fresh virtual environment runs them with its own packages. The kernel gets
``PRESIDENT_NOTEBOOK_SMALL=1``, which makes every notebook pick its small sizes, and a temporary directory as
``TMPDIR`` for the files the notebooks write.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 300  # per cell; with the small sizes a whole notebook takes well under a minute
KERNEL = "python3"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks


def test_notebooks_are_committed_without_outputs() -> None:
    assert {"01_quickstart", "02_baselines", "03_selfplay"} <= {path.stem for path in NOTEBOOKS}
    for path in NOTEBOOKS:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        assert notebook["nbformat"] == 4, path.name
        assert notebook["metadata"]["kernelspec"]["name"] == KERNEL, path.name
        for index, cell in enumerate(notebook["cells"]):
            if cell["cell_type"] != "code":
                continue
            where = f"{path.name}, cell {index}"
            assert cell["outputs"] == [], f"{where} has outputs: clear them before committing"
            assert cell["execution_count"] is None, f"{where} has an execution count: clear it before committing"


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(path.parent)}},  # the kernel's working directory, as in Jupyter
    )
    env = {**os.environ, "PRESIDENT_NOTEBOOK_SMALL": "1", "TMPDIR": str(tmp_path)}
    failure = None
    try:
        client.execute(env=env)
    except CellExecutionError as err:  # its text holds the failing cell's source and traceback
        failure = ANSI_ESCAPE.sub("", str(err))
    if failure is not None:  # failed outside the except block, so that the report holds the cell's error only
        pytest.fail(f"{path.name}: a cell raised\n{failure}", pytrace=False)


def test_the_notebooks_extra_installs_every_jupyter_command_the_readme_uses() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    pyproject = tomllib.loads((NOTEBOOKS_DIR.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extra = {re.split(r"[<>=\[]", spec)[0] for spec in pyproject["project"]["optional-dependencies"]["notebooks"]}
    provider = {"execute": "nbclient", "nbconvert": "nbconvert", "lab": None}  # jupyterlab: installed on its own
    used = set(re.findall(r"\bjupyter (\w+)", (NOTEBOOKS_DIR / "README.md").read_text(encoding="utf-8")))
    assert used and used <= set(provider), used
    assert {provider[command] for command in used} - {None} <= extra, extra


@pytest.mark.slow
def test_notebook_02_explains_its_mixed_table_ranking_with_numbers_that_reproduce() -> None:
    """Its four-agent table ranks heuristic-1 above heuristic-3: a seat-order effect it explains, with the numbers
    quoted here measured again (100 deal groups, seed 0)."""
    import president_env as pe
    from president_env.evaluation.tournament import evaluate

    notebook = json.loads((NOTEBOOKS_DIR / "02_baselines.ipynb").read_text(encoding="utf-8"))
    text = " ".join(" ".join("".join(cell["source"]).split()) for cell in notebook["cells"])
    assert "Why heuristic-1 can rank above heuristic-3 at this table" in text
    first, second = (
        evaluate(lineup, rules=pe.Rules(), n_deals=100, seed=0, progress=False)
        for lineup in (
            ["heuristic-3", "heuristic-2", "heuristic-1", "random"],
            ["heuristic-3", "random", "heuristic-1", "heuristic-2"],
        )
    )
    assert first.agents["heuristic-1"].advantage.mean > first.agents["heuristic-3"].advantage.mean
    for result, name, shown in (
        (first, "heuristic-3", "+0.43 ± 0.08"),
        (second, "heuristic-3", "+0.89 ± 0.07"),
        (second, "heuristic-1", "+0.10 ± 0.06"),
    ):
        advantage = result.agents[name].advantage
        assert f"{advantage.mean:+.2f} ± {advantage.ci:.2f}" == shown and shown in text, name
