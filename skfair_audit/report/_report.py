"""The report's data model: sections of text, key figures, tables and figures."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path

from .._utils import can_plot, figure_to_png, png_data_uri
from .._version import __version__
from ._format import install_command, json_safe
from ._html import render_fragment, render_html
from ._markdown import render_markdown


@dataclass(frozen=True)
class Table:
    """A table of the report: a caption, column names and rows of plain values.

    Attributes
    ----------
    caption : str
    columns : tuple of str
    rows : tuple of tuple
        One tuple of plain values (numbers, strings, booleans, None) per row.
    """

    caption: str
    columns: tuple
    rows: tuple

    def __post_init__(self):
        width = len(self.columns)
        for row in self.rows:
            if len(row) != width:
                raise ValueError(
                    f"table {self.caption!r}: a row has {len(row)} cells, expected {width}."
                )

    def to_dict(self):
        """The table as JSON-ready data (non-finite numbers as ``None``).

        Returns
        -------
        dict
        """
        return {"caption": self.caption, "columns": list(self.columns),
                "rows": json_safe([list(r) for r in self.rows])}


@dataclass(frozen=True)
class Figure:
    """A figure of the report: PNG bytes with a short name and a caption.

    Attributes
    ----------
    name : str
        File stem of the figure (``figures/<name>.png``) and HTML anchor.
    caption : str
    png : bytes or None
        None for a figure that could not be drawn (matplotlib is not installed): the report
        shows a note in its place (see :meth:`draw`).
    """

    name: str
    caption: str
    png: bytes | None = field(repr=False)

    @property
    def drawn(self):
        """Whether the figure has an image (False: matplotlib was not installed)."""
        return self.png is not None

    @classmethod
    def from_matplotlib(cls, name, caption, figure, *, dpi=110):
        """Render a matplotlib Figure (or Axes) and close it."""
        return cls(name=name, caption=caption, png=figure_to_png(figure, dpi=dpi))

    @classmethod
    def draw(cls, name, caption, draw, *, dpi=110):
        """The figure ``draw()`` returns (a matplotlib Figure or Axes), or, without
        matplotlib, a figure that is not drawn: the report shows a note where it would be
        and :meth:`AuditReport.write` leaves its file out.

        Parameters
        ----------
        name, caption : str
        draw : callable
            Called only when matplotlib is installed.
        dpi : int

        Returns
        -------
        Figure
        """
        if not can_plot():
            return cls(name=name, caption=caption, png=None)
        return cls.from_matplotlib(name, caption, draw(), dpi=dpi)

    def data_uri(self):
        """``data:image/png;base64,...``: the figure inline, no file or network needed
        (None when not drawn)."""
        return png_data_uri(self.png) if self.drawn else None


@dataclass(frozen=True)
class Section:
    """One procedure (or the data summary) of the report.

    Attributes
    ----------
    key : str
        Identifier (HTML anchor, JSON key).
    title : str
    guarantee : str
        The procedure's guarantee, in plain words.
    paragraphs : tuple of str
        Explanations and the decision, in plain words.
    summary : dict
        Key numbers (statistic, bounds, level, decision ...).
    tables : tuple of Table
    figures : tuple of Figure
    """

    key: str
    title: str
    guarantee: str = ""
    paragraphs: tuple = ()
    summary: dict = field(default_factory=dict)
    tables: tuple = ()
    figures: tuple = ()

    def to_dict(self):
        """The section as JSON-ready data (figures by name and caption only).

        Returns
        -------
        dict
        """
        return {
            "key": self.key,
            "title": self.title,
            "guarantee": self.guarantee,
            "paragraphs": list(self.paragraphs),
            "summary": json_safe(self.summary),
            "tables": [t.to_dict() for t in self.tables],
            "figures": [{"name": f.name, "caption": f.caption, "drawn": f.drawn}
                        for f in self.figures],
        }


@dataclass(frozen=True)
class AuditReport:
    """A complete audit report.

    Parameters
    ----------
    title : str
    audited : str
        What was audited (model, data, question), in a sentence or two.
    sections : tuple of Section
    command : str, optional
        The exact command that produced the report (how to rerun it).
    version : str
        Library version (default: the installed ``skfair_audit``).
    created : str
        ISO timestamp (default: now, UTC).
    outcome : str, optional
        The overall decision, in a sentence (shown first).
    extras : tuple of str
        The extras of ``skfair_audit`` the run used (e.g. ``("pandas", "plot")``): the
        install line of "Reproduce this report" names them (:attr:`install_command`).

    Examples
    --------
    >>> from skfair_audit.report import AuditReport, Section, Table
    >>> table = Table("Groups", ("group", "rate"), (("a", 0.1), ("b", float("inf"))))
    >>> report = AuditReport("Example", "a toy model", (Section("s", "Step", tables=(table,)),),
    ...                      command="skfair-audit demo", created="2026-01-01T00:00:00Z")
    >>> "<table" in report.to_html()
    True
    >>> report.to_dict()["sections"][0]["tables"][0]["rows"]
    [['a', 0.1], ['b', None]]
    """

    title: str
    audited: str
    sections: tuple = ()
    command: str | None = None
    version: str = __version__
    created: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
    )
    outcome: str | None = None
    extras: tuple = ()

    @property
    def figures(self):
        """Every figure of the report, in order."""
        return tuple(f for s in self.sections for f in s.figures)

    @property
    def missing_figures(self):
        """The figures that could not be drawn (matplotlib is not installed)."""
        return tuple(f for f in self.figures if not f.drawn)

    @property
    def install_command(self):
        """The shell line that installs this version with the extras the run used."""
        return install_command(self.version, self.extras)

    def to_dict(self):
        """The report as plain JSON-ready data (figures by name and caption only)."""
        return {
            "title": self.title,
            "audited": self.audited,
            "outcome": self.outcome,
            "skfair_audit_version": self.version,
            "created": self.created,
            "command": self.command,
            "install": self.install_command,
            "sections": [s.to_dict() for s in self.sections],
        }

    def to_json(self, indent=2):
        """Strict JSON (no NaN / Infinity: non-finite numbers are ``null``).

        Parameters
        ----------
        indent : int

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_html(self):
        """One self-contained HTML document (inline CSS, figures as base64 PNG)."""
        return render_html(self)

    def _repr_html_(self):
        """The report in a notebook: its sections, with the styles of the HTML file."""
        return render_fragment(self)

    def to_markdown(self, figure_dir=None):
        """Markdown; figures link to ``<figure_dir>/<name>.png`` when ``figure_dir`` is given.

        Parameters
        ----------
        figure_dir : str, optional

        Returns
        -------
        str
        """
        return render_markdown(self, figure_dir=figure_dir)

    def write(self, directory, *, stem="report"):
        """Write ``<stem>.html``, ``<stem>.json``, ``<stem>.md`` and ``figures/*.png``.

        Parameters
        ----------
        directory : str or path-like
            Created if needed.
        stem : str

        Returns
        -------
        dict
            Paths written, keyed by ``"html"``, ``"json"``, ``"markdown"``.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        figure_dir = "figures"
        drawn = [f for f in self.figures if f.drawn]
        if drawn:
            (directory / figure_dir).mkdir(exist_ok=True)
            for figure in drawn:
                (directory / figure_dir / f"{figure.name}.png").write_bytes(figure.png)
        paths = {
            "html": directory / f"{stem}.html",
            "json": directory / f"{stem}.json",
            "markdown": directory / f"{stem}.md",
        }
        paths["html"].write_text(self.to_html(), encoding="utf-8")
        paths["json"].write_text(self.to_json() + "\n", encoding="utf-8")
        paths["markdown"].write_text(self.to_markdown(figure_dir=figure_dir), encoding="utf-8")
        return paths
