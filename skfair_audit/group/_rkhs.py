"""Audits over non-negative tilts of a Gaussian RKHS ball (Cherian & Candès 2024, §5).

A tilt :math:`h \\ge 0` reweights the audit distribution; the disparity under the shift is
:math:`\\epsilon(h) = E[(L - \\theta) h] / E[h]` (indicators :math:`h = 1_G` give groups back).
The bootstrap process

.. math::

    T_b(h) = P_n[h]\\, P_n^b[(L - \\hat\\theta_b) h] - P_n[(L - \\hat\\theta) h]\\, P_n^b[h]

is a quadratic form in :math:`h`. Writing :math:`P_n^b[f h] = \\frac1n \\sum_i w_i f_i h(x_i)`
and :math:`U = [\\mathbf 1, L, w, w \\circ L]` (an :math:`n \\times 4` matrix),
:math:`T_b(h) = h^\\top U C_b U^\\top h` with :math:`h = (h(x_i))_i` and the symmetric
:math:`4 \\times 4` matrix :math:`C_b = (A + A^\\top)/(2n^2)`,
:math:`A = e_1 (e_4 - \\hat\\theta_b e_3)^\\top - (e_2 - \\hat\\theta e_1) e_3^\\top`.

With a kernel factor :math:`K \\approx \\Phi\\Phi^\\top` (pivoted Cholesky, rank :math:`r`),
functions of the unit ball restricted to the data are :math:`h = \\Phi\\beta`,
:math:`\\|\\beta\\| \\le 1`, so

.. math::

    \\sup_{\\|h\\|_{\\mathcal H} \\le 1} T_b(h)
    = \\max\\big(0, \\lambda_{\\max}(Z C_b Z^\\top)\\big),
    \\qquad Z = \\Phi^\\top U \\in \\mathbb R^{r \\times 4},

and the non-zero eigenvalues of :math:`Z C_b Z^\\top` are those of the symmetric
:math:`4\\times 4` matrix :math:`D^{1/2} V^\\top C_b V D^{1/2}` where
:math:`Z^\\top Z = V D V^\\top`. One replicate costs :math:`O(n r)` plus a :math:`4 \\times 4`
eigenproblem. Dropping :math:`h \\ge 0` from the supremum (as the paper does) only makes
the bounds conservative. For a queried tilt, simultaneously over the ball,

.. math::

    \\epsilon(h) \\ge \\hat\\epsilon(h) - c\\, \\|h\\|_{\\mathcal H}^2 / P_n[h]^2 .

**Rescaled audit** (the paper's Appendix D). The paper scales the process by
:math:`P_n[h]\\,\\|h\\|_n` (:math:`\\|h\\|_n^2 = P_n[h^2]`; :math:`P_n(G)^{3/2}` for an indicator)
floored at a constant, and relaxes :math:`h \\ge 0` to the whole ball, as for the unscaled
audit. Under that relaxation sign-changing functions with :math:`P_n[h] \\approx 0` reach the
constant floor while :math:`T_b(h) \\approx -P_n[(L-\\hat\\theta)h]\\,(P_n^b - P_n)[h]` stays of
order :math:`\\|h\\|_n^2/\\sqrt n`: they dominate the supremum and the bounds become useless
(``bench_rkhs_table4.py`` measures it). Here the floor is proportional to
:math:`\\|h\\|_n^2`, with :math:`\\xi = \\sqrt{p^*}`:

.. math::

    s(h) = \\sigma\\max\\big(P_n[h]\\,\\|h\\|_n,\\ \\xi\\|h\\|_n^2\\big), \\qquad
    \\epsilon(h) \\ge \\hat\\epsilon(h) - c\\,\\sigma\\,
    \\frac{\\max(P_n[h]\\,\\|h\\|_n,\\ \\xi\\|h\\|_n^2)}{P_n[h]^2},

which is the paper's scale for every non-negative tilt whose effective size
:math:`n(P_n[h])^2/P_n[h^2]` is at least :math:`p^* n` (an indicator: a group of frequency
:math:`\\ge p^*`), gives CLT-width bounds :math:`c\\sigma\\|h\\|_n/P_n[h]` to them whatever their
RKHS norm, and keeps sign-changing functions at the order of the others. The process and
the scale are homogeneous of degree 2, so the supremum runs over the span of the kernel
factor. The paper approximates it by :math:`10^6` random directions per replicate (from
below, in :math:`4 + k` dimensions) and calls the computation prohibitively expensive; it is
bracketed here by two reductions (:func:`rescaled_rkhs_suprema`):

1. :math:`P_n[h]\\|h\\|_n = \\min_{t>0} (t\\,(a^\\top\\beta)^2 + \\beta^\\top Q\\beta/t)/2`
   (:math:`h = \\Phi\\beta`, :math:`a = \\Phi^\\top\\mathbf 1/n`, :math:`Q = \\Phi^\\top\\Phi/n`),
   so the supremum is :math:`\\sup_{t \\in [1, 1/\\xi]} V(t)` with
   :math:`V(t) = \\sup_\\beta \\beta^\\top G_b\\beta / \\max(E_t(\\beta), \\xi\\beta^\\top Q\\beta)`
   (:math:`t \\ge 1` by Cauchy–Schwarz; beyond :math:`1/\\xi` the floor is active);
2. :math:`V(t)` is a quadratic program with two quadratic constraints, whose semidefinite
   relaxation is exact (an optimal solution of rank one exists), so by duality
   :math:`V(t) = \\min_{s \\in [0,1]} \\lambda_{\\max}(G_b,\\ sE_t + (1-s)\\xi Q)`, a quasi-convex
   function of :math:`s` whose evaluations are :math:`4\\times 4` eigenproblems (:math:`G_b`
   has rank 4; Sherman–Morrison in the eigenbasis of :math:`Q`).

On :math:`[t_j, t_{j+1}]`, :math:`E_t \\ge (t_j aa^\\top + Q/t_{j+1})/2`, so the same dual
bounds :math:`V` on the whole interval, and every evaluated :math:`s` bounds from above:
branch and bound on a logarithmic grid gives an upper bound of the supremum (used: the
bootstrap is conservative) and a maximiser gives a lower bound; the relative gap between the
critical values of the two is :attr:`RKHSBoundsResult.refinement_gap`. Per
replicate this costs :math:`O(nr + K r)` for :math:`K` (a few hundred) evaluations, against
:math:`O(10^6 (4 + k)^2)` for the paper's sampling.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import PROBABILITY, ConfidenceInterval, Interval, Options, validate_params
from ..results import AuditResult, ResultTable, Verdict
from ._bootstrap import critical_value, run_bootstrap
from ._metrics import as_array
from ._protocol import BOUND_SIDES, target_words
from ._summary import (
    ALTERNATIVES,
    BOOTSTRAP_CONSTRAINTS,
    TARGET,
    AuditSummary,
    resolve_metric,
)
from ._tilts import TILT_SCALES, TiltBound, side_distribution, summary_sd


@dataclass(frozen=True, eq=False)
class RKHSBoundsResult(AuditResult):
    """Bounds simultaneous over all non-negative tilts of a Gaussian RKHS ball.

    Query tilts with :meth:`bound`. See :func:`skfair_audit.group.rkhs_tilt_bounds`. The
    result follows the shared protocol (:class:`~skfair_audit.results.AuditResult`): its
    :meth:`table` shows the bounds of a few tilts of the ball, Gaussian bumps
    :math:`h = k(c, \\cdot)` (RKHS norm 1) centred at audit points spread over the data;
    every other tilt has its bound under the same guarantee, through :meth:`bound`.

    Attributes
    ----------
    critical_value : float
    alpha : float
    alternative : str
    bandwidth : float
    target : float
    n : int
    rank : int
        Rank of the kernel factor used.
    bootstrap_distribution : ndarray
    scale : {"unscaled", "rescaled"}
        Unscaled (§5: widths :math:`c\\|h\\|_{\\mathcal H}^2/P_n[h]^2`) or rescaled
        (Appendix D, see the module notes).
    p_star : float
        The rescaled scale is floored at :math:`\\sqrt{p^*}\\,\\|h\\|_n^2` (tilts of effective
        size below :math:`p^* n` get wider bounds).
    sd : float
        :math:`\\sigma` of the rescaled scale (standard deviation of :math:`L`).
    refinement_gap : float
        Rescaled audit: relative gap between the critical value (from upper bounds of the
        suprema) and the same quantile of lower bounds of them: the true critical value lies
        in between (0 when unscaled: exact).
    """

    critical_value: float
    alpha: float
    alternative: str
    bandwidth: float
    target: float
    n: int
    rank: int
    bootstrap_distribution: np.ndarray
    scale: str = "unscaled"
    p_star: float = 0.01
    sd: float = 1.0
    refinement_gap: float = 0.0
    _X: np.ndarray = field(repr=False, default=None)
    _values: np.ndarray = field(repr=False, default=None)
    _factor: np.ndarray = field(repr=False, default=None)

    def guarantee(self) -> str:
        """The guarantee of the tilt bounds, in plain words.

        Returns
        -------
        str
        """
        side = BOUND_SIDES[self.alternative]
        return (
            f"A tilt h ≥ 0 reweights the audit distribution; its disparity is "
            f"ε(h) = E[(L − θ) h] / E[h]. With probability at least {1 - self.alpha:.0%} (as "
            f"the sample grows), the {side} ε̂(h) ∓ c ‖h‖² / P_n[h]² hold at the same time for "
            f"every tilt of the Gaussian RKHS ball of bandwidth {self.bandwidth:g} (norm ≤ 1, "
            "or scaled to it): tilts may be chosen after looking at the data."
        )

    #: What a row of :meth:`table` is.
    row_kind = "tilt"
    #: At most this many tilts in :meth:`table`.
    TABLE_TILTS = 10

    @cached_property
    def _rows(self):
        """Names and :class:`TiltBound` of the tabulated bumps."""
        centres = _spread_points(self._X, self.bandwidth, self.TABLE_TILTS)
        names = tuple("bump at c = " + _point_words(self._X[i]) for i in centres)
        return names, tuple(self.bound(coef=np.ones(1), centers=self._X[i:i + 1])
                            for i in centres)

    def table(self) -> ResultTable:
        """Bounds of Gaussian bumps :math:`h = k(c, \\cdot)` centred at audit points spread
        over the data (farthest-point order from the median point, until every audit point
        is within one bandwidth of a centre, at most :attr:`TABLE_TILTS`), sorted by centre.

        Returns
        -------
        ResultTable
        """
        names, bounds = self._rows
        rows = tuple((name, b.effective_size, b.value, b.estimate, b.lower, b.upper)
                     for name, b in zip(names, bounds, strict=True))
        return ResultTable(("tilt", "effective_size", "value", "disparity", "lower", "upper"),
                           ("tilt", "effective size", "value", "disparity", "lower", "upper"),
                           rows)

    def confidence_interval(self, *, coef=None, centers=None, values=None):
        """Simultaneous bounds on the disparity of the tabulated tilts or of a queried one.

        Parameters
        ----------
        coef, centers, values : array-like, optional
            A tilt, as :meth:`bound` takes it; default: the rows of :meth:`table`.

        Returns
        -------
        ConfidenceInterval
            Arrays (one entry per row of :meth:`table`) without a tilt, floats with one.
        """
        if coef is None and values is None:
            bounds = self._rows[1]
            return ConfidenceInterval(np.array([b.lower for b in bounds]),
                                      np.array([b.upper for b in bounds]))
        return self.bound(coef=coef, centers=centers, values=values).confidence_interval()

    def verdict(self, epsilon0=None) -> Verdict:
        """Descriptive: the bounds of any tilt can be read, the whole ball has no verdict.

        Parameters
        ----------
        epsilon0 : None
            Refused: the bounds of the ball are read tilt by tilt (compare those of the tilts
            of interest, :meth:`bound`, with a threshold).

        Returns
        -------
        Verdict
        """
        if epsilon0 is not None:
            raise ValueError(
                "an RKHS audit has no verdict at a threshold epsilon0: its bounds hold for "
                "every tilt of the ball at once but are read tilt by tilt; compare the "
                "bounds of the tilts of interest (result.bound(...)) with epsilon0.")
        bounds = self._rows[1]
        excluding = sum(b.lower > 0 or b.upper < 0 for b in bounds)
        return Verdict(False, False, "bounds only (no gate)",
                       f"{excluding} of the {len(bounds)} tabulated tilts have bounds that "
                       "exclude a zero disparity; query any other tilt with bound(coef=..., "
                       "centers=...) or bound(values=...), under the same guarantee.")

    def key_figures(self) -> dict:
        """Critical value, level, side, bandwidth, target, rows, rank and resamples.

        Returns
        -------
        dict
        """
        figures = {"critical value c": self.critical_value, "α (simultaneous)": self.alpha,
                   "bounds": self.alternative, "bandwidth σ": self.bandwidth,
                   "target θ": self.target, "audit rows": self.n,
                   "kernel factor rank": self.rank,
                   "resamples": self.bootstrap_distribution.size, "scale": self.scale}
        if self.scale == "rescaled":
            figures["refinement gap"] = self.refinement_gap
        return figures

    def describe(self, target_description=None) -> str:
        """The ball, the target, the audit sample and the tabulated tilts, in one sentence.

        Parameters
        ----------
        target_description : str, optional
            What θ is, in words (e.g. "the overall coverage").

        Returns
        -------
        str
        """
        return (f"Tilts of the Gaussian RKHS ball of bandwidth {self.bandwidth:g}; target "
                f"{target_words(self.target, target_description)}; audit sample: "
                f"{self.n:,} rows where the metric is defined; "
                f"{len(self._rows[0])} Gaussian bumps (RKHS norm 1) tabulated.")

    def _card_title(self):
        return "RKHSBoundsResult: tilts of a Gaussian RKHS ball"

    def bound(self, *, coef=None, centers=None, values=None) -> TiltBound:
        """Bound for a tilt :math:`h`, given by kernel coefficients or by values.

        Parameters
        ----------
        coef : array-like of shape (m,), optional
            :math:`h = \\sum_j \\mathrm{coef}_j\\, k(c_j, \\cdot)` with centres ``centers``
            (default: the audit points); non-negative coefficients give :math:`h \\ge 0`.
        centers : array-like of shape (m, d), optional
        values : array-like of shape (n,), optional
            :math:`h(x_i)` at the audit points (non-negative); the norm used is that of the
            minimum-norm interpolant (computed with a tiny ridge).

        Returns
        -------
        TiltBound
        """
        X = self._X
        if (coef is None) == (values is None):
            raise ValueError("give exactly one of coef or values.")
        if coef is not None:
            C = X if centers is None else _as_2d(centers)
            coef = np.asarray(coef, dtype=float)
            if coef.shape != (C.shape[0],):
                raise ValueError(f"coef must have {C.shape[0]} entries.")
            h = gaussian_kernel(X, C, self.bandwidth) @ coef
            norm2 = float(coef @ gaussian_kernel(C, C, self.bandwidth) @ coef)
        else:
            h = np.asarray(values, dtype=float)
            if h.shape != (X.shape[0],):
                raise ValueError(f"values must have one entry per audit point ({X.shape[0]}).")
            # minimum-norm h in the span of the (H-orthonormal) Cholesky features
            beta = np.linalg.lstsq(self._factor, h, rcond=None)[0]
            residual = np.linalg.norm(self._factor @ beta - h)
            if residual > 1e-3 * max(np.linalg.norm(h), 1e-300):
                warnings.warn(
                    f"the values are interpolated with relative error "
                    f"{residual / np.linalg.norm(h):.2g} by the kernel factor; the bound "
                    "refers to the interpolant (increase max_rank / decrease tol).",
                    UserWarning,
                    stacklevel=2,
                )
            norm2 = float(beta @ beta)
        if np.any(h < -1e-12 * max(1.0, np.abs(h).max())):
            raise ValueError("the tilt h must be non-negative at the audit points.")
        h = np.clip(h, 0.0, None)
        mass = h.mean()
        if mass <= 0:
            raise ValueError("the tilt h is zero on every audit point.")
        value = float((self._values * h).mean() / mass)
        estimate = value - self.target
        if self.scale == "rescaled":
            square = (h**2).mean()
            width = self.critical_value * self.sd * max(
                mass * np.sqrt(square), np.sqrt(self.p_star) * square) / mass**2
        else:
            width = self.critical_value * norm2 / mass**2
        lower = estimate - width if self.alternative in ("lower", "two-sided") else -np.inf
        upper = estimate + width if self.alternative in ("upper", "two-sided") else np.inf
        return TiltBound(value, float(estimate), float(lower), float(upper),
                         float(np.sqrt(max(norm2, 0.0))), float(mass),
                         float(h.sum() ** 2 / (h**2).sum()))


def _spread_points(X, bandwidth, k):
    """Up to ``k`` rows of ``X`` spread over the data: farthest-point order from the row
    nearest the median, stopping once every row is within ``bandwidth`` of one; sorted."""
    X = _as_2d(X)
    chosen = [int(np.argmin(((X - np.median(X, axis=0)) ** 2).sum(axis=1)))]
    distance = ((X - X[chosen[0]]) ** 2).sum(axis=1)
    while len(chosen) < min(k, X.shape[0]):
        far = int(np.argmax(distance))
        if distance[far] <= bandwidth**2:
            break
        chosen.append(far)
        distance = np.minimum(distance, ((X - X[far]) ** 2).sum(axis=1))
    return sorted(chosen, key=lambda i: tuple(X[i]))


def _point_words(x):
    words = [f"{v:.3g}" for v in np.atleast_1d(x)]
    return words[0] if len(words) == 1 else "(" + ", ".join(words) + ")"


def _as_2d(X):
    X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    return X[:, None] if X.ndim == 1 else X


def gaussian_kernel(A, B, bandwidth):
    """:math:`k(a, b) = \\exp(-\\|a - b\\|^2 / (2\\sigma^2))` between the rows of A and B."""
    A, B = _as_2d(A), _as_2d(B)
    sq = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-np.clip(sq, 0.0, None) / (2.0 * float(bandwidth) ** 2))


def pivoted_cholesky(X, bandwidth, *, max_rank=None, tol=1e-8):
    """Low-rank factor :math:`\\Phi` with :math:`K \\approx \\Phi\\Phi^\\top` (Gaussian kernel).

    Greedy pivoted (incomplete) Cholesky: at each step the row with the largest residual
    diagonal is pivoted; stops when the residual trace is below ``tol * n`` or at
    ``max_rank``. Costs :math:`O(n r^2)`, never forms :math:`K`.

    Examples
    --------
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> Phi = pivoted_cholesky(X, 0.5, tol=1e-10)
    >>> bool(np.allclose(Phi @ Phi.T, gaussian_kernel(X, X, 0.5), atol=1e-6))
    True
    """
    X = _as_2d(X)
    n = X.shape[0]
    max_rank = n if max_rank is None else min(int(max_rank), n)
    # the rank is usually small: grow the factor as needed (never n x n up front)
    factor = np.zeros((n, min(max_rank, 64)))
    residual = np.ones(n)  # diag of a Gaussian kernel
    rank = 0
    for k in range(max_rank):
        if residual.sum() <= tol * n:
            break
        i = int(np.argmax(residual))
        pivot = residual[i]
        if pivot <= 0:
            break
        if k == factor.shape[1]:
            factor = np.hstack([factor, np.zeros((n, min(factor.shape[1], max_rank - k)))])
        col = gaussian_kernel(X, X[i : i + 1], bandwidth)[:, 0] - factor[:, :k] @ factor[i, :k]
        factor[:, k] = col / np.sqrt(pivot)
        residual = np.clip(residual - factor[:, k] ** 2, 0.0, None)
        residual[i] = 0.0
        rank = k + 1
    return factor[:, :rank]


def _rank_four_forms(factor, count0, sum0, theta_hat, counts, sums, theta_b, n):
    """Per replicate, :math:`Z = \\Phi^\\top U` ``(size, r, 4)`` and :math:`C_b` ``(size, 4,
    4)``: :math:`T_b(h) = \\beta^\\top Z C_b Z^\\top\\beta` for :math:`h = \\Phi\\beta`."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    size = counts.shape[0]
    Z = np.empty((size, factor.shape[1], 4))
    Z[:, :, 0] = factor.T @ count0
    Z[:, :, 1] = factor.T @ sum0
    Z[:, :, 2] = counts @ factor
    Z[:, :, 3] = np.atleast_2d(sums) @ factor
    A = np.zeros((size, 4, 4))
    A[:, 0, 3] = 1.0
    A[:, 0, 2] = theta_hat - np.asarray(theta_b, dtype=float)
    A[:, 1, 2] = -1.0
    return Z, (A + np.transpose(A, (0, 2, 1))) / (2.0 * n**2)


def _extreme_eigenvalues(gram, C):
    """Extreme eigenvalues of :math:`K^{1/2} C K^{1/2}` (the non-zero ones of :math:`Z C
    Z^\\top` relative to the metric whose Gram matrix is :math:`K`), batched."""
    d, V = np.linalg.eigh(gram)
    root = V * np.sqrt(np.clip(d, 0.0, None))[..., None, :]
    eig = np.linalg.eigvalsh(np.swapaxes(root, -1, -2) @ C @ root)
    return eig[..., 0], eig[..., -1]


def _rank_four_suprema(factor, count0, sum0, theta_hat, counts, sums, theta_b, n):
    """``(size, 2)``: :math:`\\sup \\pm T_b(h)` over the unit ball, per replicate, from the
    per-cell observed counts/sums and the replicates' per-cell weights/weighted sums."""
    Z, C = _rank_four_forms(factor, count0, sum0, theta_hat, counts, sums, theta_b, n)
    low, high = _extreme_eigenvalues(np.einsum("bri,brj->bij", Z, Z), C)
    return np.column_stack([np.maximum(high, 0.0), np.maximum(-low, 0.0)])


def _generalised_top(Zt, C, inv_diag, mass_dir, gamma, vectors=False):
    """:math:`\\lambda_{\\max}(Z C Z^\\top, M)` for :math:`M = U(D + \\gamma\\tilde a\\tilde
    a^\\top)U^\\top` (``inv_diag`` :math:`= D^{-1}`; ``Zt`` :math:`= U^\\top Z`, ``mass_dir``
    :math:`= \\tilde a`), by Sherman–Morrison: a :math:`4 \\times 4` eigenproblem. With
    ``vectors``, also the maximiser :math:`U^\\top\\beta` (unnormalised)."""
    weighted = Zt * inv_diag[..., None]
    gram = np.swapaxes(weighted, -1, -2) @ Zt
    v = np.einsum("...ri,r->...i", weighted, mass_dir)
    alpha = inv_diag @ mass_dir**2
    coef = gamma / (1.0 + gamma * alpha)
    gram = gram - coef[..., None, None] * (v[..., :, None] * v[..., None, :])
    if not vectors:  # K = R R' (a tiny ridge keeps the Cholesky factor of a singular K)
        ridge = 1e-12 * np.trace(gram, axis1=-2, axis2=-1)[..., None, None] * np.eye(4)
        root = np.linalg.cholesky(gram + ridge)
        return np.linalg.eigvalsh(np.swapaxes(root, -1, -2) @ C @ root)[..., -1]
    d, V = np.linalg.eigh(gram)
    root = V * np.sqrt(np.clip(d, 0.0, None))[..., None, :]
    eig, W = np.linalg.eigh(np.swapaxes(root, -1, -2) @ C @ root)
    # the maximiser is beta = M^{-1} Z u with C K u = lambda u: u = C K^{1/2} w
    dz = inv_diag * (Zt @ (C @ (root @ W[..., -1:])))[..., 0]
    beta = dz - (coef * (dz @ mass_dir))[..., None] * inv_diag * mass_dir
    return eig[..., -1], beta


def _dual_values(Zt, C, lam, mass_dir, xi, t_low, t_high, iterations):
    """Upper bounds of :math:`\\sup_{t \\in [t_{low}, t_{high}]} V(t)`, one interval per
    leading index: the smallest :math:`\\lambda_{\\max}(G_b, sE + (1-s)\\xi Q)^+` met by a
    golden-section search on the quasi-convex function of :math:`s \\in [0, 1]`, where
    :math:`E = (t_{low}aa^\\top + Q/t_{high})/2 \\le E_t` on the interval (every evaluation
    is an upper bound; a point when ``t_low == t_high``), and the minimising ``s``."""

    def value(s):
        inv = 1.0 / (lam * (s / (2.0 * t_high) + (1.0 - s) * xi)[..., None])
        return np.maximum(_generalised_top(Zt, C, inv, mass_dir, s * t_low / 2.0), 0.0)

    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = np.zeros(np.shape(t_low)), np.ones(np.shape(t_low))
    fa, fb = value(a), value(b)
    best, best_s = np.minimum(fa, fb), np.where(fa <= fb, a, b)
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = value(x1), value(x2)
    for _ in range(iterations):
        for x, f in ((x1, f1), (x2, f2)):
            best_s = np.where(f < best, x, best_s)
            best = np.minimum(best, f)
        left = f1 <= f2  # the minimum lies in [a, x2]
        a, b = np.where(left, a, x1), np.where(left, x2, b)
        new_x = np.where(left, b - ratio * (b - a), a + ratio * (b - a))
        f_new = value(new_x)
        x1, x2 = np.where(left, new_x, x2), np.where(left, x1, new_x)
        f1, f2 = np.where(left, f_new, f2), np.where(left, f1, f_new)
    for x, f in ((x1, f1), (x2, f2)):
        best_s = np.where(f < best, x, best_s)
        best = np.minimum(best, f)
    return best, best_s


def _ratio_values(Zt, C, lam, mass_dir, xi, beta):
    """:math:`\\beta^\\top G_b\\beta / \\max(|a^\\top\\beta|\\,\\|\\Phi\\beta\\|_n,\\ \\xi\\|\\Phi
    \\beta\\|_n^2)` of directions given in the eigenbasis of :math:`Q` (lower bounds)."""
    z = np.einsum("...ri,...r->...i", Zt, beta)
    numerator = np.einsum("...i,...ij,...j->...", z, C, z)
    mass = np.abs(beta @ mass_dir)
    norm2 = (beta**2) @ lam
    with np.errstate(invalid="ignore", divide="ignore"):
        out = numerator / np.maximum(mass * np.sqrt(norm2), xi * norm2)
    return np.where(np.isfinite(out), out, 0.0)


def rescaled_rkhs_suprema(Z, C, rotation, xi, *, grid=12, rounds=16, iterations=16,
                          return_maximisers=False):
    """Bounds of :math:`\\sup_\\beta \\pm\\beta^\\top Z C Z^\\top\\beta / \\max(|a^\\top\\beta|
    \\,\\|\\Phi\\beta\\|_n,\\ \\xi\\|\\Phi\\beta\\|_n^2)` per replicate (see the module notes).

    Branch and bound over :math:`t \\in [1, 1/\\xi]`: every interval of a logarithmic grid
    gets the upper bound of :func:`_dual_values`; the interval with the largest bound is
    halved ``rounds`` times; maximisers at the centre and the ends of the best interval give
    the lower bound.

    Parameters
    ----------
    Z : ndarray of shape (size, r, 4)
    C : ndarray of shape (size, 4, 4)
    rotation : tuple
        ``(U, lam, a_tilde)`` of :func:`factor_rotation`.
    xi : float
        :math:`\\sqrt{p^*}`.
    grid, rounds, iterations : int
        Points of the initial grid, halvings, and golden-section steps on :math:`s`.
    return_maximisers : bool
        Also return the maximisers :math:`\\beta` found, shape ``(size, 2, r)``.

    Returns
    -------
    upper, lower : ndarray of shape (size, 2)
        Upper bounds of the suprema of :math:`+` and :math:`-` the process (used: the
        bootstrap is conservative), and lower bounds (the values of maximisers found).
    """
    U, lam, mass_dir = rotation
    # both signs at once: the first axis runs over (replicate, side)
    Zt = np.repeat(np.einsum("rk,bri->bki", U, Z), 2, axis=0)
    SC = np.stack([C, -C], axis=1).reshape(-1, 4, 4)
    size = Zt.shape[0]
    ts = np.geomspace(1.0, 1.0 / xi, grid)
    rows = np.arange(size)
    lo_t, hi_t = np.tile(ts[:-1], (size, 1)), np.tile(ts[1:], (size, 1))
    bound, _ = _dual_values(Zt[:, None], SC[:, None], lam, mass_dir, xi, lo_t, hi_t,
                            iterations)
    for _ in range(rounds):
        j = np.argmax(bound, axis=1)
        a, b = lo_t[rows, j], hi_t[rows, j]
        mid = np.sqrt(a * b)
        halves, _ = _dual_values(Zt[:, None], SC[:, None], lam, mass_dir, xi,
                                 np.column_stack([a, mid]), np.column_stack([mid, b]),
                                 iterations)
        hi_t[rows, j], bound[rows, j] = mid, halves[:, 0]
        lo_t = np.column_stack([lo_t, mid])
        hi_t = np.column_stack([hi_t, b])
        bound = np.column_stack([bound, halves[:, 1]])
    upper = bound.max(axis=1)
    j = np.argmax(bound, axis=1)
    points = np.column_stack([lo_t[rows, j], np.sqrt(lo_t[rows, j] * hi_t[rows, j]),
                              hi_t[rows, j]])
    _, s_best = _dual_values(Zt[:, None], SC[:, None], lam, mass_dir, xi, points, points,
                             iterations)
    inv = 1.0 / (lam * (s_best / (2.0 * points) + (1.0 - s_best) * xi)[..., None])
    _, beta = _generalised_top(Zt[:, None], SC[:, None], inv, mass_dir,
                               s_best * points / 2.0, vectors=True)
    found = _ratio_values(Zt[:, None], SC[:, None], lam, mass_dir, xi, beta)
    best = np.argmax(found, axis=1)
    out = upper.reshape(-1, 2), np.maximum(found.max(axis=1), 0.0).reshape(-1, 2)
    if return_maximisers:
        directions = beta[rows, best] @ U.T
        return (*out, directions.reshape(-1, 2, U.shape[0]))
    return out


def factor_rotation(factor, n):
    """Eigenbasis ``U``, eigenvalues ``lam`` of :math:`Q = \\Phi^\\top\\Phi/n` (numerically
    null directions dropped) and :math:`U^\\top a`, :math:`a = \\Phi^\\top\\mathbf 1/n`."""
    lam, U = np.linalg.eigh(factor.T @ factor / n)
    keep = lam > 1e-12 * max(lam.max(), 1e-300)
    U, lam = U[:, keep], lam[keep]
    return U, lam, U.T @ (factor.sum(axis=0) / n)


def rkhs_sup_statistics(factor, values, weights, theta_hat, target_kind="overall"):
    """Per replicate, :math:`\\sup_{\\|h\\| \\le 1} \\pm T_b(h)` over the RKHS unit ball.

    Parameters
    ----------
    factor : ndarray of shape (n, r)
        :math:`\\Phi`.
    values : ndarray of shape (n,)
        :math:`L`.
    weights : ndarray of shape (size, n)
        Bootstrap row weights (summing to n).
    theta_hat : float
    target_kind : {"overall", "constant"}

    Returns
    -------
    ndarray of shape (size, 2)
    """
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    n = values.size
    theta_b = weights @ values / n if target_kind == "overall" else np.full(
        weights.shape[0], theta_hat)
    return _rank_four_suprema(factor, np.ones(n), values, theta_hat, weights,
                              weights * values, theta_b, n)


#: Intervals the rescaled branch and bound ends with: ``grid - 1 + rounds`` of the defaults
#: of :func:`rescaled_rkhs_suprema`.
_INTERVALS = 12 - 1 + 16


@dataclass(frozen=True, eq=False)
class _RKHSStatistic:
    """The RKHS suprema as a statistic of replicate sums (cells = audit rows): unscaled
    ``(size, 2)``; rescaled ``(size, 4)``, the upper bounds then the best values found."""

    factor: np.ndarray
    count0: np.ndarray
    sum0: np.ndarray
    theta_hat: float
    n: int
    rescaled: tuple = None  # (rotation, xi, sd)

    def replicate_cost(self, stats):
        """``(bytes_per_replicate, batch_width, fixed_bytes)`` (memory rule of
        :mod:`skfair_audit._resampling`). Bytes: the replicate sums over the ``n`` rows and
        the rank-four forms ``Z`` (``r x 4``); rescaled, the branch and bound's arrays over
        both signs, up to ``grid - 1 + rounds`` intervals, ``r x 4`` each, with their
        temporaries. Width: ``2 n``, rescaled at least ``32 r``. No fixed part."""
        rank = self.factor.shape[1]
        width = 2 * self.n
        per_replicate = stats.replicate_sums_bytes + 8 * (self.n + 4 * rank + 32)
        if self.rescaled is not None:
            width = max(width, 32 * rank)
            per_replicate += 8 * 2 * _INTERVALS * (8 * rank + 48)
        return per_replicate, width, 0

    def __call__(self, replicates):
        args = (self.factor, self.count0, self.sum0, self.theta_hat, replicates.counts,
                replicates.sums, replicates.theta, self.n)
        if self.rescaled is None:
            return _rank_four_suprema(*args)
        rotation, xi, sd = self.rescaled
        upper, lower = rescaled_rkhs_suprema(*_rank_four_forms(*args), rotation, xi)
        return np.column_stack([upper, lower]) / sd


_RKHS_TILT_BOUNDS_PARAMETERS = {
    "bandwidth": [Interval("real", 0, None, closed="neither")],
    "target": TARGET,
    "alternative": [Options(ALTERNATIVES["bounds"])], "alpha": [PROBABILITY],
    "scale": [Options(TILT_SCALES)], "p_star": [Interval("real", 0, 1, closed="neither")],
    "max_rank": [None, Interval("integral", 1, None)], "tol": [Interval("real", 0, None)],
    **BOOTSTRAP_CONSTRAINTS,
}


@validate_params(_RKHS_TILT_BOUNDS_PARAMETERS)
def rkhs_tilt_bounds(
    X,
    y,
    y_pred,
    *,
    metric,
    bandwidth,
    target=0.0,
    alternative="lower",
    alpha=0.1,
    scale="unscaled",
    p_star=0.01,
    max_rank=None,
    tol=1e-6,
    pos_label=None,
    n_resamples=500,
    batch_size=None,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    random_state=None,
    n_jobs=None,
    verbose=0,
) -> RKHSBoundsResult:
    """Bounds on :math:`E[(L-\\theta)h]/E[h]` simultaneous over a Gaussian RKHS unit ball.

    Calibrates one critical value :math:`c` by the bootstrap (a rank-4 reduction per
    replicate, see the module notes); any non-negative tilt can then be queried with
    :meth:`RKHSBoundsResult.bound`. With ``target=0`` (default) the bounds are on the tilted
    mean :math:`E[L h]/E[h]` itself (e.g. conditional coverage).

    ``scale="unscaled"`` (default, the paper's §5) gives widths
    :math:`c\\|h\\|_{\\mathcal H}^2/P_n[h]^2`; ``scale="rescaled"`` (the paper's Appendix D,
    with a floor proportional to :math:`\\|h\\|_n^2`, see the module notes) gives CLT-type
    widths :math:`c\\sigma\\|h\\|_n/P_n[h]` for every tilt of effective size above
    :math:`p^* n`, whatever its RKHS norm, computed at a few hundred :math:`4\\times 4`
    eigenproblems per replicate (an upper bound of the supremum, within the certified
    :attr:`RKHSBoundsResult.refinement_gap`).

    Parameters
    ----------
    X : array-like of shape (n_rows, d)
        Covariates of the tilts.
    y, y_pred, metric, pos_label
        Audit trail and metric (conditional metrics restrict to their rows).
    bandwidth : float
        :math:`\\sigma` of the Gaussian kernel.
    target : float, "overall" or bool array
        Known constant, the overall metric, or a reference group given as a boolean row
        mask; an estimated target is re-estimated in every replicate.
    alternative : {"lower", "upper", "two-sided"}
    alpha : float
        Simultaneous error level in (0, 1).
    scale : {"unscaled", "rescaled"}
    p_star : float
        Rescaled audit: the scale :math:`P_n[h]\\|h\\|_n` is floored at
        :math:`\\sqrt{p^*}\\,\\|h\\|_n^2` (tilts of effective size below :math:`p^* n` get
        wider bounds).
    max_rank, tol
        Pivoted Cholesky controls (the factor is exact to ``tol`` in trace).
    n_resamples, batch_size, random_state, n_jobs, verbose
        Bootstrap controls.
    memory_limit : int, float, str or None, default="2GiB"
        Memory budget of the bootstrap, as in :func:`~skfair_audit.group.certify_bounds`.

    Returns
    -------
    RKHSBoundsResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 5, 300)
    >>> covered = (rng.random(300) < 0.9).astype(int)
    >>> res = rkhs_tilt_bounds(x, covered, covered, metric=lambda y, p: p.astype(float),
    ...                        bandwidth=0.5, n_resamples=100, random_state=0)
    >>> centres = np.linspace(1, 2, 5)[:, None]
    >>> b = res.bound(coef=np.ones(5), centers=centres)
    >>> bool(b.lower < b.value <= 1)
    True
    """
    bandwidth = float(bandwidth)
    metric = resolve_metric(metric, pos_label)
    values, rows = metric.evaluate(y, y_pred)
    X = _as_2d(as_array(X, "X"))
    if X.shape[0] != values.size:
        raise ValueError(f"X has {X.shape[0]} rows but y has {values.size}.")
    if np.isnan(X[rows]).any():
        raise ValueError("X contains NaN values.")
    n = int(rows.sum())
    if n < 2:
        raise ValueError("the RKHS audit needs at least two rows in the audit sample.")
    # one cell per audit-sample row: the tilt is a function of that row's covariates
    cells = np.where(rows, np.cumsum(rows) - 1, 0)
    summary = AuditSummary.from_cells(y, y_pred, cells, n, metric=metric, target=target)
    X, values = X[rows], values[rows]
    factor = pivoted_cholesky(X, bandwidth, max_rank=max_rank, tol=tol)
    rescaled, sd = None, 1.0
    if scale == "rescaled":
        sd = summary_sd(summary)
        rescaled = (factor_rotation(factor, n), np.sqrt(p_star), sd)
    statistic = _RKHSStatistic(factor, np.ones(n), values, summary.theta_hat, n, rescaled)
    sups = run_bootstrap(summary, statistic, n_resamples, batch_size=batch_size,
                         memory_limit=memory_limit,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    gap = 0.0
    if rescaled is not None:
        sups, found = sups[:, :2], sups[:, 2:]
        below = critical_value(side_distribution(found, alternative), alpha)
    dist = side_distribution(sups, alternative)
    c = critical_value(dist, alpha)
    if rescaled is not None and below > 0:
        gap = c / below - 1.0
    return RKHSBoundsResult(
        critical_value=c, alpha=alpha, alternative=alternative, bandwidth=bandwidth,
        target=summary.theta_hat, n=n, rank=factor.shape[1], bootstrap_distribution=dist,
        scale=scale, p_star=p_star, sd=sd, refinement_gap=gap, _X=X, _values=values,
        _factor=factor,
    )
