"""The monitor's answer at one look: confidence sequences, flags, guarantee, plot over time."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._utils import (
    CARD_ROWS,
    ConfidenceInterval,
    card_figure,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
    import_optional,
)
from ..results import AuditResult, ResultTable, Verdict

#: Columns of :meth:`MonitorResult.table` (key, label).
COLUMNS = (("group", "group"), ("size", "rows"), ("value", "rate"),
           ("disparity", "disparity"), ("low", "CS low"), ("high", "CS high"),
           ("flagged", "flagged"), ("since", "flagged since look"),
           ("certified", "certified"), ("pvalue", "anytime p-value"))


@dataclass(frozen=True)
class MonitorResult(AuditResult):
    """Every group's confidence sequence (CS) and flag at the current look.

    It follows the shared protocol of the results
    (:class:`~skfair_audit.results.AuditResult`): :meth:`verdict`, :meth:`table`,
    :meth:`confidence_interval`, :meth:`guarantee`, :meth:`key_figures`, :meth:`describe`,
    :meth:`figure` and :meth:`to_frame`.

    Attributes
    ----------
    names : tuple of str
        Groups (the target's own stream is not listed).
    sizes : ndarray of int
        Rows of each group where the metric is defined, folded into its CS.
    values : ndarray
        Observed rate of each group.
    low, high : ndarray
        The CS of each group's rate (running intersection).
    disparities, disparity_low, disparity_high : ndarray
        Observed disparity and its CS :math:`[\\ell_G - u_\\theta, u_G - \\ell_\\theta]`.
    flagged, certified : ndarray of bool
        Flagged (see ``procedure``) / disparity certified on the safe side of ``epsilon0``.
    flagged_since : ndarray of int
        Look since which a flagged group has been flagged (``-1``: not flagged).
    e_values : ndarray
        Each group's e-value at this look (betting only).
    pvalues : ndarray
        Anytime-valid p-values :math:`\\min(1, 1/\\sup_{s \\le t} e_s)` (per group, not
        adjusted for multiplicity; ``nan`` for asymptotic CSs).
    alphas : ndarray
        The level of each group's CS: its share of ``alpha`` (half of it when the group also
        has a paired test, unless that test is the single comparison).
    registered : ndarray of int
        Look at which each group was registered (it bets from the next look on).
    metric, target, alternative, procedure, method : str
    target_value : float
        Observed target.
    target_alpha : float
        The target's share of ``alpha`` (0 for a constant).
    epsilon0, alpha, q : float
    n_rows, n_looks : int
    history : dict
        ``looks``, ``rows`` and the disparity CS ends ``low``, ``high`` (groups × snapshots)
        at up to 128 looks spread over the stream.
    paired_tests : int
        Groups that are also tested by a paired betting test against the target (their
        share of ``alpha`` is split between their CS and the test).
    comparison_alpha : float
        With a single declared comparison (one group paired with a reference group, no
        new groups allowed), the level of its paired test, which then flags alone and gets
        both groups' shares; ``0`` otherwise.
    """

    names: tuple
    sizes: np.ndarray
    values: np.ndarray
    low: np.ndarray
    high: np.ndarray
    disparities: np.ndarray
    disparity_low: np.ndarray
    disparity_high: np.ndarray
    flagged: np.ndarray
    certified: np.ndarray
    flagged_since: np.ndarray
    e_values: np.ndarray
    pvalues: np.ndarray
    alphas: np.ndarray
    registered: np.ndarray
    metric: str
    target: str
    target_value: float
    target_alpha: float
    alternative: str
    epsilon0: float
    alpha: float
    q: float
    procedure: str
    method: str
    n_rows: int
    n_looks: int
    history: dict = field(repr=False)
    paired_tests: int = 0
    comparison_alpha: float = 0.0

    @property
    def pvalue(self) -> np.ndarray:
        """Alias of :attr:`pvalues` (the name the other results use)."""
        return self.pvalues

    def confidence_interval(self) -> ConfidenceInterval:
        """The disparity CSs at this look, as arrays.

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high`` arrays, one entry per group.
        """
        return ConfidenceInterval(self.disparity_low, self.disparity_high)

    def guarantee(self) -> str:
        """The guarantee, in one sentence.

        Returns
        -------
        str
        """
        if self.comparison_alpha and self.procedure == "fwer":
            level = self.comparison_alpha
            return (f"The flag of {self.names[0]} comes from a paired betting test against "
                    f"{self.target} at level {level:.3g}: the chance of a flag at some look "
                    f"while there is no disparity beyond epsilon0 is at most {level:.3g}; "
                    "separately, the interval holds the true disparity at every look with "
                    f"probability at least {1 - level:.3g}, and the flag and the certificate, "
                    f"read at any look, are both true with probability at least "
                    f"{1 - level:.3g} (a wrong flag needs no disparity, a wrong certificate "
                    "needs one).")
        cs = (f"With probability at least {1 - self.alpha:.0%}, every group's interval "
              "holds its true disparity at every look simultaneously (so every flag and "
              "certificate, read at any look, even one chosen because of earlier looks, is "
              "true)")
        if self.method == "asymptotic":
            cs += ", in the large-sample limit only (asymptotic confidence sequences)"
        if self.comparison_alpha:
            cs += (f"; the e-value of {self.names[0]} is the capital of its paired betting "
                   "test against the target, and its interval keeps its whole share of alpha")
        elif self.paired_tests:
            cs += (f"; the flags of {self.paired_tests} group(s) also come from paired betting "
                   "tests against the target, which share each group's part of alpha with "
                   "its interval")
        if self.procedure == "fdr":
            level = self.q + self.target_alpha
            extra = (f" (q = {self.q:g} plus the target's share {self.target_alpha:.2g} of "
                     "alpha)" if self.target_alpha else "")
            return (cs + f"; flags: at the look you act on (any rule using the data so far "
                    f"may choose it), the expected share of wrongly flagged groups among "
                    f"those flagged is at most {level:.3g}{extra}; groups flagged at earlier "
                    "looks and no longer flagged carry no guarantee.")
        return cs + "."

    def verdict_summary(self) -> str:
        """One line: which groups are flagged.

        Returns
        -------
        str
        """
        n = int(self.flagged.sum())
        if not n:
            return f"no group flagged after {self.n_looks} looks ({self.n_rows:,} rows)"
        shown = ", ".join(self.names[j] for j in self.order()[:n][:5])
        return (f"{n} group(s) flagged after {self.n_looks} looks ({self.n_rows:,} rows): "
                f"{shown}" + (" ..." if n > 5 else ""))

    def order(self) -> np.ndarray:
        """Groups in reading order: flagged first (earliest flag first), then by decreasing
        distance of the disparity CS from the tolerance.

        Returns
        -------
        ndarray of int
        """
        since = np.where(self.flagged, self.flagged_since, np.iinfo(np.int64).max)
        if self.alternative == "less":
            key = self.disparity_high
        elif self.alternative == "greater":
            key = -self.disparity_low
        else:
            key = -np.maximum(self.disparity_low, -self.disparity_high)
        return np.lexsort((np.nan_to_num(key, nan=np.inf), since, ~self.flagged))

    def verdict(self) -> Verdict:
        """Fails when at least one group is flagged at this look.

        Returns
        -------
        Verdict
            ``summary`` is :meth:`verdict_summary`; ``groups`` the flagged groups in the
            order of :meth:`order`.
        """
        flagged = tuple(self.names[j] for j in self.order() if self.flagged[j])
        return Verdict(bool(flagged), True, self.verdict_summary(),
                       f"{len(flagged)} of {len(self.names)} groups flagged"
                       + (": " + "; ".join(flagged) + "." if flagged else "."), flagged)

    def describe(self) -> str:
        """Metric, target, looks, rows and groups, in one sentence.

        Returns
        -------
        str
        """
        return (f"Metric: {self.metric.replace('_', ' ')}; target: {self.target}; "
                f"{self.n_looks} looks, {self.n_rows:,} rows; {len(self.names)} groups.")

    def table(self) -> ResultTable:
        """Rows ``(group, size, rate, disparity, CS low, CS high, flagged, since, certified,
        p-value)`` in reading order (:meth:`order`).

        Returns
        -------
        ResultTable
        """
        rows = []
        for j in self.order():
            rows.append((self.names[j], int(self.sizes[j]), float(self.values[j]),
                         float(self.disparities[j]), float(self.disparity_low[j]),
                         float(self.disparity_high[j]), bool(self.flagged[j]),
                         int(self.flagged_since[j]), bool(self.certified[j]),
                         float(self.pvalues[j])))
        return ResultTable(tuple(k for k, _ in COLUMNS), tuple(lb for _, lb in COLUMNS),
                           tuple(rows))

    def figure(self, max_groups=12, **options):
        """The disparity confidence sequences over time, for the report.

        Parameters
        ----------
        max_groups : int
            Groups drawn (flagged first).
        **options
            Ignored (options of other results).

        Returns
        -------
        tuple of (str, callable) or None
            The caption and a function that draws :meth:`plot`; None before any row or
            without groups.
        """
        if not len(self.names) or not self.history["rows"].size:
            return None
        return ("Confidence sequences of the disparities over the rows seen (flagged groups "
                f"first, at most {max_groups} groups; dashed: the tolerance ε0). Each band "
                "only shrinks: it is the running intersection.",
                lambda: self.plot(max_groups=max_groups))

    def key_figures(self) -> dict:
        """Metric, target, level, looks and rows.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "target θ": self.target,
                "observed θ": self.target_value, "alternative": self.alternative,
                "ε0": self.epsilon0, "alpha": self.alpha,
                **({"q": self.q} if self.procedure == "fdr" else {}),
                "confidence sequences": self.method, "looks": self.n_looks,
                "rows": self.n_rows, "groups": len(self.names)}

    def plot(self, max_groups=12, ax=None):
        """The disparity CSs over time (rows seen), flagged groups first.

        Parameters
        ----------
        max_groups : int
            Groups drawn (in the order of :meth:`order`).
        ax : matplotlib Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        plt = import_optional("matplotlib.pyplot", "plot confidence sequences")
        if ax is None:
            _, ax = plt.subplots(figsize=(7.5, 5.2), layout="constrained")
        rows = np.asarray(self.history["rows"], dtype=float)
        colors = plt.get_cmap("tab10")
        for rank, j in enumerate(self.order()[:max_groups]):
            low, high = self.history["low"][j], self.history["high"][j]
            ok = np.isfinite(low) & np.isfinite(high)
            label = self.names[j] + (" (flagged)" if self.flagged[j] else "")
            color = colors(rank % 10)
            ax.fill_between(rows[ok], low[ok], high[ok], alpha=0.18, color=color, step="post")
            ax.plot(rows[ok], low[ok], color=color, lw=1.4 if self.flagged[j] else 0.8,
                    drawstyle="steps-post", label=label)
            ax.plot(rows[ok], high[ok], color=color, lw=1.4 if self.flagged[j] else 0.8,
                    drawstyle="steps-post")
        for value in {self.epsilon0, -abs(self.epsilon0)} if self.alternative == "two-sided" \
                else {self.epsilon0}:
            ax.axhline(value, color="0.2", ls="--", lw=0.8)
        ax.axhline(0.0, color="0.6", lw=0.6)
        if rows.size and rows.max() > 10 * max(rows.min(), 1):
            ax.set_xscale("log")
        ax.set_ylim(-1.0, 1.0)
        finite = np.concatenate([self.history["low"].ravel(), self.history["high"].ravel()])
        finite = finite[np.isfinite(finite)]
        if finite.size:
            span = np.quantile(finite, [0.02, 0.98])
            pad = 0.05 + 0.1 * (span[1] - span[0])
            ax.set_ylim(max(-1.0, span[0] - pad), min(1.0, span[1] + pad))
        ax.set_xlabel("rows of the audit trail")
        ax.set_ylabel(f"disparity of the {self.metric.replace('_', ' ')}")
        ax.set_title(f"{1 - self.alpha:.0%} confidence sequences (dashed: ε0)")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                  frameon=False)
        return ax

    def _repr_html_(self):
        rows = self.table().rows[:CARD_ROWS]
        figure = card_figure("monitor-plot", "disparity confidence sequences over time",
                             lambda: self.plot())
        return html_card(
            f"MonitorResult: {self.metric.replace('_', ' ')}",
            verdict=html_verdict(self.verdict_summary(), "", unfair=bool(self.flagged.any())),
            guarantee=html_guarantee(self.guarantee()),
            key_figures=self.key_figures(),
            tables=[html_table("Groups, flagged first", [lb for _, lb in COLUMNS], rows,
                               total=len(self.names),
                               highlight={k for k, r in enumerate(rows) if r[6]})],
            figures=[figure],
        )
