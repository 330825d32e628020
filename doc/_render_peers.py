"""``bench_fairlearn_side_by_side.py``, ``bench_group_performance.py`` and
``bench_fairaudit_compas.py`` → the reproduction page's comparison with other packages.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

import math

from _render_common import load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "fairlearn_side_by_side.json": {
        "compas": "object",
        "compas.fairlearn": "object",
        "compas.fairlearn.seconds": "float",
        "compas.ours": "object",
        "compas.ours.seconds_cells": "float",
        "synthetic_no_disparity": "object",
        "synthetic_no_disparity.design": "object",
        "synthetic_no_disparity.design.draws": "int",
        "synthetic_no_disparity.fairlearn_gap_interval_excludes_0": "object",
        "synthetic_no_disparity.fairlearn_gap_interval_excludes_0.rate": "float",
        "synthetic_no_disparity.fairlearn_per_group_intervals_all_cover_truth": "object",
        "synthetic_no_disparity.fairlearn_per_group_intervals_all_cover_truth.rate": "float",
        "synthetic_no_disparity.ours_gap_interval_excludes_0": "object",
        "synthetic_no_disparity.ours_gap_interval_excludes_0.rate": "float",
        "synthetic_no_disparity.ours_simultaneous_intervals_all_cover_truth_target0": "object",
        "synthetic_no_disparity.ours_simultaneous_intervals_all_cover_truth_target0.rate": "float",
        "versions": "object",
        "versions.fairlearn": "str",
    },
    "group_performance.json": {
        "fairaudit": "object",
        "fairaudit.failures": "object",
        "fairaudit.failures.empty_group_rescaled": "object",
        "fairaudit.failures.empty_group_rescaled.confirmed": "bool",
        "fairaudit.failures.fpr_label_conditioning": "object",
        "fairaudit.failures.fpr_label_conditioning.confirmed": "bool",
        "fairaudit.failures.metric_params_leak": "object",
        "fairaudit.failures.metric_params_leak.confirmed": "bool",
        "fairaudit.failures.pandas_inputs": "object",
        "fairaudit.failures.pandas_inputs.confirmed": "bool",
        "fairaudit.failures.two_sided_flagging": "object",
        "fairaudit.failures.two_sided_flagging.confirmed": "bool",
        "fairaudit.intersections": "object",
        "fairaudit.intersections.n_groups": "int",
        "fairaudit.intersections.rescaled": "object",
        "fairaudit.intersections.rescaled.critical_value_z": "float",
        "fairaudit.intersections.rescaled.seconds_fairaudit_calibration_and_bounds": "float",
        "fairaudit.intersections.rescaled.seconds_ours_calibration_and_bounds": "float",
        "fairaudit.intersections.rescaled.speedup_calibration": "float",
        "fairaudit.intersections.unscaled": "object",
        "fairaudit.intersections.unscaled.critical_value_z": "float",
        "fairaudit.intersections.unscaled.seconds_fairaudit_calibration_and_bounds": "float",
        "fairaudit.intersections.unscaled.seconds_ours_calibration_and_bounds": "float",
        "fairaudit.intersections.unscaled.speedup_calibration": "float",
        "fairaudit.intervals": "object",
        "fairaudit.intervals.dense_unscaled": "object",
        "fairaudit.intervals.dense_unscaled.critical_value_fairaudit": "float",
        "fairaudit.intervals.dense_unscaled.critical_value_ours_mc_mean": "float",
        "fairaudit.intervals.dense_unscaled.critical_value_ours_mc_sd": "float",
        "fairaudit.intervals.dense_unscaled.seconds_fairaudit_dense_masks": "float",
        "fairaudit.intervals.dense_unscaled.seconds_ours": "float",
        "fairaudit.intervals.dense_unscaled.speedup": "float",
        "fairaudit.intervals.n_groups": "int",
    },
    "fairaudit_compas.json": {
        "ppv_certification": "object",
        "ppv_certification.rescaled": "object",
        "ppv_certification.rescaled.critical_value_z": "float",
        "ppv_certification.rescaled.seconds_fairaudit": "float",
        "ppv_certification.rescaled.seconds_ours": "float",
        "ppv_certification.rescaled.speedup": "float",
        "ppv_certification.unscaled": "object",
        "ppv_certification.unscaled.critical_value_z": "float",
    },
}


def peers():
    fl = load("fairlearn_side_by_side.json")
    syn = fl["synthetic_no_disparity"]
    perf = load("group_performance.json")["fairaudit"]
    fa = load("fairaudit_compas.json")
    inter = perf["intersections"]
    out = [section("Side by side with fairlearn and fairaudit", "~")]
    out.append(
        f"``bench_fairlearn_side_by_side.py`` (fairlearn {fl['versions'].get('fairlearn')}): "
        "three groups of 1,200 / 795 / 5 rows with the same FPR (no disparity), "
        f"{syn['design']['draws']} draws: fairlearn's percentile interval for the max − min "
        f"gap excludes 0 in {pct(syn['fairlearn_gap_interval_excludes_0']['rate'], 1)} of the "
        f"draws, ours in {pct(syn['ours_gap_interval_excludes_0']['rate'], 1)}; its per-group "
        "intervals cover all three truths in "
        f"{pct(syn['fairlearn_per_group_intervals_all_cover_truth']['rate'], 1)}, our "
        "simultaneous ones in "
        f"{pct(syn['ours_simultaneous_intervals_all_cover_truth_target0']['rate'], 1)} "
        f"(nominal 90%). On COMPAS, MetricFrame's bootstrap took "
        f"{fl['compas']['fairlearn']['seconds']:.0f} s, ours "
        f"{fl['compas']['ours']['seconds_cells']:.3f} s.\n"
    )
    rows = [
        *[
            [f"59 intersections ({kind})",
             f"{inter[kind]['seconds_ours_calibration_and_bounds']:.3f} s",
             f"{inter[kind]['seconds_fairaudit_calibration_and_bounds']:.2f} s",
             f"{inter[kind]['speedup_calibration']:.0f}×"]
            for kind in ("unscaled", "rescaled")
        ],
        ["1,275 intervals", f"{perf['intervals']['dense_unscaled']['seconds_ours']:.3f} s",
         f"{perf['intervals']['dense_unscaled']['seconds_fairaudit_dense_masks']:.1f} s "
         "(its own interval path crashes)",
         f"{perf['intervals']['dense_unscaled']['speedup']:.0f}×"],
        ["COMPAS PPV, rescaled", f"{fa['ppv_certification']['rescaled']['seconds_ours']:.4f} s",
         f"{fa['ppv_certification']['rescaled']['seconds_fairaudit']:.2f} s",
         f"{fa['ppv_certification']['rescaled']['speedup']:.0f}×"],
    ]
    out.append(
        "\n``bench_group_performance.py`` and ``bench_fairaudit_compas.py`` (fairaudit 0.0.1, "
        f"B = 500, single-threaded; {critical_value_agreement(perf, fa)}):\n"
    )
    out.append(table(["case", "ours", "fairaudit", "ratio"], rows))
    fails = perf["failures"]
    out.append(
        "\nfairaudit failure cases confirmed by the script: "
        + "; ".join(sorted(k.replace("_", " ") for k, v in fails.items()
                           if isinstance(v, dict) and v.get("confirmed")))
        + ".\n"
    )
    return "\n".join(out)


#: Critical values of ours and fairaudit "agree within Monte Carlo error" when |z| < 3.
AGREEMENT_Z = 3.0


def critical_value_z(case):
    """z of fairaudit's critical value against the Monte Carlo spread of ours.

    ``(c_fairaudit - mean(c_ours)) / (sqrt(2) sd(c_ours))`` over the seeds of ours (both are
    bootstrap quantiles with the same spread), as the benchmarks compute it; from the stored
    mean and sd when a results file has no ``critical_value_z``.
    """
    if "critical_value_z" in case:
        return float(case["critical_value_z"])
    return ((case["critical_value_fairaudit"] - case["critical_value_ours_mc_mean"])
            / (math.sqrt(2.0) * case["critical_value_ours_mc_sd"]))


def critical_value_agreement(perf, fa):
    """The comparison of critical values with fairaudit, with its figures, as a clause."""
    inter = perf["intersections"]
    cases = [
        (f"{inter['n_groups']} intersections, unscaled", inter["unscaled"]),
        (f"{inter['n_groups']} intersections, rescaled", inter["rescaled"]),
        (f"{perf['intervals']['n_groups']:,} intervals, unscaled",
         perf["intervals"]["dense_unscaled"]),
        ("COMPAS PPV, rescaled", fa["ppv_certification"]["rescaled"]),
        ("COMPAS PPV, unscaled", fa["ppv_certification"]["unscaled"]),
    ]
    zs = [(label, critical_value_z(case)) for label, case in cases]
    inside = sum(abs(z) < AGREEMENT_Z for _, z in zs)
    verdict = ("critical values agree within Monte Carlo error" if inside == len(zs) else
               f"critical values agree within Monte Carlo error in {inside} of {len(zs)} cases")
    return (f"{verdict}, z = (c_fairaudit − mean c_ours) / (√2 sd c_ours) over seeds of ours, "
            f"agreement when :math:`|z| < {AGREEMENT_Z:g}`: "
            + "; ".join(f"{label} z = {z:.2f}" for label, z in zs))

