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
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .._resampling import default_batch_size
from ..utils import (
    PROBABILITY,
    ConfidenceInterval,
    Interval,
    Options,
    html_card,
    html_guarantee,
    html_verdict,
    validate_params,
)
from ._bootstrap import SufficientStatistics, critical_value, run_bootstrap
from ._metrics import as_array
from ._protocol import BOUND_SIDES
from ._summary import ALTERNATIVES, BOOTSTRAP_CONSTRAINTS, AuditSummary, resolve_metric


@dataclass(frozen=True, slots=True)
class TiltBound:
    """Bound for one tilt :math:`h` of an RKHS audit.

    Attributes
    ----------
    value : float
        :math:`P_n[L h] / P_n[h]`.
    estimate : float
        Disparity :math:`P_n[(L - \\hat\\theta) h] / P_n[h]`.
    lower, upper : float
        Simultaneous bounds on :math:`E[(L-\\theta) h]/E[h]`.
    norm : float
        RKHS norm of :math:`h`.
    """

    value: float
    estimate: float
    lower: float
    upper: float
    norm: float

    def confidence_interval(self) -> ConfidenceInterval:
        """The bounds as a :class:`~skfair_audit.utils.ConfidenceInterval`.

        Returns
        -------
        ConfidenceInterval
        """
        return ConfidenceInterval(self.lower, self.upper)


@dataclass(frozen=True, eq=False)
class RKHSBoundsResult:
    """Bounds simultaneous over all non-negative tilts of a Gaussian RKHS ball.

    Query tilts with :meth:`bound`. See :func:`skfair_audit.group.rkhs_tilt_bounds`.

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
    """

    critical_value: float
    alpha: float
    alternative: str
    bandwidth: float
    target: float
    n: int
    rank: int
    bootstrap_distribution: np.ndarray
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

    def _repr_html_(self):
        """A compact summary for notebooks: the calibrated critical value and its guarantee."""
        return html_card(
            "RKHSBoundsResult: tilts of a Gaussian RKHS ball",
            verdict=html_verdict("bounds only", "query a tilt with bound(coef=..., "
                                 "centers=...) or bound(values=...)."),
            guarantee=html_guarantee(self.guarantee()),
            key_figures={"critical value c": self.critical_value, "α (simultaneous)": self.alpha,
                         "bounds": self.alternative, "bandwidth σ": self.bandwidth,
                         "target θ": self.target, "audit rows": self.n,
                         "kernel factor rank": self.rank,
                         "resamples": self.bootstrap_distribution.size},
        )

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
        width = self.critical_value * norm2 / mass**2
        lower = estimate - width if self.alternative in ("lower", "two-sided") else -np.inf
        upper = estimate + width if self.alternative in ("upper", "two-sided") else np.inf
        return TiltBound(value, float(estimate), float(lower), float(upper),
                         float(np.sqrt(max(norm2, 0.0))))


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
    factor = np.zeros((n, max_rank))
    residual = np.ones(n)  # diag of a Gaussian kernel
    rank = 0
    for k in range(max_rank):
        if residual.sum() <= tol * n:
            break
        i = int(np.argmax(residual))
        pivot = residual[i]
        if pivot <= 0:
            break
        col = gaussian_kernel(X, X[i : i + 1], bandwidth)[:, 0] - factor[:, :k] @ factor[i, :k]
        factor[:, k] = col / np.sqrt(pivot)
        residual = np.clip(residual - factor[:, k] ** 2, 0.0, None)
        residual[i] = 0.0
        rank = k + 1
    return factor[:, :rank]


def _rank_four_suprema(factor, count0, sum0, theta_hat, counts, sums, theta_b, n):
    """``(size, 2)``: :math:`\\sup \\pm T_b(h)` over the unit ball, per replicate, from the
    per-cell observed counts/sums and the replicates' per-cell weights/weighted sums."""
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    size = counts.shape[0]
    Z = np.empty((size, factor.shape[1], 4))
    Z[:, :, 0] = factor.T @ count0
    Z[:, :, 1] = factor.T @ sum0
    Z[:, :, 2] = counts @ factor
    Z[:, :, 3] = np.atleast_2d(sums) @ factor
    gram = np.einsum("bri,brj->bij", Z, Z)
    A = np.zeros((size, 4, 4))
    A[:, 0, 3] = 1.0
    A[:, 0, 2] = theta_hat - np.asarray(theta_b, dtype=float)
    A[:, 1, 2] = -1.0
    C = (A + np.transpose(A, (0, 2, 1))) / (2.0 * n**2)
    d, V = np.linalg.eigh(gram)
    root = V * np.sqrt(np.clip(d, 0.0, None))[:, None, :]
    S = np.einsum("bki,bkl,blj->bij", root, C, root)
    eig = np.linalg.eigvalsh(S)
    return np.column_stack([np.maximum(eig[:, -1], 0.0), np.maximum(-eig[:, 0], 0.0)])


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


@dataclass(frozen=True, eq=False)
class _RKHSStatistic:
    """The RKHS suprema as a statistic of replicate sums (cells = audit rows)."""

    factor: np.ndarray
    count0: np.ndarray
    sum0: np.ndarray
    theta_hat: float
    n: int

    def __call__(self, replicates):
        return _rank_four_suprema(self.factor, self.count0, self.sum0, self.theta_hat,
                                  replicates.counts, replicates.sums, replicates.theta, self.n)


_RKHS_TILT_BOUNDS_PARAMETERS = {
    "bandwidth": [Interval("real", 0, None, closed="neither")],
    "target": [Interval("real"), Options(("overall",))],
    "alternative": [Options(ALTERNATIVES["bounds"])], "alpha": [PROBABILITY],
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
    max_rank=None,
    tol=1e-6,
    pos_label=None,
    n_resamples=500,
    batch_size=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
) -> RKHSBoundsResult:
    """Bounds on :math:`E[(L-\\theta)h]/E[h]` simultaneous over a Gaussian RKHS unit ball.

    Calibrates one critical value :math:`c` by the bootstrap (a rank-4 reduction per
    replicate, see the module notes); any non-negative tilt can then be queried with
    :meth:`RKHSBoundsResult.bound`. With ``target=0`` (default) the bounds are on the tilted
    mean :math:`E[L h]/E[h]` itself (e.g. conditional coverage).

    Parameters
    ----------
    X : array-like of shape (n_rows, d)
        Covariates of the tilts.
    y, y_pred, metric, pos_label
        Audit trail and metric (conditional metrics restrict to their rows).
    bandwidth : float
        :math:`\\sigma` of the Gaussian kernel.
    target : float or "overall"
    alternative : {"lower", "upper", "two-sided"}
    alpha : float
        Simultaneous error level in (0, 1).
    max_rank, tol
        Pivoted Cholesky controls (the factor is exact to ``tol`` in trace).
    n_resamples, batch_size, random_state, n_jobs, verbose
        Bootstrap controls.

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
    if np.isnan(X).any():
        raise ValueError("X contains NaN values.")
    X, values = X[rows], values[rows]
    n = values.size
    if n < 2:
        raise ValueError("the RKHS audit needs at least two rows in the audit sample.")
    if isinstance(target, str):
        if target != "overall":
            raise ValueError("target must be a number or 'overall' for the RKHS audit.")
        kind, theta = "overall", float(values.mean())
    else:
        kind, theta = "constant", float(target)
    factor = pivoted_cholesky(X, bandwidth, max_rank=max_rank, tol=tol)
    # The summary of a tilt audit: one cell (and one atom) per audit row.
    cells = np.arange(n)
    stats = SufficientStatistics.from_atoms(cells, np.zeros(n, bool), values, np.ones(n), n)
    summary = AuditSummary(metric, None, stats, kind, theta, rows.size)
    statistic = _RKHSStatistic(factor, np.ones(n), values, theta, n)
    sups = run_bootstrap(summary, statistic, n_resamples,
                         batch_size=default_batch_size(2 * n) if batch_size is None else
                         batch_size, random_state=random_state, n_jobs=n_jobs,
                         verbose=verbose)
    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    return RKHSBoundsResult(
        critical_value=c, alpha=alpha, alternative=alternative, bandwidth=bandwidth,
        target=theta, n=n, rank=factor.shape[1], bootstrap_distribution=dist, _X=X,
        _values=values, _factor=factor,
    )
