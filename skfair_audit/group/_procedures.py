"""Functional API of the group audit: certify bounds, certify thresholds, flag groups.

Every procedure takes an audit trail ``(y, y_pred)``, a :class:`GroupCollection` (or a
DataFrame / mapping of sensitive attributes, turned into all their intersections), a metric
and a target, and returns a frozen result object.

Audit sample
    The rows where the metric's condition holds (e.g. ``y == negative`` for the false
    positive rate). :math:`n`, :math:`P_n(G)` and the bootstrap are all defined on it.
Target
    ``float`` (known constant), ``"overall"`` (the metric on the whole audit sample) or a
    reference group (a member name of ``groups`` or a boolean row mask), whose metric is the
    target. Estimated targets are re-estimated in every bootstrap replicate.
Directions
    ``certify_bounds(alternative="lower")`` gives lower bounds, i.e. evidence for
    :math:`\\epsilon(G) > \\cdot`; ``certify_threshold`` and ``flag_groups`` use
    ``alternative="greater"`` for :math:`\\epsilon(G) > \\epsilon_0` (harm when the metric is
    an error rate) and ``"less"`` for :math:`\\epsilon(G) < \\epsilon_0`, like
    :mod:`scipy.stats`.

References
----------
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
Journal of Machine Learning Research 25(149), 1–49.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._resampling import seed_sequence
from ..utils import check_alpha
from ._bootstrap import (
    DegenerateBootstrapWarning,
    DisparityProcess,
    SufficientStatistics,
    _global_sd,
    compute_scales,
    critical_value,
    delta_method_se,
    normal_pvalues,
    run_bootstrap,
)
from ._collections import GroupCollection, intersections, masks, tree_leaves
from ._metrics import as_array, get_metric
from ._multiple_testing import benjamini_hochberg
from ._results import (
    EqualizedOddsResult,
    GroupBoundsResult,
    GroupCertificationResult,
    GroupFlagResult,
    _AuditContext,
)

__all__ = [
    "certify_bounds",
    "certify_threshold",
    "flag_groups",
    "flag_groups_split",
    "equalized_odds",
]


@dataclass(frozen=True, eq=False)
class AuditSummary:
    """What every procedure needs from an audit trail: groups, atoms, target, estimates.

    Built in memory by :func:`_prepare` (with the rows, for queries of groups outside the
    collection) and over partitions by :mod:`skfair_audit.scale` (with the Poisson replicates).
    """

    metric: object
    groups: GroupCollection
    stats: SufficientStatistics
    target_kind: str
    theta_hat: float
    sizes: np.ndarray
    group_values: np.ndarray
    estimates: np.ndarray
    empty_groups: tuple

    @property
    def n(self) -> int:
        return self.stats.n

    @property
    def active(self) -> np.ndarray:
        return self.sizes > 0


@dataclass(frozen=True, eq=False)
class _Audit(AuditSummary):
    """An in-memory audit trail: also the per-row values and the condition mask."""

    values: np.ndarray = None  # L on all rows (0 off the condition)
    rows: np.ndarray = None  # condition mask


def _as_collection(groups, n_rows):
    if isinstance(groups, GroupCollection):
        collection = groups
    elif hasattr(groups, "columns") or isinstance(groups, Mapping):
        collection = intersections(groups)
    elif np.ndim(groups) == 1:
        # One attribute (a Series, a list or a 1-D array of labels): its groups.
        collection = intersections({getattr(groups, "name", None) or "group": groups})
    else:
        arr = as_array(groups, "groups")
        if arr.ndim == 2 and arr.dtype == bool:
            collection = masks(arr)
        else:
            raise ValueError(
                "groups must be a GroupCollection, a DataFrame / mapping of sensitive "
                "attributes, a 1-D array of group labels or a boolean (n_rows, n_groups) mask "
                "array."
            )
    if collection.n_rows != n_rows:
        raise ValueError(
            f"groups describe {collection.n_rows} rows but y has {n_rows} rows."
        )
    if collection.n_groups == 0:
        raise ValueError("the group collection is empty (every group was empty or dropped).")
    return collection


def _resolve_metric(metric, pos_label):
    if isinstance(metric, str) and pos_label is not None:
        return get_metric(metric, pos_label=pos_label)
    if pos_label is not None:
        raise ValueError("pos_label can only be combined with a metric given by name.")
    return get_metric(metric)


def _prepare(y, y_pred, groups, metric, target, pos_label, *, allow_reference=True):
    metric = _resolve_metric(metric, pos_label)
    values, rows = metric.evaluate(y, y_pred)
    collection = _as_collection(groups, values.size)
    n = int(rows.sum())
    if n == 0:
        raise ValueError(f"no row satisfies the condition of metric {metric.name!r}.")
    reference = None
    if isinstance(target, numbers.Real) and not isinstance(target, bool):
        if not np.isfinite(target):
            raise ValueError(f"a constant target must be finite, got {target!r}.")
        kind, theta_hat = "constant", float(target)
    elif isinstance(target, str) and target == "overall":
        kind, theta_hat = "overall", float(values[rows].mean())
    else:
        if not allow_reference:
            raise ValueError("this procedure supports a constant or 'overall' target only.")
        if isinstance(target, str):
            try:
                reference = collection.mask(target)
            except KeyError:
                raise ValueError(
                    f"target {target!r} is neither 'overall', a number nor a group of the "
                    "collection (pass a boolean row mask for another reference group)."
                ) from None
        else:
            reference = as_array(target, "target")
            if reference.dtype != bool or reference.shape != rows.shape:
                raise ValueError(
                    "target must be a number, 'overall', a group name or a boolean row mask "
                    f"of length {rows.size}."
                )
        in_ref = reference & rows
        if not in_ref.any():
            raise ValueError(
                "the reference group has no row in the audit sample (rows where the "
                f"condition of {metric.name!r} holds): its metric is undefined."
            )
        kind, theta_hat = "reference", float(values[in_ref].mean())
    stats = SufficientStatistics.from_rows(
        collection.cell_of_row[rows], values[rows], collection.n_cells,
        None if reference is None else reference[rows],
    )
    sizes, group_values, empty = group_summary(stats, collection)
    return _Audit(metric, collection, stats, kind, theta_hat, sizes, group_values,
                  group_values - theta_hat, empty, values=values, rows=rows)


def group_summary(stats, collection):
    """Rows, metric value and emptiness of every group, from the atoms.

    Warns about groups with a single row (no within-group variance).
    """
    n_g, s_g = stats.observed_group_sums(collection)
    sizes = n_g.round().astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        group_values = np.where(sizes > 0, s_g / n_g, np.nan)
    empty = tuple(collection.names[j] for j in np.flatnonzero(sizes == 0))
    if np.any(sizes == 1):
        warnings.warn(
            f"{int(np.sum(sizes == 1))} group(s) have a single row in the audit sample; "
            "their within-group standard deviation is 0 and their bounds are driven by "
            "p_star and the global standard deviation.",
            DegenerateBootstrapWarning,
            stacklevel=4,
        )
    return sizes, group_values, empty


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def _check_scale_params(scale, p_star, w0):
    _check_choice(scale, "scale", ("rescaled", "unscaled"))
    p_star = float(p_star)
    if not 0.0 <= p_star <= 1.0:
        raise ValueError(f"p_star must be in [0, 1], got {p_star!r}.")
    w0 = float(w0)
    if not w0 > 0:
        raise ValueError(f"w0 must be positive (np.inf for the global sd), got {w0!r}.")
    return p_star, w0


def _warn_if_degenerate(degenerate, audit):
    if degenerate:
        warnings.warn(
            f"the metric {audit.metric.name!r} is constant on the audit sample: the bootstrap "
            "distribution is degenerate (critical value 0) and the bounds equal the "
            "estimates, without any coverage guarantee.",
            DegenerateBootstrapWarning,
            stacklevel=3,
        )


def certify_bounds(
    y,
    y_pred,
    groups,
    *,
    metric,
    target="overall",
    alternative="lower",
    alpha=0.1,
    scale="rescaled",
    p_star=0.01,
    w0=np.inf,
    pos_label=None,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
) -> GroupBoundsResult:
    """Confidence bounds on every group's disparity, valid simultaneously.

    With the bootstrap process :math:`T_b(G)` of :mod:`~skfair_audit.group._bootstrap` and
    scales :math:`s_G`, the critical value is
    :math:`c = Q_{1-\\alpha}\\big(\\sup_G T_b(G)/s_G\\big)` and

    .. math::

        \\epsilon(G) \\ge \\hat\\epsilon(G) - c\\, \\frac{s_G}{P_n(G)^2}
        \\quad\\text{for all } G \\text{ simultaneously, w.p.} \\to 1 - \\alpha.

    Upper bounds use :math:`\\sup_G -T_b(G)/s_G`; two-sided intervals
    :math:`\\sup_G |T_b(G)|/s_G`. The rescaled :math:`s_G = \\max(P_n(G), p^*)^{3/2}
    \\sigma_G` gives CLT-width bounds :math:`c \\sigma_G / \\sqrt{P_n(G)}` for groups above
    :math:`p^*`; ``scale="unscaled"`` (:math:`s_G = 1`) gives widths :math:`c/P_n(G)^2`.

    Parameters
    ----------
    y, y_pred : array-like of shape (n_rows,) (``y_pred`` may be 2-D for coverage)
        Outcomes and model outputs of the audit trail (numpy or pandas).
    groups : GroupCollection, DataFrame or mapping of attributes
        The collection (a DataFrame means all intersections of its columns).
    metric : str, Metric or callable
        See :func:`get_metric`.
    target : float, "overall", str or bool array
        Known constant, the overall metric, or a reference group (name or row mask).
    alternative : {"lower", "upper", "two-sided"}
        Which bounds to report.
    alpha : float
        Simultaneous error level in (0, 1).
    scale : {"rescaled", "unscaled"}
    p_star : float
        Floor of :math:`P_n(G)` in the rescaling.
    w0 : float
        Variance shrinkage: ``inf`` (default, recommended by the paper) uses the global sd.
    pos_label : optional
        Positive label, when ``metric`` is a name.
    n_resamples, batch_size, random_state, n_jobs
        Bootstrap controls (:func:`skfair_audit._resampling.resample`); results do not depend
        on ``n_jobs``.

    Returns
    -------
    GroupBoundsResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> sex = rng.choice(["F", "M"], 400)
    >>> y = rng.integers(0, 2, 400)
    >>> y_pred = np.where(rng.random(400) < 0.8, y, 1 - y)
    >>> res = certify_bounds(y, y_pred, {"sex": sex}, metric="error_rate",
    ...                      alternative="two-sided", n_resamples=200, random_state=0)
    >>> res.names
    ('sex=F', 'sex=M')
    >>> ci = res.confidence_interval("sex=F")
    >>> bool(ci.low < res.estimates[0] < ci.high)
    True
    """
    alpha = check_alpha(alpha)
    _check_choice(alternative, "alternative", ("lower", "upper", "two-sided"))
    p_star, w0 = _check_scale_params(scale, p_star, w0)
    audit = _prepare(y, y_pred, groups, metric, target, pos_label)
    scales, degenerate = compute_scales(audit.stats, audit.groups, kind=scale, p_star=p_star,
                                        w0=w0, power=1.5)
    process = DisparityProcess(audit.stats, audit.groups, audit.target_kind, audit.theta_hat,
                               False, (0.0, 0.0), scales, audit.active)
    sups = run_bootstrap(process, n_resamples, batch_size=batch_size,
                         random_state=random_state, n_jobs=n_jobs)
    _warn_if_degenerate(degenerate, audit)
    sd = _global_sd(audit.stats.atom_value, audit.stats.atom_count.astype(float))
    context = _AuditContext(audit.values, audit.rows, audit.theta_hat, sd if sd > 0 else 1.0,
                            scale, p_star, w0, 1.5)
    return bounds_result(
        audit, scales, sups, alpha=alpha, alternative=alternative, scale=scale,
        method=f"multinomial bootstrap of the {scale} disparity process "
               f"({n_resamples} resamples, target {audit.target_kind})",
        context=context,
    )


def disparity_range(audit):
    """The values ε(G) = E[L | G] − θ can take, from the metric's domain [a, b].

    Intersecting a confidence set with the parameter space keeps its coverage: the bounds of a
    tiny group (valid, but ``c s_G / P_n(G)²`` wide) are clipped to this range, e.g. [−1, 1]
    for a rate, or [a − θ, b − θ] for a known target θ.
    """
    low, high = audit.metric.bounds
    if audit.target_kind == "constant":
        return low - audit.theta_hat, high - audit.theta_hat
    return low - high, high - low


def bounds_result(audit, scales, sups, *, alpha, alternative, scale, method, context=None):
    r"""Simultaneous bounds from the bootstrap suprema of the scaled disparity process.

    Shared by the in-memory (multinomial) and partitioned (Poisson) bootstraps: ``sups`` has
    one row per replicate with :math:`\sup_G T_b(G)/s_G` and :math:`\sup_G -T_b(G)/s_G`;
    the bound of group G is :math:`\hat\epsilon(G) \mp c\, s_G / P_n(G)^2`, clipped to
    :func:`disparity_range`.
    """
    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    p = audit.sizes / audit.n
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(audit.active, c * scales / p**2, np.inf)
    est = np.where(audit.active, audit.estimates, np.nan)
    low_range, high_range = disparity_range(audit)
    lower = np.where(audit.active, np.maximum(est - width, low_range), -np.inf)
    upper = np.where(audit.active, np.minimum(est + width, high_range), np.inf)
    if alternative == "lower":
        upper = np.full_like(upper, np.inf)
    elif alternative == "upper":
        lower = np.full_like(lower, -np.inf)
    return GroupBoundsResult(
        names=audit.groups.names, sizes=audit.sizes, estimates=est,
        group_values=audit.group_values, lower=lower, upper=upper, scales=scales,
        target=audit.theta_hat, critical_value=c, alpha=alpha, alternative=alternative,
        scale=scale, metric=audit.metric.name, n=audit.n, bootstrap_distribution=dist,
        method=method, groups=audit.groups, empty_groups=audit.empty_groups,
        _context=context,
    )


def certify_threshold(
    y,
    y_pred,
    groups,
    *,
    metric,
    epsilon0,
    target="overall",
    alternative="greater",
    alpha=0.1,
    scale="rescaled",
    p_star=0.01,
    w0=np.inf,
    method="auto",
    pos_label=None,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
) -> GroupCertificationResult:
    """Boolean certificates :math:`\\epsilon(G) > \\epsilon_0` (``"greater"``),
    :math:`< \\epsilon_0` (``"less"``) or :math:`|\\epsilon(G)| < \\epsilon_0` (``"within"``).

    The process is additive in the group,
    :math:`T_b(G) = P_n^b[(L - \\hat\\theta_b - \\epsilon_0)1_G] - P_n[(L - \\hat\\theta -
    \\epsilon_0)1_G]`, with scales :math:`s_G = \\max(P_n(G), p^*)^{1/2}\\sigma_G` (or 1).
    For ``"greater"``, :math:`c = Q_{1-\\alpha}(\\sup_G T_b(G)/s_G)` and :math:`G` is certified
    when

    .. math::

        \\hat\\epsilon(G) - c\\, s_G / P_n(G) > \\epsilon_0 .

    ``"less"`` mirrors it; ``"within"`` certifies both one-sided nulls
    :math:`\\epsilon(G) \\ge \\epsilon_0` and :math:`\\epsilon(G) \\le -\\epsilon_0` with one
    critical value for the joint supremum. The family-wise error is at most :math:`\\alpha`
    asymptotically, exactly :math:`\\alpha` only when every disparity equals the threshold.

    For an :func:`intervals` collection with ``scale="unscaled"``, the supremum over all grid
    intervals is a maximum-subarray problem over the bins (``method="kadane"``): no interval
    is enumerated in the bootstrap. ``method="auto"`` uses it whenever it applies (it takes
    the supremum over *all* grid intervals of the allowed length, a superset when groups were
    dropped by ``min_size``, so it is then not chosen automatically).

    Parameters
    ----------
    epsilon0 : float
        Threshold (``>= 0`` for ``"within"``).
    alternative : {"greater", "less", "within"}
    method : {"auto", "kadane", "enumeration"}
    y, y_pred, groups, metric, target, alpha, scale, p_star, w0, pos_label
        As in :func:`certify_bounds`.
    n_resamples, batch_size, random_state, n_jobs
        Bootstrap controls, as in :func:`certify_bounds`.

    Returns
    -------
    GroupCertificationResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(0, 5, 2000)
    >>> covered = (rng.random(2000) < 0.9).astype(int)
    >>> from skfair_audit.group import intervals
    >>> res = certify_threshold(covered, covered, intervals(x, np.linspace(0, 5, 11)),
    ...                         metric=lambda y, p: p.astype(float), target=0.0,
    ...                         epsilon0=0.8, alternative="greater", scale="unscaled",
    ...                         n_resamples=200, random_state=0)
    >>> res.method
    'kadane'
    >>> bool(res.is_certified("x in [0, 5]"))
    True
    """
    alpha = check_alpha(alpha)
    _check_choice(alternative, "alternative", ("greater", "less", "within"))
    _check_choice(method, "method", ("auto", "kadane", "enumeration"))
    p_star, w0 = _check_scale_params(scale, p_star, w0)
    if not isinstance(epsilon0, numbers.Real) or not np.isfinite(epsilon0):
        raise ValueError(f"epsilon0 must be a finite number, got {epsilon0!r}.")
    epsilon0 = float(epsilon0)
    if alternative == "within" and epsilon0 < 0:
        raise ValueError("epsilon0 must be non-negative for alternative='within'.")
    audit = _prepare(y, y_pred, groups, metric, target, pos_label)
    collection = audit.groups
    kadane_ok = collection.kind == "intervals" and scale == "unscaled"
    if method == "kadane" and not kadane_ok:
        raise ValueError("method='kadane' needs an intervals collection and scale='unscaled'.")
    use_kadane = method == "kadane" or (
        method == "auto" and kadane_ok and not collection.small_groups
    )
    scales, degenerate = compute_scales(audit.stats, collection, kind=scale, p_star=p_star,
                                        w0=w0, power=0.5)
    eps = {"greater": (epsilon0, epsilon0), "less": (epsilon0, epsilon0),
           "within": (-epsilon0, epsilon0)}[alternative]
    process = DisparityProcess(audit.stats, collection, audit.target_kind, audit.theta_hat,
                               True, eps, scales, audit.active, kadane=use_kadane)
    sups = run_bootstrap(process, n_resamples, batch_size=batch_size,
                         random_state=random_state, n_jobs=n_jobs)
    dist = {"greater": sups[:, 0], "less": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    _warn_if_degenerate(degenerate, audit)
    p = audit.sizes / audit.n
    with np.errstate(divide="ignore", invalid="ignore"):
        width = c * scales / p
    est = np.where(audit.active, audit.estimates, np.nan)
    lower = np.where(audit.active, est - width, -np.inf)
    upper = np.where(audit.active, est + width, np.inf)
    if alternative == "greater":
        certified = audit.active & (lower > epsilon0)
        upper = np.full_like(upper, np.inf)
    elif alternative == "less":
        certified = audit.active & (upper < epsilon0)
        lower = np.full_like(lower, -np.inf)
    else:
        certified = audit.active & (lower > -epsilon0) & (upper < epsilon0)
    return GroupCertificationResult(
        names=collection.names, sizes=audit.sizes, estimates=est,
        group_values=audit.group_values, certified=certified, lower=lower, upper=upper,
        scales=scales, target=audit.theta_hat, epsilon0=epsilon0, critical_value=c,
        alpha=alpha, alternative=alternative, scale=scale, metric=audit.metric.name,
        n=audit.n, bootstrap_distribution=dist,
        method="kadane" if use_kadane else "enumeration", groups=collection,
        empty_groups=audit.empty_groups,
    )


def flag_groups(
    y,
    y_pred,
    groups,
    *,
    metric,
    target="overall",
    epsilon0=0.0,
    alternative="greater",
    q=0.1,
    se="delta",
    pos_label=None,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
) -> GroupFlagResult:
    """Flag groups whose disparity exceeds :math:`\\epsilon_0`, controlling the FDR at ``q``.

    Per group, :math:`z = (\\hat\\epsilon(G) - \\epsilon_0)/\\mathrm{se}(G)` and a one-sided
    p-value: ``"greater"`` tests :math:`H_0: \\epsilon(G) \\le \\epsilon_0` with
    :math:`p = 1 - \\Phi(z)`; ``"less"`` mirrors it; ``"two-sided"`` tests
    :math:`H_0: |\\epsilon(G)| \\le \\epsilon_0` (see :func:`normal_pvalues`; p is in (0, 1]).
    Benjamini–Hochberg at level ``q`` then flags groups. FDR control is proved for disjoint
    groups, or binary metrics with overlapping groups (one-sided nulls, known target); it is
    unproved for two-sided nulls.

    Parameters
    ----------
    se : {"delta", "bootstrap"}
        ``"delta"`` (default, deterministic): plug-in influence-function variance with the
        group term centred at the null boundary :math:`\\hat\\theta + \\epsilon_0` (the
        variance of :math:`P_n[(L - \\hat\\theta - \\epsilon_0)1_G]` under the null, as in
        a score test; for ``"two-sided"`` the boundary :math:`\\pm\\epsilon_0` on the side
        of the estimate), see :func:`delta_method_se`. It equals the Wald variance at the
        boundary and does not vanish for tiny groups with a constant metric, which would
        otherwise get p-value 0. ``"bootstrap"``: standard deviation of
        :math:`\\hat\\epsilon_b(G)` over ``n_resamples`` replicates (Wald).
    q : float
        False discovery rate.
    y, y_pred, groups, metric, target, pos_label
        As in :func:`certify_bounds`.
    epsilon0 : float
        Null threshold of the disparity.
    alternative : {"greater", "less", "two-sided"}
    n_resamples, batch_size, random_state, n_jobs
        Used only with ``se="bootstrap"``.

    Returns
    -------
    GroupFlagResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b", "c"], 3000)
    >>> y = np.zeros(3000, dtype=int)
    >>> y_pred = (rng.random(3000) < np.where(g == "c", 0.3, 0.1)).astype(int)
    >>> res = flag_groups(y, y_pred, {"g": g}, metric="fpr", epsilon0=0.02)
    >>> res.flagged.tolist()
    [False, False, True]
    """
    q, epsilon0 = check_flag_params(q, alternative, epsilon0)
    _check_choice(se, "se", ("delta", "bootstrap"))
    audit = _prepare(y, y_pred, groups, metric, target, pos_label)
    if se == "delta":
        std = null_standard_errors(audit, epsilon0, alternative)
    else:
        process = DisparityProcess(audit.stats, audit.groups, audit.target_kind,
                                   audit.theta_hat, False, (0.0, 0.0),
                                   np.ones(audit.groups.n_groups), audit.active)
        reps = run_bootstrap(process, n_resamples, batch_size=batch_size,
                             random_state=random_state, n_jobs=n_jobs,
                             statistic=process.replicate_estimates)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            std = np.nanstd(reps, axis=0, ddof=1)
        # A group whose metric is constant has no bootstrap variance of its own (only the
        # target's), which would make a 3-row group look significant: give such groups the
        # null-centred standard error instead.
        n_g, s_g = audit.stats.observed_group_sums(audit.groups)
        _, s2_g = audit.stats.observed_group_sums(audit.groups, power=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            within_var = s2_g / n_g - (s_g / n_g) ** 2
        constant = audit.active & (within_var <= 1e-12 * np.maximum(1.0, s2_g / n_g))
        if np.any(constant):
            std = np.where(constant, np.maximum(std, null_standard_errors(
                audit, epsilon0, alternative)), std)
    return flag_result(audit, std, epsilon0=epsilon0, alternative=alternative, q=q,
                       se_method=se)


def check_flag_params(q, alternative, epsilon0):
    """Validate the FDR level, the direction and the null threshold of flagging."""
    q = check_alpha(q, "q")
    _check_choice(alternative, "alternative", ("greater", "less", "two-sided"))
    if not isinstance(epsilon0, numbers.Real) or not np.isfinite(epsilon0):
        raise ValueError(f"epsilon0 must be a finite number, got {epsilon0!r}.")
    epsilon0 = float(epsilon0)
    if alternative == "two-sided" and epsilon0 < 0:
        raise ValueError("epsilon0 must be non-negative for a two-sided null |eps| <= eps0.")
    return q, epsilon0


def null_standard_errors(audit, epsilon0, alternative):
    """Delta-method standard errors centred at the boundary of each group's null.

    A score-type variance: it is the Wald variance at the boundary, and never 0 for a small
    group whose metric happens to be constant.
    """
    boundary = epsilon0 if alternative != "two-sided" else np.where(
        audit.estimates < 0, -epsilon0, epsilon0)
    return delta_method_se(audit.stats, audit.groups, audit.target_kind, audit.theta_hat,
                           null_disparity=boundary)


def flag_result(audit, std, *, epsilon0, alternative, q, se_method):
    """Per-group p-values and Benjamini–Hochberg flags from standard errors ``std``."""
    std = np.where(audit.active, std, np.nan)
    if np.any(audit.active & (std == 0)):
        warnings.warn(
            f"{int(np.sum(audit.active & (std == 0)))} group(s) have a zero standard error "
            "(constant metric); their p-values are 0 or 1.",
            DegenerateBootstrapWarning,
            stacklevel=3,
        )
    est = np.where(audit.active, audit.estimates, np.nan)
    pvalues, z = normal_pvalues(est, std, epsilon0, alternative)
    pvalues = np.where(audit.active, pvalues, 1.0)
    flagged, adjusted = benjamini_hochberg(pvalues, q)
    return GroupFlagResult(
        names=audit.groups.names, sizes=audit.sizes, estimates=est,
        group_values=audit.group_values, standard_errors=std,
        statistics=np.where(audit.active, z, np.nan), pvalues=pvalues,
        adjusted_pvalues=adjusted, flagged=flagged & audit.active, target=audit.theta_hat,
        epsilon0=epsilon0, alternative=alternative, q=q, se_method=se_method,
        metric=audit.metric.name, n=audit.n, groups=audit.groups,
        empty_groups=audit.empty_groups,
    )


def flag_groups_split(
    X,
    y,
    y_pred,
    *,
    metric,
    target="overall",
    epsilon0=0.0,
    alternative="greater",
    q=0.1,
    test_size=0.5,
    max_depth=3,
    min_samples_leaf=None,
    feature_names=None,
    se="delta",
    pos_label=None,
    random_state=None,
) -> GroupFlagResult:
    """Split-sample flagging: discover groups with a regression tree, test them on held-out rows.

    A :class:`~sklearn.tree.DecisionTreeRegressor` is fitted to :math:`L` on the audit-sample
    rows of a discovery split (features ``X``); its leaves, named by their decision rules,
    become the groups tested by :func:`flag_groups` on the other split. The selection does
    not use the test rows, so the FDR guarantee of the finite collection applies.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_rows, n_features)
    test_size : float
        Fraction of rows held out for testing.
    max_depth, min_samples_leaf : int
        Tree size (``min_samples_leaf`` defaults to ``max(20, 2% of the discovery rows)``).
    random_state : int, optional
        Seeds the split and the tree.

    Returns
    -------
    GroupFlagResult
        Computed on the test split; ``result.groups`` is a ``kind="tree"`` collection over
        the test rows.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (4000, 2))
    >>> y = np.zeros(4000, dtype=int)
    >>> y_pred = (rng.random(4000) < np.where(X[:, 0] > 0.7, 0.4, 0.1)).astype(int)
    >>> res = flag_groups_split(X, y, y_pred, metric="fpr", epsilon0=0.05, max_depth=1,
    ...                         random_state=0)
    >>> [name for name, f in zip(res.names, res.flagged) if f]
    ['x0 > 0.7...']
    """
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeRegressor

    metric = _resolve_metric(metric, pos_label)
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X_arr = as_array(X, "X")
    if X_arr.ndim == 1:
        X_arr = X_arr[:, None]
    y_arr, p_arr = as_array(y, "y"), as_array(y_pred, "y_pred")
    if not (X_arr.shape[0] == y_arr.shape[0] == p_arr.shape[0]):
        raise ValueError("X, y and y_pred must have the same number of rows.")
    values, rows = metric.evaluate(y_arr, p_arr)
    seed = None if random_state is None else int(seed_sequence(random_state).generate_state(1)[0])
    discover, test = train_test_split(np.arange(y_arr.shape[0]), test_size=test_size,
                                      random_state=seed)
    discover = discover[rows[discover]]
    if discover.size < 2:
        raise ValueError("too few audit-sample rows in the discovery split to grow a tree.")
    leaf = min_samples_leaf or max(20, int(0.02 * discover.size))
    tree = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=leaf, random_state=seed)
    tree.fit(X_arr[discover], values[discover])
    collection = tree_leaves(tree, X_arr[test], feature_names)
    return flag_groups(y_arr[test], p_arr[test], collection, metric=metric,
                       target=target if not isinstance(target, np.ndarray) else target[test],
                       epsilon0=epsilon0, alternative=alternative, q=q, se=se)


def equalized_odds(
    y,
    y_pred,
    groups,
    *,
    target="overall",
    alpha=0.1,
    epsilon0=None,
    pos_label=None,
    scale="rescaled",
    p_star=0.01,
    w0=np.inf,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
) -> EqualizedOddsResult:
    """Equalized-odds audit: false and true positive rate audits at ``alpha / 2`` each.

    Without ``epsilon0``: two-sided simultaneous intervals for both rates, combined into an
    upper bound on :math:`\\max(|\\epsilon_{FPR}(G)|, |\\epsilon_{TPR}(G)|)` per group (the
    union bound makes it valid at level :math:`1-\\alpha`; the two audits use disjoint rows).
    With ``epsilon0``: a group is certified when both rates are certified within
    :math:`\\pm\\epsilon_0` (``certify_threshold(alternative="within")``).

    Returns
    -------
    EqualizedOddsResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.choice(["p", "q"], 2000)
    >>> y = rng.integers(0, 2, 2000)
    >>> y_pred = np.where(rng.random(2000) < 0.85, y, 1 - y)
    >>> res = equalized_odds(y, y_pred, {"a": a}, n_resamples=200, random_state=0)
    >>> bool(np.all(res.worst_disparity < 0.1))
    True
    """
    alpha = check_alpha(alpha)
    seeds = seed_sequence(random_state).spawn(2)
    common = dict(target=target, alpha=alpha / 2, pos_label=pos_label, scale=scale,
                  p_star=p_star, w0=w0, n_resamples=n_resamples, batch_size=batch_size,
                  n_jobs=n_jobs)
    if epsilon0 is None:
        fpr, tpr = (
            certify_bounds(y, y_pred, groups, metric=m, alternative="two-sided",
                           random_state=s, **common)
            for m, s in zip(("false_positive_rate", "true_positive_rate"), seeds, strict=True)
        )
        worst = np.maximum(
            np.maximum(np.abs(fpr.lower), np.abs(fpr.upper)),
            np.maximum(np.abs(tpr.lower), np.abs(tpr.upper)),
        )
        certified = None
    else:
        fpr, tpr = (
            certify_threshold(y, y_pred, groups, metric=m, epsilon0=epsilon0,
                              alternative="within", random_state=s, **common)
            for m, s in zip(("false_positive_rate", "true_positive_rate"), seeds, strict=True)
        )
        worst = np.full(len(fpr.names), np.nan)
        certified = fpr.certified & tpr.certified
    return EqualizedOddsResult(fpr, tpr, fpr.names, worst, certified, alpha)
