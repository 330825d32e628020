"""Pages of the ratio audits, rendered from the committed results (used by
``doc/make_reproduction_tables.py``: ``render_ratios()``).

* ``user_guide/ratio_results.inc``: validity of the ratio bounds and flags
  (``group_ratio_validity.json``), speed (``group_ratio_speed.json``) and the
  point values against fairlearn and AIF360 (``group_ratio_peers.json``);
* ``user_guide/bias_audit_tables.inc``: the Local Law 144 tables on COMPAS and Adult
  (``bias_audit_tables.json``).

:data:`READS` lists every key it reads (``a.b`` nests, ``a[]`` is an item of the list ``a``)
and its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

import math

from _render_common import GENERATED, GUIDE, load, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    'group_ratio_validity.json': {
        'cells': 'list',
        'cells[]': 'object',
        'cells[].cover_0.9': 'float',
        'cells[].cover_0.95': 'float',
        'cells[].cover_0.95_se': 'float',
        'cells[].cover_0.9_se': 'float',
        'cells[].cover_0.9_several_references': 'float',
        'cells[].cover_0.9_single_reference': 'float',
        'cells[].fdr': 'float',
        'cells[].fdr_se': 'float',
        'cells[].lower_cover_0.9': 'float',
        'cells[].lower_cover_0.95': 'float',
        'cells[].lower_cover_0.95_se': 'float',
        'cells[].lower_cover_0.9_se': 'float',
        'cells[].median_width_big': 'float',
        'cells[].median_width_small': 'float',
        'cells[].n': 'int',
        'cells[].naive_cover_0.9': 'float',
        'cells[].naive_cover_0.95': 'float',
        'cells[].naive_marginal_0.9': 'float',
        'cells[].p_star': 'float',
        'cells[].power': 'float',
        'cells[].reps': 'int',
        'cells[].resamples': 'int',
        'cells[].scenario': 'str',
        'cells[].single_reference_share': 'float',
        'cells[].smallest_group_median': 'float',
        'cells[].upper_cover_0.9': 'float',
        'cells[].upper_cover_0.95': 'float',
        'cells[].upper_cover_0.95_se': 'float',
        'cells[].upper_cover_0.9_se': 'float',
        'command': 'str',
        'controls': 'list',
        'controls[]': 'object',
        'controls[].kappa_bic_cover_0.9': 'float',
        'controls[].kappa_bic_cover_0.95': 'float',
        'controls[].kappa_bic_cover_0.95_se': 'float',
        'controls[].kappa_bic_cover_0.9_se': 'float',
        'controls[].kappa_bic_lower_cover_0.9': 'float',
        'controls[].kappa_bic_lower_cover_0.95': 'float',
        'controls[].kappa_bic_lower_cover_0.95_se': 'float',
        'controls[].kappa_bic_lower_cover_0.9_se': 'float',
        'controls[].kappa_bic_upper_cover_0.9': 'float',
        'controls[].kappa_bic_upper_cover_0.95': 'float',
        'controls[].kappa_bic_upper_cover_0.95_se': 'float',
        'controls[].kappa_bic_upper_cover_0.9_se': 'float',
        'controls[].n': 'int',
        'controls[].observed_top_cover_0.9': 'float',
        'controls[].observed_top_cover_0.95': 'float',
        'controls[].observed_top_cover_0.95_se': 'float',
        'controls[].observed_top_cover_0.9_se': 'float',
        'controls[].observed_top_cover_0.9_several_references': 'float',
        'controls[].observed_top_cover_0.9_single_reference': 'float',
        'controls[].observed_top_lower_cover_0.9': 'float',
        'controls[].observed_top_lower_cover_0.95': 'float',
        'controls[].observed_top_lower_cover_0.95_se': 'float',
        'controls[].observed_top_lower_cover_0.9_se': 'float',
        'controls[].observed_top_upper_cover_0.9': 'float',
        'controls[].observed_top_upper_cover_0.95': 'float',
        'controls[].observed_top_upper_cover_0.95_se': 'float',
        'controls[].observed_top_upper_cover_0.9_se': 'float',
        'controls[].recentred_maximum_cover_0.9': 'float',
        'controls[].recentred_maximum_cover_0.95': 'float',
        'controls[].recentred_maximum_cover_0.95_se': 'float',
        'controls[].recentred_maximum_cover_0.9_se': 'float',
        'controls[].recentred_maximum_lower_cover_0.9': 'float',
        'controls[].recentred_maximum_lower_cover_0.95': 'float',
        'controls[].recentred_maximum_lower_cover_0.95_se': 'float',
        'controls[].recentred_maximum_lower_cover_0.9_se': 'float',
        'controls[].recentred_maximum_upper_cover_0.9': 'float',
        'controls[].recentred_maximum_upper_cover_0.95': 'float',
        'controls[].recentred_maximum_upper_cover_0.95_se': 'float',
        'controls[].recentred_maximum_upper_cover_0.9_se': 'float',
        'controls[].scenario': 'str',
        'design': 'object',
        'design.base_rate': 'float',
        'design.big_cell_share': 'float',
        'design.candidates': 'int',
        'design.cells': 'int',
        'design.clear_base_rate': 'float',
        'design.clear_factors': 'list',
        'design.clear_factors[]': 'float',
        'design.factors': 'list',
        'design.factors[]': 'float',
        'design.q': 'float',
        'design.separated_candidates': 'int',
        'design.separated_cell_share': 'float',
        'design.separated_small_cell_share': 'float',
        'design.small_cell_share': 'float',
        'design.threshold': 'float',
        'load_average_before': 'list',
        'load_average_before[]': 'float',
    },
    'group_ratio_speed.json': {
        'bootstrap_ratio_to_difference': 'float',
        'command': 'str',
        'groups': 'int',
        'load_average_before': 'list',
        'load_average_before[]': 'float',
        'machine': 'object',
        'machine.cpus': 'int',
        'ratio_to_difference': 'float',
        'repeat': 'int',
        'resamples': 'int',
        'rows': 'int',
        'seconds': 'object',
        'seconds.difference': 'float',
        'seconds.difference_bootstrap': 'float',
        'seconds.ratio': 'float',
        'seconds.ratio_bootstrap': 'float',
    },
    'group_ratio_peers.json': {
        'max_abs_diff': 'float',
        'rows': 'list',
        'rows[]': 'object',
        'rows[].abs_diff': 'float',
        'rows[].dataset': 'str',
        'rows[].ours': 'float',
        'rows[].peer': 'str',
        'rows[].peer_value': 'float',
        'rows[].quantity': 'str',
        'versions': 'object',
        'versions.aif360': 'str',
        'versions.fairlearn': 'str',
    },
    'bias_audit_tables.json': {
        'tables': 'list',
        'tables[]': 'object',
        'tables[].alpha': 'float',
        'tables[].columns': 'list',
        'tables[].dataset': 'str',
        'tables[].details': 'str',
        'tables[].median': 'float',
        'tables[].mode': 'str',
        'tables[].resamples': 'int',
        'tables[].rows': 'int',
        'tables[].table': 'list',
        'tables[].table[]': 'list',
        'tables[].table[][]': 'str',
        'tables[].tool': 'str',
        'tables[].verdict': 'str',
    },
}

SCENARIO_WORDS = {
    "overall": "ratio to the overall rate",
    "max": "impact ratio, one most selected cell",
    "max-tie": "impact ratio, two cells tied as the most selected",
    "max-clear": "impact ratio, one most selected cell well ahead",
    "max-separated": "impact ratio, one most selected cell far ahead",
}


def _pct(x):
    return f"{100 * float(x):.1f}%"


def _within(value, se, nominal):
    """Whether a coverage is within nominal ± 2 Monte Carlo standard errors."""
    return abs(value - nominal) <= 2 * max(se, 1e-12)


def _number(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:.{digits}g}"
    return str(x)


def _gap_in_se(design, n, clear=False, separated=False):
    """Gap between the most selected cell and the runners-up (the largest factor of the
    candidates), in standard errors of the gap, at n rows."""
    clear = clear or separated
    top = design["clear_base_rate" if clear else "base_rate"]
    runner = top * max(design["clear_factors" if clear else "factors"])
    rows = design["separated_cell_share" if separated else "big_cell_share"] * n
    return (top - runner) / math.sqrt((top * (1 - top) + runner * (1 - runner)) / rows)


def _maybe_pct(x):
    return "—" if x is None else _pct(x)


def _coverage(c, key, nominal):
    """A coverage with its Monte Carlo standard error, marked when outside nominal ± 2 se."""
    value, se = c[key], c[key + "_se"]
    mark = "" if _within(value, se, nominal) else (" (+)" if value > nominal else " (−)")
    return f"{_pct(value)} ± {_pct(se)}{mark}"


SIDES = (("", "two-sided"), ("lower_", "lower bounds"), ("upper_", "upper bounds"))


def _out_of_band(c):
    """``(key, above nominal)`` of every coverage of a cell (two-sided and one-sided, 90% and
    95%) outside nominal ± 2 Monte Carlo standard errors."""
    keys = [(f"{prefix}cover_{level}", level) for prefix, _ in SIDES for level in (0.9, 0.95)]
    return [(key, c[key] > level) for key, level in keys
            if not _within(c[key], c[key + "_se"], level)]


def validity():
    data = load("group_ratio_validity.json")
    design = data["design"]
    cells = data["cells"]
    reps = sorted({c["reps"] for c in cells})
    resamples = sorted({c["resamples"] for c in cells})
    sizes = sorted({c["n"] for c in cells})
    gaps = ", ".join(f"{_gap_in_se(design, n):.1f}" for n in sizes)
    out = [".. _ratio_validity:\n", "Validity of the ratio bounds and flags\n"
           "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"]
    out.append(
        f"``{data['command'].strip()}`` (``benchmarks/bench_group_ratio_validity.py``): "
        f"{design['cells']} intersections, {design['candidates']} of them candidates for the "
        f"most selected group ({_pct(design['big_cell_share'])} of the population each), the "
        f"others small ({_pct(design['small_cell_share'])} each); true ratios "
        f"{', '.join(f'{f:g}' for f in design['factors'])} in turn; "
        f"{', '.join(str(r) for r in reps)} audits per cell, B = "
        f"{', '.join(str(b) for b in resamples)} resamples; load average "
        f"{data['load_average_before'][0]:.1f} at the start. With one most selected cell, "
        f"the two runners-up (ratio {max(design['factors']):g}) are {gaps} standard errors "
        f"of their gap below it at n = {', '.join(f'{n:,}' for n in sizes)}: a near-tie at "
        "the smaller sizes. With one most selected cell well ahead (base rate "
        f"{design['clear_base_rate']:g}, the other candidates at ratios "
        f"{', '.join(f'{f:g}' for f in design['clear_factors'])}), the runners-up are "
        f"{', '.join(f'{_gap_in_se(design, n, clear=True):.1f}' for n in sizes)} standard "
        "errors below it. With one most selected cell far ahead, "
        f"{design['separated_candidates']} candidates of "
        f"{_pct(design['separated_cell_share'])} each (the same rates; the other "
        f"{design['cells'] - design['separated_candidates']} cells "
        f"{_pct(design['separated_small_cell_share'])} each), the nearest runner-up is "
        f"{', '.join(f'{_gap_in_se(design, n, separated=True):.1f}' for n in sizes)} "
        "standard errors below it. Simultaneous coverage: every defined ratio inside its bounds in "
        "the same audit (± its Monte Carlo standard error; (+) above and (−) below nominal "
        "by more than 2 standard errors), for the two-sided bounds and for the one-sided "
        "lower bounds (the side :func:`~skfair_audit.group.certify_ratio` uses) and upper "
        "bounds. The naive alternative is fairlearn's style: per-group percentile bootstrap "
        "intervals of the ratio on the same replicates, no multiplicity correction "
        "(its simultaneous coverage, and its average per-group coverage at the 90% level). "
        f"Flags: threshold {design['threshold']:g}, Benjamini–Hochberg at q = {design['q']:g}, "
        "delta-method standard errors; FDR = mean false discovery proportion (with the overall "
        "rate as denominator every true ratio is above the threshold: every group is null, so "
        "the FDR is the probability of any flag and the power is 0 by design). Widths: the "
        "median over the audits of the median width of the 90% intervals, among the "
        "candidate cells and among the small cells; a cell under "
        f":math:`p^* = {cells[0]['p_star']:g}` of the sample gets bounds wider than the CLT's "
        "by :math:`(p^*/P_n(G))^{3/2}`, so that its inaccurate bootstrap tails do not set "
        "the critical value (the rule of the difference bounds).\n")
    rows = []
    for c in cells:
        rows.append([
            SCENARIO_WORDS.get(c["scenario"], c["scenario"]), f"{c['n']:,}",
            f"{c['smallest_group_median']:.0f}",
            _coverage(c, "cover_0.9", 0.9), _coverage(c, "cover_0.95", 0.95),
            _coverage(c, "lower_cover_0.9", 0.9), _coverage(c, "lower_cover_0.95", 0.95),
            _coverage(c, "upper_cover_0.9", 0.9), _coverage(c, "upper_cover_0.95", 0.95),
            f"{_pct(c['naive_cover_0.9'])} / {_pct(c['naive_cover_0.95'])}",
            _pct(c["naive_marginal_0.9"]),
            f"{c['median_width_big']:.2f} / {c['median_width_small']:.2f}",
            f"{_pct(c['fdr'])} ± {_pct(c['fdr_se'])}", _pct(c["power"])])
    out.append(table(["denominator", "n", "smallest group (median rows)",
                      "two-sided 90%", "two-sided 95%", "lower 90%", "lower 95%",
                      "upper 90%", "upper 95%", "naive simultaneous 90% / 95%",
                      "naive per group (90%)", "90% width: candidates / small cells",
                      f"FDR (q = {design['q']:g})", "power"], rows))
    below, above, exact = [], [], []
    n_above = 0
    for c in cells:
        where = f"{SCENARIO_WORDS.get(c['scenario'], c['scenario'])} at n = {c['n']:,}"
        outside = _out_of_band(c)
        high = sum(above_nominal for _, above_nominal in outside)
        low = [f"{where} ({key})" for key, above_nominal in outside if not above_nominal]
        n_above += high
        below += low
        above += [where] * bool(high)
        exact += [where] * (not high and not low)
    n_cov = 6 * len(cells)
    fdr_ok = [c for c in cells if c["fdr"] <= design["q"] + 2 * c["fdr_se"]]
    out.append(
        "\nBelow nominal by more than 2 Monte Carlo standard errors: "
        + (f"{'; '.join(below)} ({len(below)} of the {n_cov} coverages; exact ones would "
           f"fall this far below about {n_cov * 0.0228:.1f} times by chance alone). "
           if below else f"none of the {n_cov} coverages. ")
        + f"Within nominal ± 2 standard errors on both sides and at both levels: "
        f"{'; '.join(exact) if exact else 'no cell'}. "
        + (f"Above nominal (conservative, marked (+)): {n_above} of the {n_cov} coverages, in "
           f"{'; '.join(above)}. " if above else "")
        + f"FDR at most q + 2 standard errors in {len(fdr_ok)} of {len(cells)} cells. The "
        "naive intervals' simultaneous coverage is at most "
        f"{_pct(max(max(c['naive_cover_0.9'], c['naive_cover_0.95']) for c in cells))} "
        "in every cell.\n")
    controls = data.get("controls") or []
    if controls:
        out.append(
            "\nControls on the same audits (same trails, same bootstrap seeds): the earlier "
            "impact-ratio bootstrap, which recentred the largest deviation of the "
            "near-maximal candidates at the observed maximum, and the current bootstrap with "
            "the BIC-type threshold :math:`\\kappa_n = \\sqrt{\\log n}` instead of "
            ":math:`\\sqrt{2\\log\\log n}`.\n")
        rows = []
        for c in controls:
            for name, words in (("recentred_maximum", "earlier: recentred maximum"),
                                ("kappa_bic", "κ = √(log n)"),
                                ("observed_top", "observed top as a fixed reference")):
                rows.append([SCENARIO_WORDS.get(c["scenario"], c["scenario"]),
                             f"{c['n']:,}", words]
                            + [_coverage(c, f"{name}_{prefix}cover_{level}", level)
                               for prefix, _ in SIDES for level in (0.9, 0.95)])
        out.append(table(["denominator", "n", "control", "two-sided 90%", "two-sided 95%",
                          "lower 90%", "lower 95%", "upper 90%", "upper 95%"], rows))
        worst = min(controls, key=lambda c: c["recentred_maximum_lower_cover_0.9"])
        current = {(c["scenario"], c["n"]): c for c in cells}
        higher = sum(c[f"kappa_bic_{p_}cover_{lv}"] >= current[c["scenario"], c["n"]][
            f"{p_}cover_{lv}"] for c in controls for p_, _ in SIDES for lv in (0.9, 0.95))
        out.append(
            "\nThe earlier bootstrap's lower bounds covered as little as "
            f"{_pct(worst['recentred_maximum_lower_cover_0.9'])} at 90% "
            f"({SCENARIO_WORDS.get(worst['scenario'], worst['scenario'])}, n = "
            f"{worst['n']:,}): its two-sided coverage hid that the side that certifies a ratio "
            "was too high near a tie. With the BIC-type threshold, "
            f"{higher} of the {6 * len(controls)} coverages are at least as high as with the "
            "current one.\n")
        out.append(_selection(cells, controls))
    return "\n".join(out)


def _selection(cells, controls):
    """How the near-maximal candidates split the audits: two-sided 90% coverage with one
    near-maximal candidate and with several, for the bounds and for the observed most
    selected cell taken as a fixed reference."""
    control = {(c["scenario"], c["n"]): c for c in controls}
    rows = []
    for c in cells:
        k = control.get((c["scenario"], c["n"]))
        if k is None:
            continue
        rows.append([SCENARIO_WORDS.get(c["scenario"], c["scenario"]), f"{c['n']:,}",
                     _pct(c["single_reference_share"]),
                     _maybe_pct(c["cover_0.9_single_reference"]),
                     _maybe_pct(c["cover_0.9_several_references"])
                     + f" ({round((1 - c['single_reference_share']) * c['reps'])} audits)",
                     _pct(k["observed_top_cover_0.9"]),
                     _maybe_pct(k["observed_top_cover_0.9_single_reference"]),
                     _maybe_pct(k["observed_top_cover_0.9_several_references"])])
    text = [
        "\nWhere the coverage comes from: the audits with a single near-maximal candidate "
        "(the observed most selected cell alone within :math:`\\kappa_n` standard errors of "
        "the maximum), in which the bounds are the bootstrap of the ratios to that cell as a "
        "fixed reference, and the others. The two-sided 90% coverage in each, and that of "
        "the fixed reference (the observed most selected cell, its choice ignored) in the "
        "same audits. These are coverages given a selection: the few audits in which a "
        "runner-up well below the top came within :math:`\\kappa_n` standard errors of it "
        "are those in which its rate came out far too high.\n",
        table(["denominator", "n", "audits with one near-maximal candidate",
               "bounds: one candidate", "bounds: several",
               "fixed observed top: all audits", "fixed observed top: one candidate",
               "fixed observed top: several"], rows)]
    sentences = []
    ahead = sorted((c for c in cells if c["scenario"] == "max-clear"
                    and (c["scenario"], c["n"]) in control), key=lambda c: c["n"])
    if ahead and ahead[0]["cover_0.9_several_references"] is not None:
        c, k = ahead[0], control[ahead[0]["scenario"], ahead[0]["n"]]
        sentences.append(
            f"With the most selected cell well ahead at n = {c['n']:,}, "
            f"{_pct(c['single_reference_share'])} of the audits had a single near-maximal "
            "candidate. In them the bounds are the fixed reference's and cover "
            f"{_pct(c['cover_0.9_single_reference'])} at 90%: the audits left out are mostly "
            "those in which the top's rate came out low or a runner-up's high, the errors a "
            "fixed reference misses — in the other "
            f"{_pct(1 - c['single_reference_share'])} it covers "
            f"{_pct(k['observed_top_cover_0.9_several_references'])}, where the bounds cover "
            f"{_pct(c['cover_0.9_several_references'])}. Over all audits the fixed reference "
            f"covers {_pct(k['observed_top_cover_0.9'])}, and it fails near a tie (the rows "
            "above).")
    separated = [c for c in cells if c["scenario"] == "max-separated"]
    if separated:
        alone = all(c["single_reference_share"] == 1.0 for c in separated)
        in_band = not any(_out_of_band(c) for c in separated)
        sentences.append(
            "With the most selected cell far ahead, "
            + ("every audit had a single near-maximal candidate at every size"
               if alone else "some audits had several near-maximal candidates")
            + " and the bounds' coverage is "
            + ("within nominal ± 2 standard errors on both sides and two-sided at every size "
               "and level." if in_band else "outside nominal ± 2 standard errors somewhere "
               "(the first table)."))
    if sentences:
        text.append("\n" + " ".join(sentences))
    return "\n".join(text) + "\n"


def speed():
    data = load("group_ratio_speed.json")
    s = data["seconds"]
    return (
        "\n.. _ratio_speed:\n\nSpeed\n~~~~~\n\n"
        f"``{data['command'].strip()}``: {data['rows']:,} rows, {data['groups']} groups, "
        f"B = {data['resamples']:,}, best of {data['repeat']} alternated runs in the same run "
        f"(load average {data['load_average_before'][0]:.1f} on {data['machine']['cpus']} "
        f"shared cores). End to end from the rows, the impact-ratio audit took "
        f"{s['ratio']:.3f} s and the difference audit {s['difference']:.3f} s "
        f"(ratio {data['ratio_to_difference']:.2f}×); the bootstrap alone "
        f"{s['ratio_bootstrap']:.3f} s against {s['difference_bootstrap']:.3f} s "
        f"({data['bootstrap_ratio_to_difference']:.2f}×).\n")


def peers():
    data = load("group_ratio_peers.json")
    versions = data["versions"]
    out = ["\n.. _ratio_peers:\n\nSame point values as fairlearn and AIF360\n"
           "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n",
           f"``benchmarks/bench_group_ratio_peers.py`` ran fairlearn {versions['fairlearn']} and "
           f"AIF360 {versions['aif360']} themselves (in a separate environment) on COMPAS "
           "(high risk: ``decile_score >= 5``) and Adult (the rule ``education-num >= 13``), "
           f"race × sex: {len(data['rows'])} values, largest absolute difference "
           f"{data['max_abs_diff']:.3g}.\n"]
    rows = [[r["dataset"], r["peer"], r["quantity"], f"{r['peer_value']:.12g}",
             f"{r['ours']:.12g}", f"{r['abs_diff']:.3g}"]
            for r in data["rows"] if "[" not in r["quantity"] or r["peer"] == "aif360"]
    per_group = [r for r in data["rows"] if "[" in r["quantity"] and r["peer"] == "fairlearn"]
    out.append(table(["data", "peer", "quantity", "peer", "ours", "absolute difference"], rows))
    out.append(f"\nPlus {len(per_group)} per-group ratios (to the most selected cell: "
               "``by_group / by_group.max()``; to the overall rate: ``by_group / overall``), "
               "largest difference "
               f"{max(r['abs_diff'] for r in per_group):.3g}.\n")
    return "\n".join(out)


def bias_tables():
    data = load("bias_audit_tables.json")
    out = []
    for t in data["tables"]:
        title = f"{t['dataset'].upper() if t['dataset'] == 'compas' else 'Adult'}, " \
                f"{t['mode']} mode: {t['tool']}"
        out.append(f"{title}\n{'~' * len(title)}\n")
        median = (f" (sample median {t['median']:g}: a row is counted when its score is "
                  "above it)" if t["median"] is not None else "")
        out.append(f"{t['rows']:,} rows{median}; {1 - t['alpha']:.0%} simultaneous intervals, "
                   f"B = {t['resamples']:,}. Verdict: {t['verdict']} ({t['details']})\n")
        cols = t["columns"]
        keep = [cols.index(c) for c in ("kind", "group", "size", "selected", "rate",
                                        "impact_ratio", "lower", "upper", "verdict")]
        header = ["category of", "category", "rows",
                  "selected" if t["mode"] == "selection" else "above median",
                  "selection rate" if t["mode"] == "selection" else "scoring rate",
                  "impact ratio", "lower", "upper", "verdict"]
        rows = [[_number(row[k]) for k in keep] for row in t["table"]]
        out.append(table(header, rows))
        out.append("")
    return "\n".join(out)


def render_ratios():
    """``{path: text}`` of the ratio pages."""
    return {
        GUIDE / "ratio_results.inc": GENERATED + "\n" + validity() + speed() + peers(),
        GUIDE / "bias_audit_tables.inc": GENERATED + "\n" + bias_tables(),
    }
