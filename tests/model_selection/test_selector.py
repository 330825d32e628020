"""Tests of ``FairModelSelector``: the paper's rule, folds, fallback, determinism, sklearn API."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import zero_one_loss
from sklearn.model_selection import GroupKFold, PredefinedSplit, StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skfair_audit.faith import DegenerateMetricWarning, FaithAuditor
from skfair_audit.model_selection import (
    FairModelSelector,
    NoFairCandidateError,
    NoFairCandidateWarning,
    coefficient_path,
    default_c_path,
    l1_logistic_regression,
)

# scikit-learn's common checks of every public estimator: tests/test_estimators.py.


# --------------------------------------------------------------------------- data
def _data(n=2000, seed=0, group_effect=0.6):
    """Priors drive the label; the group adds a little, enough for dense models to use it."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "group": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b"]),
            "priors": pd.Categorical(
                rng.choice(["0", "1-3", ">3"], n), categories=["0", "1-3", ">3"]
            ),
        }
    )
    logit = (
        -1.2
        + 2.5 * (X["priors"] == ">3")
        + 1.0 * (X["priors"] == "1-3")
        + group_effect * (X["group"] == "b")
    )
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy(float)))).astype(int)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data()


def _model():
    return make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())


def _auditor(**params):
    return FaithAuditor(None, epsilon=0.0, n_resamples=150, **params)


GRID = {"logisticregression__C": [0.005, 0.01, 0.03, 0.06, 0.3, 3.0]}


def _selector(**params):
    defaults = dict(
        param_grid=GRID, delta=0.05, protected=["group"], cv=0.3, auditor=_auditor(),
        random_state=0,
    )
    defaults.update(params)
    return FairModelSelector(_model(), **defaults)


@pytest.fixture(scope="module")
def fitted(data):
    return _selector().fit(*data)


# --------------------------------------------------------------------------- the rule
def test_single_split_reproduces_an_independent_implementation_of_the_paper(data, fitted):
    X, y = data
    (train, val), = list(fitted._splitter(0).split(X, y))
    errors, lowers = [], []
    for C in GRID["logisticregression__C"]:
        model = _model().set_params(logisticregression__C=C).fit(X.iloc[train], y[train])
        errors.append(zero_one_loss(y[val], model.predict(X.iloc[val])))
        audit = FaithAuditor(
            FrozenEstimator(model), protected=["group"], epsilon=0.0, n_resamples=150,
            random_state=0,
        ).fit(X.iloc[train], y[train]).audit(X.iloc[val], y[val])
        lowers.append(audit.lower_bound)
    errors, lowers = np.array(errors), np.array(lowers)
    passing = np.flatnonzero(lowers < 0.05)
    expected = passing[np.argmin(errors[passing])]

    results = fitted.cv_results_
    np.testing.assert_array_equal(results["mean_test_error"], errors)
    np.testing.assert_array_equal(results["lower_bound"], lowers)
    np.testing.assert_array_equal(results["passes"], lowers < 0.05)
    assert fitted.best_index_ == expected
    # Non-trivial: the densest models fail the test, and the choice is not the most accurate.
    assert not results["passes"][-1] and results["passes"][0]
    assert errors[expected] > errors.min()


def test_cv_results_layout_and_refit(data, fitted):
    X, y = data
    results = fitted.cv_results_
    n = len(GRID["logisticregression__C"])
    for key in (
        "mean_test_error", "std_test_error", "rank_test_error", "split0_test_error",
        "mean_test_statistic", "std_test_statistic", "split0_test_statistic",
        "split0_test_lower_bound", "split0_test_upper_bound", "lower_bound", "upper_bound",
        "passes", "n_nonzero_coef", "split0_n_nonzero_coef", "mean_fit_time",
        "mean_score_time", "param_logisticregression__C",
    ):
        assert len(results[key]) == n, key
    assert results["params"] == [{"logisticregression__C": c} for c in GRID[
        "logisticregression__C"]]
    assert np.all(results["lower_bound"] <= results["mean_test_statistic"] + 1e-12)
    assert np.all(results["mean_test_statistic"] <= results["upper_bound"] + 1e-12)
    assert fitted.n_splits_ == 1 and fitted.fold_confidence_level_ == pytest.approx(0.95)
    assert fitted.best_params_ == results["params"][fitted.best_index_]
    # The refit model is the chosen candidate fit on all the data.
    reference = _model().set_params(**fitted.best_params_).fit(X, y)
    np.testing.assert_array_equal(fitted.best_estimator_[-1].coef_, reference[-1].coef_)
    np.testing.assert_array_equal(fitted.predict(X), reference.predict(X))
    np.testing.assert_array_equal(fitted.predict_proba(X), reference.predict_proba(X))
    np.testing.assert_array_equal(fitted.decision_function(X), reference.decision_function(X))
    assert fitted.score(X, y) == reference.score(X, y)
    np.testing.assert_array_equal(fitted.classes_, [0, 1])
    assert list(fitted.feature_names_in_) == ["group", "priors"]


def test_n_nonzero_coef_counts_the_fold_models(data, fitted):
    X, y = data
    (train, _), = list(fitted._splitter(0).split(X, y))
    for C, count in zip(
        GRID["logisticregression__C"], fitted.cv_results_["n_nonzero_coef"], strict=True
    ):
        model = _model().set_params(logisticregression__C=C).fit(X.iloc[train], y[train])
        assert count == np.count_nonzero(model[-1].coef_)


def test_k_folds_combine_with_bonferroni_and_the_worst_fold(data):
    X, y = data
    selector = _selector(cv=StratifiedKFold(3, shuffle=True, random_state=1)).fit(X, y)
    results = selector.cv_results_
    assert selector.n_splits_ == 3
    assert selector.fold_confidence_level_ == pytest.approx(1 - 0.05 / 3)
    split_lower = np.column_stack([results[f"split{k}_test_lower_bound"] for k in range(3)])
    np.testing.assert_array_equal(results["lower_bound"], split_lower.max(axis=1))
    np.testing.assert_array_equal(results["passes"], split_lower.max(axis=1) < 0.05)
    split_error = np.column_stack([results[f"split{k}_test_error"] for k in range(3)])
    np.testing.assert_allclose(results["mean_test_error"], split_error.mean(axis=1))
    # One fold audited by hand at the Bonferroni level.
    train, val = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))[2]
    model = _model().set_params(**results["params"][-1]).fit(X.iloc[train], y[train])
    audit = FaithAuditor(
        FrozenEstimator(model), protected=["group"], epsilon=0.0, n_resamples=150,
        confidence_level=1 - 0.05 / 3, random_state=0,
    ).fit(X.iloc[train], y[train]).audit(X.iloc[val], y[val])
    assert results["split2_test_lower_bound"][-1] == audit.lower_bound
    passing = np.flatnonzero(results["passes"])
    assert selector.best_index_ == passing[np.argmin(results["mean_test_error"][passing])]


def test_a_single_predefined_split_equals_the_float_split(data, fitted):
    X, y = data
    (train, val), = list(fitted._splitter(0).split(X, y))
    fold = np.full(len(y), -1)
    fold[val] = 0
    for cv in (PredefinedSplit(fold), [(train, val)]):
        other = _selector(cv=cv).fit(X, y)
        np.testing.assert_array_equal(other.cv_results_["lower_bound"],
                                      fitted.cv_results_["lower_bound"])
        assert other.best_index_ == fitted.best_index_


# --------------------------------------------------------------------------- no candidate passes
def test_no_fair_candidate_raises_or_falls_back_to_the_fairest(data):
    X, y = data
    grid = {"logisticregression__C": [0.06, 0.3, 3.0]}  # all use the group
    with pytest.raises(NoFairCandidateError, match="no candidate passes"):
        _selector(param_grid=grid).fit(X, y)
    with pytest.warns(NoFairCandidateWarning, match="fairest candidate"):
        selector = _selector(param_grid=grid, on_none="fairest").fit(X, y)
    results = selector.cv_results_
    assert not results["passes"].any()
    lowest = np.flatnonzero(results["lower_bound"] == results["lower_bound"].min())
    assert selector.best_index_ == lowest[np.argmin(results["mean_test_error"][lowest])]
    assert hasattr(selector, "best_estimator_")


# --------------------------------------------------------------------------- determinism
def test_results_are_identical_for_any_n_jobs(data):
    X, y = data
    grid = {"logisticregression__C": [0.005, 0.06, 3.0]}
    runs = [_selector(param_grid=grid, cv=2, n_jobs=n_jobs).fit(X, y) for n_jobs in (1, 2)]
    for key, value in runs[0].cv_results_.items():
        if "time" in key or key == "params":
            continue
        np.testing.assert_array_equal(np.asarray(value), np.asarray(runs[1].cv_results_[key]))
    assert runs[0].best_index_ == runs[1].best_index_


def test_random_state_instance_is_consumed_once(data):
    X, y = data
    a = _selector(random_state=np.random.RandomState(3)).fit(X, y)
    b = _selector(random_state=np.random.RandomState(3)).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["lower_bound"], b.cv_results_["lower_bound"])


def test_clone_and_pickle(data, fitted):
    X, y = data
    cloned = clone(fitted)
    assert cloned.get_params()["delta"] == 0.05
    assert not hasattr(cloned, "cv_results_")
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))
    np.testing.assert_array_equal(restored.cv_results_["lower_bound"],
                                  fitted.cv_results_["lower_bound"])


# --------------------------------------------------------------------------- estimators
def test_column_transformer_pipeline_and_default_grid(data):
    X, y = data
    encode = ColumnTransformer([("onehot", OneHotEncoder(drop="first"), ["group", "priors"])])
    model = Pipeline([("encode", encode), ("lr", l1_logistic_regression())])
    selector = FairModelSelector(
        model, delta=0.05, protected=["group"], cv=0.3, auditor=_auditor(), random_state=0
    ).fit(X, y)
    path = selector.param_grid_["lr__C"]
    expected = default_c_path(encode.fit_transform(X, y), y)
    np.testing.assert_allclose(path, expected)
    assert len(path) == 30
    results = selector.cv_results_
    assert results["n_nonzero_coef"][0] == 0 and results["passes"][0]
    assert results["n_nonzero_coef"][-1] == 3 and not results["passes"][-1]
    assert results["passes"][selector.best_index_]


def test_default_estimator_on_numeric_one_hot_columns(data):
    X, y = data
    numeric = pd.DataFrame(
        {
            "group_b": (X["group"] == "b").astype(float),
            "priors_13": (X["priors"] == "1-3").astype(float),
            "priors_gt3": (X["priors"] == ">3").astype(float),
        }
    )
    selector = FairModelSelector(
        delta=0.05, protected=["group_b"], cv=0.3, auditor=_auditor(), random_state=0
    ).fit(numeric, y)
    assert list(selector.param_grid_) == ["C"]
    coef = selector.best_estimator_.coef_.ravel()
    assert coef[0] == 0 and coef[2] != 0  # the group is out, priors >3 is in


def test_any_estimator_with_a_grid(data):
    X, y = data
    tree = make_pipeline(OneHotEncoder(), DecisionTreeClassifier(random_state=0))
    selector = FairModelSelector(
        tree, param_grid={"decisiontreeclassifier__max_depth": [1, 2, None]}, delta=0.05,
        protected=["group"], cv=0.3, auditor=_auditor(), random_state=0,
    ).fit(X, y)
    assert np.isnan(selector.cv_results_["n_nonzero_coef"]).all()
    assert selector.cv_results_["passes"][selector.best_index_]


def test_param_grid_required_for_other_estimators(data):
    X, y = data
    with pytest.raises(ValueError, match="param_grid is required"):
        FairModelSelector(DecisionTreeClassifier(), delta=0.05, protected=["group"]).fit(X, y)


def test_warm_started_path_matches_cold_starts(data):
    X, y = data

    def saga(warm_start):
        return make_pipeline(
            OneHotEncoder(drop="first"),
            l1_logistic_regression(solver="saga", warm_start=warm_start, max_iter=5000,
                                   tol=1e-7),
        )

    warm = _selector(cv=2).set_params(estimator=saga(True)).fit(X, y)
    cold = _selector(cv=2).set_params(estimator=saga(False)).fit(X, y)
    for key in ("passes", "n_nonzero_coef", "mean_test_error"):
        np.testing.assert_array_equal(warm.cv_results_[key], cold.cv_results_[key])
    assert warm.best_index_ == cold.best_index_


class _WeightRecorder(ClassifierMixin, BaseEstimator):
    """Predicts from the priors level; records the sample weights it was fit with."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(y)
        self.weight_sum_ = None if sample_weight is None else float(np.sum(sample_weight))
        self.n_fit_ = len(y)
        return self

    def predict(self, X):
        return (np.asarray(X)[:, 1] == ">3").astype(int)


def test_fit_params_without_routing_go_to_the_estimator_sliced(data):
    X, y = data
    selector = FairModelSelector(
        _WeightRecorder(), param_grid={}, delta=0.2, protected=["group"], cv=0.3,
        auditor=_auditor(), random_state=0,
    ).fit(X, y, sample_weight=np.full(len(y), 2.0))
    assert selector.best_estimator_.weight_sum_ == 2.0 * len(y)


def test_metadata_routing(data):
    X, y = data
    groups = np.arange(len(y)) % 4
    weights = np.full(len(y), 3.0)
    with sklearn.config_context(enable_metadata_routing=True):
        estimator = _WeightRecorder().set_fit_request(sample_weight=True)
        selector = FairModelSelector(
            estimator, param_grid={}, delta=0.2, protected=["group"], cv=GroupKFold(4),
            auditor=_auditor(), random_state=0,
        ).fit(X, y, sample_weight=weights, groups=groups)
        assert selector.n_splits_ == 4
        assert selector.best_estimator_.weight_sum_ == 3.0 * len(y)
        router = selector.get_metadata_routing()
        assert "sample_weight" in str(router) and "groups" in str(router)
        # Unrequested metadata is an error, as in scikit-learn's meta-estimators.
        with pytest.raises(Exception, match="sample_weight"):
            FairModelSelector(
                _WeightRecorder(), param_grid={}, delta=0.2, protected=["group"], cv=3,
                auditor=_auditor(),
            ).fit(X, y, sample_weight=weights)


def test_verbose_reports_progress(data, capsys):
    X, y = data
    _selector(param_grid={"logisticregression__C": [0.01, 1.0]}, cv=2, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "2 candidates × 2 folds" in err and "4/4" in err


def test_refit_validated_keeps_the_audited_training_fold_model(data, fitted):
    X, y = data
    (train, _), = list(fitted._splitter(0).split(X, y))
    selector = _selector(refit="validated").fit(X, y)
    reference = _model().set_params(**selector.best_params_).fit(X.iloc[train], y[train])
    np.testing.assert_array_equal(selector.best_estimator_[-1].coef_, reference[-1].coef_)
    with pytest.raises(ValueError, match="single split"):
        _selector(refit="validated", cv=2).fit(X, y)
    with pytest.raises(ValueError, match="refit must be"):
        _selector(refit="yes").fit(X, y)


def test_refit_false_has_no_predict(data):
    X, y = data
    selector = _selector(refit=False).fit(X, y)
    assert not hasattr(selector, "best_estimator_")
    with pytest.raises(AttributeError, match="refit=False"):
        selector.predict(X)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"protected": None}, "needs the protected attributes"),
        ({"auditor": _auditor(protected=["priors"])}, "disagrees"),
        ({"auditor": {"epsilon": 0.0}}, "auditor must be None or a FaithAuditor"),
        ({"delta": -0.1}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"cv": 1.5}, r"cv must be a float in \(0, 1\)"),
        ({"on_none": "ignore"}, "on_none"),
    ],
)
def test_bad_parameters(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        _selector(**params).fit(X, y)


def test_protected_may_come_from_the_auditor(data):
    X, y = data
    selector = _selector(protected=None, auditor=_auditor(protected=["group"])).fit(X, y)
    assert selector.protected_ == ["group"]


def test_multiclass_target_is_rejected(data):
    X, _ = data
    with pytest.raises(ValueError, match="Only binary classification"):
        _selector().fit(X, np.arange(len(X)) % 3)


def test_coefficient_path_names_the_encoded_features(data, fitted):
    X, y = data
    path = coefficient_path(_model(), fitted.cv_results_["params"], X, y)
    assert path.feature_names == ("group_b", "priors_1-3", "priors_>3")
    assert path.coef.shape == (len(GRID["logisticregression__C"]), 3)
    assert path.entry_order()[0][0] == "priors_>3"
    assert path.selected_features(len(path.params) - 1) == list(path.feature_names)


# --------------------------------------------------------------------------- real data
@pytest.mark.real_data
def test_compas_selection_drops_sex_and_passes_where_the_full_model_fails(compas_bunch):
    X, y = compas_bunch.data, np.asarray(compas_bunch.target)
    path = default_c_path(OneHotEncoder(drop="first").fit_transform(X), y, n_values=15)
    selector = FairModelSelector(
        _model(), param_grid={"logisticregression__C": list(path)}, delta=0.04,
        protected=["race", "sex"], cv=0.3,
        auditor=FaithAuditor(None, epsilon=0.0, n_resamples=200), random_state=0,
    ).fit(X, y)
    results = selector.cv_results_
    names = list(selector.best_estimator_[0].get_feature_names_out())
    coef = selector.best_estimator_[-1].coef_.ravel()
    assert coef[names.index("sex_Male")] == 0
    assert results["passes"][selector.best_index_]
    assert not results["passes"][-1]  # the (almost) unpenalised end fails the δ test
    assert results["n_nonzero_coef"][0] == 0


@pytest.mark.real_data
def test_selector_on_adult_with_continuous_features(adult_continuous):
    """The default auditor takes the empirical space on numeric features: validation folds
    whose continuous values never occur in their training fold audit fine (the grid, fixed in
    fit from the training fold, could not hold them)."""
    X, y = adult_continuous
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    unseen = [
        (~X["capital-gain"].iloc[validation].isin(X["capital-gain"].iloc[train])).sum()
        for train, validation in cv.split(X, y)
    ]
    assert min(unseen) > 0
    selector = FairModelSelector(
        make_pipeline(StandardScaler(), l1_logistic_regression()),
        param_grid={"logisticregression__C": [0.002, 1.0]},
        delta=0.02, protected=["sex", "race"], cv=cv, random_state=0, on_none="fairest",
    )
    # The default metric learned on a fold leaves most directions of the five continuous
    # features free (nothing there predicts sex or race well): the audits say so.
    with pytest.warns(DegenerateMetricWarning, match="directions in which the non-protected"):
        selector.fit(X, y)
    results = selector.cv_results_
    assert np.isfinite(results["lower_bound"]).all()
    # The empty model treats everyone alike: nothing to gain by moving individuals.
    assert results["split0_test_statistic"][0] == 0.0
    assert results["passes"][0]
    assert selector.best_index_ in (0, 1)
