r"""The between-group summaries fairlearn users know, with simultaneous bounds.

fairlearn reports point values: ``demographic_parity_difference`` (largest minus smallest
group selection rate), ``demographic_parity_ratio`` (smallest over largest),
``MetricFrame.group_min()`` / ``group_max()``, and ``equalized_odds_difference`` /
``equalized_odds_ratio`` (the worse of the true and false positive rate difference / ratio).
:func:`disparity_summaries` gives each of them with a confidence interval, all valid at the
same time.

Method
    Simultaneous two-sided bounds :math:`[L_G, U_G]` on the *rates* :math:`\mu_G` of every
    group (:meth:`AuditSummary.certify_bounds` with the constant target 0, the bootstrap of
    Cherian & Candès) for the selection rate and, when the labels have both classes, the
    true and false positive rates: ``k`` audits at level :math:`\alpha/k` each (a union
    bound; the rate audits run on their own bootstrap streams). Every summary is a monotone
    function of the rates, so on the event that every rate bound holds,

    .. math::

        \min_G \mu_G \in [\min_G L_G, \min_G U_G], \qquad
        \max_G \mu_G - \min_G \mu_G \in [\max(0, \max_G L_G - \min_G U_G),
        \max_G U_G - \min_G L_G],

        \frac{\min_G \mu_G}{\max_G \mu_G} \in \Big[\frac{\min_G L_G}{\max_G U_G},
        \min\Big(1, \frac{\min_G U_G}{\max_G L_G}\Big)\Big],

    and the equalized-odds difference (ratio) is the larger difference (smaller ratio) of
    the two rates, whose bounds are the larger (smaller) of the two rates' bounds. All
    summaries therefore hold together with probability at least :math:`1 - \alpha` (as the
    sample grows), whatever group attains the minimum or the maximum.

Undefined values
    A group with no row in a rate's audit sample (e.g. no positive label, for the true
    positive rate) has no rate: it is left out of that rate's summaries and listed in
    ``caveats`` (fairlearn counts such a group's rate as 0). A ratio whose largest rate is 0 is
    undefined (NaN, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT
from .._utils import (
    PROBABILITY,
    html_card,
    html_guarantee,
    html_table,
    html_verdict,
    import_optional,
    seed_sequence,
    validate_params,
)
from ._protocol import GroupAuditResult, ResultTable, Verdict, plot_axes
from ._summary import BOOTSTRAP_CONSTRAINTS, AuditSummary

__all__ = ["DisparitySummaryResult", "disparity_summaries"]

#: Rates audited for each family of summaries.
_RATES = {"selection_rate": "demographic_parity",
          "true_positive_rate": "true_positive_rate",
          "false_positive_rate": "false_positive_rate"}


def _between(lower, upper, est):
    """Summaries of one rate from its group estimates and simultaneous bounds."""
    lo_min, hi_min = np.min(lower), np.min(upper)
    lo_max, hi_max = np.max(lower), np.max(upper)
    e_min, e_max = np.min(est), np.max(est)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = e_min / e_max if e_max > 0 else np.nan
        ratio_lo = lo_min / hi_max if hi_max > 0 else 0.0
        ratio_hi = min(1.0, hi_min / lo_max) if lo_max > 0 else 1.0
    return {
        "group_min": (e_min, lo_min, hi_min, ""),
        "group_max": (e_max, lo_max, hi_max, ""),
        "difference": (e_max - e_min, max(0.0, lo_max - hi_min), hi_max - lo_min, ""),
        "ratio": (ratio, ratio_lo, ratio_hi,
                  "" if e_max > 0 else "every group's rate is 0: the ratio is 0/0"),
    }


@dataclass(frozen=True, eq=False)
class DisparitySummaryResult(GroupAuditResult):
    """fairlearn's between-group summaries with simultaneous confidence intervals.

    Attributes
    ----------
    names : tuple of str
        fairlearn's names: ``"demographic_parity_difference"``,
        ``"demographic_parity_ratio"``, ``"selection_rate.group_min"``,
        ``"selection_rate.group_max"``, the same for the true and false positive rates, and
        ``"equalized_odds_difference"`` / ``"equalized_odds_ratio"``.
    estimates, lower, upper : ndarray
        Point value (equal to fairlearn's) and simultaneous bounds.
    reasons : tuple of str
        Why a value is undefined (``""`` when defined).
    rate_bounds : dict
        The :class:`GroupBoundsResult` of every rate (disparities from the target 0 are the
        rates themselves).
    caveats : tuple of str
        Groups left out of a rate's summaries (no row in its audit sample).
    alpha : float
    n : int
        Rows of the audit trail.
    """

    names: tuple
    estimates: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    reasons: tuple
    rate_bounds: dict
    caveats: tuple
    alpha: float
    n: int

    procedure = "summaries"
    metric = "between-group summaries"
    interval_description = "simultaneous intervals"

    def notes(self) -> list:
        """What the summaries left out (groups without rows), for a reader.

        Returns
        -------
        list of str
        """
        return list(self.caveats)

    @property
    def sizes(self):
        return np.ones(len(self.names), dtype=np.int64)

    @property
    def target(self) -> float:
        return 0.0

    def _confidence_bounds(self):
        return self.lower, self.upper

    def describe(self, target_description=None) -> str:
        """What was measured on which rows, in one sentence.

        Parameters
        ----------
        target_description : str, optional
            Unused: the summaries compare the groups with each other.

        Returns
        -------
        str
        """
        return (f"fairlearn's between-group summaries ({len(self.names)} of them, from the "
                f"rates of {', '.join(sorted(self.rate_bounds))}) on an audit sample of "
                f"{self.n:,} rows, with intervals valid together at level {1 - self.alpha:.0%}.")

    def value(self, name) -> float:
        """The point value of a summary (equal to fairlearn's).

        Parameters
        ----------
        name : str

        Returns
        -------
        float
        """
        return float(self.estimates[self.names.index(name)])

    def table(self) -> ResultTable:
        """One row per summary.

        Returns
        -------
        ResultTable
        """
        rows = tuple((n, float(e), float(lo), float(hi), r) for n, e, lo, hi, r in zip(
            self.names, self.estimates, self.lower, self.upper, self.reasons, strict=True))
        return ResultTable(("summary", "value", "lower", "upper", "undefined"),
                           ("summary (fairlearn name)", "value", "lower", "upper",
                            "undefined because"), rows)

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per summary.

        Returns
        -------
        pandas.DataFrame
        """
        pd = import_optional("pandas", "build a DataFrame from a result")
        return pd.DataFrame({"summary": list(self.names), "value": self.estimates,
                             "lower": self.lower, "upper": self.upper,
                             "reason": list(self.reasons)}).set_index("summary")

    def verdict(self, epsilon0=None) -> Verdict:
        """Descriptive (these summaries are read, not gated).

        Parameters
        ----------
        epsilon0 : None

        Returns
        -------
        Verdict
        """
        return Verdict(False, False, "summaries only (no gate)",
                       f"{len(self.names)} summaries with {1 - self.alpha:.0%} simultaneous "
                       "intervals." + (" " + " ".join(self.caveats) if self.caveats else ""))

    def guarantee(self) -> str:
        """The guarantee, in plain words.

        Returns
        -------
        str
        """
        return (f"With probability at least {1 - self.alpha:.0%} (as the sample grows) every "
                "interval of this table holds at the same time, whichever groups attain the "
                "smallest and largest rates: they come from simultaneous bounds on every "
                f"group's rate ({len(self.rate_bounds)} rate audit(s) at level "
                f"{self.alpha / len(self.rate_bounds):.3g} each).")

    def key_figures(self) -> dict:
        """Rows, level and rates audited.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "audit rows": self.n,
                "rates": ", ".join(self.rate_bounds), "α (simultaneous)": self.alpha}

    def _repr_html_(self):
        table = self.table()
        verdict = self.verdict()
        return html_card(
            "DisparitySummaryResult", verdict=html_verdict(verdict.summary, verdict.details),
            guarantee=html_guarantee(self.guarantee()), key_figures=self.key_figures(),
            tables=[html_table("Summaries", table.labels, table.rows)])

    def plot(self, ax=None):
        """The summaries with their intervals (matplotlib axes).

        Parameters
        ----------
        ax : matplotlib Axes, optional

        Returns
        -------
        matplotlib Axes
        """
        ax = plot_axes(ax, "summaries", len(self.names))
        pos = np.arange(len(self.names))
        est = np.nan_to_num(self.estimates)
        ax.errorbar(est, pos, xerr=[est - self.lower, self.upper - est], fmt="o", capsize=3)
        ax.set_yticks(pos, list(self.names))
        ax.invert_yaxis()
        return ax


_SUMMARY_PARAMETERS = {"alpha": [PROBABILITY], **BOOTSTRAP_CONSTRAINTS}


@validate_params(_SUMMARY_PARAMETERS)
def disparity_summaries(y, y_pred, groups, *, alpha=0.1, pos_label=None,
                        equalized_odds=None, n_resamples=1000, batch_size=None,
                        memory_limit=DEFAULT_MEMORY_LIMIT,
                        random_state=None, n_jobs=None, verbose=0) -> DisparitySummaryResult:
    """fairlearn's demographic-parity and equalized-odds summaries with simultaneous bounds.

    Parameters
    ----------
    y, y_pred : array-like of shape (n_rows,)
        Binary outcomes and predictions.
    groups : GroupCollection, DataFrame, mapping or 1-D labels
        As in :func:`certify_bounds`. fairlearn's ``sensitive_features`` with several
        columns are the cells of their cross-product: pass one combined label column to
        reproduce its numbers.
    alpha : float
        Simultaneous error level of the whole table.
    pos_label : optional
        Positive label (default 1).
    equalized_odds : bool, optional
        Also the true/false positive rate summaries (default: when ``y`` has both classes).
    n_resamples, batch_size, memory_limit, random_state, n_jobs, verbose
        Bootstrap controls.

    Returns
    -------
    DisparitySummaryResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["a", "b"], 3000)
    >>> y = rng.integers(0, 2, 3000)
    >>> y_pred = (rng.random(3000) < np.where(g == "a", 0.5, 0.3)).astype(int)
    >>> res = disparity_summaries(y, y_pred, g, n_resamples=200, random_state=0)
    >>> ci = res.confidence_interval("demographic_parity_ratio")
    >>> bool(ci.low < res.value("demographic_parity_ratio") < ci.high)
    True
    """
    y_arr = np.asarray(y)
    if equalized_odds is None:
        equalized_odds = np.unique(y_arr).size >= 2
    metrics = ["selection_rate"] + (["true_positive_rate", "false_positive_rate"]
                                    if equalized_odds else [])
    seeds = seed_sequence(random_state).spawn(len(metrics))
    level = alpha / len(metrics)
    bounds, names, rows, notes, n_rows = {}, [], [], [], 0
    per_rate = {}
    for metric, seed in zip(metrics, seeds, strict=True):
        summary = AuditSummary.from_rows(y, y_pred, groups, metric=metric, target=0.0,
                                         pos_label=pos_label)
        n_rows = summary.n_rows
        res = summary.certify_bounds(alternative="two-sided", alpha=level,
                                     n_resamples=n_resamples, batch_size=batch_size,
                                     memory_limit=memory_limit,
                                     random_state=seed, n_jobs=n_jobs, verbose=verbose)
        bounds[metric] = res
        active = res.active
        if (~active).any():
            left = [res.names[j] for j in np.flatnonzero(~active)]
            notes.append(f"{metric}: {len(left)} group(s) without rows left out "
                         f"({'; '.join(left[:5])}{' ...' if len(left) > 5 else ''}).")
        per_rate[metric] = _between(res.lower[active], res.upper[active],
                                    res.group_values[active])
        family = _RATES[metric]
        for key in ("difference", "ratio"):
            names.append(f"{family}_{key}")
            rows.append(per_rate[metric][key])
        for key in ("group_min", "group_max"):
            names.append(f"{metric}.{key}")
            rows.append(per_rate[metric][key])
    if equalized_odds:
        t, f = per_rate["true_positive_rate"], per_rate["false_positive_rate"]
        d = [max(t["difference"][k], f["difference"][k]) for k in range(3)]
        r = [np.fmin(t["ratio"][k], f["ratio"][k]) for k in range(3)]
        undefined = "; ".join(x for x in (t["ratio"][3], f["ratio"][3]) if x)
        names += ["equalized_odds_difference", "equalized_odds_ratio"]
        rows += [(*d, ""), (*r, undefined)]
    est, lo, hi, why = (np.array([row[k] for row in rows], dtype=float if k < 3 else object)
                        for k in range(4))
    return DisparitySummaryResult(tuple(names), est, lo, hi, tuple(why.tolist()), bounds,
                                  tuple(notes), alpha, n_rows)
