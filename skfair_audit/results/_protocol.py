"""What every result tells a reader: its verdict, its table, its interval and its guarantee.

The report and the command line only talk to results through this protocol
(:class:`AuditResult`): they never ask which procedure produced a result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .._utils import (
    CARD_ROWS,
    card_figure,
    data_frame,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
)


@dataclass(frozen=True)
class Verdict:
    """The decision an audit supports, for a gate and for a report.

    Attributes
    ----------
    unfair : bool
        Whether the audit shows unfairness: some non-empty group fails the claim it checks
        (flagged, not certified, or a bound on the wrong side of the threshold), or the
        model is not δ-fair.
    gated : bool
        Whether the result states a claim at all (bounds without a threshold are only
        descriptive: ``gated`` is False and ``unfair`` False).
    summary : str
        One line, e.g. ``"no group flagged"``.
    details : str
        One or two sentences for a report, naming the groups concerned.
    groups : tuple of str
        The groups (rows of the table) that make the audit fail (flagged, not certified,
        ...).
    """

    unfair: bool
    gated: bool
    summary: str
    details: str
    groups: tuple = ()


@dataclass(frozen=True)
class ResultTable:
    """The rows of a result, with machine names and human labels for the columns.

    Attributes
    ----------
    columns : tuple of str
        Keys (JSON, command line), e.g. ``("group", "size", "value", "disparity", ...)``.
    labels : tuple of str
        Headers for people (the report), in the same order.
    rows : tuple of tuple
        Plain Python values (numpy scalars converted).
    """

    columns: tuple
    labels: tuple
    rows: tuple

    def records(self) -> list:
        """The rows as dictionaries keyed by :attr:`columns`.

        Returns
        -------
        list of dict
        """
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


class AuditResult(ABC):
    """Protocol shared by the results of every audit.

    Each result answers the same questions, so that a report, a command line or a notebook
    can present any of them without knowing which procedure ran:

    - :meth:`verdict` — the decision (:class:`Verdict`); descriptive results say so;
    - :meth:`table` — the rows of the result (groups, tilts, moves of a transport plan)
      as a :class:`ResultTable`;
    - :meth:`confidence_interval` — the interval(s) the guarantee is about, as a
      :class:`~skfair_audit.results.ConfidenceInterval`;
    - :meth:`guarantee` — the statistical guarantee, in plain words;
    - :meth:`key_figures` — the numbers that define the audit (level, sample, statistic);
    - :meth:`describe` and :meth:`notes` — what was measured, and what a reader must know;
    - :meth:`figure` — the result's figure, for the report and the notebook display;
    - :meth:`to_frame` — a :class:`pandas.DataFrame`;
    - ``_repr_html_`` — the notebook display, built from the answers above with the
      building blocks of the HTML report.

    Results keep their own options where the procedure needs them (a threshold
    ``epsilon0`` for the verdict of a group audit, a group or a tilt for an interval); called
    without options, every method answers for the whole result.
    """

    #: What a row of :meth:`table` is (the report's caption: "<metric> by <row_kind>").
    row_kind = "group"

    @abstractmethod
    def verdict(self) -> Verdict:
        """The decision of the audit (see :class:`Verdict`).

        Returns
        -------
        Verdict
        """

    @abstractmethod
    def table(self) -> ResultTable:
        """The rows of the result, for a report, a command line or :meth:`to_frame`.

        Returns
        -------
        ResultTable
        """

    @abstractmethod
    def confidence_interval(self):
        """The confidence interval(s) the guarantee is about.

        Called without arguments, every result answers for all its groups or tilts (arrays,
        one entry per group or tilt; a group result counts its empty groups too) or for its
        one statistic; results take arguments that select a group, a tilt or another level.

        Returns
        -------
        ConfidenceInterval
        """

    @abstractmethod
    def guarantee(self) -> str:
        """The procedure's guarantee, in plain words.

        Returns
        -------
        str
        """

    @abstractmethod
    def key_figures(self) -> dict:
        """The numbers that define the audit, keyed by their names for people.

        Returns
        -------
        dict
        """

    def describe(self) -> str:
        """What was measured on which rows, in one sentence (empty when the key figures
        say it all).

        Returns
        -------
        str
        """
        return ""

    def notes(self) -> list:
        """Warnings a reader needs beside the verdict (none by default).

        Returns
        -------
        list of str
        """
        return []

    def figure(self, **options):
        """The result's figure: its caption and a function that draws it (a matplotlib
        Figure or Axes), or None for a result without one.

        Parameters
        ----------
        **options
            The result's own options (e.g. ``max_groups`` and ``epsilon0`` of a group
            result); a result ignores those it does not take.

        Returns
        -------
        tuple of (str, callable) or None
        """
        return None

    def to_frame(self):
        """The rows of :meth:`table` as a :class:`pandas.DataFrame`.

        Returns
        -------
        pandas.DataFrame
        """
        table = self.table()
        return data_frame(table.records()).reindex(columns=list(table.columns))

    # -- the notebook display, built from the answers above ---------------------------------
    def _card_title(self):
        return type(self).__name__

    def _card_caption(self):
        return f"{self.row_kind[:1].upper()}{self.row_kind[1:]}s"

    def _card_order(self, table):
        """Positions of the rows of ``table`` in reading order."""
        return np.arange(len(table.rows))

    def _card_figure(self):
        return self.figure()

    def _card_figure_name(self):
        return f"{type(self).__name__.lower()}-plot"

    def _repr_html_(self):
        """A compact summary for notebooks (the report's section, shortened)."""
        table = self.table()
        verdict = self.verdict()
        rows = [table.rows[k] for k in self._card_order(table)[:CARD_ROWS]]
        failing = set(verdict.groups)
        shown = self._card_figure()
        figures = [] if shown is None else [card_figure(self._card_figure_name(), *shown)]
        return html_card(
            self._card_title(),
            verdict=html_verdict(verdict.summary, verdict.details,
                                 unfair=verdict.unfair if verdict.gated else None),
            guarantee=html_guarantee(self.guarantee()),
            paragraphs=[p for p in (self.describe(), *self.notes()) if p],
            key_figures=self.key_figures(),
            tables=[html_table(self._card_caption(), table.labels, rows,
                               total=len(table.rows),
                               highlight={k for k, row in enumerate(rows) if row[0] in failing})],
            figures=figures,
        )
