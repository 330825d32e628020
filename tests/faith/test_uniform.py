"""Uniformly valid FaiTH inference (``method="uniform"``) against independent references.

References: the dual pieces ``a_i(lambda) = max_j R_ij - lambda C_ij`` computed densely from
the raw loss and cost matrices (every candidate multiplier, a K x T array: fine on tiny
instances, never formed by the library), HiGHS (``scipy.optimize.linprog``) for the audit
value, explicit normal quantiles and order statistics for the bounds, and simulations with a
known population value for the level near kinks and for the kink diagnostic.
"""

from __future__ import annotations

import math
import tracemalloc
from contextlib import nullcontext

import numpy as np
import pytest
from scipy import stats

from skfair_audit.faith import (
    LinearPieces,
    SaturatedBudgetWarning,
    TransportProblem,
    faith_audit,
)
from skfair_audit.faith._inference import bootstrap_root, bootstrap_scheme, root_bounds
from skfair_audit.faith._solver import prepare_transport
from skfair_audit.faith._uniform import (
    _MaxT,
    _SquareIncrements,
    contact_threshold,
    linear_pieces,
    uniform_inference,
)

from .test_inference import highs_value  # HiGHS on the flattened transport LP


# --------------------------------------------------------------------------- instances
def random_instance(rng):
    """A random instance: continuous or 0/0.5/1 losses, squared-distance costs with some free
    moves, a few forbidden moves, and frequencies with empty cells."""
    K = int(rng.integers(3, 25))
    loss = rng.integers(0, 3, K) / 2.0 if rng.random() < 0.5 else rng.random(K)
    x = rng.random((K, 3))
    cost = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    cost *= rng.random((K, K)) < 0.8
    cost = np.triu(cost) + np.triu(cost, 1).T
    np.fill_diagonal(cost, 0.0)
    forbidden = rng.random((K, K)) < 0.2
    np.fill_diagonal(forbidden, False)
    return loss, cost, forbidden


def dense_pieces(loss, cost, forbidden, multipliers):
    """``a_i(lambda_t)`` for every piece and cell, from R and C directly (T x K)."""
    gain = loss[None, :] - loss[:, None]
    allowed = ~forbidden & np.isfinite(cost)
    finite = np.where(allowed, cost, 0.0)
    return np.array([np.where(allowed, gain - lam * finite, -np.inf).max(axis=1)
                     for lam in multipliers])


def hand_instance():
    """Three loss-0 cells, each with one costly move to a loss-1 cell (costs 1, 2, 4; a
    dominated 1 -> 3 of cost 3). The population curve has kinks at 0.2, 0.6 and 1.4; at the
    interior kink 0.6 the pieces lambda = 1/2 and 1/4 are both active and both random."""
    loss = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    cost = np.full((6, 6), np.inf)
    np.fill_diagonal(cost, 0.0)
    cost[0, 3], cost[1, 4], cost[2, 5], cost[1, 3] = 1.0, 2.0, 4.0, 3.0
    f_star = np.array([0.2, 0.2, 0.2, 0.1, 0.2, 0.1])
    return loss, cost, f_star


def kink_sd(n):
    """sd of the estimated interior breakpoint 0.6 = f_0 + 2 f_1 of the hand instance."""
    _, _, f = hand_instance()
    w = np.array([1.0, 2.0, 0, 0, 0, 0])
    return math.sqrt((f @ w**2 - (f @ w) ** 2) / n)


# --------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("seed", range(12))
def test_pieces_and_moments_match_the_dense_dual(seed):
    rng = np.random.default_rng(seed)
    loss, cost, forbidden = random_instance(rng)
    problem = prepare_transport(loss, cost, forbidden)
    counts = rng.multinomial(300, rng.dirichlet(np.ones(len(loss))))
    counts[rng.random(len(loss)) < 0.2] = 0
    counts[0] += 2
    n, f = int(counts.sum()), counts / counts.sum()
    epsilon = float(rng.random() * 0.4)
    value, pieces = uniform_inference(problem, counts, epsilon, n_resamples=50,
                                      random_state=0)
    all_lambdas = linear_pieces(problem).multiplier
    A = dense_pieces(loss, cost, forbidden, all_lambdas)
    ell = all_lambdas * epsilon + A @ f
    assert value == pytest.approx(highs_value(loss, cost, forbidden, f, epsilon), abs=1e-9)
    assert value == pytest.approx(ell.min(), abs=1e-12)
    # The kept pieces are pieces of psi, with their sample standard errors.
    assert pieces.n_pieces == all_lambdas.size
    kept = np.searchsorted(-all_lambdas, -pieces.multipliers)
    np.testing.assert_allclose(pieces.values, ell[kept], atol=1e-12)
    sum_squares = n * (A**2 @ f - (A @ f) ** 2)
    rho2 = (0.5 * np.ptp(loss)) ** 2
    se = np.sqrt((sum_squares + rho2) / (n - 1) / n)
    np.testing.assert_allclose(pieces.standard_errors, se[kept], rtol=1e-7, atol=1e-12)
    # Lower bounds at any level are minima over all pieces (the kept hull loses none).
    for level in (0.2, 0.5, 0.9, 0.95, 0.999999):
        z = stats.norm.ppf(level)
        assert pieces.lower_bound(level) == pytest.approx(max((ell - z * se).min(), 0.0),
                                                          abs=1e-12)


def test_max_t_replicates_match_brute_force():
    rng = np.random.default_rng(5)
    loss, cost, forbidden = random_instance(rng)
    problem = prepare_transport(loss, cost, forbidden)
    pieces = linear_pieces(problem)
    A = dense_pieces(loss, cost, forbidden, pieces.multiplier)
    n = 500
    f = rng.dirichlet(np.ones(len(loss)))
    subset = np.arange(pieces.multiplier.size)[:: max(1, pieces.multiplier.size // 3)]
    means = A[subset] @ f
    spread = float(np.ptp(loss))
    statistic = _MaxT(problem, pieces, subset, means, _SquareIncrements.of(problem), spread, n)
    counts = rng.multinomial(n, f, size=40)
    got = statistic(counts)
    fb = counts / n
    m1, m2 = fb @ A[subset].T, fb @ (A[subset] ** 2).T
    se = np.sqrt((n * (m2 - m1**2) + spread**2 / 4) / ((n - 1) * n))
    np.testing.assert_allclose(got, ((means - m1) / se).max(axis=1), rtol=1e-9, atol=1e-9)


def test_upper_bound_is_the_max_t_order_statistic():
    loss, cost, f_star = hand_instance()
    counts = np.random.default_rng(0).multinomial(2000, f_star)
    res = faith_audit(counts, loss, cost, epsilon=0.6, n_resamples=399, random_state=1)
    pieces = res.linear_pieces
    assert res.method == "uniform" and res.bootstrap_distribution is pieces.max_t
    c = np.sort(pieces.max_t)[math.ceil(0.95 * 399) - 1]
    assert pieces.critical_value(0.95) == c
    contact = pieces.in_contact_set
    expected = np.min(pieces.values[contact] + c * pieces.standard_errors[contact])
    assert res.upper_bound == pytest.approx(expected, abs=1e-15)
    assert res.lower_bound == pytest.approx(
        np.min(pieces.values - stats.norm.ppf(0.95) * pieces.standard_errors), abs=1e-15)
    # Two-sided: each side at 1 - alpha/2.
    ci = res.confidence_interval()
    assert (ci.low, ci.high) == (pieces.lower_bound(0.975), pieces.upper_bound(0.975))
    assert ci.low <= res.lower_bound <= res.statistic <= res.upper_bound <= ci.high
    ci90 = res.confidence_interval(0.90)
    assert (ci90.low, ci90.high) == (res.lower_bound, res.upper_bound)
    assert res.confidence_interval(alternative="greater").low == res.lower_bound
    assert res.confidence_interval(alternative="less").high == res.upper_bound
    with pytest.raises(ValueError, match="alternative"):
        res.confidence_interval(alternative="both")
    assert math.isnan(res.gaussianity_pvalue) and math.isnan(res.skewness)
    assert isinstance(pieces, LinearPieces)


def test_faith_audit_is_what_the_benchmark_runs():
    # benchmarks/bench_faith_validity.py calls uniform_inference directly; the default method
    # of faith_audit must give the same bounds for the same seed.
    loss, cost, f_star = hand_instance()
    counts = np.random.default_rng(3).multinomial(1000, f_star)
    res = faith_audit(counts, loss, cost, epsilon=0.62, n_resamples=199, random_state=7)
    value, pieces = uniform_inference(prepare_transport(loss, cost), counts, 0.62,
                                      n_resamples=199, random_state=7)
    assert res.statistic == pytest.approx(value, abs=1e-15)
    assert (res.lower_bound, res.upper_bound) == (pieces.lower_bound(0.95),
                                                  pieces.upper_bound(0.95))
    assert res.near_kink == pieces.near_kink


# --------------------------------------------------------------------------- p-values
def test_pvalues_by_definition():
    loss, cost, f_star = hand_instance()
    counts = np.random.default_rng(2).multinomial(1500, f_star)
    res = faith_audit(counts, loss, cost, epsilon=0.6, delta=0.36, n_resamples=300,
                      random_state=0)
    pieces = res.linear_pieces
    # Intersection-union: the largest one-sided normal p-value over the pieces.
    expected = max(stats.norm.sf((v - 0.36) / s)
                   for v, s in zip(pieces.values, pieces.standard_errors, strict=True))
    assert res.pvalue == pytest.approx(expected, rel=1e-12)
    contact = pieces.in_contact_set
    bounds = [np.min(pieces.values[contact] + t * pieces.standard_errors[contact])
              for t in pieces.max_t]
    assert res.fair_pvalue == np.mean(np.array(bounds) >= 0.36)


# --------------------------------------------------------------------------- edge cases
def test_constant_loss_gives_a_degenerate_exact_answer():
    counts = np.array([30, 20, 50])
    res = faith_audit(counts, np.full(3, 0.5), np.ones((3, 3)) - np.eye(3), epsilon=0.3,
                      delta=0.0, n_resamples=50, random_state=0)
    assert res.statistic == 0.0 and res.lower_bound == 0.0 and res.upper_bound == 0.0
    assert res.pvalue == 1.0 and res.fair_pvalue == 1.0 and not res.near_kink


def test_epsilon_zero_and_slack_budget_are_not_kinks():
    loss, cost, f_star = hand_instance()
    counts = np.random.default_rng(0).multinomial(5000, f_star)
    for epsilon in (0.0, 5.0):
        # (5 is past the last breakpoint: the slack budget does not bind, and says so)
        with pytest.warns(SaturatedBudgetWarning) if epsilon else nullcontext():
            res = faith_audit(counts, loss, cost, epsilon=epsilon, n_resamples=100,
                              random_state=0)
        assert not res.near_kink and res.gaussian_limit
        assert "kink" not in str(res)


def test_contact_threshold_grows_slowly():
    assert contact_threshold(1000) == pytest.approx(math.sqrt(math.log(1000)))
    assert 2.5 < contact_threshold(1000) < contact_threshold(20000) < 3.2


# --------------------------------------------------------------------------- validity
def level_near_kink(offset, method, reps=300, n=2000, seed=0):
    """Type-I errors of the delta-test and of the certification test at delta = psi(f*), with
    epsilon = 0.6 + offset sd on the hand instance."""
    loss, cost, f_star = hand_instance()
    problem = prepare_transport(loss, cost)
    epsilon = 0.6 + offset * kink_sd(n)
    truth = problem.value(f_star, epsilon)
    over = under = 0
    for rep_seed in np.random.SeedSequence(seed).spawn(reps):
        sample, boot = rep_seed.spawn(2)
        counts = np.random.default_rng(sample).multinomial(n, f_star)
        if method == "uniform":
            _, pieces = uniform_inference(problem, counts, epsilon, n_resamples=199,
                                          random_state=boot)
            lower, upper = pieces.lower_bound(0.95), pieces.upper_bound(0.95)
        else:
            value, root = bootstrap_root(problem, counts, epsilon, bootstrap_scheme(method, n),
                                         n_resamples=199, random_state=boot)
            lower = root_bounds(value, root, n, 0.95, "greater")[0]
            upper = root_bounds(value, root, n, 0.95, "less")[1]
        over += lower > truth
        under += upper < truth
    return over / reps, under / reps


@pytest.mark.parametrize("offset", [0.0, 1.0, 2.0])
def test_uniform_tests_keep_their_level_near_a_kink(offset):
    # Nominal 5%; with 300 repetitions P(Binomial(300, 0.05) > 27) < 0.002.
    delta_test, certification = level_near_kink(offset, "uniform")
    assert delta_test <= 0.09 and certification <= 0.09


def test_m_out_of_n_overrejects_just_above_the_kink():
    # The failure the uniform bounds fix: 1-2 sd above the kink the m-out-of-n delta-test
    # rejects a true null well above 5% (about 12% in benchmarks/bench_faith_validity.py).
    delta_test, _ = level_near_kink(1.5, "m-out-of-n")
    uniform_delta_test, _ = level_near_kink(1.5, "uniform")
    assert delta_test >= 0.08 and uniform_delta_test < delta_test


def test_near_kink_diagnostic():
    loss, cost, f_star = hand_instance()
    problem = prepare_transport(loss, cost)
    n, reps = 5000, 100
    rates, dual_unique = {}, {}
    for offset in (0.0, 4.0, -4.0):
        epsilon = 0.6 + offset * kink_sd(n)
        flags, unique = [], []
        for seed in range(reps):
            counts = np.random.default_rng(seed).multinomial(n, f_star)
            _, pieces = uniform_inference(problem, counts, epsilon, bootstrap=False)
            flags.append(pieces.near_kink)
            unique.append(problem.dual_multipliers(counts / n, epsilon)[0]
                          == problem.dual_multipliers(counts / n, epsilon)[1])
        rates[offset], dual_unique[offset] = np.mean(flags), np.mean(unique)
    # Expected about 95% at the kink and 2% at 4 sd (a z_0.975 confidence set of the active
    # piece); the exact-kink check of the dual at f_n almost never fires.
    assert rates[0.0] >= 0.8
    assert rates[4.0] <= 0.1 and rates[-4.0] <= 0.1
    assert dual_unique[0.0] >= 0.9


def test_kink_resolution_changes_nothing_on_a_grid(monkeypatch):
    """Pieces differing by a negligible share are ignored by the diagnostic; around the
    kinks of a grid the pieces differ by whole cells, so the flags are those of the plain
    confidence set (KINK_RESOLUTION = 0)."""
    import skfair_audit.faith._uniform as uniform

    loss, cost, f_star = hand_instance()
    problem = prepare_transport(loss, cost)
    n = 2000
    for offset in (0.0, 1.0, -1.0, 4.0):
        epsilon = 0.6 + offset * kink_sd(n)
        for seed in range(40):
            counts = np.random.default_rng(seed).multinomial(n, f_star)
            flags = []
            for resolution in (0.0, uniform.KINK_RESOLUTION):
                monkeypatch.setattr(uniform, "KINK_RESOLUTION", resolution)
                flags.append(uniform_inference(problem, counts, epsilon,
                                               bootstrap=False)[1].near_kink)
            assert flags[0] == flags[1]


def test_near_kink_is_rare_on_continuous_features():
    """Continuous features: neighbouring pieces differ by one audit row; the population dual
    has one minimiser, and the diagnostic says so (it fired in every audit before)."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import FaithAuditor

    rng = np.random.default_rng(0)

    def draw(n):
        g = rng.integers(0, 2, n).astype(float)
        X = np.column_stack([g, rng.normal(size=(n, 3))])
        logit = X[:, 1] + 0.5 * X[:, 2] + 0.8 * g - 0.3
        return X, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)

    model = FrozenEstimator(LogisticRegression().fit(*draw(2000)))
    auditor = FaithAuditor(model, protected=[0], metric="protected_euclidean", epsilon=0.05,
                           n_resamples=20, random_state=0).fit(*draw(2000))
    flags = [auditor.audit(*draw(2000)).near_kink for _ in range(10)]
    assert sum(flags) <= 2


# --------------------------------------------------------------------------- scale
def test_runs_on_the_scalable_path_without_dense_arrays():
    # 50,000 cells and 100,000 hull segments with 100,000 distinct slopes: a (cells x pieces)
    # array would hold 5e9 numbers (40 GB). Everything must stay O(B S).
    rng = np.random.default_rng(0)
    K, S = 50_000, 100_000
    # Segments sorted by (distinct) slope, rows at random: within a row the slopes decrease
    # along the order, as on a concave hull.
    seg_row = rng.integers(0, K, S)
    slope = np.sort(rng.uniform(0.5, 5.0, S))[::-1]
    cost = rng.uniform(0.01, 0.1, S)
    problem = TransportProblem(
        n_cells=K, loss=np.r_[0.0, np.ones(K - 1)], base_gain=np.zeros(K),
        base_destination=np.arange(K), segment_row=seg_row, segment_source=seg_row,
        segment_target=seg_row, segment_cost=cost, segment_gain=cost * slope,
        segment_slope=slope,
    )
    counts = rng.multinomial(20_000, np.full(K, 1.0 / K))
    epsilon = 0.5 * float((counts / counts.sum())[seg_row] @ cost)
    tracemalloc.start()
    value, pieces = uniform_inference(problem, counts, epsilon, n_resamples=20,
                                      random_state=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert value == pytest.approx(problem.value(counts / counts.sum(), epsilon), rel=1e-9)
    assert pieces.n_pieces == S + 1 and pieces.max_t.shape == (20,)
    assert peak < 150e6


def test_bootstrap_runs_on_the_support_and_equals_the_full_problem():
    # The max-t resamples live on the cells with audit rows: a problem restricted to them
    # (it lacks the pieces of the empty rows, which carry no mass) gives the same value,
    # bounds and, with the same seed, replicates (to rounding: the sums run over fewer cells).
    rng = np.random.default_rng(7)
    loss, cost, forbidden = random_instance(rng)
    while loss.size < 8:
        loss, cost, forbidden = random_instance(rng)
    counts = rng.multinomial(400, rng.dirichlet(np.ones(loss.size)))
    counts[rng.choice(loss.size, loss.size // 3, replace=False)] = 0
    full = prepare_transport(loss, cost, forbidden)
    restricted = full.restrict(np.flatnonzero(counts))
    assert restricted.support.size < full.n_cells
    epsilon = 0.3 * float(full.curve(counts / counts.sum())[0][-1])
    a = uniform_inference(full, counts, epsilon, n_resamples=200, random_state=3)
    b = uniform_inference(restricted, counts, epsilon, n_resamples=200, random_state=3)
    assert a[0] == pytest.approx(b[0], rel=1e-12)
    np.testing.assert_allclose(a[1].max_t, b[1].max_t, rtol=1e-10, atol=1e-12)
    for level in (0.9, 0.95):
        assert a[1].lower_bound(level) == pytest.approx(b[1].lower_bound(level), rel=1e-12)
        assert a[1].upper_bound(level) == pytest.approx(b[1].upper_bound(level), rel=1e-12)


def test_max_t_bootstrap_stays_within_the_memory_limit_with_the_same_replicates():
    from skfair_audit.faith import MemoryLimitError

    rng = np.random.default_rng(1)
    loss, cost, forbidden = random_instance(rng)
    counts = rng.multinomial(300, np.full(loss.size, 1.0 / loss.size))
    problem = prepare_transport(loss, cost, forbidden)
    reference = uniform_inference(problem, counts, 0.01, n_resamples=100, random_state=0,
                                  memory_limit=None)[1].max_t
    # A batch larger than the budget is evaluated in chunks drawn from its own stream: the
    # replicates are those of an unconstrained run.
    big = uniform_inference(problem, counts, 0.01, n_resamples=100, batch_size=100_000,
                            random_state=0, memory_limit="1MB")[1].max_t
    np.testing.assert_array_equal(big, reference)
    tracemalloc.start()
    value, pieces = uniform_inference(problem, counts, 0.01, n_resamples=100, random_state=0,
                                      memory_limit="20kB")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(pieces.max_t, reference)
    assert peak < 2e6
    with pytest.raises(MemoryLimitError, match="One bootstrap replicate"):
        uniform_inference(problem, counts, 0.01, n_resamples=100, memory_limit="100B")
