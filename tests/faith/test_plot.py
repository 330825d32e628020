"""Tests of the heat maps of the adversarial count changes n(Q - f_n)."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest

from skfair_audit.faith import (
    DegenerateMetricWarning,
    count_change_table,
    faith_audit,
    plot_count_changes,
)

matplotlib.use("Agg")

A_LEVELS, B_LEVELS, CLASSES = ["a0", "a1"], ["b0", "b1", "b2"], [0, 1]


def _tiny_grid_audit():
    """A 2 x 3 grid x 2 labels; only A may change (free), and label 0 errs at A = a1.

    Cells are label-major, then A, then B (as in GridSpace). At epsilon = 0 every label-0 row
    with A = a0 moves to the cell with A = a1 and the same B; label-1 rows stay put.
    """
    cells = list(itertools.product(CLASSES, A_LEVELS, B_LEVELS))
    labels = np.array([c[0] for c in cells])
    features = np.array([[c[1], c[2]] for c in cells], dtype=object)
    same_b = features[:, None, 1] == features[None, :, 1]
    cost = np.where(same_b, 0.0, np.inf)
    forbidden = labels[:, None] != labels[None, :]
    loss = np.array([1.0 if (c[0] == 0 and c[1] == "a1") else 0.0 for c in cells])
    counts = 10 * np.array([10, 20, 30, 5, 6, 7, 11, 12, 13, 14, 15, 16])
    with pytest.warns(DegenerateMetricWarning):  # A is free to change, by design
        result = faith_audit(
            counts, loss, cost, epsilon=0.0, forbidden=forbidden, n_resamples=50,
            random_state=0, cell_features=features, feature_names=["A", "B"],
            cell_labels=labels,
        )
    return result, counts


@pytest.fixture(scope="module")
def tiny():
    return _tiny_grid_audit()


def test_count_change_table_by_hand(tiny):
    result, counts = tiny
    table, row_names, column_names = count_change_table(result, ["A"], ["B"], label=0)
    # Label 0: the a0 row loses its counts to the a1 row, column by column.
    moved = counts[0:3]
    np.testing.assert_allclose(table, np.vstack([-moved, moved]), atol=1e-9)
    assert row_names == ["A=a0", "A=a1"]
    assert column_names == ["B=b0", "B=b1", "B=b2"]
    untouched, _, _ = count_change_table(result, ["A"], ["B"], label=1)
    np.testing.assert_allclose(untouched, np.zeros((2, 3)), atol=1e-9)


def test_count_change_table_transposed_and_defaults(tiny):
    result, counts = tiny
    table, rows, columns = count_change_table(result, rows=["B"], label=0)
    np.testing.assert_allclose(table, np.vstack([-counts[0:3], counts[0:3]]).T, atol=1e-9)
    assert rows == ["B=b0", "B=b1", "B=b2"] and columns == ["A=a0", "A=a1"]
    default, rows, columns = count_change_table(result, label=0)  # first half on the rows
    assert rows == ["A=a0", "A=a1"] and columns == ["B=b0", "B=b1", "B=b2"]
    np.testing.assert_array_equal(default, count_change_table(result, ["A"], ["B"], 0)[0])


def test_all_features_on_the_rows(tiny):
    result, counts = tiny
    table, rows, columns = count_change_table(result, rows=["A", "B"], columns=[], label=0)
    assert table.shape == (6, 1) and columns == ["all"]
    assert rows[0] == "A=a0, B=b0"
    np.testing.assert_allclose(
        table[:, 0], np.concatenate([-counts[0:3], counts[0:3]]), atol=1e-9
    )


def test_count_change_table_errors(tiny):
    result, _ = tiny
    with pytest.raises(ValueError, match=r"unknown feature\(s\) \['C'\]"):
        count_change_table(result, ["C"], ["B"], label=0)
    with pytest.warns(DegenerateMetricWarning):
        bare = faith_audit([500, 500], [0.0, 1.0], np.zeros((2, 2)), epsilon=0.0,
                           n_resamples=10, random_state=0)
    with pytest.raises(ValueError, match="needs a grid audit"):
        count_change_table(bare, label=0)


def test_plot_has_one_heat_map_per_label(tiny):
    import matplotlib.pyplot as plt

    result, counts = tiny
    figure = plot_count_changes(result, rows=["A"], columns=["B"])
    try:
        assert isinstance(figure, matplotlib.figure.Figure)
        heat_maps = [axis for axis in figure.axes if axis.images]
        assert len(heat_maps) == 2
        assert [axis.get_title().split(":")[0] for axis in heat_maps] == ["label = 0", "label = 1"]
        image = heat_maps[0].images[0]
        np.testing.assert_allclose(
            image.get_array(), np.vstack([-counts[0:3], counts[0:3]]), atol=1e-9
        )
        # A symmetric colour scale, so that zero is white.
        low, high = image.get_clim()
        assert low == -high
        assert high == pytest.approx(counts[0:3].max())
    finally:
        plt.close(figure)


def test_plot_on_given_axes_and_result_method(tiny):
    import matplotlib.pyplot as plt

    result, _ = tiny
    figure, axes = plt.subplots(1, 2)
    try:
        assert result.plot(ax=axes) is figure
        with pytest.raises(ValueError, match="one per label"):
            plot_count_changes(result, ax=axes[0])
    finally:
        plt.close(figure)


def test_missing_matplotlib_gives_a_helpful_error(tiny, monkeypatch):
    import skfair_audit._utils._optional as optional

    def no_matplotlib(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(optional.importlib, "import_module", no_matplotlib)
    with pytest.raises(ImportError, match=r"matplotlib.pyplot is required to plot.*\[plot\]"):
        plot_count_changes(tiny[0])
