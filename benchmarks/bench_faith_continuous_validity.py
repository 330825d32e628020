"""Validity of the FaiTH audit on continuous features, against a truth fixed before any audit.

Usage::

    python benchmarks/bench_faith_continuous_validity.py [--quick] [--reps 1000]
        [--resamples 1000] [--jobs 2] [--sizes 1000 5000 20000] [--truth-draws 10000000]
        [--time-limit MINUTES]

The default command writes the committed ``benchmarks/results/faith_continuous_validity.json``
and ``.csv``; ``doc/make_reproduction_tables.py`` builds ``doc/faith_continuous_validity.rst``
from that one file.

**The estimand.** On numeric features ``FaithAuditor(space="auto")`` audits on a reference set
fixed at fit: an audit row ``z`` may move to any reference row (with every protected level seen
in fit), to its own counterfactual twin, or stay; labels are kept. For the 0-1 loss,

    ψ_D(ε) = min_{λ ≥ 0} λε + E_P[h(Z, λ)],   h(z, λ) = (1 − λ c*(z))₊ 1{model right at z},

with ``c*(z)`` the cost of the cheapest allowed move to where the model errs. This is a
population quantity: it does not depend on the audit sample, so the audit value must not drift
with n and the confidence bounds must cover it.

**Instances** (model, metric and reference set fixed once per instance, from their own seeds,
independent of the audit samples). Population: ``g ~ Bernoulli(0.4)`` (protected),
``x1 = 0.8 g + N(0, 1)``, ``x2, x3 ~ N(0, 1)``, ``P(y = 1) = σ(−0.3 + x1 + 0.6 x2 − 0.4 x3 +
0.8 g)``; the model is a logistic regression fit once on 5,000 draws (it uses ``g``), frozen.
The auditor is fit on ``REFERENCE_ROWS`` further draws, which are its reference set.

* ``protected_euclidean``: ``metric="protected_euclidean"`` (standardised Euclidean distance
  that frees the protected coordinate only).
* ``sensitive_subspace``: the default learned metric (``metric="sensitive_subspace"``), fit on
  the reference draws; it frees ``g`` and the direction that predicts it (``x1``).

**The truth**, from ``--truth-draws`` (10⁷) population draws, by an implementation that shares
nothing with the package's transport code: per draw, ``c*`` is the smaller of (i) the squared
distance, in the fitted metric's ``transform`` coordinates, to the nearest reference point (at
either protected level) where the model errs on the draw's label (``scipy.spatial.cKDTree``),
and (ii) the cost of the draw's own twin when the model errs there (0 up to the rounding rule
``|Ta − Tb|² ≤ 64 eps (|Ta|² + |Tb|²)``). Then ``ψ(ε)`` is a fractional knapsack over the
sorted ``c*`` (move the cheapest first), equal to the dual minimum above, with the dual
minimiser ``λ* = 1 / c*`` of the last row moved. The script checks (and records) that the cost
formula equals ``auditor.metric_.cost_matrix`` on a few pairs, and that this code equals
``auditor.audit_value`` on one sample of 20,000 rows at every ε (to 1e-9): both compute the same
estimand.

**Grid.** ε ∈ {0, ε½, ε₉₅}: ε½ where the true ψ is half-way between ψ(0) and ψ(∞) (the budget
binds), ε₉₅ where it is 95% of ψ(∞) (near saturation), both rounded to 3 significant digits;
n ∈ {1,000, 5,000, 20,000}; the default method (``uniform``), nominal 95%, B = 1,000 (the
library's default). One audit sample serves the three ε (its transport problem is built once,
as ``FaithAuditor.audit`` builds it); each ε has its own bootstrap seed.

**What is recorded** per (instance, n, ε): the two-sided coverage of ψ by the 95% interval
(``FaithResult.confidence_interval()``), the type-I error of the δ-test at δ = ψ (reject when
the 95% lower bound exceeds δ) and of the certification test at δ = ψ (certify when the 95%
upper bound is below δ), the share of audits with ``near_kink`` True and with
``budget_saturated`` True, and the mean audit value against the truth with its Monte Carlo
standard error (the "does not drift with n" table; the truth's own Monte Carlo standard error,
``sd(h(Z, λ*)) / √draws``, is recorded and added in quadrature). Rates have Monte Carlo standard
errors ``sqrt(p (1 − p) / reps)``; a rate holds its level when it is at most ``0.05 + 2
sqrt(0.05 · 0.95 / reps)``, a coverage when at least ``0.95 − 2 sqrt(0.05 · 0.95 / reps)``.
The per-replicate bounds come from ``uniform_inference`` (what ``faith_audit`` computes); the
first audit of every (instance, n) is also run through ``faith_audit`` with the same seed and
the two are checked equal.

**Time.** Cells run in rounds of ``ROUND`` repetitions, sizes in increasing order; with
``--time-limit`` no round starts after the limit, and each row records the repetitions it got
(``reps``, with ``complete`` False when fewer than asked): never fewer presented as more.
Seeds: one ``SeedSequence`` per (instance, n), one child per repetition, which spawns the
sample's stream and one bootstrap stream per ε; results do not depend on ``--jobs`` or on the
rounds. ``--confirm`` reruns cells with fresh audit seeds (``SeedSequence([SEED, 1, i])`` for
instance ``i``; same instances, same truth) and writes
``faith_continuous_validity_confirmation.*``: an independent check of cells where the default
run crossed a line. ``--quick``: 40 repetitions, B = 199, 10⁶ truth draws, n ∈ {1,000, 5,000}; about
two minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings

import numpy as np
from _common import Run, write_results  # noqa: E402
from _faith_data import LEVEL, rate, thresholds  # noqa: E402
from joblib import Parallel, delayed
from scipy.spatial import cKDTree
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from skfair_audit.faith import FaithAuditor, faith_audit
from skfair_audit.faith._audit import saturation_budgets
from skfair_audit.faith._uniform import uniform_inference

SEED = 20261201
SIZES = (1_000, 5_000, 20_000)
INSTANCES = ("protected_euclidean", "sensitive_subspace")
REFERENCE_ROWS = 5_000
MODEL_ROWS = 5_000
TRUTH_DRAWS = 10_000_000
TRUTH_CHUNK = 500_000
CHECK_ROWS = 20_000
#: Budgets: 0, half-way between ψ(0) and ψ(∞), and 95% of ψ(∞).
BUDGET_LABELS = ("0", "half", "95%")
#: Repetitions per parallel task, and per cell and round.
CHUNK = 10
ROUND = 50
#: The package's rounding rule for free moves (``|Ta − Tb|² ≤ 64 eps (|Ta|² + |Tb|²)``).
ROUNDING = 64.0 * np.finfo(np.float64).eps


# ------------------------------------------------------------------------ the instances
def draw(rng, n):
    """``n`` population draws: features ``(g, x1, x2, x3)`` (``g`` protected) and labels."""
    g = (rng.random(n) < 0.4).astype(float)
    x = rng.normal(size=(n, 3))
    x[:, 0] += 0.8 * g
    logit = -0.3 + x[:, 0] + 0.6 * x[:, 1] - 0.4 * x[:, 2] + 0.8 * g
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return np.column_stack([g, x]), y


def build_instance(name, seed, n_resamples):
    """The fitted auditor of one instance, and its reference rows (the fit rows)."""
    model_seed, reference_seed = seed.spawn(2)
    model = FrozenEstimator(
        LogisticRegression().fit(*draw(np.random.default_rng(model_seed), MODEL_ROWS)))
    reference, labels = draw(np.random.default_rng(reference_seed), REFERENCE_ROWS)
    auditor = FaithAuditor(model, protected=[0], metric=name, n_resamples=n_resamples,
                           confidence_level=LEVEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auditor.fit(reference, labels)
    if len(auditor.reference_) != REFERENCE_ROWS:
        raise RuntimeError("the reference set is not the fit rows")
    return auditor, reference


# ------------------------------------------------------------------------ the truth
class CheapestError:
    """``c*(z)`` for the 0-1 loss: cost of the cheapest allowed move to where the model errs.

    Independent of the package's transport code: the model's ``predict``, the fitted metric's
    ``transform`` and one ``cKDTree`` per label over the reference points (at every protected
    level) where the model errs on that label.
    """

    def __init__(self, auditor, reference, workers=1):
        self.model, self.metric = auditor.estimator_, auditor.metric_
        self.levels = np.unique(reference[:, 0])
        self.workers = workers
        points, predictions = [], []
        for level in self.levels:
            moved = reference.copy()
            moved[:, 0] = level
            points.append(self.metric.transform(moved))
            predictions.append(self.model.predict(moved))
        points, predictions = np.vstack(points), np.concatenate(predictions)
        self.trees = {label: cKDTree(points[predictions != label]) for label in (0, 1)}

    def __call__(self, X, y):
        """``c*`` per row (``inf`` where the model already errs: such rows gain nothing)."""
        prediction = self.model.predict(X)
        mapped = self.metric.transform(X)
        out = np.full(len(y), np.inf)
        for label in (0, 1):
            rows = np.flatnonzero((y == label) & (prediction == label))
            if rows.size:
                distance, _ = self.trees[label].query(mapped[rows], k=1, workers=self.workers)
                out[rows] = distance**2
        for level in self.levels:
            twin = X.copy()
            twin[:, 0] = level
            moved = self.metric.transform(twin)
            errs = (self.model.predict(twin) != y) & (prediction == y) & (X[:, 0] != level)
            gap = ((mapped - moved) ** 2).sum(axis=1)
            zero = gap <= ROUNDING * ((mapped**2).sum(axis=1) + (moved**2).sum(axis=1))
            cost = np.where(zero, 0.0, gap)
            out[errs] = np.minimum(out[errs], cost[errs])
        return out


def knapsack(c_star, n_rows, epsilons):
    """ψ(ε) of the empirical law of ``n_rows`` rows with these ``c*`` (inf: no gain), the dual
    minimiser λ* and the sd of ``h(Z, λ*)``: move the cheapest rows first, within the budget."""
    c = np.sort(c_star[np.isfinite(c_star)])
    spent = np.concatenate([[0.0], np.cumsum(c) / n_rows])  # spent[k]: cost of the k cheapest
    out = []
    for eps in np.atleast_1d(epsilons):
        k = int(np.searchsorted(spent, eps, side="right")) - 1  # rows moved in full
        if k >= c.size:
            value, lam = c.size / n_rows, 0.0
        else:
            value = (k + (eps - spent[k]) * n_rows / c[k]) / n_rows
            lam = 1.0 / c[k] if c[k] > 0 else math.inf
        if math.isinf(lam):
            h = (c == 0).astype(float)
        else:
            h = np.clip(1.0 - lam * c, 0.0, None)
        mean_h = h.sum() / n_rows
        var = max(float((h**2).sum() / n_rows - mean_h**2), 0.0)
        out.append((float(value), float(lam), math.sqrt(var)))
    return out


def budget_for(c_star, n_rows, target):
    """The ε at which the knapsack value reaches ``target`` (linear within its piece)."""
    c = np.sort(c_star[np.isfinite(c_star)])
    k = int(math.ceil(target * n_rows - 1e-9))  # rows needed (the k-th moved in part)
    free = int(np.count_nonzero(c == 0))
    if k <= free:
        return 0.0
    spent = np.cumsum(c) / n_rows
    whole = int(math.floor(target * n_rows))
    base = spent[whole - 1] if whole > 0 else 0.0
    return float(base + (target * n_rows - whole) * c[whole] / n_rows)


def significant(x, digits=3):
    return float(f"{x:.{digits}g}")


def population_truth(auditor, reference, seed, draws, workers):
    """``c*`` of ``draws`` population draws, in chunks; returns the budgets and the truth."""
    cheapest = CheapestError(auditor, reference, workers=workers)
    parts = []
    rng = np.random.default_rng(seed)
    for start in range(0, draws, TRUTH_CHUNK):
        X, y = draw(rng, min(TRUTH_CHUNK, draws - start))
        parts.append(cheapest(X, y))
    c_star = np.concatenate(parts)
    psi0 = knapsack(c_star, draws, [0.0])[0][0]
    psi_inf = np.isfinite(c_star).mean()
    epsilons = [0.0,
                significant(budget_for(c_star, draws, 0.5 * (psi0 + psi_inf))),
                significant(budget_for(c_star, draws, 0.95 * psi_inf))]
    truths = knapsack(c_star, draws, epsilons)
    return {
        "draws": draws,
        "psi_zero": float(psi0),
        "psi_unlimited": float(psi_inf),
        "epsilons": epsilons,
        "truth": [t[0] for t in truths],
        "dual_minimiser": [t[1] for t in truths],
        "sd_h": [t[2] for t in truths],
        "truth_mc_se": [t[2] / math.sqrt(draws) for t in truths],
        "saturation_budget_99": budget_for(c_star, draws, 0.99 * psi_inf),
    }


def cost_check(auditor, reference, seed, pairs=8):
    """Largest gap between ``|Ta − Tb|²`` and ``metric_.cost_matrix`` on a few pairs."""
    X, _ = draw(np.random.default_rng(seed), pairs)
    gaps = []
    for level in (0.0, 1.0):
        dest = reference[:pairs].copy()
        dest[:, 0] = level
        for a, b in zip(X, dest, strict=True):
            ours = float(((auditor.metric_.transform(a[None]) - auditor.metric_.transform(
                b[None])) ** 2).sum())
            theirs = float(auditor.metric_.cost_matrix(np.vstack([a, b]))[0, 1])
            gaps.append(abs(ours - theirs) / max(1.0, abs(theirs)))
        twin = X.copy()
        twin[:, 0] = level
        for a, b in zip(X, twin, strict=True):
            gaps.append(abs(float(auditor.metric_.cost_matrix(np.vstack([a, b]))[0, 1])))
    return max(gaps)


def cross_check(auditor, reference, seed, epsilons):
    """This code against ``auditor.audit_value`` on one sample of ``CHECK_ROWS`` rows."""
    X, y = draw(np.random.default_rng(seed), CHECK_ROWS)
    c_star = CheapestError(auditor, reference)(X, y)
    ours = [v[0] for v in knapsack(c_star, CHECK_ROWS, epsilons)]
    theirs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in epsilons:
            theirs.append(auditor.set_params(epsilon=eps).audit_value(X, y))
    auditor.set_params(epsilon=0.0)
    return {"rows": CHECK_ROWS, "ours": ours, "audit_value": theirs,
            "max_abs_difference": float(np.max(np.abs(np.subtract(ours, theirs))))}


# ------------------------------------------------------------------------ the audits
def run_chunk(auditor, n, epsilons, seeds, n_resamples, check_first=False):
    """Audit ``len(seeds)`` samples of size n at every ε.

    Returns an array of shape (reps, len(epsilons), 7): ψ(f_n), the 95% lower and upper
    bounds, the two-sided 95% interval, ``near_kink`` and ``budget_saturated``; and whether
    ``faith_audit`` reproduced the first repetition's bounds (None when not checked).
    """
    out = np.empty((len(seeds), len(epsilons), 7))
    agrees = None
    side = 0.5 + 0.5 * LEVEL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r, seed in enumerate(seeds):
            sample_seed, *eps_seeds = seed.spawn(1 + len(epsilons))
            X, y = draw(np.random.default_rng(sample_seed), n)
            _, counts, problem = auditor._audit_problem(X, y)
            saturation = saturation_budgets(problem, counts / n)[2]
            for k, eps in enumerate(epsilons):
                value, pieces = uniform_inference(
                    problem, counts, eps, confidence_level=LEVEL, n_resamples=n_resamples,
                    random_state=eps_seeds[k],
                )
                saturated = eps > 0 and saturation > 0 and eps >= saturation
                out[r, k] = (value, pieces.lower_bound(LEVEL), pieces.upper_bound(LEVEL),
                             pieces.lower_bound(side), pieces.upper_bound(side),
                             pieces.near_kink, saturated)
                if check_first and r == 0 and k == len(epsilons) - 2:
                    used = eps_seeds[k]  # spawned from once: a fresh copy of the same seed
                    fresh = np.random.SeedSequence(used.entropy, spawn_key=used.spawn_key,
                                                   pool_size=used.pool_size)
                    result = faith_audit(counts, None, problem, epsilon=eps,
                                         n_resamples=n_resamples, confidence_level=LEVEL,
                                         random_state=fresh)
                    interval = result.confidence_interval()
                    theirs = (result.statistic, result.lower_bound, result.upper_bound,
                              interval.low, interval.high, result.near_kink,
                              result.budget_saturated)
                    agrees = bool(np.allclose(theirs, out[r, k], rtol=1e-12, atol=1e-12))
    return out, agrees


def summarize(audits, truth, truth_se):
    """The row entries of one cell from its audits, shape (reps, 7)."""
    value, lower, upper, low, high, near, saturated = audits.T
    row = {}
    for key, hits in (
        ("coverage_two_sided", (low <= truth) & (truth <= high)),
        ("type1_delta_test", lower > truth),
        ("type1_certification", upper < truth),
        ("near_kink_rate", near > 0),
        ("budget_saturated_rate", saturated > 0),
    ):
        row[key], row[f"se_{key}"] = rate(hits)
    reps = len(value)
    row["mean_value"] = float(np.mean(value))
    row["se_mean_value"] = float(np.std(value, ddof=1) / math.sqrt(reps))
    row["bias"] = row["mean_value"] - truth
    row["se_bias"] = math.sqrt(row["se_mean_value"] ** 2 + truth_se**2)
    row["bias_z"] = row["bias"] / row["se_bias"] if row["se_bias"] > 0 else 0.0
    row["sd_value"] = float(np.std(value, ddof=1))
    row["mean_width_two_sided"] = float(np.mean(high - low))
    type1_max, coverage_min = thresholds(reps)
    row["holds"] = bool(row["coverage_two_sided"] >= coverage_min
                        and row["type1_delta_test"] <= type1_max
                        and row["type1_certification"] <= type1_max)
    return row


def verdicts(rows):
    """Every conclusion the documentation states, computed from the rows."""
    misses = [{k: r[k] for k in ("instance", "n", "budget", "reps", "coverage_two_sided",
                                 "type1_delta_test", "type1_certification")}
              for r in rows if not r["holds"]]
    unique = [r for r in rows if r["unique_dual_minimiser"]]
    drift = [{k: r[k] for k in ("instance", "n", "budget", "bias", "se_bias", "bias_z")}
             for r in rows if abs(r["bias_z"]) > 2.0]
    worst = {key: min(rows, key=lambda r: r[key]) if key.startswith("coverage")
             else max(rows, key=lambda r: r[key])
             for key in ("coverage_two_sided", "type1_delta_test", "type1_certification")}
    return {
        "cells": len(rows),
        "cells_missing_level": misses,
        "holds_level_everywhere": not misses,
        "worst": {key: {k: r[k] for k in ("instance", "n", "budget", key, f"se_{key}",
                                          "reps")}
                  for key, r in worst.items()},
        "near_kink_max_rate_unique_minimiser": max(r["near_kink_rate"] for r in unique),
        "near_kink_required_at_most": 0.10,
        "near_kink_holds": all(r["near_kink_rate"] <= 0.10 for r in unique),
        "cells_drifting_beyond_2se": drift,
        "all_cells_complete": all(r["complete"] for r in rows),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="40 reps, B=199, 10^6 truth draws, n in {1000, 5000}")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 1000)")
    parser.add_argument("--resamples", type=int, default=None, help="B (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--truth-draws", type=int, default=None)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="minutes after which no new round of audits starts")
    parser.add_argument("--instances", nargs="+", default=list(INSTANCES), choices=INSTANCES)
    parser.add_argument("--confirm", action="store_true",
                        help="fresh audit seeds (the instances and the truth are the default "
                             "run's): an independent rerun of cells, written to "
                             "faith_continuous_validity_confirmation.*")
    args = parser.parse_args(argv)
    reps = args.reps or (40 if args.quick else 1_000)
    n_resamples = args.resamples or (199 if args.quick else 1_000)
    sizes = args.sizes or ([1_000, 5_000] if args.quick else list(SIZES))
    truth_draws = args.truth_draws or (1_000_000 if args.quick else TRUTH_DRAWS)

    run = Run(__file__, argv)
    start = run.started
    root = np.random.SeedSequence(SEED)
    cases = []
    for name, seed in zip(INSTANCES, root.spawn(len(INSTANCES)), strict=True):
        fit_seed, truth_seed, check_seed, cost_seed, audit_seed = seed.spawn(5)
        if name not in args.instances:
            continue
        if args.confirm:
            audit_seed = np.random.SeedSequence([SEED, 1, INSTANCES.index(name)])
        auditor, reference = build_instance(name, fit_seed, n_resamples)
        t0 = time.perf_counter()
        truth = population_truth(auditor, reference, truth_seed, truth_draws, args.jobs)
        truth["seconds"] = time.perf_counter() - t0
        truth["cost_formula_max_relative_gap"] = cost_check(auditor, reference, cost_seed)
        truth["cross_check"] = cross_check(auditor, reference, check_seed, truth["epsilons"])
        print(name, json.dumps(truth, indent=1), flush=True)
        if truth["cross_check"]["max_abs_difference"] > 1e-9:
            raise RuntimeError(f"{name}: the truth code and audit_value disagree")
        cases.append({"name": name, "auditor": auditor, "truth": truth,
                      "seeds": dict(zip(sizes, audit_seed.spawn(len(sizes)), strict=True))})

    collected, agreement = {}, {}
    deadline = None if args.time_limit is None else start + 60.0 * args.time_limit
    stopped_early = False
    with Parallel(n_jobs=args.jobs) as parallel:
        for n in sizes:
            rep_seeds = {c["name"]: c["seeds"][n].spawn(reps) for c in cases}
            for first in range(0, reps, ROUND):
                if deadline is not None and time.perf_counter() > deadline:
                    stopped_early = True
                    break
                tasks, keys = [], []
                for case in cases:
                    for lo in range(first, min(first + ROUND, reps), CHUNK):
                        keys.append(case["name"])
                        tasks.append(delayed(run_chunk)(
                            case["auditor"], n, case["truth"]["epsilons"],
                            rep_seeds[case["name"]][lo:min(lo + CHUNK, reps)], n_resamples,
                            check_first=lo == 0,
                        ))
                for key, (part, agrees) in zip(keys, parallel(tasks), strict=True):
                    collected.setdefault((key, n), []).append(part)
                    if agrees is not None:
                        agreement[f"{key}, n={n}"] = agrees
                done = min(first + ROUND, reps)
                print(f"n={n}: {done} of {reps} repetitions, "
                      f"{(time.perf_counter() - start) / 60:.1f} min", flush=True)
    if not all(agreement.values()):
        raise RuntimeError(f"faith_audit and uniform_inference disagree: {agreement}")

    rows = []
    for case in cases:
        truth = case["truth"]
        for n in sizes:
            if (case["name"], n) not in collected:
                continue
            audits = np.concatenate(collected[(case["name"], n)])
            for k, label in enumerate(BUDGET_LABELS):
                row = {"instance": case["name"], "n": n, "budget": label,
                       "epsilon": truth["epsilons"][k], "truth": truth["truth"][k],
                       "truth_mc_se": truth["truth_mc_se"][k],
                       "dual_minimiser": truth["dual_minimiser"][k],
                       "unique_dual_minimiser": True,
                       "reps": len(audits), "complete": len(audits) == reps,
                       "n_resamples": n_resamples}
                row.update(summarize(audits[:, k], truth["truth"][k], truth["truth_mc_se"][k]))
                rows.append(row)
    summary = verdicts(rows)
    elapsed = time.perf_counter() - start
    for r in rows:
        print(f"{r['instance']:20} {r['n']:>6} {r['budget']:>5} reps {r['reps']:>5} "
              f"cov {r['coverage_two_sided']:.3f} dI {r['type1_delta_test']:.3f} "
              f"cert {r['type1_certification']:.3f} kink {r['near_kink_rate']:.3f} "
              f"sat {r['budget_saturated_rate']:.3f} bias {r['bias']:+.5f} "
              f"(z {r['bias_z']:+.2f})")
    print(json.dumps(summary, indent=1))
    print(f"\n{elapsed / 60:.1f} min")

    suffix = "_quick" if args.quick else "_confirmation" if args.confirm else ""
    meta = {
        "seed": SEED,
        "confidence_level": LEVEL,
        "reps_requested": reps,
        "n_resamples": n_resamples,
        "jobs": args.jobs,
        "sizes": sizes,
        "time_limit_minutes": args.time_limit,
        "stopped_early": stopped_early,
        "reference_rows": REFERENCE_ROWS,
        "elapsed_seconds": elapsed,
        "faith_audit_agrees": agreement,
        "instances": [{"name": c["name"], **c["truth"]} for c in cases],
        "summary": summary,
        "rows": rows,
    }
    write_results(run, meta, suffix=suffix, rows=rows)


if __name__ == "__main__":
    main()
