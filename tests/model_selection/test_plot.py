"""Tests of the trade-off and coefficient-path figures (the paper's Figures 3 and 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from skfair_audit.faith import FaithAuditor  # noqa: E402
from skfair_audit.model_selection import (  # noqa: E402
    FairModelSelector,
    coefficient_path,
    l1_logistic_regression,
    plot_coefficient_path,
    plot_tradeoff,
)
from skfair_audit.model_selection._plot import _path_parameter  # noqa: E402

GRID = {"logisticregression__C": [3.0, 0.005, 0.03, 0.3]}  # unsorted on purpose


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n)})
    logit = -1.2 + 2.5 * (X.priors == ">3") + 1.0 * (X.priors == "1-3") + 0.6 * (X.group == "b")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy(float)))).astype(int)
    model = make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression())
    selector = FairModelSelector(
        model, param_grid=GRID, delta=0.05, protected=["group"], cv=0.3,
        auditor=FaithAuditor(None, epsilon=0.0, n_resamples=100), random_state=0,
    ).fit(X, y)
    return selector, X, y


def test_tradeoff_plot_draws_the_curves_delta_and_choice(fitted):
    selector, _, _ = fitted
    ax = plot_tradeoff(selector)
    labels = [line.get_label() for line in ax.get_lines()]
    assert "validation error" in labels and "FaiTH statistic" in labels
    error_line = ax.get_lines()[labels.index("validation error")]
    order = np.argsort(GRID["logisticregression__C"])
    np.testing.assert_array_equal(error_line.get_xdata(),
                                  np.sort(GRID["logisticregression__C"]))
    np.testing.assert_array_equal(error_line.get_ydata(),
                                  selector.cv_results_["mean_test_error"][order])
    delta_line = next(line for line in ax.get_lines() if line.get_label().startswith("δ"))
    assert set(delta_line.get_ydata()) == {0.05}
    chosen = next(line for line in ax.get_lines() if line.get_label().startswith("selected"))
    assert chosen.get_xdata()[0] == GRID["logisticregression__C"][selector.best_index_]
    assert ax.get_xscale() == "log"
    plt.close("all")


def test_coefficient_path_plot_has_one_line_per_feature(fitted):
    selector, X, y = fitted
    path = coefficient_path(selector.estimator, selector.cv_results_["params"], X, y)
    fig, ax = plt.subplots()
    assert plot_coefficient_path(path, selected=selector.best_index_, ax=ax) is ax
    labels = [line.get_label() for line in ax.get_lines()]
    for name in path.feature_names:
        assert name in labels
    line = ax.get_lines()[labels.index("priors_>3")]
    order = np.argsort(GRID["logisticregression__C"])
    np.testing.assert_array_equal(line.get_ydata(), path.coef[order, 2])
    plt.close("all")


def test_ambiguous_x_axis_needs_param(fitted):
    selector, _, _ = fitted

    class TwoParams:
        cv_results_ = {"params": [{"a": 1, "b": 1}, {"a": 2, "b": 3}]}

    with pytest.raises(ValueError, match="param="):
        _path_parameter(TwoParams, None)
    with pytest.raises(ValueError, match="numeric"):
        plot_tradeoff(selector, param="missing")
