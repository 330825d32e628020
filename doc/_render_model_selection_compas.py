"""``bench_model_selection_compas.py`` → the reproduction page's model-selection section and
``doc/user_guide/model_selection_results.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import figure, load, num, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "model_selection_compas.json": {
        "comparison_with_paper": "object",
        "comparison_with_paper.ours": "object",
        "comparison_with_paper.ours.entry_order": "list",
        "comparison_with_paper.paper": "object",
        "comparison_with_paper.paper.entry_order": "list",
        "comparison_with_paper.paper.lr_lower_bound": "float",
        "comparison_with_paper.paper.selected_inverse_lambda": "float",
        "config": "object",
        "config.delta": "float",
        "config.epsilon": "float",
        "config.method": "str",
        "config.n_audit": "int",
        "config.n_train": "int",
        "config.n_validation": "int",
        "config.seed": "int",
        "repeats": "object",
        "repeats.entry_order_as_paper": "float",
        "repeats.entry_positions": "object",
        "repeats.entry_positions.age greater than 45": "list",
        "repeats.entry_positions.age less than 25": "list",
        "repeats.entry_positions.has prior crimes": "list",
        "repeats.entry_positions.misdemeanour charge": "list",
        "repeats.entry_positions.more than 3 prior crimes": "list",
        "repeats.entry_positions.race": "list",
        "repeats.kept_share": "object",
        "repeats.kept_share.age greater than 45": "float",
        "repeats.kept_share.age less than 25": "float",
        "repeats.kept_share.has prior crimes": "float",
        "repeats.kept_share.misdemeanour charge": "float",
        "repeats.kept_share.more than 3 prior crimes": "float",
        "repeats.kept_share.race (Caucasian)": "float",
        "repeats.kept_share.sex (male)": "float",
        "repeats.n_repeats": "int",
        "repeats.race_dropped": "float",
        "repeats.selected_C_median": "float",
        "repeats.selected_C_quantiles_10_50_90": "list",
        "repeats.selected_lower_mean": "float",
        "repeats.selected_passes_on_audit": "float",
        "repeats.sex_dropped": "float",
        "repeats.unpenalised_lower_mean": "float",
        "repeats.unpenalised_rejected_on_audit": "float",
        "selected": "object",
        "selected.kept_variables": "list",
        "selected.refit_on_train_and_validation": "object",
        "selected.refit_on_train_and_validation.audit": "object",
        "selected.refit_on_train_and_validation.audit.lower_bound_one_sided": "float",
        "selected.refit_on_train_and_validation.audit.rejected_delta_fair": "bool",
        "selected.refit_on_train_and_validation.features": "list",
        "selected.seed": "int",
        "selected.selected_C": "float",
        "selected.selected_audit": "object",
        "selected.selected_audit.lower_bound_one_sided": "float",
        "selected.selected_audit.rejected_delta_fair": "bool",
        "selected.selected_audit.statistic": "float",
        "selected.unpenalised_audit": "object",
        "selected.unpenalised_audit.lower_bound_one_sided": "float",
        "selected.unpenalised_audit.rejected_delta_fair": "bool",
        "selected.unpenalised_audit.statistic": "float",
    },
}


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
        f"``bench_model_selection_compas.py`` (``model_selection_compas_tradeoff.png``, "
        f"``model_selection_compas_coef_path.png``; split train {d['config']['n_train']:,} / "
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
    out.append(figure("model_selection_compas_coef_path.png", "Coefficient paths of the "
                      "l1-penalised logistic regression on the training part, with the "
                      "selected C marked"))
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

