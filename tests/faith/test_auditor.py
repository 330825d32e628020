"""Tests of ``FaithAuditor``: scikit-learn conventions, options, exactness and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.svm import LinearSVC

from skfair_audit.faith import (
    DegenerateMetricWarning,
    EuclideanMetric,
    FaithAuditor,
    FaithResult,
    GridSpace,
    MahalanobisMetric,
    PrecomputedMetric,
    SensitiveSubspaceMetric,
    SmallSampleWarning,
)

# scikit-learn's common checks of every public estimator: tests/test_estimators.py.


# --------------------------------------------------------------------------- data
def _categorical_data(n=1200, seed=0):
    """Group ``b`` has a higher base rate, so a model of the labels uses the group."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "group": rng.choice(["a", "b"], n),
            "priors": rng.choice(["0", "1-3", ">3"], n),
            "charge": rng.choice(["F", "M"], n),
        }
    )
    rate = np.where(X["group"] == "b", 0.6, 0.3) + 0.2 * (X["priors"] == ">3")
    y = (rng.random(n) < rate).astype(int)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _categorical_data()


def _pipeline():
    columns = ["group", "priors", "charge"]
    encode = ColumnTransformer([("onehot", OneHotEncoder(), columns)])
    return Pipeline([("encode", encode), ("model", LogisticRegression())])


def _auditor(**params):
    params = {"protected": ["group"], "n_resamples": 100, "random_state": 0, **params}
    return FaithAuditor(_pipeline(), **params)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return _auditor(epsilon=0.5, delta=0.05).fit(X, y)


@pytest.fixture(scope="module")
def audited(fitted, data):
    return fitted.audit(*data)


def _cell_frame(auditor):
    """The cells' features as a DataFrame (built from the grid, independent of query_frame)."""
    space = auditor.space_
    names = list(space.feature_names)
    return pd.DataFrame(np.asarray(space.cell_features, dtype=object), columns=names)


# --------------------------------------------------------------------------- conventions
def test_clone_and_get_params_round_trip():
    auditor = _auditor(epsilon=0.2, frozen=("charge",), method="numerical")
    copy = clone(auditor)
    assert copy is not auditor
    params, copy_params = auditor.get_params(deep=False), copy.get_params(deep=False)
    assert params.keys() == copy_params.keys()
    for key, value in params.items():
        if key == "estimator":
            assert copy_params[key] is not value
            assert repr(copy_params[key]) == repr(value)
        else:
            assert copy_params[key] == value
    copy.set_params(epsilon=0.7, estimator__model__C=0.5)
    assert copy.epsilon == 0.7 and copy.estimator.named_steps["model"].C == 0.5
    assert auditor.epsilon == 0.2 and auditor.estimator.named_steps["model"].C == 1.0


def test_fit_returns_self_and_fits_a_clone(data):
    auditor = _auditor()
    assert auditor.fit(*data) is auditor
    assert auditor.estimator_ is not auditor.estimator
    assert not hasattr(auditor.estimator.named_steps["model"], "coef_")
    assert auditor.n_features_in_ == 3
    assert list(auditor.feature_names_in_) == ["group", "priors", "charge"]
    np.testing.assert_array_equal(auditor.classes_, [0, 1])


def test_pickle_round_trip_gives_identical_audit(fitted, audited, data):
    restored = pickle.loads(pickle.dumps(fitted))
    again = restored.audit(*data)
    assert again.statistic == audited.statistic
    np.testing.assert_array_equal(again.bootstrap_distribution, audited.bootstrap_distribution)
    assert (again.lower_bound, again.upper_bound) == (audited.lower_bound, audited.upper_bound)


def test_pipeline_with_column_transformer_on_dataframe(fitted, audited, data):
    X, y = data
    # 2 x 3 x 2 feature levels x 2 labels
    assert audited.n_cells == 24 and fitted.cell_loss_.shape == (24,)
    assert audited.n == len(X)
    # The cell losses are the model's 0-1 loss at every cell, observed or not.
    cells = _cell_frame(fitted)
    labels = fitted.space_.cell_labels
    expected = (fitted.estimator_.predict(cells) != labels).astype(float)
    np.testing.assert_array_equal(fitted.cell_loss_, expected)
    assert isinstance(audited, FaithResult)


def test_unfitted_audit_and_score_raise(data):
    for method in ("audit", "score", "audit_value"):
        with pytest.raises(NotFittedError):
            getattr(_auditor(), method)(*data)


def test_frozen_estimator_is_not_refit(data):
    X, y = data
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, y)
    logistic = model.named_steps["logisticregression"]
    coef, coef_values = logistic.coef_, logistic.coef_.copy()
    # Fit the auditor on a different sample: a refit would change the coefficients.
    auditor = FaithAuditor(FrozenEstimator(model), protected=["group"], n_resamples=50)
    auditor.fit(X.iloc[:300], y[:300])
    assert auditor.estimator_.estimator is model
    assert logistic.coef_ is coef
    np.testing.assert_array_equal(logistic.coef_, coef_values)
    expected = (model.predict(_cell_frame(auditor)) != auditor.space_.cell_labels)
    np.testing.assert_array_equal(auditor.cell_loss_, expected.astype(float))


def test_random_state_reproducible(data):
    X, y = data
    first = _auditor(random_state=3).fit(X, y).audit(X, y)
    second = _auditor(random_state=3).fit(X, y).audit(X, y)
    other = _auditor(random_state=4).fit(X, y).audit(X, y)
    np.testing.assert_array_equal(first.bootstrap_distribution, second.bootstrap_distribution)
    assert not np.array_equal(first.bootstrap_distribution, other.bootstrap_distribution)


def test_n_jobs_bit_identical(fitted, data):
    serial = clone(fitted).set_params(n_jobs=1, batch_size=7, n_resamples=60).fit(*data)
    parallel = clone(serial).set_params(n_jobs=2).fit(*data)
    a, b = serial.audit(*data), parallel.audit(*data)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    assert a.bootstrap_distribution.shape == (60,)


# --------------------------------------------------------------------------- losses
def test_log_loss_is_minus_log_probability_of_the_cell_label(data):
    X, y = data
    auditor = _auditor(loss="log_loss", epsilon=0.1).fit(X, y)
    proba = auditor.estimator_.predict_proba(_cell_frame(auditor))
    labels = auditor.space_.cell_labels
    expected = -np.log(proba[np.arange(labels.size), labels])
    np.testing.assert_allclose(auditor.cell_loss_, expected, rtol=1e-12)
    result = auditor.audit(X, y)
    assert 0 < result.statistic < np.ptp(expected)


def test_callable_loss(data):
    X, y = data

    def doubled_error(estimator, X_cells, y_cells):
        return 2.0 * (estimator.predict(X_cells) != y_cells)

    custom = _auditor(loss=doubled_error, epsilon=0.0).fit(X, y)
    plain = _auditor(epsilon=0.0).fit(X, y)
    np.testing.assert_array_equal(custom.cell_loss_, 2.0 * plain.cell_loss_)
    assert custom.audit_value(X, y) == pytest.approx(2.0 * plain.audit_value(X, y))


def test_callable_loss_with_wrong_shape_is_an_error(data):
    with pytest.raises(ValueError, match="one finite loss per cell"):
        _auditor(loss=lambda est, Xc, yc: np.zeros(3)).fit(*data)


# --------------------------------------------------------------------------- metrics
def _differing_features(auditor):
    features = np.asarray(auditor.space_.cell_features, dtype=object)
    return (features[:, None, :] != features[None, :, :]).sum(axis=2)


def test_euclidean_metric_costs_two_per_changed_one_hot_feature(data):
    for metric in ("euclidean", EuclideanMetric()):
        auditor = _auditor(metric=metric).fit(*data)
        # Squared distance of one-hot codes: 1 + 1 for every feature that changes level.
        np.testing.assert_array_equal(auditor.cost_, 2.0 * _differing_features(auditor))
        if not isinstance(metric, str):
            assert auditor.metric_ is not metric  # cloned, the parameter is left alone


def test_sensitive_subspace_makes_group_flips_free(fitted):
    differing = _differing_features(fitted)
    features = np.asarray(fitted.space_.cell_features, dtype=object)
    group_only = (differing == 1) & (features[:, None, 0] != features[None, :, 0])
    assert np.all(fitted.cost_[group_only] == 0)
    others = (differing > 0) & ~group_only
    assert np.all(fitted.cost_[others] > 0)
    assert isinstance(fitted.metric_, SensitiveSubspaceMetric)


def test_frozen_fitted_metric_is_kept(fitted, data):
    X, y = data
    space = GridSpace.from_data(X, y, ["group", "priors", "charge"])
    metric = SensitiveSubspaceMetric(space.encoded_columns(["group"])).fit(space.encode(X))
    auditor = _auditor(metric=FrozenEstimator(metric)).fit(X.iloc[:200], y[:200])
    assert auditor.metric_.estimator is metric
    # Learned on the same data as the default, so the same costs.
    np.testing.assert_allclose(auditor.cost_, fitted.cost_, atol=1e-12)


def test_mahalanobis_and_precomputed_metrics(fitted, data):
    mahalanobis = _auditor(metric=MahalanobisMetric(2.0 * np.eye(7))).fit(*data)
    np.testing.assert_allclose(mahalanobis.cost_, 4.0 * _differing_features(mahalanobis))
    precomputed = _auditor(metric=PrecomputedMetric(fitted.cost_), epsilon=0.5).fit(*data)
    np.testing.assert_array_equal(precomputed.cost_, fitted.cost_)
    assert precomputed.audit_value(*data) == fitted.audit_value(*data)


# --------------------------------------------------------------------------- forbidden moves
def test_frozen_features_and_label_changes_in_forbidden(data):
    X, y = data
    auditor = _auditor(frozen=("charge",)).fit(X, y)
    features = np.asarray(auditor.space_.cell_features, dtype=object)
    labels = auditor.space_.cell_labels
    label_change = labels[:, None] != labels[None, :]
    charge_change = features[:, None, 2] != features[None, :, 2]
    np.testing.assert_array_equal(auditor.forbidden_, label_change | charge_change)
    free = _auditor(allow_label_change=True, frozen=("charge",)).fit(X, y)
    np.testing.assert_array_equal(free.forbidden_, charge_change)
    plain = _auditor().fit(X, y)
    np.testing.assert_array_equal(plain.forbidden_, label_change)
    # More freedom for the adversary can only raise the audit value.
    assert free.audit_value(X, y) >= auditor.audit_value(X, y)
    assert plain.audit_value(X, y) >= auditor.audit_value(X, y)


# --------------------------------------------------------------------------- empirical space
def test_empirical_space_with_continuous_features_and_protected_attribute():
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame(
        {
            "income": np.round(rng.normal(size=n), 1),
            "age": rng.integers(20, 30, n).astype(float),
            "group": rng.integers(0, 2, n).astype(float),
        }
    )
    y = (rng.random(n) < 0.3 + 0.4 * X["group"]).astype(int)
    # Only the income and age columns enter the cost: flipping the group is free.
    auditor = FaithAuditor(
        LogisticRegression(),
        space="empirical",
        protected=["group"],
        metric=EuclideanMetric(columns=[0, 1]),
        epsilon=0.0,
        n_resamples=100,
        random_state=0,
    ).fit(X, y)
    # The model decides by the group, which is free to flip: the warning says so.
    with pytest.warns(DegenerateMetricWarning, match="protected attributes alone"):
        result = auditor.audit(X, y)
    distinct = X.drop_duplicates()
    flipped = distinct.assign(group=1.0 - distinct["group"])
    cells = pd.concat([distinct, flipped]).drop_duplicates()
    assert result.n_cells == 2 * len(cells)
    # At epsilon = 0 every individual may only move to its group-flipped twin (same label).
    model = auditor.estimator_
    own = model.predict(X) != y
    twin = model.predict(X.assign(group=1.0 - X["group"])) != y
    expected = np.mean(np.maximum(twin.astype(float) - own, 0.0))
    assert result.statistic == pytest.approx(expected, abs=1e-12)
    assert auditor.score(X, y) == pytest.approx(-expected, abs=1e-12)


def test_empirical_space_needs_numeric_features(data):
    with pytest.raises(ValueError, match="numeric"):
        FaithAuditor(_pipeline(), space="empirical").fit(*data)


# --------------------------------------------------------------------------- result fields
def test_audit_result_fields(audited, fitted, data):
    X, y = data
    n = len(X)
    plan = audited.transport_plan
    off_diagonal = plan.sum() - np.trace(plan)
    moves = audited.moves()
    assert sum(move["mass"] for move in moves) == pytest.approx(off_diagonal, abs=1e-12)
    for move in moves:
        assert move["count"] == pytest.approx(move["mass"] * n)
        assert move["from_cell"] != move["to_cell"]
    frame = audited.moves_frame()
    assert list(frame.columns) == ["from_cell", "to_cell", "mass", "count"]
    assert len(frame) == len(moves)
    assert audited.adversarial_distribution.sum() == pytest.approx(1.0)
    assert audited.count_changes.sum() == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(plan.sum(axis=1), audited.counts / n, atol=1e-15)
    assert audited.counts.sum() == n
    # The plan attains the statistic and respects the budget and the forbidden moves.
    gain = fitted.cell_loss_[None, :] - fitted.cell_loss_[:, None]
    assert (plan * gain).sum() == pytest.approx(audited.statistic, abs=1e-12)
    assert (plan * fitted.cost_).sum() <= fitted.epsilon + 1e-12
    assert plan[fitted.forbidden_].sum() == 0
    assert audited.lower_bound <= audited.statistic <= audited.upper_bound
    assert audited.rejected == (audited.lower_bound > 0.05)


def test_score_is_minus_statistic(fitted, audited, data):
    assert fitted.score(*data) == -audited.statistic
    assert fitted.audit_value(*data) == audited.statistic


def _counts_by_hand(auditor, X, y):
    """Audit rows per cell, matched on the raw feature values and labels."""
    cells = np.asarray(auditor.space_.cell_features, dtype=object)
    labels = auditor.space_.cell_labels
    rows = X[list(auditor.space_.feature_names)].to_numpy(dtype=object)
    y = np.asarray(y)
    return np.array(
        [np.sum(np.all(rows == cells[k], axis=1) & (y == labels[k])) for k in range(len(cells))]
    )


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.5])
def test_statistic_matches_linprog(epsilon):
    X, y = _categorical_data(n=500, seed=2)
    X = X[["group", "priors"]]
    model = make_pipeline(OneHotEncoder(), LogisticRegression())
    auditor = FaithAuditor(model, protected=["group"], epsilon=epsilon, n_resamples=20).fit(X, y)
    counts = _counts_by_hand(auditor, X, y)
    f = counts / counts.sum()
    loss, cost, forbidden = auditor.cell_loss_, auditor.cost_, auditor.forbidden_
    K = loss.size
    gain = (loss[None, :] - loss[:, None]).ravel()
    rows = np.kron(np.eye(K), np.ones((1, K)))  # sum_j Pi[i, j] = f_i
    bounds = [(0, 0) if forbidden.ravel()[k] else (0, None) for k in range(K * K)]
    lp = linprog(
        -gain,
        A_ub=cost.reshape(1, -1),
        b_ub=[epsilon],
        A_eq=rows,
        b_eq=f,
        bounds=bounds,
        method="highs",
    )
    assert lp.status == 0
    assert auditor.audit_value(X, y) == pytest.approx(-lp.fun, abs=1e-9)
    np.testing.assert_array_equal(auditor.audit(X, y).counts, counts)


# --------------------------------------------------------------------------- bad input
def test_non_binary_and_single_class_targets(data):
    X, _ = data
    with pytest.raises(ValueError, match="exactly 2 classes, got 3"):
        _auditor().fit(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="exactly 2 classes, got 1"):
        _auditor().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="Unknown label type"):
        _auditor().fit(X, np.linspace(0, 1, len(X)))


def test_unknown_label_at_audit_time(fitted, data):
    X, y = data
    with pytest.raises(ValueError, match=r"labels \[5\] not seen in fit"):
        fitted.audit(X, np.where(y == 1, 5, 0))


def test_missing_and_infinite_values(data):
    X, y = data
    X_nan = X.copy()
    X_nan.loc[3, "priors"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _auditor().fit(X_nan, y)
    X_num = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 3, "g": np.arange(40) % 2})
    y_num = np.arange(40) % 2
    X_inf = X_num.copy()
    X_inf.iloc[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        FaithAuditor(LogisticRegression(), space="empirical").fit(X_inf, y_num)
    fitted = FaithAuditor(LogisticRegression(), space="empirical", n_resamples=10)
    fitted.fit(X_num, y_num)
    with pytest.raises(ValueError, match="infinity"):
        fitted.audit(X_inf, y_num)


def test_mismatched_lengths(fitted, data):
    X, y = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        _auditor().fit(X, y[:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        fitted.audit(X, y[:-1])


def test_unknown_category_at_audit_time(fitted, data):
    X, y = data
    X_new = X.copy()
    X_new.loc[0, "priors"] = "7"
    with pytest.raises(ValueError, match="'priors' has values that are not levels.*'7'"):
        fitted.audit(X_new, y)


def test_negative_epsilon(data):
    with pytest.raises(ValueError, match="epsilon must be a number >= 0"):
        _auditor(epsilon=-0.1).fit(*data)


@pytest.mark.parametrize("delta", [-0.1, 1.5])
def test_delta_outside_loss_range(data, delta):
    with pytest.raises(ValueError, match=r"delta must lie in the range .*\[0, 1\]"):
        _auditor(delta=delta).fit(*data).audit(*data)


@pytest.mark.parametrize(
    ("cost", "match"),
    [
        (-np.ones((24, 24)), "negative entries"),
        (np.ones((24, 24)), "zero diagonal"),
        (np.zeros((5, 5)), "5 cells but A has 24 rows"),
        (np.zeros((24, 12)), "square"),
    ],
)
def test_bad_precomputed_cost_matrix(data, cost, match):
    with pytest.raises(ValueError, match=match):
        _auditor(metric=PrecomputedMetric(cost)).fit(*data)


def test_log_loss_needs_predict_proba(data):
    model = make_pipeline(OneHotEncoder(), LinearSVC())
    with pytest.raises(ValueError, match="log_loss' needs an estimator with predict_proba"):
        FaithAuditor(model, loss="log_loss").fit(*data)


def test_bad_parameters(data):
    with pytest.raises(ValueError, match="space must be"):
        _auditor(space="cloud").fit(*data)
    with pytest.raises(ValueError, match="loss must be one of"):
        _auditor(loss="hinge").fit(*data)
    with pytest.raises(ValueError, match="metric must be"):
        _auditor(metric="manhattan").fit(*data)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        _auditor(n_resamples=0).fit(*data)
    with pytest.raises(ValueError, match=r"protected attribute 'race' is not a column of X"):
        _auditor(protected=["race"]).fit(*data)


def test_small_audit_sample_warns_with_its_size(fitted, data):
    X, y = data
    with pytest.warns(SmallSampleWarning, match="n=30 rows"):
        fitted.audit(X.iloc[:30], y[:30])


# --------------------------------------------------------------------------- real data
@pytest.mark.real_data
def test_compas_logistic_regression_is_not_individually_fair(compas_bunch):
    """Xue et al. (2020, §5): plain LR on COMPAS, 70/30 split, lower bounds ≈ 0.05 on average.

    At epsilon = 0 (only protected-attribute flips are free) the 0-1 loss of a logistic
    regression is borderline at delta = 0.05: across splits the lower bound scatters around
    0.05 (the paper's average), so a single split's decision at 0.05 is not asserted; the
    average over splits, the clear rejection at delta = 0.01 and, with a budget, at 0.05 are.
    """
    X, y = compas_bunch.data, compas_bunch.target
    features = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
    lower_bounds = []
    for seed in range(5):
        X_train, X_audit, y_train, y_audit = train_test_split(
            X[features], y, test_size=0.3, random_state=seed
        )
        model = make_pipeline(OneHotEncoder(), LogisticRegression())
        auditor = FaithAuditor(
            model, protected=["race", "sex"], epsilon=0.0, delta=0.05, n_resamples=300,
            random_state=0,
        ).fit(X_train, y_train)
        result = auditor.audit(X_audit, y_audit)
        assert result.n_cells == 144
        assert result.n == len(X_audit)
        assert 0.02 < result.statistic < 0.15
        assert result.lower_bound <= result.statistic <= result.upper_bound
        assert result.rejected == (result.lower_bound > 0.05)
        assert result.confidence_interval(alternative="greater").low > 0.01
        lower_bounds.append(result.lower_bound)
    assert 0.03 < np.mean(lower_bounds) < 0.08
    # With a transport budget the adversary also moves along non-sensitive directions.
    budget = clone(auditor).set_params(epsilon=0.1).fit(X_train, y_train)
    assert budget.audit(X_audit, y_audit).rejected


def test_audit_counts_equals_audit(fitted, audited, data):
    X, y = data
    counts = fitted.space_.counts(X, y)
    from_counts = fitted.audit_counts(counts)
    assert from_counts.statistic == audited.statistic
    np.testing.assert_array_equal(
        from_counts.bootstrap_distribution, audited.bootstrap_distribution
    )
    with pytest.raises(ValueError, match="shape"):
        fitted.audit_counts(counts[:-1])


def test_audit_counts_needs_the_grid_space():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    auditor = FaithAuditor(LogisticRegression(), space="empirical", n_resamples=20).fit(X, y)
    with pytest.raises(ValueError, match="space='grid'"):
        auditor.audit_counts(np.ones(4))


def test_features_must_be_all_the_model_columns():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"g": rng.integers(0, 2, 300), "x1": rng.normal(size=300),
                      "x2": rng.normal(size=300)})
    y = (X["x1"] > 0).astype(int)
    auditor = FaithAuditor(LogisticRegression(), features=["g", "x1"], protected=["g"],
                           space="empirical", n_resamples=20)
    with pytest.raises(ValueError, match="all the columns the model is fit on"):
        auditor.fit(X, y)
    auditor.fit(X[["g", "x1"]], y).audit(X[["g", "x1"]], y)


# --------------------------------------------------------------------------- continuous scale
def _continuous_frame(n, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "group": rng.integers(0, 2, n).astype(float),
        "income": np.round(rng.normal(size=n), 2),
        "age": rng.integers(18, 70, n).astype(float),
    })
    logit = X["income"] - 0.03 * (X["age"] - 40) + 0.7 * X["group"]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


@pytest.mark.parametrize("loss", ["zero_one", "log_loss"])
def test_nearest_neighbour_audit_equals_the_dense_audit(loss):
    """The default (linear-map) metric takes the nearest-neighbour path; the same costs given
    as a PrecomputedMetric take the dense path: same statistic, plan, adversarial distribution
    and dual multipliers; the same bootstrap once the dense problem is restricted to the
    cells with audit rows (where the nearest-neighbour problem draws its resamples)."""
    from skfair_audit.faith import EmpiricalSpace, faith_audit
    from skfair_audit.faith._nearest import dense_metric_costs, metric_points

    X_train, y_train = _continuous_frame(1500, 0)
    X, y = _continuous_frame(300, 1)
    params = {"space": "empirical", "protected": ["group"], "epsilon": 0.05, "loss": loss,
              "n_resamples": 200, "random_state": 0, "method": "numerical"}
    auditor = FaithAuditor(LogisticRegression(), **params).fit(X_train, y_train)
    space, counts, problem = auditor._audit_problem(X, y)
    assert isinstance(space, EmpiricalSpace)
    assert problem.support.size == np.count_nonzero(counts) < space.n_cells
    points, point_of_row, exponent = metric_points(auditor.metric_, space.encode_feature_cells())
    cost = dense_metric_costs(points, exponent, point_of_row[space.feature_cell_index])
    dense = FaithAuditor(FrozenEstimator(auditor.estimator_),
                         **{**params, "metric": PrecomputedMetric(cost)}).fit(X_train, y_train)
    ours, theirs = auditor.audit(X, y), dense.audit(X, y)
    assert ours.statistic == pytest.approx(theirs.statistic, abs=1e-12)
    for name in ("plan_source", "plan_target", "plan_mass", "adversarial_distribution"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name))
    assert ours.dual_multipliers == theirs.dual_multipliers
    _, _, dense_problem = dense._audit_problem(X, y)
    restricted = faith_audit(
        counts, None, dense_problem.restrict(np.flatnonzero(counts)), epsilon=0.05,
        n_resamples=200, random_state=0, method="numerical",
    )
    np.testing.assert_array_equal(ours.bootstrap_distribution,
                                  restricted.bootstrap_distribution)
    assert ours.cell_features is None and ours.moves()[0]["from_cell"].startswith("group=")


def test_empirical_audit_bit_identical_across_n_jobs():
    X_train, y_train = _continuous_frame(1000, 2)
    X, y = _continuous_frame(400, 3)
    auditor = FaithAuditor(LogisticRegression(), space="empirical", protected=["group"],
                           n_resamples=300, batch_size=64, random_state=1)
    serial = auditor.fit(X_train, y_train).audit(X, y)
    parallel = clone(auditor).set_params(n_jobs=2).fit(X_train, y_train).audit(X, y)
    np.testing.assert_array_equal(serial.bootstrap_distribution,
                                  parallel.bootstrap_distribution)


def test_space_auto_and_protected_levels_of_training_and_audit_data():
    X_train, y_train = _continuous_frame(800, 4)
    X, y = _continuous_frame(200, 5)
    auto = FaithAuditor(LogisticRegression(), space="auto", protected=["group"],
                        n_resamples=50, random_state=0).fit(X_train, y_train)
    assert auto.space_kind_ == "reference"
    np.testing.assert_array_equal(auto.protected_levels_["group"], [0.0, 1.0])
    # An audit sample with a single group still gets counterfactual copies in the other one.
    only_zero = X["group"] == 0
    result = auto.audit(X[only_zero], y[only_zero])
    # Cells: the reference rows (the training rows) with every group and label, then the
    # distinct audit rows, then their twins in the other group (one each).
    reference = X_train[["income", "age"]].drop_duplicates()
    audited = X[only_zero].assign(y=y[only_zero]).drop_duplicates()
    assert result.n_cells == 2 * 2 * len(reference) + 2 * len(audited)
    assert result.moves()[0]["to_cell"].startswith("group=")
    categorical = FaithAuditor(LogisticRegression(), space="auto").set_params(
        estimator=make_pipeline(OneHotEncoder(), LogisticRegression()), n_resamples=20
    ).fit(X_train.astype({"group": str}).drop(columns=["income", "age"]), y_train)
    assert categorical.space_kind_ == "grid"
    with pytest.raises(ValueError, match="categorical features .*numeric features"):
        FaithAuditor(LogisticRegression(), space="auto").fit(
            X_train.astype({"group": str}), y_train
        )


def test_grid_audit_of_unseen_values_points_to_the_empirical_space():
    """The root cause of 'not levels of the sample space' on validation folds: the grid is
    fixed in fit from the training data."""
    X_train, y_train = _continuous_frame(300, 6)
    X, y = _continuous_frame(300, 7)
    auditor = FaithAuditor(LogisticRegression(), space="grid", metric="euclidean",
                           protected=["group"], n_resamples=20).fit(
        X_train[["group", "age"]], y_train)
    unseen = X[["group", "age"]].assign(age=X["age"] + 0.5)
    with pytest.raises(ValueError, match="fixed in fit .*space='reference'"):
        auditor.audit(unseen, y)
