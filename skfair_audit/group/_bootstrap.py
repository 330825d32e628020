"""The bootstrap engine of the group audits, on the atoms of an audit summary.

Notation (Cherian & Candès 2024). The audit sample is the :math:`n` rows where the metric's
condition holds (e.g. the negatives for a false positive rate): *every* quantity below —
:math:`n`, :math:`P_n(G)`, the bootstrap multinomial — is defined on this restricted sample,
as in the paper. For a group :math:`G`, with target :math:`\\hat\\theta` and a bootstrap
replicate :math:`P_n^b` (weights :math:`w`, :math:`\\sum_i w_i = n`),

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
multinomial counts over the atoms, drawn by :func:`skfair_audit._resampling.resample`. Every
statistic (the disparity process, the replicate estimates, the RKHS suprema) only sees a
replicate through its per-cell sums :math:`(N^b_c, S^b_c, \\hat\\theta_b)`
(:class:`ReplicateSums`), so the same statistics also run on the Poisson replicates that the
partitions of a large trail send when the metric is continuous
(:mod:`skfair_audit.scale`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _stats

from .._progress import track
from .._resampling import (
    DEFAULT_MEMORY_LIMIT,
    MultinomialCounts,
    default_batch_size,
    replicates_per_batch,
    resample,
)
from ._intervals import max_subarray


class DegenerateBootstrapWarning(UserWarning):
    """The bootstrap distribution is degenerate (constant metric, one-row groups ...).

    Raised as a warning (never silently ignored) when a bound or p-value cannot carry its
    usual guarantee: the metric is constant on the audit sample (critical value 0), a group
    has a single row (no within-group variance) or a zero standard error.
    """


@dataclass(frozen=True, eq=False)
class ReplicateSums:
    """What a statistic sees of a batch of bootstrap replicates.

    Attributes
    ----------
    counts, sums : ndarray of shape (size, n_cells)
        :math:`N^b_c = \\sum_{i \\in c} w_i` and :math:`S^b_c = \\sum_{i \\in c} w_i L_i`
        (weights normalised to total mass :math:`n`).
    theta : ndarray of shape (size,)
        The target re-estimated in each replicate.
    """

    counts: np.ndarray
    sums: np.ndarray
    theta: np.ndarray

    @property
    def size(self) -> int:
        return self.counts.shape[0]


def replicate_targets(target_kind, theta_hat, sums, n, reference=None):
    """The target re-estimated in each replicate, from its per-cell weighted sums ``sums``
    (total mass ``n``) or, for a reference group, its ``(rows, sum)`` in each replicate."""
    if target_kind == "constant":
        return np.full(sums.shape[0], float(theta_hat))
    if target_kind == "overall":
        return sums.sum(axis=1) / n
    size, total = reference
    with np.errstate(invalid="ignore", divide="ignore"):
        # a replicate without any reference row keeps the observed target
        return np.where(size > 0, total / size, theta_hat)


@dataclass(frozen=True, eq=False)
class SufficientStatistics:
    """Rows of the audit sample compressed to atoms ``(cell, in_reference, value, count)``.

    Attributes
    ----------
    n_cells : int
    atom_cell, atom_reference, atom_value, atom_count : ndarray of shape (n_atoms,)
        Atoms sorted by (cell, reference, value). Empty when only the moments are kept (a
        continuous metric on a partitioned trail: there are about as many atoms as rows).
    moments : ndarray of shape (3, n_cells, 2)
        Per (cell, in_reference): rows, :math:`\\sum L` and :math:`\\sum L^2`.
    """

    n_cells: int
    atom_cell: np.ndarray
    atom_reference: np.ndarray
    atom_value: np.ndarray
    atom_count: np.ndarray
    moments: np.ndarray

    @classmethod
    def from_atoms(cls, atom_cell, atom_reference, atom_value, atom_count, n_cells):
        """Atoms already sorted by (cell, reference, value), with their counts."""
        atom_cell = np.asarray(atom_cell, dtype=np.intp)
        atom_reference = np.asarray(atom_reference, dtype=bool)
        atom_value = np.asarray(atom_value, dtype=float)
        atom_count = np.asarray(atom_count, dtype=np.int64)
        slot = atom_cell * 2 + atom_reference
        weights = atom_count.astype(float)
        moments = np.stack([
            np.bincount(slot, weights, minlength=2 * n_cells),
            np.bincount(slot, weights * atom_value, minlength=2 * n_cells),
            np.bincount(slot, weights * atom_value**2, minlength=2 * n_cells),
        ]).reshape(3, n_cells, 2)
        return cls(int(n_cells), atom_cell, atom_reference, atom_value, atom_count, moments)

    @classmethod
    def from_rows(cls, cell_of_row, values, n_cells, reference=None):
        """Atoms of rows given by their cell, value of :math:`L` and reference membership."""
        cell_of_row = np.asarray(cell_of_row, dtype=np.int64)
        values = np.asarray(values, dtype=float)
        ref = np.zeros(values.size, dtype=np.int64) if reference is None else (
            np.asarray(reference).astype(np.int64))
        levels, value_code = np.unique(values, return_inverse=True)
        key = (cell_of_row * 2 + ref) * levels.size + value_code.ravel()
        keys, counts = np.unique(key, return_counts=True)
        cell_ref, value_code = np.divmod(keys, levels.size)
        atom_cell, atom_reference = np.divmod(cell_ref, 2)
        return cls.from_atoms(atom_cell, atom_reference.astype(bool), levels[value_code],
                              counts, n_cells)

    @classmethod
    def from_moments(cls, moments):
        """No atoms: only per-(cell, reference) rows, sums and sums of squares."""
        moments = np.asarray(moments, dtype=float)
        empty = np.zeros(0)
        return cls(moments.shape[1], empty.astype(np.intp), empty.astype(bool), empty,
                   empty.astype(np.int64), moments)

    @property
    def has_atoms(self) -> bool:
        return self.atom_count.size > 0

    @property
    def n(self) -> int:
        return int(round(self.moments[0].sum()))

    @property
    def n_atoms(self) -> int:
        return self.atom_count.size

    def draw(self) -> MultinomialCounts:
        """Efron's bootstrap through the sufficient statistics."""
        return MultinomialCounts(self.atom_count / self.n, self.n)

    def cell_sums(self, atom_weights) -> np.ndarray:
        """Per-cell sums ``(..., n_cells)`` of per-atom quantities ``(..., n_atoms)``."""
        atom_weights = np.asarray(atom_weights, dtype=float)
        present, starts = np.unique(self.atom_cell, return_index=True)
        out = np.zeros((*atom_weights.shape[:-1], self.n_cells))
        out[..., present] = np.add.reduceat(atom_weights, starts, axis=-1)
        return out

    def observed_group_sums(self, groups, power=1):
        """Observed ``(sum 1_G, sum L^power 1_G)`` over the audit sample, per group."""
        cells = self.moments.sum(axis=2)
        return groups.group_sums(cells[0]), groups.group_sums(cells[power])

    def global_sd(self) -> float:
        """Standard deviation of :math:`L` over the audit sample."""
        if self.has_atoms:
            counts = self.atom_count.astype(float)
            mean = (counts * self.atom_value).sum() / counts.sum()
            return float(np.sqrt(max((counts * (self.atom_value - mean) ** 2).sum()
                                     / counts.sum(), 0.0)))
        rows, total, squares = self.moments.sum(axis=(1, 2))
        mean = total / rows
        return float(np.sqrt(max(squares / rows - mean**2, 0.0)))

    @property
    def replicate_sums_bytes(self) -> int:
        """Working set of one replicate's :meth:`replicate_sums`, in bytes: the int64 atom
        counts drawn, their float copy and weighted copy, and the two per-cell sums with
        their ``reduceat`` temporaries (the Poisson replicates' per-cell sums cost less)."""
        return 8 * (3 * self.n_atoms + 4 * self.n_cells)

    def replicate_sums(self, counts, target_kind, theta_hat) -> ReplicateSums:
        """:class:`ReplicateSums` of multinomial atom counts ``(size, n_atoms)``."""
        counts = np.atleast_2d(np.asarray(counts, dtype=float))
        n_c = self.cell_sums(counts)
        s_c = self.cell_sums(counts * self.atom_value)
        reference = None
        if target_kind == "reference":
            ref = self.atom_reference.astype(float)
            reference = (counts @ ref, counts @ (self.atom_value * ref))
        return ReplicateSums(n_c, s_c, replicate_targets(target_kind, theta_hat, s_c, self.n,
                                                         reference))


@dataclass(frozen=True, eq=False)
class PoissonReplicates:
    """Per-cell sums of Poisson(1) row weights, sent by the partitions of a large trail.

    Used when the metric is continuous (about one atom per row), so that the atoms are not
    shipped: partition :math:`p` sends :math:`\\sum_{r \\in c} w_{rb}` and
    :math:`\\sum_{r \\in c} w_{rb} L_r` for every cell and replicate
    (:mod:`skfair_audit.scale`).

    Attributes
    ----------
    weights : ndarray of int64, shape (n_resamples, n_cells)
    weighted : ndarray of float, shape (n_resamples, n_cells)
    reference_cells : ndarray of bool, shape (n_cells,)
        Cells of the reference group (all False without a reference target).
    """

    weights: np.ndarray
    weighted: np.ndarray
    reference_cells: np.ndarray

    @property
    def n_resamples(self) -> int:
        return self.weights.shape[0]

    def batch(self, start, stop, stats, target_kind, theta_hat) -> ReplicateSums:
        """Replicates ``start .. stop - 1``, each normalised to total mass ``n``."""
        n = stats.n
        counts = self.weights[start:stop].astype(float)
        sums = self.weighted[start:stop].astype(float)
        total = counts.sum(axis=1, keepdims=True)
        empty = total[:, 0] <= 0
        if empty.any():  # no weight at all (probability e^{-n}): the observed sample
            observed = stats.moments.sum(axis=2)
            counts[empty], sums[empty], total[empty] = observed[0], observed[1], n
        counts *= n / total
        sums *= n / total
        reference = None
        if target_kind == "reference":
            reference = (counts[:, self.reference_cells].sum(axis=1),
                         sums[:, self.reference_cells].sum(axis=1))
        return ReplicateSums(counts, sums, replicate_targets(target_kind, theta_hat, sums, n,
                                                             reference))


@dataclass(frozen=True, eq=False)
class _OnAtoms:
    """A statistic of :class:`ReplicateSums` made a statistic of atom counts (picklable)."""

    statistic: object
    stats: SufficientStatistics
    target_kind: str
    theta_hat: float

    def __call__(self, counts):
        return self.statistic(self.stats.replicate_sums(counts, self.target_kind,
                                                        self.theta_hat))


def disparity_cost(stats, groups):
    """``(bytes_per_replicate, batch_width, fixed_bytes)`` of a statistic of the per-group
    sums.

    Bytes: the replicate sums (:attr:`SufficientStatistics.replicate_sums_bytes`) and six
    float arrays over the groups (their sizes and sums, the centred sums, the process, its
    scaled and negated copies). Width: four floats over the widest of atoms, cells and groups
    (the layout of the published results). Fixed: the float copy of a dense cell-to-group
    membership matrix that each evaluation multiplies by (none for interval and box
    layouts, which take prefix sums). The default of :func:`run_bootstrap`.
    """
    n_groups = 0 if groups is None else groups.n_groups
    dense = groups is not None and groups.layout is None
    return (stats.replicate_sums_bytes + 8 * 6 * n_groups,
            4 * max(stats.n_atoms, stats.n_cells, n_groups),
            8 * stats.n_cells * n_groups if dense else 0)


def run_bootstrap(summary, statistic, n_resamples, *, batch_size=None,
                  memory_limit=DEFAULT_MEMORY_LIMIT, random_state=None, n_jobs=None,
                  verbose=0):
    """The one bootstrap engine: ``statistic`` (of :class:`ReplicateSums`) over replicates.

    With atoms, Efron's bootstrap as multinomial counts over the atoms
    (:func:`skfair_audit._resampling.resample`: batches seeded from ``random_state``,
    identical for any ``n_jobs`` and any ``memory_limit``). Without atoms (a continuous
    metric on a partitioned trail), the Poisson replicates computed by the partitions, in
    order. ``verbose`` shows a progress bar over the replicates (it never changes the result).

    The statistic declares ``replicate_cost(stats) -> (bytes_per_replicate, batch_width,
    fixed_bytes)`` (the memory rule of :mod:`skfair_audit._resampling`); without it,
    :func:`disparity_cost`. Replicates are
    evaluated in chunks that fit ``memory_limit``; the results do not depend on it.

    Returns
    -------
    ndarray
        One entry (first axis) per replicate.
    """
    stats = summary.stats
    if summary.replicates is None and not stats.has_atoms:
        raise ValueError(
            "this summary has neither atoms nor Poisson replicates (a continuous metric "
            "summarised without n_resamples): the bootstrap needs summarize_trail(..., "
            "n_resamples=B)."
        )
    cost = getattr(statistic, "replicate_cost", None)
    per_replicate, width, fixed = (disparity_cost(stats, getattr(summary, "groups", None))
                                   if cost is None else cost(stats))
    if summary.replicates is not None:
        if n_resamples is not None and n_resamples != summary.replicates.n_resamples:
            raise ValueError(
                f"this summary carries {summary.replicates.n_resamples} Poisson replicates "
                f"(computed by the partitions); n_resamples={n_resamples} cannot change them."
            )
        # No random stream: the chunks only bound the memory.
        total = summary.replicates.n_resamples
        step = min(default_batch_size(4 * max(stats.n_cells, 1)) if batch_size is None
                   else batch_size, replicates_per_batch(per_replicate, total, memory_limit,
                                                         fixed_bytes=fixed))
        parts = (np.asarray(statistic(summary.replicates.batch(
            start, start + step, stats, summary.target_kind, summary.theta_hat)))
            for start in range(0, total, step))
        return np.concatenate(list(track(parts, total, "bootstrap", unit="resample",
                                         verbose=verbose, weight=len)), axis=0)
    return resample(_OnAtoms(statistic, stats, summary.target_kind, summary.theta_hat),
                    stats.draw(), n_resamples, batch_size=batch_size,
                    memory_limit=memory_limit, bytes_per_replicate=per_replicate,
                    batch_width=width, fixed_bytes=fixed, random_state=random_state,
                    n_jobs=n_jobs, verbose=verbose)


@dataclass(frozen=True, eq=False)
class DisparityProcess:
    """Bootstrap process of the group disparities (a picklable statistic of replicates).

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
        object.__setattr__(self, "_observed", self.stats.observed_group_sums(self.groups))

    def replicate_cost(self, stats):
        """``(bytes_per_replicate, batch_width, fixed_bytes)``: :func:`disparity_cost`."""
        return disparity_cost(stats, self.groups)

    def _sums(self, replicates):
        if isinstance(replicates, ReplicateSums):
            return replicates
        return self.stats.replicate_sums(replicates, self.target_kind, self.theta_hat)

    def group_statistics(self, replicates, epsilon=0.0):
        """:math:`T_b(G)` for every replicate and group, shape ``(size, n_groups)``.

        ``replicates`` is a :class:`ReplicateSums` or multinomial atom counts.
        """
        sums = self._sums(replicates)
        return self._from_cells(sums.counts, sums.sums, sums.theta, epsilon,
                                self.groups.group_sums)

    def _from_cells(self, n_c, s_c, theta_b, epsilon, aggregate, observed=None):
        n = self.stats.n
        n_b, s_b = aggregate(n_c), aggregate(s_c)
        n_0, s_0 = self._observed if observed is None else observed
        centred_b = s_b - theta_b[:, None] * n_b
        centred_0 = s_0 - self.theta_hat * n_0
        if self.boolean:
            return (centred_b - centred_0 - epsilon * (n_b - n_0)) / n
        return (centred_b * n_0 - centred_0 * n_b) / n**2

    def replicate_estimates(self, replicates):
        """:math:`\\hat\\epsilon_b(G)` per replicate (NaN where the group is not drawn)."""
        sums = self._sums(replicates)
        n_b, s_b = self.groups.group_sums(sums.counts), self.groups.group_sums(sums.sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_b > 0, s_b / n_b, np.nan) - sums.theta[:, None]

    def __call__(self, replicates):
        """``(size, 2)``: :math:`\\sup_G T_b(G)/s_G` at ``epsilons[0]`` and
        :math:`\\sup_G -T_b(G)/s_G` at ``epsilons[1]``."""
        sums = self._sums(replicates)
        if self.kadane:
            return self._kadane(sums)
        out = np.zeros((sums.size, 2))
        if not np.any(self.active):
            return out
        scales = self.scales[self.active]
        if self.epsilons[0] == self.epsilons[1]:
            # Bounds: one process, both tails (the group sums dominate the cost).
            t = self._from_cells(sums.counts, sums.sums, sums.theta, self.epsilons[0],
                                 self.groups.group_sums)
            scaled = t[:, self.active] / scales
            out[:, 0], out[:, 1] = scaled.max(axis=1), (-scaled).max(axis=1)
            return out
        for k, (eps, sign) in enumerate(zip(self.epsilons, (1.0, -1.0), strict=True)):
            t = self._from_cells(sums.counts, sums.sums, sums.theta, eps,
                                 self.groups.group_sums)
            out[:, k] = (sign * t[:, self.active] / scales).max(axis=1)
        return out

    def _kadane(self, sums):
        layout = self.groups.layout
        m = layout.n_bins
        cells = self.stats.moments.sum(axis=2)
        bins0 = (cells[0][:m], cells[1][:m])
        out = np.empty((sums.size, 2))
        for k, (eps, sign) in enumerate(zip(self.epsilons, (1.0, -1.0), strict=True)):
            per_bin = self._from_cells(sums.counts[:, :m], sums.sums[:, :m], sums.theta, eps,
                                       lambda v: v, observed=bins0)
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
    gives :math:`s_G = 1`. ``w0 = inf`` uses the global standard deviation ``sd``. The within
    group variance is clipped at 0 (rounding can make it slightly negative).

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


def compute_scales(stats, groups, *, kind, p_star, w0, power):
    """Scales :math:`s_G` (:func:`group_scales`) from the sufficient statistics.

    Returns ``(scales, degenerate)``; ``degenerate`` is True when :math:`L` is constant on
    the audit sample (the global standard deviation is then replaced by 1).
    """
    n_g, s_g = stats.observed_group_sums(groups)
    _, s2_g = stats.observed_group_sums(groups, power=2)
    sd = stats.global_sd()
    degenerate = sd == 0.0
    scales = group_scales(n_g, s_g, s2_g, stats.n, 1.0 if degenerate else sd, kind=kind,
                          p_star=p_star, w0=w0, power=power)
    return scales, degenerate


def disparity_range(metric_bounds, target_kind, theta_hat):
    """The values ε(G) = E[L | G] − θ can take, from the metric's domain [a, b].

    Intersecting a confidence set with the parameter space keeps its coverage: the bounds of a
    tiny group (valid, but ``c s_G / P_n(G)²`` wide) are clipped to this range, e.g. [−1, 1]
    for a rate, or [a − θ, b − θ] for a known target θ.
    """
    low, high = metric_bounds
    if target_kind == "constant":
        return low - theta_hat, high - theta_hat
    return low - high, high - low


def simultaneous_bounds(estimates, scales, frequencies, critical, alternative, value_range):
    """:math:`\\hat\\epsilon(G) \\mp c\\, s_G / P_n(G)^2`, clipped to ``value_range``, with
    the side that ``alternative`` does not report open (``∓inf``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        width = critical * scales / frequencies**2
    lower = np.maximum(estimates - width, value_range[0])
    upper = np.minimum(estimates + width, value_range[1])
    if alternative == "lower":
        upper = np.full_like(upper, np.inf)
    elif alternative == "upper":
        lower = np.full_like(lower, -np.inf)
    return lower, upper


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
    Only the per-(cell, reference) moments of the summary are needed.
    """
    n = stats.n
    cells = stats.moments.sum(axis=2)
    n_g, s_g, s2_g = (groups.group_sums(cells[k]) for k in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = n_g / n
        mu = s_g / n_g
        var_g = np.clip(s2_g / n_g - mu**2, 0.0, None)
        centre = mu if null_disparity is None else theta_hat + np.asarray(null_disparity)
        second = var_g + (mu - centre) ** 2  # E[(L - a_G)^2 | G]
        var = second / p
        if target_kind == "overall":
            rows, total, squares = cells.sum(axis=1)
            mean = total / n
            v_all = float(max(squares / n - mean**2, 0.0))
            cross = var_g + (mu - centre) * (mu - mean)
            var = var + v_all - 2.0 * cross
        elif target_kind == "reference":
            ref = stats.moments[:, :, 1]
            n_r, t_r, q_r = ref.sum(axis=1)
            mu_r = t_r / n_r
            v_r = max(q_r / n_r - mu_r**2, 0.0)
            p_r = n_r / n
            n_gr, s_gr, s2_gr = (groups.group_sums(ref[k]) for k in range(3))
            cross = (s2_gr - (centre + mu_r) * s_gr + centre * mu_r * n_gr) / n / (p * p_r)
            var = var + v_r / p_r - 2.0 * cross
        se = np.sqrt(np.clip(var, 0.0, None) / n)
    return np.where(n_g > 0, se, np.nan)
