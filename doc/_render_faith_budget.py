"""``bench_faith_budget.py`` → ``doc/user_guide/faith_budget_results.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load, num, pct

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "faith_budget.json": {
        "data": "list",
        "data[].at_half": "object",
        "data[].at_half.warned": "bool",
        "data[].epsilon_95": "float",
        "data[].epsilon_half": "float",
        "data[].metric": "str",
        "data[].n_audit": "int",
        "data[].name": "str",
        "data[].old_default": "object",
        "data[].old_default.share_of_unlimited": "float",
        "data[].old_default.statistic": "float",
        "data[].old_default.warned": "bool",
        "data[].psi_unlimited": "float",
        "data[].psi_zero": "float",
        "data[].space": "str",
        "settings": "object",
        "settings.old_default": "float",
    },
}


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

