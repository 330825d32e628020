"""``bench_tilt_validity.py``, ``bench_tilt_speed.py`` and ``bench_conformal_tilts.py`` → the
reproduction page's tilt sections and ``doc/user_guide/tilt_results.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import GENERATED, figure, load, num, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "tilt_validity.json": {
        "acceptance": "object",
        "acceptance.cells_checked": "int",
        "acceptance.holds": "bool",
        "acceptance.rule": "str",
        "alpha": "float",
        "bins": "int",
        "cells": "list",
        "cells[].class": "str",
        "cells[].clopper_pearson_95": "list",
        "cells[].coverage": "float",
        "cells[].critical_value_ratio_relaxed_over_exact": "object",
        "cells[].critical_value_ratio_relaxed_over_exact.max": "float",
        "cells[].critical_value_ratio_relaxed_over_exact.median": "float",
        "cells[].design": "str",
        "cells[].method": "str",
        "cells[].n": "int",
        "cells[].target": "str",
        "degree": "int",
        "designs": "object",
        "designs.flat": "str",
        "designs.smooth": "str",
        "n_resamples": "int",
        "reps": "int",
    },
    "tilt_speed.json": {
        "cases": "object",
        "cases.monotone_exact_50_bins": "object",
        "cases.monotone_exact_50_bins.generic": "str",
        "cases.monotone_exact_50_bins.generic_seconds_extrapolated": "float",
        "cases.monotone_exact_50_bins.note": "str",
        "cases.monotone_exact_50_bins.ratio_generic_over_ours": "float",
        "cases.monotone_exact_50_bins.seconds": "float",
        "cases.monotone_relaxed_every_value": "object",
        "cases.monotone_relaxed_every_value.note": "str",
        "cases.monotone_relaxed_every_value.seconds": "float",
        "cases.polynomial_degree_2": "object",
        "cases.polynomial_degree_2.generic": "str",
        "cases.polynomial_degree_2.generic_seconds_extrapolated": "float",
        "cases.polynomial_degree_2.note": "str",
        "cases.polynomial_degree_2.ratio_generic_over_ours": "float",
        "cases.polynomial_degree_2.seconds": "float",
        "cases.polynomial_two_covariates_degree_1": "object",
        "cases.polynomial_two_covariates_degree_1.note": "str",
        "cases.polynomial_two_covariates_degree_1.seconds": "float",
        "cases.rkhs_rescaled": "object",
        "cases.rkhs_rescaled.generic": "str",
        "cases.rkhs_rescaled.generic_seconds_extrapolated": "float",
        "cases.rkhs_rescaled.note": "str",
        "cases.rkhs_rescaled.ratio_generic_over_ours": "float",
        "cases.rkhs_rescaled.seconds": "float",
        "cases.rkhs_unscaled": "object",
        "cases.rkhs_unscaled.generic": "str",
        "cases.rkhs_unscaled.generic_seconds_extrapolated": "float",
        "cases.rkhs_unscaled.note": "str",
        "cases.rkhs_unscaled.ratio_generic_over_ours": "float",
        "cases.rkhs_unscaled.seconds": "float",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "n_resamples": "int",
        "rows": "int",
    },
    "conformal_tilts.json": {
        "figure": "str",
        "realisation": "object",
        "realisation.monotone": "object",
        "realisation.monotone.class_supremum_over_critical_value": "float",
        "realisation.monotone.constant_lower": "float",
        "realisation.monotone.half_lines_above_truth": "list",
        "realisation.monotone.half_lines_above_truth[].lower": "float",
        "realisation.monotone.half_lines_above_truth[].tilt": "str",
        "realisation.monotone.half_lines_above_truth[].true": "float",
        "realisation.monotone.lowest_true": "float",
        "realisation.monotone.lowest_true_half_line": "str",
        "realisation.monotone.n_cells": "int",
        "realisation.monotone.whole_class_covered": "bool",
        "realisation.monotone.worst_estimate": "float",
        "realisation.monotone.worst_lower": "float",
        "realisation.monotone.worst_rows": "int",
        "realisation.monotone.worst_tilt": "str",
        "realisation.monotone.worst_true": "float",
        "realisation.polynomial_degree_2": "object",
        "realisation.polynomial_degree_2.constant_lower": "float",
        "realisation.polynomial_degree_2.width": "float",
        "realisation.polynomial_degree_2.worst_coefficients": "list",
        "realisation.polynomial_degree_2.worst_effective_size": "int",
        "realisation.polynomial_degree_2.worst_estimate": "float",
        "realisation.polynomial_degree_2.worst_lower": "float",
        "realisation.polynomial_degree_2.worst_true": "float",
        "realisation.polynomial_degree_3": "object",
        "realisation.polynomial_degree_3.worst_coefficients": "list",
        "realisation.polynomial_degree_3.worst_effective_size": "int",
        "realisation.polynomial_degree_3.worst_estimate": "float",
        "realisation.polynomial_degree_3.worst_lower": "float",
        "realisation.polynomial_degree_3.worst_true": "float",
        "realisation.true_marginal_coverage": "float",
        "realisation.true_min_conditional_coverage": "float",
        "repetitions": "object",
        "repetitions.monotone": "object",
        "repetitions.monotone.whole_class_coverage": "float",
        "repetitions.n_reps": "int",
        "repetitions.polynomial_degree_2": "object",
        "repetitions.polynomial_degree_2.whole_class_coverage": "float",
        "repetitions.polynomial_degree_3": "object",
        "repetitions.polynomial_degree_3.whole_class_coverage": "float",
        "settings": "object",
        "settings.alpha": "float",
        "settings.degrees": "list",
        "settings.n_audit": "int",
        "settings.n_resamples": "int",
    },
    "conformal_coverage.json": {
        "realisation": "object",
        "realisation.rescaled_90": "object",
        "realisation.rescaled_90.length_ge_1": "object",
        "realisation.rescaled_90.length_ge_1.min_lower": "float",
    },
}


def _validity_rows(d):
    rows = []
    for c in d["cells"]:
        ratio = c.get("critical_value_ratio_relaxed_over_exact")
        rows.append([c["design"], f"{c['n']:,}", c["class"], c["target"], c["method"],
                     f"{pct(c['coverage'])} [{pct(c['clopper_pearson_95'][0])}, "
                     f"{pct(c['clopper_pearson_95'][1])}]",
                     f"{num(ratio['median'], 3)} (max {num(ratio['max'], 2)})" if ratio
                     else "—"])
    return rows


def tilt_validity():
    """Simultaneous coverage of the tilt audits over whole classes, exact truth."""
    d = load("tilt_validity.json")
    acc = d["acceptance"]
    out = [section("Tilt audits: simultaneous coverage over whole classes (synthetic)", "~")]
    out.append(
        f"``bench_tilt_validity.py``: {d['reps']} trials per cell, B = {d['n_resamples']}, "
        f"nominal {pct(1 - d['alpha'], 0)} two-sided, x ~ U(0, 1), monotone tilts on "
        f"{d['bins']} quantile bins (both directions), sums of squares of polynomials of "
        f"degree ≤ {d['degree']}; designs: "
        + "; ".join(f"{k}: {v}" for k, v in d["designs"].items())
        + ". A trial counts as covered when the bounds of every tilt of the class hold "
        "(checked over the whole class with the exact truth). Last column: the relaxed "
        "monotone supremum's critical value over the exact one, same replicates.\n"
    )
    out.append(table(["design", "n", "class", "target", "supremum", "coverage [95% CI]",
                      "relaxed / exact"], _validity_rows(d)))
    out.append(
        f"\nAcceptance ({acc['rule']}, the exact monotone and the polynomial audits, "
        f"{acc['cells_checked']} cells): " + ("holds" if acc["holds"] else "does not hold")
        + ".\n")
    return "\n".join(out)


def conformal_tilts_figure():
    """The figure of ``bench_conformal_tilts.py`` (its numbers are in the user guide)."""
    t = load("conformal_tilts.json")
    return (
        "\n**Tilts on the conformal trail** (``bench_conformal_tilts.py``: the monotone and "
        "polynomial tilt audits of the trail above; the user guide's group-fairness page "
        "quotes its numbers):\n"
        + figure(t["figure"], "The monotone and polynomial tilts' lower bounds on the "
                 "conformal trail, against the true conditional coverage"))


def tilt_speed():
    d = load("tilt_speed.json")
    out = [section("Tilt audits: speed", "~")]
    out.append(
        f"``bench_tilt_speed.py``: one audit of {d['rows']:,} rows with B = "
        f"{d['n_resamples']:,}, one thread, end to end (load average "
        f"{d['machine']['load_average_start'][0]:.1f} before, "
        f"{d['machine']['load_average_end'][0]:.1f} after); "
        "the generic approach timed on a few replicates in the same run and extrapolated.\n")
    rows = []
    for name, c in d["cases"].items():
        rows.append([name.replace("_", " "), f"{c['seconds']:.2f} s",
                     f"{c['generic_seconds_extrapolated']:,.0f} s" if "generic" in c else "—",
                     f"{c['ratio_generic_over_ours']:,.0f}×" if "generic" in c else "—",
                     c.get("generic", "—"), c["note"]])
    out.append(table(["class", "ours", "generic", "ratio", "generic approach", "notes"],
                     rows))
    return "\n".join(out)


def tilt_results():
    """The tilt audits of the group user guide: the conformal example, validity, speed."""
    t, cov = load("conformal_tilts.json"), load("conformal_coverage.json")
    real, rep = t["realisation"], t["repetitions"]
    mono = real["monotone"]
    s = t["settings"]
    out = [
        f"``bench_conformal_tilts.py`` audits the trail of ``bench_conformal_coverage.py`` (same "
        f"seed: split CQR at 90%, {s['n_audit']:,} audit points, x ~ U(0, 5)) with "
        f"{pct(1 - s['alpha'], 0)} simultaneous lower bounds on the tilted coverage, B = "
        f"{s['n_resamples']:,}. The true conditional coverage of the fitted interval ranges "
        f"down to {pct(real['true_min_conditional_coverage'])} (marginal "
        f"{pct(real['true_marginal_coverage'])}).",
        "",
    ]
    rows = [[f"monotone (both directions, {mono['n_cells']} cells)", mono["worst_tilt"],
             f"{mono['worst_rows']:,}", pct(mono["worst_estimate"]), pct(mono["worst_lower"]),
             pct(mono["worst_true"]),
             pct(rep["monotone"]["whole_class_coverage"], 0) if "monotone" in rep else "—"]]
    for k in s["degrees"]:
        p = real[f"polynomial_degree_{k}"]
        coef = " ".join(f"{c:.3g}" if j == 0 else f"{c:+.3g}·x" + (f"^{j}" if j > 1 else "")
                        for j, c in enumerate(p["worst_coefficients"]))
        rows.append([f"polynomial, degree {2 * k}", f"({coef})²",
                     f"{p['worst_effective_size']:,}", pct(p["worst_estimate"]),
                     pct(p["worst_lower"]), pct(p["worst_true"]),
                     pct(rep[f"polynomial_degree_{k}"]["whole_class_coverage"], 0)])
    out.append(table(["class", "worst tilt", "effective rows", "estimate", "90% lower bound",
                      "true", f"whole class covered ({rep['n_reps']} repetitions)"], rows))
    worst = mono["worst_tilt"]
    length1 = cov["realisation"]["rescaled_90"]["length_ge_1"]
    p2 = real[f"polynomial_degree_{s['degrees'][0]}"]
    misses = mono["half_lines_above_truth"]
    if mono["whole_class_covered"]:
        held = ("every half-line's lower bound lies below its true coverage and, over the "
                "whole class, the largest standardised deviation is "
                f"{pct(mono['class_supremum_over_critical_value'], 0)} of the critical value: "
                "the bounds of every monotone tilt hold at once on this realisation")
    else:
        held = ("on this realisation the bounds do not all hold: the largest standardised "
                f"deviation over the class is "
                f"{pct(mono['class_supremum_over_critical_value'], 0)} of the critical value"
                + ("; " + "; ".join(f"{m['tilt']} has lower bound {pct(m['lower'], 2)} above "
                                    f"its true {pct(m['true'], 2)}" for m in misses)
                   if misses else "")
                + f" (as in {pct(1 - rep['monotone']['whole_class_coverage'], 0)} of the "
                f"{rep['n_reps']} repetitions of the table)")
    out.append(
        f"\nThe lowest lower bound over the monotone tilts is that of {worst}, a small tilt "
        f"of {mono['worst_rows']:,} rows; {held}. "
        f"The true coverage is lowest on {mono['lowest_true_half_line']} "
        f"({pct(mono['lowest_true'])}). The polynomial tilts of degree {2 * s['degrees'][0]} "
        f"all share the width {num(p2['width'], 4)}: the constant tilt gets "
        f"{pct(p2['constant_lower'])}, "
        + ("less" if p2["constant_lower"] < mono["constant_lower"] else "no less")
        + f" than in the monotone audit ({pct(mono['constant_lower'])}, its first row), "
        f"and the worst polynomial tilt, spread over "
        f"{p2['worst_effective_size']:,} effective rows, {pct(p2['worst_lower'])}. For "
        f"comparison, the interval audit of the same trail bounds the coverage of every "
        f"interval of length ≥ 1 by {pct(length1['min_lower'])} at least.\n"
    )
    v = load("tilt_validity.json")
    out.append(
        f"**Validity.** ``bench_tilt_validity.py`` ({v['reps']} trials per cell, exact truth, "
        "simultaneous over the whole class):\n")
    out.append(table(["design", "n", "class", "target", "supremum", "coverage [95% CI]",
                      "relaxed / exact"], _validity_rows(v)))
    speed = load("tilt_speed.json")
    out.append(
        f"\n**Speed.** ``bench_tilt_speed.py``, {speed['rows']:,} rows, B = "
        f"{speed['n_resamples']:,}, one thread: "
        + "; ".join(f"{name.replace('_', ' ')} {c['seconds']:.1f} s"
                    + (f" ({c['ratio_generic_over_ours']:,.0f}× faster than the generic "
                       "approach)" if "generic" in c else "")
                    for name, c in speed["cases"].items())
        + " (the generic approaches and the load are on :doc:`../reproducing`).\n")
    return GENERATED + "\n" + "\n".join(out)

