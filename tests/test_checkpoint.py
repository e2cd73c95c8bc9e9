"""Checkpoints: atomic saves, loads that refuse code and explain every failure, rebuilding the policy."""

from __future__ import annotations

import os
import pathlib
import pickle
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import tiny_payload  # noqa: E402

import president_env as pe  # noqa: E402
from president_env import agents  # noqa: E402
from president_env.agents import checkpoint as ckpt  # noqa: E402
from president_env.agents.checkpoint import CheckpointError  # noqa: E402
from president_env.agents.torch_policy import PolicyNet, build_policy  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def outputs(net: PolicyNet, rules: pe.Rules) -> tuple[torch.Tensor, torch.Tensor]:
    game = pe.VecGame(rules, batch_size=16, seed=1)
    with torch.no_grad():
        return net(torch.from_numpy(game.observe().copy()), torch.from_numpy(game.legal_mask().copy()))


@pytest.fixture
def good(tmp_path) -> pathlib.Path:
    return ckpt.save_checkpoint(tmp_path / "good.pt", tiny_payload())


def test_save_then_load_round_trips_and_rebuilds_the_same_policy(tmp_path):
    payload = tiny_payload()
    path = ckpt.save_checkpoint(tmp_path / "runs" / "deep" / "last.pt", payload)  # parents are created
    assert path == tmp_path / "runs" / "deep" / "last.pt" and "format" not in payload  # the payload is not changed
    loaded = ckpt.load_checkpoint(path)
    assert loaded["format"] == ckpt.CHECKPOINT_FORMAT and loaded["version"] == ckpt.CHECKPOINT_VERSION
    assert loaded["progress"] == payload["progress"] and loaded["rng"] == payload["rng"]
    assert ckpt.checkpoint_rules(loaded) == pe.Rules()
    original = PolicyNet(**payload["network"])
    original.load_state_dict(payload["model"])
    rebuilt = build_policy(loaded)
    assert not rebuilt.training
    for a, b in zip(outputs(original, pe.Rules()), outputs(rebuilt, pe.Rules())):
        assert torch.equal(a, b)


class FailingSave(RuntimeError):
    pass


def test_a_failed_save_leaves_the_previous_file_intact_and_no_temporary_file(good, monkeypatch):
    before = good.read_bytes()

    def crash_midway(obj, file, *args, **kwargs):
        file.write(b"PK\x03\x04 half of a checkpoint")
        raise FailingSave("disk full")

    monkeypatch.setattr(torch, "save", crash_midway)
    with pytest.raises(FailingSave):
        ckpt.save_checkpoint(good, tiny_payload(seed=1))
    with pytest.raises(FailingSave):
        ckpt.save_checkpoint(good.parent / "new.pt", tiny_payload(seed=1))
    assert good.read_bytes() == before
    assert sorted(p.name for p in good.parent.iterdir()) == ["good.pt"]  # no partial new.pt, no temporary files
    monkeypatch.undo()
    ckpt.save_checkpoint(good, tiny_payload(seed=1))
    assert good.read_bytes() != before and sorted(p.name for p in good.parent.iterdir()) == ["good.pt"]


class Evil:
    """Unpickling this touches ``marker``: what a malicious checkpoint would do."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
@pytest.mark.parametrize("suffix", [".pt", ".bin"])
def test_a_checkpoint_carrying_code_is_refused_and_the_code_never_runs(tmp_path, writer, suffix):
    marker = tmp_path / "MARKER"
    path = tmp_path / f"evil{suffix}"
    payload = {**tiny_payload(), "format": ckpt.CHECKPOINT_FORMAT, "version": 1, "model": Evil(marker)}
    if writer == "torch.save":
        torch.save(payload, path)
    else:
        with open(path, "wb") as file:
            pickle.dump(payload, file)
    with pytest.raises(CheckpointError, match="refused.*a checkpoint is data, never code") as err:
        ckpt.load_checkpoint(path)
    assert str(path) in str(err.value)
    with pytest.raises(CheckpointError, match="never code"):
        agents.make(str(path))  # the checkpoint loader claims it (suffix or pickle bytes) and refuses it
    with pytest.raises(CheckpointError, match="never code"):
        pe.gym_env(opponents=str(path))
    assert not marker.exists()
    if writer == "pickle.dump":  # the payload is real: an unsafe loader would have run it
        with open(path, "rb") as file:
            pickle.load(file)
        assert marker.exists()


def resave(path: pathlib.Path, **changes) -> None:
    data = torch.load(path, weights_only=True)
    data.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del data[key]
    torch.save(data, path)


def corrupt(kind: str, path: pathlib.Path) -> None:
    if kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "random bytes":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "not a dict":
        torch.save([1, 2, 3], path)
    elif kind == "wrong format":
        resave(path, format="someone-elses-checkpoint")
    elif kind == "future version":
        resave(path, version=ckpt.CHECKPOINT_VERSION + 1)
    elif kind == "missing model":
        resave(path, model=None)
    elif kind == "missing file":
        path.unlink()


CORRUPTIONS = {
    "truncated": "corrupt, truncated or not a torch file",
    "random bytes": "corrupt, not a torch file",
    "empty": "corrupt, truncated or not a torch file",
    "not a dict": "top level is a list, expected a dict",
    "wrong format": "not a president-env checkpoint .format 'someone-elses-checkpoint'",
    "future version": "unsupported version 2 .*newer president-env",
    "missing model": r"missing required key\(s\) model",
    "missing file": "no such file",
}


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_every_broken_checkpoint_is_a_checkpoint_error_naming_the_file_and_the_reason(good, kind):
    corrupt(kind, good)
    with pytest.raises(CheckpointError, match=CORRUPTIONS[kind]) as err:
        ckpt.load_checkpoint(good)
    assert str(good) in str(err.value)
    if good.exists():  # a .pt file is ours: make() explains it instead of "no checkpoint loader accepts"
        with pytest.raises(CheckpointError, match=CORRUPTIONS[kind]):
            agents.make(str(good))


def test_a_model_that_does_not_fit_its_network_spec_is_a_checkpoint_error(good):
    data = ckpt.load_checkpoint(good)
    wider = {**data, "network": {**data["network"], "hidden": [64]}}
    with pytest.raises(CheckpointError, match="does not fit its network spec.*size mismatch"):
        build_policy(wider)
    incomplete = {**data, "model": {k: v for k, v in data["model"].items() if not k.startswith("value_head")}}
    with pytest.raises(CheckpointError, match="Missing key.*value_head"):
        build_policy(incomplete)
    with pytest.raises(CheckpointError, match="network spec .* is invalid: activation must be one of"):
        build_policy({**data, "network": {**data["network"], "activation": "swish"}})
    with pytest.raises(CheckpointError, match="network spec .* is invalid"):
        build_policy({**data, "network": {"obs_dim": 3}})
    with pytest.raises(CheckpointError, match="rules are invalid: n_players"):
        ckpt.checkpoint_rules({**data, "rules": {**data["rules"], "n_players": 11}})
    resave(good, network=wider["network"])
    with pytest.raises(CheckpointError, match=f"{good}.*does not fit"):
        agents.make(str(good))


def test_save_refuses_a_payload_missing_required_keys(tmp_path):
    with pytest.raises(CheckpointError, match="lacks required key.*network"):
        ckpt.save_checkpoint(tmp_path / "x.pt", {"rules": {}, "model": {}})
    assert not any(tmp_path.iterdir())


def test_save_refuses_a_payload_the_safe_loader_would_refuse(good):
    before = good.read_bytes()
    with pytest.raises(CheckpointError, match=f"{good} not saved: it could not be loaded back: refused"):
        ckpt.save_checkpoint(good, {**tiny_payload(), "rules": pe.Rules()})  # an object, not Rules.to_dict()
    assert good.read_bytes() == before and sorted(p.name for p in good.parent.iterdir()) == ["good.pt"]


def test_export_keeps_what_acting_needs_and_drops_optimizer_and_rng(good, tmp_path):
    small = ckpt.export_policy(good, tmp_path / "ship" / "small.pt")
    data = ckpt.load_checkpoint(small)
    assert set(data) == {"format", "version", *ckpt.EXPORT_KEYS}
    assert small.stat().st_size < good.stat().st_size
    assert data["metrics"] == {"advantage_vs_heuristic-3": 0.25} and data["greedy"] is True
    full = build_policy(ckpt.load_checkpoint(good))
    for a, b in zip(outputs(build_policy(data), pe.Rules()), outputs(full, pe.Rules())):
        assert torch.equal(a, b)


def test_the_loader_leaves_files_of_other_formats_to_other_loaders(tmp_path):
    text = tmp_path / "notes.ckpt"
    text.write_text("not ours")
    other_zip = tmp_path / "sb3_model.zip"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("policy.pth", b"...")
        archive.writestr("data", "{}")
    for path in (text, other_zip):
        assert agents._torch_checkpoint_loader(os.fspath(path), pe.Rules(), None) is None


OVERSIZED_SPECS = {
    "wide": ({"hidden": [8000, 8000]}, r"hidden\[0\] = 8000 .*at most 4096"),
    "huge obs_dim": ({"obs_dim": 1e9}, r"obs_dim must be an integer from 1 to 4096, got 1000000000.0"),
    "big obs_dim": ({"obs_dim": 10**9}, r"obs_dim must be an integer from 1 to 4096"),
    "many actions": ({"num_actions": 10**6}, r"num_actions must be an integer from 1 to 1024"),
    "deep": ({"hidden": [8] * 9}, r"hidden has 9 layers; at most 8"),
    "many parameters": ({"hidden": [4096] * 8}, r"the network has 118480963 parameters; at most 20000000"),
    "not a list": ({"hidden": "64"}, r"hidden must be a list"),
    "bool width": ({"hidden": [True]}, r"hidden\[0\] must be an integer"),
}


@pytest.mark.parametrize("case", OVERSIZED_SPECS)
def test_an_oversized_network_spec_is_refused_before_anything_is_allocated(good, case):
    change, message = OVERSIZED_SPECS[case]
    data = ckpt.load_checkpoint(good)
    spec = {**data["network"], **change}
    with pytest.raises(CheckpointError, match=message):
        build_policy({**data, "network": spec})
    with pytest.raises(ValueError, match=message):
        PolicyNet(**spec)
    resave(good, network=spec)
    with pytest.raises(CheckpointError, match=f"{good}: network: {message}"):
        ckpt.load_checkpoint(good)


def test_president_play_refuses_an_oversized_checkpoint_in_one_line(good):
    for module in ("rich", "prompt_toolkit"):
        pytest.importorskip(module, reason="president-play needs the play extra")
    import io

    from president_env.apps.terminal import main

    resave(good, network={**ckpt.load_checkpoint(good)["network"], "obs_dim": 1e9})
    stderr = io.StringIO()
    code = main(["--opponents", str(good), "--seed", "1"], io.StringIO("quit\n"), io.StringIO(), stderr)
    assert code == 2
    assert len(stderr.getvalue().splitlines()) == 1 and "obs_dim" in stderr.getvalue()


def test_president_train_refuses_an_oversized_evaluation_checkpoint_before_training(good, tmp_path, capsys):
    pytest.importorskip("pydantic")
    from president_env.training.cli import main

    resave(good, network={**ckpt.load_checkpoint(good)["network"], "hidden": [8000, 8000]})
    args = ["--set", f"budget.eval_opponent={good}", "--set", "ppo.num_envs=8", "--out-dir", str(tmp_path / "run")]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "hidden[0] = 8000" in err
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


def deflate(path: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """``path``'s archive written again with every entry compressed (what ``torch.save`` never writes)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    return out


def test_a_compressed_checkpoint_is_refused_before_it_inflates(good, tmp_path):
    """A deflated 32 MB tensor of zeros fits in about 32 KB: refused from the zip's directory, unread."""
    payload = torch.load(good, weights_only=True)
    payload["metrics"] = {"padding": torch.zeros(8_000_000)}
    torch.save(payload, tmp_path / "big.pt")
    bomb = deflate(tmp_path / "big.pt", tmp_path / "bomb.pt")
    assert bomb.stat().st_size < 100_000
    for load in (ckpt.load_checkpoint, agents.make):
        with pytest.raises(CheckpointError, match=r"bomb.pt: refused: it holds compressed entries \(32,\d+,\d+ bytes"):
            load(str(bomb))


def test_a_compressed_checkpoint_costs_no_memory_through_the_command_lines(good, tmp_path):
    """``president-eval`` refuses it in one line, far below its inflated size (every loader is load_checkpoint)."""
    import subprocess
    import sys

    if not os.path.exists("/proc/self/status"):
        pytest.skip("reads the peak memory from /proc")
    payload = torch.load(good, weights_only=True)
    payload["metrics"] = {"padding": torch.zeros(100_000_000)}  # 400 MB once inflated
    torch.save(payload, tmp_path / "big.pt")
    del payload
    bomb = deflate(tmp_path / "big.pt", tmp_path / "bomb.pt")
    (tmp_path / "big.pt").unlink()

    def peak_of_refusing(path) -> tuple[int, str, int]:
        code = (
            "from president_env.evaluation.cli import main\n"
            "try:\n"
            f"    main(['--agents', {str(path)!r}, '--deals', '1', '--no-progress', '--out', {str(tmp_path)!r}])\n"
            "except SystemExit as e:\n"  # VmHWM: this process's peak (ru_maxrss would count the forking parent's)
            "    peak = [line for line in open('/proc/self/status') if line.startswith('VmHWM')][0]\n"
            "    print(e.code, int(peak.split()[1]) // 1024)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        status, peak_mb = map(int, done.stdout.split())
        return status, done.stderr, peak_mb

    status, stderr, peak_mb = peak_of_refusing(bomb)
    assert status == 2 and stderr.count("\n") == 1 and "holds compressed entries" in stderr, stderr
    # The baseline: the same refusal of the small checkpoint compressed (the interpreter with torch and the
    # compiled engine, whatever they weigh); inflated, the bomb's tensor alone would add 400 MB.
    base_status, base_stderr, base_mb = peak_of_refusing(deflate(good, tmp_path / "small.pt"))
    assert base_status == 2 and "holds compressed entries" in base_stderr, base_stderr
    assert peak_mb < base_mb + 100, (peak_mb, base_mb)


@pytest.mark.parametrize("greedy", ["no", 0, 1.0])
def test_greedy_must_be_a_boolean(good, greedy):
    resave(good, greedy=greedy)
    with pytest.raises(CheckpointError, match=f"greedy must be true or false, got {greedy!r}"):
        agents.make(str(good))


def test_a_model_or_optimizer_larger_than_its_network_is_refused_before_it_is_copied(good, monkeypatch):
    payload = torch.load(good, weights_only=True)
    spec_parameters = sum(t.numel() for t in payload["model"].values())
    copied = []
    monkeypatch.setattr(ckpt.copy, "deepcopy", lambda value: copied.append(value) or value)
    resave(good, model={**payload["model"], "extra": torch.zeros(2_000_000)})
    with pytest.raises(CheckpointError, match=rf"model holds {spec_parameters + 2_000_000:,} values; its network"):
        ckpt.load_checkpoint(good)
    resave(good, model=payload["model"], optimizer={"state": {0: {"exp_avg": torch.zeros(5_000_000)}}})
    with pytest.raises(CheckpointError, match="optimizer holds 5,000,000 values; Adam keeps two per parameter"):
        ckpt.load_checkpoint(good)
    assert not copied  # refused from the shapes, before any tensor left the mapped file
