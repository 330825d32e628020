"""Is the fair metric meaningful? Diagnostics of its free subspace and of the audit at ε = 0.

A fair metric makes some moves free: those along its *free directions*. That is its purpose
(flipping a protected attribute should cost nothing), but a metric that frees (almost) every
direction in which the non-protected features vary makes every individual similar to every
other, and the FaiTH audit then measures the model's accuracy, not its fairness. Two checks:

- :func:`metric_diagnostics` (when the metric is fitted): how many of the directions in which
  the non-protected features vary the metric leaves free, and which protected attribute (and
  level) brought each, with the cross-validated AUC of its regression;
- :func:`zero_cost_summary` (at audit time, from the :class:`TransportProblem` only, in
  ``O(K + S)``, so it runs unchanged on any way of building the problem): the audit value at
  ε = 0 against its value with an unlimited budget, and the share of audited individuals who
  reach a worse decision at zero cost.

A :class:`DegenerateMetricWarning` is raised by :func:`faith_audit` (hence by
:class:`FaithAuditor` and the command line) when either looks degenerate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils.validation import check_array

from .._utils import data_frame, html_card, html_table, html_verdict
from ..results import ResultTable
from ._metric import _protected_groups

__all__ = [
    "DegenerateMetricWarning",
    "MetricDiagnostics",
    "degenerate_metric_reasons",
    "metric_diagnostics",
    "zero_cost_summary",
]

#: "Most" non-protected directions free: strictly more than this share.
FREE_SHARE_LIMIT = 0.5
#: ψ at ε = 0 "within a few percent" of its value with an unlimited budget: at least this share.
TRIVIAL_SHARE = 0.95
# Singular values of the metric on a direction below this multiple of its norm count as zero.
_FREE_RTOL = 1e-8
# Eigenvalues of the non-protected scatter below this multiple of the largest are no variation.
_VARIATION_RTOL = 1e-10


#: Where the :class:`DegenerateMetricWarning` points: its conditions and the remedies.
DEGENERATE_METRIC_DOCS = (
    "https://skfair-audit.readthedocs.io/en/latest/user_guide/fair_metric.html"
    "#the-degeneratemetricwarning"
)


class DegenerateMetricWarning(UserWarning):
    """The fair metric frees (almost) every move: the audit measures accuracy, not fairness.

    Raised when the metric leaves most of the directions in which the non-protected features
    vary free, or when the audit value at ε = 0 is within a few percent of its value with an
    unlimited budget (every individual the model treats well can be moved to where it errs,
    for free). The message names the attributes whose directions are free and links to the
    remedies in the user guide.
    """


@dataclass(frozen=True)
class MetricDiagnostics:
    """The free subspace of a fitted fair metric (see :func:`metric_diagnostics`).

    Attributes
    ----------
    metric : str
        Class name of the metric.
    n_features : int
        Number of numeric coordinates the metric reads.
    n_non_protected : int
        Dimension of the variation of the non-protected features in the training data: the
        rank of the centred training rows with the protected coordinates set to zero. For
        one-hot features it is the sum over non-protected features of (levels - 1).
    n_free : int
        Dimension of the part of that variation the metric does not measure (moves along it
        cost nothing).
    sources : tuple of dict
        One record per possible origin of free directions: ``source`` (e.g. the one-hot column
        ``"race_Asian"`` of a protected attribute's level, or ``"sex=1"``), ``n_members``,
        ``auc`` (cross-validated AUC of the regression predicting that level from the
        non-protected features; NaN when not computed), ``C``, ``kept`` (whether the metric
        uses its direction) and ``free_directions`` (how many free directions it brought).
    free_sources : tuple of str
        The source of each free direction, in the order they were freed.
    free_directions : ndarray of shape (n_free, n_features)
        Orthonormal basis (rows) of the free subspace.
    """

    metric: str
    n_features: int
    n_non_protected: int
    n_free: int
    sources: tuple
    free_sources: tuple
    free_directions: np.ndarray = field(repr=False)

    @property
    def free_share(self):
        """``n_free / n_non_protected`` (0 when the non-protected features do not vary)."""
        return self.n_free / self.n_non_protected if self.n_non_protected else 0.0

    @property
    def degenerate(self):
        """Whether the metric leaves most non-protected directions free."""
        return self.free_share > FREE_SHARE_LIMIT

    def responsible(self):
        """The sources of free directions, with their AUC, e.g. ``"race_Asian (AUC 0.61)"``."""
        out = []
        for record in self.sources:
            if record["free_directions"] <= 0:
                continue
            auc = record["auc"]
            text = record["source"]
            if auc is not None and not math.isnan(auc):
                text += f" (AUC {auc:.2f})"
            out.append(text)
        return out

    def summary(self):
        """The diagnostics in one flat dict (the rows of reports and ``to_frame``)."""
        return {
            "metric": self.metric,
            "non_protected_directions": self.n_non_protected,
            "free_directions": self.n_free,
            "free_share": self.free_share,
            "free_sources": "; ".join(self.responsible()),
        }

    def table(self):
        """One row per candidate sensitive direction: how well the non-protected features
        predict it (cross-validated AUC), whether the metric kept it, the free directions it
        brought.

        Returns
        -------
        skfair_audit.results.ResultTable
        """
        return ResultTable(
            ("source", "n_members", "auc", "kept", "free_directions"),
            ("source", "members", "CV AUC", "kept", "free directions"),
            tuple((r["source"], r["n_members"], r["auc"], r["kept"], r["free_directions"])
                  for r in self.sources),
        )

    def _repr_html_(self):
        """A compact summary for notebooks: what the metric leaves free, and why."""
        table = self.table()
        verdict = (html_verdict("degenerate: most non-protected directions are free",
                                f"{self.n_free} of {self.n_non_protected} are free.",
                                unfair=True)
                   if self.degenerate else
                   html_verdict(f"{self.n_free} of {self.n_non_protected} non-protected "
                                "directions free", unfair=False))
        return html_card(
            f"MetricDiagnostics: {self.metric}",
            verdict=verdict,
            paragraphs=["Moves along a free direction cost nothing under the fair metric: the "
                        "audit treats individuals who differ only along them as comparable."],
            key_figures=self.summary(),
            tables=[html_table("Candidate sensitive directions", table.labels, table.rows)]
            if table.rows else [],
        )

    def to_frame(self):
        """One row per source of free directions (a :class:`pandas.DataFrame`)."""
        columns = ["source", "n_members", "auc", "C", "kept", "free_directions"]
        return data_frame([dict(r) for r in self.sources]).reindex(columns=columns)

    def __str__(self):
        lines = [
            f"{self.metric}: {self.n_free} of {self.n_non_protected} non-protected "
            "directions are free"
        ]
        for record in self.sources:
            auc = record["auc"]
            auc_text = "" if auc is None or math.isnan(auc) else f", AUC {auc:.3f}"
            kept = "" if record["kept"] is None else ("kept" if record["kept"] else "dropped")
            lines.append(
                f"  {record['source']}: {record['free_directions']} free{auc_text}"
                + (f", {kept}" if kept else "")
            )
        return "\n".join(lines)


def _groups(protected_columns, n_features):
    if protected_columns is None or (
        hasattr(protected_columns, "__len__") and len(protected_columns) == 0
    ):
        return []
    return _protected_groups(protected_columns, n_features)


def _source_label(columns, level, names):
    if len(columns) > 1:
        if level == -1:
            return "/".join(names[j] for j in columns) + ": none active"
        return names[int(level)]
    value = f"{level:g}" if isinstance(level, float) else str(level)
    return f"{names[columns[0]]}={value}"


def _orthonormal_rows(vectors, rtol=_FREE_RTOL):
    if vectors.shape[0] == 0:
        return vectors
    _, singular, vt = np.linalg.svd(vectors, full_matrices=False)
    return vt[singular > rtol * max(singular.max(), np.finfo(float).tiny)]


def _intersection_dimension(basis, subspace):
    """``dim(span(basis) ∩ span(subspace))`` for orthonormal ``basis`` rows."""
    if subspace.shape[0] == 0 or basis.shape[0] == 0:
        return 0
    residual = basis - (basis @ subspace.T) @ subspace
    singular = np.linalg.svd(residual, compute_uv=False)
    return basis.shape[0] - int(np.count_nonzero(singular > _FREE_RTOL))


def metric_diagnostics(metric, X, protected_columns=None, *, feature_names=None):
    """The free subspace of a fitted linear-map fair metric.

    The non-protected variation :math:`D` is the span of the centred training rows with the
    protected coordinates set to zero. A direction :math:`v \\in D` is *free* when the
    metric's linear map sends it to zero, ``transform(v) = transform(0)``: moving an
    individual along it costs nothing. For the sensitive-subspace metric the free directions
    are the sensitive directions that lie in :math:`D`; each is attributed to the protected
    attribute level whose regression brought it (adding the metric's directions one at a time,
    in the order the metric ranks them, and counting how much each enlarges the free part of
    :math:`D`). Directions the metric does not measure for other reasons (e.g. columns an
    :class:`EuclideanMetric` leaves out) are attributed to the metric itself.

    Parameters
    ----------
    metric : fitted metric with ``transform``
        A linear-map metric (:class:`SensitiveSubspaceMetric`, :class:`MahalanobisMetric`,
        :class:`EuclideanMetric`, :class:`ProtectedEuclideanMetric`, :class:`ExploreMetric`,
        :class:`SVDSensitiveSubspaceMetric`), possibly in a
        :class:`~sklearn.frozen.FrozenEstimator`.
    X : array-like of shape (n_samples, n_features)
        Training rows in the metric's coordinates (e.g. ``space.encode(X_train)``).
    protected_columns : int, sequence of int, or sequence of sequences of int, optional
        The protected attributes' columns (as for :class:`SensitiveSubspaceMetric`); default
        the metric's own ``protected_columns`` if it has them, else none.
    feature_names : sequence of str, optional
        Names of the columns (e.g. ``space.encoded_feature_names``), used to name the sources.

    Returns
    -------
    MetricDiagnostics

    Raises
    ------
    ValueError
        If the metric has no ``transform`` (a :class:`PrecomputedMetric` or
        :class:`CallableMetric`: its cost need not come from a linear map).

    Examples
    --------
    >>> import numpy as np
    >>> from skfair_audit.faith import EuclideanMetric, metric_diagnostics
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 4))
    >>> metric = EuclideanMetric(columns=[1]).fit(X)    # only looks at column 1
    >>> diagnostics = metric_diagnostics(metric, X, protected_columns=[0])
    >>> diagnostics.n_free, diagnostics.n_non_protected
    (2, 3)
    >>> diagnostics.degenerate
    True
    """
    if not hasattr(metric, "transform"):
        raise ValueError(
            f"{type(metric).__name__} has no linear map (transform): its free subspace is not "
            "defined. Diagnostics need a linear-map metric."
        )
    X = check_array(X, dtype=np.float64, input_name="X")
    n_features = X.shape[1]
    if protected_columns is None:
        protected_columns = getattr(metric, "protected_columns", None)
    groups = _groups(protected_columns, n_features)
    protected = sorted({j for group in groups for j in group})
    names = (
        [str(n) for n in feature_names] if feature_names is not None
        else [f"x{j}" for j in range(n_features)]
    )
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names for {n_features} features.")

    # The variation of the non-protected features.
    centred = X.copy()
    centred[:, protected] = 0.0
    centred -= centred.mean(axis=0)
    scatter = centred.T @ centred
    eigenvalues, eigenvectors = np.linalg.eigh((scatter + scatter.T) / 2.0)
    top = max(float(eigenvalues.max()), np.finfo(float).tiny)
    variation = eigenvectors[:, eigenvalues > _VARIATION_RTOL * top].T
    n_variation = variation.shape[0]

    # The part of it the metric sends to zero.
    origin = np.asarray(metric.transform(np.zeros((1, n_features))), dtype=float)
    full = np.asarray(metric.transform(np.eye(n_features)), dtype=float) - origin
    norm = float(np.linalg.norm(full, 2)) if full.size else 0.0
    if n_variation:
        image = np.asarray(metric.transform(variation), dtype=float) - origin
        left, singular, _ = np.linalg.svd(image, full_matrices=True)
        rank = int(np.count_nonzero(singular > _FREE_RTOL * max(norm, np.finfo(float).tiny)))
        free = left[:, rank:].T @ variation
    else:
        free = np.empty((0, n_features))
    n_free = free.shape[0]

    sources, free_sources = _attribute_free_directions(
        metric, variation, protected, n_features, n_free, names
    )
    return MetricDiagnostics(
        metric=type(getattr(metric, "estimator", metric)).__name__,
        n_features=n_features,
        n_non_protected=n_variation,
        n_free=n_free,
        sources=tuple(sources),
        free_sources=tuple(free_sources),
        free_directions=free,
    )


def _attribute_free_directions(metric, variation, protected, n_features, n_free, names):
    """Records per source of free directions, and the source of each free direction."""
    records, order = [], []
    by_problem = {}
    if hasattr(metric, "_candidate_problems"):
        for k, problem in enumerate(metric._candidate_problems()):
            label = _source_label(problem["columns"], problem["level"], names)
            by_problem[k] = len(records)
            records.append({"source": label, "n_members": problem["n_members"],
                            "auc": problem["auc"], "C": problem["C"], "kept": problem["kept"],
                            "free_directions": 0})
    if hasattr(metric, "_sensitive_components"):
        vectors, component_records = metric._sensitive_components()
        units = np.eye(n_features)[protected]
        previous = _intersection_dimension(variation, _orthonormal_rows(units))
        for k, record in enumerate(component_records):
            spanned = _orthonormal_rows(np.vstack([units, vectors[: k + 1]]))
            now = _intersection_dimension(variation, spanned)
            brought, previous = max(now - previous, 0), max(now, previous)
            problem = record.get("problem")
            if problem in by_problem:
                index = by_problem[problem]
            else:
                label = record.get("source") or _source_label(
                    record["columns"], record["level"], names
                )
                index = len(records)
                records.append({"source": label, "n_members": record.get("n_members"),
                                "auc": record.get("auc", float("nan")), "C": None,
                                "kept": True, "free_directions": 0})
            records[index]["free_directions"] += brought
            order.extend([records[index]["source"]] * brought)
    # Whatever the learned directions do not explain: the metric ignores those directions.
    if len(order) > n_free:
        order = order[:n_free]
    if len(order) < n_free:
        label = f"not measured by {type(getattr(metric, 'estimator', metric)).__name__}"
        records.append({"source": label, "n_members": None, "auc": float("nan"), "C": None,
                        "kept": None, "free_directions": n_free - len(order)})
        order.extend([label] * (n_free - len(order)))
    return records, order


def zero_cost_summary(problem, frequencies):
    """What free moves alone can do, from a :class:`TransportProblem` and cell frequencies.

    Parameters
    ----------
    problem : TransportProblem
        Only its public arrays are used (``base_gain``, ``segment_row``, :meth:`curve`), so
        the summary costs ``O(K + S)`` however the problem was built.
    frequencies : array-like of shape (K,)
        Audit frequencies (or counts) per cell.

    Returns
    -------
    dict
        ``zero_cost_statistic``: ψ at ε = 0 (every source moves along its best free move);
        ``max_statistic``: ψ with an unlimited budget, the trivial maximum (for the 0-1 loss:
        every individual who can be moved to an error at any cost is);
        ``zero_cost_share``: the share of audited individuals for whom a free, allowed move
        reaches a cell where the model's loss is higher — for the 0-1 loss, individuals
        classified correctly whose decision would turn wrong for free (it then equals
        ``zero_cost_statistic``);
        ``reachable_share``: the same at any cost.
    """
    f = np.asarray(frequencies, dtype=float)
    total = float(f.sum())
    base = np.asarray(problem.base_gain)
    harmed = base > 0
    reachable = harmed.copy()
    reachable[np.asarray(problem.segment_row)] = True
    _, values = problem.curve(f / total)
    return {
        "zero_cost_statistic": float((f / total) @ base),
        "max_statistic": float(values[-1]),
        "zero_cost_share": float(f[harmed].sum() / total),
        "reachable_share": float(f[reachable].sum() / total),
    }


def degenerate_metric_reasons(diagnostics, zero_cost_statistic, max_statistic):
    """Why the metric looks degenerate (empty list: it does not).

    Parameters
    ----------
    diagnostics : MetricDiagnostics or None
    zero_cost_statistic, max_statistic : float or None
        ψ at ε = 0 and with an unlimited budget (see :func:`zero_cost_summary`).

    Returns
    -------
    list of str
        One sentence per reason: the metric leaves most non-protected directions free; ψ at
        ε = 0 is at least 95% of its value with an unlimited budget.
    """
    reasons = []
    if diagnostics is not None and diagnostics.degenerate:
        responsible = diagnostics.responsible()
        reasons.append(
            f"it leaves {diagnostics.n_free} of the {diagnostics.n_non_protected} directions in "
            "which the non-protected features vary free"
            + (f" (free directions from: {', '.join(responsible)})" if responsible else "")
        )
    if (
        zero_cost_statistic is not None and max_statistic is not None
        and max_statistic > 1e-12 and zero_cost_statistic >= TRIVIAL_SHARE * max_statistic
    ):
        reason = (
            f"at ε = 0 the audit value {zero_cost_statistic:.4g} is "
            f"{zero_cost_statistic / max_statistic:.0%} of its value with an unlimited budget "
            f"({max_statistic:.4g})"
        )
        if diagnostics is not None and not diagnostics.degenerate:
            reason += (
                f" although the metric frees only {diagnostics.n_free} of the "
                f"{diagnostics.n_non_protected} non-protected directions: the model may decide "
                "by the protected attributes alone (then the verdict stands)"
            )
        else:
            reason += (
                " (every move that matters is free, or the model decides by the protected "
                "attributes alone)"
            )
        reasons.append(reason)
    return reasons


def degenerate_metric_message(reasons):
    """The text of the :class:`DegenerateMetricWarning` for the given reasons."""
    return (
        "the fair metric looks degenerate: " + "; and ".join(reasons) + ". A metric that "
        "frees every move that matters makes the audit measure how often the model errs, not "
        f"fairness: see {DEGENERATE_METRIC_DOCS}"
    )
