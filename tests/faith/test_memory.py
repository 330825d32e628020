"""The memory guard: every K x K, row x cell or batch x segment array is refused *before* it is
allocated, with the bytes it needs and the option that avoids it."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skfair_audit._resampling import format_bytes, parse_memory_limit
from skfair_audit.faith import (
    CallableMetric,
    DegenerateMetricWarning,
    EmpiricalSpace,
    FaithAuditor,
    MemoryLimitError,
    PrecomputedMetric,
    faith_audit,
    prepare_metric_transport,
    prepare_transport,
)


class _Untouchable:
    """An array-like that fails the test if anything converts it to an array."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the matrix was read before the memory check")


def _peak_bytes(function):
    tracemalloc.start()
    try:
        function()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_dense_construction_refused_before_allocating():
    loss = np.zeros(100_000)

    def build():
        with pytest.raises(MemoryLimitError) as info:
            prepare_transport(loss, _Untouchable())
        message = str(info.value)
        assert "K = 100,000" in message and "GiB" in message
        assert "memory_limit" in message and "prepare_metric_transport" in message

    assert _peak_bytes(build) < 5 * 2**20
    # The estimate is what the message says: 48 bytes per pair of cells.
    with pytest.raises(MemoryLimitError, match=format_bytes(48 * 3000**2).replace(".", r"\.")):
        prepare_transport(np.zeros(3000), _Untouchable(), memory_limit="100MB")


def test_memory_limit_values():
    assert parse_memory_limit("2GiB") == 2 * 2**30
    assert parse_memory_limit("500 MB") == 5e8
    assert parse_memory_limit(1024) == 1024.0
    assert parse_memory_limit(None) == np.inf
    for bad in ("lots", "2XB", 0, -1, True, "GiB"):
        with pytest.raises(ValueError, match="memory_limit"):
            parse_memory_limit(bad)
    assert isinstance(MemoryLimitError("x"), MemoryError)


def _continuous(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n).astype(float)
    X = np.column_stack([group, rng.normal(size=n), rng.normal(size=n)])
    y = (rng.random(n) < 1 / (1 + np.exp(-X[:, 1] - group))).astype(int)
    return X, y


def test_auditor_refuses_the_dense_path_of_non_linear_metrics_before_computing_costs():
    X, y = _continuous()

    def never(a, b):
        raise AssertionError("the callable metric was evaluated before the memory check")

    auditor = FaithAuditor(LogisticRegression(), space="empirical", protected=[0],
                           metric=CallableMetric(never), memory_limit="1GiB").fit(X, y)
    with pytest.raises(MemoryLimitError) as info:
        auditor.audit(X, y)
    message = str(info.value)
    assert "K = 12,000" in message and "GiB" in message and "not a linear map" in message
    assert "linear-map fair metric" in message and "memory_limit" in message
    # A dense forbidden matrix forces the dense path too, and says so.
    rng = np.random.default_rng(0)
    grid_X = rng.integers(0, 50, (1000, 1))
    labels = (grid_X[:, 0] + rng.integers(0, 20, 1000) > 30).astype(int)
    forbidding = FaithAuditor(LogisticRegression(), space="grid", metric="euclidean",
                              forbidden=np.zeros((100, 100), bool), memory_limit="100kB")
    with pytest.raises(MemoryLimitError, match="K = 100 cells .the forbidden matrix is dense"):
        forbidding.fit(grid_X, labels)


def test_auditor_space_guards():
    X, y = _continuous(500)
    with pytest.raises(MemoryLimitError, match="empirical sample space of K = 2,000 cells"):
        FaithAuditor(LogisticRegression(), space="empirical", protected=[0],
                     memory_limit="100kB").fit(X, y).audit(X, y)
    with pytest.raises(ValueError, match="memory_limit"):
        FaithAuditor(LogisticRegression(), memory_limit="plenty").fit(X, y)
    with pytest.raises(MemoryLimitError, match="K = 2,000"):
        EmpiricalSpace.from_data(X, y, protected=[0], memory_limit="1kB")


def test_dense_plan_and_matrices_are_guarded():
    rng = np.random.default_rng(0)
    n = 20_000  # a dense plan would take 3.2 GB
    points = rng.normal(size=(n, 2))
    loss = (points[:, 0] > 0).astype(float)
    problem = prepare_metric_transport(loss, points)
    f = rng.dirichlet(np.ones(n))

    def plan():
        with pytest.raises(MemoryLimitError, match="plan_entries"):
            problem.plan(f, 0.1, memory_limit="1GiB")

    assert _peak_bytes(plan) < 5 * 2**20
    source, target, mass = problem.plan_entries(f, 0.1)
    np.testing.assert_allclose(np.bincount(source, mass, n), f, atol=1e-15)
    counts = rng.multinomial(5000, np.full(n, 1.0 / n))
    result = faith_audit(counts, None, problem.restrict(np.flatnonzero(counts)), epsilon=0.1,
                         n_resamples=20, random_state=0)
    with pytest.raises(MemoryLimitError, match="plan_source"):
        _ = result.transport_plan
    assert result.moves()[0]["from_cell"].startswith("cell ")
    # The plan keeps to the audit's own budget (parsed once), not to the default one.
    with pytest.warns(DegenerateMetricWarning):  # every move is free in this toy
        small = faith_audit(np.array([40, 30, 30]), np.array([0.0, 1.0, 1.0]), np.zeros((3, 3)),
                            epsilon=0.0, n_resamples=20, random_state=0, memory_limit="1MB")
    assert small.memory_limit == 1e6 and small.transport_plan.shape == (3, 3)
    with pytest.raises(MemoryLimitError, match="memory_limit = 50 B"):
        _ = dataclasses.replace(small, memory_limit=50.0).transport_plan
    # The grid auditor's dense attributes are computed on access, within memory_limit.
    grid_X = np.column_stack([rng.integers(0, 30, 2000), rng.integers(0, 40, 2000)])
    grid_y = (grid_X[:, 0] > 15).astype(int)
    auditor = FaithAuditor(LogisticRegression(), metric="euclidean", memory_limit="20MB",
                           space="grid",
                           n_resamples=10).fit(grid_X, grid_y)
    assert auditor.transport_problem_.n_cells == 2400
    with pytest.raises(MemoryLimitError, match="cost_"):
        _ = auditor.cost_
    assert auditor.audit(grid_X, grid_y).n_cells == 2400


def test_precomputed_metric_keeps_working_within_the_limit():
    X, y = _continuous(120)
    space = EmpiricalSpace.from_data(X, y, protected=[0])
    cost = np.zeros((space.n_cells, space.n_cells))
    auditor = FaithAuditor(LogisticRegression(), space="empirical", protected=[0],
                           metric=PrecomputedMetric(cost), n_resamples=20).fit(X, y)
    with pytest.warns(DegenerateMetricWarning):  # an all-zero cost frees every move
        assert auditor.audit(X, y).n_cells == space.n_cells


def test_the_budget_reaches_scorers_and_model_selection():
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import make_faith_scorer
    from skfair_audit.model_selection import FairModelSelector

    X, y = _continuous(400)
    model = LogisticRegression().fit(X, y)
    scorer = make_faith_scorer(protected=[0], space="empirical", memory_limit="10kB")
    with pytest.raises(MemoryLimitError, match="memory_limit = 9.8 KiB"):
        scorer(model, X, y)
    assert make_faith_scorer(protected=[0], space="empirical")(model, X, y) <= 0
    selector = FairModelSelector(
        LogisticRegression(), param_grid={"C": [1.0]}, delta=0.5, protected=[0], cv=2,
        auditor=FaithAuditor(None, space="empirical", n_resamples=20, memory_limit="10kB"),
    )
    with pytest.raises(MemoryLimitError):
        selector.fit(X, y)
