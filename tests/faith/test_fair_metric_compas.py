"""Issue 12's acceptance on the real COMPAS data: the default metric with six races."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import DegenerateMetricWarning, FaithAuditor, SensitiveSubspaceMetric

pytestmark = pytest.mark.real_data

FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
PROTECTED = ["race", "sex"]
#: The previous default: every level's direction, raw coordinates, C = 1.
LEGACY = {"min_auc": None, "n_components": None, "standardize": False, "C": 1.0}


def _split(bunch, seed):
    X, y = bunch.data[FEATURES], bunch.target
    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)


def _audit(X_train, y_train, X_audit, y_audit, model, legacy):
    auditor = FaithAuditor(FrozenEstimator(model), protected=PROTECTED, epsilon=0.0, delta=0.04,
                           n_resamples=50, random_state=0).fit(X_train, y_train)
    if legacy:
        columns = auditor.space_.encoded_columns(PROTECTED)
        auditor = FaithAuditor(FrozenEstimator(model), protected=PROTECTED, epsilon=0.0,
                               delta=0.04, metric=SensitiveSubspaceMetric(columns, **LEGACY),
                               n_resamples=50, random_state=0).fit(X_train, y_train)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = auditor.audit(X_audit, y_audit)
    warned = any(issubclass(w.category, DegenerateMetricWarning) for w in caught)
    return result, warned


@pytest.fixture(scope="module")
def six_races(compas_propublica):
    """The issue's example: ProPublica filter, all six races, stratified 70/30 split, seed 0."""
    X_train, X_audit, y_train, y_audit = _split(compas_propublica, 0)
    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    model.fit(X_train, y_train)
    accuracy = model.score(X_audit, y_audit)
    return {legacy: _audit(X_train, y_train, X_audit, y_audit, model, legacy)
            for legacy in (False, True)}, accuracy


def test_six_races_default_metric_is_meaningful(six_races):
    results, accuracy = six_races
    result, warned = results[False]
    assert result.statistic <= 0.5 * accuracy
    assert not warned and not result.degenerate_metric
    d = result.metric_diagnostics
    assert (d.n_free, d.n_non_protected) == (2, 5)
    # Native American (11 people) is not predicted by the features: no direction.
    rows = {r["source"]: r for r in d.sources}
    assert not rows["race_Native American"]["kept"]
    assert result.zero_cost_share == pytest.approx(result.statistic)  # 0-1 loss


def test_six_races_previous_default_collapses_and_warns(six_races):
    results, accuracy = six_races
    result, warned = results[True]
    # Every correctly classified person reaches an error for free: psi-hat = the accuracy.
    assert result.statistic == pytest.approx(accuracy, abs=1e-12)
    assert result.statistic == pytest.approx(result.max_statistic, abs=1e-12)
    assert warned and result.degenerate_metric
    assert (result.metric_diagnostics.n_free, result.metric_diagnostics.n_non_protected) == (5, 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_african_american_and_caucasian_results_are_unchanged(compas_bunch, seed):
    X_train, X_audit, y_train, y_audit = _split(compas_bunch, seed)
    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    model.fit(X_train, y_train)
    new, warned_new = _audit(X_train, y_train, X_audit, y_audit, model, legacy=False)
    old, warned_old = _audit(X_train, y_train, X_audit, y_audit, model, legacy=True)
    # With two races both metrics free only the protected flips at epsilon = 0.
    assert new.statistic == pytest.approx(old.statistic, abs=1e-12)
    assert not (warned_new or warned_old)
    if seed == 0:
        assert new.statistic == pytest.approx(0.0354, abs=5e-5)  # the 0.035
    np.testing.assert_allclose(new.counts, old.counts)
