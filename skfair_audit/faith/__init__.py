"""Individual fairness: the FaiTH audit (Xue, Yurochkin & Sun, AISTATS 2020).

The audit value ψ is the worst-case increase of a model's loss when the audit distribution is
moved by optimal transport under a fair metric within a budget ε. This package computes it
exactly (:func:`prepare_transport`; :func:`prepare_metric_transport` without any ``K x K``
matrix for linear-map metrics), bootstraps it with the schemes its non-Gaussian limit
needs (:func:`faith_audit`), and wraps both in the :class:`FaithAuditor` estimator.
"""

from .._resampling import MemoryLimitError
from ._audit import NonGaussianBootstrapWarning, SmallSampleWarning, faith_audit
from ._auditor import FaithAuditor
from ._inference import BOOTSTRAP_METHODS, gaussianity_diagnostic
from ._metric import (
    CallableMetric,
    EuclideanMetric,
    MahalanobisMetric,
    PrecomputedMetric,
    SensitiveSubspaceMetric,
    check_cost_matrix,
)
from ._nearest import prepare_metric_transport
from ._plot import count_change_table, plot_count_changes
from ._result import FaithResult
from ._sample_space import EmpiricalSpace, GridSpace, forbidden_moves, move_groups
from ._scorer import make_faith_scorer
from ._solver import TransportProblem, prepare_transport

__all__ = [
    "BOOTSTRAP_METHODS",
    "CallableMetric",
    "EmpiricalSpace",
    "EuclideanMetric",
    "FaithAuditor",
    "FaithResult",
    "GridSpace",
    "MahalanobisMetric",
    "MemoryLimitError",
    "NonGaussianBootstrapWarning",
    "PrecomputedMetric",
    "SensitiveSubspaceMetric",
    "SmallSampleWarning",
    "TransportProblem",
    "check_cost_matrix",
    "count_change_table",
    "faith_audit",
    "forbidden_moves",
    "gaussianity_diagnostic",
    "make_faith_scorer",
    "move_groups",
    "plot_count_changes",
    "prepare_metric_transport",
    "prepare_transport",
]
