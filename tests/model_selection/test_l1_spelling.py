"""The ℓ1 logistic regression is really ℓ1 on the installed scikit-learn (run under several).

Standalone on purpose: it imports only ``skfair_audit.model_selection._logistic`` and
scikit-learn, so CI can run it under a second scikit-learn version, e.g.::

    python -m venv /tmp/sk16 && /tmp/sk16/bin/pip install scikit-learn==1.6.1 pytest
    PYTHONPATH=. /tmp/sk16/bin/python -m pytest -p no:cacheprovider \
        tests/model_selection/test_l1_spelling.py

On scikit-learn 1.6/1.7, ``LogisticRegression(l1_ratio=1.0)`` silently fits an L2 penalty; on
1.8+ ``penalty="l1"`` is deprecated. The references below are independent of the shim: the
optimality (KKT) conditions of the ℓ1 problem, an L2 fit, and a near-unpenalised lbfgs fit.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression


def _load_logistic():
    """Import the shim module by path, without the rest of the package (any sklearn)."""
    path = Path(__file__).parents[2] / "skfair_audit" / "model_selection" / "_logistic.py"
    spec = importlib.util.spec_from_file_location("_skfair_l1_shim", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


shim = _load_logistic()
SKLEARN = tuple(int(p) for p in sklearn.__version__.split(".")[:2])


def _sparse_problem(seed=0, n=400, d=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    logit = 1.5 * X[:, 0] - 1.0 * X[:, 1]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def _kkt_violation(model, X, y):
    """Largest violation of the ℓ1 optimality conditions of liblinear's problem.

    liblinear minimises ``C Σ log(1 + exp(-ỹ (xβ + b))) + ||(β, b)||_1`` with the intercept as a
    penalised feature of value 1. At the optimum, with g = C ∇(loss): |g_j| ≤ 1 where β_j = 0 and
    g_j = -sign(β_j) where β_j ≠ 0. An L2 fit violates these by a wide margin.
    """
    Xb = np.column_stack([X, np.ones(len(X))])
    w = np.concatenate([model.coef_.ravel(), model.intercept_])
    signed = np.where(y == model.classes_[1], 1.0, -1.0)
    margin = signed * (Xb @ w)
    grad = model.C * Xb.T @ (-signed / (1 + np.exp(margin)))
    zero = w == 0
    return max(
        np.max(np.abs(grad[zero]) - 1, initial=0.0),
        np.max(np.abs(grad[~zero] + np.sign(w[~zero])), initial=0.0),
    )


def test_spelling_matches_the_installed_version():
    params = shim.l1_logistic_regression().get_params()
    if SKLEARN >= (1, 8):
        assert shim.L1_RATIO_SPELLING
        assert params["l1_ratio"] == 1.0
        assert params["penalty"] == "deprecated"
    else:
        assert not shim.L1_RATIO_SPELLING
        assert params["penalty"] == "l1"


@pytest.mark.parametrize("solver", ["liblinear", "saga"])
def test_coefficients_are_sparse_and_fit_without_warnings(solver):
    X, y = _sparse_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FutureWarning about penalty, no ConvergenceWarning
        model = shim.l1_logistic_regression(C=0.02, solver=solver, max_iter=5000, tol=1e-6)
        model.fit(X, y)
    nonzero = np.flatnonzero(model.coef_.ravel())
    assert set(nonzero) <= {0, 1} and 0 in nonzero
    # Same C with an L2 penalty: every coefficient is non-zero (what the silent bug gives).
    l2 = LogisticRegression(C=0.02, solver="liblinear").fit(X, y)
    assert np.count_nonzero(l2.coef_) == X.shape[1]


def test_liblinear_solution_satisfies_the_l1_optimality_conditions():
    X, y = _sparse_problem(seed=1)
    model = shim.l1_logistic_regression(C=0.05, tol=1e-8).fit(X, y)
    assert _kkt_violation(model, X, y) < 1e-3
    l2 = LogisticRegression(C=0.05, solver="liblinear", tol=1e-8).fit(X, y)
    assert _kkt_violation(l2, X, y) > 0.1


def test_rejects_penalty_arguments_and_non_l1_solvers():
    with pytest.raises(ValueError, match="sets 'penalty'"):
        shim.l1_logistic_regression(penalty="l2")
    with pytest.raises(ValueError, match="sets 'l1_ratio'"):
        shim.l1_logistic_regression(l1_ratio=0.5)
    with pytest.raises(ValueError, match="solver"):
        shim.l1_logistic_regression(solver="lbfgs")


def test_default_path_runs_from_the_empty_to_the_unpenalised_model():
    X, y = _sparse_problem(seed=2, d=6)
    path = shim.default_c_path(X, y, n_values=12)
    assert path.shape == (12,) and np.all(np.diff(path) > 0)
    assert path[-1] / path[0] == pytest.approx(1e4)
    first = shim.l1_logistic_regression(C=path[0]).fit(X, y)
    assert np.count_nonzero(first.coef_) == 0 and first.intercept_[0] == 0
    above = shim.l1_logistic_regression(C=path[0] * 1.2).fit(X, y)
    assert np.count_nonzero(np.append(above.coef_, above.intercept_)) >= 1
    last = shim.l1_logistic_regression(C=path[-1], tol=1e-8).fit(X, y)
    # Reference: lbfgs with a negligible L2 penalty (spelled the same on every version).
    free = LogisticRegression(C=1e8, max_iter=10_000, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(last.coef_, free.coef_, atol=0.05)


def test_default_path_rejects_bad_arguments():
    X, y = _sparse_problem(d=3)
    with pytest.raises(ValueError, match="n_values"):
        shim.default_c_path(X, y, n_values=1)
    with pytest.raises(ValueError, match="span"):
        shim.default_c_path(X, y, span=1.0)
