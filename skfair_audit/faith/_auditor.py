"""``FaithAuditor``: the FaiTH individual-fairness audit as a scikit-learn estimator."""

from __future__ import annotations

import itertools
import numbers
import warnings

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import ClassifierTags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted, validate_data

from .._resampling import DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT, check_memory, parse_memory_limit
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
    Interval,
    Options,
    Predicate,
    check_params,
    column_list,
    column_positions,
    import_optional,
    take_rows,
)
from ._audit import faith_audit
from ._diagnostics import metric_diagnostics
from ._inference import BOOTSTRAP_METHODS
from ._metric import (
    EuclideanMetric,
    PrecomputedMetric,
    SensitiveSubspaceMetric,
    check_cost_matrix,
)
from ._metric_families import ProtectedEuclideanMetric
from ._nearest import metric_points, prepare_metric_transport, prepare_small_group_transport
from ._sample_space import (
    AuditRows,
    EmpiricalSpace,
    GridSpace,
    ReferenceCells,
    counterfactual_twins,
    forbidden_moves,
    move_groups,
    reference_moves,
)
from ._solver import (
    assemble_problem,
    combine_moves,
    dense_transport_bytes,
    prepare_transport,
)

__all__ = ["FaithAuditor"]

LOSSES = ("zero_one", "log_loss")
SPACES = ("auto", "grid", "reference", "empirical")
METRICS = ("sensitive_subspace", "protected_euclidean", "euclidean")

#: The transport budget of the API and of the command line: only free moves (changes of the
#: protected attributes, and of what the fair metric deems equivalent to them).
DEFAULT_EPSILON = 0.0


#: Distinct audit rows per chunk of the audit on a reference set: the chunks are its
#: parallel tasks, fixed by the audit rows alone so that results do not depend on ``n_jobs``.
REFERENCE_CHUNK = 2**18


class FaithAuditor(MetaEstimatorMixin, BaseEstimator):
    r"""Audit a black-box binary classifier for individual fairness with the FaiTH statistic.

    The FaiTH statistic (Xue, Yurochkin & Sun 2020) is the largest increase of the model's
    expected loss when the audit distribution may be moved, at total transport cost at most
    ε under a *fair metric*, to any distribution on the sample space:

    .. math::

        \psi(f_n) = \max_{\Pi \ge 0} \sum_{ij} \Pi_{ij}\,(\ell(z_j) - \ell(z_i))
        \quad\text{s.t.}\quad \Pi 1 = f_n,\ \sum_{ij} \Pi_{ij} C_{ij} \le \varepsilon,\
        \Pi_{ij} = 0 \text{ for forbidden moves.}

    Under the default sensitive-subspace metric, moving an individual along the protected
    attributes (and the directions that predict them) is free: ψ at ε = 0 already measures
    how much the loss grows when individuals are "moved to the other group". The model is
    called *δ-fair* when ψ(f*) ≤ δ; :meth:`audit` tests it, and certifies it, with confidence
    bounds that stay valid at, near and away from the kinks of ε ↦ ψ (by default uniformly
    valid; see :func:`~skfair_audit.faith.faith_audit` for what is guaranteed).

    Parameters
    ----------
    estimator : classifier
        The model to audit. :meth:`fit` fits a clone; wrap a trained model in
        :class:`sklearn.frozen.FrozenEstimator` to audit it as is.
    features : list of str or int, optional
        Features of the sample space (columns of ``X``); default all columns. They must be all
        the columns the model is fit on, in either space: the model is queried on the cells,
        which hold these features only.
    protected : list of str or int, optional
        Protected attributes among the features (e.g. ``["race", "sex"]``).
    space : {"auto", "grid", "reference", "empirical"}, default="auto"
        ``"grid"``: the product of the levels of the (discrete) features × the label, fixed in
        :meth:`fit` from the training data; the model is queried on every cell, observed or
        not. ``"reference"`` (continuous features): an audited individual may move to any
        *reference* individual (the rows of ``reference``, by default the rows passed to
        :meth:`fit`), each with every level of the protected attributes seen in fit, to its
        own counterfactual twins (itself with other protected levels), or stay; the
        destinations are fixed at fit, so the audit value estimates a population quantity
        (the user guide's "Continuous features: the reference set"). ``"empirical"``: the
        destinations are the audit rows themselves and their counterfactual copies, as in
        earlier versions: the target then depends on the audit sample, and the bounds are
        conditional on it (kept for comparison; never chosen by ``"auto"``). ``"auto"``:
        ``"grid"`` when every feature is categorical (pandas categorical, string, object or
        bool columns), ``"reference"`` when every feature is numeric (see ``space_kind_``).
    reference : DataFrame or array-like of shape (n_reference, n_features), optional
        The reference individuals of ``space="reference"`` (feature rows, no labels), e.g. a
        larger unlabelled pool; default the rows passed to :meth:`fit`. Keep it disjoint from
        the audit sample.
    metric : {"sensitive_subspace", "protected_euclidean", "euclidean"} or a metric object
        The fair metric. ``"sensitive_subspace"`` learns the metric of Yurochkin et al. (2020)
        on the training data with :class:`SensitiveSubspaceMetric`'s defaults (standardised
        features; the protected coordinates and the directions that predict a protected
        attribute level with a cross-validated AUC of at least 0.6, significantly above 1/2,
        combined into a subspace of controlled rank, are free); ``"protected_euclidean"``
        frees only the protected coordinates (standardised
        :class:`ProtectedEuclideanMetric`); objects of
        :mod:`skfair_audit.faith` (``SensitiveSubspaceMetric``, ``MahalanobisMetric``,
        ``EuclideanMetric``, ``PrecomputedMetric``, ``CallableMetric``, ...) are cloned and
        fit on the training data; wrap a fitted one (e.g. an ``ExploreMetric`` learned from
        judged pairs) in :class:`~sklearn.frozen.FrozenEstimator` to keep it.
    exponent : float, default=2
        Cost = distance ** exponent for the string metrics (2: squared metric).
    loss : {"zero_one", "log_loss"} or callable
        Loss of the model at a cell: 0-1 loss of ``predict``; log-loss through
        ``predict_proba``; or ``loss(estimator, X_cells, y_cells) -> array`` of per-cell losses.
    epsilon : float, default=0.0
        Transport budget ε (in units of the cost: squared standard deviations of the
        features under the default metrics). The default 0 allows only free moves (changes of
        the protected attributes and what the metric deems equivalent); every result reports
        ``saturation_budgets``, where ψ̂ reaches half and 95% of its unlimited-budget value,
        and warns (:class:`SaturatedBudgetWarning`) when ε does not bind.
    delta : float, optional
        Threshold of the δ-fairness test H0: ψ ≤ δ. Must lie in the range of the loss.
    method : {"uniform", "m-out-of-n", "numerical", "nonparametric", "subsampling"}
        Inference method. ``"uniform"`` (default): bounds that are asymptotically valid
        uniformly in the population, near kinks of ε ↦ ψ too (a minimum of pointwise lower
        bounds over the linear pieces of ψ; a simultaneous max-t upper bound over the
        near-minimising pieces). The four bootstraps of the paper are valid pointwise only
        (Efron's ``"nonparametric"`` only where ψ is differentiable); see
        :func:`~skfair_audit.faith.faith_audit`, Notes.
    m : int, float in (0, 1) or callable, optional
        Resample size rule of m-out-of-n / subsampling; default ``⌈n^(2/3)⌉``.
    numerical_step : float or callable, optional
        ε_n of the numerical bootstrap; default ``n^(-1/3)``.
    n_resamples : int, default=1000
        Bootstrap replicates (for ``"uniform"``: of the max-t statistic of the upper bound).
    confidence_level : float, default=0.95
    allow_label_change : bool, default=False
        Whether the adversary may change labels (forbidden by default).
    frozen : list of str or int, default=()
        Features that cannot change (moves between cells that differ in them are forbidden).
    forbidden : array of bool of shape (K, K), optional
        Further forbidden moves between cells (OR-ed with the above).
    max_cells : int or None, default=None
        Largest sample space allowed; None caps it only through ``memory_limit`` (the audit
        holds about 384 bytes per cell in linear arrays).
    memory_limit : int, float, str or None, default="2GiB"
        Memory budget of each step of the audit (bytes, or a string such as ``"500MB"``): a
        step that would need more (a dense ``K x K`` cost matrix, a bootstrap batch) is refused
        with :class:`MemoryLimitError` before it allocates, with the amount it needs. Fair
        metrics that are a linear map followed by the Euclidean distance (the default
        sensitive-subspace metric, ``MahalanobisMetric``, ``EuclideanMetric``) never need a
        ``K x K`` matrix: the audit is built from nearest-neighbour queries in ``O(K)`` memory;
        ``PrecomputedMetric``, ``CallableMetric`` and a ``forbidden`` matrix take the dense path
        (about ``48 K²`` bytes). None disables the checks.
    batch_size : int, optional
        Bootstrap replicates per batch (bounds memory).
    random_state : int, RandomState instance or None
    n_jobs : int, optional
        Parallel bootstrap batches; results are identical for any value.
    verbose : int, default=0
        0: silent; otherwise a progress bar over the bootstrap replicates, advanced batch by
        batch (tqdm when installed). It never changes the result.

    Attributes
    ----------
    estimator_ : classifier
        The fitted clone.
    classes_ : ndarray of shape (2,)
    metric_ : object
        The fitted fair metric.
    metric_diagnostics_ : MetricDiagnostics or None
        Its free subspace on the training data (None for metrics without a linear map); every
        audit result carries it, and a :class:`DegenerateMetricWarning` is raised at audit
        time when most non-protected directions are free.
    space_kind_ : {"grid", "reference", "empirical"}
        The sample space used (``space`` resolved).
    space_ : GridSpace
        The sample space (grid mode; in the other modes it is built at audit time).
    protected_levels_ : dict
        Levels of each protected attribute seen in training (reference and empirical modes):
        the levels reference individuals and twins take (empirical mode: with the audit
        data's levels).
    reference_ : DataFrame or ndarray
        The distinct reference rows (reference mode), fixed at fit.
    cell_loss_ : ndarray of shape (K,)
        Loss of the model at each grid cell (grid mode).
    transport_problem_ : TransportProblem
        The prepared audit LP on the grid (grid mode).
    cost_ : ndarray of shape (K, K)
        Transport cost between grid cells (grid mode; computed on access, within
        ``memory_limit``).
    forbidden_ : ndarray of shape (K, K)
        Forbidden moves between grid cells (grid mode; computed on access, within
        ``memory_limit``).
    n_features_in_ : int
    feature_names_in_ : ndarray, when ``X`` has column names

    See Also
    --------
    faith_audit : the same audit from cell counts, losses and costs.
    skfair_audit.model_selection.FairModelSelector : model selection under δ-fairness.

    Notes
    -----
    :meth:`score` returns ``-ψ(f_n)`` (the negated point estimate, no bootstrap), so that
    higher means fairer, as ``GridSearchCV`` expects.

    References
    ----------
    .. [1] S. Xue, M. Yurochkin and Y. Sun, "Auditing ML models for individual bias and
       unfairness", AISTATS 2020.
    .. [2] M. Yurochkin, A. Bower and Y. Sun, "Training individually fair ML models with
       sensitive subspace robustness", ICLR 2020.
    .. [3] V. Chernozhukov, S. Lee and A. M. Rosen, "Intersection bounds: estimation and
       inference", Econometrica 81(2), 2013.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import FaithAuditor
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 2000),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], 2000)})
    >>> risk = (0.2 + 0.25 * (X.group == "b") + 0.2 * (X.priors != "0")
    ...         + 0.2 * (X.priors == ">3"))
    >>> y = (rng.random(2000) < risk).astype(int)
    >>> model = make_pipeline(OneHotEncoder(), LogisticRegression())
    >>> auditor = FaithAuditor(model, protected=["group"], epsilon=0.0, delta=0.05,
    ...                        n_resamples=200, random_state=0).fit(X, y)
    >>> result = auditor.audit(X, y)
    >>> result.n_cells
    12
    >>> round(result.statistic, 3)  # the decision flips with the group where priors is 1-3
    0.204
    >>> bool(result.rejected)       # so the model is not 0.05-fair
    True
    """

    _parameter_constraints = {
        "estimator": [Predicate(lambda e: hasattr(e, "fit"), "an estimator (with fit)")],
        "features": [None, COLUMN_LIST],
        "protected": [None, STRING, Interval("integral"),
                      COLUMN_LIST],
        "space": [Options(SPACES)],
        "reference": [None, ARRAY_LIKE],
        "metric": [Options(METRICS), Predicate(
            lambda m: hasattr(m, "fit") and not isinstance(m, str), "a metric object")],
        "exponent": [Interval("real", 0, None, closed="neither")],
        "loss": [Options(LOSSES), CALLABLE],
        "epsilon": [Interval("real", 0, None)],
        "delta": [None, Interval("real")],
        "method": [Options(("uniform", *BOOTSTRAP_METHODS))],
        "m": [None, Interval("integral", 1, None), Interval("real", 0, 1, closed="neither"),
              CALLABLE],
        "numerical_step": [None, Interval("real", 0, None, closed="neither"), CALLABLE],
        "n_resamples": [POSITIVE_INT],
        "confidence_level": [PROBABILITY],
        "allow_label_change": [BOOLEAN],
        "frozen": [STRING, Interval("integral"), COLUMN_LIST,
                   Predicate(lambda v: isinstance(v, tuple | list) and not v, "empty")],
        "forbidden": [None, ARRAY_LIKE],
        "max_cells": [None, POSITIVE_INT],
        "memory_limit": MEMORY_LIMIT,
        "batch_size": [None, POSITIVE_INT],
        "random_state": [RANDOM_STATE],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def __init__(
        self,
        estimator,
        *,
        features=None,
        protected=None,
        space="auto",
        reference=None,
        metric="sensitive_subspace",
        exponent=2,
        loss="zero_one",
        epsilon=DEFAULT_EPSILON,
        delta=None,
        method="uniform",
        m=None,
        numerical_step=None,
        n_resamples=1000,
        confidence_level=0.95,
        allow_label_change=False,
        frozen=(),
        forbidden=None,
        max_cells=None,
        memory_limit=DEFAULT_MEMORY_LIMIT,
        batch_size=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.features = features
        self.protected = protected
        self.space = space
        self.reference = reference
        self.metric = metric
        self.exponent = exponent
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.m = m
        self.numerical_step = numerical_step
        self.n_resamples = n_resamples
        self.confidence_level = confidence_level
        self.allow_label_change = allow_label_change
        self.frozen = frozen
        self.forbidden = forbidden
        self.max_cells = max_cells
        self.memory_limit = memory_limit
        self.batch_size = batch_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.classifier_tags = ClassifierTags(multi_class=False)
        tags.input_tags.categorical = self.space not in ("empirical", "reference")
        tags.input_tags.string = self.space not in ("empirical", "reference")
        tags.non_deterministic = self.random_state is None
        return tags

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y, **fit_params):
        """Fit a clone of the estimator and learn the fair metric on the training data.

        On numeric features (``space="reference"``) the audit's destinations are fixed here:
        the reference rows (``reference``, by default these training rows), each with every
        level of the protected attributes seen here.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Training features.
        y : array-like of shape (n_samples,)
            Binary training labels.
        **fit_params : dict
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : FaithAuditor
        """
        self._check_params()
        _, y_checked = validate_data(
            self, X, y, reset=True, dtype=None, ensure_min_samples=2, y_numeric=False
        )
        self._check_features(X)
        classes = self._check_binary(y_checked)
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        estimator_classes = getattr(self.estimator_, "classes_", classes)
        self.classes_ = np.asarray(estimator_classes)
        self.space_kind_ = self._space_kind(X)
        if self.space_kind_ == "grid":
            self.space_ = GridSpace.from_data(
                X, y_checked, self._features(X), classes=self.classes_,
                max_cells=self.max_cells, memory_limit=self.memory_limit,
            )
            self._check_protected(self.space_.feature_names)
            self.metric_ = self._fit_metric(self.space_, self.space_.encode(X))
            self.cell_loss_ = self._cell_loss(self.space_)
            self.transport_problem_ = self._prepare(self.space_, self.cell_loss_)
        else:
            numeric = self._numeric(X)
            self.metric_ = self._fit_metric(None, numeric)
            positions = self._check_protected(self._features_seen())
            self.protected_levels_ = {
                name: np.unique(numeric[:, j])
                for name, j in zip(self._protected(), positions, strict=True)
            }
            if self.space_kind_ == "reference":
                self.reference_ = self._reference_rows(X)
        return self

    def _protected(self):
        """``protected`` as a list (a single name or position is one attribute)."""
        return column_list(self.protected)

    def _reference_rows(self, X):
        """The distinct reference feature rows (the training rows unless ``reference``)."""
        rows = X if self.reference is None else self.reference
        if hasattr(X, "columns") and not hasattr(rows, "columns"):
            raise ValueError("reference must be a DataFrame with the feature columns, like X.")
        selected = _select(rows, self._features(X))
        values = self._numeric(rows, what="reference")
        if values.shape[0] == 0:
            raise ValueError("reference has no rows.")
        _, first = np.unique(values + 0.0, axis=0, return_index=True)
        first = np.sort(first)
        return selected.iloc[first] if hasattr(selected, "iloc") else selected[first]

    def _space_kind(self, X):
        """``space`` resolved: ``"auto"`` looks at the feature columns' types."""
        if self.space != "auto":
            return self.space
        features = self._features(X)
        if hasattr(X, "dtypes"):
            frame = _select(X, features)
            numeric = [c for c in frame.columns if frame[c].dtype.kind in "iuf"]
        else:
            numeric = list(features) if np.asarray(X).dtype.kind in "iuf" else []
        categorical = [f for f in features if f not in numeric]
        if numeric and categorical:
            raise ValueError(
                f"space='auto' found categorical features {categorical} and numeric features "
                f"{numeric}: encode the categorical ones as numbers (space='reference') or bin "
                "the numeric ones into categories (space='grid')."
            )
        return "grid" if categorical else "reference"

    def _check_params(self):
        parse_memory_limit(self.memory_limit)  # its own message names the accepted units
        check_params(self.get_params(deep=False), self._parameter_constraints,
                     type(self).__name__)
        if self.loss == "log_loss" and not hasattr(self.estimator, "predict_proba"):
            raise ValueError(
                "loss='log_loss' needs an estimator with predict_proba; "
                f"{type(self.estimator).__name__} has none. Use loss='zero_one'."
            )
        if self.reference is not None and self.space not in ("auto", "reference"):
            raise ValueError(
                f"reference is used by space='reference' (or 'auto' on numeric features), not "
                f"by space={self.space!r}."
            )

    def _check_binary(self, y):
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(
                "FaithAuditor audits binary classifiers: y must have exactly 2 classes, got "
                f"{classes.size} ({classes[:5].tolist()})."
            )
        return classes

    def _check_features(self, X):
        if self.features is None:
            return
        columns = list(X.columns) if hasattr(X, "columns") else list(range(np.shape(X)[1]))
        if sorted(map(str, self.features)) != sorted(map(str, columns)):
            raise ValueError(
                f"features={list(self.features)} must be all the columns the model is fit on "
                f"({columns}): the model is queried on the cells of the sample space, which "
                "hold these features only. Fit the auditor on X[features]."
            )

    def _features(self, X):
        if self.features is not None:
            return list(self.features)
        if hasattr(X, "columns"):
            return list(X.columns)
        return list(range(np.shape(X)[1]))

    def _numeric(self, X, what="X"):
        try:
            return np.asarray(_select(X, self._features(X)), dtype=float)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise ValueError(
                f"space={self.space_kind_!r} needs numeric features in {what}; encode "
                f"categorical columns first or use space='grid' ({exc})."
            ) from exc

    def _check_protected(self, features):
        return column_positions(self._protected(), features, by_position=False)

    def _fit_metric(self, space, encoded_train):
        metric = self.metric
        if space is not None:
            columns = space.encoded_columns(self._protected())
        else:
            columns = self._check_protected(self._features_seen())
        if isinstance(metric, str):
            if metric in ("sensitive_subspace", "protected_euclidean") and not columns:
                metric = EuclideanMetric(exponent=self.exponent)
            elif metric == "sensitive_subspace":
                metric = SensitiveSubspaceMetric(columns, exponent=self.exponent)
            elif metric == "protected_euclidean":
                metric = ProtectedEuclideanMetric(
                    columns, standardize=True, exponent=self.exponent
                )
            elif metric == "euclidean":
                metric = EuclideanMetric(exponent=self.exponent)
            else:
                raise ValueError(
                    "metric must be 'sensitive_subspace', 'protected_euclidean', 'euclidean' or "
                    f"a metric object, got {metric!r}."
                )
        else:
            metric = clone(metric)
        if isinstance(metric, PrecomputedMetric):
            # Its matrix is indexed by cells, not by training rows: the cost step checks its
            # shape against the sample space.
            encoded_train = None
        # ``y=None`` positionally: a FrozenEstimator's ``fit`` requires it (and ignores both).
        metric = metric.fit(encoded_train, None)
        self.metric_diagnostics_ = None
        if encoded_train is not None and hasattr(metric, "transform"):
            names = (space.encoded_feature_names if space is not None
                     else [str(f) for f in self._features_seen()])
            self.metric_diagnostics_ = metric_diagnostics(
                metric, encoded_train, columns, feature_names=names
            )
        return metric

    def _features_seen(self):
        if self.features is not None:
            return list(self.features)
        if hasattr(self, "feature_names_in_"):
            return list(self.feature_names_in_)
        return list(range(self.n_features_in_))

    def _cell_loss(self, space):
        return self._loss(space.query_frame(), space.feature_cell_index, space.cell_labels)

    def _loss(self, queries, rows, labels):
        """The loss at each cell: the model's output on ``queries[rows]`` against ``labels``."""
        if callable(self.loss):
            loss = np.asarray(self.loss(self.estimator_, take_rows(queries, rows), labels),
                              dtype=float)
            if loss.shape != labels.shape or not np.all(np.isfinite(loss)):
                raise ValueError("the loss callable must return one finite loss per cell.")
            return loss
        if self.loss == "zero_one":
            predictions = np.asarray(self.estimator_.predict(queries))
            return (predictions[rows] != labels).astype(float)
        proba = np.asarray(self.estimator_.predict_proba(queries))
        column = np.searchsorted(self.classes_, labels)
        p = np.clip(proba[rows, column], 1e-15, 1.0)
        return -np.log(p)

    def _forbidden(self, space):
        return forbidden_moves(
            space,
            allow_label_change=self.allow_label_change,
            frozen=tuple(self._frozen()),
            forbidden=self.forbidden,
        )

    def _prepare(self, space, loss, rows=None):
        """The transport problem of a sample space: from nearest neighbours when the metric is
        a linear map (``O(K)`` memory), else from dense ``K x K`` matrices within
        ``memory_limit``. ``rows``: the cells that can carry audit mass (None: all)."""
        if self.forbidden is None:
            points = metric_points(self.metric_, space.encode_feature_cells())
            if points is not None:
                coordinates, point_of_row, exponent = points
                return prepare_metric_transport(
                    loss,
                    coordinates,
                    exponent=exponent,
                    point_index=point_of_row[space.feature_cell_index],
                    groups=move_groups(
                        space, allow_label_change=self.allow_label_change,
                        frozen=tuple(self._frozen()),
                    ),
                    rows=rows,
                    memory_limit=self.memory_limit,
                )
        self._check_dense(space.n_cells)
        return prepare_transport(
            loss, self._cost(space), self._forbidden(space), memory_limit=self.memory_limit
        )

    def _check_dense(self, n_cells):
        why = (
            "the forbidden matrix is dense" if self.forbidden is not None
            else f"the fair metric {type(self.metric_).__name__} is not a linear map"
        )
        check_memory(
            dense_transport_bytes(n_cells),
            self.memory_limit,
            f"The dense K x K transport problem on K = {n_cells:,} cells ({why})",
            "Use a linear-map fair metric (sensitive_subspace, MahalanobisMetric, "
            "EuclideanMetric) and frozen / allow_label_change instead of a forbidden matrix: "
            "the audit then needs O(K) memory",
        )

    def _cost(self, space):
        cost = self.metric_.cost_matrix(space.encoded_features())
        return check_cost_matrix(cost, space.n_cells)

    @property
    def cost_(self):
        """Transport cost between the grid cells, ``(K, K)`` (grid mode, computed on access)."""
        space = self._grid_space("cost_")
        check_memory(
            8 * space.n_cells**2, self.memory_limit,
            f"cost_ ({space.n_cells:,} x {space.n_cells:,} floats)",
            "Read transport_problem_ instead",
        )
        return self._cost(space)

    @property
    def forbidden_(self):
        """Forbidden moves between the grid cells, ``(K, K)`` (grid mode, computed on access)."""
        space = self._grid_space("forbidden_")
        check_memory(
            space.n_cells**2, self.memory_limit,
            f"forbidden_ ({space.n_cells:,} x {space.n_cells:,} booleans)",
            "Read transport_problem_ instead",
        )
        return self._forbidden(space)

    def _grid_space(self, name):
        space = self.__dict__.get("space_")
        if space is None or "metric_" not in self.__dict__:
            raise AttributeError(f"{name} exists only after fit with space='grid'.")
        return space

    # -- auditing -----------------------------------------------------------------------
    def _audit_problem(self, X, y):
        """The sample space, counts and transport problem of an audit set."""
        y_checked = self._audit_labels(X, y)
        if self.space_kind_ == "grid":
            return self.space_, self._grid_counts(X, y_checked), self.transport_problem_
        if self.space_kind_ == "reference":
            return self._reference_problem(X, y_checked)
        space, counts, loss = self._empirical_cells(X, y_checked)
        return space, counts, self._prepare(space, loss, rows=np.flatnonzero(counts))

    def _audit_labels(self, X, y, min_samples=2):
        """``y`` of an audit set, checked against ``X`` and the classes seen in fit."""
        check_is_fitted(self)
        _, y_checked = validate_data(self, X, y, reset=False, dtype=None,
                                     ensure_min_samples=min_samples)
        unknown = np.setdiff1d(np.unique(y_checked), self.classes_)
        if unknown.size:
            raise ValueError(
                f"y contains labels {unknown.tolist()} not seen in fit "
                f"(classes {self.classes_.tolist()})."
            )
        return y_checked

    def _grid_counts(self, X, y):
        try:
            return self.space_.counts(X, y)
        except ValueError as exc:
            if "not levels of the sample space" not in str(exc):
                raise
            raise ValueError(
                f"{exc} The grid sample space was fixed in fit from the training data's "
                "levels, and audit rows must take those levels. For continuous features "
                "use space='reference' (or 'auto'), whose destinations are reference rows "
                "fixed in fit; for categorical ones declare every level as a pandas "
                "category."
            ) from None

    def _empirical_cells(self, X, y, reference=None):
        """Empirical space over the audit rows (after the ``reference`` rows, if any), with
        every protected level seen in fit or in the audit data; audit counts; cell losses."""
        X_audit = _select(X, self._features(X))
        numeric = self._numeric(X)
        positions = self._check_protected(self._features_seen())
        levels = {
            name: np.union1d(self.protected_levels_[name], numeric[:, j])
            for name, j in zip(self._protected(), positions, strict=True)
        }
        rows, labels = X_audit, y
        if reference is not None:
            self._warn_unseen_levels(numeric)
            if hasattr(X_audit, "iloc"):
                pd = import_optional("pandas", "audit DataFrames")
                rows = pd.concat([reference, X_audit], ignore_index=True)
            else:
                rows = np.concatenate([np.asarray(reference), np.asarray(X_audit)])
            # Reference rows carry no label: any label serves, they hold no audit count.
            labels = np.concatenate([np.full(len(reference), y[0]), y])
        space = EmpiricalSpace.from_data(
            rows,
            labels,
            protected=self._protected(),
            protected_levels=levels,
            classes=self.classes_,
            max_cells=self.max_cells,
            memory_limit=self.memory_limit,
        )
        return space, space.counts(X_audit, y), self._cell_loss(space)

    def _reference_problem(self, X, y):
        """Cells, counts and transport problem of the audit on the reference set.

        An audit cell may move to the reference cells (reference rows with the protected
        levels seen in fit), to its own twins at those levels, or stay. With a linear-map
        metric the cells are built row by row (:class:`ReferenceCells`); otherwise over the
        product of every row with every level (:func:`reference_moves`, dense costs).
        """
        if self.forbidden is None:
            built = self._reference_cells_problem(self._audit_rows(X, y))
            if built is not None:
                return built
        return self._reference_product_problem(X, y)

    def _reference_space(self):
        """The reference cells: reference rows with every protected level seen in fit."""
        reference = self.reference_
        return EmpiricalSpace.from_data(
            reference, np.full(len(reference), self.classes_[0]), protected=self._protected(),
            protected_levels=self.protected_levels_, classes=self.classes_, max_cells=None,
            memory_limit=self.memory_limit,
        )

    def _audit_rows(self, X, y):
        """The audit rows as an :class:`AuditRows` summary (features of the reference set)."""
        values = self._reference_space().encode(_select(X, self._features(X)))
        self._warn_unseen_levels(values)
        return AuditRows.from_rows(values, np.searchsorted(self.classes_, y))

    def _reference_cells_problem(self, summary):
        """Cells, counts and transport problem of an :class:`AuditRows` summary, or None
        when the metric is not a linear map (no points to search).

        Built in chunks of ``REFERENCE_CHUNK`` consecutive distinct audit rows, in parallel
        (``n_jobs``, any joblib backend, e.g. Dask's): each chunk is audited against the whole
        reference set and its own twins, then the chunks' rows are put side by side. The
        chunks depend on the summary alone, so the problem is the same bits for any
        ``n_jobs``, backend, or partitioning of the audit trail.
        """
        reference = self._reference_space()
        if metric_points(self.metric_, reference.encode_feature_cells()) is None:
            return None
        audit, audit_labels = summary.rows, summary.labels
        positions = self._check_protected(reference.feature_names)
        combinations = np.array(list(itertools.product(
            *(self.protected_levels_[name] for name in self._protected()))), dtype=np.float64
        ).reshape(-1, len(positions))
        at_levels = np.ones(audit.shape[0], dtype=bool)
        for name, j in zip(self._protected(), positions, strict=True):
            at_levels &= np.isin(audit[:, j], self.protected_levels_[name])
        n_cells = (reference.n_cells + audit.shape[0]
                   + audit.shape[0] * combinations.shape[0] - int(at_levels.sum()))
        if self.max_cells is not None and n_cells > self.max_cells:
            raise ValueError(
                f"the audit on the reference set has K = {n_cells:,} cells, more than "
                f"max_cells={self.max_cells:,}; raise max_cells or audit fewer rows."
            )
        reference_loss = self._cell_loss(reference)
        starts = range(0, audit.shape[0], REFERENCE_CHUNK)
        tasks = [(reference, reference_loss, audit[a:a + REFERENCE_CHUNK],
                  audit_labels[a:a + REFERENCE_CHUNK], combinations) for a in starts]
        if len(tasks) == 1:
            # One chunk, in this process: its nearest-neighbour queries take the threads
            # (the same answers).
            chunks = [self._reference_chunk(*tasks[0], effective_n_jobs(self.n_jobs))]
        else:
            # Threads by default: the searches and array work release the GIL, and the
            # chunks' problems stay in this process (any backend may be configured instead).
            chunks = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(self._reference_chunk)(*task, 1) for task in tasks)
        return self._join_chunks(reference, reference_loss, summary, chunks)

    def _reference_chunk(self, reference, reference_loss, audit, audit_labels, combinations,
                         workers):
        """The transport problem of some distinct audit rows on the reference set, in the
        chunk's own cells (the reference cells, these rows, their twins)."""
        positions = self._check_protected(reference.feature_names)
        twins, owner = counterfactual_twins(audit, positions, combinations)
        cells = ReferenceCells(reference, audit, audit_labels, twins, owner)
        points = metric_points(self.metric_, cells.features)
        if points is None:
            raise ValueError(
                f"the fair metric {type(self.metric_).__name__} is a linear map on the "
                "reference cells but not on the audit rows."
            )
        coordinates, point_of_row, exponent = points
        audited = np.concatenate([audit, twins])
        loss = np.concatenate([
            reference_loss,
            self._loss(reference.query_frame(rows=audited), np.arange(audited.shape[0]),
                       self.classes_[cells.label_index[reference.n_cells:]]),
        ])
        rows = cells.audit_cells
        groups = move_groups(cells, allow_label_change=self.allow_label_change,
                             frozen=tuple(self._frozen()))
        common = dict(exponent=exponent, point_index=point_of_row[cells.feature_cell_index],
                      rows=rows, memory_limit=self.memory_limit)
        # Twin groups: an audit cell with its own twins; reference cells are never twins.
        twin = np.concatenate([np.full(reference.n_cells, audit.shape[0]),
                               np.arange(audit.shape[0]), owner])
        at_levels = np.ones(cells.n_cells, dtype=bool)
        at_levels[:reference.n_cells] = False
        for name, j in zip(self._protected(), positions, strict=True):
            at_levels[rows] &= np.isin(audit[:, j], self.protected_levels_[name])
        to_twins = prepare_small_group_transport(
            loss, coordinates, groups * (audit.shape[0] + 1) + twin, destinations=at_levels,
            **common,
        )
        # A row whose twin already gives, for free, the largest gain any reference cell of
        # its group could give needs no search (the join keeps the better of the two bases).
        best = np.full(int(groups.max()) + 1, -np.inf)
        np.maximum.at(best, groups[:reference.n_cells], loss[:reference.n_cells])
        settled = to_twins.base_gain[rows] >= best[groups[rows]] - loss[rows]
        to_others = prepare_metric_transport(
            loss, coordinates, groups=groups, destinations=np.arange(reference.n_cells),
            unsearched=rows[settled], workers=workers, **common,
        )
        return twins, owner, loss[reference.n_cells:], combine_moves(to_others, to_twins)

    def _join_chunks(self, reference, reference_loss, summary, chunks):
        """The cells, counts and problem of all audit rows from their chunks' problems."""
        n_ref, n_audit = reference.n_cells, summary.rows.shape[0]
        sizes = [REFERENCE_CHUNK] * (len(chunks) - 1) + [
            n_audit - REFERENCE_CHUNK * (len(chunks) - 1)]
        audit_start = np.cumsum([0, *sizes])[:-1]
        twin_sizes = [chunk[0].shape[0] for chunk in chunks]
        twin_start = np.cumsum([0, *twin_sizes])[:-1]
        cells = ReferenceCells(
            reference, summary.rows, summary.labels,
            np.concatenate([chunk[0] for chunk in chunks]),
            np.concatenate([chunk[1] + a for chunk, a in zip(chunks, audit_start,
                                                             strict=True)]),
        )
        loss = np.concatenate([reference_loss]
                              + [chunk[2][:size] for chunk, size in zip(chunks, sizes,
                                                                        strict=True)]
                              + [chunk[2][size:] for chunk, size in zip(chunks, sizes,
                                                                        strict=True)])
        base_gain = np.zeros(cells.n_cells)
        base_destination = np.arange(cells.n_cells, dtype=np.intp)
        parts = []
        for (_, _, _, problem), size, a, t in zip(chunks, sizes, audit_start, twin_start,
                                                   strict=True):

            def to_global(index, size=size, a=a, t=t):
                # Chunk cells: reference, its audit rows, its twins -> the same in all rows.
                index = np.asarray(index, dtype=np.intp)
                audit = (index >= n_ref) & (index < n_ref + size)
                twin = index >= n_ref + size
                return np.where(audit, index + a,
                                np.where(twin, index - size + n_audit + t, index))

            own = np.arange(n_ref, n_ref + size)
            base_gain[own + a] = problem.base_gain[own]
            base_destination[own + a] = to_global(problem.base_destination[own])
            parts.append({"row": to_global(problem.segment_row),
                          "source": to_global(problem.segment_source),
                          "target": to_global(problem.segment_target),
                          "cost": problem.segment_cost, "gain": problem.segment_gain})
        counts = np.zeros(cells.n_cells, dtype=np.int64)
        counts[cells.audit_cells] = summary.counts
        return cells, counts, assemble_problem(loss, base_gain, base_destination, parts,
                                               support=cells.audit_cells)

    def _warn_unseen_levels(self, values):
        """Warn when audit rows hold protected levels not seen in fit (audited, but no one
        is moved to those levels: the reference set was fixed at fit)."""
        positions = self._check_protected(self._features_seen())
        new = {name: np.setdiff1d(values[:, j], self.protected_levels_[name])
               for name, j in zip(self._protected(), positions, strict=True)}
        new = {name: levels for name, levels in new.items() if levels.size}
        if new:
            warnings.warn(
                f"the audit data have protected levels not seen in fit ({_describe(new)}): "
                "their rows are audited, but no one is moved to those levels (the "
                "reference set was fixed at fit).", UserWarning, stacklevel=6,
            )

    def _reference_product_problem(self, X, y):
        """:meth:`_reference_problem` on the product of every row with every level."""
        reference = self.reference_
        space, counts, loss = self._empirical_cells(X, y, reference)
        to_reference, at_levels, twin = reference_moves(
            space, space.encode(reference), self.protected_levels_
        )
        rows = np.flatnonzero(counts)
        groups = move_groups(space, allow_label_change=self.allow_label_change,
                             frozen=tuple(self._frozen()))
        if self.forbidden is None:
            points = metric_points(self.metric_, space.encode_feature_cells())
            if points is not None:
                coordinates, point_of_row, exponent = points
                common = dict(
                    exponent=exponent, point_index=point_of_row[space.feature_cell_index],
                    rows=rows, memory_limit=self.memory_limit,
                )
                to_others = prepare_metric_transport(
                    loss, coordinates, groups=groups, destinations=to_reference, **common
                )
                to_twins = prepare_small_group_transport(
                    loss, coordinates, groups * (int(twin.max()) + 1) + twin,
                    destinations=at_levels, **common,
                )
                return space, counts, combine_moves(to_others, to_twins)
        self._check_dense(space.n_cells)
        allowed = (groups[:, None] == groups[None, :]) & (
            to_reference[None, :] | ((twin[:, None] == twin[None, :]) & at_levels[None, :])
        )
        forbidden = ~allowed | self._forbidden(space)
        np.fill_diagonal(forbidden, False)
        problem = prepare_transport(loss, self._cost(space), forbidden,
                                    memory_limit=self.memory_limit)
        return space, counts, problem.restrict(rows)

    def audit(self, X, y):
        """Audit the fitted model on held-out data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Audit features (disjoint from the training data).
        y : array-like of shape (n_samples,)
            Audit labels.

        Returns
        -------
        FaithResult
            Statistic, confidence interval and one-sided bounds, the δ-test decision and
            p-value, the kink diagnostic ``near_kink``, the adversarial plan and distribution.
        """
        return self._audit(*self._audit_problem(X, y))

    def audit_counts(self, counts):
        """Audit from the cell counts of an audit sample (grid mode).

        For audit trails that do not fit in memory: the counts are a sum over partitions
        (see :func:`skfair_audit.scale.partitioned_faith_audit`), and everything else the
        audit needs was computed in :meth:`fit`. Equals :meth:`audit` on the same rows.

        Parameters
        ----------
        counts : array-like of shape (n_cells,)
            Audit rows per cell of ``space_`` (in its cell order).

        Returns
        -------
        FaithResult
        """
        check_is_fitted(self)
        if self.space_kind_ != "grid":
            raise ValueError(
                "audit_counts needs space='grid' (cell counts); on a reference set audit the "
                "distinct rows instead (summarize, then audit_summary)."
            )
        return self._audit(self.space_, counts, self.transport_problem_)

    def summarize(self, X, y):
        """What the audit needs from an audit sample, as a sum over its partitions.

        On a grid the cell counts (as :meth:`audit_counts` takes them); on a reference set
        the distinct audit rows with their counts (:class:`AuditRows`), whose merge over
        the partitions of an audit trail is the summary of the whole trail
        (:func:`skfair_audit.scale.partitioned_faith_audit` does this on Dask).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        ndarray of int64 of shape (n_cells,) or AuditRows
        """
        y = self._audit_labels(X, y, min_samples=1)
        if self.space_kind_ == "grid":
            return self._grid_counts(X, y)
        if self.space_kind_ != "reference":
            raise ValueError(
                "summarize needs space='grid' or 'reference': the empirical sample space is "
                "built from the audit rows themselves, so its audit is not a sum over parts."
            )
        return self._audit_rows(X, y)

    def audit_summary(self, summary):
        """Audit from :meth:`summarize`'s output (merged over partitions, possibly).

        Equals :meth:`audit` on the rows summarised, bit for bit.

        Parameters
        ----------
        summary : ndarray of shape (n_cells,) or AuditRows

        Returns
        -------
        FaithResult
        """
        check_is_fitted(self)
        if self.space_kind_ == "grid":
            return self.audit_counts(summary)
        if self.space_kind_ != "reference":
            raise ValueError("audit_summary needs space='grid' or 'reference'.")
        if not isinstance(summary, AuditRows):
            raise TypeError(
                f"on a reference set the summary is an AuditRows (from summarize), got "
                f"{type(summary).__name__}."
            )
        n_features = len(self._features_seen())
        if summary.n < 2:
            raise ValueError(f"the summary holds {summary.n} audit row(s); an audit needs 2.")
        if summary.rows.ndim != 2 or summary.rows.shape[1] != n_features or not (
                summary.labels.size and 0 <= summary.labels.min()
                and summary.labels.max() < self.classes_.size):
            raise ValueError(
                f"the summary must hold rows of the {n_features} features and label codes in "
                f"[0, {self.classes_.size}) (FaithAuditor.summarize makes one)."
            )
        built = self._reference_cells_problem(summary) if self.forbidden is None else None
        if built is None:
            raise ValueError(
                "auditing a summary on a reference set needs a linear-map fair metric "
                "(sensitive_subspace, protected_euclidean, euclidean, Mahalanobis) and no "
                "forbidden matrix; audit the rows in memory with audit(X, y)."
            )
        return self._audit(*built)

    def _audit(self, space, counts, problem):
        # Heat maps need the grid's feature levels; an empirical space's cells are distinct
        # rows (possibly millions), which a heat map cannot show.
        grid = self.space_kind_ == "grid"
        return faith_audit(
            counts,
            None,
            problem,
            epsilon=self.epsilon,
            delta=self.delta,
            method=self.method,
            m=self.m,
            numerical_step=self.numerical_step,
            n_resamples=self.n_resamples,
            confidence_level=self.confidence_level,
            cell_names=space.cell_names,
            cell_features=space.cell_features if grid else None,
            feature_names=[str(f) for f in space.feature_names],
            cell_labels=space.cell_labels,
            metric_diagnostics=getattr(self, "metric_diagnostics_", None),
            batch_size=self.batch_size,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            memory_limit=self.memory_limit,
            estimand=self._estimand(space),
        )

    def _estimand(self, space):
        """Where the audit lets an individual move, in one sentence."""
        protected = ", ".join(map(str, self._protected())) or "no protected attribute"
        kept = "labels are kept" if not self.allow_label_change else "labels may change"
        if self.frozen:
            kept += f", and {', '.join(map(str, self._frozen()))} may not change"
        if self.space_kind_ == "grid":
            return (f"to any of the {space.n_cells:,} cells of the sample space fixed at fit; "
                    f"{kept}.")
        if self.space_kind_ == "reference":
            return (f"to any of the {len(self.reference_):,} reference individuals fixed at "
                    f"fit, each with every level of {protected} seen in fit, or to one's own "
                    f"counterfactual twin (the same individual with other levels of "
                    f"{protected}), or nowhere; {kept}.")
        return ("to the audit rows themselves and their counterfactual copies: the "
                "destinations depend on the audit sample, so the bounds are about the audit "
                f"sample's own move set, not a population quantity; {kept}.")

    def _frozen(self):
        return [self.frozen] if isinstance(self.frozen, str | numbers.Integral) else list(
            self.frozen)

    def audit_value(self, X, y):
        """The FaiTH statistic ψ(f_n) on ``(X, y)``, without the bootstrap.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Audit rows (disjoint from the model's training data).
        y : array-like of shape (n_samples,)
            Their labels.

        Returns
        -------
        float
            ψ(f_n) at the auditor's ``epsilon``.
        """
        _, counts, problem = self._audit_problem(X, y)
        return float(problem.value(counts / counts.sum(), float(self.epsilon)))

    def score(self, X, y):
        """``-ψ(f_n)``: the negated FaiTH statistic (higher is fairer), for model selection.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Audit rows.
        y : array-like of shape (n_samples,)
            Their labels.

        Returns
        -------
        float
            ``-self.audit_value(X, y)``.
        """
        return -self.audit_value(X, y)


def _describe(levels):
    return "; ".join(f"{name}: {', '.join(f'{v:g}' for v in values)}"
                     for name, values in levels.items())


def _select(X, features):
    """Columns ``features`` of a DataFrame (by name or position) or of an array."""
    if hasattr(X, "iloc"):
        if all(isinstance(f, numbers.Integral) for f in features):
            return X.iloc[:, list(features)]
        return X[list(features)]
    return np.asarray(X)[:, list(features)]
