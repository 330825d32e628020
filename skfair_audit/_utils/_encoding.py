"""The one categorical encoder of the library: levels, integer codes and the missing-value rule.

Every categorical input — sensitive features of a group audit, grid features and labels of a
FaiTH sample space, labels of a metric, columns of a partitioned audit trail — is turned into
integer codes by :func:`encode_categories` or :func:`level_codes`, under one rule:

* **missing values are refused**: ``None``, ``NaN``, ``NaT`` and ``pandas.NA`` raise a
  ``ValueError`` naming the column and the number of missing entries (never a silent group
  ``"<NA>"``, never a silently dropped row);
* **levels** are the categories of a pandas categorical column, in their order (unused
  categories included), and otherwise the distinct values sorted (by ``repr`` when the values
  cannot be compared), as plain Python objects.

The encoder is hash-based (:func:`pandas.factorize`) for pandas input, reads the codes of a
categorical column without touching its values, and counts small integer ranges with
:func:`numpy.bincount`: one pass over the column, as fast as a ``groupby``. Plain numpy object
or string arrays fall back to :func:`numpy.unique` (a sort) unless pandas is already imported.
"""

from __future__ import annotations

import sys

import numpy as np

#: Integer columns whose range is below this many values are counted with bincount.
_DENSE_RANGE = 1 << 20
#: Rows processed at once by the chunked passes (temporaries stay cache-sized).
CHUNK_ROWS = 1 << 16


def compact_codes(codes, n_levels):
    """``codes`` in the smallest signed integer dtype holding ``-1 .. n_levels - 1``."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_levels <= np.iinfo(dtype).max:
            return codes.astype(dtype, copy=False)
    return codes.astype(np.int64, copy=False)


def sorted_levels(values) -> list:
    """Distinct values sorted; by ``repr`` when they cannot be compared (mixed types)."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


def _is_missing_scalar(value):
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT
    except (TypeError, ValueError):  # pandas.NA refuses to be a bool
        return True


def missing_mask(values) -> np.ndarray:
    """Boolean mask of the missing entries (``None``, ``NaN``, ``NaT``, ``pandas.NA``)."""
    if hasattr(values, "isna") and hasattr(values, "to_numpy"):
        return np.asarray(values.isna(), dtype=bool)
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind in "fc":
        return np.isnan(values)
    if kind in "mM":
        return np.isnat(values)
    if kind == "O":
        pd = sys.modules.get("pandas")
        if pd is not None:
            return np.asarray(pd.isna(values), dtype=bool)
        flat = np.fromiter((_is_missing_scalar(v) for v in values.ravel()), bool,
                           count=values.size)
        return flat.reshape(values.shape)
    return np.zeros(values.shape, dtype=bool)


def _missing_error(what, count):
    return ValueError(
        f"{what} has {count} missing value(s) (NaN/None/NA); drop or impute them before "
        "auditing."
    )


def check_no_missing(values, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` when ``values`` has a missing entry."""
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind in "biu":
        return  # numpy booleans and integers cannot be missing
    count = int(missing_mask(values).sum())
    if count:
        raise _missing_error(what, count)


def _categorical_codes(values):
    """(codes, categories) of a pandas categorical Series / Categorical, else None."""
    array = getattr(values, "array", values)  # a Series' Categorical: its codes are a view
    if hasattr(array, "codes") and hasattr(array, "categories"):
        return np.asarray(array.codes), list(array.categories.tolist())
    return None


def _sort_codes(codes, uniques):
    """Renumber codes of (unsorted) ``uniques`` so that the levels are sorted."""
    levels = sorted_levels(uniques)
    if levels == list(uniques):
        return codes, levels
    position = {level: k for k, level in enumerate(levels)}
    remap = np.array([position[u] for u in uniques] + [-1], dtype=np.int64)
    return remap[codes], levels  # code -1 (missing) maps to the trailing -1


def _integer_codes(values):
    """Codes of an integer array with a small range: counted, then looked up, in chunks
    (so that no temporary is larger than a chunk)."""
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > _DENSE_RANGE:
        return None
    n = values.size
    present = np.zeros(span, dtype=np.int64)
    for start in range(0, n, CHUNK_ROWS):
        chunk = values[start:start + CHUNK_ROWS].astype(np.intp)
        if low:
            chunk -= low
        present += np.bincount(chunk, minlength=span)
    observed = np.flatnonzero(present)
    levels = (observed + low).tolist()
    if low == 0 and observed.size == span and values.dtype.kind == "i":
        return values, levels  # already the codes (e.g. 0/1 labels): no copy
    lookup = compact_codes(np.cumsum(present > 0) - 1, observed.size)
    codes = np.empty(n, dtype=lookup.dtype)
    for start in range(0, n, CHUNK_ROWS):
        chunk = values[start:start + CHUNK_ROWS].astype(np.intp)
        if low:
            chunk -= low
        codes[start:start + CHUNK_ROWS] = lookup[chunk]
    return codes, levels


def _numpy_codes(values, what):
    if values.dtype.kind == "b":
        codes, levels = _integer_codes(values.view(np.uint8))
        return codes, [bool(v) for v in levels]
    if values.dtype.kind in "iu":
        out = _integer_codes(values)
        if out is not None:
            return out
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        if missing.any():
            raise _missing_error(what, int(missing.sum()))
        integral = np.isfinite(values).all() and np.array_equal(values, np.floor(values))
        if integral and np.abs(values).max(initial=0.0) < 2.0**52:
            out = _integer_codes(values.astype(np.int64))
            if out is not None:
                codes, levels = out
                return codes, [float(v) for v in levels]
    pd = sys.modules.get("pandas")
    if pd is not None or values.dtype.kind == "O":
        if pd is not None:
            codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=True)
            if (codes < 0).any():
                raise _missing_error(what, int((codes < 0).sum()))
            return _sort_codes(codes, np.asarray(uniques, dtype=object).tolist())
        check_no_missing(values, what)
        try:
            uniques, codes = np.unique(values, return_inverse=True)
        except TypeError:  # unorderable objects: hash them
            lookup = {}
            codes = np.fromiter((lookup.setdefault(v, len(lookup)) for v in values), np.intp,
                                count=values.size)
            return _sort_codes(codes, list(lookup))
        return codes.ravel(), uniques.tolist()
    uniques, codes = np.unique(values, return_inverse=True)
    return codes.ravel(), uniques.tolist()


def encode_categories(values, what: str = "values"):
    """Integer codes of a categorical column and its levels.

    Parameters
    ----------
    values : 1-D array-like, pandas Series, Categorical or Index
    what : str
        How errors name the column (e.g. ``"sensitive feature 'race'"``).

    Returns
    -------
    codes : ndarray of shape (n,)
        ``levels[codes[i]]`` is row ``i``; the smallest signed integer dtype that fits.
    levels : list
        The categories of a pandas categorical (in order, unused ones included), otherwise
        the distinct values, sorted.

    Raises
    ------
    ValueError
        When a value is missing (``None``, ``NaN``, ``NaT``, ``pandas.NA``).

    Examples
    --------
    >>> codes, levels = encode_categories(["b", "a", "b"])
    >>> codes.tolist(), levels
    ([1, 0, 1], ['a', 'b'])
    """
    categorical = _categorical_codes(values)
    if categorical is not None:
        codes, levels = categorical
        missing = codes < 0
        if missing.any():
            raise _missing_error(what, int(missing.sum()))
        return compact_codes(codes, len(levels)), levels
    if hasattr(values, "to_numpy") and hasattr(values, "dtype"):
        pd = sys.modules.get("pandas")
        numeric = isinstance(values.dtype, np.dtype) and values.dtype.kind in "iub"
        if pd is not None and not numeric:
            # hash the column where it lives (never materialise Python objects per row)
            codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=True)
            if (codes < 0).any():
                raise _missing_error(what, int((codes < 0).sum()))
            uniques = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
            codes, levels = _sort_codes(codes, uniques)
            return compact_codes(codes, len(levels)), levels
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int8), []
    codes, levels = _numpy_codes(arr, what)
    return compact_codes(np.asarray(codes), len(levels)), levels


def level_codes(values, levels, what: str = "values", *,
                source: str = "the sample space") -> np.ndarray:
    """Position of every value in the given ``levels``.

    Parameters
    ----------
    values : 1-D array-like
    levels : sequence
        The allowed levels (e.g. those a model or a sample space was fitted on).
    what : str
        How errors name the column.
    source : str
        What the levels belong to, for the error message.

    Returns
    -------
    ndarray of intp, shape (n,)

    Raises
    ------
    ValueError
        When a value is missing or is not one of ``levels`` (the unknown values are named).

    Examples
    --------
    >>> level_codes(["b", "a"], ["a", "b", "c"]).tolist()
    [1, 0]
    """
    codes, observed = encode_categories(values, what)
    if not observed:
        return codes.astype(np.intp)
    levels = list(levels.tolist() if hasattr(levels, "tolist") else levels)
    lookup = {level: i for i, level in enumerate(levels)}
    remap = np.array([lookup.get(v, -1) for v in observed], dtype=np.intp)
    unknown = [v for v, r in zip(observed, remap.tolist(), strict=True) if r < 0]
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        raise ValueError(
            f"{what} has values that are not levels of {source}: {shown}; "
            f"its levels are {levels!r}."
        )
    return remap[codes]
