"""Certifying conditional coverage of conformalized quantile regression (Cherian & Candès §1.1.1).

The synthetic example of ``shared/notes/group-audit-math.md`` (re-simulated, so our numbers
differ from the paper's 80.2% / 83.0%):

* data: ``x ~ U(0, 5)``, ``y = Poisson(sin(x)^2 + 0.1) + 0.03 x N(0, 1) + 25 1{U < 0.01} N(0, 1)``
  (independent draws);
* model: split conformalized quantile regression (CQR, Romano, Patterson & Candès 2019) at
  90%: :class:`~sklearn.ensemble.GradientBoostingRegressor` ``(loss="quantile",
  alpha=0.05 / 0.95)`` fitted on ``--n-train`` rows, conformity scores
  ``max(q_lo(x) - y, y - q_hi(x))`` on ``--n-cal`` calibration rows, interval
  ``[q_lo - Q, q_hi + Q]`` with ``Q`` the ``ceil(0.9 (n_cal + 1))``-th smallest score
  (where the two separately fitted quantiles cross, the interval is empty and scores 0;
  the JSON reports how often that happens);
* audit: 4,000 fresh points, metric ``L = 1{y in [lo, hi]}`` (``get_metric("coverage")``),
  collection = all 1,275 intervals of ``x`` with endpoints on the 0.1 grid (50 bins on
  [0, 5]), **target = 0**: :func:`~skfair_audit.group.certify_bounds` then bounds the
  coverage ``P(Y in C(X) | X in G)`` itself (not the disparity from 0.9). 90% simultaneous
  lower bounds, rescaled (``p_star = 0.01``, ``w0 = inf``), ``B = 2000``; unscaled and 95%
  (the level the paper's summary quotes for 80.2% / 83.0%) for comparison.

Headlines: the smallest lower bound over intervals of length >= 1 and >= 2. Truth: the
coverage of the fitted interval function conditional on ``x`` is known in closed form given
the generating model (a Poisson mixture of normal CDFs, see :func:`conditional_coverage`),
integrated over each 0.1 bin by a 400-point midpoint rule; a Monte Carlo estimate from
``--mc-draws`` fresh draws (default 10^6) cross-checks it. We check whether all 1,275 lower
bounds lie below the true coverage of their interval (simultaneous coverage on this
realisation) and report the margin. Then the whole pipeline (new training, calibration and
audit data) is repeated ``--reps`` times, at 90% and at 95%, to estimate the realised
simultaneous coverage and the distribution (mean, sd, 10/50/90% quantiles) of the smallest
lower bounds, which the documentation compares with the paper's at the paper's level.

Writes ``benchmarks/results/conformal_coverage.json`` and ``conformal_coverage.png``
(``--quick``: ``*_quick.*``).

Usage::

    python benchmarks/bench_conformal_coverage.py [--quick] [--reps 200]

Run time (2 shared cores): about 8 minutes (``--reps 200``, two levels); ``--quick``
(``B = 500``, 10 repetitions, 2 x 10^5 Monte Carlo draws) about 30 s.
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
from _conformal import GRID, conformal_trail, simulate, true_bin_coverage  # noqa: E402
from scipy import stats  # noqa: E402

from skfair_audit.group import certify_bounds, get_metric, intervals  # noqa: E402

ALPHA = 0.1
PAPER = {"min_lower_length_ge_1": 0.802, "min_lower_length_ge_2": 0.830,
         "level_quoted": "95% in the paper's summary (§1.1.1); 90% in our note"}


#: Levels of the repeated pipeline: 90% (our note) and 95% (the level the paper's summary
#: quotes for 80.2% / 83.0%), so that the paper's numbers meet ours at their own level.
REPETITION_ALPHAS = (ALPHA, 0.05)


def _level_key(scale, alpha):
    """``"rescaled"`` / ``"unscaled"`` at 90%, ``"rescaled_95"`` ... at another level."""
    return scale if alpha == ALPHA else f"{scale}_{int(round(100 * (1 - alpha)))}"


def _distribution(values):
    """Mean, standard deviation and 10% / 50% / 90% quantiles over the repetitions."""
    v = np.asarray(values, dtype=float)
    q10, q50, q90 = np.quantile(v, [0.1, 0.5, 0.9])
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "q10": float(q10), "median": float(q50), "q90": float(q90)}


def mc_bin_coverage(cqr, rng, n_draws):
    """Monte Carlo coverage per bin from fresh draws (and the per-bin counts)."""
    x, y = simulate(rng, n_draws)
    covered = get_metric("coverage").evaluate(y, cqr.predict(x))[0]
    bins = np.clip(np.searchsorted(GRID, x, side="right") - 1, 0, GRID.size - 2)
    counts = np.bincount(bins, minlength=GRID.size - 1)
    hits = np.bincount(bins, weights=covered, minlength=GRID.size - 1)
    return hits, counts


def interval_truth(collection, bin_cov):
    """True coverage and length of every interval of the collection."""
    member = collection.cell_membership[: GRID.size - 1].astype(float)  # bins x groups
    n_bins = member.sum(axis=0)
    return (bin_cov @ member) / n_bins, n_bins * 0.1


def audit(x_a, y_a, cqr, *, alpha, scale, B, seed):
    collection = intervals(x_a, GRID)
    res = certify_bounds(y_a, cqr.predict(x_a), collection, metric="coverage", target=0.0,
                         alternative="lower", alpha=alpha, scale=scale, n_resamples=B,
                         random_state=seed)
    return collection, res


def summarise(res, truth, length):
    lower = res.lower
    out = {"critical_value": res.critical_value,
           "all_below_truth": bool(np.all(lower <= truth)),
           "n_violations": int(np.sum(lower > truth)),
           "margin_min_truth_minus_lower": float(np.min(truth - lower)),
           "margin_median": float(np.median(truth - lower))}
    for min_len in (1.0, 2.0):
        sel = np.flatnonzero(length >= min_len - 1e-9)
        j = sel[np.argmin(lower[sel])]
        k = sel[np.argmin(truth[sel])]
        out[f"length_ge_{min_len:g}"] = {
            "n_intervals": int(sel.size), "min_lower": float(lower[j]),
            "argmin_interval": res.names[j], "its_estimate": float(res.group_values[j]),
            "its_true_coverage": float(truth[j]), "min_true_coverage": float(truth[k]),
            "argmin_true_interval": res.names[k],
        }
    return out


def one_replicate(seed, *, n_train, n_cal, n_audit, B, alphas=(ALPHA,),
                  scales=("rescaled", "unscaled")):
    cqr, x_a, y_a, boot_seed = conformal_trail(seed, n_train=n_train, n_cal=n_cal,
                                               n_audit=n_audit)
    bin_cov, _, _ = true_bin_coverage(cqr)
    results = {}
    for a in alphas:
        for s in scales:
            collection, res = audit(x_a, y_a, cqr, alpha=a, scale=s, B=B, seed=boot_seed)
            truth, length = interval_truth(collection, bin_cov)
            results[(a, s)] = (res, truth, length)
    marginal = float(bin_cov.mean())
    return cqr, (x_a, y_a), bin_cov, results, marginal


def plot(path, cqr, audit_data, x_fine, cov_fine, res, truth, length, bin_cov):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x_a, y_a = audit_data
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    ax = axes[0]
    order = np.argsort(x_fine)
    band = cqr.predict(x_fine[order])
    ax.scatter(x_a, y_a, s=3, alpha=0.3, color="grey", label="audit points")
    ax.fill_between(x_fine[order], band[:, 0], band[:, 1], alpha=0.3, label="CQR 90% interval")
    ax.set_ylim(-2, 6)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title("audit data and the CQR interval (y clipped to [-2, 6])")

    ax = axes[1]
    ax.plot(x_fine[order], cov_fine[order], color="grey", linewidth=0.6,
            label="true P(Y in C(x) | X = x)")
    for min_len, color in ((1.0, "tab:blue"), (2.0, "tab:orange")):
        sel = np.flatnonzero(np.isclose(length, min_len))
        for j in sel:
            a, b = GRID[:-1][res.groups.cell_membership[:50, j]][[0, -1]] + [0, 0.1]
            ax.plot([a, b], [res.lower[j]] * 2, color=color, alpha=0.35, linewidth=1)
        ax.plot([], [], color=color, label=f"lower bounds, intervals of length {min_len:g}")
    ax.axhline(0.9, color="black", linestyle="--", linewidth=0.8)
    ax.set_ylim(0.75, 1.0)
    ax.set_xlabel("x")
    ax.set_ylabel("coverage")
    ax.legend(loc="lower left", fontsize=8)
    ax.set_title("90% simultaneous lower bounds (rescaled) vs true coverage")

    ax = axes[2]
    sc = ax.scatter(truth, res.lower, c=length, s=6, cmap="viridis")
    lim = [min(res.lower.min(), truth.min()) - 0.02, 1.0]
    ax.plot(lim, lim, color="black", linewidth=0.8)
    ax.set_xlabel("true coverage of the interval")
    ax.set_ylabel("simultaneous 90% lower bound")
    fig.colorbar(sc, ax=ax, label="interval length")
    ax.set_title(f"all {truth.size} intervals: {int(np.sum(res.lower > truth))} above the "
                 f"diagonal (min margin {np.min(truth - res.lower):.3f})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="B = 500, 10 repetitions, 2e5 Monte Carlo draws")
    parser.add_argument("--seed", type=int, default=20240502)
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--mc-draws", type=int, default=None)
    parser.add_argument("--n-train", type=int, default=2000)
    parser.add_argument("--n-cal", type=int, default=2000)
    parser.add_argument("--n-audit", type=int, default=4000)
    args = parser.parse_args(argv)
    B = args.resamples or (500 if args.quick else 2000)
    reps = args.reps if args.reps is not None else (10 if args.quick else 200)
    mc_draws = args.mc_draws or (200_000 if args.quick else 1_000_000)
    suffix = "_quick" if args.quick else ""
    run = Run(__file__, argv, packages=("matplotlib",))
    main_seed, mc_seed, rep_seed = np.random.SeedSequence(args.seed).spawn(3)
    sizes = dict(n_train=args.n_train, n_cal=args.n_cal, n_audit=args.n_audit)

    # --- the main realisation ------------------------------------------------------------
    cqr, audit_data, bin_cov, results, marginal = one_replicate(
        main_seed, B=B, alphas=(ALPHA, 0.05), **sizes)
    _, x_fine, cov_fine = true_bin_coverage(cqr)
    hits, counts = mc_bin_coverage(cqr, np.random.default_rng(mc_seed), mc_draws)
    mc_bin = hits / counts
    res, truth, length = results[(ALPHA, "rescaled")]
    member = res.groups.cell_membership[:50].astype(float)
    mc_truth = (hits @ member) / (counts @ member)
    mc_se = np.sqrt(mc_truth * (1 - mc_truth) / (counts @ member))
    realisation = {
        "cqr_offset": cqr.offset, "true_marginal_coverage": marginal,
        "crossing_fraction_of_x": cqr.crossing_fraction(x_fine),
        "audit_marginal_coverage": float(res.group_values[np.argmax(length)]),
        "n_intervals": len(res.names),
        "truth_check": {
            "method": "closed-form conditional coverage, 400-point midpoint rule per bin",
            "monte_carlo_draws": mc_draws,
            "max_abs_bin_diff_mc_vs_exact": float(np.max(np.abs(mc_bin - bin_cov))),
            "max_abs_interval_diff_mc_vs_exact": float(np.max(np.abs(mc_truth - truth))),
            "max_abs_interval_diff_in_mc_se": float(np.max(np.abs(mc_truth - truth) / mc_se)),
            "true_bin_coverage_min": float(bin_cov.min()),
            "true_bin_coverage_max": float(bin_cov.max()),
        },
    }
    for (a, s), (r, t, ln) in results.items():
        key = f"{s}_{int(round(100 * (1 - a)))}"
        realisation[key] = summarise(r, t, ln)
        if (a, s) == (ALPHA, "rescaled"):
            realisation[key]["all_below_mc_truth"] = bool(np.all(r.lower <= mc_truth))
            realisation[key]["margin_vs_mc_truth"] = float(np.min(mc_truth - r.lower))

    png = run.path(suffix)
    plot(png, cqr, audit_data, x_fine, cov_fine, res, truth, length, bin_cov)

    # --- repetitions of the whole pipeline ----------------------------------------------
    rows = []
    t_rep = time.perf_counter()
    for s in rep_seed.spawn(reps):
        rep_cqr, _, _, rep_results, rep_marginal = one_replicate(
            s, B=B, alphas=REPETITION_ALPHAS, **sizes)
        row = {"true_marginal": rep_marginal,
               "crossing_fraction": rep_cqr.crossing_fraction(np.linspace(0.0005, 4.9995, 5000))}
        for (a, sc), (r, t, ln) in rep_results.items():
            key = _level_key(sc, a)
            row[f"{key}_covered"] = bool(np.all(r.lower <= t))
            row[f"{key}_margin"] = float(np.min(t - r.lower))
            row[f"{key}_min_lower_len1"] = float(r.lower[ln >= 1 - 1e-9].min())
            row[f"{key}_min_lower_len2"] = float(r.lower[ln >= 2 - 1e-9].min())
        row["min_true_len1"] = float(t[ln >= 1 - 1e-9].min())
        row["min_true_len2"] = float(t[ln >= 2 - 1e-9].min())
        rows.append(row)
    repetition = {"n_reps": reps, "seconds": time.perf_counter() - t_rep,
                  "levels": [1 - a for a in REPETITION_ALPHAS]}
    if reps:
        for a in REPETITION_ALPHAS:
            for sc in ("rescaled", "unscaled"):
                key = _level_key(sc, a)
                hits_sc = sum(r[f"{key}_covered"] for r in rows)
                ci = stats.binomtest(hits_sc, reps).proportion_ci(0.95, method="exact")
                repetition[key] = {
                    "simultaneous_coverage": hits_sc / reps, "nominal": 1 - a,
                    "clopper_pearson_95": [ci.low, ci.high],
                    **{f"min_lower_{length}_{stat}": value
                       for length in ("len1", "len2")
                       for stat, value in _distribution(
                           [r[f"{key}_min_lower_{length}"] for r in rows]).items()},
                    "margin_quantiles_5_50_95": np.quantile([r[f"{key}_margin"] for r in rows],
                                                            [0.05, 0.5, 0.95]).tolist(),
                }
        crossing = np.array([r["crossing_fraction"] for r in rows])
        repetition["reps_with_crossing_quantiles"] = int(np.sum(crossing > 0))
        repetition["max_crossing_fraction_of_x"] = float(crossing.max())
        repetition["true_marginal_coverage_mean"] = float(np.mean([r["true_marginal"]
                                                                   for r in rows]))
        repetition["min_true_coverage_len1_mean"] = float(np.mean([r["min_true_len1"]
                                                                   for r in rows]))
        repetition["min_true_coverage_len2_mean"] = float(np.mean([r["min_true_len2"]
                                                                   for r in rows]))
    out = {
        "seed": args.seed,
        "settings": {**sizes, "alpha": ALPHA, "n_resamples": B, "grid": "0:0.1:5 (50 bins)",
                     "target": "constant 0 (bounds on coverage itself)",
                     "metric": "coverage, L = 1{lo <= y <= hi}",
                     "scale": "rescaled (p_star=0.01, w0=inf); unscaled for comparison",
                     "model": "GradientBoostingRegressor(loss='quantile', alpha=0.05/0.95), "
                              "default hyper-parameters, split CQR at 90%"},
        "realisation": realisation,
        "repetitions": repetition,
        "paper": PAPER,
        "note": "The data are re-simulated (the paper's realisation and model are not "
                "available), so the minimum bounds differ from the paper's 80.2% / 83.0%.",
        "figure": png.name,
        "elapsed_seconds": run.elapsed(),
    }
    path = write_results(run, out, suffix=suffix)
    print(json.dumps({"realisation": realisation, "repetitions": repetition}, indent=1))
    print(f"wrote {path} in {out['elapsed_seconds']:.1f} s")


if __name__ == "__main__":
    main()
