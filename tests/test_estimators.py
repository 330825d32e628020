"""Every public estimator against scikit-learn's common checks and its own parameter constraints.

The estimators are found by walking the public modules (any ``BaseEstimator`` subclass named in
an ``__all__``), so a new one cannot be left out: it must get an instance below, the checks it
is expected to fail with their reasons, and one bad value per parameter.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

import skfair_audit
from skfair_audit.faith import (
    CallableMetric,
    EuclideanMetric,
    ExploreMetric,
    FaithAuditor,
    MahalanobisMetric,
    PrecomputedMetric,
    ProtectedEuclideanMetric,
    SensitiveSubspaceMetric,
    SmallSampleWarning,
    SVDSensitiveSubspaceMetric,
)
from skfair_audit.group import GroupDisparityAuditor
from skfair_audit.model_selection import FairModelSelector, SensitiveFeaturesAdapter
from skfair_audit.monitor import FairnessMonitor


def _public_estimators():
    found = set()
    for module in pkgutil.walk_packages(skfair_audit.__path__, "skfair_audit."):
        if any(part.startswith("_") for part in module.name.split(".")[1:]):
            continue
        namespace = importlib.import_module(module.name)
        for name in getattr(namespace, "__all__", ()):
            obj = getattr(namespace, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found.add(obj)
    return found


def manhattan(a, b):
    """A module-level distance (a lambda would not pickle in the common checks)."""
    return float(np.abs(a - b).sum())


def _selector():
    return FairModelSelector(
        LogisticRegression(),
        param_grid={"C": [1.0]},
        delta=1.0,  # ψ of the 0-1 loss lies in [0, 1]: every candidate passes
        protected=[0],
        cv=5,
        # The common checks' data are continuous, protected column 0 too: the nearest-neighbour
        # transport problem of the empirical space keeps every check fast.
        auditor=FaithAuditor(None, space="empirical", metric="euclidean", epsilon=0.0,
                             n_resamples=20),
        random_state=0,
    )


#: One instance per public estimator, as the common checks see it.
class _TakesSensitiveFeatures(LogisticRegression):
    """A classifier whose fit and predict take ``sensitive_features`` (as fairlearn's
    mitigators do) and ignore them."""

    def fit(self, X, y, sample_weight=None, *, sensitive_features=None):
        return super().fit(X, y, sample_weight=sample_weight)

    def predict(self, X, *, sensitive_features=None):
        return super().predict(X)


INSTANCES = {
    FaithAuditor: FaithAuditor(
        LogisticRegression(), space="empirical", n_resamples=50, random_state=0
    ),
    GroupDisparityAuditor: GroupDisparityAuditor(
        LogisticRegression(), protected=[0], groups="intervals", bins=3, n_resamples=50,
        random_state=0,
    ),
    FairModelSelector: _selector(),
    SensitiveFeaturesAdapter: SensitiveFeaturesAdapter(_TakesSensitiveFeatures(), protected=0),
    FairnessMonitor: FairnessMonitor(["a"]),
    EuclideanMetric: EuclideanMetric(),
    MahalanobisMetric: MahalanobisMetric(np.eye(3)),
    ProtectedEuclideanMetric: ProtectedEuclideanMetric([0]),
    # A fixed C (no cross-validation) keeps its checks fast.
    SensitiveSubspaceMetric: SensitiveSubspaceMetric([0], C=1.0, min_auc=None, cv=None),
    ExploreMetric: ExploreMetric(),
    SVDSensitiveSubspaceMetric: SVDSensitiveSubspaceMetric(),
    PrecomputedMetric: PrecomputedMetric(np.zeros((2, 2))),
    CallableMetric: CallableMetric(manhattan),
}


def _reason_for(reason, *checks):
    return dict.fromkeys(checks, reason)


# The checks that fit on their own random data (any width, labels 0..k) and then use the
# fitted object.
_DATA_CHECKS = (
    "check_estimators_dtypes", "check_fit_score_takes_y", "check_dtype_object",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input",
    "check_pipeline_consistency", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_dict_unchanged", "check_fit_idempotent",
    "check_n_features_in", "check_n_features_in_after_fitting", "check_fit2d_predict1d",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_positive_only_tag_during_fit",
)
# Those of them whose data happen to have the width of MahalanobisMetric's sigma pass.
_WIDTH_CHECKS = (
    "check_estimators_dtypes", "check_dtype_object", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_estimators_overwrite_params", "check_fit_idempotent",
    "check_n_features_in", "check_n_features_in_after_fitting", "check_fit2d_1sample",
    "check_fit2d_1feature", "check_positive_only_tag_during_fit", "check_fit_check_is_fitted",
    "check_transformers_unfitted_stateless",
)

#: Checks each estimator is expected to fail, by class name, with the reason (checked on
#: scikit-learn 1.6.1 and 1.9.1). Every check not listed passes.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "FairnessMonitor": _reason_for(
        "fit(X, y, y_pred) folds a batch of an audit trail (the protected columns by name with "
        "outcomes and predictions); the common checks call fit(X, y) on unnamed numeric arrays",
        *_DATA_CHECKS, "check_fit_check_is_fitted", "check_complex_data",
        "check_estimators_empty_data_messages", "check_estimators_nan_inf",
        "check_estimator_sparse_tag", "check_estimator_sparse_array",
        "check_estimator_sparse_matrix", "check_estimator_sparse_data",
    ),
    "MahalanobisMetric": _reason_for(
        "sigma fixes the number of features (3 here); the checks fit on data of other widths",
        *_WIDTH_CHECKS,
    ),
    "ExploreMetric": _reason_for(
        "fit learns from judged pairs: X holds the two individuals side by side (an even "
        "number of columns) and y is 0/1; the checks' data are not pairs",
        *_DATA_CHECKS, "check_estimators_nan_inf", "check_transformer_data_not_an_array",
        "check_transformer_general", "check_transformer_preserve_dtypes",
        "check_transformer_n_iter",
    ),
    "PrecomputedMetric": {
        **_reason_for(
            "fit takes the cells of a sample space, one row per row of the cost matrix (2 "
            "here); the checks' X have other numbers of rows",
            *_DATA_CHECKS, "check_fit_check_is_fitted", "check_complex_data",
            "check_estimators_empty_data_messages",
        ),
        **_reason_for(
            "X only gives the number of cells (len(X)); its values are not read, so NaN, "
            "infinite and sparse X are not refused",
            "check_estimators_nan_inf", "check_estimator_sparse_array",
            "check_estimator_sparse_matrix", "check_estimator_sparse_data",
        ),
    },
    "CallableMetric": _reason_for(
        "the rows go to the user's distance function as they are (any dtype, NaN and infinite "
        "values included): fit records their width and does not coerce them",
        "check_dtype_object", "check_estimators_nan_inf",
    ),
    "SensitiveSubspaceMetric": _reason_for(
        "max_iter caps the Newton steps of each of several logistic regressions (one per "
        "protected level and value of C); there is no single n_iter_",
        "check_transformer_n_iter",
    ),
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


def test_every_public_estimator_is_checked():
    assert _public_estimators() == set(INSTANCES)
    assert set(EXPECTED_FAILED_CHECKS) <= {cls.__name__ for cls in INSTANCES}


def _parametrize_with_checks(estimators, expected_failed_checks):
    """``parametrize_with_checks``, its checks in a list: scikit-learn 1.6 hands a generator
    to ``pytest.mark.parametrize``, which pytest 9 deprecates."""
    mark = parametrize_with_checks(estimators, expected_failed_checks=expected_failed_checks)
    names, checks = mark.args
    return pytest.mark.parametrize(names, list(checks), **mark.kwargs)


@_parametrize_with_checks(list(INSTANCES.values()), _expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # The checks fit on 10 to 100 rows: the audits warn that their intervals need more.
        warnings.simplefilter("ignore", SmallSampleWarning)
        check(estimator)


# --------------------------------------------------------------------------- constraints
def _init_parameters(cls):
    return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]


@pytest.mark.parametrize("cls", list(INSTANCES), ids=lambda cls: cls.__name__)
def test_every_parameter_has_constraints(cls):
    assert set(_init_parameters(cls)) == set(cls._parameter_constraints)


def _numeric_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 1] + rng.normal(size=n) > 0).astype(int)


def _fit_arguments(cls):
    """Valid ``fit`` arguments for the instance of ``cls`` in :data:`INSTANCES`."""
    X, y = _numeric_data()
    if cls is FairnessMonitor:
        return (pd.DataFrame({"a": np.where(y, "u", "v"), "y": y, "y_pred": y}),)
    if cls is ExploreMetric:
        return np.hstack([X, X + 0.1 + (1 - y)[:, None]]), y
    if cls is PrecomputedMetric:
        return (X[:2],)
    return X, y


#: One bad value per parameter of every public estimator.
BAD_VALUES = {
    FaithAuditor: {
        "estimator": "model", "features": 1.5, "protected": 1.5, "space": "bogus",
        "reference": 3, "metric": "bogus", "exponent": 0, "loss": "bogus", "epsilon": -1.0,
        "delta": "x", "method": "bogus", "m": 0, "numerical_step": -1.0, "n_resamples": 0,
        "confidence_level": 1.5, "allow_label_change": "yes", "frozen": 1.5, "forbidden": 3,
        "max_cells": 0, "memory_limit": "lots", "batch_size": 0, "random_state": "x",
        "n_jobs": "x", "verbose": -1,
    },
    GroupDisparityAuditor: {
        "estimator": "model", "metric": 3, "procedure": "bogus", "groups": "bogus",
        "protected": 1.5, "depth": 0, "min_size": -1, "bins": 0, "direction": "bogus",
        "degree": 9, "target": None, "alternative": "bogus", "alpha": 1.5, "q": 0.0,
        "epsilon0": "x", "scale": "bogus", "p_star": 2.0, "w0": -1.0, "se": "bogus",
        "pos_label": [1], "response_method": "bogus", "threshold": "x",
        "drop_protected": "yes", "n_resamples": 0, "batch_size": 0, "random_state": "x",
        "n_jobs": "x", "verbose": -1, "bandwidth": -1.0, "procedure_params": ["shift"],
        "memory_limit": "lots",
    },
    FairModelSelector: {
        "estimator": "model", "param_grid": "C", "delta": -0.1, "criterion": "group",
        "protected": 1.5, "cv": 1,
        "auditor": {"epsilon": 0.0}, "on_none": "ignore", "refit": "yes",
        "random_state": "x", "n_jobs": "x", "verbose": -1,
    },
    SensitiveFeaturesAdapter: {"estimator": "model", "protected": 1.5, "random_state": "x"},
    FairnessMonitor: {
        "protected": 3, "label": 3, "prediction": 3, "metric": 3, "pos_label": [1],
        "target": None, "alternative": "bogus", "epsilon0": "x", "procedure": "bogus",
        "alpha": 1.5, "q": 0.0, "method": "bogus", "depth": 0, "levels": ["u", "v"],
        "grid": 3.0, "new_level_share": 1.0, "grid_size": 5, "paired": "yes",
        "paired_bet": "bogus", "model_id": 3,
    },
    EuclideanMetric: {"columns": [0.5], "exponent": 0},
    MahalanobisMetric: {"sigma": 3.0, "exponent": -1.0},
    ProtectedEuclideanMetric: {"protected_columns": "a", "standardize": "yes", "exponent": 0},
    SensitiveSubspaceMetric: {
        "protected_columns": 1.5, "min_auc": 0.4, "significance": 0.6, "n_components": 0,
        "standardize": "yes", "C": 0.0, "Cs": 0, "cv": 1, "cv_max_samples": 0,
        "exponent": float("inf"), "max_iter": 0,
    },
    ExploreMetric: {"exponent": "2", "max_iter": 0, "tol": 0.0},
    SVDSensitiveSubspaceMetric: {"n_components": 1.5, "exponent": 0},
    PrecomputedMetric: {"cost": 3.0},
    CallableMetric: {"func": "manhattan", "exponent": 0},
}


def clone_instance(cls, **params):
    return clone(INSTANCES[cls]).set_params(**params)


def test_bad_value_table_covers_every_parameter():
    assert set(BAD_VALUES) == set(INSTANCES)
    for cls, bad in BAD_VALUES.items():
        assert set(bad) == set(_init_parameters(cls)), cls.__name__


@pytest.mark.parametrize("cls", list(INSTANCES), ids=lambda cls: cls.__name__)
def test_valid_fit_arguments(cls):
    """The fit data of the bad-value test are valid: the errors below come from the values."""
    estimator = clone_instance(cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        assert estimator.fit(*_fit_arguments(cls)) is estimator


@pytest.mark.parametrize(
    ("cls", "name", "value"),
    [(cls, name, value) for cls, bad in BAD_VALUES.items() for name, value in bad.items()],
    ids=lambda v: v.__name__ if inspect.isclass(v) else None,
)
def test_bad_value_fails_in_fit(cls, name, value):
    estimator = clone_instance(cls, **{name: value})
    with pytest.raises(ValueError, match=rf"^{name}\b") as error:
        estimator.fit(*_fit_arguments(cls))
    if name != "memory_limit":  # parsed by the resampling engine, with the accepted units
        # the declarative check's InvalidParameterError, a ValueError and a TypeError
        assert type(error.value).__name__ == "InvalidParameterError"
        assert isinstance(error.value, TypeError)
        assert f"(in {type(estimator).__name__})" in str(error.value)
