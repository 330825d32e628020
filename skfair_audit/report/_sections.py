"""Report sections built from the result objects of the audits.

Each builder states the procedure's guarantee in plain words, tabulates the result and, when
matplotlib is installed and ``plot=True``, embeds its figure.
"""

from __future__ import annotations

import numpy as np

from ..group import GroupAuditResult
from ._format import can_plot as _can_plot
from ._format import format_value
from ._report import Figure, Section, Table


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


def group_section(result, *, title="Group fairness", key="group", description="",
                  target_description=None, max_groups=40, plot=True, epsilon0=None):
    """Section of a group audit result (bounds, certificates, flags, equalized odds).

    The section is built from the result's protocol
    (:class:`~skfair_audit.group.GroupAuditResult`): its guarantee in words, its key
    figures, its verdict and its table of groups.

    Parameters
    ----------
    result : GroupAuditResult
        Any result of :mod:`skfair_audit.group` but the RKHS one.
    title, key : str
    description : str
        What was audited, in plain words.
    target_description : str, optional
        What θ is (e.g. "the PPV of Caucasian defendants").
    max_groups : int
        Groups shown in the plot: the ones the verdict names first (see
        :meth:`~skfair_audit.group.GroupAuditResult.plot_order`).
    plot : bool
        Embed the plot (needs matplotlib).
    epsilon0 : float, optional
        The threshold that gates a bounds audit (its verdict, as on the command line).

    Returns
    -------
    Section
    """
    if not isinstance(result, GroupAuditResult):
        raise TypeError(
            "group_section takes a group audit result (a GroupAuditResult: bounds, "
            f"certificates, flags or equalized odds), got {type(result).__name__}."
        )
    table = result.table()
    n_groups = len(table.rows)
    metric = result.key_figures()["metric"].replace("_", " ")
    paragraphs = [description] if description else []
    paragraphs.append(result.describe(target_description))
    gate = {"epsilon0": epsilon0} if epsilon0 is not None else {}
    paragraphs.append(result.verdict(**gate).details)
    figures = ()
    if _can_plot(plot) and n_groups:
        ax = result.plot(max_groups=max_groups, **gate)
        figures = (Figure.from_matplotlib(
            f"{key}_plot",
            f"{metric}: disparity per group with its {result.interval_description}; "
            + result.describe_plot(max_groups=max_groups, **gate),
            ax,
        ),)
    return Section(key=key, title=title, guarantee=result.guarantee(),
                   paragraphs=tuple(paragraphs), summary=result.key_figures(),
                   tables=(Table(f"{metric} by group", table.labels, table.rows),),
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
