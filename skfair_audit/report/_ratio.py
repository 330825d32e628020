"""Report sections of the ratio audits: ratio bounds, ratio flags and bias-audit tables."""

from __future__ import annotations

from ..group import BiasAuditResult, GroupAuditResult
from ._report import Figure, Section, Table


def ratio_section(result, *, title="Impact ratios", key="ratios", description="",
                  max_groups=40, plot=True):
    """Section of a ratio audit (:class:`~skfair_audit.group.RatioBoundsResult`,
    :class:`~skfair_audit.group.RatioFlagResult`) or of a Local Law 144 bias-audit table
    (:class:`~skfair_audit.group.BiasAuditResult`).

    States the guarantee in words, the verdict, and tabulates every category or group with
    its interval and verdict; undefined ratios are listed with the reason. A bias-audit
    table is split into one table per kind of category (sex, race/ethnicity, their
    intersection), as the rule's tables are.

    Parameters
    ----------
    result : RatioBoundsResult, RatioFlagResult or BiasAuditResult
    title, key, description : str
    max_groups : int
        Groups drawn in the plot (the ones the verdict names first).
    plot : bool
        Embed the plot (needs matplotlib).

    Returns
    -------
    Section
    """
    if not isinstance(result, GroupAuditResult) or not hasattr(result, "ratios"):
        raise TypeError("ratio_section takes a ratio audit result (RatioBoundsResult, "
                        f"RatioFlagResult or BiasAuditResult), got {type(result).__name__}.")
    table = result.table()
    paragraphs = [description] if description else []
    paragraphs.append(result.describe())
    paragraphs.append(result.verdict().details)
    if isinstance(result, BiasAuditResult):
        kinds = list(dict.fromkeys(row[0] for row in table.rows))
        tables = tuple(
            Table(f"Categories of {kind}", table.labels[1:],
                  tuple(row[1:] for row in table.rows if row[0] == kind))
            for kind in kinds)
    else:
        tables = (Table("Ratios by group", table.labels, table.rows),)
    figures = ()
    if plot and table.rows:
        figures = (Figure.draw(f"{key}_plot",
                               "ratio per group with its " + result.interval_description,
                               lambda: result.plot(max_groups=max_groups)),)
    return Section(key=key, title=title, guarantee=result.guarantee(),
                   paragraphs=tuple(paragraphs), summary=result.key_figures(), tables=tables,
                   figures=figures)
