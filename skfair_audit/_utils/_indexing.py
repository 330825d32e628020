"""Row selection of the containers the estimators accept (our own: scikit-learn's
``_safe_indexing`` is an underscore name)."""

from __future__ import annotations

import numpy as np


def take_rows(data, rows):
    """The rows ``rows`` (integer positions) of a table, in that order.

    Parameters
    ----------
    data : DataFrame, Series, ndarray, sparse matrix or list
        Pandas objects are indexed by position (``.iloc``), arrays and sparse matrices
        (CSR, CSC, ...) along their first axis, other sequences item by item.
    rows : array-like of int
        Positions of the rows.

    Returns
    -------
    same kind as ``data``
        A list for a list (or any other sequence without ``shape``).
    """
    rows = np.asarray(rows, dtype=np.intp)
    if hasattr(data, "iloc"):
        return data.iloc[rows]
    if hasattr(data, "shape"):
        return data[rows]
    return [data[i] for i in rows]
