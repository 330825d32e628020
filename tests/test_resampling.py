import tracemalloc

import joblib
import numpy as np
import pytest

from skfair_audit._resampling import (
    HypergeometricCounts,
    MemoryLimitError,
    MultinomialCounts,
    PoissonWeights,
    RowCategories,
    batch_layout,
    default_batch_size,
    resample,
    seed_sequence,
)


def _weighted_mean(weights):
    values = np.linspace(0.0, 1.0, weights.shape[1])
    return weights @ values / weights.sum(axis=1)


DRAWS = [
    MultinomialCounts(np.array([0.1, 0.2, 0.3, 0.4]), n_trials=50),
    RowCategories(np.array([3, 0, 5, 2]), n_draws=12),
    MultinomialCounts.rows(30),
    HypergeometricCounts(np.array([5, 0, 7, 9]), m=6),
    PoissonWeights(25),
]


@pytest.mark.parametrize("draw", DRAWS, ids=lambda d: type(d).__name__)
def test_bit_identical_across_n_jobs_and_backends(draw):
    serial = resample(_weighted_mean, draw, 257, batch_size=16, random_state=3, n_jobs=1)
    for backend in ("loky", "threading"):
        with joblib.parallel_config(backend=backend):
            parallel = resample(_weighted_mean, draw, 257, batch_size=16, random_state=3, n_jobs=2)
        np.testing.assert_array_equal(serial, parallel)
    assert serial.shape == (257,)


def test_random_state_forms_are_reproducible():
    draw = DRAWS[0]
    a = resample(_weighted_mean, draw, 40, batch_size=7, random_state=11)
    b = resample(_weighted_mean, draw, 40, batch_size=7, random_state=np.random.SeedSequence(11))
    np.testing.assert_array_equal(a, b)
    rs = np.random.RandomState(0)
    c1 = resample(_weighted_mean, draw, 40, batch_size=7, random_state=rs)
    c2 = resample(_weighted_mean, draw, 40, batch_size=7, random_state=rs)
    assert not np.array_equal(c1, c2)  # an instance advances, as in scikit-learn
    d1 = resample(_weighted_mean, draw, 40, batch_size=7, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(c1, d1)


def test_batches_have_independent_streams():
    draw = MultinomialCounts.rows(10)
    out = resample(lambda w: w, draw, 8, batch_size=4, random_state=0)
    assert not np.array_equal(out[:4], out[4:])


def test_batch_layout():
    assert batch_layout(10, 4) == [4, 4, 2]
    assert batch_layout(8, 4) == [4, 4]
    assert batch_layout(3, 10) == [3]
    with pytest.raises(ValueError, match="n_resamples"):
        batch_layout(0, 4)
    with pytest.raises(ValueError, match="batch_size"):
        batch_layout(4, 0)


@pytest.mark.parametrize("controls", [{"batch_size": 10}, {"memory_limit": 10 * 8 * 20_000}],
                         ids=["batch_size", "memory_limit"])
def test_memory_is_bounded_by_batch_size_or_memory_limit(controls):
    n = 20_000
    draw = MultinomialCounts.rows(n)
    sizes = []

    def statistic(weights):
        sizes.append(weights.shape[0])
        return weights.sum(axis=1)

    tracemalloc.start()
    out = resample(statistic, draw, 500, random_state=0, **controls)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert max(sizes) == 10 and sum(sizes) == 500
    np.testing.assert_array_equal(out, n)
    # All 500 replicates at once would need 500 * n * 8 bytes = 80 MB; a batch needs 1.6 MB.
    assert peak < 20 * 10 * n * 8
    assert default_batch_size(n) * n <= 2**22


def test_draw_distributions():
    rng = np.random.default_rng(0)
    counts = MultinomialCounts(np.array([1.0, 3.0]), n_trials=1000)(rng, 2000)
    assert counts.shape == (2000, 2)
    assert np.all(counts.sum(axis=1) == 1000)
    assert abs(counts[:, 1].mean() - 750) < 2
    sub = HypergeometricCounts(np.array([5, 0, 7, 9]), m=6)(rng, 500)
    assert np.all(sub.sum(axis=1) == 6)
    assert np.all(sub <= np.array([5, 0, 7, 9]))
    poisson = PoissonWeights(1000)(rng, 20)
    assert abs(poisson.mean() - 1.0) < 0.05


def test_draw_validation():
    with pytest.raises(ValueError, match="non-negative"):
        MultinomialCounts(np.array([0.5, -0.1]), 3)
    with pytest.raises(ValueError, match="n_trials"):
        MultinomialCounts(np.array([0.5, 0.5]), 0)
    with pytest.raises(ValueError, match="exceeds"):
        HypergeometricCounts(np.array([1, 2]), m=4)
    with pytest.raises(ValueError, match="integers"):
        HypergeometricCounts(np.array([1.5, 2]), m=1)
    with pytest.raises(ValueError, match="random_state"):
        seed_sequence("seed")
    with pytest.raises(ValueError, match="non-negative"):
        seed_sequence(-1)


def test_row_categories_have_the_multinomial_law():
    """The categories of m rows drawn with replacement: multinomial counts (mean m p,
    covariance m (diag p - p p^T)), never a category without rows."""
    rng = np.random.default_rng(1)
    counts = np.array([40, 0, 10, 25, 0, 25])
    p = counts / counts.sum()
    rows = RowCategories(counts, n_draws=30)(rng, 20_000)
    assert rows.shape == (20_000, 30) and rows.dtype.kind in "iu"
    assert not np.isin(rows, [1, 4]).any()
    tallies = np.stack([np.bincount(r, minlength=6) for r in rows])
    np.testing.assert_allclose(tallies.mean(axis=0), 30 * p, atol=0.1)
    covariance = np.cov(tallies[:, [0, 2, 3, 5]].T)
    expected = 30 * (np.diag(p) - np.outer(p, p))[np.ix_([0, 2, 3, 5], [0, 2, 3, 5])]
    np.testing.assert_allclose(covariance, expected, atol=0.25)
    with pytest.raises(ValueError, match="at least one row"):
        RowCategories(np.zeros(3), 2)


# -- the memory rule -------------------------------------------------------------------


def test_replicates_per_batch_edge_cases():
    from skfair_audit._resampling import MemoryBudget, MemoryLimitError, replicates_per_batch

    assert replicates_per_batch(1000, 500, 10_000) == 10
    assert replicates_per_batch(1000, 5, 10_000) == 5          # never more than asked
    assert replicates_per_batch(1000, 10**6, None) == 10_000   # no limit: the batch cap
    assert replicates_per_batch(0, 10**6, "1B") == 10_000      # a free statistic
    assert replicates_per_batch(1000, 500, 1000) == 1          # exactly one replicate fits
    assert replicates_per_batch(1000, 500, 10_000, fixed_bytes=4000) == 6
    with pytest.raises(MemoryLimitError, match="needs about 1.2 KiB"):
        replicates_per_batch(1000, 500, 1000, fixed_bytes=200)  # the fixed part comes first
    assert replicates_per_batch(1000, 500, "1kB") == replicates_per_batch(
        1000, 500, MemoryBudget.of("1kB"))
    with pytest.raises(MemoryLimitError, match=r"needs about 1000 B, more than memory_limit "
                                               r"= 999 B"):
        replicates_per_batch(1000, 500, 999)
    with pytest.raises(ValueError, match="n_replicates"):
        replicates_per_batch(1000, 0, "1MB")
    with pytest.raises(ValueError, match="bytes_per_replicate"):
        replicates_per_batch(-1, 5, "1MB")
    with pytest.raises(ValueError, match="memory_limit"):
        replicates_per_batch(1000, 5, "lots")


def test_memory_budget_is_parsed_once():
    from skfair_audit._resampling import MEMORY_LIMIT, MemoryBudget, MemoryLimitError

    budget = MemoryBudget.of("2GiB")
    assert budget == MemoryBudget.of(2 * 2**30) and MemoryBudget.of(budget) is budget
    assert MemoryBudget.of(None).limit == np.inf and str(MemoryBudget.of(None)) == "no limit"
    with pytest.raises(MemoryLimitError, match="the thing needs about 2.0 KiB"):
        MemoryBudget.of("1KiB").check(2048, "the thing", "Shrink it")
    assert MEMORY_LIMIT[1].is_satisfied_by("500MB") and not MEMORY_LIMIT[1].is_satisfied_by(0)


@pytest.mark.parametrize("draw", [
    MultinomialCounts(np.array([0.2, 0.3, 0.5]), 101),
    RowCategories(np.array([3, 0, 5, 1, 9]), 7),
    RowCategories(np.array([3, 0, 5, 1, 9]), 13, tally=True),
    HypergeometricCounts(np.array([3, 0, 5, 1, 9]), 7),
    PoissonWeights(33),
], ids=lambda d: type(d).__name__)
def test_memory_limit_never_changes_the_replicates(draw):
    # Chunks of a batch continue the batch's stream: any memory_limit gives the same bits.
    reference = resample(lambda w: w, draw, 37, batch_size=16, random_state=5, memory_limit=None)
    width = draw.width
    for chunk in (1, 3, 5, 16):
        out = resample(lambda w: w, draw, 37, batch_size=16, random_state=5,
                       memory_limit=chunk * 8 * width)
        np.testing.assert_array_equal(out, reference)
    with pytest.raises(MemoryLimitError, match="One bootstrap replicate"):
        resample(lambda w: w, draw, 37, random_state=5, memory_limit=8 * width - 1)

