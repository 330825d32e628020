"""Bootstrap inference for the FaiTH value against independent references.

References: exact bootstrap laws by enumerating every multinomial (or multivariate
hypergeometric) outcome with its scipy probability on tiny instances; per-replicate loops that
solve the audit LP with HiGHS (``scipy.optimize.linprog``) on the same resampled counts; a
brute-force dual ``min_lambda lambda eps + sum_i f_i max_j (R_ij - lambda C_ij)`` over a dense
grid plus all crossing points, computed from the raw matrices, for the numerical bootstrap;
explicit order statistics for the quantiles.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import sparse, stats
from scipy.optimize import linprog

from skfair_audit._resampling import HypergeometricCounts, MultinomialCounts, resample
from skfair_audit.faith._inference import (
    BOOTSTRAP_METHODS,
    bootstrap_root,
    bootstrap_scheme,
    gaussianity_diagnostic,
    one_sided_pvalues,
    root_bounds,
)
from skfair_audit.faith._solver import prepare_transport

ATOL = 1e-8


# --------------------------------------------------------------------------- references
def highs_value(loss, cost, forbidden, f, epsilon):
    """psi(f) by HiGHS on the flattened transport LP."""
    K = len(loss)
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost) & ~forbidden
    idx = np.flatnonzero(allowed.ravel())
    a_eq = sparse.csr_array(
        (np.ones(idx.size), (idx // K, np.arange(idx.size))), shape=(K, idx.size)
    )
    res = linprog(
        -gain.ravel()[idx],
        A_ub=cost.ravel()[idx][None, :],
        b_ub=[epsilon],
        A_eq=a_eq,
        b_eq=f,
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun


def brute_dual(loss, cost, forbidden, f, epsilon):
    """min over lambda >= 0 of the dual objective, for any real f, from R and C directly.

    The objective is piecewise linear in lambda with breakpoints among the crossings
    ``(R_ij - R_ik) / (C_ij - C_ik)`` of two destinations of a row; evaluate at 0, at all
    crossings and on a dense grid (a superset, as a second safeguard).
    """
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost) & ~forbidden
    crossings = [0.0]
    for i in range(len(loss)):
        c, r = cost[i, allowed[i]], gain[i, allowed[i]]
        dc, dr = c[:, None] - c[None, :], r[:, None] - r[None, :]
        crossings.extend((dr[dc > 0] / dc[dc > 0]).tolist())
    crossings = np.array(crossings)
    lambdas = np.unique(np.concatenate([crossings[crossings >= 0], np.linspace(0, 20, 4001)]))
    finite_cost = np.where(allowed, cost, 0.0)
    u = np.where(allowed[None], gain[None] - lambdas[:, None, None] * finite_cost[None], -np.inf)
    objective = lambdas * epsilon + u.max(axis=2) @ f
    return float(objective.min())


def tiny_instance():
    """K = 5 cells, 0-1-ish losses, a few forbidden moves, n = 8 audit rows."""
    loss = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    cost = np.array(
        [
            [0.0, 1.0, 0.5, 2.0, 0.3],
            [1.0, 0.0, 1.5, 0.4, 1.0],
            [0.5, 1.5, 0.0, 0.7, 0.9],
            [2.0, 0.4, 0.7, 0.0, 0.6],
            [0.3, 1.0, 0.9, 0.6, 0.0],
        ]
    )
    forbidden = np.zeros((5, 5), dtype=bool)
    forbidden[0, 3] = forbidden[3, 0] = forbidden[2, 1] = True
    counts = np.array([3, 1, 2, 2, 0])
    return loss, cost, forbidden, counts, 0.35


def compositions(total, parts):
    """All non-negative integer vectors of length ``parts`` summing to ``total``."""
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = np.array((-1, *bars, total + parts - 1))
        yield np.diff(edges) - 1


def exact_root_law(method, loss, cost, forbidden, counts, epsilon, m):
    """Atoms and probabilities of the exact bootstrap law of the root, by enumeration."""
    n = int(counts.sum())
    f_n = counts / n
    psi_n = highs_value(loss, cost, forbidden, f_n, epsilon)
    if method == "nonparametric":
        size, rate = n, math.sqrt(n)
        outcomes = list(compositions(n, len(counts)))
        probs = [stats.multinomial.pmf(x, n, f_n) for x in outcomes]
    elif method == "m-out-of-n":
        size, rate = m, math.sqrt(m)
        outcomes = list(compositions(m, len(counts)))
        probs = [stats.multinomial.pmf(x, m, f_n) for x in outcomes]
    else:  # subsampling: without replacement, rate sqrt(m / (1 - m/n))
        size, rate = m, math.sqrt(m / (1 - m / n))
        outcomes = [x for x in compositions(m, len(counts)) if np.all(x <= counts)]
        probs = [stats.multivariate_hypergeom.pmf(x, counts, m) for x in outcomes]
    probs = np.array(probs)
    keep = probs > 0
    roots = np.array(
        [
            rate * (highs_value(loss, cost, forbidden, x / size, epsilon) - psi_n)
            for x, k in zip(outcomes, keep, strict=True)
            if k
        ]
    )
    return roots, probs[keep]


# --------------------------------------------------------------------------- exact laws
@pytest.mark.parametrize("method", ["nonparametric", "m-out-of-n", "subsampling"])
def test_monte_carlo_root_matches_exact_bootstrap_law(method):
    loss, cost, forbidden, counts, epsilon = tiny_instance()
    n, m = int(counts.sum()), 4
    atoms, probs = exact_root_law(method, loss, cost, forbidden, counts, epsilon, m)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    problem = prepare_transport(loss, cost, forbidden)
    scheme = bootstrap_scheme(method, n, m=m if method != "nonparametric" else None)
    value, root = bootstrap_root(
        problem, counts, epsilon, scheme, n_resamples=20_000, random_state=123
    )
    assert value == pytest.approx(highs_value(loss, cost, forbidden, counts / n, epsilon))
    # Every replicate is one of the atoms of the exact law.
    assert np.min(np.abs(root[:, None] - atoms[None, :]), axis=1).max() < ATOL
    # Kolmogorov distance at every atom; DKW: P(sup > 0.015) <= 2 exp(-2 B 0.015^2) < 3e-4.
    points = np.unique(atoms)
    exact_cdf = np.array([probs[atoms <= t + ATOL].sum() for t in points])
    mc_cdf = np.array([np.mean(root <= t + ATOL) for t in points])
    assert np.abs(exact_cdf - mc_cdf).max() < 0.015
    # The law is not degenerate (the test would be vacuous otherwise).
    assert points.size >= 4


# --------------------------------------------------------------------------- same draws
def replayed_counts(draw, n_resamples, batch_size, seed):
    """The engine's draws, replayed through ``resample`` with an identity statistic."""
    return resample(
        lambda c: np.asarray(c), draw, n_resamples, batch_size=batch_size, random_state=seed
    )


def loop_instance(counts):
    """The tiny instance's matrices with another sample (psi varies a lot between draws)."""
    loss, cost, forbidden, _, epsilon = tiny_instance()
    return loss, cost, forbidden, np.asarray(counts), epsilon


@pytest.mark.parametrize("method", ["nonparametric", "m-out-of-n", "subsampling"])
def test_vectorised_root_equals_per_replicate_linprog(method):
    loss, cost, forbidden, counts, epsilon = loop_instance([3, 2, 2, 2, 1])
    n = int(counts.sum())
    m = 5
    problem = prepare_transport(loss, cost, forbidden)
    scheme = bootstrap_scheme(method, n, m=None if method == "nonparametric" else m)
    B, batch, seed = 150, 40, 7
    _, root = bootstrap_root(
        problem, counts, epsilon, scheme, n_resamples=B, batch_size=batch, random_state=seed
    )
    if method == "subsampling":
        draw, size, rate = HypergeometricCounts(counts, m), m, math.sqrt(m / (1 - m / n))
    elif method == "m-out-of-n":
        draw, size, rate = MultinomialCounts(counts / n, m), m, math.sqrt(m)
    else:
        draw, size, rate = MultinomialCounts(counts / n, n), n, math.sqrt(n)
    draws = replayed_counts(draw, B, batch, seed)
    assert draws.shape == (B, len(counts)) and np.all(draws.sum(axis=1) == size)
    psi_n = highs_value(loss, cost, forbidden, counts / n, epsilon)
    expected = np.array(
        [rate * (highs_value(loss, cost, forbidden, x / size, epsilon) - psi_n) for x in draws]
    )
    np.testing.assert_allclose(root, expected, atol=ATOL, rtol=0)
    assert np.unique(np.round(expected, 9)).size > 10


def test_numerical_root_equals_brute_force_dual_on_same_draws():
    loss, cost, forbidden, counts, epsilon = loop_instance([4, 1, 3, 2, 2])
    n = int(counts.sum())
    problem = prepare_transport(loss, cost, forbidden)
    scheme = bootstrap_scheme("numerical", n)
    step = n ** (-1 / 3)
    B, batch, seed = 120, 50, 11
    _, root = bootstrap_root(
        problem, counts, epsilon, scheme, n_resamples=B, batch_size=batch, random_state=seed
    )
    draws = replayed_counts(MultinomialCounts(counts / n, n), B, batch, seed)
    f_n = counts / n
    perturbed = f_n + step * math.sqrt(n) * (draws / n - f_n)
    # The perturbed pmf leaves the simplex: the dual extension is really exercised.
    assert (perturbed < 0).any()
    psi_n = highs_value(loss, cost, forbidden, f_n, epsilon)
    expected = np.array(
        [(brute_dual(loss, cost, forbidden, g, epsilon) - psi_n) / step for g in perturbed]
    )
    np.testing.assert_allclose(root, expected, atol=1e-7, rtol=0)


def test_numerical_root_with_step_one_over_sqrt_n_is_efrons_root():
    # With eps_n = n^(-1/2) the perturbed pmf is exactly f*_n and the root is Efron's: the
    # dual path (signed f) and the primal path must agree replicate by replicate.
    loss, cost, forbidden, counts, epsilon = loop_instance([5, 3, 4, 2, 2])
    n = int(counts.sum())
    problem = prepare_transport(loss, cost, forbidden)
    numerical = bootstrap_scheme("numerical", n, numerical_step=n**-0.5)
    naive = bootstrap_scheme("nonparametric", n)
    _, root_num = bootstrap_root(problem, counts, epsilon, numerical, n_resamples=300,
                                 random_state=1)
    _, root_naive = bootstrap_root(problem, counts, epsilon, naive, n_resamples=300,
                                   random_state=1)
    np.testing.assert_allclose(root_num, root_naive, atol=1e-9)


# --------------------------------------------------------------------------- bounds and p-values
def order_statistic_quantile(root, level):
    """Smallest atom x with ecdf(x) >= level: the ceil(level B)-th order statistic."""
    ordered = np.sort(root)
    return ordered[max(math.ceil(level * len(root) - 1e-12), 1) - 1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bounds_are_explicit_order_statistics(seed):
    rng = np.random.default_rng(seed)
    root = np.round(rng.normal(size=997), 1)  # ties on purpose
    value, n = 0.3, 400
    for level in (0.8, 0.9, 0.95, 0.99):
        alpha = 1 - level
        low, high = root_bounds(value, root, n, level)
        assert low == pytest.approx(value - order_statistic_quantile(root, 1 - alpha / 2) / 20)
        upper_q = -order_statistic_quantile(-root, 1 - alpha / 2)
        assert high == pytest.approx(value - upper_q / 20)
        lower, inf = root_bounds(value, root, n, level, "greater")
        assert inf == math.inf
        assert lower == pytest.approx(value - order_statistic_quantile(root, level) / 20)
        ninf, upper = root_bounds(value, root, n, level, "less")
        assert ninf == -math.inf
        assert upper == pytest.approx(value + order_statistic_quantile(-root, level) / 20)
        # The two-sided interval contains both one-sided bounds at the same level...
        assert low <= lower <= upper <= high
        # ...and at level 1 - 2 alpha it is exactly the pair of one-sided bounds.
        low2, high2 = root_bounds(value, root, n, 1 - 2 * alpha)
        assert (low2, high2) == (lower, upper)


def check_inversion(value, root, n, deltas):
    scale = math.sqrt(n)
    for alpha in (0.1, 0.05):
        level = 1 - alpha
        lower, _ = root_bounds(value, root, n, level, "greater")
        _, upper = root_bounds(value, root, n, level, "less")
        for delta in deltas:
            p_unfair, p_fair = one_sided_pvalues(value, root, n, delta)
            # Reference p-values: proportion of bootstrap bounds value - T*/sqrt(n) on the
            # far side of delta (replicates at least as extreme as the observed statistic).
            replicate_bounds = value - root / scale
            assert p_unfair == np.mean(replicate_bounds <= delta)
            assert p_fair == np.mean(replicate_bounds >= delta)
            assert (lower > delta) == (p_unfair <= alpha), (level, delta)
            assert (upper < delta) == (p_fair <= alpha), (level, delta)


@pytest.mark.parametrize("seed", [0, 1])
def test_pvalues_invert_the_bounds(seed):
    rng = np.random.default_rng(seed)
    root = np.round(rng.standard_t(4, size=500), 2)  # many ties
    value, n = 0.25, 900
    atoms = value - np.unique(root) / math.sqrt(n)
    # Random deltas, and deltas just either side of every candidate bound (the atoms).
    deltas = np.concatenate([rng.uniform(0.0, 0.5, 300), atoms - 1e-9, atoms + 1e-9])
    check_inversion(value, root, n, deltas)


def test_pvalues_invert_the_bounds_at_exact_ties():
    rng = np.random.default_rng(0)
    root = np.round(rng.standard_t(4, size=500), 2)
    value, n = 0.25, 900
    check_inversion(value, root, n, value - np.unique(root) / math.sqrt(n))


def test_root_bounds_rejects_bad_alternative():
    with pytest.raises(ValueError, match="alternative"):
        root_bounds(0.1, np.zeros(10), 100, 0.95, "both")


# --------------------------------------------------------------------------- scheme rules
def test_scheme_defaults_and_rates():
    n = 1000
    assert bootstrap_scheme("nonparametric", n).rate == pytest.approx(math.sqrt(n))
    s = bootstrap_scheme("m-out-of-n", n)
    assert s.m == math.ceil(n ** (2 / 3)) == 100 and s.rate == pytest.approx(10.0)
    s = bootstrap_scheme("subsampling", n)
    assert s.m == 100 and s.rate == pytest.approx(math.sqrt(100 / 0.9))
    s = bootstrap_scheme("numerical", n)
    assert s.numerical_step == pytest.approx(0.1) and s.rate == pytest.approx(10.0)
    assert s.m is None and bootstrap_scheme("m-out-of-n", n).numerical_step is None
    assert set(BOOTSTRAP_METHODS) == {"m-out-of-n", "numerical", "nonparametric", "subsampling"}


@pytest.mark.parametrize(
    "m, expected",
    [(7, 7), (np.int64(50), 50), (0.5, 32), (0.75, math.ceil(1000**0.75)),
     (lambda n: n // 10, 100), (1000, 1000)],
)
def test_scheme_m_rules(m, expected):
    assert bootstrap_scheme("m-out-of-n", 1000, m=m).m == expected


@pytest.mark.parametrize(
    "m", [0.0, 1.0, 1.5, -0.2, True, "10", 1, 0, 1001, lambda n: 2.5, lambda n: n + 1]
)
def test_scheme_bad_m(m):
    with pytest.raises(ValueError, match="m"):
        bootstrap_scheme("m-out-of-n", 1000, m=m)


def test_scheme_subsampling_needs_m_below_n():
    assert bootstrap_scheme("subsampling", 50, m=49).m == 49
    with pytest.raises(ValueError, match="m < n"):
        bootstrap_scheme("subsampling", 50, m=50)


@pytest.mark.parametrize("step, expected", [(0.2, 0.2), (1.0, 1.0), (lambda n: n**-0.25, 1 / 8)])
def test_scheme_step_rules(step, expected):
    s = bootstrap_scheme("numerical", 4096, numerical_step=step)
    assert s.numerical_step == pytest.approx(expected) and s.rate == pytest.approx(1 / expected)


@pytest.mark.parametrize("step", [0.0, -0.1, 1.5, "0.1", lambda n: 0.0, float("nan")])
def test_scheme_bad_step(step):
    with pytest.raises(ValueError, match="numerical_step"):
        bootstrap_scheme("numerical", 1000, numerical_step=step)


@pytest.mark.parametrize("n", [1, 0, 2.5, "10", -3])
def test_scheme_bad_n(n):
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_scheme("nonparametric", n)


def test_scheme_bad_method():
    with pytest.raises(ValueError, match="method must be one of"):
        bootstrap_scheme("efron", 100)


# --------------------------------------------------------------------------- diagnostic
def test_gaussianity_diagnostic_separates_gaussian_from_kinked_roots():
    rng = np.random.default_rng(0)
    normal = rng.normal(size=2000)
    p_normal, skew_normal = gaussianity_diagnostic(normal)
    assert p_normal > 1e-3 and abs(skew_normal) < 0.2
    kinked = np.minimum(normal, 0.0)  # min(0, Z): the root at a kink of psi
    p_kinked, skew_kinked = gaussianity_diagnostic(kinked)
    assert p_kinked < 1e-10 and skew_kinked == pytest.approx(stats.skew(kinked))
    assert skew_kinked < -0.5
    assert np.isnan(gaussianity_diagnostic(np.ones(50))[0])
    assert np.isnan(gaussianity_diagnostic(normal[:10])[0])
