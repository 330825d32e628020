"""Choosing a fair metric: the FaiTH audit of COMPAS with all six races, metric by metric.

Usage::

    SKFAIR_AUDIT_DATA=/path/to/data python benchmarks/bench_fair_metric_compas.py \
        [--quick] [--splits 50] [--seed 0] [--resamples 1000] [--delta 0.04]

Data: COMPAS with ProPublica's filter, **all six races** (6,172 rows; grid sex × race ×
age_cat × priors_cat × c_charge_degree × label = 432 cells), and the usual African-American /
Caucasian subset (5,278 rows, 144 cells). For each of ``--splits`` seeds (``seed, seed + 1,
…``; seed 0 is the split of issue 12's report) the rows are split 70% train / 30% audit,
stratified by the label. The model is ``OneHotEncoder`` + ``LogisticRegression()`` (C = 1) fit
on the 70%; it is audited as a black box on the 30% with :class:`FaithAuditor` (protected race
and sex, ε = 0, δ = ``--delta``, 0-1 loss, the uniform bounds (``method="uniform"``, the
library's default, given explicitly so that a change of default cannot change these results)
with ``--resamples`` bootstrap replicates, 95% level), once per fair metric, every metric
learned on the 70%:

* ``default``: ``metric="sensitive_subspace"``, :class:`SensitiveSubspaceMetric` with its
  defaults (standardised features; a level's direction only if its 5-fold cross-validated AUC
  is at least 0.6 and significantly above 1/2 at 5%; C chosen by that AUC; the kept
  directions combined into the subspace that explains 90% of their Gini-weighted squared
  singular values);
* ``all levels (previous default)``: ``SensitiveSubspaceMetric(min_auc=None,
  n_components=None, standardize=False, C=1.0)``, one direction per protected level, the
  construction of the library before issue 12;
* ``protected Euclidean``: ``metric="protected_euclidean"`` (standardised; only race and sex
  free);
* ``EXPLORE``: :class:`ExploreMetric` learned from 4,000 random pairs of training individuals
  labelled by a simulated judge who calls two people comparable when they have the same age
  category, prior-count category and charge degree (race and sex ignored), and errs on 10% of
  the pairs;
* ``SVD subspace``: :class:`SVDSensitiveSubspaceMetric` learned from groups of comparable
  training individuals, those with the same prior-count category and charge degree (a judge
  for whom age is irrelevant too), all within-group directions (``n_components=1.0``).

Per split and metric: ψ̂ at ε = 0, its 95% interval, lower bound and δ-test, the accuracy on
the audit split, ψ̂ / accuracy, the share of audited individuals who reach a worse decision at
zero cost and at any cost, ψ with an unlimited budget, the metric's free non-protected
directions, whether a ``DegenerateMetricWarning`` was raised, the metric's fit time, and the
exact curve ψ̂(ε) on ``EPSILONS``. On the six-race split ``seed`` the sensitivity view
(:func:`faith_sensitivity`: ψ̂ and its 95% band along ε, metrics side by side) is stored too.
Finally, on the training parts of the 50 two-race splits of ``bench_faith_compas_table.py`` and
``bench_model_selection_compas.py``, it checks that the default and the previous default make
exactly the same pairs of cells free (so their committed results at ε = 0 stand).

Writes ``benchmarks/results/fair_metric_compas.json`` and ``fair_metric_compas.png`` (ψ̂ /
accuracy over the splits, both data sets, every metric; the sensitivity view); ``--quick`` (3
splits, 200 replicates) writes ``fair_metric_compas_quick.*`` (not results: kept out of the
repository). The JSON stores the command, versions, machine load and run time.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import Run, write_results
from _compas_models import split as selection_split
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.datasets import fetch_compas  # noqa: E402
from skfair_audit.faith import (  # noqa: E402
    DegenerateMetricWarning,
    ExploreMetric,
    FaithAuditor,
    SensitiveSubspaceMetric,
    SVDSensitiveSubspaceMetric,
    faith_sensitivity,
)

FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
PROTECTED = ["race", "sex"]
#: The inference method of every audit (recorded in the results' settings).
METHOD = "uniform"
DATASETS = {"six races": "propublica", "African-American and Caucasian":
            "propublica_aa_caucasian"}
METRICS = ["default", "all levels (previous default)", "protected Euclidean", "EXPLORE",
           "SVD subspace"]
LEGACY = {"min_auc": None, "n_components": None, "standardize": False, "C": 1.0}
#: Budgets of the sensitivity view (in each metric's own cost units).
EPSILONS = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
N_PAIRS, JUDGE_ERROR = 4000, 0.10


def explore_pairs(X_train, encoded, seed):
    """Random pairs of training individuals judged by a simulated case worker."""
    rng = np.random.default_rng(seed)
    n = len(X_train)
    first, second = rng.integers(0, n, N_PAIRS), rng.integers(0, n, N_PAIRS)
    record = X_train[["age_cat", "priors_cat", "c_charge_degree"]].astype(str).agg("|".join,
                                                                                 axis=1)
    record = record.to_numpy()
    comparable = record[first] == record[second]
    flip = rng.random(N_PAIRS) < JUDGE_ERROR
    return np.hstack([encoded[first], encoded[second]]), (comparable ^ flip).astype(int)


def metric_for(name, space, X_train, seed):
    """The fair metric ``name`` (a string or a fitted metric in a FrozenEstimator)."""
    if name == "default":
        return "sensitive_subspace"
    if name == "protected Euclidean":
        return "protected_euclidean"
    if name == "all levels (previous default)":
        return SensitiveSubspaceMetric(space.encoded_columns(PROTECTED), **LEGACY)
    encoded = space.encode(X_train)
    if name == "EXPLORE":
        pairs, judged = explore_pairs(X_train, encoded, seed)
        with warnings.catch_warnings():
            # The judge's errors include identical records judged incomparable: left out.
            warnings.filterwarnings("ignore", ".*pairs of identical individuals")
            return FrozenEstimator(ExploreMetric().fit(pairs, judged))
    if name == "SVD subspace":
        groups = X_train[["priors_cat", "c_charge_degree"]].astype(str).agg("|".join, axis=1)
        metric = SVDSensitiveSubspaceMetric(n_components=1.0).fit(encoded, groups.to_numpy())
        return FrozenEstimator(metric)
    raise ValueError(name)


def audit_split(X, y, seed, args):
    """Every metric on one split of one data set."""
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, y, test_size=0.3, random_state=seed, stratify=y
    )
    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    model.fit(X_train, y_train)
    accuracy = float(model.score(X_audit, y_audit))
    base = FaithAuditor(FrozenEstimator(model), protected=PROTECTED, epsilon=0.0,
                        delta=args.delta, method=METHOD, n_resamples=args.resamples,
                        random_state=seed)
    space = base.fit(X_train, y_train).space_
    rows, auditors = [], {}
    for name in METRICS:
        start = time.perf_counter()
        auditor = FaithAuditor(**{**base.get_params(deep=False),
                                  "metric": metric_for(name, space, X_train, seed)})
        auditor.fit(X_train, y_train)
        fit_seconds = time.perf_counter() - start
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = auditor.audit(X_audit, y_audit)
        degenerate_warning = any(issubclass(w.category, DegenerateMetricWarning)
                                 for w in caught)
        counts = result.counts
        curve = auditor.transport_problem_.value_curve(counts / counts.sum(), EPSILONS)
        ci = result.confidence_interval()
        d = result.metric_diagnostics
        fitted = getattr(auditor.metric_, "estimator", auditor.metric_)
        rows.append({
            "seed": seed, "metric": name, "statistic": result.statistic,
            "ci_low": ci.low, "ci_high": ci.high, "lower_bound": result.lower_bound,
            "rejected": bool(result.rejected), "accuracy": accuracy,
            "ratio_to_accuracy": result.statistic / accuracy,
            "zero_cost_share": result.zero_cost_share,
            "reachable_share": result.reachable_share, "max_statistic": result.max_statistic,
            "free_directions": d.n_free, "non_protected_directions": d.n_non_protected,
            "free_sources": list(d.free_sources),
            "sources": [{"source": x["source"], "auc": x["auc"], "kept": x["kept"],
                         "free_directions": x["free_directions"]} for x in d.sources],
            "degenerate_warning": degenerate_warning,
            "degenerate_metric": result.degenerate_metric,
            "metric_fit_seconds": fit_seconds, "curve": [float(v) for v in curve],
            "encoded_columns": int(space.encoded_feature_names.size),
            "sensitive_rank": (int(fitted.sensitive_directions_.shape[0])
                               if hasattr(fitted, "sensitive_directions_") else None),
            "candidate_directions": (len(fitted.problems_) if hasattr(fitted, "problems_")
                                     else None),
            "kept_directions": (int(sum(p["kept"] for p in fitted.problems_))
                                if hasattr(fitted, "problems_") else None),
        })
        auditors[name] = auditor
    return rows, auditors, (X_audit, y_audit)


def published_splits_unchanged(X, y, seeds):
    """Zero-cost moves of the default and the previous default on the splits of the two-race
    Table 1 and model-selection benchmarks (their training parts): the same pairs of cells are
    free, so every audit at ε = 0 of any model on those splits is unchanged."""
    from skfair_audit.faith import GridSpace

    y = np.asarray(y)
    space = GridSpace.from_data(X, y, FEATURES)
    cells = space.encoded_features()
    columns = space.encoded_columns(PROTECTED)
    differing, fits = 0, 0
    for seed in seeds:
        train, validation, _ = selection_split(X, y, seed)
        for part in (train, np.sort(np.r_[train, validation])):
            encoded = space.encode(X.iloc[part])
            free = [SensitiveSubspaceMetric(columns, **kwargs).fit(encoded).cost_matrix(cells)
                    <= 1e-12 for kwargs in ({}, LEGACY)]
            differing += int(np.count_nonzero(free[0] != free[1]))
            fits += 1
    return {"seeds": [seeds[0], seeds[-1]], "fits": fits,
            "zero_cost_pairs_differing": differing}


def summarise(rows):
    out = []
    for name in METRICS:
        mine = [r for r in rows if r["metric"] == name]
        ratio = np.array([r["ratio_to_accuracy"] for r in mine])
        stat = np.array([r["statistic"] for r in mine])
        free = np.array([r["free_directions"] for r in mine])
        out.append({
            "metric": name,
            "splits": len(mine),
            "statistic_mean": float(stat.mean()), "statistic_sd": float(stat.std(ddof=1))
            if len(mine) > 1 else 0.0,
            "statistic_median": float(np.median(stat)),
            "ratio_median": float(np.median(ratio)),
            "ratio_q10": float(np.quantile(ratio, 0.1)),
            "ratio_q90": float(np.quantile(ratio, 0.9)),
            "ratio_max": float(ratio.max()),
            "share_ratio_at_most_half": float(np.mean(ratio <= 0.5)),
            "statistic_equals_accuracy": float(np.mean(np.isclose(ratio, 1.0, atol=1e-12))),
            "rejection_rate": float(np.mean([r["rejected"] for r in mine])),
            "lower_bound_mean": float(np.mean([r["lower_bound"] for r in mine])),
            "zero_cost_share_mean": float(np.mean([r["zero_cost_share"] for r in mine])),
            "free_directions_median": float(np.median(free)),
            "free_directions_max": int(free.max()),
            "non_protected_directions": int(mine[0]["non_protected_directions"]),
            "warning_rate": float(np.mean([r["degenerate_warning"] for r in mine])),
            "fit_seconds_median": float(np.median([r["metric_fit_seconds"] for r in mine])),
            "curve_median": np.median([r["curve"] for r in mine], axis=0).tolist(),
            "curve_q10": np.quantile([r["curve"] for r in mine], 0.1, axis=0).tolist(),
            "curve_q90": np.quantile([r["curve"] for r in mine], 0.9, axis=0).tolist(),
        })
    return out


def plot(rows, sensitivity, seed, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    short = ["default", "all levels\n(previous)", "protected\nEuclidean", "EXPLORE", "SVD"]
    for ax, data in zip(axes[:2], DATASETS, strict=True):
        values = [[r["ratio_to_accuracy"] for r in rows[data] if r["metric"] == m]
                  for m in METRICS]
        ax.boxplot(values, showfliers=False)
        for k, v in enumerate(values, start=1):
            jitter = np.random.default_rng(k).uniform(-0.15, 0.15, len(v))
            ax.plot(np.full(len(v), k) + jitter, v, ".", color="C0", alpha=0.5, markersize=4)
        ax.axhline(0.5, color="C3", linestyle="--", linewidth=1, label="half the accuracy")
        ax.set_xticks(range(1, len(METRICS) + 1), short, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("ψ̂ at ε = 0 / accuracy")
        ax.set_title(f"COMPAS, {data}: {len(values[0])} splits", fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    sensitivity.plot(ax=axes[2])
    axes[2].set_xscale("symlog", linthresh=0.01)
    axes[2].set_xlim(0, max(EPSILONS))
    axes[2].set_title(f"Six races, split {seed}: ψ̂(ε) and 95% band", fontsize=10)
    axes[2].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 splits, 200 replicates")
    parser.add_argument("--splits", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--delta", type=float, default=0.04)
    args = parser.parse_args(argv)
    if args.quick:
        args.splits, args.resamples = 3, 200
    run = Run(__file__, argv, packages=("joblib", "matplotlib", "fairlearn"))
    seeds = [args.seed + k for k in range(args.splits)]

    rows, summaries, sizes, sensitivity, level_counts = {}, {}, {}, None, {}
    for data, preprocessing in DATASETS.items():
        bunch = fetch_compas(preprocessing=preprocessing, download_if_missing=False)
        X, y = bunch.data[FEATURES], bunch.target
        sizes[data] = len(y)
        level_counts[data] = {str(k): int(v) for k, v in X["race"].value_counts().items()}
        rows[data] = []
        for seed in seeds:
            split_rows, auditors, audit_data = audit_split(X, y, seed, args)
            rows[data].extend(split_rows)
            if data == "six races" and seed == args.seed:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DegenerateMetricWarning)
                    sensitivity = faith_sensitivity(auditors, *audit_data, epsilons=EPSILONS)
            print(f"{data}, split {seed}: " + ", ".join(
                f"{r['metric']} {r['statistic']:.4f}" for r in split_rows), flush=True)
        summaries[data] = summarise(rows[data])
        if data == "African-American and Caucasian":
            # The seeds of bench_faith_compas_table.py / bench_model_selection_compas.py.
            published = published_splits_unchanged(X, y, [2020 + k for k in range(
                3 if args.quick else 50)])

    # The African-American / Caucasian result before and after: same split, same model.
    aa = rows["African-American and Caucasian"]
    new = np.array([r["statistic"] for r in aa if r["metric"] == "default"])
    old = np.array([r["statistic"] for r in aa if r["metric"] == METRICS[1]])
    # With six races: how much of the default's psi is pure race/sex flipping?
    six = rows["six races"]
    default6 = np.array([r["statistic"] for r in six if r["metric"] == "default"])
    protected6 = np.array([r["statistic"] for r in six if r["metric"] == "protected Euclidean"])
    suffix = "_quick" if args.quick else ""
    figure = run.path(suffix)
    plot(rows, sensitivity, args.seed, figure)
    elapsed = run.elapsed()
    issue = {data: {r["metric"]: r for r in rows[data] if r["seed"] == args.seed}
             for data in DATASETS}
    output = {
        "settings": {
            "features": FEATURES, "protected": PROTECTED, "epsilon": 0.0,
            "delta": args.delta, "n_resamples": args.resamples, "method": METHOD,
            "confidence_level": 0.95, "splits": args.splits, "seeds": seeds,
            "split": "70% train / 30% audit, stratified by the label",
            "model": "OneHotEncoder(handle_unknown='ignore') + LogisticRegression() (C = 1)",
            "rows": sizes, "race_counts": level_counts, "metrics": METRICS,
            "epsilons": EPSILONS,
            "explore_pairs": N_PAIRS, "explore_judge_error": JUDGE_ERROR,
            "explore_rule": "comparable iff same age_cat, priors_cat and c_charge_degree",
            "svd_groups": "same priors_cat and c_charge_degree",
        },
        "summary": summaries,
        "issue_split": issue,
        "aa_caucasian_default_minus_previous": {
            "max_abs_difference": float(np.max(np.abs(new - old))),
            "mean_default": float(new.mean()), "mean_previous": float(old.mean()),
        },
        "six_races_default_vs_protected_euclidean": {
            "max_abs_difference": float(np.max(np.abs(default6 - protected6))),
            "share_equal": float(np.mean(np.isclose(default6, protected6, atol=1e-12))),
        },
        "published_two_race_splits": published,
        "sensitivity": sensitivity.records(),
        # The per-source table is kept for the issue's split only (above).
        "per_split": {data: [{k: v for k, v in row.items() if k != "sources"} for row in split]
                      for data, split in rows.items()},
        "elapsed_seconds": elapsed,
    }
    path = write_results(run, output, suffix=suffix)
    for data in DATASETS:
        print(f"\n{data} ({sizes[data]} rows), {args.splits} splits: ψ̂ / accuracy at ε = 0")
        for s in summaries[data]:
            print(f"  {s['metric']:<30} median {s['ratio_median']:.3f} "
                  f"[10%: {s['ratio_q10']:.3f}, 90%: {s['ratio_q90']:.3f}, max "
                  f"{s['ratio_max']:.3f}]  free {s['free_directions_median']:.0f}/"
                  f"{s['non_protected_directions']}  warned {s['warning_rate']:.0%}")
    print(f"\nAA/Caucasian, default minus previous default: max |difference| "
          f"{np.max(np.abs(new - old)):.2g}; on the published splits "
          f"{published['zero_cost_pairs_differing']} zero-cost pairs differ "
          f"({published['fits']} fits)")
    print(f"wrote {path} and {figure} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
