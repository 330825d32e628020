"""Self-contained HTML rendering of an :class:`AuditReport` (standard library only)."""

from __future__ import annotations

from html import escape

from ._format import format_value, install_command

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 60em; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
.meta, .caption, figcaption { color: #555; font-size: .9em; }
.guarantee { background: #eef4fb; border-left: 4px solid #3b73b9; padding: .5em .8em; }
.outcome { background: #f6f6f0; border-left: 4px solid #8a8a3b; padding: .5em .8em; }
table { border-collapse: collapse; margin: .5em 0 1.2em; font-size: .88em; }
caption { text-align: left; font-weight: bold; padding-bottom: .3em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; }
dl.summary dt { font-weight: bold; }
dl.summary dd { margin: 0; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
pre { background: #f4f4f4; padding: .6em; overflow-x: auto; }
"""


def _table(table):
    head = "".join(f"<th scope=\"col\">{escape(str(c))}</th>" for c in table.columns)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{escape(format_value(v))}</td>" for v in row) + "</tr>"
        for row in table.rows
    )
    return (
        f"<table>\n<caption>{escape(table.caption)}</caption>\n"
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"
    )


def _figure(figure):
    return (
        f"<figure id=\"figure-{escape(figure.name)}\">\n"
        f"<img src=\"{figure.data_uri()}\" alt=\"{escape(figure.caption)}\">\n"
        f"<figcaption>{escape(figure.caption)}</figcaption>\n</figure>"
    )


def _summary(summary):
    if not summary:
        return ""
    items = "\n".join(
        f"<dt>{escape(str(k))}</dt><dd>{escape(format_value(v))}</dd>" for k, v in summary.items()
    )
    return f"<dl class=\"summary\">\n{items}\n</dl>"


def _section(section):
    parts = [f"<section id=\"{escape(section.key)}\">", f"<h2>{escape(section.title)}</h2>"]
    if section.guarantee:
        parts.append(
            f"<p class=\"guarantee\"><strong>Guarantee.</strong> {escape(section.guarantee)}</p>"
        )
    parts.extend(f"<p>{escape(p)}</p>" for p in section.paragraphs)
    parts.append(_summary(section.summary))
    parts.extend(_table(t) for t in section.tables)
    parts.extend(_figure(f) for f in section.figures)
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
            "<pre><code>" + escape(install_command(report.version))
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
<style>{_CSS}</style>
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
