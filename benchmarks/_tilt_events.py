"""Exact worst-case events of the monotone and polynomial tilt classes (shared by
``bench_tilt_validity.py`` and ``bench_conformal_tilts.py``)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from skfair_audit.group._monotone import half_line_sums
from skfair_audit.group._polynomial import legendre_features
from skfair_audit.group._tilts import scale_factor


def _golden_max(f, lo, hi, iterations=40):
    """Elementwise maximum of a unimodal-near-the-grid-maximum f on [lo, hi]."""
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(iterations):
        left = f1 >= f2
        a, b = np.where(left, a, x1), np.where(left, x2, b)
        new = np.where(left, b - ratio * (b - a), a + ratio * (b - a))
        fn = f(new)
        x1, x2 = np.where(left, new, x2), np.where(left, x1, new)
        f1, f2 = np.where(left, fn, f2), np.where(left, f1, fn)
    return np.maximum(f1, f2)


def monotone_event(res, mass_p, sum_p, theta_p, sides=(1.0, -1.0)):
    """``sup_w +-(eps_hat(w) - eps(w)) P_n[w] / r(w)`` over every monotone tilt of the
    class, exactly (vertices and every edge): the bounds of every tilt hold at once when it
    is at most the critical value. ``mass_p``, ``sum_p``: population mass and ``E[L 1_cell]``
    of the audit's cells; ``theta_p``: the true target."""
    summary = res._summary
    n = summary.n
    cells = summary.stats.moments.sum(axis=2)
    mass_n, sum_n = cells[0] / n, cells[1] / n
    theta_n = summary.theta_hat
    worst = -np.inf
    for direction in res._directions:
        Mn, Sn = half_line_sums(mass_n, direction), half_line_sums(sum_n, direction)
        Mp, Sp = half_line_sums(mass_p, direction), half_line_sums(sum_p, direction)

        def deviation(Mn, Sn, Mp, Sp):
            gap = (Sn / Mn - theta_n) - (Sp / Mp - theta_p)
            ratio = Mn / scale_factor(Mn, scale=res.scale, sd=res.sd, p_star=res.p_star)
            return np.max([sign * gap * ratio for sign in sides], axis=0)

        worst = max(worst, float(deviation(Mn, Sn, Mp, Sp).max()))
        j, k = np.triu_indices(Mn.size, k=1)

        def edge(lam, j=j, k=k, Mn=Mn, Sn=Sn, Mp=Mp, Sp=Sp):
            mix = [lam * v[j] + (1 - lam) * v[k] for v in (Mn, Sn, Mp, Sp)]
            return deviation(*mix)

        grid = np.linspace(0.0, 1.0, 65)
        values = np.stack([edge(np.full(j.size, g)) for g in grid])
        best = np.argmax(values, axis=0)
        lo = grid[np.maximum(best - 1, 0)]
        hi = grid[np.minimum(best + 1, grid.size - 1)]
        worst = max(worst, float(values.max()), float(_golden_max(edge, lo, hi).max()))
    return worst


def polynomial_event(res, u, weights, c_values, sides=(1.0, -1.0)):
    """``sup_q +-(eps_hat(q^2) - eps(q^2))`` over the polynomials of the class (a sum of
    squares has the extreme disparities of single squares), the population given by nodes
    ``u`` with ``weights`` and the metric's conditional mean ``c_values`` there (target 0)."""
    summary = res._summary
    cells = res._cells
    z_cells, centre, half = _standardise_like(cells)
    phi = legendre_features(z_cells, res.degree)
    counts = summary.stats.moments.sum(axis=2)
    G_n = phi.T @ (counts[0][:, None] * phi)
    N_n = phi.T @ ((counts[1] - summary.theta_hat * counts[0])[:, None] * phi)
    phi_p = legendre_features(((u - centre) / half)[:, None], res.degree)
    G_p = phi_p.T @ (weights[:, None] * phi_p)
    N_p = phi_p.T @ ((weights * c_values)[:, None] * phi_p)

    def gap(C):
        C = np.atleast_2d(C)
        return (np.einsum("ki,ij,kj->k", C, N_n, C) / np.einsum("ki,ij,kj->k", C, G_n, C)
                - np.einsum("ki,ij,kj->k", C, N_p, C) / np.einsum("ki,ij,kj->k", C, G_p, C))

    rng = np.random.default_rng(0)
    starts = rng.normal(size=(4000, phi.shape[1]))
    worst = -np.inf
    for sign in sides:
        values = sign * gap(starts)
        best = float(values.max())
        for s in starts[np.argsort(values)[-5:]]:
            opt = minimize(lambda c, sign=sign: -sign * gap(c)[0], s, method="BFGS")
            best = max(best, -opt.fun)
        worst = max(worst, best)
    return worst


def _standardise_like(cells):
    low, high = cells.min(axis=0), cells.max(axis=0)
    half = (high - low) / 2
    return (cells - (low + high) / 2) / half, (low + high)[0] / 2, half[0]
