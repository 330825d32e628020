"""Individual fairness: the FaiTH audit (Xue, Yurochkin & Sun, AISTATS 2020).

The audit value ψ is the worst-case increase of a model's loss when the audit distribution is
moved by optimal transport under a fair metric within a budget ε. This package computes it
exactly (:func:`prepare_transport`; :func:`prepare_metric_transport` without any ``K x K``
matrix for linear-map metrics), bounds it with confidence bounds that stay valid near the
kinks of ε ↦ ψ, or with the paper's bootstraps (:func:`faith_audit`), and wraps both in the
:class:`FaithAuditor` estimator.
"""

from .._resampling import MemoryLimitError
from ._audit import (
    NonGaussianBootstrapWarning,
    SaturatedBudgetWarning,
    SmallSampleWarning,
    faith_audit,
)
from ._auditor import DEFAULT_EPSILON, FaithAuditor
from ._diagnostics import (
    DegenerateMetricWarning,
    MetricDiagnostics,
    metric_diagnostics,
    zero_cost_summary,
)
from ._inference import BOOTSTRAP_METHODS, gaussianity_diagnostic
from ._metric import (
    CallableMetric,
    EuclideanMetric,
    MahalanobisMetric,
    PrecomputedMetric,
    SensitiveSubspaceMetric,
    check_cost_matrix,
)
from ._metric_families import (
    ExploreMetric,
    ProtectedEuclideanMetric,
    SVDSensitiveSubspaceMetric,
)
from ._nearest import prepare_metric_transport
from ._plot import count_change_table, plot_count_changes
from ._result import FaithResult
from ._sample_space import AuditRows, EmpiricalSpace, GridSpace, forbidden_moves, move_groups
from ._scorer import make_faith_scorer
from ._sensitivity import FaithSensitivityResult, faith_sensitivity
from ._solver import TransportProblem, prepare_transport
from ._uniform import LinearPieces

__all__ = [
    "AuditRows",
    "CallableMetric",
    "DegenerateMetricWarning",
    "EmpiricalSpace",
    "EuclideanMetric",
    "ExploreMetric",
    "FaithAuditor",
    "FaithResult",
    "FaithSensitivityResult",
    "GridSpace",
    "LinearPieces",
    "MahalanobisMetric",
    "MetricDiagnostics",
    "MemoryLimitError",
    "NonGaussianBootstrapWarning",
    "PrecomputedMetric",
    "ProtectedEuclideanMetric",
    "SVDSensitiveSubspaceMetric",
    "SaturatedBudgetWarning",
    "SensitiveSubspaceMetric",
    "SmallSampleWarning",
    "TransportProblem",
    "count_change_table",
    "faith_audit",
    "faith_sensitivity",
    "forbidden_moves",
    "gaussianity_diagnostic",
    "make_faith_scorer",
    "metric_diagnostics",
    "move_groups",
    "plot_count_changes",
    "prepare_metric_transport",
    "prepare_transport",
    "zero_cost_summary",
]
