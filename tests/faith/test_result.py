"""Tests of ``FaithResult``: intervals, tables, the dense plan and the Gaussian-limit flag."""

from __future__ import annotations

import dataclasses
import math
from contextlib import nullcontext

import numpy as np
import pytest

from skfair_audit.faith import (
    DegenerateMetricWarning,
    FaithResult,
    SaturatedBudgetWarning,
    faith_audit,
)
from skfair_audit.results import ConfidenceInterval

# Two labels x two groups; moving to the other group is free, label changes are forbidden.
COUNTS = np.array([300, 200, 250, 250])
LOSS = np.array([0.0, 1.0, 1.0, 0.0])
LABELS = np.array([0, 0, 1, 1])
FORBIDDEN = LABELS[:, None] != LABELS[None, :]

# The solver's documented instance: epsilon = 0.4 is a kink of epsilon -> psi.
KINK_LOSS = np.array([0.0, 1.0, 0.0, 1.0])
KINK_COST = np.array(
    [[0.0, 1.0, 0.0, 4.0], [1.0, 0.0, 4.0, 0.0], [0.0, 4.0, 0.0, 2.0], [4.0, 0.0, 1.0, 0.0]]
)
KINK_COUNTS = np.array([400, 100, 300, 200])


@pytest.fixture(scope="module")
def result():
    with pytest.warns(DegenerateMetricWarning):  # group changes are free, by design
        return _zero_cost_audit()


def _zero_cost_audit():
    return faith_audit(
        COUNTS,
        LOSS,
        np.zeros((4, 4)),
        epsilon=0.0,
        forbidden=FORBIDDEN,
        delta=0.5,
        n_resamples=400,
        random_state=0,
        cell_features=[["a"], ["b"], ["a"], ["b"]],
        feature_names=["group"],
        cell_labels=LABELS,
    )


@pytest.fixture(scope="module")
def bootstrap_result():
    with pytest.warns(DegenerateMetricWarning):
        return faith_audit(COUNTS, LOSS, np.zeros((4, 4)), epsilon=0.0, forbidden=FORBIDDEN,
                           delta=0.5, method="m-out-of-n", n_resamples=400, random_state=0)


def test_statistic_by_hand(result):
    # The adversary moves cell 0 (loss 0) to its group twin, cell 1 (loss 1), and cell 3 to
    # cell 2 likewise: (300 + 250) / 1000.
    assert result.statistic == pytest.approx(0.55)
    assert result.n == 1000 and result.n_cells == 4


def test_one_sided_bounds_are_the_one_sided_intervals(result):
    greater = result.confidence_interval(alternative="greater")
    less = result.confidence_interval(alternative="less")
    assert isinstance(greater, ConfidenceInterval)
    assert greater.low == result.lower_bound and greater.high == math.inf
    assert less.low == -math.inf and less.high == result.upper_bound


def test_two_sided_interval_at_level_1_minus_2_alpha_is_the_pair_of_bounds(result):
    # Equal tails: the two-sided interval at 90% cuts 5% on each side, like the 95% bounds.
    interval = result.confidence_interval(0.90)
    assert interval.low == pytest.approx(result.lower_bound, abs=1e-15)
    assert interval.high == pytest.approx(result.upper_bound, abs=1e-15)


def test_bounds_from_the_bootstrap_quantiles(bootstrap_result):
    result = bootstrap_result
    root, n = result.bootstrap_distribution, result.n
    alpha = 1.0 - result.confidence_level
    lower = result.statistic - np.quantile(root, 1 - alpha, method="inverted_cdf") / np.sqrt(n)
    upper = result.statistic - np.quantile(root, alpha, method="inverted_cdf") / np.sqrt(n)
    assert result.lower_bound == pytest.approx(lower, abs=1e-12)
    assert result.upper_bound == pytest.approx(upper, abs=1e-12)


def test_intervals_nest_with_the_level(result):
    default = result.confidence_interval()
    assert default == result.confidence_interval(result.confidence_level)
    narrow, wide = result.confidence_interval(0.5), result.confidence_interval(0.99)
    assert wide.low <= default.low <= narrow.low <= result.statistic
    assert result.statistic <= narrow.high <= default.high <= wide.high


def test_interval_arguments_are_checked(result):
    with pytest.raises(ValueError, match="alternative"):
        result.confidence_interval(alternative="both")
    with pytest.raises(ValueError):
        result.confidence_interval(1.5)


def test_decision_agrees_with_bounds_and_pvalues(result):
    alpha = 1.0 - result.confidence_level
    assert result.rejected == (result.lower_bound > result.delta)
    assert result.rejected == (result.pvalue <= alpha)
    assert result.certified_fair == (result.upper_bound < result.delta)
    assert result.certified_fair == (result.fair_pvalue <= alpha)
    assert result.rejected and not result.certified_fair  # 0.55 is far above 0.5


def test_to_frame(result):
    frame = result.to_frame()
    assert len(frame) == 1
    expected = {
        "statistic", "ci_low", "ci_high", "lower_bound", "upper_bound", "epsilon", "delta",
        "pvalue", "rejected", "fair_pvalue", "certified_fair", "method", "confidence_level",
        "n", "n_cells", "m", "numerical_step", "n_resamples", "dual_unique", "near_kink",
        # what free moves alone do, and the metric's free subspace (None: metric unknown)
        "zero_cost_statistic", "max_statistic", "zero_cost_share", "reachable_share",
        "non_protected_directions", "free_directions", "free_sources", "degenerate_metric",
        # how far the budget is from saturating
        "epsilon_half_saturation", "epsilon_95_saturation", "budget_saturated",
    }
    assert set(frame.columns) == expected
    assert frame.loc[0, "statistic"] == result.statistic
    assert frame.loc[0, "n_resamples"] == 400
    assert frame.loc[0, "ci_low"] == result.confidence_interval().low


def test_moves_frame(result):
    frame = result.moves_frame()
    assert list(frame.columns) == ["from_cell", "to_cell", "mass", "count"]
    moved = {(row.from_cell, row.to_cell): row.count for row in frame.itertuples()}
    assert moved == {("cell 0", "cell 1"): pytest.approx(300), ("cell 3", "cell 2"): 250}
    np.testing.assert_allclose(frame["count"], frame["mass"] * result.n)


def test_moves_frame_without_moves_is_empty_with_columns():
    fair = faith_audit(COUNTS, np.zeros(4), np.zeros((4, 4)), epsilon=0.0, n_resamples=50,
                       random_state=0)
    frame = fair.moves_frame()
    assert fair.statistic == 0 and len(frame) == 0
    assert list(frame.columns) == ["from_cell", "to_cell", "mass", "count"]


def test_transport_plan_is_the_dense_sum_of_the_entries(result):
    plan = result.transport_plan
    assert plan.shape == (4, 4)
    dense = np.zeros((4, 4))
    for i, j, mass in zip(result.plan_source, result.plan_target, result.plan_mass, strict=True):
        dense[i, j] += mass
    np.testing.assert_array_equal(plan, dense)
    assert plan.sum() == pytest.approx(result.plan_mass.sum())
    np.testing.assert_allclose(plan.sum(axis=1), COUNTS / 1000)
    np.testing.assert_allclose(plan.sum(axis=0), result.adversarial_distribution)
    np.testing.assert_allclose(result.count_changes, [-300, 300, 250, -250])


@pytest.mark.parametrize(
    ("epsilon", "gaussian"),
    [(0.5, True), (0.4, False), (0.0, True), (5.0, True)],
)
def test_gaussian_limit(epsilon, gaussian):
    # psi(epsilon) has breakpoints at 0.4 and 1.0 for these frequencies (see prepare_transport).
    # Past the last breakpoint the budget no longer binds.
    with pytest.warns(SaturatedBudgetWarning) if epsilon >= 1.0 else nullcontext():
        res = faith_audit(KINK_COUNTS, KINK_LOSS, KINK_COST, epsilon=epsilon,
                          n_resamples=100, random_state=0)
    assert res.gaussian_limit is gaussian
    assert res.dual_unique is (epsilon in (0.5, 5.0))
    assert ("kink" in str(res)) is (not gaussian)


def test_str(result, bootstrap_result):
    assert "FaiTH audit (m-out-of-n bootstrap, n=1000, K=4 cells, epsilon=0)" in str(
        bootstrap_result
    )
    text = str(result)
    assert "FaiTH audit (uniform bounds, n=1000, K=4 cells, epsilon=0)" in text
    assert "statistic      0.5500" in text
    assert "REJECT delta-fairness" in text
    no_delta = dataclasses.replace(result, delta=None, pvalue=None, rejected=None)
    assert "delta" not in str(no_delta)


def test_result_is_frozen(result):
    assert isinstance(result, FaithResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.statistic = 0.0
