"""A tournament's finished chunks kept in a folder, so that a stopped tournament continues where it stopped.

A tournament's result depends on its lineup, rules, seed, ``chunk_deals`` and agent seed only, and each chunk on
those and its index (:mod:`~president_env.evaluation.tournament`), so the chunks a stopped run finished are the
chunks an uninterrupted run would have played. :class:`ChunkStore` writes each finished chunk's records to
``FOLDER/chunk-<index>.npz`` (atomically: a run killed mid-write leaves no half file) beside ``FOLDER/tournament.json``,
the tournament's identity; a later run with the same identity loads them and plays only the others. A folder that
holds another tournament's chunks is refused, naming what differs. Learned agents are identified by the SHA-256 of
their weights file as well as their name, so a checkpoint retrained under the same name is not mixed with the old
one; agent objects are identified by name only. The code is not part of the identity: a change to what an agent
decides (a baseline's search, say) between two sittings would mix both versions in one result.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from president_env import agents as agent_registry
from president_env.core.rules import Rules
from president_env.core.user_input import check_writable_dir, short_repr

from .play import MancheRecords, agent_name, distinct_agents

FORMAT = 1
"""Version of the folder's layout, part of the identity."""
IDENTITY_FILE = "tournament.json"
_FIELDS = [field.name for field in dataclasses.fields(MancheRecords)]


def identity(lineup: list[Any], rules: Rules, seed: int, chunk_deals: int, agent_seed: int | None) -> dict[str, Any]:
    """What decides every chunk of a tournament (``n_deals`` only decides how many there are)."""
    return {
        "format": FORMAT,
        "lineup": [agent_name(spec) for spec in lineup],
        "weights": {agent_name(spec): _weights_digest(spec) for spec in distinct_agents(lineup)[0]},
        "rules": rules.to_dict(),
        "seed": seed,
        "chunk_deals": int(chunk_deals),
        "agent_seed": agent_seed,
    }


def _weights_digest(spec: Any) -> str | None:
    """SHA-256 of the file holding a learned agent's weights (a checkpoint path or a shipped agent's name)."""
    if not isinstance(spec, (str, os.PathLike)):
        return None
    path = agent_registry.weights_file(os.fspath(spec))
    if path is None or not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ChunkStore:
    """The finished chunks of one tournament in ``folder`` (created if needed).

    ``ValueError`` (one line) when the folder cannot be written, or holds the chunks of a tournament of another
    :func:`identity`, or a chunk file that cannot be read.
    """

    def __init__(self, folder: str | os.PathLike, key: dict[str, Any]) -> None:
        self.folder = check_writable_dir(folder, "the resume folder")
        self.key = json.loads(json.dumps(key))  # as it reads back from the file
        path = self.folder / IDENTITY_FILE
        if path.is_file():
            try:
                stored = json.loads(path.read_text())
            except (OSError, ValueError) as err:
                raise ValueError(f"resume folder {self.folder}: {IDENTITY_FILE} cannot be read ({err})") from None
            differ = [name for name in sorted(set(stored) | set(self.key)) if stored.get(name) != self.key.get(name)]
            if differ:
                name = differ[0]
                raise ValueError(
                    f"resume folder {self.folder} holds the chunks of another tournament: its {name} is "
                    f"{short_repr(stored.get(name), 120)}, this one's {short_repr(self.key.get(name), 120)} "
                    "(use another folder, or empty this one)"
                )
        else:
            _write_atomically(path, json.dumps(self.key, indent=1).encode())

    def _path(self, index: int) -> Path:
        return self.folder / f"chunk-{index:05d}.npz"

    def load(self, index: int, first_group: int, n_groups: int) -> MancheRecords | None:
        """The records of chunk ``index`` if it was finished with these groups, else ``None``."""
        path = self._path(index)
        if not path.is_file():
            return None
        try:
            with np.load(path) as data:
                if int(data["first_group"]) != first_group or int(data["n_groups"]) != n_groups:
                    return None  # the last chunk of a tournament with another number of deals
                return MancheRecords(*(data[name] for name in _FIELDS))
        except (OSError, ValueError, KeyError) as err:
            raise ValueError(f"resume folder {self.folder}: {path.name} cannot be read ({err}); remove it") from None

    def save(self, index: int, first_group: int, n_groups: int, records: MancheRecords) -> None:
        """Keep chunk ``index``'s records."""
        arrays = {name: getattr(records, name) for name in _FIELDS}
        with tempfile.SpooledTemporaryFile() as buffer:
            np.savez_compressed(buffer, first_group=first_group, n_groups=n_groups, **arrays)
            buffer.seek(0)
            _write_atomically(self._path(index), buffer.read())


def _write_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, 0o644)  # mkstemp's file is private; the chunks are results like the others
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


__all__ = ["ChunkStore", "identity"]
