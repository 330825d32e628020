"""What every group result tells a reader: its table, its verdict and its guarantee in words.

:class:`GroupAuditResult` is the shared :class:`~skfair_audit.results.AuditResult` protocol
with the parts every group audit has in common (a table of groups, a plot of their
disparities, the reading order of both); the command line and the report only talk to
results through the protocol: they never ask which procedure produced a result.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from .._utils import CARD_ROWS, ConfidenceInterval, import_optional
from ..results import AuditResult, ResultTable, Verdict

#: What the bounds of each ``alternative`` of a bounds procedure are called, in words.
BOUND_SIDES = {"lower": "lower bounds", "upper": "upper bounds", "two-sided": "intervals"}


#: Relative resolution of a disparity ``value - target``: below it, the difference is the
#: rounding of two equal numbers computed in different orders (e.g. the constant tilt).
RESOLUTION = 1e-12


def _resolved(disparity, value, target):
    """``disparity`` rounded to the resolution of ``value - target``: rounding noise
    (``1e-17``) and ``-0.0`` are 0."""
    scale = max(abs(value), abs(target), 1.0) if np.isfinite(target) else 1.0
    return 0.0 if abs(disparity) <= RESOLUTION * scale else disparity


def target_words(target, target_description=None):
    """``"θ = 0.1234"``, with what θ is in parentheses when given."""
    words = f"θ = {target:.4g}"
    return f"{words} ({target_description})" if target_description else words


def _plain(value):
    return value.item() if hasattr(value, "item") else value


class GroupAuditResult(AuditResult):
    """Protocol shared by the results of the group audits.

    Every result of :mod:`skfair_audit.group` (bounds, certificates, flags, equalized odds)
    answers the same four questions, so that a report or a command line can present any of
    them without knowing which procedure ran:

    - :meth:`table` — one row per non-empty group;
    - :meth:`verdict` — the decision, optionally against a threshold ``epsilon0``;
    - :meth:`guarantee` — the statistical guarantee, in plain words;
    - :meth:`key_figures` — the level, the target and the other numbers of the audit;

    plus ``plot()``, :attr:`interval_description` (what the plotted bars mean) and
    :meth:`plot_order` (which groups the plot shows, the ones the verdict names first),
    :meth:`display_order`, :meth:`confidence_interval` (the interval the guarantee gives
    each group) and :meth:`figure`. The notebook display (``_repr_html_``) of every group
    result is the protocol's (:class:`~skfair_audit.results.AuditResult`), shown in the order
    of :meth:`display_order`.
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
        rows = tuple((r[0], int(r[1]), float(r[2]), _resolved(float(r[3]), float(r[2]),
                                                               self.target), *r[4:])
                     for r in rows)
        return ResultTable(tuple(c for c, _, _ in spec), tuple(lb for _, lb, _ in spec), rows)

    @abstractmethod
    def verdict(self, epsilon0=None) -> Verdict:
        """The decision of the audit (see :class:`Verdict`).

        Parameters
        ----------
        epsilon0 : float, optional
            Threshold that turns descriptive bounds into a claim (bounds only).

        Returns
        -------
        Verdict
        """

    @abstractmethod
    def guarantee(self) -> str:
        """The procedure's guarantee, in plain words.

        Returns
        -------
        str
        """

    def key_figures(self) -> dict:
        """The numbers that define the audit: metric, target, rows, groups and level.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "target θ": self.target, "audit rows": self.n,
                "groups": int(self.active.sum())}

    def plot_order(self, max_groups=40, min_size=1, epsilon0=None) -> np.ndarray:
        """The groups ``plot()`` draws, top to bottom (indices into ``names``).

        The groups the text of the audit talks about come first: those the verdict names
        (flagged, not certified, or with a bound on the wrong side of ``epsilon0``; for
        bounds without a threshold, those whose bounds exclude a zero disparity). The other
        non-empty groups with at least ``min_size`` rows follow, the most extreme in the
        direction the audit looks first: decreasing disparity for ``"greater"`` and
        ``"lower"``, increasing for ``"less"`` and ``"upper"``, decreasing absolute disparity
        otherwise. At most ``max_groups`` are returned, so a plot never leaves out
        a named group to show an unremarkable one.

        Parameters
        ----------
        max_groups : int
        min_size : int
        epsilon0 : float, optional
            The threshold of a gated bounds audit (see :meth:`verdict`).

        Returns
        -------
        ndarray of int
        """
        values = np.asarray(self._plot_values(), dtype=float)
        named = self._emphasised(epsilon0)
        shown = np.flatnonzero(self.active & np.isfinite(values)
                               & (np.asarray(self.sizes) >= min_size))
        sign = {"greater": -1.0, "lower": -1.0, "less": 1.0, "upper": 1.0}.get(
            getattr(self, "alternative", None), None)
        # Two-sided claims (|ε(G)| > ε0, |ε(G)| < ε0, intervals) are about the distance from 0.
        key = sign * values[shown] if sign is not None else -np.abs(values[shown])
        order = shown[np.lexsort((key, ~named[shown]))]
        return order[:max_groups]

    def plot_caption(self, max_groups=40, epsilon0=None) -> str:
        """What ``plot()`` draws, in a sentence (the report's caption of the figure).

        Parameters
        ----------
        max_groups : int
        epsilon0 : float, optional
            As in :meth:`plot_order`.

        Returns
        -------
        str
        """
        return (f"disparity per group with its {self.interval_description}; "
                + self.describe_plot(max_groups=max_groups, epsilon0=epsilon0))

    def describe_plot(self, max_groups=40, min_size=1, epsilon0=None) -> str:
        """Which groups ``plot()`` shows and in which order, in one sentence (a caption).

        Parameters
        ----------
        max_groups, min_size : int
        epsilon0 : float, optional
            As in :meth:`plot_order`.

        Returns
        -------
        str
        """
        order = self.plot_order(max_groups, min_size, epsilon0)
        n_total = int(self.active.sum())
        shown = (f"all {n_total} non-empty groups" if order.size == n_total
                 else f"{order.size} of {n_total} non-empty groups (the others are in the "
                      "table)")
        return f"{shown}, top to bottom: {self._order_words(order, epsilon0)}."

    def _order_words(self, order, epsilon0=None):
        """How :meth:`plot_order` sorted the groups ``order``, in words."""
        n_named = int(self._emphasised(epsilon0)[order].sum())
        sign = {"greater": "decreasing disparity", "lower": "decreasing disparity",
                "less": "increasing disparity", "upper": "increasing disparity"}.get(
            getattr(self, "alternative", None), "decreasing absolute disparity")
        if n_named:
            return (f"the {n_named} group(s) {self._emphasis_label(epsilon0)} first (red), "
                    f"then the others by {sign}")
        return f"by {sign} (no group {self._emphasis_label(epsilon0)})"

    #: What the groups the verdict names are (the plot's legend).
    _EMPHASIS = "named by the verdict"

    def _emphasis_label(self, epsilon0=None):
        return self._EMPHASIS

    def _plot_values(self):
        """The disparities ``plot()`` draws (one per group)."""
        return self.estimates

    def _emphasised(self, epsilon0=None):
        """Boolean mask of the groups the verdict names."""
        return np.isin(np.asarray(self.names, dtype=object),
                       np.asarray(self.verdict(epsilon0).groups, dtype=object))

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
        target = target_words(self.target, target_description)
        empty = self.empty_groups
        return (
            f"Metric: {self._metric_words()}; target {target}; audit sample: {self.n:,} rows "
            f"where the metric is defined; {int(self.active.sum())} non-empty groups"
            + (f" ({len(empty)} empty groups left out)." if empty else ".")
        )

    def _metric_words(self):
        return self.metric.replace("_", " ")

    def display_order(self, table=None) -> np.ndarray:
        """Rows of :meth:`table` in reading order: the order of :meth:`plot_order` (the groups
        the verdict names first, then the most extreme in the direction the audit looks),
        followed by the rows the plot leaves out (empty groups).

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
        position = {row[0]: k for k, row in enumerate(table.rows)}
        names = list(self.names)
        order = [position[names[i]] for i in self.plot_order(max_groups=len(names))
                 if names[i] in position]
        seen = set(order)
        order += [k for k in range(len(table.rows)) if k not in seen]
        return np.asarray(order, dtype=np.intp)

    def figure(self, max_groups=40, epsilon0=None, **options):
        """The plot of the disparities, for the report and the notebook display.

        Parameters
        ----------
        max_groups : int
        epsilon0 : float, optional
            As in :meth:`plot_order`.
        **options
            Ignored (options of other results).

        Returns
        -------
        tuple of (str, callable)
            The caption (:meth:`plot_caption`) and a function that draws ``plot()``.
        """
        gate = {} if epsilon0 is None else {"epsilon0": epsilon0}
        return (self.plot_caption(max_groups=max_groups, **gate),
                lambda: self.plot(max_groups=max_groups, **gate))

    def confidence_interval(self, group=None) -> ConfidenceInterval:
        """The interval the guarantee gives each group's disparity :math:`\\epsilon(G)`.

        Bounds (and the rows of tilt results): the simultaneous bounds. Certificates: the
        claim certified, e.g. :math:`(\\epsilon_0, \\infty)` for ``"greater"``, for a certified
        group and the whole line for the others (all hold together with probability at
        least :math:`1 - \\alpha`). Flags: the same for the flagged groups, with a false
        coverage rate at most ``q`` (the share of false flags), and on
        :math:`|\\epsilon(G)|` for ``"two-sided"``. Equalized odds: intervals on the worse
        rate's absolute disparity.

        Parameters
        ----------
        group : str, int or ndarray of bool, optional
            A member of the collection (name, index or row mask); all groups by default.

        Returns
        -------
        ConfidenceInterval
            Floats for one group; arrays (one entry per group of ``names``) for all.
        """
        low, high = self._confidence_bounds()
        if group is None:
            return ConfidenceInterval(low, high)
        j = self._position(group)
        return ConfidenceInterval(float(low[j]), float(high[j]))

    @abstractmethod
    def _confidence_bounds(self):
        """``(low, high)`` arrays of :meth:`confidence_interval`, one entry per group."""

    def _position(self, group):
        return list(self.names).index(group) if isinstance(group, str) else int(group)

    # -- the notebook display (AuditResult._repr_html_) -------------------------------------
    def _card_title(self):
        return f"{type(self).__name__}: {self.key_figures()['metric'].replace('_', ' ')}"

    def _card_caption(self):
        return "Groups, " + self._order_words(self.plot_order(max_groups=len(self.names)))

    def _card_order(self, table):
        return self.display_order(table)

    def _card_figure(self):
        return self.figure(max_groups=2 * CARD_ROWS)

    def _card_figure_name(self):
        return f"{self.procedure}-plot"


def labelled_table(columns, rows) -> ResultTable:
    """A :class:`ResultTable` from ``(column, label)`` pairs and the rows.

    Parameters
    ----------
    columns : sequence of (str, str)
        Machine name and human label of every column.
    rows : iterable of tuple

    Returns
    -------
    ResultTable
    """
    return ResultTable(tuple(c for c, _ in columns), tuple(label for _, label in columns),
                       tuple(rows))


def plot_axes(ax, what, n_rows=None):
    """The axes a result's ``plot()`` draws on: ``ax``, or those of a new figure, one line
    per group when ``n_rows`` (the groups drawn) is given, 7 × 4 inches otherwise (the tilt
    plots). ``what`` names the plot in the error raised without matplotlib."""
    plt = import_optional("matplotlib.pyplot", f"plot {what}")
    if ax is None:
        figsize = (7, 4) if n_rows is None else (6, 0.3 * max(n_rows, 1) + 1.5)
        _, ax = plt.subplots(figsize=figsize)
    return ax
