"""What the tilt audits share: the bound process of a tilt, its scale, its result protocol.

A tilt :math:`w \\ge 0` of a covariate reweights the audit distribution; its disparity is

.. math::

    \\epsilon(w) = \\frac{E[(L - \\theta)\\, w(X)]}{E[w(X)]}

(indicators :math:`w = 1_G` give the groups back). With per-cell sums of the audit summary
(:meth:`~skfair_audit.group.AuditSummary.from_cells`), a tilt is a vector of cell weights
:math:`w_c` and every quantity below is linear in it: the observed mass
:math:`M(w) = P_n[w]`, the centred sum :math:`N(w) = P_n[(L - \\hat\\theta) w]` (so
:math:`\\hat\\epsilon(w) = N(w)/M(w)`), and in a bootstrap replicate
:math:`A_b(w) = P_n^b[(L - \\hat\\theta_b) w] - N(w)` and :math:`\\Delta_b(w) = P_n^b[w] - M(w)`.

The bound process of Cherian & Candès with :math:`1_G` replaced by :math:`w` is

.. math::

    T_b(w) = P_n[w]\\, P_n^b[(L - \\hat\\theta_b) w] - P_n[(L - \\hat\\theta) w]\\, P_n^b[w]
           = M(w)\\,\\big(A_b(w) - \\hat\\epsilon(w)\\,\\Delta_b(w)\\big),

a quadratic form in :math:`w`. With a scale :math:`s(w) = M(w)\\, r(w)`,
:math:`c = Q_{1-\\alpha}(\\sup_w T_b(w)/s(w))` gives the simultaneous bounds

.. math::

    \\epsilon(w) \\ge \\hat\\epsilon(w) - c\\, \\frac{r(w)}{M(w)}
    \\quad \\text{for every tilt } w \\text{ of the class.}

``scale="rescaled"`` uses :math:`r(w) = \\sigma \\sqrt{M(w) + p^*}` (:math:`\\sigma` the standard
deviation of :math:`L`): CLT-width bounds :math:`c\\sigma/\\sqrt{P_n[w]}` for tilts of mass
well above :math:`p^*`, wider ones below. It is the group rescaling
:math:`\\max(P, p^*)^{3/2}\\sigma` with a concave floor, which keeps
:math:`(A_b - e\\Delta_b)/r` quasi-convex in :math:`w` (linear over concave), so that for a
fixed :math:`e` its supremum over a convex class is attained at extreme tilts.
``scale="unscaled"`` uses :math:`r \\equiv 1` (widths :math:`c/P_n[w]`).

References
----------
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
Journal of Machine Learning Research 25(149), 1–49, §5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._utils import ConfidenceInterval, data_frame
from ._bootstrap import critical_value, disparity_range, run_bootstrap, simultaneous_bounds
from ._inference import _warn_if_degenerate
from ._protocol import GroupAuditResult, plot_axes, target_words
from ._results import bounds_verdict

#: The tilt scales (``scale=``) and what ``r(w)`` is for each.
TILT_SCALES = ("rescaled", "unscaled")


@dataclass(frozen=True, slots=True)
class TiltBound:
    """Bound for one queried tilt :math:`w` of a tilt audit.

    Attributes
    ----------
    value : float
        :math:`P_n[L w] / P_n[w]`, the metric under the tilt.
    estimate : float
        Disparity :math:`\\hat\\epsilon(w) = P_n[(L - \\hat\\theta) w] / P_n[w]`.
    lower, upper : float
        Simultaneous bounds on :math:`\\epsilon(w) = E[(L-\\theta) w]/E[w]` (``-inf`` /
        ``inf`` on the side the audit does not report).
    norm : float
        RKHS norm of :math:`w` (RKHS audits; NaN for monotone and polynomial tilts).
    mass : float
        :math:`P_n[w]` of the tilt as bounded (a monotone tilt is scaled to maximum 1, a
        polynomial one to mass 1).
    effective_size : float
        :math:`(\\sum_i w_i)^2 / \\sum_i w_i^2` over the audit sample: the number of rows the
        tilted estimate is worth (the rows of a group for an indicator).
    """

    value: float
    estimate: float
    lower: float
    upper: float
    norm: float = float("nan")
    mass: float = float("nan")
    effective_size: float = float("nan")

    def confidence_interval(self) -> ConfidenceInterval:
        """The bounds as a :class:`~skfair_audit.results.ConfidenceInterval`.

        Returns
        -------
        ConfidenceInterval
        """
        return ConfidenceInterval(self.lower, self.upper)


def scale_factor(mass, *, scale, sd, p_star):
    """:math:`r(w)` of tilts of mass ``mass``: :math:`\\sigma\\sqrt{M + p^*}` or 1."""
    mass = np.asarray(mass, dtype=float)
    if scale == "unscaled":
        return np.ones_like(mass)
    return sd * np.sqrt(np.clip(mass, 0.0, None) + p_star)


def cell_sums(summary):
    """Observed per-cell mass :math:`M_c` and centred sum :math:`N_c` (divided by n)."""
    cells = summary.stats.moments.sum(axis=2)
    n = summary.n
    return cells[0] / n, (cells[1] - summary.theta_hat * cells[0]) / n


def replicate_cell_sums(replicates, mass, centred, n):
    """Per-cell :math:`\\Delta_b` and :math:`A_b` of a batch of :class:`ReplicateSums`."""
    counts = replicates.counts
    delta = counts / n - mass
    shift = (replicates.sums - replicates.theta[:, None] * counts) / n - centred
    return delta, shift


def summary_sd(summary):
    """:math:`\\sigma` of the rescaling; a constant metric gets 1 and the warning of the
    group audits (the bootstrap distribution is then degenerate)."""
    sd = summary.stats.global_sd()
    _warn_if_degenerate(sd == 0, summary)
    return sd if sd > 0 else 1.0


def tilt_bounds(estimates, mass, factors, critical, alternative, summary):
    """:math:`\\hat\\epsilon(w) \\mp c\\, r(w)/M(w)`, clipped to the disparity range."""
    return simultaneous_bounds(
        np.asarray(estimates, dtype=float), np.asarray(mass) * np.asarray(factors),
        np.asarray(mass, dtype=float), critical, alternative,
        disparity_range(summary.metric.bounds, summary.target_kind, summary.theta_hat))


def effective_size(weights, counts):
    """:math:`(\\sum_c w_c N_c)^2 / \\sum_c w_c^2 N_c` for cell weights and row counts."""
    weights = np.asarray(weights, dtype=float)
    total = weights @ counts
    squares = weights**2 @ counts
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(squares > 0, total**2 / squares, 0.0)


def side_distribution(suprema, alternative):
    """The bootstrap suprema whose quantile is the critical value of ``alternative``."""
    return {"lower": suprema[:, 0], "upper": suprema[:, 1]}.get(alternative,
                                                              suprema.max(axis=1))


def calibrate(summary, process, n_resamples, alternative, alpha, **bootstrap):
    """Bootstrap the suprema of ``process`` (:func:`run_bootstrap` with the ``bootstrap``
    controls): the distribution of the side of ``alternative`` and its :math:`1 - \\alpha`
    quantile, the critical value :math:`c`."""
    dist = side_distribution(run_bootstrap(summary, process, n_resamples, **bootstrap),
                             alternative)
    return dist, critical_value(dist, alpha)


class TiltAuditResult(GroupAuditResult):
    """Protocol of the tilt results: the rows of :meth:`table` are tilts of the class.

    The rows are extreme tilts (half-lines for monotone tilts, principal tilts for
    polynomials): the worst disparity over the whole class is bounded by the rows' bounds.
    """

    procedure = "bounds"
    interval_description = "simultaneous bounds"
    _TABLE = (("lower", "lower", "lower"), ("upper", "upper", "upper"))
    _CLASS = "tilts"

    @property
    def empty_groups(self) -> tuple:
        """Tilts have no empty groups (kept for the protocol)."""
        return ()

    def confidence_interval(self, tilt=None) -> ConfidenceInterval:
        """Simultaneous bounds on the disparity of the rows' tilts, or of a queried tilt.

        Parameters
        ----------
        tilt : str or array-like, optional
            The name of a row of :meth:`table`, or a tilt of the class as :meth:`bound`
            takes it; default: every row.

        Returns
        -------
        ConfidenceInterval
            Arrays (one entry per row) without ``tilt``, floats with it.
        """
        if tilt is None:
            return ConfidenceInterval(self.lower, self.upper)
        if isinstance(tilt, str):
            return super().confidence_interval(tilt)
        return self.bound(tilt).confidence_interval()

    def _confidence_bounds(self):
        return self.lower, self.upper

    def verdict(self, epsilon0=None):
        """Without ``epsilon0`` the bounds are descriptive; with it, the audit fails when the
        bound of some extreme tilt does not certify the requested side of ``epsilon0``
        (every tilt of the class is then certified when none fails: see :meth:`guarantee`).

        Parameters
        ----------
        epsilon0 : float, optional

        Returns
        -------
        Verdict
        """
        return bounds_verdict(self.names, self.active, self.lower, self.upper,
                              self.alternative, epsilon0, what="tilts")

    def key_figures(self) -> dict:
        """Metric, target, rows, tilts shown, level, side and critical value.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "target θ": self.target, "audit rows": self.n,
                "class": self._class_words(), "α (simultaneous)": self.alpha,
                "bounds": self.alternative, "critical value": self.critical_value}

    def describe(self, target_description=None) -> str:
        """What was measured on which rows, in one sentence.

        Parameters
        ----------
        target_description : str, optional
            What the target θ is.

        Returns
        -------
        str
        """
        target = target_words(self.target, target_description)
        return (f"Metric: {self._metric_words()}; target {target}; audit sample: {self.n:,} "
                f"rows where the metric is defined; class: {self._class_words()} "
                f"({len(self.names)} extreme tilts shown).")

    def guarantee(self) -> str:
        """The guarantee of simultaneous bounds over the class, in plain words.

        Returns
        -------
        str
        """
        side = {"lower": "lower bounds", "upper": "upper bounds",
                "two-sided": "intervals"}[self.alternative]
        return (
            f"The disparity of a tilt w is ε(w) = E[(L − θ) w(X)] / E[w(X)], the "
            f"{self._metric_words()} disparity of the population reweighted by w. With "
            f"probability at least {1 - self.alpha:.0%} (as the sample grows), the {side} of "
            f"every tilt of the class ({self._class_words()}) hold at the same time, "
            "including tilts queried after looking at the results (result.bound(...))."
        )

    def _bound(self, estimate, value, mass, factor, size):
        """A :class:`TiltBound` from a tilt's estimate, value, mass, :math:`r(w)` and
        effective size."""
        lower, upper = tilt_bounds(np.array([estimate]), np.array([mass]), np.array([factor]),
                                   self.critical_value, self.alternative, self._summary)
        return TiltBound(float(value), float(estimate), float(lower[0]), float(upper[0]),
                         mass=float(mass), effective_size=float(size))

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per tilt of :meth:`table`.

        Returns
        -------
        pandas.DataFrame
        """
        return data_frame({
            "tilt": list(self.names), "effective_size": self.sizes,
            "mass": self.masses, "value": self.group_values, "estimate": self.estimates,
            "lower": self.lower, "upper": self.upper,
        }, index="tilt")

    def worst(self):
        """Name of the extreme tilt with the lowest lower bound (``"upper"``: the highest
        upper bound; two-sided: the bound farthest from 0).

        Returns
        -------
        str
        """
        return self.names[self._worst_index()]

    def _axes(self, ax):
        """``ax``, or the axes of a new figure of the tilt plots."""
        return plot_axes(ax, "a tilt audit")

    def _worst_index(self):
        if self.alternative == "lower":
            return int(np.argmin(self.lower))
        if self.alternative == "upper":
            return int(np.argmax(self.upper))
        return int(np.argmax(np.maximum(-self.lower, self.upper)))
