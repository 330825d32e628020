"""The functional FaiTH audit: cell counts, losses and costs in, a :class:`FaithResult` out."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from ..utils import check_confidence_level
from ._inference import (
    bootstrap_root,
    bootstrap_scheme,
    gaussianity_diagnostic,
    one_sided_pvalues,
    root_bounds,
)
from ._result import FaithResult
from ._sample_space import CellNames
from ._solver import TransportProblem, check_epsilon, prepare_transport

__all__ = ["faith_audit", "check_delta"]

#: Below this many audit rows, or resampled rows of m-out-of-n / subsampling, the bootstrap
#: is a poor guide: warn.
MIN_BOOTSTRAP_ROWS = 50
MIN_RESAMPLE_ROWS = 20


class SmallSampleWarning(UserWarning):
    """The audit sample is too small for the bootstrap to mean much."""


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
    method="m-out-of-n",
    m=None,
    numerical_step=None,
    n_resamples=1000,
    confidence_level=0.95,
    cell_names=None,
    cell_features=None,
    feature_names=None,
    cell_labels=None,
    batch_size=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
    memory_limit=DEFAULT_MEMORY_LIMIT,
):
    r"""FaiTH individual-fairness audit from cell counts, losses and transport costs.

    The audit value of Xue, Yurochkin & Sun (2020) is

    .. math::

        \psi(f) = \max_{\Pi \ge 0} \langle R, \Pi\rangle \quad\text{s.t.}\quad
        \Pi 1 = f,\ \langle C, \Pi\rangle \le \varepsilon,\ \Pi_{ij} = 0 \text{ if } D_{ij},

    with ``R[i, j] = loss[j] − loss[i]``: the largest increase of the model's expected loss
    when the audit distribution ``f_n`` may be moved at total cost ε under the fair metric.
    It is solved exactly (a multiple-choice-knapsack greedy over per-cell concave hulls), and
    its sampling law is bootstrapped through the cell counts.

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
        Threshold of the δ-fairness test (H0: ψ ≤ δ).
    method : {"m-out-of-n", "numerical", "nonparametric", "subsampling"}
        Bootstrap scheme. ``"nonparametric"`` (Efron) is consistent only where ψ is
        differentiable (unique dual multiplier); the default m-out-of-n and the numerical
        bootstrap are consistent everywhere.
    m : int, float in (0, 1) or callable, optional
        Resample size rule (default ``⌈n^(2/3)⌉``).
    numerical_step : float or callable, optional
        ε_n of the numerical bootstrap (default ``n^(-1/3)``).
    n_resamples : int
        Bootstrap replicates B.
    confidence_level : float
        Level of the bounds and of the test (the test has level ``1 − confidence_level``).
    cell_names, cell_features, feature_names, cell_labels : optional
        Descriptions of the cells, kept in the result for tables and heat maps.
    batch_size, random_state, n_jobs, verbose
        Resampling engine controls: results are identical for any ``n_jobs`` and backend.
    memory_limit : int, float, str or None, default="2GiB"
        Budget of the dense problem's construction and of a bootstrap batch; exceeding it
        raises :class:`MemoryLimitError` before allocating (see :func:`prepare_transport`).

    Returns
    -------
    FaithResult

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.
    .. [2] H. Hong and J. Li, "The numerical bootstrap", Annals of Statistics 48(1), 2020.

    Examples
    --------
    Two labels × two groups; moving an individual to the other group is free, and the model
    errs more often on group 1:

    >>> import numpy as np
    >>> from skfair_audit.faith import faith_audit
    >>> counts = np.array([300, 200, 250, 250])      # cells (group, label)
    >>> loss = np.array([0.0, 1.0, 1.0, 0.0])        # 0-1 loss of the model at each cell
    >>> cost = np.zeros((4, 4))                       # group changes are free...
    >>> labels = np.array([0, 0, 1, 1])
    >>> forbidden = labels[:, None] != labels[None, :]   # ...label changes are not
    >>> res = faith_audit(counts, loss, cost, epsilon=0.0, forbidden=forbidden, delta=0.3,
    ...                   n_resamples=500, random_state=0)
    >>> round(res.statistic, 2)       # 300 + 250 of 1000 can be moved to where the model errs
    0.55
    >>> bool(res.rejected)
    True
    """
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
    scheme = bootstrap_scheme(method, n, m=m, numerical_step=numerical_step)
    if n < MIN_BOOTSTRAP_ROWS or (scheme.m is not None and scheme.m < MIN_RESAMPLE_ROWS):
        warnings.warn(
            f"the audit sample has n={n} rows (resamples of m={scheme.m}); with fewer than "
            f"{MIN_BOOTSTRAP_ROWS} rows (or m below {MIN_RESAMPLE_ROWS}) the bootstrap "
            "intervals are not meaningful.",
            SmallSampleWarning,
            stacklevel=2,
        )

    value, root = bootstrap_root(
        problem,
        counts,
        epsilon,
        scheme,
        n_resamples=n_resamples,
        batch_size=batch_size,
        random_state=random_state,
        n_jobs=n_jobs,
        verbose=verbose,
        memory_limit=memory_limit,
    )
    if np.count_nonzero(counts) == 1:
        # Every resample equals the sample: the bootstrap cannot see any variability.
        warnings.warn(
            "all audit rows fall in one cell: every bootstrap replicate equals the audit "
            "sample, so the interval has zero width and carries no sampling uncertainty.",
            SmallSampleWarning,
            stacklevel=2,
        )
    lower, _ = root_bounds(value, root, n, confidence_level, "greater")
    _, upper = root_bounds(value, root, n, confidence_level, "less")
    if delta is None:
        pvalue = fair_pvalue = rejected = certified = None
    else:
        pvalue, fair_pvalue = one_sided_pvalues(value, root, n, delta)
        rejected = bool(lower > delta)
        certified = bool(upper < delta)

    frequencies = counts / n
    lambda_low, lambda_high = problem.dual_multipliers(frequencies, epsilon)
    gauss_p, skewness = gaussianity_diagnostic(root)
    if method == "nonparametric" and gauss_p < 1e-3 and abs(skewness) > 0.2:
        warnings.warn(
            f"the bootstrap distribution is clearly non-Gaussian (normality p={gauss_p:.2g}, "
            f"skewness {skewness:.2f}): the audit value may not be differentiable here and "
            "Efron's bootstrap may be inconsistent; use method='m-out-of-n' or 'numerical'.",
            NonGaussianBootstrapWarning,
            stacklevel=2,
        )
    source, target, mass = problem.plan_entries(frequencies, epsilon)

    return FaithResult(
        statistic=value,
        epsilon=epsilon,
        delta=delta,
        method=method,
        confidence_level=confidence_level,
        n=n,
        n_cells=problem.n_cells,
        m=scheme.m,
        numerical_step=scheme.numerical_step,
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
    )
