"""Audits over every monotone tilt of one covariate (Cherian & Candès 2024, §5).

The class: every tilt :math:`0 \\le w \\le 1` that is non-decreasing (or non-increasing) in
the covariate :math:`x` and constant within the cells of a grid on :math:`x` (the distinct
values, or quantile bins). At the sample level such a tilt is a vector
:math:`0 \\le w_1 \\le \\dots \\le w_m \\le 1` over the :math:`m` cells sorted by :math:`x`:
a simplex whose vertices are :math:`0` and the half-lines :math:`H_k = \\{x \\ge t_k\\}`
(:math:`\\{x \\le t_k\\}` when decreasing); every monotone tilt is a mixture of half-lines.

Supremum of the bound process (notation of :mod:`~skfair_audit.group._tilts`). For a fixed
:math:`e`, :math:`(A_b(w) - e\\Delta_b(w))/r(w)` is quasi-convex in :math:`w` (linear over
concave). On the slice :math:`\\{\\hat\\epsilon(w) = e\\}` — a hyperplane section of the
simplex, whose vertices lie on its edges — the bound process
:math:`T_b(w)/s(w) = (A_b(w) - \\hat\\epsilon(w)\\Delta_b(w))/r(w)` is that function, so its
supremum over the class is attained **on an edge** :math:`[H_j, H_k]`: ``method="exact"``
maximises it over every pair of half-lines. Along an edge, with :math:`u = M(w)` the mass,
:math:`A_b`, :math:`\\Delta_b` and :math:`N` are affine in :math:`u`, :math:`T_b` is a
quadratic :math:`t_2u^2 + t_1u + t_0`, and the stationary points of
:math:`T_b/(u\\,r(u))` are the roots of

.. math::

    t_2u^3 + (2t_2p^* - t_1)u^2 - 3t_0u - 2t_0p^* = 0 \\quad (\\text{rescaled}),\\qquad
    u^2 = t_0/t_2 \\quad (\\text{unscaled}),

so each edge costs a cubic: :math:`O(n \\log n + B m^2)` in all.

``method="relaxed"`` bounds :math:`\\hat\\epsilon(w)` by the range :math:`[e_-, e_+]` of the
half-lines' estimates (it contains every mixture's, a weighted average of them): the
supremum over :math:`w` and :math:`e \\in [e_-, e_+]` of the linear statistic is attained
at a half-line and an end of the range, :math:`O(n \\log n + B m)` by prefix sums. It is
conservative (a larger critical value): the benchmark ``bench_tilt_validity.py`` measures by
how much.

The disparity of a mixture of half-lines is a weighted average of theirs, so the worst
tilted disparity of the class is that of a half-line: the rows of the result's table (the
half-lines) carry the verdict for the whole class.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import (
    ARRAY_LIKE,
    PROBABILITY,
    STRING,
    Interval,
    Options,
    validate_params,
)
from ._metrics import as_array
from ._protocol import BOUND_SIDES
from ._summary import (
    ALTERNATIVES,
    BOOTSTRAP_CONSTRAINTS,
    TARGET,
    AuditSummary,
    resolve_metric,
)
from ._tilts import (
    TILT_SCALES,
    TiltAuditResult,
    TiltBound,
    calibrate,
    cell_sums,
    effective_size,
    replicate_cell_sums,
    scale_factor,
    summary_sd,
    tilt_bounds,
)

DIRECTIONS = ("increasing", "decreasing", "both")
#: ``method="auto"`` maximises over every edge up to this many cells.
MAX_EXACT_CELLS = 128
#: Pair-replicate products evaluated at once by the exact statistic (memory bound).
_PAIR_CHUNK = 1 << 18


def covariate_cells(x, rows, bins):
    """Cells of a covariate on the audit sample: its distinct values or quantile bins.

    Parameters
    ----------
    x : ndarray of shape (n_rows,)
    rows : ndarray of bool
        The audit sample.
    bins : None, int or array-like
        None: every distinct value; int: at most that many quantile bins (every distinct
        value when there are fewer); array: increasing edges covering the audit sample
        (cell k is ``[edges[k], edges[k+1])``, the last one closed).

    Returns
    -------
    cell_of_row : ndarray of int64
        Cell of every row (0 off the audit sample); empty cells are dropped.
    low, high : ndarray
        Smallest and largest value of ``x`` in every cell.
    cuts : ndarray
        The ``m - 1`` cut points: cell k holds ``cuts[k-1] <= x < cuts[k]`` (the quantile
        bins' or the given edges; midpoints between distinct values).
    """
    xs = x[rows]
    if xs.size == 0:
        raise ValueError("no row of the audit sample: the metric's condition never holds.")
    if bins is None or isinstance(bins, numbers.Integral):
        levels, inverse = np.unique(xs, return_inverse=True)
        if bins is None or levels.size <= bins:
            cell = inverse.ravel()
            edges = np.concatenate([[-np.inf], (levels[1:] + levels[:-1]) / 2, [np.inf]])
        else:
            edges = np.unique(np.quantile(xs, np.linspace(0.0, 1.0, int(bins) + 1)))
            cell = np.searchsorted(edges[1:-1], xs, side="right")
    else:
        edges = np.asarray(bins, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bins must be None, a positive int or increasing edges.")
        if xs.min() < edges[0] or xs.max() > edges[-1]:
            raise ValueError(
                f"the edges [{edges[0]:g}, {edges[-1]:g}] do not cover the covariate "
                f"([{xs.min():g}, {xs.max():g}] on the audit sample).")
        cell = np.searchsorted(edges[1:-1], xs, side="right")
    used, cell = np.unique(cell, return_inverse=True)
    cell = cell.ravel()
    m = used.size
    low = np.full(m, np.inf)
    high = np.full(m, -np.inf)
    np.minimum.at(low, cell, xs)
    np.maximum.at(high, cell, xs)
    cell_of_row = np.zeros(x.shape[0], dtype=np.int64)
    cell_of_row[rows] = cell
    # the cut below each used cell but the first (empty cells merge into their neighbour)
    cuts = np.asarray(edges, dtype=float)[used[1:]]
    return cell_of_row, low, high, cuts


def half_line_sums(per_cell, direction):
    """Sums over the half-lines of the cells: suffix sums (``"increasing"``: vertex k holds
    the cells ``>= k``) or prefix sums (``"decreasing"``: the cells ``<= k``)."""
    per_cell = np.asarray(per_cell, dtype=float)
    if direction == "increasing":
        return np.cumsum(per_cell[..., ::-1], axis=-1)[..., ::-1]
    return np.cumsum(per_cell, axis=-1)


def _edge_candidates(t2, t1, t0, p_star, scale):
    """Stationary points of :math:`(t_2u^2 + t_1u + t_0)/(u\\,r(u))` (real parts of the
    roots; a complex root only adds a harmless candidate), shape ``(..., k)``."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if scale == "unscaled":
            ratio = t0 / t2
            return np.where(ratio > 0, np.sqrt(np.abs(ratio)), np.nan)[..., None]
        c3, c2, c1, c0 = t2, 2 * t2 * p_star - t1, -3 * t0, -2 * t0 * p_star
        size = np.maximum.reduce([np.abs(c3), np.abs(c2), np.abs(c1), np.abs(c0)])
        size = np.where(size > 0, size, 1.0)
        a, b, c, d = c3 / size, c2 / size, c1 / size, c0 / size
        roots = _cubic_roots(a, b, c, d)
        # two Newton steps on the cubic polish the closed-form roots
        for _ in range(2):
            value = ((a[..., None] * roots + b[..., None]) * roots + c[..., None]) * roots \
                + d[..., None]
            slope = (3 * a[..., None] * roots + 2 * b[..., None]) * roots + c[..., None]
            step = np.where(np.abs(slope) > 1e-300, value / slope, 0.0)
            roots = np.where(np.isfinite(step), roots - step, roots)
        return roots


def _cubic_roots(a, b, c, d):
    """Real parts of the roots of :math:`au^3 + bu^2 + cu + d` (vectorised; a quadratic or
    linear equation where ``a`` vanishes), shape ``(..., 3)``, NaN where undefined."""
    cubic = np.abs(a) > 1e-9
    a_safe = np.where(cubic, a, 1.0)
    B, C, D = b / a_safe, c / a_safe, d / a_safe
    p = C - B**2 / 3.0
    q = 2.0 * B**3 / 27.0 - B * C / 3.0 + D
    disc = (q / 2.0) ** 2 + (p / 3.0) ** 3
    # three real roots (trigonometric form) where disc <= 0
    mag = 2.0 * np.sqrt(np.clip(-p / 3.0, 0.0, None))
    denom = np.where(mag > 0, p * mag, 1.0)
    angle = np.arccos(np.clip(np.where(mag > 0, 3.0 * q / denom, 0.0), -1.0, 1.0)) / 3.0
    trig = np.stack([mag * np.cos(angle - 2.0 * np.pi * k / 3.0) for k in range(3)], axis=-1)
    # one real root (Cardano) where disc > 0
    root = np.sqrt(np.clip(disc, 0.0, None))
    single = np.cbrt(-q / 2.0 + root) + np.cbrt(-q / 2.0 - root)
    depressed = np.where((disc <= 0)[..., None], trig, single[..., None])
    cubic_roots = depressed - (B / 3.0)[..., None]
    # the quadratic b u^2 + c u + d (or linear c u + d) where a vanishes
    quad = np.abs(b) > 1e-12
    b_safe = np.where(quad, b, 1.0)
    sq = np.sqrt(np.clip(c**2 - 4 * b * d, 0.0, None))
    c_safe = np.where(np.abs(c) > 1e-300, c, np.nan)
    lower_degree = np.stack([
        np.where(quad, (-c + sq) / (2 * b_safe), -d / c_safe),
        np.where(quad, (-c - sq) / (2 * b_safe), np.nan),
        np.full(np.shape(a), np.nan),
    ], axis=-1)
    return np.where(cubic[..., None], cubic_roots, lower_degree)


def edge_maxima(t2, t1, t0, lo, hi, *, scale, sd, p_star):
    """:math:`\\max_{u \\in [lo, hi]} (t_2u^2 + t_1u + t_0)/(u\\,r(u))` elementwise."""
    candidates = np.concatenate([lo[..., None] * np.ones_like(t2)[..., None],
                                 hi[..., None] * np.ones_like(t2)[..., None],
                                 _edge_candidates(t2, t1, t0, p_star, scale)], axis=-1)
    u = np.clip(np.nan_to_num(candidates, nan=hi[..., None] * np.ones_like(t2)[..., None]),
                lo[..., None], hi[..., None])
    with np.errstate(invalid="ignore", divide="ignore"):
        values = ((t2[..., None] * u + t1[..., None]) * u + t0[..., None]) / (
            u * scale_factor(u, scale=scale, sd=sd, p_star=p_star))
    return np.nanmax(values, axis=-1)


@dataclass(frozen=True, eq=False)
class MonotoneProcess:
    """Bootstrap suprema of the bound process over monotone tilts (a statistic of
    :class:`~skfair_audit.group._bootstrap.ReplicateSums`).

    Returns ``(size, 2)``: :math:`\\sup_w T_b(w)/s(w)` and :math:`\\sup_w -T_b(w)/s(w)`
    (at least 0: the zero tilt), exactly over every edge or by the relaxation.
    """

    mass: np.ndarray
    centred: np.ndarray
    n: int
    directions: tuple
    scale: str
    sd: float
    p_star: float
    method: str
    estimate_range: tuple = (0.0, 0.0)
    _pairs: tuple = field(default=None, repr=False)

    def __post_init__(self):
        if self.method == "exact":
            object.__setattr__(self, "_pairs", np.triu_indices(self.mass.size, k=1))

    def replicate_cost(self, stats):
        """``(bytes_per_replicate, batch_width, fixed_bytes)`` (memory rule of
        :mod:`skfair_audit._resampling`). Bytes: the replicate sums, eight float arrays over
        the ``m`` cells (:math:`\\Delta_b`, :math:`A_b`, the half-line sums, the values and
        their negation) and, exact, ten over the ``m(m-1)/2`` edges (the vertex values at
        both estimates and their bounds, in chunks of at most ``_PAIR_CHUNK`` entries).
        Width: eight floats over the atoms or cells, plus the ``m^2`` pairs when exact.
        No fixed part."""
        m = self.mass.size
        pairs = m * (m - 1) // 2 if self.method == "exact" else 0
        per_replicate = stats.replicate_sums_bytes + 8 * (8 * m + 10 * pairs)
        return per_replicate, 8 * (max(stats.n_atoms, m) + (m * m if pairs else 0)), 0

    def vertices(self, direction):
        """Mass, centred sum, estimate and :math:`r` of the half-lines of a direction."""
        mass = half_line_sums(self.mass, direction)
        centred = half_line_sums(self.centred, direction)
        return mass, centred, centred / mass, scale_factor(
            mass, scale=self.scale, sd=self.sd, p_star=self.p_star)

    def __call__(self, replicates):
        delta, shift = replicate_cell_sums(replicates, self.mass, self.centred, self.n)
        out = np.zeros((replicates.size, 2))
        for direction in self.directions:
            mass, centred, estimate, factor = self.vertices(direction)
            A, D = half_line_sums(shift, direction), half_line_sums(delta, direction)
            if self.method == "relaxed":
                for e in self.estimate_range:
                    value = (A - e * D) / factor
                    out[:, 0] = np.maximum(out[:, 0], value.max(axis=1))
                    out[:, 1] = np.maximum(out[:, 1], (-value).max(axis=1))
                continue
            value = (A - estimate * D) / factor
            out[:, 0] = np.maximum(out[:, 0], value.max(axis=1))
            out[:, 1] = np.maximum(out[:, 1], (-value).max(axis=1))
            self._edges(out, A, D, mass, centred, estimate, factor)
        return out

    def _edges(self, out, A, D, mass, centred, estimate, factor):
        """Maximise over every edge whose cheap bound exceeds the best value so far.

        At fixed :math:`e` the statistic is quasi-convex along the edge, and the estimate
        stays between the two vertices' estimates: the edge's maximum is at most the largest
        of :math:`(A - e\\Delta)/r` at its two vertices for :math:`e` at either estimate, so
        only the edges whose bound beats the best vertex need the cubic.
        """
        j, k = self._pairs
        if j.size == 0:
            return
        keep = np.abs(mass[j] - mass[k]) > 1e-15 * mass.max()
        j, k = j[keep], k[keep]
        step = max(1, _PAIR_CHUNK // max(A.shape[0], 1))
        for start in range(0, j.size, step):
            J, K = j[start:start + step], k[start:start + step]
            at_j = [(A[:, J] - e * D[:, J]) / factor[J] for e in (estimate[J], estimate[K])]
            at_k = [(A[:, K] - e * D[:, K]) / factor[K] for e in (estimate[K], estimate[J])]
            for side, sign in ((0, 1.0), (1, -1.0)):
                bound = np.maximum.reduce([sign * v for v in (*at_j, *at_k)])
                rows, pairs = np.nonzero(bound > out[:, side][:, None])
                if rows.size == 0:
                    continue
                best = self._edge_values(A[rows, J[pairs]], A[rows, K[pairs]],
                                         D[rows, J[pairs]], D[rows, K[pairs]],
                                         mass, centred, J[pairs], K[pairs], sign)
                np.maximum.at(out[:, side], rows, best)

    def _edge_values(self, a_j, a_k, d_j, d_k, mass, centred, J, K, sign):
        """Exact maxima along the edges :math:`[H_J, H_K]` (one per entry)."""
        width = mass[J] - mass[K]

        def affine(at_j, at_k):
            slope = (at_j - at_k) / width
            return at_k - slope * mass[K], slope

        n0, n1 = affine(centred[J], centred[K])
        a0, a1 = affine(a_j, a_k)
        d0, d1 = affine(d_j, d_k)
        t2, t1, t0 = a1 - n1 * d1, a0 - n0 * d1 - n1 * d0, -n0 * d0
        return edge_maxima(sign * t2, sign * t1, sign * t0, np.minimum(mass[J], mass[K]),
                           np.maximum(mass[J], mass[K]), scale=self.scale, sd=self.sd,
                           p_star=self.p_star)


def _names(direction, low, high, name):
    if direction == "increasing":
        return [f"{name} >= {v:.6g}" for v in low]
    return [f"{name} <= {v:.6g}" for v in high]


@dataclass(frozen=True, eq=False)
class MonotoneTiltResult(TiltAuditResult):
    """Bounds simultaneous over every monotone tilt of one covariate.

    The rows (:meth:`table`, :meth:`to_frame`) are the extreme tilts, the half-lines
    :math:`\\{x \\ge t\\}` (increasing) and :math:`\\{x \\le t\\}` (decreasing); any monotone
    tilt can be queried with :meth:`bound`. See
    :func:`skfair_audit.group.monotone_tilt_bounds`.

    Attributes
    ----------
    names : tuple of str
        The half-lines, e.g. ``"age >= 40"``.
    sizes : ndarray of int
        Rows of each half-line in the audit sample.
    masses : ndarray
        :math:`P_n(H)`, their share of the audit sample.
    estimates : ndarray
        :math:`\\hat\\epsilon(H)`.
    group_values : ndarray
        The metric on each half-line.
    lower, upper : ndarray
        Simultaneous bounds (``-inf`` / ``inf`` on the side not reported).
    target : float
        :math:`\\hat\\theta`.
    critical_value : float
    alpha : float
    alternative : {"lower", "upper", "two-sided"}
    direction : {"increasing", "decreasing", "both"}
    scale : {"rescaled", "unscaled"}
    p_star : float
    sd : float
        :math:`\\sigma` of the rescaling (the standard deviation of :math:`L`).
    method : {"exact", "relaxed"}
        Supremum over every edge of the class, or the relaxation over the estimates' range.
    estimate_range : tuple of float
        :math:`[e_-, e_+]` of the relaxation (the range of the half-lines' estimates).
    cell_low, cell_high : ndarray
        Smallest and largest covariate value of every cell (the tilts are constant within
        a cell), in increasing order.
    cell_cuts : ndarray
        The cut points between cells: cell k holds ``cell_cuts[k-1] <= x < cell_cuts[k]``
        (the quantile bins or the given edges; midpoints between distinct values).
    covariate : str
        Name of the covariate.
    metric : str
    n : int
        Rows of the audit sample.
    bootstrap_distribution : ndarray
    """

    names: tuple
    sizes: np.ndarray
    masses: np.ndarray
    estimates: np.ndarray
    group_values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    target: float
    critical_value: float
    alpha: float
    alternative: str
    direction: str
    scale: str
    p_star: float
    sd: float
    method: str
    estimate_range: tuple
    cell_low: np.ndarray
    cell_high: np.ndarray
    cell_cuts: np.ndarray
    covariate: str
    metric: str
    n: int
    bootstrap_distribution: np.ndarray
    _summary: object = field(default=None, repr=False)
    _directions: tuple = field(default=(), repr=False)

    def __repr__(self):
        return (f"MonotoneTiltResult(metric={self.metric!r}, covariate={self.covariate!r}, "
                f"direction={self.direction!r}, n_cells={self.cell_low.size}, "
                f"alternative={self.alternative!r}, alpha={self.alpha}, "
                f"critical_value={self.critical_value:.4g}, method={self.method!r})")

    def _class_words(self):
        which = {"increasing": "non-decreasing", "decreasing": "non-increasing",
                 "both": "monotone (either direction)"}[self.direction]
        return (f"every {which} tilt 0 ≤ w ≤ 1 of {self.covariate} "
                f"({self.cell_low.size} cells)")

    def bound(self, tilt) -> TiltBound:
        """Simultaneous bound of one monotone tilt.

        Parameters
        ----------
        tilt : str or array-like of shape (n_cells,)
            A half-line by name (a row of :meth:`table`), or the tilt's non-negative value
            on every cell (``cell_low`` order), monotone in an audited direction. It is
            scaled to maximum 1 (the tilted disparity does not depend on the scale, and the
            bound is tightest at full scale).

        Returns
        -------
        TiltBound

        Raises
        ------
        ValueError
            If the tilt is not monotone in an audited direction: it is outside the
            calibrated class and has no guarantee.
        """
        mass_c, centred_c = cell_sums(self._summary)
        if isinstance(tilt, str):
            try:
                j = self.names.index(tilt)
            except ValueError:
                raise ValueError(f"no half-line named {tilt!r}.") from None
            return TiltBound(float(self.group_values[j]), float(self.estimates[j]),
                             float(self.lower[j]), float(self.upper[j]),
                             mass=float(self.masses[j]), effective_size=float(self.sizes[j]))
        w = np.asarray(tilt, dtype=float)
        if w.shape != mass_c.shape:
            raise ValueError(f"a tilt has one value per cell ({mass_c.size}), got shape "
                             f"{w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.max() <= 0:
            raise ValueError("a tilt must be finite, non-negative and not zero.")
        steps = np.diff(w)
        ok = {"increasing": bool(np.all(steps >= 0)), "decreasing": bool(np.all(steps <= 0))}
        if not any(ok[d] for d in self._directions):
            raise ValueError(
                f"this tilt is not monotone in the audited direction ({self.direction}): it "
                "is outside the calibrated class and has no guarantee.")
        w = w / w.max()
        mass = float(w @ mass_c)
        estimate = float(w @ centred_c) / mass
        counts = self._summary.stats.moments[0].sum(axis=1)
        factor = float(scale_factor(mass, scale=self.scale, sd=self.sd, p_star=self.p_star))
        return self._bound(estimate, estimate + self.target, mass, factor,
                           float(effective_size(w, counts)))

    def _thresholds(self):
        """The threshold t of every row's half-line."""
        m = self.cell_low.size
        parts = [self.cell_low if d == "increasing" else self.cell_high for d in self._directions]
        if len(parts) == 2:
            parts[1] = parts[1][:m - 1]
        return np.concatenate(parts)

    def plot_caption(self, max_groups=None, epsilon0=None):
        """What :meth:`plot` draws, in a sentence.

        Parameters
        ----------
        max_groups : None
            Ignored (every half-line is drawn).
        epsilon0 : float, optional
            The threshold drawn.

        Returns
        -------
        str
        """
        gate = f", the threshold epsilon0 = {epsilon0:g} dotted" if epsilon0 is not None else ""
        return (f"disparity of each half-line of {self.covariate} (the extreme monotone "
                f"tilts) against its threshold t, with its {BOUND_SIDES[self.alternative]} "
                f"valid simultaneously over every tilt of the class; the worst tilt "
                f"circled{gate}.")

    def plot(self, ax=None, *, max_groups=None, min_size=1, epsilon0=None):
        """Estimates and bounds of the half-lines against their threshold; the worst tilt
        marked (matplotlib axes).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups : None
            Ignored (every half-line is drawn); accepted for the report.
        min_size : int
            Half-lines with fewer rows are left out (their bounds are valid but wide).
        epsilon0 : float, optional
            A threshold to draw (the gate of :meth:`verdict`).

        Returns
        -------
        matplotlib Axes
        """
        ax = self._axes(ax)
        worst = self._worst_index()
        thresholds = self._thresholds()
        start = 0
        for direction in self._directions:
            count = self.cell_low.size - (1 if (direction == "decreasing" and start) else 0)
            rows = np.arange(start, start + count)
            at = thresholds[rows]
            start += count
            keep = self.sizes[rows] >= min_size
            rows, at = rows[keep], at[keep]
            est = self.estimates[rows]
            lo = np.where(np.isfinite(self.lower[rows]), self.lower[rows], est)
            hi = np.where(np.isfinite(self.upper[rows]), self.upper[rows], est)
            sign = ">=" if direction == "increasing" else "<="
            ax.errorbar(at, est, yerr=[est - lo, hi - est], fmt="^" if sign == ">=" else "v",
                        markersize=4, capsize=2, alpha=0.8, label=f"{self.covariate} {sign} t")
        ax.plot([thresholds[worst]], [self.estimates[worst]], "o", markersize=10,
                markerfacecolor="none", color="tab:red", label=f"worst: {self.names[worst]}")
        ax.axhline(0.0, color="grey", linestyle="--", linewidth=1)
        if epsilon0 is not None:
            ax.axhline(epsilon0, color="tab:red", linestyle=":", linewidth=1,
                       label=f"epsilon0 = {epsilon0:g}")
        ax.set_xlabel(f"threshold t of the half-line ({self.covariate})")
        ax.set_ylabel("disparity")
        ax.set_title(f"{self.metric}: {100 * (1 - self.alpha):g}% simultaneous bounds over "
                     "monotone tilts")
        ax.legend(fontsize=8)
        return ax


_MONOTONE_PARAMETERS = {
    "target": TARGET, "direction": [Options(DIRECTIONS)],
    "alternative": [Options(ALTERNATIVES["bounds"])], "alpha": [PROBABILITY],
    "scale": [Options(TILT_SCALES)], "p_star": [Interval("real", 0, 1)],
    "bins": [None, Interval("integral", 1, None), ARRAY_LIKE],
    "method": [Options(("auto", "exact", "relaxed"))], "name": [None, STRING],
    **BOOTSTRAP_CONSTRAINTS,
}


@validate_params(_MONOTONE_PARAMETERS)
def monotone_tilt_bounds(
    y,
    y_pred,
    x,
    *,
    metric,
    direction="both",
    target="overall",
    alternative="two-sided",
    alpha=0.1,
    scale="rescaled",
    p_star=0.01,
    bins=50,
    method="auto",
    name=None,
    pos_label=None,
    n_resamples=1000,
    batch_size=None,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    random_state=None,
    n_jobs=None,
    verbose=0,
) -> MonotoneTiltResult:
    """Bounds on :math:`E[(L-\\theta)w(X)]/E[w(X)]` simultaneous over every monotone tilt.

    The class is every tilt :math:`0 \\le w \\le 1` of the covariate :math:`x` that is
    non-decreasing (``direction="increasing"``), non-increasing (``"decreasing"``) or
    either (``"both"``), constant within the cells of ``bins``. With the bound process
    :math:`T_b(w)` and scale :math:`s(w) = P_n[w]\\,r(w)` of
    :mod:`~skfair_audit.group._tilts`, :math:`c = Q_{1-\\alpha}(\\sup_w T_b(w)/s(w))` and,
    simultaneously for every tilt of the class,

    .. math::

        \\epsilon(w) \\ge \\hat\\epsilon(w) - c\\, \\frac{r(w)}{P_n[w]}, \\qquad
        r(w) = \\sigma\\sqrt{P_n[w] + p^*} \\ (\\text{rescaled}) \\text{ or } 1.

    Every monotone tilt is a mixture of half-lines :math:`\\{x \\ge t\\}` (or
    :math:`\\{x \\le t\\}`), and its disparity a weighted average of theirs: the half-lines'
    bounds, in the result's table, bound the worst tilt of the class. Any tilt of the class
    can be queried after calibration (:meth:`MonotoneTiltResult.bound`).

    Parameters
    ----------
    y, y_pred : array-like of shape (n_rows,) (``y_pred`` may be 2-D for coverage)
        Outcomes and model outputs of the audit trail.
    x : array-like of shape (n_rows,)
        The covariate (numeric; a pandas Series gives its name to the tilts).
    metric : str, Metric or callable
        See :func:`get_metric`; conditional metrics restrict to their rows.
    direction : {"both", "increasing", "decreasing"}
    target : float, "overall" or bool array
        Known constant, the overall metric, or a reference group given as a boolean row
        mask; an estimated target is re-estimated in every replicate.
    alternative : {"two-sided", "lower", "upper"}
    alpha : float
        Simultaneous error level in (0, 1).
    scale : {"rescaled", "unscaled"}
    p_star : float
        Floor of the mass in the rescaling.
    bins : int, None or array-like, default=50
        Cells of the covariate: at most ``bins`` quantile bins of the audit sample (every
        distinct value when there are fewer), every distinct value (None) or increasing
        edges (fixed in advance, which the guarantee formally assumes).
    method : {"auto", "exact", "relaxed"}
        ``"exact"``: supremum over every pair of half-lines, :math:`O(B m^2)` for
        :math:`m` cells; ``"relaxed"``: the conservative relaxation, :math:`O(B m)`;
        ``"auto"``: exact up to 128 cells.
    name : str, optional
        Name of the covariate in the tilts' names (default: the Series name, else "x").
    pos_label : optional
        Positive label, when ``metric`` is a name.
    n_resamples, batch_size, random_state, n_jobs, verbose
        Bootstrap controls: replicates, replicates per batch (memory), seed and parallel
        workers and a progress bar (0: silent); results depend on neither ``n_jobs`` nor
        ``verbose``.
    memory_limit : int, float, str or None, default="2GiB"
        Memory budget of the bootstrap, as in :func:`~skfair_audit.group.certify_bounds`.

    Returns
    -------
    MonotoneTiltResult

    See Also
    --------
    polynomial_tilt_bounds, rkhs_tilt_bounds : other classes of tilts.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> age = rng.uniform(18, 70, 3000)
    >>> covered = (rng.random(3000) < 0.95 - 0.002 * (age - 18)).astype(int)
    >>> res = monotone_tilt_bounds(covered, covered, age, metric=lambda y, p: p.astype(float),
    ...                            target=0.0, alternative="lower", bins=20,
    ...                            n_resamples=200, random_state=0)
    >>> res.worst().startswith("x >= ")
    True
    >>> b = res.bound(np.linspace(0, 1, 20))  # a linear ramp over the 20 cells
    >>> bool(b.lower < b.value)
    True
    """
    metric = resolve_metric(metric, pos_label)
    name = name or getattr(x, "name", None) or "x"
    x = as_array(x, "x")
    if x.ndim != 1 or x.dtype.kind not in "biuf":
        raise ValueError("x must be one numeric covariate (a 1-D array).")
    x = x.astype(float)
    values, rows = metric.evaluate(y, y_pred)
    if x.shape[0] != values.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {values.shape[0]}.")
    if not np.all(np.isfinite(x[rows])):
        raise ValueError("x contains NaN or infinite values.")
    cell_of_row, low, high, cuts = covariate_cells(x, rows, bins)
    m = low.size
    summary = AuditSummary.from_cells(y, y_pred, cell_of_row, m, metric=metric, target=target)
    if method == "auto":
        method = "exact" if m <= MAX_EXACT_CELLS else "relaxed"
    directions = ("increasing", "decreasing") if direction == "both" else (direction,)
    mass_c, centred_c = cell_sums(summary)
    sd = summary_sd(summary)
    process = MonotoneProcess(mass_c, centred_c, summary.n, directions, scale, sd, p_star,
                              method)
    estimates = np.concatenate([process.vertices(d)[2] for d in directions])
    process = MonotoneProcess(mass_c, centred_c, summary.n, directions, scale, sd, p_star,
                              method, (float(estimates.min()), float(estimates.max())))
    dist, c = calibrate(summary, process, n_resamples, alternative, alpha,
                        batch_size=batch_size, memory_limit=memory_limit,
                        random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    counts = summary.stats.moments[0].sum(axis=1)
    names, sizes, masses, ests, factors = [], [], [], [], []
    for d in directions:
        mass, centred, estimate, factor = process.vertices(d)
        nm = _names(d, low, high, name)
        size = half_line_sums(counts, d)
        for k in range(m):
            if d == "decreasing" and "increasing" in directions and k == m - 1:
                continue  # every row: already the first increasing half-line
            names.append(nm[k])
            sizes.append(int(round(size[k])))
            masses.append(mass[k])
            ests.append(estimate[k])
            factors.append(factor[k])
    masses, ests = np.array(masses), np.array(ests)
    lower, upper = tilt_bounds(ests, masses, np.array(factors), c, alternative, summary)
    return MonotoneTiltResult(
        names=tuple(names), sizes=np.array(sizes), masses=masses, estimates=ests,
        group_values=ests + summary.theta_hat, lower=lower, upper=upper,
        target=summary.theta_hat, critical_value=c, alpha=alpha, alternative=alternative,
        direction=direction, scale=scale, p_star=p_star, sd=sd, method=method,
        estimate_range=process.estimate_range, cell_low=low, cell_high=high, cell_cuts=cuts,
        covariate=str(name), metric=metric.name, n=summary.n, bootstrap_distribution=dist,
        _summary=summary, _directions=directions,
    )
