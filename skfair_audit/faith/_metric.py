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
from scipy.stats import norm
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.model_selection import check_cv
from sklearn.utils.validation import check_array, check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .._utils import (
    ARRAY_LIKE,
    BOOLEAN,
    CALLABLE,
    POSITIVE_INT,
    Interval,
    Predicate,
    check_params,
)
from ._metric_learning import (
    auc_standard_error,
    check_n_components,
    check_positive_int,
    column_scale,
    cross_validated_auc,
    fit_logistic,
    leading_components,
)

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

#: ``exponent`` of every metric: the power ``p`` of the distance in the cost.
EXPONENT = [Interval("real", 0, None, closed="neither")]


def _is_index_list(value):
    if not isinstance(value, Sequence | np.ndarray) or isinstance(value, str):
        return False
    value = np.asarray(value)
    return value.ndim == 1 and (value.dtype.kind in "iu" or value.size == 0)


def _is_protected_columns(value):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return True
    if not isinstance(value, Sequence | np.ndarray) or isinstance(value, str):
        return False
    # (emptiness, ranges and repeats are checked at fit, where the width of X is known)
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool) or _is_index_list(v)
               for v in value)


#: Column indices (``EuclideanMetric(columns=...)``).
INDEX_LIST = Predicate(_is_index_list, "a list of column indices")
#: ``protected_columns``: a column index, a list of them, or a list of lists (one per attribute).
PROTECTED_COLUMNS = Predicate(
    _is_protected_columns, "a column index, a list of column indices or a list of lists of them"
)


class _MetricBase(BaseEstimator):
    """What every fair metric shares: the check of its parameters against their constraints."""

    def _check_params(self):
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)


class _FixedMetricMixin:
    """A metric given by its parameters: ``fit`` only checks them (``requires_fit`` off).

    ``transform`` and ``cost_matrix`` work without ``fit``, so scikit-learn's checks that an
    unfitted estimator refuses to transform do not apply. Subclasses check ``X`` (and record
    what they learn of it) in ``_check_input``.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags

    def fit(self, X=None, y=None):
        """Check the parameters, and ``X`` if given; the metric is fixed, nothing is learned.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Points in the metric's coordinates (for :class:`PrecomputedMetric`, one row per
            cell). Their width must match the parameters and is recorded as
            ``n_features_in_`` (their number of rows as ``n_cells_``, for a precomputed
            matrix).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The metric.
        """
        self._check_params()
        self._check_input(X)
        return self


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


class _LinearMapMetric(TransformerMixin, _MetricBase):
    """Cost ``|T(x) - T(x')|**exponent`` for a linear map ``T``; subclasses define ``transform``."""

    def _fitted_points(self, X, attribute):
        """``X`` checked against the data of ``fit`` (fitted: ``attribute`` is set)."""
        check_is_fitted(self, attribute)
        return validate_data(self, X, reset=False, dtype=np.float64)

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
    r"""Fair metric that ignores a learned sensitive subspace (SenSR, Yurochkin et al. 2020).

    Two individuals are similar when they differ only in their protected attributes and in the
    directions of feature space that *predict* those attributes (proxies). For each protected
    attribute (each level, for an attribute with more than two levels) an ℓ2 logistic
    regression predicts it from the non-protected features; its coefficient vector is a
    candidate *sensitive direction*. With :math:`A` the chosen directions plus the protected
    coordinates' unit vectors and :math:`P_A` the orthogonal projector onto their span, in the
    standardised coordinates :math:`z = x / s` (``s`` the features' standard deviations),

    .. math::

        d_x(x, x')^2 = (z - z')^\top (I - P_A) (z - z') ,

    so moving an individual along a sensitive direction is free. The cost is
    :math:`d_x(x, x')^p` with ``p = exponent``.

    **The default keeps the metric meaningful with many-level attributes.** Every direction
    that is kept makes a whole direction of the non-protected features free; keeping one per
    level, as the original construction does, frees the span of all of them. On COMPAS with
    six races and the sex, 7 directions span the 5 dimensions in which the one-hot encoded
    non-protected features vary, so *every* move is free and the audit value at ε = 0 equals
    the model's accuracy. The default therefore

    1. standardises the features, so that the regularisation and the distance treat them
       alike (continuous columns in their own units would otherwise dominate);
    2. chooses each regression's strength ``C`` by cross-validated AUC over ``Cs``;
    3. keeps a direction only when its cross-validated AUC reaches ``min_auc`` and is
       significantly above 1/2 (one-sided test at level ``significance``, with the standard
       error of Hanley & McNeil): a level the features do not predict has no proxy to
       neutralise, and its coefficients are noise — as are those of a level with a handful of
       members, whose AUC is too uncertain to mean anything;
    4. combines the kept directions, each weighted by its Gini coefficient ``2 AUC - 1``,
       into a subspace of controlled rank: the leading right singular vectors that explain
       the share ``n_components`` of their squared singular values (or ``n_components`` of
       them), as the SVD construction of SenSR does for groups of comparable individuals.

    The original construction (every direction, no standardisation, ``C = 1``) is
    ``SensitiveSubspaceMetric(columns, min_auc=None, n_components=None, standardize=False,
    C=1.0)``.

    Parameters
    ----------
    protected_columns : int, sequence of int, or sequence of sequences of int
        Protected attributes as column indices of the numeric feature matrix. An int is one
        attribute held in a single column (e.g. a 0/1 indicator); a list of ints inside the
        sequence is one attribute spread over several one-hot columns (use
        :meth:`GridSpace.encoded_columns` to get these groups). Example: ``[[0, 1], [2, 3, 4]]``
        for sex (2 one-hot columns) and race (3 one-hot columns); ``[0, 5]`` for two binary
        columns.
    min_auc : float in [0.5, 1] or None, default=0.6
        Keep a candidate direction only if the cross-validated AUC of its regression is at
        least this; None keeps every direction (and needs no cross-validation).
    significance : float in (0, 0.5] or None, default=0.05
        With ``min_auc`` set, keep a direction only if its AUC also exceeds 1/2 by a one-sided
        test at this level: ``auc - z * se > 1/2`` with ``z`` the ``1 - significance``
        normal quantile and ``se`` the Hanley–McNeil standard error for the numbers of
        members and non-members. None skips the test.
    n_components : int, float in (0, 1] or None, default=0.9
        Rank of the learned part of the sensitive subspace: an int keeps at most that many
        leading components of the weighted directions, a float the fewest components whose
        squared singular values reach that share of the total, None the span of all kept
        directions.
    standardize : bool, default=True
        Work in the coordinates ``x / s`` (``s`` the weighted standard deviation of each
        column in the training data; 1 for constant columns). The cost is then in units of
        squared standard deviations.
    C : float or None, default=None
        Inverse regularisation strength of the logistic regressions; None chooses it per
        regression by cross-validated AUC over ``Cs``.
    Cs : int or sequence of float, default=9
        Candidate strengths when ``C`` is None; an int ``k`` means ``np.logspace(-4, 4, k)``.
    cv : int, cross-validation splitter or None, default=5
        Folds of the cross-validation (an int means unshuffled ``StratifiedKFold``, so that
        the metric is deterministic). None skips it; then ``C`` must be given and ``min_auc``
        must be None.
    cv_max_samples : int or None, default=100_000
        Largest number of training rows the cross-validation uses; beyond it, an evenly spaced
        subset of each class (deterministic). The final regression uses every row. None
        always uses all rows.
    exponent : float, default=2
        Power ``p`` of the distance in the cost ``d(x, x')**p``.
    max_iter : int, default=100
        Newton steps of each logistic regression.

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,)
        The standard deviations ``s`` (ones without standardisation).
    projector_ : ndarray of shape (n_features, n_features)
        :math:`I - P_A` in the standardised coordinates (symmetric, idempotent).
    sigma_ : ndarray of shape (n_features, n_features)
        :math:`\Sigma = S^{-1} (I - P_A) S^{-1}` with :math:`S = \mathrm{diag}(s)`, so that
        :math:`d_x(x, x')^2 = (x - x')^\top \Sigma (x - x')`.
    sensitive_directions_ : ndarray of shape (n_directions, n_features)
        Orthonormal basis (rows) of the sensitive subspace, in the standardised coordinates.
    coef_directions_ : ndarray of shape (n_problems, n_features)
        The coefficient vector of every binary regression, in the standardised coordinates
        (zeros at the protected coordinates), kept or not.
    problems_ : tuple of dict
        One record per binary regression: ``attribute`` (index into ``protected_groups_``),
        ``level`` (the one-hot column of the level, -1 for rows with no active column, or the
        level's value for a single-column attribute), ``n_members``, ``auc`` (cross-validated,
        NaN when not computed), ``auc_lower`` (its one-sided lower confidence bound at level
        ``1 - significance``, 0.95 when ``significance`` is None), ``C``, ``kept``.
    components_ : ndarray of shape (n_components, n_features)
        The learned sensitive directions that the metric makes free, in the standardised
        coordinates (unit rows; orthonormal unless ``n_components`` is None).
    component_sources_ : ndarray of int, shape (n_components,)
        For each component, the index in ``problems_`` of the regression that weighs most in
        it (the attribute level that brought it).
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
    (a warning is issued) but its coordinates are still sensitive. A level with fewer members
    (or non-members) than folds cannot be cross-validated: its AUC is NaN, so it is dropped
    when ``min_auc`` is set.

    The regressions are fitted on the distinct training rows with aggregated weights (exactly
    the same fit as on the individual rows), by Newton's method; the cross-validation splits
    individuals. The reported AUC is the mean over the folds at the chosen ``C``, slightly
    optimistic because ``C`` is chosen on the same folds.

    The basis of the span is computed from an SVD with the rank tolerance of
    :func:`numpy.linalg.matrix_rank`; :math:`(A^\top A)^{-1}` is never formed.
    ``transform(X) = (X / scale_) @ projector_``, a linear map: the cost is a Euclidean
    distance between transformed points.

    The metric must be learned on data that is disjoint from the audit sample.
    :func:`~skfair_audit.faith.metric_diagnostics` reports which non-protected directions it
    makes free and which attribute level brought each.

    References
    ----------
    .. [1] M. Yurochkin, A. Bower and Y. Sun, "Training individually fair ML models with
       sensitive subspace robustness", ICLR 2020 (the logistic-regression subspace, §2 and
       App. B.1; the SVD subspace, App. B.2).
    .. [2] D. Mukherjee, M. Yurochkin, M. Banerjee and Y. Sun, "Two simple ways to learn
       individual fairness metrics from data", ICML 2020 (factor-analysis view of the
       sensitive subspace and its estimation error, §2.1).
    .. [3] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith._metric import SensitiveSubspaceMetric
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, size=400)
    >>> proxy = group + rng.normal(scale=0.5, size=400)     # correlated with the group
    >>> other = rng.normal(size=400)
    >>> X = np.column_stack([group, proxy, other])
    >>> metric = SensitiveSubspaceMetric(protected_columns=[0]).fit(X)
    >>> metric.sensitive_directions_.shape
    (2, 3)
    >>> round(metric.problems_[0]["auc"], 2)       # the proxy predicts the group well
    0.93
    >>> a, b = np.array([[1.0, 0.3, 0.2]]), np.array([[0.0, 0.3, 0.2]])
    >>> metric.cost_matrix(a, b)          # flipping the group alone is free
    array([[0.]])
    """

    _parameter_constraints = {
        "protected_columns": [PROTECTED_COLUMNS],
        "min_auc": [None, Interval("real", 0.5, 1)],
        "significance": [None, Interval("real", 0, 0.5, closed="right")],
        "n_components": [None, POSITIVE_INT, Interval("real", 0, 1, closed="right")],
        "standardize": [BOOLEAN],
        "C": [None, Interval("real", 0, None, closed="neither")],
        "Cs": [POSITIVE_INT, ARRAY_LIKE],
        "cv": [None, Interval("integral", 2, None),
               Predicate(lambda cv: hasattr(cv, "split") or hasattr(cv, "__iter__"),
                         "a cross-validation splitter or an iterable of splits")],
        "cv_max_samples": [None, POSITIVE_INT],
        "exponent": EXPONENT,
        "max_iter": [POSITIVE_INT],
    }

    def __init__(
        self,
        protected_columns,
        *,
        min_auc=0.6,
        significance=0.05,
        n_components=0.9,
        standardize=True,
        C=None,
        Cs=9,
        cv=5,
        cv_max_samples=100_000,
        exponent=2,
        max_iter=100,
    ):
        self.protected_columns = protected_columns
        self.min_auc = min_auc
        self.significance = significance
        self.n_components = n_components
        self.standardize = standardize
        self.C = C
        self.Cs = Cs
        self.cv = cv
        self.cv_max_samples = cv_max_samples
        self.exponent = exponent
        self.max_iter = max_iter

    def _check_params(self):
        """The checks of every metric and those across parameters; returns the C values to try."""
        super()._check_params()
        min_auc = self.min_auc
        if min_auc is not None and (
            not isinstance(min_auc, numbers.Real) or isinstance(min_auc, bool)
            or not 0.5 <= min_auc <= 1.0
        ):
            raise ValueError(f"min_auc must be None or a number in [0.5, 1], got {min_auc!r}.")
        significance = self.significance
        if significance is not None and (
            not isinstance(significance, numbers.Real) or isinstance(significance, bool)
            or not 0.0 < significance <= 0.5
        ):
            raise ValueError(
                f"significance must be None or a level in (0, 0.5], got {significance!r}."
            )
        check_n_components(self.n_components, allow_none=True)
        C = self.C
        if C is not None and (
            not isinstance(C, numbers.Real) or isinstance(C, bool) or not np.isfinite(C)
            or C <= 0
        ):
            raise ValueError(f"C must be None or a positive finite number, got {C!r}.")
        if isinstance(self.Cs, numbers.Integral) and not isinstance(self.Cs, bool):
            if self.Cs < 1:
                raise ValueError(f"an int Cs is the number of strengths, >= 1, got {self.Cs!r}.")
            Cs = np.logspace(-4, 4, int(self.Cs))
        else:
            Cs = np.asarray(self.Cs, dtype=float).ravel()
            if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
                raise ValueError(f"Cs must hold positive finite numbers, got {self.Cs!r}.")
        if self.cv is None and (C is None or min_auc is not None):
            raise ValueError(
                "cv=None skips the cross-validation, so C must be given and min_auc must be "
                f"None (got C={C!r}, min_auc={min_auc!r})."
            )
        check_positive_int(self.max_iter, "max_iter")
        check_positive_int(self.cv_max_samples, "cv_max_samples", allow_none=True)
        return (Cs if C is None else np.array([float(C)]))

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
            Weights of the training rows (standardisation, regressions and their AUC).

        Returns
        -------
        self : SensitiveSubspaceMetric
        """
        Cs = self._check_params()
        X = validate_data(self, X, reset=True, dtype=np.float64, ensure_min_samples=2)
        weight = _check_weight(sample_weight, X.shape[0])
        n_features = X.shape[1]
        groups = _protected_groups(self.protected_columns, n_features)
        protected, unprotected = _split_columns(groups, n_features)

        scale = column_scale(X, weight, self.standardize)
        scale[protected] = 1.0
        Z = X / scale
        Z_free = Z[:, unprotected]
        Z_free = Z_free - weight @ Z_free / weight.sum()
        # The regressions see each distinct row once, with its aggregated weights.
        distinct, rows = np.unique(Z_free, axis=0, return_inverse=True)
        rows = rows.ravel()

        problems, coef_directions = [], []
        for a, group in enumerate(groups):
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
                member = levels == level
                # Many tiny tall-skinny products: a multi-threaded BLAS only adds contention
                # (measured 20x slower on a loaded 2-core machine).
                with threadpool_limits(limits=1, user_api="blas"):
                    auc, auc_lower, C, coef = self._learn_direction(
                        distinct, rows, member, weight, Cs
                    )
                direction = np.zeros(n_features)
                direction[unprotected] = coef
                kept = self.min_auc is None or bool(
                    auc >= self.min_auc and (self.significance is None or auc_lower > 0.5)
                )
                problems.append({
                    "attribute": a,
                    "level": _level_label(group, level),
                    "n_members": int(member.sum()),
                    "auc": auc,
                    "auc_lower": auc_lower,
                    "C": C,
                    "kept": kept and bool(np.any(coef != 0)),
                })
                coef_directions.append(direction)

        coef_directions = (
            np.vstack(coef_directions) if coef_directions else np.empty((0, n_features))
        )
        components, sources = _combine_directions(
            coef_directions, problems, self.n_components
        )
        unit_vectors = np.eye(n_features)[protected]
        basis = _orthonormal_row_basis(np.vstack([components, unit_vectors]))
        projector = _complement_projector(basis)
        self.scale_ = scale
        self.projector_ = projector
        self.sigma_ = projector / scale[:, None] / scale[None, :]
        self.sensitive_directions_ = basis
        self.coef_directions_ = coef_directions
        self.problems_ = tuple(problems)
        self.components_ = components
        self.component_sources_ = np.asarray(sources, dtype=np.intp)
        self.protected_groups_ = groups
        return self

    def _learn_direction(self, distinct, rows, member, weight, Cs):
        """(CV AUC, its one-sided lower confidence bound, chosen C, coefficients) of a level."""
        n_min = int(min(member.sum(), (~member).sum()))
        auc_by_C = np.full(Cs.size, np.nan)
        used = np.arange(member.size)
        if self.cv is not None:
            used = _evenly_spaced_subset(member, self.cv_max_samples)
            splitter = check_cv(self.cv, member[used], classifier=True)
            if min(n_min, used.size) >= splitter.get_n_splits():
                splits = list(splitter.split(np.zeros((used.size, 1)), member[used]))
                auc_by_C = cross_validated_auc(
                    distinct, rows[used], member[used], weight[used], Cs, splits,
                    max_iter=self.max_iter,
                )
        if np.all(np.isnan(auc_by_C)):
            if self.min_auc is not None:
                return float("nan"), float("nan"), float("nan"), np.zeros(distinct.shape[1])
            auc, C = float("nan"), (float(self.C) if self.C is not None else 1.0)
            auc_lower = float("nan")
        else:
            best = int(np.nanargmax(auc_by_C))  # the first maximum: the strongest penalty
            auc, C = float(auc_by_C[best]), float(Cs[best])
            z = norm.ppf(1.0 - (self.significance or 0.05))
            n_positive = int(member[used].sum())
            auc_lower = auc - z * auc_standard_error(auc, n_positive, used.size - n_positive)
        total = np.bincount(rows, weight, minlength=distinct.shape[0])
        positive = np.bincount(rows, weight * member, minlength=distinct.shape[0])
        keep = total > 0
        theta, _ = fit_logistic(distinct[keep], total[keep], positive[keep], C,
                                max_iter=self.max_iter)
        return auc, auc_lower, C, theta[:-1]

    def transform(self, X):
        """Map points to coordinates where the fair metric is Euclidean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
            ``(X / scale_) @ projector_``.
        """
        X = self._fitted_points(X, "projector_")
        return (X / self.scale_) @ self.projector_

    def _sensitive_components(self):
        """Learned free directions in the input coordinates, with the problem that brought each.

        Used by :func:`~skfair_audit.faith.metric_diagnostics`.
        """
        check_is_fitted(self, "projector_")
        vectors = self.components_ * self.scale_
        records = []
        for source in self.component_sources_:
            problem = self.problems_[int(source)]
            records.append({
                "problem": int(source),
                "columns": self.protected_groups_[problem["attribute"]],
                "level": problem["level"],
                "auc": problem["auc"],
            })
        return vectors, records

    def _candidate_problems(self):
        """Every binary regression with its protected columns (for the diagnostics table)."""
        check_is_fitted(self, "projector_")
        return [
            {**p, "columns": self.protected_groups_[p["attribute"]]} for p in self.problems_
        ]


def _evenly_spaced_subset(member, max_samples):
    """Indices of at most ``max_samples`` rows, evenly spaced within each class (all if None)."""
    n = member.size
    if max_samples is None or n <= max_samples:
        return np.arange(n)
    parts = []
    for cls in (member, ~member):
        index = np.flatnonzero(cls)
        take = max(1, int(round(max_samples * index.size / n)))
        parts.append(index[np.linspace(0, index.size - 1, min(take, index.size)).astype(int)])
    return np.sort(np.concatenate(parts))


def _check_weight(sample_weight, n_samples):
    if sample_weight is None:
        return np.ones(n_samples)
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {weight.shape}."
        )
    if not np.all(np.isfinite(weight)) or np.any(weight < 0) or weight.sum() <= 0:
        raise ValueError("sample_weight must be finite, non-negative and not all zero.")
    return weight


def _level_label(group, level):
    """The level of a protected attribute as stored in ``problems_``."""
    if len(group) > 1:
        return -1 if level == -1 else int(group[int(level)])
    return level.item() if hasattr(level, "item") else level


def _combine_directions(coef_directions, problems, n_components):
    """The learned sensitive directions kept by the metric, and the problem behind each.

    With ``n_components=None`` every kept direction (unit-normalised, in problem order);
    otherwise the leading right singular vectors of the kept unit directions weighted by their
    Gini coefficient ``2 AUC - 1``.
    """
    n_features = coef_directions.shape[1]
    kept = [k for k, p in enumerate(problems) if p["kept"]]
    if not kept:
        return np.empty((0, n_features)), []
    unit = coef_directions[kept]
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True)
    if n_components is None:
        return unit, kept
    auc = np.array([problems[k]["auc"] for k in kept])
    gini = np.where(np.isfinite(auc), 2.0 * auc - 1.0, 1.0)
    weighted = unit * np.clip(gini, np.finfo(float).eps, None)[:, None]
    _, singular, vt = np.linalg.svd(weighted, full_matrices=False)
    n_keep, _ = leading_components(singular, n_components, weighted.shape)
    components = vt[:n_keep]
    loading = (weighted @ components.T) ** 2
    sources = [kept[int(k)] for k in np.argmax(loading, axis=0)]
    return components, sources


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


def _split_columns(groups, n_features):
    """The protected columns of ``groups`` (sorted) and the other columns of the data."""
    protected = sorted({j for group in groups for j in group})
    return protected, np.setdiff1d(np.arange(n_features), protected)


def _complement_projector(basis):
    """``I - B^T B``, the projector off the span of the orthonormal rows ``B``, made symmetric."""
    projector = np.eye(basis.shape[1]) - basis.T @ basis
    return (projector + projector.T) / 2.0


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


class MahalanobisMetric(_FixedMetricMixin, _LinearMapMetric):
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

    _parameter_constraints = {"sigma": [ARRAY_LIKE], "exponent": EXPONENT}

    def __init__(self, sigma, *, exponent=2):
        self.sigma = sigma
        self.exponent = exponent

    def _check_input(self, X):
        sigma = _check_psd(self.sigma) if X is None else self._sigma_and_points(X)[0]
        self.n_features_in_ = sigma.shape[0]

    def _sigma_and_points(self, X):
        sigma = _check_psd(self.sigma)
        X = _check_points(X, "X")
        _check_width(X, sigma.shape[0])
        return sigma, X

    def transform(self, X):
        """Map points by the PSD square root of ``sigma``: ``X @ sigma**(1/2)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_fair : ndarray of shape (n_samples, n_features)
        """
        sigma, X = self._sigma_and_points(X)
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


class EuclideanMetric(_FixedMetricMixin, _LinearMapMetric):
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

    _parameter_constraints = {"columns": [None, INDEX_LIST], "exponent": EXPONENT}

    def __init__(self, columns=None, *, exponent=2):
        self.columns = columns
        self.exponent = exponent

    def _check_input(self, X):
        if X is not None:
            X = validate_data(self, X, reset=True, dtype=np.float64)
            self._columns(X.shape[1])

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
        if hasattr(self, "n_features_in_"):  # fitted on data: X must have their columns
            X = validate_data(self, X, reset=False, dtype=np.float64)
        else:
            X = _check_points(X, "X")
        return X[:, self._columns(X.shape[1])]


class PrecomputedMetric(_FixedMetricMixin, _MetricBase):
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

    _parameter_constraints = {"cost": [ARRAY_LIKE]}

    def __init__(self, cost):
        self.cost = cost

    def _check_input(self, X):
        cost = check_cost_matrix(self.cost)
        if X is not None and len(X) != cost.shape[0]:
            raise ValueError(
                f"the precomputed cost matrix has {cost.shape[0]} cells but X has {len(X)} rows."
            )
        self.n_cells_ = cost.shape[0]

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


class CallableMetric(_FixedMetricMixin, _MetricBase):
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

    _parameter_constraints = {"func": [CALLABLE], "exponent": EXPONENT}

    def __init__(self, func, *, exponent=1):
        self.func = func
        self.exponent = exponent

    def _check_input(self, X):
        if X is not None:
            validate_data(self, X, reset=True, dtype=None, ensure_all_finite=False)

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
