"""How the FaiTH statistic grows with the budget ε on real data, and where it saturates.

ψ̂(ε) rises from ψ̂(0) (free moves only: changes of the protected attributes and what the fair
metric deems equivalent to them) to ψ̂(∞) (every allowed move, at any cost). A budget past
ε₉₅, where ψ̂ reaches 95% of ψ̂(∞), measures how often the model can be made to err at any
cost rather than at a small one; the audit warns (``SaturatedBudgetWarning``) when ψ̂(ε) is
within 1% of ψ̂(∞). This script draws the curve on

* **UCI Adult**, continuous features (age, education-num, hours-per-week, capital-gain,
  capital-loss as numbers; sex and race codes protected): a standardised logistic regression
  and the default fair metric fitted on the training file, which is also the reference set
  (``space="reference"``, the default on numeric features); the test file audited;
* **COMPAS**, the demonstration's setting (sex, race, age, priors, charge degree as
  categories, a one-hot logistic regression on a stratified 70% split, seed 0): the grid.

For each: ψ̂ on a grid of budgets, ψ̂(0), ψ̂(∞), ε½ and ε₉₅, and whether the saturation
warning fires at the former API default ε = 0.1 and at ε½. Output:
``benchmarks/results/faith_budget.json`` and ``faith_budget.png``; the user guide's
"Choosing the budget" fragment is generated from them by ``doc/make_reproduction_tables.py``.

Run from the repository root (the data home must hold the COMPAS and Adult files, e.g.
``export SKFAIR_AUDIT_DATA=~/skfair_audit_data``)::

    python benchmarks/bench_faith_budget.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import Run, write_results
from _faith_data import adult_numeric
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skfair_audit.datasets import fetch_compas
from skfair_audit.faith import FaithAuditor, SaturatedBudgetWarning

OLD_DEFAULT = 0.1
N_POINTS = 40


def adult():
    """Adult with numeric features: the training file fits, the test file is audited."""
    X, y, n_train = adult_numeric()
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    auditor = FaithAuditor(model, protected=["sex", "race"], n_resamples=200, random_state=0)
    return "Adult", auditor, (X.iloc[:n_train], y[:n_train]), (X.iloc[n_train:], y[n_train:])


def compas():
    """The demonstration's first split of COMPAS (grid sample space)."""
    data = fetch_compas(preprocessing="propublica_aa_caucasian", download_if_missing=False)
    X = data.data[["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]]
    X_train, X_audit, y_train, y_audit = train_test_split(
        X, data.target, test_size=0.3, random_state=0, stratify=data.target)
    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"),
                          LogisticRegression(max_iter=1000))
    auditor = FaithAuditor(model, protected=["race", "sex"], n_resamples=200, random_state=0)
    return "COMPAS", auditor, (X_train, y_train), (X_audit, y_audit)


def curve(name, auditor, train, audit):
    start = time.perf_counter()
    auditor.fit(*train)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SaturatedBudgetWarning)
        at_old = auditor.set_params(epsilon=OLD_DEFAULT).audit(*audit)
    half, most = at_old.saturation_budgets
    with warnings.catch_warnings(record=True) as caught_half:
        warnings.simplefilter("always", SaturatedBudgetWarning)
        at_half = auditor.set_params(epsilon=half).audit(*audit)
    top = max(4 * most, 2 * OLD_DEFAULT)
    epsilons = np.unique(np.concatenate([np.linspace(0.0, top, N_POINTS), [half, most]]))
    values = [auditor.set_params(epsilon=float(e)).audit_value(*audit) for e in epsilons]
    return {
        "name": name,
        "space": auditor.space_kind_,
        "n_audit": int(at_old.n),
        "n_cells": int(at_old.n_cells),
        "metric": type(auditor.metric_).__name__,
        "estimand": at_old.estimand,
        "psi_zero": at_old.zero_cost_statistic,
        "psi_unlimited": at_old.max_statistic,
        "epsilon_half": half,
        "epsilon_95": most,
        "old_default": {
            "epsilon": OLD_DEFAULT, "statistic": at_old.statistic,
            "share_of_unlimited": at_old.statistic / at_old.max_statistic,
            "saturated": at_old.budget_saturated,
            "warned": any(issubclass(w.category, SaturatedBudgetWarning) for w in caught),
        },
        "at_half": {
            "epsilon": half, "statistic": at_half.statistic,
            "saturated": at_half.budget_saturated,
            "warned": any(issubclass(w.category, SaturatedBudgetWarning)
                          for w in caught_half),
        },
        "epsilons": epsilons.tolist(),
        "values": [float(v) for v in values],
        "seconds": time.perf_counter() - start,
    }


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 3.6))
    for ax, row in zip(np.atleast_1d(axes), rows, strict=True):
        ax.plot(row["epsilons"], row["values"], color="C0", label="ψ̂(ε)")
        ax.axhline(row["psi_unlimited"], color="grey", ls=":", label="ψ̂(∞)")
        for eps, label, color in ((row["epsilon_half"], "ε½", "C1"),
                                  (row["epsilon_95"], "ε₉₅", "C2"),
                                  (OLD_DEFAULT, "former default ε", "C3")):
            ax.axvline(eps, color=color, ls="--", label=f"{label} = {eps:.3g}")
        ax.set_title(f"{row['name']} ({row['space']} space, n = {row['n_audit']:,})")
        ax.set_xlabel("budget ε (units of the fair metric's cost)")
        ax.set_ylabel("ψ̂(ε)")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    run = Run(__file__)
    rows = [curve(*data()) for data in (adult, compas)]
    for row in rows:
        print(f"{row['name']}: psi(0) = {row['psi_zero']:.4f}, psi(inf) = "
              f"{row['psi_unlimited']:.4f}, eps_half = {row['epsilon_half']:.4g}, eps_95 = "
              f"{row['epsilon_95']:.4g}; at 0.1: {row['old_default']['statistic']:.4f} "
              f"(saturated: {row['old_default']['saturated']}); {row['seconds']:.1f} s")
    plot(rows, run.path())
    payload = {
        "settings": {"old_default": OLD_DEFAULT, "n_points": N_POINTS},
        "data": rows,
    }
    print(f"wrote {write_results(run, payload)}")


if __name__ == "__main__":
    main()
