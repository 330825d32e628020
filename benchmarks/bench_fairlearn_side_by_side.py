"""fairlearn ``MetricFrame(n_boot=..., ci_quantiles=...)`` against our simultaneous group audit.

Usage (fairlearn 0.15.0 installed next to the package; ``pip install --dry-run fairlearn``
changes no installed package)::

    SKFAIR_AUDIT_DATA=/path/to/data python benchmarks/bench_fairlearn_side_by_side.py
        [--quick] [--n-boot 500] [--draws 500] [--seed 20240614]

fairlearn's bootstrap (``fairlearn.metrics._bootstrap``): ``n_boot`` row resamples with
replacement (``DataFrame.sample(frac=1, replace=True, random_state=rs[i])`` with
``rs = default_rng(random_state).integers(0, 2**32 - 1, n_boot)``), the metric recomputed on
every cell of the sensitive features, and *percentile* intervals per cell
(``np.nanquantile``) and for ``difference()`` = max - min over cells (``np.quantile``). No
multiplicity adjustment, no p-values, serial.

Ours: :func:`skfair_audit.group.certify_bounds` (two-sided, ``alpha = 0.1``, rescaled,
``p_star = 0.01``, same number of resamples ``B = n_boot``) gives intervals valid
*simultaneously* over the collection, and :func:`skfair_audit.group.flag_groups` flags with
FDR control. With the constant target 0 the disparity is the metric itself, so our intervals
bound each cell's FPR directly. A max - min gap interval follows from simultaneous intervals
``[L_G, U_G]``: ``[max(0, max_G L_G - min_G U_G), max_G U_G - min_G L_G]``, valid whenever
all the intervals are.

(A) COMPAS (:func:`~skfair_audit.datasets.fetch_compas`, ``preprocessing="propublica"``,
    6,172 rows): FPR of "high risk" (``decile_score >= 5``) among ``two_year_recid = 0``, by
    race x sex x age_cat. fairlearn: its cells (the full intersections). Ours: (a) the same
    cells, (b) every intersection of up to 3 attributes (marginals included). Flags: FPR at
    least 5 points above the overall FPR, ``q = 0.1`` (the paper's §4.2.2 setting). Times
    for fairlearn (``false_positive_rate``) and ours with the same B.
(B) Synthetic, no disparity: three groups of 1,200 / 795 / 5 rows, every row a negative
    (``y = 0``) with ``y_pred ~ Bernoulli(0.3)`` in every group, so every FPR is 0.3 and the
    true max - min gap is 0. Over ``draws`` independent audit samples: how often fairlearn's
    90% percentile interval for the gap excludes 0, how often its per-group 90% intervals
    all cover 0.3; how often our simultaneous 90% intervals all cover 0.3, and how often
    our derived gap interval excludes 0; how often ``flag_groups`` (``epsilon0 = 0``,
    ``"greater"``, target overall) flags any group. fairlearn's procedure is run through
    an exact numpy replica of its resampling (same seeds: ``RandomState(rs[i]).choice(n, n)``
    as pandas does, ``nanquantile``/``quantile`` as fairlearn does); the replica is checked
    against the real ``MetricFrame`` on the first ``--check-draws`` draws (largest absolute
    difference of every interval end, expected 0) because the real one costs ~0.05 s per
    resample here.

Seeds: one ``SeedSequence(seed)`` spawns COMPAS and the synthetic draws (each draw spawns its
data, fairlearn and our bootstrap seeds); fairlearn's integer ``random_state`` is taken from
the matching child.

Writes ``benchmarks/results/fairlearn_side_by_side.json`` (``--quick``:
``fairlearn_side_by_side_quick.json``) with the exact command, versions and elapsed time.

Run time (2 shared cores): full (B = 500, 500 draws) about 6 minutes, dominated by
fairlearn's own bootstrap (COMPAS ~2-3 minutes, each real synthetic check ~30 s);
``--quick`` (B = 200, 60 draws, 2 checks) about 1.5 minutes.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import Run, write_results  # noqa: E402

from skfair_audit.datasets import fetch_compas  # noqa: E402
from skfair_audit.group import (  # noqa: E402
    DegenerateBootstrapWarning,
    certify_bounds,
    flag_groups,
    intersections,
)

try:
    from fairlearn.metrics import MetricFrame, false_positive_rate

    FAIRLEARN_ERROR = None
except Exception as exc:  # noqa: BLE001 - any import failure means "fairlearn side skipped"
    MetricFrame = None
    FAIRLEARN_ERROR = f"{type(exc).__name__}: {exc}"

ALPHA = 0.1
QUANTILES = [ALPHA / 2, 0.5, 1 - ALPHA / 2]
SIZES = (1200, 795, 5)
RATE = 0.3
ATTRS = ["race", "sex", "age_cat"]


def int_seed(seq):
    """A 32-bit integer seed for APIs that only take ints (fairlearn's random_state)."""
    return int(seq.generate_state(1)[0])


def gap_from_simultaneous(lower, upper):
    """Interval for max_G mu_G - min_G mu_G implied by simultaneous intervals on mu_G.

    A rate lies in [0, 1], so the intervals are clipped to it first.
    """
    ok = np.isfinite(lower) & np.isfinite(upper)
    lo, hi = np.clip(lower[ok], 0.0, 1.0), np.clip(upper[ok], 0.0, 1.0)
    return max(0.0, float(lo.max() - hi.min())), float(hi.max() - lo.min())


def ours_intervals(y, y_pred, groups, B, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateBootstrapWarning)
        return certify_bounds(y, y_pred, groups, metric="false_positive_rate", target=0.0,
                              alternative="two-sided", alpha=ALPHA, n_resamples=B,
                              random_state=seed, n_jobs=1)


# --- (A) COMPAS -----------------------------------------------------------------------------


def compas(B, seq):
    frame = fetch_compas(preprocessing="propublica").frame
    y = frame["two_year_recid"].to_numpy()
    y_pred = (frame["decile_score"] >= 5).astype(int).to_numpy()
    sf = frame[ATTRS]
    neg = y == 0
    overall_fpr = float(y_pred[neg].mean())
    fl_seq, ours_seq, flag_seq = seq.spawn(3)
    out = {"n_rows": int(y.size), "n_negatives": int(neg.sum()), "overall_fpr": overall_fpr,
           "B": B, "alpha": ALPHA}

    cell_label = (frame["race"] + " & " + frame["sex"] + " & " + frame["age_cat"]).to_numpy()
    cell_negatives = pd.Series(cell_label[neg]).value_counts()
    t0 = time.perf_counter()
    cells = intersections({"cell": cell_label})
    t_cells = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours_cells = ours_intervals(y, y_pred, cells, B, ours_seq)
    t_ours_cells = time.perf_counter() - t0 + t_cells
    t0 = time.perf_counter()
    ours_all = ours_intervals(y, y_pred, intersections(sf, ATTRS, depth=3), B, ours_seq)
    t_ours_all = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateBootstrapWarning)
        flags = flag_groups(y, y_pred, intersections(sf, ATTRS, depth=3),
                            metric="false_positive_rate", target="overall", epsilon0=0.05,
                            alternative="greater", q=0.1)
    t_flags = time.perf_counter() - t0
    ours_by_cell = {name.removeprefix("cell="): (lo, hi) for name, lo, hi in
                    zip(ours_cells.names, ours_cells.lower, ours_cells.upper, strict=True)}
    gap_ours = gap_from_simultaneous(ours_cells.lower, ours_cells.upper)
    fpr_cells = ours_cells.group_values
    out["ours"] = {
        "seconds_cells": t_ours_cells, "seconds_all_intersections_depth3": t_ours_all,
        "seconds_flag_groups": t_flags,
        "n_cells_with_negatives": int(ours_cells.sizes.astype(bool).sum()),
        "n_groups_all_intersections": len(ours_all.names),
        "critical_value_cells": ours_cells.critical_value,
        "critical_value_all_intersections": ours_all.critical_value,
        "gap_point_estimate": float(np.nanmax(fpr_cells) - np.nanmin(fpr_cells)),
        "gap_interval_from_simultaneous_cells": gap_ours,
        "flagged_fpr_5_points_above_overall_q0.1": [
            n for n, f in zip(flags.names, flags.flagged, strict=True) if f],
    }
    print(f"  ours: cells {t_ours_cells:.2f} s, 83 intersections {t_ours_all:.2f} s, flags "
          f"{t_flags:.3f} s; {sum(flags.flagged)} flagged", flush=True)
    if MetricFrame is None:
        out["fairlearn"] = {"skipped": FAIRLEARN_ERROR}
        return out

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mf = MetricFrame(metrics=false_positive_rate, y_true=y, y_pred=y_pred,
                         sensitive_features=sf, n_boot=B, ci_quantiles=QUANTILES,
                         random_state=int_seed(fl_seq))
    t_fl = time.perf_counter() - t0
    by_group = mf.by_group
    lo_s, _, hi_s = mf.by_group_ci
    gap_ci = [float(v) for v in mf.difference_ci()]
    rows = []
    for key in by_group.index:
        name = " & ".join(key)
        lo, hi = float(lo_s[key]), float(hi_s[key])
        o_lo, o_hi = ours_by_cell.get(name, (np.nan, np.nan))
        rows.append({
            "cell": name, "n_negatives": int(cell_negatives.get(name, 0)),
            "fpr": float(by_group[key]), "fairlearn_low": lo, "fairlearn_high": hi,
            "ours_low": float(max(o_lo, 0.0)), "ours_high": float(min(o_hi, 1.0)),
        })
    width_fl = np.array([r["fairlearn_high"] - r["fairlearn_low"] for r in rows])
    small = [r for r in rows if 0 < r["n_negatives"] < 10]
    out["fairlearn"] = {
        "seconds": t_fl, "seconds_per_resample": t_fl / B, "speedup_ours_cells": t_fl /
        t_ours_cells,
        "n_cells": len(rows),
        "gap_point_estimate": float(mf.difference()),
        "gap_percentile_interval_90": [gap_ci[0], gap_ci[2]],
        "gap_interval_excludes_0": bool(gap_ci[0] > 0),
        "cells_with_zero_width_interval": [r["cell"] for r, w in zip(rows, width_fl,
                                                                     strict=True)
                                           if np.isfinite(w) and w == 0],
        "cells_with_nan_interval": [r["cell"] for r, w in zip(rows, width_fl, strict=True)
                                    if not np.isfinite(w)],
        "cells_interval_entirely_above_overall_fpr_plus_0.05": [
            r["cell"] for r in rows if r["fairlearn_low"] > overall_fpr + 0.05],
        "cells_under_10_negatives": [{k: r[k] for k in ("cell", "n_negatives", "fpr",
                                                        "fairlearn_low", "fairlearn_high",
                                                        "ours_low", "ours_high")}
                                     for r in small],
    }
    out["cells"] = rows
    print(f"  fairlearn: {t_fl:.1f} s for B={B} ({t_fl / t_ours_cells:.0f}x ours on the same "
          f"cells); gap {mf.difference():.3f}, 90% percentile interval "
          f"[{gap_ci[0]:.3f}, {gap_ci[2]:.3f}] vs ours [{gap_ours[0]:.3f}, {gap_ours[1]:.3f}]",
          flush=True)
    return out


# --- (B) synthetic: true gap 0 --------------------------------------------------------------


def synthetic_draw(seq):
    rng = np.random.default_rng(seq)
    g = np.repeat(np.array(["a", "b", "c"]), SIZES)
    y = np.zeros(g.size, dtype=int)
    y_pred = (rng.random(g.size) < RATE).astype(int)
    return g, y, y_pred


def fairlearn_replica(g, y_pred, B, random_state):
    """fairlearn 0.15's MetricFrame bootstrap, vectorised (FPR with every row negative).

    Same resampling indices as ``DataFrame.sample(frac=1, replace=True, random_state=r)``
    (pandas: ``RandomState(r).choice(n, n, replace=True)``), per-cell ``np.nanquantile`` and
    ``np.quantile`` of max - min over the cells present in a resample.
    """
    n = g.size
    rs = np.random.default_rng(random_state).integers(0, np.iinfo(np.uint32).max, size=B,
                                                      dtype=np.uint32)
    codes = np.searchsorted(np.array(["a", "b", "c"]), g)
    values = np.empty((B, 3))
    for b, r in enumerate(rs):
        idx = np.random.RandomState(r).choice(n, size=n, replace=True)
        cnt = np.bincount(codes[idx], minlength=3)
        pos = np.bincount(codes[idx], weights=y_pred[idx], minlength=3)
        with np.errstate(invalid="ignore", divide="ignore"):
            values[b] = np.where(cnt > 0, pos / cnt, np.nan)
    per_group = np.nanquantile(values, QUANTILES, axis=0)
    gap = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    return per_group, np.quantile(gap, QUANTILES)


def synthetic(B, draws, check_draws, seq):
    draw_seqs = seq.spawn(draws)
    fl_gap_excl, fl_all_cover, fl_small_cover = [], [], []
    ours_cover, ours_gap_excl, ours_overall_cover, any_flag = [], [], [], []
    check, t_replica, t_ours = [], 0.0, 0.0
    for k, dseq in enumerate(draw_seqs):
        data_seq, fl_seq, ours_seq = dseq.spawn(3)
        g, y, y_pred = synthetic_draw(data_seq)
        t0 = time.perf_counter()
        per_group, gap_q = fairlearn_replica(g, y_pred, B, int_seed(fl_seq))
        t_replica += time.perf_counter() - t0
        fl_gap_excl.append(gap_q[0] > 0)
        covered = (per_group[0] <= RATE) & (RATE <= per_group[2])
        fl_all_cover.append(bool(np.all(covered)))
        fl_small_cover.append(bool(covered[2]))

        t0 = time.perf_counter()
        res = ours_intervals(y, y_pred, {"g": g}, B, ours_seq)
        t_ours += time.perf_counter() - t0
        ours_cover.append(bool(np.all((res.lower <= RATE) & (RATE <= res.upper))))
        ours_gap_excl.append(gap_from_simultaneous(res.lower, res.upper)[0] > 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateBootstrapWarning)
            rel = certify_bounds(y, y_pred, {"g": g}, metric="false_positive_rate",
                                 target="overall", alternative="two-sided", alpha=ALPHA,
                                 n_resamples=B, random_state=ours_seq, n_jobs=1)
            fl = flag_groups(y, y_pred, {"g": g}, metric="false_positive_rate",
                             target="overall", epsilon0=0.0, alternative="greater", q=0.1)
        # True disparities against the overall FPR are all 0.
        ours_overall_cover.append(bool(np.all((rel.lower <= 0) & (0 <= rel.upper))))
        any_flag.append(bool(fl.flagged.any()))

        if k < check_draws and MetricFrame is not None:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mf = MetricFrame(metrics=false_positive_rate, y_true=y, y_pred=y_pred,
                                 sensitive_features=pd.Series(g, name="g"), n_boot=B,
                                 ci_quantiles=QUANTILES, random_state=int_seed(fl_seq))
            t_real = time.perf_counter() - t0
            real_groups = np.array([[float(s[c]) for c in ("a", "b", "c")]
                                    for s in mf.by_group_ci])
            real_gap = np.array([float(v) for v in mf.difference_ci()])
            check.append({
                "draw": k, "seconds_real_fairlearn": t_real,
                "max_abs_diff_per_group_quantiles": float(np.max(np.abs(real_groups
                                                                        - per_group))),
                "max_abs_diff_gap_quantiles": float(np.max(np.abs(real_gap - gap_q))),
                "gap_percentile_interval_90": [float(real_gap[0]), float(real_gap[2])],
                "gap_point_estimate": float(mf.difference()),
                "per_group_intervals_90": {c: [float(mf.by_group_ci[0][c]),
                                               float(mf.by_group_ci[2][c])]
                                           for c in ("a", "b", "c")},
                "ours_simultaneous_intervals_90": {
                    c: [float(lo), float(hi)] for c, lo, hi in
                    zip(("a", "b", "c"), res.lower, res.upper, strict=True)},
            })
            print(f"  check draw {k}: real fairlearn {t_real:.1f} s, replica max |diff| "
                  f"{check[-1]['max_abs_diff_gap_quantiles']:.2g} (gap), "
                  f"{check[-1]['max_abs_diff_per_group_quantiles']:.2g} (groups)", flush=True)

    def rate(flags):
        p = float(np.mean(flags))
        return {"rate": p, "mc_se": float(np.sqrt(p * (1 - p) / len(flags)))}

    t_real = [c["seconds_real_fairlearn"] for c in check]
    return {
        "design": {"group_sizes": list(SIZES), "true_fpr_every_group": RATE,
                   "true_gap": 0.0, "draws": draws, "B": B, "level": 1 - ALPHA},
        "fairlearn_gap_interval_excludes_0": rate(fl_gap_excl),
        "fairlearn_per_group_intervals_all_cover_truth": rate(fl_all_cover),
        "fairlearn_interval_of_5_row_group_covers_truth": rate(fl_small_cover),
        "ours_simultaneous_intervals_all_cover_truth_target0": rate(ours_cover),
        "ours_gap_interval_excludes_0": rate(ours_gap_excl),
        "ours_simultaneous_intervals_cover_disparity0_target_overall": rate(
            ours_overall_cover),
        "ours_flag_groups_any_flag_eps0_0_q0.1": rate(any_flag),
        "seconds_per_draw_ours_certify_bounds": t_ours / draws,
        "seconds_per_draw_fairlearn_replica": t_replica / draws,
        "seconds_per_draw_real_fairlearn": float(np.mean(t_real)) if t_real else None,
        "speedup_ours_vs_real_fairlearn": (float(np.mean(t_real)) / (t_ours / draws)
                                           if t_real else None),
        "replica_checks": check,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-boot", type=int, default=None)
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--check-draws", type=int, default=None)
    parser.add_argument("--seed", type=int, default=20240614)
    args = parser.parse_args(argv)
    B = args.n_boot or (200 if args.quick else 500)
    draws = args.draws or (60 if args.quick else 500)
    check_draws = args.check_draws if args.check_draws is not None else (2 if args.quick
                                                                         else 3)
    run = Run(__file__, argv, packages=("fairlearn",))
    compas_seq, synth_seq = np.random.SeedSequence(args.seed).spawn(2)
    result = {
        "executable": sys.executable, "seed": args.seed,
        "fairlearn_import_error": FAIRLEARN_ERROR,
    }
    print(f"(A) COMPAS, B={B}", flush=True)
    result["compas"] = compas(B, compas_seq)
    print(f"(B) synthetic, no disparity, {draws} draws, B={B}", flush=True)
    result["synthetic_no_disparity"] = synthetic(B, draws, check_draws, synth_seq)
    s = result["synthetic_no_disparity"]
    print(f"  fairlearn gap interval excludes 0: "
          f"{s['fairlearn_gap_interval_excludes_0']['rate']:.3f}; its per-group intervals all "
          f"cover: {s['fairlearn_per_group_intervals_all_cover_truth']['rate']:.3f}; ours "
          "simultaneous coverage "
          f"{s['ours_simultaneous_intervals_all_cover_truth_target0']['rate']:.3f}"
          f", ours gap excludes 0: {s['ours_gap_interval_excludes_0']['rate']:.3f}, any flag "
          f"{s['ours_flag_groups_any_flag_eps0_0_q0.1']['rate']:.3f}", flush=True)
    result["elapsed_seconds"] = round(run.elapsed(), 1)
    path = write_results(run, result, suffix="_quick" if args.quick else "",
                         command="SKFAIR_AUDIT_DATA=/path/to/data " + run.command)
    print(f"wrote {path} in {result['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
