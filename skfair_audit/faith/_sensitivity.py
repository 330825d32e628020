"""How much does the FaiTH verdict depend on the budget ε and on the fair metric?

:func:`faith_sensitivity` audits one or several fitted :class:`FaithAuditor` objects (one per
fair metric) on the same audit data along a grid of budgets, with the same bootstrap seed for
every budget and metric (common random numbers: the curves differ by what the budget and the
metric change, not by Monte Carlo noise), and returns a :class:`FaithSensitivityResult`: the
statistic and its confidence band as functions of ε, side by side, as a table and a plot.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._utils import (
    CARD_ROWS,
    ConfidenceInterval,
    card_figure,
    data_frame,
    html_card,
    html_key_figures,
    html_table,
    html_verdict,
    import_optional,
)
from ..results import AuditResult, ResultTable, Verdict
from ._solver import check_epsilon

__all__ = ["FaithSensitivityResult", "faith_sensitivity"]


@dataclass(frozen=True)
class FaithSensitivityResult(AuditResult):
    """The FaiTH audit along a grid of budgets, for one or several fair metrics.

    It follows the shared protocol of the results
    (:class:`~skfair_audit.results.AuditResult`): :meth:`verdict`, :meth:`table` (ψ(ε) per
    metric), :meth:`confidence_interval`, :meth:`guarantee`, :meth:`key_figures`,
    :meth:`figure` and :meth:`to_frame`.

    Attributes
    ----------
    metric_names : tuple of str
        One name per audited metric (the keys of the ``auditors`` mapping).
    epsilons : ndarray of shape (n_epsilons,)
        The budgets, increasing.
    statistic : ndarray of shape (n_metrics, n_epsilons)
        ψ(f_n) at each budget.
    ci_low, ci_high : ndarray of shape (n_metrics, n_epsilons)
        Two-sided confidence interval at ``confidence_level``.
    lower_bound, upper_bound : ndarray of shape (n_metrics, n_epsilons)
        One-sided bounds at ``confidence_level``.
    rejected : ndarray of bool of shape (n_metrics, n_epsilons) or None
        The δ-test decision, when the auditors have a ``delta``.
    delta : float or None
    confidence_level : float
    zero_cost_share : ndarray of shape (n_metrics,)
        Share of audited individuals who reach a worse decision at zero cost, per metric.
    free_directions : tuple of str
        ``"k of r"`` non-protected directions the metric leaves free ("—" when unknown).
    results : tuple of tuple of FaithResult
        The full audits, ``results[i][j]`` for metric ``i`` at ``epsilons[j]``.
    """

    metric_names: tuple
    epsilons: np.ndarray
    statistic: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    lower_bound: np.ndarray
    upper_bound: np.ndarray
    rejected: np.ndarray | None
    delta: float | None
    confidence_level: float
    zero_cost_share: np.ndarray
    free_directions: tuple
    results: tuple = field(repr=False)

    def records(self):
        """One dict per metric and budget (what :meth:`to_frame` tabulates)."""
        out = []
        for i, name in enumerate(self.metric_names):
            for j, epsilon in enumerate(self.epsilons):
                out.append({
                    "metric": name,
                    "epsilon": float(epsilon),
                    "statistic": float(self.statistic[i, j]),
                    "ci_low": float(self.ci_low[i, j]),
                    "ci_high": float(self.ci_high[i, j]),
                    "lower_bound": float(self.lower_bound[i, j]),
                    "upper_bound": float(self.upper_bound[i, j]),
                    "rejected": None if self.rejected is None else bool(self.rejected[i, j]),
                    "free_directions": self.free_directions[i],
                    "zero_cost_share": float(self.zero_cost_share[i]),
                })
        return out

    def to_frame(self):
        """A long :class:`pandas.DataFrame`: one row per metric and budget."""
        return data_frame(self.records())

    def table(self):
        """ψ̂(ε) with its two-sided interval and the δ-test's decision, per metric and budget.

        Returns
        -------
        skfair_audit.results.ResultTable
        """
        level = f"{self.confidence_level:.0%}"
        return ResultTable(
            ("metric", "epsilon", "statistic", "ci_low", "ci_high", "rejected"),
            ("metric", "ε", "ψ̂", f"{level} low", f"{level} high", "rejected"),
            tuple((r["metric"], r["epsilon"], r["statistic"], r["ci_low"], r["ci_high"],
                   r["rejected"]) for r in self.records()))

    def confidence_interval(self):
        """The two-sided intervals of ψ at ``confidence_level``.

        Returns
        -------
        ConfidenceInterval
            ``ci_low`` and ``ci_high``, of shape (n_metrics, n_epsilons).
        """
        return ConfidenceInterval(self.ci_low, self.ci_high)

    def verdict(self):
        """The δ-tests along the grid (descriptive when no δ was given).

        Returns
        -------
        skfair_audit.results.Verdict
            ``unfair`` when some (metric, ε) pair rejects δ-fairness; ``groups`` names the
            metrics that do.
        """
        if self.rejected is None:
            return Verdict(False, False, "no δ given: bounds only",
                           f"ψ̂ along {len(self.epsilons)} budgets for "
                           f"{len(self.metric_names)} metric(s).")
        count = int(np.sum(self.rejected))
        return Verdict(count > 0, True,
                       f"δ-fairness rejected at {count} of {self.rejected.size} (metric, ε) "
                       "pairs",
                       f"δ = {self.delta:g}, each test at level {1 - self.confidence_level:.0%}.",
                       tuple(name for i, name in enumerate(self.metric_names)
                             if np.any(self.rejected[i])))

    def guarantee(self):
        """What the intervals along the grid guarantee, in plain words.

        Returns
        -------
        str
        """
        return (
            f"Each interval is that of the FaiTH audit at its budget and metric "
            f"(results[i][j].guarantee()): it holds ψ with probability at least "
            f"{self.confidence_level:.0%} (as the sample grows) on its own, not all at once: "
            f"on average at most {1 - self.confidence_level:.0%} of the intervals of the grid "
            "miss. The curves share one bootstrap seed, so they differ by what ε and the "
            "metric change, not by Monte Carlo noise."
        )

    def key_figures(self):
        """Metrics, budgets, δ and the confidence level.

        Returns
        -------
        dict
        """
        return {"metrics": ", ".join(self.metric_names),
                "budgets ε": f"{len(self.epsilons)} from {self.epsilons[0]:g} to "
                             f"{self.epsilons[-1]:g}",
                "δ": self.delta, "confidence level": self.confidence_level}

    def figure(self, **options):
        """ψ(ε) with its confidence band (:meth:`plot`).

        Parameters
        ----------
        **options
            Ignored (options of other results).

        Returns
        -------
        tuple of (str, callable)
        """
        return "ψ(ε) with its confidence band", self.plot

    def __str__(self):
        level = f"{self.confidence_level:.0%}"
        lines = [f"FaiTH sensitivity to the budget and the fair metric ({level} intervals)"]
        width = max(len(n) for n in self.metric_names)
        for i, name in enumerate(self.metric_names):
            lines.append(
                f"  {name:<{width}}  free directions {self.free_directions[i]}, "
                f"{self.zero_cost_share[i]:.1%} reach a worse decision at zero cost"
            )
            for j, epsilon in enumerate(self.epsilons):
                verdict = ""
                if self.rejected is not None:
                    verdict = "  REJECT" if self.rejected[i, j] else "  -"
                lines.append(
                    f"  {'':<{width}}  eps={epsilon:<8.4g} psi={self.statistic[i, j]:.4f}  "
                    f"[{self.ci_low[i, j]:.4f}, {self.ci_high[i, j]:.4f}]{verdict}"
                )
        return "\n".join(lines)

    def _repr_html_(self):
        """A compact summary for notebooks: the table of ψ(ε) per metric and its plot."""
        level = f"{self.confidence_level:.0%}"
        verdict = self.verdict()
        table = self.table()
        return html_card(
            "FaithSensitivityResult: FaiTH along ε, per fair metric",
            verdict=html_verdict(verdict.summary, verdict.details if verdict.gated else "",
                                 unfair=verdict.unfair if verdict.gated else None),
            paragraphs=[f"ψ(ε) with its two-sided {level} interval; every budget and metric uses "
                        "the same bootstrap seed, so the curves differ by what ε and the metric "
                        "change, not by Monte Carlo noise."],
            key_figures=self.key_figures(),
            tables=[html_table("ψ(ε) per metric", table.labels, table.rows[:2 * CARD_ROWS],
                               total=len(table.rows)),
                    html_key_figures({f"{name}: free directions": self.free_directions[i]
                                      for i, name in enumerate(self.metric_names)})],
            figures=[card_figure("faith-sensitivity", *self.figure())],
        )

    def plot(self, ax=None, *, band="two-sided"):
        """ψ(ε) with its confidence band, one line per metric, and δ.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        band : {"two-sided", "lower"}
            Shade the two-sided interval, or the region above the one-sided lower bound (what
            the δ-test compares with δ).

        Returns
        -------
        ax : matplotlib Axes
        """
        if band not in ("two-sided", "lower"):
            raise ValueError(f"band must be 'two-sided' or 'lower', got {band!r}.")
        plt = import_optional("matplotlib.pyplot", "plot the sensitivity view")
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.0))
        for i, name in enumerate(self.metric_names):
            (line,) = ax.plot(self.epsilons, self.statistic[i], marker="o", markersize=3,
                              label=f"{name} (free: {self.free_directions[i]})")
            low = self.ci_low[i] if band == "two-sided" else self.lower_bound[i]
            high = self.ci_high[i] if band == "two-sided" else self.statistic[i]
            ax.fill_between(self.epsilons, low, high, color=line.get_color(), alpha=0.2,
                            linewidth=0)
        if self.delta is not None:
            ax.axhline(self.delta, color="black", linestyle="--", linewidth=1,
                       label=f"δ = {self.delta:g}")
        ax.set_xlabel("budget ε")
        ax.set_ylabel("FaiTH statistic ψ")
        what = ("two-sided interval" if band == "two-sided" else "one-sided lower bound")
        ax.set_title(f"Sensitivity to ε and the fair metric ({self.confidence_level:.0%} "
                     f"{what})", fontsize=10)
        ax.legend(fontsize=8)
        return ax


def _as_mapping(auditors):
    if isinstance(auditors, dict):
        items = list(auditors.items())
    elif isinstance(auditors, list | tuple):
        items = []
        for auditor in auditors:
            metric = getattr(auditor, "metric_", getattr(auditor, "metric", auditor))
            name = type(getattr(metric, "estimator", metric)).__name__
            items.append((name if name not in dict(items) else f"{name} {len(items)}", auditor))
    else:
        items = [("metric", auditors)]
    if not items:
        raise ValueError("give at least one fitted FaithAuditor.")
    for name, auditor in items:
        if not hasattr(auditor, "audit") or not hasattr(auditor, "set_params"):
            raise ValueError(
                f"{name!r} is a {type(auditor).__name__}, not a FaithAuditor."
            )
        if not hasattr(auditor, "metric_"):
            raise ValueError(f"the auditor {name!r} is not fitted; call fit first.")
    return [(str(name), auditor) for name, auditor in items]


def faith_sensitivity(auditors, X, y, *, epsilons):
    """Audit along a grid of budgets ε, for one or several fair metrics, side by side.

    Parameters
    ----------
    auditors : FaithAuditor, list of FaithAuditor, or dict of str to FaithAuditor
        Fitted auditors, typically of the same model with different metrics (wrap the model
        in :class:`~sklearn.frozen.FrozenEstimator` so every auditor audits the same one).
        The names of a dict label the curves; a list is labelled by the metrics' classes.
    X : DataFrame or array-like of shape (n_samples, n_features)
        Audit features.
    y : array-like of shape (n_samples,)
        Audit labels.
    epsilons : array-like of float
        Budgets (finite, >= 0). The cost is in the metric's units (squared standardised
        distance for the default metric), so the same ε means different things for metrics
        with different scales: that is part of what this view shows.

    Returns
    -------
    FaithSensitivityResult

    Notes
    -----
    Every audit uses its auditor's settings (bootstrap, level, δ, seed) with the budget
    replaced; with an integer ``random_state`` the bootstrap draws are the same at every
    budget, so the band moves smoothly with ε. A :class:`DegenerateMetricWarning` (or any
    other warning) is raised once per metric, not once per budget.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skfair_audit.faith import FaithAuditor, faith_sensitivity
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 3000),
    ...                   "priors": rng.choice(["0", "1-3", ">3"], 3000)})
    >>> risk = (0.2 + 0.25 * (X.group == "b") + 0.2 * (X.priors == "1-3")
    ...         + 0.4 * (X.priors == ">3"))
    >>> y = (rng.random(3000) < risk).astype(int)
    >>> model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X[:2000], y[:2000])
    >>> auditors = {
    ...     name: FaithAuditor(FrozenEstimator(model), protected=["group"], metric=name,
    ...                        n_resamples=200, random_state=0).fit(X[:2000], y[:2000])
    ...     for name in ["sensitive_subspace", "euclidean"]}
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # ε = 4 no longer binds
    ...     warnings.simplefilter("always")
    ...     sensitivity = faith_sensitivity(auditors, X[2000:], y[2000:], epsilons=[0, 1, 4])
    >>> sorted({w.category.__name__ for w in caught})
    ['SaturatedBudgetWarning']
    >>> sensitivity.statistic.round(3)
    array([[0.208, 0.321, 0.654],
           [0.   , 0.5  , 0.659]])
    >>> sensitivity.to_frame().shape          # 2 metrics x 3 budgets
    (6, 10)
    """
    items = _as_mapping(auditors)
    epsilons = np.asarray(epsilons, dtype=float).ravel()
    if epsilons.size == 0:
        raise ValueError("epsilons is empty; give the budgets to audit at.")
    for e in epsilons:
        check_epsilon(float(e))
    epsilons = np.unique(epsilons)

    shape = (len(items), epsilons.size)
    stat, low, high = np.empty(shape), np.empty(shape), np.empty(shape)
    lower, upper = np.empty(shape), np.empty(shape)
    rejected = np.zeros(shape, dtype=bool)
    any_delta, deltas, levels = False, set(), set()
    shares, free = np.empty(len(items)), []
    results = []
    for i, (_, auditor) in enumerate(items):
        row = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for j, epsilon in enumerate(epsilons):
                # A shallow copy shares the fitted state; only the budget changes.
                audit = copy.copy(auditor).set_params(epsilon=float(epsilon))
                result = audit.audit(X, y)
                ci = result.confidence_interval()
                stat[i, j], low[i, j], high[i, j] = result.statistic, ci.low, ci.high
                lower[i, j], upper[i, j] = result.lower_bound, result.upper_bound
                if result.rejected is not None:
                    any_delta = True
                    rejected[i, j] = result.rejected
                deltas.add(result.delta)
                levels.add(result.confidence_level)
                row.append(result)
        seen = set()
        for w in caught:
            key = (w.category, str(w.message))
            if key not in seen:
                seen.add(key)
                warnings.warn(w.message, w.category, stacklevel=2)
        shares[i] = row[0].zero_cost_share
        diagnostics = row[0].metric_diagnostics
        free.append("—" if diagnostics is None
                    else f"{diagnostics.n_free} of {diagnostics.n_non_protected}")
        results.append(tuple(row))
    if len(levels) > 1:
        raise ValueError(
            f"the auditors have different confidence levels {sorted(levels)}; give them the same."
        )
    delta = deltas.pop() if len(deltas) == 1 else None
    return FaithSensitivityResult(
        metric_names=tuple(name for name, _ in items),
        epsilons=epsilons,
        statistic=stat,
        ci_low=low,
        ci_high=high,
        lower_bound=lower,
        upper_bound=upper,
        rejected=rejected if any_delta else None,
        delta=delta,
        confidence_level=levels.pop(),
        zero_cost_share=shares,
        free_directions=tuple(free),
        results=tuple(results),
    )
