"""The sensitivity view: the audit along ε, for several fair metrics side by side."""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import (
    DegenerateMetricWarning,
    EuclideanMetric,
    FaithAuditor,
    FaithSensitivityResult,
    SaturatedBudgetWarning,
    faith_sensitivity,
)

EPSILONS = [0.0, 0.5, 2.0, 8.0]


@pytest.fixture(scope="module")
def setting():
    rng = np.random.default_rng(0)
    n = 4000
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n),
                      "charge": rng.choice(["F", "M"], n)})
    risk = (0.2 + 0.25 * (X.group == "b") + 0.2 * (X.priors == "1-3")
            + 0.4 * (X.priors == ">3") - 0.1 * (X.charge == "M"))
    y = (rng.random(n) < risk).astype(int)
    train, audit = slice(0, 2500), slice(2500, None)
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X[train], y[train])
    auditors = {
        name: FaithAuditor(FrozenEstimator(model), protected=["group"], metric=metric,
                           delta=0.1, n_resamples=200, random_state=0).fit(X[train], y[train])
        for name, metric in [("default", "sensitive_subspace"),
                             ("protected Euclidean", "protected_euclidean")]
    }
    return auditors, X[audit], y[audit], (X[train], y[train])


def test_sensitivity_matches_the_exact_curve_and_single_audits(setting):
    auditors, X, y, training = setting
    # The last budget no longer binds: the sweep says so once per metric.
    with pytest.warns(SaturatedBudgetWarning, match="ε = 8 does not bind") as caught:
        result = faith_sensitivity(auditors, X, y, epsilons=EPSILONS)
    assert len(caught) == len(auditors)
    assert isinstance(result, FaithSensitivityResult)
    assert result.metric_names == ("default", "protected Euclidean")
    np.testing.assert_array_equal(result.epsilons, EPSILONS)
    for i, auditor in enumerate(auditors.values()):
        counts = auditor.space_.counts(X, y)
        f = counts / counts.sum()
        # The exact value, through the transport problem (no bootstrap).
        exact = [auditor.transport_problem_.value(f, e) for e in EPSILONS]
        np.testing.assert_allclose(result.statistic[i], exact, atol=1e-12)
        assert np.all(np.diff(result.statistic[i]) >= -1e-12)  # psi grows with the budget
        # Each column is the audit at that budget (same seed: same resamples).
        for j, epsilon in enumerate(EPSILONS):
            single_auditor = clone(auditor).set_params(epsilon=epsilon).fit(*training)
            with pytest.warns(SaturatedBudgetWarning) if epsilon == 8.0 else nullcontext():
                single = single_auditor.audit(X, y)
            assert result.lower_bound[i, j] == pytest.approx(single.lower_bound, abs=1e-12)
            assert result.ci_high[i, j] == pytest.approx(single.confidence_interval().high,
                                                         abs=1e-12)
            assert result.rejected[i, j] == single.rejected
        assert auditor.epsilon == 0.0  # the auditors themselves are left alone
    assert np.all(result.ci_low <= result.statistic + 1e-12)
    assert result.delta == 0.1 and result.confidence_level == 0.95
    assert result.free_directions == ("0 of 3", "0 of 3")  # nothing predicts the group
    assert result.zero_cost_share[0] == pytest.approx(result.statistic[0, 0])


def test_table_text_and_plot(setting):
    auditors, X, y, _ = setting
    result = faith_sensitivity(list(auditors.values()), X, y, epsilons=[1.0, 0.0])
    assert result.metric_names == ("SensitiveSubspaceMetric", "ProtectedEuclideanMetric")
    np.testing.assert_array_equal(result.epsilons, [0.0, 1.0])  # sorted
    frame = result.to_frame()
    assert frame.shape == (4, 10)
    assert frame.columns.tolist() == ["metric", "epsilon", "statistic", "ci_low", "ci_high",
                                      "lower_bound", "upper_bound", "rejected",
                                      "free_directions", "zero_cost_share"]
    assert "eps=1" in str(result) and "REJECT" in str(result)
    ax = result.plot()
    assert len(ax.get_lines()) == 3  # two metrics and delta
    assert result.plot(band="lower") is not None
    with pytest.raises(ValueError, match="band"):
        result.plot(band="both")


def test_warnings_are_reported_once_per_metric(setting):
    auditors, X, y, training = setting
    model = auditors["default"].estimator
    degenerate = FaithAuditor(model, protected=["group"], metric=EuclideanMetric(columns=[5]),
                              n_resamples=50, random_state=0).fit(*training)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        faith_sensitivity({"one column": degenerate}, X, y, epsilons=EPSILONS)
    assert sum(issubclass(w.category, DegenerateMetricWarning) for w in caught) == 1


def test_errors(setting):
    auditors, X, y, _ = setting
    with pytest.raises(ValueError, match="not fitted"):
        faith_sensitivity(FaithAuditor(LogisticRegression()), X, y, epsilons=[0.0])
    with pytest.raises(ValueError, match="not a FaithAuditor"):
        faith_sensitivity({"x": LogisticRegression()}, X, y, epsilons=[0.0])
    with pytest.raises(ValueError, match="empty"):
        faith_sensitivity(auditors, X, y, epsilons=[])
    with pytest.raises(ValueError, match="epsilon"):
        faith_sensitivity(auditors, X, y, epsilons=[-1.0])
    with pytest.raises(ValueError, match="at least one"):
        faith_sensitivity({}, X, y, epsilons=[0.0])
