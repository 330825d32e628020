"""Uniformly valid inference for the FaiTH audit value: ψ is a minimum of linear functions.

By LP duality (see :meth:`TransportProblem.dual_value`) the audit value is

.. math::

    \\psi(f) = \\min_{\\lambda \\ge 0} \\ell_\\lambda(f), \\qquad
    \\ell_\\lambda(f) = \\lambda\\varepsilon + \\sum_i f_i a_i(\\lambda), \\qquad
    a_i(\\lambda) = \\max_{j \\text{ allowed}} R_{ij} - \\lambda C_{ij} \\ \\in [0, \\rho],

with ``ρ`` the spread of the loss. ``a_i`` is convex and piecewise linear with breakpoints at
the slopes of row ``i``'s hull segments, so only the finitely many *linear pieces*
``λ ∈ {distinct segment slopes} ∪ {0}`` matter. For a fixed λ, ``ℓ_λ(f_n)`` is a sample mean
of ``λε + a_Z(λ)`` over the audit rows ``Z``; a kink of ε ↦ ψ is a point where two pieces
attain the minimum. This module turns that structure into

* a lower bound ``min_λ [ℓ_λ(f_n) − z_{1−α} s_λ/√n]`` (an intersection–union test: uniformly
  valid by construction, no bootstrap);
* an upper bound ``min_{λ ∈ V̂} [ℓ_λ(f_n) + c s_λ/√n]`` with ``c`` a simultaneous (max-t)
  bootstrap critical value over an estimated contact set ``V̂`` of near-minimising pieces
  (Chernozhukov, Lee & Rosen 2013; Andrews & Soares 2010);
* the kink diagnostic: whether the confidence set of the active piece holds more than one
  piece.

Everything per frequency vector is ``O(S)`` (``S`` hull segments) through prefix sums along the
segments sorted by slope; no ``cells × pieces`` array is ever formed. The second moments
``Σ_i f_i a_i(λ)²`` use each segment's within-row start vertex: with ``g_i``, ``c_i`` the gain
and cost of the vertex that row ``i`` has reached after the segments of slope > λ,
``a_i(λ) = g_i − λ c_i`` and ``Σ f a² = Σ f g² − 2λ Σ f g c + λ² Σ f c²``, each sum telescoping
along the segments.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from threadpoolctl import ThreadpoolController

from .._resampling import (
    DEFAULT_MEMORY_LIMIT,
    MultinomialCounts,
    RowCategories,
    resample,
)
from ._inference import _upper_quantile
from ._solver import row_dot

__all__ = [
    "LinearPieces",
    "contact_threshold",
    "linear_pieces",
    "uniform_inference",
]

#: Variances of piece differences below this share of ρ² are rounding noise: the two pieces
#: coincide on the observed cells.
_IDENTICAL_PIECES_RTOL = 1e-12

#: The max-t bootstrap draws the audit rows themselves (instead of a multinomial over the
#: cells) when the cells with audit rows number more than n / ROW_DRAWS_BELOW.
ROW_DRAWS_BELOW = 4

#: Two pieces are distinct for the kink diagnostic only when the standard error of their
#: difference is at least this share of the active piece's: the minimum of two Gaussians
#: whose difference is smaller is within 0.2 standard errors of Gaussian. On continuous
#: features neighbouring pieces differ by one audit row (mass 1/n) and must not count as a
#: kink; at a kink of the population the difference stays of the order of the piece itself.
KINK_RESOLUTION = 0.5

#: |Φ⁻¹(level)| for every confidence level representable in floating point (Φ⁻¹(1e-308) ≈ −37.5).
_Z_EXTREME = 40.0


def contact_threshold(n) -> float:
    """κ_n = √(log n): the contact-set threshold, in standard errors of piece differences.

    It grows slowly, so the population's minimising pieces are in the estimated contact set
    with probability tending to one, while pieces a fixed distance above the minimum leave it
    (the BIC-type choice of Andrews & Soares 2010). ``√(log n)`` is 2.6 at ``n = 1,000`` and
    3.1 at ``n = 20,000``.
    """
    return math.sqrt(math.log(max(int(n), 3)))


# --------------------------------------------------------------------------- the pieces
@dataclass(frozen=True)
class _Pieces:
    """The candidate multipliers and, for each, how many leading segments have a larger slope.

    ``a_i(λ_t) = b_i + Σ_{s < prefix_t, row(s) = i} (dr_s − λ_t dc_s)``: the segments sorted
    by slope that lie before ``prefix_t`` are exactly those with slope > λ_t (segments of slope
    λ_t add zero).
    """

    multiplier: np.ndarray
    prefix: np.ndarray


#: Slopes within this relative distance are one piece: cost matrices from metric computations
#: give "equal" slopes that differ in the last digits, and a piece per rounding error would
#: only duplicate its neighbour.
_SLOPE_RTOL = 1e-12


def linear_pieces(problem) -> _Pieces:
    """The distinct segment slopes (descending), then 0, with their segment prefixes.

    Slopes equal up to a relative ``1e-12`` form one piece, at the group's largest slope; the
    other segments of the group then count as not taken, which changes ``a_i(λ)`` by at most
    that relative amount of their cost.
    """
    slope = np.asarray(problem.segment_slope)
    if slope.size:
        starts = np.flatnonzero(
            np.concatenate(([True], slope[1:] < slope[:-1] * (1.0 - _SLOPE_RTOL)))
        )
        multiplier = np.append(slope[starts], 0.0)
        prefix = np.append(starts, slope.size)
    else:
        multiplier, prefix = np.zeros(1), np.zeros(1, dtype=np.intp)
    return _Pieces(multiplier.astype(float), prefix.astype(np.intp))


def _prefix_sums(weights, values):
    """``out[:, e] = Σ_{s < e} weights[:, s] * values[s]`` for ``e = 0..S`` (leading zero)."""
    out = np.zeros((weights.shape[0], weights.shape[1] + 1))
    np.cumsum(weights * values, axis=1, out=out[:, 1:])
    return out


def _segment_start_vertices(problem):
    """Gain and cost of each segment's start vertex within its row (the row's hull path)."""
    rows = np.asarray(problem.segment_row)
    n_seg = rows.size
    if not n_seg:
        return np.empty(0), np.empty(0)
    # Segments of a row appear in hull order along the slope order (strictly decreasing slopes
    # within a row), so a stable sort by row keeps that order.
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    first = np.concatenate(([True], sorted_rows[1:] != sorted_rows[:-1]))
    gain_start = np.empty(n_seg)
    cost_start = np.empty(n_seg)
    for start, values, base in (
        (gain_start, problem.segment_gain, problem.base_gain[sorted_rows]),
        (cost_start, problem.segment_cost, np.zeros(n_seg)),
    ):
        v = np.asarray(values)[order]
        before = np.cumsum(v) - v
        # Subtract what earlier rows accumulated: the running total at each row's first segment.
        offset = np.maximum.accumulate(np.where(first, before, -np.inf))
        start[order] = base + before - offset
    return gain_start, cost_start


@dataclass(frozen=True)
class _SquareIncrements:
    """Per-segment increments of ``g²``, ``g c`` and ``c²`` along each row's hull path."""

    gain2: np.ndarray
    gain_cost: np.ndarray
    cost2: np.ndarray

    @classmethod
    def of(cls, problem):
        gain_start, cost_start = _segment_start_vertices(problem)
        gain_end = gain_start + problem.segment_gain
        cost_end = cost_start + problem.segment_cost
        return cls(
            gain_end**2 - gain_start**2,
            gain_end * cost_end - gain_start * cost_start,
            cost_end**2 - cost_start**2,
        )


def common_weights(problem, pieces: _Pieces, subset=None, squares=None, on_support=False):
    """Per-row weights of the segments that every wanted piece takes, summed once.

    The segments before the smallest prefix of the wanted pieces count in every piece: their
    contributions to ``Σ_i f_i a_i(λ_t)`` and ``Σ_i f_i a_i(λ_t)²`` are ``f · w`` for a few
    fixed vectors ``w`` (with the base gains), so a batch of frequency vectors needs only
    those dot products and the prefix sums of the segments in between. The vectors do not
    depend on ``f``: a bootstrap computes them once (:class:`_MaxT`).

    Returns
    -------
    dict of ndarray
        ``gain``, ``cost`` (and with ``squares``: ``gain2``, ``gain_cost``, ``cost2``), each of
        shape ``(K,)`` or, with ``on_support``, ``(n_support,)``.
    """
    index = np.arange(pieces.multiplier.size) if subset is None else np.asarray(subset)
    prefix = pieces.prefix[index]
    start = int(prefix.min()) if prefix.size else 0
    rows = problem.segment_position if on_support else problem.segment_row
    width = problem.support.size if on_support else problem.n_cells
    b = np.asarray(problem.base_gain, dtype=float)
    if on_support:
        b = b[problem.support]

    def taken(increments):
        return np.bincount(rows[:start], weights=increments[:start], minlength=width)

    out = {"gain": b + taken(problem.segment_gain), "cost": taken(problem.segment_cost)}
    if squares is not None:
        out.update(gain2=b**2 + taken(squares.gain2), gain_cost=taken(squares.gain_cost),
                   cost2=taken(squares.cost2))
    return out


def piece_moments(problem, pieces: _Pieces, f, subset=None, squares=None, on_support=False,
                  common=None, dots=None):
    """Mean and second moment of ``a_Z(λ_t)`` under frequency vectors ``f``.

    Parameters
    ----------
    f : array of shape (K,) or (B, K)
        Frequency vectors (each summing to one); with ``on_support``, of shape
        ``(n_support,)`` or ``(B, n_support)``, over ``problem.support`` only (resamples of the
        audit counts never leave it).
    subset : array of int, optional
        The pieces wanted (default all).
    squares : _SquareIncrements, optional
        Needed for the second moment; without it only the mean is computed.
    on_support : bool
        Whether ``f`` holds only the frequencies of the cells in ``problem.support``.
    common : dict, optional
        :func:`common_weights` of the same arguments, when the caller keeps them.
    dots : dict, optional
        ``f · common[name]`` for every name, when the caller computed them (a bootstrap
        batch does it in one matrix product).

    Returns
    -------
    m1, m2 : ndarray of shape (B, T')
        ``Σ_i f_i a_i(λ_t)`` and ``Σ_i f_i a_i(λ_t)²`` (``m2`` is None without ``squares``).
        ``O(B (K + W))`` time besides :func:`common_weights`, ``W`` the segments between the
        smallest and the largest prefix of the wanted pieces: only those are prefix-summed.
    """
    f = np.atleast_2d(np.asarray(f, dtype=float))
    index = np.arange(pieces.multiplier.size) if subset is None else np.asarray(subset)
    lam, prefix = pieces.multiplier[index], pieces.prefix[index]
    end = int(prefix.max()) if prefix.size else 0
    start = int(prefix.min()) if prefix.size else 0
    if dots is None:
        if common is None:
            common = common_weights(problem, pieces, subset, squares, on_support)
        dots = {name: row_dot(f, weights) for name, weights in common.items()}
    rows = problem.segment_position if on_support else problem.segment_row
    mass = f[:, rows[start:end]]

    def summed(name, increments):
        return (dots[name][:, None]
                + _prefix_sums(mass, increments[start:end])[:, prefix - start])

    m1 = summed("gain", problem.segment_gain) - lam * summed("cost", problem.segment_cost)
    if squares is None:
        return m1, None
    m2 = (
        summed("gain2", squares.gain2)
        - 2.0 * lam * summed("gain_cost", squares.gain_cost)
        + lam**2 * summed("cost2", squares.cost2)
    )
    return m1, m2


def regularised_se(m1, m2, n, spread):
    """``s/√n`` with ``s² = (n (m2 − m1²) + ρ²) / (n − 1)``, ``ρ`` half the loss spread."""
    variance = np.maximum(m2 - m1**2, 0.0)
    return np.sqrt((n * variance + (0.5 * spread) ** 2) / ((n - 1) * n))


def _row_values(problem, pieces: _Pieces, t) -> np.ndarray:
    """``a_i(λ_t)`` for every row ``i`` (a K-vector), ``O(S + K)``."""
    end, lam = int(pieces.prefix[t]), float(pieces.multiplier[t])
    add = np.bincount(
        problem.segment_row[:end],
        weights=problem.segment_gain[:end] - lam * problem.segment_cost[:end],
        minlength=problem.n_cells,
    )
    return np.asarray(problem.base_gain, dtype=float) + add


def cross_moments(problem, pieces: _Pieces, f, reference) -> np.ndarray:
    """``Σ_i f_i a_i(λ_t) a_i(λ_r)`` for every piece ``t`` and one reference piece ``r``."""
    phi = np.asarray(f, dtype=float) * _row_values(problem, pieces, reference)
    weight = phi[problem.segment_row][None, :]
    g = _prefix_sums(weight, problem.segment_gain)[0, pieces.prefix]
    c = _prefix_sums(weight, problem.segment_cost)[0, pieces.prefix]
    return phi @ problem.base_gain + g - pieces.multiplier * c


# --------------------------------------------------------------------------- bootstrap
@dataclass(frozen=True)
class _MaxT:
    """Resampled counts -> ``max_{t ∈ V̂} (ℓ̂_t − ℓ_t(f*)) / se*_t`` (picklable).

    ``se*_t`` is the regularised standard error of the replicate itself (a bootstrap-t): the
    critical value then also corrects for the skewness of ``a_Z(λ)``, which matters for the
    0-1 loss at ``n`` in the low thousands.
    """

    problem: object
    pieces: _Pieces
    subset: np.ndarray
    means: np.ndarray
    squares: _SquareIncrements
    spread: float
    n: int
    common: dict | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.common is None:  # the weights every replicate shares, computed once
            object.__setattr__(self, "common", common_weights(
                self.problem, self.pieces, self.subset, self.squares, on_support=True))
        object.__setattr__(self, "_weights", np.column_stack(list(self.common.values())))

    def __call__(self, counts):
        f = np.asarray(counts, dtype=float) / self.n  # over problem.support
        # Every shared dot product in one pass over the batch. One BLAS thread: the bits
        # then depend on the batch alone, not on how many threads a joblib worker has.
        with _blas().limit(limits=1, user_api="blas"):
            products = f @ self._weights
        dots = {name: products[:, k] for k, name in enumerate(self.common)}
        m1, m2 = piece_moments(self.problem, self.pieces, f, self.subset, self.squares,
                               on_support=True, dots=dots)
        se = regularised_se(m1, m2, self.n, self.spread)
        return np.max(_standardise(self.means - m1, se), axis=1)


@functools.cache
def _blas():
    """The process's thread-pool controller (finding the BLAS libraries once)."""
    return ThreadpoolController()


def _standardise(deviation, se):
    """``deviation / se``; ``±inf`` where ``se = 0 ≠ deviation`` and 0 where both vanish."""
    deviation = np.asarray(deviation, dtype=float)
    se = np.broadcast_to(se, deviation.shape)
    out = np.zeros(deviation.shape)
    positive = se > 0
    np.divide(deviation, se, out=out, where=positive)
    degenerate = ~positive & (deviation != 0)
    out[degenerate] = np.sign(deviation[degenerate]) * np.inf
    return out


# --------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class LinearPieces:
    """The linear pieces of ψ behind the uniformly valid FaiTH bounds.

    ``ψ(f) = min_λ ℓ_λ(f)`` with ``ℓ_λ(f) = λε + Σ_i f_i a_i(λ)`` linear in the cell
    frequencies (see :func:`~skfair_audit.faith.faith_audit`, Notes). An audit keeps the pieces
    that can matter for its bounds at any level: the lower convex hull of the points
    ``(standard error, value)``, the estimated contact set and the confidence set of the active
    piece.

    Attributes
    ----------
    multipliers : ndarray of shape (m,)
        The budget multipliers λ of the kept pieces (descending).
    values : ndarray of shape (m,)
        Their estimates ``ℓ_λ(f_n)``; ``ψ(f_n) = min`` over all pieces.
    standard_errors : ndarray of shape (m,)
        ``s_λ / √n``, with ``s_λ² = (Σ_rows (a_Z(λ) − mean)² + ρ²) / (n − 1)``: the sample
        variance of ``a_Z(λ)`` regularised by ``ρ² / (n − 1)`` (``ρ`` half the loss spread),
        which keeps it positive on samples where every row has the same ``a_Z(λ)``.
    in_contact_set : ndarray of bool, shape (m,)
        The estimated contact set ``V̂``: pieces whose excess over the smallest estimate is at
        most ``contact_threshold`` standard errors of the difference.
    plausibly_active : ndarray of bool, shape (m,)
        The pieces whose excess over the smallest estimate is at most ``z_{1−α/2}`` standard
        errors of the difference, and whose difference from it is material (its standard
        error at least ``KINK_RESOLUTION = 0.5`` times the smallest piece's): a confidence
        set for the active piece at the audit's level, up to pieces that differ by a
        negligible share of the audit (on continuous features, one row).
    max_t : ndarray of shape (B,) or None
        Bootstrap replicates of ``max_{λ ∈ V̂} (ℓ_λ(f_n) − ℓ_λ(f*_n)) / se*_λ`` with
        ``f*_n ~ Mult(n, f_n)/n`` and ``se*_λ`` the standard error of the replicate (a
        studentized max-t); ``None`` when the audit used a pointwise bootstrap.
    contact_threshold : float
        κ_n of the contact set (see :func:`contact_threshold`).
    n_pieces : int
        Number of linear pieces of the audit problem (distinct segment slopes, plus λ = 0).
    value_range : tuple of float
        ``(0, max(loss) − min(loss))``, where ψ always lies; the bounds are clipped to it.
    """

    multipliers: np.ndarray
    values: np.ndarray
    standard_errors: np.ndarray
    in_contact_set: np.ndarray
    plausibly_active: np.ndarray
    max_t: np.ndarray | None = field(repr=False)
    contact_threshold: float
    n_pieces: int
    value_range: tuple

    @property
    def near_kink(self) -> bool:
        """Whether the confidence set of the active piece holds more than one piece."""
        return bool(np.count_nonzero(self.plausibly_active) > 1)

    def lower_bound(self, level) -> float:
        """``min_λ [ℓ_λ(f_n) − z_level se_λ]``: a lower confidence bound at ``level``.

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        float
        """
        z = float(stats.norm.ppf(level))
        return max(float(np.min(self.values - z * self.standard_errors)), self.value_range[0])

    def _upper_replicates(self):
        if self.max_t is None:
            raise ValueError(
                "the simultaneous upper bound needs the max-t bootstrap of method='uniform'."
            )
        contact = self.in_contact_set
        values, se = self.values[contact], self.standard_errors[contact]
        # Each replicate's critical value turned into a bound: non-decreasing in max_t, so
        # quantiles of these are the bounds at the matching quantile of max_t.
        return np.min(values[None, :] + self.max_t[:, None] * se[None, :], axis=1)

    def critical_value(self, level) -> float:
        """The simultaneous critical value ``c``: the ``level`` quantile of ``max_t``.

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        float
        """
        if self.max_t is None:
            raise ValueError("no max-t bootstrap: the audit used a pointwise bootstrap.")
        return _upper_quantile(self.max_t, level)

    def upper_bound(self, level) -> float:
        """``min_{λ ∈ V̂} [ℓ_λ(f_n) + c_level se_λ]``: an upper confidence bound at ``level``.

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        float
        """
        return min(_upper_quantile(self._upper_replicates(), level), self.value_range[1])

    def pvalues(self, delta, confidence_level):
        """P-values of the δ-test (H0 ψ ≤ δ) and of its mirror (H0 ψ ≥ δ).

        * ``ψ ≤ δ``: the intersection–union p-value ``max_λ Φ(−(ℓ_λ(f_n) − δ)/se_λ)``: it is
          at most α exactly when the lower bound at level 1 − α exceeds δ.
        * ``ψ ≥ δ``: the share of bootstrap bounds ``min_{λ ∈ V̂}(ℓ_λ + max_t* se_λ)`` at or
          above δ: at most α exactly when the upper bound at level 1 − α is below δ.

        Where a rounding error could make the p-value and the bound disagree at the audit's
        ``confidence_level`` (δ on the bound, to the last digit), the bound decides: a tie is
        not a rejection. ``delta`` must lie in ``value_range`` (then clipping the bounds to it
        changes no decision).

        Parameters
        ----------
        delta : float
            The fairness threshold δ.
        confidence_level : float
            Level of the audit's bounds; the tests have level ``1 − confidence_level``.

        Returns
        -------
        p_unfair, p_fair : float
            P-values of H0 ψ ≤ δ and of H0 ψ ≥ δ.
        """
        alpha = 1.0 - confidence_level
        excess = self.values - delta
        ratio = _standardise(excess, self.standard_errors)
        # A piece known exactly (se = 0) that sits on δ is no evidence against ψ ≤ δ.
        ratio[(self.standard_errors == 0) & (excess == 0)] = -np.inf
        p_unfair = float(stats.norm.sf(np.min(ratio)))
        rejected = self.lower_bound(confidence_level) > delta
        if rejected and p_unfair > alpha:
            p_unfair = alpha
        elif not rejected and p_unfair <= alpha:
            p_unfair = float(np.nextafter(alpha, 1.0))
        p_fair = float(np.mean(self._upper_replicates() >= delta))
        return p_unfair, p_fair


def _lower_hull(x, y):
    """Indices of the vertices of the lower convex hull of the points ``(x, y)``: the
    minimisers of ``y − z x`` over all real ``z``."""
    order = np.lexsort((y, x))
    hull = []
    for k in order.tolist():
        if hull and x[hull[-1]] == x[k]:
            continue  # same x, larger y: never a minimiser
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            # Pop j unless i -> j -> k turns strictly left (counter-clockwise).
            if (x[j] - x[i]) * (y[k] - y[i]) - (y[j] - y[i]) * (x[k] - x[i]) <= 0:
                hull.pop()
            else:
                break
        hull.append(k)
    return np.array(hull, dtype=np.intp)


def uniform_inference(
    problem,
    counts,
    epsilon,
    *,
    confidence_level=0.95,
    bootstrap=True,
    n_resamples=1000,
    batch_size=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
    threshold=None,
    memory_limit=DEFAULT_MEMORY_LIMIT,
):
    """The linear pieces of ψ at ``f_n``, their contact set and (optionally) the max-t bootstrap.

    Parameters
    ----------
    problem : TransportProblem
        Only its public arrays are used (base gains, segments sorted by slope, loss).
    counts : ndarray of shape (K,)
        Audit counts per cell (sums to n ≥ 2).
    epsilon : float
        Transport budget.
    confidence_level : float
        Level of the kink diagnostic's confidence set.
    bootstrap : bool
        Draw the max-t bootstrap over the contact set (needed by the upper bound).
    n_resamples, batch_size, random_state, n_jobs, verbose
        Resampling engine controls (:func:`skfair_audit._resampling.resample`).
    threshold : float, optional
        κ_n of the contact set; default :func:`contact_threshold`.
    memory_limit : int, float, str, None or MemoryBudget, default="2GiB"
        Budget of the replicates held at once (see ``FaithAuditor``): batches are evaluated in
        chunks that fit it, with the same results.

    Returns
    -------
    value : float
        ``ψ(f_n)``, the smallest piece.
    pieces : LinearPieces
    """
    counts = np.asarray(counts)
    n = int(counts.sum())
    f = counts / n
    pieces = linear_pieces(problem)
    squares = _SquareIncrements.of(problem)
    m1, m2 = (m[0] for m in piece_moments(problem, pieces, f, squares=squares))
    values = epsilon * pieces.multiplier + m1
    spread = float(np.ptp(problem.loss)) if np.size(problem.loss) else 0.0
    variance = np.maximum(m2 - m1**2, 0.0)
    se = regularised_se(m1, m2, n, spread)

    # Differences to the smallest estimate (the first minimiser: the largest λ among ties).
    best = int(np.argmin(values))
    cov = cross_moments(problem, pieces, f, best) - m1 * m1[best]
    diff_var = np.maximum(variance + variance[best] - 2.0 * cov, 0.0)
    diff_var[diff_var <= _IDENTICAL_PIECES_RTOL * max(spread**2, np.finfo(float).tiny)] = 0.0
    diff_se = np.sqrt(diff_var / n)
    excess = values - values[best]
    kappa = contact_threshold(n) if threshold is None else float(threshold)
    contact = excess <= kappa * diff_se
    contact[best] = True
    z_diag = float(stats.norm.ppf(0.5 + 0.5 * confidence_level))
    plausible = (excess <= z_diag * diff_se) & (diff_se > 0) & (
        diff_se >= KINK_RESOLUTION * se[best])
    plausible[best] = True

    # The lower bound at any level in (0, 1) is a minimum over the lower convex hull of the
    # points (se, value); only pieces within the reach of the most extreme levels
    # (|z| <= _Z_EXTREME) can be on the part of it that matters, so the hull is taken there.
    window = np.flatnonzero(values - _Z_EXTREME * se <= values[best] + _Z_EXTREME * se[best])
    keep = np.zeros(values.size, dtype=bool)
    keep[window[_lower_hull(se[window], values[window])]] = True
    keep |= contact | plausible
    index = np.flatnonzero(keep)

    max_t = None
    if bootstrap:
        subset = np.flatnonzero(contact)
        statistic = _MaxT(problem, pieces, subset, m1[subset], squares, spread, n)
        # Resamples live on the cells with audit rows: draw and evaluate on the support.
        f_support = f[problem.support]
        # Many distinct rows with few audit rows each (continuous features): drawing the n
        # rows and counting them beats numpy's chain of one binomial per cell. Same law.
        draw = (RowCategories(counts[problem.support].astype(np.int64), n, tally=True)
                if f_support.size * ROW_DRAWS_BELOW > n else MultinomialCounts(f_support, n))
        segments = int(pieces.prefix[subset].max()) + 1

        # counts and frequencies over the support; the mass and its prefix sums
        per_replicate = 8 * (3 * f_support.size + 6 * segments)
        max_t = np.asarray(
            resample(
                statistic,
                draw,
                n_resamples,
                batch_size=batch_size,
                memory_limit=memory_limit,
                bytes_per_replicate=per_replicate,
                batch_width=3 * max(f_support.size, segments),
                random_state=random_state,
                n_jobs=n_jobs,
                verbose=verbose,
            ),
            dtype=float,
        )
    pieces_out = LinearPieces(
        multipliers=pieces.multiplier[index],
        values=values[index],
        standard_errors=se[index],
        in_contact_set=contact[index],
        plausibly_active=plausible[index],
        max_t=max_t,
        contact_threshold=kappa,
        n_pieces=int(values.size),
        value_range=(0.0, spread),
    )
    return float(values[best]), pieces_out
