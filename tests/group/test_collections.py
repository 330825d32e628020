import itertools

import numpy as np
import pytest

from skfair_audit.group import (
    GroupCollection,
    boxes,
    cross_with_bins,
    intersections,
    intervals,
    masks,
    tree_leaves,
)


def _brute_masks(collection):
    return np.column_stack([collection.mask(j) for j in range(collection.n_groups)])


def test_intersections_enumerates_all_levels_with_wildcards():
    rng = np.random.default_rng(0)
    race = rng.choice(["A", "B", "C"], 300)
    sex = rng.choice(["F", "M"], 300)
    g = intersections({"race": race, "sex": sex})
    assert len(g) == 3 + 2 + 6
    assert "race=B & sex=F" in g.names
    expected = (race == "B") & (sex == "F")
    np.testing.assert_array_equal(g.mask("race=B & sex=F"), expected)
    assert g.sizes()[g.index("race=B & sex=F")] == expected.sum()
    marginal = intersections({"race": race, "sex": sex}, depth=1)
    assert marginal.names == ("race=A", "race=B", "race=C", "sex=F", "sex=M")
    with_all = intersections({"race": race}, include_all=True)
    assert with_all.names[0] == "all" and with_all.mask("all").all()


def test_intersections_reports_empty_duplicate_and_small_groups():
    data = {"a": ["x", "x", "y", "y", "y"], "b": ["u", "u", "u", "v", "v"]}
    g = intersections(data, min_size=2)
    # a=x & b=v is empty; a=x == a=x & b=u (duplicate); a=y & b=u has one row
    assert g.empty_groups == ("a=x & b=v",)
    assert ("a=x & b=u", "a=x") in g.duplicate_groups
    assert ("a=y & b=v", "b=v") in g.duplicate_groups
    assert g.small_groups == ("a=y & b=u",)
    assert set(g.names) == {"a=x", "a=y", "b=u", "b=v"}
    # no duplicated row sets remain
    cols = _brute_masks(g)
    assert len({c.tobytes() for c in cols.T}) == cols.shape[1]


def test_intersections_from_pandas_with_categories():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({
        "sex": pd.Categorical(["M", "F", "M"], categories=["M", "F", "X"]),
        "age": [30, 20, 30],
    })
    g = intersections(frame, ["sex"])
    assert g.names == ("sex=M", "sex=F")
    assert g.empty_groups == ("sex=X",)
    with pytest.raises(ValueError, match="not columns"):
        intersections(frame, ["race"])


def test_intersections_rejects_missing_values():
    with pytest.raises(ValueError, match="NaN"):
        intersections({"a": np.array([1.0, np.nan])})


def test_intervals_count_names_and_sums():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 5, 4000)
    g = intervals(x, np.round(np.linspace(0, 5, 51), 10))
    assert len(g) == 1275 == 50 * 51 // 2
    assert g.names[0] == "x in [0, 0.1)" and "x in [0, 5]" in g.names
    values = rng.normal(size=g.n_cells)
    brute = np.array([values[np.unique(g.cell_of_row[g.mask(j)])].sum()
                      for j in range(0, 1275, 97)])
    sums = g.group_sums(values)[::97]
    np.testing.assert_allclose(sums, brute)
    row_values = rng.normal(size=x.size)
    cell_sums = np.bincount(g.cell_of_row, row_values, minlength=g.n_cells)
    np.testing.assert_allclose(g.group_sums(cell_sums)[5], row_values[g.mask(5)].sum())


def test_intervals_min_length_and_rows_off_grid():
    x = np.array([-1.0, 0.5, 1.5, 2.5, 3.0, 9.0])
    g = intervals(x, [0, 1, 2, 3], min_length=2)
    assert g.names == ("x in [0, 2)", "x in [0, 3]", "x in [1, 3]")
    np.testing.assert_array_equal(g.mask("x in [1, 3]"), [False, False, True, True, True, False])


def test_boxes_prefix_sums_match_masks_without_dense_arrays():
    rng = np.random.default_rng(2)
    x1, x2 = rng.uniform(0, 1, 500), rng.uniform(0, 1, 500)
    g = boxes(x1, x2, n_bins1=4, n_bins2=3)
    assert len(g) == 10 * 6
    values = rng.normal(size=500)
    cell_sums = np.bincount(g.cell_of_row, values, minlength=g.n_cells)
    brute = np.array([values[g.mask(j)].sum() for j in range(len(g))])
    np.testing.assert_allclose(g.group_sums(cell_sums), brute)
    # memory: a cells x groups membership, never rows x groups
    assert g.cell_membership.shape == (4 * 3 + 1, 60)
    big = boxes(rng.uniform(size=10_000), rng.uniform(size=10_000), n_bins1=15, n_bins2=15)
    assert len(big) == 120 * 120
    assert big.cell_membership.nbytes < 4e6


def test_masks_lookup_duplicates_and_empties():
    m = np.array([[1, 1, 0, 0], [0, 0, 0, 1], [1, 1, 0, 1]], dtype=bool)
    g = masks(m, names=["a", "b", "c", "d"])
    assert g.names == ("a", "d")
    assert g.duplicate_groups == (("b", "a"),)
    assert g.empty_groups == ("c",)
    assert g.index(np.array([False, True, True])) == 1
    assert g.contains(np.array([True, False, True]))
    assert not g.contains(np.array([True, True, True]))
    with pytest.raises(ValueError, match="not the row set"):
        g.index(np.array([True, True, False]))
    # A duplicate has its twin's rows, hence its twin's bound; an empty group has none.
    assert g.index("b") == g.index("a") == 0
    with pytest.raises(KeyError):
        g.index("c")


def test_masks_from_dataframe():
    pd = pytest.importorskip("pandas")
    g = masks(pd.DataFrame({"p": [True, False], "q": [False, True]}))
    assert g.names == ("p", "q")


def test_cross_with_bins():
    g = intersections({"s": ["a", "a", "b", "b"]})
    crossed = cross_with_bins(g, [0.1, 0.9, 0.2, 0.3], bins=2)
    assert crossed.names == ("s=a & score in [0, 0.5)", "s=a & score in [0.5, 1]",
                             "s=b & score in [0, 0.5)")
    assert crossed.empty_groups == ("s=b & score in [0.5, 1]",)
    np.testing.assert_array_equal(crossed.mask(0), [True, False, False, False])


def test_tree_leaves_partition_rows():
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(300, 2))
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0] + X[:, 1] ** 2)
    g = tree_leaves(tree, X, ["u", "v"])
    assert g.kind == "tree" and len(g) == 4
    assert _brute_masks(g).sum(axis=1).tolist() == [1] * 300
    for name in g.names:
        rule = name.replace("u", "X[:, 0]").replace("v", "X[:, 1]").replace("&", "and")
        expected = np.array([eval(rule, {"X": X[i : i + 1]})[0] for i in range(5)])
        np.testing.assert_array_equal(g.mask(name)[:5], expected)


def test_collection_is_frozen():
    g = masks(np.eye(3, dtype=bool))
    assert isinstance(g, GroupCollection)
    with pytest.raises(AttributeError):
        g.kind = "other"
    assert list(itertools.islice(g.names, 2)) == ["group 0", "group 1"]


def test_interval_names_stay_distinct_for_large_or_close_edges():
    x = 1e6 + np.linspace(0, 5, 200)
    g = intervals(x, n_bins=5)
    assert len(set(g.names)) == len(g.names) == 15
    assert g.names[0] == "x in [1000000, 1000001)"


def test_collection_names_must_be_unique():
    with pytest.raises(ValueError, match="unique"):
        masks(np.array([[True, False], [False, True]]), names=["a", "a"])
