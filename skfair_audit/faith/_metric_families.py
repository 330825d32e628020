"""More fair-metric families, in the style of :mod:`skfair_audit.faith._metric`.

- :class:`ProtectedEuclideanMetric`: the Euclidean distance that ignores the protected
  attributes (changing them is free, nothing else is).
- :class:`ExploreMetric`: EXPLORE, a Mahalanobis metric learned from pairs of individuals judged
  comparable or not (Mukherjee, Yurochkin, Banerjee & Sun, ICML 2020).
- :class:`SVDSensitiveSubspaceMetric`: the sensitive subspace spanned by the principal
  directions of the variation inside groups of comparable individuals (Yurochkin, Bower & Sun,
  ICLR 2020, App. B.2).

All are linear maps followed by the Euclidean distance (``transform``), so the audit's
nearest-neighbour and diagnostic machinery applies to them. Fit them on your side information
and pass them to :class:`FaithAuditor` in a :class:`~sklearn.frozen.FrozenEstimator`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_array, check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._utils import BOOLEAN, POSITIVE_INT, Interval
from ._metric import (
    EXPONENT,
    PROTECTED_COLUMNS,
    _check_weight,
    _complement_projector,
    _LinearMapMetric,
    _orthonormal_row_basis,
    _protected_groups,
    _psd_sqrt,
    _split_columns,
)
from ._metric_learning import (
    check_n_components,
    column_scale,
    explore_sigma,
    leading_components,
    within_group_components,
)

__all__ = ["ExploreMetric", "ProtectedEuclideanMetric", "SVDSensitiveSubspaceMetric"]


class ProtectedEuclideanMetric(_LinearMapMetric):
    r"""Euclidean distance on the non-protected features: changing protected ones is free.

    .. math::

        d(x, x')^2 = \sum_{j \notin P} \Bigl(\frac{x_j - x'_j}{s_j}\Bigr)^2,

    with :math:`P` the protected columns and :math:`s_j = 1` (or the standard deviations, with
    ``standardize=True``). It is the sensitive-subspace metric without learned directions:
    only the protected coordinates are sensitive, proxies are not. The cost is
    :math:`d^p` with ``p = exponent``.

    Parameters
    ----------
    protected_columns : int, sequence of int, or sequence of sequences of int
        Protected attributes as column indices (one-hot groups as lists), as for
        :class:`SensitiveSubspaceMetric`.
    standardize : bool, default=False
        Divide each column by its standard deviation in the training data (1 for constant
        columns), so that the cost is in squared standard deviations as for the default
        :class:`SensitiveSubspaceMetric`.
    exponent : float, default=2
        Power ``p`` of the distance in the cost.

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,)
    columns_ : ndarray of int
        The non-protected columns the distance looks at.
    protected_groups_ : list of list of int
    n_features_in_ : int

    References
    ----------
    .. [1] IBM inFairness, ``ProtectedEuclideanDistance``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith import ProtectedEuclideanMetric
    >>> X = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 5.0]])
    >>> metric = ProtectedEuclideanMetric(protected_columns=[0]).fit(X)
    >>> metric.cost_matrix(X)            # only column 2 differs once column 0 is ignored
    array([[0., 9.],
           [9., 0.]])
    """

    _parameter_constraints = {
        "protected_columns": [PROTECTED_COLUMNS], "standardize": [BOOLEAN], "exponent": EXPONENT,
    }

    def __init__(self, protected_columns, *, standardize=False, exponent=2):
        self.protected_columns = protected_columns
        self.standardize = standardize
        self.exponent = exponent

    def fit(self, X, y=None, sample_weight=None):
        """Record the columns (and their scales, with ``standardize=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the standard deviations.

        Returns
        -------
        self : ProtectedEuclideanMetric
        """
        self._check_params()
        X = validate_data(self, X, reset=True, dtype=np.float64)
        weight = _check_weight(sample_weight, X.shape[0])
        groups = _protected_groups(self.protected_columns, X.shape[1])
        _, self.columns_ = _split_columns(groups, X.shape[1])
        self.scale_ = column_scale(X, weight, self.standardize)
        self.protected_groups_ = groups
        return self

    def transform(self, X):
        """The non-protected columns, divided by ``scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_non_protected_columns)
        """
        X = self._fitted_points(X, "columns_")
        return X[:, self.columns_] / self.scale_[self.columns_]


class ExploreMetric(_LinearMapMetric):
    r"""EXPLORE: a fair metric learned from pairs judged comparable or not.

    EXPLORE (Mukherjee, Yurochkin, Banerjee & Sun 2020, §2.2) models a human judgement of a pair
    of individuals as comparable with probability

    .. math::

        P(y = 1 \mid x_1, x_2) = \frac{2}{1 + \exp\bigl((x_1 - x_2)^\top \Sigma\,
        (x_1 - x_2)\bigr)},

    so close pairs are comparable and distant ones are not, and estimates the positive
    semi-definite :math:`\Sigma` by maximum likelihood (a convex problem, solved here by
    accelerated projected gradient). The fair metric is :math:`d(x, x')^2 = (x - x')^\top
    \Sigma (x - x')`; the cost is :math:`d^p` with ``p = exponent``.

    Parameters
    ----------
    exponent : float, default=2
        Power ``p`` of the distance in the cost.
    max_iter : int, default=2000
        Iterations of the projected gradient.
    tol : float, default=1e-8
        Relative change of :math:`\Sigma` at which to stop.

    Attributes
    ----------
    sigma_ : ndarray of shape (n_features, n_features)
        The estimated :math:`\Sigma`.
    n_iter_ : int
    converged_ : bool
        Whether the iterations stopped at ``tol``; when not, ``fit`` warns with
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    n_features_in_ : int
        Number of features of **one** individual (half the width of the ``X`` given to
        ``fit``).

    Notes
    -----
    ``fit(X, y)`` takes the pairs side by side, ``X = np.hstack([X1, X2])`` of shape
    ``(n_pairs, 2 * n_features)``, and ``y`` the judgements (1 = comparable). Build the pairs
    from your side information (e.g. a case worker's judgements); the features must be in the
    same coordinates as the points whose costs are computed (e.g. ``space.encode(...)``).
    Directions along which no judged pair differs are not identified: :math:`\Sigma` keeps its
    starting value there (a multiple of the identity). Pairs of identical individuals carry no
    information (the model calls them comparable with probability 1); those judged
    incomparable are left out with a warning. Pass the fitted metric to
    :class:`FaithAuditor` in a :class:`~sklearn.frozen.FrozenEstimator`.

    References
    ----------
    .. [1] D. Mukherjee, M. Yurochkin, M. Banerjee and Y. Sun, "Two simple ways to learn
       individual fairness metrics from data", ICML 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith import ExploreMetric
    >>> rng = np.random.default_rng(0)
    >>> X1 = rng.normal(size=(2000, 2))
    >>> X2 = rng.normal(size=(2000, 2))
    >>> d2 = 2.0 * (X1[:, 0] - X2[:, 0]) ** 2        # the judge only cares about feature 0
    >>> y = rng.random(2000) < 2 / (1 + np.exp(d2))
    >>> metric = ExploreMetric().fit(np.hstack([X1, X2]), y)
    >>> np.round(metric.sigma_, 1)
    array([[ 2., -0.],
           [-0.,  0.]])
    """

    _parameter_constraints = {
        "exponent": EXPONENT, "max_iter": [POSITIVE_INT],
        "tol": [Interval("real", 0, None, closed="neither")],
    }

    def __init__(self, *, exponent=2, max_iter=2000, tol=1e-8):
        self.exponent = exponent
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        """Estimate :math:`\\Sigma` from judged pairs.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2 * n_features)
            The two individuals of each pair side by side.
        y : array-like of shape (n_pairs,)
            1 (or True) when the pair was judged comparable, 0 otherwise; both must occur.

        Returns
        -------
        self : ExploreMetric
        """
        self._check_params()
        if y is None:
            raise ValueError(
                "ExploreMetric is learned from judged pairs: fit(np.hstack([X1, X2]), y) with "
                "y = 1 for comparable pairs. Fit it on your pairs and pass it to FaithAuditor "
                "as FrozenEstimator(metric)."
            )
        X = check_array(X, dtype=np.float64, input_name="X")
        y = np.asarray(y).ravel()
        if X.shape[1] % 2:
            raise ValueError(
                f"X must hold the pairs side by side (an even number of columns), got "
                f"{X.shape[1]} columns."
            )
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have one judgement per pair ({X.shape[0]}), got {y.shape}.")
        values = np.unique(y)
        if not np.isin(values, (0, 1)).all():
            raise ValueError(f"y must be 0/1 (or bool) judgements, got values {values[:5]}.")
        comparable = y.astype(bool)
        if comparable.all() or not comparable.any():
            raise ValueError("y must contain both comparable (1) and incomparable (0) pairs.")
        half = X.shape[1] // 2
        differences = X[:, :half] - X[:, half:]
        # Pairs of identical individuals are at distance 0 under every metric: the model calls
        # them comparable with probability 1, so they carry no information about Sigma, and an
        # incomparable one would make the likelihood 0 whatever Sigma is.
        identical = ~np.any(differences != 0, axis=1)
        contradictions = int(np.count_nonzero(identical & ~comparable))
        if contradictions:
            warnings.warn(
                f"{contradictions} pairs of identical individuals are judged incomparable; no "
                "metric can separate them, so they are left out of the EXPLORE fit.",
                UserWarning,
                stacklevel=2,
            )
        differences, comparable = differences[~identical], comparable[~identical]
        if comparable.all() or not comparable.any():
            raise ValueError(
                "after leaving out pairs of identical individuals, y must still contain both "
                "comparable and incomparable pairs."
            )
        # Small dense products in a loop: a multi-threaded BLAS only adds contention.
        with threadpool_limits(limits=1, user_api="blas"):
            sigma, n_iter, converged = explore_sigma(
                differences, comparable, max_iter=self.max_iter, tol=self.tol
            )
        if not converged:
            warnings.warn(
                f"EXPLORE stopped after max_iter={self.max_iter} iterations before the relative "
                f"change of Sigma fell below tol={self.tol:g}: increase max_iter (or tol), or "
                "standardise the features of the pairs.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.sigma_ = sigma
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_features_in_ = half
        return self

    def transform(self, X):
        """Map points by the PSD square root of ``sigma_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "sigma_")
        X = check_array(X, dtype=np.float64, input_name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features but the metric was fitted on pairs of "
                f"{self.n_features_in_} features."
            )
        return X @ _psd_sqrt(self.sigma_)


class SVDSensitiveSubspaceMetric(_LinearMapMetric):
    r"""Sensitive subspace from groups of comparable individuals (SenSR, App. B.2).

    The individuals of a group are comparable: whatever distinguishes them is irrelevant to the
    task. The leading right singular vectors of the rows centred at their group means span the
    *sensitive subspace* :math:`A`, and

    .. math::

        d(x, x')^2 = (x - x')^\top (I - P_A) (x - x') ,

    so moves along the directions in which comparable individuals differ are free. The cost is
    :math:`d^p` with ``p = exponent``.

    Parameters
    ----------
    n_components : int or float in (0, 1], default=1
        An int keeps that many leading directions; a float the fewest whose squared singular
        values reach that share of the total.
    exponent : float, default=2
        Power ``p`` of the distance in the cost.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal rows spanning the sensitive subspace.
    explained_share_ : ndarray of shape (n_components,)
        Share of the within-group variation along each component.
    projector_ : ndarray of shape (n_features, n_features)
        :math:`I - P_A`.
    n_features_in_ : int

    Notes
    -----
    ``fit(X, y)`` takes the group of each row as ``y`` (any labels; rows sharing a label are
    comparable; groups of one row carry no information). For example, names of people that
    differ only in their gender in word-embedding space (SenSR), or individuals matched on
    every legitimate feature.

    References
    ----------
    .. [1] M. Yurochkin, A. Bower and Y. Sun, "Training individually fair ML models with
       sensitive subspace robustness", ICLR 2020, App. B.2.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith import SVDSensitiveSubspaceMetric
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 5.0], [1.0, 5.0]])
    >>> groups = [0, 0, 1, 1]     # within a group only feature 0 changes
    >>> metric = SVDSensitiveSubspaceMetric().fit(X, groups)
    >>> np.abs(metric.components_)
    array([[1., 0.]])
    >>> metric.cost_matrix([[0.0, 0.0]], [[7.0, 2.0]])    # feature 0 is free
    array([[4.]])
    """

    _parameter_constraints = {
        "n_components": [POSITIVE_INT, Interval("real", 0, 1, closed="right")],
        "exponent": EXPONENT,
    }

    def __init__(self, n_components=1, *, exponent=2):
        self.n_components = n_components
        self.exponent = exponent

    def fit(self, X, y, sample_weight=None):
        """Learn the sensitive subspace from groups of comparable individuals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Group of each row.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self : SVDSensitiveSubspaceMetric
        """
        self._check_params()
        if y is None:
            raise ValueError(
                "SVDSensitiveSubspaceMetric needs the groups of comparable individuals: "
                "fit(X, groups). Fit it on your groups and pass it to FaithAuditor as "
                "FrozenEstimator(metric)."
            )
        n_components = check_n_components(self.n_components, allow_none=False)
        X, groups = validate_data(self, X, y, reset=True, dtype=np.float64, y_numeric=False,
                                  ensure_min_samples=2)
        weight = _check_weight(sample_weight, X.shape[0])
        singular, vt = within_group_components(X, groups, weight)
        n_keep, share = leading_components(singular, n_components, X.shape)
        if n_keep == 0:
            raise ValueError(
                "the groups show no variation (every group has one row, or its rows are "
                "identical): there is no sensitive direction to learn."
            )
        components = _orthonormal_row_basis(vt[:n_keep])
        self.components_ = components
        self.explained_share_ = share[:n_keep]
        self.projector_ = _complement_projector(components)
        return self

    def transform(self, X):
        """Project points off the sensitive subspace: ``X @ projector_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
        """
        X = self._fitted_points(X, "projector_")
        return X @ self.projector_

    def _sensitive_components(self):
        """The learned free directions, each its own source (for the diagnostics)."""
        check_is_fitted(self, "projector_")
        records = [
            {"source": f"within-group component {k + 1} ({share:.0%} of the variation)",
             "auc": float("nan")}
            for k, share in enumerate(self.explained_share_)
        ]
        return self.components_, records
