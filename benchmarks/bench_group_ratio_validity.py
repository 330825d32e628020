"""Validity of the ratio audits: simultaneous coverage of ratio bounds, FDR of ratio flags.

Usage::

    nice -n 10 python benchmarks/bench_group_ratio_validity.py [--reps 1000]
        [--resamples 1000] [--sizes 2000 10000 50000] [--n-jobs 2] [--seed 20261201]

Design (exact truth from the population). 60 intersections: the cells of attributes A (5
levels) x B (4) x C (3), audited as one collection. Their shares are fixed: 10 cells share
70% of the population (7% each: 140 rows at n = 2,000; the candidates for the most selected
group) and 50 small cells share 30% (0.6% each: 12 rows at n = 2,000, 300 at n = 50,000),
so no cell sits near the ``min_share = 0.015`` cut of the candidates (the truth of the
impact ratio is taken over the candidates each audit used). Selection rates (the metric):
the base rate 0.5 for the most selected cell(s); the others at 0.5 x (0.72, 0.76, 0.80,
0.84, 0.88) in turn, so the true impact ratios sit near 0.8, on both sides of it (the
ratios to the overall rate are about 1.25 times larger, all above 0.8: there every group is
null, and the FDR is the probability of any flag). Five scenarios:

* ``overall``: ratio to the overall rate (re-estimated in every replicate);
* ``max``: the impact ratio, one most selected cell; its two runners-up (ratio 0.88) are
  1.0, 2.3 and 5.0 standard errors of their gap below it at n = 2,000, 10,000 and 50,000:
  a near-tie at the smaller sizes;
* ``max-tie``: the impact ratio with two top cells at exactly the same rate (the
  non-regular case of a bootstrapped maximum);
* ``max-clear``: the impact ratio with a most selected cell well ahead: base rate 0.9,
  the other candidates at 0.9 x (0.72, 0.76, 0.80) in turn (the runners-up 3.9 standard
  errors of their gap below the top at n = 2,000: about 2 beyond the near-maximal threshold
  :math:`\\kappa_n`, so a runner-up is sometimes among the near-maximal candidates), the
  small cells as in the other scenarios;
* ``max-separated``: the impact ratio with a most selected cell that no runner-up comes
  near at any size: five candidate cells of 14% each (280 rows at n = 2,000), base rate 0.9,
  the others at 0.9 x (0.72, 0.76, 0.80, 0.72) (the nearest runner-up 5.6 standard errors of
  its gap below the top at n = 2,000), and 55 small cells sharing the other 30% (0.55% each)
  at the ratios of the other scenarios.

Every cell also records how often the audit had a single near-maximal candidate and the
two-sided 90% coverage in those audits and in the others.

For every (scenario, n) the script draws ``reps`` audit trails and, on each, runs
:func:`skfair_audit.group.summary_ratio_bounds` (two-sided, ``B = resamples``; the 90% and
95% bounds come from the same bootstrap distribution) and records whether *every* defined
ratio is inside its bounds (simultaneous coverage); the one-sided bounds (``"lower"``: the
side :func:`~skfair_audit.group.certify_ratio` uses, ``"upper"``) from the suprema of the
same bootstrap (the result's ``bootstrap_distribution``); and the naive alternative on the
same replicates: per-group 90% / 95%
percentile intervals of the replicate ratios
:math:`\\hat\\mu^b_G / \\hat d^b`, no multiplicity correction (fairlearn's
``MetricFrame(n_boot=...)`` style). Flags: :func:`skfair_audit.group.summary_flag_ratios`
(``threshold = 0.8``, ``alternative="less"``, ``q = 0.1``, ``se="delta"``); nulls are the
groups with true ratio >= 0.8; FDR = mean false discovery proportion.

Controls (``--controls``, the ``max`` scenarios, ``controls`` in the results file):
the same audits with the earlier impact-ratio bootstrap (the near-maximal candidates'
deviations recentred at the observed maximum, ``recentred_maximum``), with the
BIC-type near-maximal threshold :math:`\\kappa_n = \\sqrt{\\log n}` instead of
:math:`\\sqrt{2\\log\\log n}` (``kappa_bic``), and with the observed most selected cell
taken as a fixed reference, its choice ignored (``observed_top``; also split by the number of
near-maximal candidates).

Writes ``benchmarks/results/group_ratio_validity.json``. Seeds:
``SeedSequence([seed, scenario, n, r])``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import time
import warnings
from dataclasses import replace

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
OUT = RESULTS / "group_ratio_validity.json"
SCENARIOS = ("overall", "max", "max-tie", "max-clear", "max-separated")  # appended: the
# seeds stay
LEVELS = (5, 4, 3)
N_CELLS = 60
N_BIG = 10
SEPARATED_BIG = 5
BIG_SHARE = 0.70
BASE = 0.5
FACTORS = (0.72, 0.76, 0.80, 0.84, 0.88)
CLEAR_BASE = 0.9
CLEAR_FACTORS = (0.72, 0.76, 0.80)
MIN_SHARE = 0.015
Q = 0.1
THRESHOLD = 0.8


def candidate_count(scenario):
    """Number of candidate (large) cells: the first cells of the collection."""
    return SEPARATED_BIG if scenario == "max-separated" else N_BIG


def population(scenario):
    """Shares and selection rates of the 60 cells, and the true ratio of every cell."""
    n_big = candidate_count(scenario)
    shares = np.r_[np.full(n_big, BIG_SHARE / n_big),
                   np.full(N_CELLS - n_big, (1 - BIG_SHARE) / (N_CELLS - n_big))]
    clear = scenario in ("max-clear", "max-separated")
    base = CLEAR_BASE if clear else BASE
    rates = base * np.array([FACTORS[k % len(FACTORS)] for k in range(N_CELLS)])
    if clear:
        rates[1:n_big] = base * np.array([CLEAR_FACTORS[k % len(CLEAR_FACTORS)]
                                          for k in range(n_big - 1)])
    rates[0] = base
    if scenario == "max-tie":
        rates[1] = base
    if scenario == "overall":
        truth = rates / float(shares @ rates)
    else:
        truth = rates / rates[:n_big].max()
    return shares, rates, truth


def cell_names():
    a, b, c = np.unravel_index(np.arange(N_CELLS), LEVELS)
    return [f"A{i}B{j}C{k}" for i, j, k in zip(a, b, c, strict=True)]


class NaiveRatios:
    """Replicate ratios with the exact replicate means (the naive percentile bootstrap)."""

    def __init__(self, groups, setup, n):
        self.groups, self.setup, self.n = groups, setup, n

    def __call__(self, sums):
        s = self.setup
        n_b = self.groups.group_sums(sums.counts)
        s_b = self.groups.group_sums(sums.sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            mu_b = s_b / n_b
            if s.kind == "overall":
                d_b = (sums.sums.sum(axis=1) / self.n)[:, None]
            else:
                d_b = np.nanmax(np.where(s.candidates, mu_b, np.nan), axis=1)[:, None]
            return mu_b / d_b


class RecentredMaximum:
    """The earlier impact-ratio bootstrap (a control): the replicate denominator of every
    group is the observed maximum plus the largest replicate deviation among the other
    near-maximal candidates (the same near-maximal set, :math:`\\kappa_n = \\sqrt{2\\log\\log
    n}`),
    or the group's own replicate rate if larger; suprema of
    :math:`(\\hat r + ((m_b - \\hat\\mu) - \\hat r(d_b - \\hat d))/\\hat d - \\hat r)/s`."""

    def __init__(self, process):
        self.process = process

    def __call__(self, sums):
        s = self.process.setup
        m_b = self.process.replicate_means(sums)
        mu = np.where(s.n_g > 0, s.mu, 0.0)
        pool = np.flatnonzero(s.near)
        shifts = m_b[:, pool] - mu[pool]
        d_b = np.empty_like(m_b)
        for g in range(m_b.shape[1]):
            others = shifts[:, pool != g]
            d_g = s.denominators[g] + (others.max(axis=1) if others.shape[1] else 0.0)
            d_b[:, g] = np.maximum(d_g, m_b[:, g]) if s.candidates[g] else d_g
        with np.errstate(invalid="ignore", divide="ignore"):
            r_b = s.ratios + ((m_b - mu) - s.ratios * (d_b - s.denominators)) / s.denominators
        t = (r_b[:, s.covered] - s.ratios[s.covered]) / s.scales[s.covered]
        return np.column_stack([t.max(axis=1), (-t).max(axis=1)])


def kappa_bic(n):
    return float(np.sqrt(max(np.log(n), 1.0)))


def _draw(scenario, n, r, seed):
    """One audit trail of the scenario, its summary, the truth in the summary's group order
    and the bootstrap seed."""
    from skfair_audit.group import AuditSummary

    rng = np.random.default_rng(np.random.SeedSequence([seed, SCENARIOS.index(scenario), n, r]))
    shares, rates, truth = population(scenario)
    names = np.array(cell_names(), dtype=object)
    counts = rng.multinomial(n, shares)
    cells = np.repeat(np.arange(N_CELLS), counts)
    selected = (rng.random(n) < rates[cells]).astype(np.int8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = AuditSummary.from_rows(selected, selected, {"cell": names[cells]},
                                         metric="selection_rate")
    order = [cell_names().index(g.split("=", 1)[1]) for g in summary.groups.names]
    return summary, rates, truth[order], order, int(rng.integers(2**32))


def recentred_bounds(setup, sups, alpha, alternative):
    """The earlier bounds (control): :math:`\\hat r \\pm c s` with one critical value, the
    quantile of the lower side's, the upper side's or the larger supremum."""
    from skfair_audit.group._bootstrap import critical_value

    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    lower = np.maximum(setup.ratios - c * setup.scales, 0.0)
    upper = setup.ratios + c * setup.scales
    upper = np.where(setup.candidates, np.minimum(upper, 1.0), upper)
    if alternative == "lower":
        upper = np.full_like(upper, np.inf)
    elif alternative == "upper":
        lower = np.zeros_like(lower)
    return c, lower, upper


def _coverages(sups, setup, true, prefix="", bounds=None):
    """Simultaneous coverage of the two-sided and one-sided 90% / 95% bounds computed from
    the bootstrap suprema (by default
    :func:`~skfair_audit.group._ratios.bounds_from_suprema`)."""
    from skfair_audit.group._ratios import bounds_from_suprema

    bounds = bounds or bounds_from_suprema
    out = {}
    defined = setup.covered
    for side, alternative in (("", "two-sided"), ("lower_", "lower"), ("upper_", "upper")):
        for level in (0.90, 0.95):
            _, lo, hi = bounds(setup, sups, 1 - level, alternative)
            inside = (lo <= true + 1e-12) & (true - 1e-12 <= hi)
            out[f"{prefix}{side}cover_{level}"] = bool(np.all(inside[defined]))
    return out


def one_audit(scenario, n, r, seed, resamples, p_star=0.01):
    from skfair_audit.group import summary_flag_ratios, summary_ratio_bounds
    from skfair_audit.group._bootstrap import run_bootstrap
    from skfair_audit.group._ratios import RatioSetup

    summary, rates, true, order, bootstrap_seed = _draw(scenario, n, r, seed)
    denominator = "overall" if scenario == "overall" else "max"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = summary_ratio_bounds(summary, denominator=denominator, alpha=0.1,
                                   min_share=MIN_SHARE, p_star=p_star, n_resamples=resamples,
                                   random_state=bootstrap_seed)
        flags = summary_flag_ratios(summary, denominator=denominator, threshold=THRESHOLD,
                                    alternative="less", q=Q, se="delta", min_share=MIN_SHARE)
        setup = RatioSetup.from_summary(summary, denominator, min_share=MIN_SHARE,
                                        p_star=p_star)
        naive = run_bootstrap(summary, NaiveRatios(summary.groups, setup, summary.n),
                              resamples, random_state=bootstrap_seed)
    defined = res.defined
    if denominator == "max":  # the truth given the candidate set the audit used
        true = rates[order] / rates[order][res.candidates].max()
    out = {"undefined": int((~defined).sum()), "smallest": int(summary.sizes.min()),
           "references": int(setup.references.size),
           **_coverages(res.bootstrap_distribution, setup, true)}
    # the price of the p* rule: 90% widths of the small and large cells
    big = np.isin(order, np.arange(candidate_count(scenario)))
    width = res.upper - res.lower
    out["width_big"] = float(np.median(width[defined & big]))
    out["width_small"] = float(np.median(width[defined & ~big]))
    for level in (0.90, 0.95):
        tail = (1 - level) / 2
        with np.errstate(invalid="ignore"):
            q_lo = np.nanquantile(naive, tail, axis=0)
            q_hi = np.nanquantile(naive, 1 - tail, axis=0)
        naive_inside = (q_lo <= true + 1e-12) & (true - 1e-12 <= q_hi)
        out[f"naive_cover_{level}"] = bool(np.all(naive_inside[defined]))
        out[f"naive_marginal_{level}"] = float(np.mean(naive_inside[defined]))
    null = (true >= THRESHOLD - 1e-12) & flags.defined
    flagged = flags.flagged
    out["flags"] = int(flagged.sum())
    out["false_flags"] = int((flagged & null).sum())
    out["fdp"] = out["false_flags"] / max(out["flags"], 1)
    out["power"] = float((flagged & ~null & flags.defined).sum() / max(
        (~null & flags.defined).sum(), 1))
    return out


def control_audit(scenario, n, r, seed, resamples, p_star=0.01):
    """The same audit (same trail, same bootstrap seed) under the two controls."""
    from unittest import mock

    from skfair_audit.group import _ratios
    from skfair_audit.group._bootstrap import run_bootstrap

    summary, rates, _, order, bootstrap_seed = _draw(scenario, n, r, seed)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        setup = _ratios.RatioSetup.from_summary(summary, "max", min_share=MIN_SHARE,
                                                p_star=p_star)
        process = _ratios.RatioProcess(summary.groups, setup, summary.n)
        true = rates[order] / rates[order][setup.candidates].max()
        out.update(_coverages(run_bootstrap(summary, RecentredMaximum(process), resamples,
                                            random_state=bootstrap_seed),
                              setup, true, "recentred_maximum_", recentred_bounds))
        # the observed top as a fixed reference: the library's process for a reference
        # group, each family's observed most selected group as its denominator
        fixed = replace(setup, kind="reference")
        out.update(_coverages(run_bootstrap(summary, _ratios.RatioProcess(
            summary.groups, fixed, summary.n), resamples, random_state=bootstrap_seed),
            fixed, true, "observed_top_"))
        out["references"] = int(setup.references.size)
        with mock.patch.object(_ratios, "near_maximum_kappa", kappa_bic):
            setup = _ratios.RatioSetup.from_summary(summary, "max", min_share=MIN_SHARE,
                                                    p_star=p_star)
            process = _ratios.RatioProcess(summary.groups, setup, summary.n)
            out.update(_coverages(run_bootstrap(summary, process, resamples,
                                                random_state=bootstrap_seed),
                                  setup, true, "kappa_bic_"))
    return out


CONTROLS = ("recentred_maximum", "kappa_bic", "observed_top")
COVERAGE_KEYS = tuple(f"{side}cover_{level}" for side in ("", "lower_", "upper_")
                      for level in (0.9, 0.95))


def _rates_with_se(audits, keys):
    cell = {}
    for key in keys:
        hits = np.array([a[key] for a in audits], dtype=float)
        cell[key] = float(hits.mean())
        cell[key + "_se"] = float(hits.std(ddof=1) / np.sqrt(hits.size)) if hits.size > 1 \
            else 0.0
    return cell


def _by_references(audits, key):
    """The share of audits with a single near-maximal candidate, and ``key``'s rate in
    those audits and in the others (``None`` where there is none)."""
    single = np.array([a["references"] == 1 for a in audits])
    hits = np.array([a[key] for a in audits], dtype=float)
    return {"single_reference_share": float(single.mean()),
            f"{key}_single_reference": float(hits[single].mean()) if single.any() else None,
            f"{key}_several_references": float(hits[~single].mean()) if (~single).any()
            else None}


def run_control(scenario, n, reps, seed, resamples, p_star):
    start = time.perf_counter()
    audits = [control_audit(scenario, n, r, seed, resamples, p_star) for r in range(reps)]
    keys = [f"{c}_{k}" for c in CONTROLS for k in COVERAGE_KEYS]
    return {"scenario": scenario, "n": n, "reps": reps, "resamples": resamples,
            "seconds": time.perf_counter() - start, **_rates_with_se(audits, keys),
            **_by_references(audits, "observed_top_cover_0.9")}


def run_cell(scenario, n, reps, seed, resamples, p_star):
    start = time.perf_counter()
    audits = [one_audit(scenario, n, r, seed, resamples, p_star) for r in range(reps)]
    cell = {"scenario": scenario, "n": n, "reps": reps, "resamples": resamples, "p_star": p_star,
            "seconds": time.perf_counter() - start,
            "smallest_group_median": float(np.median([a["smallest"] for a in audits]))}
    cell.update(_rates_with_se(audits, COVERAGE_KEYS + ("naive_cover_0.9",
                                                        "naive_cover_0.95")))
    for key in ("naive_marginal_0.9", "naive_marginal_0.95"):
        cell[key] = float(np.mean([a[key] for a in audits]))
    fdp = np.array([a["fdp"] for a in audits])
    cell["fdr"] = float(fdp.mean())
    cell["fdr_se"] = float(fdp.std(ddof=1) / np.sqrt(reps)) if reps > 1 else 0.0
    cell["power"] = float(np.mean([a["power"] for a in audits]))
    cell.update(_by_references(audits, "cover_0.9"))
    cell["mean_flags"] = float(np.mean([a["flags"] for a in audits]))
    for key in ("width_big", "width_small"):  # median over audits of the median 90% width
        cell["median_" + key] = float(np.median([a[key] for a in audits]))
    return cell


def main(argv=None):
    from sklearn.utils.parallel import Parallel, delayed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--p-star", type=float, default=0.01)
    parser.add_argument("--output", default=str(OUT))
    parser.add_argument("--controls", action="store_true",
                        help="also run the two controls on the max scenarios")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    start = time.perf_counter()
    cells = Parallel(n_jobs=args.n_jobs)(
        delayed(run_cell)(s, n, args.reps, args.seed, args.resamples, args.p_star)
        for s in args.scenarios for n in args.sizes)
    controls = []
    if args.controls:
        controls = Parallel(n_jobs=args.n_jobs)(
            delayed(run_control)(s, n, args.reps, args.seed, args.resamples, args.p_star)
            for s in args.scenarios if s != "overall" for n in args.sizes)
    payload = {
        "benchmark": "bench_group_ratio_validity.py",
        "command": "python benchmarks/bench_group_ratio_validity.py " + " ".join(
            argv if argv is not None else __import__("sys").argv[1:]),
        "design": {"cells": N_CELLS, "candidates": N_BIG, "min_share": MIN_SHARE,
                   "separated_candidates": SEPARATED_BIG,
                   "separated_cell_share": BIG_SHARE / SEPARATED_BIG,
                   "separated_small_cell_share": (1 - BIG_SHARE) / (N_CELLS - SEPARATED_BIG),
                   "base_rate": BASE, "factors": list(FACTORS), "threshold": THRESHOLD,
                   "clear_base_rate": CLEAR_BASE, "clear_factors": list(CLEAR_FACTORS),
                   "q": Q, "small_cell_share": (1 - BIG_SHARE) / (N_CELLS - N_BIG),
                   "big_cell_share": BIG_SHARE / N_BIG},
        "seed": args.seed, "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
        "seconds": time.perf_counter() - start,
        "cells": cells,
        "controls": controls,
    }
    pathlib.Path(args.output).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    for c in cells:
        print(f"{c['scenario']:8s} n={c['n']:6d}  cover90 {c['cover_0.9']:.3f}  "
              f"cover95 {c['cover_0.95']:.3f}  lower90/95 {c['lower_cover_0.9']:.3f}/"
              f"{c['lower_cover_0.95']:.3f}  upper90/95 {c['upper_cover_0.9']:.3f}/"
              f"{c['upper_cover_0.95']:.3f}  naive90 {c['naive_cover_0.9']:.3f}  "
              f"naive95 {c['naive_cover_0.95']:.3f}  FDR {c['fdr']:.3f}  power {c['power']:.2f}"
              f"  ({c['seconds']:.0f} s)")

    for c in controls:
        print(f"control {c['scenario']:8s} n={c['n']:6d}  " + "  ".join(
            f"{name}: {c[name + '_cover_0.9']:.3f}/{c[name + '_cover_0.95']:.3f} lower "
            f"{c[name + '_lower_cover_0.9']:.3f}/{c[name + '_lower_cover_0.95']:.3f} upper "
            f"{c[name + '_upper_cover_0.9']:.3f}/{c[name + '_upper_cover_0.95']:.3f}"
            for name in CONTROLS))


if __name__ == "__main__":
    main()
