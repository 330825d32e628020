"""EXPLORE, SVD sensitive subspace and protected-Euclidean metrics against hand computations."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import (
    ExploreMetric,
    FaithAuditor,
    ProtectedEuclideanMetric,
    SVDSensitiveSubspaceMetric,
)
from skfair_audit.faith._metric_learning import explore_negative_log_likelihood


# --------------------------------------------------------------------------- protected Euclidean
def test_protected_euclidean_by_hand():
    X = np.array([[1.0, 0.0, 2.0, 3.0], [0.0, 1.0, 5.0, 3.0], [1.0, 0.0, 2.0, 7.0]])
    metric = ProtectedEuclideanMetric([[0, 1]]).fit(X)
    # Columns 0-1 (one protected attribute) are free; the cost is the squared distance on 2-3.
    expected = np.array([[0, 9, 16], [9, 0, 25], [16, 25, 0]], dtype=float)
    np.testing.assert_allclose(metric.cost_matrix(X), expected)
    assert metric.columns_.tolist() == [2, 3]
    one = ProtectedEuclideanMetric([[0, 1]], exponent=1).fit(X)
    np.testing.assert_allclose(one.cost_matrix(X), np.sqrt(expected))


def test_protected_euclidean_standardised_by_hand():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 2, 50), rng.normal(0, 3, 50), rng.normal(0, 0.5, 50)])
    metric = ProtectedEuclideanMetric(0, standardize=True).fit(X)
    scale = X.std(axis=0)
    a, b = X[:1], X[1:2]
    expected = ((a[0, 1] - b[0, 1]) / scale[1]) ** 2 + ((a[0, 2] - b[0, 2]) / scale[2]) ** 2
    assert metric.cost_matrix(a, b)[0, 0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="features"):
        metric.transform(X[:, :2])


# --------------------------------------------------------------------------- EXPLORE
def test_explore_metric_is_the_maximum_likelihood_sigma():
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(1500, 2)), rng.normal(size=(1500, 2))
    d2 = 1.5 * (X1[:, 0] - X2[:, 0]) ** 2
    y = rng.random(1500) < 2 / (1 + np.exp(d2))
    metric = ExploreMetric().fit(np.hstack([X1, X2]), y.astype(int))
    assert metric.converged_ and metric.n_features_in_ == 2
    # Optimality by hand: no PSD perturbation lowers the likelihood (first-order check).
    differences = X1 - X2
    best = explore_negative_log_likelihood(metric.sigma_, differences, y)
    for direction in [np.eye(2), np.diag([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0]])]:
        for step in (1e-3, -1e-3):
            trial = metric.sigma_ + step * direction
            if np.linalg.eigvalsh(trial).min() >= 0:
                assert explore_negative_log_likelihood(trial, differences, y) >= best - 1e-12
    # The cost is the Mahalanobis distance under sigma_.
    a, b = X1[:3], X2[:4]
    expected = np.array([[(u - v) @ metric.sigma_ @ (u - v) for v in b] for u in a])
    np.testing.assert_allclose(metric.cost_matrix(a, b), expected, atol=1e-10)
    assert abs(metric.sigma_[0, 0] - 1.5) < 0.4 and abs(metric.sigma_[1, 1]) < 0.2


def test_explore_metric_warns_when_it_stops_unconverged():
    # As scikit-learn's iterative solvers do: a ConvergenceWarning, not only converged_=False.
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    y = rng.random(300) < 2 / (1 + np.exp(1.5 * (X1[:, 0] - X2[:, 0]) ** 2))
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        metric = ExploreMetric(max_iter=3).fit(np.hstack([X1, X2]), y)
    assert not metric.converged_ and metric.n_iter_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert ExploreMetric().fit(np.hstack([X1, X2]), y).converged_


def test_explore_metric_errors():
    X = np.zeros((4, 4))
    with pytest.raises(ValueError, match="judged pairs"):
        ExploreMetric().fit(X, None)
    with pytest.raises(ValueError, match="even number"):
        ExploreMetric().fit(np.zeros((4, 3)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="both"):
        ExploreMetric().fit(np.ones((4, 4)), [1, 1, 1, 1])
    with pytest.raises(ValueError, match="0/1"):
        ExploreMetric().fit(np.ones((4, 4)), [0, 2, 1, 1])
    rng = np.random.default_rng(2)
    metric = ExploreMetric().fit(rng.normal(size=(40, 4)), np.tile([0, 1], 20))
    with pytest.raises(ValueError, match="pairs of 2 features"):
        metric.transform(np.zeros((2, 4)))


# --------------------------------------------------------------------------- SVD subspace
def test_svd_sensitive_subspace_by_hand():
    # Within each group the rows differ along (1, 1, 0) only: that direction becomes free.
    base = np.array([[0.0, 0.0, 0.0], [5.0, -1.0, 2.0], [-3.0, 4.0, 1.0]])
    u = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    X = np.vstack([b + t * u for b in base for t in (-1.0, 0.5, 2.0)])
    groups = np.repeat([0, 1, 2], 3)
    metric = SVDSensitiveSubspaceMetric().fit(X, groups)
    assert abs(metric.components_[0] @ u) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(metric.explained_share_, [1.0])
    projector = np.eye(3) - np.outer(u, u)
    np.testing.assert_allclose(metric.projector_, projector, atol=1e-12)
    a, b = np.array([[0.0, 0.0, 0.0]]), np.array([[3.0, 1.0, 2.0]])
    diff = (a - b)[0]
    assert metric.cost_matrix(a, b)[0, 0] == pytest.approx(diff @ projector @ diff, abs=1e-12)
    # Moving along u is free.
    assert metric.cost_matrix(a, a + 7 * u)[0, 0] < 1e-20


def test_svd_sensitive_subspace_share_and_errors():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(50), 4)
    X = rng.normal(size=(200, 3)) * [3.0, 1.0, 0.1]  # within-group variation: mostly feature 0
    share = SVDSensitiveSubspaceMetric(n_components=0.5).fit(X, groups)
    assert share.components_.shape[0] == 1 and abs(share.components_[0, 0]) > 0.99
    two = SVDSensitiveSubspaceMetric(n_components=0.99).fit(X, groups)
    assert two.components_.shape[0] == 2
    with pytest.raises(ValueError, match="groups"):
        SVDSensitiveSubspaceMetric().fit(X, None)
    with pytest.raises(ValueError, match="n_components"):
        SVDSensitiveSubspaceMetric(n_components=0).fit(X, groups)
    with pytest.raises(ValueError, match="no variation"):
        SVDSensitiveSubspaceMetric().fit(X, np.arange(200))


# --------------------------------------------------------------------------- sklearn style
@pytest.mark.parametrize("metric", [
    ProtectedEuclideanMetric([[0, 1]], standardize=True, exponent=1),
    ExploreMetric(exponent=1, max_iter=50, tol=1e-6),
    SVDSensitiveSubspaceMetric(n_components=2, exponent=3),
])
def test_clone_and_get_params(metric):
    params = metric.get_params()
    cloned = clone(metric)
    assert type(cloned) is type(metric) and cloned.get_params() == params
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(cloned))


def test_fitted_metrics_are_kept_by_frozen_estimator_in_the_auditor():
    rng = np.random.default_rng(4)
    n = 1200
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n)})
    y = (rng.random(n) < np.where(X.priors == ">3", 0.7, 0.3)).astype(int)
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, y)
    auditor = FaithAuditor(FrozenEstimator(model), protected=["group"], epsilon=0.0,
                           n_resamples=20, random_state=0).fit(X, y)
    encoded = auditor.space_.encode(X)
    # Groups of comparable individuals: same priors; they differ only in the group.
    svd = SVDSensitiveSubspaceMetric().fit(encoded, X.priors)
    pairs = np.hstack([encoded[:600], encoded[600:]])
    comparable = (X.priors.to_numpy()[:600] == X.priors.to_numpy()[600:]).astype(int)
    # The judgements are separable (comparable exactly when priors agree): the likelihood
    # grows without bound along priors, and EXPLORE says it stopped unconverged.
    with pytest.warns(ConvergenceWarning):
        explore = ExploreMetric().fit(pairs, comparable)
    for metric in (svd, explore):
        frozen = FaithAuditor(FrozenEstimator(model), protected=["group"], epsilon=0.0,
                              metric=FrozenEstimator(metric), n_resamples=20,
                              random_state=0).fit(X, y)
        assert frozen.metric_.estimator is metric
        np.testing.assert_allclose(frozen.cost_, metric.cost_matrix(frozen.space_
                                                                    .encoded_features()))
        # Both learn that only the group is irrelevant: a group flip is (nearly) free.
        result = frozen.audit(X, y)
        assert result.metric_diagnostics is not None


def test_explore_leaves_out_identical_pairs_judged_incomparable():
    rng = np.random.default_rng(5)
    X1, X2 = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    y = (rng.random(300) < 2 / (1 + np.exp((X1 - X2)[:, 0] ** 2))).astype(int)
    reference = ExploreMetric().fit(np.hstack([X1, X2]), y)
    same = rng.normal(size=(5, 2))
    pairs = np.vstack([np.hstack([X1, X2]), np.hstack([same, same])])
    with pytest.warns(UserWarning, match="5 pairs of identical individuals"):
        metric = ExploreMetric().fit(pairs, np.r_[y, np.zeros(5, int)])
    np.testing.assert_allclose(metric.sigma_, reference.sigma_, atol=1e-10)
