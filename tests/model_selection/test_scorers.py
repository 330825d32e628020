"""Tests of the δ-fair choice rule, the scorers and ``delta_fair_refit`` in GridSearchCV."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfair_audit.faith import FaithAuditor, make_faith_scorer
from skfair_audit.model_selection import (
    FairModelSelector,
    NoFairCandidateError,
    NoFairCandidateWarning,
    delta_fair_refit,
    fair_choice,
    l1_logistic_regression,
    make_error_scorer,
    make_faith_bound_scorer,
)


def _brute_force_choice(error, lower, delta):
    best = None
    for k in range(len(error)):
        if lower[k] < delta and (best is None or error[k] < error[best]):
            best = k
    return best


@pytest.mark.parametrize("seed", range(20))
def test_fair_choice_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    error = rng.choice([0.3, 0.31, 0.32, 0.4], size=12)  # ties on purpose
    lower = rng.uniform(0, 0.1, size=12)
    expected = _brute_force_choice(error, lower, 0.05)
    if expected is None:
        with pytest.raises(NoFairCandidateError):
            fair_choice(error, lower, 0.05)
    else:
        assert fair_choice(error, lower, 0.05) == expected


def test_fair_choice_fallback_is_the_fairest_then_most_accurate():
    error = [0.30, 0.20, 0.25]
    lower = [0.09, 0.08, 0.08]
    with pytest.raises(NoFairCandidateError, match="0.08"):
        fair_choice(error, lower, 0.05)
    with pytest.warns(NoFairCandidateWarning, match="index 1"):
        assert fair_choice(error, lower, 0.05, on_none="fairest") == 1


def test_fair_choice_boundary_is_strict():
    # "passes iff the lower bound is below δ": a bound equal to δ rejects fairness.
    assert fair_choice([0.2, 0.3], [0.05, 0.0], 0.05) == 1


def test_error_scorer_is_the_negated_error_rate():
    X = np.zeros((5, 1))
    y = np.array([0, 0, 0, 1, 1])
    assert make_error_scorer()(DummyClassifier().fit(X, y), X, y) == -0.4


def test_refit_uses_the_worst_split_and_the_mean_error():
    cv_results = {
        "mean_test_error": np.array([-0.40, -0.30, -0.35]),
        "split0_test_faith_lower": np.array([0.00, 0.01, 0.02]),
        "split1_test_faith_lower": np.array([0.01, 0.07, 0.03]),
    }
    assert delta_fair_refit(0.05)(cv_results) == 2
    assert delta_fair_refit(0.08)(cv_results) == 1
    with pytest.raises(NoFairCandidateError):
        delta_fair_refit(0.0)(cv_results)
    with pytest.raises(KeyError, match="split<k>_test_lower"):
        delta_fair_refit(0.05, lower_key="lower")(cv_results)
    with pytest.raises(KeyError, match="mean_test_err"):
        delta_fair_refit(0.05, error_key="err")(cv_results)
    with pytest.raises(ValueError, match="on_none"):
        delta_fair_refit(0.05, on_none="skip")


def _data(n=2000, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "group": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b"]),
            "priors": pd.Categorical(
                rng.choice(["0", "1-3", ">3"], n), categories=["0", "1-3", ">3"]
            ),
        }
    )
    logit = -1.2 + 2.5 * (X["priors"] == ">3") + 1.0 * (X["priors"] == "1-3") + 0.6 * (
        X["group"] == "b"
    )
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy(float)))).astype(int)
    return X, y


def test_faith_bound_scorer_audits_with_the_metric_of_the_given_training_data():
    X, y = _data()
    train, val = np.arange(1400), np.arange(1400, 2000)
    model = make_pipeline(OneHotEncoder(), l1_logistic_regression(C=1.0)).fit(
        X.iloc[train], y[train]
    )
    template = FaithAuditor(None, protected=["group"], epsilon=0.0, n_resamples=150)
    scorer = make_faith_bound_scorer(template, X.iloc[train], y[train], random_state=4)
    reference = FaithAuditor(
        FrozenEstimator(model), protected=["group"], epsilon=0.0, n_resamples=150,
        random_state=4,
    ).fit(X.iloc[train], y[train]).audit(X.iloc[val], y[val])
    assert scorer(model, X.iloc[val], y[val]) == reference.lower_bound
    upper = make_faith_bound_scorer(template, X.iloc[train], y[train], bound="upper_bound",
                                    random_state=4)
    assert upper(model, X.iloc[val], y[val]) == reference.upper_bound
    bonferroni = make_faith_bound_scorer(template, X.iloc[train], y[train], n_splits=5)
    assert bonferroni.auditor_params["confidence_level"] == pytest.approx(0.99)
    assert pickle.loads(pickle.dumps(scorer))(model, X.iloc[val], y[val]) == reference.lower_bound


def test_faith_bound_scorer_rejects_bad_input():
    X, y = _data(n=200)
    with pytest.raises(ValueError, match="protected"):
        make_faith_bound_scorer(FaithAuditor(None), X, y)
    with pytest.raises(ValueError, match="FaithAuditor"):
        make_faith_bound_scorer({"protected": ["group"]}, X, y)
    with pytest.raises(ValueError, match="bound"):
        make_faith_bound_scorer(FaithAuditor(None, protected=["group"]), X, y, bound="pvalue")
    with pytest.raises(ValueError, match="n_splits"):
        make_faith_bound_scorer(FaithAuditor(None, protected=["group"]), X, y, n_splits=0)


@pytest.mark.parametrize("delta", [0.05, 0.3])
def test_gridsearchcv_with_delta_fair_refit_makes_the_selectors_choice(delta):
    X, y = _data()
    rng = np.random.default_rng(0)
    fold = np.where(rng.random(len(y)) < 0.3, 0, -1)
    train = fold == -1
    split = PredefinedSplit(fold)
    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    grid = {"logisticregression__C": [0.005, 0.01, 0.03, 0.06, 0.3, 3.0]}
    template = FaithAuditor(None, protected=["group"], epsilon=0.0, n_resamples=150)

    selector = FairModelSelector(
        model, param_grid=grid, delta=delta, cv=split, auditor=template, random_state=7
    ).fit(X, y)
    search = GridSearchCV(
        model,
        grid,
        cv=split,
        scoring={
            "error": make_error_scorer(),
            "faith_lower": make_faith_bound_scorer(template, X[train], y[train], random_state=7),
        },
        refit=delta_fair_refit(delta),
    ).fit(X, y)

    np.testing.assert_array_equal(
        search.cv_results_["split0_test_faith_lower"], selector.cv_results_["lower_bound"]
    )
    np.testing.assert_array_equal(
        -search.cv_results_["mean_test_error"], selector.cv_results_["mean_test_error"]
    )
    assert search.best_index_ == selector.best_index_
    assert search.best_params_ == selector.best_params_
    np.testing.assert_array_equal(
        search.best_estimator_[-1].coef_, selector.best_estimator_[-1].coef_
    )
    if delta == 0.05:  # the constraint binds: not the most accurate candidate
        assert selector.best_index_ < len(grid["logisticregression__C"]) - 1


@pytest.mark.real_data
def test_gridsearchcv_route_on_adult_with_continuous_features(adult_continuous):
    """make_faith_bound_scorer + delta_fair_refit in GridSearchCV on continuous Adult columns
    make the FairModelSelector's choice (empirical space: the validation rows need not occur
    in the training rows), and make_faith_scorer scores k folds."""
    X, y = adult_continuous
    fold = np.where(np.random.default_rng(0).random(len(y)) < 0.3, 0, -1)
    train = fold == -1
    split = PredefinedSplit(fold)
    assert (~X["capital-gain"][~train].isin(X["capital-gain"][train])).any()
    model = make_pipeline(StandardScaler(), l1_logistic_regression())
    grid = {"logisticregression__C": [0.002, 0.02, 1.0]}
    template = FaithAuditor(None, protected=["sex", "race"], space="empirical", epsilon=0.0,
                            n_resamples=200)
    selector = FairModelSelector(
        model, param_grid=grid, delta=0.02, cv=split, auditor=template, random_state=3,
        on_none="fairest",
    ).fit(X, y)
    search = GridSearchCV(
        model, grid, cv=split,
        scoring={
            "error": make_error_scorer(),
            "faith_lower": make_faith_bound_scorer(template, X[train], y[train], random_state=3),
        },
        refit=delta_fair_refit(0.02, on_none="fairest"),
    ).fit(X, y)
    np.testing.assert_array_equal(
        search.cv_results_["split0_test_faith_lower"], selector.cv_results_["lower_bound"]
    )
    assert search.best_index_ == selector.best_index_
    cross = GridSearchCV(
        model, grid, cv=3, refit=False,
        scoring={"faith": make_faith_scorer(protected=["sex", "race"], space="empirical",
                                            epsilon=0.0)},
    ).fit(X, y)
    faith = -cross.cv_results_["mean_test_faith"]
    assert faith[0] == 0.0 and (faith >= 0).all() and np.isfinite(faith).all()
