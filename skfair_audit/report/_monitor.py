"""The report section of a fairness monitor: confidence sequences over time, flags first."""

from __future__ import annotations

from ..utils import can_plot as _can_plot
from ._report import Figure, Section, Table

#: Columns of the monitoring table.
_LABELS = ("group", "rows", "rate", "disparity", "CS low", "CS high", "flagged",
           "flagged since look", "certified", "anytime p-value")


def monitor_section(result, *, title="Monitoring", key="monitoring", description="",
                    max_groups=12, plot=True):
    """Section of a :class:`~skfair_audit.monitor.MonitorResult`.

    States the guarantee of the confidence sequences (and of the e-BH flags), tabulates every
    group at the current look (flagged groups first, earliest flag first) and, when
    matplotlib is installed, plots the disparity confidence sequences over the rows seen.

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
    paragraphs.append(
        f"Metric: {result.metric.replace('_', ' ')}; target: {result.target}; "
        f"{result.n_looks} looks, {result.n_rows:,} rows; {len(result.names)} groups. "
        + result.verdict_summary() + ".")
    figures = ()
    if _can_plot(plot) and len(result.names) and result.history["rows"].size:
        figures = (Figure.from_matplotlib(
            f"{key}_plot",
            "Confidence sequences of the disparities over the rows seen (flagged groups "
            f"first, at most {max_groups} groups; dashed: the tolerance ε0). Each band only "
            "shrinks: it is the running intersection.",
            result.plot(max_groups=max_groups)),)
    return Section(key=key, title=title, guarantee=result.guarantee(),
                   paragraphs=tuple(paragraphs), summary=result.key_figures(),
                   tables=(Table("Groups at the current look, flagged first", _LABELS,
                                 result.table()),),
                   figures=figures)
