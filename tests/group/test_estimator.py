"""Tests of ``GroupDisparityAuditor``: scikit-learn contract, equivalence with the functional
API, sensitive features (columns, argument, metadata routing) and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import make_column_transformer
from sklearn.dummy import DummyClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.model_selection import KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.group import (
    DegenerateBootstrapWarning,
    EqualizedOddsResult,
    GroupBoundsResult,
    GroupCertificationResult,
    GroupDisparityAuditor,
    GroupFlagResult,
    audit_score,
    certify_bounds,
    certify_threshold,
    equalized_odds,
    flag_groups,
    intersections,
)

FAST = dict(n_resamples=200, random_state=0)


# scikit-learn's common checks of every public estimator: tests/test_estimators.py.


def _data(n=1200, seed=0):
    """Race/sex attributes, a numeric feature, outcome depending on both."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["a", "b", "c"], n, p=[0.5, 0.35, 0.15])
    sex = rng.choice(["F", "M"], n)
    x = rng.normal(size=n)
    logit = -0.3 + x + 0.8 * (race == "b")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.DataFrame({"race": race, "sex": sex, "x": x})
    return X, y


def _pipeline():
    encode = make_column_transformer(
        (OneHotEncoder(), ["race", "sex"]), remainder="passthrough"
    )
    return make_pipeline(encode, LogisticRegression())


@pytest.fixture(scope="module")
def split():
    X, y = _data()
    return X[:600], y[:600], X[600:].reset_index(drop=True), y[600:]


@pytest.fixture(scope="module")
def fitted_model(split):
    X_tr, y_tr, _, _ = split
    return _pipeline().fit(X_tr, y_tr)


# -- scikit-learn contract -----------------------------------------------------------------
def test_clone_and_pickle(split):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(_pipeline(), protected=["race", "sex"], **FAST)
    twin = clone(auditor)
    assert twin.get_params()["protected"] == ["race", "sex"]
    assert twin.estimator is not auditor.estimator
    auditor.fit(X_tr, y_tr)
    restored = pickle.loads(pickle.dumps(auditor))
    a, b = auditor.audit(X_te, y_te), restored.audit(X_te, y_te)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)


def test_frozen_estimator_is_not_refit(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    coef = fitted_model[-1].coef_.copy()
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                    **FAST)
    # fit on other (shuffled) labels: a refit model would change
    auditor.fit(X_te, np.random.default_rng(1).permutation(y_te))
    assert auditor.estimator_.estimator is fitted_model
    np.testing.assert_array_equal(fitted_model[-1].coef_, coef)
    np.testing.assert_array_equal(auditor.classes_, [0, 1])
    result = auditor.audit(X_te, y_te)
    expected = certify_bounds(y_te, fitted_model.predict(X_te), X_te[["race"]],
                              metric="false_positive_rate", alternative="two-sided", **FAST)
    np.testing.assert_array_equal(result.lower, expected.lower)


def test_pipeline_dataframe_attributes(split):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(_pipeline(), protected=["race", "sex"], **FAST)
    auditor.fit(X_tr, y_tr)
    assert auditor.n_features_in_ == 3
    assert list(auditor.feature_names_in_) == ["race", "sex", "x"]
    result = auditor.audit(X_te, y_te)
    assert result.names[:3] == ("race=a", "race=b", "race=c")
    assert len(result.names) == 3 + 2 + 6


def test_drop_protected_hides_the_columns_from_the_model(split):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(LogisticRegression(), protected=["race", "sex"],
                                    drop_protected=True, **FAST).fit(X_tr, y_tr)
    assert auditor.estimator_.n_features_in_ == 1
    reference = LogisticRegression().fit(X_tr[["x"]], y_tr)
    result = auditor.audit(X_te, y_te)
    expected = certify_bounds(y_te, reference.predict(X_te[["x"]]), X_te[["race", "sex"]],
                              metric="fpr", alternative="two-sided", **FAST)
    np.testing.assert_array_equal(result.estimates, expected.estimates)
    np.testing.assert_array_equal(result.upper, expected.upper)


# -- each procedure equals the functional call ----------------------------------------------
@pytest.mark.parametrize(
    ("params", "function", "kwargs", "fields"),
    [
        ({"procedure": "bounds", "alternative": "lower", "scale": "unscaled"}, certify_bounds,
         {"alternative": "lower", "scale": "unscaled"}, ("lower", "upper", "estimates")),
        ({"procedure": "bounds", "target": "race=a", "p_star": 0.05, "w0": 0.1}, certify_bounds,
         {"alternative": "two-sided", "target": "race=a", "p_star": 0.05, "w0": 0.1},
         ("lower", "upper")),
        ({"procedure": "threshold", "epsilon0": 0.02, "alternative": "within"},
         certify_threshold, {"epsilon0": 0.02, "alternative": "within"},
         ("certified", "lower", "upper")),
        ({"procedure": "flag", "epsilon0": 0.01, "q": 0.2}, flag_groups,
         {"epsilon0": 0.01, "q": 0.2, "alternative": "greater"},
         ("pvalues", "adjusted_pvalues", "flagged")),
        ({"procedure": "flag", "se": "bootstrap", "alternative": "two-sided"}, flag_groups,
         {"se": "bootstrap", "alternative": "two-sided"}, ("standard_errors", "pvalues")),
    ],
)
def test_procedures_match_functional_api(split, fitted_model, params, function, kwargs,
                                         fields):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), metric="fpr",
                                    protected=["race", "sex"], **params, **FAST)
    result = auditor.fit(X_tr, y_tr).audit(X_te, y_te)
    expected = function(y_te, fitted_model.predict(X_te), X_te[["race", "sex"]], metric="fpr",
                        **kwargs, **FAST)
    assert type(result) is type(expected)
    assert result.names == expected.names
    for field in fields:
        np.testing.assert_array_equal(getattr(result, field), getattr(expected, field))


def test_equalized_odds_matches_functional_api(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), procedure="equalized_odds",
                                    protected=["race"], alpha=0.2, **FAST)
    result = auditor.fit(X_tr, y_tr).audit(X_te, y_te)
    expected = equalized_odds(y_te, fitted_model.predict(X_te), X_te[["race"]], alpha=0.2,
                              **FAST)
    assert isinstance(result, EqualizedOddsResult)
    np.testing.assert_array_equal(result.worst_disparity, expected.worst_disparity)
    assert audit_score(result) == -expected.worst_disparity.max()


def test_string_labels_use_the_second_class_as_positive(split):
    X_tr, y_tr, X_te, y_te = split
    labels = np.array(["no", "yes"])
    auditor = GroupDisparityAuditor(LogisticRegression(), protected=["race", "sex"],
                                    drop_protected=True, **FAST)
    result = auditor.fit(X_tr, labels[y_tr]).audit(X_te, labels[y_te])
    numeric = clone(auditor)
    expected = numeric.fit(X_tr, y_tr).audit(X_te, y_te)
    np.testing.assert_array_equal(result.estimates, expected.estimates)
    np.testing.assert_array_equal(result.lower, expected.lower)


def test_predict_proba_threshold_and_calibration(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    proba = fitted_model.predict_proba(X_te)[:, 1]
    thresholded = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                        response_method="predict_proba", threshold=0.3,
                                        procedure="flag").fit(X_tr, y_tr)
    expected = flag_groups(y_te, (proba >= 0.3).astype(int), X_te[["race"]], metric="fpr")
    np.testing.assert_array_equal(thresholded.audit(X_te, y_te).pvalues, expected.pvalues)
    calibration = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                        metric="calibration_residual", target=0.0,
                                        response_method="predict_proba", **FAST)
    result = calibration.fit(X_tr, y_tr).audit(X_te, y_te)
    in_a = X_te["race"].to_numpy() == "a"
    assert result.estimates[0] == pytest.approx(np.mean(y_te[in_a] - proba[in_a]))


def test_regressor_with_squared_error():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"g": rng.choice(["u", "v"], 400), "x": rng.normal(size=400)})
    y = 2 * X["x"].to_numpy() + rng.normal(scale=np.where(X["g"] == "v", 2.0, 0.5))
    auditor = GroupDisparityAuditor(LinearRegression(), metric="squared_error",
                                    protected=["g"], drop_protected=True,
                                    alternative="upper", **FAST)
    result = auditor.fit(X[:200], y[:200]).audit(X[200:], y[200:])
    residual = (y[200:] - auditor.estimator_.predict(X[200:][["x"]])) ** 2
    is_v = X["g"][200:].to_numpy() == "v"
    assert result.estimates[1] == pytest.approx(residual[is_v].mean() - residual.mean())
    assert result.estimates[1] > 0


# -- sensitive features ---------------------------------------------------------------------
def test_sensitive_features_columns_argument_and_numpy_agree(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    base = dict(estimator=FrozenEstimator(fitted_model), procedure="flag")
    from_columns = GroupDisparityAuditor(protected=["race"], **base).fit(X_tr, y_tr)
    explicit = GroupDisparityAuditor(**base).fit(X_tr, y_tr)
    a = from_columns.audit(X_te, y_te)
    b = explicit.audit(X_te, y_te, sensitive_features=X_te["race"])
    c = explicit.audit(X_te, y_te, sensitive_features={"race": X_te["race"].to_numpy()})
    assert a.names == b.names == c.names == ("race=a", "race=b", "race=c")
    np.testing.assert_array_equal(a.pvalues, b.pvalues)
    np.testing.assert_array_equal(a.pvalues, c.pvalues)
    by_position = GroupDisparityAuditor(protected=[0], **base).fit(X_tr, y_tr)
    np.testing.assert_array_equal(by_position.audit(X_te, y_te).pvalues, a.pvalues)


def test_prebuilt_collection_and_depth(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    collection = intersections(X_te[["race", "sex"]], depth=1)
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), groups=collection, **FAST)
    by_depth = GroupDisparityAuditor(FrozenEstimator(fitted_model), depth=1,
                                     protected=["race", "sex"], **FAST)
    a = auditor.fit(X_tr, y_tr).audit(X_te, y_te)
    b = by_depth.fit(X_tr, y_tr).audit(X_te, y_te)
    assert a.names == b.names == ("race=a", "race=b", "race=c", "sex=F", "sex=M")
    np.testing.assert_array_equal(a.upper, b.upper)
    with pytest.raises(ValueError, match="describes 600 rows but X has 100"):
        auditor.audit(X_te[:100], y_te[:100])


def test_intervals_of_a_continuous_column(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), groups="intervals",
                                    bins=[-4, -1, 0, 1, 4], protected=["x"], **FAST)
    result = auditor.fit(X_tr, y_tr).audit(X_te, y_te)
    assert len(result.names) == 10
    assert result.names[0] == "x in [-4, -1)"
    categorical = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["x"])
    with pytest.raises(ValueError, match="continuous"):
        categorical.fit(X_tr, y_tr).audit(X_te, y_te)


def test_metadata_routing_in_cross_validate(split):
    X, y = _data(n=800, seed=5)
    S = X[["race"]]
    features = X[["x"]]
    auditor = GroupDisparityAuditor(LogisticRegression(), procedure="bounds",
                                    alternative="upper", **FAST)
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_validate(auditor, features, y, cv=KFold(2),
                                params={"sensitive_features": S})["test_score"]
    manual = []
    for train, test in KFold(2).split(features):
        fitted = clone(auditor).fit(features.iloc[train], y[train])
        manual.append(fitted.score(features.iloc[test], y[test],
                                   sensitive_features=S.iloc[test]))
    np.testing.assert_allclose(scores, manual)
    result = clone(auditor).fit(features.iloc[:400], y[:400]).audit(
        features.iloc[400:], y[400:], sensitive_features=S.iloc[400:])
    assert manual[1] == -np.max(result.upper[result.sizes > 0])


def test_make_scorer_receives_sensitive_features_through_routing():
    X, y = _data(n=800, seed=6)
    seen = []

    def worst_fpr_gap(y_true, y_pred, sensitive_features):
        seen.append(len(sensitive_features))
        result = certify_bounds(y_true, y_pred, sensitive_features, metric="fpr",
                                alternative="upper", **FAST)
        return audit_score(result)

    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer(worst_fpr_gap).set_score_request(sensitive_features=True)
        scores = cross_validate(LogisticRegression(), X[["x"]], y, cv=KFold(2),
                                scoring=scorer, params={"sensitive_features": X[["race"]]})
    assert seen == [400, 400]
    assert np.all(scores["test_score"] <= 0)


def test_routing_off_does_not_require_requests(split):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(LogisticRegression(), protected=["race", "sex"],
                                    drop_protected=True, **FAST)
    scores = cross_validate(auditor, pd.concat([X_tr, X_te]), np.r_[y_tr, y_te], cv=2)
    assert np.all(np.isfinite(scores["test_score"]))


# -- results --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("procedure", "cls", "columns"),
    [
        ("bounds", GroupBoundsResult, ["size", "estimate", "lower", "upper"]),
        ("threshold", GroupCertificationResult,
         ["size", "estimate", "lower", "upper", "certified"]),
        ("flag", GroupFlagResult,
         ["size", "estimate", "pvalue", "adjusted_pvalue", "flagged"]),
    ],
)
def test_result_frame_and_score(split, fitted_model, procedure, cls, columns):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), procedure=procedure,
                                    protected=["race", "sex"], **FAST)
    result = auditor.fit(X_tr, y_tr).audit(X_te, y_te)
    assert isinstance(result, cls)
    frame = result.to_frame()
    assert frame.index.name == "group"
    assert list(frame.index) == list(result.names)
    assert set(columns) <= set(frame.columns)
    score = auditor.score(X_te, y_te)
    if procedure == "bounds":
        expected = -np.max(np.maximum(np.abs(frame["lower"]), np.abs(frame["upper"])))
    elif procedure == "threshold":
        expected = frame["certified"].mean()
    else:
        expected = -frame["flagged"].mean()
    assert score == pytest.approx(expected)


def test_plot_returns_axes_of_a_figure(split, fitted_model):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                    **FAST)
    ax = auditor.fit(X_tr, y_tr).audit(X_te, y_te).plot()
    assert isinstance(ax.figure, matplotlib.figure.Figure)
    assert [t.get_text() for t in ax.get_yticklabels()] != []
    plt.close(ax.figure)


def test_same_result_for_any_n_jobs(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    results = [
        GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race", "sex"],
                              n_jobs=n_jobs, batch_size=50, **FAST)
        .fit(X_tr, y_tr).audit(X_te, y_te)
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(results[0].bootstrap_distribution,
                                  results[1].bootstrap_distribution)
    np.testing.assert_array_equal(results[0].lower, results[1].lower)


# -- bad input ------------------------------------------------------------------------------
class _NaNClassifier(ClassifierMixin, BaseEstimator):
    """Predicts NaN on every other row."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        out = np.zeros(len(X))
        out[::2] = np.nan
        return out


def test_empty_group_is_reported_not_poisoning(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    y = y_te.copy()
    in_c = X_te["race"].to_numpy() == "c"
    y[in_c] = 1  # group c has no negative: empty in the false positive rate sample
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                    **FAST)
    result = auditor.fit(X_tr, y_tr).audit(X_te, y)
    assert result.empty_groups == ("race=c",)
    assert np.isnan(result.estimates[2]) and result.sizes[2] == 0
    assert np.all(np.isfinite(result.lower[:2])) and np.all(np.isfinite(result.upper[:2]))
    assert np.isfinite(auditor.score(X_te, y))
    reference = auditor.set_params(target="race=c")
    with pytest.raises(ValueError, match="reference group has no row"):
        reference.audit(X_te, y)


def test_single_row_group_warns(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    groups = np.where(np.arange(len(y_te)) == np.flatnonzero(y_te == 0)[0], "lone", "rest")
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), **FAST).fit(X_tr, y_tr)
    with pytest.warns(DegenerateBootstrapWarning, match="single row"):
        auditor.audit(X_te, y_te, sensitive_features=groups)


def test_constant_metric_says_the_bootstrap_is_degenerate(split):
    X_tr, y_tr, X_te, y_te = split
    never = FrozenEstimator(DummyClassifier(strategy="constant", constant=0).fit(X_tr, y_tr))
    auditor = GroupDisparityAuditor(never, protected=["race"], **FAST).fit(X_tr, y_tr)
    with pytest.warns(DegenerateBootstrapWarning, match="degenerate"):
        result = auditor.audit(X_te, y_te)
    assert result.critical_value == 0


def test_nan_predictions_raise(split):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(_NaNClassifier(), protected=["race"], **FAST)
    with pytest.raises(ValueError, match="y_pred has 300 missing"):
        auditor.fit(X_tr, y_tr).audit(X_te, y_te)


def test_labels_and_scores_outside_the_domain_raise(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    three = np.where(np.arange(len(y_tr)) % 7 == 0, 2, y_tr)
    auditor = GroupDisparityAuditor(LogisticRegression(), protected=["race", "sex"],
                                    drop_protected=True, **FAST).fit(X_tr, three)
    with pytest.raises(ValueError, match=r"labels \[0, 1, 2\] are not in"):
        auditor.audit(X_tr, three)
    with pytest.raises(ValueError, match="not seen in fit"):
        GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"]).fit(
            X_tr, y_tr).audit(X_te, y_te + 5)
    scores = GroupDisparityAuditor(FrozenEstimator(fitted_model), protected=["race"],
                                   metric="calibration_residual",
                                   response_method="decision_function", **FAST)
    with pytest.raises(ValueError, match=r"scores must lie in \[0, 1\]"):
        scores.fit(X_tr, y_tr).audit(X_te, y_te)


def test_mismatched_lengths_raise(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    auditor = GroupDisparityAuditor(FrozenEstimator(fitted_model), **FAST).fit(X_tr, y_tr)
    with pytest.raises(ValueError, match=r"sensitive_features have \[599\] rows but X has 600"):
        auditor.audit(X_te, y_te, sensitive_features=X_te["race"][:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        auditor.audit(X_te, y_te[:-1], sensitive_features=X_te["race"])
    with pytest.raises(ValueError, match="no sensitive features"):
        auditor.audit(X_te, y_te)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"alpha": 0.0}, r"alpha must be a number in \(0, 1\)"),
        ({"alpha": 1.5}, r"alpha must be a number in \(0, 1\)"),
        ({"q": 1.0}, r"q must be a number in \(0, 1\)"),
        ({"procedure": "certify"}, "procedure must be one of"),
        ({"groups": "trees"}, "groups must be None"),
        ({"metric": "fairness"}, "unknown metric"),
        ({"protected": ["religion"]}, "'religion' is not a column of X"),
        ({"response_method": "predict_log_proba"}, "response_method must be one of"),
        ({"drop_protected": True}, "drop_protected=True needs protected"),
        ({"n_resamples": 0}, "n_resamples must be a positive integer"),
    ],
)
def test_bad_parameters_raise_at_fit(split, params, match):
    X_tr, y_tr, _, _ = split
    with pytest.raises(ValueError, match=match):
        GroupDisparityAuditor(LogisticRegression(), **params).fit(X_tr, y_tr)


def test_bad_procedure_options_raise_at_audit(split, fitted_model):
    X_tr, y_tr, X_te, y_te = split
    base = dict(estimator=FrozenEstimator(fitted_model), protected=["race"], **FAST)
    with pytest.raises(ValueError, match="alternative must be one of"):
        GroupDisparityAuditor(alternative="greater", **base).fit(X_tr, y_tr).audit(X_te, y_te)
    with pytest.raises(ValueError, match="neither 'overall'"):
        GroupDisparityAuditor(target="race=z", **base).fit(X_tr, y_tr).audit(X_te, y_te)
    with pytest.raises(ValueError, match="takes no pos_label"):
        GroupDisparityAuditor(metric="error_rate", pos_label=1, **base).fit(
            X_tr, y_tr).audit(X_te, y_te)


def test_misaligned_sensitive_features_index_is_refused():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200)})
    y = (X["x"] + rng.normal(size=200) > 0).astype(int)
    s = pd.Series(rng.choice(["a", "b"], 200), name="g")
    auditor = GroupDisparityAuditor(LogisticRegression(), metric="error_rate",
                                    n_resamples=50, random_state=0).fit(X, y)
    auditor.audit(X, y, sensitive_features=s)  # same default index: fine
    with pytest.raises(ValueError, match="index of sensitive_features"):
        auditor.audit(X, y, sensitive_features=s.sample(frac=1.0, random_state=0))
