"""Fair metrics against brute-force references (double loops, pinv projectors, sklearn fits)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from skfair_audit.faith._metric import (
    CallableMetric,
    EuclideanMetric,
    MahalanobisMetric,
    PrecomputedMetric,
    SensitiveSubspaceMetric,
    check_cost_matrix,
)


# --------------------------------------------------------------------------- data
def one_hot(codes, n_levels):
    out = np.zeros((codes.size, n_levels))
    out[np.arange(codes.size), codes] = 1.0
    return out


@pytest.fixture(scope="module")
def training():
    """One-hot data: sex (cols 0-1), race (2-3), age (4-6), priors (7-9), charge (10-11).

    Race and sex are correlated with priors/charge so the logistic regressions are non-trivial.
    """
    rng = np.random.default_rng(0)
    n = 600
    sex = rng.integers(0, 2, n)
    race = rng.integers(0, 2, n)
    age = rng.integers(0, 3, n)
    priors = np.clip(race + rng.integers(0, 2, n), 0, 2)
    charge = (rng.random(n) < 0.3 + 0.4 * sex).astype(int)
    X = np.hstack([
        one_hot(sex, 2), one_hot(race, 2), one_hot(age, 3), one_hot(priors, 3), one_hot(charge, 2)
    ])
    return X, {"sex": [0, 1], "race": [2, 3], "age": [4, 5, 6], "priors": [7, 8, 9],
               "charge": [10, 11]}


#: The original SenSR construction: every level's direction, raw coordinates, C = 1.
LEGACY = {"min_auc": None, "n_components": None, "standardize": False, "C": 1.0}


def reference_directions(X, groups, C=1.0):
    """Independent SenSR directions: LR coefs (binary or one-vs-rest) + protected unit vectors."""
    d = X.shape[1]
    protected = sorted(j for g in groups for j in g)
    free = [j for j in range(d) if j not in protected]
    directions = []
    for g in groups:
        level = X[:, g].argmax(axis=1) if len(g) > 1 else X[:, g[0]]
        observed = np.unique(level)
        targets = observed[1:] if observed.size == 2 else observed
        for t in targets:
            coef = LogisticRegression(C=C, solver="newton-cholesky", max_iter=1000, tol=1e-12).fit(
                X[:, free], level == t).coef_
            v = np.zeros(d)
            v[free] = coef.ravel()
            directions.append(v)
    directions.extend(np.eye(d)[protected])
    return np.array(directions)


def brute_force_cost(A, B, sigma, exponent=2.0):
    out = np.empty((len(A), len(B)))
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            diff = a - b
            out[i, j] = max(diff @ sigma @ diff, 0.0) ** (exponent / 2)
    return out


# --------------------------------------------------------------------------- check_cost_matrix
def test_check_cost_matrix_accepts_inf_and_rejects_bad_input():
    ok = check_cost_matrix([[0, np.inf], [2, 0]], 2)
    assert ok.dtype == np.float64 and np.isinf(ok[0, 1])
    with pytest.raises(ValueError, match="square"):
        check_cost_matrix(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="3 cells"):
        check_cost_matrix(np.zeros((2, 2)), 3)
    with pytest.raises(ValueError, match="NaN"):
        check_cost_matrix([[0, np.nan], [1, 0]])
    with pytest.raises(ValueError, match="negative"):
        check_cost_matrix([[0, -0.5], [1, 0]])
    with pytest.raises(ValueError, match="zero diagonal"):
        check_cost_matrix([[0, 1], [1, 2]])


# --------------------------------------------------------------------------- sensitive subspace
@pytest.mark.parametrize("protected", [["sex", "race"], ["age"], ["sex", "age"]])
def test_sensitive_subspace_projector_matches_pinv_reference(training, protected):
    X, cols = training
    groups = [cols[p] for p in protected]
    metric = SensitiveSubspaceMetric(groups, **LEGACY).fit(X)
    sigma = metric.sigma_
    d = X.shape[1]
    assert sigma.shape == (d, d) and metric.n_features_in_ == d
    np.testing.assert_allclose(sigma, sigma.T, atol=1e-12)
    np.testing.assert_allclose(sigma @ sigma, sigma, atol=1e-10)

    A = reference_directions(X, groups).T
    # Sigma kills every LR coefficient direction and every protected unit vector.
    np.testing.assert_allclose(sigma @ A, 0.0, atol=1e-6)
    # ... and equals I - A A^+ computed independently.
    np.testing.assert_allclose(sigma, np.eye(d) - A @ np.linalg.pinv(A), atol=1e-6)
    rank = np.linalg.matrix_rank(A)
    assert metric.sensitive_directions_.shape == (rank, d)
    assert np.linalg.matrix_rank(sigma) == d - rank
    np.testing.assert_allclose(
        metric.sensitive_directions_ @ metric.sensitive_directions_.T, np.eye(rank), atol=1e-10
    )
    n_coef = sum(1 if len(cols[p]) == 2 else len(cols[p]) for p in protected)
    assert metric.coef_directions_.shape == (n_coef, d)


def test_sensitive_subspace_protected_move_is_free_and_exact(training):
    X, cols = training
    metric = SensitiveSubspaceMetric([cols["sex"], cols["race"]]).fit(X)
    a = X[:5].copy()
    b = a.copy()
    b[:, cols["sex"]] = 1 - b[:, cols["sex"]]  # flip sex only
    b[:, cols["race"]] = 1 - b[:, cols["race"]]  # and race
    cost = metric.cost_matrix(a, b)
    assert np.all(np.diagonal(cost) == 0.0)
    c = a.copy()
    c[:, cols["charge"]] = 1 - c[:, cols["charge"]]  # a non-protected move costs something
    assert np.all(np.diagonal(metric.cost_matrix(a, c)) > 1e-3)


@pytest.mark.parametrize("exponent", [2, 1, 3.5])
def test_sensitive_subspace_cost_matches_double_loop(training, exponent):
    X, cols = training
    metric = SensitiveSubspaceMetric([cols["race"]], exponent=exponent, **LEGACY).fit(X)
    A, B = X[:30], X[100:117]
    np.testing.assert_allclose(
        metric.cost_matrix(A, B), brute_force_cost(A, B, metric.sigma_, exponent), atol=1e-10
    )
    square = metric.cost_matrix(A)
    assert square.shape == (30, 30)
    assert np.all(np.diagonal(square) == 0.0) and np.all(square >= 0.0)
    np.testing.assert_allclose(square, brute_force_cost(A, A, metric.sigma_, exponent), atol=1e-10)
    np.testing.assert_allclose(metric.transform(A), A @ metric.sigma_, atol=1e-12)


def test_sensitive_subspace_group_spellings(training):
    X, _ = training
    # A single int and a list of ints are single-column attributes.
    Xb = np.column_stack([X[:, 1], X[:, 3], X[:, 4:]])  # sex, race as 0/1 columns
    m_int = SensitiveSubspaceMetric(0, **LEGACY).fit(Xb)
    m_list = SensitiveSubspaceMetric([0], **LEGACY).fit(Xb)
    m_nested = SensitiveSubspaceMetric([[0]], **LEGACY).fit(Xb)
    np.testing.assert_allclose(m_int.sigma_, m_list.sigma_)
    np.testing.assert_allclose(m_int.sigma_, m_nested.sigma_)
    two = SensitiveSubspaceMetric([0, 1], **LEGACY).fit(Xb)
    assert two.protected_groups_ == [[0], [1]]
    np.testing.assert_allclose(two.sigma_ @ reference_directions(Xb, [[0], [1]]).T, 0, atol=1e-6)


def test_sensitive_subspace_constant_attribute_warns(training):
    X, cols = training
    X = X.copy()
    X[:, cols["sex"]] = [1.0, 0.0]  # everyone in the first level
    with pytest.warns(UserWarning, match="constant"):
        metric = SensitiveSubspaceMetric([cols["sex"]]).fit(X)
    assert metric.coef_directions_.shape[0] == 0
    np.testing.assert_allclose(metric.sigma_[:, cols["sex"]], 0.0, atol=1e-12)
    free = [j for j in range(X.shape[1]) if j not in cols["sex"]]
    np.testing.assert_allclose(metric.projector_[np.ix_(free, free)], np.eye(len(free)),
                               atol=1e-12)
    # Standardised: the metric is the diagonal Mahalanobis metric of the free columns.
    scale = X.std(axis=0)
    np.testing.assert_allclose(metric.sigma_[np.ix_(free, free)], np.diag(1 / scale[free] ** 2),
                               rtol=1e-12)


def test_sensitive_subspace_errors(training):
    X, _ = training
    with pytest.raises(ValueError, match="out of range"):
        SensitiveSubspaceMetric([[0, 99]]).fit(X)
    with pytest.raises(ValueError, match="twice"):
        SensitiveSubspaceMetric([[0, 1], [1, 2]]).fit(X)
    with pytest.raises(ValueError, match="empty"):
        SensitiveSubspaceMetric([]).fit(X)
    metric = SensitiveSubspaceMetric([0]).fit(X)
    with pytest.raises(ValueError, match="features"):
        metric.cost_matrix(X[:, :5])
    with pytest.raises(ValueError, match="exponent"):
        clone(metric).set_params(exponent=-1).fit(X).cost_matrix(X[:3])


# --------------------------------------------------------------------------- fixed metrics
def test_mahalanobis_matches_double_loop_and_validates():
    rng = np.random.default_rng(1)
    L = rng.normal(size=(4, 2))
    sigma = L @ L.T  # PSD, rank 2
    A, B = rng.normal(size=(9, 4)), rng.normal(size=(6, 4))
    for p in (2, 1, 0.5):
        metric = MahalanobisMetric(sigma, exponent=p)
        np.testing.assert_allclose(
            metric.cost_matrix(A, B), brute_force_cost(A, B, sigma, p), atol=1e-10
        )
    T = MahalanobisMetric(sigma).transform(A)
    np.testing.assert_allclose(T @ T.T, A @ sigma @ A.T, atol=1e-10)
    square = MahalanobisMetric(sigma).fit(A).cost_matrix(A)
    assert np.all(np.diagonal(square) == 0.0)
    with pytest.raises(ValueError, match="symmetric"):
        MahalanobisMetric(np.array([[1.0, 0.5], [0.0, 1.0]])).cost_matrix(A[:, :2])
    with pytest.raises(ValueError, match="positive semi-definite"):
        MahalanobisMetric(np.diag([1.0, -1.0])).cost_matrix(A[:, :2])
    with pytest.raises(ValueError, match="square"):
        MahalanobisMetric(np.ones((2, 3))).fit()
    with pytest.raises(ValueError, match="expects 4"):
        MahalanobisMetric(sigma).cost_matrix(A[:, :3])


def test_euclidean_on_columns():
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(3, 4))
    cols = [0, 2]
    expected = np.array([[np.sum((a[cols] - b[cols]) ** 2) for b in B] for a in A])
    np.testing.assert_allclose(EuclideanMetric(cols).cost_matrix(A, B), expected, atol=1e-12)
    np.testing.assert_allclose(
        EuclideanMetric(exponent=1).cost_matrix(A, B),
        np.linalg.norm(A[:, None] - B[None], axis=2), atol=1e-12,
    )
    with pytest.raises(ValueError, match="out of range"):
        EuclideanMetric([7]).cost_matrix(A)


def test_precomputed_validation():
    cost = np.array([[0.0, 1.0, np.inf], [2.0, 0.0, 1.0], [3.0, 4.0, 0.0]])
    metric = PrecomputedMetric(cost).fit()
    assert metric.n_cells_ == 3
    np.testing.assert_array_equal(metric.cost_matrix(), cost)
    np.testing.assert_array_equal(metric.cost_matrix(np.zeros((3, 5))), cost)
    with pytest.raises(ValueError, match="3 cells but A has 2"):
        metric.cost_matrix(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="second point set"):
        metric.cost_matrix(np.zeros((3, 1)), np.zeros((3, 1)))
    bad = {
        "negative": [[0, -1], [1, 0]],
        "zero diagonal": [[1, 1], [1, 0]],
        "square": [[0, 1, 2], [1, 0, 2]],
        "NaN": [[0, np.nan], [1, 0]],
    }
    for message, matrix in bad.items():
        with pytest.raises(ValueError, match=message):
            PrecomputedMetric(matrix).fit()


def test_callable_metric_matches_loop():
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    expected = np.array([[np.abs(a - b).max() ** 2 for b in B] for a in A])
    metric = CallableMetric(lambda a, b: np.abs(a - b).max(), exponent=2)
    np.testing.assert_allclose(metric.cost_matrix(A, B), expected)
    assert np.all(np.diagonal(metric.cost_matrix(A)) == 0.0)
    with pytest.raises(ValueError, match="negative"):
        CallableMetric(lambda a, b: -1.0).cost_matrix(A)
    with pytest.raises(ValueError, match="callable"):
        CallableMetric(3).fit()


@pytest.mark.parametrize(
    "metric",
    [
        SensitiveSubspaceMetric([[0, 1]], C=0.5, exponent=1, max_iter=200, min_auc=0.7),
        MahalanobisMetric(np.eye(2), exponent=3),
        EuclideanMetric([0, 1], exponent=1),
        PrecomputedMetric(np.zeros((2, 2))),
        CallableMetric(np.subtract, exponent=2),
    ],
)
def test_clone_and_get_params(metric):
    params = metric.get_params()
    cloned = clone(metric)
    assert type(cloned) is type(metric)
    for name, value in params.items():
        assert cloned.get_params()[name] is value or np.array_equal(
            cloned.get_params()[name], value
        )
    # clone rebuilds from parameters only: no fitted state is carried over
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(cloned))


# --------------------------------------------------------------------------- the default metric
@pytest.fixture(scope="module")
def many_levels():
    """Race with 4 levels (cols 0-3), sex (4-5), zip (6-9), age (10-12).

    The zip code is a strong proxy of races 0 and 1 (and so, weakly, of races 2 and 3: their
    members rarely have zip codes 0 and 1); nothing predicts the sex.
    """
    rng = np.random.default_rng(10)
    n = 1500
    race = rng.integers(0, 4, n)
    sex = rng.integers(0, 2, n)
    zip_code = np.where((race < 2) & (rng.random(n) < 0.8), race, rng.integers(0, 4, n))
    age = rng.integers(0, 3, n)
    X = np.hstack([one_hot(race, 4), one_hot(sex, 2), one_hot(zip_code, 4), one_hot(age, 3)])
    return X, [[0, 1, 2, 3], [4, 5]]


def reference_cv(X, member, Cs, free, n_splits=5):
    """Cross-validated AUC per C on the standardised free columns, with sklearn only."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    Z = X[:, free] / np.where(X[:, free].std(axis=0) > 0, X[:, free].std(axis=0), 1.0)
    out = []
    for C in Cs:
        scores = []
        for train, test in StratifiedKFold(n_splits).split(Z, member):
            model = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12).fit(
                Z[train], member[train])
            scores.append(roc_auc_score(member[test], Z[test] @ model.coef_.ravel()))
        out.append(np.mean(scores))
    return np.array(out)


def test_default_keeps_only_cross_validated_predictive_levels(many_levels):
    X, groups = many_levels
    Cs = [1e-3, 1e-1, 10.0]
    metric = SensitiveSubspaceMetric(groups, Cs=Cs).fit(X)
    free = list(range(6, 13))
    race = X[:, :4].argmax(axis=1)
    levels = [(0, race == 0), (1, race == 1), (2, race == 2), (3, race == 3),
              (5, X[:, 5] == 1)]
    assert [p["level"] for p in metric.problems_] == [lv for lv, _ in levels]
    for problem, (_, member) in zip(metric.problems_, levels, strict=True):
        expected = reference_cv(X, member, Cs, free)
        assert problem["auc"] == pytest.approx(expected.max(), abs=1e-8)
        assert problem["C"] == Cs[int(np.argmax(expected))]
        assert problem["kept"] == (expected.max() >= 0.6)
    # The zip code predicts the races (0 and 1 strongly), nothing predicts the sex.
    assert [p["kept"] for p in metric.problems_] == [True, True, True, True, False]
    assert min(metric.problems_[0]["auc"], metric.problems_[1]["auc"]) > 0.8
    assert metric.problems_[2]["auc"] < 0.7 and metric.problems_[4]["auc"] < 0.55


def test_min_auc_threshold_moves_the_cut(many_levels):
    X, groups = many_levels
    base = SensitiveSubspaceMetric(groups, min_auc=None, n_components=None).fit(X)
    aucs = np.array([p["auc"] for p in base.problems_])
    assert all(p["kept"] for p in base.problems_)
    assert base.components_.shape[0] == len(aucs)
    # A threshold between two measured AUCs keeps exactly the levels above it.
    ranked = np.sort(aucs)
    for cut in (ranked[1] + ranked[2]) / 2, (ranked[3] + ranked[4]) / 2:
        metric = SensitiveSubspaceMetric(groups, min_auc=float(cut), n_components=None).fit(X)
        np.testing.assert_array_equal([p["kept"] for p in metric.problems_], aucs >= cut)
        assert metric.components_.shape[0] == int(np.sum(aucs >= cut))
    top = SensitiveSubspaceMetric(groups, min_auc=1.0).fit(X)
    assert top.components_.shape[0] == 0
    # Without learned directions only the protected coordinates are sensitive.
    np.testing.assert_allclose(top.sensitive_directions_ @ top.sensitive_directions_.T,
                               np.eye(6), atol=1e-12)


def test_default_metric_by_hand(many_levels):
    X, groups = many_levels
    metric = SensitiveSubspaceMetric(groups, Cs=[0.1], n_components=None).fit(X)
    scale = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    scale[:6] = 1.0
    np.testing.assert_allclose(metric.scale_, scale, rtol=1e-12)
    Z = X / scale
    free = list(range(6, 13))
    race = X[:, :4].argmax(axis=1)
    directions = []
    for member in (race == 0, race == 1, race == 2, race == 3):  # kept; the sex is not
        model = LogisticRegression(C=0.1, solver="newton-cholesky", tol=1e-12).fit(
            Z[:, free], member)
        v = np.zeros(13)
        v[free] = model.coef_.ravel()
        directions.append(v)
    A = np.vstack([*directions, np.eye(13)[:6]]).T
    projector = np.eye(13) - A @ np.linalg.pinv(A)
    np.testing.assert_allclose(metric.projector_, projector, atol=1e-7)
    np.testing.assert_allclose(metric.sigma_, projector / np.outer(scale, scale), atol=1e-7)
    np.testing.assert_allclose(metric.transform(X[:20]), (X[:20] / scale) @ projector, atol=1e-7)
    # A cost is the squared standardised distance off the sensitive subspace.
    a, b = X[:1], X[1:2]
    diff = (a - b)[0] / scale
    assert metric.cost_matrix(a, b)[0, 0] == pytest.approx(diff @ projector @ diff, abs=1e-7)


def test_n_components_controls_the_rank(many_levels):
    X, groups = many_levels
    full = SensitiveSubspaceMetric(groups, min_auc=None, n_components=None).fit(X)
    unit = full.coef_directions_ / np.linalg.norm(full.coef_directions_, axis=1, keepdims=True)
    # Each direction weighs its Gini coefficient (an AUC below 1/2 counts as nothing).
    gini = np.clip([2 * p["auc"] - 1 for p in full.problems_], np.finfo(float).eps, None)
    _, singular, vt = np.linalg.svd(unit * gini[:, None], full_matrices=False)
    share = np.cumsum(singular ** 2) / np.sum(singular ** 2)
    for n_components, expected_rank in [(1, 1), (3, 3), (float(share[1]) - 1e-6, 2),
                                         (float(share[1]) + 1e-6, 3),
                                         (1.0, np.linalg.matrix_rank(unit * gini[:, None]))]:
        metric = SensitiveSubspaceMetric(groups, min_auc=None, n_components=n_components)
        metric.fit(X)
        assert metric.components_.shape[0] == expected_rank
        # The components span the leading singular directions of the weighted directions.
        leading = vt[:expected_rank]
        np.testing.assert_allclose(np.abs(metric.components_ @ leading.T), np.eye(expected_rank),
                                   atol=1e-8)
    # The source of the first component is the direction that weighs most in it.
    one = SensitiveSubspaceMetric(groups, min_auc=None, n_components=1).fit(X)
    loading = ((unit * gini[:, None]) @ vt[0]) ** 2
    assert one.component_sources_.tolist() == [int(np.argmax(loading))]


def test_default_metric_sample_weight_equals_repeated_rows(many_levels):
    X, groups = many_levels
    weight = np.tile([1, 2, 3], len(X) // 3)
    repeated = np.repeat(X, weight, axis=0)
    # Repetition changes the folds, so compare with a fixed C and no threshold.
    kwargs = {"C": 0.5, "min_auc": None, "cv": None}
    weighted = SensitiveSubspaceMetric(groups, **kwargs).fit(X, sample_weight=weight)
    plain = SensitiveSubspaceMetric(groups, **kwargs).fit(repeated)
    np.testing.assert_allclose(weighted.sigma_, plain.sigma_, atol=1e-8)


def test_default_metric_parameter_errors(many_levels):
    X, groups = many_levels
    for bad, match in [({"min_auc": 0.4}, "min_auc"), ({"n_components": 0}, "n_components"),
                       ({"n_components": 1.5}, r"n_components must be .*\(0, 1\]"),
                       ({"C": -1.0}, "C must"),
                       ({"Cs": [0.0, 1.0]}, "Cs"), ({"cv": None}, "cv=None"),
                       ({"max_iter": 0}, "max_iter")]:
        with pytest.raises(ValueError, match=match):
            SensitiveSubspaceMetric(groups, **bad).fit(X)
    with pytest.raises(ValueError, match="sample_weight"):
        SensitiveSubspaceMetric(groups).fit(X, sample_weight=np.ones(3))


def test_rare_level_without_cross_validation_is_dropped():
    rng = np.random.default_rng(11)
    level = np.r_[np.zeros(3, int), rng.integers(1, 3, 300)]  # level 0 has 3 members < 5 folds
    X = np.hstack([one_hot(level, 3), rng.normal(size=(303, 2))])
    metric = SensitiveSubspaceMetric([[0, 1, 2]]).fit(X)
    rare = metric.problems_[0]
    assert rare["level"] == 0 and rare["n_members"] == 3
    assert np.isnan(rare["auc"]) and not rare["kept"]
    legacy = SensitiveSubspaceMetric([[0, 1, 2]], **LEGACY).fit(X)
    assert np.isnan(legacy.problems_[0]["auc"]) and legacy.problems_[0]["kept"]


def test_cross_validation_subsample_for_large_data(many_levels):
    X, groups = many_levels
    full = SensitiveSubspaceMetric(groups, Cs=[0.1, 10.0]).fit(X)
    sub = SensitiveSubspaceMetric(groups, Cs=[0.1, 10.0], cv_max_samples=600).fit(X)
    # The AUCs are estimated on 600 of the 1,500 rows: close, not equal.
    for a, b in zip(full.problems_, sub.problems_, strict=True):
        assert a["auc"] != b["auc"] and abs(a["auc"] - b["auc"]) < 0.06
    # The subset is stratified and evenly spaced: its AUC is the CV AUC of those rows.
    from skfair_audit.faith._metric import _evenly_spaced_subset

    member = X[:, 0] == 1
    used = _evenly_spaced_subset(member, 600)
    assert abs(used.size - 600) <= 2 and abs(member[used].mean() - member.mean()) < 0.01
    on_subset = SensitiveSubspaceMetric(groups, Cs=[0.1, 10.0]).fit(X[used])
    assert on_subset.problems_[0]["auc"] == pytest.approx(sub.problems_[0]["auc"], abs=0.03)


def test_significance_drops_a_level_with_too_few_members():
    # A rare level that happens to look predictable: its AUC passes min_auc, but with ten
    # members it is not significantly above 1/2.
    rng = np.random.default_rng(14)
    n = 2000
    level = np.where(rng.random(n) < 0.006, 0, rng.integers(1, 3, n))
    proxy = rng.normal(size=n) + 0.8 * (level == 1) + 0.5 * (level == 0)
    X = np.hstack([one_hot(level, 3), proxy[:, None], rng.normal(size=(n, 2))])
    strict = SensitiveSubspaceMetric([[0, 1, 2]], min_auc=0.55).fit(X)
    loose = SensitiveSubspaceMetric([[0, 1, 2]], min_auc=0.55, significance=None).fit(X)
    rare, common = strict.problems_[0], strict.problems_[1]
    assert rare["n_members"] < 20 and rare["auc"] >= 0.55
    from scipy.stats import norm

    from skfair_audit.faith._metric_learning import auc_standard_error

    se = auc_standard_error(rare["auc"], rare["n_members"], n - rare["n_members"])
    assert rare["auc_lower"] == pytest.approx(rare["auc"] - norm.ppf(0.95) * se)
    assert rare["auc_lower"] <= 0.5 and not rare["kept"]
    assert loose.problems_[0]["kept"]
    assert common["auc"] > 0.65 and common["kept"] and loose.problems_[1]["kept"]
    with pytest.raises(ValueError, match="significance"):
        SensitiveSubspaceMetric([[0, 1, 2]], significance=0.7).fit(X)
