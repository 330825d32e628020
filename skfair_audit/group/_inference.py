"""The group procedures on an audit summary: bounds, certificates and flags.

Each function takes an :class:`~skfair_audit.group.AuditSummary` — built in memory from the
rows (:meth:`AuditSummary.from_rows`) or from the counts of a partitioned trail
(:func:`skfair_audit.scale.summarize_trail`) — and returns a result object. Nothing here
sees a row: the in-memory and partitioned audits share every line of it.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import false_discovery_control

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import user_stacklevel
from ._bootstrap import (
    DegenerateBootstrapWarning,
    DisparityProcess,
    compute_scales,
    critical_value,
    delta_method_se,
    disparity_range,
    normal_pvalues,
    run_bootstrap,
    simultaneous_bounds,
)
from ._results import GroupBoundsResult, GroupCertificationResult, GroupFlagResult


def _warn_if_degenerate(degenerate, summary):
    if degenerate:
        warnings.warn(
            f"the metric {summary.metric.name!r} is constant on the audit sample: the "
            "bootstrap distribution is degenerate (critical value 0) and the bounds equal the "
            "estimates, without any coverage guarantee.",
            DegenerateBootstrapWarning,
            stacklevel=user_stacklevel(),
        )


def bootstrap_name(summary) -> str:
    """``"multinomial"`` (over the atoms) or ``"poisson"`` (partitions' row weights)."""
    return "poisson" if summary.replicates is not None else "multinomial"


def _describe(summary, n_resamples):
    if summary.replicates is not None:
        return (f"Poisson bootstrap (row-key hashed weights, {summary.replicates.n_resamples} "
                f"resamples summed by the partitions)")
    return (f"multinomial bootstrap over {summary.stats.n_atoms} atoms "
            f"({n_resamples} resamples)")


def certify_bounds(summary, *, alternative, alpha, scale, p_star, w0, n_resamples,
                   batch_size, random_state, n_jobs, verbose=0,
                   memory_limit=DEFAULT_MEMORY_LIMIT) -> GroupBoundsResult:
    r"""Simultaneous bounds from the bootstrap suprema of the scaled disparity process.

    The suprema of every replicate are :math:`\sup_G T_b(G)/s_G` and
    :math:`\sup_G -T_b(G)/s_G`; the bound of group G is
    :math:`\hat\epsilon(G) \mp c\, s_G / P_n(G)^2`, clipped to the values the disparity can
    take (:func:`~skfair_audit.group._bootstrap.simultaneous_bounds`).
    """
    scales, degenerate = compute_scales(summary.stats, summary.groups, kind=scale,
                                        p_star=p_star, w0=w0, power=1.5)
    process = DisparityProcess(summary.stats, summary.groups, summary.target_kind,
                               summary.theta_hat, False, (0.0, 0.0), scales, summary.active)
    sups = run_bootstrap(summary, process, n_resamples, batch_size=batch_size,
                         memory_limit=memory_limit, random_state=random_state, n_jobs=n_jobs,
                         verbose=verbose)
    _warn_if_degenerate(degenerate, summary)
    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    active = summary.active
    est = np.where(active, summary.estimates, np.nan)
    lower, upper = simultaneous_bounds(
        est, scales, summary.sizes / summary.n, c, alternative,
        disparity_range(summary.metric.bounds, summary.target_kind, summary.theta_hat))
    lower, upper = np.where(active, lower, -np.inf), np.where(active, upper, np.inf)
    return GroupBoundsResult(
        names=summary.groups.names, sizes=summary.sizes, estimates=est,
        group_values=summary.group_values, lower=lower, upper=upper, scales=scales,
        target=summary.theta_hat, critical_value=c, alpha=alpha, alternative=alternative,
        scale=scale, metric=summary.metric.name, n=summary.n, bootstrap_distribution=dist,
        method=f"{_describe(summary, n_resamples)} of the {scale} disparity process "
               f"(target {summary.target_kind})",
        groups=summary.groups, empty_groups=summary.empty_groups,
        bootstrap=bootstrap_name(summary), _summary=summary,
        _scaling=(scale, p_star, w0),
    )


def certify_threshold(summary, *, epsilon0, alternative, alpha, scale, p_star, w0, method,
                      n_resamples, batch_size, random_state, n_jobs,
                      verbose=0, memory_limit=DEFAULT_MEMORY_LIMIT) -> GroupCertificationResult:
    """Boolean certificates at ``epsilon0`` (see :func:`skfair_audit.group.certify_threshold`)."""
    if alternative == "within" and epsilon0 < 0:
        raise ValueError("epsilon0 must be non-negative for alternative='within'.")
    collection = summary.groups
    kadane_ok = collection.kind == "intervals" and scale == "unscaled"
    if method == "kadane" and not kadane_ok:
        raise ValueError("method='kadane' needs an intervals collection and scale='unscaled'.")
    use_kadane = method == "kadane" or (
        method == "auto" and kadane_ok and not collection.small_groups
    )
    scales, degenerate = compute_scales(summary.stats, collection, kind=scale, p_star=p_star,
                                        w0=w0, power=0.5)
    eps = {"greater": (epsilon0, epsilon0), "less": (epsilon0, epsilon0),
           "within": (-epsilon0, epsilon0)}[alternative]
    process = DisparityProcess(summary.stats, collection, summary.target_kind,
                               summary.theta_hat, True, eps, scales, summary.active,
                               kadane=use_kadane)
    sups = run_bootstrap(summary, process, n_resamples, batch_size=batch_size,
                         memory_limit=memory_limit, random_state=random_state, n_jobs=n_jobs,
                         verbose=verbose)
    dist = {"greater": sups[:, 0], "less": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    _warn_if_degenerate(degenerate, summary)
    active = summary.active
    p = summary.sizes / summary.n
    with np.errstate(divide="ignore", invalid="ignore"):
        width = c * scales / p
    est = np.where(active, summary.estimates, np.nan)
    lower = np.where(active, est - width, -np.inf)
    upper = np.where(active, est + width, np.inf)
    if alternative == "greater":
        certified = active & (lower > epsilon0)
        upper = np.full_like(upper, np.inf)
    elif alternative == "less":
        certified = active & (upper < epsilon0)
        lower = np.full_like(lower, -np.inf)
    else:
        certified = active & (lower > -epsilon0) & (upper < epsilon0)
    return GroupCertificationResult(
        names=collection.names, sizes=summary.sizes, estimates=est,
        group_values=summary.group_values, certified=certified, lower=lower, upper=upper,
        scales=scales, target=summary.theta_hat, epsilon0=float(epsilon0), critical_value=c,
        alpha=alpha, alternative=alternative, scale=scale, metric=summary.metric.name,
        n=summary.n, bootstrap_distribution=dist,
        method="kadane" if use_kadane else "enumeration", groups=collection,
        empty_groups=summary.empty_groups, bootstrap=bootstrap_name(summary),
    )


def null_standard_errors(summary, epsilon0, alternative):
    """Delta-method standard errors centred at the boundary of each group's null.

    A score-type variance: it is the Wald variance at the boundary, and never 0 for a small
    group whose metric happens to be constant.
    """
    boundary = epsilon0 if alternative != "two-sided" else np.where(
        summary.estimates < 0, -epsilon0, epsilon0)
    return delta_method_se(summary.stats, summary.groups, summary.target_kind,
                           summary.theta_hat, null_disparity=boundary)


def flag_groups(summary, *, epsilon0, alternative, q, se, n_resamples, batch_size,
                random_state, n_jobs, verbose=0,
                memory_limit=DEFAULT_MEMORY_LIMIT) -> GroupFlagResult:
    """Benjamini–Hochberg flags (see :func:`skfair_audit.group.flag_groups`)."""
    if alternative == "two-sided" and epsilon0 < 0:
        raise ValueError("epsilon0 must be non-negative for a two-sided null |eps| <= eps0.")
    if se == "delta":
        std = null_standard_errors(summary, epsilon0, alternative)
    else:
        process = DisparityProcess(summary.stats, summary.groups, summary.target_kind,
                                   summary.theta_hat, False, (0.0, 0.0),
                                   np.ones(summary.groups.n_groups), summary.active)
        reps = run_bootstrap(summary, process.replicate_estimates, n_resamples,
                             batch_size=batch_size, memory_limit=memory_limit,
                             random_state=random_state, n_jobs=n_jobs, verbose=verbose)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            std = np.nanstd(reps, axis=0, ddof=1)
        # A group whose metric is constant has no bootstrap variance of its own (only the
        # target's), which would make a 3-row group look significant: give such groups the
        # null-centred standard error instead.
        n_g, s_g = summary.stats.observed_group_sums(summary.groups)
        _, s2_g = summary.stats.observed_group_sums(summary.groups, power=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            within_var = s2_g / n_g - (s_g / n_g) ** 2
        constant = summary.active & (within_var <= 1e-12 * np.maximum(1.0, s2_g / n_g))
        if np.any(constant):
            std = np.where(constant, np.maximum(std, null_standard_errors(
                summary, epsilon0, alternative)), std)
    active = summary.active
    std = np.where(active, std, np.nan)
    if np.any(active & (std == 0)):
        warnings.warn(
            f"{int(np.sum(active & (std == 0)))} group(s) have a zero standard error "
            "(constant metric); their p-values are 0 or 1.",
            DegenerateBootstrapWarning,
            stacklevel=user_stacklevel(),
        )
    est = np.where(active, summary.estimates, np.nan)
    pvalues, z = normal_pvalues(est, std, epsilon0, alternative)
    pvalues = np.where(active, pvalues, 1.0)
    # Benjamini–Hochberg step-up: scipy's adjusted p-values, rejected where <= q.
    adjusted = false_discovery_control(pvalues, method="bh") if pvalues.size else pvalues
    return GroupFlagResult(
        names=summary.groups.names, sizes=summary.sizes, estimates=est,
        group_values=summary.group_values, standard_errors=std,
        statistics=np.where(active, z, np.nan), pvalues=pvalues, adjusted_pvalues=adjusted,
        flagged=(adjusted <= q) & active, target=summary.theta_hat, epsilon0=float(epsilon0),
        alternative=alternative, q=q, se_method=se, metric=summary.metric.name, n=summary.n,
        groups=summary.groups, empty_groups=summary.empty_groups,
        bootstrap=bootstrap_name(summary) if se == "bootstrap" else None,
    )
