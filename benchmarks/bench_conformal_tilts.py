"""Conditional coverage of conformalized quantile regression over monotone and polynomial
tilts of the covariate (the conformal benchmark of ``bench_conformal_coverage.py``).

Same data, model and audit trail as ``bench_conformal_coverage.py`` (with the same ``--seed``
the main realisation and every repetition use exactly its simulated data and fitted CQR:
``x ~ U(0, 5)``, split CQR at 90%, 4,000 audit points, ``L = 1{y in [lo, hi]}``). Instead of
the 1,275 intervals of the grid, the audit bounds the tilted coverage
``E[L w(X)] / E[w(X)]`` (target 0) of

* every monotone tilt ``0 <= w <= 1`` of ``x``, non-decreasing or non-increasing, constant
  on 50 quantile bins (:func:`~skfair_audit.group.monotone_tilt_bounds`): the worst is a
  half-line ``{x >= t}`` or ``{x <= t}``;
* every non-negative polynomial tilt of degree 4 and 6 in ``x`` (sums of squares of
  polynomials of degree 2 and 3, :func:`~skfair_audit.group.polynomial_tilt_bounds`): the
  worst is the first principal tilt;

with 90% one-sided simultaneous lower bounds, ``B = 2000``.

Truth: the coverage of the fitted interval conditional on ``x`` is known in closed form
(:func:`bench_conformal_coverage.conditional_coverage`); every tilted coverage is its
average against the tilt under ``X ~ U(0, 5)`` (a 20,000-point midpoint rule: the fitted
interval jumps with the boosted quantiles, so no higher-order rule applies). The
simultaneous guarantee is checked over **every** tilt of each class with the exact checks of
``bench_tilt_validity.py`` (edges of the simplex of half-lines; the unit sphere of the
polynomials' coefficients). The pipeline is repeated ``--reps`` times.

Writes ``benchmarks/results/conformal_tilts.json`` and ``conformal_tilts.png`` (``--quick``:
``*_quick.*``).

Usage::

    python benchmarks/bench_conformal_tilts.py [--quick] [--reps 100]

Run time (2 shared cores): about 10 minutes (``--reps 100``); ``--quick`` (``B = 500``, 5
repetitions) about 1 minute.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from _conformal import conditional_coverage as coverage_at  # noqa: E402
from _conformal import conformal_trail  # noqa: E402
from _tilt_events import monotone_event, polynomial_event  # noqa: E402
from scipy import stats  # noqa: E402

from skfair_audit.group import monotone_tilt_bounds, polynomial_tilt_bounds  # noqa: E402
from skfair_audit.group._monotone import half_line_sums  # noqa: E402

ALPHA = 0.1
BINS = 50
DEGREES = (2, 3)
FINE = (np.arange(20_000) + 0.5) / 20_000 * 5.0  # midpoint rule on [0, 5]
FINE_W = np.full(FINE.size, 1.0 / FINE.size)  # X ~ U(0, 5)


def fit_and_audit(seed, *, n_train, n_cal, n_audit, B):
    """The conformal benchmark's replicate (same seeds) and the tilt audits of its trail."""
    cqr, x_a, y_a, boot_seed = conformal_trail(seed, n_train=n_train, n_cal=n_cal,
                                               n_audit=n_audit)
    pred = cqr.predict(x_a)
    options = dict(metric="coverage", target=0.0, alternative="lower", alpha=ALPHA,
                   n_resamples=B, random_state=boot_seed)
    monotone = monotone_tilt_bounds(y_a, pred, x_a, direction="both", bins=BINS, **options)
    polynomials = {k: polynomial_tilt_bounds(y_a, pred, x_a, degree=k, **options)
                   for k in DEGREES}
    return cqr, monotone, polynomials, coverage_at(FINE, cqr.predict(FINE))


def monotone_truth(res, cov_fine):
    """Population mass and E[c(X) 1_cell] of the audit's cells, and every half-line's true
    tilted coverage (rows of the result)."""
    edges = np.concatenate([[0.0], res.cell_cuts, [5.0]])
    cell = np.searchsorted(edges[1:-1], FINE, side="right")
    mass = np.bincount(cell, minlength=edges.size - 1) / FINE.size
    sums = np.bincount(cell, cov_fine, minlength=edges.size - 1) / FINE.size
    rows = []
    for d in res._directions:
        value = half_line_sums(sums, d) / half_line_sums(mass, d)
        rows.append(value[:-1] if (d == "decreasing" and rows) else value)
    return mass, sums, np.concatenate(rows)


def polynomial_truth(res, cov_fine):
    """True tilted coverage of the rows (constant and principal tilts)."""
    truth = [float(cov_fine.mean())]
    for coef in res.principal_coefficients:
        w = res.tilt_values(coef, FINE)
        truth.append(float(w @ cov_fine / w.sum()))
    return np.array(truth)


def summarise(monotone, polynomials, cov_fine):
    mass, sums, truth = monotone_truth(monotone, cov_fine)
    worst = int(np.argmin(monotone.lower))
    supremum = monotone_event(monotone, mass, sums, 0.0, sides=(1.0,))
    out = {"monotone": {
        "critical_value": monotone.critical_value, "n_cells": int(monotone.cell_low.size),
        "constant_lower": float(monotone.lower[0]),  # the first half-line holds every row
        "worst_tilt": monotone.names[worst], "worst_lower": float(monotone.lower[worst]),
        "worst_estimate": float(monotone.estimates[worst]),
        "worst_true": float(truth[worst]), "worst_rows": int(monotone.sizes[worst]),
        "lowest_true_half_line": monotone.names[int(np.argmin(truth))],
        "lowest_true": float(truth.min()),
        "all_half_lines_below_truth": bool(np.all(monotone.lower <= truth)),
        "half_lines_above_truth": [
            {"tilt": monotone.names[j], "lower": float(monotone.lower[j]),
             "true": float(truth[j])} for j in np.flatnonzero(monotone.lower > truth)],
        "class_supremum_over_critical_value": supremum / monotone.critical_value,
        "whole_class_covered": bool(supremum <= monotone.critical_value),
    }}
    for k, res in polynomials.items():
        truth_p = polynomial_truth(res, cov_fine)
        sup = polynomial_event(res, FINE, FINE_W, cov_fine, sides=(1.0,))
        out[f"polynomial_degree_{k}"] = {
            "critical_value": res.critical_value, "width": res.critical_value * res.sd,
            "worst_lower": float(res.lower[1]), "worst_estimate": float(res.estimates[1]),
            "worst_true": float(truth_p[1]), "worst_effective_size": int(res.sizes[1]),
            "worst_coefficients": res.principal_coefficients[0].tolist(),
            "constant_lower": float(res.lower[0]),
            "whole_class_covered": bool(sup <= res.critical_value * res.sd),
        }
    return out


def plot(path, monotone, polynomial, cqr, cov_fine):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(15, 4.8))
    monotone.plot(ax=axes[0])
    axes[0].set_ylim(0.75, 1.0)
    polynomial.plot(ax=axes[1])
    twin = axes[1].twinx()
    twin.plot(FINE, cov_fine, color="grey", linewidth=0.6, label="true P(Y in C(x) | x)")
    twin.axhline(0.9, color="black", linestyle="--", linewidth=0.8)
    twin.set_ylabel("conditional coverage")
    twin.set_ylim(0.75, 1.0)
    twin.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="B = 500, 5 repetitions")
    parser.add_argument("--seed", type=int, default=20240502)  # = bench_conformal_coverage
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-cal", type=int, default=2000)
    parser.add_argument("--n-audit", type=int, default=4000)
    args = parser.parse_args(argv)
    B = args.resamples or (500 if args.quick else 2000)
    reps = args.reps if args.reps is not None else (5 if args.quick else 100)
    suffix = "_quick" if args.quick else ""
    sizes = dict(n_train=args.n_train, n_cal=args.n_cal, n_audit=args.n_audit)
    run = Run(__file__, argv, packages=("matplotlib",))
    main_seed, _, rep_seed = np.random.SeedSequence(args.seed).spawn(3)
    cqr, monotone, polynomials, cov_fine = fit_and_audit(main_seed, B=B, **sizes)
    realisation = summarise(monotone, polynomials, cov_fine)
    realisation["true_marginal_coverage"] = float(cov_fine.mean())
    realisation["true_min_conditional_coverage"] = float(cov_fine.min())
    png = run.path(suffix)
    plot(png, monotone, polynomials[DEGREES[0]], cqr, cov_fine)
    rows = []
    t_rep = time.perf_counter()
    for s in rep_seed.spawn(reps):
        _, m, p, cf = fit_and_audit(s, B=B, **sizes)
        rows.append(summarise(m, p, cf))
    repetition = {"n_reps": reps, "seconds": time.perf_counter() - t_rep}
    for key in realisation:
        if not isinstance(realisation[key], dict):
            continue
        hits = int(sum(r[key]["whole_class_covered"] for r in rows))
        if reps:
            ci = stats.binomtest(hits, reps).proportion_ci(0.95, method="exact")
            repetition[key] = {
                "whole_class_coverage": hits / reps, "nominal": 1 - ALPHA,
                "clopper_pearson_95": [ci.low, ci.high],
                "worst_lower_mean": float(np.mean([r[key]["worst_lower"] for r in rows])),
                "worst_true_mean": float(np.mean([r[key]["worst_true"] for r in rows])),
            }
    out = {
        "seed": args.seed,
        "settings": {**sizes, "alpha": ALPHA, "n_resamples": B, "bins": BINS,
                     "degrees": list(DEGREES), "target": "constant 0 (tilted coverage)",
                     "alternative": "lower", "metric": "coverage, L = 1{lo <= y <= hi}"},
        "realisation": realisation, "repetitions": repetition, "figure": png.name,
        "elapsed_seconds": run.elapsed(),
    }
    path = write_results(run, out, suffix=suffix)
    print(json.dumps({"realisation": realisation, "repetitions": repetition}, indent=1))
    print(f"wrote {path} in {out['elapsed_seconds']:.1f} s")


if __name__ == "__main__":
    main()
