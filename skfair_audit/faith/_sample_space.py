"""Sample spaces for the FaiTH audit: the finite set of cells ``z_k = (x_k, y_k)``.

The audit value is an optimal-transport problem between distributions on a finite sample space
(Xue, Yurochkin and Sun 2020). A sample space fixes the ``K`` cells, maps audit rows to cells
(``cell_index``, ``counts``), gives the distinct feature rows at which the black-box model is
queried (``query_frame``), and a numeric encoding of the cells on which fair metrics compute
costs (``encoded_features``).

Two kinds share one interface:

- :class:`GridSpace`: the product of declared discrete features' levels times the label levels
  (every combination is a cell, observed or not).
- :class:`EmpiricalSpace`: the distinct audit rows (for continuous features) plus their
  counterfactual copies with the protected attributes changed, times the label levels.

Cell order (both kinds): label-major. With ``F = n_feature_cells`` distinct feature rows, cell
``k`` has feature row ``k % F`` (``feature_cell_index``) and label ``classes[k // F]``; so the
first ``F`` cells carry label ``classes[0]``, the next ``F`` label ``classes[1]``, and so on.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, check_memory
from .._utils import import_optional, level_codes, missing_mask

__all__ = [
    "CellNames", "EmpiricalSpace", "GridSpace", "forbidden_moves", "move_groups",
    "reference_moves",
]


# --------------------------------------------------------------------------- input helpers
def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _as_2d_array(X, name="X"):
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}.")
    return X


def _check_rows(X, y):
    """Validate lengths of X and y; return y as a 1-D array."""
    n = len(X)
    if n == 0:
        raise ValueError("X is empty; a sample space needs at least one row.")
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {np.asarray(y).shape}.")
    if y.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {y.shape[0]} entries.")
    if missing_mask(y).any():
        raise ValueError("y contains missing values (NaN/None).")
    return y


def _column(X, feature, input_type):
    """One feature column of X as a 1-D numpy array."""
    if input_type == "dataframe":
        if not _is_dataframe(X):
            raise ValueError(
                "this sample space was built from a DataFrame; pass a DataFrame with columns "
                f"{feature!r} and the other features."
            )
        if feature not in X.columns:
            raise ValueError(f"X has no column {feature!r}.")
        return np.asarray(X[feature])
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
    if not -X.shape[1] <= feature < X.shape[1]:
        raise ValueError(
            f"feature index {feature} is out of range for X with {X.shape[1]} columns."
        )
    return X[:, feature]


def _as_levels(values, what):
    """Levels as a 1-D array (strings kept as Python objects); must be distinct and non-empty."""
    levels = np.asarray(list(values) if not isinstance(values, np.ndarray) else values)
    if levels.dtype.kind in "US":
        levels = levels.astype(object)
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D list of levels, got {values!r}.")
    if missing_mask(levels).any():
        raise ValueError(f"{what} contains a missing value (NaN/None).")
    if len({*levels.tolist()}) != levels.size:
        raise ValueError(f"{what} contains duplicate levels: {levels.tolist()!r}.")
    levels = levels.copy()
    levels.flags.writeable = False
    return levels


def _observed_levels(values, what):
    try:
        return np.unique(values)
    except TypeError as exc:
        raise ValueError(
            f"the values of {what} cannot be sorted (mixed types?); pass its levels explicitly."
        ) from exc


def _readonly(array):
    array.flags.writeable = False
    return array


#: Bytes per cell the audit holds in linear arrays (cell features and indices, losses, counts,
#: groups, points and the transport problem's rows): the ``memory_limit`` check of a space.
CELL_BYTES = 384


def _check_cell_memory(n_cells, memory_limit, kind):
    check_memory(
        n_cells * CELL_BYTES,
        memory_limit,
        f"The {kind} sample space of K = {n_cells:,} cells",
        "Round or bin continuous features, use fewer features or protected levels, or audit "
        "a sample of the rows" if kind == "empirical" else
        "Bin continuous features into a few categories, drop features from the grid, or use "
        "the reference sample space (space='reference', what space='auto' picks on numeric "
        "features)",
    )


def _cell_position(k, n_cells):
    """``k`` as a cell index in ``[0, n_cells)`` (negative counts from the end)."""
    k = int(k)
    if not -n_cells <= k < n_cells:
        raise IndexError(f"cell {k} is out of range for {n_cells} cells.")
    return k % n_cells


def format_cell(feature_names, row, label):
    """Readable name of one cell, e.g. ``"race=Caucasian, sex=Male | y=1"``."""
    features = ", ".join(
        f"{name}={value}" for name, value in zip(feature_names, row.tolist(), strict=True)
    )
    return f"{features} | y={label}"


class CellNames(Sequence):
    """The readable names of a sample space's cells, formatted on access.

    Behaves like a tuple of ``K`` strings (``len``, indexing, slicing, iteration, ``in``) but
    holds only a reference to the space.
    """

    def __init__(self, space):
        self._space = space

    def __len__(self):
        return self._space.n_cells

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self._space.cell_name(k) for k in range(len(self))[index])
        if isinstance(index, numbers.Integral):
            return self._space.cell_name(index)
        raise TypeError(f"cell names are indexed by int or slice, not {type(index).__name__}.")

    def __eq__(self, other):
        if isinstance(other, CellNames | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                         strict=True))
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self))

    def __repr__(self):
        head = ", ".join(repr(self[k]) for k in range(min(len(self), 3)))
        return f"CellNames([{head}{', ...' if len(self) > 3 else ''}], n_cells={len(self)})"


# --------------------------------------------------------------------------- common interface
class _CellSpace:
    """Methods shared by the sample spaces.

    Subclasses provide ``feature_names``, ``feature_cells`` (distinct feature rows), ``classes``,
    ``input_type`` (``"dataframe"`` or ``"array"``), ``feature_dtypes`` and
    ``feature_row_index(X)`` / ``_feature_codes()``.
    """

    _query_hint = ""

    @property
    def n_features(self):
        """Number of features describing a cell."""
        return len(self.feature_names)

    @property
    def n_classes(self):
        """Number of label levels."""
        return len(self.classes)

    @property
    def n_feature_cells(self):
        """Number of distinct feature rows ``F`` (the rows at which the model is queried)."""
        return self.feature_cells.shape[0]

    @property
    def n_cells(self):
        """Number of cells ``K = n_feature_cells * n_classes``."""
        return self.n_feature_cells * self.n_classes

    @property
    def feature_cell_index(self):
        """(K,) int array: the feature row (index into ``feature_cells``) of each cell."""
        return np.tile(np.arange(self.n_feature_cells), self.n_classes)

    @property
    def label_index(self):
        """(K,) int array: the label of each cell as an index into ``classes``."""
        return np.repeat(np.arange(self.n_classes), self.n_feature_cells)

    @property
    def cell_labels(self):
        """(K,) array: the label ``y_k`` of each cell."""
        return self.classes[self.label_index]

    @property
    def cell_features(self):
        """(K, n_features) array: the feature values ``x_k`` of each cell."""
        return self.feature_cells[self.feature_cell_index]

    @property
    def cell_names(self):
        """(K,) sequence of readable cell names, e.g. ``"race=Caucasian, sex=Male | y=1"``.

        A lazy sequence: a name is formatted when it is read, so that spaces with millions of
        cells do not hold millions of strings.
        """
        return CellNames(self)

    def cell_name(self, k):
        """Readable name of cell ``k``."""
        k = _cell_position(k, self.n_cells)
        return format_cell(self.feature_names, self.feature_cells[k % self.n_feature_cells],
                           self.classes[k // self.n_feature_cells])

    def label_codes(self, y):
        """Index of each label of ``y`` in ``classes``; ValueError for an unknown label."""
        y = np.asarray(y).ravel()
        return level_codes(y, self.classes, "the label y")

    def cell_index(self, X, y):
        """Cell of each row.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, ...)
            Rows with (at least) the space's features.
        y : array-like of shape (n_samples,)
            Labels.

        Returns
        -------
        index : ndarray of shape (n_samples,), dtype int
            ``index[i]`` is the cell of row ``i``: ``cell_features[index]`` reproduces the feature
            values and ``cell_labels[index]`` the labels.

        Raises
        ------
        ValueError
            If a row's features or label are not in the space (the message names the feature and
            the unknown values), or on missing values or mismatched lengths.
        """
        y = _check_rows(X, y)
        rows = self.feature_row_index(X)
        return self.label_codes(y) * self.n_feature_cells + rows

    def counts(self, X, y):
        """Number of rows in each cell, an int array of shape (K,) (``f_n = counts / n``)."""
        return np.bincount(self.cell_index(X, y), minlength=self.n_cells)

    def query_frame(self, template=None, *, rows=None):
        """The ``n_feature_cells`` distinct feature rows, formatted for the black-box model.

        Query the model once on this frame and expand with ``feature_cell_index`` to get its
        output at every cell:
        ``model.predict(space.query_frame(X_train))[space.feature_cell_index]``.

        Parameters
        ----------
        template : DataFrame or ndarray, default=None
            Data in the format the model was fitted on (e.g. its training ``X``). A DataFrame
            template must have exactly the space's features as columns (any order); the result
            has the template's column order and dtypes (categorical columns keep their
            categories). An array template must have ``n_features`` columns; the result has its
            dtype. None uses the format of the data the space was built from.
        rows : ndarray of shape (n_rows, n_features), default=None
            Feature rows (floats, in the space's column order) to format instead of the
            space's own: e.g. audit rows and their counterfactual twins, queried in the
            format of the reference rows the space was built from.

        Returns
        -------
        frame : DataFrame or ndarray of shape (n_feature_cells or n_rows, n_features)

        Raises
        ------
        ValueError
            If the template has columns that are not features of the space, lacks some, or
            cannot represent a level of the space.
        """
        if template is None:
            kind = self.input_type
            order = list(self.feature_names)
            dtypes = dict(zip(self.feature_names, self.feature_dtypes, strict=True))
        elif _is_dataframe(template):
            kind = "dataframe"
            order = list(template.columns)
            extra = [c for c in order if c not in self.feature_names]
            absent = [c for c in self.feature_names if c not in order]
            if extra or absent:
                raise ValueError(
                    "the model's input columns must be exactly the sample space's features; "
                    f"columns not in the space: {extra!r}, features missing from the template: "
                    f"{absent!r}. {self._query_hint}"
                )
            dtypes = {c: template[c].dtype for c in order}
        else:
            template = _as_2d_array(template, "template")
            if template.shape[1] != self.n_features:
                raise ValueError(
                    f"template has {template.shape[1]} columns but the sample space has "
                    f"{self.n_features} features. {self._query_hint}"
                )
            kind = "array"
            order = list(self.feature_names)
            dtypes = dict.fromkeys(order, template.dtype)
        position = {name: j for j, name in enumerate(self.feature_names)}
        values = self.feature_cells if rows is None else np.asarray(rows, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != self.n_features:
            raise ValueError(f"rows must have shape (n_rows, {self.n_features}).")
        if kind == "dataframe":
            return self._build_frame(order, position, dtypes, values)
        return self._build_array(order, position, dtypes, values)

    def _build_frame(self, order, position, dtypes, cells):
        pd = import_optional("pandas", "build a DataFrame to query the model")
        columns = {}
        for name in order:
            values = cells[:, position[name]]
            dtype = dtypes[name]
            try:
                if isinstance(dtype, pd.CategoricalDtype):
                    known = set(dtype.categories.tolist())
                    lost = sorted({v for v in values.tolist() if v not in known}, key=str)
                    if lost:
                        raise ValueError(
                            f"levels {lost!r} are not categories of the template's column"
                        )
                    column = pd.Series(pd.Categorical(values, dtype=dtype))
                elif values.dtype.kind in "biuf" and isinstance(dtype, np.dtype) and (
                    dtype.kind in "biuf"
                ):
                    # Numbers to a numpy number type: vectorised (no Python objects).
                    column = pd.Series(values.astype(dtype))
                    _check_lossless(values, column.to_numpy())
                else:
                    column = pd.Series(values, dtype=object).astype(dtype)
                    _check_lossless(values, column.to_numpy())
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"cannot represent feature {name!r} with dtype {dtype}: {exc}."
                ) from exc
            columns[name] = column
        return pd.DataFrame(columns, columns=order)

    def _build_array(self, order, position, dtypes, cells):
        dtype = dtypes[order[0]] if self.input_type == "array" else np.result_type(
            *dtypes.values()
        )
        if self.input_type == "array":
            # Array mode: feature names are the column indices of the model's input.
            targets = [int(name) for name in order]
            if sorted(targets) != list(range(self.n_features)):
                raise ValueError(
                    f"the space's features {order!r} are not all the columns of the model's "
                    f"input. {self._query_hint}"
                )
        else:
            targets = list(range(len(order)))
        out = np.empty((cells.shape[0], self.n_features), dtype=dtype)
        for name, target in zip(order, targets, strict=True):
            try:
                out[:, target] = cells[:, position[name]]
                _check_lossless(cells[:, position[name]], out[:, target])
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"cannot represent feature {name!r} with dtype {dtype}: {exc}."
                ) from exc
        return out

    def encoded_columns(self, names):
        """Column groups of ``encoded_features()`` that hold the given features.

        Parameters
        ----------
        names : sequence of feature names
            E.g. the protected features.

        Returns
        -------
        groups : list of list of int
            One list of column indices per name, the ``protected_columns`` argument of
            :class:`SensitiveSubspaceMetric`.
        """
        if isinstance(names, str | numbers.Integral):
            names = [names]
        spans = self._encoded_spans()
        groups = []
        for name in names:
            if name not in self.feature_names:
                raise ValueError(
                    f"{name!r} is not a feature of the sample space; features are "
                    f"{list(self.feature_names)!r}."
                )
            start, stop = spans[self.feature_names.index(name)]
            groups.append(list(range(start, stop)))
        return groups

    def encoded_features(self):
        """(K, n_encoded) float array: the numeric encoding of each cell's features.

        The label is not part of the encoding. Fair metrics compute costs on these rows.
        """
        return self.encode_feature_cells()[self.feature_cell_index]


def _check_lossless(values, converted):
    """Raise if casting numeric cell values to the model's dtype changed them (e.g. 1.5 -> 1)."""
    try:
        before = np.asarray(values, dtype=np.float64)
        after = np.asarray(converted, dtype=np.float64)
    except (TypeError, ValueError):
        return  # non-numeric levels: the cast itself validates them
    if not np.array_equal(before, after):
        bad = before[before != after][:5].tolist()
        raise ValueError(f"the dtype cannot hold the values {bad!r} exactly")


def _feature_names(X, features, input_type):
    if input_type == "dataframe":
        names = list(X.columns) if features is None else list(features)
        for name in names:
            if name not in X.columns:
                raise ValueError(f"X has no column {name!r}; its columns are {list(X.columns)!r}.")
        return tuple(names)
    n_columns = X.shape[1]
    names = list(range(n_columns)) if features is None else list(features)
    for name in names:
        if not isinstance(name, numbers.Integral) or not 0 <= name < n_columns:
            raise ValueError(
                f"for array input, features must be column indices in [0, {n_columns}); got "
                f"{name!r}."
            )
    return tuple(int(n) for n in names)


def _check_features(names):
    if not names:
        raise ValueError("features is empty; give at least one feature.")
    if len(set(names)) != len(names):
        raise ValueError(f"features lists a feature twice: {list(names)!r}.")


# --------------------------------------------------------------------------- grid space
@dataclass(frozen=True, eq=False, repr=False)
class GridSpace(_CellSpace):
    """Product of discrete features' levels times the label levels.

    Every combination of feature levels is a cell, whether or not the audit data has a row
    there (unobserved cells are valid transport destinations: the model can be queried there).
    Build it with :meth:`from_data`.

    Parameters
    ----------
    feature_names : tuple
        Column names (DataFrame input) or column indices (array input) of the features.
    levels : tuple of ndarray
        Levels of each feature, in order.
    classes : ndarray
        Label levels.
    input_type : {"dataframe", "array"}, default="array"
        Format of the data the space describes.
    feature_dtypes : tuple or None, default=None
        Dtype of each feature column in that data (used by ``query_frame()`` without template);
        None means object.

    Attributes
    ----------
    feature_cells : ndarray of shape (n_feature_cells, n_features)
        The distinct feature rows, all level combinations in C order (last feature fastest).
    n_cells, n_feature_cells, cell_features, cell_labels, feature_cell_index, label_index
        See the module docstring for the (label-major) cell order.
    encoded_feature_names : ndarray of str
        Names ``"{feature}_{level}"`` of the one-hot columns of ``encoded_features()``.

    Notes
    -----
    ``encode``/``encoded_features`` produce the dense one-hot encoding that
    ``sklearn.preprocessing.OneHotEncoder(categories=levels)`` would (one column per level of
    each feature, in level order), computed directly so that unsorted or mixed-type levels work.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfair_audit.faith._sample_space import GridSpace
    >>> X = pd.DataFrame({"sex": ["F", "M", "M"], "age": ["<25", ">45", "<25"]})
    >>> X["age"] = pd.Categorical(X["age"], categories=["<25", "25-45", ">45"])
    >>> space = GridSpace.from_data(X, [0, 1, 1], ["sex", "age"])
    >>> space
    GridSpace(features=['sex', 'age'], levels=[2, 3], classes=[0, 1], n_cells=12)
    >>> space.cell_index(X, [0, 1, 1])
    array([ 0, 11,  9])
    >>> space.counts(X, [0, 1, 1])
    array([1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1])
    >>> space.query_frame(X).shape
    (6, 2)
    >>> space.encoded_columns(["sex"])
    [[0, 1]]
    """

    feature_names: tuple
    levels: tuple
    classes: np.ndarray
    input_type: str = "array"
    feature_dtypes: tuple | None = None
    feature_cells: np.ndarray = field(init=False, repr=False)

    _query_hint = (
        "In grid mode the model must be fitted on exactly the grid features: fit it on those "
        "columns, or use EmpiricalSpace."
    )

    def __post_init__(self):
        names = tuple(self.feature_names)
        _check_features(names)
        if len(self.levels) != len(names):
            raise ValueError(
                f"levels has {len(self.levels)} entries but there are {len(names)} features."
            )
        levels = tuple(
            _as_levels(lv, f"levels of feature {name!r}")
            for name, lv in zip(names, self.levels, strict=True)
        )
        classes = _as_levels(self.classes, "classes")
        if self.input_type not in ("dataframe", "array"):
            raise ValueError(f"input_type must be 'dataframe' or 'array', got {self.input_type!r}.")
        dtypes = self.feature_dtypes
        if dtypes is None:
            dtypes = (np.dtype(object),) * len(names)
        elif len(dtypes) != len(names):
            raise ValueError("feature_dtypes must have one dtype per feature.")
        codes = self._codes_grid(tuple(lv.size for lv in levels))
        if all(lv.dtype.kind in "biuf" for lv in levels):
            cells = np.empty(codes.shape, dtype=np.result_type(*levels))
        else:
            cells = np.empty(codes.shape, dtype=object)
        for j, lv in enumerate(levels):
            cells[:, j] = lv[codes[:, j]]
        object.__setattr__(self, "feature_names", names)
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "feature_dtypes", tuple(dtypes))
        object.__setattr__(self, "feature_cells", _readonly(cells))

    @staticmethod
    def _codes_grid(shape):
        return np.indices(shape).reshape(len(shape), -1).T

    def __repr__(self):
        return (
            f"GridSpace(features={list(self.feature_names)!r}, "
            f"levels={[lv.size for lv in self.levels]!r}, classes={self.classes.tolist()!r}, "
            f"n_cells={self.n_cells})"
        )

    @classmethod
    def from_data(
        cls, X, y, features=None, *, categories=None, classes=None, max_cells=100_000,
        memory_limit=DEFAULT_MEMORY_LIMIT,
    ):
        """Build the grid of the declared discrete features of ``X`` times the labels of ``y``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_columns)
            Audit (or training) data. DataFrame columns may be categorical, object, string, bool
            or integer.
        y : array-like of shape (n_samples,)
            Labels.
        features : sequence, default=None
            Column names (DataFrame) or column indices (array) of the grid features; None uses
            all columns.
        categories : dict, default=None
            ``{feature: levels}`` fixing the levels (and their order) of some features; the data
            must not have other values.
        classes : sequence, default=None
            Label levels; default the sorted distinct values of ``y``.
        max_cells : int or None, default=100_000
            Largest allowed number of cells ``K`` (None: no cap). With a linear-map fair metric
            the audit needs ``O(K)`` memory; other metrics need ``K x K`` matrices.
        memory_limit : int, float, str or None, default="2GiB"
            Refuse (:class:`MemoryLimitError`) a space whose cells would need more memory
            across the audit (about ``CELL_BYTES`` per cell).

        Returns
        -------
        space : GridSpace

        Notes
        -----
        Levels of a feature come from ``categories`` if given, else from the categories of a
        pandas categorical column (in their order, including unobserved ones), else the sorted
        distinct observed values.
        """
        input_type = "dataframe" if _is_dataframe(X) else "array"
        if input_type == "array":
            X = _as_2d_array(X)
        y = _check_rows(X, y)
        names = _feature_names(X, features, input_type)
        _check_features(names)
        categories = {} if categories is None else dict(categories)
        unknown = [c for c in categories if c not in names]
        if unknown:
            raise ValueError(f"categories names {unknown!r}, which are not grid features.")

        levels, dtypes = [], []
        for name in names:
            values = _column(X, name, input_type)
            what = f"feature {name!r}"
            if missing_mask(values).any():
                raise ValueError(f"{what} has missing values (NaN/None); drop or impute them.")
            if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
                raise ValueError(f"{what} has infinite values.")
            dtype = X[name].dtype if input_type == "dataframe" else X.dtype
            dtypes.append(dtype)
            if name in categories:
                levels.append(_as_levels(categories[name], f"categories[{name!r}]"))
                level_codes(values, levels[-1], f"{what} (levels given in categories)")
            elif getattr(dtype, "name", None) == "category":
                levels.append(_as_levels(dtype.categories.to_numpy(), f"categories of {what}"))
            else:
                levels.append(_as_levels(_observed_levels(values, what), f"levels of {what}"))
        classes = _as_levels(_observed_levels(y, "y") if classes is None else classes, "classes")

        sizes = {name: lv.size for name, lv in zip(names, levels, strict=True)}
        n_cells = math.prod(sizes.values()) * classes.size
        _check_cell_memory(n_cells, memory_limit, "grid")
        if max_cells is not None and n_cells > max_cells:
            raise ValueError(
                f"the grid has K = {n_cells} cells ({' x '.join(map(str, sizes.values()))} "
                f"feature levels x {classes.size} labels; levels per feature: {sizes}), more than "
                f"max_cells={max_cells}. A grid crosses every level of every feature: bin "
                "continuous features into a few categories, drop features from the grid, or use "
                "the reference sample space (FaithAuditor(space='reference'), what 'auto' picks "
                "on numeric features), whose destinations are reference rows fixed at fit."
            )
        space = cls(names, tuple(levels), classes, input_type, tuple(dtypes))
        space.cell_index(X, y)  # every row must fall in the grid (matters with `categories`)
        return space

    def _feature_codes(self):
        return self._codes_grid(tuple(lv.size for lv in self.levels))

    def feature_row_index(self, X):
        """Feature row (index into ``feature_cells``) of each row of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the grid features; their values must be levels of the grid.

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        codes = self._row_codes(X)
        return np.ravel_multi_index(tuple(codes.T), tuple(lv.size for lv in self.levels))

    def _row_codes(self, X):
        if self.input_type == "array":
            X = _as_2d_array(X)
        n = len(X)
        if n == 0:
            return np.empty((0, self.n_features), dtype=np.intp)
        codes = np.empty((n, self.n_features), dtype=np.intp)
        for j, (name, lv) in enumerate(zip(self.feature_names, self.levels, strict=True)):
            codes[:, j] = level_codes(_column(X, name, self.input_type), lv, f"feature {name!r}")
        return codes

    def _encoded_spans(self):
        stops = np.cumsum([lv.size for lv in self.levels])
        return list(zip((stops - [lv.size for lv in self.levels]).tolist(), stops.tolist(),
                        strict=True))

    @property
    def encoded_feature_names(self):
        """Names ``"{feature}_{level}"`` of the one-hot columns."""
        return np.array(
            [f"{name}_{level}" for name, lv in zip(self.feature_names, self.levels, strict=True)
             for level in lv],
            dtype=object,
        )

    def _one_hot(self, codes):
        starts = np.array([start for start, _ in self._encoded_spans()], dtype=np.intp)
        out = np.zeros((codes.shape[0], int(sum(lv.size for lv in self.levels))))
        rows = np.repeat(np.arange(codes.shape[0]), self.n_features)
        out[rows, (codes + starts).ravel()] = 1.0
        return out

    def encode(self, X):
        """Dense one-hot encoding of rows of ``X`` (e.g. training data for a learned metric).

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the grid features; their values must be levels of the grid.

        Returns
        -------
        X_encoded : ndarray of shape (n_samples, n_encoded)
            Same columns as ``encoded_features()`` (see ``encoded_feature_names``).
        """
        return self._one_hot(self._row_codes(X))

    def encode_feature_cells(self):
        """One-hot encoding of the ``n_feature_cells`` distinct feature rows."""
        return self._one_hot(self._feature_codes())


# --------------------------------------------------------------------------- empirical space
@dataclass(frozen=True, eq=False, repr=False)
class EmpiricalSpace(_CellSpace):
    """Distinct audit rows plus protected-attribute counterfactuals, times the label levels.

    For data with continuous features a grid is too large; the cells are instead the distinct
    feature rows of the data, each also copied with its protected attributes set to every
    combination of their levels (so flipping the protected attributes is a possible move), and
    crossed with the label levels. Build it with :meth:`from_data`.

    Parameters
    ----------
    feature_names : tuple
        Column names (DataFrame input) or column indices (array input), all numeric.
    feature_cells : ndarray of shape (n_feature_cells, n_features)
        The distinct feature rows, sorted lexicographically.
    classes : ndarray
        Label levels.
    protected : tuple, default=()
        Protected features (names/indices).
    observed : ndarray of bool of shape (n_feature_cells,) or None, default=None
        Whether each feature row occurs in the data (False: a counterfactual copy only).
    input_type : {"dataframe", "array"}, default="array"
    feature_dtypes : tuple or None, default=None
        Dtypes of the feature columns in the data (None means float64).

    Notes
    -----
    ``encoded_features()`` returns the raw numeric features (no scaling); scale inside the metric,
    e.g. with a :class:`MahalanobisMetric`. Rows are matched exactly (floating-point equality).

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._sample_space import EmpiricalSpace
    >>> X = np.array([[0, 1.5], [1, 2.0], [0, 1.5]])      # column 0 is protected
    >>> space = EmpiricalSpace.from_data(X, [0, 1, 0], protected=[0])
    >>> space.feature_cells
    array([[0. , 1.5],
           [0. , 2. ],
           [1. , 1.5],
           [1. , 2. ]])
    >>> space.observed
    array([ True, False, False,  True])
    >>> space.cell_index(X, [0, 1, 0])
    array([0, 7, 0])
    """

    feature_names: tuple
    feature_cells: np.ndarray
    classes: np.ndarray
    protected: tuple = ()
    observed: np.ndarray | None = None
    input_type: str = "array"
    feature_dtypes: tuple | None = None

    _query_hint = (
        "Build the EmpiricalSpace from exactly the model's input columns."
    )

    def __post_init__(self):
        names = tuple(self.feature_names)
        _check_features(names)
        cells = np.array(self.feature_cells, dtype=np.float64)
        if cells.ndim != 2 or cells.shape[1] != len(names) or cells.shape[0] == 0:
            raise ValueError(
                f"feature_cells must have shape (n_feature_cells > 0, {len(names)}), got "
                f"{cells.shape}."
            )
        if not np.all(np.isfinite(cells)):
            raise ValueError("feature_cells contains NaN or infinite values.")
        cells = cells + 0.0  # -0.0 -> 0.0, so that rows match by their bytes
        if not _strictly_increasing(cells) and (
                _unique_rows(cells)[0].shape[0] != cells.shape[0]):
            raise ValueError("feature_cells has duplicate rows.")
        protected = tuple(self.protected)
        bad = [p for p in protected if p not in names]
        if bad:
            raise ValueError(f"protected features {bad!r} are not features {list(names)!r}.")
        observed = (
            np.ones(cells.shape[0], dtype=bool)
            if self.observed is None
            else np.asarray(self.observed, dtype=bool)
        )
        if observed.shape != (cells.shape[0],):
            raise ValueError("observed must have one entry per feature row.")
        if self.input_type not in ("dataframe", "array"):
            raise ValueError(f"input_type must be 'dataframe' or 'array', got {self.input_type!r}.")
        dtypes = self.feature_dtypes
        if dtypes is None:
            dtypes = (np.dtype(np.float64),) * len(names)
        elif len(dtypes) != len(names):
            raise ValueError("feature_dtypes must have one dtype per feature.")
        object.__setattr__(self, "feature_names", names)
        object.__setattr__(self, "feature_cells", _readonly(cells))
        object.__setattr__(self, "classes", _as_levels(self.classes, "classes"))
        object.__setattr__(self, "protected", protected)
        object.__setattr__(self, "observed", _readonly(observed.copy()))
        object.__setattr__(self, "feature_dtypes", tuple(dtypes))

    def __repr__(self):
        return (
            f"EmpiricalSpace(features={list(self.feature_names)!r}, "
            f"protected={list(self.protected)!r}, n_feature_cells={self.n_feature_cells}, "
            f"classes={self.classes.tolist()!r}, n_cells={self.n_cells})"
        )

    @classmethod
    def from_data(
        cls, X, y, *, protected=(), protected_levels=None, classes=None, max_cells=100_000,
        memory_limit=DEFAULT_MEMORY_LIMIT,
    ):
        """Build the space from the distinct rows of numeric data and their counterfactuals.

        Parameters
        ----------
        X : DataFrame of numeric columns or array-like of shape (n_samples, n_features)
            Audit data; every column is a feature.
        y : array-like of shape (n_samples,)
            Labels.
        protected : name, index, or sequence of them, default=()
            Categorical/binary protected features (numeric codes).
        protected_levels : dict, default=None
            ``{protected feature: levels}``; default the observed distinct values.
        classes : sequence, default=None
            Label levels; default the sorted distinct values of ``y``.
        max_cells : int or None, default=100_000
            Largest allowed number of cells ``K`` (None: no cap).
        memory_limit : int, float, str or None, default="2GiB"
            Refuse (:class:`MemoryLimitError`) a space whose cells would need more memory
            across the audit (about ``CELL_BYTES`` per cell).

        Returns
        -------
        space : EmpiricalSpace
        """
        input_type = "dataframe" if _is_dataframe(X) else "array"
        y = _check_rows(X, y)
        names, values, dtypes = _numeric_matrix(X, None, input_type)
        if isinstance(protected, str | numbers.Integral):
            protected = [protected]
        protected = list(protected)
        bad = [p for p in protected if p not in names]
        if bad:
            raise ValueError(f"protected features {bad!r} are not columns {list(names)!r}.")
        if len(set(protected)) != len(protected):
            raise ValueError(f"protected lists a feature twice: {protected!r}.")
        protected_levels = {} if protected_levels is None else dict(protected_levels)
        bad = [p for p in protected_levels if p not in protected]
        if bad:
            raise ValueError(f"protected_levels names {bad!r}, which are not protected.")
        classes = _as_levels(_observed_levels(y, "y") if classes is None else classes, "classes")

        positions = [names.index(p) for p in protected]
        level_sets = []
        for p, j in zip(protected, positions, strict=True):
            if p in protected_levels:
                lv = np.asarray(_as_levels(protected_levels[p], f"protected_levels[{p!r}]"),
                                dtype=np.float64) + 0.0
                level_codes(values[:, j], lv, f"protected feature {p!r}")
            else:
                lv = np.unique(values[:, j])
            level_sets.append(lv)
        # Cells: every distinct row of the other features with every protected combination.
        others = [j for j in range(values.shape[1]) if j not in positions]
        bases = _unique_rows(values[:, others])[0]
        n_combinations = math.prod(lv.size for lv in level_sets)
        n_cells = bases.shape[0] * n_combinations * classes.size
        _check_cell_memory(n_cells, memory_limit, "empirical")
        if max_cells is not None and n_cells > max_cells:
            raise ValueError(
                f"the empirical space has K = {n_cells} cells, more than max_cells={max_cells} "
                f"({bases.shape[0]} distinct rows of the other features x {n_combinations} "
                f"protected-level combinations x {classes.size} labels). Round or bin "
                "continuous features, use fewer features, or raise max_cells."
            )
        cells = np.empty((bases.shape[0] * n_combinations, values.shape[1]))
        cells[:, others] = np.repeat(bases, n_combinations, axis=0)
        if positions:
            grids = np.meshgrid(*level_sets, indexing="ij")
            combos = np.column_stack([g.ravel() for g in grids])
            cells[:, positions] = np.tile(combos, (bases.shape[0], 1))
        cells = cells[_lexicographic_order(cells)]
        observed = np.zeros(cells.shape[0], dtype=bool)
        observed[_match_rows(values, cells)] = True
        return cls(names, cells, classes, tuple(protected), observed, input_type, tuple(dtypes))

    def feature_row_index(self, X):
        """Feature row (index into ``feature_cells``) of each row of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the space's features; each must be one of its ``feature_cells``.

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        _, values, _ = _numeric_matrix(X, self.feature_names, self.input_type)
        return _match_rows(values, self.feature_cells, strict=True)

    def _feature_codes(self):
        return np.column_stack(
            [np.unique(self.feature_cells[:, j], return_inverse=True)[1]
             for j in range(self.n_features)]
        )

    def _encoded_spans(self):
        return [(j, j + 1) for j in range(self.n_features)]

    @property
    def encoded_feature_names(self):
        """Names of the columns of ``encoded_features()`` (the features themselves)."""
        return np.array([str(name) for name in self.feature_names], dtype=object)

    def encode(self, X):
        """The features of ``X`` as a float matrix in the space's column order (no scaling).

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the space's features.

        Returns
        -------
        X_encoded : ndarray of shape (n_samples, n_features)
        """
        return _numeric_matrix(X, self.feature_names, self.input_type)[1]

    def encode_feature_cells(self):
        """The ``n_feature_cells`` distinct feature rows as floats."""
        return np.array(self.feature_cells, dtype=np.float64)


def _numeric_matrix(X, names, input_type):
    """(names, float matrix, dtypes) of the given (default: all) columns of numeric data."""
    if input_type == "dataframe":
        if not _is_dataframe(X):
            raise ValueError("this sample space was built from a DataFrame; pass a DataFrame.")
        pd = import_optional("pandas", "read a DataFrame")
        names = tuple(X.columns) if names is None else tuple(names)
        absent = [c for c in names if c not in X.columns]
        if absent:
            raise ValueError(f"X lacks the feature columns {absent!r}.")
        non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(X[c].dtype)]
        if non_numeric:
            raise ValueError(
                f"EmpiricalSpace needs numeric columns; {non_numeric!r} are not numeric. Encode "
                "them as numbers, or use GridSpace for discrete features."
            )
        dtypes = tuple(X[c].dtype for c in names)
        values = X[list(names)].to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        X = _as_2d_array(X)
        if names is None:
            names = tuple(range(X.shape[1]))
        elif X.shape[1] != len(names):
            raise ValueError(f"X has {X.shape[1]} columns but the space has {len(names)}.")
        try:
            values = X[:, list(names)].astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"EmpiricalSpace needs numeric data: {exc}.") from exc
        dtypes = (X.dtype,) * len(names)
    if values.shape[0] == 0:
        raise ValueError("X is empty; a sample space needs at least one row.")
    if not np.all(np.isfinite(values)):
        bad = sorted({names[j] for j in np.flatnonzero(~np.isfinite(values).all(axis=0))}, key=str)
        raise ValueError(f"features {bad!r} have NaN or infinite values.")
    return names, values + 0.0, dtypes


def _lexicographic_order(values):
    """Order that sorts the rows of a float matrix lexicographically (first column first)."""
    if values.shape[1] == 0:
        return np.arange(values.shape[0])
    return np.lexsort(values.T[::-1])


def _strictly_increasing(values):
    """Whether the rows are sorted lexicographically without repeats (``O(n d)``): then they
    are distinct with no grouping, as the cells :meth:`EmpiricalSpace.from_data` builds."""
    if values.shape[0] < 2 or values.shape[1] == 0:
        return values.shape[0] < 2
    differ = values[1:] != values[:-1]
    first = np.argmax(differ, axis=1)
    pairs = np.arange(first.size)
    return bool(differ[pairs, first].all()
                and (values[1:][pairs, first] > values[:-1][pairs, first]).all())


def _row_hash(values):
    """A 64-bit hash of each row's bytes (FNV-style: xor a column in, multiply by a prime)."""
    bits = values.view(np.uint64)
    out = np.full(values.shape[0], np.uint64(0xCBF29CE484222325))
    prime = np.uint64(0x100000001B3)
    for j in range(values.shape[1]):
        out ^= bits[:, j]
        out *= prime  # wraps modulo 2**64, as a hash should
        out ^= out >> np.uint64(29)
    return out


def _row_codes(values):
    """Integer code of each row of a float matrix: equal rows, equal codes.

    Returns ``(codes, order, new)``: ``order`` puts equal rows next to each other and
    ``new[k]`` says whether ``values[order[k]]`` starts a new distinct row; the codes number
    the distinct rows along ``order``. Rows are grouped by one sort of a 64-bit hash of their
    bytes, far cheaper than a lexicographic sort over every column; if two different rows
    share a hash (checked exactly), the lexicographic sort decides instead.
    """
    values = np.ascontiguousarray(values, dtype=np.float64) + 0.0  # -0.0 and 0.0: one row
    n = values.shape[0]
    new = np.ones(n, dtype=bool)
    if values.shape[1] == 0:
        new[1:] = False
        order = np.arange(n)
    else:
        key = _row_hash(values)
        order = np.argsort(key, kind="stable")
        ordered = values[order]
        same_row = (ordered[1:] == ordered[:-1]).all(axis=1)
        if np.any((key[order][1:] == key[order][:-1]) & ~same_row):
            order = _lexicographic_order(values)
            ordered = values[order]
            same_row = (ordered[1:] == ordered[:-1]).all(axis=1)
        new[1:] = ~same_row
    codes = np.empty(n, dtype=np.intp)
    codes[order] = np.cumsum(new) - 1
    return codes, order, new


def _unique_rows(values):
    """Distinct rows (in the order of :func:`_row_codes`) and the index of each row among
    them."""
    codes, order, new = _row_codes(values)
    return values[order[new]], codes


def _match_rows(rows, table, strict=False):
    """Index of each row of ``rows`` in ``table`` (distinct rows; exact match); -1 or ValueError
    if absent. Vectorised: one grouping of both sets (:func:`_row_codes`)."""
    codes = _row_codes(np.concatenate([table, rows]))[0]
    table_codes, row_codes = codes[:table.shape[0]], codes[table.shape[0]:]
    position = np.full(table.shape[0] + rows.shape[0], -1, dtype=np.intp)
    position[table_codes] = np.arange(table.shape[0])
    found = position[row_codes]
    if strict and (found < 0).any():
        missing = np.unique(rows[found < 0], axis=0)
        raise ValueError(
            f"{missing.shape[0]} distinct rows of X are not cells of the sample space, e.g. "
            f"{missing[0].tolist()!r}; build the space from data that contains them."
        )
    return found


# --------------------------------------------------------------------------- forbidden moves
def move_groups(space, *, allow_label_change=False, frozen=()):
    """Group of every cell such that moves are allowed exactly within a group.

    The structured part of :func:`forbidden_moves`, in ``O(K)`` memory: moving mass from cell
    ``i`` to cell ``j`` is forbidden iff ``groups[i] != groups[j]`` (label changes unless
    ``allow_label_change``, changes of a ``frozen`` feature).

    Parameters
    ----------
    space : GridSpace or EmpiricalSpace
    allow_label_change : bool, default=False
    frozen : sequence of feature names, default=()

    Returns
    -------
    groups : ndarray of int of shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._sample_space import GridSpace, move_groups
    >>> space = GridSpace.from_data(np.array([[0], [1]]), [0, 1], [0])
    >>> move_groups(space)
    array([0, 0, 1, 1])
    """
    if isinstance(frozen, str | numbers.Integral):
        frozen = [frozen]
    frozen = list(frozen)
    bad = [f for f in frozen if f not in space.feature_names]
    if bad:
        raise ValueError(
            f"frozen features {bad!r} are not features of the sample space "
            f"{list(space.feature_names)!r}."
        )
    columns = [] if allow_label_change else [space.label_index]
    if frozen:
        codes = space._feature_codes()
        index = space.feature_cell_index
        columns += [codes[index, space.feature_names.index(name)] for name in frozen]
    if not columns:
        return np.zeros(space.n_cells, dtype=np.intp)
    return _row_codes(np.column_stack(columns).astype(np.float64))[0]


def reference_moves(space, reference, levels):
    """Where each cell of an empirical space may move in the FaiTH audit on a reference set.

    The destinations of an audited individual ``z`` are fixed before the audit sample is seen:
    the *reference* individuals ``D`` (feature rows chosen at fit, each with every combination
    of the protected ``levels``), ``z``'s own counterfactual twins (``z`` with its protected
    attributes set to other ``levels``) and ``z`` itself. So a cell may move to a cell of
    ``D`` (``to_reference``) or to a cell of its own twin group (same non-protected features,
    ``twin``) whose protected attributes take ``levels`` (``at_levels``); labels are handled
    by :func:`move_groups`.

    Parameters
    ----------
    space : EmpiricalSpace
        Cells over the reference rows and the audit rows (and their counterfactual copies).
    reference : ndarray of shape (n_reference, n_features)
        The reference feature rows, numeric, in the space's column order.
    levels : dict
        ``{protected feature: levels}`` fixed at fit.

    Returns
    -------
    to_reference, at_levels : ndarray of bool of shape (K,)
    twin : ndarray of int of shape (K,)
        Twin group of each cell: equal non-protected features.
    """
    names = list(space.feature_names)
    positions = [names.index(p) for p in space.protected]
    others = [j for j in range(len(names)) if j not in positions]
    cells = space.encode_feature_cells()
    at_levels = np.ones(cells.shape[0], dtype=bool)
    for p, j in zip(space.protected, positions, strict=True):
        at_levels &= np.isin(cells[:, j], np.asarray(levels[p], dtype=np.float64))
    bases = _unique_rows(np.asarray(reference, dtype=np.float64)[:, others] + 0.0)[0]
    in_reference = _match_rows(cells[:, others], bases) >= 0
    twin = _row_codes(cells[:, others])[0]
    index = space.feature_cell_index
    return (in_reference & at_levels)[index], at_levels[index], twin[index]


def forbidden_moves(space, *, allow_label_change=False, frozen=(), forbidden=None):
    """Matrix ``D`` of forbidden transport moves between the cells of a sample space.

    Parameters
    ----------
    space : GridSpace or EmpiricalSpace
    allow_label_change : bool, default=False
        If False (the FaiTH default), moving mass between cells with different labels is
        forbidden: the adversary perturbs individuals' features, not their outcomes.
    frozen : sequence of feature names, default=()
        Features that cannot change: moves between cells that differ in any of them are
        forbidden.
    forbidden : array-like of bool of shape (K, K), default=None
        User-forbidden moves, OR-ed in (in the space's cell order).

    Returns
    -------
    D : ndarray of bool of shape (K, K)
        ``D[i, j]`` is True when moving mass from cell ``i`` to cell ``j`` is forbidden; the
        diagonal (staying put) is always False.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._sample_space import GridSpace, forbidden_moves
    >>> space = GridSpace.from_data(np.array([[0], [1]]), [0, 1], [0])
    >>> forbidden_moves(space).astype(int)
    array([[0, 0, 1, 1],
           [0, 0, 1, 1],
           [1, 1, 0, 0],
           [1, 1, 0, 0]])
    """
    K = space.n_cells
    groups = move_groups(space, allow_label_change=allow_label_change, frozen=frozen)
    D = groups[:, None] != groups[None, :]
    if forbidden is not None:
        user = np.asarray(forbidden)
        if user.shape != (K, K):
            raise ValueError(f"forbidden must have shape ({K}, {K}), got {user.shape}.")
        if user.dtype != bool:
            if not np.isin(user, (0, 1)).all():
                raise ValueError("forbidden must be a boolean (or 0/1) matrix.")
            user = user.astype(bool)
        D |= user
    np.fill_diagonal(D, False)
    return D


# --------------------------------------------------------------------------- reference set
def distinct_cells(values, labels, counts=None):
    """The distinct (label, feature row) pairs of data rows and their counts.

    In the cell order of :class:`EmpiricalSpace` (label first, then the feature rows
    lexicographically, first column first), so that an audit on a reference set draws its
    bootstrap rows in the same order whichever construction built its cells, and whichever
    partitions the rows came from.

    Parameters
    ----------
    values : ndarray of shape (n, d)
        Numeric feature rows (``-0.0`` already normalised to ``0.0``).
    labels : ndarray of int of shape (n,)
        Label codes.
    counts : ndarray of int of shape (n,), default=None
        Rows each input row stands for (None: one each).

    Returns
    -------
    cells : ndarray of shape (n_cells, d)
    cell_labels : ndarray of int of shape (n_cells,)
    counts : ndarray of int64 of shape (n_cells,)
    """
    order = np.lexsort((*values.T[::-1], labels))
    ordered, ordered_labels = values[order], labels[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (ordered_labels[1:] != ordered_labels[:-1]) | (
        ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    if counts is None:
        total = np.diff(np.append(starts, order.size))
    else:
        total = np.add.reduceat(np.asarray(counts, dtype=np.int64)[order], starts)
    return ordered[starts], ordered_labels[starts], total.astype(np.int64)


@dataclass(frozen=True)
class AuditRows:
    """What an audit on a reference set needs from its audit sample: the distinct rows.

    Returned by :meth:`FaithAuditor.summarize <skfair_audit.faith.FaithAuditor.summarize>`
    and audited by :meth:`FaithAuditor.audit_summary
    <skfair_audit.faith.FaithAuditor.audit_summary>`. Summaries of the partitions of an
    audit trail merge (:meth:`merge`) into the summary of the whole trail, bit for bit,
    whatever the partitions: the rows are kept in one canonical order.

    Attributes
    ----------
    rows : ndarray of shape (n_distinct, n_features)
        Distinct feature rows (floats, in the auditor's feature order), sorted by label,
        then lexicographically.
    labels : ndarray of int of shape (n_distinct,)
        Label of each row, as an index into the auditor's ``classes_``.
    counts : ndarray of int64 of shape (n_distinct,)
        Audit rows with these features and label.
    """

    rows: np.ndarray
    labels: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_rows(cls, rows, labels):
        """The summary of audit rows.

        Parameters
        ----------
        rows : array-like of shape (n, n_features)
            Feature rows as floats.
        labels : array-like of int of shape (n,)
            Label codes.

        Returns
        -------
        AuditRows
        """
        rows = np.asarray(rows, dtype=np.float64) + 0.0  # -0.0 and 0.0: one row
        return cls(*distinct_cells(rows, np.asarray(labels, dtype=np.intp)))

    @property
    def n(self) -> int:
        """Audit rows summarised."""
        return int(self.counts.sum())

    def merge(self, *others) -> AuditRows:
        """The summary of the rows of ``self`` and ``others`` together.

        Parameters
        ----------
        *others : AuditRows
            Summaries of other rows (e.g. the other partitions of an audit trail).

        Returns
        -------
        AuditRows
            The same whatever the order of the parts.
        """
        parts = (self, *others)
        widths = {part.rows.shape[1] for part in parts}
        if len(widths) != 1:
            raise ValueError(f"cannot merge summaries of {sorted(widths)} features.")
        return AuditRows(*distinct_cells(
            np.concatenate([part.rows for part in parts]),
            np.concatenate([part.labels for part in parts]),
            np.concatenate([part.counts for part in parts]),
        ))


def counterfactual_twins(cells, positions, combinations):
    """Each row with the protected columns ``positions`` set to every combination of
    ``combinations`` other than its own: ``(twins, owner)``, ``owner`` the row of each twin."""
    n_combinations = combinations.shape[0]
    owner = np.repeat(np.arange(cells.shape[0]), n_combinations)
    twins = cells[owner]
    own = twins[:, positions].copy()
    twins[:, positions] = np.tile(combinations, (cells.shape[0], 1))
    other = ~(twins[:, positions] == own).all(axis=1)
    return twins[other], owner[other]


class ReferenceCells:
    """The cells of the FaiTH audit on a reference set, without a product over every row.

    ``K = C R + A + T`` cells in three blocks: the reference cells (the ``R`` feature rows of
    ``reference`` -- reference rows with every protected combination seen in fit -- for each
    of the ``C`` labels, in :class:`EmpiricalSpace` order), then the ``A`` distinct audit
    cells (:func:`distinct_cells`), then the ``T`` counterfactual twins of the audit cells
    (:func:`counterfactual_twins`), each with its owner's label. Only these cells exist: an
    audit cell moves to a reference cell, to one of its own twins, or stays.

    Parameters
    ----------
    reference : EmpiricalSpace
        The reference cells (built at fit).
    audit : ndarray of shape (A, d)
    audit_labels : ndarray of int of shape (A,)
    twins : ndarray of shape (T, d)
    twin_owner : ndarray of int of shape (T,)
    """

    def __init__(self, reference, audit, audit_labels, twins, twin_owner):
        self.reference = reference
        self.feature_names = reference.feature_names
        self.classes = reference.classes
        self.protected = reference.protected
        self.n_reference_cells = reference.n_cells
        self.n_audit_cells = audit.shape[0]
        self.features = np.concatenate([reference.feature_cells, audit, twins])
        n_rows = reference.n_feature_cells
        self.feature_cell_index = np.concatenate([
            reference.feature_cell_index, n_rows + np.arange(audit.shape[0] + twins.shape[0])])
        self.label_index = np.concatenate(
            [reference.label_index, audit_labels, audit_labels[twin_owner]]).astype(np.intp)
        self.twin_owner = twin_owner

    @property
    def n_cells(self):
        return self.label_index.size

    @property
    def audit_cells(self):
        """Indices of the audit cells (a contiguous block)."""
        return np.arange(self.n_audit_cells) + self.n_reference_cells

    @property
    def cell_labels(self):
        return self.classes[self.label_index]

    @property
    def cell_names(self):
        """(K,) lazy sequence of readable cell names."""
        return CellNames(self)

    def cell_name(self, k):
        """Readable name of cell ``k``."""
        k = _cell_position(k, self.n_cells)
        return format_cell(self.feature_names, self.features[self.feature_cell_index[k]],
                           self.classes[self.label_index[k]])

    def _feature_codes(self):
        return np.column_stack([np.unique(self.features[:, j], return_inverse=True)[1]
                                for j in range(self.features.shape[1])])
