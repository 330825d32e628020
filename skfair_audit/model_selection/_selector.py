"""``FairModelSelector``: the δ-fair model selection of Xue, Yurochkin & Sun (2020, §5.2),
and fairness-constrained model selection in general, on scikit-learn's ``GridSearchCV``."""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone, is_classifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    ParameterGrid,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import ClassifierTags, get_tags, indexable
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._progress import progress_bar
from .._utils import (
    BOOLEAN,
    CARD_ROWS,
    COLUMN_LIST,
    N_JOBS,
    RANDOM_STATE,
    STRING,
    VERBOSE,
    InstanceOf,
    Interval,
    Options,
    Predicate,
    card_figure,
    check_params,
    html_card,
    html_table,
    html_verdict,
    int_seed,
    take_rows,
)
from ..faith import FaithAuditor
from ._criteria import (
    FaithCriterion,
    SelectionCriterion,
    TrainingFoldModel,
    _FairRefit,
    _SelectionScorer,
    as_column_list,
)
from ._display import params_text, selection_card
from ._logistic import default_c_path, l1_logistic_regression
from ._scorers import bonferroni_level

__all__ = ["CoefficientPath", "FairModelSelector", "coefficient_path"]

#: Prefix of the candidates' parameters when they are wrapped in :class:`TrainingFoldModel`.
_WRAPPED = "estimator__"


def _default_estimator():
    return l1_logistic_regression()


def _final_step(estimator):
    """The last step of a Pipeline (recursively), or the estimator itself."""
    while isinstance(estimator, Pipeline):
        estimator = estimator.steps[-1][1]
    return estimator


def _final_prefix(estimator):
    """``"<step>__"`` prefixes leading to the last step of a (nested) Pipeline."""
    prefix = ""
    while isinstance(estimator, Pipeline):
        name, estimator = estimator.steps[-1]
        prefix += f"{name}__"
    return prefix


def _prefixed(grid, prefix):
    """``param_grid`` with every parameter name prefixed (a dict or a list of dicts)."""
    if isinstance(grid, dict):
        return {prefix + key: value for key, value in grid.items()}
    return [_prefixed(item, prefix) for item in grid]


def _is_cv(value):
    """An int k >= 2, a splitter or an iterable of (train, validation) pairs."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return value >= 2
    return hasattr(value, "split") or (hasattr(value, "__iter__") and not isinstance(value, str))


def _is_fraction(value):
    return (isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
            and 0.0 < value < 1.0)


def _selection_results(raw, criterion, prefix):
    """The selector's ``cv_results_`` from ``GridSearchCV``'s (see the class docstring)."""

    def strip(name):
        return name[len(prefix):] if prefix and name.startswith(prefix) else name

    results = {}
    for key, value in raw.items():
        if key == "params":
            results[key] = [{strip(name): v for name, v in params.items()} for params in value]
        elif key.startswith("param_"):
            results["param_" + strip(key[len("param_"):])] = value
        elif key.endswith("_test_error") and not key.startswith(("std_", "rank_")):
            results[key] = -np.asarray(value, dtype=float)  # the scorer negates the error
        elif key.endswith("_test_n_nonzero_coef"):
            count = np.where(np.asarray(value) < 0, np.nan, value)  # -1: no coef_
            if key.startswith("split"):
                results[key.replace("_test_", "_")] = count
            elif key.startswith("mean_"):
                results["n_nonzero_coef"] = count
        elif key.startswith("split") or key in (
            "std_test_error", "rank_test_error", "mean_test_statistic", "std_test_statistic",
        ) or key.endswith("_time"):
            results[key] = value
    for key in ("lower_bound", "upper_bound"):
        folds = [value for name, value in raw.items()
                 if name.startswith("split") and name.endswith(f"_test_{key}")]
        results[key] = criterion.worst(np.column_stack(folds))
    results["passes"] = criterion.passes(results[criterion.decision_bound])
    return results


def _estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self._base_estimator(), attr)

    return check


def _delegated(method, doc):
    """The method ``method(X)`` of :class:`FairModelSelector`: the chosen model's, available
    when that model has it (checks that it was refit and validates ``X`` first)."""

    def delegated(self, X):
        self._check_refit(method)
        self._validate_X_y(X, reset=False)
        return getattr(self.best_estimator_, method)(X)

    delegated.__name__ = method
    delegated.__qualname__ = f"FairModelSelector.{method}"
    delegated.__doc__ = doc
    return available_if(_estimator_has(method))(delegated)


class FairModelSelector(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    r"""Choose the most accurate model among those that pass a fairness test (FaiTH by default).

    The model-selection strategy of Xue, Yurochkin & Sun (2020, §5.2): fit every candidate
    (by default ℓ1-penalised logistic regressions along a path of :math:`C = 1/\lambda`) on the
    training data; on validation data compute its error rate and the one-sided
    :math:`(1-\alpha)` lower confidence bound :math:`\hat\psi_{\mathrm{low}}` of its FaiTH value
    :math:`\psi` (the worst-case increase of the error under the fair metric, see
    :class:`~skfair_audit.faith.FaithAuditor`); the candidates that pass the test of
    :math:`H_0: \psi \le \delta` are those with :math:`\hat\psi_{\mathrm{low}} < \delta`; choose
    the one with the lowest validation error:

    .. math::

        \hat k = \operatorname*{arg\,min}_{k \,:\, \hat\psi_{\mathrm{low}, k} < \delta}
        \widehat{\mathrm{err}}_k .

    Any fairness criterion may replace the FaiTH test (``criterion``): e.g.
    :class:`GroupDifferenceCriterion`, certified group fairness through
    :class:`~skfair_audit.group.GroupDisparityAuditor`. The search is scikit-learn's
    :class:`~sklearn.model_selection.GridSearchCV` with the scorer of
    :func:`make_selection_scorer` and the ``refit`` rule of :func:`fair_refit`; the selector
    adds what the search lacks: the single seeded split of the paper, the default C path, the
    Bonferroni level of the per-fold audits, the training fold for the FaiTH metric, the
    decision columns of ``cv_results_``, the display and the plots.

    Parameters
    ----------
    estimator : classifier, default=None
        The model to tune; any binary classifier (the audit only needs its predictions).
        ``None`` means :func:`l1_logistic_regression` (ℓ1 on every scikit-learn version), which
        needs numeric features; for categorical data pass e.g.
        ``make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())``.
    param_grid : dict or list of dicts, default=None
        Candidates, as in :class:`~sklearn.model_selection.GridSearchCV`. ``None`` is allowed
        when the estimator (or a Pipeline's last step) is a ``LogisticRegression``: the grid is
        then ``{"<prefix>C": default_c_path(X_encoded, y, n_values=30)}``, from the empty model
        to an essentially unpenalised one, computed on all the data given to :meth:`fit`
        (encoded by the Pipeline's first steps).
    delta : float, default=None
        The FaiTH threshold δ (in units of the loss; for the 0-1 loss, an error rate).
        Required unless ``criterion`` is given.
    criterion : SelectionCriterion, default=None
        What a candidate must pass. ``None`` means ``FaithCriterion(delta, auditor)``, the
        paper's δ-fairness test; otherwise ``delta`` and ``auditor`` must be None, e.g.
        ``GroupDifferenceCriterion(0.05, auditor=GroupDisparityAuditor(None,
        metric="selection_rate"))``.
    protected : list of str or int, default=None
        Protected attributes (columns of ``X``). Required here or in the (criterion's)
        auditor's ``protected``; if both are given they must agree.
    cv : int, float, cross-validation generator or iterable, default=5
        An int k: stratified k-fold. A float in (0, 1): the paper's single train/validation
        split, stratified, with this validation fraction (seeded by ``random_state``). A
        splitter or an iterable of ``(train, validation)`` index pairs (e.g. one pair, or a
        :class:`~sklearn.model_selection.PredefinedSplit`) reproduces a given split exactly.
    auditor : FaithAuditor, default=None
        Template of the audit settings: its ``estimator`` is replaced by each fitted candidate
        (frozen), ``protected`` by the resolved protected attributes, ``confidence_level`` by
        the per-fold Bonferroni level, ``random_state`` by the search seed, ``delta``, ``n_jobs``
        and ``verbose`` by ``None``, ``None`` and 0. ``None`` means
        ``FaithAuditor(None, epsilon=0.0, space="auto")``: the grid sample space on categorical
        features, the reference one on numeric features (a validation row may move to the
        training fold's rows, each with every protected level, or to its own counterfactual
        twins), so that continuous features work and validation folds may hold values unseen
        in training; sensitive-subspace fair metric learned on each training
        fold, 0-1 loss, uniform bounds (``method="uniform"``), 1000 resamples, 95%.
        At ε = 0, ψ is the increase of the error rate when individuals may be moved to the
        other protected groups for free (the other features fixed).
    on_none : {"raise", "fairest"}, default="raise"
        When no candidate passes: raise :class:`NoFairCandidateError`, or choose the candidate
        with the smallest combined lower bound with a :class:`NoFairCandidateWarning`.
    refit : bool or "validated", default=True
        ``True``: refit the chosen candidate on all the data as ``best_estimator_`` (as
        ``GridSearchCV``). ``"validated"`` (single split only): ``best_estimator_`` is the
        chosen candidate fit on the training part, i.e. the very model that passed the audit
        on the validation part (the paper's procedure). Prefer it when the parameters'
        meaning depends on the sample size: ``C`` multiplies the *summed* loss, so refitting
        on more rows with the same ``C`` weakens the penalty and may bring back the
        variables (e.g. a protected attribute) that the validated model had dropped; the
        refit model has not been audited. ``False``: no refit.
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
        Seeds the bootstrap of every audit and the split when ``cv`` is a float. An int ``s``
        is used as is: the audits equal those of ``FaithAuditor(..., random_state=s)``.
    n_jobs : int, default=None
        Parallel (candidate, fold) fits, as ``GridSearchCV(n_jobs=...)``; the results are
        identical for any value.
    verbose : int, default=0
        0: silent; otherwise a progress bar over the (candidate, fold) fits and audits (tqdm
        when installed, see ``pip install 'skfair_audit[progress]'``): live when the fits run
        in this process, completed when a parallel search returns. It never changes the
        result.

    Attributes
    ----------
    cv_results_ : dict of ndarrays
        One entry per candidate, as in ``GridSearchCV``: ``params``, ``param_<name>``,
        ``split<k>_test_error``, ``mean_test_error``, ``std_test_error``, ``rank_test_error``
        (validation error rate); ``split<k>_test_statistic``, ``mean_test_statistic``,
        ``std_test_statistic`` (the criterion's statistic: FaiTH ψ̂ by default);
        ``split<k>_test_lower_bound``, ``split<k>_test_upper_bound`` (bounds at the per-fold
        level); ``lower_bound``, ``upper_bound`` (the fold bounds combined: the worst fold, see
        Notes); ``passes`` (FaiTH: ``lower_bound < delta``; :class:`GroupDifferenceCriterion`:
        ``upper_bound < epsilon0``); ``split<k>_n_nonzero_coef``, ``n_nonzero_coef``
        (mean over folds; NaN for models without ``coef_``); ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time``. These are
        ``GridSearchCV``'s ``cv_results_`` with the error rate's sign restored (the scorer
        negates it), the Pipeline prefix of the FaiTH wrapper removed, and the ranks of the
        audit columns (meaningless) left out.
    best_index_ : int
    best_params_ : dict
    best_estimator_ : classifier
        The chosen candidate refit on all the data (when ``refit``).
    classes_ : ndarray of shape (2,)
    n_splits_ : int
    param_grid_ : dict or list of dicts
        The grid searched (the default C path when ``param_grid`` is None).
    protected_ : list
    criterion_ : SelectionCriterion
        The criterion applied (``FaithCriterion(delta, auditor)`` by default).
    fold_confidence_level_ : float
        The per-fold level of the bounds, :math:`1 - \alpha/k`.
    refit_time_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray, when ``X`` has string column names

    See Also
    --------
    make_selection_scorer, fair_refit : the same choice inside ``GridSearchCV``.
    delta_fair_refit : the FaiTH choice inside ``GridSearchCV`` on a single split.
    SensitiveFeaturesAdapter : fairlearn's mitigators as candidates.
    skfair_audit.faith.FaithAuditor : the audit of one model.

    Notes
    -----
    **Several folds.** Each fold's model is a different model, audited on its own validation
    fold with a metric learned on its own training fold. A candidate passes when its FaiTH
    lower bound is below δ on **every** fold, each bound computed at the Bonferroni level
    :math:`1 - \alpha/k`: by the union bound the discarding rule "some fold rejects
    :math:`\psi_j \le \delta`" is a level-α test of "all k fold models are δ-fair", whatever the
    dependence between folds, so a δ-fair hyperparameter is wrongly discarded with probability at
    most α, as with the paper's single split (k = 1 is exactly the paper's rule). Equivalently,
    ``lower_bound = max_j lower_j`` and ``upper_bound = max_j upper_j`` are simultaneous
    :math:`(1-\alpha)` one-sided bounds for the worst fold's value :math:`\max_j \psi_j`.
    The validation error is averaged over folds.

    **Bootstrap seeds.** All audits of the search use the same seed (common random numbers): on
    a fold every candidate is audited on the same bootstrap resamples of the validation data,
    so that differences between candidates are not blurred by independent Monte-Carlo noise,
    and results do not depend on the order or the process in which tasks run.

    **The search.** ``GridSearchCV`` fits every (candidate, fold) from scratch (a clone per
    fit, so a ``warm_start`` of the estimator has no effect); the default liblinear solver
    fits each ℓ1 logistic regression in milliseconds. The FaiTH criterion learns its fair
    metric on the training fold: the candidates are then wrapped so that each fold model
    keeps its training rows for the scorer (the wrapper is removed from the results and
    from ``best_estimator_``).

    **Other candidates.** ``param_grid`` may switch whole models, as in ``GridSearchCV``:
    with ``estimator=Pipeline([("model", l1_logistic_regression())])``, the grid
    ``[{"model__C": [...]}, {"model": [SensitiveFeaturesAdapter(ThresholdOptimizer(...),
    protected=["race"])]}]`` puts fairlearn's mitigators beside the ℓ1 path.

    **Metadata routing.** With ``sklearn.set_config(enable_metadata_routing=True)``, metadata
    passed to :meth:`fit` is routed to the estimator's ``fit`` and the splitter's ``split`` as
    requested. When routing is off, every fit parameter goes to the estimator's ``fit``
    (per-sample arrays sliced to the training fold). Sample weights weight the fits only: the
    validation error and the audits are unweighted.

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020, §5.2.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import FaithAuditor
    >>> from skfair_audit.model_selection import FairModelSelector, l1_logistic_regression
    >>> rng = np.random.default_rng(0)
    >>> n = 2000
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], n)})
    >>> logit = (-1.2 + 2.5 * (X.priors == ">3") + 1.0 * (X.priors == "1-3")
    ...          + 0.6 * (X.group == "b"))
    >>> y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    >>> model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    >>> selector = FairModelSelector(model, delta=0.05, protected=["group"], cv=0.3,
    ...                              auditor=FaithAuditor(None, epsilon=0.0, n_resamples=200),
    ...                              random_state=0).fit(X, y)
    >>> results = selector.cv_results_
    >>> results["passes"].astype(int)   # the path's dense end flips decisions with the group
    array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
           0, 0])
    >>> print(f"{results['mean_test_error'][selector.best_index_]:.3f}")
    0.353
    >>> selector.best_estimator_[-1].coef_.round(2)    # group_b, priors 1-3, priors >3
    array([[0.  , 0.  , 0.62]])
    """

    def __init__(
        self,
        estimator=None,
        *,
        param_grid=None,
        delta=None,
        criterion=None,
        protected=None,
        cv=5,
        auditor=None,
        on_none="raise",
        refit=True,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.delta = delta
        self.criterion = criterion
        self.protected = protected
        self.cv = cv
        self.auditor = auditor
        self.on_none = on_none
        self.refit = refit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    _parameter_constraints = {
        "estimator": [None, Predicate(lambda e: hasattr(e, "fit"), "an estimator (with fit)")],
        "param_grid": [None, InstanceOf((dict, list), "a dict or a list of dicts")],
        "delta": [None, Interval("real", 0, None)],
        "criterion": [None, InstanceOf((SelectionCriterion,), "a SelectionCriterion")],
        "protected": [None, STRING, Interval("integral"), COLUMN_LIST],
        "cv": [Predicate(_is_fraction, "a float in (0, 1) (the validation fraction of a "
                                       "single split)"),
               Predicate(_is_cv, "an integer >= 2, a splitter or an iterable of "
                                 "(train, validation) pairs")],
        "auditor": [None, InstanceOf((FaithAuditor,), "a FaithAuditor instance")],
        "on_none": [Options(("raise", "fairest"))],
        "refit": [BOOLEAN, Options(("validated",))],
        "random_state": [RANDOM_STATE],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    # -- configuration ------------------------------------------------------------------
    def _base_estimator(self):
        return _default_estimator() if self.estimator is None else self.estimator

    def _criterion(self):
        """The criterion: ``criterion``, or the FaiTH test built from ``delta``/``auditor``."""
        if self.criterion is not None:
            if self.delta is not None or self.auditor is not None:
                raise ValueError(
                    "delta and auditor configure the default FaiTH criterion: with "
                    "criterion=... leave them None (put them in the criterion)."
                )
            return self.criterion
        if self.delta is None:
            raise ValueError(
                "FairModelSelector needs delta (the FaiTH threshold) or a criterion, e.g. "
                "GroupDifferenceCriterion(0.05)."
            )
        return FaithCriterion(self.delta, self.auditor)

    def _protected(self, criterion):
        own, theirs = as_column_list(self.protected), as_column_list(criterion.protected)
        if own and theirs and own != theirs:
            raise ValueError(
                f"protected={own} disagrees with auditor.protected={theirs}; give it once."
            )
        protected = own or theirs
        if not protected:
            raise ValueError(
                "FairModelSelector needs the protected attributes: pass protected=[...] (columns "
                "of X, e.g. ['race', 'sex']) or set them on the auditor."
            )
        return protected

    def _splitter(self, seed):
        cv = self.cv
        if isinstance(cv, numbers.Real) and not isinstance(cv, numbers.Integral):
            if not 0.0 < cv < 1.0:
                raise ValueError(
                    f"a float cv is the validation fraction of a single split and must lie in "
                    f"(0, 1), got {cv!r}."
                )
            return StratifiedShuffleSplit(n_splits=1, test_size=cv, random_state=seed)
        return check_cv(cv, classifier=True)

    def _param_grid(self, estimator, X, y):
        if self.param_grid is not None:
            return self.param_grid
        final = _final_step(estimator)
        if not isinstance(final, LogisticRegression):
            raise ValueError(
                "param_grid is required unless the estimator (or a Pipeline's last step) is a "
                f"LogisticRegression; got {type(final).__name__}."
            )
        X_encoded = X
        if isinstance(estimator, Pipeline) and len(estimator.steps) > 1:
            X_encoded = clone(estimator[:-1]).fit_transform(X, y)
        path = default_c_path(
            X_encoded,
            y,
            fit_intercept=final.fit_intercept,
            intercept_scaling=final.intercept_scaling,
        )
        return {f"{_final_prefix(estimator)}C": [float(c) for c in path]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator_tags = get_tags(self._base_estimator())
        tags.input_tags = estimator_tags.input_tags
        tags.input_tags.sparse = False  # the FaiTH sample space is built from dense rows
        tags.target_tags.required = True
        tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.non_deterministic = self.random_state is None
        return tags

    def _validate_X_y(self, X, y=None, reset=True):
        """Check X (and y) and record ``n_features_in_`` / ``feature_names_in_``.

        The estimators receive the original ``X`` (e.g. a DataFrame of categories).
        """
        allow_nan = get_tags(self._base_estimator()).input_tags.allow_nan
        kwargs = {"dtype": None, "accept_sparse": False, "ensure_all_finite": not allow_nan}
        if reset:
            validate_data(self, X, y, reset=True, y_numeric=False, **kwargs)
        else:
            validate_data(self, X, reset=False, **kwargs)

    def get_metadata_routing(self):
        """Routing of :meth:`fit` metadata to the estimator's ``fit`` and the ``split``.

        Returns
        -------
        MetadataRouter
        """
        router = MetadataRouter(owner=self.__class__.__name__)
        router.add(
            estimator=self._base_estimator(),
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )
        seed = self.random_state if isinstance(self.random_state, numbers.Integral) else None
        router.add(
            splitter=self._splitter(seed),
            method_mapping=MethodMapping().add(caller="fit", callee="split"),
        )
        return router

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, **params):
        """Run the search: fit and audit every candidate on every fold, choose, and refit.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels.
        **params : dict
            With metadata routing on: routed to the estimator's ``fit`` and the splitter's
            ``split`` as requested. Off: passed to the estimator's ``fit``.

        Returns
        -------
        self : FairModelSelector
        """
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)
        criterion = self._criterion()
        self._validate_X_y(X, y)
        X, y = indexable(X, y)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(
                "Only binary classification is supported: FairModelSelector needs y with "
                f"exactly 2 classes, got {classes.size} class{'' if classes.size == 1 else 'es'}."
            )
        estimator = self._base_estimator()
        if not is_classifier(estimator):
            raise ValueError(f"estimator must be a classifier, got {type(estimator).__name__}.")
        self.protected_ = self._protected(criterion)
        self.criterion_ = criterion

        routing = get_config()["enable_metadata_routing"]
        if routing:
            routed = process_routing(self, "fit", **params)
            fit_params, split_params = routed.estimator.fit, routed.splitter.split
        else:
            fit_params, split_params = params, {}

        seed = int_seed(self.random_state)
        splits = list(self._splitter(seed).split(X, y, **split_params))
        self.n_splits_ = len(splits)
        if self.n_splits_ < 1:
            raise ValueError("cv produced no split.")
        if self.refit == "validated" and self.n_splits_ != 1:
            raise ValueError(
                "refit='validated' keeps the model fit on the training part of a single split; "
                f"cv gives {self.n_splits_} splits."
            )
        self.param_grid_ = self._param_grid(estimator, X, y)
        n_candidates = len(ParameterGrid(self.param_grid_))
        self.fold_confidence_level_ = bonferroni_level(criterion.confidence_level,
                                                       self.n_splits_)

        # What the search lacks: the training fold for criteria that audit with it (FaiTH
        # learns its fair metric there), and the per-fold level of the audits.
        wrap = criterion.needs_training_fold
        prefix = _WRAPPED if wrap else ""
        scorer = _SelectionScorer(criterion, self.protected_, self.fold_confidence_level_, seed)
        rule = _FairRefit(criterion, "error", criterion.decision_bound, self.on_none)
        search = GridSearchCV(
            TrainingFoldModel(estimator) if wrap else estimator,
            _prefixed(self.param_grid_, prefix),
            scoring=scorer,
            cv=splits,
            refit=rule if self.refit is True else False,
            n_jobs=self.n_jobs,
            error_score="raise",
        )
        total = n_candidates * self.n_splits_
        bar = progress_bar(
            total,
            f"{n_candidates} candidate{'s' * (n_candidates > 1)} × {self.n_splits_} "
            f"fold{'s' * (self.n_splits_ > 1)}",
            unit="fit", verbose=self.verbose)
        scorer.progress = bar  # ticks in this process; never pickled to workers
        try:
            with warnings.catch_warnings():
                # fit parameters (e.g. sample_weight) weight the fits only, as documented:
                # scikit-learn >= 1.8 warns that the scorer takes no weights
                warnings.filterwarnings(
                    "ignore", message="(?s)The scoring .* does not support sample_weight",
                    category=UserWarning)
                search.fit(X, y, **fit_params)
            bar.update(total - scorer.ticks)  # fits that ran in other processes
        finally:
            scorer.progress = None
            bar.close()

        self.cv_results_ = _selection_results(search.cv_results_, criterion, prefix)
        self.best_index_ = int(search.best_index_) if self.refit is True else rule(
            search.cv_results_)
        self.best_params_ = self.cv_results_["params"][self.best_index_]
        if self.refit is True:
            best = search.best_estimator_
            self.best_estimator_ = best.estimator_ if wrap else best
            self.refit_time_ = search.refit_time_
        elif self.refit == "validated":
            train = splits[0][0]
            self.best_estimator_, self.refit_time_ = self._fit_validated(
                estimator, X, y, train, fit_params)
        if self.refit:
            self.classes_ = np.asarray(getattr(self.best_estimator_, "classes_", classes))
        else:
            for stale in ("best_estimator_", "refit_time_"):  # from an earlier fit
                self.__dict__.pop(stale, None)
            self.classes_ = classes
        return self

    def _fit_validated(self, estimator, X, y, train, fit_params):
        """The chosen candidate fit on the training part of the single split."""
        n_rows = np.shape(X)[0]
        fold_params = {
            key: take_rows(value, train)
            if (hasattr(value, "__len__") or hasattr(value, "shape"))
            and not isinstance(value, str | dict) and np.shape(value)[:1] == (n_rows,)
            else value
            for key, value in fit_params.items()
        }
        start = time.perf_counter()
        model = clone(estimator).set_params(**self.best_params_).fit(
            take_rows(X, train), take_rows(y, train), **fold_params)
        return model, time.perf_counter() - start

    # -- delegation ---------------------------------------------------------------------
    def _check_refit(self, method):
        check_is_fitted(self)
        if not self.refit:
            raise AttributeError(
                f"{method} is not available with refit=False: the chosen candidate was not "
                "refit on all the data."
            )

    predict = _delegated("predict", "Predict with the chosen model (``best_estimator_``).")
    predict_proba = _delegated("predict_proba", "Class probabilities of the chosen model.")
    predict_log_proba = _delegated("predict_log_proba",
                                   "Log class probabilities of the chosen model.")
    decision_function = _delegated("decision_function",
                                   "Decision function of the chosen model.")

    def score(self, X, y, sample_weight=None):
        """The chosen model's ``score`` (accuracy for classifiers).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Test rows.
        y : array-like of shape (n_samples,)
            Their labels.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, passed to the chosen model's ``score``.

        Returns
        -------
        float
        """
        self._check_refit("score")
        self._validate_X_y(X, reset=False)
        if sample_weight is None:
            return self.best_estimator_.score(X, y)
        return self.best_estimator_.score(X, y, sample_weight=sample_weight)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "best_index_")

    # -- notebook display: scikit-learn's diagram, then the choice once fitted -----------
    @property
    def _repr_html_(self):
        diagram = super()._repr_html_  # AttributeError unless display="diagram", as sklearn
        return lambda: diagram() + self._selection_html()

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if "text/html" in bundle:
            bundle["text/html"] += self._selection_html()
        return bundle

    def _selection_html(self):
        return selection_card(self) if self.__sklearn_is_fitted__() else ""

    def results_frame(self):
        """``cv_results_`` as a :class:`pandas.DataFrame` (one row per candidate)."""
        check_is_fitted(self)
        from .._utils import import_optional

        pd = import_optional("pandas", "FairModelSelector.results_frame")
        frame = pd.DataFrame(
            {key: list(value) for key, value in self.cv_results_.items() if key != "params"}
        )
        frame.insert(0, "params", self.cv_results_["params"])
        return frame


@dataclass(frozen=True)
class CoefficientPath:
    """Coefficients of a model refit along a parameter grid (the paper's Figure 4).

    Attributes
    ----------
    params : list of dict
        The candidates, in grid order.
    coef : ndarray of shape (n_candidates, n_features)
        Coefficients of the (last step of the) model, binary problem.
    intercept : ndarray of shape (n_candidates,)
    feature_names : tuple of str
        Names of the coefficients (after the Pipeline's encoding when available).
    """

    params: list
    coef: np.ndarray = field(repr=False)
    intercept: np.ndarray = field(repr=False)
    feature_names: tuple

    def entry_order(self):
        """Features in the order they first get a non-zero coefficient along the grid.

        Returns
        -------
        list of (str, int)
            ``(feature, index of the first candidate where it is non-zero)``, earliest first;
            features that never enter are left out.
        """
        nonzero = self.coef != 0
        entries = []
        for j, name in enumerate(self.feature_names):
            hits = np.flatnonzero(nonzero[:, j])
            if hits.size:
                entries.append((name, int(hits[0])))
        return sorted(entries, key=lambda item: (item[1], self.feature_names.index(item[0])))

    def selected_features(self, index):
        """Names of the features with a non-zero coefficient in candidate ``index``.

        Parameters
        ----------
        index : int
            Position of the candidate on the path (as in ``params``).

        Returns
        -------
        list of str
        """
        coef = self.coef[index]
        return [name for name, c in zip(self.feature_names, coef, strict=True) if c != 0]

    def _repr_html_(self):
        """A compact summary for notebooks: when each feature enters the path, and the plot."""
        from ._plot import plot_coefficient_path

        entries = self.entry_order()
        rows = [(name, index, params_text(self.params[index])) for name, index in entries]
        never = [n for n in self.feature_names if n not in dict(entries)]
        return html_card(
            "CoefficientPath: refits along the grid",
            verdict=html_verdict(f"{len(entries)} of {len(self.feature_names)} features enter "
                                 "the path", "Descriptive: the coefficients of each refit (no "
                                 "statistical guarantee)."),
            paragraphs=[f"Never selected: {', '.join(never)}." if never else ""],
            key_figures={"candidates": len(self.params), "features": len(self.feature_names)},
            tables=[html_table("Features in the order they enter",
                               ("feature", "first candidate", "parameters"),
                               rows[:2 * CARD_ROWS], total=len(rows))],
            figures=[card_figure("coefficient-path", "Coefficient paths",
                                 lambda: plot_coefficient_path(self))],
        )


def _fit_coef(estimator, params, X, y):
    model = clone(estimator).set_params(**params).fit(X, y)
    final = _final_step(model)
    coef = np.asarray(final.coef_, dtype=float)
    if coef.ndim == 2 and coef.shape[0] == 1:
        coef = coef[0]
    intercept = float(np.ravel(getattr(final, "intercept_", [0.0]))[0])
    return coef, intercept, model


def coefficient_path(estimator, param_grid, X, y, *, n_jobs=None):
    """Refit ``estimator`` on ``(X, y)`` at every candidate of ``param_grid``; its coefficients.

    Parameters
    ----------
    estimator : classifier
        A linear binary classifier (or a Pipeline ending with one) with ``coef_``.
    param_grid : dict, list of dicts, or list of parameter dicts
        E.g. a fitted selector's ``param_grid_`` or ``cv_results_["params"]``.
    X, y : array-like
    n_jobs : int, default=None

    Returns
    -------
    CoefficientPath

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.model_selection import coefficient_path, l1_logistic_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = (2 * X[:, 0] + X[:, 1] + rng.normal(size=300) > 0).astype(int)
    >>> path = coefficient_path(l1_logistic_regression(), {"C": [0.005, 0.02, 0.05, 1.0]}, X, y)
    >>> path.entry_order()     # (feature, first candidate where it is non-zero)
    [('x0', 1), ('x1', 2), ('x2', 3)]
    """
    sequence = (list, tuple, np.ndarray)
    if isinstance(param_grid, list) and param_grid and all(
        isinstance(p, dict) and not any(isinstance(v, sequence) for v in p.values())
        for p in param_grid
    ):
        candidates = list(param_grid)
    else:
        candidates = list(ParameterGrid(param_grid))
    fits = Parallel(n_jobs=n_jobs)(delayed(_fit_coef)(estimator, p, X, y) for p in candidates)
    coef = np.vstack([c for c, _, _ in fits])
    intercept = np.array([b for _, b, _ in fits])
    model = fits[-1][2]
    names = None
    if isinstance(model, Pipeline) and len(model.steps) > 1:
        try:
            names = [str(n) for n in model[:-1].get_feature_names_out()]
        except (AttributeError, ValueError):
            names = None
    if names is None and hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
    if names is None or len(names) != coef.shape[1]:
        names = [f"x{j}" for j in range(coef.shape[1])]
    return CoefficientPath(
        params=candidates, coef=coef, intercept=intercept, feature_names=tuple(names)
    )

