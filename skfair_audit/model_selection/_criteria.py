r"""What a candidate of :class:`FairModelSelector` must pass: the fairness criteria.

A criterion audits one fitted fold model on its validation fold and says, from the audits of
all the folds, which candidates pass. Two are built in:

- :class:`FaithCriterion`: δ-fairness of individuals, the FaiTH test of Xue, Yurochkin & Sun
  (2020): a candidate passes unless its lower confidence bound on ψ is at least δ;
- :class:`GroupDifferenceCriterion`: group fairness certified by
  :class:`~skfair_audit.group.GroupDisparityAuditor`: a candidate passes when the
  simultaneous bounds put every group's disparity (a difference) within :math:`\pm\epsilon_0`.

:func:`make_selection_scorer` turns a criterion into a scorer for
:class:`~sklearn.model_selection.GridSearchCV` and :func:`fair_refit` into its ``refit``
callable: ``FairModelSelector`` is that search plus the bookkeeping the search lacks.
"""

from __future__ import annotations

import math
import numbers
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import zero_one_loss
from sklearn.pipeline import Pipeline
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing

from .._utils import column_list
from ..faith import FaithAuditor
from ..group import GroupDisparityAuditor
from ._scorers import bonferroni_level, check_delta, check_on_none, choose_candidate

__all__ = [
    "FaithCriterion",
    "GroupDifferenceCriterion",
    "SelectionCriterion",
    "delta_fair_refit",
    "fair_refit",
    "make_selection_scorer",
]

#: Keys of the per-fold audit of every criterion (``split<k>_test_<key>`` in ``cv_results_``).
FOLD_KEYS = ("statistic", "lower_bound", "upper_bound")


def _final_step(estimator):
    """The last step of a Pipeline (recursively), or the estimator itself."""
    while isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    return estimator


def as_column_list(columns):
    """``protected`` as a list (one name or position becomes a list of one), or None."""
    return None if columns is None else column_list(columns)


def n_nonzero_coef(model):
    """Non-zero coefficients of a (Pipeline's last) linear model; NaN without ``coef_``."""
    coef = getattr(_final_step(model), "coef_", None)
    if coef is None:
        return np.nan
    return float(np.count_nonzero(coef))


class SelectionCriterion(ABC):
    r"""Base of the criteria of :class:`FairModelSelector` (subclass it to add one).

    A criterion has a threshold and says, for each fitted fold model, three numbers on its
    validation fold (:meth:`audit_fold`): a point estimate ``statistic`` of a fairness
    quantity and one-sided confidence bounds ``lower_bound`` / ``upper_bound`` at the
    per-fold level :math:`1 - \alpha/k` (Bonferroni over the :math:`k` folds). The decision
    reads one of the bounds (:attr:`decision_bound`), takes the worst fold
    (:meth:`worst`: the largest value when smaller is fairer, the smallest otherwise) and
    compares it with the threshold (:meth:`passes`).

    **A ratio criterion** (e.g. "every impact ratio is at least 0.8") plugs in as a subclass
    with ``greater_is_fairer = True`` and ``decision_bound = "lower_bound"``: its
    :meth:`audit_fold` returns the smallest estimated ratio and simultaneous lower/upper
    bounds on the smallest ratio; :meth:`passes` is then ``worst >= threshold``, and the
    selector, its scorer, :func:`fair_refit`, the display and the plots need no change.

    Attributes
    ----------
    decision_bound : {"lower_bound", "upper_bound"}
    greater_is_fairer : bool
    needs_training_fold : bool
        Whether :meth:`audit_fold` needs the training fold (FaiTH learns its fair metric
        there); the selector then wraps the candidates so that they keep it.
    label : str
        Name of the audited quantity in tables and plots.
    """

    decision_bound = "upper_bound"
    greater_is_fairer = False
    needs_training_fold = False
    label = "fairness"
    threshold_name = "threshold"

    @property
    @abstractmethod
    def threshold(self):
        """The number the worst fold's decision bound is compared with."""

    @property
    @abstractmethod
    def confidence_level(self):
        """Family-wise confidence level of the audits (split over the folds)."""

    @property
    def protected(self):
        """Protected attributes named by the criterion's auditor, or None."""
        return None

    def template(self):
        """The auditor template: ``auditor``, or the default one when it is None.

        Returns
        -------
        estimator or None
        """
        auditor = getattr(self, "auditor", None)
        return self.default_auditor() if auditor is None else auditor

    def default_auditor(self):
        """The auditor template used when ``auditor`` is None (none by default).

        Returns
        -------
        estimator or None
        """
        return None

    def _check_auditor(self, kind):
        auditor = getattr(self, "auditor", None)
        if auditor is not None and not isinstance(auditor, kind):
            raise ValueError(f"auditor must be a {kind.__name__} instance or None, got "
                             f"{type(auditor).__name__}.")

    def __repr__(self):
        auditor = getattr(self, "auditor", None)
        extra = "" if auditor is None else f", auditor={auditor!r}"
        return f"{type(self).__name__}({self.threshold!r}{extra})"

    @abstractmethod
    def audit_fold(self, model, X, y, *, protected, confidence_level, random_state,
                   training=None):
        """``{"statistic", "lower_bound", "upper_bound"}`` of a fitted model on a fold.

        Parameters
        ----------
        model : estimator
            The candidate fit on the training fold.
        X, y : array-like
            The validation fold.
        protected : list
            Protected attributes (columns of ``X``).
        confidence_level : float
            Per-fold level of the bounds.
        random_state : int
            Seed of the audit's bootstrap.
        training : tuple, optional
            ``(X_train, y_train)``, when :attr:`needs_training_fold`.

        Returns
        -------
        dict
        """

    def worst(self, values):
        """The worst fold of each candidate.

        Parameters
        ----------
        values : array-like of shape (n_candidates, n_folds)
            A per-fold bound of each candidate.

        Returns
        -------
        ndarray of shape (n_candidates,)
            The largest value (smaller is fairer) or the smallest (greater is fairer).
        """
        values = np.asarray(values, dtype=float)
        return values.min(axis=-1) if self.greater_is_fairer else values.max(axis=-1)

    def passes(self, worst):
        """Whether each candidate passes, from its worst fold's decision bound.

        Parameters
        ----------
        worst : array-like of shape (n_candidates,)

        Returns
        -------
        ndarray of bool
        """
        worst = np.asarray(worst, dtype=float)
        return worst >= self.threshold if self.greater_is_fairer else worst < self.threshold

    @abstractmethod
    def guarantee(self, fold_level, n_splits):
        """The guarantee of the choice, in plain words.

        Parameters
        ----------
        fold_level : float
            Per-fold confidence level.
        n_splits : int
            Number of folds.

        Returns
        -------
        str
        """

    def no_pass_message(self, worst):
        """Why no candidate passes (the first sentence of the error or warning).

        Parameters
        ----------
        worst : array-like of shape (n_candidates,)
            Worst fold's decision bound of each candidate.

        Returns
        -------
        str
        """
        worst = np.asarray(worst, dtype=float)
        best = np.max(worst) if self.greater_is_fairer else np.min(worst)
        relation = "<" if self.greater_is_fairer else ">="
        return (
            f"no candidate passes the fairness criterion: the fairest worst-fold "
            f"{self.decision_bound.replace('_', ' ')} is {best:.4g} {relation} "
            f"{self.threshold_name}={self.threshold:g}."
        )

    def choose(self, error, worst, *, on_none="raise"):
        """Index of the most accurate candidate that passes (see :func:`choose_candidate`).

        Parameters
        ----------
        error : array-like
            Validation error of each candidate (smaller is better).
        worst : array-like
            Worst fold's decision bound of each candidate.
        on_none : {"raise", "fairest"}

        Returns
        -------
        int
        """
        worst = np.asarray(worst, dtype=float)
        return choose_candidate(error, self.passes(worst),
                                -worst if self.greater_is_fairer else worst,
                                on_none=on_none, message=self.no_pass_message(worst))


@dataclass(frozen=True, repr=False)
class FaithCriterion(SelectionCriterion):
    r"""δ-fairness of individuals: the FaiTH test of Xue, Yurochkin & Sun (2020, §5.2).

    On each fold, the candidate's fold model is audited by a
    :class:`~skfair_audit.faith.FaithAuditor` whose fair metric is learned on the training
    fold; the candidate passes when the one-sided lower bound :math:`\hat\psi_{\mathrm{low}}`
    of its FaiTH value is below δ on every fold (the test of :math:`H_0: \psi \le \delta`
    does not reject):

    .. math::

        \max_j \hat\psi_{\mathrm{low}, j} < \delta .

    Parameters
    ----------
    delta : float
        The fairness threshold δ (in units of the loss; for the 0-1 loss, an error rate).
    auditor : FaithAuditor, default=None
        Template of the audit settings (see :class:`FairModelSelector`); ``None`` means
        ``FaithAuditor(None, epsilon=0.0, space="auto")``.

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020, §5.2.

    Examples
    --------
    >>> from skfair_audit.model_selection import FaithCriterion
    >>> criterion = FaithCriterion(0.05)
    >>> criterion.passes([0.01, 0.05, 0.2]).tolist()
    [True, False, False]
    """

    delta: float
    auditor: object = None

    decision_bound = "lower_bound"
    needs_training_fold = True
    label = "FaiTH ψ"
    threshold_name = "δ"

    def __post_init__(self):
        check_delta(self.delta)
        self._check_auditor(FaithAuditor)

    @property
    def threshold(self):
        return float(self.delta)

    def default_auditor(self):
        return FaithAuditor(None, epsilon=0.0, space="auto")

    default_auditor.__doc__ = SelectionCriterion.default_auditor.__doc__

    @property
    def confidence_level(self):
        return self.template().confidence_level

    @property
    def protected(self):
        return self.template().protected

    def audit_fold(self, model, X, y, *, protected, confidence_level, random_state,
                   training=None):
        if training is None:
            raise ValueError(
                "the FaiTH criterion learns its fair metric on the training fold, which this "
                "scorer did not receive: use FairModelSelector (it keeps each fold's training "
                "rows), or make_faith_bound_scorer with the training part of a single split."
            )
        auditor = clone(self.template()).set_params(
            estimator=FrozenEstimator(model), protected=protected, delta=None,
            confidence_level=confidence_level, random_state=random_state, n_jobs=None,
            verbose=0,
        )
        result = auditor.fit(*training).audit(X, y)
        return {"statistic": float(result.statistic),
                "lower_bound": float(result.lower_bound),
                "upper_bound": float(result.upper_bound)}

    audit_fold.__doc__ = SelectionCriterion.audit_fold.__doc__

    def no_pass_message(self, worst):
        return (
            f"no candidate passes the delta-fairness test: the smallest FaiTH lower bound is "
            f"{np.min(worst):.4g} >= delta={self.delta:g}."
        )

    no_pass_message.__doc__ = SelectionCriterion.no_pass_message.__doc__

    def guarantee(self, fold_level, n_splits):
        return (
            f"Each candidate is audited on validation data; it passes when its one-sided "
            f"{fold_level:.0%} FaiTH lower bound is below δ = {self.delta:g}. A candidate "
            f"that is in fact δ-fair is wrongly discarded with probability at most "
            f"{(1 - fold_level) * n_splits:.0%}; the chosen model is the most accurate of "
            "those that pass."
        )

    guarantee.__doc__ = SelectionCriterion.guarantee.__doc__


@dataclass(frozen=True, repr=False)
class GroupDifferenceCriterion(SelectionCriterion):
    r"""Certified group fairness: every group's disparity within :math:`\pm\epsilon_0`.

    On each validation fold a :class:`~skfair_audit.group.GroupDisparityAuditor` computes
    simultaneous two-sided bounds :math:`[l_G, u_G]` on the disparity
    :math:`\epsilon(G) = E[L \mid G] - \theta` of every group of the collection (by default
    every intersection of the protected attributes, ``metric="selection_rate"`` against the
    overall rate: demographic parity). They give bounds on the worst absolute disparity
    :math:`D = \max_G |\epsilon(G)|`:

    .. math::

        \max_G \max(l_G, -u_G, 0) \;\le\; D \;\le\; \max_G \max(|l_G|, |u_G|) ,

    and the candidate passes (is *certified*) when the upper bound is below
    :math:`\epsilon_0` on every fold.

    Parameters
    ----------
    epsilon0 : float
        Largest tolerated absolute disparity (in units of the metric, e.g. a rate).
    auditor : GroupDisparityAuditor, default=None
        Template of the audit settings: metric, target, groups (``None``,
        ``"intersections"``, ``"intervals"`` or ``"boxes"``), depth, min_size, scale,
        n_resamples, ... Its ``estimator`` is replaced by each fitted fold model (frozen),
        ``protected`` by the selector's, ``procedure`` and ``alternative`` by ``"bounds"``
        and ``"two-sided"``, ``alpha`` by the per-fold level, ``random_state`` by the
        search seed. ``None`` means ``GroupDisparityAuditor(None,
        metric="selection_rate")``; its ``alpha`` (default 0.1) is the family-wise level.

    Notes
    -----
    If the fold model is unfair (:math:`D \ge \epsilon_0`), it is certified only when its
    simultaneous bounds miss, which happens with probability at most :math:`\alpha/k` per
    fold. The chosen candidate is picked among all candidates with the data: with
    :math:`m` candidates the union bound gives :math:`m\alpha/k` for "the chosen one is
    certified wrongly" (choose ``alpha`` accordingly). The certificate is about the models
    fit on the training folds; the refit model (``refit=True``) is fit on more rows.

    Examples
    --------
    >>> from skfair_audit.group import GroupDisparityAuditor
    >>> from skfair_audit.model_selection import GroupDifferenceCriterion
    >>> criterion = GroupDifferenceCriterion(
    ...     0.05, auditor=GroupDisparityAuditor(None, metric="false_positive_rate"))
    >>> criterion.passes([0.03, 0.05]).tolist()
    [True, False]
    """

    epsilon0: float
    auditor: object = None

    decision_bound = "upper_bound"
    threshold_name = "ε₀"

    def __post_init__(self):
        epsilon0 = self.epsilon0
        if (not isinstance(epsilon0, numbers.Real) or isinstance(epsilon0, bool)
                or not math.isfinite(epsilon0) or epsilon0 <= 0):
            raise ValueError(f"epsilon0 must be a finite number > 0, got {epsilon0!r}.")
        self._check_auditor(GroupDisparityAuditor)
        if self.auditor is not None:
            groups = self.auditor.groups
            if groups not in (None, "intersections", "intervals", "boxes"):
                raise ValueError(
                    "the group criterion builds the groups of each validation fold: groups "
                    f"must be None, 'intersections', 'intervals' or 'boxes', got {groups!r}."
                )

    @property
    def threshold(self):
        return float(self.epsilon0)

    def default_auditor(self):
        return GroupDisparityAuditor(None, metric="selection_rate")

    default_auditor.__doc__ = SelectionCriterion.default_auditor.__doc__

    @property
    def label(self):
        metric = self.template().metric
        name = metric if isinstance(metric, str) else getattr(metric, "name", "metric")
        return f"worst |{name} disparity|"

    @property
    def confidence_level(self):
        return 1.0 - float(self.template().alpha)

    @property
    def protected(self):
        return self.template().protected

    def audit_fold(self, model, X, y, *, protected, confidence_level, random_state,
                   training=None):
        auditor = clone(self.template()).set_params(
            estimator=FrozenEstimator(model), protected=protected, procedure="bounds",
            alternative="two-sided", alpha=1.0 - confidence_level,
            random_state=random_state, n_jobs=None, verbose=0,
        )
        result = auditor.fit(X, y).audit(X, y)
        active = result.active
        if not active.any():
            raise ValueError("no group of the collection has a row in the validation fold.")
        lower, upper = result.lower[active], result.upper[active]
        return {
            "statistic": float(np.max(np.abs(result.estimates[active]))),
            "lower_bound": float(np.max(np.maximum(np.maximum(lower, -upper), 0.0))),
            "upper_bound": float(np.max(np.maximum(np.abs(lower), np.abs(upper)))),
        }

    audit_fold.__doc__ = SelectionCriterion.audit_fold.__doc__

    def guarantee(self, fold_level, n_splits):
        return (
            f"Each candidate is audited on validation data by simultaneous two-sided "
            f"{fold_level:.0%} bounds on every group's disparity; it is certified when they "
            f"put every disparity within ±{self.epsilon0:g}. A candidate whose fold models "
            f"are not group-fair is certified with probability at most "
            f"{(1 - fold_level) * n_splits:.0%} (with m candidates, at most m times that for "
            "the chosen one); the chosen model is the most accurate of those certified."
        )

    guarantee.__doc__ = SelectionCriterion.guarantee.__doc__


class TrainingFoldModel(MetaEstimatorMixin, BaseEstimator):
    """A candidate that keeps the rows it was fit on (for criteria that audit with them).

    ``GridSearchCV`` hands a scorer only the validation fold; the FaiTH audit also needs the
    training fold (it learns its fair metric there). This wrapper fits ``estimator`` and
    keeps references to its training rows; :func:`make_selection_scorer` reads them.

    Parameters
    ----------
    estimator : estimator

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone.
    training_ : tuple
        ``(X, y)`` given to :meth:`fit`.
    classes_ : ndarray
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y, **fit_params):
        """Fit a clone of the estimator and keep ``(X, y)``.

        Parameters
        ----------
        X, y : array-like
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self
        """
        if get_config()["enable_metadata_routing"]:
            fit_params = process_routing(self, "fit", **fit_params).estimator.fit
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        self.training_ = (X, y)
        self.classes_ = getattr(self.estimator_, "classes_", np.unique(y))
        return self

    def predict(self, X):
        """Predictions of the fitted estimator."""
        return self.estimator_.predict(X)

    def get_metadata_routing(self):
        """Routing of :meth:`fit` metadata to the estimator's ``fit``.

        Returns
        -------
        MetadataRouter
        """
        return MetadataRouter(owner=type(self).__name__).add(
            estimator=self.estimator, method_mapping=MethodMapping().add(caller="fit",
                                                                         callee="fit"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags


class _SelectionScorer:
    """``scorer(estimator, X, y) -> dict``: the validation error and the criterion's audit.

    A plain class (not a closure) so that it pickles for parallel ``GridSearchCV`` workers.
    """

    def __init__(self, criterion, protected, confidence_level, random_state):
        self.criterion = criterion
        self.protected = protected
        self.confidence_level = confidence_level
        self.random_state = random_state
        self.progress = None  # a bar in the parent process, never pickled
        self.ticks = 0  # audits scored in this process

    def __getstate__(self):
        return {**self.__dict__, "progress": None, "ticks": 0}

    def __call__(self, estimator, X, y):
        training = None
        if isinstance(estimator, TrainingFoldModel):
            estimator, training = estimator.estimator_, estimator.training_
        error = zero_one_loss(y, estimator.predict(X))
        scores = {"error": -float(error)}
        scores.update(self.criterion.audit_fold(
            estimator, X, y, protected=self.protected, confidence_level=self.confidence_level,
            random_state=self.random_state, training=training))
        count = n_nonzero_coef(estimator)
        # GridSearchCV warns on non-finite scores: -1 stands for "no coef_"
        scores["n_nonzero_coef"] = -1.0 if np.isnan(count) else count
        self.ticks += 1
        if self.progress is not None:
            self.progress.update(1)
        return scores

    def __repr__(self):
        return (f"make_selection_scorer({self.criterion!r}, protected={self.protected!r}, "
                f"confidence_level={self.confidence_level!r}, "
                f"random_state={self.random_state!r})")


def make_selection_scorer(criterion, *, protected=None, n_splits=1, random_state=0):
    """The scorer of :class:`FairModelSelector`: validation error and the criterion's audit.

    Parameters
    ----------
    criterion : SelectionCriterion
        E.g. :class:`GroupDifferenceCriterion` or :class:`FaithCriterion` (the latter needs
        the candidates wrapped so that they keep their training fold, as the selector does).
    protected : list of str or int, default=None
        Protected attributes (columns of ``X``); default: the criterion auditor's.
    n_splits : int, default=1
        Number of folds: the audits run at the Bonferroni level
        ``1 - (1 - confidence_level) / n_splits``.
    random_state : int, default=0
        Seed of every audit's bootstrap (common random numbers across candidates).

    Returns
    -------
    callable
        ``scorer(estimator, X, y) -> dict`` with ``"error"`` (the negated 0-1 loss, so that
        ``GridSearchCV`` ranks it), ``"statistic"``, ``"lower_bound"``, ``"upper_bound"``
        and ``"n_nonzero_coef"`` (-1 for models without ``coef_``; ``GridSearchCV`` warns on
        non-finite scores).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfair_audit.model_selection import (GroupDifferenceCriterion,
    ...                                           make_selection_scorer)
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"g": rng.integers(0, 2, 1000), "x": rng.normal(size=1000)})
    >>> y = (X.x + rng.normal(size=1000) > 0).astype(int)
    >>> model = LogisticRegression().fit(X[:600], y[:600])
    >>> scorer = make_selection_scorer(GroupDifferenceCriterion(0.1), protected=["g"])
    >>> scores = scorer(model, X[600:], y[600:])
    >>> sorted(scores)
    ['error', 'lower_bound', 'n_nonzero_coef', 'statistic', 'upper_bound']
    >>> bool(scores["lower_bound"] <= scores["statistic"] <= scores["upper_bound"])
    True
    """
    if not isinstance(criterion, SelectionCriterion):
        raise ValueError(
            f"criterion must be a SelectionCriterion, got {type(criterion).__name__}."
        )
    if (not isinstance(n_splits, numbers.Integral) or isinstance(n_splits, bool)
            or n_splits < 1):
        raise ValueError(f"n_splits must be a positive integer, got {n_splits!r}.")
    protected = as_column_list(criterion.protected if protected is None else protected)
    if not protected:
        raise ValueError("the scorer needs the protected attributes: pass protected=[...].")
    level = bonferroni_level(criterion.confidence_level, int(n_splits))
    return _SelectionScorer(criterion, protected, level, random_state)


def fair_refit(criterion, *, on_none="raise"):
    """A ``refit`` callable for ``GridSearchCV`` with :func:`make_selection_scorer`.

    It returns the index of the candidate with the highest ``mean_test_error`` (the lowest
    validation error, the scorer's errors being negated) among those that pass the
    criterion on their worst fold (``split<k>_test_<decision_bound>``).

    Parameters
    ----------
    criterion : SelectionCriterion
    on_none : {"raise", "fairest"}, default="raise"
        When no candidate passes: raise :class:`NoFairCandidateError`, or choose the one
        whose worst fold is the fairest (ties: the most accurate) with a
        :class:`NoFairCandidateWarning`.

    Returns
    -------
    callable
        ``refit(cv_results) -> int``.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.model_selection import GroupDifferenceCriterion, fair_refit
    >>> cv_results = {"mean_test_error": np.array([-0.40, -0.35, -0.30]),
    ...               "split0_test_upper_bound": np.array([0.02, 0.04, 0.09])}
    >>> fair_refit(GroupDifferenceCriterion(0.05))(cv_results)
    1
    """
    if not isinstance(criterion, SelectionCriterion):
        raise ValueError(
            f"criterion must be a SelectionCriterion, got {type(criterion).__name__}."
        )
    return _FairRefit(criterion, "error", criterion.decision_bound, on_none)


class _FairRefit:
    """``refit(cv_results) -> int``; a class so that a fitted search pickles."""

    def __init__(self, criterion, error_key, bound_key, on_none):
        check_on_none(on_none)
        self.criterion = criterion
        self.error_key = error_key
        self.bound_key = bound_key
        self.on_none = on_none

    def __call__(self, cv_results):
        pattern = re.compile(rf"^split(\d+)_test_{re.escape(self.bound_key)}$")
        split_keys = [key for key in cv_results if pattern.match(key)]
        if not split_keys:
            raise KeyError(
                f"cv_results has no 'split<k>_test_{self.bound_key}' entries: score with "
                "make_selection_scorer(criterion)."
            )
        error_name = f"mean_test_{self.error_key}"
        if error_name not in cv_results:
            raise KeyError(f"cv_results has no {error_name!r}: name the error {self.error_key!r}.")
        values = np.column_stack([cv_results[key] for key in split_keys])
        return self.criterion.choose(-np.asarray(cv_results[error_name], dtype=float),
                                     self.criterion.worst(values), on_none=self.on_none)


def delta_fair_refit(delta, *, error_key="error", lower_key="faith_lower", on_none="raise"):
    """A ``refit`` callable for ``GridSearchCV``: the paper's δ-fair model selection.

    ``GridSearchCV(..., scoring={error_key: make_error_scorer(), lower_key:
    make_faith_bound_scorer(...)}, refit=delta_fair_refit(delta))`` refits the candidate with the
    highest ``mean_test_<error_key>`` (the lowest error, scores being negated errors) among those
    whose FaiTH lower bound is below δ on every split (the maximum of ``split<k>_test_<lower_key>``
    over the splits is below δ), like :class:`FairModelSelector`.

    Parameters
    ----------
    delta : float
        The fairness threshold δ.
    error_key, lower_key : str
        Names of the two scorers in the ``scoring`` dict.
    on_none : {"raise", "fairest"}, default="raise"
        See :func:`fair_choice`.

    Returns
    -------
    callable
        ``refit(cv_results) -> int``. ``GridSearchCV`` then leaves ``best_score_`` unset.

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.model_selection import delta_fair_refit
    >>> cv_results = {"mean_test_error": np.array([-0.40, -0.35, -0.30]),
    ...               "split0_test_faith_lower": np.array([0.00, 0.02, 0.06])}
    >>> delta_fair_refit(0.04)(cv_results)
    1
    """
    return _FairRefit(FaithCriterion(delta), error_key, lower_key, on_none)
