"""Numerics of the learned fair metrics: small pure functions, no estimators.

- :func:`fit_logistic`: ℓ2-penalised logistic regression on *aggregated* rows (distinct feature
  rows with their total and positive weights), by damped Newton steps. The sensitive-subspace
  metric fits one per protected attribute level and per regularisation strength and fold, so it
  must be fast; on a grid sample space the training data has only a few dozen distinct rows.
- :func:`weighted_auc`: the area under the ROC curve of aggregated rows (ties count one half).
- :func:`cross_validated_auc`: held-out AUC of those regressions along a grid of strengths.
- :func:`explore_sigma`: the EXPLORE maximum-likelihood metric from comparable / incomparable
  pairs (Mukherjee, Yurochkin, Banerjee & Sun 2020), by accelerated projected gradient.
- :func:`within_group_components`: principal directions of the variation inside groups of
  comparable individuals (the SVD sensitive subspace of Yurochkin, Bower & Sun 2020, App. B.2).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit

__all__ = [
    "auc_standard_error",
    "cross_validated_auc",
    "explore_negative_log_likelihood",
    "explore_sigma",
    "fit_logistic",
    "project_psd",
    "weighted_auc",
    "within_group_components",
]


# --------------------------------------------------------------------------- logistic regression
def _logistic_objective(design, total, positive, theta, penalty):
    eta = design @ theta
    return float(total @ np.logaddexp(0.0, eta) - positive @ eta + 0.5 * theta @ (penalty * theta))


def fit_logistic(Z, total, positive, C, *, init=None, max_iter=100, tol=1e-12):
    r"""ℓ2-penalised logistic regression with an unpenalised intercept, on aggregated rows.

    Minimises

    .. math::

        \sum_u w_u \log(1 + e^{\eta_u}) - p_u \eta_u + \frac{\|\beta\|^2}{2C},
        \qquad \eta_u = z_u^\top \beta + b,

    where row ``u`` stands for ``w_u`` (weighted) individuals of whom ``p_u`` are positive. With
    unit weights this is scikit-learn's ``LogisticRegression(C=C)`` objective on the individual
    rows (``C`` times the summed log-loss plus half the squared norm).

    Parameters
    ----------
    Z : ndarray of shape (m, p)
        Distinct feature rows (centre them for a well-conditioned problem; the slope ``beta``
        does not depend on the centring).
    total, positive : ndarray of shape (m,)
        Weight of the individuals at each row and of the positive ones (``0 <= positive <=
        total``). Both classes must have positive total weight.
    C : float
        Inverse regularisation strength, positive and finite.
    init : ndarray of shape (p + 1,), optional
        Starting point ``[beta, b]`` (warm start).
    max_iter : int, default=100
        Newton steps.
    tol : float, default=1e-12
        Stop when a Newton step moves no coefficient by more than ``tol`` times the largest
        coefficient (at least 1), or when the Newton decrement vanishes to rounding. Newton's
        method converges quadratically, so the result is accurate to about this tolerance.

    Returns
    -------
    theta : ndarray of shape (p + 1,)
        ``[beta, intercept]``.
    converged : bool
    """
    Z = np.asarray(Z, dtype=float)
    m, p = Z.shape
    design = np.hstack([Z, np.ones((m, 1))])
    penalty = np.append(np.full(p, 1.0 / C), 0.0)
    if init is None:
        share = float(positive.sum() / total.sum())
        theta = np.zeros(p + 1)
        theta[-1] = np.log(share / (1.0 - share))
    else:
        theta = np.array(init, dtype=float)
    value = _logistic_objective(design, total, positive, theta, penalty)
    for _ in range(max_iter):
        prob = expit(design @ theta)
        gradient = design.T @ (total * prob - positive) + penalty * theta
        curvature = total * prob * (1.0 - prob)
        hessian = design.T @ (design * curvature[:, None]) + np.diag(penalty)
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        decrement = float(gradient @ step)
        if (np.max(np.abs(step)) <= tol * max(1.0, float(np.max(np.abs(theta))))
                or decrement <= 1e-15 * max(1.0, abs(value))):
            return theta - step, True
        # Backtracking (Armijo) keeps the damped Newton method globally convergent.
        size = 1.0
        while True:
            candidate = theta - size * step
            new_value = _logistic_objective(design, total, positive, candidate, penalty)
            if new_value <= value - 1e-4 * size * decrement or size < 1e-10:
                break
            size /= 2.0
        theta, value = candidate, new_value
    return theta, False


def weighted_auc(score, positive, negative):
    """Area under the ROC curve of aggregated rows (Mann–Whitney, ties count one half).

    Parameters
    ----------
    score : ndarray of shape (m,)
        Score of each row.
    positive, negative : ndarray of shape (m,)
        Weight of the positive and of the negative individuals at each row.

    Returns
    -------
    float
        ``P(score of a positive > score of a negative) + P(tie) / 2``; NaN if either class has
        no weight.
    """
    score = np.asarray(score, dtype=float)
    positive = np.asarray(positive, dtype=float)
    negative = np.asarray(negative, dtype=float)
    n_pos, n_neg = positive.sum(), negative.sum()
    if n_pos <= 0 or n_neg <= 0:
        return float("nan")
    order = np.argsort(score, kind="stable")
    s = score[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    pos = np.add.reduceat(positive[order], starts)
    neg = np.add.reduceat(negative[order], starts)
    below = np.cumsum(neg) - neg
    return float((pos @ below + 0.5 * pos @ neg) / (n_pos * n_neg))


def auc_standard_error(auc, n_positive, n_negative):
    """Standard error of an AUC estimate (Hanley & McNeil 1982).

    Parameters
    ----------
    auc : float
    n_positive, n_negative : int
        Numbers of positive and negative individuals it was computed on.

    Returns
    -------
    float

    References
    ----------
    .. [1] J. A. Hanley and B. J. McNeil, "The meaning and use of the area under a receiver
       operating characteristic (ROC) curve", Radiology 143(1), 1982.
    """
    q1 = auc / (2.0 - auc)
    q2 = 2.0 * auc * auc / (1.0 + auc)
    variance = (auc * (1.0 - auc) + (n_positive - 1) * (q1 - auc * auc)
                + (n_negative - 1) * (q2 - auc * auc)) / (n_positive * n_negative)
    return float(np.sqrt(max(variance, 0.0)))


def cross_validated_auc(Z, rows, target, weight, Cs, splits, *, max_iter=100):
    """Mean held-out AUC of ℓ2 logistic regressions at each regularisation strength.

    Parameters
    ----------
    Z : ndarray of shape (m, p)
        Distinct feature rows.
    rows : ndarray of int, shape (n,)
        Row of ``Z`` of each individual.
    target : ndarray of bool, shape (n,)
    weight : ndarray of shape (n,)
        Sample weights.
    Cs : sequence of float
        Strengths, fitted in increasing order with warm starts.
    splits : list of (train, test) index arrays over the individuals

    Returns
    -------
    auc : ndarray of shape (len(Cs),)
        Mean over the folds whose training and test parts hold both classes; NaN if none does.
    """
    m = Z.shape[0]
    Cs = np.asarray(Cs, dtype=float)
    order = np.argsort(Cs)
    totals = np.zeros(len(Cs))
    n_valid = 0
    for train, test in splits:
        w_train, w_test = weight[train], weight[test]
        total = np.bincount(rows[train], w_train, minlength=m)
        positive = np.bincount(rows[train], w_train * target[train], minlength=m)
        test_pos = np.bincount(rows[test], w_test * target[test], minlength=m)
        test_neg = np.bincount(rows[test], w_test * ~target[test], minlength=m)
        if not (0 < positive.sum() < total.sum()) or test_pos.sum() <= 0 or test_neg.sum() <= 0:
            continue
        fitted = total > 0
        held = (test_pos + test_neg) > 0
        theta = None
        for k in order:
            theta, _ = fit_logistic(Z[fitted], total[fitted], positive[fitted], Cs[k],
                                    init=theta, max_iter=max_iter)
            score = Z[held] @ theta[:-1]
            totals[k] += weighted_auc(score, test_pos[held], test_neg[held])
        n_valid += 1
    if n_valid == 0:
        return np.full(len(Cs), np.nan)
    return totals / n_valid


# --------------------------------------------------------------------------- EXPLORE
def project_psd(matrix):
    """Nearest positive semi-definite matrix in Frobenius norm (negative eigenvalues to 0)."""
    symmetric = (matrix + matrix.T) / 2.0
    eigenvalues, eigenvectors = np.linalg.eigh(symmetric)
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    out = (eigenvectors * eigenvalues) @ eigenvectors.T
    return (out + out.T) / 2.0


def _log_tanh_half(t):
    """``log(tanh(t / 2))`` for ``t > 0`` without cancellation; ``-inf`` at ``t <= 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(-np.expm1(-t)) - np.log1p(np.exp(-t))
    return np.where(t > 0, out, -np.inf)


def _pair_distances(differences, sigma):
    return np.einsum("ij,ij->i", differences @ sigma, differences)


def explore_negative_log_likelihood(sigma, differences, comparable):
    r"""Mean negative log-likelihood of the EXPLORE model.

    The model of Mukherjee et al. (2020) says that two individuals at squared distance
    :math:`t = d^\top \Sigma d` (with :math:`d` the difference of their features) are judged
    comparable with probability :math:`2\sigma(-t) = 2 / (1 + e^{t})`; so

    .. math::

        \ell(\Sigma) = \frac{1}{n} \sum_i y_i \bigl(\log(1 + e^{t_i}) - \log 2\bigr)
        - (1 - y_i) \log \tanh(t_i / 2).

    Parameters
    ----------
    sigma : ndarray of shape (d, d)
    differences : ndarray of shape (n, d)
    comparable : ndarray of bool, shape (n,)

    Returns
    -------
    float
        ``inf`` when an incomparable pair is at distance 0.
    """
    t = _pair_distances(differences, sigma)
    y = np.asarray(comparable, dtype=bool)
    comparable_part = np.logaddexp(0.0, t[y]) - np.log(2.0)
    incomparable_part = -_log_tanh_half(t[~y])
    return float((comparable_part.sum() + incomparable_part.sum()) / t.size)


def _explore_gradient(sigma, differences, comparable):
    t = _pair_distances(differences, sigma)
    with np.errstate(over="ignore", divide="ignore"):
        # d/dt of the two terms: sigmoid(t), and -1/sinh(t) = -2 e^-t / (1 - e^-2t).
        slope = np.where(comparable, expit(t), -2.0 * np.exp(-t) / -np.expm1(-2.0 * t))
    return (differences * slope[:, None]).T @ differences / t.size


def explore_sigma(differences, comparable, *, sigma_init=None, max_iter=2000, tol=1e-8):
    r"""EXPLORE: the maximum-likelihood Mahalanobis matrix from judged pairs.

    Minimises :func:`explore_negative_log_likelihood` over positive semi-definite
    :math:`\Sigma` (a convex problem) by projected gradient steps with Nesterov momentum,
    backtracking and adaptive restart (Beck & Teboulle 2009; O'Donoghue & Candès 2015).

    Parameters
    ----------
    differences : ndarray of shape (n_pairs, d)
        ``x_i1 - x_i2`` for each judged pair.
    comparable : ndarray of bool, shape (n_pairs,)
        True when the pair was judged comparable. Both kinds must occur.
    sigma_init : ndarray of shape (d, d), optional
        Starting point; default the identity scaled so that the mean squared distance of the
        pairs is 1.
    max_iter : int, default=2000
    tol : float, default=1e-8
        Stop when a step changes :math:`\Sigma` by less than ``tol`` times its Frobenius norm
        (at least 1).

    Returns
    -------
    sigma : ndarray of shape (d, d)
        Symmetric positive semi-definite.
    n_iter : int
    converged : bool

    References
    ----------
    .. [1] D. Mukherjee, M. Yurochkin, M. Banerjee and Y. Sun, "Two simple ways to learn
       individual fairness metrics from data", ICML 2020, §2.2.
    """
    differences = np.asarray(differences, dtype=float)
    comparable = np.asarray(comparable, dtype=bool)
    if sigma_init is None:
        scale = float(np.mean(np.einsum("ij,ij->i", differences, differences)))
        sigma = np.eye(differences.shape[1]) / max(scale, np.finfo(float).tiny)
    else:
        sigma = project_psd(np.asarray(sigma_init, dtype=float))

    def value(s):
        return explore_negative_log_likelihood(s, differences, comparable)

    current = value(sigma)
    if not np.isfinite(current):
        raise ValueError(
            "an incomparable pair is at distance 0 under the starting metric; give a "
            "positive definite sigma_init."
        )
    momentum_point, momentum_value = sigma, current
    step = 1.0
    weight = 1.0
    for iteration in range(1, max_iter + 1):
        gradient = _explore_gradient(momentum_point, differences, comparable)
        while True:
            candidate = project_psd(momentum_point - step * gradient)
            change = candidate - momentum_point
            candidate_value = value(candidate)
            bound = (momentum_value + float(np.sum(gradient * change))
                     + float(np.sum(change * change)) / (2.0 * step))
            if np.isfinite(candidate_value) and candidate_value <= bound + 1e-15 * abs(bound):
                break
            step /= 2.0
            if step < 1e-20:
                return sigma, iteration, False
        moved = float(np.linalg.norm(candidate - sigma))
        if candidate_value > current and weight > 1.0:
            # Adaptive restart: momentum overshot; restart from the last iterate. (From the
            # last iterate itself a projected gradient step cannot increase the objective
            # beyond rounding, so the step is then accepted.)
            momentum_point, momentum_value, weight = sigma, current, 1.0
            continue
        next_weight = (1.0 + np.sqrt(1.0 + 4.0 * weight * weight)) / 2.0
        momentum_point = candidate + ((weight - 1.0) / next_weight) * (candidate - sigma)
        momentum_point = project_psd(momentum_point)
        momentum_value = value(momentum_point)
        if not np.isfinite(momentum_value):
            momentum_point, momentum_value = candidate, candidate_value
        sigma, current, weight = candidate, candidate_value, next_weight
        step *= 1.5  # let the step grow back after backtracking
        if moved <= tol * max(1.0, float(np.linalg.norm(sigma))):
            return sigma, iteration, True
    return sigma, max_iter, False


# --------------------------------------------------------------------------- SVD subspace
def within_group_components(X, groups, sample_weight=None):
    """Principal directions of the variation inside groups of comparable individuals.

    Each row is centred at the (weighted) mean of its group; the right singular vectors of the
    centred rows (scaled by the square root of their weights) are the directions along which
    comparable individuals differ, the *sensitive* directions of Yurochkin, Bower & Sun (2020,
    App. B.2).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    groups : ndarray of shape (n,)
        Group label of each row; rows of a group are comparable.
    sample_weight : ndarray of shape (n,), optional

    Returns
    -------
    singular_values : ndarray of shape (k,)
        Descending.
    components : ndarray of shape (k, d)
        Orthonormal rows, the directions of the singular values.
    """
    X = np.asarray(X, dtype=float)
    weight = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    _, inverse = np.unique(np.asarray(groups), return_inverse=True)
    inverse = inverse.ravel()
    n_groups = int(inverse.max()) + 1
    mass = np.bincount(inverse, weight, minlength=n_groups)
    means = np.zeros((n_groups, X.shape[1]))
    np.add.at(means, inverse, X * weight[:, None])
    means /= np.where(mass > 0, mass, 1.0)[:, None]
    centred = (X - means[inverse]) * np.sqrt(weight)[:, None]
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    return singular, vt


def check_n_components(n_components, *, allow_none):
    """Validate a rank rule: a positive int, a share in (0, 1], or (if allowed) None."""
    if n_components is None and allow_none:
        return None
    if (
        isinstance(n_components, bool) or not isinstance(n_components, numbers.Real)
        or (isinstance(n_components, numbers.Integral) and n_components < 1)
        or (not isinstance(n_components, numbers.Integral) and not 0 < n_components <= 1)
    ):
        raise ValueError(
            "n_components must be a positive int or a share in (0, 1]"
            + (" or None" if allow_none else "") + f", got {n_components!r}."
        )
    return n_components


def leading_components(singular, n_components, shape):
    """How many leading singular directions a rank rule keeps.

    Parameters
    ----------
    singular : ndarray
        Singular values, descending, of a matrix of the given ``shape``.
    n_components : int or float in (0, 1]
        An int keeps at most that many; a float the fewest whose squared singular values reach
        that share of the total.
    shape : tuple
        Shape of the decomposed matrix (for the rank tolerance of ``numpy.linalg.matrix_rank``).

    Returns
    -------
    n_keep : int
        At most the numerical rank.
    share : ndarray of shape (rank,)
        Share of the squared singular values of each direction within the rank.
    """
    top = singular.max(initial=0.0)
    rank = int(np.count_nonzero(singular > top * max(shape) * np.finfo(np.float64).eps))
    if rank == 0:
        return 0, np.empty(0)
    share = singular[:rank] ** 2 / np.sum(singular[:rank] ** 2)
    if isinstance(n_components, numbers.Integral):
        return min(int(n_components), rank), share
    cumulative = np.cumsum(share)
    return min(int(np.searchsorted(cumulative, n_components - 1e-12) + 1), rank), share


def column_scale(X, weight, standardize):
    """Weighted standard deviation of each column (1 for constant columns), or ones."""
    scale = np.ones(X.shape[1])
    if standardize:
        mean = weight @ X / weight.sum()
        std = np.sqrt(weight @ (X - mean) ** 2 / weight.sum())
        usable = std > np.finfo(float).eps * max(1.0, float(np.abs(X).max()))
        scale[usable] = std[usable]
    return scale


def check_positive_int(value, name, *, allow_none=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)
