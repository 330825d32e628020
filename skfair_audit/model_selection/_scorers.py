"""Scorers and a ``refit`` rule that run the paper's δ-fair model selection in ``GridSearchCV``.

``FairModelSelector`` is the dedicated meta-estimator; these pieces make the same choice inside
a plain :class:`~sklearn.model_selection.GridSearchCV` (on the same single split)::

    GridSearchCV(model, grid, cv=PredefinedSplit(...),
                 scoring={"error": make_error_scorer(),
                          "faith_lower": make_faith_bound_scorer(auditor, X_train, y_train)},
                 refit=delta_fair_refit(delta))
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.metrics import make_scorer, zero_one_loss

from .._utils import check_confidence_level, user_stacklevel
from ..faith import FaithAuditor, make_faith_scorer

__all__ = [
    "NoFairCandidateError",
    "NoFairCandidateWarning",
    "choose_candidate",
    "fair_choice",
    "make_error_scorer",
    "make_faith_bound_scorer",
]

_ON_NONE = ("raise", "fairest")
_BOUNDS = ("lower_bound", "upper_bound", "statistic")


class NoFairCandidateError(ValueError):
    """No candidate passes the δ-fairness test (every lower bound is at least δ)."""


class NoFairCandidateWarning(UserWarning):
    """No candidate passes the δ-fairness test; the fairest candidate was chosen instead."""


def make_error_scorer():
    """The negated validation error rate, as a scorer (``GridSearchCV`` maximises scores).

    Returns
    -------
    callable
        ``scorer(estimator, X, y) = -zero_one_loss(y, estimator.predict(X))``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from skfair_audit.model_selection import make_error_scorer
    >>> X, y = np.zeros((4, 1)), np.array([0, 0, 0, 1])
    >>> make_error_scorer()(DummyClassifier().fit(X, y), X, y)
    -0.25
    """
    return make_scorer(zero_one_loss, greater_is_better=False)


def make_faith_bound_scorer(
    auditor, X_metric, y_metric, *, bound="lower_bound", n_splits=1, random_state=0
):
    r"""A scorer returning the one-sided FaiTH bound of a fitted model on the scoring data.

    For a fitted ``estimator`` and validation data ``(X, y)`` it computes
    ``FaithAuditor(FrozenEstimator(estimator), **auditor params).fit(X_metric, y_metric)
    .audit(X, y).lower_bound`` (or the upper bound, or the statistic). The fair metric (and in
    grid mode the sample space) is learned on ``(X_metric, y_metric)``, which must be disjoint
    from the validation data: a scorer only sees the validation fold, so the training fold has
    to be given here. With a single train/validation split, pass its training part; the choice
    of :func:`delta_fair_refit` is then the one :class:`FairModelSelector` makes on that split.

    Parameters
    ----------
    auditor : FaithAuditor
        Template of the audit settings (its ``estimator``, ``delta``, ``random_state``,
        ``n_jobs`` and ``verbose`` are replaced). ``protected`` must be set.
    X_metric, y_metric : array-like
        Training data on which the fair metric is learned.
    bound : {"lower_bound", "upper_bound", "statistic"}, default="lower_bound"
        What the scorer returns. The raw value is returned (smaller is fairer), so
        ``GridSearchCV``'s ``rank_test_<name>`` for it is not meaningful; the
        :func:`delta_fair_refit` rule reads the values directly.
    n_splits : int, default=1
        Number of validation folds the bounds are combined over. The bound is computed at the
        Bonferroni level ``1 − (1 − confidence_level) / n_splits``, as in
        :class:`FairModelSelector` (with one metric for every fold, unlike the selector).
    random_state : int, default=0
        Seed of the bootstrap; the same for every model scored (common random numbers), as in
        :class:`FairModelSelector` with the same ``random_state``.

    Returns
    -------
    callable
        The scorer of :func:`~skfair_audit.faith.make_faith_scorer` with
        ``fit_data=(X_metric, y_metric)``: ``scorer(estimator, X, y) -> float``; its ``audit``
        method returns the full :class:`~skfair_audit.faith.FaithResult`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import FaithAuditor
    >>> from skfair_audit.model_selection import make_faith_bound_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 1000),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], 1000)})
    >>> risk = (0.2 + 0.25 * (X.group == "b") + 0.2 * (X.priors != "0")
    ...         + 0.2 * (X.priors == ">3"))
    >>> y = (rng.random(1000) < risk).astype(int)
    >>> model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X[:600], y[:600])
    >>> scorer = make_faith_bound_scorer(FaithAuditor(None, protected=["group"], epsilon=0.0,
    ...                                         n_resamples=200), X[:600], y[:600])
    >>> round(scorer(model, X[600:], y[600:]), 3)  # lower bound on ψ: flips with the group
    0.176
    """
    if not isinstance(auditor, FaithAuditor):
        raise ValueError(f"auditor must be a FaithAuditor, got {type(auditor).__name__}.")
    if not auditor.protected:
        raise ValueError("the auditor must name the protected attributes (auditor.protected).")
    if bound not in _BOUNDS:
        raise ValueError(f"bound must be one of {_BOUNDS}, got {bound!r}.")
    n_splits = _check_n_splits(n_splits)
    params = auditor.get_params(deep=False)
    del params["estimator"]
    params.update(
        delta=None,
        confidence_level=bonferroni_level(auditor.confidence_level, n_splits),
        random_state=random_state,
        n_jobs=None,
        verbose=0,
    )
    return make_faith_scorer(
        statistic=bound, greater_is_better=True, fit_data=(X_metric, y_metric), **params
    )


def _check_n_splits(n_splits):
    if not isinstance(n_splits, numbers.Integral) or isinstance(n_splits, bool) or n_splits < 1:
        raise ValueError(f"n_splits must be a positive integer, got {n_splits!r}.")
    return int(n_splits)


def bonferroni_level(confidence_level, n_splits):
    r"""Per-fold confidence level :math:`1 - (1 - c)/k` that keeps the family level ``c``."""
    confidence_level = check_confidence_level(confidence_level)
    return 1.0 - (1.0 - confidence_level) / n_splits


def check_delta(delta):
    """δ must be a finite non-negative number (the loss scale is checked by the audit)."""
    if (
        not isinstance(delta, numbers.Real)
        or isinstance(delta, bool)
        or not math.isfinite(delta)
        or delta < 0
    ):
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}.")
    return float(delta)


def check_on_none(on_none):
    if on_none not in _ON_NONE:
        raise ValueError(f"on_none must be one of {_ON_NONE}, got {on_none!r}.")
    return on_none


def fair_choice(error, lower_bound, delta, *, on_none="raise"):
    """Index of the δ-fair candidate with the lowest validation error (the paper's rule).

    Parameters
    ----------
    error : array-like of shape (n_candidates,)
        Validation error of each candidate (smaller is better).
    lower_bound : array-like of shape (n_candidates,)
        One-sided lower confidence bound of each candidate's FaiTH value (combined over folds).
    delta : float
        The fairness threshold δ. A candidate passes when its lower bound is below δ (the test
        of H0: ψ ≤ δ does not reject).
    on_none : {"raise", "fairest"}, default="raise"
        When no candidate passes: raise :class:`NoFairCandidateError`, or choose the candidate
        with the smallest lower bound (ties: smallest error, then first) with a
        :class:`NoFairCandidateWarning`.

    Returns
    -------
    int
        Ties in error are broken by the first candidate in grid order.

    Examples
    --------
    >>> from skfair_audit.model_selection import fair_choice
    >>> fair_choice([0.40, 0.35, 0.30], [0.00, 0.02, 0.06], delta=0.04)
    1
    """
    error = np.asarray(error, dtype=float)
    lower_bound = np.asarray(lower_bound, dtype=float)
    delta = check_delta(delta)
    check_on_none(on_none)
    message = (
        f"no candidate passes the delta-fairness test: the smallest FaiTH lower bound is "
        f"{np.min(lower_bound):.4g} >= delta={delta:g}."
    )
    return choose_candidate(
        error, lower_bound < delta, lower_bound, on_none=on_none, message=message,
        hint="Increase delta, widen the parameter grid towards stronger penalties, or set "
        "on_none='fairest'.",
    )


def choose_candidate(error, passes, badness, *, on_none="raise", message=None, hint=None):
    """Index of the most accurate candidate that passes, or the fallback when none does.

    The one rule behind :func:`fair_choice`, :func:`delta_fair_refit` and the criteria of
    :class:`FairModelSelector`.

    Parameters
    ----------
    error : array-like of shape (n_candidates,)
        Validation error (smaller is better); ties go to the first candidate.
    passes : array-like of bool, shape (n_candidates,)
    badness : array-like of shape (n_candidates,)
        The decision value oriented so that smaller is fairer: the fallback of
        ``on_none="fairest"`` is the smallest (ties: smallest error, then first).
    on_none : {"raise", "fairest"}, default="raise"
    message, hint : str, optional
        Why no candidate passes, and what to do (the error's last sentence).

    Returns
    -------
    int
    """
    check_on_none(on_none)
    error = np.asarray(error, dtype=float)
    passes = np.asarray(passes, dtype=bool)
    badness = np.asarray(badness, dtype=float)
    if passes.any():
        candidates = np.flatnonzero(passes)
        return int(candidates[np.argmin(error[candidates])])
    message = message or "no candidate passes the fairness criterion."
    if on_none == "raise":
        raise NoFairCandidateError(
            f"{message} "
            + (hint or "Relax the threshold, widen the grid towards fairer candidates, or set "
               "on_none='fairest'.")
        )
    fairest = np.flatnonzero(badness == np.min(badness))
    index = int(fairest[np.argmin(error[fairest])])
    warnings.warn(
        message + f" Falling back to the fairest candidate (index {index}).",
        NoFairCandidateWarning,
        stacklevel=user_stacklevel(),
    )
    return index
