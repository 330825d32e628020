"""The COMPAS split, encoder and logistic model shared by the FaiTH COMPAS benchmarks
(``bench_model_selection_compas.py``, ``bench_faith_compas_table.py``,
``bench_fair_metric_compas.py``)."""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skfair_audit.model_selection import l1_logistic_regression


def split(X, y, seed):
    """Train 50% / validation 20% / audit 30%, stratified by the label."""
    rest, audit = train_test_split(
        np.arange(len(y)), test_size=0.3, stratify=y, random_state=seed
    )
    train, val = train_test_split(
        rest, test_size=2 / 7, stratify=y[rest], random_state=seed + 1
    )
    return np.sort(train), np.sort(val), np.sort(audit)


def priors_thermometer(priors):
    """The paper's priors variables: "has prior crimes" (> 0) and "more than 3 prior crimes"."""
    values = np.asarray(priors, dtype=object).reshape(-1)
    return np.column_stack([values != "0", values == ">3"]).astype(float)


def priors_names(transformer, names_in):
    return np.array(["has prior crimes", "more than 3 prior crimes"], dtype=object)


def encoder():
    """One-hot (first level dropped) for sex, race, age, charge; thermometer for priors."""
    return ColumnTransformer(
        [
            ("onehot", OneHotEncoder(drop="first"),
             ["sex", "race", "age_cat", "c_charge_degree"]),
            ("priors", FunctionTransformer(priors_thermometer, feature_names_out=priors_names),
             ["priors_cat"]),
        ],
        verbose_feature_names_out=False,
    )


def model():
    return make_pipeline(encoder(), l1_logistic_regression())
