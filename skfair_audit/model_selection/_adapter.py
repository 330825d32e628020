"""Fairness-aware estimators that need ``sensitive_features`` (fairlearn's mitigators) as
ordinary classifiers: their sensitive features are columns of ``X``."""

from __future__ import annotations

import inspect
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import accuracy_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils import (
    COLUMN_LIST,
    RANDOM_STATE,
    STRING,
    Interval,
    Predicate,
    check_params,
    int_seed,
)

__all__ = ["SensitiveFeaturesAdapter"]


def _accepts(method, name):
    """Whether ``method`` has a parameter called ``name`` (not only ``**kwargs``)."""
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


class SensitiveFeaturesAdapter(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    r"""A classifier that hands its estimator the protected columns of ``X`` as
    ``sensitive_features``, at ``fit`` and at prediction.

    fairlearn's mitigators (:class:`fairlearn.postprocessing.ThresholdOptimizer`,
    :class:`fairlearn.reductions.ExponentiatedGradient`, ...) take the sensitive features as
    an argument of ``fit`` (and ``ThresholdOptimizer`` of ``predict``). Wrapped here they are
    plain classifiers of ``X``: they fit in ``GridSearchCV`` and :class:`FairModelSelector`
    folds (each fold's rows carry their own protected values), and every audit that
    predicts on rows of ``X`` (the group audits, and FaiTH's counterfactual rows whose
    protected values were changed) passes the protected values of *those* rows.

    Parameters
    ----------
    estimator : estimator
        Fitted as ``estimator.fit(X, y, sensitive_features=S, **fit_params)`` with ``S`` the
        ``protected`` columns of ``X`` (a Series for one column, a DataFrame for several; an
        array when ``X`` is one). ``X`` is passed whole: drop the protected columns in the
        inner model's pipeline if it must not see them.
    protected : str, int or list of str or int
        The protected columns of ``X`` (names with a DataFrame, or positions).
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
        Passed (as an int drawn once in :meth:`fit`) to the estimator's ``predict`` when it
        takes one: the predictions of a randomized mitigator (``ThresholdOptimizer``) are
        then the same at every call. ``None``: new draws at every call.

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone.
    classes_ : ndarray
    predict_seed_ : int or None
        The seed given to the estimator's ``predict``.

    Notes
    -----
    Why not scikit-learn's metadata routing (``set_fit_request(sensitive_features=True)``)?
    It routes the sensitive features of a fold to ``fit``, but a scorer calls
    ``estimator.predict(X)`` without metadata, and a fairness audit predicts on rows whose
    protected values it changed (FaiTH) or on groups it builds from ``X``: the protected
    values must travel with the rows, i.e. be read from ``X``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.base import BaseEstimator, ClassifierMixin
    >>> from skfair_audit.model_selection import SensitiveFeaturesAdapter
    >>> class GroupMajority(ClassifierMixin, BaseEstimator):   # a toy "mitigator"
    ...     def fit(self, X, y, *, sensitive_features):
    ...         s = np.asarray(sensitive_features)
    ...         self.classes_ = np.unique(y)
    ...         self.vote_ = {g: int(np.mean(y[s == g]) > 0.5) for g in np.unique(s)}
    ...         return self
    ...     def predict(self, X, *, sensitive_features):
    ...         return np.array([self.vote_[g] for g in np.asarray(sensitive_features)])
    >>> X = pd.DataFrame({"group": ["a", "a", "b", "b"], "x": [0.0, 1.0, 2.0, 3.0]})
    >>> y = np.array([1, 1, 0, 1])
    >>> model = SensitiveFeaturesAdapter(GroupMajority(), protected="group").fit(X, y)
    >>> model.predict(X).tolist()
    [1, 1, 0, 0]
    """

    _parameter_constraints = {
        "estimator": [Predicate(lambda e: hasattr(e, "fit"), "an estimator (with fit)")],
        "protected": [STRING, Interval("integral"), COLUMN_LIST],
        "random_state": [RANDOM_STATE],
    }

    def __init__(self, estimator, *, protected, random_state=None):
        self.estimator = estimator
        self.protected = protected
        self.random_state = random_state

    def _sensitive(self, X):
        columns = self.protected
        single = isinstance(columns, str | numbers.Integral)
        columns = [columns] if single else list(columns)
        if hasattr(X, "columns"):
            unknown = [c for c in columns if c not in X.columns]
            if unknown:
                raise ValueError(f"protected columns {unknown} are not columns of X.")
            return X[columns[0]] if len(columns) == 1 else X[columns]
        if not all(isinstance(c, numbers.Integral) for c in columns):
            raise ValueError("protected names columns: X must be a DataFrame (or give "
                             "positions).")
        array = np.asarray(X)
        return array[:, columns[0]] if len(columns) == 1 else array[:, columns]

    def fit(self, X, y, **fit_params):
        """Fit a clone of the estimator with the protected columns as ``sensitive_features``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Other parameters of the estimator's ``fit``.

        Returns
        -------
        self : SensitiveFeaturesAdapter
        """
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)
        # Checked (shape, emptiness, NaN labels; n_features_in_, feature_names_in_) but
        # passed on as given: the estimator may want the DataFrame and its dtypes.
        _, y_checked = validate_data(self, X, y, reset=True, dtype=None,
                                     ensure_all_finite=False)
        check_classification_targets(y_checked)
        self.estimator_ = clone(self.estimator).fit(
            X, y, sensitive_features=self._sensitive(X), **fit_params)
        classes = getattr(self.estimator_, "classes_", None)
        self.classes_ = np.unique(y_checked) if classes is None else np.asarray(classes)
        self.predict_seed_ = None if self.random_state is None else int_seed(self.random_state)
        return self

    def predict(self, X):
        """Predictions of the estimator, with the protected columns of these rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        validate_data(self, X, reset=False, dtype=None, ensure_all_finite=False)
        method = self.estimator_.predict
        kwargs = {}
        if _accepts(method, "sensitive_features"):
            kwargs["sensitive_features"] = self._sensitive(X)
        if _accepts(method, "random_state") and self.predict_seed_ is not None:
            kwargs["random_state"] = self.predict_seed_
        return np.asarray(method(X, **kwargs))

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on ``(X, y)``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))
