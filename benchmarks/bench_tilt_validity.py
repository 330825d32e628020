"""Simultaneous coverage of the tilt audits over whole classes of tilts, with exact truth.

Design: ``x ~ U(0, 1)`` and a binary metric ``L ~ Bernoulli(c(x))`` with

* ``smooth``: ``c(x) = 0.85 + 0.1 x - 0.15 (x - 0.5)^2`` (varies by 0.1 over the range);
* ``flat``: ``c(x) = 0.9`` (every tilt has the same disparity: the least favourable case for
  a supremum over many tilts).

Classes audited (90% two-sided simultaneous bounds, ``B`` bootstrap replicates):

* ``monotone``: every tilt ``0 <= w <= 1`` monotone in ``x`` (both directions), constant on
  the 50 quantile bins of the audit sample (:func:`~skfair_audit.group.monotone_tilt_bounds`,
  ``method="exact"``), target 0 (bounds on the tilted mean ``E[L w]/E[w]``) and ``"overall"``
  (the disparity from the re-estimated overall mean); the relaxed supremum
  (``method="relaxed"``) is run on the same replicates to measure the price of the
  relaxation;
* ``polynomial``: every sum of squares of polynomials of degree <= 2 in ``x``
  (:func:`~skfair_audit.group.polynomial_tilt_bounds`), target 0.

Truth. The tilted disparity of every tilt of the class is known exactly: a monotone tilt is
constant on the bins, whose population masses and ``E[c(X) 1_bin]`` are closed-form
integrals; a polynomial tilt's is a ratio of quadratic forms in the population moments
``E[c(X) phi(X) phi(X)']`` and ``E[phi(X) phi(X)']`` (Gauss–Legendre, exact for these
polynomials). Simultaneous coverage means that the bounds of **every** tilt of the class
hold at once, checked over the whole class, not over a sample of tilts:

* monotone: the event is ``sup_w |eps_hat(w) - eps(w)| P_n[w] / r(w) <= c``; for a fixed true
  disparity the set of tilts is a hyperplane section of the simplex of mixtures of
  half-lines, on which the function is quasi-convex, so the supremum is attained on an edge
  (a pair of half-lines): every pair is searched (a 65-point grid refined by golden section);
* polynomial: ``sup_q |eps_hat(q^2) - eps(q^2)| <= c sd`` over the unit sphere of ``q``'s
  coefficients (a difference of two Rayleigh quotients): 4,000 random directions refined
  by BFGS from the best 5, and the sum-of-squares tilts reduce to single squares for the
  extreme disparities of the upper and lower sides.

Writes ``benchmarks/results/tilt_validity.json`` (``--quick``: ``tilt_validity_quick.json``).

Usage::

    python benchmarks/bench_tilt_validity.py [--quick] [--reps 500] [--jobs 2]

Run time (2 shared cores, ``--jobs 2``): about 40 minutes for 500 trials per cell;
``--quick`` (40 trials, B = 200) about 2 minutes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from _tilt_events import monotone_event, polynomial_event  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from scipy import stats  # noqa: E402

from skfair_audit.group import monotone_tilt_bounds, polynomial_tilt_bounds  # noqa: E402

ALPHA = 0.1
BINS = 50
DEGREE = 2
METRIC = dict(metric=lambda y, p: p.astype(float))
DESIGNS = {
    "smooth": (lambda x: 0.85 + 0.1 * x - 0.15 * (x - 0.5) ** 2,
               # antiderivative, for the exact bin integrals
               lambda x: 0.85 * x + 0.05 * x**2 - 0.05 * (x - 0.5) ** 3),
    "flat": (lambda x: np.full_like(x, 0.9), lambda x: 0.9 * x),
}
NODES, WEIGHTS = np.polynomial.legendre.leggauss(64)  # exact for polynomials of degree < 128


def design_cells(res, design):
    """Population mass and ``E[c(X) 1_cell]`` of the audit's cells, ``X ~ U(0, 1)``."""
    _, c_int = DESIGNS[design]
    edges = np.concatenate([[0.0], res.cell_cuts, [1.0]])
    return np.diff(edges), np.diff(c_int(edges))


def one_trial(seed, n, design, B):
    """Every audit of one simulated trail: events and critical values."""
    data_seed, boot_seed = seed.spawn(2)
    rng = np.random.default_rng(data_seed)
    c_fun, _ = DESIGNS[design]
    x = rng.uniform(0, 1, n)
    L = (rng.random(n) < c_fun(x)).astype(int)
    out = {}
    for target_kind, target in (("constant", 0.0), ("overall", "overall")):
        row = {}
        for method in ("exact", "relaxed"):
            res = monotone_tilt_bounds(L, L, x, **METRIC, target=target, bins=BINS,
                                       method=method, alternative="two-sided", alpha=ALPHA,
                                       n_resamples=B, random_state=boot_seed)
            theta_p = DESIGNS[design][1](1.0) - DESIGNS[design][1](0.0) if (
                target_kind == "overall") else 0.0
            sup = monotone_event(res, *design_cells(res, design), theta_p)
            row[method] = {"covered": bool(sup <= res.critical_value),
                           "critical_value": res.critical_value, "sup_true": sup}
        out[f"monotone_{target_kind}"] = row
    res = polynomial_tilt_bounds(L, L, x, **METRIC, target=0.0, degree=DEGREE,
                                 alternative="two-sided", alpha=ALPHA, n_resamples=B,
                                 random_state=boot_seed)
    u = (NODES + 1) / 2  # the population of x, U(0, 1): Gauss-Legendre nodes
    sup = polynomial_event(res, u, WEIGHTS / 2, DESIGNS[design][0](u))
    out["polynomial_constant"] = {"relaxed": {
        "covered": bool(sup <= res.critical_value * res.sd),
        "critical_value": res.critical_value, "sup_true": sup / res.sd}}
    return out


def summarise(trials):
    rows = []
    for key in trials[0]:
        for method in trials[0][key]:
            hits = [t[key][method]["covered"] for t in trials]
            k, reps = int(sum(hits)), len(hits)
            ci = stats.binomtest(k, reps).proportion_ci(0.95, method="exact")
            row = {"class": key.split("_")[0], "target": key.split("_")[1],
                   "method": method, "reps": reps, "coverage": k / reps,
                   "clopper_pearson_95": [ci.low, ci.high],
                   "mean_critical_value": float(np.mean(
                       [t[key][method]["critical_value"] for t in trials]))}
            if method == "relaxed" and "exact" in trials[0][key]:
                ratio = [t[key]["relaxed"]["critical_value"] / t[key]["exact"]["critical_value"]
                         for t in trials]
                row["critical_value_ratio_relaxed_over_exact"] = {
                    "median": float(np.median(ratio)), "max": float(np.max(ratio))}
            rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 trials, B = 200")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=20240615)
    args = parser.parse_args(argv)
    reps = args.reps or (40 if args.quick else 500)
    B = args.resamples or (200 if args.quick else 500)
    run = Run(__file__, argv, packages=("matplotlib",))
    cells = []
    seeds = np.random.SeedSequence(args.seed)
    for design in DESIGNS:
        for n in args.sizes:
            cell_seeds = seeds.spawn(1)[0].spawn(reps)
            t_cell = time.perf_counter()
            trials = Parallel(n_jobs=args.jobs)(
                delayed(one_trial)(s, n, design, B) for s in cell_seeds)
            for row in summarise(trials):
                cells.append({"design": design, "n": n, **row,
                              "seconds": time.perf_counter() - t_cell})
            print(design, n, [(c["class"], c["target"], c["method"], c["coverage"])
                              for c in cells if c["design"] == design and c["n"] == n],
                  flush=True)
    acceptance = [c for c in cells if c["n"] >= 5000 and c["method"] != "relaxed"
                  or (c["class"] == "polynomial" and c["n"] >= 5000)]
    out = {
        "seed": args.seed, "reps": reps, "n_resamples": B,
        "alpha": ALPHA, "bins": BINS, "degree": DEGREE, "sizes": args.sizes,
        "designs": {"smooth": "c(x) = 0.85 + 0.1 x - 0.15 (x - 0.5)^2", "flat": "c(x) = 0.9"},
        "cells": cells,
        "acceptance": {
            "rule": "coverage within -2/+4 points of 90% at n >= 5000",
            "holds": all(0.88 <= c["coverage"] <= 0.94 for c in acceptance),
            "cells_checked": len(acceptance),
        },
        "elapsed_seconds": run.elapsed(),
    }
    path = write_results(run, out, suffix="_quick" if args.quick else "")
    print(f"wrote {path} in {out['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
