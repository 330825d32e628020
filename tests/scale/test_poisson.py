"""Hash-seeded Poisson(1) weights, against the SplitMix64 reference and scipy's Poisson law."""

import numpy as np
import pytest
from scipy import stats

from skfair_audit.scale import poisson_weights
from skfair_audit.scale._poisson import POISSON_THRESHOLDS, mix64, row_states, splitmix64

MASK = 2**64 - 1


def _splitmix64_python(state, n):
    """Steele, Lea & Flood's SplitMix64 in plain Python integers (the C reference, verbatim)."""
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def _mix_python(z):
    return _splitmix64_python((z - 0x9E3779B97F4A7C15) & MASK, 1)[0]


def test_splitmix64_known_vectors():
    # first outputs of the reference generator seeded with 0
    assert [int(v) for v in splitmix64(0, 3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]


def test_splitmix64_matches_python_reference():
    rng = np.random.default_rng(0)
    for state in rng.integers(0, 2**63, 5).tolist() + [MASK, 2**63 + 12345]:
        assert [int(v) for v in splitmix64(state, 7)] == _splitmix64_python(state, 7)


def test_mix64_in_place_and_copy_agree():
    z = np.array([0, 1, 2**63, MASK], dtype=np.uint64)
    expected = [_mix_python(int(v)) for v in z]
    assert [int(v) for v in mix64(z)] == expected
    assert [int(v) for v in z] == [0, 1, 2**63, MASK]  # not modified without out
    mix64(z, out=z)
    assert [int(v) for v in z] == expected


def test_thresholds_are_the_poisson_cdf():
    k = np.arange(POISSON_THRESHOLDS.size)
    cdf = stats.poisson.cdf(k, 1.0)
    np.testing.assert_allclose(POISSON_THRESHOLDS.astype(float) / 2.0**64, cdf, rtol=1e-15,
                               atol=0)
    assert np.all(np.diff(POISSON_THRESHOLDS.astype(object)) >= 0)


def test_weights_are_the_poisson_quantile_of_the_hash():
    keys = np.array([0, 1, 7, 123456789, 2**40 + 3], dtype=np.uint64)
    seed = 2024
    weights = poisson_weights(row_states(keys, seed), 0, 50)
    seed_word = _mix_python(seed)
    for r, key in enumerate(keys.tolist()):
        state = _mix_python(key ^ seed_word)
        z = np.array(_splitmix64_python(state, 50), dtype=float) / 2.0**64
        np.testing.assert_array_equal(weights[r], stats.poisson.ppf(z, 1.0).astype(int))


def test_weights_follow_poisson_one():
    w = poisson_weights(row_states(np.arange(50_000), seed=7), 0, 40).ravel()
    observed = np.bincount(w, minlength=8)[:8].astype(float)
    observed[-1] += np.sum(w >= 8)
    probs = stats.poisson.pmf(np.arange(8), 1.0)
    probs[-1] = stats.poisson.sf(6, 1.0)
    chi2 = stats.chisquare(observed, probs * w.size)
    assert chi2.pvalue > 1e-3
    assert abs(w.mean() - 1.0) < 4 * np.sqrt(1.0 / w.size)


def test_weights_are_uncorrelated_across_rows_and_replicates():
    w = poisson_weights(row_states(np.arange(20_000), seed=3), 0, 30).astype(float)
    bound = 5 / np.sqrt(w.shape[0])
    across_replicates = np.corrcoef(w.T)[np.triu_indices(30, 1)]
    assert np.max(np.abs(across_replicates)) < bound
    # consecutive keys (ids 0, 1, 2 ...) must not give related streams
    assert abs(np.corrcoef(w[:-1].ravel(), w[1:].ravel())[0, 1]) < 5 / np.sqrt(w.size)


def test_weights_depend_only_on_key_seed_and_replicate():
    keys = np.arange(1000, 2000)
    full = poisson_weights(row_states(keys, 11), 0, 64)
    perm = np.random.default_rng(0).permutation(keys.size)
    np.testing.assert_array_equal(poisson_weights(row_states(keys[perm], 11), 0, 64),
                                  full[perm])
    np.testing.assert_array_equal(poisson_weights(row_states(keys[:10], 11), 17, 40),
                                  full[:10, 17:40])
    assert not np.array_equal(poisson_weights(row_states(keys, 12), 0, 64), full)
    small = poisson_weights(row_states(keys, 11), 0, 64, dtype=np.int8)
    assert small.dtype == np.int8 and np.array_equal(small, full)


def test_signed_and_unsigned_keys_agree():
    signed = np.array([-1, 0, 5], dtype=np.int64)
    unsigned = np.array([MASK, 0, 5], dtype=np.uint64)
    np.testing.assert_array_equal(row_states(signed, 1), row_states(unsigned, 1))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"keys": np.array([0.5, 1.5]), "seed": 0}, "integers"),
        ({"keys": np.zeros((2, 2), dtype=int), "seed": 0}, "one-dimensional"),
        ({"keys": np.arange(3), "seed": -1}, "seed"),
        ({"keys": np.arange(3), "seed": 2**64}, "seed"),
    ],
)
def test_row_states_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        row_states(**kwargs)


def test_replicate_range_is_checked():
    with pytest.raises(ValueError, match="start < stop"):
        poisson_weights(row_states(np.arange(3), 0), 5, 5)
