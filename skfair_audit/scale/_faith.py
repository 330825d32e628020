"""FaiTH audits of partitioned audit trails: the cell counts are a reduction.

The FaiTH statistic and its bootstrap (:func:`skfair_audit.faith.faith_audit`) only see the
audit sample through the counts :math:`n_k` of its rows in the K cells of a grid sample
space; losses, costs and the transport problem live on the K cells. Counting is a sum over
partitions, so an audit trail of any size reduces to a length-K integer vector, and the
audit is then *exactly* the in-memory one (same counts, same bootstrap streams).
"""

from __future__ import annotations

import numpy as np

from ._reduce import is_dask_frame, reduce_partitions

__all__ = ["partitioned_cell_counts", "partitioned_faith_audit"]


def _space(auditor_or_space):
    from ..faith import GridSpace

    space = getattr(auditor_or_space, "space_", auditor_or_space)
    if not isinstance(space, GridSpace):
        # the reference and empirical spaces hold the audit rows themselves as cells: their
        # audits are not a sum of cell counts over partitions
        raise ValueError(
            "expected a fitted FaithAuditor with space='grid' or a GridSpace, got "
            f"{type(auditor_or_space).__name__}: audits on a reference (or empirical) sample "
            "space keep every audit row as a cell; run them in memory with "
            "FaithAuditor.audit."
        )
    return space


def _chunk_counts(frame, space, label):
    if label not in frame.columns:
        raise ValueError(f"label column {label!r} is not in the audit trail.")
    if len(frame) == 0:
        return np.zeros(space.n_cells, dtype=np.int64)
    y = frame[label].to_numpy()
    return space.counts(frame.drop(columns=[label]), y).astype(np.int64)


def _add(*counts):
    return np.sum(counts, axis=0, dtype=np.int64)


def partitioned_cell_counts(trail, auditor_or_space, *, label, fan_in=8,
                            verbose=0) -> np.ndarray:
    """Rows of a partitioned audit trail in every cell of a grid sample space.

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
        Audit rows with the grid features and the label column.
    auditor_or_space : FaithAuditor (fitted, ``space="grid"``) or GridSpace
    label : str
        Label column.
    fan_in : int
        Partitions added per task of the Dask tree reduction.
    verbose : int
        0: silent; otherwise a progress bar over the partitions counted.

    Returns
    -------
    ndarray of int64 of shape (K,)
        The same as ``space.counts(X, y)`` on the concatenated trail.

    Examples
    --------
    >>> import pandas as pd
    >>> from skfair_audit.faith import GridSpace
    >>> X = pd.DataFrame({"sex": ["F", "M", "M", "F"], "y": [0, 1, 1, 1]})
    >>> space = GridSpace.from_data(X[["sex"]], X.y, ["sex"])
    >>> partitioned_cell_counts([X.iloc[:2], X.iloc[2:]], space, label="y")
    array([1, 0, 1, 2])
    """
    space = _space(auditor_or_space)
    if is_dask_frame(trail) and label not in trail.columns:
        raise ValueError(f"label column {label!r} is not in the audit trail.")
    total = reduce_partitions(trail, _chunk_counts, _add, (space, label), fan_in=fan_in,
                              verbose=verbose, purpose="count the cells of a Dask DataFrame")
    return np.zeros(space.n_cells, dtype=np.int64) if total is None else total


def partitioned_faith_audit(trail, auditor, *, label):
    """:meth:`FaithAuditor.audit <skfair_audit.faith.FaithAuditor.audit>` on a partitioned trail.

    Counts the cells with :func:`partitioned_cell_counts`, then runs
    :func:`~skfair_audit.faith.faith_audit` with the auditor's fitted losses, costs,
    forbidden moves and bootstrap settings: the result equals ``auditor.audit(X, y)`` on
    the concatenated trail (the bootstrap resamples cell counts, whose law only depends on
    the counts).

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
    auditor : FaithAuditor
        Fitted, with ``space="grid"``. Its ``verbose`` also shows the partitions counted.
    label : str

    Returns
    -------
    FaithResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import FaithAuditor
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 2000),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], 2000)})
    >>> risk = (0.2 + 0.25 * (X.group == "b") + 0.2 * (X.priors != "0")
    ...         + 0.2 * (X.priors == ">3"))
    >>> y = (rng.random(2000) < risk).astype(int)
    >>> auditor = FaithAuditor(make_pipeline(OneHotEncoder(), LogisticRegression()),
    ...                        protected=["group"], epsilon=0.0, n_resamples=200,
    ...                        random_state=0).fit(X, y)
    >>> trail = X.assign(y=y)
    >>> res = partitioned_faith_audit([trail.iloc[:700], trail.iloc[700:]], auditor, label="y")
    >>> bool(res.statistic == auditor.audit(X, y).statistic)
    True
    """
    if getattr(auditor, "space_kind_", None) != "grid":
        raise ValueError(
            "partitioned_faith_audit needs a fitted FaithAuditor whose sample space is a grid "
            "(space='grid', or 'auto' on categorical features)."
        )
    counts = partitioned_cell_counts(trail, auditor.space_, label=label,
                                     verbose=auditor.verbose)
    return auditor.audit_counts(counts)
