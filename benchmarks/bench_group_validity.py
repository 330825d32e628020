"""Validity of the group audit: simultaneous coverage of the bounds, FDR and power of flagging.

Usage::

    python benchmarks/bench_group_validity.py [--quick] [--reps 500] [--resamples 500]
                                              [--n-jobs 2] [--seed 20240501]

Designs (``benchmarks/_group_synthetic.py``, exact truth from the population):

* ``intersections``: attributes A (2 levels) x B (3) x C (4), every intersection up to depth 3
  (59 groups, the smallest with probability 0.0225); metric the error rate, target the overall
  error rate (estimated, re-estimated in every bootstrap replicate);
* ``intervals``: x ~ U(0, 5), 50 bins of width 0.1, all 1,275 grid intervals; metric the
  miscoverage indicator, known target 0.1.

Each has a ``null`` configuration (every disparity is 0) and an ``alternative`` one (pockets
of atoms / a bump of x with higher error; 8 of 59 groups and 493 of 1,275 intervals have
``epsilon(G) > 0.05``). For every (design, configuration, n in {1,000, 5,000, 20,000}) the
script draws ``reps`` audit trails and, on each, runs

* :func:`skfair_audit.group.certify_bounds` with ``alpha = 0.1``, ``B = resamples``, for
  ``scale="unscaled"`` and ``"rescaled"`` (``p_star = 0.01``, ``w0 = inf``), one-sided lower
  bounds and two-sided intervals (same bootstrap seed). Simultaneous coverage is the
  fraction of audits where *every* reported group satisfies ``lower <= epsilon(G)``
  (``<= upper`` too for two-sided): nominal 90%; acceptance target -2/+3 points at
  ``n >= 5,000``;
* :func:`skfair_audit.group.flag_groups` (delta-method p-values, Benjamini-Hochberg at
  ``q = 0.1``, ``alternative="greater"``). Alternative configuration: ``epsilon0 = 0.05``,
  nulls are the groups with ``epsilon(G) <= 0.05``; FDR = mean false discovery proportion,
  power = mean fraction of non-null groups flagged (the truth is compared with a tolerance
  of 1e-12, ``TRUTH_TOLERANCE``: exact zeros come out of floating point as +-1e-17). Null
  configuration: ``epsilon0 = 0``, so
  every group sits on the boundary of its null and the FDR equals the probability of any
  flag. For intersections the FDR is reported for the estimated overall target (the
  audit's default) and for the known true target (the setting of the paper's FDR theorem).

Regime ``--regime small-groups`` (written to ``group_validity_small_groups.{csv,json}``):
the ``intersections`` design audited for its **false positive rate**, with ``y = 0`` in a
share ``NEGATIVE_RATE = 0.21`` of the rows (independent of everything else, so the truth is
unchanged), at n in {1,000, 2,000, 5,000, 10,000, 20,000} rows. The audit sample is the
negatives: about 1,050 at n = 5,000, and the smallest intersection (probability 0.0225) holds
about 24 of them (5 at n = 1,000, 95 at n = 20,000). Unscaled, rescaled (``w0 = inf``) and
variance-adaptive rescaled (``"rescaled-w0"``: ``w0 = 0.01``) bounds, one- and two-sided,
``reps = 2,000`` (Monte Carlo se 0.67 points at 90%), same ``alpha``, ``B`` and ``p_star``
as above. Each
audit also records the number of negatives in its smallest group and the size of the
smallest group whose bound misses the truth, so that a shortfall can be traced to the group
sizes. Seeds: ``SeedSequence([seed, 2, config, n, r])`` (index 2: no collision with the two
designs above).

Monte Carlo standard errors are ``sqrt(p (1 - p) / reps)`` for coverage and
``sd / sqrt(reps)`` for FDR and power. Seeds: audit trail and bootstrap of repetition ``r`` of
setting ``(design, configuration, n)`` come from ``SeedSequence([seed, design, config, n, r])``,
so results do not depend on ``--n-jobs`` or chunking.

Writes ``benchmarks/results/group_validity.{csv,json}`` (``--quick``: ``group_validity_quick``)
with the exact command, versions, seeds and elapsed time, and prints the tables.

The small-groups regime (``python benchmarks/bench_group_validity.py --regime small-groups``,
10 settings x 2,000 audits x 6 bootstraps = 120,000 bootstraps) takes 10-20 minutes with
``--n-jobs 2`` on 2 cores shared with other jobs (``elapsed_seconds`` and the load average
in its JSON).

Run time (2 shared cores, ``--n-jobs 2``, BLAS single-threaded): ``--quick`` (60 reps,
B = 500) about 1.5 minutes; the full run (500 reps, B = 500: 12 settings x 500 audits x 4
bootstraps = 24,000 bootstraps) about 13 minutes (measured: see ``elapsed_seconds`` in the
JSON).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from _group_synthetic import categorical_design, interval_design  # noqa: E402

from skfair_audit.group import (  # noqa: E402
    certify_bounds,
    flag_groups,
    intersections,
    intervals,
)

DESIGNS = ("intersections", "intervals")
CONFIGS = ("null", "alternative")
SIZES = (1_000, 5_000, 20_000)
SCALES = ("unscaled", "rescaled")
ALPHA = 0.1
Q = 0.1
EPSILON0_ALT = 0.05
P_STAR = 0.01
#: The exact truth is computed in floating point: a disparity that is 0 in exact arithmetic
#: comes out as +-1e-17 (e.g. 174 of the 1,275 intervals of the null design). Comparisons with
#: the truth use this tolerance, far below any Monte Carlo or bootstrap resolution.
TRUTH_TOLERANCE = 1e-12
# groups whose lower-bound margin (estimate - lower bound) is reported
LARGE_GROUP = {"intersections": "A=0", "intervals": "x in [0, 5]"}
SMALL_GROUP = {"intersections": "A=1 & B=2 & C=3", "intervals": "x in [3.4, 3.5)"}
# the small-groups regime (``--regime small-groups``): false positive rate, few negatives
NEGATIVE_RATE = 0.21
SMALL_GROUP_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000)
#: The regime's scalings: (label, scale, w0). ``"rescaled-w0"`` is the variance-adaptive
#: rescaling with a finite ``w0`` (the group's own standard deviation gets weight
#: ``P_n(G) / (P_n(G) + w0)``), at the smallest group frequency of interest.
W0_ADAPTIVE = 0.01
SMALL_GROUP_SCALES = (("unscaled", "unscaled", np.inf), ("rescaled", "rescaled", np.inf),
                      ("rescaled-w0", "rescaled", W0_ADAPTIVE))
SMALL_GROUPS_INDEX = len(DESIGNS)  # seed index after the designs' own
SMALL_GROUPS_REPS = 2_000


def is_null(eps, epsilon0):
    """Groups whose true disparity is at most ``epsilon0`` (up to :data:`TRUTH_TOLERANCE`)."""
    return np.asarray(eps) <= epsilon0 + TRUTH_TOLERANCE


def covers(lower, upper, eps):
    """Whether ``lower <= eps <= upper`` for every group, up to :data:`TRUTH_TOLERANCE`."""
    eps = np.asarray(eps)
    return bool(np.all((lower <= eps + TRUTH_TOLERANCE) & (eps - TRUTH_TOLERANCE <= upper)))


def make_design(design, config):
    return categorical_design(config) if design == "intersections" else interval_design(config)


def design_truth(design, config, _cache={}):  # noqa: B006 - per-process memo of the truth
    if (design, config) not in _cache:
        _cache[design, config] = make_design(design, config).truth()
    return _cache[design, config]


def audit_inputs(design, model, n, rng):
    """``(y, y_pred, collection, target)`` of one simulated audit trail."""
    data = model.sample(n, rng)
    if design == "intersections":
        groups = intersections(data["attributes"], depth=model.depth)
        target = "overall"
    else:
        groups = intervals(data["x"], grid=model.edges)
        target = model.theta
    return data["y"], data["y_pred"], groups, target


def one_audit(design, config, n, rep, seed, n_resamples):
    """All measurements on one audit trail (a flat dict)."""
    model = make_design(design, config)
    truth = design_truth(design, config)
    data_seq, boot_seq = np.random.SeedSequence(
        [seed, DESIGNS.index(design), CONFIGS.index(config), n, rep]
    ).spawn(2)
    y, y_pred, groups, target = audit_inputs(design, model, n, np.random.default_rng(data_seq))
    eps = np.array([truth[name][2] for name in groups.names])
    out = {"n_groups": len(groups.names)}
    boot_seed = int(boot_seq.generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for scale in SCALES:
            common = dict(metric="error_rate", target=target, alpha=ALPHA, scale=scale,
                          p_star=P_STAR, n_resamples=n_resamples, random_state=boot_seed,
                          n_jobs=1)
            low = certify_bounds(y, y_pred, groups, alternative="lower", **common)
            two = certify_bounds(y, y_pred, groups, alternative="two-sided", **common)
            out[f"cover_lower_{scale}"] = covers(low.lower, np.inf, eps)
            out[f"cover_two_{scale}"] = covers(two.lower, two.upper, eps)
            out[f"crit_{scale}"] = low.critical_value
            margin = low.estimates - low.lower
            out[f"margin_median_{scale}"] = float(np.median(margin))
            index = {name: j for j, name in enumerate(low.names)}
            for label, name in (("large", LARGE_GROUP[design]), ("small", SMALL_GROUP[design])):
                out[f"margin_{label}_{scale}"] = (
                    float(margin[index[name]]) if name in index else float("nan")
                )
        flag_targets = {"estimated": target}
        if design == "intersections":
            flag_targets["known"] = model.theta
        epsilon0 = EPSILON0_ALT if config == "alternative" else 0.0
        null = is_null(eps, epsilon0)
        for label, tgt in flag_targets.items():
            res = flag_groups(y, y_pred, groups, metric="error_rate", target=tgt,
                              epsilon0=epsilon0, alternative="greater", q=Q)
            flagged = res.flagged
            n_flag = int(flagged.sum())
            out[f"fdp_{label}"] = float((flagged & null).sum() / max(n_flag, 1))
            out[f"n_flagged_{label}"] = n_flag
            n_nonnull = int((~null).sum())
            out[f"power_{label}"] = (
                float((flagged & ~null).sum() / n_nonnull) if n_nonnull else float("nan")
            )
    return out


def small_groups_audit(config, n, rep, seed, n_resamples):
    """Coverage of the false-positive-rate bounds on one trail of the small-groups regime."""
    model = make_design("intersections", config)
    truth = design_truth("intersections", config)
    data_seq, boot_seq = np.random.SeedSequence(
        [seed, SMALL_GROUPS_INDEX, CONFIGS.index(config), n, rep]).spawn(2)
    data = model.sample(n, np.random.default_rng(data_seq), negative_rate=NEGATIVE_RATE)
    groups = intersections(data["attributes"], depth=model.depth)
    eps = np.array([truth[name][2] for name in groups.names])
    boot_seed = int(boot_seq.generate_state(1)[0])
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for scale, kind, w0 in SMALL_GROUP_SCALES:
            for sided, alternative in (("lower", "lower"), ("two", "two-sided")):
                res = certify_bounds(data["y"], data["y_pred"], groups,
                                     metric="false_positive_rate", target="overall",
                                     alternative=alternative, alpha=ALPHA, scale=kind,
                                     p_star=P_STAR, w0=w0, n_resamples=n_resamples,
                                     random_state=boot_seed, n_jobs=1)
                miss = ~((res.lower <= eps + TRUTH_TOLERANCE)
                         & (eps - TRUTH_TOLERANCE <= res.upper))
                out[f"cover_{sided}_{scale}"] = not miss.any()
                out[f"smallest_missed_{sided}_{scale}"] = (
                    int(res.sizes[miss].min()) if miss.any() else -1)
                out["negatives"] = int(res.n)
                out["smallest_group"] = int(res.sizes.min())
    return out


def small_groups_chunk(config, n, reps, seed, n_resamples):
    return [small_groups_audit(config, n, r, seed, n_resamples) for r in reps]


def summarize_small_groups(config, n, records):
    """Coverage rows of one (config, n) setting of the small-groups regime."""
    reps = len(records)
    smallest = np.array([r["smallest_group"] for r in records])
    rows = []
    for scale, _, w0 in SMALL_GROUP_SCALES:
        for sided in ("lower", "two"):
            cov = float(np.mean([r[f"cover_{sided}_{scale}"] for r in records]))
            missed = np.array([r[f"smallest_missed_{sided}_{scale}"] for r in records])
            missed = missed[missed >= 0]
            diff = 100 * (cov - (1 - ALPHA))
            rows.append({
                "design": "intersections", "metric": "false_positive_rate", "config": config,
                "n": n, "reps": reps, "scale": scale, "w0": "inf" if np.isinf(w0) else w0,
                "quantity": f"coverage_{'lower' if sided == 'lower' else 'two_sided'}",
                "nominal": 1 - ALPHA, "estimate": cov,
                "mc_se": math.sqrt(cov * (1 - cov) / reps),
                "within_target": bool(-2.0 <= diff <= 3.0),
                "mean_negatives": float(np.mean([r["negatives"] for r in records])),
                "median_smallest_group": float(np.median(smallest)),
                "min_smallest_group": int(smallest.min()),
                "misses": int(missed.size),
                "median_smallest_missed_group": (float(np.median(missed)) if missed.size
                                                 else None),
                "misses_in_groups_under_30": int((missed < 30).sum()),
            })
    return rows


def run_small_groups(args, argv, reps, parallel):
    """The small-groups regime: its own results files (the main run's are left alone)."""
    from joblib import delayed

    run = Run(__file__, argv, blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))
    rows, timings = [], {}
    for config in CONFIGS:
        for n in SMALL_GROUP_SIZES:
            t0 = time.perf_counter()
            chunks = np.array_split(np.arange(reps), max(1, 2 * args.n_jobs))
            parts = parallel(delayed(small_groups_chunk)(config, n, chunk.tolist(), args.seed,
                                                         args.resamples)
                             for chunk in chunks if chunk.size)
            rows.extend(summarize_small_groups(config, n, [r for p in parts for r in p]))
            timings[f"{config}/{n}"] = round(time.perf_counter() - t0, 2)
            print(f"  small groups/{config}/n={n}: {reps} audits in "
                  f"{timings[f'{config}/{n}']:.1f} s", flush=True)
    elapsed = run.elapsed()
    print("\nSmall groups, false positive rate: simultaneous coverage (MC se)")
    for r in rows:
        print(f"{r['config']:12s}{r['n']:>7d} {r['scale']:12s}{r['quantity']:20s}"
              f"{100 * r['estimate']:6.1f} ({100 * r['mc_se']:.1f})  smallest group "
              f"{r['median_smallest_group']:.0f} negatives (median)")
    model = make_design("intersections", "null")
    meta = {
        "regime": "small-groups", "seed": args.seed,
        "seed_scheme": f"SeedSequence([seed, {SMALL_GROUPS_INDEX}, config_index, n, rep])"
                       ".spawn(2) -> (audit trail, bootstrap)",
        "reps": reps, "n_resamples": args.resamples, "alpha": ALPHA, "p_star": P_STAR,
        "scales": [{"label": label, "scale": kind, "w0": "inf" if np.isinf(w0) else w0}
                   for label, kind, w0 in SMALL_GROUP_SCALES],
        "metric": "false_positive_rate", "target": "overall",
        "negative_rate": NEGATIVE_RATE, "sizes": list(SMALL_GROUP_SIZES),
        "n_groups": len(model.groups()),
        "min_group_probability": float(min(v[0] for v in model.truth().values())),
        "expected_negatives_smallest_group": {
            str(n): n * NEGATIVE_RATE * float(min(v[0] for v in model.truth().values()))
            for n in SMALL_GROUP_SIZES},
        "n_jobs": args.n_jobs, "truth_tolerance": TRUTH_TOLERANCE,
        "acceptance": "coverage within -2/+3 points of 90%",
        "elapsed_seconds": round(elapsed, 1), "setting_seconds": timings, "rows": rows,
    }
    path = write_results(run, meta, suffix="_small_groups" + ("_quick" if args.quick else ""),
                         rows=rows)
    print(f"\nwrote {path} and its CSV in {elapsed:.0f} s")


def run_chunk(design, config, n, reps, seed, n_resamples):
    return [one_audit(design, config, n, r, seed, n_resamples) for r in reps]


def mean_se(values):
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0


def summarize(design, config, n, records):
    reps = len(records)
    rows = []
    base = {"design": design, "config": config, "n": n, "reps": reps,
            "n_groups": int(np.median([r["n_groups"] for r in records]))}
    for scale in SCALES:
        for sided in ("lower", "two"):
            cov = float(np.mean([r[f"cover_{sided}_{scale}"] for r in records]))
            se = math.sqrt(cov * (1 - cov) / reps)
            diff = 100 * (cov - (1 - ALPHA))
            rows.append({
                **base, "quantity": f"coverage_{'lower' if sided == 'lower' else 'two_sided'}",
                "scale": scale, "target_kind": "overall" if design == "intersections"
                else "known", "nominal": 1 - ALPHA, "estimate": cov, "mc_se": se,
                "within_target": bool(-2.0 <= diff <= 3.0) if n >= 5000 else None,
                "mean_critical_value": float(np.mean([r[f"crit_{scale}"] for r in records])),
                "mean_median_margin": mean_se([r[f"margin_median_{scale}"] for r in records])[0],
                "mean_margin_large_group": mean_se(
                    [r[f"margin_large_{scale}"] for r in records])[0],
                "mean_margin_small_group": mean_se(
                    [r[f"margin_small_{scale}"] for r in records])[0],
            })
    labels = ("estimated", "known") if design == "intersections" else ("estimated",)
    for label in labels:
        kind = ("overall" if label == "estimated" else "known") if design == "intersections" \
            else "known"
        fdr, fdr_se = mean_se([r[f"fdp_{label}"] for r in records])
        common = {**base, "scale": "", "target_kind": kind, "nominal": Q,
                  "mean_critical_value": None, "mean_median_margin": None,
                  "mean_margin_large_group": None, "mean_margin_small_group": None}
        rows.append({**common, "quantity": "fdr", "estimate": fdr, "mc_se": fdr_se,
                     "within_target": bool(fdr <= Q + 2 * fdr_se),
                     "mean_flagged": float(np.mean([r[f"n_flagged_{label}"] for r in records]))})
        if config == "alternative":
            pw, pw_se = mean_se([r[f"power_{label}"] for r in records])
            rows.append({**common, "quantity": "power", "nominal": None, "estimate": pw,
                         "mc_se": pw_se, "within_target": None,
                         "mean_flagged": float(np.mean(
                             [r[f"n_flagged_{label}"] for r in records]))})
    return rows


def truth_summary():
    out = {}
    for design in DESIGNS:
        for config in CONFIGS:
            model = make_design(design, config)
            eps = np.array([v[2] for v in model.truth().values()])
            probs = np.array([v[0] for v in model.truth().values()])
            eps0 = EPSILON0_ALT if config == "alternative" else 0.0
            out[f"{design}/{config}"] = {
                "n_groups": int(eps.size), "theta": model.theta,
                "min_group_probability": float(probs.min()),
                "max_disparity": float(eps.max()), "min_disparity": float(eps.min()),
                "flagging_epsilon0": eps0, "n_nonnull": int((~is_null(eps, eps0)).sum()),
            }
    return out


def print_tables(rows):
    print("\nSimultaneous coverage of 90% bounds (MC se in parentheses)")
    print(f"{'design':14s}{'config':12s}{'n':>7s} {'scale':9s}{'lower':>16s}{'two-sided':>16s}"
          f"{'median margin':>15s}")
    cov = [r for r in rows if r["quantity"].startswith("coverage")]
    keys = sorted({(r["design"], r["config"], r["n"], r["scale"]) for r in cov},
                  key=lambda k: (DESIGNS.index(k[0]), CONFIGS.index(k[1]), k[2], k[3]))
    for key in keys:
        pair = {r["quantity"]: r for r in cov if (r["design"], r["config"], r["n"],
                                                  r["scale"]) == key}
        lo, tw = pair["coverage_lower"], pair["coverage_two_sided"]
        print(f"{key[0]:14s}{key[1]:12s}{key[2]:>7d} {key[3]:9s}"
              f"{100 * lo['estimate']:9.1f} ({100 * lo['mc_se']:.1f})"
              f"{100 * tw['estimate']:9.1f} ({100 * tw['mc_se']:.1f})"
              f"{lo['mean_median_margin']:15.4f}")
    print("\nBenjamini-Hochberg flagging at q = 0.1")
    print(f"{'design':14s}{'config':12s}{'n':>7s} {'target':9s}{'FDR':>16s}{'power':>16s}")
    fl = [r for r in rows if r["quantity"] in ("fdr", "power")]
    keys = sorted({(r["design"], r["config"], r["n"], r["target_kind"]) for r in fl},
                  key=lambda k: (DESIGNS.index(k[0]), CONFIGS.index(k[1]), k[2], k[3]))
    for key in keys:
        pair = {r["quantity"]: r for r in fl if (r["design"], r["config"], r["n"],
                                                 r["target_kind"]) == key}
        f = pair["fdr"]
        p = pair.get("power")
        ptxt = f"{100 * p['estimate']:9.1f} ({100 * p['mc_se']:.1f})" if p else f"{'-':>16s}"
        print(f"{key[0]:14s}{key[1]:12s}{key[2]:>7d} {key[3]:9s}"
              f"{100 * f['estimate']:9.1f} ({100 * f['mc_se']:.1f}){ptxt}")


def save(run, rows, args, reps, timings, complete):
    """Write the CSV and JSON (after every setting, so a partial run leaves results)."""
    fields = ["design", "n_groups", "config", "n", "quantity", "scale", "target_kind",
              "nominal", "estimate", "mc_se", "within_target", "reps", "mean_critical_value",
              "mean_median_margin", "mean_margin_large_group", "mean_margin_small_group",
              "mean_flagged"]
    meta = {
        "seed": args.seed,
        "seed_scheme": "SeedSequence([seed, design_index, config_index, n, rep]).spawn(2) "
                       "-> (audit trail, bootstrap)",
        "reps": reps, "n_resamples": args.resamples, "alpha": ALPHA, "q": Q,
        "p_star": P_STAR, "w0": "inf", "epsilon0_alternative": EPSILON0_ALT,
        "epsilon0_null": 0.0, "sizes": list(SIZES), "n_jobs": args.n_jobs,
        "truth_tolerance": TRUTH_TOLERANCE,
        "acceptance": "coverage within -2/+3 points of 90% at n >= 5000",
        "margin_groups": {"large": LARGE_GROUP, "small": SMALL_GROUP},
        "truth": truth_summary(),
        "elapsed_seconds": round(run.elapsed(), 1), "complete": complete,
        "setting_seconds": timings, "rows": rows,
    }
    return write_results(run, meta, suffix="_quick" if args.quick else "",
                         rows=[{k: row.get(k) for k in fields} for row in rows])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 repetitions per setting")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per setting")
    parser.add_argument("--resamples", type=int, default=500, help="bootstrap replicates B")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--regime", choices=("main", "small-groups"), default="main",
                        help="the main grid, or the false-positive-rate small-groups regime "
                             f"({SMALL_GROUPS_REPS:,} repetitions per setting by default)")
    args = parser.parse_args(argv)

    from joblib import Parallel, delayed

    if args.regime == "small-groups":
        reps = args.reps or (60 if args.quick else SMALL_GROUPS_REPS)
        with Parallel(n_jobs=args.n_jobs) as parallel:
            run_small_groups(args, argv, reps, parallel)
        return
    reps = args.reps or (60 if args.quick else 500)

    run = Run(__file__, argv, blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))
    rows, timings = [], {}
    n_chunks = max(1, 2 * args.n_jobs)
    with Parallel(n_jobs=args.n_jobs) as parallel:
        for design in DESIGNS:
            for config in CONFIGS:
                for n in SIZES:
                    t0 = time.perf_counter()
                    chunks = np.array_split(np.arange(reps), n_chunks)
                    parts = parallel(
                        delayed(run_chunk)(design, config, n, chunk.tolist(), args.seed,
                                           args.resamples)
                        for chunk in chunks if chunk.size
                    )
                    records = [r for part in parts for r in part]
                    rows.extend(summarize(design, config, n, records))
                    timings[f"{design}/{config}/{n}"] = round(time.perf_counter() - t0, 2)
                    save(run, rows, args, reps, timings, complete=False)
                    print(f"  {design}/{config}/n={n}: {reps} audits in "
                          f"{timings[f'{design}/{config}/{n}']:.1f} s", flush=True)
    print_tables(rows)
    path = save(run, rows, args, reps, timings, complete=True)
    print(f"\nwrote {path} and its CSV in {run.elapsed():.0f} s")


if __name__ == "__main__":
    main()
