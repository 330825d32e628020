"""HTML building blocks shared by the report and the notebook display of every result.

The HTML report (:mod:`skfair_audit.report`) and the ``_repr_html_`` of the result objects
render tables, key figures, guarantees, verdicts and figures with the same functions, so that
a result reads the same in a notebook and in a report. Standard library only (matplotlib is
imported when a figure is drawn); every function returns an HTML5 fragment.
"""

from __future__ import annotations

import base64
import importlib.util
import io
from html import escape

from ._text import format_value

#: Styles of the report's document (and, scoped under :data:`CARD_CLASS`, of the notebook
#: cards): one palette for both.
REPORT_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 60em; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2em; }
.meta, .caption, figcaption { color: #555; font-size: .9em; }
.guarantee { background: #eef4fb; border-left: 4px solid #3b73b9; padding: .5em .8em; }
.outcome { background: #f6f6f0; border-left: 4px solid #8a8a3b; padding: .5em .8em; }
.verdict { padding: .4em .8em; border-left: 4px solid #8a8a3b; background: #f6f6f0; }
.verdict.unfair { border-left-color: #b03a2e; background: #fbeeee; }
.verdict.pass { border-left-color: #2e7d32; background: #eef7ee; }
table { border-collapse: collapse; margin: .5em 0 1.2em; font-size: .88em; }
caption { text-align: left; font-weight: bold; padding-bottom: .3em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; }
tr.highlight td { background: #fff4e5; }
dl.summary { display: grid; grid-template-columns: max-content auto; gap: .1em 1em;
             width: auto; }
dl.summary dt { font-weight: bold; }
dl.summary dt, dl.summary dd { float: none; width: auto; margin: 0; padding: 0; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figure.not-drawn .note { border: 1px dashed #b03a2e; color: #b03a2e; padding: 1em; }
pre { background: #f4f4f4; padding: .6em; overflow-x: auto; }
"""

#: Class of the ``<div>`` that holds a result's notebook display.
CARD_CLASS = "skfair-result"

#: Rows of a table shown by a notebook display (the report shows them all).
CARD_ROWS = 10


def _scoped(css, scope):
    """``css`` with every rule but ``body`` limited to ``.scope`` (notebook cards)."""
    rules = []
    for block in css.strip().split("}"):
        if not block.strip():
            continue
        selectors, _, body = block.partition("{")
        selectors = [s.strip() for s in selectors.split(",")]
        if selectors == ["body"]:
            selectors = [f".{scope}"]
            body = " font-family: inherit; line-height: 1.4; max-width: 56em; "
        else:
            selectors = [f".{scope} {s}" for s in selectors]
        rules.append(f"{', '.join(selectors)} {{{body}}}")
    return "\n".join(rules)


CARD_CSS = _scoped(REPORT_CSS, CARD_CLASS) + f"""
.{CARD_CLASS} h3 {{ margin: .2em 0 .4em; font-size: 1.1em; }}
.{CARD_CLASS} p {{ margin: .3em 0; }}
.{CARD_CLASS} table {{ margin: .3em 0 .6em; }}
.{CARD_CLASS} figure img {{ max-width: 36em; }}
"""


def html_key_figures(summary):
    """The key numbers of a result or a report section as a definition list."""
    if not summary:
        return ""
    items = "\n".join(
        f"<dt>{escape(str(k))}</dt><dd>{escape(format_value(v))}</dd>" for k, v in summary.items()
    )
    return f"<dl class=\"summary\">\n{items}\n</dl>"


def html_guarantee(text):
    """The procedure's guarantee in words, as a highlighted paragraph."""
    if not text:
        return ""
    return f"<p class=\"guarantee\"><strong>Guarantee.</strong> {escape(text)}</p>"


def html_verdict(summary, details="", *, unfair=None):
    """The decision: ``unfair`` True (red), False (green) or None (descriptive)."""
    kind = {True: " unfair", False: " pass", None: ""}[None if unfair is None else bool(unfair)]
    details = f" {escape(details)}" if details else ""
    return (f"<p class=\"verdict{kind}\"><strong>Verdict: {escape(summary)}.</strong>"
            f"{details}</p>")


def html_table(caption, columns, rows, *, total=None, highlight=()):
    """A table with a caption; ``total`` rows in all when only the first ones are given.

    Parameters
    ----------
    caption : str
    columns : sequence of str
    rows : sequence of sequence
        Plain values, formatted with :func:`skfair_audit._utils.format_value`.
    total : int, optional
        How many rows the full table has (the caption says which are shown).
    highlight : collection of int
        Positions (in ``rows``) of the rows to highlight (flagged, failing, chosen).

    Returns
    -------
    str
    """
    rows = list(rows)
    if total is not None and total > len(rows):
        caption = f"{caption} (first {len(rows)} of {total} rows)"
    head = "".join(f"<th scope=\"col\">{escape(str(c))}</th>" for c in columns)
    body = "\n".join(
        ("<tr class=\"highlight\">" if k in highlight else "<tr>")
        + "".join(f"<td>{escape(format_value(v))}</td>" for v in row) + "</tr>"
        for k, row in enumerate(rows)
    )
    return (
        f"<table>\n<caption>{escape(caption)}</caption>\n"
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"
    )


def png_data_uri(png):
    """``data:image/png;base64,...``: a figure inline, no file or network needed."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


#: What a report says where a figure would be when matplotlib is not installed.
FIGURE_NOT_DRAWN = ("Figure not drawn: matplotlib is not installed "
                    "(python -m pip install \"skfair_audit[plot]\").")


def html_figure(name, caption, png):
    """A PNG figure embedded as a ``data:`` URI, with its caption; ``id="figure-<name>"``.

    ``png=None`` (a figure that could not be drawn) gives a visible note in its place."""
    if png is None:
        return (
            f"<figure id=\"figure-{escape(name)}\" class=\"not-drawn\">\n"
            f"<p class=\"note\">{escape(FIGURE_NOT_DRAWN)}</p>\n"
            f"<figcaption>{escape(caption)}</figcaption>\n</figure>"
        )
    return (
        f"<figure id=\"figure-{escape(name)}\">\n"
        f"<img src=\"{png_data_uri(png)}\" alt=\"{escape(caption)}\">\n"
        f"<figcaption>{escape(caption)}</figcaption>\n</figure>"
    )


def figure_to_png(figure, *, dpi=110):
    """Render a matplotlib figure (or the figure of an Axes) to PNG bytes, then close it.

    Parameters
    ----------
    figure : matplotlib Figure or Axes
    dpi : int

    Returns
    -------
    bytes
    """
    figure = getattr(figure, "figure", figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    import matplotlib.pyplot as plt  # only reached once a figure exists

    plt.close(figure)
    return buffer.getvalue()


def can_plot(plot=True):
    """Whether to draw a figure: asked for, and matplotlib installed."""
    return bool(plot) and importlib.util.find_spec("matplotlib") is not None


def html_card(title, *, verdict="", guarantee="", paragraphs=(), key_figures=None, tables=(),
              figures=(), sections=()):
    """The notebook display of a result: one ``<div>`` with its own scoped styles.

    Parameters
    ----------
    title : str
    verdict, guarantee : str
        HTML fragments (:func:`html_verdict`, :func:`html_guarantee`).
    paragraphs : sequence of str
        Plain text.
    key_figures : dict, optional
    tables, figures : sequence of str
        HTML fragments (:func:`html_table`, :func:`html_figure`).
    sections : sequence of str
        Further HTML fragments, last (e.g. the sections of a report).

    Returns
    -------
    str
    """
    parts = [f"<div class=\"{CARD_CLASS}\">", f"<style>{CARD_CSS}</style>",
             f"<h3>{escape(title)}</h3>", verdict, guarantee]
    parts.extend(f"<p>{escape(p)}</p>" for p in paragraphs if p)
    parts.append(html_key_figures(key_figures or {}))
    parts.extend(tables)
    parts.extend(figures)
    parts.extend(sections)
    parts.append("</div>")
    return "\n".join(p for p in parts if p)


def card_figure(name, caption, draw, *, dpi=80):
    """:func:`html_figure` of ``draw()`` (a matplotlib Figure or Axes), or ``""`` without
    matplotlib."""
    if not can_plot():
        return ""
    return html_figure(name, caption, figure_to_png(draw(), dpi=dpi))
