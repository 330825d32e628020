"""Audits of audit trails larger than one machine: partitioned data, Dask, Poisson bootstrap.

Group audits: :func:`summarize_trail` counts the cells and atoms of a ``dask.dataframe``
DataFrame, a pandas DataFrame or any iterable of pandas chunks (e.g. Parquet row groups)
partition by partition and returns the :class:`~skfair_audit.group.AuditSummary` every group
procedure runs on; :func:`partitioned_certify_bounds`, :func:`partitioned_certify_threshold`
and :func:`partitioned_flag_groups` are the group procedures on it, and
:func:`partitioned_ratio_bounds`, :func:`partitioned_certify_ratio` and
:func:`partitioned_flag_ratios` the ratio audits (every procedure registered
with :func:`skfair_audit.group.register_procedure` gets its ``partitioned_<function>``).
For a discrete metric the result is bit for bit the in-memory
audit; for a continuous one the partitions compute a Poisson bootstrap with weights hashed
from a stable row key (:func:`poisson_weights`). FaiTH audits: :func:`partitioned_cell_counts`,
:func:`partitioned_faith_audit`. Dask is optional (``pip install 'skfair_audit[dask]'``) and
imported only when a Dask DataFrame is given; model selection and the auditors' ``n_jobs``
scale out unchanged under ``joblib.parallel_config(backend="dask")``.
"""

from ._faith import partitioned_cell_counts, partitioned_faith_audit
from ._group import (
    partitioned,
    partitioned_certify_bounds,
    partitioned_certify_ratio,
    partitioned_certify_threshold,
    partitioned_flag_groups,
    partitioned_flag_ratios,
    partitioned_ratio_bounds,
    summarize_trail,
)
from ._poisson import poisson_weights

__all__ = [
    "partitioned_cell_counts",
    "partitioned_certify_bounds",
    "partitioned_certify_ratio",
    "partitioned_certify_threshold",
    "partitioned_faith_audit",
    "partitioned_flag_groups",
    "partitioned_flag_ratios",
    "partitioned_ratio_bounds",
    "poisson_weights",
    "summarize_trail",
]


def __getattr__(name):
    """``partitioned_<function>`` of a procedure registered after import
    (:func:`skfair_audit.group.register_procedure`)."""
    if name.startswith("partitioned_"):
        return partitioned(name.removeprefix("partitioned_"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
