"""scripts/universal_targets.py: issue 33's targets judged from the parts' files, and its refusals."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ["--rule-seed", "4242", "--seed", "99", "--preset-seed", "98"]


def _script():
    spec = importlib.util.spec_from_file_location("universal_targets", ROOT / "scripts" / "universal_targets.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


targets = _script()


def _cell(mean: float, ci: float = 0.1, **extra) -> dict:
    return {"advantage": mean, "ci": ci, "groups": 100, **extra}


def _write(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record), encoding="utf-8")


def _suite(per_set: dict[str, list[float]], ci: float = 0.1) -> dict:
    advantage = {}
    for opponent, means in per_set.items():
        advantage[opponent] = {
            "per_rule_set": [{"mean": m, "ci": ci, "n": 100} for m in means],
            "mean": {"mean": sum(means) / len(means), "ci": ci / len(means) ** 0.5, "n": len(means)},
        }
    return {"agent": "a", "rule_seed": 1, "rules": [], "advantage": advantage}


def test_nothing_measured_is_judged_not_measured(tmp_path):
    verdicts = targets.judge(tmp_path, {})
    assert verdicts and all(v.met is None and v.figure == "not measured" for v in verdicts)


def test_each_target_names_the_part_that_measures_it_and_the_command_that_plays_that_part_again(tmp_path):
    verdicts = targets.judge(tmp_path, {})
    assert {v.part for v in verdicts} == set(targets.PARTS)
    assert [v.part for v in verdicts if "vs mc-5" in v.target] == ["suite_mc5", "presets_mc5", "presets_mc5"]
    settings = {"agent": "ppo-universal", "rule_seed": 4242, "seed": 99}
    line = targets.command(settings, targets.AGAIN, "styles")
    assert line.endswith(" --parts styles --workers 2 --out runs/heldout-again")
    assert "--rule-seed 4242 --seed 99" in line and "--parts" not in targets.command(settings, tmp_path)
    page = targets.verdict_markdown(verdicts, settings, tmp_path)
    assert "`suite_mc5`" in page and line.replace("styles", "PART") in page


def test_the_suite_targets_count_the_rule_sets_whose_interval_is_above_zero(tmp_path):
    # heuristic-3: every interval above 0 and mean 0.6 -> met; mc-4: 17 of 20 above 0 (three at 0.05 +- 0.1) -> not
    _write(tmp_path / "suite" / "suite.json", _suite({"heuristic-3": [0.6] * 20, "mc-4": [0.3] * 17 + [0.05] * 3}))
    _write(tmp_path / "suite_mc5" / "suite.json", _suite({"mc-5": [0.1] * 5}, ci=0.1))
    h3, mc4, mc5 = targets.judge(tmp_path, {})[:3]
    assert "heuristic-3" in h3.target and "mc-4" in mc4.target and "mc-5" in mc5.target
    assert h3.met is True and h3.figure.startswith("20 of 20 above 0; mean +0.60")
    assert mc4.met is False and mc4.figure.startswith("17 of 20 above 0")
    assert mc5.met is True  # mean 0.1, interval 0.1 / sqrt(5) = 0.045


def test_a_suite_mean_below_the_bar_fails_even_when_every_set_is_above_zero(tmp_path):
    _write(tmp_path / "suite" / "suite.json", _suite({"heuristic-3": [0.45] * 20, "mc-4": [0.19] * 20}, ci=0.05))
    verdicts = [v for v in targets.judge(tmp_path, {}) if v.target.startswith("suite")]
    assert [v.met for v in verdicts] == [False, False]


def test_the_presets_are_judged_against_the_reference_and_mc5_bars(tmp_path):
    tables = {table: {"mc-4": _cell(0.5)} for table in targets.TABLES}
    tables["party"] = {"mc-4": _cell(0.30)}  # reference 0.38: 0.08 below
    _write(tmp_path / "presets" / "summary.json", {"tables": tables})
    _write(
        tmp_path / "presets_mc5" / "summary.json",
        {"tables": {"or_nothing": {"mc-5": _cell(0.09, 0.08)}, "standard": {"mc-5": _cell(0.24, 0.05)}}},
    )
    reference = {table: 0.5 for table in targets.TABLES} | {"party": 0.38, "big_table": 0.56}
    met = {v.target.split(":")[0]: v.met for v in targets.judge(tmp_path, reference)}
    assert met["party vs mc-4"] is False and met["big_table vs mc-4"] is False  # 0.30 < 0.38 - 0.05; 0.5 < 0.51
    assert met["standard vs mc-4"] is True and met["quebec vs mc-4"] is True  # 0.5 >= 0.5 - 0.05
    assert met["or_nothing vs mc-5"] is True  # 0.09 - 0.08 > 0
    assert met["standard vs mc-5"] is False  # 0.24 < 0.25


def test_the_styles_need_every_table_and_held_out_styles_need_a_significant_paired_edge(tmp_path):
    tables = {
        table: {style: _cell(0.5, difference=0.2, difference_ci=0.1) for style in targets.STYLE_OPPONENTS}
        for table in targets.TABLES
    }
    tables["or_nothing"]["style-patient"] = _cell(0.5, difference=0.01, difference_ci=0.18)
    tables["party"]["style-dumper"] = _cell(0.05, 0.1)
    _write(tmp_path / "styles" / "summary.json", {"tables": tables})
    verdicts = {v.target: v for v in targets.judge(tmp_path, {}) if v.target.startswith("vs style")}
    patient_edge = verdicts["vs style-patient (held out): edge over heuristic-3, paired, significant at every table"]
    assert patient_edge.met is False and patient_edge.figure == "7 of 8; lowest or_nothing +0.01 ± 0.18"
    assert verdicts["vs style-patient (held out): ahead at every table (interval above 0)"].met is True
    assert verdicts["vs style-dumper: ahead at every table (interval above 0)"].met is False
    assert verdicts["vs style-shedder (held out): edge over heuristic-3, paired, significant at every table"].met
    assert not any("style-hoarder: edge" in t for t in verdicts)  # training styles: no paired target


def test_the_reference_is_the_shipped_agents_held_out_figure_at_every_table():
    reference = targets.reference_mc4()
    assert set(reference) == set(targets.TABLES)
    assert reference["standard"] == pytest.approx(0.671, abs=0.001)
    assert reference["or_nothing"] == pytest.approx(0.504, abs=0.001)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--parts", "suite,bogus"], "--parts: unknown part(s) bogus; the parts: suite, suite_mc5"),
        (["--suite-deals", "0"], "--suite-deals must be a positive integer, got 0"),
        (["--workers", "-1"], "--workers must be a positive integer, got -1"),
        (["--agent", "missing.pt"], "no such file: 'missing.pt'"),
    ],
)
def test_bad_arguments_are_refused_in_one_line_before_any_game(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        targets.main([*SEEDS, "--agent", "heuristic-3", "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "out" / "settings.json").exists()


def test_a_folder_keeps_one_set_of_settings(tmp_path, capsys):
    out = tmp_path / "out"
    assert targets.main([*SEEDS, "--agent", "heuristic-3", "--out", str(out), "--judge-only"]) == 0
    assert json.loads((out / "settings.json").read_text())["preset_seed"] == 98
    text = (out / "targets.md").read_text()
    assert "not measured" in text
    command = text.splitlines()[-1].strip()  # the command that continues this very folder
    assert command.startswith("python scripts/universal_targets.py --agent heuristic-3 ")
    argv = command.split()[2:]
    assert argv[argv.index("--out") + 1] == out.as_posix() and argv[argv.index("--preset-seed") + 1] == "98"
    assert targets.main([*argv, "--judge-only"]) == 0  # the same settings: accepted
    with pytest.raises(SystemExit):
        targets.main([*SEEDS, "--agent", "heuristic-3", "--out", str(out), "--preset-deals", "50", "--judge-only"])
    assert "--preset-deals is 50, but" in capsys.readouterr().err


def test_a_part_plays_resumes_and_is_judged(tmp_path, monkeypatch):
    monkeypatch.setattr(targets, "TABLES", {"standard_3p": targets.TABLES["standard_3p"]})  # one table: seconds
    monkeypatch.setattr(targets, "STYLE_OPPONENTS", ("style-patient", "style-hoarder"))
    out = tmp_path / "out"
    args = [*SEEDS, "--agent", "heuristic-2", "--out", str(out), "--parts", "styles", "--no-progress"]
    assert targets.main([*args, "--preset-deals", "2", "--chunk-deals", "1"]) == 0
    summary = json.loads((out / "styles" / "summary.json").read_text())
    assert summary["paired_with"] == "heuristic-3" and summary["seed"] == 98
    cell = summary["tables"]["standard_3p"]["style-patient"]
    assert cell["groups"] == 2 and {"difference", "difference_ci"} <= set(cell)
    assert len(list((out / "styles" / "standard_3p" / "chunks").rglob("*"))) > 0  # kept: a rerun continues them
    first = (out / "targets.json").read_text()
    assert targets.main([*args, "--preset-deals", "2", "--chunk-deals", "1"]) == 0  # done: nothing replayed
    assert (out / "targets.json").read_text() == first
    judged = [v for v in json.loads(first)["targets"] if v["target"].startswith("vs style")]
    assert [v["met"] is not None for v in judged] == [True, True, True]  # patient: ahead, edge; hoarder: ahead


def test_chunks_kept_elsewhere_continue_a_part_and_leave_out_free_of_binaries(tmp_path, monkeypatch):
    """``--chunks`` keeps the binaries outside ``OUT`` (docs/ holds none); a run stopped mid-part continues from them
    to the same figures as a run in one go."""
    monkeypatch.setattr(targets, "TABLES", {"standard_3p": targets.TABLES["standard_3p"]})
    monkeypatch.setattr(targets, "STYLE_OPPONENTS", ("style-patient",))
    common = [*SEEDS, "--agent", "heuristic-2", "--parts", "styles", "--no-progress", "--chunk-deals", "1"]
    whole = tmp_path / "whole"
    assert targets.main([*common, "--preset-deals", "3", "--out", str(whole)]) == 0
    out, chunks = tmp_path / "out", tmp_path / "chunks"
    real_measure = targets.measure
    calls = []

    def stopping_measure(*args, **kwargs):  # the first run stops after its first table's chunks are kept
        calls.append(kwargs["chunks"])
        if len(calls) == 1:
            kwargs["n_deals"] = 2  # two of the three chunks, then "stop": no summary
            real_measure(*args, **kwargs)
            raise KeyboardInterrupt
        return real_measure(*args, **kwargs)

    monkeypatch.setattr(targets, "measure", stopping_measure)
    with pytest.raises(KeyboardInterrupt):
        targets.main([*common, "--preset-deals", "3", "--out", str(out), "--chunks", str(chunks)])
    kept = {p: p.stat().st_mtime_ns for p in (chunks / "styles").rglob("chunk-*.npz")}
    assert kept and not list(out.rglob("*.npz")) and not (out / "styles" / "summary.json").exists()
    assert targets.main([*common, "--preset-deals", "3", "--out", str(out), "--chunks", str(chunks)]) == 0
    assert calls == [chunks / "styles", chunks / "styles"] and not list(out.rglob("*.npz"))
    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # loaded, not replayed
    assert len(list((chunks / "styles").rglob("chunk-*.npz"))) > len(kept)  # the third groups' chunks
    cell = json.loads((out / "styles" / "summary.json").read_text())["tables"]["standard_3p"]["style-patient"]
    assert cell == json.loads((whole / "styles" / "summary.json").read_text())["tables"]["standard_3p"]["style-patient"]
