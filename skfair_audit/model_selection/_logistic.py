"""ℓ1-penalised logistic regression that is ℓ1 on every supported scikit-learn, and its C path.

The spelling of the ℓ1 penalty changed in scikit-learn 1.8: ``penalty="l1"`` is deprecated there
(removed in 1.10) in favour of ``l1_ratio=1.0``. On 1.6 and 1.7, ``l1_ratio=1.0`` without
``penalty="elasticnet"`` is ignored and the model **silently fits an L2 penalty**. This module
hides that difference.
"""

from __future__ import annotations

import numbers
import re

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.svm import l1_min_c

__all__ = ["L1_RATIO_SPELLING", "default_c_path", "l1_logistic_regression"]

#: Whether the installed scikit-learn spells the ℓ1 penalty ``l1_ratio=1.0`` (1.8 and later)
#: rather than ``penalty="l1"``.
L1_RATIO_SPELLING = tuple(
    int(part) for part in re.match(r"(\d+)\.(\d+)", sklearn.__version__).groups()
) >= (1, 8)

_L1_SOLVERS = ("liblinear", "saga")


def l1_logistic_regression(*, C=1.0, solver="liblinear", random_state=0, **params):
    r"""A :class:`~sklearn.linear_model.LogisticRegression` with a true ℓ1 penalty.

    Minimises

    .. math::

        C \sum_{i=1}^n \log\bigl(1 + e^{-y_i (x_i^\top \beta + \beta_0)}\bigr) + \|\beta\|_1,

    i.e. the paper's :math:`\mathcal L(Z, \beta) + \lambda \|\beta\|_1` with :math:`C = 1/\lambda`
    and :math:`\mathcal L` the *summed* logistic loss.

    Parameters
    ----------
    C : float, default=1.0
        Inverse penalty :math:`1/\lambda`.
    solver : {"liblinear", "saga"}, default="liblinear"
        The two solvers with an ℓ1 penalty. ``"liblinear"`` (the default) solves one small
        binary problem in milliseconds and is exact to its tolerance; it also penalises the
        intercept (scaled by ``intercept_scaling``) and ignores ``warm_start``. ``"saga"``
        leaves the intercept unpenalised and honours ``warm_start=True`` (each fit starting
        from the previous solution, when one model is refit along a path by hand); it
        converges slowly on unscaled features.
    random_state : int, RandomState instance or None, default=0
        liblinear and saga visit coordinates in a random order; a fixed seed makes the fit
        reproducible (and identical in parallel workers).
    **params
        Any other :class:`~sklearn.linear_model.LogisticRegression` parameter except
        ``penalty`` and ``l1_ratio``, which this function sets.

    Returns
    -------
    LogisticRegression
        Unfitted; spelled ``penalty="l1"`` on scikit-learn < 1.8 and ``l1_ratio=1.0`` (with the
        default ``penalty``, which avoids the 1.8 deprecation warning) from 1.8 on.

    Notes
    -----
    On scikit-learn 1.6 and 1.7, ``LogisticRegression(l1_ratio=1.0)`` fits an L2 penalty without
    a warning (``l1_ratio`` is only read when ``penalty="elasticnet"``); on 1.8 and 1.9,
    ``penalty="l1"`` warns and will be an error in 1.10. The returned model is ℓ1 on both.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.model_selection import l1_logistic_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 10))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> model = l1_logistic_regression(C=0.05).fit(X, y)
    >>> int(np.count_nonzero(model.coef_))  # only the informative feature survives
    1
    """
    for name in ("penalty", "l1_ratio"):
        if name in params:
            raise ValueError(
                f"l1_logistic_regression sets {name!r} itself (the penalty is ℓ1 on every "
                "scikit-learn version); do not pass it."
            )
    if solver not in _L1_SOLVERS:
        raise ValueError(f"solver must be one of {_L1_SOLVERS} (ℓ1 penalty), got {solver!r}.")
    if L1_RATIO_SPELLING:
        penalty = {"l1_ratio": 1.0}
    else:
        penalty = {"penalty": "l1"}
    return LogisticRegression(C=C, solver=solver, random_state=random_state, **penalty, **params)


def default_c_path(X, y, *, n_values=30, span=1e4, fit_intercept=True, intercept_scaling=1.0):
    r"""A log-spaced path of ``C = 1/λ`` from the empty ℓ1 model to an essentially unpenalised one.

    The smallest value is :func:`sklearn.svm.l1_min_c`, the ``C`` below which the ℓ1 logistic
    regression has all coefficients equal to zero:

    .. math::

        C_{\min} = \frac{2}{\max_j |\sum_i \tilde y_i x_{ij}|}, \qquad \tilde y_i \in \{-1, 1\},

    (with the intercept column ``intercept_scaling`` included when ``fit_intercept``, as liblinear
    penalises it). The largest is ``span × C_min``: at ``span = 1e4`` the penalty weighs
    ``10^{-4}`` of the gradient that kept the first coefficient at zero, so the fit is the
    unpenalised one to within the solver tolerance on standard problems.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric design matrix, in the coordinates the logistic regression sees (after any
        encoding).
    y : array-like of shape (n_samples,)
        Binary labels.
    n_values : int, default=30
        Number of values on the path.
    span : float, default=1e4
        Ratio of the largest to the smallest value (> 1).
    fit_intercept : bool, default=True
    intercept_scaling : float, default=1.0
        As in the logistic regression to be fitted.

    Returns
    -------
    ndarray of shape (n_values,)
        Increasing values of ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.model_selection import default_c_path, l1_logistic_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4))
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> path = default_c_path(X, y, n_values=5)
    >>> round(float(path[-1] / path[0]))
    10000
    >>> int(np.count_nonzero(l1_logistic_regression(C=path[0]).fit(X, y).coef_))
    0
    """
    if not isinstance(n_values, numbers.Integral) or n_values < 2:
        raise ValueError(f"n_values must be an integer >= 2, got {n_values!r}.")
    if not isinstance(span, numbers.Real) or not np.isfinite(span) or span <= 1:
        raise ValueError(f"span must be a finite number > 1, got {span!r}.")
    c_min = l1_min_c(
        X,
        y,
        loss="log",
        fit_intercept=bool(fit_intercept),
        intercept_scaling=float(intercept_scaling),
    )
    return np.geomspace(c_min, c_min * float(span), int(n_values))
