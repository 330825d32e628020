"""Polynomial tilts: generalised eigenvalue suprema against multi-start optimisation."""

import joblib
import numpy as np
import pytest
from scipy.optimize import minimize

from skfair_audit.group import PolynomialTiltResult, polynomial_tilt_bounds
from skfair_audit.group._bootstrap import ReplicateSums
from skfair_audit.group._polynomial import (
    PolynomialProcess,
    legendre_features,
    monomial_exponents,
    monomials,
)

COVERED = dict(metric=lambda y, p: p.astype(float), target=0.0)


def _multistart(objective, d, rng, starts=60):
    """max over unit vectors c of objective(c), by BFGS from random starts."""
    best = -np.inf
    for _ in range(starts):
        res = minimize(lambda c: -objective(c / np.linalg.norm(c)), rng.normal(size=d),
                       method="BFGS")
        best = max(best, -res.fun)
    return best


def _setup(seed=0, n=80, degree=2):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    L = (rng.random(n) < 0.5 + 0.3 * x**2).astype(float)
    phi = legendre_features(x[:, None], degree)  # one cell per row
    W = rng.multinomial(n, np.ones(n) / n, size=3).astype(float)
    theta_hat = L.mean()
    return rng, x, L, phi, W, theta_hat


def test_supremum_and_range_equal_multistart_optimisation():
    rng, x, L, phi, W, theta_hat = _setup()
    n, d = L.size, phi.shape[1]
    mass, centred = np.ones(n) / n, (L - theta_hat) / n
    gram = phi.T @ phi / n
    chol = np.linalg.cholesky(gram)
    whitened = np.linalg.solve(chol, phi.T).T
    est = np.linalg.eigvalsh(whitened.T @ (centred[:, None] * whitened))

    def estimate(c):  # estimate of the tilt (c' phi)^2 from the rows
        w = (phi @ c) ** 2
        return ((L - theta_hat) * w).sum() / w.sum()

    lo = -_multistart(lambda c: -estimate(c), d, rng)
    hi = _multistart(estimate, d, rng)
    np.testing.assert_allclose([lo, hi], [est[0], est[-1]], rtol=1e-6)
    sd = L.std()
    theta_b = W @ L / n
    sums = ReplicateSums(W.copy(), W * L, theta_b)
    got = PolynomialProcess(whitened, mass, centred, n, sd, (est[0], est[-1]))(sums)
    for b in range(W.shape[0]):
        def value(c, e, sign, b=b):
            w = (phi @ c) ** 2
            stat = ((W[b] * (L - theta_b[b] - e) * w).sum() - ((L - theta_hat - e) * w).sum())
            return sign * stat / w.sum() / sd
        ref = [max(_multistart(lambda c, e=e, s=s: value(c, e, s), d, rng)
                   for e in (est[0], est[-1])) for s in (1.0, -1.0)]
        np.testing.assert_allclose(got[b], ref, rtol=1e-6)


def test_relaxation_bounds_the_exact_bound_process():
    """The relaxed supremum is at least the supremum of the paper's bound process itself."""
    rng, x, L, phi, W, theta_hat = _setup(seed=1, degree=1)
    n, d = L.size, phi.shape[1]
    mass, centred = np.ones(n) / n, (L - theta_hat) / n
    chol = np.linalg.cholesky(phi.T @ phi / n)
    whitened = np.linalg.solve(chol, phi.T).T
    est = np.linalg.eigvalsh(whitened.T @ (centred[:, None] * whitened))
    sd, theta_b = L.std(), W @ L / n
    got = PolynomialProcess(whitened, mass, centred, n, sd, (est[0], est[-1]))(
        ReplicateSums(W.copy(), W * L, theta_b))
    for b in range(W.shape[0]):
        def process(c, sign, b=b):
            w = (phi @ c) ** 2
            m, mb = w.mean(), (W[b] * w).sum() / n
            T = m * (W[b] * (L - theta_b[b]) * w).sum() / n - ((L - theta_hat) * w).mean() * mb
            return sign * T / (sd * m**2)
        for side, sign in enumerate((1.0, -1.0)):
            exact = _multistart(lambda c, s=sign: process(c, s), d, rng)
            assert got[b, side] >= exact - 1e-9


def _audit(n=2000, seed=0, **kw):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, n)
    covered = (rng.random(n) < 0.93 - 0.01 * (x - 2.5) ** 2).astype(int)
    options = dict(COVERED, degree=2, n_resamples=150, random_state=0)
    options.update(kw)
    return x, covered, polynomial_tilt_bounds(covered, covered, x, **options)


def test_result_queries_coefficients_and_protocol():
    x, covered, res = _audit()
    assert isinstance(res, PolynomialTiltResult)
    assert res.names[0] == "constant (every row)" and len(res.names) == 4
    assert res.estimates[0] == pytest.approx(covered.mean())
    # the principal polynomials reproduce the principal estimates; the first is the lowest
    for j in range(3):
        b = res.bound(res.principal_coefficients[j])
        assert b.estimate == pytest.approx(res.estimates[j + 1], abs=1e-9)
    assert res.estimates[1] == res.estimates.min()
    # every tilt of the class has the same width c * sd, clipped to [0, 1]
    b = res.bound([1.0, -0.4])  # (1 - 0.4 x)^2
    w = (1 - 0.4 * x) ** 2
    assert b.value == pytest.approx((w * covered).sum() / w.sum())
    assert b.value - b.lower == pytest.approx(res.critical_value * res.sd)
    # a sum of squares is a weighted average of its squares
    both = res.bound([[1.0, 0.0, 0.0], [0.0, 0.0, 0.2]])
    w2 = 1 + (0.2 * x**2) ** 2
    assert both.value == pytest.approx((w2 * covered).sum() / w2.sum())
    with pytest.raises(ValueError, match="outside the class"):
        res.bound(np.ones(4))
    assert res.worst() == "principal tilt 1 (lowest estimate)" or res.alternative != "lower"
    assert res.table().rows[0][0] == "constant (every row)"
    assert "sum of squares" in res.guarantee()
    assert list(res.to_frame().columns) == ["effective_size", "mass", "value", "estimate",
                                            "lower", "upper"]


def test_two_covariates_and_monomial_order():
    assert monomial_exponents(2, 2) == [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (1500, 2))
    np.testing.assert_allclose(monomials(X, 2)[:, 4], X[:, 0] * X[:, 1])
    y = (rng.random(1500) < 0.9 - 0.1 * X[:, 0] * X[:, 1]).astype(int)
    res = polynomial_tilt_bounds(y, y, X, **COVERED, degree=1, names=["a", "b"],
                                 n_resamples=100, random_state=0)
    assert res.covariates == ("a", "b") and len(res.names) == 4
    b = res.bound([0.0, 1.0, 1.0])  # (a + b)^2
    w = (X[:, 0] + X[:, 1]) ** 2
    assert b.value == pytest.approx((w * y).sum() / w.sum())


def test_results_identical_for_any_n_jobs():
    _, _, r1 = _audit(n_jobs=1, batch_size=32)
    with joblib.parallel_config(backend="threading"):
        _, _, r2 = _audit(n_jobs=2, batch_size=32)
    np.testing.assert_array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)


def test_reference_target_and_bad_input():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 800)
    y = rng.integers(0, 2, 800)
    p = np.where(rng.random(800) < 0.8, y, 1 - y)
    res = polynomial_tilt_bounds(y, p, x, metric="error_rate", target=x < 0.5,
                                 n_resamples=50, random_state=0)
    assert res.target == pytest.approx((y != p)[x < 0.5].mean())
    with pytest.raises(ValueError, match="distinct covariate values"):
        polynomial_tilt_bounds(y[:10], p[:10], np.repeat([0.0, 1.0], 5), metric="error_rate",
                               degree=2)
    with pytest.raises(ValueError, match="degree"):
        polynomial_tilt_bounds(y, p, x, metric="error_rate", degree=0)
    with pytest.raises(ValueError, match="one or two"):
        polynomial_tilt_bounds(y, p, np.ones((800, 3)), metric="error_rate")
    with pytest.raises(ValueError, match="constant"):
        polynomial_tilt_bounds(y, p, np.column_stack([x, np.ones(800)]), metric="error_rate",
                               degree=1)


def test_quick_simultaneous_coverage_of_every_polynomial_tilt():
    """Known truth on x ~ U(0, 1): the worst tilt of the class has the lowest disparity;
    the lower bound of the principal tilt 1 must lie below the smallest tilted coverage of
    the class (computed exactly from the population moments)."""
    rng = np.random.default_rng(12)
    grid = (np.arange(4000) + 0.5) / 4000  # population of x: midpoint rule
    cov = 0.95 - 0.1 * grid**2
    reps, n, hits = 60, 2000, 0
    phi = legendre_features(2 * grid[:, None] - 1, 2)
    gram, numer = phi.T @ phi, phi.T @ (cov[:, None] * phi)
    worst_truth = np.linalg.eigvalsh(np.linalg.solve(np.linalg.cholesky(gram),
                                     np.linalg.solve(np.linalg.cholesky(gram), numer).T))[0]
    for _ in range(reps):
        x = rng.uniform(0, 1, n)
        covered = (rng.random(n) < 0.95 - 0.1 * x**2).astype(int)
        res = polynomial_tilt_bounds(covered, covered, x, **COVERED, degree=2,
                                     alternative="lower", n_resamples=200,
                                     random_state=rng.integers(2**31))
        hits += res.lower[1] <= worst_truth
    assert hits / reps >= 0.82
