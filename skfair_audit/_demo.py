"""The README's main job (``skfair-audit demo``) as a library function: :func:`run_demo`."""

from __future__ import annotations

from ._console import Progress, command_line, run_quietly, write_report
from ._io import UserError, first_line

#: The grid features of the FaiTH COMPAS experiment (Xue, Yurochkin & Sun 2020, §5).
FAITH_FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
#: The sensitive attributes of the group audit (Cherian & Candès 2024, §3.2.2 and §4.2.2).
GROUP_ATTRIBUTES = ["race", "sex", "age_cat"]
DEMO_EPSILON, DEMO_DELTA = 0.0, 0.04


def _demo_faith(X_train, X_audit, y_train, y_audit, settings, progress):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from .faith import FaithAuditor

    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                          LogisticRegression(max_iter=1000))
    auditor = FaithAuditor(
        model, protected=["race", "sex"], epsilon=DEMO_EPSILON, delta=DEMO_DELTA,
        n_resamples=settings["faith_resamples"], random_state=settings["seed"],
        verbose=settings["verbose"],
    )
    progress(f"training the logistic regression on {len(y_train):,} rows and learning the "
             "fair metric")
    run_quietly(auditor.fit, progress, X_train, y_train)
    progress(f"FaiTH audit: {auditor.space_.n_cells} cells, {len(y_audit):,} audit rows, "
             f"{settings['faith_resamples']} m-out-of-n resamples")
    result = run_quietly(auditor.audit, progress, X_audit, y_audit)
    return auditor, result


def _demo_group(propublica, settings, progress):
    from .group import certify_bounds, flag_groups

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

    from .faith import FaithAuditor
    from .model_selection import FairModelSelector, default_c_path, l1_logistic_regression

    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    encoded = OneHotEncoder(drop="first").fit_transform(X_train)
    path = default_c_path(encoded, y_train, n_values=settings["n_candidates"])
    progress(f"delta-fair model selection: {len(path)} l1 logistic regressions, each audited "
             f"on a 30% validation split ({settings['selection_resamples']} resamples)")
    selector = FairModelSelector(
        model, param_grid={"logisticregression__C": [float(c) for c in path]},
        delta=DEMO_DELTA, protected=["race", "sex"], cv=0.3, on_none="fairest",
        auditor=FaithAuditor(None, epsilon=DEMO_EPSILON,
                             n_resamples=settings["selection_resamples"]),
        random_state=settings["seed"], verbose=settings["verbose"],
    )
    run_quietly(selector.fit, progress, X_train, y_train)
    return selector


def _shares(series):
    shares = series.value_counts(normalize=True, sort=False)
    return ", ".join(f"{k} {v:.1%}" for k, v in shares.items() if v > 0)


def run_demo(*, data_home=None, output="skfair_audit_report", random_state=0, fast=False,
             report=True, quiet=False, argv=()) -> None:
    """The README's main job: a complete audit of a model trained on ProPublica's COMPAS data.

    1. FaiTH audit of a logistic regression (individual fairness, δ-test, heat map);
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
        Seed of the split and of every bootstrap.
    fast : bool
        Fewer resamples and candidates (same steps).
    report : bool
        Write the report.
    quiet : bool
        Print only the summary.
    argv : sequence of str
        The command line, recorded in the report.
    """
    import numpy as np
    from sklearn.model_selection import train_test_split

    from .datasets import fetch_compas

    progress = Progress(quiet)
    settings = {
        "seed": random_state,
        "faith_resamples": 200 if fast else 1000,
        "group_resamples": 500 if fast else 2000,
        "selection_resamples": 100 if fast else 1000,
        "n_candidates": 6 if fast else 30,
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
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, y, test_size=0.3, random_state=random_state, stratify=y
    )

    # 1. Individual fairness of a logistic regression.
    auditor, faith_result = _demo_faith(X_train, X_audit, y_train, y_audit, settings, progress)
    accuracy = float(np.mean(auditor.estimator_.predict(X_audit) == y_audit))
    print()
    print(f"1. FaiTH audit of a logistic regression on {', '.join(FAITH_FEATURES)}")
    print(f"   trained on {len(y_train):,} rows, audit accuracy {accuracy:.3f} on "
          f"{len(y_audit):,} held-out rows")
    print(f"   epsilon = {DEMO_EPSILON:g}: only changes of race and sex (and their proxies) are "
          "free, so the statistic measures pure attribute-flip bias")
    print(f"   delta = {DEMO_DELTA:g}: an error rate inherent to the justice system (about 4% of "
          "convictions are wrongful, Gross et al., PNAS 2014)")
    print("   " + str(faith_result).replace("\n", "\n   "))

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
          f"{len(flagged_fpr)} of {int(np.sum(fpr_flags.sizes > 0))} groups flagged")

    # 3. delta-fair model selection.
    selector = _demo_selection(X_train, y_train, settings, progress)
    results = selector.cv_results_
    best = selector.best_index_
    chosen_accuracy = float(np.mean(selector.predict(X_audit) == y_audit))
    print()
    print(f"3. delta-fair model selection along an l1 path ({len(results['params'])} "
          f"candidates, delta = {DEMO_DELTA:g})")
    print(f"   {int(np.sum(results['passes']))} candidates pass the delta-test; chosen "
          f"C = {results['params'][best]['logisticregression__C']:.4g} with validation error "
          f"{results['mean_test_error'][best]:.3f}; held-out accuracy {chosen_accuracy:.3f}")

    if report:
        document = _demo_report(compas, propublica, accuracy, chosen_accuracy, faith_result,
                                (ppv_bounds, ppv_flags, fpr_flags), selector, argv, progress)
        paths = write_report(document, output, progress)
        print()
        print(f"Report written to {paths[0]} (also {', '.join(str(p) for p in paths[1:])})")


def _demo_report(compas, propublica, accuracy, chosen_accuracy, faith_result, group_results,
                 selector, argv, progress):
    from .report import (
        AuditReport,
        Table,
        data_section,
        faith_section,
        group_section,
        selection_section,
    )

    progress("building the report (figures)")
    ppv_bounds, ppv_flags, fpr_flags = group_results
    sensitive = propublica.sensitive
    shares = tuple(
        (column, str(level), int(count), count / len(sensitive))
        for column in GROUP_ATTRIBUTES
        for level, count in sensitive[column].value_counts(sort=False).items() if count > 0
    )
    data = data_section(
        {"FaiTH data (African-American and Caucasian)": len(compas.target),
         "group-audit data (all races)": len(propublica.target),
         "two-year recidivism rate": float(propublica.target.mean()),
         "high risk (decile_score >= 5)": int((propublica.frame["decile_score"] >= 5).sum())},
        paragraphs=(
            "ProPublica's COMPAS two-year recidivism data (Broward County, 2013-2014), "
            "ProPublica's standard filter. Label: charged with a new offence within two years.",
        ),
        tables=(Table("Audit population by attribute", ("attribute", "level", "rows", "share"),
                      shares),),
    )
    sections = (
        data,
        faith_section(
            faith_result, title="1. Individual fairness of a logistic regression (FaiTH)",
            description=(
                f"A logistic regression on {', '.join(FAITH_FEATURES)} (one-hot), trained on "
                f"70% of the data, audit accuracy {accuracy:.3f} on the other 30%. ε = 0: only "
                "changes of race and sex (and the directions that predict them) are free, so ψ "
                "is the increase of the error rate when defendants are moved to the other race "
                f"or sex — pure attribute-flip bias. δ = {DEMO_DELTA:g}: the model may err at "
                f"most {DEMO_DELTA:.0%} more often under such flips, an error rate inherent to "
                "the justice system (about 4% of convictions are wrongful, Gross et al., PNAS "
                "2014)."
            ),
            heatmap_rows=["race", "sex", "age_cat"],
            heatmap_columns=["priors_cat", "c_charge_degree"],
        ),
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
                "training part, each audited with FaiTH (ε = 0) on a 30% validation split; the "
                f"chosen model's accuracy on the held-out audit data is {chosen_accuracy:.3f} "
                f"(unpenalised logistic regression: {accuracy:.3f})."
            ),
        ),
    )
    return AuditReport(
        title="skfair_audit demonstration: COMPAS",
        audited=("A logistic regression trained on ProPublica's COMPAS data (individual "
                 "fairness, FaiTH), the COMPAS 'high risk' rule (group fairness over race × sex "
                 "× age), and a δ-fair choice along an ℓ1 path."),
        outcome=(f"FaiTH: δ-fairness {'rejected' if faith_result.rejected else 'not rejected'} "
                 f"(δ = {DEMO_DELTA:g}); {int(ppv_flags.flagged.sum())} PPV and "
                 f"{int(fpr_flags.flagged.sum())} FPR groups flagged at FDR 10%."),
        sections=sections,
        command=command_line(argv),
    )
