"""Heat maps of the adversarial distribution (the FaiTH paper's Figure 2)."""

from __future__ import annotations

import itertools

import numpy as np

from .._utils import import_optional


def _split_features(names, rows, columns):
    """Features on the rows and on the columns: by default the first half on the rows."""
    if rows is None and columns is None:
        half = (len(names) + 1) // 2
        return names[:half], names[half:]
    if rows is None:
        return [f for f in names if f not in columns], list(columns)
    if columns is None:
        return list(rows), [f for f in names if f not in rows]
    return list(rows), list(columns)


def count_change_table(result, rows=None, columns=None, label=None, *, short=False):
    """Arrange ``n(Q − f_n)`` of one label into a 2-D table of feature levels.

    Parameters
    ----------
    result : FaithResult
        A grid audit (with ``cell_features``, ``feature_names`` and ``cell_labels``).
    rows, columns : list of str, optional
        Features on the table's rows and columns; by default the first half of the features
        on the rows and the rest on the columns.
    label : object
        Keep the cells of this label.
    short : bool
        Name the rows and columns by their levels only (``"Male, 25 - 45"``) instead of
        ``"sex=Male, age_cat=25 - 45"``.

    Returns
    -------
    table : ndarray of shape (n_row_levels, n_column_levels)
        NaN where the grid has no such cell.
    row_names, column_names : list of str
    """
    if result.cell_features is None or result.feature_names is None:
        raise ValueError("the heat map needs a grid audit (cells with feature values).")
    names = list(result.feature_names)
    rows, columns = _split_features(names, rows, columns)
    unknown = [f for f in [*rows, *columns] if f not in names]
    if unknown:
        raise ValueError(f"unknown feature(s) {unknown}; the grid features are {names}.")
    features = np.asarray(result.cell_features, dtype=object)
    keep = np.asarray(result.cell_labels) == label
    change = result.count_changes

    def levels(cols):
        per_feature = [list(dict.fromkeys(features[:, names.index(c)])) for c in cols]
        return list(itertools.product(*per_feature)) if cols else [()]

    row_levels, column_levels = levels(rows), levels(columns)
    row_pos = {v: i for i, v in enumerate(row_levels)}
    column_pos = {v: j for j, v in enumerate(column_levels)}
    table = np.full((len(row_levels), len(column_levels)), np.nan)
    row_idx = [names.index(c) for c in rows]
    column_idx = [names.index(c) for c in columns]
    for k in np.flatnonzero(keep):
        i = row_pos[tuple(features[k, row_idx])]
        j = column_pos[tuple(features[k, column_idx])]
        table[i, j] = change[k]

    def label_of(values, cols):
        parts = [f"{v}" if short else f"{c}={v}" for c, v in zip(cols, values, strict=True)]
        return ", ".join(parts) or "all"

    return (
        table,
        [label_of(v, rows) for v in row_levels],
        [label_of(v, columns) for v in column_levels],
    )


def plot_count_changes(result, *, rows=None, columns=None, ax=None, cmap="RdBu_r"):
    """Heat maps of the adversarial count changes ``n(Q − f_n)``, one panel per label.

    Red cells gain mass under the worst-case distribution (where the adversary moves
    individuals to raise the model's loss), blue cells lose it. A mass moving from a cell to
    the same cell with a protected attribute changed exposes individuals who would be treated
    worse had they belonged to the other group.

    Parameters
    ----------
    result : FaithResult
    rows, columns : list of str, optional
        Features on the rows and columns of each panel.
    ax : matplotlib Axes or array of Axes, optional
        One axis per label; created if omitted.
    cmap : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = import_optional("matplotlib.pyplot", "plot the adversarial heat map")
    labels = list(dict.fromkeys(np.asarray(result.cell_labels).tolist()))
    rows, columns = _split_features(list(result.feature_names or []), rows, columns)
    tables = [
        count_change_table(result, rows, columns, label, short=True) for label in labels
    ]
    if ax is None:
        n_rows, n_columns = tables[0][0].shape
        # Room for the tick labels, which name combinations of feature levels.
        width, height = max(6.0, 2.5 + 0.35 * n_columns), max(4.0, 2.0 + 0.3 * n_rows)
        fig, axes = plt.subplots(
            1, len(labels), figsize=(width * len(labels), height), squeeze=False,
            constrained_layout=True,
        )
        axes = axes.ravel()
    else:
        axes = np.atleast_1d(ax).ravel()
        if axes.size != len(labels):
            raise ValueError(f"ax must hold {len(labels)} axes (one per label), got {axes.size}.")
        fig = axes[0].figure
    vmax = max(float(np.nanmax(np.abs(t))) for t, _, _ in tables) or 1.0
    for axis, label, (table, row_names, column_names) in zip(axes, labels, tables, strict=True):
        image = axis.imshow(table, cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto")
        axis.set_xticks(range(len(column_names)), column_names, rotation=60, ha="right", fontsize=7)
        axis.set_yticks(range(len(row_names)), row_names, fontsize=7)
        axis.set_title(f"label = {label}: change in counts n(Q - f_n)")
        axis.set_xlabel(", ".join(map(str, columns)), fontsize=8)
        axis.set_ylabel(", ".join(map(str, rows)), fontsize=8)
        fig.colorbar(image, ax=axis, shrink=0.8)
    return fig
