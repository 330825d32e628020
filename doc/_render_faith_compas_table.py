"""``bench_faith_compas_table.py`` → the reproduction page's "FaiTH: Table 1 analogue on
COMPAS" section.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import figure, load, num, section, share, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_compas_table.csv": {
        "accuracy_mean": "column",
        "accuracy_sd": "column",
        "aod_mean": "column",
        "aod_sd": "column",
        "budget_binds_rate": "column",
        "certified_rate": "column",
        "ci_high_mean": "column",
        "ci_low_mean": "column",
        "eod_mean": "column",
        "eod_sd": "column",
        "epsilon": "column",
        "inside_curve_rate": "column",
        "lower_bound_mean": "column",
        "lower_bound_sd": "column",
        "method": "column",
        "multi_piece_contact_rate": "column",
        "n_repetitions": "column",
        "near_kink_rate": "column",
        "rejection_rate": "column",
        "spd_mean": "column",
        "spd_sd": "column",
        "statistic_mean": "column",
        "statistic_sd": "column",
        "upper_bound_mean": "column",
    },
    "faith_compas_table.json": {
        "heatmap": "object",
        "heatmap.epsilon": "float",
        "heatmap.one_feature_change_cost": "object",
        "heatmap.one_feature_change_cost.max": "float",
        "heatmap.one_feature_change_cost.median": "float",
        "heatmap.one_feature_change_cost.min": "float",
        "heatmap.reading": "list",
        "heatmap.seed": "int",
        "heatmap.statistic": "float",
        "settings": "object",
        "settings.delta": "float",
        "settings.delta_reason": "str",
        "settings.epsilons": "list",
        "settings.n_resamples": "int",
        "settings.n_rows": "int",
        "settings.repeats": "int",
        "settings.select_epsilon": "float",
    },
}


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
        f"\n**Figure 2 analogue** (``faith_compas_table_heatmap.png``, split {heat['seed']}, "
        f"ε = {heat['epsilon']:g}, ψ = {num(heat['statistic'], 4)}): the adversarial moves, as "
        "written by the script:\n\n"
    )
    out.append("\n".join(f"| {line.strip()}" for line in heat["reading"]) + "\n")
    out.append(figure("faith_compas_table_heatmap.png", "Adversarial change in the cell counts "
                      "of the audit split, for non-recidivists and recidivists"))
    return "\n".join(out)

