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
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_conformal_coverage import versions  # noqa: E402

from skfair_audit.group import monotone_tilt_bounds, polynomial_tilt_bounds  # noqa: E402
from skfair_audit.group._monotone import half_line_sums  # noqa: E402
from skfair_audit.group._polynomial import legendre_features  # noqa: E402
from skfair_audit.group._tilts import scale_factor  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
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


def _golden_max(f, lo, hi, iterations=40):
    """Elementwise maximum of a unimodal-near-the-grid-maximum f on [lo, hi]."""
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(iterations):
        left = f1 >= f2
        a, b = np.where(left, a, x1), np.where(left, x2, b)
        new = np.where(left, b - ratio * (b - a), a + ratio * (b - a))
        fn = f(new)
        x1, x2 = np.where(left, new, x2), np.where(left, x1, new)
        f1, f2 = np.where(left, fn, f2), np.where(left, f1, fn)
    return np.maximum(f1, f2)


def monotone_event(res, mass_p, sum_p, theta_p, sides=(1.0, -1.0)):
    """``sup_w +-(eps_hat(w) - eps(w)) P_n[w] / r(w)`` over every monotone tilt of the
    class, exactly (vertices and every edge): the bounds of every tilt hold at once when it
    is at most the critical value. ``mass_p``, ``sum_p``: population mass and ``E[L 1_cell]``
    of the audit's cells; ``theta_p``: the true target."""
    summary = res._summary
    n = summary.n
    cells = summary.stats.moments.sum(axis=2)
    mass_n, sum_n = cells[0] / n, cells[1] / n
    theta_n = summary.theta_hat
    worst = -np.inf
    for direction in res._directions:
        Mn, Sn = half_line_sums(mass_n, direction), half_line_sums(sum_n, direction)
        Mp, Sp = half_line_sums(mass_p, direction), half_line_sums(sum_p, direction)

        def deviation(Mn, Sn, Mp, Sp):
            gap = (Sn / Mn - theta_n) - (Sp / Mp - theta_p)
            ratio = Mn / scale_factor(Mn, scale=res.scale, sd=res.sd, p_star=res.p_star)
            return np.max([sign * gap * ratio for sign in sides], axis=0)

        worst = max(worst, float(deviation(Mn, Sn, Mp, Sp).max()))
        j, k = np.triu_indices(Mn.size, k=1)

        def edge(lam, j=j, k=k, Mn=Mn, Sn=Sn, Mp=Mp, Sp=Sp):
            mix = [lam * v[j] + (1 - lam) * v[k] for v in (Mn, Sn, Mp, Sp)]
            return deviation(*mix)

        grid = np.linspace(0.0, 1.0, 65)
        values = np.stack([edge(np.full(j.size, g)) for g in grid])
        best = np.argmax(values, axis=0)
        lo = grid[np.maximum(best - 1, 0)]
        hi = grid[np.minimum(best + 1, grid.size - 1)]
        worst = max(worst, float(values.max()), float(_golden_max(edge, lo, hi).max()))
    return worst


def design_cells(res, design):
    """Population mass and ``E[c(X) 1_cell]`` of the audit's cells, ``X ~ U(0, 1)``."""
    _, c_int = DESIGNS[design]
    edges = np.concatenate([[0.0], res.cell_cuts, [1.0]])
    return np.diff(edges), np.diff(c_int(edges))


def polynomial_event(res, u, weights, c_values, sides=(1.0, -1.0)):
    """``sup_q +-(eps_hat(q^2) - eps(q^2))`` over the polynomials of the class (a sum of
    squares has the extreme disparities of single squares), the population given by nodes
    ``u`` with ``weights`` and the metric's conditional mean ``c_values`` there (target 0)."""
    summary = res._summary
    cells = res._cells
    z_cells, centre, half = _standardise_like(cells)
    phi = legendre_features(z_cells, res.degree)
    counts = summary.stats.moments.sum(axis=2)
    G_n = phi.T @ (counts[0][:, None] * phi)
    N_n = phi.T @ ((counts[1] - summary.theta_hat * counts[0])[:, None] * phi)
    phi_p = legendre_features(((u - centre) / half)[:, None], res.degree)
    G_p = phi_p.T @ (weights[:, None] * phi_p)
    N_p = phi_p.T @ ((weights * c_values)[:, None] * phi_p)

    def gap(C):
        C = np.atleast_2d(C)
        return (np.einsum("ki,ij,kj->k", C, N_n, C) / np.einsum("ki,ij,kj->k", C, G_n, C)
                - np.einsum("ki,ij,kj->k", C, N_p, C) / np.einsum("ki,ij,kj->k", C, G_p, C))

    rng = np.random.default_rng(0)
    starts = rng.normal(size=(4000, phi.shape[1]))
    worst = -np.inf
    for sign in sides:
        values = sign * gap(starts)
        best = float(values.max())
        for s in starts[np.argsort(values)[-5:]]:
            opt = minimize(lambda c, sign=sign: -sign * gap(c)[0], s, method="BFGS")
            best = max(best, -opt.fun)
        worst = max(worst, best)
    return worst


def _standardise_like(cells):
    low, high = cells.min(axis=0), cells.max(axis=0)
    half = (high - low) / 2
    return (cells - (low + high) / 2) / half, (low + high)[0] / 2, half[0]


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
    t0 = time.perf_counter()
    load_before = os.getloadavg()
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
        "command": "python " + " ".join([sys.argv[0], *(argv if argv is not None
                                                        else sys.argv[1:])]),
        "versions": versions(), "seed": args.seed, "reps": reps, "n_resamples": B,
        "alpha": ALPHA, "bins": BINS, "degree": DEGREE, "sizes": args.sizes,
        "designs": {"smooth": "c(x) = 0.85 + 0.1 x - 0.15 (x - 0.5)^2", "flat": "c(x) = 0.9"},
        "cells": cells,
        "acceptance": {
            "rule": "coverage within -2/+4 points of 90% at n >= 5000",
            "holds": all(0.88 <= c["coverage"] <= 0.94 for c in acceptance),
            "cells_checked": len(acceptance),
        },
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "elapsed_seconds": time.perf_counter() - t0,
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / ("tilt_validity_quick.json" if args.quick else "tilt_validity.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path} in {out['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
