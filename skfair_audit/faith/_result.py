"""The result object of a FaiTH audit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, check_memory
from .._utils import (
    CARD_ROWS,
    ConfidenceInterval,
    card_figure,
    check_confidence_level,
    data_frame,
    format_value,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
)
from ..results import AuditResult, ResultTable, Verdict
from ._diagnostics import MetricDiagnostics, degenerate_metric_reasons
from ._inference import root_bounds
from ._uniform import LinearPieces


@dataclass(frozen=True)
class FaithResult(AuditResult):
    """Result of a FaiTH individual-fairness audit (like a ``scipy.stats`` result).

    It follows the shared protocol of the results
    (:class:`~skfair_audit.results.AuditResult`): :meth:`verdict`, :meth:`table` (the moves
    of the worst-case transport plan), :meth:`confidence_interval`, :meth:`guarantee`,
    :meth:`key_figures`, :meth:`notes`, :meth:`figure` and :meth:`to_frame` (one row: the
    statistic, its bounds and the decision).

    Attributes
    ----------
    statistic : float
        The FaiTH statistic ψ(f_n): the largest increase of the model's expected loss over the
        distributions within transport budget ε (under the fair metric) of the audit
        distribution.
    epsilon : float
        Transport budget ε.
    delta : float or None
        Fairness threshold δ of the test, if one was asked for.
    method : str
        Inference method: ``"uniform"`` (uniformly valid bounds over the linear pieces of ψ)
        or a pointwise bootstrap (``"m-out-of-n"``, ``"numerical"``, ``"nonparametric"``,
        ``"subsampling"``); see :func:`~skfair_audit.faith.faith_audit`.
    confidence_level : float
        Level of ``lower_bound``, ``upper_bound`` and the default interval.
    n : int
        Audit sample size.
    n_cells : int
        Number of cells K of the sample space.
    m : int or None
        Resample size (m-out-of-n, subsampling).
    numerical_step : float or None
        ε_n of the numerical bootstrap.
    bootstrap_distribution : ndarray
        Bootstrap replicates: of the root ``T*`` ≈ √n(ψ(f_n) − ψ(f*)) for the pointwise
        bootstraps; of the studentized max-t statistic of the upper bound for
        ``"uniform"`` (:attr:`LinearPieces.max_t`).
    lower_bound, upper_bound : float
        One-sided bounds at ``confidence_level``.
    pvalue : float or None
        P-value of the δ-fairness test, H0: ψ ≤ δ (the model is δ-fair) vs ψ > δ. It inverts
        the lower bound exactly: ``pvalue <= 1 - confidence_level`` iff ``rejected``.
        Pointwise bootstraps: the share of replicates at least as extreme (``0.0`` means
        "below 1/B"); ``"uniform"``: the intersection–union p-value
        ``max_λ Φ(−(ℓ_λ(f_n) − δ)/se_λ)``.
    fair_pvalue : float or None
        P-value of the mirror test, H0: ψ ≥ δ vs ψ < δ (small = fairness certified); it
        inverts the upper bound exactly.
    rejected : bool or None
        Whether H0 "δ-fair" is rejected at level ``1 − confidence_level`` (lower bound > δ).
    certified_fair : bool or None
        Whether the mirror test certifies δ-fairness (upper bound < δ).
    dual_multipliers : tuple of float
        Interval of optimal multipliers λ of the budget constraint at f_n.
    dual_unique : bool
        Whether λ is unique (otherwise ε sits on a kink of ε ↦ ψ(ε) and the limit law is not
        Gaussian).
    gaussianity_pvalue, skewness : float
        The paper's diagnostic of the bootstrap distribution (see
        :func:`~skfair_audit.faith.gaussianity_diagnostic`); NaN for ``"uniform"``, whose
        replicates are not a root.
    counts : ndarray of shape (K,)
        Audit counts per cell.
    adversarial_distribution : ndarray of shape (K,)
        Q = Πᵀ1, the worst-case distribution within budget.
    plan_source, plan_target, plan_mass : ndarray
        Non-zero entries of the optimal transport plan Π (mass moved from cell to cell).
    cell_names : sequence of str
        Readable name of every cell (from a sample space: a lazy sequence that formats a name
        when it is read).
    cell_features : ndarray of shape (K, d) or None
        Feature values of every cell (for the heat map).
    feature_names : tuple of str or None
    cell_labels : ndarray of shape (K,) or None
    zero_cost_statistic : float or None
        ψ(f_n) at ε = 0, whatever the audit's ε: what free moves alone do.
    max_statistic : float or None
        ψ(f_n) with an unlimited budget, the trivial maximum: for the 0-1 loss, the share of
        audited individuals who can be moved to an error at any cost.
    zero_cost_share : float or None
        Share of the audited individuals for whom an allowed move of zero cost reaches a cell
        where the model's loss is higher: for the 0-1 loss, individuals classified correctly
        whose decision would turn wrong, for free, by changing only what the fair metric deems
        irrelevant (for the 0-1 loss it equals ``zero_cost_statistic``).
    reachable_share : float or None
        The same share when any allowed move counts, whatever its cost.
    metric_diagnostics : MetricDiagnostics or None
        The free subspace of the fair metric (:func:`~skfair_audit.faith.metric_diagnostics`),
        when the audit knew the metric.
    near_kink : bool or None
        Whether the data are consistent with ε sitting at or near a kink of ε ↦ ψ(ε): the
        confidence set (at ``confidence_level``) of the active linear piece of ψ holds more
        than one piece (:attr:`LinearPieces.near_kink`). Unlike ``dual_unique``, which is
        exact at the estimate and almost never False on a sample, it accounts for the
        sampling error. The pointwise bootstraps may not hold their level when it is True.
    linear_pieces : LinearPieces or None
        The linear pieces of ψ behind the uniform bounds and the kink diagnostic.
    saturation_budgets : tuple of float or None
        ``(ε½, ε₉₅)``: the budgets at which ψ̂ reaches half and 95% of ``max_statistic``
        (0 when ψ̂ at ε = 0 already does). A budget far above ε₉₅ measures how often the
        model can be made to err at any cost rather than at a small one.
    budget_saturated : bool or None
        Whether ε > 0 does not bind: ψ̂(ε) is within 1% of ``max_statistic`` (a
        :class:`SaturatedBudgetWarning` was raised).
    estimand : str or None
        Where the audit lets an individual move, in one sentence (the population quantity
        the bounds are about).
    memory_limit : float
        The audit's memory budget in bytes (``inf``: none), which :attr:`transport_plan`
        keeps to.
    """

    statistic: float
    epsilon: float
    delta: float | None
    method: str
    confidence_level: float
    n: int
    n_cells: int
    m: int | None
    numerical_step: float | None
    bootstrap_distribution: np.ndarray = field(repr=False)
    lower_bound: float
    upper_bound: float
    pvalue: float | None
    fair_pvalue: float | None
    rejected: bool | None
    certified_fair: bool | None
    dual_multipliers: tuple
    dual_unique: bool
    gaussianity_pvalue: float
    skewness: float
    counts: np.ndarray = field(repr=False)
    adversarial_distribution: np.ndarray = field(repr=False)
    plan_source: np.ndarray = field(repr=False)
    plan_target: np.ndarray = field(repr=False)
    plan_mass: np.ndarray = field(repr=False)
    cell_names: tuple = field(repr=False)
    cell_features: np.ndarray | None = field(default=None, repr=False)
    feature_names: tuple | None = field(default=None, repr=False)
    cell_labels: np.ndarray | None = field(default=None, repr=False)
    zero_cost_statistic: float | None = None
    max_statistic: float | None = None
    zero_cost_share: float | None = None
    reachable_share: float | None = None
    metric_diagnostics: MetricDiagnostics | None = field(default=None, repr=False)
    near_kink: bool | None = None
    linear_pieces: LinearPieces | None = field(default=None, repr=False)
    saturation_budgets: tuple | None = None
    budget_saturated: bool | None = None
    estimand: str | None = None
    memory_limit: float = field(default=DEFAULT_MEMORY_LIMIT, repr=False)

    def confidence_interval(self, confidence_level=None, alternative="two-sided"):
        """Confidence interval for ψ(f*) from the stored bootstrap distribution.

        Parameters
        ----------
        confidence_level : float, optional
            Defaults to the audit's level.
        alternative : {"two-sided", "greater", "less"}
            ``"greater"`` gives the one-sided lower bound ``[low, inf)``, ``"less"`` the upper
            bound ``(-inf, high]``.

        Returns
        -------
        ConfidenceInterval
        """
        level = self.confidence_level if confidence_level is None else confidence_level
        level = check_confidence_level(level)
        if self.method != "uniform":
            low, high = root_bounds(
                self.statistic, self.bootstrap_distribution, self.n, level, alternative
            )
            return ConfidenceInterval(low, high)
        pieces = self.linear_pieces
        if alternative == "two-sided":
            side = 0.5 + 0.5 * level
            return ConfidenceInterval(pieces.lower_bound(side), pieces.upper_bound(side))
        if alternative == "greater":
            return ConfidenceInterval(pieces.lower_bound(level), math.inf)
        if alternative == "less":
            return ConfidenceInterval(-math.inf, pieces.upper_bound(level))
        raise ValueError(
            f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}."
        )

    @property
    def gaussian_limit(self):
        """Whether √n(ψ(f_n) − ψ(f*)) has a Gaussian limit at the estimated f.

        The limit is ``min_{λ ∈ Λ} <Z, u(λ)>`` over the optimal duals Λ. It is Gaussian when Λ
        is a point, and also when Λ = [λ₀, ∞) (ε = 0: only free moves count, ψ is linear in
        f). A bounded interval means ε sits on a kink of ε ↦ ψ(ε): the limit is a minimum of
        correlated Gaussians and Efron's bootstrap is inconsistent.
        """
        low, high = self.dual_multipliers
        return bool(low == high or math.isinf(high))

    @property
    def degenerate_metric(self):
        """Whether the fair metric looks degenerate (the :class:`DegenerateMetricWarning` test).

        True when the metric leaves most non-protected directions free, or when the audit
        value at ε = 0 is within a few percent of its value with an unlimited budget.
        """
        return bool(self.degenerate_metric_reasons())

    def degenerate_metric_reasons(self):
        """Why the fair metric looks degenerate, in words (an empty list when it does not)."""
        return degenerate_metric_reasons(
            self.metric_diagnostics, self.zero_cost_statistic, self.max_statistic
        )

    @property
    def transport_plan(self):
        """The optimal plan Π as a dense (K, K) array of probability mass.

        Refused with :class:`MemoryLimitError` when ``8 K²`` bytes exceed the audit's
        ``memory_limit`` (2 GiB by default): the plan's
        non-zero entries are ``plan_source``, ``plan_target`` and ``plan_mass``
        (``scipy.sparse.coo_array((plan_mass, (plan_source, plan_target)))``).
        """
        check_memory(
            8 * self.n_cells**2,
            self.memory_limit,
            f"The dense {self.n_cells:,} x {self.n_cells:,} transport plan",
            "Use its non-zero entries plan_source, plan_target and plan_mass, or moves()",
        )
        plan = np.zeros((self.n_cells, self.n_cells))
        np.add.at(plan, (self.plan_source, self.plan_target), self.plan_mass)
        return plan

    @property
    def count_changes(self):
        """``n (Q − f_n)``: the adversarial change of counts per cell (the paper's Figure 2)."""
        return self.adversarial_distribution * self.n - self.counts

    def moves(self):
        """The off-diagonal moves of the plan as records (from cell, to cell, mass, count)."""
        records = []
        order = np.argsort(-self.plan_mass, kind="stable")
        for k in order:
            i, j, mass = int(self.plan_source[k]), int(self.plan_target[k]), self.plan_mass[k]
            if i == j or mass <= 0:
                continue
            records.append(
                {
                    "from_cell": self.cell_names[i],
                    "to_cell": self.cell_names[j],
                    "mass": float(mass),
                    "count": float(mass * self.n),
                }
            )
        return records

    def table(self):
        """The off-diagonal moves of the worst-case plan, largest mass first (:meth:`moves`).

        Returns
        -------
        skfair_audit.results.ResultTable
        """
        return ResultTable(("from_cell", "to_cell", "count", "mass"),
                           ("from cell", "to cell", "individuals moved", "mass"),
                           tuple((m["from_cell"], m["to_cell"], m["count"], m["mass"])
                                 for m in self.moves()))

    def figure(self, rows=None, columns=None, **options):
        """The heat map of the adversarial count changes, for the report and the notebook.

        Parameters
        ----------
        rows, columns : list of str, optional
            As in :meth:`plot`.
        **options
            Ignored (options of other results).

        Returns
        -------
        tuple of (str, callable) or None
            The caption and a function that draws :meth:`plot`; None without cell features.
        """
        if self.cell_features is None:
            return None
        return ("Adversarial heat map: change in counts n(Q − f_n) per cell, one panel per "
                "label. Red cells gain individuals under the worst case (the model errs "
                "there), blue cells lose them.",
                lambda: self.plot(rows=rows, columns=columns))

    def moves_frame(self):
        """The moves of the adversarial plan as a tidy :class:`pandas.DataFrame`."""
        return data_frame(
            self.moves() or [], index=None
        ).reindex(columns=["from_cell", "to_cell", "mass", "count"])

    def summary(self):
        """The audit in one dict (what :meth:`to_frame` tabulates)."""
        ci = self.confidence_interval()
        return {
            "statistic": self.statistic,
            "ci_low": ci.low,
            "ci_high": ci.high,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "pvalue": self.pvalue,
            "rejected": self.rejected,
            "fair_pvalue": self.fair_pvalue,
            "certified_fair": self.certified_fair,
            "method": self.method,
            "confidence_level": self.confidence_level,
            "n": self.n,
            "n_cells": self.n_cells,
            "m": self.m,
            "numerical_step": self.numerical_step,
            "n_resamples": int(self.bootstrap_distribution.size),
            "dual_unique": self.dual_unique,
            "zero_cost_statistic": self.zero_cost_statistic,
            "max_statistic": self.max_statistic,
            "zero_cost_share": self.zero_cost_share,
            "reachable_share": self.reachable_share,
            **_metric_summary(self.metric_diagnostics),
            "degenerate_metric": self.degenerate_metric,
            "near_kink": self.near_kink,
            "epsilon_half_saturation": (None if self.saturation_budgets is None
                                        else self.saturation_budgets[0]),
            "epsilon_95_saturation": (None if self.saturation_budgets is None
                                      else self.saturation_budgets[1]),
            "budget_saturated": self.budget_saturated,
        }

    def to_frame(self):
        """A one-row :class:`pandas.DataFrame` with the statistic, bounds and decision."""
        return data_frame([self.summary()])

    def __str__(self):
        ci = self.confidence_interval()
        level = f"{self.confidence_level:.0%}"
        how = "uniform bounds" if self.method == "uniform" else f"{self.method} bootstrap"
        lines = [
            f"FaiTH audit ({how}, n={self.n}, K={self.n_cells} cells, "
            f"epsilon={self.epsilon:g})",
            f"  statistic      {self.statistic:.4f}",
            f"  {level} CI         [{ci.low:.4f}, {ci.high:.4f}]",
            f"  one-sided      lower {self.lower_bound:.4f}, upper {self.upper_bound:.4f}",
        ]
        if self.delta is not None:
            verdict = (
                "REJECT delta-fairness" if self.rejected else "cannot reject delta-fairness"
            )
            lines.append(f"  delta={self.delta:g}: {verdict} (p={self.pvalue:.4g})")
        if self.zero_cost_share is not None:
            metric = ""
            if self.metric_diagnostics is not None:
                d = self.metric_diagnostics
                metric = f"{d.n_free} of {d.n_non_protected} non-protected directions free; "
            lines.append(
                f"  fair metric    {metric}{self.zero_cost_share:.1%} of audited individuals "
                f"reach a worse decision at zero cost ({self.reachable_share:.1%} at any cost)"
            )
            if self.degenerate_metric:
                lines.append(
                    "  warning: the fair metric looks degenerate (see metric_diagnostics)"
                )
        if self.near_kink or not self.gaussian_limit:
            note = (
                "  note: epsilon may sit at or near a kink of the audit curve (more than one "
                "linear piece of psi is plausibly active): the limit law is not Gaussian"
            )
            if self.method != "uniform":
                note += "; pointwise bootstraps may miss their level here, use method='uniform'"
            lines.append(note)
        return "\n".join(lines)

    # -- what the audit tells a reader (shared by the report and the notebook display) ------
    def guarantee(self):
        """The guarantee of the bounds, in plain words.

        Returns
        -------
        str
        """
        level = self.confidence_level
        ci = self.confidence_interval()
        return (
            f"ψ is the largest increase of the audited model's expected loss when individuals "
            f"may be moved, at total transport cost at most ε = {self.epsilon:g} "
            f"under the fair metric, to where the model does worst. With {level:.0%} confidence "
            f"ψ lies between {format_value(ci.low)} and {format_value(ci.high)}; the one-sided "
            f"bounds [{format_value(self.lower_bound)}, {format_value(self.upper_bound)}] hold "
            f"at {level:.0%} each. "
            + ("These are large-sample guarantees that hold uniformly, also at and near the "
               "kinks of ε ↦ ψ where ψ is not differentiable (uniform bounds)."
               if self.method == "uniform" else
               f"The {self.method} bootstrap gives them as n grows at every fixed population "
               "(pointwise), but may miss its level near a kink of ε ↦ ψ; method='uniform' "
               "does not.")
            + (f" The moves allowed: {self.estimand}" if self.estimand else "")
            + " The guarantee is about this one fitted model, the randomness being that of the "
            "audit sample (held out from its training): a model trained on other data has its "
            "own ψ."
        )

    def verdict(self):
        """The decision of the δ-fairness test (descriptive when no δ was given).

        Returns
        -------
        skfair_audit.results.Verdict
            ``unfair`` is :attr:`rejected`; ``gated`` whether a δ was given.
        """
        if self.delta is None:
            ci = self.confidence_interval()
            return Verdict(False, False, "no δ given: bounds only",
                           f"ψ̂ = {format_value(self.statistic)}, "
                           f"{self.confidence_level:.0%} interval [{format_value(ci.low)}, "
                           f"{format_value(ci.high)}].")
        alpha = 1 - self.confidence_level
        if self.rejected:
            return Verdict(True, True, f"NOT δ-fair for δ = {self.delta:g}", (
                f"The model is NOT δ-fair for δ = {self.delta:g}: the lower bound "
                f"{format_value(self.lower_bound)} exceeds δ (p = {format_value(self.pvalue)}). "
                f"A δ-fair model would be declared unfair with probability at most {alpha:.0%}."
            ))
        if self.certified_fair:
            return Verdict(False, True, f"certified δ-fair for δ = {self.delta:g}", (
                f"The model is certified δ-fair for δ = {self.delta:g}: the upper bound "
                f"{format_value(self.upper_bound)} is below δ (p = "
                f"{format_value(self.fair_pvalue)}); a model that is not δ-fair would be "
                f"certified with probability at most {alpha:.0%}."
            ))
        return Verdict(False, True, f"δ-fairness for δ = {self.delta:g} not rejected", (
            f"δ-fairness for δ = {self.delta:g} cannot be rejected (lower bound "
            f"{format_value(self.lower_bound)} ≤ δ, p = {format_value(self.pvalue)}), but it is "
            "not certified either (the upper bound is not below δ): the audit sample does not "
            "settle the question."
        ))

    def notes(self):
        """Warnings a reader needs: ε near a kink of ψ, a degenerate fair metric.

        Returns
        -------
        list of str
        """
        notes = []
        if self.near_kink or not self.gaussian_limit:
            notes.append(
                "Note: ε may sit at or near a kink of the audit curve (more than one linear "
                "piece of ψ is plausibly active), where the limit law is not Gaussian; "
                + ("the uniform bounds used here stay valid there."
                   if self.method == "uniform" else
                   "the pointwise bootstraps may miss their level there; method='uniform' "
                   "does not.")
            )
        reasons = self.degenerate_metric_reasons()
        if reasons:
            notes.append(
                "Warning: the fair metric looks degenerate: " + "; and ".join(reasons) + ". A "
                "metric that frees every move makes the audit measure how often the model errs "
                "rather than whether it treats similar individuals alike; see the metric table "
                "below and the user guide's \"Choosing a fair metric\"."
            )
        return notes

    def key_figures(self):
        """The numbers of the audit for a reader: statistic, bounds, test, sample, metric.

        Returns
        -------
        dict
        """
        level = self.confidence_level
        ci = self.confidence_interval()
        figures = {
            "statistic ψ̂": self.statistic,
            f"{level:.0%} interval": f"[{format_value(ci.low)}, {format_value(ci.high)}]",
            "one-sided lower bound": self.lower_bound,
            "one-sided upper bound": self.upper_bound,
            "ε (budget)": self.epsilon,
            "δ (threshold)": self.delta,
            "p-value (H0: δ-fair)": self.pvalue,
            "rejected δ-fairness": self.rejected,
            "certified δ-fair": self.certified_fair,
            "inference": f"{self.method}, {self.bootstrap_distribution.size} resamples"
            + (f", m = {self.m}" if self.m is not None else ""),
            "near a kink": self.near_kink,
            "audit rows n": self.n,
            "cells K": self.n_cells,
        }
        if self.zero_cost_share is not None:
            figures["reach a worse decision at zero cost"] = (
                f"{self.zero_cost_share:.1%} of audited individuals "
                f"({self.reachable_share:.1%} at any cost)"
            )
            figures["ψ̂ at ε = 0 / with unlimited budget"] = (
                f"{format_value(self.zero_cost_statistic)} / "
                f"{format_value(self.max_statistic)}"
            )
        if self.saturation_budgets is not None:
            half, most = self.saturation_budgets
            figures["ε where ψ̂ reaches ½ / 95% of unlimited"] = (
                f"{format_value(half)} / {format_value(most)}"
                + (" (budget does not bind)" if self.budget_saturated else "")
            )
        diagnostics = self.metric_diagnostics
        if diagnostics is not None:
            figures["fair metric"] = diagnostics.metric
            figures["free metric directions"] = (
                f"{diagnostics.n_free} of {diagnostics.n_non_protected} non-protected"
            )
        if self.zero_cost_share is not None:
            figures["degenerate metric"] = self.degenerate_metric
        return figures

    def _repr_html_(self):
        """A compact summary for notebooks (the report's FaiTH section, shortened)."""
        verdict = self.verdict()
        moves = self.moves()
        tables = []
        if moves:
            tables.append(html_table(
                "Largest moves of the worst-case plan: who would be treated worse in another "
                "cell", ("from cell", "to cell", "individuals moved", "mass"),
                [(m["from_cell"], m["to_cell"], round(m["count"], 1), m["mass"])
                 for m in moves[:CARD_ROWS]], total=len(moves)))
        figures = []
        if self.cell_features is not None:
            figures.append(card_figure(
                "faith-heatmap", "Adversarial change in counts n(Q − f_n) per cell: red cells "
                "gain individuals under the worst case, blue cells lose them.", self.plot))
        return html_card(
            "FaithResult: individual fairness (FaiTH)",
            verdict=html_verdict(verdict.summary, verdict.details,
                                 unfair=verdict.unfair if verdict.gated else None),
            guarantee=html_guarantee(self.guarantee()),
            paragraphs=self.notes(),
            key_figures=self.key_figures(),
            tables=tables,
            figures=figures,
        )

    def plot(self, *, rows=None, columns=None, ax=None, cmap="RdBu_r"):
        """Heat maps of the adversarial count changes ``n(Q − f_n)`` by cell, one per label.

        See :func:`~skfair_audit.faith.plot_count_changes`.

        Parameters
        ----------
        rows, columns : list of str, optional
            Features on the rows and columns of each panel.
        ax : matplotlib Axes or array of Axes, optional
            One axis per label; created if omitted.
        cmap : str
            Matplotlib colour map (diverging: gains red, losses blue by default).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from ._plot import plot_count_changes

        return plot_count_changes(self, rows=rows, columns=columns, ax=ax, cmap=cmap)



def _metric_summary(diagnostics):
    """The metric-diagnostic columns of ``summary`` (None when the metric is unknown)."""
    if diagnostics is None:
        return {"non_protected_directions": None, "free_directions": None, "free_sources": None}
    summary = diagnostics.summary()
    return {key: summary[key]
            for key in ("non_protected_directions", "free_directions", "free_sources")}
