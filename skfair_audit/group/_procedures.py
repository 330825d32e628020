"""Functional API of the group audit: certify bounds, certify thresholds, flag groups.

Every procedure takes an audit trail ``(y, y_pred)``, a :class:`GroupCollection` (or a
DataFrame / mapping of sensitive attributes, turned into all their intersections), a metric
and a target, and returns a frozen result object.

Audit sample
    The rows where the metric's condition holds (e.g. ``y == negative`` for the false
    positive rate). :math:`n`, :math:`P_n(G)` and the bootstrap are all defined on it.
Target
    ``float`` (known constant), ``"overall"`` (the metric on the whole audit sample) or a
    reference group (a member name of ``groups`` or a boolean row mask), whose metric is the
    target. Estimated targets are re-estimated in every bootstrap replicate.
Directions
    ``certify_bounds(alternative="lower")`` gives lower bounds, i.e. evidence for
    :math:`\\epsilon(G) > \\cdot`; ``certify_threshold`` and ``flag_groups`` use
    ``alternative="greater"`` for :math:`\\epsilon(G) > \\epsilon_0` (harm when the metric is
    an error rate) and ``"less"`` for :math:`\\epsilon(G) < \\epsilon_0`, like
    :mod:`scipy.stats`.

References
----------
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
Journal of Machine Learning Research 25(149), 1–49.
"""

from __future__ import annotations

import numpy as np

from .._utils import PROBABILITY, Interval, Options, seed_sequence, validate_params
from . import _inference
from ._collections import tree_leaves
from ._metrics import as_array
from ._monotone import monotone_tilt_bounds
from ._polynomial import polynomial_tilt_bounds
from ._registry import (
    ALPHA,
    BOOTSTRAP,
    CHERIAN_CANDES,
    EPSILON0,
    METRIC,
    POS_LABEL,
    REQUIRED,
    SCALING,
    TARGET_PARAMETER,
    Parameter,
    Procedure,
    TiltClass,
    alternative_parameter,
    register_procedure,
)
from ._results import (
    EqualizedOddsResult,
    GroupBoundsResult,
    GroupCertificationResult,
    GroupFlagResult,
)
from ._rkhs import rkhs_tilt_bounds
from ._summary import (
    ALTERNATIVES,
    BOOTSTRAP_CONSTRAINTS,
    DEFAULT_ALTERNATIVES,
    FINITE,
    TARGET,
    resolve_metric,
)

_DATA = {"target": TARGET}

BOUNDS = Procedure(
    name="bounds",
    function_name="certify_bounds",
    summary="Confidence bounds on every group's disparity, valid simultaneously.",
    result=GroupBoundsResult,
    compute=_inference.certify_bounds,
    parameters=(
        METRIC, TARGET_PARAMETER,
        alternative_parameter(ALTERNATIVES["bounds"], DEFAULT_ALTERNATIVES["bounds"],
                              "Which bounds to report (default two-sided, as the estimator "
                              "and the command line)."),
        ALPHA, *SCALING, POS_LABEL, *BOOTSTRAP,
    ),
    description=r"""
    With the bootstrap process :math:`T_b(G)` of :mod:`~skfair_audit.group._bootstrap` and
    scales :math:`s_G`, the critical value is
    :math:`c = Q_{1-\alpha}\big(\sup_G T_b(G)/s_G\big)` and

    .. math::

        \epsilon(G) \ge \hat\epsilon(G) - c\, \frac{s_G}{P_n(G)^2}
        \quad\text{for all } G \text{ simultaneously, w.p.} \to 1 - \alpha.

    Upper bounds use :math:`\sup_G -T_b(G)/s_G`; two-sided intervals
    :math:`\sup_G |T_b(G)|/s_G`. The rescaled :math:`s_G = \max(P_n(G), p^*)^{3/2}
    \sigma_G` gives CLT-width bounds :math:`c \sigma_G / \sqrt{P_n(G)}` for groups above
    :math:`p^*`; ``scale="unscaled"`` (:math:`s_G = 1`) gives widths :math:`c/P_n(G)^2`.
    """,
    references=CHERIAN_CANDES,
    returns="Simultaneous bounds, with the bootstrap distribution of the supremum.",
    examples={
        "function": """
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> sex = rng.choice(["F", "M"], 400)
        >>> y = rng.integers(0, 2, 400)
        >>> y_pred = np.where(rng.random(400) < 0.8, y, 1 - y)
        >>> res = certify_bounds(y, y_pred, {"sex": sex}, metric="error_rate",
        ...                      alternative="two-sided", n_resamples=200, random_state=0)
        >>> res.names
        ('sex=F', 'sex=M')
        >>> ci = res.confidence_interval("sex=F")
        >>> bool(ci.low < res.estimates[0] < ci.high)
        True
        """,
        "partitioned": """
        >>> import numpy as np, pandas as pd
        >>> from skfair_audit.group import certify_bounds
        >>> rng = np.random.default_rng(0)
        >>> n = 4000
        >>> trail = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "y": rng.integers(0, 2, n)})
        >>> trail["y_pred"] = np.where(rng.random(n) < 0.8, trail.y, 1 - trail.y)
        >>> chunks = [trail.iloc[i:i + 1000] for i in range(0, n, 1000)]
        >>> res = partitioned_certify_bounds(chunks, label="y", prediction="y_pred",
        ...                                  protected=["sex"], metric="error_rate",
        ...                                  n_resamples=200, random_state=0)
        >>> res.names, res.bootstrap
        (('sex=F', 'sex=M'), 'multinomial')
        >>> ref = certify_bounds(trail.y, trail.y_pred, trail[["sex"]], metric="error_rate",
        ...                      n_resamples=200, random_state=0)
        >>> bool(np.array_equal(res.upper, ref.upper))   # bit for bit the in-memory audit
        True
        """,
    },
)
certify_bounds = register_procedure(BOUNDS)

THRESHOLD = Procedure(
    name="threshold",
    function_name="certify_threshold",
    summary=r"""Boolean certificates :math:`\epsilon(G) > \epsilon_0` (``"greater"``),
    :math:`< \epsilon_0` (``"less"``) or :math:`|\epsilon(G)| < \epsilon_0` (``"within"``).""",
    result=GroupCertificationResult,
    compute=_inference.certify_threshold,
    parameters=(
        METRIC,
        Parameter("epsilon0", REQUIRED, FINITE, "float",
                  'Threshold (``>= 0`` for ``"within"``).', fallback=0.0),
        TARGET_PARAMETER,
        alternative_parameter(ALTERNATIVES["threshold"], DEFAULT_ALTERNATIVES["threshold"],
                              "Side of the certificates."),
        ALPHA, *SCALING,
        Parameter("method", "auto", [Options(("auto", "kadane", "enumeration"))],
                  '{"auto", "kadane", "enumeration"}',
                  "Supremum over all grid intervals by maximum subarray (``kadane``) or over "
                  "the listed groups."),
        POS_LABEL, *BOOTSTRAP,
    ),
    description=r"""
    The process is additive in the group,
    :math:`T_b(G) = P_n^b[(L - \hat\theta_b - \epsilon_0)1_G] - P_n[(L - \hat\theta -
    \epsilon_0)1_G]`, with scales :math:`s_G = \max(P_n(G), p^*)^{1/2}\sigma_G` (or 1).
    For ``"greater"``, :math:`c = Q_{1-\alpha}(\sup_G T_b(G)/s_G)` and :math:`G` is certified
    when

    .. math::

        \hat\epsilon(G) - c\, s_G / P_n(G) > \epsilon_0 .

    ``"less"`` mirrors it; ``"within"`` certifies both one-sided nulls
    :math:`\epsilon(G) \ge \epsilon_0` and :math:`\epsilon(G) \le -\epsilon_0` with one
    critical value for the joint supremum. The family-wise error is at most :math:`\alpha`
    asymptotically, exactly :math:`\alpha` only when every disparity equals the threshold.

    For an :func:`intervals` collection with ``scale="unscaled"``, the supremum over all grid
    intervals is a maximum-subarray problem over the bins (``method="kadane"``): no interval
    is enumerated in the bootstrap. ``method="auto"`` uses it whenever it applies (it takes
    the supremum over *all* grid intervals of the allowed length, a superset when groups were
    dropped by ``min_size``, so it is then not chosen automatically).
    """,
    references=CHERIAN_CANDES,
    returns="Certificates valid simultaneously, with the bounds that decide them.",
    examples={
        "function": """
        >>> import numpy as np
        >>> rng = np.random.default_rng(1)
        >>> x = rng.uniform(0, 5, 2000)
        >>> covered = (rng.random(2000) < 0.9).astype(int)
        >>> from skfair_audit.group import intervals
        >>> res = certify_threshold(covered, covered, intervals(x, np.linspace(0, 5, 11)),
        ...                         metric=lambda y, p: p.astype(float), target=0.0,
        ...                         epsilon0=0.8, alternative="greater", scale="unscaled",
        ...                         n_resamples=200, random_state=0)
        >>> res.method
        'kadane'
        >>> bool(res.is_certified("x in [0, 5]"))
        True
        """,
        "partitioned": """
        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> trail = pd.DataFrame({"g": rng.choice(["a", "b"], 4000), "y": 0})
        >>> trail["y_pred"] = (rng.random(4000) < 0.05).astype(int)
        >>> res = partitioned_certify_threshold([trail.iloc[:2000], trail.iloc[2000:]],
        ...                                     label="y", prediction="y_pred",
        ...                                     protected=["g"], metric="fpr", target=0.0,
        ...                                     epsilon0=0.1, alternative="less",
        ...                                     n_resamples=200, random_state=0)
        >>> res.certified.tolist()
        [True, True]
        """,
    },
)
certify_threshold = register_procedure(THRESHOLD)

FLAG = Procedure(
    name="flag",
    function_name="flag_groups",
    summary=r"""Flag groups whose disparity exceeds :math:`\epsilon_0`, controlling the FDR
    at ``q``.""",
    result=GroupFlagResult,
    compute=_inference.flag_groups,
    parameters=(
        METRIC, TARGET_PARAMETER, EPSILON0,
        alternative_parameter(ALTERNATIVES["flag"], DEFAULT_ALTERNATIVES["flag"],
                              "Side of the null hypotheses."),
        Parameter("q", 0.1, [PROBABILITY], "float", "False discovery rate."),
        Parameter("se", "delta", [Options(("delta", "bootstrap"))], '{"delta", "bootstrap"}',
                  r"""
                  ``"delta"`` (default, deterministic): plug-in influence-function variance
                  with the group term centred at the null boundary
                  :math:`\hat\theta + \epsilon_0` (the variance of
                  :math:`P_n[(L - \hat\theta - \epsilon_0)1_G]` under the null, as in a score
                  test; for ``"two-sided"`` the boundary :math:`\pm\epsilon_0` on the side of
                  the estimate), see :func:`delta_method_se`. It equals the Wald variance at
                  the boundary and does not vanish for tiny groups with a constant metric,
                  which would otherwise get p-value 0. ``"bootstrap"``: standard deviation of
                  :math:`\hat\epsilon_b(G)` over ``n_resamples`` replicates (Wald); the
                  bootstrap controls are used only then."""),
        POS_LABEL, *BOOTSTRAP,
    ),
    description=r"""
    Per group, :math:`z = (\hat\epsilon(G) - \epsilon_0)/\mathrm{se}(G)` and a one-sided
    p-value: ``"greater"`` tests :math:`H_0: \epsilon(G) \le \epsilon_0` with
    :math:`p = 1 - \Phi(z)`; ``"less"`` mirrors it; ``"two-sided"`` tests
    :math:`H_0: |\epsilon(G)| \le \epsilon_0` (see :func:`normal_pvalues`; p is in (0, 1]).
    Benjamini–Hochberg at level ``q`` then flags groups. FDR control is proved for disjoint
    groups, or binary metrics with overlapping groups (one-sided nulls, known target); it is
    unproved for two-sided nulls.
    """,
    references=CHERIAN_CANDES,
    returns="P-values, Benjamini–Hochberg adjusted p-values and flags.",
    bootstrap=False,
    partitioned_fixed={"se": "delta"},
    examples={
        "function": """
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> g = rng.choice(["a", "b", "c"], 3000)
        >>> y = np.zeros(3000, dtype=int)
        >>> y_pred = (rng.random(3000) < np.where(g == "c", 0.3, 0.1)).astype(int)
        >>> res = flag_groups(y, y_pred, {"g": g}, metric="fpr", epsilon0=0.02)
        >>> res.flagged.tolist()
        [False, False, True]
        """,
        "partitioned": """
        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> g = rng.choice(["a", "b", "c"], 3000)
        >>> trail = pd.DataFrame({"g": g, "y": 0,
        ...                       "y_pred": (rng.random(3000) < np.where(g == "c", 0.3, 0.1))})
        >>> trail["y_pred"] = trail.y_pred.astype(int)
        >>> res = partitioned_flag_groups([trail.iloc[:1500], trail.iloc[1500:]], label="y",
        ...                               prediction="y_pred", protected=["g"], metric="fpr",
        ...                               epsilon0=0.02)
        >>> res.flagged.tolist()
        [False, False, True]
        """,
    },
)
flag_groups = register_procedure(FLAG)


def _equalized_odds(y, y_pred, groups, *, target, alpha, epsilon0, pos_label, scale, p_star,
                    w0, n_resamples, batch_size, memory_limit, random_state, n_jobs, verbose):
    """The two rate audits of :func:`equalized_odds`, at ``alpha / 2`` each."""
    seeds = seed_sequence(random_state).spawn(2)
    common = dict(target=target, alpha=alpha / 2, pos_label=pos_label, scale=scale,
                  p_star=p_star, w0=w0, n_resamples=n_resamples, batch_size=batch_size,
                  memory_limit=memory_limit, n_jobs=n_jobs, verbose=verbose)
    if epsilon0 is None:
        fpr, tpr = (
            certify_bounds(y, y_pred, groups, metric=m, alternative="two-sided",
                           random_state=s, **common)
            for m, s in zip(("false_positive_rate", "true_positive_rate"), seeds, strict=True)
        )
        worst = np.maximum(
            np.maximum(np.abs(fpr.lower), np.abs(fpr.upper)),
            np.maximum(np.abs(tpr.lower), np.abs(tpr.upper)),
        )
        certified = None
    else:
        fpr, tpr = (
            certify_threshold(y, y_pred, groups, metric=m, epsilon0=epsilon0,
                              alternative="within", random_state=s, **common)
            for m, s in zip(("false_positive_rate", "true_positive_rate"), seeds, strict=True)
        )
        worst = np.full(len(fpr.names), np.nan)
        certified = fpr.certified & tpr.certified
    return EqualizedOddsResult(fpr, tpr, fpr.names, worst, certified, alpha)


EQUALIZED_ODDS = Procedure(
    name="equalized_odds",
    function_name="equalized_odds",
    summary="Equalized-odds audit: false and true positive rate audits at ``alpha / 2`` each.",
    result=EqualizedOddsResult,
    rows=_equalized_odds,
    parameters=(
        TARGET_PARAMETER,
        Parameter("alpha", 0.1, [PROBABILITY], "float",
                  "Simultaneous error level of the two audits together (each runs at "
                  "``alpha / 2``)."),
        Parameter("epsilon0", None, [None, *FINITE], "float, optional",
                  r"None: bounds; a number: certificates within :math:`\pm\epsilon_0`."),
        Parameter("pos_label", None, None, "optional", "Positive label of the binary labels."),
        *SCALING, *BOOTSTRAP,
    ),
    description=r"""
    Without ``epsilon0``: two-sided simultaneous intervals for both rates, combined into an
    upper bound on :math:`\max(|\epsilon_{FPR}(G)|, |\epsilon_{TPR}(G)|)` per group (the
    union bound makes it valid at level :math:`1-\alpha`; the two audits use disjoint rows).
    With ``epsilon0``: a group is certified when both rates are certified within
    :math:`\pm\epsilon_0` (``certify_threshold(alternative="within")``). The two audits get
    independent bootstrap streams spawned from ``random_state``.
    """,
    references=CHERIAN_CANDES,
    returns="The two rate audits and their combination per group.",
    examples={
        "function": """
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> a = rng.choice(["p", "q"], 2000)
        >>> y = rng.integers(0, 2, 2000)
        >>> y_pred = np.where(rng.random(2000) < 0.85, y, 1 - y)
        >>> res = equalized_odds(y, y_pred, {"a": a}, n_resamples=200, random_state=0)
        >>> bool(np.all(res.worst_disparity < 0.1))
        True
        """,
    },
)
equalized_odds = register_procedure(EQUALIZED_ODDS)


def _stacked(names, columns):
    return np.column_stack([as_array(c, str(nm)) for nm, c in zip(names, columns, strict=True)])


MONOTONE = TiltClass(
    "monotone", monotone_tilt_bounds, (1,),
    lambda names, columns: {"x": as_array(columns[0], str(names[0])), "name": str(names[0])},
    "every monotone tilt of one numeric column")
POLYNOMIAL = TiltClass(
    "polynomial", polynomial_tilt_bounds, (1, 2),
    lambda names, columns: {"x": _stacked(names, columns), "names": [str(n) for n in names]},
    "every non-negative polynomial tilt of one or two numeric columns")
RKHS = TiltClass(
    "rkhs", rkhs_tilt_bounds, (1, 2, 3),
    lambda names, columns: {"X": _stacked(names, columns)},
    "every non-negative tilt of a Gaussian RKHS ball over numeric columns (needs a bandwidth)")
for _tilt in (MONOTONE, POLYNOMIAL, RKHS):
    register_procedure(_tilt)

#: The generated functions' examples, collected by ``pytest --doctest-modules``.
__test__ = {f.__name__: f for f in (certify_bounds, certify_threshold, flag_groups,
                                    equalized_odds)}


_FLAG_GROUPS_SPLIT_PARAMETERS = {
    **_DATA, "epsilon0": FINITE, "alternative": [Options(ALTERNATIVES["flag"])],
    "q": [PROBABILITY], "test_size": [Interval("real", 0, 1, closed="neither")],
    "max_depth": [Interval("integral", 1, None)],
    "min_samples_leaf": [None, Interval("integral", 1, None)],
    "se": [Options(("delta", "bootstrap"))], "random_state": BOOTSTRAP_CONSTRAINTS["random_state"],
}


@validate_params(_FLAG_GROUPS_SPLIT_PARAMETERS)
def flag_groups_split(
    X,
    y,
    y_pred,
    *,
    metric,
    target="overall",
    epsilon0=0.0,
    alternative="greater",
    q=0.1,
    test_size=0.5,
    max_depth=3,
    min_samples_leaf=None,
    feature_names=None,
    se="delta",
    pos_label=None,
    random_state=None,
) -> GroupFlagResult:
    """Split-sample flagging: discover groups with a regression tree, test them on held-out rows.

    A :class:`~sklearn.tree.DecisionTreeRegressor` is fitted to :math:`L` on the audit-sample
    rows of a discovery split (features ``X``); its leaves, named by their decision rules,
    become the groups tested by :func:`flag_groups` on the other split. The selection does
    not use the test rows, so the FDR guarantee of the finite collection applies.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_rows, n_features)
        Features on which the tree looks for groups.
    y, y_pred, metric, target, pos_label
        As in :func:`certify_bounds`.
    epsilon0, alternative, q, se
        As in :func:`flag_groups`.
    test_size : float
        Fraction of rows held out for testing.
    max_depth, min_samples_leaf : int
        Tree size (``min_samples_leaf`` defaults to ``max(20, 2% of the discovery rows)``).
    feature_names : list of str, optional
        Names of the columns of ``X`` in the group names (default: the DataFrame's columns,
        else ``x0, x1, ...``).
    random_state : None, int, RandomState, Generator or SeedSequence
        Seeds the split and the tree.

    Returns
    -------
    GroupFlagResult
        Computed on the test split; ``result.groups`` is a ``kind="tree"`` collection over
        the test rows.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (4000, 2))
    >>> y = np.zeros(4000, dtype=int)
    >>> y_pred = (rng.random(4000) < np.where(X[:, 0] > 0.7, 0.4, 0.1)).astype(int)
    >>> res = flag_groups_split(X, y, y_pred, metric="fpr", epsilon0=0.05, max_depth=1,
    ...                         random_state=0)
    >>> [name for name, f in zip(res.names, res.flagged) if f]
    ['x0 > 0.7...']
    """
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeRegressor

    metric = resolve_metric(metric, pos_label)
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X_arr = as_array(X, "X")
    if X_arr.ndim == 1:
        X_arr = X_arr[:, None]
    y_arr, p_arr = as_array(y, "y"), as_array(y_pred, "y_pred")
    if not (X_arr.shape[0] == y_arr.shape[0] == p_arr.shape[0]):
        raise ValueError("X, y and y_pred must have the same number of rows.")
    values, rows = metric.evaluate(y_arr, p_arr)
    seed = None if random_state is None else int(seed_sequence(random_state).generate_state(1)[0])
    discover, test = train_test_split(np.arange(y_arr.shape[0]), test_size=test_size,
                                      random_state=seed)
    discover = discover[rows[discover]]
    if discover.size < 2:
        raise ValueError("too few audit-sample rows in the discovery split to grow a tree.")
    leaf = min_samples_leaf or max(20, int(0.02 * discover.size))
    tree = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=leaf, random_state=seed)
    tree.fit(X_arr[discover], values[discover])
    collection = tree_leaves(tree, X_arr[test], feature_names)
    return flag_groups(y_arr[test], p_arr[test], collection, metric=metric,
                       target=target if not isinstance(target, np.ndarray) else target[test],
                       epsilon0=epsilon0, alternative=alternative, q=q, se=se)


