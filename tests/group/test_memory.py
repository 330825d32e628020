"""The memory rule in the group audits: ``memory_limit`` bounds the replicates held at once,
and never changes a result (the batches' random streams do not depend on it)."""

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier

from skfair_audit._resampling import MemoryLimitError
from skfair_audit._utils import InvalidParameterError
from skfair_audit.group import (
    AuditSummary,
    GroupDisparityAuditor,
    certify_bounds,
    certify_threshold,
    flag_groups,
    monotone_tilt_bounds,
    polynomial_tilt_bounds,
    rkhs_tilt_bounds,
)


def _trail(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    groups = {"a": rng.integers(0, 6, n), "b": rng.integers(0, 4, n)}
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8, y, 1 - y)
    return y, y_pred, groups


@pytest.mark.parametrize("memory_limit", ["30kB", 10**5])
def test_group_audits_under_a_tiny_memory_limit_are_bit_for_bit_the_default(memory_limit):
    y, y_pred, groups = _trail()
    common = dict(metric="error_rate", n_resamples=300, random_state=1)
    for audit, extra in ((certify_bounds, {}), (certify_threshold, {"epsilon0": 0.01}),
                         (flag_groups, {"se": "bootstrap"})):
        default = audit(y, y_pred, groups, **common, **extra)
        small = audit(y, y_pred, groups, **common, **extra, memory_limit=memory_limit)
        for name in ("lower", "upper", "pvalues", "bootstrap_distribution"):
            if hasattr(default, name):
                np.testing.assert_array_equal(getattr(small, name), getattr(default, name))
    x = np.random.default_rng(2).normal(size=y.size)
    default = monotone_tilt_bounds(y, y_pred, x, bins=20, **common)
    small = monotone_tilt_bounds(y, y_pred, x, bins=20, **common,
                                 memory_limit=memory_limit)
    np.testing.assert_array_equal(small.bootstrap_distribution, default.bootstrap_distribution)


def test_blas_statistics_draw_the_same_replicates_under_a_memory_limit():
    # The same replicates; the RKHS and polynomial statistics go through BLAS products whose
    # kernel OpenBLAS may pick by the number of rows, so only the last bits may move.
    y, y_pred, _ = _trail(400)
    X = np.random.default_rng(3).normal(size=(400, 2))
    common = dict(metric="error_rate", n_resamples=100, random_state=1)
    for audit, x, extra, limit in ((rkhs_tilt_bounds, X, {"bandwidth": 1.0}, "40kB"),
                                   (polynomial_tilt_bounds, X[:, 0], {"degree": 2}, "100kB")):
        args = (X, y, y_pred) if audit is rkhs_tilt_bounds else (y, y_pred, x)
        default = audit(*args, **common, **extra)
        small = audit(*args, **common, **extra, memory_limit=limit)
        np.testing.assert_allclose(small.bootstrap_distribution,
                                   default.bootstrap_distribution, rtol=1e-9, atol=1e-15)


def test_estimator_passes_its_memory_limit():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"sex": rng.choice(["F", "M"], 600), "x": rng.normal(size=600)})
    y = rng.integers(0, 2, 600)
    model = DummyClassifier(strategy="stratified", random_state=0)
    kw = dict(protected=["sex"], n_resamples=200, random_state=0)
    default = GroupDisparityAuditor(model, **kw).fit(X, y).audit(X, y)
    small = GroupDisparityAuditor(model, memory_limit="20kB", **kw).fit(X, y).audit(X, y)
    np.testing.assert_array_equal(small.lower, default.lower)
    with pytest.raises(MemoryLimitError, match="One bootstrap replicate"):
        GroupDisparityAuditor(model, memory_limit=64, **kw).fit(X, y).audit(X, y)
    with pytest.raises(InvalidParameterError, match="memory_limit"):
        GroupDisparityAuditor(model, memory_limit="plenty", **kw).fit(X, y)


def test_bad_and_too_small_budgets_are_refused():
    y, y_pred, groups = _trail(500)
    with pytest.raises(InvalidParameterError, match="memory_limit"):
        certify_bounds(y, y_pred, groups, metric="error_rate", memory_limit="lots")
    summary = AuditSummary.from_rows(y, y_pred, groups, metric="error_rate")
    with pytest.raises(MemoryLimitError, match="more than memory_limit = 100 B"):
        summary.certify_bounds(n_resamples=50, memory_limit=100)


def test_peak_memory_stays_under_the_limit():
    # 480 atoms, 240 cells, 377 groups: the 1000 replicates of one default batch hold about
    # 23 MB at once; within a budget the engine evaluates them in chunks, after setting aside
    # the dense cell-to-group matrix each evaluation multiplies by (0.7 MB).
    rng = np.random.default_rng(0)
    n = 20_000
    groups = {"a": rng.integers(0, 8, n), "b": rng.integers(0, 6, n), "c": rng.integers(0, 5, n)}
    y, y_pred = rng.integers(0, 2, n), rng.integers(0, 2, n)
    summary = AuditSummary.from_rows(y, y_pred, groups, metric="error_rate")
    peaks, results = [], []
    limits = (None, 4 * 10**6, 10**6)
    for limit in limits:
        tracemalloc.start()
        results.append(summary.certify_bounds(n_resamples=1000, random_state=0,
                                              memory_limit=limit))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[0] > 4 * 10**6
    for limit, peak, result in zip(limits[1:], peaks[1:], results[1:], strict=True):
        assert peak < limit
        np.testing.assert_array_equal(result.upper, results[0].upper)


@pytest.mark.parametrize("bootstrap", ["multinomial", "poisson"])
def test_partitioned_audit_under_a_memory_limit(bootstrap):
    from skfair_audit.scale import partitioned_certify_bounds

    y, y_pred, groups = _trail(4000)
    trail = pd.DataFrame({"y": y, "y_pred": y_pred, **groups})
    chunks = [trail.iloc[i:i + 1000] for i in range(0, 4000, 1000)]
    common = dict(label="y", prediction="y_pred", protected=["a", "b"], metric="error_rate",
                  bootstrap=bootstrap, n_resamples=200, random_state=0)
    default = partitioned_certify_bounds(chunks, **common)
    small = partitioned_certify_bounds(chunks, **common, memory_limit="20kB")
    assert small.bootstrap == bootstrap
    np.testing.assert_array_equal(small.upper, default.upper)
    np.testing.assert_array_equal(small.bootstrap_distribution, default.bootstrap_distribution)
