"""Write the documentation's result fragments from the committed ``benchmarks/results``.

``doc/reproduction_tables.rst`` (the reproduction page), ``doc/fair_metric_failure.rst``,
``doc/fair_metric_results.rst`` (the "Choosing a fair metric" page) and the fragments
``doc/user_guide/*_results.inc`` that the user guide includes quote numbers only through this
script, so that every number and every sentence of conclusion on them is computed from a
results file written by a benchmark script (:func:`render_all` lists them). Run it after
rerunning a benchmark::

    python doc/make_reproduction_tables.py

The test suite checks that the committed fragments are what this script writes.
"""

from __future__ import annotations

import csv
import json
import math
import pathlib
from runpy import run_path

import numpy as np
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OUTPUT = ROOT / "doc" / "reproduction_tables.rst"
FAIR_METRIC_FAILURE = ROOT / "doc" / "fair_metric_failure.rst"
FAIR_METRIC_RESULTS = ROOT / "doc" / "fair_metric_results.rst"
GUIDE = ROOT / "doc" / "user_guide"
GENERATED = (".. This file is written by doc/make_reproduction_tables.py from benchmarks/results.\n"
             "   Do not edit it by hand.\n")


def load(name):
    path = RESULTS / name
    if name.endswith(".csv"):
        with path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    return json.loads(path.read_text(encoding="utf-8"))


def pct(x, digits=1):
    return f"{100 * float(x):.{digits}f}%"


def num(x, digits=3):
    return f"{float(x):.{digits}f}"


def table(header, rows):
    """An rst list-table."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def section(title, char="-"):
    return f"{title}\n{char * len(title)}\n"


def share(x):
    """A rate as a percentage with no decimals, e.g. for shares of splits."""
    return pct(x, 0)


def faith_table1():
    rows = load("faith_compas_table.csv")
    meta = load("faith_compas_table.json")
    s = meta["settings"]
    epsilons = [float(e) for e in s["epsilons"]]
    out = [section("FaiTH: Table 1 analogue on COMPAS", "~")]
    out.append(
        f"``bench_faith_compas_table.py``: {s['repeats']} random 70/30 train/audit "
        f"splits of the {s['n_rows']:,} African-American and Caucasian defendants, audited at "
        + " and ".join(f"ε = {e:g}" for e in epsilons)
        + f" (the models are fit, and the ℓ1 model selected at ε = {s['select_epsilon']:g}, "
        f"once per split); δ = {s['delta']:g} ({s['delta_reason']}); 0-1 loss, "
        "sensitive-subspace metric learned on the training part, the default uniform bounds "
        f"({s['n_resamples']:,} max-t replicates), 95%. Group metrics are African-American "
        "minus Caucasian on the audit split. Rows marked [expected] audit the randomised "
        "fairlearn classifiers with their expected 0-1 loss. *near kink*: share of splits whose "
        "``near_kink`` is True; *contact > 1*: share whose estimated contact set holds more than "
        "one linear piece of ψ.\n"
    )
    out.append(
        "At ε = 0 only moves along race and sex (and the directions that predict them) are "
        "free: ψ is linear in the cell frequencies and its limit law Gaussian. ε = 0.1 is the "
        "``FaithAuditor`` default budget, in units of the squared learned fair distance.\n"
    )
    header = ["method", "FaiTH", "95% CI", "lower bound", "rejects δ-fair", "near kink",
              "contact > 1", "accuracy", "SPD", "EOD", "AOD"]
    for epsilon in epsilons:
        sub = [r for r in rows if float(r["epsilon"]) == epsilon]
        out.append(f"\n**ε = {epsilon:g}**\n")
        out.append(table(header, [
            [r["method"], f"{num(r['statistic_mean'], 4)} ± {num(r['statistic_sd'], 4)}",
             f"[{num(r['ci_low_mean'], 4)}, {num(r['ci_high_mean'], 4)}]",
             num(r["lower_bound_mean"], 4), share(r["rejection_rate"]),
             share(r["near_kink_rate"]), share(r["multi_piece_contact_rate"]),
             num(r["accuracy_mean"]), num(r["spd_mean"]), num(r["eod_mean"]),
             num(r["aod_mean"])]
            for r in sub
        ]))
    base = {r["method"]: r for r in rows if float(r["epsilon"]) == epsilons[0]}
    lr, rlr = base["LR"], base["RLR (δ-fair ℓ1)"]
    group_fair = [r for m, r in base.items() if m not in ("LR", "RLR (δ-fair ℓ1)")]
    sentence = (
        "\nThe paper reports lower bounds ≈ 0.05 > δ for the plain logistic regression and a "
        f"δ-fair ℓ1 model that is not rejected; here, at ε = {epsilons[0]:g}, the plain model's "
        f"mean lower bound is {num(lr['lower_bound_mean'], 4)} and it is rejected in "
        f"{share(lr['rejection_rate'])} of the splits, the selected ℓ1 model in "
        f"{share(rlr['rejection_rate'])}"
    )
    if group_fair:
        least = min(float(r["rejection_rate"]) for r in group_fair)
        sentence += (
            "; the group-fair methods equalise the groups and are rejected "
            + ("on every split" if least == 1.0 else f"in at least {share(least)} of the splits")
            + ": they treat otherwise identical people differently by race"
        )
    out.append(sentence + ".\n")
    for epsilon in epsilons[1:]:
        sub = [r for r in rows if float(r["epsilon"]) == epsilon]
        binds = min(float(r["budget_binds_rate"]) for r in sub)
        inside = min(float(r["inside_curve_rate"]) for r in sub)
        multi = [float(r["multi_piece_contact_rate"]) for r in sub]
        kinks = [float(r["near_kink_rate"]) for r in sub]
        out.append(
            f"\nAt ε = {epsilon:g} the budget binds in "
            + ("every audit" if binds == 1.0 else f"at least {share(binds)} of the audits")
            + " and lies between two breakpoints of the estimated curve ε ↦ ψ in "
            + ("every one" if inside == 1.0 else f"at least {share(inside)}")
            + ", so ψ is a minimum of linear pieces with positive multipliers; "
            f"the contact set holds several pieces in {share(min(multi))} to "
            f"{share(max(multi))} of the splits (by model), and ``near_kink`` is True in "
            f"{share(min(kinks))} to {share(max(kinks))}.\n"
        )
    heat = meta["heatmap"]
    cost = heat["one_feature_change_cost"]
    out.append(
        f"\nUnder the learned metric a change of one non-protected feature costs between "
        f"{num(cost['min'])} and {num(cost['max'])} (median {num(cost['median'])}) on the "
        f"heat-map split.\n"
    )
    out.append(
        f"\n**Figure 2 analogue** (``faith_compas_heatmap.png``, split {heat['seed']}, "
        f"ε = {heat['epsilon']:g}, ψ = {num(heat['statistic'], 4)}): the adversarial moves, as "
        "written by the script:\n\n"
    )
    out.append("\n".join(f"| {line.strip()}" for line in heat["reading"]) + "\n")
    return "\n".join(out)


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


def _selection_facts():
    """The model-selection results, as the reproduction page and the user guide quote them."""
    d = load("model_selection_compas.json")
    sel, rep, paper = d["selected"], d["repeats"], d["comparison_with_paper"]["paper"]
    ours = d["comparison_with_paper"]["ours"]
    order = [("race" if name == "race (Caucasian)" else name) for name, _ in ours["entry_order"]]
    return d, sel, rep, paper, order


def _kept(rep):
    """``"race (Caucasian) 100%, ..."``: how often each variable is kept, most often first."""
    kept = sorted(rep["kept_share"].items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {pct(share, 0)}" for name, share in kept)


def _entry_sentence(rep, paper, order):
    n = rep["n_repeats"]
    positions = rep["entry_positions"]
    first = paper["entry_order"][0]
    where = sorted(set(positions[first]))
    same_first = sum(p == 1 for p in positions[first])
    return (
        f"The paper's variables enter in the order {', '.join(paper['entry_order'])}; on the "
        f"main split ours enter in the order {', '.join(order)}, and over the {n} splits the "
        f"paper's order is found in {pct(rep['entry_order_as_paper'], 0)} of them: "
        f"\"{first}\", the paper's first, enters first in {same_first} of {n} splits "
        f"(position {' or '.join(str(p) for p in where)}), while \"{order[0]}\" enters "
        f"first in {sum(p == 1 for p in positions.get(order[0], []))} of {n}."
    )


def model_selection():
    d, sel, rep, paper, order = _selection_facts()
    n = rep["n_repeats"]
    c10, c50, c90 = rep["selected_C_quantiles_10_50_90"]
    out = [section("FaiTH: model selection (Figures 3 and 4)", "~")]
    out.append(
        f"``bench_model_selection_compas.py`` (``model_selection_tradeoff.png``, "
        f"``model_selection_coef_path.png``; split train {d['config']['n_train']:,} / "
        f"validation {d['config']['n_validation']:,} / audit {d['config']['n_audit']:,}, "
        f"δ = {d['config']['delta']:g}, ε = {d['config']['epsilon']:g}, "
        f"{d['config']['method']} bootstrap as in the paper). The choice depends on the split: "
        f"over {n} splits (seeds {d['config']['seed']}–{d['config']['seed'] + n - 1}) the "
        f"selected C has median {num(c50, 4)} (10% and 90% quantiles {num(c10, 4)} and "
        f"{num(c90, 4)}; paper: 1/λ = {paper['selected_inverse_lambda']}), and the selected "
        f"model keeps each variable in this share of the splits: {_kept(rep)}. Sex is dropped "
        f"in {pct(rep['sex_dropped'], 0)} of the splits (paper: dropped), race in "
        f"{pct(rep['race_dropped'], 0)}.\n"
    )
    out.append(
        f"On the audit split the selected model passes the δ-test in "
        f"{pct(rep['selected_passes_on_audit'], 0)} of the splits (mean lower bound "
        f"{num(rep['selected_lower_mean'], 4)}) and the unpenalised logistic regression is "
        f"rejected in {pct(rep['unpenalised_rejected_on_audit'], 0)} (mean lower bound "
        f"{num(rep['unpenalised_lower_mean'], 4)}; paper: ≈ {paper['lr_lower_bound']:g} > δ). "
        f"On the main split (seed {sel['seed']}, the figures): C = {num(sel['selected_C'], 4)}, "
        f"kept: {', '.join(sel['kept_variables'])}; lower bounds "
        f"{num(sel['selected_audit']['lower_bound_one_sided'], 4)} (selected) and "
        f"{num(sel['unpenalised_audit']['lower_bound_one_sided'], 4)} (unpenalised).\n"
    )
    out.append(_entry_sentence(rep, paper, order) + "\n")
    positions = rep["entry_positions"]
    out.append(table(
        ["variable", "paper's position", *[f"split {d['config']['seed'] + k}" for k in range(n)]],
        [[v, str(k + 1), *[str(p) if p is not None else "—" for p in positions[v]]]
         for k, v in enumerate(paper["entry_order"])],
    ))
    return "\n".join(out)


def model_selection_guide():
    """The COMPAS paragraph of the model-selection user guide."""
    d, sel, rep, paper, order = _selection_facts()
    n = rep["n_repeats"]
    sa, ua = sel["selected_audit"], sel["unpenalised_audit"]
    refit = sel["refit_on_train_and_validation"]
    dropped = [v for v in rep["kept_share"] if v not in sel["kept_variables"]]
    return "\n".join([
        f"On the main split (seed {sel['seed']}, the figures):",
        "",
        f"* the selected model (``C = {num(sel['selected_C'], 4)}``; the paper selected "
        f"``1/λ = {paper['selected_inverse_lambda']}``) keeps "
        f"{', '.join(sel['kept_variables'])} and drops {', '.join(dropped)}; it "
        f"{'passes' if not sa['rejected_delta_fair'] else 'fails'} the δ test on the audit "
        f"split (ψ = {num(sa['statistic'], 3)});",
        f"* the unpenalised logistic regression is "
        f"{'rejected' if ua['rejected_delta_fair'] else 'not rejected'} on the audit split "
        f"(ψ = {num(ua['statistic'], 3)}, one-sided lower bound "
        f"{num(ua['lower_bound_one_sided'], 3)}; the paper reports lower bounds "
        f"≈ {paper['lr_lower_bound']:g} > δ);",
        f"* refitting the chosen ``C`` on train + validation keeps "
        f"{len(refit['features'])} variables and that model "
        f"{'fails' if refit['audit']['rejected_delta_fair'] else 'passes'} the audit (lower "
        f"bound {num(refit['audit']['lower_bound_one_sided'], 3)})"
        + (": hence ``refit=\"validated\"`` in the script (the model whose audit passed "
           "is the one returned)." if refit["audit"]["rejected_delta_fair"] else "."),
        "",
        f"The choice depends on the split. Over {n} random splits (``repeats`` in the same "
        f"file) the selected C has median {num(rep['selected_C_median'], 4)}; the selected "
        f"model keeps each variable in this share of the splits: {_kept(rep)}; it passes the "
        f"audit in {round(rep['selected_passes_on_audit'] * n)} of {n} splits, while the "
        f"unpenalised model is rejected in {round(rep['unpenalised_rejected_on_audit'] * n)} "
        f"of {n} (mean lower bound {num(rep['unpenalised_lower_mean'], 3)}, against "
        f"δ = {d['config']['delta']:g}). "
        + _entry_sentence(rep, paper, order),
        "",
    ])


def group_compas():
    d = load("group_compas.json")
    cmp_ = d["paper_comparison"]
    fpr = d["flagging"]["fpr"]
    out = [section("Cherian & Candès: COMPAS", "~")]
    out.append(
        f"``bench_group_compas.py`` (B = {d['settings']['n_resamples']:,}; ProPublica's filter, "
        f"{d['data']['n_rows']:,} rows — the paper's {d['data']['paper_n_rows']:,} cannot be "
        "reproduced, see the data README):\n"
    )
    out.append(table(
        ["", "paper", "ours"],
        [
            ["AA − Caucasian PPV, 90% lower bound (race groups)",
             pct(cmp_["aa_minus_caucasian_lower_bound"]["paper"], 2),
             pct(cmp_["aa_minus_caucasian_lower_bound"]["ours_race_only"], 2)],
            ["same, within all race × sex × age intersections", "—",
             pct(cmp_["aa_minus_caucasian_lower_bound"]["ours_full_intersections"], 2)],
            ["PPV ≥ 5 points below overall, FDR 10%",
             "; ".join(cmp_["ppv_flags"]["paper"]), "; ".join(cmp_["ppv_flags"]["ours"])],
            ["FPR ≥ 5 points above overall, FDR 10%",
             "most under-25 groups, several African-American groups",
             f"{len(fpr['flagged'])} groups: " + "; ".join(fpr["flagged"])],
        ],
    ))
    return "\n".join(out)


def group_compas_guide():
    """The COMPAS results quoted by the group-fairness user guide."""
    d = load("group_compas.json")
    bound = d["paper_comparison"]["aa_minus_caucasian_lower_bound"]
    ppv = d["paper_comparison"]["ppv_flags"]
    fpr = d["paper_comparison"]["fpr_flags"]
    points = 100
    return "\n".join([
        "The paper reports that the lower end of the 90% interval certifies that high-risk "
        f"African-American defendants recidivate at least {points * bound['paper']:.2f} points "
        "more often than high-risk Caucasian defendants [CC2024]_ (§3.2.2). "
        f"``benchmarks/bench_group_compas.py`` gets {points * bound['ours_race_only']:.2f} "
        f"points on ProPublica's {d['data']['n_rows']:,} defendants with the race groups as the "
        f"collection, and {points * bound['ours_full_intersections']:.2f} points when the bound "
        "is simultaneous over all race × sex × age intersections (a larger family, hence a "
        "wider bound); ``tests/group/test_compas.py`` checks it. See :doc:`../reproducing`.",
        "",
        "**Flag PPV shortfalls.** Which intersections of race, sex and age have a PPV at least "
        "5 points *below* the overall PPV, at a false discovery rate of 10%?",
        "",
        ".. code-block:: python",
        "",
        "    flagger = GroupDisparityAuditor(",
        "        DecileRule(), metric=\"ppv\", protected=[\"race\", \"sex\", \"age_cat\"],",
        "        procedure=\"flag\", epsilon0=-0.05, alternative=\"less\", q=0.1,",
        "    ).fit(X, y)",
        "    flags = flagger.audit(X, y)",
        "    flags.to_frame().query(\"flagged\")",
        "",
        f"{len(ppv['ours'])} groups are flagged: {'; '.join(ppv['ours'])}"
        + (" — the paper's groups (§4.2.2)." if ppv["identical"] else
           f" (the paper (§4.2.2): {'; '.join(ppv['paper'])})."),
        "",
        "**Flag false positive rates.** Among defendants who did not reoffend, which groups "
        "are called high risk at least 5 points more often than average? The benchmark flags "
        f"{len(d['flagging']['fpr']['flagged'])} groups: {fpr['ours_under_25']}, "
        f"{fpr['ours_african_american']}"
        + (", and no group over 45" if not fpr["ours_over_45_flagged"] else "")
        + f" (the paper: {fpr['paper']}).",
        "",
    ])


def faith_solver_guide():
    """The exact solver's timing quoted by the individual-fairness user guide."""
    solver = load("faith_solver.json")["compas_like"]
    return (
        "The committed benchmark ``benchmarks/results/faith_solver.json`` records, on a "
        f"COMPAS-like grid of {solver['n_cells']} cells, {solver['n_replicates']:,} replicates "
        f"in {1000 * solver['ours_seconds_all_replicates']:.1f} ms against "
        f"{1000 * solver['highs_seconds_per_replicate']:.0f} ms for *one* replicate with "
        "``scipy.optimize.linprog(method=\"highs\")``, with a largest difference of the "
        f"values of {solver['max_abs_difference_on_subset']:.1e}.\n"
    )


def conformal_and_rkhs():
    c, r = load("conformal_coverage.json"), load("rkhs_audit.json")
    real, rep = c["realisation"], c["repetitions"]
    n_reps = rep["n_reps"]
    paper_level = 0.95  # the level of the paper's summary (§1.1.1), see c["paper"]
    at_paper, at_ours = rep[f"rescaled_{round(100 * paper_level)}"], rep["rescaled"]
    out = [section("Cherian & Candès: conditional coverage and RKHS tilts", "~")]
    out.append(
        f"``bench_conformal_coverage.py``: split conformalized quantile regression at 90%, "
        f"{c['settings']['n_audit']:,} audit points, all {real['n_intervals']:,} intervals on "
        "the 0.1 grid, simultaneous lower bounds on coverage (rescaled). The paper's data and "
        "model are not available: the data are re-simulated from its description, and the "
        f"whole pipeline (training, calibration, audit) is repeated {n_reps} times. Levels: "
        f"{c['paper']['level_quoted']}; the table compares the paper's figures with ours at "
        f"its level, {pct(paper_level, 0)}, as the mean over the {n_reps} repetitions "
        "(10% and 90% quantiles in brackets).\n"
    )

    def spread(summary, key):
        return (f"{pct(summary[f'{key}_mean'])} [{pct(summary[f'{key}_q10'])}, "
                f"{pct(summary[f'{key}_q90'])}]")

    rows = []
    for key, label in (("len1", "length ≥ 1"), ("len2", "length ≥ 2")):
        paper_key = "min_lower_length_ge_1" if key == "len1" else "min_lower_length_ge_2"
        rows.append([
            f"smallest lower bound, intervals of {label}", pct(c["paper"][paper_key]),
            spread(at_paper, f"min_lower_{key}"), spread(at_ours, f"min_lower_{key}"),
        ])
    rows.append(["simultaneous coverage (all intervals' bounds hold)", "—",
                 f"{pct(at_paper['simultaneous_coverage'])} (nominal "
                 f"{pct(at_paper['nominal'], 0)})",
                 f"{pct(at_ours['simultaneous_coverage'])} (nominal "
                 f"{pct(at_ours['nominal'], 0)})"])
    out.append(table(["", f"paper ({pct(paper_level, 0)}, its data)",
                      f"ours, {pct(paper_level, 0)} (mean of {n_reps})",
                      f"ours, {pct(at_ours['nominal'], 0)} (mean of {n_reps})"], rows))
    gap = {key: float(at_paper[f"min_lower_{key}_mean"])
           - float(c["paper"]["min_lower_length_ge_1" if key == "len1" else
                              "min_lower_length_ge_2"]) for key in ("len1", "len2")}
    out.append(
        "\nAt the paper's level our smallest bounds are on average "
        + " and ".join(f"{100 * abs(v):.1f} points {'above' if v > 0 else 'below'} the "
                       f"paper's (length ≥ {key[-1]})" for key, v in gap.items())
        + f"; on our data the true coverage of the worst interval of length ≥ 1 averages "
        f"{pct(rep['min_true_coverage_len1_mean'])} over the repetitions (≥ 2: "
        f"{pct(rep['min_true_coverage_len2_mean'])}). The figure (``conformal_coverage.png``) "
        f"shows one realisation, whose {pct(1 - c['settings']['alpha'], 0)} bounds are "
        f"{pct(real['rescaled_90']['length_ge_1']['min_lower'])} and "
        f"{pct(real['rescaled_90']['length_ge_2']['min_lower'])}.\n"
    )
    union = r["realisation"]["tilts"]["union"]
    all_key = next(k for k in r["repetitions"] if k.startswith("all_"))
    n_tilts = int(all_key.split("_")[1])
    out.append(
        f"\n``bench_rkhs_audit.py`` (Gaussian kernel, σ = {r['settings']['bandwidth']}): lower "
        f"bound {pct(union['lower'])} for the smoothed union of three sub-intervals (paper: "
        f"{pct(r['paper']['union_lower_bound'])} on its data); over "
        f"{r['repetitions']['n_reps']} repetitions it held in "
        f"{pct(r['repetitions']['union_tilt']['coverage'], 0)} of the runs, and all "
        f"{n_tilts:,} tilts at once in {pct(r['repetitions'][all_key]['coverage'], 0)}.\n"
    )
    return "\n".join(out)


def _ci(cell):
    low, high = cell["clopper_pearson_95"]
    return f"{pct(cell['realised'] if 'realised' in cell else cell['coverage'])} " \
        f"[{pct(low)}, {pct(high)}]"


def rkhs_table4():
    """The paper's Table 4 analogue: realised percentiles of the RKHS critical value."""
    d = load("rkhs_table4.json")
    paper = d["paper"]
    out = [section("Cherian & Candès: realised percentiles of the RKHS critical value "
                   "(Table 4)", "~")]
    out.append(
        f"``bench_rkhs_table4.py``: {d['trials']} trials per cell, B = {d['n_resamples']}, "
        f"nominal {pct(d['nominal'], 0)}, Gaussian kernel exp(−γ (x − x′)²) with "
        f"γ = {d['gamma']:g}, lower bounds on the tilted mean; designs and kernel from "
        f"{paper['settings_recovered_from']}. The realised percentile is the share of trials "
        "whose true process stays below the bootstrap critical value over the whole ball "
        "(95% Clopper–Pearson interval). **The paper's numbers are not shown**: "
        f"{paper['why_missing']}; the paper's summary says that {paper['summary_says']}.\n"
    )
    rows = []
    for c in d["cells"]:
        floor = c.get("paper_floor")
        rows.append([
            c["design"], f"{c['n']:,}", "not recoverable", _ci(c["unscaled"]),
            _ci(c["rescaled"]),
            (f"≥ {num(floor['ratio_to_rescaled_median'], 2)}×" if floor else "—"),
        ])
    out.append(table(["design", "n", "paper (unscaled)", "unscaled (§5)",
                      "rescaled (Appendix D, ours)",
                      "paper's constant floor: critical value / ours"], rows))
    conservative = [c for c in d["cells"] if c["unscaled"]["clopper_pearson_95"][0] > d["nominal"]]
    gaps = max(c["rescaled"]["max_refinement_gap"] for c in d["cells"])
    out.append(
        f"\nThe unscaled audit is conservative (the whole interval above "
        f"{pct(d['nominal'], 0)}) in {len(conservative)} of {len(d['cells'])} cells"
        + (": " + ", ".join(f"{c['design']} n = {c['n']:,}" for c in conservative)
           if conservative else "")
        + f". The rescaled critical values are upper bounds within {pct(gaps, 1)} of the "
        "exact supremum (the certified refinement gap). The last column is a lower bound "
        "of the critical value that the paper's constant floor would give, over the first "
        "trials of each cell (sign-changing functions of zero mass reach the floor), relative "
        "to the rescaled critical value with the floor proportional to ‖h‖²: the reason for "
        "the modified floor.\n"
    )
    return "\n".join(out)


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


def tilt_speed():
    d = load("tilt_speed.json")
    out = [section("Tilt audits: speed", "~")]
    out.append(
        f"``bench_tilt_speed.py``: one audit of {d['rows']:,} rows with B = "
        f"{d['n_resamples']:,}, one thread, end to end (load average "
        f"{d['load_average_before'][0]:.1f} before, {d['load_average_after'][0]:.1f} after); "
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
        f"{meta['load_average_at_start'][0]:.1f} at the start, "
        f"{meta['versions']['load_average_at_end'][0]:.1f} at the end).\n"
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
        "\n**FDR on real data** (``bench_adult_fdr.py``, UCI Adult as the population, "
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
        f"(load average {meta['load_average_at_start'][0]:.1f} at the start, "
        f"{meta['versions']['load_average_at_end'][0]:.1f} at the end).\n"
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


def _sources(row):
    """The attribute levels that brought a metric's free directions, once each, in order."""
    names = list(dict.fromkeys(row["free_sources"]))
    return ", ".join(f"``{n}``" for n in names) if names else "none"


def fair_metric_failure():
    """The six-race failure of the previous default and what the default does on that split."""
    r = load("fair_metric_compas.json")
    s = r["settings"]
    six = r["issue_split"]["six races"]
    aa = r["issue_split"]["African-American and Caucasian"]
    old, new, pe = six["all levels (previous default)"], six["default"], six["protected Euclidean"]
    counts = s["race_counts"]["six races"]
    rare = sorted(counts.items(), key=lambda kv: kv[1])[:2]
    worst = min((x for x in old["sources"] if x["free_directions"]), key=lambda x: x["auc"])
    out = [
        f"COMPAS with ProPublica's filter and all six races ({s['rows']['six races']:,} "
        f"defendants: {', '.join(f'{k} {v:,}' for k, v in counts.items())}), the features sex, "
        "race, age category, prior-count category and charge degree one-hot encoded "
        f"({old['encoded_columns']} columns), a logistic regression trained on a stratified "
        f"70% split (seed {old['seed']}) and audited on the rest with "
        "``protected=[\"race\", \"sex\"]`` at ε = 0. The previous default fitted one "
        f"regression per protected level: {old['candidate_directions']} directions (six races "
        "and the sex). With the protected columns' own directions they make "
        f"{old['sensitive_rank']} of the {old['encoded_columns']} encoded directions sensitive, "
        f"and **{old['free_directions']} of the {old['non_protected_directions']} "
        "non-protected directions free**: an ℓ2 logistic regression with an intercept has its "
        "coefficients in the span of the centred training rows (its first-order condition), "
        f"so {old['candidate_directions']} coefficient vectors in a "
        f"{old['non_protected_directions']}-dimensional space span all of it. Every move is "
        f"then free: ψ̂ = {old['statistic']:.4f}, exactly the model's accuracy "
        f"{old['accuracy']:.4f}, with a lower bound of {old['lower_bound']:.4f} and "
        "\"REJECT\" — a verdict about the model's errors, not its fairness. The free "
        f"directions came from {_sources(old)}, including levels the features do not predict "
        f"at all (``{worst['source']}``: cross-validated AUC {worst['auc']:.2f}).",
        "",
        f"The library now says so: the audit raises a ``DegenerateMetricWarning`` "
        f"(``result.degenerate_metric`` is {old['degenerate_metric']}), and the result shows "
        f"that {pct(old['zero_cost_share'])} of the audited individuals reach a worse decision "
        f"at zero cost, as many as at any cost ({pct(old['reachable_share'])}).",
        "",
        f"The default metric on the same split keeps {new['kept_directions']} of the "
        f"{new['candidate_directions']} candidate directions and frees "
        f"{new['free_directions']} of the {new['non_protected_directions']} non-protected "
        f"directions (from {_sources(new)}). ψ̂ = {new['statistic']:.4f} "
        f"({pct(new['ratio_to_accuracy'])} of the accuracy; no warning), the same as with the "
        f"protected Euclidean metric, which frees race and sex only ({pe['statistic']:.4f}): "
        "at ε = 0 the default's free directions contain no move between cells, only race and "
        f"sex flips are free, and {pct(new['zero_cost_share'])} of the audited individuals "
        "would be misclassified had they another race or sex. That this is "
        f"large is the model's doing: the rarest levels ({rare[0][0]}: {rare[0][1]}, "
        f"{rare[1][0]}: {rare[1][1]} defendants) get noisy coefficients, and moving people "
        "there changes their predictions.",
        "",
        "With African-American and Caucasian defendants only, the previous default freed "
        f"{aa['all levels (previous default)']['free_directions']} directions and gave ψ̂ = "
        f"{aa['all levels (previous default)']['statistic']:.4f} on this split; the default "
        f"gives {aa['default']['statistic']:.4f}.",
    ]
    return "\n".join(out) + "\n"


def fair_metric_results():
    """The distribution over splits, every metric, both data sets; the sensitivity view."""
    r = load("fair_metric_compas.json")
    s = r["settings"]
    out = [
        f"``bench_fair_metric_compas.py`` repeats the audit on {s['splits']} stratified 70/30 "
        f"splits (seeds {s['seeds'][0]}–{s['seeds'][-1]}) of both data sets, with five "
        f"metrics learned on the training part: the default, the previous default (all "
        "levels), the standardised protected Euclidean metric, EXPLORE learned from "
        f"{s['explore_pairs']:,} pairs judged by a simulated case worker (comparable: same "
        f"age, prior-count and charge category; {pct(s['explore_judge_error'], 0)} of the "
        "judgements wrong) and the SVD subspace of groups of comparable individuals (same "
        "prior-count category and charge degree, so age is irrelevant too). ψ̂ is at ε = 0, "
        f"{s['method']} bootstrap with {s['n_resamples']:,} replicates; \"ψ̂ / accuracy\" "
        "is the statistic over the model's accuracy on the same audit split (1 means every "
        "correct decision flips for free).",
        "",
    ]
    for data in ("six races", "African-American and Caucasian"):
        rows = r["summary"][data]
        out.append(f"**{data[0].upper() + data[1:]}** ({s['rows'][data]:,} defendants):\n")
        out.append(table(
            ["metric", "ψ̂ / accuracy: median [10%, 90%]", "max", "splits with ψ̂ ≤ ½ acc.",
             "mean lower bound", "free directions (median)", "warned"],
            [[x["metric"], f"{x['ratio_median']:.3f} [{x['ratio_q10']:.3f}, "
              f"{x['ratio_q90']:.3f}]", f"{x['ratio_max']:.3f}",
              pct(x["share_ratio_at_most_half"], 0), num(x["lower_bound_mean"], 4),
              f"{x['free_directions_median']:.0f} of {x['non_protected_directions']}",
              pct(x["warning_rate"], 0)] for x in rows],
        ))
        out.append("")
    six = {x["metric"]: x for x in r["summary"]["six races"]}
    default, old = six["default"], six["all levels (previous default)"]
    equal = r["six_races_default_vs_protected_euclidean"]
    aa = r["aa_caucasian_default_minus_previous"]
    out.append(
        f"With six races the previous default gives ψ̂ equal to the accuracy in "
        f"{pct(old['statistic_equals_accuracy'], 0)} of the splits and warns in "
        f"{pct(old['warning_rate'], 0)}; the default keeps ψ̂ at or below half the accuracy in "
        f"{pct(default['share_ratio_at_most_half'], 0)} of them and warns in "
        f"{pct(default['warning_rate'], 0)}."
        + (
            f" Where it exceeds half the accuracy (largest ratio {default['ratio_max']:.3f}), "
            "so does the protected Euclidean metric: the two agree exactly in "
            f"{pct(equal['share_equal'], 0)} of the splits (largest difference "
            f"{equal['max_abs_difference']:.2g}). There the model itself changes many "
            "decisions with the race (through its coefficients on the rarest levels), a "
            "genuine finding about the model, which the ε = 0 audit with race and sex free is "
            "meant to report."
            if equal["share_equal"] == 1.0 and default["ratio_max"] > 0.5 else
            f" The default and the protected Euclidean metric agree in "
            f"{pct(equal['share_equal'], 0)} of the splits (largest difference "
            f"{equal['max_abs_difference']:.2g})."
        )
    )
    out.append("")
    explore = {x["metric"]: x for x in r["summary"]["six races"]}["EXPLORE"]
    published = r["published_two_race_splits"]
    same = aa["max_abs_difference"] == 0.0
    out.append(
        "With African-American and Caucasian defendants only, the default and the previous "
        f"default give {'the same ψ̂ on every split' if same else 'different results'} "
        f"(largest difference {aa['max_abs_difference']:.2g}; mean {aa['mean_default']:.4f} "
        f"against {aa['mean_previous']:.4f})"
        + "."
        + (f" On the training parts of the {published['seeds'][1] - published['seeds'][0] + 1} "
           "two-race splits of the Table 1 and model-selection reproductions, the two metrics "
           f"make the same pairs of cells free ({published['fits']} fits, "
           f"{published['zero_cost_pairs_differing']} pairs differing): at ε = 0 those "
           "results do not depend on which of the two is used." if
           published["zero_cost_pairs_differing"] == 0
           else f" On the training parts of the Table 1 and model-selection splits "
           f"{published['zero_cost_pairs_differing']} pairs of cells are free under one "
           "metric and not the other: those results need rerunning.")
        + (" EXPLORE's learned metric makes no direction exactly free, so its ψ̂ at ε = 0 is "
           "0 and it only speaks for ε > 0." if explore["free_directions_max"] == 0
           and explore["statistic_mean"] == 0.0 else "")
        + " The SVD metric also frees the age (its groups ignore it), and its ψ̂ is "
        f"{pct(six['SVD subspace']['ratio_median'], 0)} of the accuracy in the median split: "
        "the judgement of who is comparable moves the verdict more than any estimation detail."
    )
    out.append("")
    fit = {x["metric"]: x["fit_seconds_median"] for x in r["summary"]["six races"]}
    out.append(
        "Fitting the auditor (model queries, metric, costs) takes a median "
        f"{fit['default']:.2f} s with the default metric against "
        f"{fit['all levels (previous default)']:.2f} s with the previous one (same run; its "
        "cross-validation fits the regressions on the distinct training rows)."
    )
    out.append("")
    sens = r["sensitivity"]
    eps_shown = [e for e in s["epsilons"] if e in (0.0, 0.05, 0.2, 1.0, 2.0)]
    metrics = list(dict.fromkeys(x["metric"] for x in sens))
    out.append(
        f"The sensitivity view on the six-race split {s['seeds'][0]} (right panel of the "
        "figure; ψ̂ and its 95% interval at a few budgets, in each metric's own cost "
        "units):\n"
    )
    cells = {(x["metric"], x["epsilon"]): x for x in sens}
    out.append(table(
        ["metric", *[f"ε = {e:g}" for e in eps_shown]],
        [[m, *[f"{cells[(m, e)]['statistic']:.3f} [{cells[(m, e)]['ci_low']:.3f}, "
               f"{cells[(m, e)]['ci_high']:.3f}]" for e in eps_shown]] for m in metrics],
    ))
    at = eps_shown[2]
    out.append(
        "\nAt ε = 0 the default and the protected Euclidean metric "
        + ("agree" if abs(cells[("default", 0.0)]["statistic"]
                          - cells[("protected Euclidean", 0.0)]["statistic"]) < 1e-12
           else "differ")
        + f"; at ε = {at:g} the "
        f"default reaches {cells[('default', at)]['statistic']:.3f} against "
        f"{cells[('protected Euclidean', at)]['statistic']:.3f}: moves close to its free "
        "proxy directions are cheap."
        + (" The previous default is flat at the accuracy from ε = 0 on: nothing is left for "
           "the budget to buy." if len({round(cells[("all levels (previous default)", e)]
                                               ["statistic"], 12) for e in eps_shown}) == 1
           else "")
    )
    return "\n".join(out) + "\n"


def render_fair_metric():
    """The two fragments of the "Choosing a fair metric" page, by path."""
    return {
        FAIR_METRIC_FAILURE: GENERATED + "\n" + fair_metric_failure(),
        FAIR_METRIC_RESULTS: GENERATED + "\n" + fair_metric_results(),
    }


# --------------------------------------------------------------------------- FaiTH at scale
_SCALE_HEADER = [
    ".. list-table::",
    "   :header-rows: 1",
    "",
    "   * - audit rows n",
    "     - cells K",
    "     - nearest-neighbour: audit",
    "     - peak memory",
    "     - bootstrap per replicate",
    "     - dense: audit",
    "     - peak memory",
]


def _scale_seconds(x):
    return f"{x:.2f} s" if x < 10 else f"{x:.0f} s"


def _scale_mib(x):
    return f"{x / 1024:.2f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def _scale_bytes(x):
    return f"{x / 2**30:,.0f} GiB" if x >= 2**30 else f"{x / 2**20:,.0f} MiB"


def _scale_load(values):
    return ", ".join(f"{v:.1f}" for v in values)


def _scale_verdict(check):
    return (f"targets {check['target_seconds']:g} s and {check['target_peak_rss_gib']:g} GiB: "
            f"{'met' if check['holds'] else 'NOT met'}")


def _scale_table(rows):
    """The list-table of one loss: a row per n, both paths side by side."""
    lines = list(_SCALE_HEADER)
    for n in sorted(rows):
        near, dense = rows[n].get("nearest", {}), rows[n].get("dense", {})
        if "audit_seconds" in dense:
            dense_time = (f"{_scale_seconds(dense['audit_seconds'])} "
                          f"({dense['time_ratio_dense_to_nearest']:.0f}x)")
            dense_memory = (f"{_scale_mib(dense['peak_rss_mib'])} "
                            f"({dense['memory_ratio_dense_to_nearest']:.1f}x)")
        else:
            dense_time = "does not fit"
            dense_memory = f"needs {_scale_bytes(dense['estimated_bytes'])}"
        ran = "audit_seconds" in near
        lines += [
            f"   * - {n:,}",
            f"     - {near.get('n_cells', 4 * n):,}",
            f"     - {_scale_seconds(near['audit_seconds'])}" if ran else "     - failed",
            f"     - {_scale_mib(near['peak_rss_mib'])}" if ran else "     -",
            f"     - {1e3 * near['bootstrap_seconds_per_replicate']:.2f} ms" if ran else "     -",
            f"     - {dense_time}",
            f"     - {dense_memory}",
        ]
    return lines


def faith_scale_guide(results=None):
    """The user guide's \"continuous features at scale\" figures (``faith_scale.json``)."""
    results = load("faith_scale.json") if results is None else results
    s, machine, checks = results["settings"], results["machine"], results["checks"]
    by_loss = {}
    for row in results["scaling"]:
        by_loss.setdefault(row.get("loss", "zero_one"), {}).setdefault(row["n"], {})[
            row["path"]] = row
    lines = [
        f"``bench_faith_scale.py`` (run {results['started'][:10]}, {machine['cpu_count']} "
        f"cores, load average {_scale_load(machine['load_average_start'])} at the start and "
        f"{_scale_load(machine['load_average_end'])} at the end: the machine was shared, so "
        "absolute times are upper bounds; the ratios between the two paths come from the same "
        "run). "
        f"Synthetic audits: {s['synthetic']}; 0-1 loss, default metric, ε = {s['epsilon']:g}, "
        f"``method=\"{s['method']}\"`` with B = {s['n_resamples']:,} bootstrap replicates. Each "
        "configuration ran in a "
        "fresh process; peak memory is its peak resident set size (imports included); the "
        "ratios in brackets are dense over nearest-neighbour.",
        "",
        *_scale_table(by_loss["zero_one"]),
    ]
    if "log_loss" in by_loss:
        lines += ["", "The same with ``loss=\"log_loss\"`` (as many loss values as cells, "
                      "searched through the level tree):", "", *_scale_table(by_loss["log_loss"])]
    differences = [r["statistic_difference"] for r in results["scaling"]
                   if "statistic_difference" in r]
    if differences:
        lines += ["", "Where both paths ran, their statistics differ by at most "
                      f"{max(differences):.1e}."]
    adult = results["adult"]
    if "audit_seconds" in adult:
        lines += [
            "",
            f"**UCI Adult**: the {adult['n']:,} complete rows audited, K = "
            f"{adult['n_cells']:,} cells (every distinct row in the 10 sex x race combinations,"
            f" two labels), model and {adult['metric']} fitted on the {adult['n_train']:,} rows"
            f" of the training file: audit {_scale_seconds(adult['audit_seconds'])} (of which "
            f"{_scale_seconds(adult['value_seconds'])} without the bootstrap; "
            f"{1e3 * adult['bootstrap_seconds_per_replicate']:.2f} ms per replicate), fit "
            f"{_scale_seconds(adult['fit_seconds'])}, peak memory "
            f"{_scale_mib(adult['peak_rss_mib'])} "
            f"({_scale_verdict(checks['adult'])}).",
        ]
    if checks.get("million"):
        million = checks["million"]
        cells = by_loss["zero_one"][1_000_000]["nearest"]["n_cells"]
        lines += [
            "",
            f"**10⁶ rows** (K = {cells:,} cells): audit {_scale_seconds(million['seconds'])}, peak "
            f"memory {million['peak_rss_gib']:.2f} GiB ({_scale_verdict(million)}).",
        ]
    cli = results["cli"]
    if "seconds" in cli:
        lines += [
            "",
            f"**Command line**: ``skfair-audit faith --space empirical`` on a {cli['n']:,}-row "
            f"CSV audit trail with continuous columns (K = {cli['n_cells']:,} cells, B = "
            f"{s['n_resamples']:,}): {_scale_seconds(cli['seconds'])} from start to exit, reading "
            f"the files included, peak memory {_scale_mib(cli['peak_rss_mib'])} "
            f"({_scale_verdict(checks['cli'])}).",
        ]
    return "\n".join(lines) + "\n"



def faith_budget_guide():
    """The user guide's "choosing the budget" figures (``faith_budget.json``)."""
    results = load("faith_budget.json")
    old = results["settings"]["old_default"]
    lines = []
    for row in results["data"]:
        at_old, at_half = row["old_default"], row["at_half"]
        warned = ("raises the saturation warning" if at_old["warned"]
                  else "raises no saturation warning")
        lines += [
            f"- **{row['name']}** ({row['space']} sample space, {row['n_audit']:,} audited "
            f"rows, {row['metric']}): ψ̂(0) = {num(row['psi_zero'], 4)}, ψ̂(∞) = "
            f"{num(row['psi_unlimited'], 4)}; ε½ = {row['epsilon_half']:.3g} and ε₉₅ = "
            f"{row['epsilon_95']:.3g}. At ε = {old:g} (the former default of the API), ψ̂ = "
            f"{num(at_old['statistic'], 4)}, {pct(at_old['share_of_unlimited'])} of ψ̂(∞): "
            f"the audit {warned}; at ε½ it "
            + ("raises none." if not at_half["warned"] else "raises it too.")
        ]
    return "\n".join(lines) + "\n"


def _share(p, se):
    return f"{pct(p)} ± {pct(se)}"


def monitoring_guide():
    """The monitoring page's results: validity, the naive way, power, shift, speed, data."""
    val = load("monitor_validity.json")
    out = [".. _monitoring_results:\n", section("Results", "-")]
    fw, fdr, naive = val["fwer"], val["fdr"], val["naive"]
    scaled = val["streams"] < 1000 or val["looks"] < 10_000
    out.append(
        f"**Time-uniform validity** (``{val['command'].strip()}``"
        + (", reduced sizes" if scaled else "") + f"): {val['streams']:,} simulated streams "
        f"of {val['rows_per_stream']:,} rows each, a look after every {val['batch']} rows "
        f"({val['looks']:,} looks), {val['n_groups']} groups (all intersections of three "
        f"attributes, group shares from {pct(val['group_probability_range'][0], 2)} to "
        f"{pct(val['group_probability_range'][1])}), target the overall rate, level "
        f"α = {val['alpha']:g}.\n")
    ok = fw["share_some_group_outside"] <= val["alpha"] + 2 * fw["mc_se"]
    out.append(table(
        ["procedure", "share of streams with a miss at some look", "bound", "within"],
        [["betting confidence sequences (capital at the truth crossed)",
          _share(fw["share_some_group_outside"], fw["mc_se"]), f"α = {val['alpha']:g}",
          "yes" if ok else "NO"],
         [f"fixed-sample simultaneous bootstrap bounds (B = {naive['n_resamples']}) "
          f"recomputed at {len(naive['looks_checked'])} looks ({naive['streams']} streams)",
          _share(naive["share_some_group_outside"], naive["mc_se"]), f"α = {val['alpha']:g}",
          "yes" if naive["share_some_group_outside"] <= val["alpha"] + 2 * naive["mc_se"]
          else "NO"],
         [f"the same, looks from {10_000:,} rows on only",
          _share(naive["share_some_group_outside_from_10000_rows"],
                 naive["mc_se_from_10000_rows"]), f"α = {val['alpha']:g}",
          "yes" if naive["share_some_group_outside_from_10000_rows"]
          <= val["alpha"] + 2 * naive["mc_se_from_10000_rows"] else "NO"]]))
    per_look = naive["miss_rate_per_look"]
    out.append(
        f"\nThe betting row counts a stream as missed as soon as some stream's capital at its "
        "true rate crosses its threshold, an event that contains every miss of the grid "
        "confidence sequences. The naive bounds are each valid at one fixed size (their miss "
        f"rate at a single look ranges from {pct(min(per_look))} to {pct(max(per_look))} over "
        "the looks checked); read at every look they miss far more often, and the share "
        "only grows with more looks.\n")
    out.append(
        f"\n**FDR of e-BH at stopping times** (constant target {val['theta']:g}, "
        f"ε₀ = {val['epsilon0']:g}, q = {fdr['q']:g}; {fdr['n_null_groups']} groups on the "
        f"boundary of their null, {fdr['n_nonnull_groups']} above it):\n")
    names = {"first_alarm": "the first look with a flag", "five_flags":
             "the first look with at least 5 flags (a user's rule)"}
    rows = []
    for key, cell in fdr["times"].items():
        label = (names[key] if key in names
                 else f"the fixed look {int(key.split('_')[1]):,}")
        rows.append([label, _share(cell["fdr"], cell["mc_se"]), pct(cell["share_reached"]),
                     f"{cell['mean_flagged_when_reached']:.1f}",
                     "yes" if cell["fdr"] <= fdr["q"] + 2 * cell["mc_se"] else "NO"])
    out.append(table(["stopping time", "FDR", "streams reaching it", "groups flagged (mean)",
                      "≤ q + 2 se"], rows))
    out.append(
        f"\nRun time: {fw['seconds'] / 60:.1f} min (FWER), {fdr['seconds'] / 60:.1f} min "
        f"(FDR), {naive['seconds'] / 60:.1f} min (naive), on 2 shared cores (load average "
        f"{val['load_average_at_start'][0]:.1f} at the start, "
        f"{val['load_average_at_end'][0]:.1f} at the end).\n")
    power = load("monitor_power.json")
    batch = power["batch"]
    out.append(
        f"\n**Power on two groups** (``{power['command'].strip()}``; {power['reps']} "
        f"replications, base rate {power['base_rate']:g}, rows of the two groups in equal "
        f"numbers, α = {power['alpha']:g}, target the reference group, two-sided, "
        f"ε₀ = 0; median rows until the alarm, share of replications alarmed, capped at "
        f"{power['max_rows']:,} rows). Chugg et al.'s setting is one observation of each "
        "group per step: the monitor is run there with one row of each group per look, and "
        f"also in batches of {batch} rows. \"Declared\": one declared comparison (levels "
        "declared, ``new_level_share=0``: the test flags alone, at the whole α). "
        f"\"Defaults\": {1 - 2 * power['share_with_new_levels']:.0%} of α kept for new "
        "groups (``new_level_share=0.1``), so the group's share is split between its CS and "
        "its test. Bets: the default ``mixture+ons``, the mixture of "
        f"{power['mixture_bettors']} constant bettors alone, Chugg et al.'s ONS alone.\n")

    def med(cell):
        m = cell["median_rows"]
        return "not reached" if m is None else f"{m:,.0f} ({pct(cell['share_alarmed'], 0)})"

    def ratio(x):
        return "—" if x is None else f"{x:.2f}"

    variants = [("monitor_one_pair_per_look", "one pair per look, declared"),
                ("monitor_mixture_one_pair_per_look", "the same, mixture bet"),
                ("monitor_batch", f"batches of {batch}, declared"),
                ("monitor_mixture_batch", f"batches of {batch}, mixture bet"),
                ("monitor_ons_batch", f"batches of {batch}, ONS bet"),
                ("monitor_batch_room_for_new_groups", f"batches of {batch}, defaults")]
    out.append(table(
        ["disparity", "Chugg et al. ONS", *(f"monitor: {label}" for _, label in variants),
         "oracle fixed n", "fixed-n power at it"],
        [[f"{r['delta'] * 100:g} points", med(r["chugg_ons"]),
          *(med(r[key]) for key, _ in variants), f"{r['fixed_horizon_oracle_rows']:,}",
          pct(r["fixed_horizon_power_at_oracle_rows"], 0)] for r in power["power"]]))
    out.append("\nRatios of the median rows (below 1: the monitor alarms sooner than Chugg et "
               "al.'s test):\n")
    out.append(table(
        ["disparity", *(f"{label} / ONS" for _, label in variants), "ONS / oracle",
         "one pair per look / oracle", f"batches of {batch} / oracle"],
        [[f"{r['delta'] * 100:g} points",
          *(ratio(r[f"ratio_{key}_to_ons"]) for key, _ in variants),
          ratio(r["ratio_chugg_ons_to_oracle"]),
          ratio(r["ratio_monitor_one_pair_per_look_to_oracle"]),
          ratio(r["ratio_monitor_batch_to_oracle"])] for r in power["power"]]))
    same = all(r["ons_one_pair_per_look_identical_to_chugg"] for r in power["power"])

    def span(key):
        vals = [r[f"ratio_{key}_to_ons"] for r in power["power"] if r[f"ratio_{key}_to_ons"]]
        return f"{min(vals):.2f}–{max(vals):.2f}"

    null = power["null"]

    def null_cell(key):
        c = null[key]
        return f"{_share(c['share_alarmed'], c['mc_se'])} ({c['reps']:,} replications)"

    out.append(
        "\nWith ``paired_bet=\"ons\"`` and one pair per look the monitor "
        + ("alarmed at exactly the row of Chugg et al.'s test in every replication (it is "
           "their test step for step)" if same else
           "did NOT alarm at the same row as Chugg et al.'s test in every replication")
        + ". With the default bet the declared comparison needs "
        f"{span('monitor_one_pair_per_look')} times the rows of their test with one pair per "
        f"look, and {span('monitor_batch')} times in batches of {batch} rows (the ONS bet "
        f"alone in batches: {span('monitor_ons_batch')}; an ONS bet is held fixed within a "
        "batch, a constant bettor loses nothing to batching). With room for new groups: "
        f"{span('monitor_batch_room_for_new_groups')}. The ratios to the oracle's fixed "
        "horizon are the price of anytime validity: the oracle knows the disparity in "
        "advance and looks once, at the size where 80% of its audits detect it, whereas a "
        "median is the size by which half of the monitors have alarmed (and they go on "
        "looking). Without a disparity, alarms up to "
        f"{power['max_rows']:,} rows (false alarms; α = {power['alpha']:g}): Chugg et al. "
        f"{null_cell('chugg_ons')}; one pair per look, declared "
        f"{null_cell('monitor_one_pair_per_look')}; the same with the mixture bet "
        f"{null_cell('monitor_mixture_one_pair_per_look')}; batches, declared "
        f"{null_cell('monitor_batch')}; mixture bet {null_cell('monitor_mixture_batch')}; "
        f"ONS bet {null_cell('monitor_ons_batch')}; defaults "
        f"{null_cell('monitor_batch_room_for_new_groups')}. Run time "
        f"{power['elapsed_seconds'] / 60:.1f} min (load average "
        f"{power['load_average_at_start'][0]:.1f} at the start, "
        f"{power['load_average_at_end'][0]:.1f} at the end).\n")
    shift = power["shift"]
    out.append(f"\n**Distribution shift**: the disparity appears after "
               f"{shift[0]['change_at_rows']:,} rows; monitor in batches of {batch}, "
               "declared.\n")
    out.append(table(
        ["disparity", "monitor: alarms before the change", "delay after it (median rows)",
         "mixture bet: delay", "ONS bet: delay", "Chugg et al.: alarms before",
         "Chugg et al.: delay"],
        [[f"{r['delta'] * 100:g} points",
          _share(r["monitor_batch"]["false_alarm_before_change"], r["monitor_batch"]["mc_se"]),
          med(r["monitor_batch"]), med(r["monitor_mixture_batch"]),
          med(r["monitor_ons_batch"]),
          _share(r["chugg_ons"]["false_alarm_before_change"], r["chugg_ons"]["mc_se"]),
          med(r["chugg_ons"])] for r in shift]))

    def delay_ratio(r, key):
        a, b = r[key]["median_rows"], r["chugg_ons"]["median_rows"]
        return a / b if a and b else math.nan

    mix = [delay_ratio(r, "monitor_mixture_batch") for r in shift]
    dflt = [delay_ratio(r, "monitor_batch") for r in shift]
    out.append(
        f"\nAfter a late change the mixture alone waits {min(mix):.2f}–{max(mix):.2f} times "
        "Chugg et al.'s delay: while there is no disparity its bettors with large bets lose "
        "capital, which they must win back, whereas the ONS bet stays near zero and moves "
        f"when the disparity comes. The default bet, half on each, waits {min(dflt):.2f}–"
        f"{max(dflt):.2f} times their delay.\n")
    speed = load("monitor_speed.json")
    out.append(
        f"\n**Speed** (``{speed['command'].strip()}``): {speed['rows']:,} rows in batches "
        f"of {speed['batch']:,} over {speed['groups']} intersections (+ the overall rate: "
        f"{speed['streams']} confidence sequences, grid of {speed['grid_size']} points). "
        f"Median update {speed['median_seconds_update'] * 1e3:.2f} ms against "
        f"{speed['median_seconds_groupby_count'] * 1e3:.2f} ms for a pandas groupby-count of "
        f"the same batch, timed alternately in one run: ratio "
        f"{speed['ratio_median_update_to_groupby']:.2f}× (totals "
        f"{speed['ratio_total_update_to_groupby']:.2f}×; load average "
        f"{speed['load_average_at_start'][0]:.1f} at the start, "
        f"{speed['load_average_at_end'][0]:.1f} at the end, {speed['machine']['cpus']} shared "
        f"cores). State file: {speed['state_file_bytes'] / 2**10:,.0f} KiB. "
        f"{speed['dask_batches_checked']} batches as Dask DataFrames of 4 partitions gave "
        + ("a state identical bit for bit to the same rows in memory."
           if speed["dask_bit_identical"] else "a DIFFERENT state from the rows in memory.")
        + "\n")
    real = load("monitor_real.json")
    c, a = real["compas"], real["adult"]

    def first(block, name):
        return f"{block['first_flag'][name]['rows']:,}"

    out.append(
        f"\n**COMPAS replayed in screening-date order** ({c['rows']:,} rows from "
        f"{c['first_date']} to {c['last_date']}, a look every {c['batch']} rows; FPR of the "
        f"rule ``decile_score >= 5``, target the overall FPR "
        f"{c['fwer']['target_value']:.3f}, flag groups more than 5 points above it): "
        f"{len(c['fwer']['flagged'])} groups flagged with FWER control at 5% and "
        f"{len(c['fdr']['flagged'])} with e-BH at q = 0.1. Flagged (FWER), with the rows "
        "seen when first flagged: "
        + "; ".join(f"{n} ({first(c['fwer'], n)})" for n in c["fwer"]["flagged"]) + ".\n")
    out.append("\n.. image:: ../../benchmarks/results/monitor_compas.png\n"
               "   :alt: COMPAS FPR disparity confidence sequences over the rows seen\n")
    out.append(
        f"\n**UCI Adult in a fixed random order** ({a['rows']:,} rows, a look every "
        f"{a['batch']} rows; selection rate of a logistic regression trained on "
        f"{a['train_rows']:,} other rows; absolute disparity above 5 points flagged, FWER 5%): "
        + (", ".join(f"{n} (from {first(a['fwer'], n)} rows)" for n in a["fwer"]["flagged"])
           or "no group") + " flagged.\n")
    out.append("\n.. image:: ../../benchmarks/results/monitor_adult.png\n"
               "   :alt: UCI Adult selection-rate disparity confidence sequences\n")
    return "\n".join(out)


def faith_reference_speed_guide():
    """The user guide's speed figures of the reference space (``faith_reference_speed.json``)."""
    results = load("faith_reference_speed.json")
    s, machine, checks = results["settings"], results["machine"], results["checks"]
    lines = [
        f"``bench_faith_reference_speed.py`` (run {results['started'][:10]}, "
        f"{machine['cpu_count']} cores, load average "
        f"{_scale_load(machine['load_average_start'])} at the start and "
        f"{_scale_load(machine['load_average_end'])} at the end; ratios come from one process). "
        f"Synthetic audits with 5 continuous features and a binary protected attribute, a "
        f"{s['n_reference']:,}-row reference set, ε = {s['epsilon']:g}, "
        f"``metric=\"{s['metric']}\"``, B = {s['n_resamples']:,}; the floor is one "
        "``scipy.spatial.cKDTree`` query per audit row against the reference points.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - audit rows n",
        "     - ψ̂ alone",
        "     - audit (with bounds)",
        "     - floor (k-d tree query)",
        "     - ψ̂ / floor",
        "     - peak memory",
    ]
    for row in results["scaling"]:
        lines += [
            f"   * - {row['n']:,}",
            f"     - {_scale_seconds(row['value_seconds'])}",
            f"     - {_scale_seconds(row['audit_seconds'])}",
            f"     - {_scale_seconds(row['floor_seconds'])}",
            f"     - {row['value_over_floor']:.1f}",
            f"     - {row['peak_gib']:.2f} GiB",
        ]
    million, adult = checks.get("million"), results.get("adult")
    targets = results["targets"]
    if million:
        lines += ["", (
            f"At 10⁶ rows the audit took {_scale_seconds(million['seconds'])} and "
            f"{million['peak_gib']:.2f} GiB (target {targets['million_seconds']:g} s and "
            f"{targets['million_gib']:g} GiB: {'met' if million['met'] else 'not met'}); "
            f"ψ̂ alone cost {million['value_over_floor']:.1f} times the k-d tree floor "
            f"(target {targets['floor_ratio']:g}: "
            f"{'met' if million['floor_met'] else 'not met'})."
        )]
    if adult:
        lines += ["", (
            f"**UCI Adult**: {adult['n']:,} audited rows against the {adult['n_reference']:,} "
            f"distinct reference rows of the training file, B = {s['n_resamples']:,}: audit "
            f"{_scale_seconds(adult['audit_seconds'])}, peak memory {adult['peak_gib']:.2f} GiB "
            f"(target {targets['adult_seconds']:g} s: "
            f"{'met' if checks['adult']['met'] else 'not met'})."
        )]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------- FaiTH on continuous features
FAITH_CONTINUOUS = ROOT / "doc" / "faith_continuous_validity.rst"


def _lines(reps, level=0.95):
    """Acceptance lines of a rate over ``reps`` audits: nominal ± 2 Monte Carlo se."""
    mc = math.sqrt(level * (1 - level) / reps)
    return 1 - level + 2 * mc, level - 2 * mc


def faith_continuous_validity(name="faith_continuous_validity.json"):
    """Coverage, type-I errors, ``near_kink`` and drift of the FaiTH audit on continuous
    features against a truth fixed before any audit (``bench_faith_continuous_validity.py``)."""
    meta = load(name)
    rows, summary = meta["rows"], meta["summary"]
    budgets = {"0": "0", "half": "ε½", "95%": "ε₉₅"}
    instances = meta["instances"]
    out = [section("FaiTH on continuous features: validity against a fixed truth", "~")]
    reps_by_n = {n: sorted({r["reps"] for r in rows if r["n"] == n}) for n in meta["sizes"]}
    reps_text = "; ".join(
        f"n = {n:,}: {', '.join(f'{k:,}' for k in reps)}" for n, reps in reps_by_n.items() if reps)
    out.append(
        f"``{meta['command']}`` writes ``faith_continuous_validity.json`` (and ``.csv``), from "
        f"which this section is generated. Each audit draws n rows from a population with three "
        "continuous features and a binary protected attribute, audits a fixed logistic "
        "regression that uses the protected attribute with ``FaithAuditor`` on a reference set "
        f"of {meta['reference_rows']:,} rows fixed at fit (the default method, "
        f"B = {meta['n_resamples']:,}, nominal {pct(meta['confidence_level'], 0)}), and "
        "compares the bounds with the estimand ψ_D(ε), computed once per instance from "
        f"{instances[0]['draws']:,} population draws by k-d tree queries and a fractional "
        "knapsack that share no code with the package's transport problem (see the script's "
        f"docstring). Audits per cell: {reps_text} (requested: {meta['reps_requested']:,}). "
        f"Run time {meta['elapsed_seconds'] / 60:.0f} min with {meta['jobs']} jobs on shared "
        f"cores (load average {meta['machine']['load_average_start'][0]:.1f} at the start, "
        f"{meta['machine']['load_average_end'][0]:.1f} at the end).\n"
    )
    if not summary["all_cells_complete"]:
        short = sorted({(r["n"], r["reps"]) for r in rows if not r["complete"]})
        out.append(
            "**Not every cell has the requested repetitions**: "
            + "; ".join(f"n = {n:,} has {k:,}" for n, k in short)
            + f" of the {meta['reps_requested']:,} requested (the run stopped starting new "
            f"rounds after {meta['time_limit_minutes']:g} min); their Monte Carlo standard "
            "errors and acceptance lines are those of the repetitions they have.\n"
        )
    body = []
    for inst in instances:
        for k, label in enumerate(("0", "half", "95%")):
            body.append([
                f"``{inst['name']}``" if k == 0 else "", budgets[label],
                f"{inst['epsilons'][k]:g}", num(inst["truth"][k], 4),
                f"{inst['truth_mc_se'][k]:.1e}",
                num(inst["psi_unlimited"], 4) if k == 0 else "",
                f"{inst['cross_check']['max_abs_difference']:.0e}" if k == 0 else "",
            ])
    out.append(
        "The budgets: ε½ where the true ψ is half-way between ψ(0) and ψ(∞) (the budget binds), "
        "ε₉₅ where it is 95% of ψ(∞) (near saturation). The last column is the largest "
        "difference between the truth code and ``FaithAuditor.audit_value`` on one sample of "
        f"{instances[0]['cross_check']['rows']:,} rows at the three budgets.\n"
    )
    out.append(table(["instance", "budget", "ε", "truth ψ_D(ε)", "its Monte Carlo se",
                      "ψ_D(∞)", "truth code − audit_value"], body))
    worst = summary["worst"]

    def where(w):
        return f"{w['instance']}, n = {w['n']:,}, ε = {budgets[w['budget']]}"

    misses = summary["cells_missing_level"]
    verdict = (
        f"holds its level in all {summary['cells']} cells" if not misses else
        f"falls outside the lines in {len(misses)} of {summary['cells']} cells ("
        + "; ".join(f"{where(m)}: coverage {pct(m['coverage_two_sided'])}, δ-test "
                    f"{pct(m['type1_delta_test'])}, certification "
                    f"{pct(m['type1_certification'])}" for m in misses) + ")"
    )
    reps = meta["reps_requested"]
    chance = chance_misses(reps, *_lines(reps), summary["cells"])
    unique = [r for r in rows if r["unique_dual_minimiser"]]
    drift = summary["cells_drifting_beyond_2se"]
    saturated_95 = [r["budget_saturated_rate"] for r in rows if r["budget"] == "95%"]
    out.append(
        f"\n- The default method {verdict}, judged per cell against nominal ± 2 Monte Carlo "
        "standard errors at that cell's repetitions: smallest two-sided coverage "
        f"{pct(worst['coverage_two_sided']['coverage_two_sided'])} "
        f"({where(worst['coverage_two_sided'])}), largest type-I error of the δ-test "
        f"{pct(worst['type1_delta_test']['type1_delta_test'])} "
        f"({where(worst['type1_delta_test'])}), of the certification test "
        f"{pct(worst['type1_certification']['type1_certification'])} "
        f"({where(worst['type1_certification'])}). With every rate exactly nominal, about "
        f"{chance['type1']:.1f} of the {2 * summary['cells']} type-I errors and "
        f"{chance['coverage']:.1f} of the {summary['cells']} coverages would cross these lines "
        "by chance."
        f"\n- ``near_kink`` is True in at most "
        f"{pct(summary['near_kink_max_rate_unique_minimiser'])} of the audits of any of the "
        f"{len(unique)} cells, all with a unique population dual minimiser (c* is continuous "
        "away from its atom at 0, the free moves; at ε = 0 the minimum is the limit λ → ∞) "
        f"(required: at most {pct(summary['near_kink_required_at_most'], 0)}): the requirement "
        + ("holds" if summary["near_kink_holds"] else "does not hold") + "."
        f"\n- ``budget_saturated`` is True in at most "
        f"{pct(max(r['budget_saturated_rate'] for r in rows))} of the audits of any cell "
        f"(at ε₉₅: from {pct(min(saturated_95))} to {pct(max(saturated_95))})."
        f"\n- The mean audit value "
        + ("stays within two standard errors of the truth in every cell"
           if not drift else
           f"is more than two standard errors from the truth in {len(drift)} of "
           f"{summary['cells']} cells ("
           + "; ".join(f"{d['instance']}, n = {d['n']:,}, ε = {budgets[d['budget']]}: "
                       f"{d['bias']:+.5f}, z = {d['bias_z']:+.1f}" for d in drift) + ")")
        + " (standard error: the audits' Monte Carlo error and the truth's, in quadrature).\n"
    )
    if (RESULTS / "faith_continuous_validity_confirmation.json").is_file():
        out.append(_faith_continuous_confirmation(misses, budgets))
    body = []
    for r in rows:
        type1_max, cover_min = _lines(r["reps"])

        def mark(value, bad):
            return f"**{pct(value)}**" if bad else pct(value)

        body.append([
            f"``{r['instance']}``", f"{r['n']:,}", budgets[r["budget"]], f"{r['reps']:,}",
            mark(r["coverage_two_sided"], r["coverage_two_sided"] < cover_min)
            + f" ± {pct(r['se_coverage_two_sided'])}",
            mark(r["type1_delta_test"], r["type1_delta_test"] > type1_max),
            mark(r["type1_certification"], r["type1_certification"] > type1_max),
            pct(r["near_kink_rate"]), pct(r["budget_saturated_rate"]),
            num(r["mean_width_two_sided"], 4),
        ])
    out.append("\nPer cell (bold: outside nominal ± 2 Monte Carlo se):\n")
    out.append(table(["instance", "n", "ε", "audits", "two-sided coverage",
                      "δ-test type-I", "certification type-I", "near kink",
                      "budget saturated", "mean width"], body))
    z = stats.norm.ppf(0.5 + 0.5 * meta["confidence_level"])
    body = []
    for r in sorted(rows, key=lambda r: (r["instance"], r["budget"] != "0",
                                         r["budget"] == "95%", r["n"])):
        body.append([
            f"``{r['instance']}``", budgets[r["budget"]], f"{r['n']:,}",
            f"{num(r['mean_value'], 5)} ± {num(r['se_mean_value'], 5)}", num(r["truth"], 5),
            f"{r['bias']:+.5f}", f"{r['bias_z']:+.1f}", num(r["sd_value"], 5),
            num(r["mean_width_two_sided"] / (2 * z * r["sd_value"]), 2),
        ])
    out.append(
        "\n**The estimand does not move with n**: mean audit value (± its Monte Carlo standard "
        "error) against the truth; z is the difference over the standard error of the "
        "difference. The last column compares the interval's mean half-width with what the "
        "sampling spread of ψ̂ asks for (z₀.₉₇₅ sd(ψ̂)): below 1, the bounds' standard errors "
        "are too small.\n"
    )
    out.append(table(["instance", "ε", "n", "mean ψ̂", "truth", "difference", "z", "sd(ψ̂)",
                      "half-width / (z sd(ψ̂))"], body))
    return "\n".join(out)


def _faith_continuous_confirmation(misses, budgets):
    """The independent rerun of the cells where the default run crossed a line."""
    meta = load("faith_continuous_validity_confirmation.json")
    keyed = {(r["instance"], r["n"], r["budget"]): r for r in meta["rows"]}
    parts = []
    for m in misses:
        r = keyed.get((m["instance"], m["n"], m["budget"]))
        if r is None:
            parts.append(f"{m['instance']}, n = {m['n']:,}, ε = {budgets[m['budget']]}: "
                         "not rerun")
            continue
        type1_max, cover_min = _lines(r["reps"])
        parts.append(
            f"{r['instance']}, n = {r['n']:,}, ε = {budgets[r['budget']]}: coverage "
            f"{pct(r['coverage_two_sided'])} ± {pct(r['se_coverage_two_sided'])}, δ-test "
            f"{pct(r['type1_delta_test'])}, certification {pct(r['type1_certification'])} "
            f"over {r['reps']:,} audits (lines: type-I at most {pct(type1_max, 2)}, coverage "
            f"at least {pct(cover_min, 2)}) — "
            + ("within the lines" if r["holds"] else "outside them again"))
    held = sum(p.endswith("within the lines") for p in parts)
    return (
        f"\n**Independent rerun of the misses** (``{meta['command']}``: fresh audit seeds, the "
        "same instances and truth; ``faith_continuous_validity_confirmation.json``): "
        + "; ".join(parts) + f". The rerun repeats {len(parts) - held} of the {len(parts)} "
        "misses.\n"
    )


def render_all():
    """Every page and fragment this script writes, by path: the test suite checks each."""
    return {
        OUTPUT: render(),
        **render_fair_metric(),
        GUIDE / "model_selection_results.inc": GENERATED + "\n" + model_selection_guide(),
        GUIDE / "group_compas_results.inc": GENERATED + "\n" + group_compas_guide(),
        GUIDE / "faith_solver_results.inc": GENERATED + "\n" + faith_solver_guide(),
        GUIDE / "faith_scale_figures.inc": GENERATED + "\n" + faith_scale_guide(),
        GUIDE / "faith_budget_results.inc": GENERATED + "\n" + faith_budget_guide(),
        GUIDE / "faith_reference_speed.inc": GENERATED + "\n" + faith_reference_speed_guide(),
        GUIDE / "tilt_results.inc": tilt_results(),
        GUIDE / "monitoring_results.inc": GENERATED + "\n" + monitoring_guide(),
        FAITH_CONTINUOUS: GENERATED + "\n" + faith_continuous_validity(),
        **run_path(str(ROOT / "doc" / "_render_ratios.py"))["render_ratios"](
            load, table, GENERATED, GUIDE),
    }


def _mib(value):
    return f"{value / 2**20:,.1f} MiB"


def engine_at_scale():
    engine = load("group_engine.json")
    dask = load("scale_dask.json")
    out = [".. _engine_at_scale:\n", section("The group engine at scale", "~")]
    out.append(
        "``bench_group_engine.py``: the one pass of every group audit "
        "(``AuditSummary.from_rows``: encoding, metric, 59-group collection, atoms) against a "
        "pandas groupby-count over the same five columns, one thread, best of "
        f"{engine['repeat']} alternated runs each, in the same run (load average "
        f"{engine['load_average_before'][0]:.1f} before, "
        f"{engine['load_average_after'][0]:.1f} after, on {engine['machine']['cpus']} shared "
        "cores). Peak memory is the ``tracemalloc`` peak of the pass.\n"
    )
    rows = [
        [f"{c['n']:,}", c["kind"], f"{c['seconds_groupby_count']:.3f} s",
         f"{c['seconds_one_pass']:.3f} s", f"{c['ratio_one_pass_to_groupby']:.2f}×",
         _mib(c["input_column_bytes"]), _mib(c["peak_bytes_one_pass"]),
         f"{c['ratio_peak_to_input']:.2f}×"]
        for c in engine["cases"]
    ]
    out.append(table(["rows", "columns", "groupby-count", "one pass", "ratio", "input",
                      "peak", "peak / input"], rows))
    boot = engine["cases"][-1]
    out.append(
        f"\nLargest ratio to the groupby-count: {engine['max_ratio_one_pass_to_groupby']:.2f}×; "
        f"largest peak / input: {engine['max_ratio_peak_to_input']:.2f}×. The bootstrap on the "
        f"summary (B = {boot['bootstrap_resamples']}) takes {boot['seconds_bootstrap']:.3f} s "
        f"and {_mib(boot['peak_bytes_bootstrap'])} at {boot['n']:,} rows: it depends on the "
        f"{boot['n_atoms']} atoms, not on the rows.\n"
    )
    pers, gen, poi = dask["persisted"], dask["generated"], dask["poisson"]
    ext, agree = dask["extrapolation"], dask["agreement"]
    out.append(
        f"\n``bench_scale_dask.py``: a ``LocalCluster`` of {dask['workers']} worker processes "
        "(1 thread each, 127.0.0.1), ratios from the same run:\n"
    )
    rows = [
        [f"{pers['rows']:,} rows, {pers['partitions']} persisted partitions",
         f"{pers['seconds_dask_groupby_count']:.2f} s", f"{pers['seconds_ours']:.2f} s",
         f"{pers['ratio_ours_to_groupby']:.2f}×",
         f"bit-identical to ``certify_bounds`` in memory: "
         f"{'yes' if pers['bit_identical_to_in_memory_certify_bounds'] else 'NO'}"],
        [f"{gen['rows']:,} rows generated in {gen['partitions']} partitions",
         f"{gen['seconds_dask_groupby_count']:.1f} s", f"{gen['seconds_ours']:.1f} s",
         f"{gen['ratio_ours_to_groupby']:.2f}×",
         f"generation alone {gen['seconds_generate_only']:.1f} s; peak RSS per worker "
         f"{max(gen['worker_rss_peak_mib'].values()):.0f} MiB"],
    ]
    out.append(table(["trail", "Dask groupby-count", "ours (B = "
                      f"{pers['resamples']})", "ratio", "notes"], rows))
    out.append(
        f"\nContinuous metric ({poi['metric']}, {poi['rows']:,} rows): the {poi['bootstrap']} "
        f"bootstrap in the partitions ran at "
        f"{poi['row_replicates_per_worker_second'] / 1e6:.0f} M row-replicates per "
        f"worker-second (B = {poi['resamples']}). Poisson and multinomial critical values on "
        f"{agree['rows']:,} rows, {agree['n_seeds']} seeds each: z = "
        f"{agree['z_difference']:.2f} (within Monte Carlo error when :math:`|z| < 3`); the lower "
        "bounds differ by at most "
        f"{pct(agree['max_lower_bound_gap_over_mean_half_width'])} of their half-width.\n"
    )
    d, c = ext["discrete_metric"], ext["continuous_metric"]
    out.append(
        f"\n**Extrapolation to {ext['rows']:,} rows on {ext['workers']} workers** "
        f"({ext['partitions']:,} partitions, {ext['reduction_levels']} reduction levels). "
        f"Assumptions: {ext['assumptions']} A discrete metric takes about "
        f"{d['wall_seconds']:.0f} s of "
        f"wall time ({d['cpu_hours']:.2f} CPU-hours), the bootstrap at the driver being "
        f"{d['driver_bootstrap']}; a continuous metric about {c['wall_seconds']:.0f} s "
        f"({c['cpu_hours']:.1f} CPU-hours) for its Poisson bootstrap.\n"
    )
    return "\n".join(out)


def render():
    parts = [
        ".. This file is written by doc/make_reproduction_tables.py from benchmarks/results.",
        "   Do not edit it by hand.\n",
        faith_table1(), faith_validity(), model_selection(), group_compas(),
        conformal_and_rkhs(), rkhs_table4(), tilt_validity(), tilt_speed(),
        group_validity(), group_validity_small_groups(), peers(), engine_at_scale(),
    ]
    return "\n".join(parts)


def main():
    for path, text in render_all().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
