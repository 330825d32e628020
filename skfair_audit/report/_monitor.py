"""The report section of a fairness monitor: confidence sequences over time, flags first."""

from __future__ import annotations

from .._utils import can_plot as _can_plot
from ._report import Figure, Section, Table


def monitor_section(result, *, title="Monitoring", key="monitoring", description="",
                    max_groups=12, plot=True):
    """Section of a :class:`~skfair_audit.monitor.MonitorResult`.

    States the guarantee of the confidence sequences (and of the e-BH flags), tabulates every
    group at the current look (flagged groups first, earliest flag first) and, when
    matplotlib is installed, plots the disparity confidence sequences over the rows seen.
    The section is built from the result's protocol
    (:class:`~skfair_audit.results.AuditResult`).

    Parameters
    ----------
    result : MonitorResult
    title, key, description : str
    max_groups : int
        Groups drawn in the plot (flagged first).
    plot : bool
        Embed the plot (needs matplotlib).

    Returns
    -------
    Section
    """
    paragraphs = [description] if description else []
    paragraphs.append(f"{result.describe()} {result.verdict().summary}.")
    shown = result.figure(max_groups=max_groups)
    figures = ()
    if _can_plot(plot) and shown is not None:
        caption, draw = shown
        figures = (Figure.from_matplotlib(f"{key}_plot", caption, draw()),)
    table = result.table()
    return Section(key=key, title=title, guarantee=result.guarantee(),
                   paragraphs=tuple(paragraphs), summary=result.key_figures(),
                   tables=(Table("Groups at the current look, flagged first", table.labels,
                                 table.rows),),
                   figures=figures)
