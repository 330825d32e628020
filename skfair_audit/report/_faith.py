"""The report section of a FaiTH audit (individual fairness)."""

from __future__ import annotations

from ._format import can_plot as _can_plot
from ._format import format_value
from ._report import Figure, Section, Table


def faith_section(result, *, title="Individual fairness: FaiTH audit", key="faith",
                  description="", heatmap_rows=None, heatmap_columns=None, max_moves=10,
                  plot=True, conditional_on=None):
    """Section of a :class:`~skfair_audit.faith.FaithResult`: decision, bounds, moves, heat map.

    Parameters
    ----------
    result : FaithResult
    title, key : str
    description : str
        What was audited (model, data, fair metric), in plain words.
    heatmap_rows, heatmap_columns : list of str, optional
        Features on the heat map's rows and columns (see ``FaithResult.plot``).
    max_moves : int
        Largest moves of the adversarial plan to tabulate.
    plot : bool
        Embed the heat map (needs matplotlib).
    conditional_on : str, optional
        What the guarantee is conditional on beyond the fitted model, in a sentence (e.g.
        how the verdict varies over other train/audit splits); appended to the guarantee.

    Returns
    -------
    Section
    """
    level = result.confidence_level
    ci = result.confidence_interval()
    guarantee = (
        f"ψ is the largest increase of the audited model's expected loss when individuals "
        f"may be moved, at total transport cost at most ε = {result.epsilon:g} under the fair "
        f"metric, to where the model does worst. With {level:.0%} confidence ψ lies between "
        f"{format_value(ci.low)} and {format_value(ci.high)}; the one-sided bounds "
        f"[{format_value(result.lower_bound)}, {format_value(result.upper_bound)}] hold at "
        f"{level:.0%} each. "
        + ("These are large-sample guarantees that hold uniformly, also at and near the kinks "
           "of ε ↦ ψ where ψ is not differentiable (uniform bounds)."
           if result.method == "uniform" else
           f"The {result.method} bootstrap gives them as n grows at every fixed population "
           "(pointwise), but may miss its level near a kink of ε ↦ ψ; method='uniform' does "
           "not.")
        + " The guarantee is about this one fitted model, the randomness being that of the "
        "audit sample (held out from its training): a model trained on other data has its "
        "own ψ."
        + (f" {conditional_on}" if conditional_on else "")
    )
    paragraphs = [description] if description else []
    if result.delta is not None:
        alpha = 1 - level
        if result.rejected:
            verdict = (
                f"The model is NOT δ-fair for δ = {result.delta:g}: the lower bound "
                f"{format_value(result.lower_bound)} exceeds δ "
                f"(p = {format_value(result.pvalue)}). "
                f"A δ-fair model would be declared unfair with probability at most {alpha:.0%}."
            )
        elif result.certified_fair:
            verdict = (
                f"The model is certified δ-fair for δ = {result.delta:g}: the upper bound "
                f"{format_value(result.upper_bound)} is below δ (p = "
                f"{format_value(result.fair_pvalue)}); a model that is not δ-fair would be "
                f"certified with probability at most {alpha:.0%}."
            )
        else:
            verdict = (
                f"δ-fairness for δ = {result.delta:g} cannot be rejected (lower bound "
                f"{format_value(result.lower_bound)} ≤ δ, p = {format_value(result.pvalue)}), "
                "but it is not certified either (the upper bound is not below δ): the audit "
                "sample does not settle the question."
            )
        paragraphs.append(verdict)
    if result.near_kink or not result.gaussian_limit:
        paragraphs.append(
            "Note: ε may sit at or near a kink of the audit curve (more than one linear piece "
            "of ψ is plausibly active), where the limit law is not Gaussian; "
            + ("the uniform bounds used here stay valid there."
               if result.method == "uniform" else
               "the pointwise bootstraps may miss their level there; method='uniform' does not.")
        )
    summary = {
        "statistic ψ̂": result.statistic,
        f"{level:.0%} interval": f"[{format_value(ci.low)}, {format_value(ci.high)}]",
        "one-sided lower bound": result.lower_bound,
        "one-sided upper bound": result.upper_bound,
        "ε (budget)": result.epsilon,
        "δ (threshold)": result.delta,
        "p-value (H0: δ-fair)": result.pvalue,
        "rejected δ-fairness": result.rejected,
        "certified δ-fair": result.certified_fair,
        "inference": f"{result.method}, {result.bootstrap_distribution.size} resamples"
        + (f", m = {result.m}" if result.m is not None else ""),
        "near a kink": result.near_kink,
        "audit rows n": result.n,
        "cells K": result.n_cells,
    }
    summary.update(_metric_rows(result))
    reasons = result.degenerate_metric_reasons()
    if reasons:
        paragraphs.append(
            "Warning: the fair metric looks degenerate: " + "; and ".join(reasons) + ". A "
            "metric that frees every move makes the audit measure how often the model errs "
            "rather than whether it treats similar individuals alike; see the metric table "
            "below and the user guide's \"Choosing a fair metric\"."
        )
    moves = result.moves()[:max_moves]
    tables = _metric_tables(result)
    if moves:
        tables.append(Table(
            f"Largest moves of the worst-case plan (of {len(result.moves())}): who would be "
            "treated worse in another cell",
            ("from cell", "to cell", "individuals moved", "mass"),
            tuple((m["from_cell"], m["to_cell"], round(m["count"], 1), m["mass"]) for m in moves),
        ))
    figures = []
    if _can_plot(plot) and result.cell_features is not None:
        fig = result.plot(rows=heatmap_rows, columns=heatmap_columns)
        figures.append(Figure.from_matplotlib(
            f"{key}_heatmap",
            "Adversarial heat map: change in counts n(Q − f_n) per cell, one panel per label. "
            "Red cells gain individuals under the worst case (the model errs there), blue "
            "cells lose them.",
            fig,
        ))
    return Section(key=key, title=title, guarantee=guarantee, paragraphs=tuple(paragraphs),
                   summary=summary, tables=tuple(tables), figures=tuple(figures))


def _metric_rows(result):
    """Summary rows on what the fair metric makes free (FaithResult's metric diagnostics)."""
    rows = {}
    if result.zero_cost_share is not None:
        rows["reach a worse decision at zero cost"] = (
            f"{result.zero_cost_share:.1%} of audited individuals "
            f"({result.reachable_share:.1%} at any cost)"
        )
        rows["ψ̂ at ε = 0 / with unlimited budget"] = (
            f"{format_value(result.zero_cost_statistic)} / {format_value(result.max_statistic)}"
        )
    diagnostics = result.metric_diagnostics
    if diagnostics is not None:
        rows["fair metric"] = diagnostics.metric
        rows["free metric directions"] = (
            f"{diagnostics.n_free} of {diagnostics.n_non_protected} non-protected"
        )
    if result.zero_cost_share is not None:
        rows["degenerate metric"] = result.degenerate_metric
    return rows


def _metric_tables(result):
    """The sources of the metric's free directions, with the AUC of their regressions."""
    diagnostics = result.metric_diagnostics
    if diagnostics is None or not diagnostics.sources:
        return []
    return [Table(
        f"Fair metric ({diagnostics.metric}): {diagnostics.n_free} of the "
        f"{diagnostics.n_non_protected} directions in which the non-protected features vary are "
        "free. Candidate sensitive directions, how well the features predict each protected "
        "level (cross-validated AUC), and the free directions each brought",
        ("source", "members", "CV AUC", "kept", "free directions"),
        tuple((r["source"], r["n_members"], r["auc"], r["kept"], r["free_directions"])
              for r in diagnostics.sources),
    )]
