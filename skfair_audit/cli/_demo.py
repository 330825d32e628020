"""The README's main job (``skfair-audit demo``) as a library function: :func:`run_demo`."""

from __future__ import annotations

from dataclasses import dataclass

from .._utils import can_plot
from ._console import Progress, command_line, run_quietly, write_report
from ._io import UserError, first_line

#: The grid features of the FaiTH COMPAS experiment (Xue, Yurochkin & Sun 2020, §5).
FAITH_FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
#: The sensitive attributes of the group audit (Cherian & Candès 2024, §3.2.2 and §4.2.2).
GROUP_ATTRIBUTES = ["race", "sex", "age_cat"]
#: δ: an error rate inherent to the justice system (about 4% of convictions are wrongful,
#: Gross, O'Brien, Hu & Kennedy, PNAS 2014), the paper's suggestion.
DEMO_DELTA = 0.04
#: Budgets of the FaiTH audit, as in the COMPAS Table 1 benchmark
#: (``benchmarks/bench_faith_compas_table.py``): ε = 0, where only race and sex flips (and
#: their proxies) are free and ψ is linear in the cell frequencies, and ε = 0.1, the
#: ``FaithAuditor`` default budget (in units of the squared learned fair distance), where ψ
#: is a minimum of linear pieces and its limit law may not be Gaussian.
DEMO_EPSILONS = (0.0, 0.1)
#: Train/audit splits over which the FaiTH verdict is repeated (``fast``: fewer).
N_SPLITS, N_SPLITS_FAST = 20, 5


@dataclass(frozen=True)
class FaithSplit:
    """The FaiTH audits of the model trained on one train/audit split of the demo."""

    seed: int
    accuracy: float
    n_train: int
    n_audit: int
    results: tuple  # one FaithResult per budget of DEMO_EPSILONS


def _demo_model():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    return make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                         LogisticRegression(max_iter=1000))


def _split(X, y, seed):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)


def _faith_split(X, y, seed, n_resamples):
    """Train the logistic regression on split ``seed`` and audit it at every budget."""
    import numpy as np

    from ..faith import FaithAuditor

    X_train, X_audit, y_train, y_audit = _split(X, y, seed)
    auditor = FaithAuditor(
        _demo_model(), protected=["race", "sex"], epsilon=DEMO_EPSILONS[0], delta=DEMO_DELTA,
        n_resamples=n_resamples, random_state=seed,
    ).fit(X_train, y_train)
    # The budget enters the audit only (fit learns the model and the metric).
    results = tuple(auditor.set_params(epsilon=e).audit(X_audit, y_audit)
                    for e in DEMO_EPSILONS)
    accuracy = float(np.mean(auditor.estimator_.predict(X_audit) == y_audit))
    return FaithSplit(seed, accuracy, len(y_train), len(y_audit), results)


def _demo_faith(X, y, settings, progress):
    """The audit of the headline split's model, then the same audit over other splits."""
    seeds = [settings["seed"] + k for k in range(settings["n_splits"])]
    progress(f"FaiTH: training the logistic regression and learning the fair metric on "
             f"{len(seeds)} train/audit splits (seeds {seeds[0]}-{seeds[-1]}, a new model "
             f"each), audits at epsilon = {', '.join(f'{e:g}' for e in DEMO_EPSILONS)} "
             f"({settings['faith_resamples']} uniform max-t resamples each)")

    def every_split():
        return tuple(_faith_split(X, y, seed, settings["faith_resamples"]) for seed in seeds)

    return run_quietly(every_split, progress)


def split_summary(splits, k):
    """Distribution over the splits of the audit at budget ``DEMO_EPSILONS[k]``."""
    import numpy as np

    results = [s.results[k] for s in splits]
    statistic = np.array([r.statistic for r in results])
    lower = np.array([r.lower_bound for r in results])
    return {
        "epsilon": DEMO_EPSILONS[k], "splits": len(results),
        "statistic_median": float(np.median(statistic)),
        "statistic_min": float(statistic.min()), "statistic_max": float(statistic.max()),
        "lower_bound_median": float(np.median(lower)),
        "lower_bound_min": float(lower.min()), "lower_bound_max": float(lower.max()),
        "rejected": int(sum(r.rejected for r in results)),
        "certified_fair": int(sum(r.certified_fair for r in results)),
        "near_kink": int(sum(r.near_kink for r in results)),
    }


def conditional_sentence(splits, k=0):
    """What the headline verdict is conditional on, with the verdict's share over splits."""
    first = splits[0].results[k]
    summary = split_summary(splits, k)
    verdict = "rejected" if first.rejected else "not rejected"
    return (
        f"The guarantee is conditional on one fitted model: the bounds are about the model "
        f"trained on split {splits[0].seed}, the randomness being that of its audit sample. "
        f"Another split trains another model, with another ψ: at ε = {DEMO_EPSILONS[k]:g} "
        f"δ-fairness is {verdict} on split {splits[0].seed}, and rejected for the models of "
        f"{summary['rejected']} of {summary['splits']} splits (ψ̂ from "
        f"{summary['statistic_min']:.4f} to {summary['statistic_max']:.4f}, median "
        f"{summary['statistic_median']:.4f})."
    )


def _demo_group(propublica, settings, progress):
    from ..group import certify_bounds, flag_groups

    frame = propublica.frame
    y = propublica.target.to_numpy()
    high_risk = (frame["decile_score"] >= 5).to_numpy().astype(int)
    attributes = frame[GROUP_ATTRIBUTES]
    progress(f"group audit of 'high risk' = decile_score >= 5 on {len(y):,} defendants: PPV "
             f"bounds ({settings['group_resamples']} resamples)")
    ppv_bounds = run_quietly(
        certify_bounds, progress, y, high_risk, frame[["race"]], metric="ppv",
        target="race=Caucasian", alternative="two-sided", alpha=0.1,
        n_resamples=settings["group_resamples"], random_state=settings["seed"],
        verbose=settings["verbose"])
    progress("PPV and FPR flagging over race x sex x age_cat (FDR 10%)")
    ppv_flags = run_quietly(flag_groups, progress, y, high_risk, attributes, metric="ppv",
                             epsilon0=-0.05, alternative="less", q=0.1)
    fpr_flags = run_quietly(flag_groups, progress, y, high_risk, attributes, metric="fpr",
                             epsilon0=0.05, alternative="greater", q=0.1)
    return ppv_bounds, ppv_flags, fpr_flags


def _demo_selection(X_train, y_train, settings, progress):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from ..faith import FaithAuditor
    from ..model_selection import FairModelSelector, default_c_path, l1_logistic_regression

    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    encoded = OneHotEncoder(drop="first").fit_transform(X_train)
    path = default_c_path(encoded, y_train, n_values=settings["n_candidates"])
    progress(f"delta-fair model selection: {len(path)} l1 logistic regressions, each audited "
             f"on a 30% validation split ({settings['selection_resamples']} resamples)")
    selector = FairModelSelector(
        model, param_grid={"logisticregression__C": [float(c) for c in path]},
        delta=DEMO_DELTA, protected=["race", "sex"], cv=0.3, on_none="fairest",
        auditor=FaithAuditor(None, epsilon=DEMO_EPSILONS[0],
                             n_resamples=settings["selection_resamples"]),
        random_state=settings["seed"], verbose=settings["verbose"],
    )
    run_quietly(selector.fit, progress, X_train, y_train)
    return selector


def _shares(series):
    shares = series.value_counts(normalize=True, sort=False)
    return ", ".join(f"{k} {v:.1%}" for k, v in shares.items() if v > 0)


def _indent(text, prefix="   "):
    return prefix + str(text).replace("\n", "\n" + prefix)


def run_demo(*, data_home=None, output="skfair_audit_report", random_state=0, fast=False,
             report=True, quiet=False, argv=()) -> None:
    """The README's main job: a complete audit of a model trained on ProPublica's COMPAS data.

    1. FaiTH audit of a logistic regression (individual fairness, δ-test, heat map) at
       ε = 0 and ε = 0.1, on one train/audit split and then over several splits (a new
       model each): the verdict's share over the splits says how much it owes to the split;
    2. group audit of the COMPAS rule "high risk" = ``decile_score >= 5`` over race × sex ×
       age (PPV certification, PPV and FPR flagging);
    3. δ-fair model selection along an ℓ1 path;

    prints a summary on stdout (progress on stderr) and writes the report into ``output``.

    Parameters
    ----------
    data_home : str, optional
        Folder holding ``compas/`` (default: ``$SKFAIR_AUDIT_DATA`` or ``~/skfair_audit_data``).
    output : str
        Folder of the report.
    random_state : int
        Seed of the headline split and of every bootstrap; the other splits use the next
        seeds.
    fast : bool
        Fewer resamples, candidates and splits (same steps).
    report : bool
        Write the report.
    quiet : bool
        Print only the summary.
    argv : sequence of str
        The command line, recorded in the report.
    """
    import numpy as np

    from ..datasets import fetch_compas

    progress = Progress(quiet)
    settings = {
        "seed": random_state,
        "faith_resamples": 200 if fast else 1000,
        "group_resamples": 500 if fast else 2000,
        "selection_resamples": 100 if fast else 1000,
        "n_candidates": 6 if fast else 30,
        "n_splits": N_SPLITS_FAST if fast else N_SPLITS,
        "verbose": not quiet,  # progress bars on stderr
    }
    progress("loading COMPAS (ProPublica's filter)")
    try:
        compas = fetch_compas(data_home=data_home, preprocessing="propublica_aa_caucasian")
        propublica = fetch_compas(data_home=data_home, preprocessing="propublica")
    except (OSError, ValueError) as exc:
        raise UserError(first_line(exc)) from exc
    X, y = compas.data[FAITH_FEATURES], compas.target
    print(f"COMPAS (ProPublica filter, African-American and Caucasian): {len(y):,} defendants")
    print(f"  two-year recidivism rate: {y.mean():.3f}")
    for column in ("race", "sex"):
        print(f"  {column}: {_shares(compas.sensitive[column])}")

    # 1. Individual fairness of a logistic regression.
    splits = _demo_faith(X, y, settings, progress)
    headline = splits[0]
    print()
    print(f"1. FaiTH audit of a logistic regression on {', '.join(FAITH_FEATURES)}")
    print(f"   split {headline.seed}: trained on {headline.n_train:,} rows, audit accuracy "
          f"{headline.accuracy:.3f} on {headline.n_audit:,} held-out rows")
    print(f"   delta = {DEMO_DELTA:g}: an error rate inherent to the justice system (about 4% "
          "of convictions are wrongful, Gross et al., PNAS 2014)")
    for k, epsilon in enumerate(DEMO_EPSILONS):
        print("   " + _budget_words(epsilon))
        print(_indent(headline.results[k]))
    print(f"   Over {len(splits)} train/audit splits (seeds {splits[0].seed}-"
          f"{splits[-1].seed}, a new model each):")
    for k, epsilon in enumerate(DEMO_EPSILONS):
        d = split_summary(splits, k)
        print(f"     epsilon = {epsilon:g}: psi-hat median {d['statistic_median']:.4f} (from "
              f"{d['statistic_min']:.4f} to {d['statistic_max']:.4f}), lower bound median "
              f"{d['lower_bound_median']:.4f}; delta-fairness rejected in {d['rejected']} of "
              f"{d['splits']} splits")
    print("   " + conditional_sentence(splits).replace("ψ̂", "psi-hat").replace(
        "ψ", "psi").replace("δ", "delta").replace("ε", "epsilon"))

    # 2. Group fairness of the COMPAS rule.
    ppv_bounds, ppv_flags, fpr_flags = _demo_group(propublica, settings, progress)
    aa = ppv_bounds.bound("race=African-American")
    print()
    print(f"2. Group audit of the COMPAS rule 'high risk' = decile_score >= 5 "
          f"({len(propublica.target):,} defendants, ProPublica's filter)")
    print(f"   PPV, African-American minus Caucasian: {aa.estimate:+.4f}, 90% simultaneous "
          f"interval [{aa.lower:+.4f}, {aa.upper:+.4f}]")
    flagged_ppv = [n for n, f in zip(ppv_flags.names, ppv_flags.flagged, strict=True) if f]
    flagged_fpr = [n for n, f in zip(fpr_flags.names, fpr_flags.flagged, strict=True) if f]
    print(f"   PPV >= 5 points below overall ({ppv_flags.target:.3f}), FDR 10%: "
          f"{len(flagged_ppv)} group(s) flagged: {'; '.join(flagged_ppv) or 'none'}")
    print(f"   FPR >= 5 points above overall ({fpr_flags.target:.3f}), FDR 10%: "
          f"{len(flagged_fpr)} of {int(fpr_flags.active.sum())} non-empty groups flagged: "
          f"{'; '.join(flagged_fpr) or 'none'}")

    # 3. delta-fair model selection, on the headline split's training part.
    X_train, X_audit, y_train, y_audit = _split(X, y, headline.seed)
    selector = _demo_selection(X_train, y_train, settings, progress)
    results = selector.cv_results_
    best = selector.best_index_
    chosen_accuracy = float(np.mean(selector.predict(X_audit) == y_audit))
    print()
    print(f"3. delta-fair model selection along an l1 path ({len(results['params'])} "
          f"candidates, delta = {DEMO_DELTA:g}, on the training part of split {headline.seed})")
    print(f"   {int(np.sum(results['passes']))} candidates pass the delta-test; chosen "
          f"C = {results['params'][best]['logisticregression__C']:.4g} with validation error "
          f"{results['mean_test_error'][best]:.3f}; held-out accuracy {chosen_accuracy:.3f}")

    if report:
        document = _demo_report(compas, propublica, splits, chosen_accuracy,
                                (ppv_bounds, ppv_flags, fpr_flags), selector, argv, progress)
        paths = write_report(document, output, progress, option="--output")
        print()
        print(f"Report written to {paths[0]} (also {', '.join(str(p) for p in paths[1:])})")


def _budget_words(epsilon):
    if epsilon == 0:
        return ("epsilon = 0: only changes of race and sex (and their proxies) are free, so "
                "the statistic measures pure attribute-flip bias")
    return (f"epsilon = {epsilon:g} (the FaithAuditor default budget, as in the COMPAS Table 1 "
            "benchmark): the adversary may also change other features at a cost under the "
            "fair metric; psi is a minimum of linear pieces, with a possibly non-Gaussian limit "
            "(the uniform bounds hold there too)")


def _split_table(splits):
    from ..report import Table

    header = ["split (seed)", "accuracy"]
    for epsilon in DEMO_EPSILONS:
        header += [f"ψ̂ (ε = {epsilon:g})", f"lower bound (ε = {epsilon:g})",
                   f"rejects (ε = {epsilon:g})"]
    rows = tuple(
        (s.seed, s.accuracy, *[v for r in s.results
                               for v in (r.statistic, r.lower_bound, bool(r.rejected))])
        for s in splits
    )
    return Table(f"The FaiTH audit over {len(splits)} train/audit splits (a new model each; "
                 f"δ = {DEMO_DELTA:g}, 95% one-sided lower bounds)", tuple(header), rows)


def _split_figure(splits):
    """ψ̂ and its 95% interval per split and budget, with δ (a note without matplotlib)."""
    from ..report import Figure

    return Figure.draw(
        "faith_splits_plot",
        f"ψ̂ and its 95% interval for the models of {len(splits)} train/audit splits, at each "
        "budget; the dashed line is δ. Split "
        f"{splits[0].seed} (top) is the one of the sections above.",
        lambda: _draw_splits(splits),
    )


def _draw_splits(splits):
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6.5, 0.28 * len(splits) + 1.8))
    pos = np.arange(len(splits))
    for k, epsilon in enumerate(DEMO_EPSILONS):
        results = [s.results[k] for s in splits]
        est = np.array([r.statistic for r in results])
        ci = np.array([[r.confidence_interval().low, r.confidence_interval().high]
                       for r in results])
        ax.errorbar(est, pos + 0.18 * (k - 0.5), xerr=[est - ci[:, 0], ci[:, 1] - est],
                    fmt="os"[k % 2], capsize=2, label=f"ε = {epsilon:g}")
    ax.axvline(DEMO_DELTA, color="grey", linestyle="--", linewidth=1, label=f"δ = {DEMO_DELTA:g}")
    ax.set_yticks(pos, [f"seed {s.seed}" for s in splits])
    ax.invert_yaxis()
    ax.set_xlabel("FaiTH statistic ψ̂ with its 95% interval")
    ax.set_title("One model per train/audit split")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def _demo_report(compas, propublica, splits, chosen_accuracy, group_results, selector, argv,
                 progress):
    from ..report import (
        AuditReport,
        Section,
        Table,
        data_section,
        faith_section,
        group_section,
        selection_section,
    )

    progress("building the report" + (" (figures)" if can_plot() else
                                      " (matplotlib is not installed: no figures)"))
    ppv_bounds, ppv_flags, fpr_flags = group_results
    headline = splits[0]
    sensitive = propublica.sensitive
    shares = tuple(
        (column, str(level), int(count), count / len(sensitive))
        for column in GROUP_ATTRIBUTES
        for level, count in sensitive[column].value_counts(sort=False).items() if count > 0
    )
    data = data_section(
        {"FaiTH data (African-American and Caucasian): rows": len(compas.target),
         "FaiTH data: two-year recidivism rate": float(compas.target.mean()),
         "group-audit data (all races): rows": len(propublica.target),
         "group-audit data: two-year recidivism rate": float(propublica.target.mean()),
         "group-audit data: high risk (decile_score >= 5)":
             int((propublica.frame["decile_score"] >= 5).sum())},
        paragraphs=(
            "ProPublica's COMPAS two-year recidivism data (Broward County, 2013-2014), "
            "ProPublica's standard filter. Label: charged with a new offence within two years. "
            "The FaiTH audits and the model selection use the African-American and Caucasian "
            "defendants; the group audit uses every race.",
        ),
        tables=(Table("Group-audit population by attribute",
                      ("attribute", "level", "rows", "share"), shares),),
    )
    conditional = conditional_sentence(splits)
    faith_sections = tuple(
        faith_section(
            headline.results[k], key="faith" if k == 0 else f"faith_eps{k}",
            title=(f"1{'abc'[k]}. Individual fairness of a logistic regression (FaiTH), "
                   f"ε = {epsilon:g}"),
            description=(
                f"A logistic regression on {', '.join(FAITH_FEATURES)} (one-hot), trained on "
                f"70% of the data (split {headline.seed}), audit accuracy "
                f"{headline.accuracy:.3f} on the other 30%. "
                + (
                    "ε = 0: only changes of race and sex (and the directions that predict "
                    "them) are free, so ψ is the increase of the error rate when defendants "
                    "are moved to the other race or sex — pure attribute-flip bias. "
                    if epsilon == 0 else
                    f"ε = {epsilon:g}, the FaithAuditor default budget (as in the COMPAS "
                    "Table 1 benchmark): the adversary may also change the other features, at "
                    "a cost under the learned fair metric; ψ is then a minimum of linear "
                    "pieces, whose limit law may not be Gaussian (the uniform bounds hold "
                    "there too). "
                )
                + f"δ = {DEMO_DELTA:g}: the model may err at most {DEMO_DELTA:.0%} more often "
                "under such moves, an error rate inherent to the justice system (about 4% of "
                "convictions are wrongful, Gross et al., PNAS 2014)."
            ),
            conditional_on=conditional_sentence(splits, k),
            heatmap_rows=["race", "sex", "age_cat"],
            heatmap_columns=["priors_cat", "c_charge_degree"],
        )
        for k, epsilon in enumerate(DEMO_EPSILONS)
    )
    summaries = [split_summary(splits, k) for k in range(len(DEMO_EPSILONS))]
    spread = Section(
        key="faith_splits", title=f"1{'abc'[len(DEMO_EPSILONS)]}. The FaiTH verdict over "
        f"{len(splits)} train/audit splits",
        guarantee=(
            "Each row is a separate audit with its own guarantee, about the model trained on "
            "that split; the rows are not a confidence statement about one model. Their "
            "spread shows how much the verdict owes to the split."
        ),
        paragraphs=(
            conditional,
            *[f"At ε = {d['epsilon']:g}: ψ̂ from {d['statistic_min']:.4f} to "
              f"{d['statistic_max']:.4f} (median {d['statistic_median']:.4f}); δ-fairness "
              f"rejected in {d['rejected']} of {d['splits']} splits, certified in "
              f"{d['certified_fair']}; near a kink in {d['near_kink']}." for d in summaries],
        ),
        summary={f"rejected at ε = {d['epsilon']:g}": f"{d['rejected']} of {d['splits']}"
                 for d in summaries},
        tables=(_split_table(splits),),
        figures=(_split_figure(splits),),
    )
    sections = (
        data,
        *faith_sections,
        spread,
        group_section(
            ppv_bounds, key="ppv_bounds",
            title="2a. PPV of the COMPAS rule: African-American vs Caucasian",
            description=("The COMPAS rule 'high risk' = decile_score >= 5. Positive predictive "
                         "value (share of high-risk defendants who did reoffend) by race, minus "
                         "the PPV of Caucasian defendants (Cherian & Candès 2024, §3.2.2)."),
            target_description="PPV of Caucasian defendants",
        ),
        group_section(
            ppv_flags, key="ppv_flags",
            title="2b. Groups with a PPV at least 5 points below overall",
            description="Intersections of race, sex and age category (Cherian & Candès, §4.2.2).",
            target_description="overall PPV",
        ),
        group_section(
            fpr_flags, key="fpr_flags",
            title="2c. Groups with a false-positive rate at least 5 points above overall",
            description=("Among defendants who did not reoffend, the share labelled high risk; "
                         "intersections of race, sex and age category."),
            target_description="overall FPR",
        ),
        selection_section(
            selector, title="3. δ-fair model selection along an ℓ1 path",
            description=(
                "ℓ1-penalised logistic regressions along a path of C = 1/λ, fitted on the "
                f"training part of split {headline.seed}, each audited with FaiTH (ε = 0) on a "
                "30% validation split; the chosen model's accuracy on the held-out audit data "
                f"is {chosen_accuracy:.3f} (unpenalised logistic regression: "
                f"{headline.accuracy:.3f}). The choice is conditional on this split: "
                "doc/reproducing.rst shows how often each variable is kept over splits."
            ),
        ),
    )
    first = summaries[0]
    return AuditReport(
        title="skfair_audit demonstration: COMPAS",
        audited=("A logistic regression trained on ProPublica's COMPAS data (individual "
                 "fairness, FaiTH, over several train/audit splits), the COMPAS 'high risk' "
                 "rule (group fairness over race × sex × age), and a δ-fair choice along an "
                 "ℓ1 path."),
        outcome=(
            f"FaiTH (δ = {DEMO_DELTA:g}): at ε = {DEMO_EPSILONS[0]:g} δ-fairness is "
            f"{'rejected' if headline.results[0].rejected else 'not rejected'} for the model "
            f"of split {headline.seed}, and rejected for the models of {first['rejected']} of "
            f"{first['splits']} splits; at "
            + "; at ".join(f"ε = {d['epsilon']:g} rejected for {d['rejected']} of "
                           f"{d['splits']}" for d in summaries[1:])
            + f". {int(ppv_flags.flagged.sum())} PPV and {int(fpr_flags.flagged.sum())} FPR "
            "groups flagged at FDR 10%."
        ),
        sections=sections,
        command=command_line(argv),
        extras=("pandas", "plot"),  # the data loaders and the figures
    )
