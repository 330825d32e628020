"""Shared fixtures: the real COMPAS and Adult data, read from the data home without download.

The files are found through ``SKFAIR_AUDIT_DATA`` (or ``~/skfair_audit_data``). When they are
missing, tests that need them are skipped locally, but fail when ``CI=true`` so that the real-data
tests can never be skipped silently in continuous integration. The bunches are shared by the
whole session: do not modify them in place.

``http_server`` and ``closed_port_url`` exercise the download code against loopback addresses.
"""

from __future__ import annotations

import functools
import http.server
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest


def _load_real_data(loader, **kwargs):
    try:
        return loader(download_if_missing=False, **kwargs)
    except FileNotFoundError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Real data is required when CI=true: {exc}")
        pytest.skip(f"real data not available: {exc}")


@pytest.fixture(scope="session")
def compas_bunch():
    """COMPAS, ProPublica's filter, African-American and Caucasian only (5,278 rows)."""
    from skfair_audit.datasets import fetch_compas

    return _load_real_data(fetch_compas, preprocessing="propublica_aa_caucasian")


@pytest.fixture(scope="session")
def compas_propublica():
    """COMPAS with ProPublica's standard filter (6,172 rows)."""
    from skfair_audit.datasets import fetch_compas

    return _load_real_data(fetch_compas, preprocessing="propublica")


@pytest.fixture(scope="session")
def adult_bunch():
    """UCI Adult, train and test files together (48,842 rows)."""
    from skfair_audit.datasets import fetch_adult

    return _load_real_data(fetch_adult, subset="all")


@pytest.fixture(scope="session")
def adult_continuous(adult_bunch):
    """A 2,400-row sample of Adult as numbers: five continuous columns (standardised, as a
    model's pipeline would see them), sex and race codes (protected), and the label."""
    import numpy as np

    frame = adult_bunch.frame.dropna().reset_index(drop=True)
    sample = frame.sample(n=2400, random_state=0).reset_index(drop=True)
    columns = ["age", "education-num", "hours-per-week", "capital-gain", "capital-loss"]
    X = sample[columns].astype(float)
    X = (X - frame[columns].mean()) / frame[columns].std()
    X["sex"] = (sample["sex"] == "Male").astype(float)
    X["race"] = adult_bunch.sensitive["race"].cat.categories.get_indexer(sample["race"])
    X["race"] = X["race"].astype(float)
    y = (sample["income"] == ">50K").to_numpy().astype(int)
    assert np.isfinite(X.to_numpy()).all()
    return X, y


class _QuietFileHandler(http.server.SimpleHTTPRequestHandler):
    """Serve files of a folder without logging; ``/truncated/<name>`` drops half of the body."""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        prefix = "/truncated/"
        if not self.path.startswith(prefix):
            super().do_GET()
            return
        body = (Path(self.directory) / self.path[len(prefix) :]).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        # HTTP/1.0 handler: the connection closes when this method returns.


@dataclass(frozen=True)
class LocalServer:
    """A loopback HTTP server serving the files of ``root``."""

    root: Path
    base_url: str

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"


@pytest.fixture
def http_server(tmp_path):
    """Serve ``tmp_path / "served"`` on 127.0.0.1 from a background thread; shut down after."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietFileHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval keeps shutdown() (and so each test) fast.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield LocalServer(root=root, base_url=f"http://{host}:{port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port_url():
    """A loopback URL where nothing listens (a port bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/missing.csv"
