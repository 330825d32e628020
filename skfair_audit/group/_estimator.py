"""``GroupDisparityAuditor``: the group audit of Cherian & Candès as a scikit-learn estimator."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils import ClassifierTags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._resampling import DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT
from .._utils import (
    ARRAY_LIKE,
    BOOLEAN,
    CALLABLE,
    COLUMN_LIST,
    N_JOBS,
    POSITIVE_INT,
    PROBABILITY,
    RANDOM_STATE,
    STRING,
    VERBOSE,
    InstanceOf,
    Interval,
    Options,
    Predicate,
    check_params,
    column_positions,
)
from . import _procedures  # noqa: F401 - declares the built-in procedures and tilt classes
from ._collections import GroupCollection, boxes, intersections, intervals
from ._metrics import POS_LABEL_METRICS, Metric, as_array, get_metric
from ._monotone import DIRECTIONS
from ._registry import (
    REQUIRED,
    Registered,
    RegisteredAlternative,
    get_procedure,
    registered_procedures,
)
from ._rkhs import RKHSBoundsResult
from ._summary import SCALE_CONSTRAINTS

#: Collections built from the sensitive features (the registered tilt classes come on top).
COLLECTION_KINDS = ("intersections", "intervals", "boxes")
RESPONSE_METHODS = ("predict", "predict_proba", "decision_function")
#: Parameters of the estimator that are not options of a procedure.
_ESTIMATOR_ONLY = ("estimator", "procedure", "groups", "protected", "depth", "min_size",
                   "response_method", "threshold", "drop_protected", "procedure_params")


class _GroupKind(Registered):
    """Constraint of ``groups=``: a collection kind or a registered tilt class."""

    def __init__(self):
        super().__init__("tilts")

    @property
    def values(self):
        return (*COLLECTION_KINDS, *registered_procedures("tilts"))

    def __hash__(self):
        return hash("_GroupKind")


class GroupDisparityAuditor(MetaEstimatorMixin, BaseEstimator):
    r"""Audit a black-box model for performance disparities over a collection of groups.

    The audit of Cherian & Candès (2024): on held-out rows, a metric gives a per-row value
    :math:`L` (e.g. :math:`1\{\hat Y = 1\}` among the negatives for the false positive
    rate) and the disparity of a group :math:`G` is

    .. math::

        \epsilon(G) = E[L \mid G] - \theta ,

    with a target :math:`\theta` (a constant, the overall metric or a reference group's
    metric). :meth:`audit` runs one of the procedures of :mod:`skfair_audit.group` on the
    model's predictions:

    - ``procedure="bounds"`` (:func:`~skfair_audit.group.certify_bounds`): confidence bounds
      on every :math:`\epsilon(G)`, valid *simultaneously* at level :math:`1 - \alpha`
      (family-wise);
    - ``"threshold"`` (:func:`~skfair_audit.group.certify_threshold`): Boolean certificates
      :math:`\epsilon(G) > \epsilon_0` (``"greater"``), :math:`< \epsilon_0` (``"less"``)
      or :math:`|\epsilon(G)| < \epsilon_0` (``"within"``), simultaneously;
    - ``"flag"`` (:func:`~skfair_audit.group.flag_groups`): flags of groups with
      :math:`\epsilon(G) > \epsilon_0` (or ``<``, or :math:`|\epsilon(G)| > \epsilon_0`),
      Benjamini–Hochberg at false discovery rate ``q``;
    - ``"equalized_odds"`` (:func:`~skfair_audit.group.equalized_odds`): false and true
      positive rate audits at :math:`\alpha/2` each (``metric`` is ignored).
    - ``"ratio_bounds"``, ``"certify_ratio"``, ``"flag_ratios"``
      (:func:`~skfair_audit.group.ratio_bounds`, :func:`~skfair_audit.group.certify_ratio`,
      :func:`~skfair_audit.group.flag_ratios`): the same on ratios
      :math:`r(G) = \mu_G / d(G)` instead of differences — simultaneous bounds, certificates
      :math:`r(G) > r_0` and FDR flags of :math:`r(G) < r_0` — with ``epsilon0`` the ratio
      threshold :math:`r_0` (default 0.8, the four-fifths rule). The denominator (default
      ``"max"``, the impact ratio), ``min_share`` and ``families`` go in
      ``procedure_params``; use ``metric="selection_rate"`` for impact ratios of selection
      rates.

    Parameters
    ----------
    estimator : estimator
        The model to audit (classifier, regressor or set predictor). :meth:`fit` fits a
        clone; wrap a trained model in :class:`sklearn.frozen.FrozenEstimator` to audit it
        as is.
    metric : str, Metric or callable, default="false_positive_rate"
        See :func:`~skfair_audit.group.get_metric`. Binary metrics use ``pos_label``, or
        ``classes_[1]`` of a classifier when ``pos_label`` is None.
    procedure : str, default="bounds"
        ``"bounds"``, ``"threshold"``, ``"flag"``, ``"equalized_odds"``, ``"ratio_bounds"``,
        ``"certify_ratio"``, ``"flag_ratios"`` (above), or any procedure added with
        :func:`~skfair_audit.group.register_procedure`: the estimator passes it every option
        it has a parameter for (and ``procedure_params``).
    groups : None, str or GroupCollection, default=None
        How the groups are built from the sensitive features of the audit rows (``"intersections"``,
        ``"intervals"``, ``"boxes"``), or the tilt class audited (``"monotone"``,
        ``"polynomial"``, ``"rkhs"`` or any registered :class:`~skfair_audit.group.TiltClass`):

        - ``None`` or ``"intersections"``: all intersections of the (categorical) sensitive
          features up to ``depth`` of them at a time (:func:`~skfair_audit.group.intersections`).
          A float feature with non-integer values is refused as continuous.
        - ``"intervals"``: all intervals of one numeric sensitive feature with endpoints on
          ``bins`` (:func:`~skfair_audit.group.intervals`).
        - ``"boxes"``: all boxes of two numeric sensitive features
          (:func:`~skfair_audit.group.boxes`).
        - ``"monotone"``: every tilt :math:`0 \le w \le 1` monotone in one numeric sensitive
          feature (``direction``; constant on ``bins`` quantile bins), bounds on the tilted
          disparity :math:`E[(L-\theta)w]/E[w]`
          (:func:`~skfair_audit.group.monotone_tilt_bounds`);
        - ``"polynomial"``: every non-negative polynomial tilt of one or two numeric
          sensitive features, sums of squares of polynomials of degree ``degree``
          (:func:`~skfair_audit.group.polynomial_tilt_bounds`);
        - ``"rkhs"``: every non-negative tilt of the unit ball of a Gaussian RKHS over the
          numeric sensitive features (``bandwidth``), calibrated once
          (:func:`~skfair_audit.group.rkhs_tilt_bounds`): the result bounds any tilt queried
          with ``result.bound(...)``;
        - a prebuilt :class:`~skfair_audit.group.GroupCollection` over the audit rows (then
          the sensitive features are not used).

        Tilts need ``procedure="bounds"`` and a ``target`` that is a number or "overall".
    protected : list of str or int, optional
        The protected columns of ``X`` (names with a DataFrame, or positions): their values
        are the sensitive features when :meth:`audit` / :meth:`score` get no
        ``sensitive_features`` (the same parameter as in ``FaithAuditor`` and
        ``FairModelSelector``; see the glossary).
    depth : int, optional
        Largest number of attributes intersected (default: all).
    min_size : int, default=0
        Groups with fewer rows are dropped before the audit (reported in
        ``result.groups.small_groups``).
    bins : int or array-like, default=10
        ``"intervals"`` / ``"boxes"``: number of equal-width bins between the minimum and the
        maximum of the audit rows, or the bin edges (a grid fixed in advance, which the
        guarantee formally assumes). ``"monotone"``: number of quantile bins (every distinct
        value when there are fewer), or the edges.
    direction : {"both", "increasing", "decreasing"}, default="both"
        ``"monotone"``: the direction of the tilts.
    degree : int, default=2
        ``"polynomial"``: the tilts are sums of squares of polynomials of degree at most
        ``degree``.
    bandwidth : float, optional
        ``"rkhs"``: :math:`\sigma` of the Gaussian kernel (required with it).
    target : float, "overall" or str, default="overall"
        Known constant, the metric on all audit rows, or the name of a reference group of
        the collection (e.g. ``"race=Caucasian"``). Estimated targets are re-estimated in
        every bootstrap replicate.
    alternative : str, optional
        ``"bounds"``: ``"lower"``, ``"upper"`` or ``"two-sided"`` (default); ``"threshold"``:
        ``"greater"`` (default), ``"less"`` or ``"within"``; ``"flag"``: ``"greater"``
        (default), ``"less"`` or ``"two-sided"``. Ignored by ``"equalized_odds"``. The
        defaults are those of the functions and of the command line.
    alpha : float, default=0.1
        Simultaneous error level of ``"bounds"``, ``"threshold"`` and ``"equalized_odds"``.
    q : float, default=0.1
        False discovery rate of ``"flag"``.
    epsilon0 : float, optional
        Threshold of ``"threshold"`` and ``"flag"`` (default 0). For ``"equalized_odds"``,
        None gives bounds and a number gives certificates within :math:`\pm\epsilon_0`.
        For ``"certify_ratio"`` and ``"flag_ratios"``: the ratio threshold :math:`r_0`
        (their functions' ``threshold``, default 0.8), never the score ``threshold`` below.
    scale : {"rescaled", "unscaled"}, default="rescaled"
    p_star : float, default=0.01
        Floor of :math:`P_n(G)` in the rescaling.
    w0 : float, default=np.inf
        Variance shrinkage (``inf``: global standard deviation, recommended by the paper).
    se : {"delta", "bootstrap"}, default="delta"
        Standard errors of ``"flag"``.
    pos_label : optional
        Positive label of binary metrics.
    response_method : {"predict", "predict_proba", "decision_function"}, default="predict"
        Model output used as ``y_pred``: ``predict``, the probability of ``classes_[1]``
        (score metrics such as ``"calibration_residual"``) or the decision function.
    threshold : float, optional
        With a score ``response_method``, predict ``classes_[1]`` when the score is
        ``>= threshold`` (binary metrics on a score model).
    drop_protected : bool, default=False
        Whether ``protected`` are removed from ``X`` before the model sees it (in
        :meth:`fit` and at prediction).
    n_resamples : int, default=1000
    batch_size : int, optional
    memory_limit : int, float, str or None, default="2GiB"
        Memory budget of the bootstrap (bytes, or a string such as ``"500MB"``), with the
        meaning of :class:`~skfair_audit.faith.FaithAuditor`'s: replicates are evaluated in
        chunks that fit it, and the result does not depend on it.
    random_state : None, int, RandomState, Generator or SeedSequence
    n_jobs : int, optional
        Parallel bootstrap batches; results are identical for any value.
    verbose : int, default=0
        0: silent; otherwise a progress bar over the bootstrap replicates (tqdm when
        installed). It never changes the result.
    procedure_params : dict, optional
        Further options of the procedure or tilt class that the estimator has no parameter
        for (e.g. ``{"method": "enumeration"}`` for ``"threshold"``, ``{"max_rank": 200}``
        for ``"rkhs"``); checked against its declaration in :meth:`fit`.

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone (the ``FrozenEstimator`` itself when one was given).
    classes_ : ndarray
        Labels of a classifier.
    n_features_in_ : int
    feature_names_in_ : ndarray, when ``X`` has column names

    See Also
    --------
    certify_bounds, certify_threshold, flag_groups, equalized_odds : the functional API on an
        audit trail ``(y, y_pred, groups)``.

    Notes
    -----
    :meth:`score` returns one number, higher when fairer (for ``GridSearchCV``):

    - ``"bounds"``: the simultaneous :math:`1-\alpha` confidence bound on the worst
      disparity, oriented so that higher is fairer: ``-max_G max(|lower|, |upper|)``
      (two-sided), ``-max_G upper`` (``"upper"``) or ``min_G lower`` (``"lower"``);
    - ``"equalized_odds"``: minus the largest bound on
      :math:`\max(|\epsilon_{FPR}(G)|, |\epsilon_{TPR}(G)|)` (bounds mode) or the fraction of
      groups certified (threshold mode);
    - ``"threshold"``: the fraction of groups certified;
    - ``"flag"``: minus the fraction of groups flagged.
    - ``"ratio_bounds"``: the smallest simultaneous lower bound of the defined ratios (the
      ratio certified for the worst-off group; ``alternative="upper"`` has no such score and
      is refused);
    - ``"certify_ratio"``: the fraction of groups whose ratio is certified above
      :math:`r_0` (undefined ratios are not certified);
    - ``"flag_ratios"``: minus the fraction of groups flagged.

    Groups without any row in the audit sample are left out. With metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``), ``score`` requests
    ``sensitive_features`` by default, so ``cross_validate(auditor, X, y,
    params={"sensitive_features": S})`` routes the fold slices to it.

    References
    ----------
    .. [1] J. J. Cherian and E. J. Candès, "Statistical inference for fairness auditing",
       Journal of Machine Learning Research 25(149), 2024.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skfair_audit.group import GroupDisparityAuditor
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice([0, 1], 3000), "x": rng.normal(size=3000)})
    >>> y = (rng.random(3000) < 0.3 + 0.4 * X.group).astype(int)
    >>> auditor = GroupDisparityAuditor(LogisticRegression(), protected=["group"],
    ...                                 procedure="flag", epsilon0=0.05)
    >>> result = auditor.fit(X[:1500], y[:1500]).audit(X[1500:], y[1500:])
    >>> result.names, result.flagged.tolist()
    (('group=0', 'group=1'), [False, True])
    """

    __metadata_request__score = {"sensitive_features": True}

    def __init__(
        self,
        estimator,
        *,
        metric="false_positive_rate",
        procedure="bounds",
        groups=None,
        protected=None,
        depth=None,
        min_size=0,
        bins=10,
        direction="both",
        degree=2,
        bandwidth=None,
        target="overall",
        alternative=None,
        alpha=0.1,
        q=0.1,
        epsilon0=None,
        scale="rescaled",
        p_star=0.01,
        w0=np.inf,
        se="delta",
        pos_label=None,
        response_method="predict",
        threshold=None,
        drop_protected=False,
        n_resamples=1000,
        batch_size=None,
        memory_limit=DEFAULT_MEMORY_LIMIT,
        random_state=None,
        n_jobs=None,
        verbose=0,
        procedure_params=None,
    ):
        self.estimator = estimator
        self.metric = metric
        self.procedure = procedure
        self.groups = groups
        self.protected = protected
        self.depth = depth
        self.min_size = min_size
        self.bins = bins
        self.direction = direction
        self.degree = degree
        self.bandwidth = bandwidth
        self.target = target
        self.alternative = alternative
        self.alpha = alpha
        self.q = q
        self.epsilon0 = epsilon0
        self.scale = scale
        self.p_star = p_star
        self.w0 = w0
        self.se = se
        self.pos_label = pos_label
        self.response_method = response_method
        self.threshold = threshold
        self.drop_protected = drop_protected
        self.n_resamples = n_resamples
        self.batch_size = batch_size
        self.memory_limit = memory_limit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.procedure_params = procedure_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        if is_classifier(self.estimator):
            tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.non_deterministic = self.random_state is None
        return tags

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, **fit_params):
        """Fit a clone of the estimator (a ``FrozenEstimator`` is kept as is).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : GroupDisparityAuditor
        """
        self._check_params()
        _, y_checked = validate_data(
            self, X, y, reset=True, dtype=None, ensure_all_finite=False, y_numeric=False
        )
        if is_classifier(self.estimator):
            check_classification_targets(y_checked)
        self._sensitive_positions(X)  # fail early on unknown columns
        self.estimator_ = clone(self.estimator).fit(self._model_input(X), y, **fit_params)
        classes = getattr(self.estimator_, "classes_", None)
        if classes is None and is_classifier(self.estimator):
            classes = np.unique(y_checked)
        if classes is not None:
            self.classes_ = np.asarray(classes)
        return self

    _parameter_constraints = {
        "estimator": [Predicate(lambda e: hasattr(e, "fit"), "an estimator (with fit)")],
        "metric": [STRING, InstanceOf((Metric,), "a Metric"), CALLABLE],
        "procedure": [Registered("procedures")],
        "groups": [None, _GroupKind(), InstanceOf((GroupCollection,),
                                                          "a GroupCollection")],
        "protected": [None, STRING, Interval("integral"),
                      COLUMN_LIST],
        "depth": [None, Interval("integral", 1, None)],
        "min_size": [Interval("integral", 0, None)],
        "bins": [Interval("integral", 1, None), ARRAY_LIKE],
        "direction": [Options(DIRECTIONS)],
        "degree": [Interval("integral", 1, 8)],
        "bandwidth": [None, Interval("real", 0, None, closed="neither")],
        "target": [Interval("real"), STRING],
        "alternative": [None, RegisteredAlternative()],
        "alpha": [PROBABILITY],
        "q": [PROBABILITY],
        "epsilon0": [None, Interval("real")],
        **SCALE_CONSTRAINTS,
        "se": [Options(("delta", "bootstrap"))],
        "pos_label": [None, STRING, Interval("integral"), Interval("real")],
        "response_method": [Options(RESPONSE_METHODS)],
        "threshold": [None, Interval("real")],
        "drop_protected": [BOOLEAN],
        "n_resamples": [POSITIVE_INT],
        "batch_size": [None, POSITIVE_INT],
        "memory_limit": MEMORY_LIMIT,
        "random_state": [RANDOM_STATE],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
        "procedure_params": [None, InstanceOf((Mapping,), "a dict of options")],
    }

    def _check_params(self):
        """Declarative checks of every parameter, then the combinations."""
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)
        procedure = get_procedure(self.procedure)
        alternatives = procedure.alternatives
        if alternatives and self.alternative is not None:
            if self.alternative not in alternatives:
                raise ValueError(
                    f"alternative must be one of {list(alternatives)} with "
                    f"procedure={self.procedure!r}, got {self.alternative!r}."
                )
        if self.drop_protected and not self.protected:
            raise ValueError("drop_protected=True needs protected.")
        if self._tilts() is not None:
            if self.procedure != "bounds":
                raise ValueError(f"groups={self.groups!r} (tilts) needs procedure='bounds', got "
                                 f"{self.procedure!r}.")
            if isinstance(self.target, str) and self.target != "overall":
                raise ValueError("tilts have no named groups: target must be a number or "
                                 "'overall'.")
            procedure = self._tilts()
        parameters = {p.name: p for p in procedure.parameters}
        own = self.get_params(deep=False)
        for name in self.procedure_params or {}:
            if name in parameters and parameters[name].supplied_by:
                key = parameters[name].supplied_by
                raise ValueError(
                    f"procedure_params: {name!r} of {procedure.name!r} is set by the "
                    f"estimator's {key} (e.g. {key}={parameters[name].default!r}), not in "
                    "procedure_params"
                    + (f"; the estimator's own {name} is another parameter" if name in own
                       else "")
                    + (" (the score threshold that turns scores into labels)."
                       if name == "threshold" else "."))
        if "target" not in parameters and "target" in own and self.target != "overall":
            raise ValueError(
                f"procedure={procedure.name!r} takes no target (got target={self.target!r})"
                + (": the denominator of its ratios is procedure_params={'denominator': ...}."
                   if "denominator" in parameters else "."))
        unknown = set(self.procedure_params or {}) - set(parameters)
        clash = set(self.procedure_params or {}) & set(own)
        if unknown or clash:
            raise ValueError(
                f"procedure_params: {sorted(unknown | clash)} "
                + ("are not options of " if unknown else "are parameters of the estimator, "
                   "not of procedure_params, for ")
                + f"{procedure.name!r} (its options: {', '.join(parameters)}).")
        given = self._given(parameters)
        missing = [name for name, p in parameters.items() if name != "metric" and p.required
                   and p.fallback is REQUIRED and given.get(p.key) is None]
        if missing:
            raise ValueError(f"{procedure.name!r} needs {', '.join(missing)}"
                             + (" (the bandwidth of the Gaussian kernel)"
                                if missing == ["bandwidth"] else "") + ".")
        if "metric" in parameters:
            get_metric(self.metric)  # unknown metric names fail at fit time

    def _tilts(self):
        """The declaration of the tilt class of ``groups`` (None for groups)."""
        if isinstance(self.groups, str) and self.groups in registered_procedures("tilts"):
            return get_procedure(self.groups)
        return None

    def _given(self, parameters, metric=None):
        """The estimator's values of the options of a procedure or tilt class (None: the
        procedure's default), with ``procedure_params`` on top."""
        given = {k: v for k, v in self.get_params(deep=False).items()
                 if k not in _ESTIMATOR_ONLY}
        if "metric" in parameters:
            given["metric"] = metric
            del given["pos_label"]  # a resolved metric carries it
        else:
            given["pos_label"] = self._positive_label()
        given.update(self.procedure_params or {})
        return given

    def _sensitive_positions(self, X):
        """Positions of ``protected`` in ``X`` (names need a DataFrame)."""
        names = list(X.columns) if hasattr(X, "columns") else range(np.shape(X)[1])
        return column_positions(self.protected, names, "sensitive column")

    def _model_input(self, X):
        if not self.drop_protected:
            return X
        keep = np.setdiff1d(np.arange(np.shape(X)[1]), self._sensitive_positions(X))
        if hasattr(X, "iloc"):
            return X.iloc[:, keep]
        return np.asarray(X)[:, keep]

    # -- auditing -----------------------------------------------------------------------
    def _predictions(self, X):
        model_X = self._model_input(X)
        if self.response_method == "predict":
            return as_array(self.estimator_.predict(model_X), "predictions")
        response = getattr(self.estimator_, self.response_method, None)
        if response is None:
            raise ValueError(
                f"response_method={self.response_method!r}: "
                f"{type(self.estimator_).__name__} has no such method."
            )
        scores = as_array(response(model_X), "scores")
        if self.response_method == "predict_proba":
            if scores.ndim != 2 or scores.shape[1] != 2:
                raise ValueError(
                    "response_method='predict_proba' needs a binary classifier (2 columns), "
                    f"got scores of shape {scores.shape}."
                )
            scores = scores[:, 1]
        if self.threshold is None:
            return scores
        classes = getattr(self, "classes_", np.array([0, 1]))
        return np.where(scores >= float(self.threshold), classes[-1], classes[0])

    def _sensitive_data(self, X, sensitive_features):
        n_rows = np.shape(X)[0]
        if sensitive_features is None:
            if self.protected is None:
                raise ValueError(
                    "no sensitive features: pass sensitive_features= or set protected "
                    "to columns of X."
                )
            positions = self._sensitive_positions(X)
            if hasattr(X, "iloc"):
                return X.iloc[:, positions]
            arr = np.asarray(X)
            return {f"x{j}": arr[:, j] for j in positions}
        if isinstance(sensitive_features, Mapping):
            data = dict(sensitive_features)
            lengths = {len(as_array(v, "sensitive feature")) for v in data.values()}
        elif hasattr(sensitive_features, "columns"):
            data, lengths = sensitive_features, {sensitive_features.shape[0]}
        else:
            arr = as_array(sensitive_features, "sensitive_features")
            if arr.ndim == 1:
                name = getattr(sensitive_features, "name", None) or "sensitive"
                data = {str(name): sensitive_features}
            elif arr.ndim == 2:
                data = {f"s{j}": arr[:, j] for j in range(arr.shape[1])}
            else:
                raise ValueError("sensitive_features must be 1-D or 2-D.")
            lengths = {arr.shape[0]}
        if lengths != {n_rows}:
            raise ValueError(
                f"sensitive_features have {sorted(lengths)} rows but X has {n_rows} rows."
            )
        # Rows are matched by position; two pandas indexes that disagree mean the rows are
        # not the same people (a shuffled or filtered copy): refuse rather than mismatch.
        index = getattr(sensitive_features, "index", None)
        if hasattr(X, "index") and index is not None and not index.equals(X.index):
            raise ValueError(
                "the index of sensitive_features does not match the index of X: rows are "
                "matched by position, so align them first (e.g. "
                "sensitive_features.loc[X.index]) or pass plain arrays."
            )
        return data

    def _collection(self, X, sensitive_features):
        if isinstance(self.groups, GroupCollection):
            if self.groups.n_rows != np.shape(X)[0]:
                raise ValueError(
                    f"the GroupCollection describes {self.groups.n_rows} rows but X has "
                    f"{np.shape(X)[0]} rows."
                )
            return self.groups
        data = self._sensitive_data(X, sensitive_features)
        names = list(data.columns) if hasattr(data, "columns") else list(data)
        columns = [data[name] for name in names]
        kind = self.groups or "intersections"
        if kind == "intersections":
            for name, col in zip(names, columns, strict=True):
                values = as_array(col, f"sensitive feature {name!r}")
                if values.dtype.kind == "f" and np.any(np.isfinite(values) & (values % 1 != 0)):
                    raise ValueError(
                        f"sensitive feature {name!r} is continuous (non-integer floats); use "
                        "groups='intervals' (one feature) or 'boxes' (two), or bin it first."
                    )
            return intersections(data, depth=self.depth, min_size=self.min_size)
        bins = self.bins
        grid, n_bins = (None, bins) if isinstance(bins, numbers.Integral) else (bins, None)
        if kind == "intervals":
            if len(columns) != 1:
                raise ValueError(
                    f"groups='intervals' needs exactly one sensitive feature, got {len(columns)}."
                )
            return intervals(columns[0], grid, n_bins=n_bins, min_size=self.min_size,
                             name=str(names[0]))
        if len(columns) != 2:
            raise ValueError(f"groups='boxes' needs two sensitive features, got {len(columns)}.")
        return boxes(columns[0], columns[1], grid, grid, n_bins1=n_bins, n_bins2=n_bins,
                     min_size=self.min_size, names=(str(names[0]), str(names[1])))

    def _metric(self):
        pos_label = self.pos_label
        classes = getattr(self, "classes_", None)
        metric = self.metric
        if not isinstance(metric, str):
            if pos_label is not None:
                raise ValueError("pos_label can only be combined with a metric given by name.")
            return get_metric(metric)
        name = get_metric(metric).name
        if name not in POS_LABEL_METRICS:
            if pos_label is not None:
                raise ValueError(f"metric {name!r} takes no pos_label.")
            return get_metric(metric)
        if pos_label is None and classes is not None and len(classes) == 2:
            pos_label = classes[1]
        return get_metric(metric, pos_label=pos_label)

    def _positive_label(self):
        if self.pos_label is not None:
            return self.pos_label
        classes = getattr(self, "classes_", None)
        return classes[1] if classes is not None and len(classes) == 2 else None

    def _audit_trail(self, X, y, sensitive_features):
        check_is_fitted(self)
        _, y_checked = validate_data(
            self, X, y, reset=False, dtype=None, ensure_all_finite=False, y_numeric=False
        )
        classes = getattr(self, "classes_", None)
        if classes is not None:
            unknown = np.setdiff1d(np.unique(y_checked), classes)
            if unknown.size:
                raise ValueError(
                    f"y contains labels {unknown.tolist()} not seen in fit "
                    f"(classes {classes.tolist()})."
                )
        if self._tilts() is not None:
            data = self._sensitive_data(X, sensitive_features)
            names = list(data.columns) if hasattr(data, "columns") else list(data)
            return y_checked, self._predictions(X), (names, [data[nm] for nm in names])
        collection = self._collection(X, sensitive_features)
        return y_checked, self._predictions(X), collection

    def audit(self, X, y, sensitive_features=None):
        """Audit the fitted model on held-out rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Audit features (disjoint from the training data).
        y : array-like of shape (n_samples,)
            Audit outcomes.
        sensitive_features : DataFrame, Series, mapping or array-like, optional
            Sensitive attributes of the audit rows (default: ``protected`` of ``X``).

        Returns
        -------
        GroupAuditResult
            The result of the functional procedure on ``(y, model(X), groups)``: bounds,
            certificates, flags or equalized odds; monotone or polynomial tilt bounds.
        """
        y_true, y_pred, collection = self._audit_trail(X, y, sensitive_features)
        return self._run(y_true, y_pred, collection)

    def _run(self, y_true, y_pred, collection):
        """Dispatch to the registered procedure (or tilt class) with the estimator's values."""
        tilts = self._tilts()
        procedure = tilts or get_procedure(self.procedure)
        parameters = {p.name: p for p in procedure.parameters}
        given = self._given(parameters, self._metric() if "metric" in parameters else None)
        if tilts is not None:
            names, columns = collection
            return tilts.run(y_true, y_pred, [str(n) for n in names], columns, given)
        return procedure.function(y_true, y_pred, collection, **procedure.resolve(given))

    def score(self, X, y, sensitive_features=None):
        """A single fairness score, higher is fairer (see Notes for its definition).

        Parameters
        ----------
        X, y, sensitive_features
            As in :meth:`audit`.

        Returns
        -------
        float
        """
        return audit_score(self.audit(X, y, sensitive_features))


def audit_score(result) -> float:
    """One higher-is-fairer number summarising a group-audit result.

    See the Notes of :class:`GroupDisparityAuditor`. Groups without any row in the audit
    sample are ignored.

    Parameters
    ----------
    result : GroupAuditResult
        Bounds, certificates, flags or equalized odds, on differences or on ratios.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.group import certify_bounds
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b"], 1000)
    >>> y = rng.integers(0, 2, 1000)
    >>> y_pred = np.where(rng.random(1000) < 0.9, y, 1 - y)
    >>> res = certify_bounds(y, y_pred, {"g": g}, metric="error_rate", alternative="upper",
    ...                      n_resamples=200, random_state=0)
    >>> score = audit_score(res)  # minus the largest simultaneous upper bound
    >>> bool(score == -res.upper.max())
    True
    """
    if isinstance(result, RKHSBoundsResult):
        raise ValueError("an RKHS tilt audit calibrates bounds for the tilts queried "
                         "afterwards (result.bound(...)): it has no single score.")
    active = result.active
    if not active.any():
        raise ValueError("no group of the collection has a row in the audit sample.")
    if result.procedure == "equalized_odds":
        if result.certified is not None:
            return float(np.mean(result.certified[active]))
        return -float(np.max(result.worst_disparity[active]))
    if result.procedure in ("flag", "ratio_flag"):
        return -float(np.mean(result.flagged[active]))
    if result.procedure == "ratio_bounds":
        return _ratio_score(result, active)
    if result.procedure == "threshold":
        return float(np.mean(result.certified[active]))
    lower, upper = result.lower[active], result.upper[active]
    if result.alternative == "lower":
        return float(np.min(lower))
    if result.alternative == "upper":
        return -float(np.max(upper))
    return -float(np.max(np.maximum(np.abs(lower), np.abs(upper))))


def _ratio_score(result, active) -> float:
    """:func:`audit_score` of ratio bounds: the fraction certified (with a threshold), else
    the smallest lower bound of the defined ratios."""
    if result.threshold is not None:
        return float(np.mean(result.certified[active]))
    if result.alternative == "upper":
        raise ValueError("upper bounds on ratios give no higher-is-fairer score: use "
                         "alternative='lower' or 'two-sided' (or certify_ratio).")
    defined = active & result.defined
    if not defined.any():
        raise ValueError("no ratio of this audit is defined (see the reasons in its table).")
    return float(np.min(result.lower[defined]))
