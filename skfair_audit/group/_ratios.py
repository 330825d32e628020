r"""Ratio disparities with simultaneous guarantees: four-fifths rule, impact ratios, FDR flags.

The disparity of the group audit is a difference :math:`\epsilon(G) = \mu_G - \theta`. Many
audits are phrased as **ratios** :math:`r(G) = \mu_G / d(G)` instead, with three
denominators:

``"overall"``
    :math:`d = \theta`, the metric on the whole audit sample (fairlearn's ``to_overall``).
``<group name>``
    :math:`d = \mu_R`, the metric of a reference group ``R`` (AIF360's
    ``disparate_impact`` with ``R`` the privileged group).
``"max"``
    :math:`d = \max_{H \in \mathcal C} \mu_H`, the most selected *candidate* group: the
    **impact ratio** of the EEOC's four-fifths rule and of New York City's Local Law 144.
    Candidates are the groups with at least ``min_share`` of the audit sample (the rule lets
    an auditor leave out categories under 2% of the data); with ``families`` the maximum is
    taken within each family (e.g. sex, race/ethnicity and their intersections separately).

Bounds
    One multinomial bootstrap over the atoms of the :class:`AuditSummary` (the engine of
    every group procedure). In replicate :math:`b` the group means enter through their
    stabilised linearisation :math:`m_b(G) = \hat\mu_G + (S_b(G) - \hat\mu_G N_b(G))/n_G`
    (the paper's "multiply by :math:`P_n^b(G)`" form: always finite, even when a small group
    is not drawn). For a fixed denominator (``"overall"``, a reference group) the
    denominator is recomputed in the replicate, jointly with the numerators, and

    .. math::

        T_b(G) = \frac{\big(m_b(G) - \hat\mu_G\big) - \hat r(G)\big(d_b - \hat d\big)}
        {\hat d\, s_G}, \qquad
        s_G = \frac{\mathrm{sd}(L)\,\max(P_n(G), p^*)^{3/2}}{\hat d\,P_n(G)^2\,\sqrt n},

    the replicate of the estimator's exact error :math:`\hat r - r = ((\hat\mu - \mu) -
    r(\hat d - d))/\hat d` (the replicate in the role of the estimate). With
    :math:`c_\pm = Q_{1-\alpha}(\sup_G \pm T_b(G))` (two-sided: the quantile of the larger of
    the two suprema), :math:`r(G) \in [\hat r(G) - c\, s_G, \hat r(G) + c\, s_G]` for every
    group at once, clipped to :math:`[0, \infty)` (and to :math:`[0, 1]` for a candidate's
    impact ratio). The scales are the paper's recommended rescaled ones (global standard
    deviation, ``w0 = inf``, the :math:`s_G / P_n(G)^2` widths of the difference bounds)
    divided by the denominator: CLT widths :math:`c\,\mathrm{sd}(L) / (\hat d \sqrt{n
    P_n(G)})` for groups above :math:`p^*`, wider by :math:`(p^*/P_n(G))^{3/2}` below it, so
    that groups too small for the bootstrap's tails to be accurate neither drive the
    critical value nor lose their coverage. The scales only weight the groups; the coverage
    comes from the bootstrap quantile.

The impact ratio: a data-chosen denominator
    :math:`r(G) = \mu_G / \max_H \mu_H` is not a smooth function of the rates where several
    candidates are at or near the top, and neither taking the observed most selected group
    as a fixed reference nor re-taking the maximum in every replicate is valid there
    (Andrews 2000). The bounds rest instead on the *pairwise* ratios
    :math:`\rho_H(G) = \mu_G / \mu_H`, smooth functions whose bootstrap is regular:

    * :math:`r(G) = \rho_{H^*}(G)` for the truly most selected group :math:`H^*`, and
      :math:`\hat r(G) = \min_H \hat\rho_H(G) \le \hat\rho_{H^*}(G)`, so a lower bound of
      :math:`\rho_{H^*}(G)` centred at :math:`\hat r(G)` holds whenever the pair
      :math:`(G, H^*)` is covered;
    * :math:`r(G) = \min_H \rho_H(G) \le \rho_{\hat H}(G)` and :math:`\hat r(G) =
      \hat\rho_{\hat H}(G)`, so an upper bound holds whenever the pair :math:`(G, \hat H)`
      is covered, with :math:`\hat H` the observed most selected group.

    Both :math:`H^*` and :math:`\hat H` lie, with probability tending to one, among the
    near-maximal candidates :math:`\hat A = \{H : \hat d - \hat\mu_H \le \kappa_n
    (\mathrm{se}_H^2 + \mathrm{se}_{\hat H}^2)^{1/2}\}` (generalised moment selection,
    Andrews & Soares 2010; :math:`\kappa_n = \sqrt{2 \log\log n}`,
    :func:`near_maximum_kappa`). The bootstrap therefore runs the fixed-reference processes
    of all of them,

    .. math::

        T^H_b(G) = \frac{\big(m_b(G) - \hat\mu_G\big)
        - \hat\rho_H(G)\big(m_b(H) - \hat\mu_H\big)}{\hat\mu_H\, s_G},
        \qquad H \in \hat A,

    and (:func:`bounds_from_suprema`) the lower bound of :math:`G` is
    :math:`\min_{H \in \hat A} (\hat\rho_H(G) - c_H s_G)` with :math:`c_H` the quantile of
    :math:`\sup_G T^H_b(G)` — the one that holds if :math:`H` is the most selected group,
    whichever it is — and the upper bound :math:`\hat r(G) + c_+ s_G` with :math:`c_+` the
    quantile of :math:`\max_{H \in \hat A} \sup_G -T^H_b(G)`, which covers whichever group
    the data chose; two-sided, both quantiles are of the larger of the two sides. When one
    candidate is clearly the most selected, :math:`\hat A` is that candidate and this is the
    classical bootstrap of a ratio to a fixed reference. At an exact tie the upper bounds
    are exact (the supremum over the tied references reproduces the selection of
    :math:`\hat H`) and the lower bounds conservative; near a tie both are conservative, and
    so are the two-sided bounds while a runner-up is close enough to be near-maximal now and
    then (given :math:`\hat A = \{\hat H\}`, the audits where the top's rate came out low
    or a runner-up's high are mostly left out, so the fixed-reference bounds over-cover).
    Bounds valid at every gap between the top and the runners-up must over-cover at some
    gaps: the law of :math:`\hat r - r` depends on that gap, which the data cannot tell
    apart at the scale of the noise (Hirano & Porter 2012). An earlier version recentred
    the maximum of the near-maximal candidates' deviations; it overstated the denominator's
    upward error at a near-tie, and its one-sided lower bounds — the ones
    :func:`certify_ratio` uses — covered 65% of the time at 90% (n = 2,000, two runners-up
    one standard error of their gap below the top).
    ``benchmarks/bench_group_ratio_validity.py`` measures the one- and two-sided coverage
    with one most selected cell and with two tied ones, and the earlier version as a
    control.

Certification and flags
    ``certify_ratio(threshold=0.8)`` certifies :math:`r(G) \ge 0.8` for every group whose
    one-sided simultaneous lower bound exceeds 0.8 (family-wise error :math:`\le \alpha`).
    :func:`flag_ratios` flags the groups with :math:`r(G) < r_0` by Benjamini–Hochberg at
    level ``q`` on one-sided z-tests with delta-method (default) or bootstrap standard errors.

Undefined ratios
    A ratio is undefined when its group has no row in the audit sample, when the denominator
    is 0 (a reference group, the overall rate or every candidate with a rate of 0), or when
    the group is below ``min_share`` in a bias audit (listed, excluded as the rule allows).
    Undefined ratios are NaN with the reason in ``reasons`` and in every table — never 0 or
    infinity.

References
----------
Cherian, J. J. and Candès, E. J. (2024). Statistical inference for fairness auditing.
Journal of Machine Learning Research 25(149), 1–49.

Equal Employment Opportunity Commission (1978). Uniform Guidelines on Employee Selection
Procedures, 29 CFR §1607.4(D) (the four-fifths rule).

Andrews, D. W. K. (2000). Inconsistency of the bootstrap when a parameter is on the boundary
of the parameter space. Econometrica 68(2), 399–405.

Andrews, D. W. K. and Soares, G. (2010). Inference for parameters defined by moment
inequalities using generalized moment selection. Econometrica 78(1), 119–157.

Hirano, K. and Porter, J. R. (2012). Impossibility results for nondifferentiable
functionals. Econometrica 80(4), 1769–1790.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
from scipy.stats import false_discovery_control

from .._utils import (
    BOOLEAN,
    PROBABILITY,
    InstanceOf,
    Interval,
    Options,
    data_frame,
    user_stacklevel,
)
from . import _procedures  # noqa: F401 - the built-in procedures are registered first
from ._bootstrap import (
    ReplicateSums,
    compute_scales,
    critical_value,
    normal_pvalues,
    run_bootstrap,
)
from ._protocol import (
    BOUND_SIDES,
    GroupAuditResult,
    ResultTable,
    Verdict,
    _plain,
    labelled_table,
    plot_axes,
)
from ._registry import (
    ALPHA,
    CHERIAN_CANDES,
    POS_LABEL,
    REQUIRED,
    SCALING,
    Parameter,
    Procedure,
    alternative_parameter,
    common_parameters,
    docstring,
    get_procedure,
    make_function,
    register_procedure,
)
from ._summary import ALTERNATIVES

__all__ = [
    "RatioBoundsResult",
    "RatioFlagResult",
    "certify_ratio",
    "flag_ratios",
    "ratio_bounds",
    "summary_flag_ratios",
    "summary_ratio_bounds",
]

#: Default ratio threshold: the EEOC's four-fifths rule.
FOUR_FIFTHS = 0.8

#: Why a ratio is undefined (the ``reasons`` of a result).
REASONS = {
    "empty": "no row of the group in the audit sample",
    "zero_denominator": "the denominator's rate is 0",
    "no_reference": "the reference group has no row in the audit sample",
    "no_candidate": "no group reaches min_share, so there is no most selected group",
    "small": "under min_share of the audit sample: listed, excluded from the impact ratio",
}

RATIO_CONSTRAINTS = {
    "denominator": [InstanceOf((str,), "'max', 'overall' or a group name")],
    "min_share": [Interval("real", 0, 1, closed="left")],
}


def _denominator_words(kind, name):
    return {"overall": "the overall rate", "reference": f"the rate of {name}",
            "max": "the highest rate among the candidate groups"}[kind]


@dataclass(frozen=True, eq=False)
class RatioSetup:
    """Everything the ratio bootstrap needs, derived once from an :class:`AuditSummary`.

    Attributes
    ----------
    kind : {"overall", "reference", "max"}
    denominator_index : ndarray of int, shape (n_groups,)
        Position of the group whose rate is each group's denominator (the reference group,
        or the most selected candidate of the group's family; ``-1`` for ``"overall"`` and
        where there is none).
    families : ndarray of int, shape (n_groups,)
        Family of every group: the maximum of ``"max"`` is taken within each family.
    candidates : ndarray of bool
        Groups that may be the maximum (``"max"``: at least ``min_share`` of the sample).
    covered : ndarray of bool
        Groups whose ratio is defined and enters the supremum.
    n_g, mu : ndarray
        Rows and metric of every group.
    denominators, ratios, scales : ndarray
        :math:`\\hat d(G)`, :math:`\\hat r(G)` and :math:`s_G`.
    reasons : tuple of str
        ``""`` for a defined ratio, else why it is undefined.
    """

    kind: str
    denominator_index: np.ndarray
    families: np.ndarray
    candidates: np.ndarray
    covered: np.ndarray
    n_g: np.ndarray
    mu: np.ndarray
    denominators: np.ndarray
    ratios: np.ndarray
    scales: np.ndarray
    reasons: tuple
    denominator_groups: tuple
    near: np.ndarray = None

    @property
    def references(self) -> np.ndarray:
        """The columns of the lower bounds' side of the bootstrap: for ``"max"`` the
        near-maximal candidates with a positive rate (family by family, in collection
        order), each a possible most selected group; otherwise one column, ``[-1]`` (the
        denominator itself)."""
        if self.kind != "max":
            return np.array([-1])
        near = np.flatnonzero(self.near & (np.nan_to_num(self.mu) > 0))
        return near[np.argsort(self.families[near], kind="stable")]

    @classmethod
    def from_summary(cls, summary, denominator, *, min_share=0.0, p_star=0.01,
                     families=None, exclude_small=False):
        groups = summary.groups
        if groups is None:
            raise ValueError("ratio disparities need a group collection (not a tilt summary).")
        low = summary.metric.bounds[0]
        if not low >= 0:
            raise ValueError(
                f"ratios need a non-negative metric; {summary.metric.name!r} can take "
                f"values down to {low}.")
        n = summary.n
        n_g = summary.sizes.astype(float)
        mu = np.where(n_g > 0, summary.group_values, np.nan)
        k = groups.n_groups
        families = np.zeros(k, np.intp) if families is None else np.asarray(families, np.intp)
        if families.shape != (k,):
            raise ValueError(f"families must give one family per group ({k}).")
        reasons = np.array([""] * k, dtype=object)
        reasons[n_g == 0] = REASONS["empty"]
        if exclude_small:
            reasons[(n_g > 0) & (n_g < min_share * n)] = REASONS["small"]
        candidates = np.zeros(k, bool)
        den_index = np.full(k, -1, dtype=np.intp)
        den = np.full(k, np.nan)
        den_group = np.array([""] * k, dtype=object)
        if denominator == "overall":
            kind = "overall"
            total = summary.stats.moments.sum(axis=(1, 2))
            den[:] = total[1] / total[0]
            den_group[:] = "overall"
        elif denominator == "max":
            kind = "max"
            candidates = (n_g > 0) & (n_g >= min_share * n)
            for f in np.unique(families):
                members = families == f
                pool = candidates & members
                if not pool.any():
                    reasons[members & (reasons == "")] = REASONS["no_candidate"]
                    continue
                j = np.flatnonzero(pool)[np.argmax(mu[pool])]
                den[members] = mu[j]
                den_group[members] = groups.names[j]
                den_index[members] = j
        else:
            kind = "reference"
            try:
                reference = groups.index(denominator)
            except (KeyError, ValueError):
                raise ValueError(
                    f"denominator {denominator!r} is neither 'overall', 'max' nor a group of "
                    "the collection.") from None
            if n_g[reference] == 0:
                reasons[n_g > 0] = REASONS["no_reference"]
            else:
                den[:] = mu[reference]
                den_group[:] = denominator
                den_index[:] = reference
        near = np.zeros(k, bool)
        if kind == "max":
            near = _near_maximum(summary, groups, candidates, families, mu, den, n_g)
        zero = np.isfinite(den) & (den <= 0) & (reasons == "")
        reasons[zero] = REASONS["zero_denominator"]
        covered = reasons == ""
        # the difference engine's rescaled s_G (w0 = inf) in ratio units: CLT widths
        # sd / (d sqrt(n P_n(G))) above p*, inflated by (p* / P_n(G))^{3/2} below it, so that
        # groups under p* do not drive the critical value
        group_scale, _ = compute_scales(summary.stats, groups, kind="rescaled", p_star=p_star,
                                        w0=np.inf, power=1.5)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = np.where(covered, mu / den, np.nan)
            scales = np.where(covered, group_scale / (den * (n_g / n) ** 2 * np.sqrt(n)),
                              np.nan)
        return cls(kind, den_index, families, candidates, covered, n_g, mu, den, ratios,
                   scales, tuple(reasons.tolist()), tuple(den_group.tolist()), near)


def near_maximum_kappa(n):
    r""":math:`\kappa_n = \sqrt{2 \log\log n}` (at least 1), the threshold of the
    near-maximal candidates in standard errors of their gap to the maximum (generalised
    moment selection, Andrews & Soares 2010): it grows without bound, so a group tied with
    the maximum is kept with probability tending to one (:math:`P(|Z| \le \kappa_n)`: 96%
    at :math:`n = 2{,}000`, 97% at :math:`n = 50{,}000`), and slowly, so that runners-up
    clearly below the top stop widening the bounds. The BIC-type :math:`\sqrt{\log n}` keeps a
    tied group more often but over-covers more near a tie
    (``benchmarks/bench_group_ratio_validity.py --controls``)."""
    return float(max(np.sqrt(2.0 * np.log(max(np.log(n), 1.0))), 1.0))


def _near_maximum(summary, groups, candidates, families, mu, den, n_g):
    r"""Candidates within :math:`\kappa_n` standard errors of their gap to their family's
    maximum, :math:`\hat d - \hat\mu_H \le \kappa_n \sqrt{\mathrm{se}_H^2 +
    \mathrm{se}_{\hat H}^2}` with :math:`\hat H` the observed most selected group and
    :math:`\kappa_n` from :func:`near_maximum_kappa` (generalised moment selection, Andrews &
    Soares 2010): the groups that may be the most selected one, given the noise. The gap's
    standard error counts the noise of both rates."""
    cells = summary.stats.moments.sum(axis=2)
    q_g = groups.group_sums(cells[2])
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.clip(q_g / n_g - mu**2, 0.0, None)
        sd = np.where(var > 0, np.sqrt(var), summary.stats.global_sd())
        se = sd / np.sqrt(n_g)
    se_top = np.zeros_like(se)
    for f in np.unique(families):
        pool = candidates & (families == f)
        if pool.any():
            top = np.flatnonzero(pool)[np.argmax(mu[pool])]
            se_top[families == f] = se[top]
    kappa = near_maximum_kappa(summary.n)
    return candidates & (mu >= den - kappa * np.sqrt(se**2 + se_top**2))


@dataclass(frozen=True, eq=False)
class RatioProcess:
    """The bootstrap process of the ratios (a picklable statistic of replicates).

    ``__call__`` returns the bootstrap suprema, ``(size, len(setup.references) + 1)``: the
    lower bounds' side, one column per reference, then the upper bounds' side (module
    docstring); :meth:`replicate_ratios` the replicate ratios for the bootstrap standard
    errors of :func:`flag_ratios`.
    """

    groups: object
    setup: RatioSetup
    n: int

    def replicate_means(self, sums: ReplicateSums) -> np.ndarray:
        """The stabilised replicate means :math:`m_b(G)` (0 for an empty group)."""
        s = self.setup
        n_b = self.groups.group_sums(sums.counts)
        s_b = self.groups.group_sums(sums.sums)
        mu = np.where(s.n_g > 0, s.mu, 0.0)
        return mu + (s_b - mu * n_b) / np.where(s.n_g > 0, s.n_g, 1.0)

    def replicate_ratios(self, sums: ReplicateSums) -> np.ndarray:
        r"""Replicate ratios :math:`\hat r(G) + ((m_b(G) - \hat\mu_G) - \hat r(G)(d_b -
        \hat d)) / \hat d`: the linearised error of :math:`\hat\mu_G / \hat d` with the
        overall rate or the reference group's rate recomputed in the replicate, and for
        ``"max"`` the observed most selected group as the reference (as the delta method
        of :func:`delta_ratio_se` does)."""
        s = self.setup
        m_b = self.replicate_means(sums)
        mu = np.where(s.n_g > 0, s.mu, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            if s.kind == "overall":
                d_b = np.broadcast_to(sums.sums.sum(axis=1)[:, None] / self.n, m_b.shape)
            else:
                d_b = m_b[:, np.maximum(s.denominator_index, 0)]
            return s.ratios + ((m_b - mu) - s.ratios * (d_b - s.denominators)) / s.denominators

    def reference_statistics(self, sums: ReplicateSums) -> np.ndarray:
        r"""``"max"``: the suprema of the fixed-reference ratio processes,

        .. math::

            T^H_b(G) = \frac{\big(m_b(G) - \hat\mu_G\big)
            - \hat\rho_H(G)\big(m_b(H) - \hat\mu_H\big)}{\hat\mu_H\, s_G}, \qquad
            \hat\rho_H(G) = \hat\mu_G / \hat\mu_H,

        with :math:`G` over the covered groups of :math:`H`'s family (:math:`T^H_b(H) = 0`):
        one column :math:`\sup_G T^H_b(G)` per reference :math:`H` of
        :attr:`RatioSetup.references` (the lower bounds' side), then
        :math:`\max_H \sup_G -T^H_b(G)` (the upper bounds' side). A candidate with a rate
        of 0 is no reference: its ratios are infinite, and it is the maximum only when every
        candidate's rate is 0, where no ratio is defined.
        """
        s = self.setup
        m_b = self.replicate_means(sums)
        refs = s.references
        out = np.full((sums.size, refs.size + 1), -np.inf)
        for k, h in enumerate(refs):
            members = np.flatnonzero(s.covered & (s.families == s.families[h]))
            rho = s.mu[members] / s.mu[h]
            t = ((m_b[:, members] - s.mu[members]) - rho * (m_b[:, [h]] - s.mu[h])) \
                / (s.mu[h] * s.scales[members])
            out[:, k] = t.max(axis=1)
            out[:, -1] = np.maximum(out[:, -1], (-t).max(axis=1))
        return out

    def __call__(self, sums: ReplicateSums) -> np.ndarray:
        """Shape ``(size, len(references) + 1)``: the lower bounds' side, one column per
        reference, then the upper bounds' side."""
        s = self.setup
        if not s.covered.any():
            return np.zeros((sums.size, s.references.size + 1))
        if s.kind == "max":
            return self.reference_statistics(sums)
        t = (self.replicate_ratios(sums)[:, s.covered] - s.ratios[s.covered]) \
            / s.scales[s.covered]
        return np.column_stack([t.max(axis=1), (-t).max(axis=1)])


def _setup_and_process(summary, denominator, min_share, p_star, families,
                       exclude_small=False):
    setup = RatioSetup.from_summary(summary, denominator, min_share=min_share,
                                    p_star=p_star, families=families,
                                    exclude_small=exclude_small)
    return setup, RatioProcess(summary.groups, setup, summary.n)


class RatioResult(GroupAuditResult):
    """What the ratio results share: ratios as the protocol's estimates, 1 as the ratio of
    equal rates, undefined ratios from their reasons, and the plot's worst-first order."""

    @property
    def estimates(self) -> np.ndarray:
        """:math:`\\hat r(G)` (the protocol's estimates)."""
        return self.ratios

    @property
    def target(self) -> float:
        """1, the ratio of equal rates."""
        return 1.0

    @property
    def defined(self) -> np.ndarray:
        """Groups whose ratio is defined."""
        return np.array([r == "" for r in self.reasons], dtype=bool)

    def _plot_values(self):
        return 1.0 - self.ratios

    def table(self) -> ResultTable:
        """One row per non-empty group (undefined ratios included, with the reason).

        Returns
        -------
        ResultTable
        """
        return labelled_table(*self._table_columns())

    def to_frame(self):
        """A :class:`pandas.DataFrame` with one row per group.

        Returns
        -------
        pandas.DataFrame
        """
        return data_frame({"group": list(self.names), "size": self.sizes,
                                 "value": self.group_values, "ratio": self.ratios,
                                 **self._frame_columns()}, index="group")

    def describe(self, target_description=None) -> str:
        """What was measured, in one sentence.

        Parameters
        ----------
        target_description : str, optional

        Returns
        -------
        str
        """
        return self._described(target_description)

    def _described(self, target_description):
        return super().describe(target_description)


@dataclass(frozen=True, eq=False, kw_only=True)
class _GroupRatios(RatioResult):
    """The fields every ratio audit of a group collection has (keyword-only, so that each
    result adds its own after them)."""

    names: tuple
    sizes: np.ndarray
    group_values: np.ndarray
    ratios: np.ndarray
    denominator: str
    denominator_groups: tuple
    reasons: tuple
    alternative: str
    metric: str
    n: int
    groups: object
    empty_groups: tuple = ()
    _kind: str = field(default="max", repr=False)


@dataclass(frozen=True, eq=False, kw_only=True)
class RatioBoundsResult(_GroupRatios):
    """Simultaneous confidence bounds on ratio disparities :math:`r(G) = \\mu_G / d(G)`.

    Attributes
    ----------
    names, sizes : tuple of str, ndarray of int
        The groups and their rows in the audit sample, as in :class:`GroupBoundsResult`.
    group_values : ndarray
        :math:`\\hat\\mu_G`.
    ratios : ndarray
        :math:`\\hat r(G)` (NaN when undefined, see ``reasons``).
    lower, upper : ndarray
        Simultaneous bounds (NaN when undefined; ``0`` / ``inf`` on the open side).
    denominators : ndarray
        :math:`\\hat d(G)`.
    denominator_groups : tuple of str
        The group whose rate is each group's denominator (``"overall"`` for the overall rate).
    denominator : str
        ``"overall"``, ``"max"`` or the reference group's name.
    reasons : tuple of str
        ``""`` for a defined ratio, otherwise why it is undefined.
    candidates : ndarray of bool
        Groups eligible as the most selected (``"max"``).
    threshold : float or None
        The ratio threshold of a certification (``certify_ratio``), else None.
    critical_value : float
        The critical value of the upper bounds (``"lower"``: the largest of the lower
        bounds'; see :func:`bounds_from_suprema`).
    bootstrap_distribution : ndarray of shape (n_resamples, n_references + 1)
        The bootstrap suprema: the lower bounds' side, one column per possible most
        selected group (one column for a fixed denominator), then the upper bounds' side.
    scales, alpha, alternative, metric, n, method, groups, empty_groups
        As in :class:`GroupBoundsResult`.
    """

    lower: np.ndarray
    upper: np.ndarray
    denominators: np.ndarray
    candidates: np.ndarray
    scales: np.ndarray
    critical_value: float
    alpha: float
    bootstrap_distribution: np.ndarray
    method: str
    threshold: float | None = None

    procedure = "ratio_bounds"
    interval_description = "simultaneous bounds on the ratio"
    _EMPHASIS = "not certified"

    def __repr__(self):
        return (f"RatioBoundsResult(metric={self.metric!r}, denominator={self.denominator!r}, "
                f"n_groups={len(self.names)}, alternative={self.alternative!r}, "
                f"alpha={self.alpha}, critical_value={self.critical_value:.4g})")

    @property
    def certified(self) -> np.ndarray | None:
        """``lower > threshold`` (None without a threshold)."""
        if self.threshold is None:
            return None
        return self.defined & (self.lower > self.threshold)

    def _gate(self, epsilon0):
        return self.threshold if epsilon0 is None else float(epsilon0)

    def _confidence_bounds(self):
        return self.lower, self.upper

    def _table_columns(self):
        cols = (("group", "group"), ("size", "rows"), ("value", "rate"),
                ("ratio", "ratio"), ("lower", "lower"), ("upper", "upper"),
                ("denominator", "denominator"), ("undefined", "undefined because"))
        rows = tuple(
            (self.names[j], int(self.sizes[j]), float(self.group_values[j]),
             _plain(self.ratios[j]), _plain(self.lower[j]), _plain(self.upper[j]),
             self.denominator_groups[j], self.reasons[j])
            for j in np.flatnonzero(self.active))
        if self.threshold is not None:
            cert = self.certified
            cols += (("certified", f"certified ≥ {self.threshold:g}"),)
            rows = tuple((*r, bool(cert[j])) for r, j in zip(
                rows, np.flatnonzero(self.active), strict=True))
        return cols, rows

    def _frame_columns(self):
        data = {"lower": self.lower, "upper": self.upper,
                "denominator_group": list(self.denominator_groups),
                "denominator_value": self.denominators, "defined": self.defined,
                "reason": list(self.reasons)}
        if self.threshold is not None:
            data["certified"] = self.certified
        return data

    def verdict(self, epsilon0=None) -> Verdict:
        """Descriptive without a threshold; with one (``epsilon0`` here is the ratio
        threshold, e.g. 0.8, defaulting to the audit's own ``threshold``), the groups whose
        ratio is not certified on the requested side fail: ``"lower"`` and ``"two-sided"``
        certify :math:`r(G) > r_0` (lower bound above it), ``"upper"`` :math:`r(G) < r_0`.
        Undefined ratios are never certified.

        Parameters
        ----------
        epsilon0 : float, optional
            The ratio threshold :math:`r_0` (default: the audit's own ``threshold``).

        Returns
        -------
        Verdict
        """
        r0 = self._gate(epsilon0)
        defined = self.defined & self.active
        undefined = int((self.active & ~self.defined).sum())
        note = f" {undefined} ratio(s) undefined (see the table)." if undefined else ""
        if r0 is None:
            below = int(np.sum(defined & (self.upper < 1.0)))
            return Verdict(False, False, "bounds only (no ratio threshold given: no gate)",
                           f"{below} group(s) have a ratio certifiably below 1." + note)
        ok = (self.upper < r0) if self.alternative == "upper" else (self.lower > r0)
        failing = tuple(np.asarray(self.names, dtype=object)[
            self.active & ~(defined & ok)].tolist())
        side = "below" if self.alternative == "upper" else "at least"
        summary = (f"some ratios are not certified {side} {r0:g}" if failing
                   else f"every ratio is certified {side} {r0:g}")
        details = (f"{int(self.active.sum()) - len(failing)} of {int(self.active.sum())} "
                   f"groups have a ratio certified {side} {r0:g}"
                   + (f"; not: {'; '.join(failing)}." if failing else ".") + note)
        return Verdict(bool(failing), True, summary, details, failing)

    def guarantee(self) -> str:
        """The guarantee of simultaneous ratio bounds, in plain words.

        Returns
        -------
        str
        """
        side = BOUND_SIDES[self.alternative]
        words = _denominator_words(self._kind, self.denominator)
        text = (f"The ratio of a group is its {self._metric_words()} divided by {words}. With "
                f"probability at least {1 - self.alpha:.0%} (as the sample grows), the {side} "
                f"of all {int((self.defined & self.active).sum())} defined ratios hold at the "
                "same time")
        if self._kind == "max":
            text += (", the choice of the most selected group included (the bootstrap "
                     "runs over every group that may be the most selected)")
        text += "."
        if self.threshold is not None:
            text += (f" A group is certified when its ratio is shown ≥ {self.threshold:g}; "
                     f"the probability that any certificate is wrong is at most "
                     f"{self.alpha:.0%}.")
        return text

    def key_figures(self) -> dict:
        """Metric, denominator, rows, groups, level, side and critical value.

        Returns
        -------
        dict
        """
        out = {"metric": self.metric, "denominator": self.denominator,
               "audit rows": self.n, "groups": int(self.active.sum()),
               "undefined ratios": int((self.active & ~self.defined).sum()),
               "α (simultaneous)": self.alpha, "bounds": self.alternative,
               "critical value": self.critical_value}
        if self.threshold is not None:
            out["threshold"] = self.threshold
            out["certified"] = int(self.certified.sum())
        return out

    def _described(self, target_description):
        words = target_description or _denominator_words(self._kind, self.denominator)
        return (f"Ratio of the {self._metric_words()} of every group to {words}; audit sample: "
                f"{self.n:,} rows; {int(self.active.sum())} non-empty groups.")

    def plot(self, ax=None, *, max_groups=40, min_size=1, epsilon0=None):
        """Ratios with their simultaneous bounds (matplotlib axes), worst first.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size : int
        epsilon0 : float, optional
            Ratio threshold drawn as a dashed line (default: the audit's own, else 1).

        Returns
        -------
        matplotlib Axes
        """
        order = self.plot_order(max_groups, min_size, epsilon0)
        ax = plot_axes(ax, "a ratio audit", order.size)
        pos = np.arange(order.size)
        est = self.ratios[order]
        lo = np.where(np.isfinite(self.lower[order]), self.lower[order], est)
        hi = np.where(np.isfinite(self.upper[order]), self.upper[order], est)
        ax.errorbar(est, pos, xerr=[est - lo, hi - est], fmt="o", capsize=3)
        r0 = self._gate(epsilon0)
        ax.axvline(1.0 if r0 is None else r0, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(pos, [self.names[j] for j in order])
        ax.invert_yaxis()
        ax.set_xlabel("ratio")
        ax.set_title(f"{self.metric}: {100 * (1 - self.alpha):g}% simultaneous ratio bounds")
        return ax

    def _emphasised(self, epsilon0=None):
        if self._gate(epsilon0) is None:
            return self.active & self.defined & (self.upper < 1.0)
        return super()._emphasised(epsilon0)


def bounds_from_suprema(setup, sups, alpha, alternative):
    r"""Critical values and bounds from the bootstrap suprema of :class:`RatioProcess`.

    For each reference :math:`H` (column :math:`k`), the critical value of the lower
    bounds is the quantile of the supremum its family would have if :math:`H` were the most
    selected group, the other families at their worst reference (and, two-sided, the upper
    side): :math:`c_k = Q_{1-\alpha}(\max(S_k, \max_{k': f(k') \ne f(k)} S_{k'},
    S_\mathrm{up}))`. The lower bound of :math:`G` is
    :math:`\min_k (\hat\rho_{H_k}(G) - c_k s_G)` over its family's references: the truly
    most selected group is one of them, and for it the pair :math:`(G, H^*)` holds with
    :math:`c_{k^*}` (each :math:`c_k` is at least the quantile of the supremum at the true
    references). The upper bound is :math:`\hat r(G) + c_\mathrm{up} s_G` with
    :math:`c_\mathrm{up} = Q_{1-\alpha}(S_\mathrm{up})` (one-sided) or
    :math:`\min_f \max_{k \in f} c_k` (two-sided, at least :math:`c_{k^*}` in every
    family). For a fixed denominator there is one reference and this is
    :math:`c = Q_{1-\alpha}(\sup_G |T_b(G)|)`, :math:`\hat r(G) \pm c s_G`.

    Returns
    -------
    critical_value : float
        The upper bounds' :math:`c_\mathrm{up}` (``"lower"``: the largest :math:`c_k`).
    lower, upper : ndarray
    """
    sups = np.asarray(sups, dtype=float)
    cov = setup.covered
    refs = setup.references
    if not refs.size or not cov.any():  # no ratio is defined
        return 0.0, np.full(cov.shape, np.nan), np.full(cov.shape, np.nan)
    fams = setup.families[refs] if setup.kind == "max" else np.zeros(1, np.intp)
    side_up = sups[:, -1]
    lower = np.where(cov, 0.0, np.nan)
    upper = np.where(cov, np.inf, np.nan)
    c_ref = np.full(refs.size, np.nan)
    if alternative != "upper":
        for k in range(refs.size):
            stat = sups[:, k]
            others = sups[:, :refs.size][:, fams != fams[k]]
            if others.shape[1]:
                stat = np.maximum(stat, others.max(axis=1))
            if alternative == "two-sided":
                stat = np.maximum(stat, side_up)
            c_ref[k] = critical_value(stat, alpha)
        low = np.full(cov.shape, np.inf)
        with np.errstate(invalid="ignore", divide="ignore"):
            for k, h in enumerate(refs):
                members = (setup.families == fams[k]) if h >= 0 else np.ones_like(cov)
                centre = setup.mu / setup.mu[h] if h >= 0 else setup.ratios
                low = np.where(members, np.minimum(low, centre - c_ref[k] * setup.scales), low)
        lower = np.where(cov, np.maximum(low, 0.0), np.nan)
    if alternative == "upper":
        c_up = critical_value(side_up, alpha)
    elif alternative == "two-sided":
        c_up = min(c_ref[fams == f].max() for f in np.unique(fams))
    else:
        c_up = float(np.max(c_ref))
    if alternative != "lower":
        upper = np.where(cov, setup.ratios + c_up * setup.scales, np.nan)
        upper = np.where(cov & setup.candidates, np.minimum(upper, 1.0), upper)
    return float(c_up), lower, upper


def _ratio_bounds(summary, *, denominator, alternative, alpha, threshold, min_share, p_star,
                  families, exclude_small, n_resamples, batch_size, memory_limit,
                  random_state, n_jobs, verbose) -> RatioBoundsResult:
    """The math of :func:`ratio_bounds`, :func:`certify_ratio` and
    :func:`summary_ratio_bounds` (see the module docstring for the method)."""
    setup, process = _setup_and_process(summary, denominator, min_share, p_star, families,
                                        exclude_small)
    sups = run_bootstrap(summary, process, n_resamples, batch_size=batch_size,
                         memory_limit=memory_limit,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    c, lower, upper = bounds_from_suprema(setup, sups, alpha, alternative)
    if not setup.covered.any():
        warnings.warn("no ratio of this audit is defined (see the reasons in the table).",
                      UserWarning, stacklevel=user_stacklevel())
    return RatioBoundsResult(
        names=summary.groups.names, sizes=summary.sizes, group_values=summary.group_values,
        ratios=setup.ratios, lower=lower, upper=upper, denominators=setup.denominators,
        denominator_groups=setup.denominator_groups, denominator=denominator,
        reasons=setup.reasons, candidates=setup.candidates, scales=setup.scales,
        critical_value=c, alpha=alpha, alternative=alternative, metric=summary.metric.name,
        n=summary.n, bootstrap_distribution=sups,
        method=(f"multinomial bootstrap over {summary.stats.n_atoms} atoms ({n_resamples} "
                "resamples) of the ratio process, "
                + (f"{setup.references.size} near-maximal candidate(s) as references"
                   if setup.kind == "max" else
                   f"denominator {denominator} re-estimated in every replicate")),
        groups=summary.groups, threshold=threshold, empty_groups=summary.empty_groups,
        _kind=setup.kind)


@dataclass(frozen=True, eq=False, kw_only=True)
class RatioFlagResult(_GroupRatios):
    """Groups flagged by Benjamini–Hochberg for a ratio below (or above) ``threshold``.

    Attributes
    ----------
    names, sizes, group_values, ratios, denominator, denominator_groups, reasons, metric, n,
    groups, empty_groups
        As in :class:`RatioBoundsResult`.
    threshold : float
        :math:`r_0`.
    alternative : {"less", "greater"}
        Alternative hypothesis :math:`r(G) < r_0` (adverse impact) or :math:`r(G) > r_0`.
    standard_errors, statistics, pvalues, adjusted_pvalues : ndarray
        Undefined ratios get p-value 1 and are never flagged.
    flagged : ndarray of bool
    q : float
    se_method : {"bootstrap", "delta"}
    """

    standard_errors: np.ndarray
    statistics: np.ndarray
    pvalues: np.ndarray
    adjusted_pvalues: np.ndarray
    flagged: np.ndarray
    threshold: float
    q: float
    se_method: str

    procedure = "ratio_flag"
    _EMPHASIS = "flagged"
    interval_description = "±1.96 s.e. (marginal)"

    def _confidence_bounds(self):
        """The flags as intervals on the ratio scale: ``[0, r0)`` (``"less"``) or
        ``(r0, inf)`` (``"greater"``) for a flagged group, ``[0, inf)`` for the others; the
        share of flagged groups whose interval misses is the share of false flags (at most
        ``q`` on average)."""
        claim = {"less": (0.0, self.threshold), "greater": (self.threshold, np.inf)}[
            self.alternative]
        return (np.where(self.flagged, claim[0], 0.0),
                np.where(self.flagged, claim[1], np.inf))

    def __repr__(self):
        return (f"RatioFlagResult(metric={self.metric!r}, denominator={self.denominator!r}, "
                f"threshold={self.threshold}, q={self.q}, "
                f"n_flagged={int(self.flagged.sum())}/{len(self.names)})")

    def is_flagged(self, group) -> bool:
        """Flag of a group given by name or position.

        Parameters
        ----------
        group : str or int

        Returns
        -------
        bool
        """
        return bool(self.flagged[self.groups.index(group)])

    def _table_columns(self):
        cols = (("group", "group"), ("size", "rows"), ("value", "rate"), ("ratio", "ratio"),
                ("se", "std. error"), ("pvalue", "p-value"), ("adjusted_pvalue", "adjusted p"),
                ("flagged", "flagged"), ("undefined", "undefined because"))
        rows = tuple(
            (self.names[j], int(self.sizes[j]), float(self.group_values[j]),
             _plain(self.ratios[j]), _plain(self.standard_errors[j]), float(self.pvalues[j]),
             float(self.adjusted_pvalues[j]), bool(self.flagged[j]), self.reasons[j])
            for j in np.flatnonzero(self.active))
        return cols, rows

    def _frame_columns(self):
        return {"se": self.standard_errors, "statistic": self.statistics,
                "pvalue": self.pvalues, "adjusted_pvalue": self.adjusted_pvalues,
                "flagged": self.flagged, "reason": list(self.reasons)}

    def verdict(self, epsilon0=None) -> Verdict:
        """Fails when at least one group is flagged.

        Parameters
        ----------
        epsilon0 : None
            The threshold is the audit's own; another one is refused.

        Returns
        -------
        Verdict
        """
        if epsilon0 is not None and epsilon0 != self.threshold:
            raise ValueError(f"these flags are for threshold={self.threshold:g}.")
        flagged = tuple(np.asarray(self.names, dtype=object)[self.flagged].tolist())
        return Verdict(bool(flagged), True,
                       "at least one group flagged" if flagged else "no group flagged",
                       f"{len(flagged)} of {int(self.active.sum())} groups flagged"
                       + (": " + "; ".join(flagged) + "." if flagged else "."), flagged)

    def guarantee(self) -> str:
        """The false-discovery-rate guarantee, in plain words.

        Returns
        -------
        str
        """
        claim = {"less": "<", "greater": ">"}[self.alternative]
        words = _denominator_words(self._kind, self.denominator)
        return (f"The ratio of a group is its {self._metric_words()} divided by {words}. A "
                f"group is flagged when the data show ratio {claim} {self.threshold:g}. On "
                f"average at most {self.q:.0%} of the flagged groups are false flags "
                "(Benjamini–Hochberg false discovery rate); unflagged groups are not "
                "certified fair.")

    def key_figures(self) -> dict:
        """Metric, denominator, rows, groups, FDR, threshold and flags.

        Returns
        -------
        dict
        """
        return {"metric": self.metric, "denominator": self.denominator,
                "audit rows": self.n, "groups": int(self.active.sum()), "FDR q": self.q,
                "threshold": self.threshold, "alternative": self.alternative,
                "flagged": int(self.flagged.sum())}

    def plot(self, ax=None, *, max_groups=40, min_size=1):
        """Ratios with ±1.96 s.e. bars (marginal), flagged first.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        max_groups, min_size : int
            At most ``max_groups`` groups (flagged first), of at least ``min_size`` rows.

        Returns
        -------
        matplotlib Axes
        """
        order = self.plot_order(max_groups, min_size)
        ax = plot_axes(ax, "a ratio audit", order.size)
        half = 1.959963984540054 * np.nan_to_num(self.standard_errors[order])
        ax.errorbar(self.ratios[order], np.arange(order.size), xerr=half, fmt="o", capsize=3)
        ax.axvline(self.threshold, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(np.arange(order.size), [self.names[j] for j in order])
        ax.invert_yaxis()
        ax.set_xlabel("ratio")
        ax.set_title(f"{self.metric}: ratio flags at FDR {self.q:g}")
        return ax


def delta_ratio_se(summary, setup, threshold):
    """Delta-method standard errors of :math:`\\hat r(G)`, centred at the null
    :math:`r(G) = r_0` (a score-test variance, never 0 for a small constant group).

    With :math:`a_G = r_0 \\hat d(G)`,

    .. math::

        \\mathrm{se}^2 = \\frac{1}{\\hat d^2}\\Big(\\frac{E[(L - a_G)^2 \\mid G]}{n_G}
        + r_0^2 \\mathrm{Var}(\\hat d) - 2 r_0 \\mathrm{Cov}(\\hat\\mu_G, \\hat d)\\Big),

    where :math:`\\hat d` is the overall mean or a group mean (the reference, or the most
    selected candidate *taken as fixed*: the delta method does not see its selection). For a
    metric bounded in :math:`[a_0, b_0]` the group's second moment is at least the largest
    variance a metric with mean :math:`a_G` can have, :math:`(a_G - a_0)(b_0 - a_G)` (the
    Bernoulli variance of a rate, as in a score test).
    """
    groups, stats = summary.groups, summary.stats
    cells = stats.moments.sum(axis=2)
    n = summary.n
    n_g, s_g, q_g = (groups.group_sums(cells[k]) for k in range(3))
    d = setup.denominators
    a = threshold * d
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = s_g / n_g
        second = q_g / n_g - 2 * a * mu + a**2
        low, high = summary.metric.bounds
        if np.isfinite(low) and np.isfinite(high):
            # at least the largest variance a metric in [low, high] with mean a can have
            # (the Bernoulli a(1 - a) of a rate): a tiny group whose rows all sit at one
            # end must not look more certain than the null allows
            second = np.maximum(second, np.clip((a - low) * (high - a), 0.0, None))
        var = second / n_g
        if setup.kind == "overall":
            total = cells.sum(axis=1)
            m = total[1] / n
            v_d = (total[2] / n - m**2) / n
            cov = (q_g - (a + m) * s_g + a * m * n_g) / n_g / n
        else:
            names = setup.denominator_groups
            v_d = np.full(n_g.size, np.nan)
            cov = np.zeros(n_g.size)
            for h_name in set(names) - {""}:
                h = groups.index(h_name)
                members = np.array([nm == h_name for nm in names])
                in_h = groups.cell_membership[:, h].astype(float)
                n_h, s_h, q_h = n_g[h], s_g[h], q_g[h]
                m_h = s_h / n_h
                v_d[members] = (q_h / n_h - m_h**2) / n_h
                n_gh, s_gh, q_gh = (groups.group_sums(cells[k] * in_h) for k in range(3))
                cov[members] = ((q_gh - (a + m_h) * s_gh + a * m_h * n_gh)
                                / (n_g * n_h))[members]
        var = (var + threshold**2 * v_d - 2 * threshold * cov) / d**2
        return np.where(setup.covered, np.sqrt(np.clip(var, 0.0, None)), np.nan)


def _flag_ratios(summary, *, denominator, threshold, alternative, q, se, min_share, p_star,
                 families, n_resamples, batch_size, memory_limit, random_state, n_jobs,
                 verbose) -> RatioFlagResult:
    """The math of :func:`flag_ratios` and :func:`summary_flag_ratios`."""
    setup, process = _setup_and_process(summary, denominator, min_share, p_star, families)
    if se == "delta":
        std = delta_ratio_se(summary, setup, threshold)
    else:
        reps = run_bootstrap(summary, process.replicate_ratios, n_resamples,
                             batch_size=batch_size,
                             memory_limit=memory_limit, random_state=random_state, n_jobs=n_jobs,
                             verbose=verbose)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            reps = np.where(np.isfinite(reps), reps, np.nan)
            std = np.nanstd(reps, axis=0, ddof=1)
        # a group whose metric is constant has no bootstrap spread of its own: use the
        # null-centred delta-method error there (as flag_groups does)
        std = np.where(setup.covered & ~(std > 0), delta_ratio_se(summary, setup, threshold),
                       std)
    std = np.where(setup.covered, std, np.nan)
    est = setup.ratios
    pvalues, z = normal_pvalues(np.where(setup.covered, est, 0.0), std, threshold,
                                alternative)
    pvalues = np.where(setup.covered, pvalues, 1.0)
    adjusted = false_discovery_control(pvalues, method="bh") if pvalues.size else pvalues
    return RatioFlagResult(
        names=summary.groups.names, sizes=summary.sizes, group_values=summary.group_values,
        ratios=est, standard_errors=std, statistics=np.where(setup.covered, z, np.nan),
        pvalues=pvalues, adjusted_pvalues=adjusted,
        flagged=(adjusted <= q) & setup.covered, denominator=denominator,
        denominator_groups=setup.denominator_groups, reasons=setup.reasons,
        threshold=float(threshold), alternative=alternative, q=q, se_method=se,
        metric=summary.metric.name, n=summary.n, groups=summary.groups,
        empty_groups=summary.empty_groups, _kind=setup.kind)


# -- the declarations: one per procedure (skfair_audit.group._registry) --------------------------
RATIO_METRIC = Parameter(
    "metric", "selection_rate", None, "str, Metric or callable",
    "See :func:`~skfair_audit.group.get_metric`; the metric must be non-negative (default\n"
    "the selection rate).")
DENOMINATOR = Parameter(
    "denominator", "max", RATIO_CONSTRAINTS["denominator"], '{"max", "overall"} or str',
    "The denominator :math:`d(G)`: ``\"max\"`` the highest rate among the candidate groups\n"
    "(the impact ratio; the bootstrap runs over every group that may be the most selected),\n"
    "``\"overall\"`` the overall rate, or the name of a reference group.")
MIN_SHARE = Parameter(
    "min_share", 0.0, RATIO_CONSTRAINTS["min_share"], "float",
    "``\"max\"``: share of the audit sample a group needs to be a candidate maximum.")
# the difference bounds' p_star (same default and constraint), documented for ratios
RATIO_P_STAR = replace(
    next(p for p in SCALING if p.name == "p_star"),
    doc="Share under which a group's bounds widen by :math:`(p^*/P_n(G))^{3/2}` beyond the "
        "CLT width (the rescaled scales of :func:`certify_bounds`).")
FAMILIES = Parameter(
    "families", None, None, "array-like of int, optional",
    "``\"max\"``: family of every group of the collection, in its order (the maximum is\n"
    "taken per family, e.g. sex, race and their intersections separately); default one\n"
    "family.")
RATIO_THRESHOLD = Parameter(
    "threshold", FOUR_FIFTHS, [Interval("real", 0, None)], "float",
    ":math:`r_0` (0.8: the EEOC's four-fifths rule). In\n"
    ":class:`~skfair_audit.group.GroupDisparityAuditor` and on the command line it is\n"
    "``epsilon0`` (their ``threshold`` turns scores into labels).",
    supplied_by="epsilon0")
RATIO_BOOTSTRAP = common_parameters("bootstrap")
#: Returns sections and references of the ratio procedures.
_REFERENCES = (CHERIAN_CANDES + "\n\nEqual Employment Opportunity Commission (1978). Uniform "
               "Guidelines on Employee Selection\nProcedures, 29 CFR §1607.4(D) (the "
               "four-fifths rule).")
_METHOD = ("See :mod:`skfair_audit.group._ratios` for the method (the bootstrap of the ratio "
           "process, the\ndata-chosen denominator, undefined ratios).")

#: The rows of the examples: group c is selected at 0.3, a and b at 0.5.
_EXAMPLE_ROWS = """
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> g = rng.choice(["a", "b", "c"], 6000)
>>> y_pred = (rng.random(6000) < np.where(g == "c", 0.3, 0.5)).astype(int)
"""


def _ratio_procedure(name, summary, result, compute, own, description, returns, example,
                     **more):
    """The declaration of a ratio procedure: its own parameters ``own`` between the
    denominator and the shared ones, the shared references, and an example on
    :data:`_EXAMPLE_ROWS`."""
    return Procedure(
        name, name, summary, result,
        (RATIO_METRIC, DENOMINATOR, *own, MIN_SHARE, RATIO_P_STAR, FAMILIES, POS_LABEL,
         *RATIO_BOOTSTRAP),
        compute=compute, description=inspect.cleandoc(description) + "\n\n" + _METHOD,
        returns=returns, references=_REFERENCES,
        examples={"function": _EXAMPLE_ROWS + inspect.cleandoc(example)}, **more)


ratio_bounds = register_procedure(_ratio_procedure(
    "ratio_bounds", "Confidence bounds on every group's ratio disparity, valid simultaneously.",
    RatioBoundsResult, partial(_ratio_bounds, threshold=None, exclude_small=False),
    (alternative_parameter(ALTERNATIVES["bounds"], "two-sided", "Which bounds to report."),
     ALPHA),
    r"""
    :math:`r(G) = \mu_G / d(G)` with :math:`d` the overall rate (``"overall"``), a reference
    group's rate (its name) or the highest rate among the groups with at least ``min_share``
    of the audit sample (``"max"``: the impact ratio, the bootstrap running over every
    group that may be the most selected). With :math:`c = Q_{1-\alpha}(\sup_G |T_b(G)|)`,
    :math:`r(G) \in [\hat r(G) - c s_G, \hat r(G) + c s_G]` for every group at once.
    """,
    "Simultaneous bounds on the ratios, undefined ratios with their reason.",
    """
    >>> res = ratio_bounds(y_pred, y_pred, {"g": g}, n_resamples=200, random_state=0)
    >>> res.denominator_groups
    ('g=b', 'g=b', 'g=b')
    >>> bool(res.upper[2] < 0.8)
    True
    """))

certify_ratio = register_procedure(_ratio_procedure(
    "certify_ratio",
    r"Certify :math:`r(G) > r_0` (default the four-fifths rule) for every group at once.",
    RatioBoundsResult, partial(_ratio_bounds, alternative="lower", exclude_small=False),
    (RATIO_THRESHOLD, ALPHA),
    """
    One-sided simultaneous lower bounds (:func:`ratio_bounds` with ``alternative="lower"``):
    a group is certified when its lower bound exceeds ``threshold``; the probability that
    any certificate is wrong is at most ``alpha`` (as the sample grows).
    """,
    "With ``threshold`` set: ``certified``, and ``verdict()`` fails when a group is not "
    "certified.",
    """
    >>> res = certify_ratio(y_pred, y_pred, {"g": g}, n_resamples=200, random_state=0)
    >>> res.verdict().groups
    ('g=c',)
    """))

flag_ratios = register_procedure(_ratio_procedure(
    "flag_ratios",
    "Flag the groups whose ratio is below ``threshold``, controlling the FDR at ``q``.",
    RatioFlagResult, _flag_ratios,
    (RATIO_THRESHOLD,
     alternative_parameter(("less", "greater"), "less",
                           r"Alternative hypothesis :math:`r(G) < r_0` (adverse impact) or "
                           r":math:`r(G) > r_0`."),
     Parameter("q", 0.1, [PROBABILITY], "float", "False discovery rate."),
     Parameter("se", "delta", [Options(("bootstrap", "delta"))], '{"bootstrap", "delta"}',
               "Standard errors: the null-centred delta method (default, deterministic,\n"
               "see :func:`delta_ratio_se`) or the standard deviation of the replicate\n"
               "ratios (the bootstrap controls are used only then).")),
    r"""
    Per group, :math:`z = (\hat r(G) - r_0)/\mathrm{se}(G)` and the one-sided p-value of
    :math:`H_0: r(G) \ge r_0` (``"less"``: adverse impact; ``"greater"`` mirrors it), then
    Benjamini–Hochberg at level ``q``. ``se="delta"`` (default, deterministic, the one
    ``benchmarks/bench_group_ratio_validity.py`` measures) is the null-centred delta method
    (:func:`delta_ratio_se`), which takes the most selected group as fixed;
    ``"bootstrap"`` is the standard deviation of the replicate ratios, whose denominator is
    re-estimated in every replicate (for ``"max"``: the most selected group's rate, that
    group taken as fixed, as the delta method does).
    """,
    "P-values, Benjamini–Hochberg adjusted p-values and flags; undefined ratios get p-value "
    "1 and are never flagged.",
    """
    >>> res = flag_ratios(y_pred, y_pred, {"g": g}, se="bootstrap", n_resamples=200,
    ...                   random_state=0)
    >>> [n for n, f in zip(res.names, res.flagged) if f]
    ['g=c']
    """,
    bootstrap=False, partitioned_fixed={"se": "delta"}))
RATIO_BOUNDS, CERTIFY_RATIO, FLAG_RATIOS = (
    get_procedure(name) for name in ("ratio_bounds", "certify_ratio", "flag_ratios"))


def _on_summary(name, math, summary, parameters, description, returns):
    """A public function of an :class:`AuditSummary` with declared ``parameters`` (the
    declarations' options, and the extra ones of the summary function)."""
    return make_function(
        name, positional=["summary"], parameters=parameters, body=math,
        module=__name__, returns=returns.__name__,
        doc=docstring(summary, description=description,
                      parameters=(Parameter("summary", REQUIRED, None, "AuditSummary",
                                            "Its target is not used: the denominator is "
                                            "``denominator``."), *parameters),
                      returns=(returns.__name__, "As the function's.")))


def _after(parameters, name, *extra):
    """``parameters`` with ``extra`` inserted after the one named ``name``."""
    cut = next(i + 1 for i, p in enumerate(parameters) if p.name == name)
    return (*parameters[:cut], *extra, *parameters[cut:])


summary_ratio_bounds = _on_summary(
    "summary_ratio_bounds", _ratio_bounds,
    "Simultaneous bounds on the ratio of every group of an :class:`AuditSummary`.",
    _after(_after(RATIO_BOUNDS.options, "alpha",
                  Parameter("threshold", None, [None, Interval("real", 0, None)],
                            "float, optional", "Ratio threshold of a certification.")),
           "families",
           Parameter("exclude_small", False, [BOOLEAN], "bool",
                     "Groups under ``min_share`` get no ratio (reason given), as Local Law "
                     "144 allows.")),
    "The implementation of :func:`ratio_bounds` (``AuditSummary.ratio_bounds``) and\n"
    ":func:`certify_ratio` (``threshold`` set, ``alternative=\"lower\"``), with the options of\n"
    "a bias audit (``exclude_small``).",
    RatioBoundsResult)
summary_flag_ratios = _on_summary(
    "summary_flag_ratios", _flag_ratios,
    "Benjamini–Hochberg flags of ratios on an :class:`AuditSummary` (see :func:`flag_ratios`).",
    FLAG_RATIOS.options,
    "The same as ``AuditSummary.flag_ratios`` (the summary as the first argument).",
    RatioFlagResult)

#: The generated functions' examples, collected by ``pytest --doctest-modules``.
__test__ = {f.__name__: f for f in (ratio_bounds, certify_ratio, flag_ratios)}
