"""Bootstrap processes of group disparities, computed on sufficient statistics.

Notation (Cherian & Candès 2024). The audit sample is the :math:`n` rows where the metric's
condition holds (e.g. the negatives for a false positive rate): *every* quantity below —
:math:`n`, :math:`P_n(G)`, the bootstrap multinomial — is defined on this restricted sample,
as in the paper. For a group :math:`G`, with target :math:`\\hat\\theta` and a bootstrap
replicate :math:`P_n^b` (multinomial weights :math:`w`, :math:`\\sum_i w_i = n`),

.. math::

    \\hat\\epsilon(G) = \\frac{P_n[L 1_G]}{P_n(G)} - \\hat\\theta, \\qquad
    T_b(G) = P_n^b[(L - \\hat\\theta_b) 1_G]\\, P_n(G) - P_n[(L - \\hat\\theta) 1_G]\\,
    P_n^b(G),

where the target is re-estimated in the replicate (:math:`\\hat\\theta_b`). The Boolean
certification process at threshold :math:`\\epsilon_0` is

.. math::

    T_b(G) = P_n^b[(L - \\hat\\theta_b - \\epsilon_0) 1_G]
             - P_n[(L - \\hat\\theta - \\epsilon_0) 1_G].

Rows are mapped to *atoms* — unique combinations of (cell of the group collection,
membership of the reference group, value of :math:`L`) — and a replicate is a vector of
multinomial counts over the atoms, drawn by :func:`skfair_audit._resampling.resample`. For
binary metrics and categorical groups the number of atoms is tiny, so a replicate costs
nothing in the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _stats

from .._resampling import MultinomialCounts, default_batch_size, resample
from ._intervals import max_subarray

__all__ = [
    "DegenerateBootstrapWarning",
    "SufficientStatistics",
    "DisparityProcess",
    "group_scales",
    "critical_value",
    "normal_pvalues",
    "delta_method_se",
]


class DegenerateBootstrapWarning(UserWarning):
    """The bootstrap distribution is degenerate (constant metric, one-row groups ...)."""


@dataclass(frozen=True, eq=False)
class SufficientStatistics:
    """Rows of the audit sample compressed to atoms ``(cell, in_reference, value)``.

    Attributes
    ----------
    atom_cell, atom_value, atom_reference, atom_count : ndarray of shape (n_atoms,)
        Atoms sorted by cell, their value of :math:`L`, reference membership and counts.
    row_atom : ndarray of shape (n,)
        Atom of every row of the audit sample.
    n_cells : int
    """

    atom_cell: np.ndarray
    atom_value: np.ndarray
    atom_reference: np.ndarray
    atom_count: np.ndarray
    row_atom: np.ndarray
    n_cells: int

    @classmethod
    def from_rows(cls, cell_of_row, values, n_cells, reference=None):
        cell_of_row = np.asarray(cell_of_row, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        ref = np.zeros(values.size, dtype=np.int64) if reference is None else (
            np.asarray(reference).astype(np.int64))
        # One integer key per (cell, reference, value): sorted like the row-wise unique of
        # the three columns, and far faster on millions of rows.
        levels, value_code = np.unique(values, return_inverse=True)
        key = (cell_of_row * 2 + ref) * levels.size + value_code.ravel()
        keys, row_atom, counts = np.unique(key, return_inverse=True, return_counts=True)
        cell_ref, atom_value_code = np.divmod(keys, levels.size)
        atom_cell, atom_reference = np.divmod(cell_ref, 2)
        return cls(
            atom_cell=atom_cell.astype(np.intp),
            atom_value=levels[atom_value_code],
            atom_reference=atom_reference.astype(bool),
            atom_count=counts.astype(np.int64),
            row_atom=row_atom.ravel().astype(np.intp),
            n_cells=int(n_cells),
        )

    @property
    def n(self) -> int:
        return int(self.atom_count.sum())

    @property
    def n_atoms(self) -> int:
        return self.atom_count.size

    def draw(self) -> MultinomialCounts:
        """Efron's bootstrap through the sufficient statistics."""
        return MultinomialCounts(self.atom_count / self.n, self.n)

    def counts_from_row_weights(self, weights) -> np.ndarray:
        """Aggregate row-level weights ``(size, n)`` to atom counts ``(size, n_atoms)``."""
        weights = np.atleast_2d(np.asarray(weights))
        order = np.argsort(self.row_atom, kind="stable")
        starts = np.searchsorted(self.row_atom[order], np.arange(self.n_atoms))
        return np.add.reduceat(weights[:, order], starts, axis=1)

    def cell_sums(self, atom_weights) -> np.ndarray:
        """Per-cell sums ``(..., n_cells)`` of per-atom quantities ``(..., n_atoms)``."""
        atom_weights = np.asarray(atom_weights, dtype=float)
        present, starts = np.unique(self.atom_cell, return_index=True)
        out = np.zeros((*atom_weights.shape[:-1], self.n_cells))
        out[..., present] = np.add.reduceat(atom_weights, starts, axis=-1)
        return out

    def observed_group_sums(self, groups, power=1):
        """Observed ``(sum 1_G, sum L^power 1_G)`` over the audit sample, per group."""
        counts = self.atom_count.astype(float)
        n_g = groups.group_sums(self.cell_sums(counts))
        s_g = groups.group_sums(self.cell_sums(counts * self.atom_value**power))
        return n_g, s_g


def _theta_replicates(stats, counts, target_kind, theta_hat):
    """Target re-estimated in each replicate (``counts``: ``(size, n_atoms)``)."""
    if target_kind == "constant":
        return np.full(counts.shape[0], theta_hat)
    if target_kind == "overall":
        return (counts @ stats.atom_value) / stats.n
    ref = stats.atom_reference.astype(float)
    size = counts @ ref
    total = counts @ (stats.atom_value * ref)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = total / size
    # a replicate without any reference row keeps the observed target
    return np.where(size > 0, theta, theta_hat)


@dataclass(frozen=True, eq=False)
class DisparityProcess:
    """Bootstrap process of the group disparities (a picklable ``statistic`` for ``resample``).

    Parameters
    ----------
    stats : SufficientStatistics
    groups : GroupCollection
    target_kind : {"constant", "overall", "reference"}
    theta_hat : float
        Observed target.
    boolean : bool
        Boolean-certification process (additive) instead of the bound process.
    epsilons : (float, float)
        Thresholds used for the two returned suprema (Boolean process only).
    scales : ndarray of shape (n_groups,)
        :math:`s_G` (groups with ``active == False`` are ignored).
    active : ndarray of bool, shape (n_groups,)
        Non-empty groups of the audit sample.
    kadane : bool
        Take the supremum over *all* grid intervals by a maximum-subarray search over the
        bins (Boolean, unscaled, interval collections only).
    """

    stats: SufficientStatistics
    groups: object
    target_kind: str
    theta_hat: float
    boolean: bool
    epsilons: tuple
    scales: np.ndarray
    active: np.ndarray
    kadane: bool = False

    def __post_init__(self):
        n_g, s_g = self.stats.observed_group_sums(self.groups)
        object.__setattr__(self, "_observed", (n_g, s_g))

    def cell_replicates(self, counts):
        """Per-cell ``(N_b, S_b)`` and the replicate targets for atom counts ``counts``."""
        counts = np.atleast_2d(np.asarray(counts, dtype=float))
        n_c = self.stats.cell_sums(counts)
        s_c = self.stats.cell_sums(counts * self.stats.atom_value)
        theta_b = _theta_replicates(self.stats, counts, self.target_kind, self.theta_hat)
        return n_c, s_c, theta_b

    def group_statistics(self, counts, epsilon=0.0):
        """:math:`T_b(G)` for every replicate and group, shape ``(size, n_groups)``."""
        n_c, s_c, theta_b = self.cell_replicates(counts)
        return self._from_cells(n_c, s_c, theta_b, epsilon, self.groups.group_sums)

    def _from_cells(self, n_c, s_c, theta_b, epsilon, aggregate, observed=None):
        n = self.stats.n
        n_b, s_b = aggregate(n_c), aggregate(s_c)
        n_0, s_0 = self._observed if observed is None else observed
        centred_b = s_b - theta_b[:, None] * n_b
        centred_0 = s_0 - self.theta_hat * n_0
        if self.boolean:
            return (centred_b - centred_0 - epsilon * (n_b - n_0)) / n
        return (centred_b * n_0 - centred_0 * n_b) / n**2

    def replicate_estimates(self, counts):
        """:math:`\\hat\\epsilon_b(G)` per replicate (NaN where the group is not drawn)."""
        n_c, s_c, theta_b = self.cell_replicates(counts)
        n_b, s_b = self.groups.group_sums(n_c), self.groups.group_sums(s_c)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_b > 0, s_b / n_b, np.nan) - theta_b[:, None]

    def __call__(self, counts):
        """``(size, 2)``: :math:`\\sup_G T_b(G)/s_G` at ``epsilons[0]`` and
        :math:`\\sup_G -T_b(G)/s_G` at ``epsilons[1]``."""
        if self.kadane:
            return self._kadane(counts)
        n_c, s_c, theta_b = self.cell_replicates(counts)
        out = np.zeros((n_c.shape[0], 2))
        if not np.any(self.active):
            return out
        scales = self.scales[self.active]
        if self.epsilons[0] == self.epsilons[1]:
            # Bounds: one process, both tails (the group sums dominate the cost).
            t = self._from_cells(n_c, s_c, theta_b, self.epsilons[0], self.groups.group_sums)
            scaled = t[:, self.active] / scales
            out[:, 0], out[:, 1] = scaled.max(axis=1), (-scaled).max(axis=1)
            return out
        for k, (eps, sign) in enumerate(zip(self.epsilons, (1.0, -1.0), strict=True)):
            t = self._from_cells(n_c, s_c, theta_b, eps, self.groups.group_sums)
            out[:, k] = (sign * t[:, self.active] / scales).max(axis=1)
        return out

    def _kadane(self, counts):
        layout = self.groups.layout
        m = layout.n_bins
        n_c, s_c, theta_b = self.cell_replicates(counts)
        counts0 = self.stats.atom_count.astype(float)
        bins0 = (self.stats.cell_sums(counts0)[:m], self.stats.cell_sums(
            counts0 * self.stats.atom_value)[:m])
        out = np.empty((n_c.shape[0], 2))
        for k, (eps, sign) in enumerate(zip(self.epsilons, (1.0, -1.0), strict=True)):
            per_bin = self._from_cells(
                n_c[:, :m], s_c[:, :m], theta_b, eps, lambda v: v, observed=bins0
            )
            out[:, k] = max_subarray(sign * per_bin, layout.edges, layout.min_length)
        return out


def group_scales(n_g, s_g, s2_g, n, sd, *, kind="rescaled", p_star=0.01, w0=np.inf,
                 power=1.5):
    """Per-group scales :math:`s_G` of the bootstrap process.

    .. math::

        s_G = \\max(P_n(G), p^*)^{\\text{power}}\\,\\sigma_G,\\quad
        \\sigma_G = \\lambda_G\\,\\mathrm{sd}(L \\mid G) + (1 - \\lambda_G)\\,\\mathrm{sd}(L),\\quad
        \\lambda_G = \\frac{P_n(G)}{P_n(G) + w_0}

    with ``power = 3/2`` for bounds and ``1/2`` for Boolean certification; ``kind="unscaled"``
    gives :math:`s_G = 1`. ``w0 = inf`` uses the global standard deviation ``sd``.

    Parameters
    ----------
    n_g, s_g, s2_g : ndarray of shape (n_groups,)
        Per-group sums of 1, :math:`L` and :math:`L^2` over the audit sample.
    n : int
        Size of the audit sample.
    sd : float
        Global standard deviation of :math:`L` (must be positive).

    Examples
    --------
    >>> group_scales(np.array([10.0, 50.0]), np.array([5.0, 25.0]), np.array([5.0, 25.0]),
    ...              100, 0.5, p_star=0.2).round(4).tolist()
    [0.0447, 0.1768]
    """
    n_g = np.asarray(n_g, dtype=float)
    if kind == "unscaled":
        return np.ones_like(n_g)
    p = n_g / n
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_g = np.where(n_g > 0, s_g / n_g, 0.0)
        var_g = np.where(n_g > 0, s2_g / n_g - mean_g**2, 0.0)
    sd_g = np.sqrt(np.clip(var_g, 0.0, None))
    lam = 0.0 if np.isinf(w0) else p / (p + w0)
    sigma = lam * sd_g + (1.0 - lam) * sd
    return np.maximum(p, p_star) ** power * sigma


def _global_sd(values, counts):
    n = counts.sum()
    mean = (counts * values).sum() / n
    return float(np.sqrt(max((counts * (values - mean) ** 2).sum() / n, 0.0)))


def compute_scales(stats, groups, *, kind, p_star, w0, power):
    """Scales :math:`s_G` (:func:`group_scales`) from the sufficient statistics.

    Returns ``(scales, degenerate)``; ``degenerate`` is True when :math:`L` is constant on
    the audit sample (the global standard deviation is then replaced by 1).
    """
    n_g, s_g = stats.observed_group_sums(groups)
    _, s2_g = stats.observed_group_sums(groups, power=2)
    sd = _global_sd(stats.atom_value, stats.atom_count.astype(float))
    degenerate = sd == 0.0
    scales = group_scales(n_g, s_g, s2_g, stats.n, 1.0 if degenerate else sd, kind=kind,
                          p_star=p_star, w0=w0, power=power)
    return scales, degenerate


def critical_value(sups, alpha):
    """The :math:`(1-\\alpha)` quantile of bootstrap suprema (``method="higher"``)."""
    return float(np.quantile(np.asarray(sups, dtype=float), 1.0 - alpha, method="higher"))


def normal_pvalues(estimates, se, epsilon0, alternative):
    """Asymptotic p-values of the per-group nulls.

    ``"greater"``: :math:`H_0: \\epsilon(G) \\le \\epsilon_0`, :math:`p = 1 - \\Phi(z)`;
    ``"less"``: :math:`H_0: \\epsilon(G) \\ge \\epsilon_0`, :math:`p = \\Phi(z)`;
    ``"two-sided"``: :math:`H_0: |\\epsilon(G)| \\le \\epsilon_0`, the supremum over the null of
    :math:`P(|\\hat\\epsilon| \\ge |e|)`, attained at :math:`\\epsilon = \\pm\\epsilon_0`:

    .. math::

        p = \\bar\\Phi\\Big(\\frac{|e| - \\epsilon_0}{\\mathrm{se}}\\Big)
          + \\Phi\\Big(\\frac{-|e| - \\epsilon_0}{\\mathrm{se}}\\Big) \\in (0, 1],

    which is :math:`2\\bar\\Phi(|z|)` for :math:`\\epsilon_0 = 0`. A zero standard error gives
    p = 1 when the estimate lies in the null and 0 otherwise.
    """
    e = np.asarray(estimates, dtype=float)
    se = np.asarray(se, dtype=float)
    norm = _stats.norm
    with np.errstate(divide="ignore", invalid="ignore"):
        if alternative == "greater":
            z = (e - epsilon0) / se
            p = norm.sf(z)
            p = np.where(se > 0, p, np.where(e > epsilon0, 0.0, 1.0))
        elif alternative == "less":
            z = (e - epsilon0) / se
            p = norm.cdf(z)
            p = np.where(se > 0, p, np.where(e < epsilon0, 0.0, 1.0))
        elif alternative == "two-sided":
            a = np.abs(e)
            z = (a - epsilon0) / se
            p = norm.sf(z) + norm.cdf((-a - epsilon0) / se)
            p = np.where(se > 0, p, np.where(a > epsilon0, 0.0, 1.0))
        else:
            raise ValueError(
                f"alternative must be 'greater', 'less' or 'two-sided', got {alternative!r}."
            )
    return np.clip(p, 0.0, 1.0), z


def delta_method_se(stats, groups, target_kind, theta_hat, null_disparity=None):
    """Delta-method standard errors of :math:`\\hat\\epsilon(G)`.

    The influence function of :math:`\\hat\\epsilon(G) = \\hat\\mu_G - \\hat\\theta` is
    :math:`(L - a_G) 1_G / p_G - \\psi_\\theta` with :math:`\\psi_\\theta = 0` (known
    target), :math:`L - \\mu` (overall mean) or :math:`(L - \\mu_R) 1_R / p_R` (reference
    group), and :math:`a_G = \\mu_G`. Its second moment divided by :math:`n` is

    .. math::

        \\frac{1}{n}\\Big(\\frac{E[(L - a_G)^2 \\mid G]}{p_G} + V_\\theta
        - 2 C_{G\\theta}\\Big),

    :math:`V_\\theta = v` and :math:`C_{G\\theta} = E[(L-a_G)(L-\\mu) \\mid G]` for the
    overall mean; :math:`V_\\theta = v_R/p_R` and
    :math:`C_{G\\theta} = E[(L-a_G)(L-\\mu_R) 1_{G \\cap R}]/(p_G p_R)` for a reference.

    With ``null_disparity`` :math:`\\delta` (scalar or per group) the group term is centred
    at the null value :math:`a_G = \\theta + \\delta` instead of :math:`\\mu_G`, as in a
    score test: the variance of :math:`P_n[(L - \\hat\\theta - \\delta) 1_G]` under the
    boundary of the null. Both agree at :math:`\\epsilon(G) = \\delta`; the null-centred
    one is not 0 for a small group whose metric is constant away from the null value.
    """
    n = stats.n
    counts = stats.atom_count.astype(float)
    v = stats.atom_value

    def sums(weights):
        return groups.group_sums(stats.cell_sums(weights))

    n_g, s_g, s2_g = sums(counts), sums(counts * v), sums(counts * v**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = n_g / n
        mu = s_g / n_g
        var_g = np.clip(s2_g / n_g - mu**2, 0.0, None)
        centre = mu if null_disparity is None else theta_hat + np.asarray(null_disparity)
        second = var_g + (mu - centre) ** 2  # E[(L - a_G)^2 | G]
        var = second / p
        if target_kind == "overall":
            mean = (counts * v).sum() / n
            v_all = float(max((counts * v**2).sum() / n - mean**2, 0.0))
            cross = var_g + (mu - centre) * (mu - mean)
            var = var + v_all - 2.0 * cross
        elif target_kind == "reference":
            ref = counts * stats.atom_reference
            n_r = ref.sum()
            mu_r = (ref * v).sum() / n_r
            v_r = max((ref * v**2).sum() / n_r - mu_r**2, 0.0)
            p_r = n_r / n
            n_gr, s_gr, s2_gr = sums(ref), sums(ref * v), sums(ref * v**2)
            cross = (s2_gr - (centre + mu_r) * s_gr + centre * mu_r * n_gr) / n / (p * p_r)
            var = var + v_r / p_r - 2.0 * cross
        se = np.sqrt(np.clip(var, 0.0, None) / n)
    return np.where(n_g > 0, se, np.nan)


def run_bootstrap(process, n_resamples, *, batch_size, random_state, n_jobs, statistic=None):
    """Run ``statistic`` (default: the process' suprema) over bootstrap replicates."""
    draw = process.stats.draw()
    if batch_size is None:
        width = max(process.stats.n_atoms, process.stats.n_cells, process.groups.n_groups)
        batch_size = default_batch_size(4 * width)
    return resample(
        process if statistic is None else statistic,
        draw,
        n_resamples,
        batch_size=batch_size,
        random_state=random_state,
        n_jobs=n_jobs,
    )

