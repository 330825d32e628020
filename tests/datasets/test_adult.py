"""fetch_adult on the real UCI files; expected counts are the published ones (data README)."""

from __future__ import annotations

import numpy as np
import pytest

from skfair_audit.datasets import fetch_adult

COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


def load(**kwargs):
    return fetch_adult(download_if_missing=False, **kwargs)


@pytest.mark.real_data
def test_all_rows_and_columns(adult_bunch):
    assert adult_bunch.frame.shape == (48842, 15)
    assert list(adult_bunch.frame.columns) == COLUMNS
    assert adult_bunch.feature_names == COLUMNS[:-1]
    assert adult_bunch.data.shape == (48842, 14)
    assert adult_bunch.sensitive.shape == (48842, 2)
    assert len(adult_bunch.filenames) == 2


@pytest.mark.real_data
@pytest.mark.parametrize(
    ("subset", "dropna", "rows", "positives"),
    [
        ("train", False, 32561, 7841),
        ("test", False, 16281, 3846),
        ("all", True, 45222, None),
    ],
)
def test_subsets_and_dropna(adult_bunch, subset, dropna, rows, positives):
    bunch = load(subset=subset, dropna=dropna)
    assert len(bunch.frame) == len(bunch.target) == rows
    if positives is not None:
        assert int(bunch.target.sum()) == positives
    if dropna:
        assert not bunch.frame.isna().to_numpy().any()


@pytest.mark.real_data
def test_labels_and_target(adult_bunch):
    assert set(adult_bunch.frame["income"].unique()) == {"<=50K", ">50K"}
    assert set(adult_bunch.target.unique()) == {0, 1}
    assert adult_bunch.target.tolist() == (adult_bunch.frame["income"] == ">50K").astype(
        int
    ).tolist()
    assert adult_bunch.target_names == ["<=50K", ">50K"]
    # 7,841 + 3,846 incomes above 50K in train + test (UCI counts).
    assert int(adult_bunch.target.sum()) == 7841 + 3846


@pytest.mark.real_data
def test_parsing_strips_spaces_and_reads_question_marks_as_missing(adult_bunch):
    frame = adult_bunch.frame
    for column in ["workclass", "education", "race", "sex", "native-country", "income"]:
        values = frame[column].dropna()
        assert not values.str.startswith(" ").any(), column
        assert not (values == "?").any(), column
    # 2,399 + 1,221 rows contain a '?'; it only ever occurs in these three columns.
    assert int(frame.isna().any(axis=1).sum()) == 2399 + 1221
    assert set(frame.columns[frame.isna().any()]) == {"workclass", "occupation", "native-country"}
    assert frame["age"].dtype.kind == "i" and frame["hours-per-week"].dtype.kind == "i"
    # Train rows come first: the very first record of adult.data, then the first of adult.test.
    assert frame.loc[0, ["age", "workclass", "fnlwgt"]].tolist() == [39, "State-gov", 77516]
    assert frame.loc[32561, ["age", "workclass", "fnlwgt"]].tolist() == [25, "Private", 226802]


@pytest.mark.real_data
def test_sensitive_categories(adult_bunch):
    sensitive = adult_bunch.sensitive
    assert list(sensitive.columns) == ["race", "sex"]
    assert list(sensitive["sex"].cat.categories) == ["Female", "Male"]
    assert list(sensitive["race"].cat.categories) == [
        "Amer-Indian-Eskimo",
        "Asian-Pac-Islander",
        "Black",
        "Other",
        "White",
    ]
    assert not sensitive.isna().to_numpy().any()


@pytest.mark.real_data
def test_descr_cites_source(adult_bunch):
    descr = adult_bunch.DESCR
    assert "Kohavi" in descr and "1996" in descr and "UCI" in descr
    assert "CC BY 4.0" in descr and "48,842" in descr


@pytest.mark.real_data
def test_as_frame_false(adult_bunch):
    arrays = load(subset="test", as_frame=False)
    assert arrays.frame is None
    assert arrays.data.shape == (16281, 14) and arrays.data.dtype == object
    assert set(np.unique(arrays.target)) == {0, 1}
    assert arrays.sensitive.shape == (16281, 2)


def test_invalid_subset():
    with pytest.raises(ValueError, match="'train', 'test', 'all'"):
        fetch_adult(subset="validation")


def test_missing_files_without_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="adult/adult.data"):
        fetch_adult(data_home=tmp_path, download_if_missing=False)
