"""Group-fairness audits with simultaneous guarantees (Cherian & Candès 2024).

Functional API: build a group collection (:func:`intersections`, :func:`intervals`,
:func:`boxes`, :func:`masks`, :func:`tree_leaves`, :func:`cross_with_bins`), pick a metric
(:func:`get_metric`) and run :func:`certify_bounds`, :func:`certify_threshold`,
:func:`flag_groups`, :func:`flag_groups_split` or :func:`equalized_odds`; or audit
distribution shifts, tilts of covariates, with :func:`monotone_tilt_bounds`,
:func:`polynomial_tilt_bounds` or :func:`rkhs_tilt_bounds`. Every procedure summarises the
audit trail into an :class:`AuditSummary` (atoms with counts, cells, target) and runs on it;
the same summary built from a partitioned trail (:func:`skfair_audit.scale.summarize_trail`)
gives the same results. Every result is a frozen object sharing the
:class:`GroupAuditResult` protocol (table, verdict, interval, guarantee in words), the group
form of :class:`skfair_audit.results.AuditResult`, which :class:`RKHSBoundsResult` follows
too; :class:`Verdict` and :class:`ResultTable` are those of :mod:`skfair_audit.results`.

Every procedure and tilt class is declared once (:class:`Procedure`, :class:`TiltClass`);
the functions, the :class:`AuditSummary` methods, the partitioned functions of
:mod:`skfair_audit.scale`, :class:`GroupDisparityAuditor` and the command line are built from
the declarations or dispatch through them. :func:`register_procedure` adds one.
"""

# The shared Verdict and ResultTable keep their old names here (documented in results).
from .._utils import Interval, Options
from ..results import ResultTable as ResultTable
from ..results import Verdict as Verdict
from ._bias_audit import BiasAuditResult, bias_audit_table
from ._bootstrap import DegenerateBootstrapWarning
from ._collections import (
    GroupCollection,
    boxes,
    cross_with_bins,
    intersections,
    intervals,
    masks,
    tree_leaves,
)
from ._estimator import GroupDisparityAuditor, audit_score
from ._metrics import Metric, available_metrics, get_metric
from ._monotone import MonotoneTiltResult, monotone_tilt_bounds
from ._polynomial import PolynomialTiltResult, polynomial_tilt_bounds
from ._procedures import (
    certify_bounds,
    certify_threshold,
    equalized_odds,
    flag_groups,
    flag_groups_split,
)
from ._protocol import GroupAuditResult
from ._ratio_summaries import DisparitySummaryResult, disparity_summaries
from ._ratios import (
    RatioBoundsResult,
    RatioFlagResult,
    certify_ratio,
    flag_ratios,
    ratio_bounds,
    summary_flag_ratios,
    summary_ratio_bounds,
)
from ._registry import (
    REQUIRED,
    Parameter,
    Procedure,
    TiltClass,
    alternative_parameter,
    common_parameters,
    get_procedure,
    procedure_of_function,
    register_procedure,
    registered_procedures,
    unregister_procedure,
)
from ._results import (
    EqualizedOddsResult,
    GroupBound,
    GroupBoundsResult,
    GroupCertificationResult,
    GroupFlagResult,
)
from ._rkhs import RKHSBoundsResult, TiltBound, rkhs_tilt_bounds
from ._summary import AuditSummary, TrailSummary, VacuousAuditWarning

__all__ = [
    "AuditSummary",
    "BiasAuditResult",
    "DegenerateBootstrapWarning",
    "DisparitySummaryResult",
    "EqualizedOddsResult",
    "GroupAuditResult",
    "Interval",
    "GroupBound",
    "GroupBoundsResult",
    "GroupCertificationResult",
    "GroupCollection",
    "GroupDisparityAuditor",
    "GroupFlagResult",
    "Metric",
    "Parameter",
    "Procedure",
    "MonotoneTiltResult",
    "Options",
    "PolynomialTiltResult",
    "RKHSBoundsResult",
    "RatioBoundsResult",
    "RatioFlagResult",
    "TiltBound",
    "TiltClass",
    "TrailSummary",
    "VacuousAuditWarning",
    "alternative_parameter",
    "audit_score",
    "available_metrics",
    "bias_audit_table",
    "boxes",
    "certify_bounds",
    "certify_ratio",
    "certify_threshold",
    "common_parameters",
    "cross_with_bins",
    "disparity_summaries",
    "equalized_odds",
    "flag_groups",
    "flag_groups_split",
    "flag_ratios",
    "get_metric",
    "get_procedure",
    "intersections",
    "intervals",
    "masks",
    "monotone_tilt_bounds",
    "polynomial_tilt_bounds",
    "register_procedure",
    "registered_procedures",
    "ratio_bounds",
    "rkhs_tilt_bounds",
    "summary_flag_ratios",
    "summary_ratio_bounds",
    "tree_leaves",
    "unregister_procedure",
]


def __getattr__(name):
    """The public function of a procedure registered after import
    (:func:`register_procedure`)."""
    procedure = procedure_of_function(name)
    if procedure is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return procedure.function
