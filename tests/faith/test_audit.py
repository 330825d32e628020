"""The functional FaiTH audit: results, decisions, determinism, validity and input errors.

References: HiGHS (``scipy.optimize.linprog``) for the statistic, explicit order statistics for
the bounds, the definition of the p-values, and the known population value ``psi(f*)`` of small
simulated grids for the coverage checks.
"""

from __future__ import annotations

import itertools
import math
import warnings
from contextlib import nullcontext

import numpy as np
import pytest
from joblib import parallel_config
from scipy import sparse
from scipy.optimize import linprog

from skfair_audit.faith import DegenerateMetricWarning
from skfair_audit.faith._audit import (
    NonGaussianBootstrapWarning,
    SaturatedBudgetWarning,
    SmallSampleWarning,
    faith_audit,
)
from skfair_audit.faith._inference import bootstrap_root, bootstrap_scheme, root_bounds
from skfair_audit.faith._solver import prepare_transport


# --------------------------------------------------------------------------- instances
def small_grid():
    """24 cells: race(2, moves free) x age(3) x priors(2) x label(2), 0-1 loss of a threshold
    model that uses race; weighted one-hot cost (age 1.0, priors 0.6); label changes
    forbidden; a fixed random population pmf with every cell positive."""
    levels, weights = (2, 3, 2), (0.0, 1.0, 0.6)
    cells = np.array(list(itertools.product(*(range(k) for k in levels), range(2))))
    x, y = cells[:, :-1], cells[:, -1]
    cost = sum(w * (x[:, None, k] != x[None, :, k]) for k, w in enumerate(weights))
    forbidden = y[:, None] != y[None, :]
    score = -0.3 + 0.9 * x[:, 0] - 0.5 * x[:, 1] + 0.8 * x[:, 2]
    loss = ((score > 0.2).astype(int) != y).astype(float)
    f_star = np.random.default_rng(3).dirichlet(np.full(len(cells), 5.0))
    return loss, cost.astype(float), forbidden, f_star


def grid_epsilons():
    """(gaussian epsilon, kink epsilon): mid-segment and exactly where the budget stops
    binding, from the breakpoints of the population curve."""
    loss, cost, forbidden, f_star = small_grid()
    breaks, _ = prepare_transport(loss, cost, forbidden).curve(f_star)
    assert breaks.size >= 2
    return 0.5 * (breaks[-2] + breaks[-1]), float(breaks[-1])


def highs_value(loss, cost, forbidden, f, epsilon):
    K = len(loss)
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost) & ~forbidden
    idx = np.flatnonzero(allowed.ravel())
    a_eq = sparse.csr_array(
        (np.ones(idx.size), (idx // K, np.arange(idx.size))), shape=(K, idx.size)
    )
    res = linprog(-gain.ravel()[idx], A_ub=cost.ravel()[idx][None, :], b_ub=[epsilon],
                  A_eq=a_eq, b_eq=f, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


def sample_counts(seed=0, n=600):
    _, _, _, f_star = small_grid()
    return np.random.default_rng(seed).multinomial(n, f_star)


# --------------------------------------------------------------------------- the result
@pytest.mark.parametrize("method", ["m-out-of-n", "numerical", "nonparametric", "subsampling"])
def test_result_is_consistent_with_references(method):
    loss, cost, forbidden, _ = small_grid()
    eps, _ = grid_epsilons()
    counts = sample_counts()
    n = int(counts.sum())
    res = faith_audit(counts, loss, cost, epsilon=eps, forbidden=forbidden, delta=0.4,
                      method=method, n_resamples=400, random_state=0)
    assert res.statistic == pytest.approx(highs_value(loss, cost, forbidden, counts / n, eps))
    assert res.n == n and res.n_cells == 24 and res.method == method
    assert res.bootstrap_distribution.shape == (400,)
    alpha = 0.05
    root = np.sort(res.bootstrap_distribution)
    q_hi = root[math.ceil((1 - alpha) * 400) - 1]  # smallest x with ecdf(x) >= 0.95
    q_lo = root[400 - math.ceil((1 - alpha) * 400)]  # largest x with P(T >= x) >= 0.95
    assert res.lower_bound == pytest.approx(res.statistic - q_hi / math.sqrt(n))
    assert res.upper_bound == pytest.approx(res.statistic - q_lo / math.sqrt(n))
    assert res.confidence_interval(alternative="greater").low == res.lower_bound
    assert res.confidence_interval(alternative="less").high == res.upper_bound
    ci = res.confidence_interval()
    assert ci.low <= res.lower_bound <= res.upper_bound <= ci.high
    assert (ci.low, ci.high) == root_bounds(res.statistic, res.bootstrap_distribution, n, 0.95)
    ci90 = res.confidence_interval(0.90)
    assert (ci90.low, ci90.high) == (res.lower_bound, res.upper_bound)
    t = math.sqrt(n) * (res.statistic - 0.4)
    assert res.pvalue == np.mean(res.bootstrap_distribution >= t)
    assert res.fair_pvalue == np.mean(res.bootstrap_distribution <= t)
    assert res.rejected == (res.lower_bound > 0.4)
    assert res.certified_fair == (res.upper_bound < 0.4)
    assert res.dual_unique and res.dual_multipliers[0] == res.dual_multipliers[1]
    # The plan is a feasible transport of f_n within budget.
    plan = res.transport_plan
    np.testing.assert_allclose(plan.sum(axis=1), counts / n, atol=1e-12)
    assert (plan * cost).sum() <= eps + 1e-12
    assert not (plan[forbidden] > 0).any()


@pytest.mark.parametrize("method", ["uniform", "m-out-of-n"])
@pytest.mark.parametrize("where", [0, 1])  # mid-segment, kink
def test_decisions_match_pvalues_across_deltas(method, where):
    loss, cost, forbidden, _ = small_grid()
    eps = grid_epsilons()[where]
    counts = sample_counts(1, 800)
    rng = np.random.default_rng(0)
    kwargs = dict(epsilon=eps, forbidden=forbidden, method=method, n_resamples=300,
                  random_state=4)
    base = faith_audit(counts, loss, cost, **kwargs)
    assert base.delta is None and base.pvalue is None and base.rejected is None
    deltas = np.concatenate([
        rng.uniform(base.lower_bound - 0.05, base.upper_bound + 0.05, 25),
        [base.lower_bound - 1e-9, base.lower_bound + 1e-9,
         base.upper_bound - 1e-9, base.upper_bound + 1e-9],
        # Ties: delta exactly on a bound is not a decision, to the last digit.
        [base.lower_bound, base.upper_bound],
    ])
    n_reject = n_certify = 0
    for delta in np.clip(deltas, 0.0, 1.0):
        res = faith_audit(counts, loss, cost, delta=float(delta), **kwargs)
        assert res.rejected == (res.pvalue <= 0.05)
        assert res.certified_fair == (res.fair_pvalue <= 0.05)
        n_reject += res.rejected
        n_certify += res.certified_fair
    assert 0 < n_reject < len(deltas) and 0 < n_certify < len(deltas)


def test_kink_is_flagged_in_result():
    loss, cost, forbidden, _ = small_grid()
    counts = sample_counts(2, 500)
    breaks, _ = prepare_transport(loss, cost, forbidden).curve(counts / 500)
    # The last kink is where the budget stops binding.
    with pytest.warns(SaturatedBudgetWarning):
        res = faith_audit(counts, loss, cost, epsilon=float(breaks[-1]), forbidden=forbidden,
                          n_resamples=200, random_state=0)
    low, high = res.dual_multipliers
    assert not res.dual_unique and low == 0.0 and high > 0
    assert "kink" in str(res)


# --------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("method", ["numerical", "uniform"])
def test_bit_identical_across_jobs_and_backends(method):
    loss, cost, forbidden, _ = small_grid()
    eps = grid_epsilons()[method == "uniform"]  # the uniform max-t at a kink
    counts = sample_counts(5, 1000)
    kwargs = dict(epsilon=eps, forbidden=forbidden, delta=0.45, method=method,
                  n_resamples=450, batch_size=100, random_state=2024)
    # The uniform method's kink is the saturation point.
    def saturated():
        return pytest.warns(SaturatedBudgetWarning) if method == "uniform" else nullcontext()

    with saturated():
        reference = faith_audit(counts, loss, cost, n_jobs=1, **kwargs)
        runs = [faith_audit(counts, loss, cost, n_jobs=2, **kwargs)]
        for backend in ("loky", "threading"):
            with parallel_config(backend=backend, n_jobs=2):
                runs.append(faith_audit(counts, loss, cost, **kwargs))
    for res in runs:
        assert np.array_equal(res.bootstrap_distribution, reference.bootstrap_distribution)
        assert (res.lower_bound, res.upper_bound, res.pvalue, res.fair_pvalue) == (
            reference.lower_bound, reference.upper_bound, reference.pvalue,
            reference.fair_pvalue)
    # Another seed gives other replicates (the check above is not vacuous).
    with saturated():
        other = faith_audit(counts, loss, cost, n_jobs=1, **{**kwargs, "random_state": 2025})
    assert not np.array_equal(other.bootstrap_distribution, reference.bootstrap_distribution)


# --------------------------------------------------------------------------- validity
def coverage(epsilon, method, reps=60, n=2000, n_resamples=300, seed=0):
    """Realized coverage of the 95% two-sided CI and one-sided lower bound of psi(f*)."""
    loss, cost, forbidden, f_star = small_grid()
    problem = prepare_transport(loss, cost, forbidden)
    truth = problem.value(f_star, epsilon)
    scheme = bootstrap_scheme(method, n)
    covered_two = covered_low = 0
    for seed_rep in np.random.SeedSequence(seed).spawn(reps):
        sample_seed, boot_seed = seed_rep.spawn(2)
        counts = np.random.default_rng(sample_seed).multinomial(n, f_star)
        value, root = bootstrap_root(problem, counts, epsilon, scheme,
                                     n_resamples=n_resamples, random_state=boot_seed)
        low, high = root_bounds(value, root, n, 0.95)
        lower, _ = root_bounds(value, root, n, 0.95, "greater")
        covered_two += low <= truth <= high
        covered_low += lower <= truth
    return covered_two / reps, covered_low / reps


def test_m_out_of_n_covers_in_gaussian_regime():
    eps, _ = grid_epsilons()
    two_sided, lower = coverage(eps, "m-out-of-n")
    # Nominal 0.95; P(Binomial(60, 0.05) >= 10) < 0.004.
    assert two_sided >= 0.85 and lower >= 0.85


@pytest.mark.parametrize("method", ["m-out-of-n", "numerical"])
def test_lower_bound_not_anticonservative_at_kink(method):
    _, kink = grid_epsilons()
    _, lower = coverage(kink, method, seed=1)
    assert lower >= 0.85


# --------------------------------------------------------------------------- warnings
def kink_pair(n=1000):
    """Two cells, one move of cost 1 gaining 1: psi(f) = min(eps, f_0), at the kink."""
    loss = np.array([0.0, 1.0])
    cost = np.array([[0.0, 1.0], [1.0, 0.0]])
    counts = np.array([2 * n // 5, n - 2 * n // 5])
    return counts, loss, cost, counts[0] / n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nonparametric_warns_at_a_kink(seed):
    counts, loss, cost, eps = kink_pair()
    # (the kink of psi(f) = min(eps, f_0) is where the budget stops binding)
    with pytest.warns(SaturatedBudgetWarning), pytest.warns(NonGaussianBootstrapWarning,
                                                            match="non-Gaussian"):
        res = faith_audit(counts, loss, cost, epsilon=eps, method="nonparametric",
                          n_resamples=1000, random_state=seed)
    assert res.skewness < -0.5 and res.gaussianity_pvalue < 1e-3 and not res.dual_unique


def test_no_gaussianity_warning_away_from_kinks_or_for_consistent_schemes():
    counts, loss, cost, eps = kink_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonGaussianBootstrapWarning)
        # The diagnostic is only attached to Efron's bootstrap...
        with pytest.warns(SaturatedBudgetWarning):
            faith_audit(counts, loss, cost, epsilon=eps, method="m-out-of-n",
                        n_resamples=1000, random_state=0)
        # ...and a smooth point (budget strictly binding) gives a Gaussian root.
        faith_audit(counts, loss, cost, epsilon=0.2, method="nonparametric",
                    n_resamples=1000, random_state=0)


@pytest.mark.parametrize(
    "n, method, m",
    [(20, "nonparametric", None), (60, "m-out-of-n", None), (400, "subsampling", 10)],
)
def test_small_sample_warning(n, method, m):
    # n below 50 rows, or resamples of fewer than 20 rows (60^(2/3) -> m = 16).
    counts, loss, cost, _ = kink_pair(n)
    with pytest.warns(SmallSampleWarning, match="not meaningful"):
        faith_audit(counts, loss, cost, epsilon=0.1, method=method, m=m, n_resamples=50,
                    random_state=0)


def test_no_small_sample_warning_for_moderate_n():
    counts, loss, cost, _ = kink_pair(400)  # m = ceil(400^(2/3)) = 55
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        faith_audit(counts, loss, cost, epsilon=0.1, n_resamples=50, random_state=0)


# --------------------------------------------------------------------------- input errors
@pytest.mark.parametrize(
    "counts, match",
    [
        ([5, -1, 3, 2], "non-negative integers"),
        ([5, 1.5, 3, 2], "non-negative integers"),
        ([5, np.nan, 3, 2], "non-negative integers"),
        ([5, 1, 3], r"shape \(4,\)"),
        ([[5, 1, 3, 2]], r"shape \(4,\)"),
        ([1, 0, 0, 0], "at least 2 rows"),
        ([0, 0, 0, 0], "at least 2 rows"),
    ],
)
def test_bad_counts(counts, match):
    loss = np.array([0.0, 1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=match):
        faith_audit(counts, loss, np.zeros((4, 4)), epsilon=0.1)


@pytest.mark.parametrize("epsilon", [-0.1, np.inf, np.nan, "0.1", True, [0.1]])
def test_bad_epsilon(epsilon):
    counts, loss, cost, _ = kink_pair()
    with pytest.raises(ValueError, match="epsilon"):
        faith_audit(counts, loss, cost, epsilon=epsilon)


@pytest.mark.parametrize("delta", [-0.01, 1.01, np.nan, np.inf, True, "0.1"])
def test_bad_delta(delta):
    counts, loss, cost, _ = kink_pair()
    with pytest.raises(ValueError, match=r"delta must lie in the range .* \[0, 1\]"):
        faith_audit(counts, loss, cost, epsilon=0.1, delta=delta)


def test_delta_range_follows_the_loss_spread():
    counts, loss, cost, _ = kink_pair()
    res = faith_audit(counts, 3 * loss, cost, epsilon=0.1, delta=2.5, n_resamples=100,
                      random_state=0)
    assert res.delta == 2.5
    for delta in (0.0, 1.0):
        assert faith_audit(counts, loss, cost, epsilon=0.1, delta=delta, n_resamples=100,
                           random_state=0).delta == delta


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "efron"}, "method must be one of"),
        ({"method": "subsampling", "m": 1000}, "m < n"),
        ({"method": "m-out-of-n", "m": 1.5}, "m must be"),
        # The default (uniform) method has no resample size or step: never silently ignored.
        ({"m": 100}, "method='uniform' has no such parameter"),
        ({"numerical_step": 0.1}, "method='uniform' has no such parameter"),
        ({"method": "numerical", "numerical_step": 0.0}, "numerical_step"),
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"n_resamples": 0}, "n_resamples"),
    ],
)
def test_bad_options(kwargs, match):
    counts, loss, cost, _ = kink_pair()
    with pytest.raises(ValueError, match=match):
        faith_audit(counts, loss, cost, epsilon=0.1, **kwargs)


def test_single_cell_audit_warns_that_the_bootstrap_is_degenerate():
    loss = np.array([0.0, 1.0, 0.0, 1.0])
    # (every individual can be moved to an error for free: the metric looks degenerate)
    with pytest.warns(DegenerateMetricWarning), pytest.warns(SmallSampleWarning,
                                                             match="one cell"):
        res = faith_audit(np.array([100, 0, 0, 0]), loss, np.zeros((4, 4)), epsilon=0.0,
                          method="m-out-of-n", n_resamples=50, random_state=0)
    assert res.confidence_interval().low == res.confidence_interval().high
    # The uniform bounds keep a regularised standard error rho / sqrt(n (n - 1)) (rho = 1/2)
    # and are clipped to the range of psi, [0, 1]: psi_n = 1 here.
    # (every individual can be moved to an error for free: the metric looks degenerate)
    with pytest.warns(DegenerateMetricWarning), pytest.warns(SmallSampleWarning,
                                                             match="one cell"):
        res = faith_audit(np.array([100, 0, 0, 0]), loss, np.zeros((4, 4)), epsilon=0.0,
                          n_resamples=50, random_state=0)
    se = 0.5 / math.sqrt(100 * 99)
    assert res.statistic == 1.0 and res.upper_bound == 1.0
    assert res.lower_bound == pytest.approx(1.0 - 1.6448536269514722 * se, rel=1e-12)
