import numpy as np
import pytest

from skfair_audit.group._intervals import max_subarray


def _enumerate(t, edges, min_length):
    best, arg = -np.inf, (0, 0)
    for a in range(t.size):
        for b in range(a + 1, t.size + 1):
            if edges[b] - edges[a] >= min_length - 1e-12:
                s = t[a:b].sum()
                if s > best:
                    best, arg = s, (a, b)
    return best, arg


@pytest.mark.parametrize("min_length", [0.0, 0.35, 1.0])
def test_max_subarray_equals_enumeration(min_length):
    rng = np.random.default_rng(0)
    edges = np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 0.2, 12))])
    t = rng.normal(size=(50, 12))
    best, start, end = max_subarray(t, edges, min_length, return_interval=True)
    for b in range(t.shape[0]):
        ref, (a0, b0) = _enumerate(t[b], edges, min_length)
        assert best[b] == pytest.approx(ref, abs=1e-12)
        assert t[b, start[b] : end[b]].sum() == pytest.approx(ref, abs=1e-12)
        assert edges[end[b]] - edges[start[b]] >= min_length - 1e-12


def test_all_negative_and_no_admissible_interval():
    assert float(max_subarray([-3.0, -1.0, -2.0])) == -1.0
    assert float(max_subarray([1.0, 1.0], min_length=5.0)) == -np.inf


def test_max_subarray_validates_edges():
    with pytest.raises(ValueError, match="edges"):
        max_subarray([1.0, 2.0], edges=[0.0, 1.0])
