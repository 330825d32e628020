"""The audit summary, against a brute-force count of the rows (a plain Python Counter)."""

from collections import Counter

import numpy as np
import pytest

from skfair_audit.group import AuditSummary, certify_bounds, intersections, intervals
from skfair_audit.group._collections import DENSE_KEYS

pd = pytest.importorskip("pandas")


def _trail(n=3000, seed=0, levels=(4, 3, 2)):
    rng = np.random.default_rng(seed)
    data = {name: rng.choice([f"{name}{k}" for k in range(m)], n)
            for name, m in zip(("a", "b", "c"), levels, strict=True)}
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.2, 1 - y, y)
    return pd.DataFrame(data), y, y_pred


def _brute_atoms(frame, y, y_pred, collection):
    """Counter of (cell, L) over the FPR audit sample (y == 0), cells from the row masks."""
    masks = np.column_stack([collection.mask(j) for j in range(collection.n_groups)])
    signature = [tuple(row) for row in masks]
    return Counter((signature[i], float(y_pred[i] == 1)) for i in np.flatnonzero(y == 0))


@pytest.mark.parametrize("kind", ["object", "category", "str"])
def test_atoms_equal_a_brute_force_count(kind):
    frame, y, y_pred = _trail()
    if kind != "object":
        frame = frame.astype(kind)
    summary = AuditSummary.from_rows(y, y_pred, frame, metric="fpr")
    groups = summary.groups
    expected = _brute_atoms(frame, y, y_pred, groups)
    got = Counter()
    membership = groups.cell_membership
    for cell, value, count in zip(summary.stats.atom_cell, summary.stats.atom_value,
                                  summary.stats.atom_count, strict=True):
        got[(tuple(membership[cell]), float(value))] += int(count)
    assert got == expected
    assert summary.n == int((y == 0).sum()) and summary.n_rows == len(y)
    # the rows of every cell, and the atom of every row
    np.testing.assert_array_equal(groups.cell_rows, np.bincount(groups.cell_of_row))
    rows = np.flatnonzero(y == 0)
    np.testing.assert_array_equal(summary.stats.atom_value[summary.row_atom[rows]],
                                  (y_pred[rows] == 1).astype(float))
    assert np.all(summary.row_atom[y == 1] == -1)
    assert groups.cell_of_row.dtype == np.int8 and summary.row_atom.dtype == np.int8


def test_every_container_gives_the_same_summary():
    frame, y, y_pred = _trail(seed=1)
    ref = AuditSummary.from_rows(y, y_pred, frame, metric="fpr")
    for groups in (frame.astype("category"), frame.astype("str"),
                   {c: frame[c].to_numpy() for c in frame},
                   intersections(frame)):
        other = AuditSummary.from_rows(pd.Series(y), pd.Series(y_pred), groups, metric="fpr")
        assert other.groups.names == ref.groups.names
        for name in ("atom_cell", "atom_value", "atom_count", "atom_reference"):
            np.testing.assert_array_equal(getattr(other.stats, name), getattr(ref.stats, name))


@pytest.mark.filterwarnings("ignore:.*single row:UserWarning")
def test_many_levels_take_the_sorting_path_and_agree(monkeypatch):
    frame, y, y_pred = _trail(n=4000, seed=2, levels=(40, 30, 3))
    dense = AuditSummary.from_rows(y, y_pred, frame, metric="error_rate")
    from skfair_audit.group import _collections

    monkeypatch.setattr(_collections, "DENSE_KEYS", 8)  # force the sparse (sorting) count
    sparse = AuditSummary.from_rows(y, y_pred, frame, metric="error_rate")
    assert DENSE_KEYS > 8
    assert sparse.groups.names == dense.groups.names
    np.testing.assert_array_equal(sparse.groups.cell_of_row, dense.groups.cell_of_row)
    np.testing.assert_array_equal(sparse.stats.atom_count, dense.stats.atom_count)
    np.testing.assert_array_equal(sparse.row_atom, dense.row_atom)


def test_reference_mask_and_group_name_give_the_same_target():
    frame, y, y_pred = _trail(seed=3)
    by_name = AuditSummary.from_rows(y, y_pred, frame, metric="ppv", target="a=a1")
    by_mask = AuditSummary.from_rows(y, y_pred, frame, metric="ppv",
                                     target=frame["a"].to_numpy() == "a1")
    assert by_name.target_kind == by_mask.target_kind == "reference"
    assert by_name.theta_hat == pytest.approx(by_mask.theta_hat, rel=1e-15)
    np.testing.assert_array_equal(by_name.stats.atom_count, by_mask.stats.atom_count)
    a = by_name.certify_bounds(n_resamples=100, random_state=0)
    b = by_mask.certify_bounds(n_resamples=100, random_state=0)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


def test_one_summary_serves_every_procedure():
    frame, y, y_pred = _trail(seed=4)
    summary = AuditSummary.from_rows(y, y_pred, frame, metric="fpr")
    bounds = summary.certify_bounds(n_resamples=200, random_state=0)
    assert bounds.bootstrap == "multinomial"
    ref = certify_bounds(y, y_pred, frame, metric="fpr", n_resamples=200, random_state=0)
    np.testing.assert_array_equal(bounds.lower, ref.lower)
    certificates = summary.certify_threshold(epsilon0=0.1, alternative="less",
                                             n_resamples=200, random_state=0)
    flags = summary.flag_groups(epsilon0=0.05)
    for result in (bounds, certificates, flags):
        assert result.names == summary.groups.names
        assert result.table().rows and result.guarantee() and result.verdict().summary
    with pytest.raises(ValueError, match="alternative must be one of"):
        summary.certify_bounds(alternative="greater")


def test_interval_collections_and_depth_options():
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 5, 2000)
    y = rng.integers(0, 2, 2000)
    summary = AuditSummary.from_rows(y, y, intervals(x, np.linspace(0, 5, 11)),
                                     metric="accuracy")
    assert summary.groups.n_cells == 11 and summary.stats.n_cells == 11
    frame, y, y_pred = _trail(seed=6)
    marginal = AuditSummary.from_rows(y, y_pred, frame, metric="fpr", depth=1)
    assert marginal.groups.names == intersections(frame, depth=1).names
