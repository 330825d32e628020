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

from ..utils import ConfidenceInterval, import_optional

__all__ = [
    "GroupBound",
    "GroupBoundsResult",
    "GroupCertificationResult",
    "GroupFlagResult",
    "EqualizedOddsResult",
    "TiltBound",
    "RKHSBoundsResult",
]


@dataclass(frozen=True, eq=False)
class _AuditContext:
    """What a result needs to evaluate a group given as a row mask."""

    values: np.ndarray  # L on all rows of the audit trail (0 outside the condition)
    rows: np.ndarray  # condition mask over all rows
    theta_hat: float
    sd: float
    scale: str
    p_star: float
    w0: float
    power: float


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


class _GroupLookup:
    """Name / mask lookup shared by the per-group results."""

    def _position(self, group):
        return self.groups.index(group)

    def _frame(self, columns):
        pd = import_optional("pandas", "build a DataFrame from a result")
        frame = pd.DataFrame(columns)
        return frame.set_index("group")

    def _errorbar_plot(self, ax, estimates, lower, upper, reference, max_groups, title,
                       min_size=1):
        plt = import_optional("matplotlib.pyplot", "plot a group audit")
        # Empty groups have nothing to draw, and tiny groups' wide bars would set the scale.
        shown = np.flatnonzero(np.isfinite(estimates) & (np.asarray(self.sizes) >= min_size))
        order = shown[np.argsort(estimates[shown], kind="stable")][:max_groups]
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 0.3 * max(order.size, 1) + 1.5))
        pos = np.arange(order.size)
        est = estimates[order]
        lo = np.where(np.isfinite(lower[order]), lower[order], est)
        hi = np.where(np.isfinite(upper[order]), upper[order], est)
        ax.errorbar(est, pos, xerr=[est - lo, hi - est], fmt="o", capsize=3)
        ax.axvline(reference, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(pos, [self.names[j] for j in order])
        ax.set_xlabel("disparity")
        ax.set_title(title)
        return ax


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
    groups : GroupCollection
    empty_groups : tuple of str
        Members of the collection without any row in the audit sample.
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
    _context: _AuditContext = field(default=None, repr=False)

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
        a warning.
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

    def confidence_interval(self, group, *, allow_outside=False) -> ConfidenceInterval:
        """:class:`~skfair_audit.utils.ConfidenceInterval` of a group's disparity."""
        b = self.bound(group, allow_outside=allow_outside)
        return ConfidenceInterval(b.lower, b.upper)

    def _outside_bound(self, group):
        ctx = self._context
        if isinstance(group, str):
            raise ValueError(f"no group named {group!r}; pass a boolean row mask instead.")
        mask = np.asarray(group.to_numpy() if hasattr(group, "to_numpy") else group)
        if mask.dtype != bool or mask.shape != ctx.rows.shape:
            raise ValueError(f"a group mask must be boolean of length {ctx.rows.size}.")
        warnings.warn(
            "this group is not in the calibrated collection: its bound carries no "
            "simultaneous (or any) coverage guarantee.",
            UserWarning,
            stacklevel=2,
        )
        sel = mask & ctx.rows
        size = int(sel.sum())
        if size == 0:
            return GroupBound("<mask>", 0, float("nan"), -np.inf, np.inf, False)
        vals = ctx.values[sel]
        p = size / self.n
        est = float(vals.mean() - ctx.theta_hat)
        if ctx.scale == "unscaled":
            s = 1.0
        else:
            lam = 0.0 if np.isinf(ctx.w0) else p / (p + ctx.w0)
            s = max(p, ctx.p_star) ** ctx.power * (lam * vals.std() + (1 - lam) * ctx.sd)
        width = self.critical_value * s / p**2
        lower = est - width if self.alternative in ("lower", "two-sided") else -np.inf
        upper = est + width if self.alternative in ("upper", "two-sided") else np.inf
        return GroupBound("<mask>", size, est, float(lower), float(upper), False)

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group."""
        return self._frame({
            "group": list(self.names), "size": self.sizes, "value": self.group_values,
            "estimate": self.estimates, "lower": self.lower, "upper": self.upper,
            "scale": self.scales,
        })

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Estimates and bounds per group (matplotlib axes).

        Groups are sorted by estimate; empty groups and groups with fewer than ``min_size``
        rows are left out (their bounds are valid but too wide to read).
        """
        return self._errorbar_plot(
            ax, self.estimates, self.lower, self.upper, 0.0, max_groups,
            f"{self.metric}: {100 * (1 - self.alpha):g}% simultaneous bounds", min_size,
        )


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
    critical_value : float
    bootstrap_distribution : ndarray
    method : str
        ``"kadane"`` (maximum-subarray over all grid intervals) or ``"enumeration"``.
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

    def __repr__(self):
        return (
            f"GroupCertificationResult(metric={self.metric!r}, alternative="
            f"{self.alternative!r}, epsilon0={self.epsilon0}, n_certified="
            f"{int(self.certified.sum())}/{len(self.names)}, method={self.method!r})"
        )

    def is_certified(self, group) -> bool:
        """Certificate of a member of the collection (name, index or row mask)."""
        return bool(self.certified[self._position(group)])

    def to_frame(self):
        return self._frame({
            "group": list(self.names), "size": self.sizes, "value": self.group_values,
            "estimate": self.estimates, "lower": self.lower, "upper": self.upper,
            "certified": self.certified,
        })

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Estimates and certification bounds per group (matplotlib axes)."""
        return self._errorbar_plot(
            ax, self.estimates, self.lower, self.upper, self.epsilon0, max_groups,
            f"{self.metric}: certificates ({self.alternative} {self.epsilon0:g})", min_size,
        )


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
        In [0, 1]; empty groups get p-value 1.
    flagged : ndarray of bool
    q : float
    se_method : {"delta", "bootstrap"}
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

    def __repr__(self):
        return (
            f"GroupFlagResult(metric={self.metric!r}, alternative={self.alternative!r}, "
            f"epsilon0={self.epsilon0}, q={self.q}, n_flagged={int(self.flagged.sum())}"
            f"/{len(self.names)})"
        )

    def is_flagged(self, group) -> bool:
        return bool(self.flagged[self._position(group)])

    def to_frame(self):
        return self._frame({
            "group": list(self.names), "size": self.sizes, "value": self.group_values,
            "estimate": self.estimates, "se": self.standard_errors,
            "statistic": self.statistics, "pvalue": self.pvalues,
            "adjusted_pvalue": self.adjusted_pvalues, "flagged": self.flagged,
        })

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Estimates with ±1.96 se bars (marginal, not simultaneous)."""
        half = 1.959963984540054 * np.nan_to_num(self.standard_errors)
        return self._errorbar_plot(
            ax, self.estimates, self.estimates - half, self.estimates + half, self.epsilon0,
            max_groups, f"{self.metric}: flags at FDR {self.q:g}", min_size,
        )


@dataclass(frozen=True, eq=False)
class EqualizedOddsResult:
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

    def to_frame(self):
        pd = import_optional("pandas", "build a DataFrame from a result")
        data = {"group": list(self.names), "worst_disparity": self.worst_disparity}
        if self.certified is not None:
            data["certified"] = self.certified
        return pd.DataFrame(data).set_index("group")


@dataclass(frozen=True, slots=True)
class TiltBound:
    """Bound for one tilt :math:`h` of an RKHS audit.

    Attributes
    ----------
    value : float
        :math:`P_n[L h] / P_n[h]`.
    estimate : float
        Disparity :math:`P_n[(L - \\hat\\theta) h] / P_n[h]`.
    lower, upper : float
        Simultaneous bounds on :math:`E[(L-\\theta) h]/E[h]`.
    norm : float
        RKHS norm of :math:`h`.
    """

    value: float
    estimate: float
    lower: float
    upper: float
    norm: float

    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.lower, self.upper)


@dataclass(frozen=True, eq=False)
class RKHSBoundsResult:
    """Bounds simultaneous over all non-negative tilts of a Gaussian RKHS ball.

    Query tilts with :meth:`bound`. See :func:`skfair_audit.group.rkhs_tilt_bounds`.

    Attributes
    ----------
    critical_value : float
    alpha : float
    alternative : str
    bandwidth : float
    target : float
    n : int
    rank : int
        Rank of the kernel factor used.
    bootstrap_distribution : ndarray
    """

    critical_value: float
    alpha: float
    alternative: str
    bandwidth: float
    target: float
    n: int
    rank: int
    bootstrap_distribution: np.ndarray
    _X: np.ndarray = field(repr=False, default=None)
    _values: np.ndarray = field(repr=False, default=None)
    _factor: np.ndarray = field(repr=False, default=None)

    def bound(self, *, coef=None, centers=None, values=None) -> TiltBound:
        """Bound for a tilt :math:`h`, given by kernel coefficients or by values.

        Parameters
        ----------
        coef : array-like of shape (m,), optional
            :math:`h = \\sum_j \\mathrm{coef}_j\\, k(c_j, \\cdot)` with centres ``centers``
            (default: the audit points); non-negative coefficients give :math:`h \\ge 0`.
        centers : array-like of shape (m, d), optional
        values : array-like of shape (n,), optional
            :math:`h(x_i)` at the audit points (non-negative); the norm used is that of the
            minimum-norm interpolant (computed with a tiny ridge).

        Returns
        -------
        TiltBound
        """
        from ._rkhs import gaussian_kernel  # local: avoids an import cycle

        X = self._X
        if (coef is None) == (values is None):
            raise ValueError("give exactly one of coef or values.")
        if coef is not None:
            C = X if centers is None else _as_2d(centers)
            coef = np.asarray(coef, dtype=float)
            if coef.shape != (C.shape[0],):
                raise ValueError(f"coef must have {C.shape[0]} entries.")
            h = gaussian_kernel(X, C, self.bandwidth) @ coef
            norm2 = float(coef @ gaussian_kernel(C, C, self.bandwidth) @ coef)
        else:
            h = np.asarray(values, dtype=float)
            if h.shape != (X.shape[0],):
                raise ValueError(f"values must have one entry per audit point ({X.shape[0]}).")
            # minimum-norm h in the span of the (H-orthonormal) Cholesky features
            beta = np.linalg.lstsq(self._factor, h, rcond=None)[0]
            residual = np.linalg.norm(self._factor @ beta - h)
            if residual > 1e-3 * max(np.linalg.norm(h), 1e-300):
                warnings.warn(
                    f"the values are interpolated with relative error "
                    f"{residual / np.linalg.norm(h):.2g} by the kernel factor; the bound "
                    "refers to the interpolant (increase max_rank / decrease tol).",
                    UserWarning,
                    stacklevel=2,
                )
            norm2 = float(beta @ beta)
        if np.any(h < -1e-12 * max(1.0, np.abs(h).max())):
            raise ValueError("the tilt h must be non-negative at the audit points.")
        h = np.clip(h, 0.0, None)
        mass = h.mean()
        if mass <= 0:
            raise ValueError("the tilt h is zero on every audit point.")
        value = float((self._values * h).mean() / mass)
        estimate = value - self.target
        width = self.critical_value * norm2 / mass**2
        lower = estimate - width if self.alternative in ("lower", "two-sided") else -np.inf
        upper = estimate + width if self.alternative in ("upper", "two-sided") else np.inf
        return TiltBound(value, float(estimate), float(lower), float(upper),
                         float(np.sqrt(max(norm2, 0.0))))


def _as_2d(X):
    X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    return X[:, None] if X.ndim == 1 else X
