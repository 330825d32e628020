"""``bench_group_compas.py`` → the reproduction page's group COMPAS section and
``doc/user_guide/group_compas_results.inc`` (with its two figures).

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import figure, load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "group_compas.json": {
        "data": "object",
        "data.n_rows": "int",
        "data.paper_n_rows": "int",
        "figures": "list",
        "flagging": "object",
        "flagging.fpr": "object",
        "flagging.fpr.flagged": "list",
        "paper_comparison": "object",
        "paper_comparison.aa_minus_caucasian_lower_bound": "object",
        "paper_comparison.aa_minus_caucasian_lower_bound.ours_full_intersections": "float",
        "paper_comparison.aa_minus_caucasian_lower_bound.ours_race_only": "float",
        "paper_comparison.aa_minus_caucasian_lower_bound.paper": "float",
        "paper_comparison.fpr_flags": "object",
        "paper_comparison.fpr_flags.ours_african_american": "str",
        "paper_comparison.fpr_flags.ours_over_45_flagged": "list",
        "paper_comparison.fpr_flags.ours_under_25": "str",
        "paper_comparison.fpr_flags.paper": "str",
        "paper_comparison.ppv_flags": "object",
        "paper_comparison.ppv_flags.identical": "bool",
        "paper_comparison.ppv_flags.ours": "list",
        "paper_comparison.ppv_flags.paper": "list",
        "settings": "object",
        "settings.n_resamples": "int",
    },
}


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
    bounds, flags = d["figures"]
    out.append(figure(bounds, "PPV of each race x sex x age intersection minus the "
                      "Caucasian PPV: 90% simultaneous intervals"))
    out.append(figure(flags, "Each group's FPR and PPV minus the overall rate with 1.96 "
                      "standard-error bars, the groups flagged by Benjamini-Hochberg in red"))
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

