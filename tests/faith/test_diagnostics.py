"""Metric diagnostics, the zero-cost summary and the DegenerateMetricWarning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit.faith import (
    DegenerateMetricWarning,
    EuclideanMetric,
    FaithAuditor,
    MahalanobisMetric,
    PrecomputedMetric,
    ProtectedEuclideanMetric,
    SensitiveSubspaceMetric,
    faith_audit,
    metric_diagnostics,
    prepare_transport,
    zero_cost_summary,
)
from skfair_audit.faith._diagnostics import FREE_SHARE_LIMIT, TRIVIAL_SHARE, MetricDiagnostics
from skfair_audit.report import AuditReport, faith_section

LEGACY = {"min_auc": None, "n_components": None, "standardize": False, "C": 1.0}


def one_hot(codes, n_levels):
    out = np.zeros((codes.size, n_levels))
    out[np.arange(codes.size), codes] = 1.0
    return out


@pytest.fixture(scope="module")
def encoded():
    """Race (4 levels, cols 0-3) and sex (4-5) protected; zip (6-9), age (10-12) not."""
    rng = np.random.default_rng(0)
    n = 2000
    race = rng.integers(0, 4, n)
    zip_code = np.where(rng.random(n) < 0.6, race, rng.integers(0, 4, n))
    X = np.hstack([one_hot(race, 4), one_hot(rng.integers(0, 2, n), 2), one_hot(zip_code, 4),
                   one_hot(rng.integers(0, 3, n), 3)])
    names = [f"race_{k}" for k in range(4)] + ["sex_F", "sex_M"] + [
        f"zip_{k}" for k in range(4)] + [f"age_{k}" for k in range(3)]
    return X, [[0, 1, 2, 3], [4, 5]], names


def difference_basis(columns_by_feature, n_features):
    """Orthonormal basis of the one-hot differences e_a - e_b within each listed feature."""
    vectors = []
    for columns in columns_by_feature:
        for a in columns[1:]:
            v = np.zeros(n_features)
            v[columns[0]], v[a] = 1.0, -1.0
            vectors.append(v)
    q, _ = np.linalg.qr(np.array(vectors).T)
    return q.T


def same_span(A, B):
    if A.shape[0] != B.shape[0]:
        return False
    projector = B.T @ B
    return np.allclose(A @ projector, A, atol=1e-8)


# --------------------------------------------------------------------------- metric diagnostics
def test_non_protected_variation_is_the_one_hot_differences(encoded):
    X, groups, names = encoded
    # Euclidean on one zip column: the 2 age directions and 2 of the 3 zip directions are free.
    metric = EuclideanMetric(columns=[6]).fit(X)
    d = metric_diagnostics(metric, X, groups, feature_names=names)
    assert d.n_features == 13 and d.n_non_protected == 3 + 2
    assert d.n_free == 4 and d.degenerate
    # By hand: free = the differences that do not change column 6.
    free = difference_basis([[7, 8, 9], [10, 11, 12]], 13)
    assert same_span(d.free_directions, free)
    assert d.free_sources == ("not measured by EuclideanMetric",) * 4
    frame = d.to_frame()
    assert frame.columns.tolist() == ["source", "n_members", "auc", "C", "kept",
                                      "free_directions"]
    assert frame["free_directions"].sum() == 4


def test_protected_euclidean_frees_nothing_beyond_the_protected(encoded):
    X, groups, names = encoded
    d = metric_diagnostics(ProtectedEuclideanMetric(groups).fit(X), X, feature_names=names)
    assert (d.n_free, d.n_non_protected, d.degenerate) == (0, 5, False)
    assert d.free_sources == () and d.responsible() == []


def test_legacy_construction_frees_every_direction_with_many_levels(encoded):
    X, groups, names = encoded
    # One regression per race level + sex: 5 coefficient vectors in the 5-dimensional space of
    # one-hot differences (the regressions' coefficients lie in it), so everything is free.
    legacy = SensitiveSubspaceMetric(groups, **LEGACY).fit(X)
    d = metric_diagnostics(legacy, X, feature_names=names)
    assert (d.n_free, d.n_non_protected) == (5, 5) and d.degenerate
    assert same_span(d.free_directions, difference_basis([[6, 7, 8, 9], [10, 11, 12]], 13))
    # Each direction is attributed to the level whose regression brought it, in order.
    by_source = {r["source"]: r["free_directions"] for r in d.sources}
    assert sum(by_source.values()) == 5
    assert d.free_sources[:4] == ("race_0", "race_1", "race_2", "race_3")
    assert "race_0 (AUC" in d.summary()["free_sources"]
    # The default frees the zip code (a strong proxy of every race level), not the age.
    default = metric_diagnostics(SensitiveSubspaceMetric(groups).fit(X), X,
                                 feature_names=names)
    assert default.n_free == 3 and default.degenerate
    zip_span = difference_basis([[6, 7, 8, 9]], 13)
    along_zip = np.linalg.norm(default.free_directions @ zip_span.T, axis=1)
    assert np.all(along_zip > 0.98)  # nearly all of it: the regressions see the age a little
    assert sum(r["free_directions"] for r in default.sources) == default.n_free


def test_free_count_matches_the_kernel_by_hand(encoded):
    X, groups, names = encoded
    metric = SensitiveSubspaceMetric(groups, n_components=2).fit(X)
    d = metric_diagnostics(metric, X, feature_names=names)
    # Kernel of the map restricted to the non-protected differences, by a rank computation.
    D = difference_basis([[6, 7, 8, 9], [10, 11, 12]], 13)
    image = metric.transform(D)
    assert d.n_free == 5 - np.linalg.matrix_rank(image, tol=1e-8)
    np.testing.assert_allclose(metric.transform(d.free_directions), 0.0, atol=1e-8)


def test_diagnostics_need_a_linear_map(encoded):
    X, groups, _ = encoded
    with pytest.raises(ValueError, match="no linear map"):
        metric_diagnostics(PrecomputedMetric(np.zeros((2, 2))).fit(), X, groups)
    with pytest.raises(ValueError, match="names"):
        metric_diagnostics(EuclideanMetric().fit(X), X, groups, feature_names=["a"])
    d = metric_diagnostics(MahalanobisMetric(np.eye(13)).fit(X), X)  # nothing protected
    assert (d.n_free, d.n_non_protected) == (0, 9)


def test_free_share_threshold_is_strictly_most():
    def diagnostics(n_free, n_total):
        return MetricDiagnostics("M", 4, n_total, n_free, (), (), np.empty((n_free, 4)))

    assert FREE_SHARE_LIMIT == 0.5
    assert not diagnostics(2, 4).degenerate  # half is not "most"
    assert diagnostics(3, 5).degenerate
    assert not diagnostics(0, 0).degenerate


# --------------------------------------------------------------------------- zero-cost summary
def brute_force_free_moves(loss, cost, forbidden, counts):
    allowed = ~forbidden & np.isfinite(cost)
    gain = loss[None, :] - loss[:, None]
    free_gain = np.where(allowed & (cost == 0), gain, -np.inf).max(axis=1)
    free_gain = np.maximum(free_gain, 0.0)
    any_gain = np.maximum(np.where(allowed, gain, -np.inf).max(axis=1), 0.0)
    f = counts / counts.sum()
    return {"zero_cost_statistic": f @ free_gain, "max_statistic": f @ any_gain,
            "zero_cost_share": f[free_gain > 0].sum(), "reachable_share": f[any_gain > 0].sum()}


@pytest.mark.parametrize("seed", range(6))
def test_zero_cost_summary_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    K = 30
    loss = rng.choice([0.0, 1.0], K) if seed % 2 else rng.random(K)
    cost = rng.choice([0.0, 0.5, 2.0, np.inf], size=(K, K), p=[0.2, 0.4, 0.3, 0.1])
    np.fill_diagonal(cost, 0.0)
    forbidden = rng.random((K, K)) < 0.2
    np.fill_diagonal(forbidden, False)
    counts = rng.integers(0, 5, K)
    counts[0] = 3
    got = zero_cost_summary(prepare_transport(loss, cost, forbidden), counts)
    expected = brute_force_free_moves(loss, cost, forbidden, counts)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


# --------------------------------------------------------------------------- the warning
def _frame(n=3000, seed=1):
    """A 4-level group (protected) weakly predicted by zip, priors and charge, which the model
    uses (and the group a little): COMPAS-like, one-hot columns group 0-3, zip 4-5, priors 6-8,
    charge 9-10."""
    rng = np.random.default_rng(seed)
    group = rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])
    shift = pd.Series(group).map({"a": 0.25, "b": 0.0, "c": -0.15, "d": 0.1}).to_numpy()
    zip_code = np.where(rng.random(n) < 0.4 + shift, "z1", "z0")
    priors = np.where(rng.random(n) < 0.4 + shift / 2, ">3",
                      np.where(rng.random(n) < 0.5, "0", "1-3"))
    charge = np.where(rng.random(n) < 0.6 - shift / 2, "F", "M")
    X = pd.DataFrame({"group": group, "zip": zip_code, "priors": priors, "charge": charge})
    risk = (0.1 + 0.25 * (X.priors == ">3") + 0.1 * (X.priors == "1-3") + 0.15 * (X.zip == "z1")
            + 0.1 * (X.charge == "F") + 0.12 * (X.group == "a") - 0.1 * (X.group == "d"))
    y = (rng.random(n) < risk).astype(int)
    return X, y


@pytest.fixture(scope="module")
def proxy_data():
    X, y = _frame(seed=1)
    X_audit, y_audit = _frame(seed=2)
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(X, y)
    return X, y, X_audit, y_audit, model


def _audit(proxy_data, metric="sensitive_subspace", epsilon=0.0):
    X, y, X_audit, y_audit, model = proxy_data
    auditor = FaithAuditor(FrozenEstimator(model), protected=["group"], metric=metric,
                           epsilon=epsilon, delta=0.05, n_resamples=50, random_state=0)
    return auditor.fit(X, y), X_audit, y_audit


def test_estimator_warns_when_the_metric_frees_almost_every_direction(proxy_data):
    # Euclidean on a zip column: the priors and charge directions are free.
    auditor, X_audit, y_audit = _audit(proxy_data, metric=EuclideanMetric(columns=[4]))
    assert auditor.metric_diagnostics_.n_free == 3
    with pytest.warns(DegenerateMetricWarning, match="leaves 3 of the 4 directions"):
        result = auditor.audit(X_audit, y_audit)
    assert result.degenerate_metric and result.metric_diagnostics.n_free == 3


def test_estimator_warns_when_every_correct_individual_moves_for_free(proxy_data):
    # One direction per level: 4 directions span the 4 non-protected dimensions.
    auditor, X_audit, y_audit = _audit(
        proxy_data, metric=SensitiveSubspaceMetric([[0, 1, 2, 3]], **LEGACY)
    )
    assert auditor.metric_diagnostics_.n_free == 4
    with pytest.warns(DegenerateMetricWarning) as caught:
        result = auditor.audit(X_audit, y_audit)
    message = str(caught[0].message)
    # It names the attribute levels responsible and points to the remedies in the docs, in
    # two sentences.
    assert "group_a (AUC" in message and message.count(". ") == 1
    assert message.endswith("user_guide/fair_metric.html#the-degeneratemetricwarning")
    guide = Path(__file__).parents[2] / "doc" / "user_guide" / "fair_metric.rst"
    assert "\nThe :class:`DegenerateMetricWarning`\n---" in guide.read_text(encoding="utf-8")
    assert "min_auc" in guide.read_text(encoding="utf-8")
    assert result.zero_cost_statistic == pytest.approx(result.max_statistic)
    # For the 0-1 loss the zero-cost share is psi at epsilon = 0.
    assert result.zero_cost_share == pytest.approx(result.statistic)


def test_default_metric_does_not_warn(proxy_data):
    auditor, X_audit, y_audit = _audit(proxy_data)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateMetricWarning)
        result = auditor.audit(X_audit, y_audit)
    d = result.metric_diagnostics
    assert not result.degenerate_metric and d.free_share <= FREE_SHARE_LIMIT
    assert result.zero_cost_statistic < TRIVIAL_SHARE * result.max_statistic
    # The model uses the group a little: some decisions flip for free, far from all.
    assert 0 < result.zero_cost_share < 0.5 * result.reachable_share <= 1


def test_functional_api_warns_from_the_audit_alone():
    # Two labels x four feature cells; every move within a label is free (a metric that frees
    # everything): psi(0) equals its unlimited-budget value.
    loss = np.array([0, 1, 0, 1, 1, 0, 1, 0], dtype=float)
    labels = np.repeat([0, 1], 4)
    forbidden = labels[:, None] != labels[None, :]
    counts = np.array([40, 10, 30, 20, 25, 25, 15, 35])
    with pytest.warns(DegenerateMetricWarning, match="100% of its value"):
        result = faith_audit(counts, loss, np.zeros((8, 8)), epsilon=0.0, forbidden=forbidden,
                             n_resamples=20, random_state=0)
    assert result.degenerate_metric
    # A metric charging for the moves between cells 0-1 and 2-3: psi(0) falls, no warning.
    cost = np.ones((8, 8))
    np.fill_diagonal(cost, 0)
    cost[0, 3] = cost[3, 0] = cost[4, 7] = cost[7, 4] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateMetricWarning)
        calm = faith_audit(counts, loss, cost, epsilon=0.0, forbidden=forbidden,
                           n_resamples=20, random_state=0)
    assert calm.zero_cost_statistic < TRIVIAL_SHARE * calm.max_statistic


def test_functional_api_warns_on_degenerate_metric_diagnostics(encoded):
    X, groups, names = encoded
    loss = np.array([0.0, 1.0, 0.0, 1.0])
    cost = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=float)
    legacy = metric_diagnostics(SensitiveSubspaceMetric(groups, **LEGACY).fit(X), X,
                                feature_names=names)
    with pytest.warns(DegenerateMetricWarning, match="race_0"):
        result = faith_audit([20, 20, 20, 20], loss, cost, epsilon=0.0,
                             metric_diagnostics=legacy, n_resamples=20, random_state=0)
    assert result.metric_diagnostics is legacy
    healthy = metric_diagnostics(ProtectedEuclideanMetric(groups).fit(X), X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateMetricWarning)
        faith_audit([20, 20, 20, 20], loss, cost, epsilon=0.0, metric_diagnostics=healthy,
                    n_resamples=20, random_state=0)


def test_trivial_maximum_threshold():
    # Cell 0 (loss 0) can reach cell 1 (loss 1) for free, cell 2 only at a cost.
    loss = np.array([0.0, 1.0, 0.0])
    cost = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], dtype=float)
    cost[2, 1] = 3.0

    def audit(counts):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = faith_audit(counts, loss, cost, epsilon=0.0, n_resamples=10,
                                 random_state=0)
        return result, any(issubclass(w.category, DegenerateMetricWarning) for w in caught)

    # psi(0) / psi(inf) = 95 / 100: warns; 94 / 100: does not.
    at, warned_at = audit([95, 0, 5])
    assert at.zero_cost_statistic / at.max_statistic == pytest.approx(TRIVIAL_SHARE)
    assert warned_at
    below, warned_below = audit([94, 0, 6])
    assert not warned_below and not below.degenerate_metric


# --------------------------------------------------------------------------- results and reports
def test_diagnostics_in_to_frame_and_report(proxy_data):
    auditor, X_audit, y_audit = _audit(proxy_data, metric=EuclideanMetric(columns=[4]))
    with pytest.warns(DegenerateMetricWarning):
        result = auditor.audit(X_audit, y_audit)
    row = result.to_frame().iloc[0]
    assert row["free_directions"] == 3 and row["non_protected_directions"] == 4
    assert row["degenerate_metric"] and row["zero_cost_share"] == result.zero_cost_share
    assert "3 of 4 non-protected directions free" in str(result)
    report = AuditReport("t", "audited", (faith_section(result, plot=False),))
    html, markdown = report.to_html(), report.to_markdown()
    data = json.loads(report.to_json())
    for text in (html, markdown, json.dumps(data, ensure_ascii=False)):
        assert "free metric directions" in text and "3 of 4 non-protected" in text
        assert "reach a worse decision at zero cost" in text
        assert "the fair metric looks degenerate" in text
        assert "not measured by EuclideanMetric" in text  # the sources table


def test_result_without_metric_has_empty_diagnostic_columns():
    loss = np.array([0.0, 1.0])
    # 60 rows, and a budget that binds (half of the rows can reach an error, at cost 1)
    result = faith_audit([30, 30], loss, np.array([[0, 1.0], [1.0, 0]]), epsilon=0.2,
                         n_resamples=10, random_state=0)
    row = result.to_frame().iloc[0]
    assert row["free_directions"] is None and row["zero_cost_share"] == 0.0
    assert row["reachable_share"] == 0.5 and not row["degenerate_metric"]
