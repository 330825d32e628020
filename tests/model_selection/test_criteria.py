"""Selection criteria: the group criterion, the selector on GridSearchCV, fairlearn candidates."""

from __future__ import annotations

import pickle
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import zero_one_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import FaithAuditor
from skfair_audit.group import DegenerateBootstrapWarning, GroupDisparityAuditor, certify_bounds
from skfair_audit.model_selection import (
    FairModelSelector,
    FaithCriterion,
    GroupDifferenceCriterion,
    NoFairCandidateError,
    NoFairCandidateWarning,
    SelectionCriterion,
    SensitiveFeaturesAdapter,
    fair_refit,
    l1_logistic_regression,
    make_selection_scorer,
    plot_tradeoff,
)
from skfair_audit.model_selection._display import selection_card

from .test_selector import _data, _model

GRID = {"logisticregression__C": [0.005, 0.01, 0.03, 0.06, 0.3, 3.0]}
CV = StratifiedKFold(3, shuffle=True, random_state=1)


def _criterion(epsilon0=0.1, **params):
    return GroupDifferenceCriterion(
        epsilon0, auditor=GroupDisparityAuditor(None, metric="selection_rate",
                                                n_resamples=200, **params))


@pytest.fixture(scope="module")
def data():
    return _data()


def _fit(selector, X, y):
    # the empty model (smallest C) predicts one class: its group bounds are degenerate
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DegenerateBootstrapWarning)
        return selector.fit(X, y)


@pytest.fixture(scope="module")
def group_fitted(data):
    X, y = data
    return _fit(FairModelSelector(_model(), param_grid=GRID, criterion=_criterion(),
                                  protected=["group"], cv=CV, random_state=0), X, y)


# --------------------------------------------------------------------------- the rule
def test_group_criterion_reproduces_an_independent_implementation(data, group_fitted):
    """Each fold audited by hand with the functional group API at α/k."""
    X, y = data
    results = group_fitted.cv_results_
    assert group_fitted.fold_confidence_level_ == pytest.approx(1 - 0.1 / 3)
    for fold, (train, val) in enumerate(CV.split(X, y)):
        for index, params in enumerate(results["params"]):
            model = _model().set_params(**params).fit(X.iloc[train], y[train])
            y_pred = model.predict(X.iloc[val])
            assert results[f"split{fold}_test_error"][index] == zero_one_loss(y[val], y_pred)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=DegenerateBootstrapWarning)
                bounds = certify_bounds(y[val], y_pred, X.iloc[val][["group"]],
                                        metric="selection_rate", alternative="two-sided",
                                        alpha=0.1 / 3, n_resamples=200, random_state=0)
            pairs = list(zip(bounds.lower, bounds.upper, strict=True))
            worst_upper = max(max(abs(lo), abs(hi)) for lo, hi in pairs)
            worst_lower = max(max(lo, -hi, 0.0) for lo, hi in pairs)
            assert results[f"split{fold}_test_upper_bound"][index] == worst_upper
            assert results[f"split{fold}_test_lower_bound"][index] == worst_lower
            assert results[f"split{fold}_test_statistic"][index] == np.max(
                np.abs(bounds.estimates))
    upper = np.column_stack([results[f"split{k}_test_upper_bound"] for k in range(3)])
    np.testing.assert_array_equal(results["upper_bound"], upper.max(axis=1))
    np.testing.assert_array_equal(results["passes"], upper.max(axis=1) < 0.1)
    passing = np.flatnonzero(results["passes"])
    assert group_fitted.best_index_ == passing[np.argmin(results["mean_test_error"][passing])]
    # Non-trivial: the dense models fail, and the choice is not the most accurate.
    assert not results["passes"][-1] and results["passes"][1]
    assert results["mean_test_error"][group_fitted.best_index_] > results[
        "mean_test_error"].min()


def test_selector_equals_a_hand_written_gridsearchcv(data, group_fitted):
    X, y = data
    criterion = _criterion()
    search = GridSearchCV(
        _model(), GRID, cv=CV,
        scoring=make_selection_scorer(criterion, protected=["group"], n_splits=3,
                                      random_state=0),
        refit=fair_refit(criterion),
    )
    _fit(search, X, y)
    ours = group_fitted.cv_results_
    for key in ("split0_test_error", "mean_test_error"):
        np.testing.assert_array_equal(-search.cv_results_[key], ours[key])
    for key in ("std_test_error", "rank_test_error", "mean_test_statistic",
                "split2_test_upper_bound", "split1_test_lower_bound"):
        np.testing.assert_array_equal(search.cv_results_[key], ours[key], err_msg=key)
    assert search.cv_results_["params"] == ours["params"]
    assert search.best_index_ == group_fitted.best_index_
    np.testing.assert_array_equal(search.best_estimator_[-1].coef_,
                                  group_fitted.best_estimator_[-1].coef_)


def test_group_display_plot_and_pickle(data, group_fitted):
    X, _ = data
    html = selection_card(group_fitted)
    assert "fairness-constrained model selection" in html and "ε₀" in html
    assert "worst |selection_rate disparity|" in html
    assert "certified when they put every disparity within ±0.1" in html
    from skfair_audit.report import selection_section

    section = selection_section(group_fitted, plot=False)
    assert section.tables[0].columns[2:4] == ("worst |selection_rate disparity| (estimate)",
                                             "upper bound")
    assert section.summary["ε₀"] == 0.1 and "certified" in section.guarantee
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    ax = plot_tradeoff(group_fitted)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "ε₀ = 0.1" in labels and "upper bound (97% simultaneous)" in labels
    plt.close(ax.figure)
    restored = pickle.loads(pickle.dumps(group_fitted))
    np.testing.assert_array_equal(restored.predict(X), group_fitted.predict(X))


def test_no_certified_candidate_raises_or_falls_back(data):
    X, y = data
    grid = {"logisticregression__C": [0.06, 0.3, 3.0]}
    selector = FairModelSelector(_model(), param_grid=grid, criterion=_criterion(0.02),
                                 protected=["group"], cv=CV, random_state=0)
    with pytest.raises(NoFairCandidateError, match="upper bound is .* >= ε₀=0.02"):
        selector.fit(X, y)
    with pytest.warns(NoFairCandidateWarning, match="fairest candidate"):
        selector.set_params(on_none="fairest").fit(X, y)
    upper = selector.cv_results_["upper_bound"]
    assert selector.best_index_ == int(np.flatnonzero(upper == upper.min())[0])


def test_criterion_parameters_are_checked(data):
    X, y = data
    with pytest.raises(ValueError, match="leave them None"):
        FairModelSelector(_model(), param_grid=GRID, delta=0.05, criterion=_criterion(),
                          protected=["group"]).fit(X, y)
    with pytest.raises(ValueError, match="needs delta"):
        FairModelSelector(_model(), param_grid=GRID, protected=["group"]).fit(X, y)
    with pytest.raises(ValueError, match="criterion must be"):
        FairModelSelector(_model(), param_grid=GRID, criterion="group",
                          protected=["group"]).fit(X, y)
    with pytest.raises(ValueError, match="epsilon0"):
        GroupDifferenceCriterion(0.0)
    with pytest.raises(ValueError, match="GroupDisparityAuditor instance"):
        GroupDifferenceCriterion(0.1, auditor=FaithAuditor(None))
    with pytest.raises(ValueError, match="groups must be"):
        GroupDifferenceCriterion(0.1, auditor=GroupDisparityAuditor(None, groups="monotone"))
    with pytest.raises(ValueError, match="FaithAuditor instance"):
        FaithCriterion(0.1, auditor=GroupDisparityAuditor(None))
    with pytest.raises(ValueError, match="protected attributes"):
        make_selection_scorer(_criterion())
    with pytest.raises(ValueError, match="n_splits"):
        make_selection_scorer(_criterion(), protected=["group"], n_splits=0)
    with pytest.raises(KeyError, match="split<k>_test_upper_bound"):
        fair_refit(_criterion())({"mean_test_error": np.zeros(2)})
    with pytest.raises(ValueError, match="on_none"):
        fair_refit(_criterion(), on_none="skip")


def test_every_parameter_has_a_constraint():
    params = FairModelSelector().get_params(deep=False)
    assert set(params) == set(FairModelSelector._parameter_constraints)
    adapter = SensitiveFeaturesAdapter(LogisticRegression(), protected="g")
    assert set(adapter.get_params(deep=False)) == set(adapter._parameter_constraints)


def test_the_faith_scorer_needs_the_training_fold(data):
    X, y = data
    model = _model().fit(X, y)
    scorer = make_selection_scorer(FaithCriterion(0.05, FaithAuditor(None, n_resamples=50)),
                                   protected=["group"])
    with pytest.raises(ValueError, match="training fold"):
        scorer(model, X, y)


@dataclass(frozen=True)
class _SmallestRateRatio(SelectionCriterion):
    """A ratio criterion in a few lines: the smallest group's selection rate over the
    largest one, larger is fairer (point estimates as bounds: only the plumbing is tested)."""

    ratio: float
    greater_is_fairer = True
    decision_bound = "lower_bound"
    confidence_level = 0.9
    label = "selection-rate ratio"
    threshold_name = "ratio"

    def audit_fold(self, model, X, y, *, protected, confidence_level, random_state,
                   training=None):
        rates = pd.Series(model.predict(X)).groupby(np.asarray(X[protected[0]])).mean()
        ratio = float(rates.min() / rates.max()) if rates.max() > 0 else 1.0
        return {"statistic": ratio, "lower_bound": ratio, "upper_bound": ratio}

    @property
    def threshold(self):
        return self.ratio

    def guarantee(self, fold_level, n_splits):
        return "point estimates only"


def test_a_ratio_criterion_plugs_in(data):
    X, y = data
    criterion = _SmallestRateRatio(0.8)
    selector = FairModelSelector(_model(), param_grid=GRID, criterion=criterion,
                                 protected=["group"], cv=CV, random_state=0).fit(X, y)
    results = selector.cv_results_
    lower = np.column_stack([results[f"split{k}_test_lower_bound"] for k in range(3)])
    np.testing.assert_array_equal(results["lower_bound"], lower.min(axis=1))  # worst = min
    np.testing.assert_array_equal(results["passes"], lower.min(axis=1) >= 0.8)
    assert results["passes"].any() and not results["passes"].all()
    passing = np.flatnonzero(results["passes"])
    assert selector.best_index_ == passing[np.argmin(results["mean_test_error"][passing])]
    with pytest.warns(NoFairCandidateWarning, match="fairest worst-fold lower bound"):
        selector.set_params(criterion=_SmallestRateRatio(1.01), on_none="fairest").fit(X, y)
    ratio = selector.cv_results_["lower_bound"]
    assert selector.best_index_ == int(np.flatnonzero(ratio == ratio.max())[0])


# --------------------------------------------------------------------------- adapter
class _GroupVote(ClassifierMixin, BaseEstimator):
    """A toy mitigator: majority label per sensitive group; records what it received."""

    def fit(self, X, y, *, sensitive_features):
        s = np.asarray(sensitive_features)
        self.classes_ = np.unique(y)
        self.vote_ = {g: int(np.mean(y[s == g]) > 0.5) for g in np.unique(s)}
        self.n_fit_ = len(s)
        return self

    def predict(self, X, *, sensitive_features, random_state=None):
        self.last_random_state_ = random_state
        return np.array([self.vote_[g] for g in np.asarray(sensitive_features)])


def test_adapter_reads_the_protected_columns_of_the_rows():
    X = pd.DataFrame({"g": ["a", "a", "b", "b", "b"], "x": np.arange(5.0)})
    y = np.array([1, 1, 0, 0, 1])
    model = SensitiveFeaturesAdapter(_GroupVote(), protected="g", random_state=3).fit(X, y)
    assert model.predict(X).tolist() == [1, 1, 0, 0, 0]
    assert model.score(X, y) == 0.8
    # counterfactual rows: the protected value travels with the row
    assert model.predict(X.assign(g="a")).tolist() == [1] * 5
    assert model.estimator_.last_random_state_ == 3
    positions = SensitiveFeaturesAdapter(_GroupVote(), protected=[0]).fit(X.to_numpy(), y)
    assert positions.predict(X.to_numpy()).tolist() == [1, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="not columns of X"):
        SensitiveFeaturesAdapter(_GroupVote(), protected="h").fit(X, y)
    with pytest.raises(ValueError, match="must be a DataFrame"):
        SensitiveFeaturesAdapter(_GroupVote(), protected="g").fit(X.to_numpy(), y)


def _threshold_optimizer():
    postprocessing = pytest.importorskip("fairlearn.postprocessing")
    return SensitiveFeaturesAdapter(
        postprocessing.ThresholdOptimizer(
            estimator=make_pipeline(OneHotEncoder(), LogisticRegression()),
            predict_method="predict_proba"),
        protected="group", random_state=0)


def test_fairlearn_candidates_beside_the_l1_path(data):
    """The l1 path and a ThresholdOptimizer in one search; equal to GridSearchCV by hand."""
    X, y = data
    mitigator = _threshold_optimizer()
    estimator = Pipeline([("model", _model())])
    grid = [{"model__logisticregression__C": [0.005, 0.06, 3.0]}, {"model": [mitigator]}]
    criterion = _criterion()
    selector = _fit(FairModelSelector(estimator, param_grid=grid, criterion=criterion,
                                      protected=["group"], cv=CV, random_state=0), X, y)
    results = selector.cv_results_
    assert np.isnan(results["n_nonzero_coef"][-1])
    assert results["passes"].tolist() == [True, False, False, True]
    assert selector.best_index_ == 3  # the post-processed model: certified and accurate
    assert results["mean_test_error"][3] < results["mean_test_error"][0]
    search = _fit(GridSearchCV(
        estimator, grid, cv=CV, refit=fair_refit(criterion),
        scoring=make_selection_scorer(criterion, protected=["group"], n_splits=3,
                                      random_state=0)), X, y)
    np.testing.assert_array_equal(-search.cv_results_["mean_test_error"],
                                  results["mean_test_error"])
    np.testing.assert_array_equal(search.cv_results_["split0_test_upper_bound"],
                                  results["split0_test_upper_bound"])
    assert search.best_index_ == selector.best_index_
    np.testing.assert_array_equal(search.predict(X), selector.predict(X))


def test_fairlearn_exponentiated_gradient_and_faith():
    reductions = pytest.importorskip("fairlearn.reductions")
    X, y = _data(n=800)
    numeric = pd.get_dummies(X, drop_first=True, dtype=float)
    mitigator = SensitiveFeaturesAdapter(
        reductions.ExponentiatedGradient(LogisticRegression(),
                                         reductions.DemographicParity(), max_iter=5),
        protected="group_b", random_state=0)
    selector = FairModelSelector(
        Pipeline([("model", l1_logistic_regression())]),
        param_grid=[{"model__C": [0.01, 3.0]}, {"model": [mitigator]}], delta=0.05,
        protected=["group_b"], cv=0.3, on_none="fairest", refit=False,
        auditor=FaithAuditor(None, epsilon=0.0, n_resamples=100), random_state=0,
    )
    with warnings.catch_warnings():
        # fairlearn's own use of pandas (Series.at) warns under pandas 3
        warnings.filterwarnings("ignore", module=r"fairlearn\.")
        selector.fit(numeric, y)
    results = selector.cv_results_
    assert results["params"][-1]["model"] is mitigator
    assert np.isfinite(results["lower_bound"]).all() and np.isnan(results["n_nonzero_coef"][-1])
    assert results["passes"][selector.best_index_]


def test_metadata_routing_cannot_reach_predict():
    """Why the adapter: routing gives ThresholdOptimizer its fold's sensitive features at fit,
    but scorers call ``predict(X)`` without them."""
    postprocessing = pytest.importorskip("fairlearn.postprocessing")
    X, y = _data(n=400)
    with sklearn.config_context(enable_metadata_routing=True):
        mitigator = postprocessing.ThresholdOptimizer(
            estimator=make_pipeline(OneHotEncoder(), LogisticRegression()),
            predict_method="predict_proba").set_fit_request(sensitive_features=True)
        search = GridSearchCV(mitigator, {"grid_size": [100]}, cv=2, scoring="accuracy",
                              error_score="raise")
        with pytest.raises(TypeError, match="sensitive_features"):
            search.fit(X, y, sensitive_features=X["group"])


# --------------------------------------------------------------------------- real data
@pytest.mark.real_data
def test_compas_l1_path_and_threshold_optimizer_pick_a_certified_candidate(compas_bunch):
    """Acceptance (issue 22, selector): on COMPAS, ℓ1-logistic C values and fairlearn
    ThresholdOptimizer candidates; a certified candidate is chosen, as by GridSearchCV."""
    postprocessing = pytest.importorskip("fairlearn.postprocessing")
    X, y = compas_bunch.data, np.asarray(compas_bunch.target)
    encode = OneHotEncoder(drop="first", handle_unknown="ignore")
    mitigator = SensitiveFeaturesAdapter(
        postprocessing.ThresholdOptimizer(
            estimator=make_pipeline(encode, LogisticRegression()),
            predict_method="predict_proba", constraints="demographic_parity"),
        protected="race", random_state=0)
    estimator = Pipeline([("model", make_pipeline(encode, l1_logistic_regression()))])
    grid = [{"model__logisticregression__C": [0.0005, 0.002, 0.01, 0.1]},
            {"model": [mitigator]}]
    criterion = GroupDifferenceCriterion(
        0.1, auditor=GroupDisparityAuditor(None, metric="selection_rate", n_resamples=300))
    cv = StratifiedKFold(2, shuffle=True, random_state=0)
    selector = _fit(FairModelSelector(estimator, param_grid=grid, criterion=criterion,
                                      protected=["race"], cv=cv, random_state=0), X, y)
    results = selector.cv_results_
    assert results["passes"][selector.best_index_]
    assert not results["passes"][3]  # the dense ℓ1 model is not certified
    # the post-processed model is certified and more accurate than the certified ℓ1 models
    assert selector.best_index_ == 4 and results["passes"][0]
    assert results["mean_test_error"][4] < results["mean_test_error"][0]
    search = _fit(GridSearchCV(
        estimator, grid, cv=cv, refit=fair_refit(criterion),
        scoring=make_selection_scorer(criterion, protected=["race"], n_splits=2,
                                      random_state=0)), X, y)
    assert search.best_index_ == selector.best_index_
    for key in ("split0_test_upper_bound", "split1_test_upper_bound", "mean_test_statistic"):
        np.testing.assert_array_equal(search.cv_results_[key], results[key], err_msg=key)
    np.testing.assert_array_equal(-search.cv_results_["mean_test_error"],
                                  results["mean_test_error"])
    np.testing.assert_array_equal(search.predict(X), selector.predict(X))
    # the certificate is about the fold models: audit the chosen fold model by hand
    train, val = next(cv.split(X, y))
    chosen = estimator.set_params(**selector.best_params_)
    model = sklearn.clone(chosen).fit(X.iloc[train], y[train])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DegenerateBootstrapWarning)
        hand = GroupDisparityAuditor(FrozenEstimator(model), metric="selection_rate",
                                     protected=["race"], alpha=0.1 / 2, n_resamples=300,
                                     random_state=0).fit(X.iloc[val], y[val]).audit(
            X.iloc[val], y[val])
    assert max(np.max(np.abs(hand.lower)), np.max(np.abs(hand.upper))) == results[
        "split0_test_upper_bound"][selector.best_index_]


def test_one_protected_name_is_a_list_of_one(data):
    # Was (issue 23): a string was split into its letters on the way down.
    X, y = data
    criterion = GroupDifferenceCriterion(0.3, auditor=GroupDisparityAuditor(
        None, metric="selection_rate", protected="group", n_resamples=50))
    selector = _fit(FairModelSelector(_model(), param_grid={"logisticregression__C": [1.0]},
                                      criterion=criterion, cv=2, random_state=0), X, y)
    assert selector.protected_ == ["group"]
    assert make_selection_scorer(criterion).protected == ["group"]
    assert _fit(FairModelSelector(_model(), param_grid={"logisticregression__C": [1.0]},
                                  criterion=_criterion(0.3), protected="group", cv=2,
                                  random_state=0), X, y).protected_ == ["group"]
