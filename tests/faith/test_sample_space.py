"""Sample spaces and forbidden moves against brute-force references (pandas, sklearn, loops)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith._metric import SensitiveSubspaceMetric
from skfair_audit.faith._sample_space import (
    EmpiricalSpace,
    GridSpace,
    forbidden_moves,
    move_groups,
)

FEATURES = ["sex", "race", "age_cat", "priors", "charge"]


@pytest.fixture(scope="module")
def compas_like():
    """Synthetic COMPAS-like frame: levels 2, 2, 3, 3, 2; 'priors' has an unobserved category."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["Female", "Male"], n),
            "race": rng.choice(["African-American", "Caucasian"], n),
            "age_cat": pd.Categorical(
                rng.choice(["Less than 25", "25 - 45", "Greater than 45"], n),
                categories=["Less than 25", "25 - 45", "Greater than 45"],
            ),
            # '>3' is a declared but unobserved category
            "priors": pd.Categorical(rng.choice(["0", "1-3"], n), categories=["0", "1-3", ">3"]),
            "charge": rng.integers(0, 2, n),  # int column: levels are observed values 0, 1
        }
    )
    y = rng.integers(0, 2, n)
    return frame, y


@pytest.fixture(scope="module")
def grid(compas_like):
    X, y = compas_like
    return GridSpace.from_data(X, y, FEATURES)


# --------------------------------------------------------------------------- GridSpace
def test_grid_size_includes_unobserved_levels(grid):
    assert [lv.size for lv in grid.levels] == [2, 2, 3, 3, 2]
    assert grid.n_feature_cells == 72 and grid.n_cells == 144
    assert list(grid.levels[3]) == ["0", "1-3", ">3"]  # categorical order kept
    assert list(grid.levels[2]) == ["Less than 25", "25 - 45", "Greater than 45"]
    assert list(grid.levels[0]) == ["Female", "Male"]  # sorted observed
    # every combination of levels appears exactly once per label (brute force product)
    expected = set(itertools.product(*[lv.tolist() for lv in grid.levels]))
    assert {tuple(r) for r in grid.feature_cells.tolist()} == expected
    assert grid.cell_features.shape == (144, 5)
    np.testing.assert_array_equal(grid.cell_labels, np.repeat([0, 1], 72))
    np.testing.assert_array_equal(grid.feature_cell_index, np.tile(np.arange(72), 2))


def test_grid_cell_index_round_trip_and_counts(grid, compas_like):
    X, y = compas_like
    index = grid.cell_index(X, y)
    assert index.shape == (len(X),)
    reproduced = grid.cell_features[index]
    for j, name in enumerate(FEATURES):
        assert list(reproduced[:, j]) == list(X[name])
    np.testing.assert_array_equal(grid.cell_labels[index], y)
    counts = grid.counts(X, y)
    assert counts.shape == (144,) and counts.sum() == len(X)
    # independent count by pandas groupby on (features, label)
    frame = X.astype(object).assign(label=y)
    grouped = frame.groupby([*FEATURES, "label"]).size()
    for k in range(grid.n_cells):
        key = (*grid.cell_features[k].tolist(), grid.cell_labels[k])
        assert counts[k] == grouped.get(key, 0)


def test_grid_unknown_level_and_label_errors(grid, compas_like):
    X, y = compas_like
    bad = X.head(3).copy()
    bad["sex"] = ["Female", "Other", "Male"]
    with pytest.raises(ValueError, match=r"feature 'sex'.*'Other'"):
        grid.cell_index(bad, y[:3])
    with pytest.raises(ValueError, match=r"label.*7"):
        grid.cell_index(X.head(2), [0, 7])
    with pytest.raises(ValueError, match=r"'sex' \(levels given in categories\).*'Male'"):
        GridSpace.from_data(X, y, FEATURES, categories={"sex": ["Female"]})
    with pytest.raises(ValueError, match="3 rows but y has 2"):
        grid.cell_index(X.head(3), y[:2])


def test_grid_categories_override_and_classes(compas_like):
    X, y = compas_like
    space = GridSpace.from_data(
        X, y, ["sex", "charge"], categories={"charge": [1, 0, 2]}, classes=[1, 0]
    )
    assert list(space.levels[1]) == [1, 0, 2]
    assert space.n_cells == 2 * 3 * 2
    index = space.cell_index(X, y)
    assert list(space.cell_features[index][:, 1]) == list(X["charge"])
    assert list(space.cell_labels[index]) == list(y)


def test_grid_too_large_message(compas_like):
    X, y = compas_like
    with pytest.raises(ValueError) as info:
        GridSpace.from_data(X, y, FEATURES, max_cells=100)
    message = str(info.value)
    assert "K = 144" in message
    assert "'age_cat': 3" in message and "'priors': 3" in message
    assert "space='reference'" in message and "bin" in message.lower()


def test_grid_input_errors(compas_like):
    X, y = compas_like
    with pytest.raises(ValueError, match="empty"):
        GridSpace.from_data(X.head(0), y[:0], FEATURES)
    with pytest.raises(ValueError, match="rows but y"):
        GridSpace.from_data(X, y[:5], FEATURES)
    with pytest.raises(ValueError, match="no column"):
        GridSpace.from_data(X, y, ["sex", "nope"])
    missing = X.head(5).copy()
    missing["charge"] = [0, 1, None, 0, 1]
    with pytest.raises(ValueError, match="'charge' has missing"):
        GridSpace.from_data(missing, y[:5], FEATURES)
    with pytest.raises(ValueError, match="y contains missing"):
        GridSpace.from_data(X.head(2), [0.0, np.nan], FEATURES)
    with pytest.raises(ValueError, match="infinite"):
        GridSpace.from_data(np.array([[0.0], [np.inf]]), [0, 1], [0])


def test_grid_query_frame_feeds_a_pipeline(grid, compas_like):
    X, y = compas_like
    template = X[["charge", "priors", "sex", "race", "age_cat"]]  # another column order
    frame = grid.query_frame(template)
    assert list(frame.columns) == list(template.columns)
    assert frame.dtypes.to_dict() == template.dtypes.to_dict()
    assert len(frame) == grid.n_feature_cells
    model = Pipeline(
        [
            ("encode", ColumnTransformer(
                [("onehot", OneHotEncoder(handle_unknown="ignore"),
                  ["sex", "race", "age_cat", "priors"])],
                remainder="passthrough",
            )),
            ("lr", LogisticRegression()),
        ]
    ).fit(template, y)
    predictions = model.predict(frame)[grid.feature_cell_index]
    assert predictions.shape == (grid.n_cells,)
    # the frame's rows are the feature cells, in order
    for j, name in enumerate(FEATURES):
        assert list(frame[name]) == list(grid.feature_cells[:, j])
    # row-by-row queries agree with the batch query
    rows = grid.cell_index(X, y)
    np.testing.assert_array_equal(predictions[rows], model.predict(X[template.columns]))
    # default template: the data the space was built from
    default = grid.query_frame()
    assert list(default.columns) == FEATURES
    assert default.dtypes.to_dict() == X[FEATURES].dtypes.to_dict()


def test_grid_query_frame_rejects_other_columns(grid, compas_like):
    X, _ = compas_like
    with pytest.raises(ValueError, match=r"not in the space: \['extra'\].*EmpiricalSpace"):
        grid.query_frame(X.assign(extra=1.0))
    with pytest.raises(ValueError, match=r"missing from the template: \['charge'\]"):
        grid.query_frame(X.drop(columns="charge"))
    narrow = X.copy()
    narrow["priors"] = pd.Categorical(narrow["priors"].astype(str), categories=["0", "1-3"])
    with pytest.raises(ValueError, match="priors"):
        grid.query_frame(narrow)


def test_grid_encoding_matches_onehot_encoder(grid, compas_like):
    X, _ = compas_like
    encoder = OneHotEncoder(categories=[list(lv) for lv in grid.levels], sparse_output=False)
    encoder.fit(pd.DataFrame(grid.feature_cells, columns=FEATURES))
    expected = encoder.transform(pd.DataFrame(grid.cell_features, columns=FEATURES))
    np.testing.assert_array_equal(grid.encoded_features(), expected)
    np.testing.assert_array_equal(grid.encode(X), encoder.transform(X[FEATURES].astype(object)))
    assert list(grid.encoded_feature_names) == list(encoder.get_feature_names_out())
    assert grid.encoded_columns(["sex", "age_cat"]) == [[0, 1], [4, 5, 6]]
    with pytest.raises(ValueError, match="not a feature"):
        grid.encoded_columns(["nope"])


def test_grid_with_sensitive_subspace_metric(grid, compas_like):
    X, _ = compas_like
    groups = grid.encoded_columns(["sex", "race"])
    metric = SensitiveSubspaceMetric(groups).fit(grid.encode(X))
    cost = metric.cost_matrix(grid.encoded_features())
    cells = grid.cell_features
    same_but_protected = np.all(cells[:, None, 2:] == cells[None, :, 2:], axis=2)
    assert np.all(cost[same_but_protected] == 0.0)
    assert np.all(cost[~same_but_protected] > 1e-6)


def test_grid_numpy_array_mode():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, 50), rng.integers(5, 7, 50)])
    y = rng.choice(["no", "yes"], 50)
    space = GridSpace.from_data(X, y, [0, 1])
    assert space.n_cells == 3 * 2 * 2 and space.feature_names == (0, 1)
    index = space.cell_index(X, y)
    np.testing.assert_array_equal(space.cell_features[index], X)
    np.testing.assert_array_equal(space.cell_labels[index], y)
    frame = space.query_frame(X)
    assert frame.dtype == X.dtype and frame.shape == (6, 2)
    assert {tuple(r) for r in frame.tolist()} == set(itertools.product([0, 1, 2], [5, 6]))
    with pytest.raises(ValueError, match="feature 1"):
        space.cell_index(np.array([[0, 9]]), ["no"])
    sub = GridSpace.from_data(X, y, [1])
    with pytest.raises(ValueError, match="not all the columns"):
        sub.query_frame()
    with pytest.raises(ValueError, match="column indices"):
        GridSpace.from_data(X, y, ["a"])


# --------------------------------------------------------------------------- EmpiricalSpace
def test_empirical_space_counterfactuals_and_round_trip():
    rng = np.random.default_rng(2)
    n = 30
    X = pd.DataFrame(
        {
            "sex": rng.integers(0, 2, n),
            "race": rng.integers(0, 3, n),
            "income": np.round(rng.normal(size=n), 1),
        }
    )
    X = pd.concat([X, X.head(5)], ignore_index=True)  # exact duplicates
    y = rng.integers(0, 2, len(X))
    space = EmpiricalSpace.from_data(X, y, protected=["sex", "race"])
    cells = {tuple(r) for r in space.feature_cells.tolist()}
    # reference: every distinct row with (sex, race) set to every combination of levels
    expected = set()
    for row in X.drop_duplicates().itertuples(index=False):
        for s, r in itertools.product([0, 1], [0, 1, 2]):
            expected.add((float(s), float(r), float(row.income)))
    assert cells == expected
    assert space.n_feature_cells == len(expected)  # deduplicated
    assert space.n_cells == 2 * len(expected)
    observed = {tuple(r) for r in X.to_numpy(float).tolist()}
    np.testing.assert_array_equal(
        space.observed, [tuple(r) in observed for r in space.feature_cells.tolist()]
    )
    index = space.cell_index(X, y)
    np.testing.assert_array_equal(space.cell_features[index], X.to_numpy(float))
    np.testing.assert_array_equal(space.cell_labels[index], y)
    assert space.counts(X, y).sum() == len(X)
    np.testing.assert_array_equal(space.encoded_features(), space.cell_features.astype(float))
    assert space.encoded_columns(["race"]) == [[1]]
    np.testing.assert_array_equal(space.encode(X), X.to_numpy(float))
    frame = space.query_frame(X)
    assert list(frame.columns) == list(X.columns)
    assert frame.dtypes.to_dict() == X.dtypes.to_dict()
    np.testing.assert_array_equal(frame.to_numpy(float), space.feature_cells)


def test_empirical_space_numpy_and_errors():
    X = np.array([[0, 1.5], [1, 2.0], [0, 1.5]])
    space = EmpiricalSpace.from_data(X, [0, 1, 0], protected=0, protected_levels={0: [0, 1, 2]})
    assert space.n_feature_cells == 6
    with pytest.raises(ValueError, match="not cells"):
        space.cell_index(np.array([[0, 9.0]]), [0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        EmpiricalSpace.from_data(np.array([[0, np.nan]]), [0])
    with pytest.raises(ValueError, match="not numeric"):
        EmpiricalSpace.from_data(pd.DataFrame({"a": ["x", "y"]}), [0, 1])
    with pytest.raises(ValueError, match="not levels"):
        EmpiricalSpace.from_data(X, [0, 1, 0], protected=[0], protected_levels={0: [1]})
    with pytest.raises(ValueError, match="max_cells"):
        EmpiricalSpace.from_data(X, [0, 1, 0], protected=[0], max_cells=5)
    with pytest.raises(ValueError, match="not columns"):
        EmpiricalSpace.from_data(X, [0, 1, 0], protected=[5])
    with pytest.raises(ValueError, match="empty"):
        EmpiricalSpace.from_data(np.empty((0, 2)), [])


# --------------------------------------------------------------------------- forbidden moves
def test_forbidden_moves_against_double_loop(grid):
    user = np.zeros((grid.n_cells, grid.n_cells), dtype=bool)
    user[0, 5] = user[3, 3] = True
    D = forbidden_moves(grid, frozen=["age_cat"], forbidden=user)
    cells, labels = grid.cell_features, grid.cell_labels
    age = FEATURES.index("age_cat")
    for i in range(0, grid.n_cells, 7):
        for j in range(grid.n_cells):
            expected = i != j and (
                labels[i] != labels[j] or cells[i, age] != cells[j, age] or user[i, j]
            )
            assert D[i, j] == expected
    assert not D.diagonal().any()


def test_forbidden_moves_defaults(grid):
    D = forbidden_moves(grid)
    np.testing.assert_array_equal(D, grid.cell_labels[:, None] != grid.cell_labels[None, :])
    assert not forbidden_moves(grid, allow_label_change=True).any()
    with pytest.raises(ValueError, match="not features"):
        forbidden_moves(grid, frozen=["nope"])
    with pytest.raises(ValueError, match="shape"):
        forbidden_moves(grid, forbidden=np.zeros((3, 3), dtype=bool))


def test_query_frame_refuses_lossy_casts():
    X = np.array([[0, 1.5], [1, 3.0]])
    space = EmpiricalSpace.from_data(X, [0, 1], protected=[0])
    with pytest.raises(ValueError, match=r"feature 1 .*1\.5"):
        space.query_frame(np.array([[0, 1], [1, 2]]))
    frame = pd.DataFrame({"a": [0, 1], "b": [1, 2]})
    with pytest.raises(ValueError, match=r"feature 'b' .*1\.5"):
        EmpiricalSpace.from_data(frame.assign(b=[1.5, 2]), [0, 1]).query_frame(frame)


# --------------------------------------------------------------------------- scale
def test_empirical_space_at_scale_against_a_dictionary_reference():
    """Vectorised row matching and product cells equal a per-row dictionary reference, with
    duplicates, negative zeros, unseen protected levels and rows of other data."""
    rng = np.random.default_rng(3)
    n = 20_000
    X = np.column_stack([
        rng.integers(0, 2, n),                 # protected, binary
        rng.integers(0, 3, n),                 # protected, three levels (one unseen below)
        np.round(rng.normal(size=n), 2),       # continuous: many distinct values
        rng.integers(-2, 3, n) * 0.0 + rng.integers(0, 4, n),
    ]).astype(float)
    X[::7, 2] = -0.0
    y = rng.integers(0, 2, n)
    space = EmpiricalSpace.from_data(X, y, protected=[0, 1], protected_levels={1: [0, 1, 2, 3]})
    bases = {tuple(row) for row in (X[:, 2:] + 0.0).tolist()}
    expected = sorted(
        (float(a), float(b), *base)
        for base in bases for a, b in itertools.product([0, 1], [0, 1, 2, 3])
    )
    assert space.feature_cells.tolist() == [list(row) for row in expected]
    lookup = {row: i for i, row in enumerate(expected)}
    reference = np.array([lookup[tuple(row)] for row in (X + 0.0).tolist()])
    np.testing.assert_array_equal(space.feature_row_index(X), reference)
    np.testing.assert_array_equal(space.cell_index(X, y), y * space.n_feature_cells + reference)
    observed = np.zeros(space.n_feature_cells, bool)
    observed[reference] = True
    np.testing.assert_array_equal(space.observed, observed)
    with pytest.raises(ValueError, match="not cells of the sample space"):
        space.feature_row_index(X[:3] + [0, 0, 1e-9, 0])


def test_cell_names_are_lazy_and_match_the_cells():
    X = np.array([[0, 1.5], [1, 2.0], [0, 1.5]])
    space = EmpiricalSpace.from_data(X, [0, 1, 0], protected=[0])
    names = space.cell_names
    assert len(names) == space.n_cells == 8
    assert names[0] == "0=0.0, 1=1.5 | y=0" and names[-1] == "0=1.0, 1=2.0 | y=1"
    assert names[1:3] == tuple(names)[1:3]
    assert list(names) == [space.cell_name(k) for k in range(8)]
    assert names == tuple(names)
    with pytest.raises(IndexError):
        names[8]
    assert "n_cells=8" in repr(names)


def test_move_groups_are_the_structure_of_forbidden_moves(grid):
    for options in ({}, {"frozen": ["age_cat"]}, {"allow_label_change": True},
                    {"allow_label_change": True, "frozen": ["sex", "charge"]}):
        groups = move_groups(grid, **options)
        np.testing.assert_array_equal(
            groups[:, None] != groups[None, :], forbidden_moves(grid, **options)
        )
