"""The functional FaiTH audit: cell counts, losses and costs in, a :class:`FaithResult` out."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, MemoryBudget
from .._utils import check_confidence_level
from ._diagnostics import (
    DegenerateMetricWarning,
    degenerate_metric_message,
    degenerate_metric_reasons,
    zero_cost_summary,
)
from ._inference import (
    BOOTSTRAP_METHODS,
    bootstrap_root,
    bootstrap_scheme,
    gaussianity_diagnostic,
    one_sided_pvalues,
    root_bounds,
)
from ._result import FaithResult
from ._sample_space import CellNames
from ._solver import TransportProblem, check_epsilon, prepare_transport
from ._uniform import uniform_inference

__all__ = ["INFERENCE_METHODS", "faith_audit", "check_delta"]

#: The inference methods of :func:`faith_audit`: the uniformly valid bounds (default), then
#: the pointwise bootstraps.
INFERENCE_METHODS = ("uniform", *BOOTSTRAP_METHODS)

#: Below this many audit rows, or resampled rows of m-out-of-n / subsampling, the bootstrap
#: is a poor guide: warn.
MIN_BOOTSTRAP_ROWS = 50
MIN_RESAMPLE_ROWS = 20


class SmallSampleWarning(UserWarning):
    """The audit sample is too small for the bootstrap to mean much."""


class SaturatedBudgetWarning(UserWarning):
    """The transport budget does not bind: ψ̂(ε) is within 1% of its unlimited-budget value."""


#: ψ̂(ε) at or above this share of ψ̂(∞) means the budget does not bind.
SATURATION_SHARE = 0.99


def saturation_budgets(problem, frequencies, shares=(0.5, 0.95, SATURATION_SHARE)):
    """The budgets ε at which ψ̂ first reaches the given shares of ψ̂(∞).

    ε ↦ ψ̂(ε) is concave, non-decreasing and piecewise linear (:meth:`TransportProblem.curve`);
    each budget is found on it by linear interpolation (0 where ψ̂(0) already reaches it).

    Parameters
    ----------
    problem : TransportProblem
    frequencies : ndarray of shape (K,)
    shares : sequence of float in (0, 1]

    Returns
    -------
    tuple of float
    """
    epsilons, values = problem.curve(frequencies)
    out = []
    for share in shares:
        target = share * values[-1]
        k = int(np.searchsorted(values, target - 1e-15 * max(values[-1], 1.0)))
        if k == 0 or values[-1] <= 0:
            out.append(0.0)
            continue
        k = min(k, values.size - 1)
        slope = (values[k] - values[k - 1]) / (epsilons[k] - epsilons[k - 1])
        out.append(float(epsilons[k - 1] + (target - values[k - 1]) / slope))
    return tuple(out)


class NonGaussianBootstrapWarning(UserWarning):
    """Efron's bootstrap distribution is clearly non-Gaussian: ψ may not be differentiable."""


def check_delta(delta, loss):
    """Validate δ against the range of ψ, which lies in [0, max(loss) − min(loss)]."""
    if delta is None:
        return None
    loss_range = float(np.max(loss) - np.min(loss))
    if (
        not isinstance(delta, numbers.Real)
        or isinstance(delta, bool)
        or not math.isfinite(delta)
        or not 0.0 <= delta <= loss_range
    ):
        raise ValueError(
            f"delta must lie in the range of the audit value [0, {loss_range:g}] (the spread of "
            f"the loss over the cells), got {delta!r}."
        )
    return float(delta)


def _check_counts(counts, problem):
    n_cells = problem.n_cells
    counts = np.asarray(counts)
    if counts.shape != (n_cells,):
        raise ValueError(f"counts must have shape ({n_cells},) like loss, got {counts.shape}.")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("counts must be non-negative integers (audit rows per cell).")
    counts = counts.astype(np.int64)
    n = int(counts.sum())
    if n < 2:
        raise ValueError(f"the audit sample must have at least 2 rows, got {n}.")
    outside = np.ones(n_cells, dtype=bool)
    outside[problem.support] = False
    if counts[outside].any():
        raise ValueError(
            f"counts has audit rows in {int(np.count_nonzero(counts[outside]))} cells outside "
            "the support of the transport problem; prepare it with rows covering every cell "
            "with audit rows."
        )
    return counts, n


class _NumberedCells:
    """Default cell names ``"cell k"`` (formatted on access)."""

    def __init__(self, n_cells):
        self.n_cells = n_cells

    def cell_name(self, k):
        if not -self.n_cells <= int(k) < self.n_cells:
            raise IndexError(f"cell {k} is out of range for {self.n_cells} cells.")
        return f"cell {int(k) % self.n_cells}"


def _cell_names(names, n_cells):
    if names is None:
        return CellNames(_NumberedCells(n_cells))
    if not isinstance(names, Sequence) or isinstance(names, str):
        names = tuple(names)
    elif isinstance(names, list):
        names = tuple(names)
    if len(names) != n_cells:
        raise ValueError(f"cell_names must name the {n_cells} cells, got {len(names)} names.")
    return names


def faith_audit(
    counts,
    loss,
    cost,
    *,
    epsilon,
    forbidden=None,
    delta=None,
    method="uniform",
    m=None,
    numerical_step=None,
    n_resamples=1000,
    confidence_level=0.95,
    cell_names=None,
    cell_features=None,
    feature_names=None,
    cell_labels=None,
    metric_diagnostics=None,
    batch_size=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    estimand=None,
):
    r"""FaiTH individual-fairness audit from cell counts, losses and transport costs.

    The audit value of Xue, Yurochkin & Sun (2020) is

    .. math::

        \psi(f) = \max_{\Pi \ge 0} \langle R, \Pi\rangle \quad\text{s.t.}\quad
        \Pi 1 = f,\ \langle C, \Pi\rangle \le \varepsilon,\ \Pi_{ij} = 0 \text{ if } D_{ij},

    with ``R[i, j] = loss[j] − loss[i]``: the largest increase of the model's expected loss
    when the audit distribution ``f_n`` may be moved at total cost ε under the fair metric.
    It is solved exactly (a multiple-choice-knapsack greedy over per-cell concave hulls). Its
    confidence bounds are, by default, uniformly valid near the kinks of ε ↦ ψ (see Notes).

    Parameters
    ----------
    counts : array-like of shape (K,)
        Audit rows per cell.
    loss : array-like of shape (K,) or None
        The model's loss at every cell (including cells with no audit row); None when
        ``cost`` is a prepared :class:`TransportProblem` (which holds it).
    cost : array-like of shape (K, K) or TransportProblem
        Transport cost between cells under the fair metric (non-negative, zero diagonal;
        ``inf`` forbids a move); or the prepared problem, e.g. from
        :func:`prepare_metric_transport` (no ``K x K`` matrix; its rows must cover every cell
        with audit rows).
    epsilon : float
        Transport budget ε ≥ 0.
    forbidden : array-like of bool, shape (K, K), optional
        Forbidden moves (e.g. label changes).
    delta : float, optional
        Threshold of the δ-fairness test (H0: ψ ≤ δ) and of its mirror (H0: ψ ≥ δ).
    method : {"uniform", "m-out-of-n", "numerical", "nonparametric", "subsampling"}
        How the bounds are computed. ``"uniform"`` (default): the minimum over the linear
        pieces of ψ of pointwise lower bounds, and a simultaneous (max-t) upper bound over the
        near-minimising pieces; asymptotically valid *uniformly* in the population, so also
        when ε is near a kink (Notes). The other four are bootstraps of the root
        √n(ψ(f_n) − ψ(f*)), valid *pointwise* only: ``"nonparametric"`` (Efron) where ψ is
        differentiable (a unique dual multiplier); ``"m-out-of-n"``, ``"numerical"`` and
        ``"subsampling"`` at every fixed population, kinks included, but not uniformly: when ε
        lies within a few standard errors of a kink their level is not guaranteed
        (``benchmarks/bench_faith_validity.py`` measures their type-I errors there).
    m : int, float in (0, 1) or callable, optional
        Resample size rule of m-out-of-n and subsampling (default ``⌈n^(2/3)⌉``).
    numerical_step : float or callable, optional
        ε_n of the numerical bootstrap (default ``n^(-1/3)``).
    n_resamples : int
        Bootstrap replicates B (for ``"uniform"``: of the max-t statistic of the upper bound).
    confidence_level : float
        Level of the bounds and of the tests (each test has level ``1 − confidence_level``).
    cell_names, cell_features, feature_names, cell_labels : optional
        Descriptions of the cells, kept in the result for tables and heat maps.
    metric_diagnostics : MetricDiagnostics, optional
        The free subspace of the fair metric behind ``cost``
        (:func:`~skfair_audit.faith.metric_diagnostics`); kept in the result and checked.
    batch_size, random_state, n_jobs, verbose
        Resampling engine controls: results are identical for any ``n_jobs``, backend and
        ``verbose`` (0: silent; otherwise a progress bar over the bootstrap replicates).
    memory_limit : int, float, str or None, default="2GiB"
        Budget of the dense problem's construction and of a bootstrap batch; exceeding it
        raises :class:`MemoryLimitError` before allocating (see :func:`prepare_transport`).
    estimand : str, optional
        Where the audit lets an individual move, in one sentence (kept in the result as
        ``estimand`` and quoted by its guarantee); :class:`FaithAuditor` passes it.

    Returns
    -------
    FaithResult
        With ``near_kink`` (are the data consistent with ε at or near a kink?) and
        ``linear_pieces`` (the pieces behind the uniform bounds) for every method.

    Notes
    -----
    **ψ is a minimum of linear functions of f.** By LP duality,
    :math:`\psi(f) = \min_{\lambda \ge 0} \ell_\lambda(f)` with
    :math:`\ell_\lambda(f) = \lambda\varepsilon + \sum_i f_i a_i(\lambda)` and
    :math:`a_i(\lambda) = \max_{j \text{ allowed}} R_{ij} - \lambda C_{ij}`; only the
    *linear pieces* λ ∈ {segment slopes} ∪ {0} matter. For fixed λ, :math:`\ell_\lambda(f_n)`
    is a sample mean of :math:`\lambda\varepsilon + a_Z(\lambda)` with standard error
    :math:`s_\lambda/\sqrt n` (regularised, see :class:`LinearPieces`). A kink of ε ↦ ψ is
    where two pieces attain the minimum; there √n(ψ(f_n) − ψ(f*)) tends to a minimum of
    correlated Gaussians, and near one (ε within O(1/√n) of it) its law changes with the
    distance, which is what breaks the pointwise bootstraps.

    **Lower bound** (``method="uniform"``):
    :math:`L = \min_\lambda [\ell_\lambda(f_n) - z_{1-\alpha} s_\lambda/\sqrt n]`. With
    :math:`\lambda^*` a population minimiser, :math:`P(L > \psi) \le
    P(\ell_{\lambda^*}(f_n) - z_{1-\alpha} s_{\lambda^*}/\sqrt n > \ell_{\lambda^*}(f_*))`,
    a one-sided CLT for one sample mean: the bound holds its level uniformly over populations
    whose variances of :math:`a_Z(\lambda)` are bounded away from 0, wherever ε is. The
    δ-test "reject when L > δ" is the intersection–union test (Berger 1982) of the hypotheses
    :math:`\ell_\lambda \le \delta`; its p-value is
    :math:`\max_\lambda \Phi(-(\ell_\lambda(f_n) - \delta)\sqrt n / s_\lambda)`.

    **Upper bound**: :math:`U = \min_{\lambda \in \hat V} [\ell_\lambda(f_n) + c\,
    s_\lambda/\sqrt n]`, where the contact set :math:`\hat V` holds the pieces whose excess
    over the smallest estimate is at most κ_n = √(log n) standard errors of the difference,
    and c is the 1 − α quantile of the studentized bootstrap maximum
    :math:`\max_{\lambda \in \hat V} (\ell_\lambda(f_n) - \ell_\lambda(f^*_n))\sqrt n /
    s^*_\lambda`, :math:`f^*_n \sim \text{Mult}(n, f_n)/n`: a simultaneous critical value over
    the near-minimisers (intersection bounds of Chernozhukov, Lee & Rosen 2013, with the
    moment selection of Andrews & Soares 2010). The mirror test certifies δ-fairness when
    U < δ; its p-value is the share of bootstrap bounds at or above δ.

    **Guarantees.** Each one-sided bound has asymptotic level 1 − α uniformly over such
    populations (the lower one by construction, the upper one through the contact set and the
    max-t critical value); the two-sided interval is
    :math:`[L_{1-\alpha/2}, U_{1-\alpha/2}]`, so it covers with asymptotic probability at
    least 1 − α. These are large-sample statements; the finite-sample type-I errors and
    coverage on the near-kink grid are measured by ``benchmarks/bench_faith_validity.py``.
    Away from kinks the lower bound is the usual Wald bound and the upper one a bootstrap-t
    bound, so no power is lost there. The pointwise bootstraps' bounds use the root quantiles
    :math:`q_a`: lower :math:`\psi_n - q_{1-\alpha}/\sqrt n`, upper
    :math:`\psi_n - q_{\alpha}/\sqrt n`, two-sided equal-tailed.

    **Kink diagnostic.** ``near_kink`` is True when the confidence set of the active piece,
    the pieces whose excess over the smallest estimate is within :math:`z_{1-\alpha/2}`
    standard errors of the difference, holds more than one piece: the data cannot tell
    which linear piece of ψ is active, i.e. ε may sit at or near a kink. It is computed for
    every method.

    Warns
    -----
    DegenerateMetricWarning
        When ``metric_diagnostics`` shows that the metric leaves most non-protected directions
        free, or when ψ(f_n) at ε = 0 is at least 95% of its value with an unlimited budget
        (every individual who can be moved to where the model does worse can be moved there
        for free): the audit then measures the model's errors, not its fairness.

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.
    .. [2] V. Chernozhukov, S. Lee and A. M. Rosen, "Intersection bounds: estimation and
       inference", Econometrica 81(2), 2013.
    .. [3] D. W. K. Andrews and G. Soares, "Inference for parameters defined by moment
       inequalities using generalized moment selection", Econometrica 78(1), 2010.
    .. [4] R. L. Berger, "Multiparameter hypothesis testing and acceptance sampling",
       Technometrics 24(4), 1982.
    .. [5] Z. Fang and A. Santos, "Inference on directionally differentiable functions",
       Review of Economic Studies 86(1), 2019.
    .. [6] H. Hong and J. Li, "The numerical bootstrap", Annals of Statistics 48(1), 2020.

    Examples
    --------
    Two labels × two groups; moving an individual to the other group is free, and the model
    errs more often on group 1 (every correct decision of this toy flips with the group, so
    the audit also raises a :class:`~skfair_audit.faith.DegenerateMetricWarning`, whose
    message says the verdict stands when, as here, the decisions depend on the group alone):

    >>> import numpy as np
    >>> from skfair_audit.faith import faith_audit
    >>> counts = np.array([300, 200, 250, 250])      # cells (group, label)
    >>> loss = np.array([0.0, 1.0, 1.0, 0.0])        # 0-1 loss of the model at each cell
    >>> cost = np.zeros((4, 4))                       # group changes are free...
    >>> labels = np.array([0, 0, 1, 1])
    >>> forbidden = labels[:, None] != labels[None, :]   # ...label changes are not
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     res = faith_audit(counts, loss, cost, epsilon=0.0, forbidden=forbidden, delta=0.3,
    ...                       n_resamples=500, random_state=0)
    >>> [w.category.__name__ for w in caught]
    ['DegenerateMetricWarning']
    >>> round(res.statistic, 2)       # 300 + 250 of 1000 can be moved to where the model errs
    0.55
    >>> bool(res.rejected), bool(res.near_kink)
    (True, False)
    """
    memory_limit = MemoryBudget.of(memory_limit)  # parsed once, for every step below
    if isinstance(cost, TransportProblem):
        problem = cost
        if forbidden is not None:
            raise ValueError("forbidden moves are part of a prepared TransportProblem.")
        if loss is not None and not np.array_equal(np.asarray(loss, dtype=float), problem.loss):
            raise ValueError("loss differs from the loss the TransportProblem was prepared with.")
        loss = problem.loss
    else:
        if loss is None:
            raise ValueError("loss is required with a cost matrix.")
        loss = np.asarray(loss, dtype=float)
        problem = prepare_transport(loss, cost, forbidden, memory_limit=memory_limit)
    counts, n = _check_counts(counts, problem)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, loss)
    confidence_level = check_confidence_level(confidence_level)
    if method not in INFERENCE_METHODS:
        raise ValueError(f"method must be one of {INFERENCE_METHODS}, got {method!r}.")
    uniform = method == "uniform"
    if uniform:
        for name, given in (("m", m), ("numerical_step", numerical_step)):
            if given is not None:
                raise ValueError(
                    f"{name} tunes a pointwise bootstrap; method='uniform' has no such "
                    "parameter (pass method='m-out-of-n', 'subsampling' or 'numerical')."
                )
        scheme = None
    else:
        scheme = bootstrap_scheme(method, n, m=m, numerical_step=numerical_step)
    resample_rows = None if scheme is None else scheme.m
    if n < MIN_BOOTSTRAP_ROWS or (resample_rows is not None and resample_rows < MIN_RESAMPLE_ROWS):
        warnings.warn(
            f"the audit sample has n={n} rows (resamples of m={resample_rows}); with fewer "
            f"than {MIN_BOOTSTRAP_ROWS} rows (or m below {MIN_RESAMPLE_ROWS}) the bootstrap "
            "intervals are not meaningful.",
            SmallSampleWarning,
            stacklevel=2,
        )
    if np.count_nonzero(counts) == 1:
        # Every resample equals the sample: the bootstrap cannot see any variability.
        warnings.warn(
            "all audit rows fall in one cell: every bootstrap replicate equals the audit "
            "sample, so the interval carries no sampling uncertainty.",
            SmallSampleWarning,
            stacklevel=2,
        )

    engine = dict(
        n_resamples=n_resamples,
        batch_size=batch_size,
        random_state=random_state,
        n_jobs=n_jobs,
        verbose=verbose,
        memory_limit=memory_limit,
    )
    _, pieces = uniform_inference(
        problem, counts, epsilon, confidence_level=confidence_level, bootstrap=uniform,
        **(engine if uniform else {}),
    )
    if uniform:
        value = float(problem.value(counts / n, epsilon))
        root = pieces.max_t
        lower = pieces.lower_bound(confidence_level)
        upper = pieces.upper_bound(confidence_level)
        gauss_p, skewness = math.nan, math.nan
    else:
        value, root = bootstrap_root(problem, counts, epsilon, scheme, **engine)
        lower, _ = root_bounds(value, root, n, confidence_level, "greater")
        _, upper = root_bounds(value, root, n, confidence_level, "less")
        gauss_p, skewness = gaussianity_diagnostic(root)
    if delta is None:
        pvalue = fair_pvalue = rejected = certified = None
    else:
        if uniform:
            pvalue, fair_pvalue = pieces.pvalues(delta, confidence_level)
        else:
            pvalue, fair_pvalue = one_sided_pvalues(value, root, n, delta)
        rejected = bool(lower > delta)
        certified = bool(upper < delta)

    frequencies = counts / n
    free_moves = zero_cost_summary(problem, counts)
    reasons = degenerate_metric_reasons(
        metric_diagnostics, free_moves["zero_cost_statistic"], free_moves["max_statistic"]
    )
    if reasons:
        warnings.warn(degenerate_metric_message(reasons), DegenerateMetricWarning, stacklevel=2)
    lambda_low, lambda_high = problem.dual_multipliers(frequencies, epsilon)
    if method == "nonparametric" and gauss_p < 1e-3 and abs(skewness) > 0.2:
        warnings.warn(
            f"the bootstrap distribution is clearly non-Gaussian (normality p={gauss_p:.2g}, "
            f"skewness {skewness:.2f}): the audit value may not be differentiable here and "
            "Efron's bootstrap may be inconsistent; use method='uniform'.",
            NonGaussianBootstrapWarning,
            stacklevel=2,
        )
    source, target, mass = problem.plan_entries(frequencies, epsilon)
    half, most, saturation = saturation_budgets(problem, frequencies)
    saturated = bool(epsilon > 0 and saturation > 0 and epsilon >= saturation)
    if saturated:
        warnings.warn(
            f"the budget ε = {epsilon:g} does not bind: ψ̂(ε) = {value:.4g} is within 1% of "
            f"its value with an unlimited budget, {free_moves['max_statistic']:.4g} (reached "
            f"half-way at ε = {half:.3g}, 95% at ε = {most:.3g}). The audit then measures how "
            "often the model can be made to err at any cost; choose ε from "
            "result.saturation_budgets (see the user guide, 'Choosing the budget').",
            SaturatedBudgetWarning, stacklevel=2,
        )

    return FaithResult(
        statistic=value,
        epsilon=epsilon,
        delta=delta,
        method=method,
        confidence_level=confidence_level,
        n=n,
        n_cells=problem.n_cells,
        m=None if scheme is None else scheme.m,
        numerical_step=None if scheme is None else scheme.numerical_step,
        bootstrap_distribution=root,
        lower_bound=lower,
        upper_bound=upper,
        pvalue=pvalue,
        fair_pvalue=fair_pvalue,
        rejected=rejected,
        certified_fair=certified,
        dual_multipliers=(float(lambda_low), float(lambda_high)),
        dual_unique=bool(lambda_low == lambda_high),
        gaussianity_pvalue=gauss_p,
        skewness=skewness,
        counts=counts,
        adversarial_distribution=problem.adversarial_distribution(frequencies, epsilon),
        plan_source=source,
        plan_target=target,
        plan_mass=mass,
        cell_names=_cell_names(cell_names, problem.n_cells),
        cell_features=None if cell_features is None else np.asarray(cell_features, dtype=object),
        feature_names=None if feature_names is None else tuple(feature_names),
        cell_labels=None if cell_labels is None else np.asarray(cell_labels),
        **free_moves,
        metric_diagnostics=metric_diagnostics,
        near_kink=pieces.near_kink,
        linear_pieces=pieces,
        saturation_budgets=(half, most),
        budget_saturated=saturated,
        estimand=estimand,
        memory_limit=memory_limit.limit,
    )
