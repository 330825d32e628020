"""``bench_conformal_coverage.py`` and ``bench_rkhs_audit.py`` (the same simulated trails) →
the reproduction page's conformal-coverage and RKHS section (with the RKHS figure).

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import figure, load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "conformal_coverage.json": {
        "figure": "str",
        "paper": "object",
        "paper.level_quoted": "str",
        "paper.min_lower_length_ge_1": "float",
        "paper.min_lower_length_ge_2": "float",
        "realisation": "object",
        "realisation.n_intervals": "int",
        "realisation.rescaled_90": "object",
        "realisation.rescaled_90.length_ge_1": "object",
        "realisation.rescaled_90.length_ge_1.min_lower": "float",
        "realisation.rescaled_90.length_ge_2": "object",
        "realisation.rescaled_90.length_ge_2.min_lower": "float",
        "repetitions": "object",
        "repetitions.min_true_coverage_len1_mean": "float",
        "repetitions.min_true_coverage_len2_mean": "float",
        "repetitions.n_reps": "int",
        "repetitions.rescaled": "object",
        "repetitions.rescaled.min_lower_len1_mean": "float",
        "repetitions.rescaled.min_lower_len1_q10": "float",
        "repetitions.rescaled.min_lower_len1_q90": "float",
        "repetitions.rescaled.min_lower_len2_mean": "float",
        "repetitions.rescaled.min_lower_len2_q10": "float",
        "repetitions.rescaled.min_lower_len2_q90": "float",
        "repetitions.rescaled.nominal": "float",
        "repetitions.rescaled.simultaneous_coverage": "float",
        "repetitions.rescaled_95": "object",
        "repetitions.rescaled_95.min_lower_len1_mean": "float",
        "repetitions.rescaled_95.min_lower_len1_q10": "float",
        "repetitions.rescaled_95.min_lower_len1_q90": "float",
        "repetitions.rescaled_95.min_lower_len2_mean": "float",
        "repetitions.rescaled_95.min_lower_len2_q10": "float",
        "repetitions.rescaled_95.min_lower_len2_q90": "float",
        "repetitions.rescaled_95.nominal": "float",
        "repetitions.rescaled_95.simultaneous_coverage": "float",
        "settings": "object",
        "settings.alpha": "float",
        "settings.n_audit": "int",
    },
    "rkhs_audit.json": {
        "figure": "str",
        "paper": "object",
        "paper.union_lower_bound": "float",
        "realisation": "object",
        "realisation.tilts": "object",
        "realisation.tilts.union": "object",
        "realisation.tilts.union.lower": "float",
        "repetitions": "object",
        "repetitions.all_1279_tilts": "object",
        "repetitions.all_1279_tilts.coverage": "float",
        "repetitions.n_reps": "int",
        "repetitions.union_tilt": "object",
        "repetitions.union_tilt.coverage": "float",
        "settings": "object",
        "settings.bandwidth": "float",
    },
}


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
    out.append(figure(c["figure"], "The audit data with the CQR interval; 90% simultaneous "
                      "lower bounds against the true coverage of every interval"))
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
    out.append(figure(r["figure"], "The Gaussian RKHS tilt of the union of three sub-intervals, "
                      "the queried tilts, and the interval tilts' bounds against their truth"))
    return "\n".join(out)


def _ci(cell):
    low, high = cell["clopper_pearson_95"]
    return f"{pct(cell['realised'] if 'realised' in cell else cell['coverage'])} " \
        f"[{pct(low)}, {pct(high)}]"

