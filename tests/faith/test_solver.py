"""The greedy FaiTH solver against independent references.

References: HiGHS (``scipy.optimize.linprog``) on the flattened LP for values, plans and budget
multipliers; brute-force evaluation of the dual objective
``g(lambda) = lambda * eps + sum_i f_i max_j (R_ij - lambda C_ij)`` straight from the raw
matrices for the dual value and the kink detection.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

from skfair_audit.faith._solver import TransportProblem, prepare_transport

ATOL = 1e-9


# --------------------------------------------------------------------------- references
def highs_audit(loss, cost, forbidden, f, epsilon):
    """Solve the audit LP with HiGHS; return (value, plan, budget multiplier)."""
    K = len(loss)
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost)
    if forbidden is not None:
        allowed &= ~forbidden
    idx = np.flatnonzero(allowed.ravel())
    rows = idx // K
    a_eq = sparse.csr_array((np.ones(idx.size), (rows, np.arange(idx.size))), shape=(K, idx.size))
    res = linprog(
        -gain.ravel()[idx],
        A_ub=cost.ravel()[idx][None, :],
        b_ub=[epsilon],
        A_eq=a_eq,
        b_eq=f,
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0, res.message
    plan = np.zeros(K * K)
    plan[idx] = res.x
    # linprog minimises -<R, Pi>: its marginal of the budget row is -lambda.
    return -res.fun, plan.reshape(K, K), -res.ineqlin.marginals[0]


def brute_dual_objective(loss, cost, forbidden, f, epsilon, lambdas):
    """g(lambda) for each lambda, from the raw matrices (no hulls)."""
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost)
    if forbidden is not None:
        allowed &= ~forbidden
    finite_cost = np.where(allowed, cost, 0.0)
    lambdas = np.asarray(lambdas, dtype=float)
    reduced = gain[None] - lambdas[:, None, None] * finite_cost[None]
    u = np.where(allowed[None], reduced, -np.inf).max(axis=2)
    return lambdas * epsilon + u @ f


def crossing_points(loss, cost, forbidden):
    """{0} and every positive lambda where two destinations of one row tie: a superset of the
    breakpoints of the dual objective."""
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost)
    if forbidden is not None:
        allowed &= ~forbidden
    finite_cost = np.where(allowed, cost, 0.0)
    dc = finite_cost[:, :, None] - finite_cost[:, None, :]
    dr = gain[:, :, None] - gain[:, None, :]
    ok = allowed[:, :, None] & allowed[:, None, :] & (dc > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = dr[ok] / dc[ok]
    return np.unique(np.concatenate(([0.0], ratios[ratios > 0])))


# --------------------------------------------------------------------------- instances
def random_instance(rng, K=None):
    K = int(rng.integers(2, 31)) if K is None else K
    loss_kind, cost_kind, mask_kind = rng.integers(0, 3, size=3)
    if loss_kind == 0:
        loss = rng.normal(size=K)
    elif loss_kind == 1:
        loss = rng.integers(0, 4, size=K).astype(float)
    else:
        loss = rng.integers(0, 2, size=K).astype(float)
    if cost_kind == 0:
        cost = rng.exponential(size=(K, K))
    elif cost_kind == 1:
        # Small integers: many ties in cost and slope, and free off-diagonal moves.
        cost = rng.integers(0, 4, size=(K, K)).astype(float)
    else:
        # Squared distances between points with duplicates: free moves between twins.
        points = rng.integers(0, 3, size=(K, 2)).astype(float)
        cost = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(cost, 0.0)
    if rng.random() < 0.2:
        cost[rng.random((K, K)) < 0.1] = np.inf
        np.fill_diagonal(cost, 0.0)
    if mask_kind == 0:
        forbidden = None
    elif mask_kind == 1:
        forbidden = rng.random((K, K)) < 0.5
        # Some rows may move nowhere.
        forbidden[rng.random(K) < 0.2] = True
        np.fill_diagonal(forbidden, False)
    else:
        # Grid "features x label": label changes are forbidden.
        label = rng.integers(0, 2, size=K)
        forbidden = label[:, None] != label[None, :]
    f = rng.dirichlet(np.ones(K))
    f[rng.random(K) < 0.25] = 0.0
    if f.sum() == 0:
        f[0] = 1.0
    f /= f.sum()
    finite = cost[np.isfinite(cost)]
    epsilon = float(rng.choice([0.0, rng.uniform(0, 0.5) * finite.mean(), 1e3 * finite.max()]))
    return loss, cost, forbidden, f, epsilon


def _make_cases(seed, n):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        loss, cost, forbidden, f, epsilon = random_instance(rng)
        problem = prepare_transport(loss, cost, forbidden)
        value, plan, multiplier = highs_audit(loss, cost, forbidden, f, epsilon)
        cases.append((loss, cost, forbidden, f, epsilon, problem, value, plan, multiplier))
    return cases


@pytest.fixture(scope="module")
def cases():
    return _make_cases(20240601, 300)


# --------------------------------------------------------------------------- values vs HiGHS
def test_value_matches_highs(cases):
    kinds = {"eps0": 0, "slack": 0, "zero_mass": 0, "stuck_row": 0}
    for loss, _cost, forbidden, f, epsilon, problem, value, _, _ in cases:
        assert problem.value(f, epsilon) == pytest.approx(value, abs=ATOL)
        kinds["eps0"] += epsilon == 0
        kinds["slack"] += epsilon > 0 and problem.dual_multipliers(f, epsilon) == (0.0, 0.0)
        kinds["zero_mass"] += (f == 0).any()
        if forbidden is not None:
            kinds["stuck_row"] += (forbidden.sum(axis=1) == len(loss) - 1).any()
    # The generator really exercises the edge cases.
    assert all(count >= 10 for count in kinds.values()), kinds


def test_plan_is_feasible_and_optimal(cases):
    for loss, cost, forbidden, f, epsilon, problem, value, _, _ in cases:
        plan = problem.plan(f, epsilon)
        gain = loss[None, :] - loss[:, None]
        assert (plan >= 0).all()
        np.testing.assert_allclose(plan.sum(axis=1), f, atol=1e-12)
        used = plan > 0
        assert np.isfinite(cost[used]).all()
        assert (np.where(used, cost, 0.0) * plan).sum() <= epsilon + 1e-12
        if forbidden is not None:
            assert (plan[forbidden] == 0).all()
        assert (gain * plan).sum() == pytest.approx(value, abs=ATOL)
        # At most one cell splits its mass.
        assert ((plan > 0).sum(axis=1) > 1).sum() <= 1
        np.testing.assert_allclose(
            problem.adversarial_distribution(f, epsilon), plan.sum(axis=0), atol=1e-12
        )


def test_dual_multipliers_contain_highs_marginal(cases):
    n_unique = 0
    for _, _, _, f, epsilon, problem, _, _, multiplier in cases:
        low, high = problem.dual_multipliers(f, epsilon)
        assert low - 1e-9 <= multiplier <= high + 1e-9
        if low == high:
            n_unique += 1
            assert multiplier == pytest.approx(low, abs=1e-9)
    assert n_unique >= 50


def test_dual_value_equals_value_for_nonnegative_f(cases):
    for _, _, _, f, epsilon, problem, value, _, _ in cases:
        assert problem.dual_value(f, epsilon) == pytest.approx(value, abs=ATOL)


def test_batch_value_equals_single_values():
    rng = np.random.default_rng(3)
    for _ in range(20):
        loss, cost, forbidden, _, epsilon = random_instance(rng)
        problem = prepare_transport(loss, cost, forbidden)
        batch = rng.multinomial(50, rng.dirichlet(np.ones(len(loss))), size=7) / 50
        expected = [problem.value(row, epsilon) for row in batch]
        np.testing.assert_allclose(problem.value(batch, epsilon), expected, rtol=0, atol=1e-12)
        expected = [problem.dual_value(row, epsilon) for row in batch]
        np.testing.assert_allclose(problem.dual_value(batch, epsilon), expected, atol=1e-12)
        assert problem.value(batch[:0], epsilon).shape == (0,)


# --------------------------------------------------------------------------- dual value
def test_dual_value_signed_f_brute_force():
    rng = np.random.default_rng(11)
    grid = np.concatenate((np.linspace(0, 5, 2001), np.geomspace(5, 1e4, 200)))
    for _ in range(60):
        loss, cost, forbidden, f, epsilon = random_instance(rng, K=int(rng.integers(2, 9)))
        problem = prepare_transport(loss, cost, forbidden)
        signed = f + rng.normal(scale=0.3, size=(5, len(f)))
        ours = problem.dual_value(signed, epsilon)
        candidates = crossing_points(loss, cost, forbidden)
        for row, value in zip(signed, ours, strict=True):
            exact = brute_dual_objective(loss, cost, forbidden, row, epsilon, candidates).min()
            assert value == pytest.approx(exact, abs=ATOL)
            on_grid = brute_dual_objective(loss, cost, forbidden, row, epsilon, grid).min()
            assert value <= on_grid + ATOL


# --------------------------------------------------------------------------- kinks
def _check_interval(loss, cost, forbidden, f, epsilon, low, high):
    """[low, high] is exactly the set of minimisers of the brute-force dual objective."""
    candidates = crossing_points(loss, cost, forbidden)
    g_min = brute_dual_objective(loss, cost, forbidden, f, epsilon, candidates).min()
    ends = [low] if high == np.inf else [low, high, 0.5 * (low + high)]
    np.testing.assert_allclose(
        brute_dual_objective(loss, cost, forbidden, f, epsilon, ends), g_min, atol=ATOL
    )
    step = 1e-6
    if low > 0:
        outside = brute_dual_objective(loss, cost, forbidden, f, epsilon, [low - step])[0]
        assert outside > g_min + 1e-12
    if high < np.inf:
        outside = brute_dual_objective(loss, cost, forbidden, f, epsilon, [high + step])[0]
        assert outside > g_min + 1e-12
    else:
        far = brute_dual_objective(loss, cost, forbidden, f, epsilon, [1e3 * (low + 1)])[0]
        assert far == pytest.approx(g_min, abs=ATOL)


def test_dual_multipliers_constructed_kinks():
    loss = np.array([0.0, 1.0, 2.0])
    cost = np.array([[0.0, 1.0, 4.0], [9.0, 0.0, 1.0], [9.0, 9.0, 0.0]])
    problem = prepare_transport(loss, cost)
    # Row 0: slopes 1 (cost 1) then 1/3 (cost 3); row 1: slope 1 (cost 1).
    f = np.array([1.0, 0.0, 0.0])  # row 1 carries no mass: its segment must be ignored
    expected = {
        0.0: (1.0, np.inf),
        0.5: (1.0, 1.0),
        1.0: (1 / 3, 1.0),
        2.0: (1 / 3, 1 / 3),
        4.0: (0.0, 1 / 3),
        5.0: (0.0, 0.0),
    }
    for epsilon, interval in expected.items():
        assert problem.dual_multipliers(f, epsilon) == pytest.approx(interval)
        _check_interval(loss, cost, None, f, epsilon, *interval)
    # Mass on row 1 too: a group of two equal-slope segments, total cost 1.
    f = np.array([0.5, 0.5, 0.0])
    assert problem.dual_multipliers(f, 0.5) == (1.0, 1.0)  # inside the group: unique
    assert problem.dual_multipliers(f, 1.0) == pytest.approx((1 / 3, 1.0))
    assert problem.dual_multipliers(f, 2.5) == pytest.approx((0.0, 1 / 3))
    # Rounding: the cumulative cost 0.1 + 0.2 is 0.30000000000000004, still a kink at 0.3.
    cost = np.full((4, 4), np.inf)
    np.fill_diagonal(cost, 0.0)
    cost[0, 1], cost[2, 3] = 0.1, 0.2
    problem = prepare_transport(np.array([0.0, 1.0, 0.0, 1.0]), cost)
    f = np.array([1.0, 0.0, 1.0, 0.0])
    assert problem.dual_multipliers(f, 0.1) == pytest.approx((5.0, 10.0))
    assert problem.dual_multipliers(f, 0.3) == pytest.approx((0.0, 5.0))
    assert problem.dual_multipliers(f, 0.3, rtol=0.0) == pytest.approx((5.0, 5.0))
    assert problem.dual_multipliers(f, 0.3 + 1e-9) == (0.0, 0.0)


def test_dual_multipliers_without_segments():
    problem = prepare_transport(np.ones(3), np.ones((3, 3)) - np.eye(3))
    assert problem.n_segments == 0
    f = np.full(3, 1 / 3)
    assert problem.dual_multipliers(f, 0.0) == (0.0, np.inf)
    assert problem.dual_multipliers(f, 0.2) == (0.0, 0.0)
    assert problem.value(f, 0.2) == 0.0
    assert problem.dual_value(-f, 0.2) == 0.0
    breaks, values = problem.curve(f)
    np.testing.assert_array_equal(breaks, [0.0])
    np.testing.assert_array_equal(values, [0.0])


def test_dual_multipliers_at_random_kinks():
    """Budgets exactly at the breakpoints of the curve, checked against the definition."""
    rng = np.random.default_rng(5)
    n_kinks = 0
    for _ in range(40):
        loss, cost, forbidden, f, _ = random_instance(rng, K=int(rng.integers(2, 9)))
        problem = prepare_transport(loss, cost, forbidden)
        breaks, _ = problem.curve(f)
        budgets = list(breaks) + list(0.5 * (breaks[1:] + breaks[:-1])) + [breaks[-1] + 1.0]
        for epsilon in budgets:
            low, high = problem.dual_multipliers(f, float(epsilon))
            n_kinks += low < high
            _check_interval(loss, cost, forbidden, f, float(epsilon), low, high)
    assert n_kinks >= 40


# --------------------------------------------------------------------------- curve
def test_curve_matches_highs():
    rng = np.random.default_rng(8)
    for _ in range(25):
        loss, cost, forbidden, f, _ = random_instance(rng, K=int(rng.integers(2, 16)))
        problem = prepare_transport(loss, cost, forbidden)
        breaks, values = problem.curve(f)
        assert breaks[0] == 0.0 and (np.diff(breaks) > 0).all()
        slopes = np.diff(values) / np.diff(breaks)
        assert (slopes > 0).all() and (np.diff(slopes) < 0).all()
        budgets = np.concatenate((breaks, 0.5 * (breaks[1:] + breaks[:-1]), [breaks[-1] + 1]))
        for epsilon in budgets:
            assert problem.value(f, epsilon) == pytest.approx(
                highs_audit(loss, cost, forbidden, f, epsilon)[0], abs=ATOL
            )
        curve_values = problem.value_curve(f, budgets)
        expected = np.concatenate((values, 0.5 * (values[1:] + values[:-1]), [values[-1]]))
        np.testing.assert_allclose(curve_values, expected, atol=1e-12)
        np.testing.assert_allclose(curve_values, [problem.value(f, e) for e in budgets], atol=1e-12)


# --------------------------------------------------------------------------- property based
@st.composite
def small_instances(draw):
    K = draw(st.integers(2, 6))
    ints = st.integers(0, 3)
    loss = np.array(draw(st.lists(ints, min_size=K, max_size=K)), dtype=float)
    cost = np.array(draw(st.lists(ints, min_size=K * K, max_size=K * K)), float).reshape(K, K)
    np.fill_diagonal(cost, 0.0)
    forbidden = np.array(draw(st.lists(st.booleans(), min_size=K * K, max_size=K * K)))
    forbidden = forbidden.reshape(K, K)
    np.fill_diagonal(forbidden, False)
    weights = np.array(draw(st.lists(st.integers(0, 5), min_size=K, max_size=K)), float)
    f = weights / weights.sum() if weights.sum() else np.full(K, 1 / K)
    epsilon = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 10.0]))
    return loss, cost, forbidden, f, epsilon


@settings(max_examples=60, deadline=None)
@given(small_instances())
def test_property_matches_highs(instance):
    loss, cost, forbidden, f, epsilon = instance
    problem = prepare_transport(loss, cost, forbidden)
    value, _, multiplier = highs_audit(loss, cost, forbidden, f, epsilon)
    assert problem.value(f, epsilon) == pytest.approx(value, abs=ATOL)
    assert problem.dual_value(f, epsilon) == pytest.approx(value, abs=ATOL)
    plan = problem.plan(f, epsilon)
    assert (plan[forbidden] == 0).all()
    assert (cost * plan).sum() <= epsilon + 1e-12
    assert ((loss[None, :] - loss[:, None]) * plan).sum() == pytest.approx(value, abs=ATOL)
    low, high = problem.dual_multipliers(f, epsilon)
    assert low - 1e-9 <= multiplier <= high + 1e-9


# --------------------------------------------------------------------------- setup details
def test_infinite_cost_is_forbidden():
    rng = np.random.default_rng(2)
    loss, cost, _, f, _ = random_instance(rng, K=12)
    cost = np.abs(cost) + (1 - np.eye(12))
    forbidden = rng.random((12, 12)) < 0.4
    np.fill_diagonal(forbidden, False)
    with_inf = np.where(forbidden, np.inf, cost)
    a = prepare_transport(loss, cost, forbidden)
    b = prepare_transport(loss, with_inf)
    for epsilon in (0.0, 0.3, 1.0, 100.0):
        assert a.value(f, epsilon) == b.value(f, epsilon)
        assert b.value(f, epsilon) == pytest.approx(
            highs_audit(loss, cost, forbidden, f, epsilon)[0], abs=ATOL
        )


def test_tiny_costs_are_free_moves_and_staying_wins_ties():
    loss = np.array([0.0, 1.0, 0.0])
    cost = np.array([[1e-16, 1e-15, 1e-16], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    problem = prepare_transport(loss, cost)
    np.testing.assert_array_equal(problem.base_gain, [1.0, 0.0, 0.0])
    # Row 0 moves to cell 1 for free; row 2 ties with cell 0 and stays put.
    np.testing.assert_array_equal(problem.base_destination, [1, 1, 2])
    assert problem.value(np.array([0.5, 0.0, 0.5]), 0.0) == 0.5
    np.fill_diagonal(cost, 0.0)
    strict = prepare_transport(loss, cost, rtol=0.0)
    assert strict.value(np.array([0.5, 0.0, 0.5]), 0.0) == 0.0


@pytest.mark.parametrize("scale", [1e-9, 1e-7, 1e-3, 1e3, 1e9])
def test_zero_cost_tolerance_is_relative_to_the_cost_scale(scale):
    # psi does not depend on the units of the cost: rescaling the costs and the budget by the
    # same factor gives the same values, at epsilon = 0 (free moves only) too. Costs between
    # 1e-4 and 1 times the scale: at scale 1e-9 an absolute 1e-12 made them all free moves.
    rng = np.random.default_rng(12)
    K = 30
    points = rng.uniform(0, 1, size=(K, 2))
    points[:10] = points[10:20] + 1e-2 * rng.uniform(size=(10, 2))
    cost = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
    loss = rng.integers(0, 2, size=K).astype(float)
    label = rng.integers(0, 2, size=K)
    forbidden = label[:, None] != label[None, :]
    f = rng.dirichlet(np.ones(K))
    reference = prepare_transport(loss, cost, forbidden)
    assert reference.value(f, 0.0) == 0.0  # no two cells coincide: no free move
    rescaled = prepare_transport(loss, cost * scale, forbidden)
    for epsilon in (0.0, 1e-4, 0.01, 0.1):
        assert rescaled.value(f, epsilon * scale) == pytest.approx(
            reference.value(f, epsilon), rel=1e-9, abs=1e-12
        )
    # Rounding noise at the scale of the costs is still a free move.
    noisy = cost * scale
    noisy[0, 1] = noisy[1, 0] = 1e-14 * scale
    np.testing.assert_array_equal(
        prepare_transport(loss, noisy).base_gain,
        prepare_transport(loss, np.where(noisy < 1e-13 * scale, 0.0, noisy)).base_gain,
    )


def test_segments_are_sorted_and_consistent():
    rng = np.random.default_rng(9)
    loss, cost, forbidden, _, _ = random_instance(rng, K=25)
    problem = prepare_transport(loss, cost, forbidden)
    assert (np.diff(problem.segment_slope) <= 0).all()
    assert (problem.segment_cost > 0).all() and (problem.segment_gain > 0).all()
    gain = loss[None, :] - loss[:, None]
    rows, src, dst = problem.segment_row, problem.segment_source, problem.segment_target
    np.testing.assert_allclose(
        problem.segment_cost,
        cost[rows, dst] - np.where(src == problem.base_destination[rows], 0.0, cost[rows, src]),
        atol=1e-12,
    )
    np.testing.assert_allclose(problem.segment_gain, gain[rows, dst] - gain[rows, src])


def test_problem_is_immutable():
    problem = prepare_transport(np.array([0.0, 1.0]), np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert isinstance(problem, TransportProblem)
    assert repr(problem) == "TransportProblem(n_cells=2, n_segments=1)"
    with pytest.raises(ValueError):
        problem.segment_slope[0] = 3.0
    with pytest.raises(AttributeError):
        problem.n_cells = 3


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("loss", "cost", "forbidden", "match"),
    [
        (np.zeros((2, 2)), np.zeros((2, 2)), None, "1-D"),
        (np.array([0.0, np.nan]), np.zeros((2, 2)), None, "finite"),
        (np.zeros(2), np.zeros((2, 3)), None, "shape"),
        (np.zeros(2), np.array([[0.0, -1e-3], [1.0, 0.0]]), None, "non-negative"),
        (np.zeros(2), np.array([[0.0, np.nan], [1.0, 0.0]]), None, "NaN"),
        (np.zeros(2), np.array([[0.5, 1.0], [1.0, 0.0]]), None, "diagonal"),
        (np.zeros(2), np.array([[np.inf, 1.0], [1.0, 0.0]]), None, "diagonal"),
        (np.zeros(2), np.ones((2, 2)) - np.eye(2), np.zeros((3, 3), bool), "shape"),
        (np.zeros(2), np.ones((2, 2)) - np.eye(2), np.eye(2, dtype=bool), "diagonal"),
        (np.zeros(2), np.ones((2, 2)) - np.eye(2), np.array([[0, 2], [0, 0]]), "boolean"),
    ],
)
def test_prepare_rejects_bad_input(loss, cost, forbidden, match):
    with pytest.raises(ValueError, match=match):
        prepare_transport(loss, cost, forbidden)


def test_prepare_accepts_integer_mask_and_rejects_bad_rtol():
    cost = np.ones((2, 2)) - np.eye(2)
    problem = prepare_transport(np.array([0.0, 1.0]), cost, np.array([[0, 1], [0, 0]]))
    assert problem.n_segments == 0
    with pytest.raises(ValueError, match="rtol"):
        prepare_transport(np.zeros(2), cost, rtol=-1.0)


def test_methods_reject_bad_input():
    problem = prepare_transport(np.array([0.0, 1.0]), np.array([[0.0, 1.0], [1.0, 0.0]]))
    f = np.array([0.5, 0.5])
    for method in (problem.value, problem.plan, problem.dual_multipliers):
        with pytest.raises(ValueError, match="non-negative"):
            method(np.array([-0.1, 1.1]), 0.1)
        with pytest.raises(ValueError, match="shape"):
            method(np.ones(3), 0.1)
    for bad in (-0.1, np.inf, np.nan, [0.1, 0.2], "0.1", True):
        with pytest.raises(ValueError, match="epsilon"):
            problem.value(f, bad)
        with pytest.raises(ValueError, match="epsilon"):
            problem.dual_value(f, bad)
    with pytest.raises(ValueError, match="finite"):
        problem.dual_value(np.array([np.nan, 0.0]), 0.1)
    with pytest.raises(ValueError, match="single"):
        problem.plan(np.ones((2, 2)), 0.1)
    with pytest.raises(ValueError, match="rtol"):
        problem.dual_multipliers(f, 0.1, rtol=-1.0)
    with pytest.raises(ValueError, match="epsilons"):
        problem.value_curve(f, [-1.0])
    # dual_value accepts signed f.
    assert np.isfinite(problem.dual_value(np.array([-0.1, 1.1]), 0.1))
