"""The nearest-neighbour construction of the FaiTH LP against the dense path and HiGHS.

``prepare_metric_transport`` must build *the same* TransportProblem as ``prepare_transport``
on the dense matrices of the same metric (same bases, same segments in the same order), so
that values, curves, plans, dual multipliers and adversarial distributions agree; and both
must agree with an independent LP solver (scipy's HiGHS). Instances cover the 0-1 loss,
three-level and real-valued losses, forbidden label changes, frozen features, tied costs
(integer points), zero-cost moves between distinct cells (duplicated or projected points),
empty cells and rows restricted to the support, every exponent, and the level tree of
many-valued losses (tiny ``max_levels`` / ``leaf_size``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.frozen import FrozenEstimator

from skfair_audit.faith import (
    CallableMetric,
    EuclideanMetric,
    MahalanobisMetric,
    PrecomputedMetric,
    SaturatedBudgetWarning,
    SensitiveSubspaceMetric,
    TransportProblem,
    prepare_metric_transport,
    prepare_transport,
)
from skfair_audit.faith._nearest import dense_metric_costs, metric_points

from .test_solver import highs_audit

ATOL = 1e-9
ARRAYS = (
    "base_gain", "base_destination", "segment_row", "segment_source", "segment_target",
    "segment_cost", "segment_gain", "segment_slope", "support",
)


# --------------------------------------------------------------------------- instances
def _instance(rng, n_points=None, n_labels=None):
    """Points x labels cells, with every kind of tie and degeneracy the audit meets."""
    n_points = int(rng.integers(1, 30)) if n_points is None else n_points
    dim = int(rng.integers(1, 4))
    kind = rng.integers(0, 4)
    if kind == 0:  # generic
        points = rng.normal(size=(n_points, dim))
    elif kind == 1:  # small integers: many tied costs
        points = rng.integers(0, 3, size=(n_points, dim)).astype(float)
    elif kind == 2:  # duplicated points: zero-cost moves between distinct cells
        points = rng.integers(0, 3, size=(n_points, dim)).astype(float)
        points[rng.random(n_points) < 0.3] = points[0]
    else:  # a projected coordinate (a protected attribute under the projector)
        points = rng.normal(size=(n_points, dim))
        points[:, 0] = 0.0
    n_labels = int(rng.integers(1, 3)) if n_labels is None else n_labels
    n_cells = n_points * n_labels
    point_index = np.tile(np.arange(n_points), n_labels)
    label = np.repeat(np.arange(n_labels), n_points)
    loss_kind = rng.integers(0, 4)
    if loss_kind == 0:
        loss = rng.integers(0, 2, n_cells).astype(float)  # 0-1 loss
    elif loss_kind == 1:
        loss = rng.integers(0, 3, n_cells).astype(float)  # three levels
    elif loss_kind == 2:
        loss = rng.normal(size=n_cells)  # real-valued
    else:
        loss = np.round(rng.exponential(size=n_cells), 1)  # real-valued with ties
    frozen = rng.integers(0, 2, n_points)[point_index] if rng.random() < 0.3 else 0
    groups = 2 * label + frozen
    exponent = float(rng.choice([2.0, 1.0, 0.5, 3.0]))
    counts = rng.multinomial(50, rng.dirichlet(np.ones(n_cells)))
    counts[rng.random(n_cells) < 0.3] = 0  # empty cells
    if counts.sum() == 0:
        counts[0] = 1
    return loss, points, point_index, groups, exponent, counts


def _dense(loss, points, point_index, groups, exponent):
    cost = dense_metric_costs(points, exponent, point_index)
    return prepare_transport(loss, cost, groups[:, None] != groups[None, :]), cost


def _assert_same_problem(sparse, dense):
    """``sparse`` (built on its support) equals ``dense`` restricted to that support."""
    reference = dense.restrict(sparse.support)
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(sparse, name), getattr(reference, name), name)


def _check_against_dense(rng, **options):
    loss, points, point_index, groups, exponent, counts = _instance(rng)
    rows = np.flatnonzero(counts) if rng.random() < 0.5 else None
    sparse = prepare_metric_transport(
        loss, points, exponent=exponent, point_index=point_index, groups=groups, rows=rows,
        **options,
    )
    dense, _ = _dense(loss, points, point_index, groups, exponent)
    _assert_same_problem(sparse, dense)
    f = counts / counts.sum()
    # Same arrays: bit-identical evaluations (the full dense problem sums over more zeros).
    reference = dense.restrict(sparse.support)
    for epsilon in (0.0, 0.05, 0.5, 1e3):
        assert sparse.value(f, epsilon) == reference.value(f, epsilon)
        assert sparse.value(f, epsilon) == pytest.approx(dense.value(f, epsilon), abs=1e-12)
        for a, b in zip(sparse.plan_entries(f, epsilon), dense.plan_entries(f, epsilon),
                        strict=True):
            np.testing.assert_array_equal(a, b)
        assert sparse.dual_multipliers(f, epsilon) == dense.dual_multipliers(f, epsilon)
        np.testing.assert_array_equal(
            sparse.adversarial_distribution(f, epsilon),
            dense.adversarial_distribution(f, epsilon),
        )
    for a, b in zip(sparse.curve(f), reference.curve(f), strict=True):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- vs the dense path
def test_equals_the_dense_construction_on_random_instances():
    rng = np.random.default_rng(20240611)
    for _ in range(400):
        _check_against_dense(rng)


def test_level_tree_equals_the_dense_construction():
    """Many-valued losses through the level tree, split down to single destinations."""
    rng = np.random.default_rng(7)
    for _ in range(250):
        _check_against_dense(
            rng, max_levels=int(rng.choice([1, 2, 3])), leaf_size=int(rng.choice([1, 2, 5]))
        )


def test_larger_instances_with_many_ties():
    rng = np.random.default_rng(11)
    for trial in range(12):
        n_points = 300
        points = rng.integers(0, 4, size=(n_points, 3)).astype(float) * [1.0, 0.5, 1e3][
            trial % 3
        ]
        points[:, 0] *= trial % 2  # a free coordinate every other trial
        point_index = np.tile(np.arange(n_points), 2)
        label = np.repeat([0, 1], n_points)
        loss = [
            rng.integers(0, 2, 2 * n_points).astype(float),
            rng.integers(0, 5, 2 * n_points).astype(float),
            np.round(rng.exponential(size=2 * n_points), 2),
        ][trial % 3]
        rows = np.flatnonzero(rng.random(2 * n_points) < 0.5)
        sparse = prepare_metric_transport(
            loss, points, point_index=point_index, groups=label, rows=rows,
            exponent=[2.0, 1.0, 1.5][trial % 3], max_levels=[32, 4, 2][trial % 3],
            leaf_size=[256, 8, 1][trial % 3],
        )
        dense, _ = _dense(loss, points, point_index, label, [2.0, 1.0, 1.5][trial % 3])
        _assert_same_problem(sparse, dense)


# --------------------------------------------------------------------------- vs HiGHS
def _check_against_highs(loss, points, point_index, groups, exponent, counts, epsilon):
    rows = np.flatnonzero(counts)
    problem = prepare_metric_transport(
        loss, points, exponent=exponent, point_index=point_index, groups=groups, rows=rows
    )
    cost = dense_metric_costs(points, exponent, point_index)
    cost[cost <= 1e-12] = 0.0  # the construction's rule for free moves
    forbidden = groups[:, None] != groups[None, :]
    f = counts / counts.sum()
    value, highs_plan, _ = highs_audit(loss, cost, forbidden, f, epsilon)
    if _within_highs_tolerance(cost, forbidden):
        assert problem.value(f, epsilon) == pytest.approx(value, abs=ATOL)
    else:
        value = problem.value(f, epsilon)  # the dense twin is compared exactly by the callers
    source, target, mass = problem.plan_entries(f, epsilon)
    gain = loss[target] - loss[source]
    assert np.dot(mass, gain) == pytest.approx(value, abs=ATOL)
    assert np.dot(mass, cost[source, target]) <= epsilon + 1e-12
    assert not forbidden[source, target].any()
    np.testing.assert_allclose(np.bincount(source, mass, loss.size), f, atol=1e-12)
    # The curve through its breakpoints: each one is the LP's value at that budget.
    budgets, values = problem.curve(f)
    for budget, curve_value in zip(budgets[:4], values[:4], strict=False):
        if _within_highs_tolerance(cost, forbidden):
            assert curve_value == pytest.approx(
                highs_audit(loss, cost, forbidden, f, budget)[0], abs=ATOL
            )
    return problem, highs_plan, f


def _within_highs_tolerance(cost, forbidden, tiny=1e-6):
    """Whether HiGHS can be the reference to ``ATOL``: its feasibility tolerance on the
    budget row is absolute (1e-10), so a move cheaper than ``tiny`` can carry up to
    1e-10 / cost of mass beyond the budget (two points 7e-4 apart under exponent 3: a move
    of cost 3e-10, a third of the mass, used by HiGHS even at epsilon = 0). There the exact
    dense construction, compared array by array with the sparse one, is the reference."""
    allowed = np.isfinite(cost) & ~forbidden
    return not (allowed & (cost > 0) & (cost < tiny)).any()


def test_value_plan_and_curve_match_highs():
    rng = np.random.default_rng(3)
    for _ in range(60):
        loss, points, point_index, groups, exponent, counts = _instance(rng)
        epsilon = float(rng.choice([0.0, rng.uniform(0.01, 1.0), 1e3]))
        _check_against_highs(loss, points, point_index, groups, exponent, counts, epsilon)


def test_plan_equals_highs_when_the_optimum_is_unique():
    """Generic points, real-valued losses, every cell with mass, a budget off the kinks: the
    optimal plan is unique, and ours is HiGHS's."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        n_points = int(rng.integers(3, 15))
        points = rng.normal(size=(n_points, 2))
        point_index = np.tile(np.arange(n_points), 2)
        groups = np.repeat([0, 1], n_points)
        loss = rng.normal(size=2 * n_points)
        counts = rng.integers(1, 20, 2 * n_points)
        problem = prepare_metric_transport(loss, points, point_index=point_index, groups=groups)
        f = counts / counts.sum()
        budgets, _ = problem.curve(f)
        if budgets.size < 2:
            continue
        epsilon = float(0.5 * (budgets[0] + budgets[1]))
        _, highs_plan, _ = _check_against_highs(
            loss, points, point_index, groups, 2.0, counts, epsilon
        )
        np.testing.assert_allclose(problem.plan(f, epsilon), highs_plan, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_points=st.integers(1, 12),
    n_labels=st.integers(1, 2),
    epsilon=st.sampled_from([0.0, 0.1, 1.0, 100.0]),
)
# two points 7e-4 apart under exponent 3: a move of cost 3e-10, which the budget row at
# epsilon = 0 must refuse (HiGHS's absolute tolerance admits it: _within_highs_tolerance)
@example(seed=5601, n_points=12, n_labels=2, epsilon=0.0)
def test_property_matches_dense_and_highs(seed, n_points, n_labels, epsilon):
    rng = np.random.default_rng(seed)
    loss, points, point_index, groups, exponent, counts = _instance(rng, n_points, n_labels)
    problem, _, f = _check_against_highs(
        loss, points, point_index, groups, exponent, counts, epsilon
    )
    dense, _ = _dense(loss, points, point_index, groups, exponent)
    _assert_same_problem(problem, dense)
    np.testing.assert_array_equal(
        problem.adversarial_distribution(f, epsilon), dense.adversarial_distribution(f, epsilon)
    )


# --------------------------------------------------------------------------- support and API
def test_support_restriction_and_on_support_evaluation():
    rng = np.random.default_rng(0)
    loss, points, point_index, groups, exponent, counts = _instance(rng, 20, 2)
    rows = np.flatnonzero(counts)
    problem = prepare_metric_transport(
        loss, points, exponent=exponent, point_index=point_index, groups=groups, rows=rows
    )
    assert isinstance(problem, TransportProblem)
    np.testing.assert_array_equal(problem.support, rows)
    np.testing.assert_array_equal(problem.support[problem.segment_position],
                                  problem.segment_row)
    f = counts / counts.sum()
    batch = rng.multinomial(30, f, size=5)[:, rows] / 30.0
    full = np.zeros((5, loss.size))
    full[:, rows] = batch
    np.testing.assert_array_equal(problem.value(batch, 0.2, on_support=True),
                                  problem.value(full, 0.2))
    signed = batch - f[rows]  # the numerical bootstrap's perturbations are signed
    full_signed = np.zeros((5, loss.size))
    full_signed[:, rows] = signed
    np.testing.assert_array_equal(problem.dual_value(signed, 0.2, on_support=True),
                                  problem.dual_value(full_signed, 0.2))
    outside = np.zeros(loss.size)
    outside[np.setdiff1d(np.arange(loss.size), rows)[0]] = 1.0
    with pytest.raises(ValueError, match="outside the support"):
        problem.value(outside, 0.1)
    with pytest.raises(ValueError, match="n_support"):
        problem.value(np.ones(loss.size + 1), 0.1, on_support=True)
    assert "n_support" in repr(problem)


def test_memory_is_bounded_by_chunking_large_batches():
    """A batch of many frequency vectors is evaluated chunk by chunk: same values."""
    rng = np.random.default_rng(1)
    points = rng.normal(size=(3000, 2))
    loss = (points[:, 0] > 0).astype(float)
    problem = prepare_metric_transport(loss, points)
    f = rng.dirichlet(np.ones(3000), size=1500)
    chunked = problem.value(f, 0.01)
    one_by_one = np.array([problem.value(row, 0.01) for row in f[:20]])
    np.testing.assert_array_equal(chunked[:20], one_by_one)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"points": np.zeros((3, 2))}, "give point_index"),
        ({"point_index": np.array([0, 1, 9, 0])}, "point_index"),
        ({"groups": np.zeros(3)}, "groups"),
        ({"rows": np.array([7])}, "rows"),
        ({"exponent": 0}, "exponent"),
        ({"max_levels": 0}, "max_levels"),
        ({"points": np.full((4, 1), np.nan)}, "finite"),
    ],
)
def test_rejects_bad_input(kwargs, match):
    arguments = {"points": np.arange(4.0)[:, None], **kwargs}
    with pytest.raises(ValueError, match=match):
        prepare_metric_transport(np.array([0.0, 1.0, 0.0, 1.0]), **arguments)


# --------------------------------------------------------------------------- metric points
def _cells(rng, n=40):
    """Rows (group, x1, x2): the counterfactual copies of each row in both groups."""
    base = np.round(rng.normal(size=(n, 2)), 1)
    return np.vstack([np.column_stack([np.full(n, g), base]) for g in (0.0, 1.0)])


@pytest.mark.parametrize(
    "make_metric",
    [
        lambda X: SensitiveSubspaceMetric([0]).fit(X),
        lambda X: FrozenEstimator(SensitiveSubspaceMetric([0], exponent=1).fit(X)),
        lambda X: EuclideanMetric(columns=[1, 2]),
        lambda X: MahalanobisMetric(np.diag([0.0, 2.0, 0.5]), exponent=3),
    ],
    ids=["subspace", "frozen-subspace-p1", "euclidean-columns", "mahalanobis-p3"],
)
def test_metric_points_reproduce_the_metric_and_merge_free_coordinates(make_metric):
    rng = np.random.default_rng(0)
    X = _cells(rng)
    metric = make_metric(X)
    points, point_of_row, exponent = metric_points(metric, X)
    assert exponent == metric.exponent
    np.testing.assert_allclose(
        dense_metric_costs(points, exponent, point_of_row), metric.cost_matrix(X),
        rtol=1e-9, atol=1e-9,
    )
    # The group is free under every one of these metrics: both copies of a row share a point.
    half = X.shape[0] // 2
    np.testing.assert_array_equal(point_of_row[:half], point_of_row[half:])
    assert points.shape[1] <= 2


def test_metric_points_refuse_non_euclidean_metrics():
    X = _cells(np.random.default_rng(1), 10)
    assert metric_points(CallableMetric(lambda a, b: np.abs(a - b).sum()).fit(), X) is None
    assert metric_points(PrecomputedMetric(np.zeros((20, 20))).fit(), X) is None

    class Capped(EuclideanMetric):
        """Has transform, but its cost is not |T a - T b|**p."""

        def cost_matrix(self, A, B=None):
            return np.minimum(super().cost_matrix(A, B), 1.0)

    assert metric_points(Capped(), X) is None


def test_degenerate_metric_makes_every_move_free_in_both_paths():
    """A projector that kills every direction leaves rounding noise around one point: every
    squared distance is within rounding of 0 (relative to the points' norms), so every move
    is free in both paths."""
    rng = np.random.default_rng(2)
    points = 1.0 + rng.normal(size=(500, 3)) * 1e-15
    loss = rng.integers(0, 2, 1000).astype(float)
    point_index = np.tile(np.arange(500), 2)
    groups = np.repeat([0, 1], 500)
    sparse = prepare_metric_transport(loss, points, point_index=point_index, groups=groups)
    dense, _ = _dense(loss, points, point_index, groups, 2.0)
    _assert_same_problem(sparse, dense)
    assert sparse.n_segments == 0


@pytest.mark.parametrize("scale", [1e-9, 1e9])
def test_units_of_the_metric_do_not_matter_in_either_path(scale):
    """Points in tiny (or huge) units are not a degenerate metric: the zero-cost tolerance is
    relative to the largest cost, and both paths give the values of the unscaled points at
    the rescaled budgets (was: at 1e-9 every cost fell below an absolute 1e-12)."""
    rng = np.random.default_rng(2)
    points = rng.normal(size=(200, 3))
    loss = rng.integers(0, 2, 400).astype(float)
    point_index = np.tile(np.arange(200), 2)
    groups = np.repeat([0, 1], 200)
    f = rng.dirichlet(np.ones(400))
    reference = prepare_metric_transport(loss, points, point_index=point_index, groups=groups)
    sparse = prepare_metric_transport(loss, points * scale, point_index=point_index,
                                      groups=groups)
    dense, _ = _dense(loss, points * scale, point_index, groups, 2.0)
    _assert_same_problem(sparse, dense)
    assert sparse.n_segments == reference.n_segments > 0
    for epsilon in (0.0, 0.05, 1.0):
        assert sparse.value(f, epsilon * scale**2) == pytest.approx(
            reference.value(f, epsilon), rel=1e-9, abs=1e-12)


def test_value_of_resamples_equals_value_of_their_counts():
    """The sparse evaluation of resampled rows (the m-out-of-n bootstrap of a large audit)
    equals the evaluation of their count vectors."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        loss, points, point_index, groups, exponent, counts = _instance(rng, 40, 2)
        rows = np.flatnonzero(counts)
        problem = prepare_metric_transport(loss, points, exponent=exponent,
                                           point_index=point_index, groups=groups, rows=rows)
        m = int(rng.integers(1, 30))
        positions = rng.integers(0, rows.size, size=(12, m))
        tallies = np.stack([np.bincount(p, minlength=rows.size) for p in positions]) / m
        for epsilon in (0.0, 0.03, 0.3, 100.0):
            np.testing.assert_allclose(
                problem.value_of_resamples(positions, epsilon),
                problem.value(tallies, epsilon, on_support=True), rtol=0, atol=1e-12,
            )
    with pytest.raises(ValueError, match="positions"):
        problem.value_of_resamples(np.array([[rows.size]]), 0.1)


def test_m_out_of_n_of_a_large_audit_draws_rows():
    """m << cells: the bootstrap draws the m rows (RowCategories); the same law as drawing
    counts, bit-identical for any n_jobs, and the root matches the counts-based root in law."""
    from scipy import stats

    from skfair_audit.faith import faith_audit

    rng = np.random.default_rng(9)
    n_points = 4000
    points = rng.normal(size=(n_points, 2))
    point_index = np.tile(np.arange(n_points), 2)
    groups = np.repeat([0, 1], n_points)
    loss = (rng.random(2 * n_points) < 0.3).astype(float)
    counts = np.zeros(2 * n_points, dtype=int)
    counts[rng.choice(2 * n_points, 3000, replace=False)] = 1  # m = 209 << 3,000 cells
    rows = np.flatnonzero(counts)
    problem = prepare_metric_transport(loss, points, point_index=point_index, groups=groups,
                                       rows=rows)
    common = {"epsilon": 0.05, "n_resamples": 600, "random_state": 0}
    # (3,000 random points: every flip of the group reaches its nearest twin within 0.05)
    with pytest.warns(SaturatedBudgetWarning):
        sparse = faith_audit(counts, None, problem, **common)
        parallel = faith_audit(counts, None, problem, n_jobs=2, batch_size=100, **common)
        serial = faith_audit(counts, None, problem, batch_size=100, **common)
    np.testing.assert_array_equal(parallel.bootstrap_distribution,
                                  serial.bootstrap_distribution)
    # The full-support problem draws counts over all cells instead: same law of the root.
    full = prepare_metric_transport(loss, points, point_index=point_index, groups=groups)
    with pytest.warns(SaturatedBudgetWarning):
        dense_draws = faith_audit(counts, None, full, **common)
    assert sparse.statistic == pytest.approx(dense_draws.statistic, abs=1e-12)
    assert stats.ks_2samp(sparse.bootstrap_distribution,
                          dense_draws.bootstrap_distribution).pvalue > 0.001
