"""Data home, checksummed remote files and their download.

The loaders never trust a file they have not hashed: a file found in the data home is compared
with its published sha256 before use, and a download is streamed into a temporary file next to
its destination, hashed, and moved into place atomically only when the hash matches, so an
interrupted or corrupted download never leaves a file behind.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sklearn.utils import Bunch

#: Environment variable naming the data home (overridden by ``data_home=``).
DATA_HOME_ENV = "SKFAIR_AUDIT_DATA"

#: Folder under the user's home directory used when neither ``data_home`` nor
#: ``SKFAIR_AUDIT_DATA`` is given.
DEFAULT_DATA_HOME_NAME = "skfair_audit_data"

_CHUNK_SIZE = 1 << 16


def get_data_home(data_home=None) -> Path:
    """Return the folder where the real-data loaders look for (and store) their files.

    The folder is, in order of precedence: the ``data_home`` argument, the environment variable
    ``SKFAIR_AUDIT_DATA``, or ``~/skfair_audit_data``. A leading ``~`` is expanded. The folder is
    not created here; a download creates the sub-folder it writes to.

    Inside the data home the layout mirrors the public sources::

        compas/compas-scores-two-years.csv
        adult/adult.data
        adult/adult.test

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        Folder to use. ``None`` falls back to ``SKFAIR_AUDIT_DATA``, then ``~/skfair_audit_data``.

    Returns
    -------
    pathlib.Path
        The data home.

    Examples
    --------
    >>> from pathlib import Path
    >>> from skfair_audit.datasets import get_data_home
    >>> get_data_home("~/my_fairness_data") == Path.home() / "my_fairness_data"
    True
    """
    if data_home is None:
        # An empty variable counts as unset, as for most path variables.
        data_home = os.environ.get(DATA_HOME_ENV) or Path.home() / DEFAULT_DATA_HOME_NAME
    return Path(os.fspath(data_home)).expanduser()


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """A public file, where it lives in the data home, where to download it, and its hash.

    Parameters
    ----------
    filename : str
        Path relative to the data home, with ``/`` separators, e.g.
        ``"compas/compas-scores-two-years.csv"``.
    url : str
        Canonical download address (pinned to a commit where the host allows it).
    sha256 : str
        Hex sha256 digest of the exact bytes expected.

    Examples
    --------
    >>> from skfair_audit.datasets._base import RemoteFile
    >>> remote = RemoteFile("demo/a.csv", "https://example.org/a.csv", "0" * 64)
    >>> remote.path("/data").as_posix()
    '/data/demo/a.csv'
    """

    filename: str
    url: str
    sha256: str

    def path(self, data_home=None) -> Path:
        """Location of this file inside ``get_data_home(data_home)``."""
        return get_data_home(data_home).joinpath(*PurePosixPath(self.filename).parts)


def sha256_of(path) -> str:
    """Hex sha256 digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_SIZE), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_file(
    remote: RemoteFile, data_home=None, download_if_missing: bool = True, timeout: float = 60.0
) -> Path:
    """Return the local path of ``remote``, downloading it if needed, after checking its sha256.

    Parameters
    ----------
    remote : RemoteFile
        The file to provide.
    data_home : str or os.PathLike, default=None
        See :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False and the file is not in the data home, raise :class:`FileNotFoundError` instead
        of downloading.
    timeout : float, default=60.0
        Seconds to wait for the server to connect or send data.

    Returns
    -------
    pathlib.Path
        Path of the verified file.

    Raises
    ------
    FileNotFoundError
        The file is missing and ``download_if_missing`` is False.
    OSError
        The file in the data home, or the downloaded payload, does not have the expected sha256;
        or the download failed (no network, server error, interrupted transfer). Nothing is left
        in the data home after a failed download.
    """
    path = remote.path(data_home)
    if path.exists():
        actual = sha256_of(path)
        if actual != remote.sha256:
            raise OSError(
                f"The file {path} does not have the expected sha256 "
                f"(expected {remote.sha256}, found {actual}); it is corrupted or a different "
                f"version of {remote.filename!r}. Delete it so that it is downloaded again from "
                f"{remote.url}, or point {DATA_HOME_ENV} to a folder holding a good copy "
                f"of {remote.filename!r}."
            )
        return path
    if not download_if_missing:
        raise FileNotFoundError(
            f"{remote.filename!r} was not found in the data home: {path} does not exist. "
            f"Set the environment variable {DATA_HOME_ENV} (or pass data_home=) to a folder "
            f"holding {remote.filename!r}, or allow the download with download_if_missing=True "
            f"(source: {remote.url})."
        )
    _download(remote, path, timeout)
    return path


def _download(remote: RemoteFile, path: Path, timeout: float) -> None:
    """Stream ``remote.url`` to a temporary file beside ``path``, verify it, move it in place."""
    # Folders created here are removed again if the download fails.
    created = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    # Same folder as the target, so that os.replace is an atomic rename on one file system.
    handle, temporary_name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".part", dir=path.parent
    )
    temporary = Path(temporary_name)
    succeeded = False
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as sink:
            with urllib.request.urlopen(remote.url, timeout=timeout) as response:
                expected_size = response.headers.get("Content-Length")
                received_size = 0
                for chunk in iter(lambda: response.read(_CHUNK_SIZE), b""):
                    digest.update(chunk)
                    sink.write(chunk)
                    received_size += len(chunk)
        # http.client returns a short body silently when the connection drops early.
        if expected_size is not None and received_size != int(expected_size):
            raise http.client.IncompleteRead(b"", int(expected_size) - received_size)
        actual = digest.hexdigest()
        if actual != remote.sha256:
            raise OSError(
                f"The download of {remote.url} does not have the expected sha256 "
                f"(expected {remote.sha256}, got {actual}); the file was discarded. The server "
                f"may serve a different version. Put a verified copy of {remote.filename!r} in "
                f"a folder and point {DATA_HOME_ENV} to it."
            )
        os.chmod(temporary, 0o644)  # mkstemp makes it private; data files are world-readable
        os.replace(temporary, path)
        succeeded = True
    except urllib.error.HTTPError as exc:
        exc.close()  # the error carries the open response body
        raise OSError(
            f"Downloading {remote.url} failed: the server answered HTTP {exc.code} "
            f"({exc.reason}). To use a local copy instead, set {DATA_HOME_ENV} (or pass "
            f"data_home=) to a folder holding {remote.filename!r}."
        ) from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OSError(
            f"Could not download {remote.url} ({reason}): this machine seems to be offline or "
            f"the server is unreachable. To use a local copy, set {DATA_HOME_ENV} (or pass "
            f"data_home=) to a folder holding {remote.filename!r} (sha256 {remote.sha256})."
        ) from exc
    except http.client.HTTPException as exc:
        raise OSError(
            f"The download of {remote.url} was interrupted ({exc!r}); the partial file was "
            f"discarded. Try again, or set {DATA_HOME_ENV} to a folder holding "
            f"{remote.filename!r}."
        ) from exc
    finally:
        # After a successful os.replace the temporary name no longer exists.
        temporary.unlink(missing_ok=True)
        if not succeeded:
            _remove_empty_folders(created)


def _remove_empty_folders(folders):
    """Remove ``folders`` (deepest first) where still empty, e.g. after a failed download."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            # Not empty (another process wrote there) or gone: leave it.
            break


def dataset_bunch(as_frame, frame, **fields):
    """The :class:`~sklearn.utils.Bunch` a loader returns: ``frame``, then ``fields`` in order.

    With ``as_frame=False`` the frame is None and the pandas fields become arrays: numeric
    Series keep their dtype, tables and categorical or text columns become ``object`` arrays;
    other fields (names, descriptions, paths) are kept as given.
    """
    if not as_frame:
        frame = None
        fields = {key: _as_array(value) for key, value in fields.items()}
    return Bunch(frame=frame, **fields)


def _as_array(value):
    if not hasattr(value, "to_numpy"):
        return value
    if value.ndim == 1 and value.dtype.kind in "biuf":
        return value.to_numpy()
    return value.to_numpy(dtype=object)
