"""Result objects of group audits (frozen dataclasses, like ``scipy.stats`` results).

Direction conventions, shared by every procedure of :mod:`skfair_audit.group`:

* ``alternative="lower"`` / ``"upper"`` / ``"two-sided"`` (:func:`certify_bounds`) say which
  *confidence bound* on the disparity :math:`\\epsilon(G)` is reported.
* ``alternative="greater"`` / ``"less"`` (:func:`certify_threshold`, :func:`flag_groups`) name
  the *alternative hypothesis* :math:`\\epsilon(G) > \\epsilon_0` / :math:`\\epsilon(G) <
  \\epsilon_0`, as in :mod:`scipy.stats`. A lower bound above :math:`\\epsilon_0` is evidence
  for ``"greater"``; an upper bound below it for ``"less"``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .._utils import ConfidenceInterval, data_frame
from ..results import ResultTable, Verdict
from ._bootstrap import disparity_range, group_scales, simultaneous_bounds
from ._protocol import BOUND_SIDES, GroupAuditResult, plot_axes

#: Groups with fewer rows of the audit sample than this were measured to break the
#: guarantee of variance-adaptive bounds (``scale="rescaled"`` with a finite ``w0``):
#: ``python benchmarks/bench_group_validity.py --regime small-groups`` (false positive rate,
#: 59 intersections, ``w0 = 0.01``) still measured two-sided coverage below nominal − 2 points
#: with a smallest group of this many rows minus one, the largest size it ran; no size at
#: which they hold was measured. ``tests/test_docs.py`` checks it against the committed
#: results. With ``w0 = inf`` (the default) the coverage held there.
MIN_ROWS_ADAPTIVE_SCALE = 90


@dataclass(frozen=True, slots=True)
class GroupBound:
    """Bound of one queried group.

    Attributes
    ----------
    group : str
        Name (``"<mask>"`` for a mask outside the collection).
    size : int
        Rows of the group in the audit sample.
    estimate : float
        :math:`\\hat\\epsilon(G)`.
    lower, upper : float
        Confidence bounds (``-inf``/``inf`` on the open side).
    guaranteed : bool
        Whether the group is covered by the simultaneous guarantee.
    """

    group: str
    size: int
    estimate: float
    lower: float
    upper: float
    guaranteed: bool


class _GroupLookup(GroupAuditResult):
    """Name / mask lookup shared by the per-group results."""

    def _position(self, group):
        return self.groups.index(group)

    def _own_threshold(self, epsilon0, what):
        """The verdict of flags and certificates is at the audit's own ``epsilon0``."""
        if epsilon0 is not None and epsilon0 != self.epsilon0:
            raise ValueError(f"these {what} are for epsilon0={self.epsilon0:g}.")
        return np.asarray(self.names, dtype=object)

    def _frame(self, **columns):
        """The frame of ``to_frame()``: group, size, value and estimate, then ``columns``."""
        return data_frame({"group": list(self.names), "size": self.sizes,
                                 "value": self.group_values, "estimate": self.estimates,
                                 **columns}, index="group")

    def _claimed_bounds(self, decided, claim):
        """``claim`` (a ``(low, high)`` pair) as the interval of the ``decided`` groups, the
        whole line for the others."""
        return (np.where(decided, claim[0], -np.inf), np.where(decided, claim[1], np.inf))

    def _errorbar_plot(self, ax, estimates, lower, upper, reference, max_groups, title,
                       min_size=1, epsilon0=None):
        # Empty groups have nothing to draw, and tiny groups' wide bars would set the scale;
        # the groups the verdict names come first, at the top (see plot_order).
        order = self.plot_order(max_groups, min_size, epsilon0)
        named = self._emphasised(epsilon0)[order]
        ax = plot_axes(ax, "a group audit", order.size)
        pos = np.arange(order.size)
        est = estimates[order]
        lo = np.where(np.isfinite(lower[order]), lower[order], est)
        hi = np.where(np.isfinite(upper[order]), upper[order], est)
        for mask, style in ((named, dict(color="tab:red",
                                         label=self._emphasis_label(epsilon0))),
                            (~named, dict(color="tab:blue"))):
            if mask.any():
                ax.errorbar(est[mask], pos[mask], xerr=[(est - lo)[mask], (hi - est)[mask]],
                            fmt="o", capsize=3, **style)
        ax.axvline(reference, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(pos, [self.names[j] for j in order])
        ax.invert_yaxis()  # the first group at the top
        if named.any():
            ax.legend(loc="best", fontsize="small")
        ax.set_xlabel("disparity")
        ax.set_title(title)
        return ax


def _sentence_list(names):
    return "; ".join(names)


def bounds_verdict(names, active, lower, upper, alternative, epsilon0, what="groups"):
    """The :class:`Verdict` of simultaneous bounds: descriptive without ``epsilon0``; with it,
    the members whose bound does not certify the requested side of ``epsilon0`` fail."""
    if epsilon0 is None:
        excluding = active & ((lower > 0) | (upper < 0))
        counted = "group(s)" if what == "groups" else what
        return Verdict(False, False, "bounds only (no epsilon0 given: no gate)",
                       f"{int(excluding.sum())} {counted} have bounds that exclude a zero "
                       "disparity.")
    if alternative == "lower":
        ok = lower > epsilon0
    elif alternative == "upper":
        ok = upper < epsilon0
    else:
        ok = (lower > -abs(epsilon0)) & (upper < abs(epsilon0))
    failing = tuple(np.asarray(names, dtype=object)[active & ~ok].tolist())
    summary = ("some bounds do not certify the requested side of epsilon0" if failing
               else "every bound certifies the requested side of epsilon0")
    details = (f"{int(active.sum()) - len(failing)} of {int(active.sum())} {what} have "
               f"bounds on the requested side of {epsilon0:g}"
               + (f"; not: {_sentence_list(failing)}." if failing else "."))
    return Verdict(bool(failing), True, summary, details, failing)


@dataclass(frozen=True, eq=False)
class GroupBoundsResult(_GroupLookup):
    """Simultaneous confidence bounds on the disparities of a group collection.

    Attributes
    ----------
    names : tuple of str
    sizes : ndarray of int
        Rows of each group in the audit sample (the metric's condition rows).
    estimates : ndarray
        :math:`\\hat\\epsilon(G) = \\hat\\mu_G - \\hat\\theta` (NaN for groups with no row).
    group_values : ndarray
        :math:`\\hat\\mu_G`, the metric on the group.
    lower, upper : ndarray
        Simultaneous bounds (``-inf``/``inf`` on the open side and for empty groups), clipped
        to the values the disparity can take given the metric's domain.
    scales : ndarray
        :math:`s_G`.
    target : float
        :math:`\\hat\\theta`.
    critical_value : float
        Bootstrap quantile :math:`c`.
    alpha : float
    alternative : {"lower", "upper", "two-sided"}
    scale : {"rescaled", "unscaled"}
    metric : str
    n : int
        Size of the audit sample.
    bootstrap_distribution : ndarray of shape (n_resamples,)
        Bootstrap suprema whose quantile is ``critical_value``.
    method : str
        How the critical value was computed, in words.
    groups : GroupCollection
    empty_groups : tuple of str
        Members of the collection without any row in the audit sample.
    bootstrap : {"multinomial", "poisson"}
        Which bootstrap ran: multinomial over the atoms (in memory, and partitioned trails
        of a discrete metric) or Poisson row weights summed by the partitions (a continuous
        metric on a partitioned trail).
    """

    names: tuple
    sizes: np.ndarray
    estimates: np.ndarray
    group_values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    scales: np.ndarray
    target: float
    critical_value: float
    alpha: float
    alternative: str
    scale: str
    metric: str
    n: int
    bootstrap_distribution: np.ndarray
    method: str
    groups: object
    empty_groups: tuple = ()
    bootstrap: str = "multinomial"
    _summary: object = field(default=None, repr=False)
    _scaling: tuple = field(default=None, repr=False)

    procedure = "bounds"
    interval_description = "simultaneous bounds"
    _TABLE = (("lower", "lower", "lower"), ("upper", "upper", "upper"))

    def __repr__(self):
        return (
            f"GroupBoundsResult(metric={self.metric!r}, n_groups={len(self.names)}, "
            f"alternative={self.alternative!r}, alpha={self.alpha}, "
            f"critical_value={self.critical_value:.4g}, target={self.target:.4g})"
        )

    def bound(self, group, *, allow_outside=False) -> GroupBound:
        """Bounds of a group given by name, index or boolean row mask.

        Any member of the calibrated collection can be queried (a mask whose rows equal a
        member's is that member). A group outside the collection has **no guarantee**:
        ``ValueError`` unless ``allow_outside=True``, which evaluates the same formula with
        a warning (row masks need an audit summary built in memory).

        Parameters
        ----------
        group : str, int or ndarray of bool
        allow_outside : bool

        Returns
        -------
        GroupBound
        """
        try:
            j = self._position(group)
        except (KeyError, ValueError, IndexError) as exc:
            if not allow_outside:
                raise ValueError(
                    f"{exc.args[0] if exc.args else exc} The simultaneous guarantee only "
                    "covers the groups of the calibrated collection; pass allow_outside=True "
                    "for a bound without guarantee."
                ) from None
            return self._outside_bound(group)
        name = group if isinstance(group, str) else self.names[j]
        return GroupBound(name, int(self.sizes[j]), float(self.estimates[j]),
                          float(self.lower[j]), float(self.upper[j]), True)

    def confidence_interval(self, group=None, *, allow_outside=False) -> ConfidenceInterval:
        """:class:`~skfair_audit.results.ConfidenceInterval` of a group's disparity.

        Parameters
        ----------
        group : str, int or ndarray of bool, optional
            Default: every group (``lower`` and ``upper``, one entry per group of
            ``names``).
        allow_outside : bool
            As in :meth:`bound`.

        Returns
        -------
        ConfidenceInterval
        """
        if group is None:
            return ConfidenceInterval(self.lower, self.upper)
        b = self.bound(group, allow_outside=allow_outside)
        return ConfidenceInterval(b.lower, b.upper)

    def _confidence_bounds(self):
        return self.lower, self.upper

    def _outside_bound(self, group):
        summary = self._summary
        if isinstance(group, str):
            raise ValueError(f"no group named {group!r}; pass a boolean row mask instead.")
        row_atom = None if summary is None else summary.row_atom
        if row_atom is None:
            raise ValueError("a group outside the collection is given by a row mask, which "
                             "needs an audit summary built in memory from the rows.")
        mask = np.asarray(group.to_numpy() if hasattr(group, "to_numpy") else group)
        if mask.dtype != bool or mask.shape != row_atom.shape:
            raise ValueError(f"a group mask must be boolean of length {row_atom.size}.")
        warnings.warn(
            "this group is not in the calibrated collection: its bound carries no "
            "simultaneous (or any) coverage guarantee.",
            UserWarning,
            stacklevel=2,
        )
        atoms = row_atom[mask]
        atoms = atoms[atoms >= 0]
        size = atoms.size
        if size == 0:
            return GroupBound("<mask>", 0, float("nan"), -np.inf, np.inf, False)
        vals = summary.stats.atom_value[atoms]
        est = float(vals.mean() - summary.theta_hat)
        scale, p_star, w0 = self._scaling
        sd = summary.stats.global_sd() or 1.0
        s = group_scales(np.array([size]), np.array([vals.sum()]), np.array([(vals**2).sum()]),
                         self.n, sd, kind=scale, p_star=p_star, w0=w0)
        lower, upper = simultaneous_bounds(
            np.array([est]), s, np.array([size / self.n]), self.critical_value,
            self.alternative,
            disparity_range(summary.metric.bounds, summary.target_kind, summary.theta_hat))
        lower, upper = lower[0], upper[0]
        return GroupBound("<mask>", size, est, float(lower), float(upper), False)

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group.

        Returns
        -------
        pandas.DataFrame
        """
        return self._frame(lower=self.lower, upper=self.upper, scale=self.scales)

    def plot(self, ax=None, *, max_groups=40, min_size=1, epsilon0=None):
        """Estimates and bounds per group (matplotlib axes).

        Groups are drawn in the order of :meth:`plot_order`: those whose bounds exclude 0
        (with ``epsilon0``: those on the wrong side of it) first, in red, then the others
        by estimate; empty groups and groups with fewer than ``min_size`` rows are left out
        (their bounds are valid but too wide to read).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups : int
        min_size : int
        epsilon0 : float, optional
            The threshold of a gated audit (see :meth:`verdict`).

        Returns
        -------
        matplotlib Axes
        """
        return self._errorbar_plot(
            ax, self.estimates, self.lower, self.upper, 0.0, max_groups,
            f"{self.metric}: {100 * (1 - self.alpha):g}% simultaneous bounds", min_size,
            epsilon0,
        )

    def _emphasised(self, epsilon0=None):
        if epsilon0 is None:  # descriptive bounds: the groups whose bounds exclude 0
            return self.active & ((self.lower > 0) | (self.upper < 0))
        return super()._emphasised(epsilon0)

    def _emphasis_label(self, epsilon0=None):
        return ("with bounds excluding 0" if epsilon0 is None
                else f"with a bound on the wrong side of {epsilon0:g}")

    def verdict(self, epsilon0=None) -> Verdict:
        """Without ``epsilon0`` the bounds are descriptive; with it, some non-empty group
        fails when its bound does not certify the requested side of ``epsilon0``
        (``"lower"``: lower bound > ε0; ``"upper"``: upper bound < ε0; ``"two-sided"``:
        :math:`-|\\epsilon_0| <` lower and upper :math:`< |\\epsilon_0|`).

        Parameters
        ----------
        epsilon0 : float, optional

        Returns
        -------
        Verdict
        """
        return bounds_verdict(self.names, self.active, self.lower, self.upper,
                              self.alternative, epsilon0)

    def guarantee(self) -> str:
        """The guarantee of simultaneous bounds, in plain words.

        Returns
        -------
        str
        """
        side = BOUND_SIDES[self.alternative]
        text = (
            f"The disparity of a group is ε(G) = {self._metric_words()}(G) − θ. With "
            f"probability at least {1 - self.alpha:.0%} (as the sample grows), the {side} of "
            f"all {int(self.active.sum())} groups hold at the same time: they can be read "
            "together, and a group may be singled out after looking at them, with no further "
            "multiple-testing correction."
        )
        scale, _, w0 = self._scaling or (self.scale, None, np.inf)
        small = int(np.sum(self.active & (self.sizes < MIN_ROWS_ADAPTIVE_SCALE)))
        if scale == "rescaled" and np.isfinite(w0) and small:
            text += (
                f" Not here in practice: with a finite w0 ({w0:g}) each group's own standard "
                f"deviation sets its bound, and {small} of the groups have fewer than "
                f"{MIN_ROWS_ADAPTIVE_SCALE} rows, where that standard deviation is too "
                "unreliable: with groups that small the simultaneous coverage was measured "
                "far below the nominal level. Use w0=inf (the default)."
            )
        return text

    def key_figures(self) -> dict:
        """Metric, target, rows, groups, level, side and critical value.

        Returns
        -------
        dict
        """
        return {**super().key_figures(), "α (simultaneous)": self.alpha,
                "bounds": self.alternative, "critical value": self.critical_value}


@dataclass(frozen=True, eq=False)
class GroupCertificationResult(_GroupLookup):
    """Boolean certificates :math:`\\epsilon(G) > \\epsilon_0` (or ``<``, or
    :math:`|\\epsilon(G)| < \\epsilon_0`) valid simultaneously over the collection.

    Attributes
    ----------
    names, sizes, estimates, group_values, target, n, metric, alpha, scale, groups
        As in :class:`GroupBoundsResult`.
    epsilon0 : float
    alternative : {"greater", "less", "within"}
    certified : ndarray of bool
    lower, upper : ndarray
        The certification rule compares these with :math:`\\epsilon_0`:
        ``"greater"`` certifies ``lower > epsilon0``, ``"less"`` ``upper < epsilon0`` and
        ``"within"`` ``lower > -epsilon0`` and ``upper < epsilon0`` (they are *not*
        confidence bounds except at :math:`\\epsilon(G) = \\pm\\epsilon_0`).
    scales : ndarray
    critical_value : float
    bootstrap_distribution : ndarray
    method : str
        ``"kadane"`` (maximum-subarray over all grid intervals) or ``"enumeration"``.
    empty_groups : tuple of str
    bootstrap : {"multinomial", "poisson"}
        As in :class:`GroupBoundsResult`.
    """

    names: tuple
    sizes: np.ndarray
    estimates: np.ndarray
    group_values: np.ndarray
    certified: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    scales: np.ndarray
    target: float
    epsilon0: float
    critical_value: float
    alpha: float
    alternative: str
    scale: str
    metric: str
    n: int
    bootstrap_distribution: np.ndarray
    method: str
    groups: object
    empty_groups: tuple = ()
    bootstrap: str = "multinomial"

    procedure = "threshold"
    _EMPHASIS = "not certified"
    interval_description = "simultaneous bounds"
    _TABLE = (("lower", "lower", "lower"), ("upper", "upper", "upper"),
              ("certified", "certified", "certified"))

    def __repr__(self):
        return (
            f"GroupCertificationResult(metric={self.metric!r}, alternative="
            f"{self.alternative!r}, epsilon0={self.epsilon0}, n_certified="
            f"{int(self.certified.sum())}/{len(self.names)}, method={self.method!r})"
        )

    def _confidence_bounds(self):
        """The certificates as intervals: ``(epsilon0, inf)`` (``"greater"``),
        ``(-inf, epsilon0)`` (``"less"``) or ``(-|epsilon0|, |epsilon0|)`` (``"within"``)
        for a certified group, the whole line for the others; all hold at once with
        probability at least ``1 - alpha``."""
        eps = abs(self.epsilon0)
        claim = {"greater": (self.epsilon0, np.inf), "less": (-np.inf, self.epsilon0),
                 "within": (-eps, eps)}[self.alternative]
        return self._claimed_bounds(self.certified, claim)

    def is_certified(self, group) -> bool:
        """Certificate of a member of the collection (name, index or row mask).

        Parameters
        ----------
        group : str, int or ndarray of bool

        Returns
        -------
        bool
        """
        return bool(self.certified[self._position(group)])

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group.

        Returns
        -------
        pandas.DataFrame
        """
        return self._frame(lower=self.lower, upper=self.upper, certified=self.certified)

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Estimates and certification bounds per group (matplotlib axes).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size : int
            As in :meth:`GroupBoundsResult.plot`.

        Returns
        -------
        matplotlib Axes
        """
        return self._errorbar_plot(
            ax, self.estimates, self.lower, self.upper, self.epsilon0, max_groups,
            f"{self.metric}: certificates ({self.alternative} {self.epsilon0:g})", min_size,
        )

    def _claim(self):
        return {"greater": f"ε(G) > {self.epsilon0:g}", "less": f"ε(G) < {self.epsilon0:g}",
                "within": f"|ε(G)| < {self.epsilon0:g}"}[self.alternative]

    def verdict(self, epsilon0=None) -> Verdict:
        """Fails when some non-empty group is not certified.

        Parameters
        ----------
        epsilon0 : None
            The threshold is the audit's own (:attr:`epsilon0`); another one is refused.

        Returns
        -------
        Verdict
        """
        names = self._own_threshold(epsilon0, "certificates")
        active = self.active
        failing = tuple(names[active & ~self.certified].tolist())
        return Verdict(
            bool(failing), True,
            "some groups not certified" if failing else "every group certified",
            f"{int(self.certified.sum())} of {int(active.sum())} groups certified.",
            failing,
        )

    def guarantee(self) -> str:
        """The guarantee of simultaneous certificates, in plain words.

        Returns
        -------
        str
        """
        return (
            f"The disparity of a group is ε(G) = {self._metric_words()}(G) − θ. Each "
            f"certified group satisfies {self._claim()}; the probability that even one "
            f"certificate among the {int(self.active.sum())} groups is wrong is at most "
            f"{self.alpha:.0%} (as the sample grows)."
        )

    def key_figures(self) -> dict:
        """Metric, target, rows, groups, level, claim, threshold and certificates.

        Returns
        -------
        dict
        """
        return {**super().key_figures(), "α (simultaneous)": self.alpha,
                "claim": self.alternative, "ε0": self.epsilon0,
                "certified": int(self.certified.sum())}


@dataclass(frozen=True, eq=False)
class GroupFlagResult(_GroupLookup):
    """Groups flagged by Benjamini–Hochberg at false discovery rate ``q``.

    Attributes
    ----------
    names, sizes, estimates, group_values, target, n, metric, groups
        As in :class:`GroupBoundsResult`.
    epsilon0 : float
    alternative : {"greater", "less", "two-sided"}
        Alternative hypothesis :math:`\\epsilon(G) > \\epsilon_0`, :math:`< \\epsilon_0` or
        :math:`|\\epsilon(G)| > \\epsilon_0`.
    standard_errors, statistics : ndarray
        Standard error of :math:`\\hat\\epsilon(G)` and
        :math:`z = (\\hat\\epsilon(G) - \\epsilon_0)/\\mathrm{se}`.
    pvalues, adjusted_pvalues : ndarray
        In [0, 1]; empty groups get p-value 1. The adjusted p-values are
        :func:`scipy.stats.false_discovery_control` (``method="bh"``).
    flagged : ndarray of bool
        ``adjusted_pvalues <= q`` (the Benjamini–Hochberg step-up rejections).
    q : float
    se_method : {"delta", "bootstrap"}
    empty_groups : tuple of str
    bootstrap : {"multinomial", "poisson"} or None
        The bootstrap of ``se_method="bootstrap"`` (None for the delta method).
    """

    names: tuple
    sizes: np.ndarray
    estimates: np.ndarray
    group_values: np.ndarray
    standard_errors: np.ndarray
    statistics: np.ndarray
    pvalues: np.ndarray
    adjusted_pvalues: np.ndarray
    flagged: np.ndarray
    target: float
    epsilon0: float
    alternative: str
    q: float
    se_method: str
    metric: str
    n: int
    groups: object
    empty_groups: tuple = ()
    bootstrap: str | None = None

    procedure = "flag"
    _EMPHASIS = "flagged"
    interval_description = "±1.96 s.e. (marginal)"
    _TABLE = (("se", "std. error", "standard_errors"), ("pvalue", "p-value", "pvalues"),
              ("adjusted_pvalue", "adjusted p", "adjusted_pvalues"),
              ("flagged", "flagged", "flagged"))

    def __repr__(self):
        return (
            f"GroupFlagResult(metric={self.metric!r}, alternative={self.alternative!r}, "
            f"epsilon0={self.epsilon0}, q={self.q}, n_flagged={int(self.flagged.sum())}"
            f"/{len(self.names)})"
        )

    def _confidence_bounds(self):
        """The flags as intervals: ``(epsilon0, inf)`` (``"greater"``) or
        ``(-inf, epsilon0)`` (``"less"``) for a flagged group, the whole line for the others;
        for ``"two-sided"`` the intervals are on :math:`|\\epsilon(G)|`: ``(epsilon0, inf)``
        flagged, ``[0, inf)`` not. The share of flagged groups whose interval misses is the
        share of false flags: at most ``q`` on average (a false coverage rate)."""
        if self.alternative == "two-sided":
            return np.where(self.flagged, abs(self.epsilon0), 0.0), np.full(self.flagged.shape,
                                                                              np.inf)
        claim = {"greater": (self.epsilon0, np.inf),
                 "less": (-np.inf, self.epsilon0)}[self.alternative]
        return self._claimed_bounds(self.flagged, claim)

    def is_flagged(self, group) -> bool:
        """Flag of a member of the collection (name, index or row mask).

        Parameters
        ----------
        group : str, int or ndarray of bool

        Returns
        -------
        bool
        """
        return bool(self.flagged[self._position(group)])

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group.

        Returns
        -------
        pandas.DataFrame
        """
        return self._frame(se=self.standard_errors, statistic=self.statistics,
                           pvalue=self.pvalues, adjusted_pvalue=self.adjusted_pvalues,
                           flagged=self.flagged)

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Estimates with ±1.96 se bars (marginal, not simultaneous).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size : int
            As in :meth:`GroupBoundsResult.plot`.

        Returns
        -------
        matplotlib Axes
        """
        half = 1.959963984540054 * np.nan_to_num(self.standard_errors)
        return self._errorbar_plot(
            ax, self.estimates, self.estimates - half, self.estimates + half, self.epsilon0,
            max_groups, f"{self.metric}: flags at FDR {self.q:g}", min_size,
        )

    def verdict(self, epsilon0=None) -> Verdict:
        """Fails when at least one group is flagged.

        Parameters
        ----------
        epsilon0 : None
            The threshold is the audit's own (:attr:`epsilon0`); another one is refused.

        Returns
        -------
        Verdict
        """
        flagged = tuple(self._own_threshold(epsilon0, "flags")[self.flagged].tolist())
        return Verdict(
            bool(flagged), True,
            "at least one group flagged" if flagged else "no group flagged",
            f"{len(flagged)} of {int(self.active.sum())} groups flagged"
            + (": " + _sentence_list(flagged) + "." if flagged else "."),
            flagged,
        )

    def guarantee(self) -> str:
        """The false-discovery-rate guarantee, in plain words.

        Returns
        -------
        str
        """
        claim = {"greater": f"ε(G) > {self.epsilon0:g}", "less": f"ε(G) < {self.epsilon0:g}",
                 "two-sided": f"|ε(G)| > {self.epsilon0:g}"}[self.alternative]
        return (
            f"The disparity of a group is ε(G) = {self._metric_words()}(G) − θ. A group is "
            f"flagged when the data show {claim}. On average at most {self.q:.0%} of the "
            "flagged groups are false flags (Benjamini–Hochberg false discovery rate); "
            "unflagged groups are not certified fair."
        )

    def key_figures(self) -> dict:
        """Metric, target, rows, groups, FDR, direction, threshold and flags.

        Returns
        -------
        dict
        """
        return {**super().key_figures(), "FDR q": self.q, "alternative": self.alternative,
                "ε0": self.epsilon0, "flagged": int(self.flagged.sum())}


@dataclass(frozen=True, eq=False)
class EqualizedOddsResult(GroupAuditResult):
    """False positive and true positive rate audits at level ``alpha / 2`` each.

    Attributes
    ----------
    false_positive_rate, true_positive_rate : GroupBoundsResult or GroupCertificationResult
    names : tuple of str
    worst_disparity : ndarray
        Bounds mode: upper bound on :math:`\\max(|\\epsilon_{FPR}(G)|, |\\epsilon_{TPR}(G)|)`
        (valid simultaneously at level ``1 - alpha``); threshold mode: NaN.
    certified : ndarray of bool or None
        Threshold mode: both rates certified within :math:`\\pm\\epsilon_0`.
    alpha : float
    """

    false_positive_rate: object
    true_positive_rate: object
    names: tuple
    worst_disparity: np.ndarray
    certified: np.ndarray | None
    alpha: float

    procedure = "equalized_odds"

    def _plot_values(self):
        return np.fmax(np.abs(self.false_positive_rate.estimates),
                       np.abs(self.true_positive_rate.estimates))

    def _emphasis_label(self, epsilon0=None):
        if self.certified is not None:
            return "not certified"
        # Without a gate the verdict names no group (bounds only).
        return ("named by the verdict: bounds only, no epsilon0 gate" if epsilon0 is None
                else f"reaching {epsilon0:g}")

    def _confidence_bounds(self):
        """Intervals on the worse rate's :math:`\\max(|\\epsilon_{FPR}(G)|,
        |\\epsilon_{TPR}(G)|)`: ``[0, worst_disparity]`` (bounds) or ``[0, |epsilon0|)`` for
        a certified group and ``[0, inf)`` for the others (certificates)."""
        if self.certified is None:
            high = np.where(self.active, self.worst_disparity, np.inf)
        else:
            high = np.where(self.certified, abs(self.false_positive_rate.epsilon0), np.inf)
        return np.zeros(len(self.names)), high

    @property
    def sizes(self) -> np.ndarray:
        """Rows of each group in the two audit samples (negatives plus positives)."""
        return self.false_positive_rate.sizes + self.true_positive_rate.sizes

    @property
    def active(self) -> np.ndarray:
        """Groups with rows among both the negatives and the positives."""
        return (self.false_positive_rate.sizes > 0) & (self.true_positive_rate.sizes > 0)

    @property
    def interval_description(self):
        return ("certificates of both rates" if self.certified is not None
                else "simultaneous bound on the worse rate")

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group.

        Returns
        -------
        pandas.DataFrame
        """
        data = {"group": list(self.names), "worst_disparity": self.worst_disparity}
        if self.certified is not None:
            data["certified"] = self.certified
        return data_frame(data, index="group")

    def table(self) -> ResultTable:
        """One row per group with rows among both negatives and positives.

        Returns
        -------
        ResultTable
        """
        fpr, tpr = self.false_positive_rate, self.true_positive_rate
        last = (("certified", "certified") if self.certified is not None
                else ("worst_disparity", "worst |disparity| bound"))
        rows = tuple(
            (self.names[j], int(self.sizes[j]), float(fpr.estimates[j]),
             float(tpr.estimates[j]),
             bool(self.certified[j]) if self.certified is not None
             else float(self.worst_disparity[j]))
            for j in np.flatnonzero(self.active)
        )
        return ResultTable(("group", "size", "fpr_disparity", "tpr_disparity", last[0]),
                           ("group", "rows", "FPR disparity", "TPR disparity", last[1]), rows)

    def verdict(self, epsilon0=None) -> Verdict:
        """Threshold mode: fails when a group is not certified; bounds mode: descriptive,
        or fails when a group's worst-rate bound reaches ``epsilon0``.

        Parameters
        ----------
        epsilon0 : float, optional

        Returns
        -------
        Verdict
        """
        active = self.active
        names = np.asarray(self.names, dtype=object)
        if self.certified is not None:
            failing = tuple(names[active & ~self.certified].tolist())
            return Verdict(bool(failing), True,
                           "some groups not certified" if failing else "every group certified",
                           f"{int((active & self.certified).sum())} of {int(active.sum())} "
                           "groups certified for both rates.", failing)
        if epsilon0 is None:
            return Verdict(False, False, "bounds only (no epsilon0 given: no gate)",
                           f"largest bound on the worse rate's |disparity|: "
                           f"{np.max(self.worst_disparity[active], initial=0.0):.4g}.")
        failing = tuple(names[active & (self.worst_disparity >= abs(epsilon0))].tolist())
        return Verdict(bool(failing), True,
                       "some groups reach epsilon0" if failing else "every group below epsilon0",
                       f"{int(active.sum()) - len(failing)} of {int(active.sum())} groups have "
                       f"both rates within ±{abs(epsilon0):g}.", failing)

    def guarantee(self) -> str:
        """The equalized-odds guarantee, in plain words.

        Returns
        -------
        str
        """
        what = ("each certified group has both its false and true positive rate disparities "
                "within the threshold" if self.certified is not None else
                "the bound on the larger of the false and true positive rate disparities "
                "holds for every group")
        return (
            f"The false and true positive rate audits each run at level {self.alpha / 2:.1%}; "
            f"with probability at least {1 - self.alpha:.0%} (as the sample grows) {what}, "
            "simultaneously over the groups."
        )

    def describe(self, target_description=None) -> str:
        """What was measured on which rows, in one sentence.

        Parameters
        ----------
        target_description : str, optional
            What the targets are.

        Returns
        -------
        str
        """
        fpr, tpr = self.false_positive_rate, self.true_positive_rate
        target = f" (targets: {target_description})" if target_description else ""
        return (
            f"False positive rate among {fpr.n:,} negatives (target {fpr.target:.4g}) and true "
            f"positive rate among {tpr.n:,} positives (target {tpr.target:.4g}){target}; "
            f"{int(self.active.sum())} groups with rows among both."
        )

    def key_figures(self) -> dict:
        """Groups, level and mode.

        Returns
        -------
        dict
        """
        return {"metric": "equalized odds (FPR and TPR)",
                "audit rows": self.false_positive_rate.n + self.true_positive_rate.n,
                "groups": int(self.active.sum()), "α (simultaneous)": self.alpha,
                "mode": "certificates" if self.certified is not None else "bounds"}

    def plot(self, ax=None, *, max_groups=40, min_size=1, epsilon0=None):
        """The FPR and TPR disparity of every group (matplotlib axes).

        Groups are drawn in the order of :meth:`plot_order`: those the verdict names first
        (their labels in red), then by decreasing larger absolute disparity.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups : int
        min_size : int
            Groups with fewer rows (negatives plus positives) are left out.
        epsilon0 : float, optional
            The threshold of a gated bounds audit (see :meth:`verdict`).

        Returns
        -------
        matplotlib Axes
        """
        shown = self.plot_order(max_groups, min_size, epsilon0)
        named = self._emphasised(epsilon0)[shown]
        ax = plot_axes(ax, "a group audit", shown.size)
        pos = np.arange(shown.size)
        ax.plot(self.false_positive_rate.estimates[shown], pos, "o", label="FPR")
        ax.plot(self.true_positive_rate.estimates[shown], pos, "s", label="TPR")
        ax.axvline(0.0, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(pos, [self.names[j] for j in shown])
        for tick, is_named in zip(ax.get_yticklabels(), named, strict=True):
            if is_named:
                tick.set_color("tab:red")
        ax.invert_yaxis()
        ax.set_xlabel("disparity")
        ax.set_title("equalized odds")
        ax.legend()
        return ax
