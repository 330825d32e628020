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
