"""
=====================================================
Auditing a COMPAS recidivism model with FaiTH
=====================================================

Train a logistic regression on 70% of the COMPAS data (ProPublica's filter, African-American
and Caucasian defendants; Xue, Yurochkin & Sun 2020, §5), audit it on the other 30% with
black-box access, and draw the heat map of the adversarial count changes ``n(Q - f_n)`` (the
paper's Figure 2).

The data are read from the data home (``SKFAIR_AUDIT_DATA`` or ``~/skfair_audit_data``); this
script never downloads. Run it as::

    SKFAIR_AUDIT_DATA=/path/to/data python doc/examples/plot_faith_compas.py [figure.png]

The figure goes to the path given on the command line, or to
``benchmarks/results/faith_compas_table_heatmap.png``.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from skfair_audit.datasets import fetch_compas  # noqa: E402
from skfair_audit.faith import FaithAuditor  # noqa: E402

FEATURES = ["sex", "race", "age_cat", "priors_cat", "c_charge_degree"]
DEFAULT_OUTPUT = (Path(__file__).resolve().parents[2]
                  / "benchmarks/results/faith_compas_table_heatmap.png")


def main(output):
    compas = fetch_compas(preprocessing="propublica_aa_caucasian", download_if_missing=False)
    X, y = compas.data[FEATURES], compas.target
    X_train, X_audit, y_train, y_audit = train_test_split(X, y, test_size=0.3, random_state=0)

    # %%
    # The auditor fits a clone of the model and learns the sensitive-subspace fair metric on
    # the training part; the grid is sex x race x age x priors x charge x label = 144 cells.
    # At epsilon = 0 only moves along the sensitive subspace (changing race or sex) are free.
    model = make_pipeline(OneHotEncoder(), LogisticRegression())
    auditor = FaithAuditor(
        model,
        protected=["race", "sex"],
        epsilon=0.0,
        delta=0.05,
        n_resamples=1000,
        random_state=0,
    ).fit(X_train, y_train)
    result = auditor.audit(X_audit, y_audit)
    print(result)
    print(f"accuracy on the audit data: {auditor.estimator_.score(X_audit, y_audit):.3f}")

    # %%
    # The largest moves of the worst-case plan: who would be treated worse had they belonged
    # to the other group.
    print(result.moves_frame().head(10).to_string(index=False))

    # %%
    # Heat map of n(Q - f_n): red cells gain individuals under the worst case, blue cells
    # lose them. Rows: the protected attributes; columns: the other features.
    figure = result.plot(rows=["race", "sex"], columns=["age_cat", "priors_cat", "c_charge_degree"])
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=120, bbox_inches="tight")
    print(f"figure written to {output}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
