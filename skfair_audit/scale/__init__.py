"""Audits of audit trails larger than one machine: partitioned data, Dask, Poisson bootstrap.

Group audits (:func:`partitioned_certify_bounds`, :func:`partitioned_flag_groups`) and FaiTH
audits (:func:`partitioned_cell_counts`, :func:`partitioned_faith_audit`) accept a
``dask.dataframe.DataFrame``, a pandas DataFrame or any iterable of pandas chunks (e.g.
Parquet row groups). Every partition contributes small sufficient statistics; the driver adds
them. The group bootstrap is the Poisson bootstrap with weights hashed from a stable row key
(:func:`poisson_weights`), so results do not depend on the partitioning, the scheduling or
task retries. Dask is optional (``pip install 'skfair_audit[dask]'``) and imported only when a
Dask DataFrame is given; model selection and the auditors' ``n_jobs`` scale out unchanged
under ``joblib.parallel_config(backend="dask")``.
"""

from ._faith import partitioned_cell_counts, partitioned_faith_audit
from ._group import (
    PartitionSummary,
    partitioned_certify_bounds,
    partitioned_flag_groups,
    poisson_suprema,
    summarize_partition,
    summarize_trail,
)
from ._poisson import POISSON_THRESHOLDS, mix64, poisson_weights, row_states, splitmix64

__all__ = [
    "POISSON_THRESHOLDS",
    "PartitionSummary",
    "mix64",
    "partitioned_cell_counts",
    "partitioned_certify_bounds",
    "partitioned_faith_audit",
    "partitioned_flag_groups",
    "poisson_suprema",
    "poisson_weights",
    "row_states",
    "splitmix64",
    "summarize_partition",
    "summarize_trail",
]
