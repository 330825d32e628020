"""Fair model selection over an ℓ1 path and fairlearn's mitigators, on COMPAS and Adult.

Usage::

    SKFAIR_AUDIT_DATA=/path/to/data python benchmarks/bench_selector_fairlearn.py \
        [--quick] [--resamples 500] [--seed 0] [--adult-rows 12000]

Needs fairlearn (``pip install "skfair_audit[fairlearn]"``).

For each data set, the rows are split (stratified by the label, seeded) into 70% for the
selection and 30% held out. The features are one-hot encoded so that every candidate sees
the same numeric matrix, the protected attribute included:

* **COMPAS**: ProPublica's filter, African-American and Caucasian defendants (5,278 rows),
  the five categorical features; protected attribute race (``race_Caucasian``);
* **Adult**: a stratified sample of ``--adult-rows`` of the 48,842 rows (missing values
  dropped first), all 14 features (numeric ones standardised on the sample); protected
  attribute sex (``sex_Male``).

Candidates (one ``FairModelSelector`` over a ``Pipeline([("model", ...)])``):

* ℓ1 logistic regressions at 8 values of ``C`` from ``l1_min_c`` (the empty model) to
  ``10^3 × l1_min_c``;
* fairlearn's ``ThresholdOptimizer`` (demographic parity, accuracy objective) on a logistic
  regression, and ``ExponentiatedGradient`` (demographic parity, ``max_iter=20``) on a logistic
  regression, both through ``SensitiveFeaturesAdapter`` (the protected column of ``X`` as
  ``sensitive_features``, seeded predictions).

Criterion: ``GroupDifferenceCriterion(0.1)`` with the selection rate against the overall rate
(demographic parity): a candidate is certified when the simultaneous two-sided bounds (family
level 90%, Bonferroni over 3 stratified folds, ``--resamples`` bootstrap replicates) put
both groups' selection-rate disparities within ±0.1 on every fold. On COMPAS the same
candidates are also selected under the FaiTH criterion (δ = 0.04, ε = 0, the default
auditor), individual fairness against group fairness.

The chosen candidate (refit on the 70%) and the most accurate candidate (the plain
``GridSearchCV`` choice) are then audited on the held-out 30% with the same group audit at
90%.

Writes ``benchmarks/results/selector_fairlearn.json`` (``--quick``:
``selector_fairlearn_quick.json``) and the trade-off figure ``selector_fairlearn.png``
(validation error against the worst fold's upper bound on the worst disparity, per
candidate, with ε₀ and the chosen model), read by ``doc/_render_selector.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import sklearn
from _common import Run, write_results
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import Pipeline

from skfair_audit.datasets import fetch_adult, fetch_compas
from skfair_audit.group import DegenerateBootstrapWarning, GroupDisparityAuditor
from skfair_audit.model_selection import (
    FairModelSelector,
    GroupDifferenceCriterion,
    NoFairCandidateWarning,
    SensitiveFeaturesAdapter,
    default_c_path,
    l1_logistic_regression,
)

EPSILON0 = 0.1
ALPHA = 0.1
DELTA = 0.04
N_FOLDS = 3


def compas_data():
    bunch = fetch_compas(preprocessing="propublica_aa_caucasian", download_if_missing=False)
    X = pd.get_dummies(bunch.data, drop_first=True, dtype=float)
    return X, np.asarray(bunch.target), "race_Caucasian"


def adult_data(rows, seed):
    bunch = fetch_adult(download_if_missing=False)
    frame = bunch.frame.dropna()
    target = (frame["income"].astype(str).str.strip(" .") == ">50K").astype(int).to_numpy()
    frame, _, target, _ = train_test_split(frame, target, train_size=rows, stratify=target,
                                           random_state=seed)
    features = frame.drop(columns="income")
    numeric = features.select_dtypes("number").columns
    X = pd.get_dummies(features, drop_first=True, dtype=float)
    X = X.loc[:, X.std() > 0]
    X[numeric] = (X[numeric] - X[numeric].mean()) / X[numeric].std()
    return X.reset_index(drop=True), target, "sex_Male"


def candidates(X, y, protected, seed):
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient

    path = default_c_path(X, y, n_values=8, span=1e3)
    threshold = SensitiveFeaturesAdapter(
        ThresholdOptimizer(estimator=LogisticRegression(max_iter=2000),
                           constraints="demographic_parity", predict_method="predict_proba"),
        protected=protected, random_state=seed)
    reduction = SensitiveFeaturesAdapter(
        ExponentiatedGradient(LogisticRegression(max_iter=2000), DemographicParity(),
                              max_iter=20),
        protected=protected, random_state=seed)
    grid = [{"model__C": [float(c) for c in path]}, {"model": [threshold, reduction]}]
    names = [f"l1 C={c:.3g}" for c in path] + ["ThresholdOptimizer", "ExponentiatedGradient"]
    return Pipeline([("model", l1_logistic_regression())]), grid, names


def group_criterion(resamples):
    return GroupDifferenceCriterion(EPSILON0, auditor=GroupDisparityAuditor(
        None, metric="selection_rate", alpha=ALPHA, n_resamples=resamples))


def held_out_audit(model, X, y, protected, resamples, seed):
    result = GroupDisparityAuditor(
        FrozenEstimator(model), metric="selection_rate", protected=[protected], alpha=ALPHA,
        n_resamples=resamples, random_state=seed).fit(X, y).audit(X, y)
    upper = float(np.max(np.maximum(np.abs(result.lower), np.abs(result.upper))))
    return {"error": float(np.mean(model.predict(X) != y)),
            "worst_disparity": float(np.max(np.abs(result.estimates))),
            "worst_disparity_upper": upper, "certified": bool(upper < EPSILON0),
            "groups": list(result.names),
            "selection_rates": [float(v) for v in result.group_values]}


def table(selector, names):
    results = selector.cv_results_
    return [{"candidate": name,
             "validation_error": float(results["mean_test_error"][k]),
             "statistic": float(results["mean_test_statistic"][k]),
             "lower_bound": float(results["lower_bound"][k]),
             "upper_bound": float(results["upper_bound"][k]),
             "passes": bool(results["passes"][k])}
            for k, name in enumerate(names)]


def run_dataset(name, X, y, protected, args, *, faith=False):
    start = time.perf_counter()
    X_sel, X_out, y_sel, y_out = train_test_split(X, y, test_size=0.3, stratify=y,
                                                  random_state=args.seed)
    estimator, grid, names = candidates(X_sel, y_sel, protected, args.seed)
    cv = StratifiedKFold(N_FOLDS, shuffle=True, random_state=args.seed)
    selector = FairModelSelector(estimator, param_grid=grid,
                                 criterion=group_criterion(args.resamples),
                                 protected=[protected], cv=cv, random_state=args.seed,
                                 on_none="fairest").fit(X_sel, y_sel)
    rows = table(selector, names)
    accurate = int(np.argmin([row["validation_error"] for row in rows]))
    most_accurate = sklearn.clone(estimator).set_params(
        **selector.cv_results_["params"][accurate]).fit(X_sel, y_sel)
    out = {
        "rows": {"selection": len(y_sel), "held_out": len(y_out)},
        "protected": protected, "n_features": X.shape[1],
        "candidates": rows, "chosen": int(selector.best_index_), "most_accurate": accurate,
        "fold_confidence_level": selector.fold_confidence_level_,
        "held_out_chosen": held_out_audit(selector.best_estimator_, X_out, y_out, protected,
                                          args.resamples, args.seed),
        "held_out_most_accurate": held_out_audit(most_accurate, X_out, y_out, protected,
                                                 args.resamples, args.seed),
    }
    if faith:
        faith_selector = FairModelSelector(estimator, param_grid=grid, delta=DELTA,
                                           protected=[protected], cv=cv,
                                           random_state=args.seed, on_none="fairest",
                                           refit=False).fit(X_sel, y_sel)
        out["faith"] = {"delta": DELTA, "candidates": table(faith_selector, names),
                        "chosen": int(faith_selector.best_index_)}
    out["seconds"] = round(time.perf_counter() - start, 1)
    chosen = rows[out["chosen"]]
    print(f"{name}: chosen {chosen['candidate']} (validation error "
          f"{chosen['validation_error']:.3f}, worst-disparity upper bound "
          f"{chosen['upper_bound']:.3f}); held out: {out['held_out_chosen']}", flush=True)
    return out


def figure(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 4.0))
    for ax, (name, res) in zip(np.atleast_1d(axes), results.items(), strict=True):
        rows = res["candidates"]
        error = np.array([r["validation_error"] for r in rows])
        upper = np.array([r["upper_bound"] for r in rows])
        l1 = [k for k, r in enumerate(rows) if r["candidate"].startswith("l1")]
        ax.plot(error[l1], upper[l1], "o-", color="C0", ms=4, label="ℓ1 path (C)")
        for k, marker, color in ((len(rows) - 2, "s", "C1"), (len(rows) - 1, "^", "C3")):
            ax.plot(error[k], upper[k], marker, color=color, ms=7, label=rows[k]["candidate"])
        ax.axhline(EPSILON0, color="C2", ls=":", label=f"ε₀ = {EPSILON0:g}")
        best = res["chosen"]
        ax.plot(error[best], upper[best], "o", mfc="none", mec="k", ms=14, label="chosen")
        ax.set_xlabel("validation error (mean over 3 folds)")
        ax.set_ylabel("upper bound on the worst |selection-rate disparity|")
        ax.set_title(f"{name} (protected: {res['protected'].split('_')[0]})")
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--resamples", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--adult-rows", type=int, default=None)
    args = parser.parse_args(argv)
    args.resamples = args.resamples or (200 if args.quick else 500)
    args.adult_rows = args.adult_rows or (3000 if args.quick else 12000)
    run = Run(__file__, argv, packages=("fairlearn",))
    with warnings.catch_warnings():
        # the empty model predicts one class (degenerate bounds, reported as they are); a
        # data set where nothing is certified falls back to the fairest candidate, recorded
        warnings.filterwarnings("ignore", category=DegenerateBootstrapWarning)
        warnings.filterwarnings("ignore", category=NoFairCandidateWarning)
        warnings.filterwarnings("ignore", module=r"fairlearn\.")  # its pandas-3 notices
        X, y, protected = compas_data()
        results = {"COMPAS": run_dataset("COMPAS", X, y, protected, args, faith=True)}
        X, y, protected = adult_data(args.adult_rows, args.seed)
        results["Adult"] = run_dataset("Adult", X, y, protected, args)
    suffix = "_quick" if args.quick else ""
    payload = {
        "config": {"seed": args.seed, "resamples": args.resamples, "epsilon0": EPSILON0,
                   "alpha": ALPHA, "delta": DELTA, "n_folds": N_FOLDS,
                   "adult_rows": args.adult_rows, "held_out_share": 0.3,
                   "metric": "selection_rate", "target": "overall"},
        "datasets": results,
        "elapsed_seconds": round(run.elapsed(), 1),
    }
    path = write_results(run, payload, suffix=suffix)
    figure(results, run.path(suffix))
    print(f"wrote {path} and the figure in {payload['elapsed_seconds']:.0f} s")


if __name__ == "__main__":
    main()
