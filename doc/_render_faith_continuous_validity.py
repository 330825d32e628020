"""``bench_faith_continuous_validity.py`` (and its ``--confirm`` rerun) →
``doc/faith_continuous_validity.rst``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

import math

from _render_common import RESULTS, ROOT, load, num, pct, section, table
from _render_faith_validity import chance_misses
from scipy import stats

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_continuous_validity.json": {
        "command": "str",
        "confidence_level": "float",
        "elapsed_seconds": "float",
        "instances": "list",
        "instances[].cross_check": "object",
        "instances[].cross_check.max_abs_difference": "float",
        "instances[].cross_check.rows": "int",
        "instances[].draws": "int",
        "instances[].epsilons": "list",
        "instances[].name": "str",
        "instances[].psi_unlimited": "float",
        "instances[].truth": "list",
        "instances[].truth_mc_se": "list",
        "jobs": "int",
        "machine": "object",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "n_resamples": "int",
        "reference_rows": "int",
        "reps_requested": "int",
        "rows": "list",
        "rows[].bias": "float",
        "rows[].bias_z": "float",
        "rows[].budget": "str",
        "rows[].budget_saturated_rate": "float",
        "rows[].coverage_two_sided": "float",
        "rows[].instance": "str",
        "rows[].mean_value": "float",
        "rows[].mean_width_two_sided": "float",
        "rows[].n": "int",
        "rows[].near_kink_rate": "float",
        "rows[].reps": "int",
        "rows[].sd_value": "float",
        "rows[].se_coverage_two_sided": "float",
        "rows[].se_mean_value": "float",
        "rows[].truth": "float",
        "rows[].type1_certification": "float",
        "rows[].type1_delta_test": "float",
        "rows[].unique_dual_minimiser": "bool",
        "sizes": "list",
        "summary": "object",
        "summary.all_cells_complete": "bool",
        "summary.cells": "int",
        "summary.cells_drifting_beyond_2se": "list",
        "summary.cells_missing_level": "list",
        "summary.cells_missing_level[].budget": "str",
        "summary.cells_missing_level[].coverage_two_sided": "float",
        "summary.cells_missing_level[].instance": "str",
        "summary.cells_missing_level[].n": "int",
        "summary.cells_missing_level[].type1_certification": "float",
        "summary.cells_missing_level[].type1_delta_test": "float",
        "summary.near_kink_holds": "bool",
        "summary.near_kink_max_rate_unique_minimiser": "float",
        "summary.near_kink_required_at_most": "float",
        "summary.worst": "object",
        "summary.worst.coverage_two_sided": "object",
        "summary.worst.coverage_two_sided.budget": "str",
        "summary.worst.coverage_two_sided.coverage_two_sided": "float",
        "summary.worst.coverage_two_sided.instance": "str",
        "summary.worst.coverage_two_sided.n": "int",
        "summary.worst.type1_certification": "object",
        "summary.worst.type1_certification.budget": "str",
        "summary.worst.type1_certification.instance": "str",
        "summary.worst.type1_certification.n": "int",
        "summary.worst.type1_certification.type1_certification": "float",
        "summary.worst.type1_delta_test": "object",
        "summary.worst.type1_delta_test.budget": "str",
        "summary.worst.type1_delta_test.instance": "str",
        "summary.worst.type1_delta_test.n": "int",
        "summary.worst.type1_delta_test.type1_delta_test": "float",
    },
    "faith_continuous_validity_confirmation.json": {
        "command": "str",
        "rows": "list",
        "rows[].budget": "str",
        "rows[].coverage_two_sided": "float",
        "rows[].holds": "bool",
        "rows[].instance": "str",
        "rows[].n": "int",
        "rows[].reps": "int",
        "rows[].se_coverage_two_sided": "float",
        "rows[].type1_certification": "float",
        "rows[].type1_delta_test": "float",
    },
}


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

