"""Speed and memory of the group audit, against ``fairaudit`` 0.0.1 (Cherian & Candès' code).

Usage (in a separate venv holding both packages, so cvxpy never enters the main environment)::

    python -m venv fairaudit-venv
    fairaudit-venv/bin/pip install fairaudit==0.0.1 pandas matplotlib
    fairaudit-venv/bin/pip install -e .
    fairaudit-venv/bin/python benchmarks/bench_group_performance.py [--quick] [--max-rows 10000000]

Everything is single-threaded (``OMP/MKL/OPENBLAS_NUM_THREADS=1``, ``n_jobs=1``). If
``fairaudit`` cannot be imported, part (i) is skipped (the JSON says why) and the rest runs.

(i) Against ``fairaudit`` on the same data and settings: the intersections design of
    ``benchmarks/_group_synthetic.py`` (alternative configuration: 3 attributes, 59 groups up
    to depth 3), ``n = 5,000``, error rate against the overall error rate, ``B = 500``, 90%
    simultaneous lower bounds, unscaled and rescaled (``p_star = 0.01``, ``w0 = inf``;
    fairaudit ``student="prob_bound", prob_threshold=0.01, w_0=inf``). Both get the *same*
    boolean group matrix. Times: calibration (bootstrap + critical value) and end-to-end
    (groups built from the raw attributes, calibration, every group's bound). The critical
    values are compared with the Monte Carlo spread of ours over ``--mc-seeds`` seeds. Then
    the 1,275 intervals (``x ~ U(0, 5)``, 50 bins): fairaudit's ``groups="intervals"`` path
    (its exception text is the result) and its dense path (an ``n x 1,275`` mask) against
    :func:`~skfair_audit.group.intervals`. Known fairaudit failures are re-checked on small
    inputs (empty group -> NaN bounds, FPR label conditioning, leaking metric parameters,
    two-sided flagging p-values, pandas inputs).
(ii) Sufficient statistics: for ``n = 10^4 ... 10^7`` rows (binary metric, 59 categorical
    groups) the one O(n) pass (:meth:`AuditSummary.from_rows
    <skfair_audit.group.AuditSummary.from_rows>`: collection + metric + atoms) and the
    bootstrap on the summary (B = 500) are timed separately: the bootstrap does not grow with
    ``n`` (``bench_group_engine.py`` compares the pass with a pandas groupby-count).
(iii) Memory (``tracemalloc`` peaks): :func:`certify_bounds` over 1,275 intervals for
    several ``batch_size``; 2-D boxes with 15 x 15 bins (14,400 boxes) at ``n = 10^5`` against
    the ``n x 14,400 x 8`` bytes of a dense int64 membership array, and fairaudit's
    ``get_rectangles`` peak at small ``n`` (it grows linearly in ``n``).

Writes ``benchmarks/results/group_performance.json`` (``--quick``:
``group_performance_quick.json``) with ratios, times, memory, versions and the command.

Run time (2 shared cores): about 4 minutes with ``--max-rows 10000000`` (generating and
compressing the 10^7 rows dominates part (ii)); ``--quick`` (``n`` up to 10^6, fewer
repeats) about 1.5 minutes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, best_time, peak_memory, write_results  # noqa: E402
from _group_synthetic import categorical_design, interval_design  # noqa: E402

from skfair_audit.group import (  # noqa: E402
    AuditSummary,
    boxes,
    certify_bounds,
    intersections,
    intervals,
    masks,
)

ALPHA = 0.1
B = 500
P_STAR = 0.01

try:
    import fairaudit
    from fairaudit import Auditor
    from fairaudit import Metric as FAMetric
    from fairaudit.groups import get_intersections, get_rectangles

    FAIRAUDIT_ERROR = None
except Exception as exc:  # noqa: BLE001 - any import failure means "skip part (i)"
    fairaudit = None
    FAIRAUDIT_ERROR = f"{type(exc).__name__}: {exc}"


def error_text(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the measured result
        return f"{type(exc).__name__}: {exc}"
    return None


# --- (i) fairaudit ------------------------------------------------------------------------


def fa_error_metric(name="bench_error_rate"):
    """A fairaudit error-rate metric against the overall error rate (fresh params dict)."""
    return FAMetric(
        name,
        evaluation_function=lambda z, y: (z != y).astype(float),
        threshold_function=lambda z, y, x: (z != y).astype(float),
        metric_params={},
    )


def fa_params(scale, seed):
    params = {"B": B, "seed": seed}
    if scale == "rescaled":
        params.update(student="prob_bound", prob_threshold=P_STAR, w_0=np.inf,
                      student_threshold=-np.inf)
    return params


def fa_lower_bounds(X, y, y_pred, dense, scale, seed):
    """fairaudit's critical value and 90% lower bounds (``type="upper"`` = lower bounds)."""
    auditor = Auditor(X, y, y_pred, fa_error_metric())
    auditor.calibrate_groups(ALPHA, "upper", dense, None, fa_params(scale, seed))
    bounds = np.array([auditor.query_group(j)[0][0] for j in range(dense.shape[1])])
    return float(auditor.critical_values[0]), bounds


def ours_lower_bounds(y, y_pred, groups, scale, seed, batch_size=None):
    return certify_bounds(y, y_pred, groups, metric="error_rate", target="overall",
                          alternative="lower", alpha=ALPHA, scale=scale, p_star=P_STAR,
                          n_resamples=B, random_state=seed, n_jobs=1, batch_size=batch_size)


def dense_masks(groups):
    return np.column_stack([groups.mask(j) for j in range(groups.n_groups)])


def compare_intersections(n, repeat, mc_seeds):
    model = categorical_design("alternative")
    data = model.sample(n, np.random.default_rng(11))
    y, y_pred, attrs = data["y"], data["y_pred"], data["attributes"]
    X = np.column_stack([attrs[a] for a in ("A", "B", "C")]).astype(float)
    groups = intersections(attrs, depth=3)
    dense = dense_masks(groups)
    out = {"n": n, "n_groups": groups.n_groups, "B": B, "alpha": ALPHA}
    for scale in ("unscaled", "rescaled"):
        t_ours, res = best_time(lambda s=scale: ours_lower_bounds(y, y_pred, groups, s, 0),
                                repeat)
        t_ours_e2e, _ = best_time(
            lambda s=scale: ours_lower_bounds(y, y_pred, intersections(attrs, depth=3), s, 0),
            repeat)
        t_fa, (c_fa, b_fa) = best_time(
            lambda s=scale: fa_lower_bounds(X, y, y_pred, dense, s, 1), max(1, repeat // 2))
        t_fa_groups, fa_dense = best_time(lambda: get_intersections(X.copy(), depth=3), 1)
        crit = np.array([ours_lower_bounds(y, y_pred, groups, scale, s).critical_value
                         for s in range(mc_seeds)])
        sd = float(crit.std(ddof=1))
        z = (c_fa - crit.mean()) / (np.sqrt(2.0) * sd) if sd > 0 else float("nan")
        # Bounds below -1 (small groups, unscaled) are clipped by ours to the values a
        # difference of two rates can take, not by fairaudit: compare the others.
        keep = res.lower > -1.0
        width = (res.estimates - res.lower)[keep]
        diff = (b_fa - res.lower)[keep]
        out[scale] = {
            "seconds_ours_calibration_and_bounds": t_ours,
            "seconds_ours_end_to_end": t_ours_e2e,
            "seconds_fairaudit_calibration_and_bounds": t_fa,
            "seconds_fairaudit_end_to_end": t_fa + t_fa_groups,
            "speedup_calibration": t_fa / t_ours,
            "speedup_end_to_end": (t_fa + t_fa_groups) / t_ours_e2e,
            "critical_value_ours_seed0": res.critical_value,
            "critical_value_ours_mc_mean": float(crit.mean()),
            "critical_value_ours_mc_sd": sd,
            "critical_value_fairaudit": c_fa,
            "critical_value_z": float(z),
            "agree_within_mc_error": bool(abs(z) < 3),
            "max_abs_bound_difference": float(np.max(np.abs(diff))),
            "max_bound_difference_relative_to_width": float(np.max(np.abs(diff) / width)),
            "groups_clipped_by_ours_excluded": int(np.sum(~keep)),
            "fairaudit_groups_from_get_intersections": int(fa_dense.shape[1]),
        }
        print(f"  intersections n={n} {scale}: ours {t_ours * 1e3:.1f} ms, fairaudit "
              f"{t_fa:.2f} s -> x{t_fa / t_ours:.0f}; c ours {crit.mean():.4g} +- {sd:.2g}, "
              f"fairaudit {c_fa:.4g} (z = {z:.2f})", flush=True)
    return out


def compare_intervals(n, repeat):
    model = interval_design("alternative")
    data = model.sample(n, np.random.default_rng(12))
    x, y, y_pred = data["x"], data["y"], data["y_pred"]
    groups = intervals(x, grid=model.edges)
    out = {"n": n, "n_groups": groups.n_groups, "B": B}
    metric = fa_error_metric()
    auditor = Auditor(x[:, None], y, y_pred, metric)
    out["fairaudit_intervals_boolean"] = error_text(
        lambda: auditor.calibrate_groups(ALPHA, "upper", "intervals", 0.05, {"B": 20}))
    out["fairaudit_intervals_bounds"] = error_text(
        lambda: auditor.calibrate_groups(ALPHA, "upper", "intervals", None, {"B": 20}))
    dense = dense_masks(groups)
    t_ours, res = best_time(lambda: ours_lower_bounds(y, y_pred, groups, "unscaled", 0), repeat)
    t_fa, (c_fa, _) = best_time(
        lambda: fa_lower_bounds(x[:, None], y, y_pred, dense, "unscaled", 1), 1)
    crit = np.array([ours_lower_bounds(y, y_pred, groups, "unscaled", s).critical_value
                     for s in range(10)])
    sd = float(crit.std(ddof=1))
    z = (c_fa - crit.mean()) / (np.sqrt(2.0) * sd) if sd > 0 else float("nan")
    out["dense_unscaled"] = {
        "seconds_ours": t_ours, "seconds_fairaudit_dense_masks": t_fa,
        "speedup": t_fa / t_ours, "critical_value_ours_mc_mean": float(crit.mean()),
        "critical_value_ours_mc_sd": sd,
        "critical_value_fairaudit": c_fa,
        "critical_value_z": float(z), "agree_within_mc_error": bool(abs(z) < 3),
    }
    print(f"  intervals n={n}: ours {t_ours * 1e3:.1f} ms, fairaudit dense {t_fa:.2f} s -> "
          f"x{t_fa / t_ours:.0f}; groups='intervals': {out['fairaudit_intervals_boolean']}",
          flush=True)
    return out


def fairaudit_failures():
    """Re-check fairaudit's known silent failures on small inputs (and ours on the same)."""
    rng = np.random.default_rng(5)
    n = 2000
    found = {}
    g = rng.integers(0, 3, n)
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < np.where(g == 2, 0.6, 0.8), y, 1 - y)
    X = g[:, None].astype(float)
    dense = np.column_stack([g == k for k in range(3)] + [np.zeros(n, dtype=bool)])

    # empty group + rescaling -> every bound NaN
    a = Auditor(X, y, y_pred, fa_error_metric())
    a.calibrate_groups(ALPHA, "upper", dense, None, fa_params("rescaled", 1))
    fa_b = [a.query_group(j)[0][0] for j in range(3)]
    ours = certify_bounds(y, y_pred, masks(dense, names=["g0", "g1", "g2", "empty"]),
                          metric="error_rate", alternative="lower", n_resamples=200,
                          random_state=0)
    found["empty_group_rescaled"] = {
        "fairaudit_critical_value": float(a.critical_values[0]),
        "fairaudit_bounds_nonempty_groups": [float(v) for v in fa_b],
        "confirmed": bool(np.all(np.isnan(fa_b))),
        "ours_bounds": [float(v) for v in ours.lower], "ours_empty_groups": ours.empty_groups,
    }

    # FPR: conditioning on Y = 1 instead of Y = 0
    fresh = FAMetric("predictive_equality", metric_params={})
    a = Auditor(X, y, y_pred, fresh)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.calibrate_groups(ALPHA, "upper", dense[:, :3], None, {"B": 50, "seed": 1})
        _, values, thresholds = a.query_group(0)
    neg = y == 0
    true_fpr = float(np.mean(y_pred[neg & (g == 0)] == 1))
    true_tpr = float(np.mean(y_pred[(y == 1) & (g == 0)] == 1))
    found["fpr_label_conditioning"] = {
        "group": "g=0", "fairaudit_metric_value": float(values[0]),
        "fairaudit_threshold": float(thresholds[0]) if thresholds else None,
        "true_fpr": true_fpr, "true_tpr": true_tpr,
        "confirmed": bool(not np.isclose(values[0], true_fpr)),
    }

    # mutable default metric_params: FPR's y_values leak into a later custom metric
    FAMetric("predictive_equality")
    later = FAMetric("bench_later", evaluation_function=lambda z, y: (z != y).astype(float),
                     threshold_function=lambda z, y, x: (z != y).astype(float))
    found["metric_params_leak"] = {
        "later_metric_params": {k: list(v) for k, v in later.metric_params.items()},
        "later_requires_conditioning": bool(later.requires_conditioning()),
        "confirmed": bool(later.requires_conditioning()),
    }

    # two-sided flagging: p = 1 - 2 Phi(|t|/s) <= 0, every group flagged
    yy = rng.integers(0, 2, n)
    same = np.where(rng.random(n) < 0.8, yy, 1 - yy)  # no disparity at all
    a = Auditor(X, yy, same, fa_error_metric())
    flags, _ = a.flag_groups(dense[:, :3], "interval", 0.1, 0.0,
                             {"student": "mad", "student_threshold": -np.inf, "B": 100})
    found["two_sided_flagging"] = {"flags_without_disparity": [bool(f) for f in flags],
                                   "confirmed": bool(np.all(flags))}

    # pandas inputs
    try:
        import pandas as pd

        found["pandas_inputs"] = {"error": error_text(lambda: Auditor(
            pd.DataFrame(X), pd.Series(y), pd.Series(y_pred), fa_error_metric()
        ).calibrate_groups(ALPHA, "upper", pd.DataFrame(dense[:, :3]), None, {"B": 20}))}
        found["pandas_inputs"]["confirmed"] = found["pandas_inputs"]["error"] is not None
    except ImportError:
        pass
    return found


# --- (ii) sufficient statistics -------------------------------------------------------------


def scaling(sizes, repeat):
    model = categorical_design("alternative")
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        t0 = time.perf_counter()
        data = model.sample(n, rng)
        t_generate = time.perf_counter() - t0
        y, y_pred = data["y"], data["y_pred"]
        t_pass, summary = best_time(lambda d=data: AuditSummary.from_rows(
            d["y"], d["y_pred"], d["attributes"], metric="error_rate"), repeat)
        summary.certify_bounds(alternative="lower", n_resamples=B, random_state=0,
                               n_jobs=1)  # warm-up
        t_boot, res = best_time(lambda s=summary: s.certify_bounds(
            alternative="lower", n_resamples=B, random_state=0, n_jobs=1), repeat)
        rows.append({"n": n, "n_groups": summary.groups.n_groups,
                     "n_atoms": summary.stats.n_atoms, "seconds_generate_rows": t_generate,
                     "seconds_one_pass": t_pass, "seconds_bootstrap": t_boot,
                     "critical_value": res.critical_value})
        print(f"  n={n:>9,d}: one pass {t_pass:.3f} s, bootstrap {t_boot * 1e3:.1f} ms "
              f"({summary.stats.n_atoms} atoms)", flush=True)
        del data, y, y_pred, summary, res
        gc.collect()
    return rows


# --- (iii) memory ---------------------------------------------------------------------------


def memory(batch_sizes, n_boxes_rows):
    out = {}
    model = interval_design("alternative")
    data = model.sample(20_000, np.random.default_rng(3))
    groups = intervals(data["x"], grid=model.edges)
    per_batch = []
    for bs in batch_sizes:
        peak, _ = peak_memory(lambda b=bs: certify_bounds(
            data["y"], data["y_pred"], groups, metric="error_rate", target=0.1,
            n_resamples=B, random_state=0, n_jobs=1, batch_size=b))
        per_batch.append({"batch_size": bs, "peak_bytes": int(peak)})
        print(f"  intervals (1,275 groups, n=20,000) batch_size={bs}: peak "
              f"{peak / 2**20:.1f} MiB", flush=True)
    out["intervals_batch_size"] = {"n": 20_000, "n_groups": groups.n_groups, "B": B,
                                   "peaks": per_batch}

    rng = np.random.default_rng(4)
    n = n_boxes_rows
    x1, x2 = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8 - 0.1 * x1, y, 1 - y)
    grid = np.linspace(0, 1, 16)
    peak_groups, bx = peak_memory(lambda: boxes(x1, x2, grid, grid))
    peak_cert, res = peak_memory(lambda: certify_bounds(
        y, y_pred, bx, metric="error_rate", n_resamples=B, random_state=0, n_jobs=1))
    t_cert, _ = best_time(lambda: certify_bounds(
        y, y_pred, bx, metric="error_rate", n_resamples=B, random_state=0, n_jobs=1), 1)
    dense_bytes = n * bx.n_groups * 8
    out["boxes_15x15"] = {
        "n": n, "n_groups": bx.n_groups, "B": B,
        "peak_bytes_collection": int(peak_groups), "peak_bytes_certify_bounds": int(peak_cert),
        "seconds_certify_bounds": t_cert,
        "dense_int64_bytes": int(dense_bytes),
        "ratio_dense_to_peak": dense_bytes / max(peak_cert, peak_groups),
    }
    print(f"  boxes 15x15 ({bx.n_groups} groups, n={n:,d}): collection peak "
          f"{peak_groups / 2**20:.1f} MiB, certify_bounds peak {peak_cert / 2**20:.1f} MiB in "
          f"{t_cert:.2f} s; dense int64 would be {dense_bytes / 2**30:.1f} GiB", flush=True)
    if fairaudit is not None:
        small = 1000
        X = np.column_stack([x1[:small], x2[:small]])
        peak_fa, fa_dense = peak_memory(lambda: get_rectangles(X, {0: grid[1:-1],
                                                                   1: grid[1:-1]}))
        out["boxes_15x15"]["fairaudit_get_rectangles"] = {
            "n": small, "n_groups": int(fa_dense.shape[1]), "peak_bytes": int(peak_fa),
            "peak_bytes_per_row": peak_fa / small,
            "extrapolated_peak_bytes_at_n": peak_fa / small * n,
        }
        print(f"  fairaudit get_rectangles n={small}: peak {peak_fa / 2**20:.0f} MiB "
              f"-> {peak_fa / small * n / 2**30:.1f} GiB at n={n:,d}", flush=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-rows", type=int, default=10_000_000)
    parser.add_argument("--mc-seeds", type=int, default=20)
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else 3
    max_rows = min(args.max_rows, 1_000_000) if args.quick else args.max_rows
    run = Run(__file__, argv, packages=("fairaudit", "cvxpy"),
              threads={v: os.environ.get(v) for v in ("OMP_NUM_THREADS",
                                                      "OPENBLAS_NUM_THREADS",
                                                      "MKL_NUM_THREADS")})
    result = {"executable": sys.executable}

    print("(i) against fairaudit 0.0.1", flush=True)
    if fairaudit is None:
        print(f"  fairaudit is not importable ({FAIRAUDIT_ERROR}): part (i) skipped; run "
              "this script with the venv that holds fairaudit (see the docstring).")
        result["fairaudit"] = {"skipped": FAIRAUDIT_ERROR}
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result["fairaudit"] = {
                "intersections": compare_intersections(5_000, repeat, args.mc_seeds),
                "intervals": compare_intervals(5_000, repeat),
                "failures": fairaudit_failures(),
            }
        for key, val in result["fairaudit"]["failures"].items():
            print(f"  fairaudit failure {key}: confirmed={val.get('confirmed')}")

    print("(ii) sufficient statistics: cost versus n", flush=True)
    sizes = [n for n in (10_000, 100_000, 1_000_000, 10_000_000) if n <= max_rows]
    result["scaling"] = scaling(sizes, repeat)
    boot = [r["seconds_bootstrap"] for r in result["scaling"]]
    result["scaling_summary"] = {
        "bootstrap_seconds_ratio_largest_to_smallest_n": boot[-1] / boot[0],
        "rows_ratio": sizes[-1] / sizes[0],
    }

    print("(iii) memory", flush=True)
    result["memory"] = memory([10, 50, 100, 500], 20_000 if args.quick else 100_000)
    result["elapsed_seconds"] = round(run.elapsed(), 1)
    path = write_results(run, result, suffix="_quick" if args.quick else "")
    print(f"wrote {path} in {result['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
