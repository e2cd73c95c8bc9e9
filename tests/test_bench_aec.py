"""``benchmarks/bench_aec.py`` runs, prints both rates and the ratio, and refuses bad arguments with exit code 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_aec.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_bench_prints_both_rates_and_the_ratio():
    pytest.importorskip("rlcard")
    pytest.importorskip("pygame")
    result = run("--seconds", "0.1", "--rounds", "1", "--rules", "party")
    assert result.returncode == 0, result.stderr
    assert "president_env.env()" in result.stdout and "leduc_holdem_v4.env()" in result.stdout
    ratios = re.findall(r"^  ratio president_env\.env\(\) / leduc_holdem_v4\.env\(\) +([0-9.]+) ", result.stdout, re.M)
    assert len(ratios) == 1 and float(ratios[0]) > 0, result.stdout
    assert re.search(r"goal >= 1\.6: (met|not met)\)$", result.stdout, re.M), result.stdout


@pytest.mark.parametrize("args", [("--seconds", "0"), ("--rounds", "0"), ("--rules", "poker"), ("--seconds", "x")])
def test_bench_refuses_bad_arguments(args):
    result = run(*args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
