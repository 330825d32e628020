"""``bench_group_validity.py`` (both regimes) and ``bench_adult_fdr.py`` → the reproduction
page's group-validity sections.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "group_validity.json": {
        "acceptance": "str",
        "alpha": "float",
        "command": "str",
        "elapsed_seconds": "float",
        "epsilon0_alternative": "float",
        "epsilon0_null": "float",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "n_jobs": "int",
        "n_resamples": "int",
        "q": "float",
        "reps": "int",
        "truth": "object",
        "truth.intersections/alternative": "object",
        "truth.intersections/alternative.n_groups": "int",
        "truth.intersections/alternative.n_nonnull": "int",
        "truth.intersections/null": "object",
        "truth.intersections/null.n_groups": "int",
        "truth.intervals/alternative": "object",
        "truth.intervals/alternative.n_groups": "int",
        "truth.intervals/alternative.n_nonnull": "int",
        "truth.intervals/null": "object",
        "truth.intervals/null.n_groups": "int",
        "truth_tolerance": "float",
    },
    "group_validity.csv": {
        "config": "column",
        "design": "column",
        "estimate": "column",
        "mc_se": "column",
        "mean_critical_value": "column",
        "mean_flagged": "column",
        "mean_margin_large_group": "column",
        "mean_margin_small_group": "column",
        "mean_median_margin": "column",
        "n": "column",
        "n_groups": "column",
        "nominal": "column",
        "quantity": "column",
        "reps": "column",
        "scale": "column",
        "target_kind": "column",
        "within_target": "column",
    },
    "adult_fdr.csv": {
        "epsilon0": "column",
        "fdr": "column",
        "fdr_se": "column",
        "fdr_within_nominal_plus_2se": "column",
        "mean_false_flags": "column",
        "mean_flags": "column",
        "mean_nonnulls": "column",
        "mean_nulls": "column",
        "mean_tested": "column",
        "metric": "column",
        "n": "column",
        "p_any_false_flag": "column",
        "p_any_false_flag_se": "column",
        "power": "column",
        "power_se": "column",
        "q": "column",
        "reps": "column",
        "seconds_for_this_n_all_configs": "column",
        "target": "column",
    },
    "adult_fdr.json": {
        "command": "str",
    },
    "group_validity_small_groups.json": {
        "acceptance": "str",
        "alpha": "float",
        "command": "str",
        "elapsed_seconds": "float",
        "expected_negatives_smallest_group": "object",
        "expected_negatives_smallest_group.1000": "float",
        "expected_negatives_smallest_group.10000": "float",
        "expected_negatives_smallest_group.2000": "float",
        "expected_negatives_smallest_group.20000": "float",
        "expected_negatives_smallest_group.5000": "float",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "min_group_probability": "float",
        "n_groups": "int",
        "n_jobs": "int",
        "n_resamples": "int",
        "negative_rate": "float",
        "reps": "int",
        "rows": "list",
        "rows[].config": "str",
        "rows[].estimate": "float",
        "rows[].mc_se": "float",
        "rows[].mean_negatives": "float",
        "rows[].median_smallest_group": "float",
        "rows[].misses": "int",
        "rows[].misses_in_groups_under_30": "int",
        "rows[].n": "int",
        "rows[].nominal": "float",
        "rows[].quantity": "str",
        "rows[].scale": "str",
        "rows[].w0": "float",
        "rows[].within_target": "bool",
        "scales": "list",
        "scales[].label": "str",
        "scales[].w0": "float",
        "sizes": "list",
    },
}


def group_validity():
    meta = load("group_validity.json")
    rows = load("group_validity.csv")
    truth = meta["truth"]
    out = [section("Cherian & Candès: simultaneous coverage, FDR and power (synthetic)", "~")]
    out.append(
        f"``{meta['command'].strip()}``: {meta['reps']:,} audits per cell, "
        f"B = {meta['n_resamples']:,}, nominal {pct(1 - meta['alpha'], 0)} simultaneous "
        f"coverage and Benjamini–Hochberg flagging at q = {meta['q']:g}; "
        f"{truth['intersections/null']['n_groups']} intersection groups and "
        f"{truth['intervals/null']['n_groups']:,} intervals, with exact truth, compared with a "
        f"tolerance of {meta['truth_tolerance']:g} (a disparity that is 0 in exact arithmetic "
        "comes out of floating point as ±1e-17). Run time "
        f"{meta['elapsed_seconds'] / 60:.0f} min with {meta['n_jobs']} jobs (load average "
        f"{meta['machine']['load_average_start'][0]:.1f} at the start, "
        f"{meta['machine']['load_average_end'][0]:.1f} at the end).\n"
    )
    cov = {(r["design"], r["config"], r["n"], r["scale"], r["quantity"]): r for r in rows
           if r["quantity"].startswith("coverage")}
    cells = list(dict.fromkeys(k[:4] for k in cov))

    def coverage(r):
        return f"{pct(r['estimate'])} ± {pct(r['mc_se'])}"

    out.append(table(
        ["design", "config", "n", "scale", "lower bounds", "two-sided intervals"],
        [[d, c, f"{int(n):,}", sc, coverage(cov[(d, c, n, sc, "coverage_lower")]),
          coverage(cov[(d, c, n, sc, "coverage_two_sided")])] for d, c, n, sc in cells],
    ))
    judged = [r for r in cov.values() if r["within_target"] in ("True", "False")]
    inside = sum(r["within_target"] == "True" for r in judged)
    low = min(cov.values(), key=lambda r: float(r["estimate"]))
    out.append(
        f"\nThe acceptance target ({meta['acceptance']}) is met in {inside} of {len(judged)} "
        "cells at n ≥ 5,000"
        + (" (outside: " + "; ".join(
            f"{r['design']}, {r['config']}, n = {int(r['n']):,}, {r['scale']}, "
            f"{r['quantity'].replace('coverage_', '').replace('_', '-')} "
            f"{pct(r['estimate'])}" for r in judged if r["within_target"] == "False") + ")"
           if inside < len(judged) else "")
        + f"; the smallest coverage is {pct(low['estimate'])} "
        f"({low['design']}, {low['config']}, n = {int(low['n']):,}, {low['scale']}, "
        f"{low['quantity'].replace('coverage_', '').replace('_', '-')}).\n"
    )
    flag = {(r["design"], r["config"], r["n"], r["target_kind"], r["quantity"]): r
            for r in rows if r["quantity"] in ("fdr", "power")}
    settings = list(dict.fromkeys(k[:4] for k in flag))

    def mean(r):
        return "—" if r is None else f"{pct(r['estimate'])} ± {pct(r['mc_se'])}"

    out.append(
        "\nFlagging (``alternative=\"greater\"``): the null configuration flags at "
        f"ε₀ = {meta['epsilon0_null']:g}, so every group sits on the boundary of its null and "
        "the FDR is the probability of any flag; the alternative configuration at "
        f"ε₀ = {meta['epsilon0_alternative']:g}, where "
        f"{truth['intersections/alternative']['n_nonnull']} of the "
        f"{truth['intersections/alternative']['n_groups']} intersections and "
        f"{truth['intervals/alternative']['n_nonnull']} of the "
        f"{truth['intervals/alternative']['n_groups']:,} intervals have a disparity above it. "
        "Target *overall*: the overall error rate re-estimated by the audit (its default); "
        "*known*: the true rate (the setting of the paper's FDR theorem).\n"
    )
    out.append(table(
        ["design", "config", "n", "target", "FDR", "power", "groups flagged (mean)"],
        [[d, c, f"{int(n):,}", t, mean(flag[(d, c, n, t, "fdr")]),
          mean(flag.get((d, c, n, t, "power"))),
          f"{float(flag[(d, c, n, t, 'fdr')]['mean_flagged']):.2f}"]
         for d, c, n, t in settings],
    ))
    fdrs = [r for r in flag.values() if r["quantity"] == "fdr"]
    held = sum(r["within_target"] == "True" for r in fdrs)
    worst = max(fdrs, key=lambda r: float(r["estimate"]))
    out.append(
        f"\nThe FDR is at most q = {meta['q']:g} (plus two Monte Carlo standard errors) in "
        f"{held} of {len(fdrs)} settings; the largest is {pct(worst['estimate'])} "
        f"({worst['design']}, {worst['config']}, n = {int(worst['n']):,}, target "
        f"{worst['target_kind']}).\n"
    )
    fdr = load("adult_fdr.csv")
    worst = max(fdr, key=lambda r: float(r["fdr"]))
    out.append(
        f"\n**FDR on real data** (``{load('adult_fdr.json')['command'].strip()}``, UCI Adult "
        "as the population, "
        f"{worst['reps']} audits per setting, q = 0.1): the largest FDR over the "
        f"{len(fdr)} settings is {pct(worst['fdr'], 2)} ({worst['metric']}, n = "
        f"{int(worst['n']):,}); power at ε₀ = 0.02, n = 20,000: "
        + ", ".join(
            f"{r['metric']} ({r['target']}) {pct(r['power'], 0)}"
            for r in fdr if r["epsilon0"] in ("0.02",) and r["n"] == "20000"
        )
        + ".\n"
    )
    return "\n".join(out)


def adaptive_shortfall(meta, scale="rescaled-w0"):
    """The largest smallest group at which the variance-adaptive rescaling still fell short.

    The largest n of the small-groups regime where some coverage of ``scale`` (either
    configuration, either side) is below nominal − 2 points, that coverage, and the
    negatives of the smallest group there (median audit, larger of the two
    configurations): ``(n, rows, row)``, or ``None`` when it never falls short.
    """
    rows = [r for r in meta["rows"] if r["scale"] == scale]
    short = [r for r in rows if r["estimate"] < r["nominal"] - 0.02]
    if not short:
        return None
    n = max(r["n"] for r in short)
    worst = min((r for r in short if r["n"] == n), key=lambda r: r["estimate"])
    return n, int(max(r["median_smallest_group"] for r in rows if r["n"] == n)), worst


def group_validity_small_groups():
    """The small-groups regime: false positive rate, few negatives in the smallest group."""
    meta = load("group_validity_small_groups.json")
    rows = meta["rows"]
    expected = meta["expected_negatives_smallest_group"]
    out = [
        f"\n**Small groups, false positive rate** (``{meta['command'].strip()}``, "
        f"{meta['reps']:,} audits per cell, B = {meta['n_resamples']:,}, nominal "
        f"{pct(1 - meta['alpha'], 0)}): the intersections design audited for its false "
        f"positive rate with y = 0 in {pct(meta['negative_rate'], 0)} of the rows, so the audit "
        "sample is the negatives and the smallest of the "
        f"{meta['n_groups']} intersections (probability "
        f"{meta['min_group_probability']:g}) holds about "
        + ", ".join(f"{expected[str(n)]:.0f}" for n in meta["sizes"])
        + " negatives at n = " + ", ".join(f"{n:,}" for n in meta["sizes"])
        + f" rows. Run time {meta['elapsed_seconds'] / 60:.0f} min with {meta['n_jobs']} jobs "
        f"(load average {meta['machine']['load_average_start'][0]:.1f} at the start, "
        f"{meta['machine']['load_average_end'][0]:.1f} at the end).\n"
    ]
    cell = {(r["config"], r["n"], r["scale"], r["quantity"]): r for r in rows}
    keys = list(dict.fromkeys((r["config"], r["n"], r["scale"]) for r in rows))

    def coverage(r):
        return f"{pct(r['estimate'])} ± {pct(r['mc_se'])}"

    out.append(table(
        ["config", "n", "negatives (mean)", "negatives in the smallest group (median)", "scale",
         "lower bounds", "two-sided intervals"],
        [[c, f"{n:,}", f"{cell[(c, n, sc, 'coverage_lower')]['mean_negatives']:,.0f}",
          f"{cell[(c, n, sc, 'coverage_lower')]['median_smallest_group']:.0f}", sc,
          coverage(cell[(c, n, sc, "coverage_lower")]),
          coverage(cell[(c, n, sc, "coverage_two_sided")])] for c, n, sc in keys],
    ))
    every = rows
    rows = [r for r in every if r["w0"] == "inf"]
    inside = [r for r in rows if r["within_target"]]
    low = min(rows, key=lambda r: r["estimate"])
    at_5000 = [r for r in rows if r["n"] == 5000]
    out.append(
        f"\nWith w0 = inf (*unscaled* and *rescaled*), the acceptance target "
        f"({meta['acceptance']}) is met in {len(inside)} of {len(rows)} cells"
        + (" (outside: " + "; ".join(
            f"{r['config']}, n = {r['n']:,}, {r['scale']}, "
            f"{r['quantity'].replace('coverage_', '').replace('_', '-')} {pct(r['estimate'])}"
            for r in rows if not r["within_target"]) + ")" if len(inside) < len(rows) else "")
        + f"; the smallest coverage is {pct(low['estimate'])} ± {pct(low['mc_se'])} "
        f"({low['config']}, n = {low['n']:,}, {low['scale']}, "
        f"{low['quantity'].replace('coverage_', '').replace('_', '-')}, smallest group "
        f"{low['median_smallest_group']:.0f} negatives in the median audit). At n = 5,000 the "
        f"coverages range from {pct(min(r['estimate'] for r in at_5000))} to "
        f"{pct(max(r['estimate'] for r in at_5000))}. Of the audits that miss, "
        f"{sum(r['misses_in_groups_under_30'] for r in rows):,} of "
        f"{sum(r['misses'] for r in rows):,} (over all cells) miss in a group of fewer than "
        "30 negatives.\n"
    )
    adaptive = [r for r in every if r["scale"] == "rescaled-w0"]
    if adaptive:
        w0 = next(s["w0"] for s in meta["scales"] if s["label"] == "rescaled-w0")
        worst = min(adaptive, key=lambda r: r["estimate"])
        short = adaptive_shortfall(meta)
        default_low = min((r for r in rows if r["scale"] == "rescaled"),
                          key=lambda r: r["estimate"])
        out.append(
            f"\n*rescaled-w0* is the variance-adaptive rescaling, w0 = {w0:g}: each group's "
            "own standard deviation of L gets the weight P_n(G) / (P_n(G) + w0) in its scale. "
            "In small groups that standard deviation is estimated from a handful of negatives "
            "(0 when none is a false positive), the bounds of such groups are too narrow and "
            f"the coverage drops to {pct(worst['estimate'])} ± {pct(worst['mc_se'])} "
            f"({worst['config']}, n = {worst['n']:,}, "
            f"{worst['quantity'].replace('coverage_', '').replace('_', '-')}). "
            + (f"It is still below nominal − 2 points at n = {short[0]:,}, where the smallest "
               f"group holds {short[1]} negatives in the median audit "
               f"({short[2]['config']}, "
               f"{short[2]['quantity'].replace('coverage_', '').replace('_', '-')} "
               f"{pct(short[2]['estimate'])}): no group size measured here is large enough. "
               "The guarantee sentence of a result with a finite w0 says so when a group has "
               f"fewer than {short[1] + 1} rows (``MIN_ROWS_ADAPTIVE_SCALE``)." if short else
               f"It stays at least {pct(adaptive[0]['nominal'] - 0.02, 0)} at every n.")
            + " With w0 = inf (*rescaled*, the default) the smallest coverage is "
            f"{pct(default_low['estimate'])} ± {pct(default_low['mc_se'])} "
            f"({default_low['config']}, n = {default_low['n']:,}, "
            f"{default_low['quantity'].replace('coverage_', '').replace('_', '-')}).\n"
        )
    return "\n".join(out)

