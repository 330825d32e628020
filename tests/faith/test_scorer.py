"""Tests of ``make_faith_scorer`` inside GridSearchCV and cross_validate."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import (
    DegenerateMetricWarning,
    FaithAuditor,
    GridSpace,
    SensitiveSubspaceMetric,
    make_faith_scorer,
)

# At epsilon = 0 the model's decisions, which follow the group, flip for free: the bootstrap
# audits below say so with a DegenerateMetricWarning (the verdict stands).
DECIDES_BY_GROUP = "decides? by the protected attributes alone"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 900
    X = pd.DataFrame(
        {
            "group": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b"]),
            "priors": pd.Categorical(rng.choice(["0", "1-3", ">3"], n),
                                     categories=["0", "1-3", ">3"]),
        }
    )
    y = (rng.random(n) < np.where(X["group"] == "b", 0.65, 0.3)).astype(int)
    return X, y


def _pipeline(C=1.0):
    encode = ColumnTransformer([("onehot", OneHotEncoder(), ["group", "priors"])])
    return Pipeline([("encode", encode), ("model", LogisticRegression(C=C))])


@pytest.fixture(scope="module")
def fitted_model(data):
    return _pipeline().fit(*data)


def test_scorer_negates_the_statistic_by_default(fitted_model, data):
    X, y = data
    auditor = FaithAuditor(FrozenEstimator(fitted_model), protected=["group"], epsilon=0.1)
    psi = auditor.fit(X, y).audit_value(X, y)
    assert psi > 0.1
    scorer = make_faith_scorer(protected=["group"], epsilon=0.1)
    assert scorer(fitted_model, X, y) == -psi
    raw = make_faith_scorer(protected=["group"], epsilon=0.1, greater_is_better=True)
    assert raw(fitted_model, X, y) == psi


def test_scorer_does_not_refit_the_estimator(fitted_model, data):
    X, y = data
    coef = fitted_model.named_steps["model"].coef_
    values = coef.copy()
    make_faith_scorer(protected=["group"])(fitted_model, X.iloc[:200], y[:200])
    assert fitted_model.named_steps["model"].coef_ is coef
    np.testing.assert_array_equal(coef, values)


@pytest.mark.parametrize("statistic", ["lower_bound", "upper_bound", "pvalue"])
def test_bootstrap_statistics(fitted_model, data, statistic):
    X, y = data
    params = {"protected": ["group"], "epsilon": 0.0, "delta": 0.2, "n_resamples": 100,
              "random_state": 0}
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        result = FaithAuditor(FrozenEstimator(fitted_model), **params).fit(X, y).audit(X, y)
        scorer = make_faith_scorer(statistic=statistic, greater_is_better=True, **params)
        assert scorer(fitted_model, X, y) == getattr(result, statistic)
        negated = make_faith_scorer(statistic=statistic, **params)
        assert negated(fitted_model, X, y) == -getattr(result, statistic)


def test_grid_search_with_accuracy_and_faith(data):
    X, y = data
    search = GridSearchCV(
        _pipeline(),
        {"model__C": [1e-4, 1.0]},
        scoring={
            "accuracy": "accuracy",
            "faith": make_faith_scorer(protected=["group"], epsilon=0.0),
            "faith_lower": make_faith_scorer(
                statistic="lower_bound", protected=["group"], epsilon=0.0, method="m-out-of-n",
                m=60, n_resamples=50, random_state=0,
            ),
        },
        refit="accuracy",
        cv=KFold(3),
    )
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        search.fit(X, y)
    results = search.cv_results_
    # A heavily penalised model predicts the majority class everywhere: no group flip changes
    # its error (psi = 0); the unpenalised one uses the group.
    assert results["mean_test_faith"][0] == 0.0
    assert results["mean_test_faith"][1] < -0.1
    # -lower_bound >= -statistic on every fold.
    assert np.all(results["mean_test_faith_lower"] >= results["mean_test_faith"] - 1e-12)
    assert search.best_params_ == {"model__C": 1.0}
    # Each fold's score is the negated audit value of that fold's model on that fold.
    X_test, y_test = X.iloc[600:], y[600:]
    model = _pipeline(C=1.0).fit(X.iloc[:600], y[:600])
    auditor = FaithAuditor(FrozenEstimator(model), protected=["group"], epsilon=0.0)
    expected = -auditor.fit(X_test, y_test).audit_value(X_test, y_test)
    assert results["split2_test_faith"][1] == pytest.approx(expected, abs=1e-12)


def test_cross_validate_in_parallel(data):
    X, y = data
    scorer = make_faith_scorer(protected=["group"], epsilon=0.0)
    serial = cross_validate(_pipeline(), X, y, cv=KFold(3), scoring={"faith": scorer})
    parallel = cross_validate(
        _pipeline(), X, y, cv=KFold(3), scoring={"faith": scorer}, n_jobs=2
    )
    np.testing.assert_array_equal(serial["test_faith"], parallel["test_faith"])
    assert np.all(serial["test_faith"] < 0)


def test_metric_learned_elsewhere(fitted_model, data):
    X, y = data
    space = GridSpace.from_data(X, y, ["group", "priors"])
    metric = SensitiveSubspaceMetric(space.encoded_columns(["group"])).fit(space.encode(X))
    scorer = make_faith_scorer(protected=["group"], metric=FrozenEstimator(metric), epsilon=0.2)
    fold = slice(0, 300)
    expected = FaithAuditor(
        FrozenEstimator(fitted_model), protected=["group"], metric=FrozenEstimator(metric),
        epsilon=0.2,
    ).fit(X, y).audit_value(X.iloc[fold], y[fold])
    assert scorer(fitted_model, X.iloc[fold], y[fold]) == pytest.approx(-expected, abs=1e-12)


def test_repr_and_pickle():
    scorer = make_faith_scorer(statistic="lower_bound", protected=["group"], delta=0.05)
    assert repr(scorer) == (
        "make_faith_scorer(statistic='lower_bound', delta=0.05, protected=['group'])"
    )
    assert repr(make_faith_scorer(greater_is_better=True)) == (
        "make_faith_scorer(statistic='statistic', greater_is_better=True)"
    )
    assert repr(pickle.loads(pickle.dumps(scorer))) == repr(scorer)


def test_bad_arguments():
    with pytest.raises(ValueError, match="statistic must be one of"):
        make_faith_scorer(statistic="rejected")
    with pytest.raises(ValueError, match="needs the threshold delta"):
        make_faith_scorer(statistic="pvalue")
    with pytest.raises(ValueError, match="do not pass estimator"):
        make_faith_scorer(estimator=LogisticRegression())
    with pytest.raises(ValueError, match="greater_is_better must be a bool"):
        make_faith_scorer(greater_is_better="yes")
    with pytest.raises(TypeError, match="epsilonn"):
        make_faith_scorer(epsilonn=0.1)


def test_fit_data_learns_the_metric_elsewhere(data):
    X, y = data
    y = np.asarray(y)
    train, val = np.arange(len(y) // 2), np.arange(len(y) // 2, len(y))
    model = _pipeline().fit(X.iloc[train], y[train])
    scorer = make_faith_scorer(
        statistic="lower_bound", greater_is_better=True, fit_data=(X.iloc[train], y[train]),
        protected=["group"], epsilon=0.0, n_resamples=100, random_state=0,
    )
    auditor = FaithAuditor(
        FrozenEstimator(model), protected=["group"], epsilon=0.0, n_resamples=100,
        random_state=0,
    ).fit(X.iloc[train], y[train])
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        reference = auditor.audit(X.iloc[val], y[val])
        assert scorer(model, X.iloc[val], y[val]) == reference.lower_bound
    assert f"fit_data=<{len(train)} rows>" in repr(scorer)
    with pytest.raises(ValueError, match="fit_data"):
        make_faith_scorer(fit_data=X, protected=["group"])
