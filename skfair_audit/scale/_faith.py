"""FaiTH audits of partitioned audit trails: what the audit needs from its rows is a reduction.

The FaiTH statistic and its bootstrap (:func:`skfair_audit.faith.faith_audit`) see the audit
sample only through a summary that adds over partitions
(:meth:`FaithAuditor.summarize <skfair_audit.faith.FaithAuditor.summarize>`):

* on a grid sample space, the counts :math:`n_k` of its rows in the K cells;
* on a reference set (continuous features), the distinct audit rows with their counts
  (:class:`~skfair_audit.faith.AuditRows`), kept in one canonical order so that the merge
  of any partitioning is the same summary.

An audit trail of any size reduces to its summary, and the audit is then *exactly* the
in-memory one (same cells, same transport problem, same bootstrap streams).
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


def _chunk_summary(frame, auditor, label):
    if label not in frame.columns:
        raise ValueError(f"label column {label!r} is not in the audit trail.")
    if len(frame) == 0:
        return None
    return auditor.summarize(frame.drop(columns=[label]), frame[label].to_numpy())


def _merge_summaries(*summaries):
    present = [s for s in summaries if s is not None]
    return present[0].merge(*present[1:]) if present else None


def partitioned_faith_audit(trail, auditor, *, label, fan_in=8):
    """:meth:`FaithAuditor.audit <skfair_audit.faith.FaithAuditor.audit>` on a partitioned trail.

    Each partition is summarised (:meth:`FaithAuditor.summarize
    <skfair_audit.faith.FaithAuditor.summarize>`: cell counts on a grid, distinct rows with
    their counts on a reference set), the summaries are merged by a tree reduction, and the
    auditor audits the merged summary (:meth:`FaithAuditor.audit_summary
    <skfair_audit.faith.FaithAuditor.audit_summary>`) with its fitted model, metric, reference
    set and bootstrap settings: the result equals ``auditor.audit(X, y)`` on the
    concatenated trail, bit for bit (the summaries are the in-memory audit's, and the
    bootstrap resamples them in the same order).

    On a reference set, the transport problem is built from the merged distinct rows in the
    calling process: its nearest-neighbour searches cost about one query per distinct audit
    row (see the user guide's *Scaling out*).

    Parameters
    ----------
    trail : dask.dataframe.DataFrame, pandas.DataFrame or iterable of pandas.DataFrame
        Audit rows with the auditor's features and the label column.
    auditor : FaithAuditor
        Fitted, with ``space="grid"`` or ``"reference"`` (``"auto"`` picks one of them).
        Its ``verbose`` also shows the partitions summarised.
    label : str
    fan_in : int
        Partitions merged per task of the Dask tree reduction.

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

    Continuous features (a reference set):

    >>> X = pd.DataFrame({"group": rng.integers(0, 2, 3000).astype(float),
    ...                   "income": rng.normal(size=3000)})
    >>> y = (rng.random(3000) < 1 / (1 + np.exp(-X.income - X.group))).astype(int)
    >>> auditor = FaithAuditor(LogisticRegression(), protected=["group"], epsilon=0.05,
    ...                        n_resamples=200, random_state=0).fit(X[:1000], y[:1000])
    >>> trail = X[1000:].assign(y=y[1000:])
    >>> parts = [trail.iloc[:500], trail.iloc[500:]]
    >>> res = partitioned_faith_audit(parts, auditor, label="y")
    >>> bool(res.upper_bound == auditor.audit(X[1000:], y[1000:]).upper_bound)
    True
    """
    kind = getattr(auditor, "space_kind_", None)
    if kind not in ("grid", "reference"):
        raise ValueError(
            "partitioned_faith_audit needs a fitted FaithAuditor whose sample space is a grid "
            "or a reference set (space='grid', 'reference' or 'auto'); the empirical sample "
            "space is built from the audit rows themselves."
        )
    if kind == "grid":
        counts = partitioned_cell_counts(trail, auditor.space_, label=label, fan_in=fan_in,
                                         verbose=auditor.verbose)
        return auditor.audit_counts(counts)
    if is_dask_frame(trail) and label not in trail.columns:
        raise ValueError(f"label column {label!r} is not in the audit trail.")
    summary = reduce_partitions(trail, _chunk_summary, _merge_summaries, (auditor, label),
                                fan_in=fan_in, verbose=auditor.verbose,
                                purpose="summarise a Dask DataFrame")
    if summary is None:
        raise ValueError("the audit trail has no rows.")
    return auditor.audit_summary(summary)
