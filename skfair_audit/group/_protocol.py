"""What every group result tells a reader: its table, its verdict and its guarantee in words.

The command line and the report only talk to results through this protocol
(:class:`GroupAuditResult`): they never ask which procedure produced a result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..utils import CARD_ROWS, card_figure, html_card, html_guarantee, html_table, html_verdict

#: What the bounds of each ``alternative`` of a bounds procedure are called, in words.
BOUND_SIDES = {"lower": "lower bounds", "upper": "upper bounds", "two-sided": "intervals"}


@dataclass(frozen=True)
class Verdict:
    """The decision a group audit supports, for a gate and for a report.

    Attributes
    ----------
    unfair : bool
        Whether some non-empty group fails the claim the audit checks (flagged, not
        certified, or a bound on the wrong side of the threshold).
    gated : bool
        Whether the result states a claim at all (bounds without a threshold are only
        descriptive: ``gated`` is False and ``unfair`` False).
    summary : str
        One line, e.g. ``"no group flagged"``.
    details : str
        One or two sentences for a report, naming the groups concerned.
    groups : tuple of str
        The groups that make the audit fail (flagged, not certified, ...).
    """

    unfair: bool
    gated: bool
    summary: str
    details: str
    groups: tuple = ()


@dataclass(frozen=True)
class ResultTable:
    """One row per non-empty group, with machine names and human labels for the columns.

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
        """The rows as dictionaries keyed by :attr:`columns`."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def _plain(value):
    return value.item() if hasattr(value, "item") else value


class GroupAuditResult:
    """Protocol shared by the results of the group audits.

    Every result of :mod:`skfair_audit.group` (bounds, certificates, flags, equalized odds)
    answers the same four questions, so that a report or a command line can present any of
    them without knowing which procedure ran:

    - :meth:`table` — one row per non-empty group;
    - :meth:`verdict` — the decision, optionally against a threshold ``epsilon0``;
    - :meth:`guarantee` — the statistical guarantee, in plain words;
    - :meth:`key_figures` — the level, the target and the other numbers of the audit;

    plus ``plot()``, :attr:`interval_description` (what the plotted bars mean) and
    :meth:`display_order`. The notebook display (``_repr_html_``) of every group result is
    built from these answers, with the building blocks of the HTML report.
    """

    #: The procedure that produced the result ("bounds", "threshold", "flag", ...).
    procedure = ""
    #: What the bars of ``plot()`` are.
    interval_description = ""
    _TABLE = ()  # (column, label, attribute) of the procedure-specific columns

    @property
    def active(self) -> np.ndarray:
        """Groups with at least one row in the audit sample."""
        return np.asarray(self.sizes) > 0

    @property
    def confidence_level(self) -> float:
        """``1 - alpha`` (simultaneous) or ``1 - q`` (flags)."""
        return 1.0 - getattr(self, "alpha", getattr(self, "q", 0.0))

    def table(self) -> ResultTable:
        """One row per non-empty group: name, size, metric value, disparity and the
        procedure's own columns (bounds, certificate, p-values ...).

        Returns
        -------
        ResultTable
        """
        base = (("group", "group", "names"), ("size", "rows", "sizes"),
                ("value", "value", "group_values"), ("disparity", "disparity", "estimates"))
        spec = base + tuple(self._TABLE)
        rows = tuple(
            tuple(_plain(getattr(self, attr)[j]) if attr != "names" else self.names[j]
                  for _, _, attr in spec)
            for j in np.flatnonzero(self.active)
        )
        rows = tuple((r[0], int(r[1]), float(r[2]), float(r[3]), *r[4:]) for r in rows)
        return ResultTable(tuple(c for c, _, _ in spec), tuple(lb for _, lb, _ in spec), rows)

    def verdict(self, epsilon0=None) -> Verdict:  # pragma: no cover - per procedure
        """The decision of the audit (see :class:`Verdict`).

        Parameters
        ----------
        epsilon0 : float, optional
            Threshold that turns descriptive bounds into a claim (bounds only).

        Returns
        -------
        Verdict
        """
        raise NotImplementedError

    def guarantee(self) -> str:  # pragma: no cover - per procedure
        """The procedure's guarantee, in plain words.

        Returns
        -------
        str
        """
        raise NotImplementedError

    def key_figures(self) -> dict:
        """The numbers that define the audit: metric, target, rows, groups and level.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "target θ": self.target, "audit rows": self.n,
                "groups": int(self.active.sum())}

    def describe(self, target_description=None) -> str:
        """What was measured on which rows, in one sentence.

        Parameters
        ----------
        target_description : str, optional
            What the target θ is (e.g. "the PPV of Caucasian defendants").

        Returns
        -------
        str
        """
        target = f"θ = {self.target:.4g}"
        if target_description:
            target += f" ({target_description})"
        empty = self.empty_groups
        return (
            f"Metric: {self._metric_words()}; target {target}; audit sample: {self.n:,} rows "
            f"where the metric is defined; {int(self.active.sum())} non-empty groups"
            + (f" ({len(empty)} empty groups left out)." if empty else ".")
        )

    def _metric_words(self):
        return self.metric.replace("_", " ")

    def display_order(self, table=None) -> np.ndarray:
        """Rows of :meth:`table` in reading order: the groups that make the audit fail
        (flagged, not certified) first, then the others by decreasing absolute disparity.

        Parameters
        ----------
        table : ResultTable, optional
            ``self.table()`` when already computed.

        Returns
        -------
        ndarray of int
            Positions in ``table.rows``.
        """
        table = self.table() if table is None else table
        rows = table.rows
        if not rows:
            return np.zeros(0, dtype=np.intp)
        failing = set(self.verdict().groups)
        columns = [k for k, c in enumerate(table.columns) if "disparity" in c]
        magnitude = np.array([max((abs(row[k]) for k in columns), default=0.0) for row in rows],
                             dtype=float)
        magnitude[~np.isfinite(magnitude)] = 0.0
        passing = np.array([row[0] not in failing for row in rows])  # False sorts first
        size = np.array([row[1] for row in rows], dtype=float)
        # the last key is the primary one; ties keep the table's order (stable sort)
        return np.lexsort((-size, -magnitude, passing))

    def _repr_html_(self):
        """A compact summary for notebooks (the report's section, shortened)."""
        table = self.table()
        verdict = self.verdict()
        order = self.display_order(table)[:CARD_ROWS]
        failing = set(verdict.groups)
        rows = [table.rows[k] for k in order]
        title = f"{type(self).__name__}: {self.key_figures()['metric'].replace('_', ' ')}"
        caption = ("Groups, " + ("failing groups first, then " if failing else "")
                   + "by largest |disparity|")
        figure = card_figure(
            f"{self.procedure}-plot",
            f"disparity per group with its {self.interval_description}",
            lambda: self.plot(max_groups=2 * CARD_ROWS))
        return html_card(
            title,
            verdict=html_verdict(verdict.summary, verdict.details,
                                 unfair=verdict.unfair if verdict.gated else None),
            guarantee=html_guarantee(self.guarantee()),
            paragraphs=[self.describe()],
            key_figures=self.key_figures(),
            tables=[html_table(caption, table.labels, rows, total=len(table.rows),
                               highlight={k for k, row in enumerate(rows)
                                          if row[0] in failing})],
            figures=[figure],
        )
