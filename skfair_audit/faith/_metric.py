"""Fair metrics: the transport cost between cells of a FaiTH sample space.

A fair metric says which individuals are similar. FaiTH needs it only through the cost matrix
``C[i, j] = c(z_i, z_j)`` between the cells of the sample space, evaluated on the numeric encoding
of the cells' features (see :meth:`GridSpace.encoded_features`). Every metric here is a small
scikit-learn estimator (``get_params``/``clone`` work, ``__init__`` only stores parameters) with

- ``fit(X, y=None)`` returning ``self`` (learns the metric, or is a no-op for fixed metrics),
- ``cost_matrix(A, B=None)`` returning the ``(len(A), len(B))`` matrix of costs, non-negative,
  with exact zeros on the diagonal when ``B`` is None,
- ``transform(X)`` for the metrics that are a linear map followed by the Euclidean distance.

Costs are ``d(x, x')**exponent``; the default exponent 2 gives the squared distance, the cost of
the 2-Wasserstein distance used by Xue, Yurochkin and Sun (2020).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

__all__ = [
    "CallableMetric",
    "EuclideanMetric",
    "MahalanobisMetric",
    "PrecomputedMetric",
    "SensitiveSubspaceMetric",
    "check_cost_matrix",
]

# Squared distances are computed as |a|^2 + |b|^2 - 2 a.b (POT, sklearn); below this multiple of
# the rounding error of that formula a value cannot be told apart from zero.
_ROUNDING_FACTOR = 64.0


def check_cost_matrix(cost, n_cells=None, *, name="cost"):
    """Validate a transport cost matrix between the cells of a sample space.

    Parameters
    ----------
    cost : array-like of shape (n_cells, n_cells)
        ``cost[i, j]`` is the cost of moving mass from cell ``i`` to cell ``j``. Entries must be
        non-negative, the diagonal must be zero, NaN is not allowed and ``np.inf`` marks a
        forbidden move.
    n_cells : int or None, default=None
        Expected number of cells; None accepts any square matrix.
    name : str, default="cost"
        Name used in error messages.

    Returns
    -------
    cost : ndarray of shape (n_cells, n_cells), dtype float64
        A new validated array.

    Raises
    ------
    ValueError
        If the matrix is not square, has the wrong size, contains NaN or negative values, or has
        a non-zero diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import check_cost_matrix
    >>> check_cost_matrix([[0, 1], [np.inf, 0]], 2)
    array([[ 0.,  1.],
           [inf,  0.]])
    >>> check_cost_matrix([[0, -1], [1, 0]], 2)
    Traceback (most recent call last):
    ...
    ValueError: cost has 1 negative entries (smallest -1.0); costs must be >= 0.
    """
    cost = np.array(cost, dtype=np.float64, copy=True)
    if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix, got shape {cost.shape}.")
    if n_cells is not None and cost.shape[0] != n_cells:
        raise ValueError(
            f"{name} has shape {cost.shape} but the sample space has {n_cells} cells; "
            f"expected ({n_cells}, {n_cells}) in the sample space's cell order."
        )
    n_nan = int(np.isnan(cost).sum())
    if n_nan:
        raise ValueError(
            f"{name} contains {n_nan} NaN entries; use np.inf to forbid a move."
        )
    negative = cost < 0
    if negative.any():
        raise ValueError(
            f"{name} has {int(negative.sum())} negative entries (smallest {cost.min()}); "
            "costs must be >= 0."
        )
    diagonal = np.diagonal(cost)
    if np.any(diagonal != 0):
        bad = np.flatnonzero(diagonal != 0)
        raise ValueError(
            f"{name} must have a zero diagonal (staying in a cell is free); non-zero at cells "
            f"{bad[:10].tolist()}{' ...' if bad.size > 10 else ''}."
        )
    return cost


def _check_exponent(exponent):
    if (
        not isinstance(exponent, numbers.Real)
        or isinstance(exponent, bool)
        or not np.isfinite(exponent)
        or exponent <= 0
    ):
        raise ValueError(f"exponent must be a positive finite number, got {exponent!r}.")
    return float(exponent)


def _check_points(X, name):
    X = check_array(X, dtype=np.float64, ensure_all_finite=True, input_name=name)
    return X


def _finish_square(cost, square):
    """Clip floating-point negatives and zero the diagonal of a pairwise cost matrix."""
    np.maximum(cost, 0.0, out=cost)
    if square:
        np.fill_diagonal(cost, 0.0)
    return cost


def _squared_distances(A, B):
    """Pairwise squared Euclidean distances with rounding noise snapped to exact zero."""
    import ot

    squared = np.asarray(ot.dist(A, B, metric="sqeuclidean"), dtype=np.float64)
    squared[_rounding_zeros(
        squared, np.einsum("ij,ij->i", A, A)[:, None], np.einsum("ij,ij->i", B, B)[None, :]
    )] = 0.0
    return squared


def _rounding_zeros(squared, sq_norms_a, sq_norms_b):
    """Where a squared distance cannot be told apart from 0: the one rule of every cost path.

    Cancellation in ``|a|^2 + |b|^2 - 2 a.b`` leaves ``~eps (|a|^2 + |b|^2)`` of noise where the
    true distance is 0 (e.g. two cells that differ only along sensitive directions); the audit
    treats zero-cost moves specially, so such noise is set to an exact 0. The dense cost matrix
    and the nearest-neighbour construction (:mod:`._nearest`) both apply this test.
    """
    return squared <= _ROUNDING_FACTOR * np.finfo(np.float64).eps * (sq_norms_a + sq_norms_b)


def _power_of_distance(squared, exponent):
    """``d**exponent`` from squared distances ``d**2`` (exact for the default exponent 2)."""
    if exponent == 2.0:
        return squared
    if exponent == 1.0:
        return np.sqrt(squared)
    return np.sqrt(squared) ** exponent


class _LinearMapMetric(BaseEstimator):
    """Cost ``|T(x) - T(x')|**exponent`` for a linear map ``T``; subclasses define ``transform``."""

    def cost_matrix(self, A, B=None):
        """Pairwise costs ``d(a_i, b_j) ** exponent``.

        Parameters
        ----------
        A : array-like of shape (n_a, n_features)
            Numeric points, e.g. the encoded features of the sample-space cells.
        B : array-like of shape (n_b, n_features), default=None
            Second set of points; None means ``B = A`` (then the diagonal is exactly zero).

        Returns
        -------
        cost : ndarray of shape (n_a, n_b)
            Non-negative costs; entries below the floating-point resolution of the distance
            computation are exact zeros.
        """
        exponent = _check_exponent(self.exponent)
        TA = self.transform(A)
        TB = TA if B is None else self.transform(B)
        cost = _power_of_distance(_squared_distances(TA, TB), exponent)
        return _finish_square(cost, B is None)


class SensitiveSubspaceMetric(_LinearMapMetric):
    r"""Fair metric that ignores the sensitive subspace (SenSR, Yurochkin et al. 2020).

    For each protected attribute a logistic regression predicts the attribute from the
    non-protected features; its coefficient vector (zero at the protected coordinates) is a
    *sensitive direction*, along which individuals differ mostly by their protected attribute.
    The protected coordinates' own unit vectors :math:`e_j` are sensitive directions too. With
    :math:`A` the matrix of these directions and :math:`P_A` the orthogonal projector onto their
    span,

    .. math::

        d_x(x, x')^2 = (x - x')^\top \Sigma (x - x'), \qquad \Sigma = I - P_A ,

    so two individuals who differ only along sensitive directions are at distance 0. The cost
    is :math:`d_x(x, x')^p` with ``p = exponent``.

    Parameters
    ----------
    protected_columns : int, sequence of int, or sequence of sequences of int
        Protected attributes as column indices of the numeric feature matrix. An int is one
        attribute held in a single column (e.g. a 0/1 indicator); a list of ints inside the
        sequence is one attribute spread over several one-hot columns (use
        :meth:`GridSpace.encoded_columns` to get these groups). Example: ``[[0, 1], [2, 3, 4]]``
        for sex (2 one-hot columns) and race (3 one-hot columns); ``[0, 5]`` for two binary
        columns.
    C : float, default=1.0
        Inverse regularisation strength of the logistic regressions.
    exponent : float, default=2
        Power ``p`` of the distance in the cost ``d(x, x')**p``.
    max_iter : int, default=1000
        Iterations of the ``lbfgs`` solver of each logistic regression.

    Attributes
    ----------
    sensitive_directions_ : ndarray of shape (n_directions, n_features)
        Orthonormal basis (rows) of the sensitive subspace.
    sigma_ : ndarray of shape (n_features, n_features)
        The projector :math:`\Sigma = I - P_A` (symmetric, idempotent).
    coef_directions_ : ndarray of shape (n_coef, n_features)
        The fitted logistic-regression coefficient vectors embedded in the full coordinate space
        (zeros at the protected coordinates), one per binary problem.
    protected_groups_ : list of list of int
        The protected attributes as groups of column indices.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    A single-column attribute with two values gives one logistic regression; an attribute with
    more than two observed levels (a one-hot group, or a single column with several values)
    gives one one-vs-rest regression per level. For a one-hot group the level of a row is the
    column holding its largest value; rows with all zeros (a dropped reference level) form a
    level of their own. An attribute that is constant in the training data has no regression
    (a warning is issued) but its coordinates are still sensitive.

    The basis of the span is computed from an SVD of the unit-normalised directions with the
    rank tolerance of :func:`numpy.linalg.matrix_rank`; :math:`(A^\top A)^{-1}` is never
    formed. Because :math:`\Sigma` is a projector, :math:`\Sigma^{1/2} = \Sigma` and
    ``transform(X) = X @ sigma_``.

    The metric must be learned on data that is disjoint from the audit sample.

    References
    ----------
    .. [1] M. Yurochkin, A. Bower and Y. Sun, "Training individually fair ML models with
       sensitive subspace robustness", ICLR 2020.
    .. [2] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import SensitiveSubspaceMetric
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, size=200)
    >>> proxy = group + rng.normal(scale=0.5, size=200)     # correlated with the group
    >>> other = rng.normal(size=200)
    >>> X = np.column_stack([group, proxy, other])
    >>> metric = SensitiveSubspaceMetric(protected_columns=[0]).fit(X)
    >>> metric.sensitive_directions_.shape
    (2, 3)
    >>> a, b = np.array([[1.0, 0.3, 0.2]]), np.array([[0.0, 0.3, 0.2]])
    >>> metric.cost_matrix(a, b)          # flipping the group alone is free
    array([[0.]])
    """

    def __init__(self, protected_columns, *, C=1.0, exponent=2, max_iter=1000):
        self.protected_columns = protected_columns
        self.C = C
        self.exponent = exponent
        self.max_iter = max_iter

    def fit(self, X, y=None, sample_weight=None):
        """Learn the sensitive subspace from training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric training features in the same coordinates as the points whose costs will be
            computed (e.g. ``space.encode(X_train)``). Must be disjoint from the audit data.
        y : None
            Ignored; present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights passed to the logistic regressions.

        Returns
        -------
        self : SensitiveSubspaceMetric
        """
        X = validate_data(self, X, reset=True, dtype=np.float64, ensure_min_samples=2)
        n_features = X.shape[1]
        groups = _protected_groups(self.protected_columns, n_features)
        protected = sorted({j for group in groups for j in group})
        unprotected = np.setdiff1d(np.arange(n_features), protected)

        coef_directions = []
        for group in groups:
            levels = _attribute_levels(X[:, group])
            observed = np.unique(levels)
            if observed.size < 2:
                warnings.warn(
                    f"protected attribute in columns {group} is constant in the training data; "
                    "no logistic regression is fitted for it (only its own coordinates are "
                    "sensitive).",
                    UserWarning,
                    stacklevel=2,
                )
                continue
            if unprotected.size == 0:
                continue
            # Two levels: one binary problem; more: one-vs-rest, one coefficient vector per level.
            targets = observed[1:] if observed.size == 2 else observed
            for level in targets:
                model = LogisticRegression(C=self.C, max_iter=self.max_iter)
                model.fit(X[:, unprotected], levels == level, sample_weight=sample_weight)
                direction = np.zeros(n_features)
                direction[unprotected] = model.coef_.ravel()
                coef_directions.append(direction)

        unit_vectors = np.eye(n_features)[protected]
        directions = np.vstack([*coef_directions, unit_vectors]) if protected else np.empty(
            (0, n_features)
        )
        basis = _orthonormal_row_basis(directions)
        sigma = np.eye(n_features) - basis.T @ basis
        self.sigma_ = (sigma + sigma.T) / 2.0
        self.sensitive_directions_ = basis
        self.coef_directions_ = (
            np.vstack(coef_directions) if coef_directions else np.empty((0, n_features))
        )
        self.protected_groups_ = groups
        return self

    def transform(self, X):
        """Map points to coordinates where the fair metric is Euclidean: ``X @ sigma_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "sigma_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.sigma_


def _protected_groups(protected_columns, n_features):
    """Normalise ``protected_columns`` to a list of lists of column indices."""
    if isinstance(protected_columns, numbers.Integral):
        protected_columns = [protected_columns]
    if not isinstance(protected_columns, Sequence | np.ndarray) or isinstance(
        protected_columns, str
    ):
        raise ValueError(
            "protected_columns must be an int, a list of ints or a list of lists of ints, "
            f"got {protected_columns!r}."
        )
    groups = []
    for item in protected_columns:
        group = [item] if isinstance(item, numbers.Integral) else list(item)
        if not group or not all(isinstance(j, numbers.Integral) for j in group):
            raise ValueError(
                "each protected attribute must be a column index or a non-empty list of column "
                f"indices, got {item!r}."
            )
        group = [int(j) for j in group]
        bad = [j for j in group if not 0 <= j < n_features]
        if bad:
            raise ValueError(
                f"protected column indices {bad} are out of range for {n_features} features."
            )
        groups.append(group)
    if not groups:
        raise ValueError("protected_columns is empty; give at least one protected attribute.")
    seen = [j for group in groups for j in group]
    if len(seen) != len(set(seen)):
        raise ValueError(f"protected_columns lists a column twice: {protected_columns!r}.")
    return groups


def _attribute_levels(columns):
    """Level of each row for a protected attribute stored in one or several columns."""
    if columns.shape[1] == 1:
        return columns[:, 0]
    # One-hot group: the level is the active column; all-zero rows are the reference level -1.
    levels = np.argmax(columns, axis=1)
    levels[~np.any(columns != 0, axis=1)] = -1
    return levels


def _orthonormal_row_basis(directions):
    """Orthonormal rows spanning the rows of ``directions`` (rank by an SVD tolerance)."""
    n_features = directions.shape[1]
    norms = np.linalg.norm(directions, axis=1)
    directions = directions[norms > 0] / norms[norms > 0, None]
    if directions.shape[0] == 0:
        return np.empty((0, n_features))
    _, singular, vt = np.linalg.svd(directions, full_matrices=False)
    tol = singular.max() * max(directions.shape) * np.finfo(np.float64).eps
    return vt[singular > tol]


class MahalanobisMetric(_LinearMapMetric):
    r"""Mahalanobis fair metric with a user-given positive semi-definite matrix.

    .. math::

        d(x, x')^2 = (x - x')^\top \Sigma (x - x'),

    and the cost is :math:`d(x, x')^p` with ``p = exponent``.

    Parameters
    ----------
    sigma : array-like of shape (n_features, n_features)
        Symmetric positive semi-definite matrix.
    exponent : float, default=2
        Power ``p`` of the distance in the cost.

    Attributes
    ----------
    n_features_in_ : int
        Set by ``fit``; ``fit`` is otherwise a no-op (the metric is fixed), and ``transform`` /
        ``cost_matrix`` work without it.

    Notes
    -----
    ``transform(X) = X @ S`` with :math:`S = \Sigma^{1/2}` the symmetric PSD square root from
    an eigendecomposition (eigenvalues within rounding error of zero are set to zero).

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import MahalanobisMetric
    >>> metric = MahalanobisMetric(np.diag([1.0, 0.0]))
    >>> metric.cost_matrix([[0.0, 0.0], [1.0, 5.0]])
    array([[0., 1.],
           [1., 0.]])
    """

    def __init__(self, sigma, *, exponent=2):
        self.sigma = sigma
        self.exponent = exponent

    def fit(self, X=None, y=None):
        """Check ``sigma`` (and the width of ``X`` if given); the metric is fixed.

        Returns
        -------
        self : MahalanobisMetric
        """
        sigma = _check_psd(self.sigma)
        if X is not None:
            X = _check_points(X, "X")
            _check_width(X, sigma.shape[0])
        self.n_features_in_ = sigma.shape[0]
        return self

    def transform(self, X):
        """Map points by the PSD square root of ``sigma``: ``X @ sigma**(1/2)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
        """
        sigma = _check_psd(self.sigma)
        X = _check_points(X, "X")
        _check_width(X, sigma.shape[0])
        return X @ _psd_sqrt(sigma)


def _check_width(X, n_features):
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features but the metric expects {n_features}.")


def _check_psd(sigma):
    sigma = np.asarray(sigma, dtype=np.float64)
    if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1] or sigma.shape[0] == 0:
        raise ValueError(f"sigma must be a non-empty square matrix, got shape {sigma.shape}.")
    if not np.all(np.isfinite(sigma)):
        raise ValueError("sigma contains NaN or infinite entries.")
    scale = max(np.abs(sigma).max(), 1.0)
    tol = 1e-10 * scale
    if np.abs(sigma - sigma.T).max() > tol:
        raise ValueError(
            "sigma must be symmetric; largest |sigma - sigma.T| is "
            f"{np.abs(sigma - sigma.T).max():.3g}."
        )
    smallest = np.linalg.eigvalsh((sigma + sigma.T) / 2.0).min()
    if smallest < -tol * sigma.shape[0]:
        raise ValueError(
            f"sigma must be positive semi-definite; its smallest eigenvalue is {smallest:.3g}."
        )
    return (sigma + sigma.T) / 2.0


def _psd_sqrt(sigma):
    eigenvalues, eigenvectors = np.linalg.eigh(sigma)
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    return (eigenvectors * np.sqrt(eigenvalues)) @ eigenvectors.T


class EuclideanMetric(_LinearMapMetric):
    r"""Euclidean distance on chosen columns, :math:`d(x, x') = \|x_S - x'_S\|_2`.

    Parameters
    ----------
    columns : sequence of int or None, default=None
        Column indices ``S`` the distance looks at; None uses all columns. Columns left out are
        free to change (e.g. leave out the protected attributes' one-hot columns).
    exponent : float, default=2
        Power ``p`` of the distance in the cost.

    Attributes
    ----------
    n_features_in_ : int
        Set by ``fit``; ``fit`` is otherwise a no-op, and ``cost_matrix`` works without it.

    Examples
    --------
    >>> from skfair_audit.faith._metric import EuclideanMetric
    >>> EuclideanMetric(columns=[1], exponent=1).cost_matrix([[0, 0], [9, 3]])
    array([[0., 3.],
           [3., 0.]])
    """

    def __init__(self, columns=None, *, exponent=2):
        self.columns = columns
        self.exponent = exponent

    def fit(self, X=None, y=None):
        """No-op for this fixed metric; records ``n_features_in_`` if ``X`` is given.

        Returns
        -------
        self : EuclideanMetric
        """
        if X is not None:
            X = _check_points(X, "X")
            self._columns(X.shape[1])
            self.n_features_in_ = X.shape[1]
        return self

    def _columns(self, n_features):
        if self.columns is None:
            return np.arange(n_features)
        columns = np.atleast_1d(np.asarray(self.columns))
        if columns.dtype.kind not in "iu" or columns.ndim != 1:
            raise ValueError(f"columns must be a list of int indices, got {self.columns!r}.")
        if columns.size and (columns.min() < -n_features or columns.max() >= n_features):
            raise ValueError(f"columns {self.columns!r} out of range for {n_features} features.")
        return columns

    def transform(self, X):
        """Select the metric's columns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_selected : ndarray of shape (n_samples, len(columns))
        """
        X = _check_points(X, "X")
        return X[:, self._columns(X.shape[1])]


class PrecomputedMetric(BaseEstimator):
    """A user-given cost matrix over the cells of a sample space.

    Parameters
    ----------
    cost : array-like of shape (n_cells, n_cells)
        ``cost[i, j]`` is the cost of moving mass from cell ``i`` to cell ``j``, **in the sample
        space's cell order** (``space.cell_features[i]``, ``space.cell_labels[i]``). Non-negative,
        zero diagonal, no NaN; ``np.inf`` forbids a move.

    Attributes
    ----------
    n_cells_ : int
        Number of cells, set by ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import PrecomputedMetric
    >>> PrecomputedMetric([[0, 2], [np.inf, 0]]).cost_matrix()
    array([[ 0.,  2.],
           [inf,  0.]])
    """

    def __init__(self, cost):
        self.cost = cost

    def fit(self, X=None, y=None):
        """Validate the cost matrix; ``X`` (if given) must have one row per cell.

        Returns
        -------
        self : PrecomputedMetric
        """
        cost = check_cost_matrix(self.cost)
        if X is not None and len(X) != cost.shape[0]:
            raise ValueError(
                f"the precomputed cost matrix has {cost.shape[0]} cells but X has {len(X)} rows."
            )
        self.n_cells_ = cost.shape[0]
        return self

    def cost_matrix(self, A=None, B=None):
        """Return the validated cost matrix.

        Parameters
        ----------
        A : array-like of shape (n_cells, ...), default=None
            Optional cell representation (e.g. ``space.encoded_features()``); only its length is
            checked against the matrix, so that metrics are interchangeable.
        B : None
            Must be None: a precomputed matrix only covers the pairs of cells of one space.

        Returns
        -------
        cost : ndarray of shape (n_cells, n_cells)
        """
        if B is not None:
            raise ValueError("PrecomputedMetric.cost_matrix does not take a second point set B.")
        cost = check_cost_matrix(self.cost)
        if A is not None and len(A) != cost.shape[0]:
            raise ValueError(
                f"the precomputed cost matrix has {cost.shape[0]} cells but A has {len(A)} rows; "
                "its order must be the sample space's cell order."
            )
        return cost


class CallableMetric(BaseEstimator):
    """Cost ``func(a, b) ** exponent`` for a user distance function.

    Parameters
    ----------
    func : callable
        ``func(a, b) -> float``, a distance between two 1-D rows (non-negative, ``np.inf``
        allowed to forbid a move).
    exponent : float, default=1
        Power ``p`` in the cost ``func(a, b) ** p``.

    Notes
    -----
    ``func`` is called once per ordered pair in a Python loop (``len(A) * len(B)`` calls), which
    is fine for up to a few thousand cells. For larger spaces use a vectorised metric
    (:class:`MahalanobisMetric`, :class:`SensitiveSubspaceMetric`) or :class:`PrecomputedMetric`.
    When ``B`` is None the diagonal is set to 0.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import CallableMetric
    >>> manhattan = CallableMetric(lambda a, b: np.abs(a - b).sum())
    >>> manhattan.cost_matrix([[0, 0], [1, 2]])
    array([[0., 3.],
           [3., 0.]])
    """

    def __init__(self, func, *, exponent=1):
        self.func = func
        self.exponent = exponent

    def fit(self, X=None, y=None):
        """No-op; checks that ``func`` is callable.

        Returns
        -------
        self : CallableMetric
        """
        if not callable(self.func):
            raise ValueError(f"func must be callable, got {self.func!r}.")
        return self

    def cost_matrix(self, A, B=None):
        """Pairwise costs ``func(a_i, b_j) ** exponent``.

        Parameters
        ----------
        A : array-like of shape (n_a, n_features)
        B : array-like of shape (n_b, n_features), default=None
            None means ``B = A``.

        Returns
        -------
        cost : ndarray of shape (n_a, n_b)
        """
        if not callable(self.func):
            raise ValueError(f"func must be callable, got {self.func!r}.")
        exponent = _check_exponent(self.exponent)
        A = check_array(A, dtype=None, ensure_all_finite=False, input_name="A")
        B_ = A if B is None else check_array(B, dtype=None, ensure_all_finite=False,
                                             input_name="B")
        cost = np.empty((A.shape[0], B_.shape[0]))
        for i, a in enumerate(A):
            for j, b in enumerate(B_):
                cost[i, j] = self.func(a, b)
        if np.isnan(cost).any() or (cost < 0).any():
            raise ValueError("func returned a NaN or negative distance; distances must be >= 0.")
        return _finish_square(cost**exponent, B is None)
