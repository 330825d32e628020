"""``bench_faith_validity.py`` (with its ``--controls-only`` run), ``fig_faith_asymptotics.py``
and ``bench_faith_solver.py`` → the reproduction page's "FaiTH: validity near the kinks"
section.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

import math

import numpy as np
from _render_common import RESULTS, figure, load, num, pct, section, table
from scipy import stats

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_validity.json": {
        "command": "str",
        "elapsed_seconds": "float",
        "instances": "list",
        "instances[].name": "str",
        "n_jobs": "int",
        "n_resamples": "int",
        "offsets_sd": "list",
        "reps": "int",
        "rows": "list",
        "rows[].coverage_two_sided": "float",
        "rows[].instance": "str",
        "rows[].mean_width_two_sided": "float",
        "rows[].n": "int",
        "rows[].near_kink_rate": "float",
        "rows[].offset_sd": "float",
        "rows[].scheme": "str",
        "rows[].type1_certification": "float",
        "rows[].type1_delta_test": "float",
        "schemes": "list",
        "sizes": "list",
        "summary": "object",
        "summary.coverage_threshold": "float",
        "summary.near_kink": "object",
        "summary.near_kink.at_exact_kink_min_rate_any_n": "float",
        "summary.near_kink.at_exact_kink_n5000_min_rate": "float",
        "summary.near_kink.at_least_4sd_cells": "int",
        "summary.near_kink.at_least_4sd_from_every_kink_max_rate": "float",
        "summary.near_kink.holds": "bool",
        "summary.schemes": "object",
        "summary.schemes.m-out-of-n": "object",
        "summary.schemes.m-out-of-n.cells_missing_level": "list",
        "summary.schemes.m-out-of-n.holds_level_everywhere": "bool",
        "summary.schemes.m-out-of-n.max_type1_certification": "float",
        "summary.schemes.m-out-of-n.max_type1_certification_at": "object",
        "summary.schemes.m-out-of-n.max_type1_certification_at.instance": "str",
        "summary.schemes.m-out-of-n.max_type1_certification_at.n": "int",
        "summary.schemes.m-out-of-n.max_type1_certification_at.offset_sd": "float",
        "summary.schemes.m-out-of-n.max_type1_delta_test": "float",
        "summary.schemes.m-out-of-n.max_type1_delta_test_at": "object",
        "summary.schemes.m-out-of-n.max_type1_delta_test_at.instance": "str",
        "summary.schemes.m-out-of-n.max_type1_delta_test_at.n": "int",
        "summary.schemes.m-out-of-n.max_type1_delta_test_at.offset_sd": "float",
        "summary.schemes.m-out-of-n.mean_power": "object",
        "summary.schemes.m-out-of-n.mean_power.certification_2se": "float",
        "summary.schemes.m-out-of-n.mean_power.delta_test_2se": "float",
        "summary.schemes.m-out-of-n.mean_power_at_least_4sd_from_kinks": "object",
        "summary.schemes.m-out-of-n.mean_power_at_least_4sd_from_kinks.certification_2se": "float",
        "summary.schemes.m-out-of-n.mean_power_at_least_4sd_from_kinks.delta_test_2se": "float",
        "summary.schemes.m-out-of-n.min_coverage_two_sided": "float",
        "summary.schemes.m-out-of-n.min_coverage_two_sided_at": "object",
        "summary.schemes.m-out-of-n.min_coverage_two_sided_at.instance": "str",
        "summary.schemes.m-out-of-n.min_coverage_two_sided_at.n": "int",
        "summary.schemes.m-out-of-n.min_coverage_two_sided_at.offset_sd": "float",
        "summary.schemes.m-out-of-n.n_cells": "int",
        "summary.schemes.uniform": "object",
        "summary.schemes.uniform.cells_missing_level": "list",
        "summary.schemes.uniform.confirmation": "list",
        "summary.schemes.uniform.confirmation[].coverage_threshold": "float",
        "summary.schemes.uniform.confirmation[].coverage_two_sided": "float",
        "summary.schemes.uniform.confirmation[].holds": "bool",
        "summary.schemes.uniform.confirmation[].instance": "str",
        "summary.schemes.uniform.confirmation[].n": "int",
        "summary.schemes.uniform.confirmation[].offset_sd": "float",
        "summary.schemes.uniform.confirmation[].reps": "int",
        "summary.schemes.uniform.confirmation[].se_coverage_two_sided": "float",
        "summary.schemes.uniform.confirmation[].type1_certification": "float",
        "summary.schemes.uniform.confirmation[].type1_delta_test": "float",
        "summary.schemes.uniform.confirmation[].type1_threshold": "float",
        "summary.schemes.uniform.holds_level_everywhere": "bool",
        "summary.schemes.uniform.max_type1_certification": "float",
        "summary.schemes.uniform.max_type1_certification_at": "object",
        "summary.schemes.uniform.max_type1_certification_at.instance": "str",
        "summary.schemes.uniform.max_type1_certification_at.n": "int",
        "summary.schemes.uniform.max_type1_certification_at.offset_sd": "float",
        "summary.schemes.uniform.max_type1_delta_test": "float",
        "summary.schemes.uniform.max_type1_delta_test_at": "object",
        "summary.schemes.uniform.max_type1_delta_test_at.instance": "str",
        "summary.schemes.uniform.max_type1_delta_test_at.n": "int",
        "summary.schemes.uniform.max_type1_delta_test_at.offset_sd": "float",
        "summary.schemes.uniform.mean_power": "object",
        "summary.schemes.uniform.mean_power.certification_2se": "float",
        "summary.schemes.uniform.mean_power.delta_test_2se": "float",
        "summary.schemes.uniform.mean_power_at_least_4sd_from_kinks": "object",
        "summary.schemes.uniform.mean_power_at_least_4sd_from_kinks.certification_2se": "float",
        "summary.schemes.uniform.mean_power_at_least_4sd_from_kinks.delta_test_2se": "float",
        "summary.schemes.uniform.min_coverage_two_sided": "float",
        "summary.schemes.uniform.min_coverage_two_sided_at": "object",
        "summary.schemes.uniform.min_coverage_two_sided_at.instance": "str",
        "summary.schemes.uniform.min_coverage_two_sided_at.n": "int",
        "summary.schemes.uniform.min_coverage_two_sided_at.offset_sd": "float",
        "summary.schemes.uniform.n_cells": "int",
        "summary.type1_threshold": "float",
        "summary.width_ratio_uniform_over": "object",
        "summary.width_ratio_uniform_over.m-out-of-n": "object",
        "summary.width_ratio_uniform_over.m-out-of-n.max": "float",
        "summary.width_ratio_uniform_over.m-out-of-n.median": "float",
        "summary.width_ratio_uniform_over.m-out-of-n.min": "float",
    },
    "faith_validity_controls.json": {
        "command": "str",
        "control_confirmation": "list",
        "control_confirmation[].coverage_two_sided": "float",
        "control_confirmation[].holds": "bool",
        "control_confirmation[].instance": "str",
        "control_confirmation[].n": "int",
        "control_confirmation[].offset_sd": "float",
        "control_confirmation[].reps": "int",
        "control_confirmation[].type1_certification": "float",
        "control_confirmation[].type1_delta_test": "float",
        "elapsed_seconds": "float",
        "n_jobs": "int",
    },
    "faith_asymptotics.json": {
        "instances": "object",
        "instances.gaussian": "object",
        "instances.gaussian.limit_mean": "float",
        "instances.gaussian.sample_mean": "float",
        "instances.kink": "object",
        "instances.kink-strong": "object",
        "instances.kink-strong.limit_mean": "float",
        "instances.kink-strong.sample_mean": "float",
        "instances.kink.limit_mean": "float",
        "instances.kink.sample_mean": "float",
    },
    "faith_solver.json": {
        "compas_like": "object",
        "compas_like.highs_replicates_timed": "int",
        "compas_like.highs_seconds_per_replicate": "float",
        "compas_like.max_abs_difference_on_subset": "float",
        "compas_like.n_cells": "int",
        "compas_like.n_replicates": "int",
        "compas_like.ours_seconds_all_replicates": "float",
        "compas_like.speedup_including_setup": "float",
        "compas_like.speedup_value_only": "float",
    },
}


def chance_misses(reps, type1_line, coverage_line, cells=None):
    """Expected numbers of cells crossing the lines if every rate were exactly nominal.

    Per cell: ``P(Binomial(reps, 0.05) / reps > type1_line)`` for each of the two tests and
    ``P(Binomial(reps, 0.95) / reps < coverage_line)`` for the coverage; summed over
    ``cells`` (default: read from the results file).
    """
    if cells is None:
        meta = load("faith_validity.json")
        cells = len(meta["rows"]) // len(meta["schemes"])
    p_type1 = stats.binom.sf(math.floor(type1_line * reps + 1e-9), reps, 0.05)
    p_cover = stats.binom.cdf(math.ceil(coverage_line * reps - 1e-9) - 1, reps, 0.95)
    return {"type1": float(2 * cells * p_type1), "coverage": float(cells * p_cover)}


def _where(at):
    return f"{at['instance']}, n = {at['n']:,}, h = {at['offset_sd']:+g}"


def faith_control_confirmation(default):
    """The other side of the confirmation: cells inside the lines, drawn at random and rerun.

    From the default run's ``control_confirmation`` when it has one, else from
    ``faith_validity_controls.json`` (``bench_faith_validity.py --controls-only``: the same
    cells and seeds, run on their own for the committed default run). A list of lines."""
    controls = default.get("control_confirmation")
    source = "the same run"
    if controls is None:
        if not (RESULTS / "faith_validity_controls.json").is_file():
            return []
        meta = load("faith_validity_controls.json")
        controls = meta["control_confirmation"]
        source = (f"``{meta['command']}``, a confirmation of the committed run rather than a "
                  f"full rerun ({meta['elapsed_seconds'] / 60:.0f} min with {meta['n_jobs']} "
                  "jobs on shared cores)")
    if not controls:
        return []
    outside = [c for c in controls if not c["holds"]]
    return [
        f"  The other side: {len(controls)} cells where the default crossed no line, drawn at "
        f"random, were audited again the same way ({controls[0]['reps']:,} audits, fresh "
        f"seeds; {source}): "
        + "; ".join(
            f"{_where(c)}: δ-test {pct(c['type1_delta_test'])}, certification "
            f"{pct(c['type1_certification'])}, coverage {pct(c['coverage_two_sided'])} — "
            + ("within the lines" if c["holds"] else "outside them")
            for c in controls)
        + f". {len(outside)} of these {len(controls)} passes "
        + ("turn" if len(outside) != 1 else "turns") + " into a miss."
    ]


def faith_validity():
    meta = load("faith_validity.json")
    rows, summary = meta["rows"], meta["summary"]
    schemes = meta["schemes"]
    threshold, cover = summary["type1_threshold"], summary["coverage_threshold"]
    out = [section("FaiTH: validity near the kinks of ε ↦ ψ", "~")]
    out.append(
        f"``{meta['command']}`` writes ``faith_validity.json`` (and ``.csv``), from which this "
        f"section is generated: {meta['reps']:,} audits per cell, B = {meta['n_resamples']} "
        f"bootstrap replicates per audit and scheme, nominal 95%, instances "
        + ", ".join(f"``{i['name']}``" for i in meta["instances"])
        + f", n ∈ {{{', '.join(f'{n:,}' for n in meta['sizes'])}}} and ε = centre + h sd_n, "
        f"h ∈ {{{', '.join(f'{h:g}' for h in meta['offsets_sd'])}}} (sd_n: the standard "
        "deviation of the estimated breakpoint; ``hand`` and ``kink`` are centred on a kink, "
        "``gaussian`` mid-way between two; see the script's docstring). Type-I errors are "
        "measured at the least favourable δ = ψ(f*): the δ-test (H0 ψ ≤ δ) rejects when the "
        "lower bound exceeds δ, the certification test (H0 ψ ≥ δ) when the upper bound is "
        f"below it. A rate holds its level when it is at most {pct(threshold, 2)} (5% plus two "
        f"Monte Carlo standard errors); a coverage when it is at least {pct(cover, 2)}. "
        f"Run time {meta['elapsed_seconds'] / 60:.0f} min with {meta['n_jobs']} jobs on shared "
        "cores.\n"
    )
    chance = chance_misses(meta["reps"], threshold, cover, len(rows) // len(schemes))
    out.append(
        f"Across {len(rows) // len(schemes)} cells a scheme whose every rate were exactly "
        f"nominal would still cross these lines by chance: about {chance['type1']:.1f} "
        f"type-I errors (of the two tests together) and {chance['coverage']:.1f} coverages "
        "are expected to, so the pooled rates below matter as much as the extremes.\n"
    )
    for scheme in schemes:
        v = summary["schemes"][scheme]
        label = "uniform (the default)" if scheme == "uniform" else scheme
        sub = [r for r in rows if r["scheme"] == scheme]
        n_type1 = sum(r[k] > threshold for r in sub
                      for k in ("type1_delta_test", "type1_certification"))
        n_cover = sum(r["coverage_two_sided"] < cover for r in sub)
        verdict = (
            f"holds its level in all {v['n_cells']} cells" if v["holds_level_everywhere"] else
            f"falls outside the lines in {len(v['cells_missing_level'])} of {v['n_cells']} cells "
            f"({n_type1} type-I errors, {n_cover} coverages)"
        )
        instances = dict.fromkeys(r["instance"] for r in sub)
        pooled = ", ".join(
            f"{i} {pct(np.mean([r['coverage_two_sided'] for r in sub if r['instance'] == i]), 2)}"
            for i in instances
        )
        out.append(
            f"- **{label}** {verdict}: largest type-I error of the δ-test "
            f"{pct(v['max_type1_delta_test'])} ({_where(v['max_type1_delta_test_at'])}), of "
            f"the certification test {pct(v['max_type1_certification'])} "
            f"({_where(v['max_type1_certification_at'])}); smallest two-sided coverage "
            f"{pct(v['min_coverage_two_sided'])} ({_where(v['min_coverage_two_sided_at'])}); "
            f"two-sided coverage pooled over each instance's cells: {pooled}."
        )
        confirmed = v.get("confirmation")
        if confirmed:
            held = sum(c["holds"] for c in confirmed)
            big = confirmed[0]["reps"]
            out.append(
                f"  Each of these {len(confirmed)} cells was audited again, independently "
                f"(fresh seeds, {big:,} audits), and judged against the lines of that size "
                f"(type-I at most {pct(confirmed[0]['type1_threshold'], 2)}, coverage at least "
                f"{pct(confirmed[0]['coverage_threshold'], 2)}): "
                + "; ".join(
                    f"{_where(c)}: δ-test {pct(c['type1_delta_test'])}, certification "
                    f"{pct(c['type1_certification'])}, coverage "
                    f"{pct(c['coverage_two_sided'])} ± {pct(c['se_coverage_two_sided'])} — "
                    + ("within the lines" if c["holds"] else "outside them again")
                    for c in confirmed)
                + f". The confirmation repeats {len(confirmed) - held} of the "
                f"{len(confirmed)} misses."
            )
        if scheme == "uniform":
            out.extend(faith_control_confirmation(v))
    if "uniform" in schemes:
        u = summary["schemes"]["uniform"]
        for scheme in schemes:
            if scheme == "uniform":
                continue
            o = summary["schemes"][scheme]
            w = summary["width_ratio_uniform_over"][scheme]
            far_u, far_o = (u["mean_power_at_least_4sd_from_kinks"],
                            o["mean_power_at_least_4sd_from_kinks"])
            out.append(
                f"- Power against {scheme}, averaged over all cells, at δ = ψ* ∓ 2 se*: "
                f"δ-test {pct(u['mean_power']['delta_test_2se'])} against "
                f"{pct(o['mean_power']['delta_test_2se'])}, certification "
                f"{pct(u['mean_power']['certification_2se'])} against "
                f"{pct(o['mean_power']['certification_2se'])}"
                + (
                    f"; in the cells at least 4 sd from every kink δ-test "
                    f"{pct(far_u['delta_test_2se'])} against {pct(far_o['delta_test_2se'])}, "
                    f"certification {pct(far_u['certification_2se'])} against "
                    f"{pct(far_o['certification_2se'])}" if far_u and far_o else ""
                )
                + f". Two-sided width of the uniform interval over {scheme}'s: median ratio "
                f"{num(w['median'], 2)} (from {num(w['min'], 2)} to {num(w['max'], 2)})."
            )
    nk = summary["near_kink"]
    out.append(
        f"- ``near_kink`` is True in at least {pct(nk['at_exact_kink_n5000_min_rate'])} of the "
        f"audits with the population exactly at a kink and n = 5,000 (required: at least 80%; "
        f"at least {pct(nk['at_exact_kink_min_rate_any_n'])} for any n), and in at most "
        f"{pct(nk['at_least_4sd_from_every_kink_max_rate'])} of the audits in the "
        f"{nk['at_least_4sd_cells']} cells at least 4 sd from every kink (required: at most "
        f"10%): the requirement "
        + ("holds" if nk["holds"] else "does not hold")
        + ".\n"
    )

    def cell(row_by_scheme, key):
        parts = []
        for scheme in schemes:
            value = float(row_by_scheme[scheme][key])
            missed = value > threshold if key.startswith("type1") else value < cover
            text = pct(value)
            parts.append(f"**{text}**" if missed else text)
        return " / ".join(parts)

    keyed = {(r["instance"], r["n"], r["offset_sd"], r["scheme"]): r for r in rows}
    grid = list(dict.fromkeys((r["instance"], r["n"], r["offset_sd"]) for r in rows))
    names = " / ".join(schemes)
    header = ["n", "h", "near kink", f"δ-test type-I ({names})",
              f"certification type-I ({names})", f"two-sided coverage ({names})",
              f"mean two-sided width ({names})"]
    for instance in dict.fromkeys(g[0] for g in grid):
        body = []
        for _, n, h in (g for g in grid if g[0] == instance):
            by = {s: keyed[(instance, n, h, s)] for s in schemes}
            first = by[schemes[0]]
            body.append([
                f"{n:,}", f"{h:+g}", pct(first["near_kink_rate"], 0),
                cell(by, "type1_delta_test"), cell(by, "type1_certification"),
                cell(by, "coverage_two_sided"),
                " / ".join(num(by[scheme]["mean_width_two_sided"], 4) for scheme in schemes),
            ])
        out.append(f"\n``{instance}`` (bold: outside nominal ± 2 Monte Carlo se)\n")
        out.append(table(header, body))
    asym = load("faith_asymptotics.json")["instances"]
    out.append(
        "\n**Figure 1 analogue** (``faith_asymptotics.png``): mean of √n(ψ(f_n) − ψ(f*)) over "
        "5,000 samples against the mean of its limit law — "
        + "; ".join(
            f"{name}: {num(v['sample_mean'])} vs {num(v['limit_mean'])}"
            for name, v in asym.items()
        )
        + " (the kink's limit is biased).\n"
    )
    out.append(figure("faith_asymptotics.png", "Histograms of the scaled FaiTH statistic "
                      "against the density of its limit law, one panel per instance"))
    solver = load("faith_solver.json")["compas_like"]
    out.append(
        f"\n**Exact solver** (``bench_faith_solver.py``): K = {solver['n_cells']} cells, "
        f"B = {solver['n_replicates']:,} replicates in {solver['ours_seconds_all_replicates']:.4f}"
        f" s, against {solver['highs_seconds_per_replicate']:.4f} s per replicate for HiGHS "
        f"(timed on {solver['highs_replicates_timed']} replicates, extrapolated): "
        f"{solver['speedup_value_only']:,.0f}× ({solver['speedup_including_setup']:,.0f}× with "
        f"the setup); largest difference {solver['max_abs_difference_on_subset']:.1e}.\n"
    )
    return "\n".join(out)

