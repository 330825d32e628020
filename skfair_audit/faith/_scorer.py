"""A scikit-learn scorer that audits any fitted classifier with the FaiTH statistic."""

from __future__ import annotations

from sklearn.frozen import FrozenEstimator

from ._auditor import FaithAuditor

__all__ = ["make_faith_scorer"]

#: What a FaiTH scorer can return, and whether it needs the bootstrap.
SCORER_STATISTICS = {
    "statistic": False,
    "lower_bound": True,
    "upper_bound": True,
    "pvalue": True,
}


class _FaithScorer:
    """Callable ``scorer(estimator, X, y)`` built by :func:`make_faith_scorer`.

    A plain class (not a closure) so that it pickles for parallel ``GridSearchCV`` workers.
    """

    def __init__(self, statistic, greater_is_better, auditor_params, fit_data=None):
        self.statistic = statistic
        self.greater_is_better = greater_is_better
        self.auditor_params = dict(auditor_params)
        self.fit_data = fit_data

    def auditor(self, estimator, X=None, y=None):
        """The auditor of a fitted ``estimator`` (frozen, so not refit), fit on ``fit_data``
        or, when there is none, on ``(X, y)``."""
        auditor = FaithAuditor(FrozenEstimator(estimator), **self.auditor_params)
        if self.fit_data is not None:
            return auditor.fit(*self.fit_data)
        return auditor if X is None else auditor.fit(X, y)

    def audit(self, estimator, X, y):
        """The :class:`FaithResult` of ``estimator`` on ``(X, y)``."""
        return self.auditor(estimator, X, y).audit(X, y)

    def __call__(self, estimator, X, y):
        auditor = self.auditor(estimator, X, y)
        if self.statistic == "statistic":
            value = auditor.audit_value(X, y)
        else:
            value = getattr(auditor.audit(X, y), self.statistic)
        value = float(value)
        return value if self.greater_is_better else -value

    def __repr__(self):
        arguments = [f"statistic={self.statistic!r}"]
        if self.greater_is_better:
            arguments.append("greater_is_better=True")
        if self.fit_data is not None:
            arguments.append(f"fit_data=<{len(self.fit_data[1])} rows>")
        arguments += [f"{key}={value!r}" for key, value in sorted(self.auditor_params.items())]
        return f"make_faith_scorer({', '.join(arguments)})"


def make_faith_scorer(
    *, statistic="statistic", greater_is_better=False, fit_data=None, **auditor_params
):
    r"""Make a scorer that audits a fitted classifier with FaiTH, for ``GridSearchCV``.

    The scorer ``scorer(estimator, X, y)`` audits the fitted ``estimator`` *as is* on the
    scored fold (the auditor is fit on ``fit_data`` when given, else on the fold itself):

    .. code-block:: python

        auditor = FaithAuditor(FrozenEstimator(estimator), **auditor_params).fit(X, y)
        value = auditor.audit_value(X, y)        # statistic="statistic": no bootstrap
        value = getattr(auditor.audit(X, y), statistic)   # the other statistics

    and returns ``-value`` (default) or ``value`` (``greater_is_better=True``). Pass it in
    ``scoring={...}`` of :class:`~sklearn.model_selection.GridSearchCV` or
    :func:`~sklearn.model_selection.cross_validate`.

    Parameters
    ----------
    statistic : {"statistic", "lower_bound", "upper_bound", "pvalue"}, default="statistic"
        What to score: the FaiTH statistic :math:`\psi(f_n)` (the largest increase of the
        model's expected loss within transport budget ε; computed exactly, without the
        bootstrap), its one-sided lower or upper confidence bound, or the p-value of the
        δ-fairness test H0: ψ ≤ δ (needs ``delta``). The bounds and the p-value run the
        bootstrap of :meth:`FaithAuditor.audit` on every fold: set ``n_resamples`` and
        ``random_state`` in ``auditor_params``.
    greater_is_better : bool, default=False
        scikit-learn maximises scores. ψ and its bounds are *unfairness* measures (lower is
        fairer), so by default the scorer returns the negated value, like ``neg_log_loss``;
        ``cv_results_`` then holds ``-ψ``. With ``True`` it returns the raw value (use it for
        ``"pvalue"``, where larger means less evidence of unfairness).
    fit_data : tuple (X, y), optional
        Data the auditor is fit on: the fair metric (and in grid mode the grid) is learned
        there, disjoint from the scored folds, as the FaiTH methodology asks (e.g. the training
        part of a single train/validation split). Default: the scored fold itself.
    **auditor_params
        Parameters of :class:`FaithAuditor` (all but ``estimator``), e.g. ``protected``,
        ``epsilon``, ``delta``, ``metric``, ``n_resamples``, ``random_state``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> float``.

    Notes
    -----
    Without ``fit_data`` the auditor is fit on the scored fold, so the fair metric (e.g. the
    default ``metric="sensitive_subspace"``) is *learned on the fold that is audited*, and in
    grid mode the grid levels are those of the fold. The FaiTH methodology asks for a metric
    learned on data disjoint from the audit sample: pass ``fit_data``, or fit the metric once
    and pass ``metric=FrozenEstimator(fitted_metric)`` (e.g. a fitted
    :class:`SensitiveSubspaceMetric`) or a :class:`PrecomputedMetric` holding the cost matrix.
    With a discrete grid, declare all levels as pandas categories so that every fold has
    the same grid. With continuous features the default ``space="auto"`` takes the reference
    sample space: an audited row may move to the rows the auditor is fit on (each with every
    protected level) or to its own counterfactual twins; pass ``fit_data`` disjoint from the
    scored fold so that these destinations do not depend on the fold audited. ``memory_limit``
    bounds each audit's memory.

    See Also
    --------
    FaithAuditor : the audit as an estimator.
    skfair_audit.faith.faith_audit : the functional audit.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import make_faith_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 600),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], 600)})
    >>> y = (rng.random(600) < np.where(X.group == "b", 0.6, 0.3)).astype(int)
    >>> faith = make_faith_scorer(protected=["group"], epsilon=0.0)
    >>> faith
    make_faith_scorer(statistic='statistic', epsilon=0.0, protected=['group'])
    >>> search = GridSearchCV(
    ...     make_pipeline(OneHotEncoder(), LogisticRegression()),
    ...     {"logisticregression__C": [1e-4, 1.0]},
    ...     scoring={"accuracy": "accuracy", "faith": faith}, refit="accuracy", cv=3,
    ... ).fit(X, y)
    >>> bool(search.cv_results_["mean_test_faith"][0] > search.cv_results_["mean_test_faith"][1])
    True
    """
    if statistic not in SCORER_STATISTICS:
        raise ValueError(
            f"statistic must be one of {tuple(SCORER_STATISTICS)}, got {statistic!r}."
        )
    if not isinstance(greater_is_better, bool):
        raise ValueError(f"greater_is_better must be a bool, got {greater_is_better!r}.")
    if "estimator" in auditor_params:
        raise ValueError(
            "make_faith_scorer audits the estimator it is called with; do not pass estimator."
        )
    # Unknown parameter names fail here (TypeError from the constructor), not inside a search.
    FaithAuditor(None, **auditor_params)
    if statistic == "pvalue":
        if auditor_params.get("delta") is None:
            raise ValueError("statistic='pvalue' needs the threshold delta of the test.")
    if fit_data is not None and (not isinstance(fit_data, tuple) or len(fit_data) != 2):
        raise ValueError("fit_data must be a tuple (X, y).")
    return _FaithScorer(statistic, greater_is_better, auditor_params, fit_data)
