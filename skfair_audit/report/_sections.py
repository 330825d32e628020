"""Report sections built from the result objects of the audits.

Each builder states the procedure's guarantee in plain words, tabulates the result and, when
matplotlib is installed and ``plot=True``, embeds its figure.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ._report import Figure, Section, Table, format_value

__all__ = ["data_section", "faith_section", "group_section", "selection_section"]


def _can_plot(plot):
    return plot and importlib.util.find_spec("matplotlib") is not None


def data_section(summary, *, title="Data", paragraphs=(), tables=(), key="data"):
    """A section describing the audit data (rows, columns, shares of groups ...).

    Parameters
    ----------
    summary : dict
        Key facts, e.g. ``{"rows": 6172, "label": "two_year_recid"}``.
    title : str
    paragraphs : sequence of str
    tables : sequence of Table
    key : str

    Returns
    -------
    Section
    """
    return Section(key=key, title=title, paragraphs=tuple(paragraphs), summary=dict(summary),
                   tables=tuple(tables))


def faith_section(result, *, title="Individual fairness: FaiTH audit", key="faith",
                  description="", heatmap_rows=None, heatmap_columns=None, max_moves=10,
                  plot=True):
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

    Returns
    -------
    Section
    """
    level = result.confidence_level
    ci = result.confidence_interval()
    guarantee = (
        f"ψ is the largest increase of the model's expected loss when the audited individuals "
        f"may be moved, at total transport cost at most ε = {result.epsilon:g} under the fair "
        f"metric, to where the model does worst. With {level:.0%} confidence ψ lies between "
        f"{format_value(ci.low)} and {format_value(ci.high)}; the one-sided bounds "
        f"[{format_value(result.lower_bound)}, {format_value(result.upper_bound)}] hold at "
        f"{level:.0%} each. The {result.method} bootstrap keeps these guarantees (as n grows) "
        "even where ψ is not differentiable."
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
    moves = result.moves()[:max_moves]
    tables = []
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


_ALTERNATIVE_WORDS = {"greater": ">", "less": "<", "within": "within ±", "two-sided": "|·| >"}


def _group_kind(result):
    name = type(result).__name__
    if name not in ("GroupBoundsResult", "GroupCertificationResult", "GroupFlagResult"):
        raise TypeError(
            "group_section takes a GroupBoundsResult, GroupCertificationResult or "
            f"GroupFlagResult, got {name}."
        )
    return name


def _group_guarantee(result, kind, n_groups):
    metric = result.metric.replace("_", " ")
    if kind == "GroupBoundsResult":
        side = {"lower": "lower bounds", "upper": "upper bounds",
                "two-sided": "intervals"}[result.alternative]
        return (
            f"The disparity of a group is ε(G) = {metric}(G) − θ. With probability at least "
            f"{1 - result.alpha:.0%} (as the sample grows), the {side} of all {n_groups} groups "
            "hold at the same time: they can be read together, and a group may be singled out "
            "after looking at them, with no further multiple-testing correction."
        )
    if kind == "GroupCertificationResult":
        claim = {"greater": f"ε(G) > {result.epsilon0:g}", "less": f"ε(G) < {result.epsilon0:g}",
                 "within": f"|ε(G)| < {result.epsilon0:g}"}[result.alternative]
        return (
            f"The disparity of a group is ε(G) = {metric}(G) − θ. Each certified group "
            f"satisfies {claim}; the probability that even one certificate among the "
            f"{n_groups} groups is wrong is at most {result.alpha:.0%} (as the sample grows)."
        )
    claim = {"greater": f"ε(G) > {result.epsilon0:g}", "less": f"ε(G) < {result.epsilon0:g}",
             "two-sided": f"|ε(G)| > {result.epsilon0:g}"}[result.alternative]
    return (
        f"The disparity of a group is ε(G) = {metric}(G) − θ. A group is flagged when the data "
        f"show {claim}. On average at most {result.q:.0%} of the flagged groups are false "
        "flags (Benjamini–Hochberg false discovery rate); unflagged groups are not certified "
        "fair."
    )


def group_section(result, *, title="Group fairness", key="group", description="",
                  target_description=None, max_groups=40, plot=True):
    """Section of a group audit result (bounds, certificates or flags), with its table and plot.

    Parameters
    ----------
    result : GroupBoundsResult, GroupCertificationResult or GroupFlagResult
    title, key : str
    description : str
        What was audited, in plain words.
    target_description : str, optional
        What θ is (e.g. "the PPV of Caucasian defendants").
    max_groups : int
        Groups shown in the plot.
    plot : bool
        Embed the plot (needs matplotlib).

    Returns
    -------
    Section
    """
    kind = _group_kind(result)
    active = np.asarray(result.sizes) > 0
    names = np.asarray(result.names, dtype=object)
    n_groups = int(active.sum())
    paragraphs = [description] if description else []
    target = f"θ = {format_value(result.target)}"
    if target_description:
        target += f" ({target_description})"
    paragraphs.append(
        f"Metric: {result.metric.replace('_', ' ')}; target {target}; audit sample: "
        f"{result.n:,} rows where the metric is defined; {n_groups} non-empty groups"
        + (f" ({len(result.empty_groups)} empty groups left out)." if result.empty_groups
           else ".")
    )
    summary = {"metric": result.metric, "target θ": result.target, "audit rows": result.n,
               "groups": n_groups}
    base = ("group", "rows", "value", "disparity")
    if kind == "GroupBoundsResult":
        summary.update({"α (simultaneous)": result.alpha, "bounds": result.alternative,
                        "critical value": result.critical_value})
        columns = (*base, "lower", "upper")
        data = (result.lower, result.upper)
        excluding = active & ((np.asarray(result.lower) > 0) | (np.asarray(result.upper) < 0))
        paragraphs.append(
            f"{int(excluding.sum())} group(s) have bounds that "
            "exclude a zero disparity."
        )
    elif kind == "GroupCertificationResult":
        summary.update({"α (simultaneous)": result.alpha, "claim": result.alternative,
                        "ε0": result.epsilon0, "certified": int(result.certified.sum())})
        columns = (*base, "lower", "upper", "certified")
        data = (result.lower, result.upper, result.certified)
        paragraphs.append(f"{int(result.certified.sum())} of {n_groups} groups certified.")
    else:
        summary.update({"FDR q": result.q, "alternative": result.alternative,
                        "ε0": result.epsilon0, "flagged": int(result.flagged.sum())})
        columns = (*base, "std. error", "p-value", "adjusted p", "flagged")
        data = (result.standard_errors, result.pvalues, result.adjusted_pvalues, result.flagged)
        flagged = names[np.asarray(result.flagged)].tolist()
        paragraphs.append(
            f"{len(flagged)} of {n_groups} groups flagged"
            + (": " + "; ".join(flagged) + "." if flagged else ".")
        )
    rows = tuple(
        (names[j], int(result.sizes[j]), float(result.group_values[j]),
         float(result.estimates[j]), *(c[j].item() if hasattr(c[j], "item") else c[j]
                                        for c in data))
        for j in np.flatnonzero(active)
    )
    tables = (Table(f"{result.metric.replace('_', ' ')} by group", columns, rows),)
    figures = ()
    if _can_plot(plot):
        ax = result.plot(max_groups=max_groups)
        figures = (Figure.from_matplotlib(
            f"{key}_plot",
            f"{result.metric.replace('_', ' ')}: disparity per group with its "
            + ("simultaneous bounds" if kind != "GroupFlagResult" else "±1.96 s.e. (marginal)")
            + (f" (the {max_groups} lowest shown)" if n_groups > max_groups else ""),
            ax,
        ),)
    return Section(key=key, title=title, guarantee=_group_guarantee(result, kind, n_groups),
                   paragraphs=tuple(paragraphs), summary=summary, tables=tables,
                   figures=figures)


def _params_text(params):
    return ", ".join(f"{k.split('__')[-1]}={format_value(v)}" for k, v in params.items())


def selection_section(selector, *, title="δ-fair model selection", key="selection",
                      description="", plot=True):
    """Section of a fitted :class:`~skfair_audit.model_selection.FairModelSelector`.

    Parameters
    ----------
    selector : FairModelSelector
        Fitted.
    title, key, description : str
    plot : bool
        Embed the accuracy–fairness trade-off plot (needs matplotlib).

    Returns
    -------
    Section
    """
    results = selector.cv_results_
    best = selector.best_index_
    level = selector.fold_confidence_level_
    n_pass = int(np.sum(results["passes"]))
    guarantee = (
        f"Each candidate is audited on validation data; it passes when its one-sided "
        f"{level:.0%} FaiTH lower bound is below δ = {selector.delta:g}. A candidate that is "
        f"in fact δ-fair is wrongly discarded with probability at most "
        f"{(1 - level) * selector.n_splits_:.0%}; the chosen model is the most accurate of "
        "those that pass."
    )
    paragraphs = [description] if description else []
    chosen = _params_text(results["params"][best])
    if results["passes"][best]:
        paragraphs.append(
            f"{n_pass} of {len(results['params'])} candidates pass; chosen: {chosen} "
            f"(validation error {format_value(results['mean_test_error'][best])}, FaiTH "
            f"statistic {format_value(results['mean_test_statistic'][best])})."
        )
    else:
        paragraphs.append(
            f"No candidate passes the δ-test; the fairest one was kept: {chosen}."
        )
    summary = {"δ": selector.delta, "candidates": len(results["params"]),
               "passing": n_pass, "chosen": chosen, "folds": selector.n_splits_}
    rows = tuple(
        (_params_text(p), results["mean_test_error"][k], results["mean_test_statistic"][k],
         results["lower_bound"][k], bool(results["passes"][k]),
         results["n_nonzero_coef"][k], k == best)
        for k, p in enumerate(results["params"])
    )
    table = Table("Candidates along the path",
                  ("candidate", "validation error", "FaiTH ψ̂", "lower bound", "passes",
                   "non-zero coef.", "chosen"), rows)
    figures = ()
    if _can_plot(plot):
        from ..model_selection import plot_tradeoff

        figures = (Figure.from_matplotlib(
            f"{key}_tradeoff",
            "Accuracy–fairness trade-off: validation error, FaiTH statistic and its lower "
            "bound along the path, with δ and the chosen model.",
            plot_tradeoff(selector),
        ),)
    return Section(key=key, title=title, guarantee=guarantee, paragraphs=tuple(paragraphs),
                   summary=summary, tables=(table,), figures=figures)
