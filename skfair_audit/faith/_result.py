"""The result object of a FaiTH audit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._resampling import DEFAULT_MEMORY_LIMIT, check_memory
from ..utils import ConfidenceInterval, check_confidence_level, records_to_frame
from ._inference import root_bounds


@dataclass(frozen=True)
class FaithResult:
    """Result of a FaiTH individual-fairness audit (like a ``scipy.stats`` result).

    Attributes
    ----------
    statistic : float
        The FaiTH statistic ψ(f_n): the largest increase of the model's expected loss over the
        distributions within transport budget ε (under the fair metric) of the audit
        distribution.
    epsilon : float
        Transport budget ε.
    delta : float or None
        Fairness threshold δ of the test, if one was asked for.
    method : str
        Bootstrap scheme (``"m-out-of-n"``, ``"numerical"``, ``"nonparametric"`` or
        ``"subsampling"``).
    confidence_level : float
        Level of ``lower_bound``, ``upper_bound`` and the default interval.
    n : int
        Audit sample size.
    n_cells : int
        Number of cells K of the sample space.
    m : int or None
        Resample size (m-out-of-n, subsampling).
    numerical_step : float or None
        ε_n of the numerical bootstrap.
    bootstrap_distribution : ndarray
        Bootstrap replicates of the root ``T*`` ≈ √n(ψ(f_n) − ψ(f*)).
    lower_bound, upper_bound : float
        One-sided bounds at ``confidence_level``.
    pvalue : float or None
        P-value of the δ-fairness test, H0: ψ ≤ δ (the model is δ-fair) vs ψ > δ: the share
        of bootstrap replicates at least as extreme, so ``0.0`` means "below 1/B" (it
        inverts the bounds exactly: ``pvalue <= 1 - confidence_level`` iff ``rejected``).
    fair_pvalue : float or None
        P-value of the mirror test, H0: ψ ≥ δ vs ψ < δ (small = fairness certified).
    rejected : bool or None
        Whether H0 "δ-fair" is rejected at level ``1 − confidence_level`` (lower bound > δ).
    certified_fair : bool or None
        Whether the mirror test certifies δ-fairness (upper bound < δ).
    dual_multipliers : tuple of float
        Interval of optimal multipliers λ of the budget constraint at f_n.
    dual_unique : bool
        Whether λ is unique (otherwise ε sits on a kink of ε ↦ ψ(ε) and the limit law is not
        Gaussian).
    gaussianity_pvalue, skewness : float
        The paper's diagnostic of the bootstrap distribution (see
        :func:`~skfair_audit.faith.gaussianity_diagnostic`).
    counts : ndarray of shape (K,)
        Audit counts per cell.
    adversarial_distribution : ndarray of shape (K,)
        Q = Πᵀ1, the worst-case distribution within budget.
    plan_source, plan_target, plan_mass : ndarray
        Non-zero entries of the optimal transport plan Π (mass moved from cell to cell).
    cell_names : sequence of str
        Readable name of every cell (from a sample space: a lazy sequence that formats a name
        when it is read).
    cell_features : ndarray of shape (K, d) or None
        Feature values of every cell (for the heat map).
    feature_names : tuple of str or None
    cell_labels : ndarray of shape (K,) or None
    """

    statistic: float
    epsilon: float
    delta: float | None
    method: str
    confidence_level: float
    n: int
    n_cells: int
    m: int | None
    numerical_step: float | None
    bootstrap_distribution: np.ndarray = field(repr=False)
    lower_bound: float
    upper_bound: float
    pvalue: float | None
    fair_pvalue: float | None
    rejected: bool | None
    certified_fair: bool | None
    dual_multipliers: tuple
    dual_unique: bool
    gaussianity_pvalue: float
    skewness: float
    counts: np.ndarray = field(repr=False)
    adversarial_distribution: np.ndarray = field(repr=False)
    plan_source: np.ndarray = field(repr=False)
    plan_target: np.ndarray = field(repr=False)
    plan_mass: np.ndarray = field(repr=False)
    cell_names: tuple = field(repr=False)
    cell_features: np.ndarray | None = field(default=None, repr=False)
    feature_names: tuple | None = field(default=None, repr=False)
    cell_labels: np.ndarray | None = field(default=None, repr=False)

    def confidence_interval(self, confidence_level=None, alternative="two-sided"):
        """Confidence interval for ψ(f*) from the stored bootstrap distribution.

        Parameters
        ----------
        confidence_level : float, optional
            Defaults to the audit's level.
        alternative : {"two-sided", "greater", "less"}
            ``"greater"`` gives the one-sided lower bound ``[low, inf)``, ``"less"`` the upper
            bound ``(-inf, high]``.

        Returns
        -------
        ConfidenceInterval
        """
        level = self.confidence_level if confidence_level is None else confidence_level
        level = check_confidence_level(level)
        low, high = root_bounds(
            self.statistic, self.bootstrap_distribution, self.n, level, alternative
        )
        return ConfidenceInterval(low, high)

    @property
    def gaussian_limit(self):
        """Whether √n(ψ(f_n) − ψ(f*)) has a Gaussian limit at the estimated f.

        The limit is ``min_{λ ∈ Λ} <Z, u(λ)>`` over the optimal duals Λ. It is Gaussian when Λ
        is a point, and also when Λ = [λ₀, ∞) (ε = 0: only free moves count, ψ is linear in
        f). A bounded interval means ε sits on a kink of ε ↦ ψ(ε): the limit is a minimum of
        correlated Gaussians and Efron's bootstrap is inconsistent.
        """
        low, high = self.dual_multipliers
        return bool(low == high or math.isinf(high))

    @property
    def transport_plan(self):
        """The optimal plan Π as a dense (K, K) array of probability mass.

        Refused with :class:`MemoryLimitError` when ``8 K²`` bytes exceed 2 GiB: the plan's
        non-zero entries are ``plan_source``, ``plan_target`` and ``plan_mass``
        (``scipy.sparse.coo_array((plan_mass, (plan_source, plan_target)))``).
        """
        check_memory(
            8 * self.n_cells**2,
            DEFAULT_MEMORY_LIMIT,
            f"The dense {self.n_cells:,} x {self.n_cells:,} transport plan",
            "Use its non-zero entries plan_source, plan_target and plan_mass, or moves()",
        )
        plan = np.zeros((self.n_cells, self.n_cells))
        np.add.at(plan, (self.plan_source, self.plan_target), self.plan_mass)
        return plan

    @property
    def count_changes(self):
        """``n (Q − f_n)``: the adversarial change of counts per cell (the paper's Figure 2)."""
        return self.adversarial_distribution * self.n - self.counts

    def moves(self):
        """The off-diagonal moves of the plan as records (from cell, to cell, mass, count)."""
        records = []
        order = np.argsort(-self.plan_mass, kind="stable")
        for k in order:
            i, j, mass = int(self.plan_source[k]), int(self.plan_target[k]), self.plan_mass[k]
            if i == j or mass <= 0:
                continue
            records.append(
                {
                    "from_cell": self.cell_names[i],
                    "to_cell": self.cell_names[j],
                    "mass": float(mass),
                    "count": float(mass * self.n),
                }
            )
        return records

    def moves_frame(self):
        """The moves of the adversarial plan as a tidy :class:`pandas.DataFrame`."""
        return records_to_frame(
            self.moves() or [], index=None
        ).reindex(columns=["from_cell", "to_cell", "mass", "count"])

    def summary(self):
        """The audit in one dict (what :meth:`to_frame` tabulates)."""
        ci = self.confidence_interval()
        return {
            "statistic": self.statistic,
            "ci_low": ci.low,
            "ci_high": ci.high,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "pvalue": self.pvalue,
            "rejected": self.rejected,
            "fair_pvalue": self.fair_pvalue,
            "certified_fair": self.certified_fair,
            "method": self.method,
            "confidence_level": self.confidence_level,
            "n": self.n,
            "n_cells": self.n_cells,
            "m": self.m,
            "numerical_step": self.numerical_step,
            "n_resamples": int(self.bootstrap_distribution.size),
            "dual_unique": self.dual_unique,
        }

    def to_frame(self):
        """A one-row :class:`pandas.DataFrame` with the statistic, bounds and decision."""
        return records_to_frame([self.summary()])

    def __str__(self):
        ci = self.confidence_interval()
        level = f"{self.confidence_level:.0%}"
        lines = [
            f"FaiTH audit ({self.method} bootstrap, n={self.n}, K={self.n_cells} cells, "
            f"epsilon={self.epsilon:g})",
            f"  statistic      {self.statistic:.4f}",
            f"  {level} CI         [{ci.low:.4f}, {ci.high:.4f}]",
            f"  one-sided      lower {self.lower_bound:.4f}, upper {self.upper_bound:.4f}",
        ]
        if self.delta is not None:
            verdict = (
                "REJECT delta-fairness" if self.rejected else "cannot reject delta-fairness"
            )
            lines.append(f"  delta={self.delta:g}: {verdict} (p={self.pvalue:.4g})")
        if not self.gaussian_limit:
            lines.append(
                "  note: epsilon sits on a kink of the audit curve (non-unique dual): the limit "
                "law is not Gaussian; use the m-out-of-n or numerical bootstrap"
            )
        return "\n".join(lines)

    def plot(self, *, rows=None, columns=None, ax=None, cmap="RdBu_r"):
        """Heat maps of the adversarial count changes ``n(Q − f_n)`` by cell, one per label.

        See :func:`~skfair_audit.faith.plot_count_changes`.
        """
        from ._plot import plot_count_changes

        return plot_count_changes(self, rows=rows, columns=columns, ax=ax, cmap=cmap)

