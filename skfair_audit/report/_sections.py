"""Report sections built from the result objects of the audits.

Each builder states the procedure's guarantee in plain words, tabulates the result and, with
``plot=True``, embeds its figure (without matplotlib, a note where the figure would be:
:meth:`Figure.draw`).
"""

from __future__ import annotations

from ..model_selection import (
    plot_tradeoff,
    selection_columns,
    selection_guarantee,
    selection_key_figures,
    selection_table,
    selection_verdict,
    tradeoff_caption,
)
from ..results import AuditResult
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
    """Section of a group audit result (bounds, certificates, flags, equalized odds, tilts).

    The section is built from the result's protocol
    (:class:`~skfair_audit.results.AuditResult`): its guarantee in words, its key figures,
    its description, its verdict, its table and its figure. Any result of the protocol is
    accepted: those of :mod:`skfair_audit.group` (including
    :class:`~skfair_audit.group.RKHSBoundsResult`, whose table shows a few tilts of the
    ball), and the others.

    Parameters
    ----------
    result : AuditResult
        Any result of :mod:`skfair_audit.group`, or of the shared protocol.
    title, key : str
    description : str
        What was audited, in plain words.
    target_description : str, optional
        What θ is (e.g. "the PPV of Caucasian defendants"), for results whose
        ``describe`` takes it (the group results).
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
    if not isinstance(result, AuditResult):
        raise TypeError(
            "group_section takes an audit result (a skfair_audit.results.AuditResult, e.g. "
            "a GroupAuditResult: bounds, certificates, flags, equalized odds or tilts), got "
            f"{type(result).__name__}."
        )
    table = result.table()
    n_groups = len(table.rows)
    figures_of_audit = result.key_figures()
    metric = figures_of_audit.get("metric", "").replace("_", " ")
    paragraphs = [description] if description else []
    described = (result.describe(target_description) if target_description is not None
                 else result.describe())
    paragraphs.extend(p for p in (described,) if p)
    gate = {"epsilon0": epsilon0} if epsilon0 is not None else {}
    paragraphs.append(result.verdict(**gate).details)
    paragraphs.extend(result.notes())
    figures = ()
    shown = result.figure(max_groups=max_groups, **gate) if plot and n_groups else None
    if shown is not None:
        caption, draw = shown
        figures = (Figure.draw(f"{key}_plot", f"{metric}: {caption}" if metric else caption,
                               draw),)
    caption = (f"{metric} by {result.row_kind}" if metric
               else f"{result.row_kind[:1].upper()}{result.row_kind[1:]}s")
    return Section(key=key, title=title, guarantee=result.guarantee(),
                   paragraphs=tuple(paragraphs), summary=figures_of_audit,
                   tables=(Table(caption, table.labels, table.rows),),
                   figures=figures)


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
    paragraphs = [description] if description else []
    paragraphs.append(selection_verdict(selector)[1])
    table = Table("Candidates along the path", selection_columns(selector),
                  selection_table(selector))
    figures = ()
    if plot:
        figures = (Figure.draw(
            f"{key}_tradeoff",
            "Accuracy–fairness trade-off: " + tradeoff_caption(selector)[0].lower()
            + tradeoff_caption(selector)[1:] + ".",
            lambda: plot_tradeoff(selector),
        ),)
    return Section(key=key, title=title, guarantee=selection_guarantee(selector),
                   paragraphs=tuple(paragraphs), summary=selection_key_figures(selector),
                   tables=(table,), figures=figures)
