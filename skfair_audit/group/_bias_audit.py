r"""Bias-audit tables in the style of New York City's Local Law 144, with guarantees.

A Local Law 144 bias audit of an automated employment decision tool reports, for sex,
race/ethnicity and their intersections, each category's **selection rate** (tools that
select) or **scoring rate** (tools that score: the share of the category scoring above the
sample's median score), and its **impact ratio**: the rate divided by the rate of the most
selected category of the same kind (sex, race/ethnicity, or intersection). Categories with
less than 2% of the data may be left out of the impact ratios; they are still listed.

:func:`bias_audit_table` computes that table and adds, for every impact ratio, a
confidence interval valid **simultaneously over every category of the table** (the three
kinds together), accounting for the most selected category of each kind being chosen from
the data (:mod:`skfair_audit.group._ratios`), and a verdict per category against the
four-fifths threshold: ``"at least 0.8"`` (the lower bound is above it), ``"below 0.8"``
(the upper bound is below it) or ``"inconclusive"``. Because the intervals hold together,
the verdicts of the whole table are wrong with probability at most :math:`\alpha`.

The point values (rates and impact ratios) are the rule's formulas exactly; the median of
``scoring`` mode is the median of the scores of all rows (a score equal to the median is
not above it).

References
----------
New York City Department of Consumer and Worker Protection (2023). Rules on automated
employment decision tools, 6 RCNY §5-300 – §5-304 (Local Law 144 of 2021).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import (
    PROBABILITY,
    Interval,
    Options,
    data_frame,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
    validate_params,
)
from ._collections import intersections
from ._metrics import as_array
from ._protocol import Verdict
from ._ratios import FOUR_FIFTHS, RatioResult, summary_ratio_bounds
from ._summary import BOOTSTRAP_CONSTRAINTS, AuditSummary

__all__ = ["BiasAuditResult", "bias_audit_table"]

#: LL144's size threshold: categories under this share may be excluded from impact ratios.
MIN_SHARE = 0.02


def _kind_of(name):
    """``"race=X & sex=Y" -> "race × sex"``: which attributes a category fixes."""
    return " × ".join(part.split("=", 1)[0] for part in name.split(" & "))


def category_verdict(reason, lower, upper, threshold):
    """The verdict of one category: certified at least / below ``threshold``, or not."""
    if reason:
        return "excluded" if "min_share" in reason else "undefined"
    if lower > threshold:
        return f"at least {threshold:g}"
    if upper < threshold:
        return f"below {threshold:g}"
    return "inconclusive"


@dataclass(frozen=True, eq=False)
class BiasAuditResult(RatioResult):
    """A Local Law 144 bias-audit table with simultaneous intervals on the impact ratios.

    Attributes
    ----------
    mode : {"selection", "scoring"}
    kinds : tuple of str
        Kind of every category (``"sex"``, ``"race"``, ``"race × sex"`` ...).
    names : tuple of str
    sizes : ndarray of int
        Rows of every category.
    selected : ndarray of int
        Rows selected (``selection``) or scoring above the median (``scoring``).
    rates : ndarray
        Selection or scoring rates.
    ratios, lower, upper : ndarray
        Impact ratios and their simultaneous bounds (NaN when excluded or undefined).
    reasons : tuple of str
    verdicts : tuple of str
        ``"at least 0.8"``, ``"below 0.8"``, ``"inconclusive"``, ``"excluded"`` (under
        ``min_share``) or ``"undefined"``.
    most_selected : tuple of str
        The denominator category of every row.
    threshold, alpha, min_share : float
    median : float or None
        The sample median of ``scoring`` mode.
    n : int
    bounds : RatioBoundsResult
        The underlying ratio audit.
    """

    mode: str
    kinds: tuple
    names: tuple
    sizes: np.ndarray
    selected: np.ndarray
    rates: np.ndarray
    ratios: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reasons: tuple
    verdicts: tuple
    most_selected: tuple
    threshold: float
    alpha: float
    min_share: float
    median: float | None
    n: int
    bounds: object

    procedure = "bias_audit"
    interval_description = "simultaneous bounds on the impact ratio"
    _EMPHASIS = "not certified at least the threshold"

    @property
    def metric(self):
        return "selection rate" if self.mode == "selection" else "scoring rate"

    def _confidence_bounds(self):
        return self.lower, self.upper

    def _table_columns(self):
        """One row per category, in the order of the rule's tables (kind by kind)."""
        rate = "selection rate" if self.mode == "selection" else "scoring rate"
        cols = (("kind", "category of"), ("group", "category"), ("size", "rows"),
                ("selected", "selected" if self.mode == "selection" else "above median"),
                ("rate", rate), ("impact_ratio", "impact ratio"), ("lower", "lower"),
                ("upper", "upper"), ("verdict", "verdict"), ("note", "note"))
        rows = tuple(
            (self.kinds[j], self.names[j], int(self.sizes[j]), int(self.selected[j]),
             float(self.rates[j]), float(self.ratios[j]), float(self.lower[j]),
             float(self.upper[j]), self.verdicts[j], self.reasons[j])
            for j in self._order())
        return cols, rows

    def _order(self):
        kinds = list(dict.fromkeys(self.kinds))
        return [j for k in kinds for j in range(len(self.names))
                if self.kinds[j] == k and self.sizes[j] > 0]

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per category.

        Returns
        -------
        pandas.DataFrame
        """
        return data_frame(self.table().records(), index=["kind", "group"])

    def verdict(self, epsilon0=None) -> Verdict:
        """Fails when some category's impact ratio is certified below the threshold.

        Parameters
        ----------
        epsilon0 : None
            The threshold is the audit's own.

        Returns
        -------
        Verdict
        """
        if epsilon0 is not None and epsilon0 != self.threshold:
            raise ValueError(f"this table is for threshold={self.threshold:g}.")
        below = tuple(n for n, v in zip(self.names, self.verdicts, strict=True)
                      if v.startswith("below"))
        counts = {v: sum(1 for x in self.verdicts if x == v) for v in dict.fromkeys(
            self.verdicts)}
        details = "; ".join(f"{c} {v}" for v, c in counts.items()) + "."
        return Verdict(bool(below), True,
                       (f"{len(below)} categories certified below {self.threshold:g}" if below
                        else f"no category certified below {self.threshold:g}"),
                       details, below)

    def guarantee(self) -> str:
        """The guarantee, in plain words.

        Returns
        -------
        str
        """
        return (f"The impact ratio of a category is its {self.metric} divided by the highest "
                f"{self.metric} among the categories of the same kind with at least "
                f"{self.min_share:.0%} of the data. With probability at least "
                f"{1 - self.alpha:.0%} (as the sample grows) the intervals of all "
                f"{int(np.sum([r == '' for r in self.reasons]))} impact ratios hold at the "
                "same time, the choice of the most selected categories included; so the "
                f"verdicts 'at least {self.threshold:g}' and 'below {self.threshold:g}' of "
                f"the whole table are all right with probability at least "
                f"{1 - self.alpha:.0%}. Categories under {self.min_share:.0%} of the data are "
                "listed but excluded from the impact ratios, as the rule allows.")

    def key_figures(self) -> dict:
        """Mode, rows, categories, threshold and level.

        Returns
        -------
        dict
        """
        out = {"metric": self.metric, "mode": self.mode, "audit rows": self.n,
               "categories": len(self._order()), "threshold": self.threshold,
               "α (simultaneous)": self.alpha}
        if self.median is not None:
            out["median score"] = self.median
        return out

    def _described(self, target_description):
        what = ("selection rates" if self.mode == "selection" else
                f"scoring rates (share scoring above the sample median {self.median:.4g})")
        return (f"Local Law 144 bias audit of {self.n:,} rows: {what} and impact ratios of "
                f"{len(self._order())} categories ({', '.join(dict.fromkeys(self.kinds))}).")

    def _repr_html_(self):
        table = self.table()
        verdict = self.verdict()
        return html_card(
            "BiasAuditResult: " + self.metric,
            verdict=html_verdict(verdict.summary, verdict.details, unfair=verdict.unfair),
            guarantee=html_guarantee(self.guarantee()), paragraphs=[self.describe()],
            key_figures=self.key_figures(),
            tables=[html_table("Categories", table.labels, table.rows)])

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Impact ratios with their simultaneous bounds (see :meth:`RatioBoundsResult.plot`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size : int
            At most ``max_groups`` categories, the least certified first, of at least
            ``min_size`` rows.

        Returns
        -------
        matplotlib Axes
        """
        return self.bounds.plot(ax, max_groups=max_groups, min_size=min_size,
                                epsilon0=self.threshold)


_BIAS_AUDIT_PARAMETERS = {
    "mode": [Options(("selection", "scoring"))], "alpha": [PROBABILITY],
    "threshold": [Interval("real", 0, None)], "min_share": [Interval("real", 0, 1, closed="left")],
    **BOOTSTRAP_CONSTRAINTS,
}


@validate_params(_BIAS_AUDIT_PARAMETERS)
def bias_audit_table(outcomes, sensitive, *, mode="selection", pos_label=1,
                     threshold=FOUR_FIFTHS, alpha=0.05, min_share=MIN_SHARE, depth=None,
                     n_resamples=1000, batch_size=None,
                     memory_limit=DEFAULT_MEMORY_LIMIT, random_state=None, n_jobs=None,
                     verbose=0) -> BiasAuditResult:
    """A Local Law 144 bias-audit table with simultaneous intervals and a verdict per category.

    Parameters
    ----------
    outcomes : array-like of shape (n_rows,)
        ``selection``: the tool's decisions (``pos_label`` = selected); ``scoring``: the
        tool's scores (a row is counted when its score is above the sample median).
    sensitive : DataFrame or mapping of columns
        The categories, e.g. ``sex`` and ``race``: every column alone and their
        intersections (up to ``depth`` columns) are the kinds of categories.
    mode : {"selection", "scoring"}
    pos_label : optional
        The selected decision in ``selection`` mode.
    threshold : float
        The impact-ratio threshold of the verdicts (0.8: the four-fifths rule).
    alpha : float
        Simultaneous error level of the whole table.
    min_share : float
        Categories under this share of the rows are listed but excluded from the impact
        ratios (the rule allows 2%).
    depth : int, optional
        Most columns intersected at once (default all).
    n_resamples, batch_size, memory_limit, random_state, n_jobs, verbose
        Bootstrap controls.

    Returns
    -------
    BiasAuditResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> sex = rng.choice(["F", "M"], 5000)
    >>> selected = (rng.random(5000) < np.where(sex == "F", 0.3, 0.5)).astype(int)
    >>> res = bias_audit_table(selected, {"sex": sex}, n_resamples=200, random_state=0)
    >>> res.verdicts
    ('below 0.8', 'at least 0.8')
    """
    values = as_array(outcomes, "outcomes")
    if values.ndim != 1:
        raise ValueError("outcomes must be one decision or score per row.")
    median = None
    if mode == "scoring":
        scores = np.asarray(values, dtype=float)
        if not np.isfinite(scores).all():
            raise ValueError("scoring mode needs finite scores.")
        median = float(np.median(scores))
        chosen = (scores > median).astype(np.int64)
    else:
        labels = set(np.unique(values).tolist())
        if pos_label not in labels and not (pos_label == 1 and labels <= {0, 1}):
            raise ValueError(f"pos_label {pos_label!r} is not among the decisions "
                             f"{sorted(labels, key=str)[:5]}.")
        chosen = (values == pos_label).astype(np.int64)
    collection = intersections(sensitive, depth=depth)
    summary = AuditSummary.from_rows(chosen, chosen, collection, metric="selection_rate",
                                     pos_label=1)
    kinds = tuple(_kind_of(name) for name in collection.names)
    family_of = {k: i for i, k in enumerate(dict.fromkeys(kinds))}
    bounds = summary_ratio_bounds(
        summary, denominator="max", alternative="two-sided", alpha=alpha,
        min_share=min_share, families=np.array([family_of[k] for k in kinds]),
        exclude_small=True, n_resamples=n_resamples, batch_size=batch_size,
        memory_limit=memory_limit,
        random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    selected = np.rint(summary.group_values * summary.sizes)
    verdicts = tuple(category_verdict(r, lo, hi, threshold) for r, lo, hi in zip(
        bounds.reasons, bounds.lower, bounds.upper, strict=True))
    return BiasAuditResult(
        mode=mode, kinds=kinds, names=collection.names, sizes=summary.sizes,
        selected=np.nan_to_num(selected).astype(np.int64), rates=summary.group_values,
        ratios=bounds.ratios, lower=bounds.lower, upper=bounds.upper, reasons=bounds.reasons,
        verdicts=verdicts, most_selected=bounds.denominator_groups, threshold=threshold,
        alpha=alpha, min_share=min_share, median=median, n=summary.n, bounds=bounds)
