import numpy as np
import pytest
from scipy.stats import false_discovery_control

from skfair_audit.group import benjamini_hochberg


@pytest.mark.parametrize("seed", range(5))
def test_adjusted_pvalues_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(size=40), rng.uniform(0, 0.01, size=10)])
    p[:5] = p[5]  # ties
    rejected, adjusted = benjamini_hochberg(p, q=0.1)
    np.testing.assert_allclose(adjusted, false_discovery_control(p, method="bh"), rtol=1e-12)
    np.testing.assert_array_equal(rejected, adjusted <= 0.1)


def test_rejections_equal_step_up_definition():
    rng = np.random.default_rng(7)
    p = np.sort(np.concatenate([rng.uniform(size=30), rng.uniform(0, 0.02, size=8)]))
    m, q = p.size, 0.1
    below = np.flatnonzero(p <= q * np.arange(1, m + 1) / m)
    k = below.max() + 1 if below.size else 0
    rejected, _ = benjamini_hochberg(p, q)
    assert rejected.sum() == k and rejected[:k].all()


def test_invalid_input():
    with pytest.raises(ValueError):
        benjamini_hochberg([0.1, np.nan])
    with pytest.raises(ValueError):
        benjamini_hochberg([0.1, 1.2])
    with pytest.raises(ValueError):
        benjamini_hochberg([0.1], q=0)
    rejected, adjusted = benjamini_hochberg([])
    assert rejected.size == adjusted.size == 0
