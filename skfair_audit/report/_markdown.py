"""Markdown rendering of an :class:`AuditReport`."""

from __future__ import annotations

from .._utils import FIGURE_NOT_DRAWN
from ._format import format_value


def _cell(value):
    return format_value(value).replace("|", "\\|").replace("\n", " ")


def _table(table):
    lines = [f"**{table.caption}**", ""]
    lines.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
    lines.append("|" + "---|" * len(table.columns))
    lines.extend("| " + " | ".join(_cell(v) for v in row) + " |" for row in table.rows)
    return "\n".join(lines)


def render_markdown(report, *, figure_dir=None):
    """The report as Markdown; figures are linked from ``figure_dir`` (or only captioned)."""
    lines = [
        f"# {report.title}",
        "",
        f"skfair_audit {report.version} · created {report.created}",
        "",
        f"**What was audited.** {report.audited}",
        "",
    ]
    if report.outcome:
        lines += [f"**Outcome.** {report.outcome}", ""]
    for section in report.sections:
        lines += [f"## {section.title}", ""]
        if section.guarantee:
            lines += [f"> **Guarantee.** {section.guarantee}", ""]
        for paragraph in section.paragraphs:
            lines += [paragraph, ""]
        if section.summary:
            lines += [f"- **{k}**: {_cell(v)}" for k, v in section.summary.items()] + [""]
        for table in section.tables:
            lines += [_table(table), ""]
        for figure in section.figures:
            if not figure.drawn:
                lines += [f"*Figure: {figure.caption}* ({FIGURE_NOT_DRAWN})", ""]
            elif figure_dir is None:
                lines += [f"*Figure: {figure.caption}* (embedded in the HTML report)", ""]
            else:
                lines += [f"![{figure.caption}]({figure_dir}/{figure.name}.png)", ""]
    lines += ["## Reproduce this report", "", f"Library version: skfair_audit {report.version}."]
    if report.command:
        lines += ["", "```bash", report.install_command, report.command, "```"]
    return "\n".join(lines) + "\n"
