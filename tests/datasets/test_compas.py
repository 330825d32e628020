"""fetch_compas on the real file: ProPublica's filter, fixed categories, and the download path.

Expected counts are the ones published with the shared data (README), computed independently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from skfair_audit.datasets import _compas, fetch_compas

RACES = ["African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other"]
GRID_CATEGORIES = {
    "sex": ["Female", "Male"],
    "race": RACES,
    "age_cat": ["Less than 25", "25 - 45", "Greater than 45"],
    "priors_cat": ["0", "1-3", ">3"],
    "c_charge_degree": ["F", "M"],
}


@pytest.fixture(scope="module")
def compas_none(compas_propublica):
    # compas_propublica is requested so that a missing file skips / fails the same way.
    return fetch_compas(preprocessing="none", download_if_missing=False)


@pytest.mark.real_data
def test_row_counts(compas_none, compas_propublica, compas_bunch):
    assert compas_none.frame.shape == (7214, 54)
    assert compas_propublica.frame.shape == (6172, 54)
    assert compas_bunch.frame.shape == (5278, 54)
    for bunch in (compas_none, compas_propublica, compas_bunch):
        n = len(bunch.frame)
        assert bunch.data.shape == (n, 5)
        assert bunch.target.shape == bunch.score.shape == bunch.score_text.shape == (n,)
        assert bunch.sensitive.shape == (n, 3)


@pytest.mark.real_data
def test_propublica_filter_published_facts(compas_propublica):
    frame = compas_propublica.frame
    assert frame["race"].value_counts().to_dict() == {
        "African-American": 3175,
        "Caucasian": 2103,
        "Hispanic": 509,
        "Other": 343,
        "Asian": 31,
        "Native American": 11,
    }
    assert frame["sex"].value_counts().to_dict() == {"Male": 4997, "Female": 1175}
    assert round(float(compas_propublica.target.mean()), 4) == 0.4551
    days = frame["days_b_screening_arrest"]
    assert days.notna().all() and days.between(-30, 30).all()
    assert (frame["is_recid"] != -1).all() and (frame["c_charge_degree"] != "O").all()


@pytest.mark.real_data
def test_aa_caucasian_subset(compas_bunch, compas_propublica):
    assert set(compas_bunch.frame["race"]) == {"African-American", "Caucasian"}
    expected = compas_propublica.frame[
        compas_propublica.frame["race"].isin(["African-American", "Caucasian"])
    ]
    assert compas_bunch.frame["id"].tolist() == expected["id"].tolist()


@pytest.mark.real_data
def test_grid_categories_are_fixed(compas_none, compas_propublica, compas_bunch):
    for bunch in (compas_none, compas_propublica):
        for name, categories in GRID_CATEGORIES.items():
            assert list(bunch.data[name].cat.categories) == categories, name
    expected = {**GRID_CATEGORIES, "race": ["African-American", "Caucasian"]}
    for name, categories in expected.items():
        assert list(compas_bunch.data[name].cat.categories) == categories, name
    assert compas_bunch.feature_names == list(GRID_CATEGORIES)
    assert not compas_bunch.data.isna().to_numpy().any()
    assert list(compas_bunch.sensitive.columns) == ["race", "sex", "age_cat"]
    assert compas_bunch.sensitive["race"].equals(compas_bunch.data["race"])


@pytest.mark.real_data
def test_priors_cat_bins(compas_none):
    frame = compas_none.frame
    expected = np.where(
        frame["priors_count"] == 0, "0", np.where(frame["priors_count"] <= 3, "1-3", ">3")
    )
    assert frame["priors_cat"].astype(str).tolist() == expected.tolist()
    assert list(frame["priors_cat"].cat.categories) == ["0", "1-3", ">3"]
    assert frame["priors_cat"].cat.ordered
    assert compas_none.data["priors_cat"].astype(str).tolist() == expected.tolist()


@pytest.mark.real_data
def test_target_score_and_names(compas_bunch):
    assert set(compas_bunch.target.unique()) <= {0, 1}
    assert compas_bunch.target.dtype == np.int64
    assert compas_bunch.target.tolist() == compas_bunch.frame["two_year_recid"].tolist()
    assert compas_bunch.score.between(1, 10).all()
    assert list(compas_bunch.score_text.cat.categories) == ["Low", "Medium", "High"]
    assert compas_bunch.target_names == ["no recidivism", "recidivism"]


@pytest.mark.real_data
def test_descr_cites_source_and_filter(compas_bunch, compas_none):
    descr = compas_bunch.DESCR
    assert "Machine Bias" in descr and "Angwin" in descr
    assert "propublica/compas-analysis" in descr
    assert "bafff5da3f2e45eca6c2d5055faad269defd135a" in descr
    assert "days_b_screening_arrest" in descr and "5,278" in descr
    assert "African-American" in descr and "two_year_recid" in descr
    assert "7,214" in compas_none.DESCR


@pytest.mark.real_data
def test_as_frame_false(compas_bunch):
    arrays = fetch_compas(
        preprocessing="propublica_aa_caucasian", as_frame=False, download_if_missing=False
    )
    assert arrays.frame is None
    assert isinstance(arrays.data, np.ndarray) and arrays.data.dtype == object
    assert arrays.data.shape == (5278, 5)
    assert arrays.data.tolist() == compas_bunch.data.astype(str).to_numpy().tolist()
    np.testing.assert_array_equal(arrays.target, compas_bunch.target.to_numpy())
    np.testing.assert_array_equal(arrays.score, compas_bunch.score.to_numpy())
    assert arrays.sensitive.shape == (5278, 3) and arrays.sensitive.dtype == object


def test_invalid_preprocessing_lists_valid_options():
    with pytest.raises(ValueError, match="propublica_aa_caucasian") as info:
        fetch_compas(preprocessing="aa_only")
    assert "'none'" in str(info.value) and "'propublica'" in str(info.value)


# --------------------------------------------------------------------------- download path


@pytest.fixture
def served_compas(compas_bunch, http_server, monkeypatch):
    """Serve a copy of the real csv on loopback and point the COMPAS RemoteFile at it."""
    shutil.copyfile(compas_bunch.filename, http_server.root / "compas.csv")
    url = http_server.url("compas.csv")
    monkeypatch.setattr(
        _compas, "COMPAS_TWO_YEARS", dataclasses.replace(_compas.COMPAS_TWO_YEARS, url=url)
    )
    return http_server.root / "compas.csv"


@pytest.mark.real_data
def test_download_then_load(tmp_path, served_compas):
    data_home = tmp_path / "home"
    bunch = fetch_compas(data_home=data_home, preprocessing="none")
    assert len(bunch.frame) == 7214
    assert bunch.filename == str(data_home / "compas" / "compas-scores-two-years.csv")
    assert [p.name for p in data_home.rglob("*") if p.is_file()] == [
        "compas-scores-two-years.csv"
    ]
    # The second call reads the cached file; a dead URL proves it does not download again.
    served_compas.unlink()
    assert len(fetch_compas(data_home=data_home).frame) == 6172


@pytest.mark.real_data
def test_download_rejects_corrupted_payload(tmp_path, served_compas):
    payload = bytearray(served_compas.read_bytes())
    payload[1000] = ord("X") if payload[1000] != ord("X") else ord("Y")
    served_compas.write_bytes(bytes(payload))
    data_home = tmp_path / "home"
    with pytest.raises(OSError, match="sha256") as info:
        fetch_compas(data_home=data_home)
    assert _compas.COMPAS_TWO_YEARS.url in str(info.value)
    assert hashlib.sha256(bytes(payload)).hexdigest() in str(info.value)
    assert not data_home.exists()


def test_offline_error(tmp_path, closed_port_url, monkeypatch):
    monkeypatch.setattr(
        _compas,
        "COMPAS_TWO_YEARS",
        dataclasses.replace(_compas.COMPAS_TWO_YEARS, url=closed_port_url),
    )
    with pytest.raises(OSError, match="offline") as info:
        fetch_compas(data_home=tmp_path)
    assert "SKFAIR_AUDIT_DATA" in str(info.value)
    assert "compas/compas-scores-two-years.csv" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_missing_file_without_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="SKFAIR_AUDIT_DATA") as info:
        fetch_compas(data_home=tmp_path, download_if_missing=False)
    assert str(tmp_path / "compas" / "compas-scores-two-years.csv") in str(info.value)


@pytest.mark.real_data
def test_corrupted_file_in_data_home_is_detected(tmp_path, compas_bunch):
    target = tmp_path / "compas" / "compas-scores-two-years.csv"
    target.parent.mkdir()
    payload = bytearray(Path(compas_bunch.filename).read_bytes())
    payload[-10] ^= 1
    target.write_bytes(bytes(payload))
    with pytest.raises(OSError, match="expected c451db85") as info:
        fetch_compas(data_home=tmp_path, download_if_missing=False)
    assert str(target) in str(info.value)
