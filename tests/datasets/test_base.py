"""Data home, sha256 checks and the download (against a loopback HTTP server)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from skfair_audit.datasets import get_data_home
from skfair_audit.datasets._adult import ADULT_DATA, ADULT_TEST
from skfair_audit.datasets._base import RemoteFile, fetch_file, sha256_of
from skfair_audit.datasets._compas import COMPAS_TWO_YEARS

# Published digests (README of the shared data folder), written out independently of the code.
PUBLISHED_SHA256 = {
    "compas/compas-scores-two-years.csv": (
        "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d"
    ),
    "adult/adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult/adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}

PAYLOAD = b"id,label\n" + b"".join(b"%d,%d\n" % (i, i % 2) for i in range(20_000))
PAYLOAD_SHA256 = hashlib.sha256(PAYLOAD).hexdigest()


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def served_remote(http_server):
    """A RemoteFile whose URL serves ``PAYLOAD`` from the loopback server."""
    (http_server.root / "demo.csv").write_bytes(PAYLOAD)
    return RemoteFile("demo/demo.csv", http_server.url("demo.csv"), PAYLOAD_SHA256)


# --------------------------------------------------------------------------- data home


def test_data_home_argument_wins_over_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SKFAIR_AUDIT_DATA", str(tmp_path / "from_env"))
    assert get_data_home(tmp_path / "explicit") == tmp_path / "explicit"
    assert get_data_home(str(tmp_path / "explicit")) == tmp_path / "explicit"


def test_data_home_environment_then_default(monkeypatch, tmp_path):
    monkeypatch.setenv("SKFAIR_AUDIT_DATA", str(tmp_path / "from_env"))
    assert get_data_home() == tmp_path / "from_env"
    monkeypatch.delenv("SKFAIR_AUDIT_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / "skfair_audit_data"
    monkeypatch.setenv("SKFAIR_AUDIT_DATA", "")
    assert get_data_home() == tmp_path / "home" / "skfair_audit_data"


def test_data_home_expands_user(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert get_data_home("~/data") == tmp_path / "data"


def test_data_home_is_not_created(tmp_path):
    get_data_home(tmp_path / "not_yet")
    assert not (tmp_path / "not_yet").exists()


def test_remote_file_layout_mirrors_the_sources(tmp_path):
    assert COMPAS_TWO_YEARS.path(tmp_path) == tmp_path / "compas" / "compas-scores-two-years.csv"
    assert ADULT_DATA.path(tmp_path) == tmp_path / "adult" / "adult.data"
    assert ADULT_TEST.path(tmp_path) == tmp_path / "adult" / "adult.test"
    for remote in (COMPAS_TWO_YEARS, ADULT_DATA, ADULT_TEST):
        assert remote.sha256 == PUBLISHED_SHA256[remote.filename]
        assert remote.url.startswith("https://")
    assert "bafff5da3f2e45eca6c2d5055faad269defd135a" in COMPAS_TWO_YEARS.url


def test_sha256_of_matches_hashlib(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(PAYLOAD)
    assert sha256_of(path) == hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- local files


def test_existing_good_file_is_used_without_network(tmp_path, closed_port_url):
    remote = RemoteFile("demo/demo.csv", closed_port_url, PAYLOAD_SHA256)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "demo.csv").write_bytes(PAYLOAD)
    assert fetch_file(remote, tmp_path) == tmp_path / "demo" / "demo.csv"


def test_existing_corrupted_file_is_detected(tmp_path, closed_port_url):
    remote = RemoteFile("demo/demo.csv", closed_port_url, PAYLOAD_SHA256)
    corrupted = bytearray(PAYLOAD)
    corrupted[100] ^= 1
    (tmp_path / "demo").mkdir()
    path = tmp_path / "demo" / "demo.csv"
    path.write_bytes(bytes(corrupted))
    with pytest.raises(OSError, match="sha256") as info:
        fetch_file(remote, tmp_path)
    message = str(info.value)
    assert str(path) in message
    assert PAYLOAD_SHA256 in message
    assert hashlib.sha256(bytes(corrupted)).hexdigest() in message
    assert "Delete" in message and "SKFAIR_AUDIT_DATA" in message
    assert path.read_bytes() == bytes(corrupted)  # the user's file is left alone


def test_missing_file_without_download_says_how_to_fix(tmp_path, closed_port_url):
    remote = RemoteFile("demo/demo.csv", closed_port_url, PAYLOAD_SHA256)
    with pytest.raises(FileNotFoundError) as info:
        fetch_file(remote, tmp_path, download_if_missing=False)
    message = str(info.value)
    assert str(tmp_path / "demo" / "demo.csv") in message
    assert "SKFAIR_AUDIT_DATA" in message and "download_if_missing=True" in message
    assert files_under(tmp_path) == []


# --------------------------------------------------------------------------- download


def test_download_writes_the_verified_file(tmp_path, served_remote):
    data_home = tmp_path / "home"
    path = fetch_file(served_remote, data_home)
    assert path == data_home / "demo" / "demo.csv"
    assert path.read_bytes() == PAYLOAD
    assert files_under(data_home) == [path]
    assert path.stat().st_mode & 0o777 == 0o644


def test_download_with_wrong_checksum_leaves_nothing(tmp_path, http_server):
    corrupted = bytearray(PAYLOAD)
    corrupted[-5] ^= 1
    (http_server.root / "demo.csv").write_bytes(bytes(corrupted))
    url = http_server.url("demo.csv")
    remote = RemoteFile("demo/demo.csv", url, PAYLOAD_SHA256)
    data_home = tmp_path / "home"
    with pytest.raises(OSError, match="sha256") as info:
        fetch_file(remote, data_home)
    message = str(info.value)
    assert url in message
    assert PAYLOAD_SHA256 in message
    assert hashlib.sha256(bytes(corrupted)).hexdigest() in message
    assert not data_home.exists()  # no file, no temporary file, no folder left behind


def test_interrupted_download_leaves_nothing(tmp_path, http_server):
    (http_server.root / "demo.csv").write_bytes(PAYLOAD)
    remote = RemoteFile("demo/demo.csv", http_server.url("truncated/demo.csv"), PAYLOAD_SHA256)
    data_home = tmp_path / "home"
    with pytest.raises(OSError, match="interrupted"):
        fetch_file(remote, data_home)
    assert not data_home.exists()  # no file, no temporary file, no folder left behind


def test_http_error_is_reported(tmp_path, http_server):
    url = http_server.url("no_such_file.csv")
    remote = RemoteFile("demo/demo.csv", url, PAYLOAD_SHA256)
    data_home = tmp_path / "home"
    with pytest.raises(OSError, match="HTTP 404") as info:
        fetch_file(remote, data_home)
    assert url in str(info.value) and "SKFAIR_AUDIT_DATA" in str(info.value)
    assert not data_home.exists()  # no file, no temporary file, no folder left behind


def test_offline_error_says_what_to_do(tmp_path, closed_port_url):
    remote = RemoteFile("demo/demo.csv", closed_port_url, PAYLOAD_SHA256)
    data_home = tmp_path / "home"
    with pytest.raises(OSError, match="offline") as info:
        fetch_file(remote, data_home, timeout=5)
    message = str(info.value)
    assert closed_port_url in message
    assert "SKFAIR_AUDIT_DATA" in message and "demo/demo.csv" in message
    assert not data_home.exists()  # no file, no temporary file, no folder left behind


def test_failed_download_keeps_existing_folders(tmp_path, closed_port_url):
    remote = RemoteFile("demo/sub/demo.csv", closed_port_url, PAYLOAD_SHA256)
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "other.csv").write_bytes(b"x")
    with pytest.raises(OSError, match="offline"):
        fetch_file(remote, tmp_path)
    assert files_under(tmp_path) == [tmp_path / "demo" / "other.csv"]
    assert not (tmp_path / "demo" / "sub").exists()


# --------------------------------------------------------------------------- CI guard


@pytest.mark.real_data
def test_ci_has_real_data():
    """In CI every real-data file must be present in the data home with its published sha256."""
    if os.environ.get("CI") != "true":
        pytest.skip("only enforced when CI=true")
    for filename, expected in PUBLISHED_SHA256.items():
        path = get_data_home().joinpath(*filename.split("/"))
        assert path.is_file(), f"{filename} is missing from the data home {get_data_home()}"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == expected, filename
