"""Numerics of the learned metrics against independent references (sklearn, scipy, brute force)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from skfair_audit.faith._metric_learning import (
    _explore_gradient,
    cross_validated_auc,
    explore_negative_log_likelihood,
    explore_sigma,
    fit_logistic,
    project_psd,
    weighted_auc,
    within_group_components,
)


def reference_logistic(X, y, C, sample_weight=None):
    """scikit-learn's exact second-order solver, converged tightly."""
    model = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    model.fit(X, y, sample_weight=sample_weight)
    return np.append(model.coef_.ravel(), model.intercept_)


@pytest.mark.parametrize("C", [1e-3, 0.3, 1.0, 1e3])
def test_fit_logistic_matches_sklearn(C):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = rng.random(400) < 1 / (1 + np.exp(-(X @ [1.5, -1.0, 0.0] + 0.3)))
    theta, converged = fit_logistic(X, np.ones(400), y.astype(float), C)
    assert converged
    np.testing.assert_allclose(theta, reference_logistic(X, y, C), rtol=1e-6, atol=1e-8)


def test_fit_logistic_on_aggregated_rows_equals_the_individual_rows():
    # One-hot rows repeat: the aggregated fit is the same problem as the individual one.
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, 3000)
    X = np.eye(4)[codes][:, 1:]
    y = rng.random(3000) < np.array([0.2, 0.4, 0.5, 0.8])[codes]
    weight = rng.integers(1, 4, 3000).astype(float)
    distinct, rows = np.unique(X, axis=0, return_inverse=True)
    rows = rows.ravel()
    total = np.bincount(rows, weight)
    positive = np.bincount(rows, weight * y)
    theta, _ = fit_logistic(distinct, total, positive, 0.5)
    np.testing.assert_allclose(theta, reference_logistic(X, y, 0.5, weight), rtol=1e-6,
                               atol=1e-8)


def test_fit_logistic_warm_start_reaches_the_same_optimum():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(float)
    cold, _ = fit_logistic(X, np.ones(200), y, 10.0)
    warm, _ = fit_logistic(X, np.ones(200), y, 10.0, init=np.array([5.0, -5.0, 3.0]))
    np.testing.assert_allclose(warm, cold, atol=1e-9)


def test_weighted_auc_matches_sklearn_with_ties_and_weights():
    rng = np.random.default_rng(3)
    score = rng.integers(0, 6, 500).astype(float)  # many ties
    target = rng.random(500) < 0.3 + 0.1 * score
    weight = rng.random(500)
    expected = roc_auc_score(target, score, sample_weight=weight)
    assert weighted_auc(score, weight * target, weight * ~target) == pytest.approx(expected,
                                                                                   abs=1e-12)
    assert np.isnan(weighted_auc(score, weight, np.zeros(500)))


def test_cross_validated_auc_matches_a_loop_over_individual_rows():
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 6, 900)
    X = np.eye(6)[codes][:, 1:] + 0.0
    target = rng.random(900) < np.array([0.1, 0.2, 0.3, 0.5, 0.6, 0.9])[codes]
    distinct, rows = np.unique(X, axis=0, return_inverse=True)
    Cs = [0.01, 1.0, 100.0]
    splits = list(StratifiedKFold(4).split(X, target))
    got = cross_validated_auc(distinct, rows.ravel(), target, np.ones(900), Cs, splits)
    expected = []
    for C in Cs:
        scores = []
        for train, test in splits:
            theta = reference_logistic(X[train], target[train], C)
            scores.append(roc_auc_score(target[test], X[test] @ theta[:-1]))
        expected.append(np.mean(scores))
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_cross_validated_auc_without_usable_fold_is_nan():
    X = np.eye(2)
    target = np.array([True, False])
    splits = [(np.array([0]), np.array([1]))]  # the training part has one class only
    assert np.isnan(cross_validated_auc(X, np.array([0, 1]), target, np.ones(2), [1.0],
                                        splits)).all()


# --------------------------------------------------------------------------- EXPLORE
def _pairs(sigma_true, n, seed):
    rng = np.random.default_rng(seed)
    d = sigma_true.shape[0]
    differences = rng.normal(size=(n, d))
    t = np.einsum("ij,jk,ik->i", differences, sigma_true, differences)
    comparable = rng.random(n) < 2 / (1 + np.exp(t))
    return differences, comparable


def test_explore_likelihood_by_hand():
    differences = np.array([[1.0, 0.0], [0.0, 2.0]])
    comparable = np.array([True, False])
    sigma = np.diag([0.5, 0.25])
    # t = 0.5 for the comparable pair, 1.0 for the incomparable one.
    expected = (np.log(1 + np.exp(0.5)) - np.log(2) - np.log(np.tanh(0.5))) / 2
    assert explore_negative_log_likelihood(sigma, differences, comparable) == pytest.approx(
        expected, rel=1e-12)
    assert explore_negative_log_likelihood(np.diag([1.0, 0.0]), differences,
                                           comparable) == np.inf


def test_explore_gradient_matches_finite_differences():
    differences, comparable = _pairs(np.array([[1.0, 0.3], [0.3, 0.5]]), 300, seed=5)
    sigma = np.array([[0.8, 0.1], [0.1, 0.6]])
    gradient = _explore_gradient(sigma, differences, comparable)
    h = 1e-6
    for i, j in [(0, 0), (1, 1), (0, 1)]:
        bump = np.zeros((2, 2))
        bump[i, j] = bump[j, i] = h
        numeric = (explore_negative_log_likelihood(sigma + bump, differences, comparable)
                   - explore_negative_log_likelihood(sigma - bump, differences, comparable)) / (
            2 * h)
        analytic = gradient[i, j] * (1 if i == j else 2)
        assert analytic == pytest.approx(numeric, rel=1e-5)


def test_explore_one_dimension_matches_scalar_minimisation():
    differences, comparable = _pairs(np.array([[1.7]]), 2000, seed=6)
    sigma, _, converged = explore_sigma(differences, comparable)
    assert converged
    reference = minimize_scalar(
        lambda s: explore_negative_log_likelihood(np.array([[s]]), differences, comparable),
        bounds=(1e-6, 20), method="bounded", options={"xatol": 1e-10},
    )
    assert sigma[0, 0] == pytest.approx(reference.x, rel=1e-5)


def test_explore_matches_an_independent_optimiser_and_recovers_the_truth():
    truth = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.0], [0.0, 0.0, 0.3]])
    differences, comparable = _pairs(truth, 6000, seed=7)
    sigma, _, converged = explore_sigma(differences, comparable)
    assert converged
    np.testing.assert_allclose(sigma, sigma.T)
    assert np.linalg.eigvalsh(sigma).min() >= -1e-12

    # Reference: Sigma = L L^T over a lower-triangular L, BFGS (a different parametrisation).
    index = np.tril_indices(3)

    def objective(params):
        L = np.zeros((3, 3))
        L[index] = params
        return explore_negative_log_likelihood(L @ L.T, differences, comparable)

    start = np.linalg.cholesky(np.eye(3))[index]
    reference = minimize(objective, start, method="BFGS", options={"gtol": 1e-10})
    L = np.zeros((3, 3))
    L[index] = reference.x
    assert explore_negative_log_likelihood(sigma, differences, comparable) <= reference.fun + 1e-9
    np.testing.assert_allclose(sigma, L @ L.T, atol=2e-4)
    # Maximum likelihood on 6,000 pairs is close to the truth.
    np.testing.assert_allclose(sigma, truth, atol=0.25)


def test_explore_psd_constraint_binds():
    # Comparable pairs differ mostly along feature 1: the unconstrained optimum is not PSD,
    # the constrained one is singular (on the boundary of the cone) and beats an independent
    # optimiser over Sigma = L L^T.
    rng = np.random.default_rng(8)
    incomparable = np.column_stack([rng.normal(size=400), np.zeros(400)])
    comparable = np.column_stack([0.1 * rng.normal(size=400), rng.normal(size=400)])
    differences = np.vstack([incomparable, comparable])
    labels = np.r_[np.zeros(400, bool), np.ones(400, bool)]
    sigma, _, converged = explore_sigma(differences, labels)
    assert converged
    eigenvalues = np.linalg.eigvalsh(sigma)
    assert eigenvalues[0] <= 1e-8 * eigenvalues[1]

    def objective(params):
        L = np.array([[params[0], 0.0], [params[1], params[2]]])
        return explore_negative_log_likelihood(L @ L.T, differences, labels)

    reference = minimize(objective, [1.0, 0.0, 1.0], method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000})
    value = explore_negative_log_likelihood(sigma, differences, labels)
    assert value <= reference.fun + 1e-9
    assert value == pytest.approx(reference.fun, abs=1e-7)


def test_project_psd_by_hand():
    matrix = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 (1, 1)/sqrt2 and -1
    np.testing.assert_allclose(project_psd(matrix), 1.5 * np.ones((2, 2)), atol=1e-12)


# --------------------------------------------------------------------------- SVD subspace
def test_within_group_components_match_the_scatter_eigenvectors():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(60, 4))
    groups = rng.integers(0, 5, 60)
    weight = rng.random(60)
    singular, components = within_group_components(X, groups, weight)
    scatter = np.zeros((4, 4))
    for g in np.unique(groups):
        rows = groups == g
        mean = np.average(X[rows], axis=0, weights=weight[rows])
        centred = X[rows] - mean
        scatter += (centred * weight[rows, None]).T @ centred
    eigenvalues, eigenvectors = np.linalg.eigh(scatter)
    np.testing.assert_allclose(singular ** 2, eigenvalues[::-1], rtol=1e-10)
    for k in range(4):
        assert abs(components[k] @ eigenvectors[:, 3 - k]) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("n_pos, n_neg", [(5, 7), (30, 400), (1000, 20)])
def test_auc_standard_error_at_one_half_is_the_mann_whitney_null_variance(n_pos, n_neg):
    from skfair_audit.faith._metric_learning import auc_standard_error

    exact = np.sqrt((n_pos + n_neg + 1) / (12 * n_pos * n_neg))
    assert auc_standard_error(0.5, n_pos, n_neg) == pytest.approx(exact, rel=1e-12)
    # ... and it shrinks as the AUC moves towards 1 (Hanley & McNeil's binormal-free form).
    assert auc_standard_error(0.9, n_pos, n_neg) < auc_standard_error(0.5, n_pos, n_neg)
