"""Saving and loading a monitor's state: one ``.npz`` file, written atomically, never pickled.

The file holds the arrays of the state and a JSON document (parameters, fingerprint, group
names, levels ...) with a SHA-256 checksum over both. It is written to a temporary file in the
same folder, flushed and fsynced, then renamed over the old one with :func:`os.replace`
(atomic on POSIX and Windows), and the folder is fsynced: a crash at any point leaves either
the previous state or the new one, never a mix.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

#: Version of the file layout (refused when it differs).
FORMAT = "skfair_audit.monitor/1"


class StateFileError(ValueError):
    """A state file that cannot be used: corrupted, truncated, or written for another
    monitor (another model, metric, collection or level)."""


def _checksum(meta_bytes: bytes, arrays: dict) -> str:
    digest = hashlib.sha256(meta_bytes)
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        digest.update(name.encode())
        digest.update(str(arr.dtype).encode())
        digest.update(str(arr.shape).encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


def write_state(path, meta: dict, arrays: dict) -> None:
    """Write ``meta`` (JSON-able) and ``arrays`` to ``path`` atomically."""
    path = Path(path)
    meta = {**meta, "format": FORMAT}
    meta_bytes = json.dumps(meta, sort_keys=True, allow_nan=True).encode()
    payload = {f"a_{k}": np.asarray(v) for k, v in arrays.items()}
    payload["meta"] = np.frombuffer(meta_bytes, dtype=np.uint8)
    payload["checksum"] = np.frombuffer(_checksum(meta_bytes, arrays).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **payload)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(folder, os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def read_state(path):
    """``(meta, arrays)`` of a state file; :class:`StateFileError` when it is unusable."""
    path = Path(path)
    if not path.is_file():
        raise StateFileError(f"no state file {str(path)!r}.")
    try:
        # Our own handle: np.load leaks the one it opens when the zip directory is unreadable.
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:
            files = set(data.files)
            if not {"meta", "checksum"} <= files:
                raise StateFileError(f"{str(path)!r} is not a monitor state file.")
            meta_bytes = data["meta"].tobytes()
            stored = data["checksum"].tobytes().decode()
            arrays = {k[2:]: data[k] for k in files if k.startswith("a_")}
    except StateFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError,
            UnicodeDecodeError) as exc:
        raise StateFileError(f"{str(path)!r} is corrupted or truncated (not a readable "
                             f"state file): {type(exc).__name__}.") from None
    if _checksum(meta_bytes, arrays) != stored:
        raise StateFileError(f"{str(path)!r} is corrupted: its checksum does not match.")
    try:
        meta = json.loads(meta_bytes)
    except ValueError:
        raise StateFileError(f"{str(path)!r} is corrupted: unreadable metadata.") from None
    if meta.get("format") != FORMAT:
        raise StateFileError(f"{str(path)!r} has format {meta.get('format')!r}; this version "
                             f"reads {FORMAT!r}.")
    return meta, arrays
