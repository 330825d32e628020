"""Realised percentiles of the RKHS bootstrap critical value (Cherian & Candès Table 4).

The paper reports, for its RKHS audit at nominal 0.9, the realised percentile of the
bootstrap critical value across 200 trials: the share of trials in which the supremum of the
*true* process over the RKHS ball stays below the bootstrap critical value (the simultaneous
coverage of the lower bounds over the relaxed ball). Its settings are recovered from the
authors' script ``examples/synthetic_rkhs_validation.py`` (repository jjcherian/fairaudit):

* ``Constant``: ``X ~ U(0, 1)``, ``Y ~ N(0, 1)``, prediction 0, metric the squared error
  ``L = Y^2`` (so every tilt has ``E[L h]/E[h] = 1``); the true process is
  ``P_n[h] P_n[(L - 1) h]``;
* ``OLS``: ``X`` uniform on the grid ``0, 0.01, ..., 1``, ``Y ~ N(X theta0, X)`` with
  ``theta0 ~ N(0, 1)`` drawn per trial, an ordinary least-squares fit without intercept on
  1,000 training points, ``L = (X theta_hat - Y)^2`` with known conditional mean
  ``x + x^2 (theta0 - theta_hat)^2``; the true process is
  ``P[h] P_n[L h] - P[L h] P_n[h]`` with ``P`` uniform on the grid;

Gaussian kernel ``exp(-gamma |x - x'|^2)`` with ``gamma = 1`` (our bandwidth
``1 / sqrt(2)``), target 0 (bounds on the tilted mean), one-sided lower bounds (the supremum
of ``+T_b``), ``B = 500`` multinomial bootstrap replicates, 200 trials per cell.

Not recoverable: the paper's sample sizes and its Table 4 numbers (the paper's full text is
not on this machine, and the repository holds the script and notebooks but not the table).
The script calibrates at ``1 - 2a`` with its ``alpha`` argument ``a`` (default 0.1): the
nominal 0.9 of Table 4 matches ``a = 0.05``. We use the 0.9 quantile and
``n = 100, 200, 400, 800, 1600``; the results file says so, the documentation too.

Besides the paper's (unscaled) audit, the rescaled audit of Appendix D as implemented here
(``scale="rescaled"``, floor ``sqrt(p*) ||h||_n^2``) is run on the same trials, with the true
process's supremum computed by the same bracketing (both ends reported). For the scale with
the paper's constant floor, a lower bound of its bootstrap critical value is measured: the
supremum over the sign-changing directions with ``P_n[h] = 0`` on the unit sphere, which
reach the floor (``--floor-check`` trials).

Writes ``benchmarks/results/rkhs_table4.json`` (``--quick``: ``rkhs_table4_quick.json``).

Usage::

    python benchmarks/bench_rkhs_table4.py [--quick] [--trials 200] [--jobs 2]

Run time (2 shared cores, ``--jobs 2``): about 30 minutes; ``--quick`` (20 trials) 3 minutes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from scipy import linalg, stats  # noqa: E402

from skfair_audit.group import rkhs_tilt_bounds  # noqa: E402
from skfair_audit.group._rkhs import (  # noqa: E402
    _extreme_eigenvalues,
    factor_rotation,
    pivoted_cholesky,
    rescaled_rkhs_suprema,
)

ALPHA = 0.1
GAMMA = 1.0
BANDWIDTH = 1.0 / np.sqrt(2.0 * GAMMA)  # exp(-gamma d^2) = exp(-d^2 / (2 sigma^2))
P_STAR = 0.01
TOL = 1e-6
GRID = np.linspace(0.0, 1.0, 101)
SIZES = (100, 200, 400, 800, 1600)
PAPER = {
    "table": "Table 4, p. 19: realised percentiles of the bootstrap critical value, 200 "
             "trials, nominal 0.9",
    "settings_recovered_from": "jjcherian/fairaudit examples/synthetic_rkhs_validation.py "
                               "(designs Constant and OLS, RBF kernel gamma=1, B=500)",
    "values": None,
    "why_missing": "the paper's full text is not on this machine and the authors' "
                   "repository holds the script and notebooks but not the table's numbers; "
                   "its sample sizes are not recoverable either",
    "summary_says": "in small samples the RKHS audit may be conservative, the realised "
                    "percentile sometimes exceeding the nominal level",
}


def squared_error(y, y_pred):
    return (np.asarray(y, float) - np.asarray(y_pred, float)) ** 2


def simulate(design, n, rng):
    """Audit trail (x, y, prediction) and the true process's four vectors on the factor's
    points: ``T(h) = (u0.h)(u1.h) - (u2.h)(u3.h)`` with ``h`` at those points."""
    if design == "Constant":
        x = rng.uniform(0.0, 1.0, n)
        y = rng.standard_normal(n)
        pred = np.zeros(n)
        L = squared_error(y, pred)
        ones = np.ones(n) / n
        return x, y, pred, x, (ones, L / n, ones, ones)  # P_n[h] P_n[L h] - P_n[h] P_n[h]
    theta0 = rng.standard_normal()
    x_train = rng.choice(GRID, 1000)
    y_train = rng.normal(x_train * theta0, np.sqrt(x_train))
    theta_hat = (x_train @ y_train) / (x_train @ x_train)
    x = rng.choice(GRID, n)
    y = rng.normal(x * theta0, np.sqrt(x))
    pred = x * theta_hat
    L = squared_error(y, pred)
    cell = np.rint(x * 100).astype(int)
    counts = np.bincount(cell, minlength=GRID.size) / n
    sums = np.bincount(cell, L, minlength=GRID.size) / n
    L_pop = GRID + (GRID * (theta0 - theta_hat)) ** 2
    uniform = np.ones(GRID.size) / GRID.size
    return x, y, pred, GRID, (uniform, sums, uniform * L_pop, counts)


def true_suprema(design, x, L, points, vectors, sd):
    """Sup over the ball of the true process (unscaled), and the bracket of its rescaled
    supremum, with the factor the audit uses (on the audit points, or the grid)."""
    factor = pivoted_cholesky(points[:, None], BANDWIDTH, tol=TOL)
    Z = np.stack([factor.T @ v for v in vectors], axis=-1)[None]  # (1, r, 4)
    C = np.zeros((1, 4, 4))
    C[0, 0, 1] = C[0, 1, 0] = 0.5
    C[0, 2, 3] = C[0, 3, 2] = -0.5
    _, high = _extreme_eigenvalues(np.einsum("bri,brj->bij", Z, Z), C)
    unscaled = max(float(high[0]), 0.0)
    # the rescaled scale uses the audit sample: the factor's rows at the audit points
    if design == "Constant":
        sample_factor = factor
    else:
        sample_factor = factor[np.rint(x * 100).astype(int)]
    rotation = factor_rotation(sample_factor, x.size)
    upper, lower = rescaled_rkhs_suprema(Z, C, rotation, np.sqrt(P_STAR))
    return unscaled, float(upper[0, 0]) / sd, float(lower[0, 0]) / sd, sample_factor


def paper_floor_lower_bound(sample_factor, x, L, weights, theta_b):
    """A lower bound of the supremum of T_b(h) / max(P_n[h] ||h||_n, p*^{3/2}) over the unit
    ball: directions with P_n[h] = 0 on the unit sphere reach the floor, T_b(h) / p*^{3/2}."""
    n = x.size
    a = sample_factor.sum(axis=0) / n
    basis = linalg.null_space(a[None])  # beta with a'beta = 0
    U = np.column_stack([np.ones(n), L, weights, weights * L])
    Z = basis.T @ (sample_factor.T @ U)
    A = np.zeros((4, 4))
    A[0, 3], A[0, 2], A[1, 2] = 1.0, -theta_b, -1.0
    C = (A + A.T) / (2.0 * n**2)
    top = np.linalg.eigvalsh(Z @ C @ Z.T)[-1]
    return max(top, 0.0) / P_STAR**1.5


def one_trial(seed, design, n, B, floor_check):
    data_seed, boot_seed, floor_seed = seed.spawn(3)
    rng = np.random.default_rng(data_seed)
    x, y, pred, points, vectors = simulate(design, n, rng)
    L = squared_error(y, pred)
    options = dict(metric=squared_error, bandwidth=BANDWIDTH, target=0.0,
                   alternative="lower", alpha=ALPHA, tol=TOL, n_resamples=B,
                   random_state=boot_seed)
    unscaled = rkhs_tilt_bounds(x, y, pred, **options)
    rescaled = rkhs_tilt_bounds(x, y, pred, scale="rescaled", p_star=P_STAR, **options)
    true_unscaled, true_upper, true_lower, sample_factor = true_suprema(
        design, x, L, points, vectors, rescaled.sd)
    row = {"c_unscaled": unscaled.critical_value, "sup_unscaled": true_unscaled,
           "c_rescaled": rescaled.critical_value, "rescaled_gap": rescaled.refinement_gap,
           "sup_rescaled_upper": true_upper, "sup_rescaled_lower": true_lower,
           "rank": unscaled.rank}
    if floor_check:
        frng = np.random.default_rng(floor_seed)
        W = frng.multinomial(n, np.ones(n) / n, size=B).astype(float)
        floor = [paper_floor_lower_bound(sample_factor, x, L, w, 0.0) for w in W]
        row["c_paper_floor_at_least"] = float(np.quantile(np.array(floor) / rescaled.sd,
                                                          1 - ALPHA, method="higher"))
    return row


def percentile(hits):
    k, reps = int(np.sum(hits)), len(hits)
    ci = stats.binomtest(k, reps).proportion_ci(0.95, method="exact")
    return {"realised": k / reps, "clopper_pearson_95": [ci.low, ci.high]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 trials")
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--floor-check", type=int, default=20,
                        help="trials per cell with the paper's constant floor measured")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=20240616)
    args = parser.parse_args(argv)
    trials = args.trials or (20 if args.quick else 200)
    run = Run(__file__, argv, packages=("matplotlib",))
    root = np.random.SeedSequence(args.seed)
    cells = []
    for design in ("Constant", "OLS"):
        for n in args.sizes:
            seeds = root.spawn(1)[0].spawn(trials)
            t_cell = time.perf_counter()
            rows = Parallel(n_jobs=args.jobs)(
                delayed(one_trial)(s, design, n, args.resamples, i < args.floor_check)
                for i, s in enumerate(seeds))
            unscaled = [r["sup_unscaled"] <= r["c_unscaled"] for r in rows]
            resc_sure = [r["sup_rescaled_upper"] <= r["c_rescaled"] for r in rows]
            resc_maybe = [r["sup_rescaled_lower"] <= r["c_rescaled"] for r in rows]
            floor = [r["c_paper_floor_at_least"] for r in rows if "c_paper_floor_at_least" in r]
            cell = {
                "design": design, "n": n, "trials": trials,
                "unscaled": {**percentile(unscaled),
                             "median_critical_value": float(np.median(
                                 [r["c_unscaled"] for r in rows]))},
                "rescaled": {**percentile(resc_sure),
                             "realised_upper_end": float(np.mean(resc_maybe)),
                             "median_critical_value": float(np.median(
                                 [r["c_rescaled"] for r in rows])),
                             "max_refinement_gap": float(max(r["rescaled_gap"] for r in rows))},
                "median_kernel_rank": float(np.median([r["rank"] for r in rows])),
                "seconds": time.perf_counter() - t_cell,
            }
            if floor:
                cell["paper_floor"] = {
                    "trials": len(floor),
                    "median_critical_value_at_least": float(np.median(floor)),
                    "ratio_to_rescaled_median": float(np.median(floor) / np.median(
                        [r["c_rescaled"] for r in rows[:len(floor)]])),
                }
            cells.append(cell)
            print(design, n, cell["unscaled"]["realised"], cell["rescaled"]["realised"],
                  cell.get("paper_floor"), round(cell["seconds"]), flush=True)
    out = {
        "seed": args.seed, "trials": trials,
        "n_resamples": args.resamples, "nominal": 1 - ALPHA, "gamma": GAMMA,
        "bandwidth": BANDWIDTH, "p_star": P_STAR, "kernel_tol": TOL, "cells": cells,
        "paper": PAPER,
        "elapsed_seconds": run.elapsed(),
    }
    path = write_results(run, out, suffix="_quick" if args.quick else "")
    print(f"wrote {path} in {out['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
