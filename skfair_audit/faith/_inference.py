"""Bootstrap inference for the FaiTH audit value.

The audit value ψ(f) is concave and only *directionally* differentiable in the cell
frequencies f, so √n(ψ(f_n) − ψ(f*)) is Gaussian only when the optimal dual multiplier is
unique; at a kink of ε ↦ ψ(ε) its limit is a minimum of correlated Gaussians and Efron's
bootstrap is inconsistent (Xue, Yurochkin & Sun 2020, §3–4). This module draws the bootstrap
"root" T* that approximates the law of √n(ψ(f_n) − ψ(f*)) for four schemes, all through the
multinomial (or hypergeometric) cell counts — the cost of a replicate never depends on n — and
turns it into confidence bounds, the δ-fairness test and its p-values.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._resampling import (
    DEFAULT_MEMORY_LIMIT,
    HypergeometricCounts,
    MultinomialCounts,
    RowCategories,
    resample,
)

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapScheme",
    "bootstrap_root",
    "bootstrap_scheme",
    "gaussianity_diagnostic",
    "one_sided_pvalues",
    "root_bounds",
]

#: The bootstrap schemes, by name.
BOOTSTRAP_METHODS = ("m-out-of-n", "numerical", "nonparametric", "subsampling")

#: The m-out-of-n bootstrap draws the m rows themselves (instead of counts over the cells) when
#: the cells with audit rows outnumber m by this factor.
SPARSE_DRAW_RATIO = 8

#: Default exponents: m = ⌈n^(2/3)⌉ and ε_n = n^(-1/3).
DEFAULT_M_EXPONENT = 2.0 / 3.0
DEFAULT_STEP_EXPONENT = -1.0 / 3.0


@dataclass(frozen=True)
class BootstrapScheme:
    """A resolved bootstrap scheme for an audit sample of size n.

    Attributes
    ----------
    method : str
        One of :data:`BOOTSTRAP_METHODS`.
    n : int
        Audit sample size.
    m : int or None
        Resample size (m-out-of-n, subsampling).
    numerical_step : float or None
        ε_n of the numerical bootstrap.
    rate : float
        The normalising rate τ of the root, ``T* = τ (ψ(f*) − ψ(f_n))`` (numerical: ``1/ε_n``).
    """

    method: str
    n: int
    m: int | None
    numerical_step: float | None
    rate: float


def bootstrap_scheme(method, n, *, m=None, numerical_step=None) -> BootstrapScheme:
    """Resolve a bootstrap method and its tuning parameter for sample size ``n``.

    Parameters
    ----------
    method : {"m-out-of-n", "numerical", "nonparametric", "subsampling"}
    n : int
        Audit sample size.
    m : int, float in (0, 1), callable or None
        Resample size of the m-out-of-n bootstrap and of subsampling: an int is used as is, a
        float γ means ``m = ⌈n^γ⌉``, a callable maps n to m. Default ``⌈n^(2/3)⌉`` (so that
        ``m → ∞`` and ``m/n → 0``).
    numerical_step : float, callable or None
        ε_n of the numerical bootstrap (Hong & Li 2020): a float is used as is, a callable maps
        n to ε_n. Default ``n^(-1/3)`` (so that ``ε_n → 0`` and ``√n ε_n → ∞``).
    """
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}.")
    if not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"the audit sample must have at least 2 rows, got n={n!r}.")
    n = int(n)
    if method in ("m-out-of-n", "subsampling"):
        m_value = _resolve_m(m, n)
        if method == "subsampling" and m_value >= n:
            raise ValueError(f"subsampling needs m < n, got m={m_value} for n={n}.")
        # Subsampling draws without replacement: the finite-population factor 1 − m/n keeps the
        # root's variance on the √n scale (it matters when m/n is not small).
        factor = 1.0 - m_value / n if method == "subsampling" else 1.0
        return BootstrapScheme(method, n, m_value, None, math.sqrt(m_value / factor))
    if method == "numerical":
        step = _resolve_step(numerical_step, n)
        return BootstrapScheme(method, n, None, step, 1.0 / step)
    return BootstrapScheme(method, n, None, None, math.sqrt(n))


def _resolve_m(m, n):
    if m is None:
        value = math.ceil(n**DEFAULT_M_EXPONENT)
    elif callable(m):
        value = m(n)
    elif isinstance(m, numbers.Integral) and not isinstance(m, bool):
        value = int(m)
    elif isinstance(m, numbers.Real) and 0.0 < m < 1.0:
        value = math.ceil(n ** float(m))
    else:
        raise ValueError(
            "m must be an int, an exponent in (0, 1) (m = ceil(n**m)), a callable n -> m or None; "
            f"got {m!r}."
        )
    if not isinstance(value, numbers.Integral) or not 2 <= value <= n:
        raise ValueError(f"the resample size m must be an integer in [2, n={n}], got {value!r}.")
    return int(value)


def _resolve_step(step, n):
    value = n**DEFAULT_STEP_EXPONENT if step is None else (step(n) if callable(step) else step)
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0.0 < float(value) <= 1.0
    ):
        raise ValueError(f"numerical_step must be a number in (0, 1], got {value!r}.")
    return float(value)


@dataclass(frozen=True)
class _Root:
    """Resampled counts -> root T*; a class, not a closure, so process backends can pickle it."""

    problem: object
    frequencies: np.ndarray
    epsilon: float
    value: float
    scheme: BootstrapScheme
    rows: bool = False

    def __call__(self, counts):
        s = self.scheme
        if self.rows:
            # The resampled rows' cells themselves (m-out-of-n with m << cells).
            return s.rate * (self.problem.value_of_resamples(counts, self.epsilon) - self.value)
        # Counts and frequencies live on the problem's support (every resample does).
        counts = np.asarray(counts, dtype=float)
        if s.method == "numerical":
            # f_n + ε_n √n (f*_n − f_n) may leave the simplex: evaluate ψ through its dual.
            shift = (s.numerical_step * math.sqrt(s.n)) * (counts / s.n - self.frequencies)
            perturbed = self.problem.dual_value(
                self.frequencies + shift, self.epsilon, on_support=True
            )
            return (perturbed - self.value) / s.numerical_step
        size = s.n if s.method == "nonparametric" else s.m
        return s.rate * (
            self.problem.value(counts / size, self.epsilon, on_support=True) - self.value
        )


def bootstrap_root(
    problem,
    counts,
    epsilon,
    scheme: BootstrapScheme,
    *,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
    memory_limit=DEFAULT_MEMORY_LIMIT,
):
    """Draw the bootstrap root ``T*`` approximating the law of √n(ψ(f_n) − ψ(f*)).

    Parameters
    ----------
    problem : TransportProblem
        The prepared audit LP (``value`` and ``dual_value`` evaluate batches of frequencies).
    counts : array of shape (K,)
        Audit counts per cell (sums to n).
    epsilon : float
        Transport budget.
    scheme : BootstrapScheme
        From :func:`bootstrap_scheme`.
    memory_limit : int, float, str, None or MemoryBudget, default="2GiB"
        Budget of the replicates held at once (their resampled counts and frequencies, plus
        the chunked evaluation): batches are evaluated in chunks that fit it, with the same
        results.

    Returns
    -------
    value : float
        ψ(f_n).
    root : ndarray of shape (n_resamples,)
        The replicates of ``T*``:

        * nonparametric: ``√n (ψ(f*_n) − ψ(f_n))``, ``f*_n ~ Mult(n, f_n)/n``;
        * m-out-of-n: ``√m (ψ(f*_m) − ψ(f_n))``, ``f*_m ~ Mult(m, f_n)/m``;
        * subsampling: the same without replacement, rate ``√(m / (1 − m/n))``;
        * numerical: ``[ψ(f_n + ε_n √n (f*_n − f_n)) − ψ(f_n)] / ε_n``.
    """
    # Resamples live on the cells with audit rows: draw and evaluate on the problem's support.
    counts = np.asarray(counts)[problem.support]
    n = scheme.n
    frequencies = counts / n
    value = float(problem.value(frequencies, epsilon, on_support=True))
    # m-out-of-n with m much smaller than the cells: draw the m rows, not K counts (the same
    # law, O(m log K) instead of O(K) per replicate).
    rows = scheme.method == "m-out-of-n" and SPARSE_DRAW_RATIO * scheme.m < counts.size
    if scheme.method == "subsampling":
        draw = HypergeometricCounts(counts.astype(np.int64), scheme.m)
    elif rows:
        draw = RowCategories(counts.astype(np.int64), scheme.m)
    else:
        size = scheme.m if scheme.method == "m-out-of-n" else n
        draw = MultinomialCounts(frequencies, size)
    # A replicate holds its counts and frequencies over the support; the evaluation is
    # chunked by the problem. The batch layout keeps the width of the published results.
    width = draw.width if rows else max(counts.size, problem.n_segments)
    per_replicate = 24 * draw.width + 48 * max(problem.n_segments, 1)
    statistic = _Root(problem, frequencies, float(epsilon), value, scheme, rows)
    root = resample(
        statistic,
        draw,
        n_resamples,
        batch_size=batch_size,
        memory_limit=memory_limit,
        bytes_per_replicate=per_replicate,
        batch_width=width,
        random_state=random_state,
        n_jobs=n_jobs,
        verbose=verbose,
    )
    return value, np.asarray(root, dtype=float)


def _upper_quantile(root, level):
    """Smallest x with P*(T* ≤ x) ≥ level (the inverted empirical CDF)."""
    return float(np.quantile(root, level, method="inverted_cdf"))


def _lower_quantile(root, level):
    """Largest x with P*(T* ≥ x) ≥ level; mirrors :func:`_upper_quantile`."""
    return -float(np.quantile(-root, level, method="inverted_cdf"))


def root_bounds(value, root, n, confidence_level, alternative="two-sided"):
    """Confidence bounds on ψ(f*) from the bootstrap root.

    With ``q_a`` the quantiles of ``T*``:

    .. math::

        \\text{two-sided: } [\\psi_n - q_{1-\\alpha/2}/\\sqrt n,\\
        \\psi_n - q_{\\alpha/2}/\\sqrt n],
        \\quad \\text{lower: } \\psi_n - q_{1-\\alpha}/\\sqrt n,
        \\quad \\text{upper: } \\psi_n - q_{\\alpha}/\\sqrt n.

    The quantiles are those of the empirical CDF, so that the bounds and the p-values of
    :func:`one_sided_pvalues` give the same decisions exactly.

    Returns
    -------
    (low, high) : tuple of float
        ``-inf``/``inf`` on the open side of a one-sided bound.
    """
    alpha = 1.0 - confidence_level
    scale = math.sqrt(n)
    if alternative == "two-sided":
        low = value - _upper_quantile(root, 1.0 - alpha / 2) / scale
        high = value - _lower_quantile(root, 1.0 - alpha / 2) / scale
        return low, high
    if alternative == "greater":  # a lower bound: ψ ≥ low
        return value - _upper_quantile(root, 1.0 - alpha) / scale, math.inf
    if alternative == "less":  # an upper bound: ψ ≤ high
        return -math.inf, value - _lower_quantile(root, 1.0 - alpha) / scale
    raise ValueError(
        f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}."
    )


def one_sided_pvalues(value, root, n, delta):
    """P-values of the δ-fairness test and of its mirror, by inverting the bounds.

    * ``unfair``: H0 ψ(f*) ≤ δ (the model is δ-fair) against ψ(f*) > δ; rejected at level α
      exactly when the one-sided lower bound exceeds δ (Xue et al. 2020, eq. 4.2).
    * ``fair``: H0 ψ(f*) ≥ δ against ψ(f*) < δ; rejected (fairness certified) exactly when the
      one-sided upper bound is below δ.

    Returns
    -------
    (p_unfair, p_fair) : tuple of float
    """
    # Compare on the scale of the bounds (value − T*/√n is monotone in floating point too),
    # so that "lower bound > δ" and "p ≤ α" agree exactly, ties included.
    bounds = value - np.asarray(root) / math.sqrt(n)
    return float(np.mean(bounds <= delta)), float(np.mean(bounds >= delta))


def gaussianity_diagnostic(root):
    """The paper's check of the non-parametric bootstrap: is the root distribution Gaussian?

    Returns D'Agostino–Pearson's normality p-value (:func:`scipy.stats.normaltest`) and the
    sample skewness. A tiny p-value together with a visible skew suggests that ψ is not
    differentiable at f* (non-unique dual optimum) and that Efron's bootstrap fails there.

    Parameters
    ----------
    root : array-like of shape (n_resamples,)
        The bootstrap root (e.g. ``FaithResult.bootstrap_distribution``).

    Returns
    -------
    pvalue : float
        NaN with fewer than 20 replicates or a constant root.
    skewness : float
    """
    root = np.asarray(root, dtype=float)
    if root.size < 20 or np.ptp(root) == 0:
        return float("nan"), 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pvalue = float(stats.normaltest(root).pvalue)
    return pvalue, float(stats.skew(root))
