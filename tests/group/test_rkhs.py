import joblib
import numpy as np
import pytest
from scipy import linalg

from skfair_audit._resampling import MultinomialCounts
from skfair_audit.group import rkhs_tilt_bounds
from skfair_audit.group._rkhs import gaussian_kernel, pivoted_cholesky, rkhs_sup_statistics


def _brute_force(K, values, w, theta_hat, theta_b):
    """sup over ||h||_H <= 1 of T_b(h) as an n x n generalised eigenproblem."""
    n = values.size
    a = np.ones(n) / n
    b = w * (values - theta_b) / n
    c = (values - theta_hat) / n
    d = w / n
    M = 0.5 * (np.outer(a, b) + np.outer(b, a) - np.outer(c, d) - np.outer(d, c))
    # h = K alpha, ||h||^2 = alpha' K alpha: max alpha' K M K alpha / alpha' K alpha
    eig = linalg.eigh(K @ M @ K, K, eigvals_only=True)
    return max(eig[-1], 0.0), max(-eig[0], 0.0)


@pytest.mark.parametrize("target_kind", ["overall", "constant"])
def test_rank_four_reduction_equals_brute_force(target_kind):
    rng = np.random.default_rng(0)
    n = 25
    X = np.sort(rng.uniform(0, 5, n))[:, None]
    values = (rng.random(n) < 0.6).astype(float)
    K = gaussian_kernel(X, X, 0.3)
    factor = np.linalg.cholesky(K)  # exact factor: K = Phi Phi'
    weights = MultinomialCounts.rows(n)(rng, 6).astype(float)
    theta_hat = values.mean() if target_kind == "overall" else 0.5
    got = rkhs_sup_statistics(factor, values, weights, theta_hat, target_kind)
    for b, w in enumerate(weights):
        theta_b = w @ values / n if target_kind == "overall" else theta_hat
        ref = _brute_force(K, values, w, theta_hat, theta_b)
        np.testing.assert_allclose(got[b], ref, rtol=1e-6, atol=1e-12)


def test_pivoted_cholesky_is_low_rank_and_accurate():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 5, (400, 1))
    factor = pivoted_cholesky(X, 0.5, tol=1e-8)
    assert factor.shape[1] < 60
    K = gaussian_kernel(X, X, 0.5)
    assert np.abs(K - factor @ factor.T).max() < 1e-5
    small = pivoted_cholesky(X, 0.5, max_rank=5)
    assert small.shape == (400, 5)


def test_rkhs_bounds_cover_a_smooth_tilt():
    rng = np.random.default_rng(2)
    n = 600
    x = rng.uniform(0, 5, n)
    covered = (rng.random(n) < np.where(x < 2.5, 0.95, 0.8)).astype(int)
    res = rkhs_tilt_bounds(x, covered, covered, metric=lambda y, p: p.astype(float),
                           bandwidth=0.5, alternative="two-sided", n_resamples=200,
                           random_state=0)
    centres = np.linspace(0.5, 2.0, 4)[:, None]
    b = res.bound(coef=np.ones(4), centers=centres)
    assert b.lower < b.value < b.upper
    assert b.lower < 0.95 < b.upper
    ci = b.confidence_interval()
    assert (ci.low, ci.high) == (b.lower, b.upper)
    # the same tilt given by its values at the audit points: same ratio, norm no larger
    h = gaussian_kernel(x[:, None], centres, 0.5) @ np.ones(4)
    b2 = res.bound(values=h)
    assert b2.value == pytest.approx(b.value)
    assert b2.norm <= b.norm * (1 + 1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        res.bound(values=h - 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        res.bound()


def test_rkhs_is_deterministic_across_jobs():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (200, 2))
    yv = rng.integers(0, 2, 200)
    kw = dict(metric="error_rate", bandwidth=0.3, n_resamples=60, batch_size=16,
              random_state=5, target="overall")
    r1 = rkhs_tilt_bounds(x, yv, 1 - yv * 0, n_jobs=1, **kw)
    with joblib.parallel_config(backend="threading"):
        r2 = rkhs_tilt_bounds(x, yv, 1 - yv * 0, n_jobs=2, **kw)
    np.testing.assert_array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)


def test_rkhs_bad_input():
    with pytest.raises(ValueError, match="bandwidth"):
        rkhs_tilt_bounds([0.0, 1.0], [0, 1], [0, 1], metric="error_rate", bandwidth=0)
    with pytest.raises(ValueError, match="rows"):
        rkhs_tilt_bounds([0.0, 1.0, 2.0], [0, 1], [0, 1], metric="error_rate", bandwidth=1)


def _rescaled_ratio(Phi, Z, C, xi, B):
    """beta'ZCZ'beta / max(|a'beta| ||Phi beta||_n, xi ||Phi beta||_n^2), rows of B."""
    h = B @ Phi.T
    z = B @ Z
    num = np.einsum("ki,ij,kj->k", z, C, z)
    mass, square = np.abs(h.mean(axis=1)), (h**2).mean(axis=1)
    return num / np.maximum(mass * np.sqrt(square), xi * square)


def _dense_dual(Phi, Z, C, xi, n_t=300, n_s=201):
    """The supremum by enumeration: max over a dense t grid of the min over a dense s grid
    of the top generalised eigenvalue of (ZCZ', s E_t + (1-s) xi Q), full r x r matrices."""
    n = Phi.shape[0]
    a, Q, G = Phi.sum(axis=0) / n, Phi.T @ Phi / n, Z @ C @ Z.T
    s = np.linspace(0.0, 1.0, n_s)[:, None, None]
    best = 0.0
    for t in np.geomspace(1.0, 1.0 / xi, n_t):
        E = (t * np.outer(a, a) + Q / t) / 2.0
        # G v = lambda M v for every s at once: eigenvalues of L^-1 G L^-T, M = L L'
        L = np.linalg.cholesky(s * E + (1 - s) * xi * Q)
        half = np.linalg.solve(L, np.broadcast_to(G, L.shape))
        values = np.linalg.eigvalsh(np.linalg.solve(L, half.swapaxes(-1, -2)))[:, -1]
        best = max(best, values.min())
    return best


def test_rescaled_supremum_is_bracketed():
    from skfair_audit.group._rkhs import (
        _rank_four_forms,
        factor_rotation,
        rescaled_rkhs_suprema,
    )

    rng = np.random.default_rng(4)
    n = 80
    x = np.sort(rng.uniform(0, 5, n))[:, None]
    values = (rng.random(n) < 0.3 + 0.1 * x[:, 0]).astype(float)
    Phi = pivoted_cholesky(x, 2.5, tol=1e-8)
    W = MultinomialCounts.rows(n)(rng, 2).astype(float)
    Z, C = _rank_four_forms(Phi, np.ones(n), values, values.mean(), W, W * values,
                            W @ values / n, n)
    xi = 0.1
    upper, lower, beta = rescaled_rkhs_suprema(Z, C, factor_rotation(Phi, n), xi,
                                               return_maximisers=True)
    for b in range(2):
        for side, sign in enumerate((1.0, -1.0)):
            # the lower bound is attained by the maximiser returned
            attained = _rescaled_ratio(Phi, Z[b], sign * C[b], xi, beta[b, side][None])[0]
            assert attained == pytest.approx(lower[b, side], rel=1e-8)
            # no direction beats the upper bound (dense random directions)
            sampled = _rescaled_ratio(Phi, Z[b], sign * C[b], xi,
                                      rng.normal(size=(20000, Phi.shape[1])))
            assert sampled.max() <= upper[b, side]
            # the dual by enumeration (full matrices, no Sherman-Morrison, no search)
            dense = _dense_dual(Phi, Z[b], sign * C[b], xi)
            assert lower[b, side] <= dense * (1 + 1e-3)
            assert dense <= upper[b, side] * (1 + 1e-3)
            assert upper[b, side] <= lower[b, side] * 1.05  # tight


def test_rescaled_bounds_formula_reference_target_and_width():
    rng = np.random.default_rng(6)
    n = 500
    x = rng.uniform(0, 5, n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.85, y, 1 - y)
    ref = x < 2.0
    res = rkhs_tilt_bounds(x, y, p, metric="error_rate", bandwidth=0.7, target=ref,
                           alternative="two-sided", scale="rescaled", n_resamples=60,
                           random_state=0)
    err = (y != p).astype(float)
    assert res.target == pytest.approx(err[ref].mean())
    assert res.scale == "rescaled" and 0 <= res.refinement_gap < 0.1
    centres = np.linspace(3, 4, 5)[:, None]
    b = res.bound(coef=np.ones(5), centers=centres)
    h = gaussian_kernel(x[:, None], centres, 0.7) @ np.ones(5)
    mass, square = h.mean(), (h**2).mean()
    width = res.critical_value * res.sd * max(mass * np.sqrt(square), 0.1 * square) / mass**2
    assert b.upper - b.estimate == pytest.approx(width)
    assert b.effective_size == pytest.approx(h.sum() ** 2 / (h**2).sum())
    # the rescaled width does not grow with the RKHS norm (scale-free), the unscaled one does
    unscaled = rkhs_tilt_bounds(x, y, p, metric="error_rate", bandwidth=0.7, target=ref,
                                alternative="two-sided", n_resamples=60, random_state=0)
    b2 = unscaled.bound(coef=np.ones(5), centers=centres)
    assert b2.upper - b2.estimate == pytest.approx(unscaled.critical_value * b2.norm**2 / mass**2)


def test_pivoted_cholesky_grows_its_factor_as_needed():
    # the factor is allocated by blocks (never n x max_rank up front): a rank above the first
    # block stays exact
    X = np.linspace(0, 1, 300)[:, None]
    factor = pivoted_cholesky(X, 0.02, tol=1e-12)
    assert factor.shape[1] > 64
    assert np.abs(factor @ factor.T - gaussian_kernel(X, X, 0.02)).max() < 1e-9
