"""Checkpoints of learned agents: one torch file holding a dict of tensors and plain data.

    save_checkpoint("runs/ppo/last.pt", payload)      # atomic: a crash never leaves a half-written file
    checkpoint = load_checkpoint("runs/ppo/last.pt")  # CheckpointError naming the file and the reason
    rules = checkpoint_rules(checkpoint)
    net = build_policy(checkpoint)                    # .torch_policy: the PolicyNet, weights loaded, in eval mode
    export_policy("runs/ppo/last.pt", "ppo-small.pt") # drops the optimizer and RNG states

**Layout** (the top-level dict; ``REQUIRED_KEYS`` must be present):

=============  =========================================================================
``format``     ``CHECKPOINT_FORMAT`` (``"president-env-checkpoint"``), set by :func:`save_checkpoint`
``version``    ``CHECKPOINT_VERSION``, set by :func:`save_checkpoint`; newer versions are refused
``rules``      ``Rules.to_dict()``: the rules the policy was trained on
``network``    ``PolicyNet.spec()``: ``obs_dim``, ``num_actions``, ``hidden``, ``activation`` (bounded:
               :func:`check_network_spec`)
``model``      the network's ``state_dict()``
``optimizer``  optional: the optimizer's ``state_dict()`` (to resume training)
``config``     optional: the training configuration, a plain dict
``rng``        optional: generator states, a plain dict
``progress``   optional: ``{"update": int, "global_step": int, "elapsed_s": float}``
``metrics``    optional: a dict of the latest evaluation numbers
``greedy``     optional bool: whether the agent acts greedily by default (default True)
=============  =========================================================================

**Bounded: loading costs at most what the file holds.** A file above :data:`MAX_CHECKPOINT_BYTES`, a compressed
zip entry (``torch.save`` never compresses; a deflated tensor of zeros turns 2 MB into gigabytes) or a pickle above
:data:`MAX_PICKLE_BYTES` is refused before anything is read; the tensors are mapped from the file while the
structure, the network spec and the sizes (``model`` no larger than the spec's network, ``optimizer`` than Adam's
state of it) are checked, and copied only then. A tensor whose shape does not fit the network is refused by the
network (``load_state_dict``) before it is used.

**Safety rule: a checkpoint is data, never code.** Files are read with
``torch.load(..., weights_only=True)`` and nothing else: the restricted unpickler accepts
tensors, numbers, strings, lists, tuples and dicts, and refuses any other object before it
is built, so a crafted file cannot run code when it is loaded. Everything a checkpoint
holds must therefore be tensors and plain data (no ``Rules`` objects, no numpy arrays, no
dataclasses): store ``to_dict()`` forms. Every failure to load is a :class:`CheckpointError`
(a ``ValueError``) whose message names the file and the reason.

This module knows the file, not the network: :mod:`.torch_policy` builds the network from a checkpoint
(``build_policy``) and imports this module, never the other way round.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
import os
import pickle
import stat
import tempfile
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from president_env.core.rules import Rules
from president_env.core.user_input import short_repr

CHECKPOINT_FORMAT = "president-env-checkpoint"
CHECKPOINT_VERSION = 1
REQUIRED_KEYS = ("rules", "network", "model")
EXPORT_KEYS = ("rules", "network", "model", "config", "progress", "metrics", "greedy")
"""What :func:`export_policy` keeps: enough to act and to say where the policy came from."""


MAX_OBS_DIM = 4096
MAX_ACTIONS = 1024
MAX_LAYERS = 8
MAX_WIDTH = 4096
MAX_PARAMETERS = 20_000_000
"""Bounds of a network spec (the largest table needs 343 inputs and 127 actions; the shipped nets have 0.6 M
parameters): a crafted spec is refused before any memory is allocated for it."""


MAX_CHECKPOINT_BYTES = 512 * 2**20
"""Largest checkpoint file read (a full training checkpoint of the largest network the bounds allow, with its
optimizer, stays under it; the shipped policies have under 3 MB)."""
MAX_PICKLE_BYTES = 64 * 2**20
"""Largest pickled structure (``data.pkl``) a checkpoint may hold; the tensors are stored beside it."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: missing, corrupt, refused by the safe loader, or of the wrong shape."""


def check_network_spec(spec: Any) -> int:
    """``ValueError`` naming the field and its bound unless ``spec`` (``PolicyNet.spec()``) is a network of sane size;
    returns its number of parameters (for a universal network, a bound of it).

    Checked from the numbers alone, before anything is allocated: ``obs_dim`` 1..4096, ``num_actions`` 1..1024,
    ``hidden`` 1..8 layers of 1..4096 units, at most 20 M parameters in all. A universal network
    (``kind: universal``, ``agents.universal``) gives its input size as ``obs_size`` and has two such trunks.
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"the network spec must be a dict, got {type(spec).__name__}")
    universal = spec.get("kind") == "universal"
    input_key = "obs_size" if universal else "obs_dim"
    sizes = {}
    for key, bound in ((input_key, MAX_OBS_DIM), ("num_actions", MAX_ACTIONS)):
        value = spec.get(key)
        if not _is_int(value) or not 1 <= value <= bound:
            raise ValueError(f"{key} must be an integer from 1 to {bound}, got {short_repr(value)}")
        sizes[key] = value
    hidden = spec.get("hidden")
    if not isinstance(hidden, (list, tuple)) or not hidden:
        raise ValueError(f"hidden must be a list of layer widths, got {short_repr(hidden)}")
    if len(hidden) > MAX_LAYERS:
        raise ValueError(f"hidden has {len(hidden)} layers; at most {MAX_LAYERS} are allowed")
    for i, width in enumerate(hidden):
        if not _is_int(width) or width < 1:
            raise ValueError(f"hidden[{i}] must be an integer from 1 to {MAX_WIDTH}, got {short_repr(width)}")
        if width > MAX_WIDTH:
            raise ValueError(f"hidden[{i}] = {width} is too wide: layers have at most {MAX_WIDTH} units")
    widths = [sizes[input_key], *hidden]
    parameters = sum((a + 1) * b for a, b in zip(widths, widths[1:])) + (hidden[-1] + 1) * (sizes["num_actions"] + 1)
    parameters *= 2 if universal else 1  # the universal actor and critic are separate trunks
    if parameters > MAX_PARAMETERS:
        raise ValueError(f"the network has {parameters} parameters; at most {MAX_PARAMETERS} are allowed")
    return parameters


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def save_checkpoint(path: str | os.PathLike, payload: Mapping[str, Any]) -> Path:
    """Write ``payload`` (see the module docstring) to ``path`` atomically; returns the path.

    ``format`` and ``version`` are set here. The file is written to a temporary file in the same
    directory, synced to disk, read back with the safe loader and renamed onto ``path``: a reader
    sees the old file or the new one, never part of one, and the temporary file is removed if
    anything fails. A payload holding anything but tensors and plain data is a :class:`CheckpointError`.
    """
    if not isinstance(payload, Mapping):
        raise TypeError(f"checkpoint payload must be a dict, got {type(payload).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in payload]
    if missing:
        raise CheckpointError(f"checkpoint {os.fspath(path)}: payload lacks required key(s) {', '.join(missing)}")
    data = dict(payload)
    data["format"], data["version"] = CHECKPOINT_FORMAT, CHECKPOINT_VERSION
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            torch.save(data, file)
            file.flush()
            os.fsync(file.fileno())
        try:  # what cannot be loaded is not saved (a numpy array or a Rules object would be refused later)
            load_checkpoint(tmp_name)
        except CheckpointError as err:
            reason = str(err).split(": ", 1)[-1]
            raise CheckpointError(
                f"checkpoint {os.fspath(path)} not saved: it could not be loaded back: {reason}"
            ) from None
        # mkstemp creates the file private (0600); keep the permissions an ordinary write would give.
        os.chmod(tmp_name, stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _sync_directory(path.parent)
    return path


def _sync_directory(directory: Path) -> None:
    """Make the rename durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _reason(err: BaseException) -> str:
    """The useful line of a loader error (torch's messages run to paragraphs)."""
    inner = err.__context__ if isinstance(err.__context__, pickle.UnpicklingError) else err
    text = " ".join(str(inner).split()) or type(inner).__name__
    first = text.split(". ")[0]
    return (first[:200] + "...") if len(first) > 200 else first


def load_checkpoint(path: str | os.PathLike, map_location: Any = "cpu") -> dict[str, Any]:
    """The checkpoint dict stored at ``path``, checked; :class:`CheckpointError` on any failure.

    Reads with ``torch.load(weights_only=True)`` only: objects other than tensors and plain data
    are refused before they are built (see the module docstring).
    """
    where = f"checkpoint {os.fspath(path)}"
    if not os.path.exists(path):
        raise CheckpointError(f"{where}: no such file")
    if not os.path.isfile(path):
        raise CheckpointError(f"{where}: not a file")
    archive = _check_archive(path, where)
    try:
        with warnings.catch_warnings():
            # Plain pickles of protocol > 2 warn before being refused; the refusal says all there is.
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            # A torch archive is mapped, not read: a tensor costs memory only once it is checked and copied.
            data = torch.load(path, map_location=map_location, weights_only=True, mmap=archive)
    except pickle.UnpicklingError as err:
        reason = _reason(err)
        if "Unsupported global" in reason:
            raise CheckpointError(
                f"{where}: refused: it contains objects other than tensors and plain data ({reason}); "
                "a checkpoint is data, never code"
            ) from None
        raise CheckpointError(
            f"{where}: refused: the safe loader cannot read it ({reason}): it is corrupt, not a torch file, "
            "or holds objects other than tensors and plain data; a checkpoint is data, never code"
        ) from None
    except Exception as err:
        raise CheckpointError(
            f"{where}: corrupt, truncated or not a torch file ({type(err).__name__}: {_reason(err)})"
        ) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{where}: the top level is a {type(data).__name__}, expected a dict")
    if data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{where}: not a president-env checkpoint (format {data.get('format')!r}, expected {CHECKPOINT_FORMAT!r})"
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{where}: unsupported version {version!r} (this president-env reads versions 1..{CHECKPOINT_VERSION}; "
            "a newer checkpoint needs a newer president-env)"
        )
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise CheckpointError(f"{where}: missing required key(s) {', '.join(missing)}")
    try:
        parameters = check_network_spec(data["network"])
    except ValueError as err:
        raise CheckpointError(f"{where}: network: {err}") from None
    _check_sizes(data, parameters, where)
    if not isinstance(data.get("greedy", True), bool):
        raise CheckpointError(f"{where}: greedy must be true or false, got {short_repr(data['greedy'])}")
    # Checked: now copied out of the mapped file (views keep sharing their storage, so this costs what the
    # file holds), so that a later change to the file cannot reach the tensors.
    return copy.deepcopy(data) if archive else data


def _count(value: Any) -> int:
    """The values of the tensors in ``value`` (nested dicts and lists), read from their shapes alone."""
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, Mapping):
        return sum(_count(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_count(v) for v in value)
    return 0


def _check_sizes(data: Mapping[str, Any], parameters: int, where: str) -> None:
    """:class:`CheckpointError` when ``model`` holds more values than its network spec has parameters, or
    ``optimizer`` more than Adam keeps for them (two per parameter): checked from the tensors' shapes, before
    any of them is copied out of the file."""
    model = _count(data["model"])
    if model > parameters:
        raise CheckpointError(f"{where}: model holds {model:,} values; its network spec has {parameters:,} parameters")
    optimizer = _count(data.get("optimizer"))
    if optimizer > 2 * parameters + 4096:
        raise CheckpointError(
            f"{where}: optimizer holds {optimizer:,} values; Adam keeps two per parameter ({2 * parameters:,})"
        )


def _check_archive(path: str | os.PathLike, where: str) -> bool:
    """Whether ``path`` is a torch zip archive (``torch.save``'s format), checked to cost at most its size when
    loaded: :class:`CheckpointError` for a file above :data:`MAX_CHECKPOINT_BYTES`, a compressed entry
    (``torch.save`` stores every entry as is; a compressed one could inflate without bound: a 2 MB file to
    gigabytes) or a pickle above :data:`MAX_PICKLE_BYTES`. Any other file is left to the safe loader to refuse."""
    size = os.path.getsize(path)
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{where}: {size:,} bytes; a checkpoint has at most {MAX_CHECKPOINT_BYTES:,}")
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    packed = [entry for entry in entries if entry.compress_type != zipfile.ZIP_STORED]
    if packed:
        raise CheckpointError(
            f"{where}: refused: it holds compressed entries ({sum(e.file_size for e in packed):,} bytes once "
            "inflated); torch.save stores every entry as is, and a compressed one could inflate without bound"
        )
    for entry in entries:
        if entry.filename.endswith("data.pkl") and entry.file_size > MAX_PICKLE_BYTES:
            raise CheckpointError(
                f"{where}: its pickled structure has {entry.file_size:,} bytes; at most {MAX_PICKLE_BYTES:,} are read"
            )
    return True


def checkpoint_rules(checkpoint: Mapping[str, Any]) -> Rules:
    """The rules the checkpoint's policy was trained on."""
    try:
        return Rules.from_dict(checkpoint["rules"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint rules are invalid: {err}") from None


def export_policy(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy ``src`` to ``dst`` keeping only :data:`EXPORT_KEYS` (no optimizer, no RNG states): a small file to ship."""
    checkpoint = load_checkpoint(src)
    return save_checkpoint(dst, {key: checkpoint[key] for key in EXPORT_KEYS if key in checkpoint})


__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "EXPORT_KEYS",
    "MAX_CHECKPOINT_BYTES",
    "MAX_PICKLE_BYTES",
    "REQUIRED_KEYS",
    "CheckpointError",
    "check_network_spec",
    "checkpoint_rules",
    "export_policy",
    "load_checkpoint",
    "save_checkpoint",
]
