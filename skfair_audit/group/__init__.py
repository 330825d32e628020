"""Group-fairness audits with simultaneous guarantees (Cherian & Candès 2024).

Functional API: build a group collection (:func:`intersections`, :func:`intervals`,
:func:`boxes`, :func:`masks`, :func:`tree_leaves`, :func:`cross_with_bins`), pick a metric
(:func:`get_metric`) and run :func:`certify_bounds`, :func:`certify_threshold`,
:func:`flag_groups`, :func:`flag_groups_split`, :func:`equalized_odds` or
:func:`rkhs_tilt_bounds`. Every procedure returns a frozen result object.
"""

from ._bootstrap import (
    DegenerateBootstrapWarning,
    DisparityProcess,
    SufficientStatistics,
    delta_method_se,
    group_scales,
    normal_pvalues,
)
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
from ._intervals import max_subarray
from ._metrics import Metric, available_metrics, get_metric
from ._multiple_testing import benjamini_hochberg
from ._procedures import (
    certify_bounds,
    certify_threshold,
    equalized_odds,
    flag_groups,
    flag_groups_split,
)
from ._results import (
    EqualizedOddsResult,
    GroupBound,
    GroupBoundsResult,
    GroupCertificationResult,
    GroupFlagResult,
    RKHSBoundsResult,
    TiltBound,
)
from ._rkhs import gaussian_kernel, pivoted_cholesky, rkhs_sup_statistics, rkhs_tilt_bounds

__all__ = [
    "DegenerateBootstrapWarning",
    "DisparityProcess",
    "EqualizedOddsResult",
    "GroupBound",
    "GroupBoundsResult",
    "GroupCertificationResult",
    "GroupCollection",
    "GroupDisparityAuditor",
    "GroupFlagResult",
    "Metric",
    "RKHSBoundsResult",
    "SufficientStatistics",
    "TiltBound",
    "audit_score",
    "available_metrics",
    "benjamini_hochberg",
    "boxes",
    "certify_bounds",
    "certify_threshold",
    "cross_with_bins",
    "delta_method_se",
    "equalized_odds",
    "flag_groups",
    "flag_groups_split",
    "gaussian_kernel",
    "get_metric",
    "group_scales",
    "intersections",
    "intervals",
    "masks",
    "max_subarray",
    "normal_pvalues",
    "pivoted_cholesky",
    "rkhs_sup_statistics",
    "rkhs_tilt_bounds",
    "tree_leaves",
]
