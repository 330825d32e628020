"""Audits over every non-negative polynomial tilt of one or two covariates (Cherian & Candès
2024, §5).

The class: sums of squares :math:`w = \\sum_j q_j^2` of polynomials of degree at most
:math:`k` in the covariate (in one variable these are all the non-negative polynomials of
degree :math:`2k`; in two, of total degree :math:`k`), normalised to unit mass
:math:`P_n[w] = 1` (the tilted disparity does not depend on the scale). With a basis
:math:`\\phi` of the polynomials of degree :math:`\\le k` (Legendre polynomials of the
covariate mapped to :math:`[-1, 1]`), :math:`w = \\phi^\\top P \\phi` with :math:`P \\succeq 0`
and every linear functional of :math:`w` is :math:`\\operatorname{tr}(P\\,\\cdot)`.

Supremum of the bound process (notation of :mod:`~skfair_audit.group._tilts`). With the
scale :math:`s(w) = \\sigma P_n[w]^2` the bound process is
:math:`T_b(w)/s(w) = (A_b(w) - \\hat\\epsilon(w)\\Delta_b(w))/\\sigma` at unit mass. The
estimate :math:`\\hat\\epsilon(w)` of a sum of squares is a weighted average of its squares',
which range over :math:`[e_-, e_+]`, the extreme generalised eigenvalues of
:math:`(N, G)` (:math:`N_{ij} = P_n[(L - \\hat\\theta)\\phi_i\\phi_j]`,
:math:`G_{ij} = P_n[\\phi_i\\phi_j]`). Relaxing :math:`\\hat\\epsilon(w)` to that range, the
supremum is linear in :math:`P` at fixed :math:`e`, hence attained at a single square, and

.. math::

    \\sup_w \\frac{T_b(w)}{s(w)} \\le \\max_{e \\in \\{e_-, e_+\\}}
    \\frac{\\lambda_{\\max}\\big(A^b - e\\,\\Delta^b,\\; G\\big)}{\\sigma},

two generalised eigenvalue problems of size :math:`d = \\dim \\phi` per replicate
(:math:`A^b_{ij} = A_b(\\phi_i\\phi_j)`, :math:`\\Delta^b_{ij} = \\Delta_b(\\phi_i\\phi_j)`): the
bounds :math:`\\hat\\epsilon(w) \\mp c\\,\\sigma` have the same width for every tilt of the class.
The relaxation is conservative; ``bench_tilt_validity.py`` measures its cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.polynomial import Polynomial, legendre

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
from ._summary import (
    ALTERNATIVES,
    BOOTSTRAP_CONSTRAINTS,
    TARGET,
    AuditSummary,
    resolve_metric,
)
from ._tilts import (
    TiltAuditResult,
    TiltBound,
    calibrate,
    cell_sums,
    effective_size,
    replicate_cell_sums,
    summary_sd,
    tilt_bounds,
)


def monomial_exponents(n_variables, degree):
    """Exponents of the monomials of total degree ``<= degree``, graded order.

    One variable: ``(0,), (1,), ...``; two: ``(0, 0), (1, 0), (0, 1), (2, 0), (1, 1),
    (0, 2), ...`` (the order of the coefficients of :meth:`PolynomialTiltResult.bound`).
    """
    if n_variables == 1:
        return [(j,) for j in range(degree + 1)]
    return [(total - j, j) for total in range(degree + 1) for j in range(total + 1)]


def legendre_features(z, degree):
    """Products of Legendre polynomials of the columns of ``z`` (in [-1, 1]), total degree
    ``<= degree``, in the order of :func:`monomial_exponents`."""
    per_column = [legendre.legvander(z[:, j], degree) for j in range(z.shape[1])]
    return np.column_stack([
        np.prod([per_column[j][:, e] for j, e in enumerate(exps)], axis=0)
        for exps in monomial_exponents(z.shape[1], degree)
    ])


def monomials(x, degree):
    """Monomials of the columns of ``x``, total degree ``<= degree`` (graded order)."""
    return np.column_stack([np.prod([x[:, j] ** e for j, e in enumerate(exps)], axis=0)
                            for exps in monomial_exponents(x.shape[1], degree)])


@dataclass(frozen=True, eq=False)
class PolynomialProcess:
    """Bootstrap suprema of the bound process over polynomial tilts (a statistic of
    :class:`~skfair_audit.group._bootstrap.ReplicateSums`), relaxed over the range of the
    estimates: ``(size, 2)`` suprema of :math:`\\pm T_b(w)/s(w)`."""

    features: np.ndarray
    mass: np.ndarray
    centred: np.ndarray
    n: int
    sd: float
    estimate_range: tuple
    _outer: np.ndarray = field(default=None, repr=False)

    def __post_init__(self):
        f = self.features
        object.__setattr__(self, "_outer", np.einsum("ci,cj->cij", f, f).reshape(f.shape[0], -1))

    def replicate_cost(self, stats):
        """``(bytes_per_replicate, batch_width, fixed_bytes)`` (memory rule of
        :mod:`skfair_audit._resampling`). Bytes: the replicate sums, :math:`\\Delta_b` and
        :math:`A_b` over the cells, and eight ``d x d`` matrices (the two quadratic forms,
        their combination and the eigensolver's work). Width: four floats over the atoms or
        the ``cells x d`` features. No fixed part."""
        cells, d = self.features.shape
        per_replicate = stats.replicate_sums_bytes + 8 * (2 * cells + 8 * d * d)
        return per_replicate, 4 * max(stats.n_atoms, cells * d), 0

    def __call__(self, replicates):
        delta, shift = replicate_cell_sums(replicates, self.mass, self.centred, self.n)
        d = self.features.shape[1]
        A = (shift @ self._outer).reshape(-1, d, d)
        D = (delta @ self._outer).reshape(-1, d, d)
        out = np.full((A.shape[0], 2), -np.inf)
        for e in self.estimate_range:
            eig = np.linalg.eigvalsh(A - e * D)
            out[:, 0] = np.maximum(out[:, 0], eig[:, -1])
            out[:, 1] = np.maximum(out[:, 1], -eig[:, 0])
        return out / self.sd


@dataclass(frozen=True, eq=False)
class PolynomialTiltResult(TiltAuditResult):
    """Bounds simultaneous over every non-negative polynomial tilt of degree ``2 * degree``.

    The rows (:meth:`table`, :meth:`to_frame`) are the constant tilt and the principal tilts
    :math:`q_j^2`: the squares whose estimated disparities are the generalised eigenvalues of
    the class (the first has the lowest estimate of every tilt of the class, the last the
    highest). Any sum of squares can be queried with :meth:`bound`. See
    :func:`skfair_audit.group.polynomial_tilt_bounds`.

    Attributes
    ----------
    names : tuple of str
    sizes : ndarray of int
        Effective number of rows of each tilt, :math:`(\\sum w)^2/\\sum w^2`.
    masses : ndarray
        :math:`P_n[w]` (1: the tilts are normalised to unit mass).
    estimates, group_values, lower, upper : ndarray
        As in :class:`MonotoneTiltResult`; the bounds are
        :math:`\\hat\\epsilon(w) \\mp c\\,\\sigma` (clipped to the range of the disparity).
    principal_coefficients : ndarray of shape (d, d)
        Row j: coefficients of :math:`q_j` on the monomials of the covariate (graded order,
        :func:`monomial_exponents`), scaled so that :math:`P_n[q_j^2] = 1`.
    degree : int
        :math:`k`: the tilts are sums of squares of polynomials of degree :math:`\\le k`.
    target, critical_value, alpha, alternative, sd, metric, n, bootstrap_distribution
        As in :class:`MonotoneTiltResult`.
    estimate_range : tuple of float
        :math:`[e_-, e_+]`, the range of the estimates over the class (the relaxation).
    covariates : tuple of str
    """

    names: tuple
    sizes: np.ndarray
    masses: np.ndarray
    estimates: np.ndarray
    group_values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    principal_coefficients: np.ndarray
    degree: int
    target: float
    critical_value: float
    alpha: float
    alternative: str
    sd: float
    estimate_range: tuple
    covariates: tuple
    metric: str
    n: int
    bootstrap_distribution: np.ndarray
    _summary: object = field(default=None, repr=False)
    _cells: np.ndarray = field(default=None, repr=False)

    def __repr__(self):
        return (f"PolynomialTiltResult(metric={self.metric!r}, covariates={self.covariates}, "
                f"degree={self.degree}, alternative={self.alternative!r}, alpha={self.alpha}, "
                f"critical_value={self.critical_value:.4g})")

    def _class_words(self):
        variables = " and ".join(self.covariates)
        return (f"every sum of squares of polynomials of degree ≤ {self.degree} in "
                f"{variables}")

    def tilt_values(self, coef, x):
        """Values of the tilt :math:`\\sum_j q_j(x)^2` given by monomial coefficients.

        Parameters
        ----------
        coef : array-like of shape (d,) or (r, d)
            Coefficients of :math:`q` (or of each :math:`q_j`) on the monomials
            (:func:`monomial_exponents` order; fewer than ``d`` allowed).
        x : array-like of shape (m,) or (m, n_covariates)

        Returns
        -------
        ndarray of shape (m,)
        """
        coef = np.atleast_2d(np.asarray(coef, dtype=float))
        d = len(monomial_exponents(len(self.covariates), self.degree))
        if coef.shape[1] > d or coef.ndim != 2:
            raise ValueError(f"a polynomial of degree <= {self.degree} in "
                             f"{len(self.covariates)} variable(s) has at most {d} "
                             f"coefficients, got {coef.shape[1]}: it is outside the class.")
        if not np.all(np.isfinite(coef)):
            raise ValueError("the coefficients must be finite.")
        x = np.asarray(x, dtype=float)
        x = x[:, None] if x.ndim == 1 else x
        basis = monomials(x, self.degree)[:, :coef.shape[1]]
        return ((basis @ coef.T) ** 2).sum(axis=1)

    def bound(self, coef) -> TiltBound:
        """Simultaneous bound of the tilt :math:`w = \\sum_j q_j^2`.

        Parameters
        ----------
        coef : array-like of shape (d,) or (r, d)
            Coefficients of :math:`q` (or of each :math:`q_j` of a sum of squares) on the
            monomials of the covariate(s) in graded order (:func:`monomial_exponents`:
            ``1, x, x^2, ...`` or ``1, x1, x2, x1^2, x1 x2, x2^2, ...``).

        Returns
        -------
        TiltBound
            With the tilt normalised to unit mass.
        """
        mass_c, centred_c = cell_sums(self._summary)
        w = self.tilt_values(coef, self._cells)
        mass = float(w @ mass_c)
        if not mass > 0:
            raise ValueError("the tilt is zero on every audit row.")
        w = w / mass
        estimate = float(w @ centred_c)
        counts = self._summary.stats.moments[0].sum(axis=1)
        return self._bound(estimate, estimate + self.target, 1.0, self.sd,
                           float(effective_size(w, counts)))

    def plot_caption(self, max_groups=None, epsilon0=None):
        """What :meth:`plot` draws, in a sentence.

        Parameters
        ----------
        max_groups, epsilon0 : None, float
            Ignored, as in :meth:`plot`.

        Returns
        -------
        str
        """
        if len(self.covariates) == 1:
            return (f"the worst principal tilt (solid) and the opposite extreme (dashed) as "
                    f"functions of {self.covariates[0]}, scaled to a maximum of 1; their "
                    "estimates and simultaneous bounds in the legend.")
        return (f"the worst principal tilt over {self.covariates[0]} and "
                f"{self.covariates[1]} (contours, scaled to a maximum of 1); its estimate and "
                "simultaneous bounds in the table.")

    def plot(self, ax=None, *, max_groups=None, min_size=1, epsilon0=None):
        """The worst principal tilt (and the best) over the covariate, with their bounds
        (matplotlib axes; one covariate: curves, two: the worst tilt as contours).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size, epsilon0 : None, int, float
            Ignored (the bounds are in the legend); accepted for the report.

        Returns
        -------
        matplotlib Axes
        """
        ax = self._axes(ax)
        worst = self._worst_index()
        lo, hi = self._cells.min(axis=0), self._cells.max(axis=0)
        if self._cells.shape[1] == 1:
            grid = np.linspace(lo[0], hi[0], 400)
            for j, style in ((worst, "-"), (len(self.names) - 1 if worst == 1 else 1, "--")):
                w = self.tilt_values(self.principal_coefficients[j - 1], grid)
                ax.plot(grid, w / w.max(), style,
                        label=f"{self.names[j]}: estimate {self.estimates[j]:.4g}, bounds "
                              f"[{self.lower[j]:.4g}, {self.upper[j]:.4g}]")
            ax.set_xlabel(self.covariates[0])
            ax.set_ylabel("tilt (maximum 1)")
            ax.legend(fontsize=8)
        else:
            g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], 80), np.linspace(lo[1], hi[1], 80))
            w = self.tilt_values(self.principal_coefficients[worst - 1],
                                 np.column_stack([g1.ravel(), g2.ravel()])).reshape(g1.shape)
            contour = ax.contourf(g1, g2, w / w.max(), levels=12)
            ax.figure.colorbar(contour, ax=ax, label="tilt (maximum 1)")
            ax.set_xlabel(self.covariates[0])
            ax.set_ylabel(self.covariates[1])
        ax.set_title(f"{self.metric}: worst polynomial tilt, {self.names[worst]} "
                     f"({100 * (1 - self.alpha):g}% simultaneous)")
        return ax

    def _worst_index(self):
        # the principal tilts hold the extremes of the class (row 0 is the constant tilt)
        if self.alternative == "lower":
            return 1
        if self.alternative == "upper":
            return len(self.names) - 1
        return 1 if -self.lower[1] >= self.upper[-1] else len(self.names) - 1


def _standardise(x):
    low, high = x.min(axis=0), x.max(axis=0)
    half = (high - low) / 2
    if np.any(half <= 0):
        raise ValueError("a covariate is constant on the audit sample: no polynomial tilt "
                         "can vary.")
    return (x - (low + high) / 2) / half, (low + high) / 2, half


def _power_coefficients(whitened, chol, centre, half, degree, cells):
    """Monomial coefficients of the principal polynomials (rows of ``whitened``)."""
    legendre_coef = np.linalg.solve(chol.T, whitened.T).T  # coefficients on phi
    if cells.shape[1] == 1:
        shift = Polynomial([-centre[0] / half[0], 1.0 / half[0]])
        out = np.zeros_like(legendre_coef)
        for j, c in enumerate(legendre_coef):
            poly = Polynomial(legendre.leg2poly(c))(shift)
            out[j, :poly.coef.size] = poly.coef
        return out
    # two covariates: the polynomial is in the span of the monomials, fit it exactly
    z = (cells - centre) / half
    values = legendre_features(z, degree) @ legendre_coef.T
    return np.linalg.lstsq(monomials(cells, degree), values, rcond=None)[0].T


_POLYNOMIAL_PARAMETERS = {
    "target": TARGET, "degree": [Interval("integral", 1, 8)],
    "alternative": [Options(ALTERNATIVES["bounds"])], "alpha": [PROBABILITY],
    "names": [None, STRING, ARRAY_LIKE], **BOOTSTRAP_CONSTRAINTS,
}


@validate_params(_POLYNOMIAL_PARAMETERS)
def polynomial_tilt_bounds(
    y,
    y_pred,
    x,
    *,
    metric,
    degree=2,
    target="overall",
    alternative="two-sided",
    alpha=0.1,
    names=None,
    pos_label=None,
    n_resamples=1000,
    batch_size=None,
    memory_limit=DEFAULT_MEMORY_LIMIT,
    random_state=None,
    n_jobs=None,
    verbose=0,
) -> PolynomialTiltResult:
    """Bounds on :math:`E[(L-\\theta)w(X)]/E[w(X)]` simultaneous over polynomial tilts.

    The class is every sum of squares :math:`w = \\sum_j q_j^2` of polynomials of degree at
    most ``degree`` in one covariate (all non-negative polynomials of degree
    ``2 * degree``) or two (a low-degree surface). The bootstrap supremum of the bound
    process reduces to two generalised eigenvalue problems of size
    :math:`d = \\dim\\{q\\}` per replicate (see :mod:`~skfair_audit.group._polynomial`); then,
    simultaneously for every tilt of the class,

    .. math::

        \\hat\\epsilon(w) - c\\,\\sigma \\le \\epsilon(w) \\le \\hat\\epsilon(w) + c\\,\\sigma .

    The rescaling of the group audits does not apply: the tilts are normalised to unit mass
    and the bounds have one width for the whole class.

    Parameters
    ----------
    y, y_pred : array-like of shape (n_rows,) (``y_pred`` may be 2-D for coverage)
        Outcomes and model outputs of the audit trail.
    x : array-like of shape (n_rows,) or (n_rows, 2)
        One or two numeric covariates (a pandas Series or DataFrame gives their names).
    metric : str, Metric or callable
        See :func:`get_metric`.
    degree : int, default=2
        :math:`k`: squares of polynomials of degree :math:`\\le k` (tilts of degree
        :math:`2k`).
    target : float, "overall" or bool array
        Known constant, the overall metric, or a reference group given as a boolean row
        mask; an estimated target is re-estimated in every replicate.
    alternative : {"two-sided", "lower", "upper"}
    alpha : float
        Simultaneous error level in (0, 1).
    names : str or list of str, optional
        Names of the covariates (default: the pandas names, else ``x`` or ``x1, x2``).
    pos_label : optional
        Positive label, when ``metric`` is a name.
    n_resamples, batch_size, random_state, n_jobs, verbose
        Bootstrap controls, as in :func:`monotone_tilt_bounds`.
    memory_limit : int, float, str or None, default="2GiB"
        Memory budget of the bootstrap, as in :func:`~skfair_audit.group.certify_bounds`.

    Returns
    -------
    PolynomialTiltResult

    See Also
    --------
    monotone_tilt_bounds, rkhs_tilt_bounds : other classes of tilts.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 1, 4000)
    >>> covered = (rng.random(4000) < 0.95 - 0.1 * x**2).astype(int)
    >>> res = polynomial_tilt_bounds(covered, covered, x, metric=lambda y, p: p.astype(float),
    ...                              degree=2, target=0.0, alternative="lower",
    ...                              n_resamples=200, random_state=0)
    >>> b = res.bound([0.0, 0.0, 1.0])  # the tilt x^4, weighting the right end
    >>> bool(b.lower < b.value < 0.95)
    True
    """
    metric = resolve_metric(metric, pos_label)
    if names is None:
        names = getattr(x, "columns", None)
        names = [str(c) for c in names] if names is not None else getattr(x, "name", None)
    x = as_array(x, "x")
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] not in (1, 2) or x.dtype.kind not in "biuf":
        raise ValueError("x must be one or two numeric covariates, shape (n,) or (n, 2).")
    x = x.astype(float)
    names = [names] if isinstance(names, str) else names
    if names is None:
        names = ["x"] if x.shape[1] == 1 else ["x1", "x2"]
    if len(names) != x.shape[1]:
        raise ValueError(f"names must name the {x.shape[1]} covariate(s).")
    values, rows = metric.evaluate(y, y_pred)
    if x.shape[0] != values.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {values.shape[0]}.")
    if not np.all(np.isfinite(x[rows])):
        raise ValueError("x contains NaN or infinite values.")
    cells, cell = np.unique(x[rows], axis=0, return_inverse=True)
    d = len(monomial_exponents(x.shape[1], degree))
    if cells.shape[0] < d:
        raise ValueError(f"polynomials of degree <= {degree} need at least {d} distinct "
                         f"covariate values in the audit sample, got {cells.shape[0]}.")
    cell_of_row = np.zeros(x.shape[0], dtype=np.int64)
    cell_of_row[rows] = cell.ravel()
    summary = AuditSummary.from_cells(y, y_pred, cell_of_row, cells.shape[0], metric=metric,
                                      target=target)
    z, centre, half = _standardise(cells)
    phi = legendre_features(z, degree)
    mass_c, centred_c = cell_sums(summary)
    gram = phi.T @ (mass_c[:, None] * phi)
    try:
        chol = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError:
        raise ValueError("the covariate values do not determine the polynomials of this "
                         "degree (singular Gram matrix): lower the degree.") from None
    whitened = np.linalg.solve(chol, phi.T).T  # sum_c M_c f_c f_c' = I
    numer = whitened.T @ (centred_c[:, None] * whitened)
    estimates, vectors = np.linalg.eigh(numer)
    sd = summary_sd(summary)
    process = PolynomialProcess(whitened, mass_c, centred_c, summary.n, sd,
                                (float(estimates[0]), float(estimates[-1])))
    dist, c = calibrate(summary, process, n_resamples, alternative, alpha,
                        batch_size=batch_size, memory_limit=memory_limit,
                        random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    counts = summary.stats.moments[0].sum(axis=1)
    squares = (whitened @ vectors) ** 2  # (cells, d): the principal tilts, unit mass
    sizes = [effective_size(np.ones(cells.shape[0]), counts)] + [
        effective_size(squares[:, j], counts) for j in range(d)]
    ests = np.concatenate([[float(centred_c.sum() / mass_c.sum())], estimates])
    lower, upper = tilt_bounds(ests, np.ones(d + 1), np.full(d + 1, sd), c, alternative,
                               summary)
    coefficients = _power_coefficients(vectors.T, chol, centre, half, degree, cells)
    tilt_names = ("constant (every row)", *(
        f"principal tilt {j + 1}" + (" (lowest estimate)" if j == 0 else
                                     " (highest estimate)" if j == d - 1 else "")
        for j in range(d)))
    return PolynomialTiltResult(
        names=tilt_names, sizes=np.round(sizes).astype(int), masses=np.ones(d + 1),
        estimates=ests, group_values=ests + summary.theta_hat, lower=lower, upper=upper,
        principal_coefficients=coefficients, degree=int(degree), target=summary.theta_hat,
        critical_value=c, alpha=alpha, alternative=alternative, sd=sd,
        estimate_range=process.estimate_range, covariates=tuple(str(n) for n in names),
        metric=metric.name, n=summary.n, bootstrap_distribution=dist, _summary=summary,
        _cells=cells,
    )
