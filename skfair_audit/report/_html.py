"""Self-contained HTML rendering of an :class:`AuditReport` (standard library only).

The tables, key figures, guarantees and figures are drawn by the building blocks that the
results' notebook display uses too (:mod:`skfair_audit._utils._html`).
"""

from __future__ import annotations

from html import escape

from .._utils import (
    REPORT_CSS,
    html_card,
    html_figure,
    html_guarantee,
    html_key_figures,
    html_table,
)


def _section(section):
    parts = [f"<section id=\"{escape(section.key)}\">", f"<h2>{escape(section.title)}</h2>"]
    parts.append(html_guarantee(section.guarantee))
    parts.extend(f"<p>{escape(p)}</p>" for p in section.paragraphs)
    parts.append(html_key_figures(section.summary))
    parts.extend(html_table(t.caption, t.columns, t.rows) for t in section.tables)
    parts.extend(html_figure(f.name, f.caption, f.png) for f in section.figures)
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def render_html(report):
    """The report as one HTML document: inline CSS, figures as ``data:`` URIs, no scripts."""
    toc = "\n".join(
        f"<li><a href=\"#{escape(s.key)}\">{escape(s.title)}</a></li>" for s in report.sections
    )
    outcome = (
        f"<p class=\"outcome\"><strong>Outcome.</strong> {escape(report.outcome)}</p>"
        if report.outcome else ""
    )
    rerun = ""
    if report.command:
        rerun = (
            "<pre><code>" + escape(report.install_command)
            + "\n" + escape(report.command) + "</code></pre>"
        )
    body = "\n".join(_section(s) for s in report.sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="skfair_audit {escape(report.version)}">
<title>{escape(report.title)}</title>
<style>{REPORT_CSS}</style>
</head>
<body>
<header>
<h1>{escape(report.title)}</h1>
<p class="meta">skfair_audit {escape(report.version)} · created {escape(report.created)}</p>
<p><strong>What was audited.</strong> {escape(report.audited)}</p>
{outcome}
</header>
<nav>
<h2>Contents</h2>
<ol>
{toc}
<li><a href="#reproduce">Reproduce this report</a></li>
</ol>
</nav>
<main>
{body}
<section id="reproduce">
<h2>Reproduce this report</h2>
<p>Library version: skfair_audit {escape(report.version)}. Command:</p>
{rerun or "<p>(no command recorded: the report was built from Python)</p>"}
<p>The bootstraps are seeded: the same command, data and version give the same numbers.</p>
</section>
</main>
</body>
</html>
"""


def render_fragment(report):
    """The report's sections for a notebook (:meth:`AuditReport._repr_html_`): one
    ``<div>`` with scoped styles, no document wrapper."""
    paragraphs = [f"What was audited: {report.audited}"]
    if report.outcome:
        paragraphs.append(f"Outcome: {report.outcome}")
    return html_card(report.title, paragraphs=paragraphs,
                     sections=[_section(s) for s in report.sections])
