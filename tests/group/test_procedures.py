import warnings

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from skfair_audit.group import (
    DegenerateBootstrapWarning,
    GroupBoundsResult,
    certify_bounds,
    certify_threshold,
    cross_with_bins,
    equalized_odds,
    flag_groups,
    flag_groups_split,
    get_metric,
    intersections,
    intervals,
    masks,
)


def _trail(n=3000, seed=0, shift=0.15):
    """Binary audit trail where group race=A has a higher false positive rate."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C"], n)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    flip = rng.random(n) < np.where(race == "A", 0.1 + shift, 0.1)
    y_pred = np.where(flip, 1 - y, y)
    return {"race": race, "sex": sex}, y, y_pred


def test_bounds_deterministic_across_n_jobs():
    groups, y, y_pred = _trail()
    kw = dict(metric="fpr", alternative="two-sided", n_resamples=300, batch_size=64,
              random_state=11)
    r1 = certify_bounds(y, y_pred, groups, n_jobs=1, **kw)
    r2 = certify_bounds(y, y_pred, groups, n_jobs=2, **kw)
    np.testing.assert_array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)
    np.testing.assert_array_equal(r1.lower, r2.lower)


def test_bound_formulas_and_directions():
    groups, y, y_pred = _trail()
    res = certify_bounds(y, y_pred, groups, metric="fpr", alternative="lower", alpha=0.1,
                         n_resamples=300, random_state=0)
    assert isinstance(res, GroupBoundsResult)
    neg = y == 0
    fpr = y_pred[neg].mean()
    assert res.target == pytest.approx(fpr)
    j = res.groups.index("race=A")
    in_a = neg & (groups["race"] == "A")
    assert res.sizes[j] == in_a.sum()
    assert res.estimates[j] == pytest.approx(y_pred[in_a].mean() - fpr)
    p = res.sizes / res.n
    np.testing.assert_allclose(res.lower, res.estimates - res.critical_value * res.scales / p**2)
    assert np.all(np.isinf(res.upper))
    assert res.critical_value == pytest.approx(
        np.quantile(res.bootstrap_distribution, 0.9, method="higher"))
    # the planted disparity is certified; "lower" bound > 0 <=> "greater" certificate/flag
    assert res.lower[j] > 0
    cert = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.0,
                             alternative="greater", n_resamples=300, random_state=0)
    flags = flag_groups(y, y_pred, groups, metric="fpr", alternative="greater")
    assert cert.is_certified("race=A") and flags.is_flagged("race=A")
    up = certify_bounds(y, y_pred, groups, metric="fpr", alternative="upper",
                        n_resamples=300, random_state=0)
    assert np.all(np.isinf(up.lower)) and up.upper[j] > up.estimates[j]
    less = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.0,
                             alternative="less", n_resamples=300, random_state=0)
    assert not less.is_certified("race=A")


def _simultaneous_coverage(reps=40):
    """Fraction of data sets where the lower bounds of all 11 groups hold (nominal 0.9)."""
    truth_fpr = {"A": 0.3, "B": 0.15, "C": 0.2}
    n, hits = 1500, 0
    for rep in range(reps):
        rng = np.random.default_rng(100 + rep)
        race = rng.choice(["A", "B", "C"], n, p=[0.2, 0.5, 0.3])
        sex = rng.choice(["F", "M"], n)
        y = np.zeros(n, dtype=int)
        rate = np.vectorize(truth_fpr.get)(race)
        y_pred = (rng.random(n) < rate).astype(int)
        res = certify_bounds(y, y_pred, {"race": race, "sex": sex}, metric="fpr",
                             target=0.0, alternative="lower", alpha=0.1, n_resamples=300,
                             random_state=rep)
        true = []
        for name in res.names:
            m = np.ones(n, dtype=bool)
            for part in name.split(" & "):
                key, level = part.split("=")
                m &= {"race": race, "sex": sex}[key] == level
            # population FPR of the group (sex independent of everything)
            w = {k: np.mean(race[m] == k) for k in truth_fpr}
            true.append(sum(truth_fpr[k] * w[k] for k in truth_fpr))
        hits += np.all(res.lower <= np.array(true) + 1e-12)
    return hits / reps


def test_simultaneous_coverage_small_simulation():
    # nominal 0.9; 40 reps: sd ~ 0.05. With c = 0, or c at the 50% quantile, this fails.
    assert _simultaneous_coverage() >= 0.75


def test_empty_group_does_not_poison_rescaled_bounds():
    groups, y, y_pred = _trail(n=600)
    only_pos = masks(np.column_stack([y == 1, groups["race"] == "A"]), names=["pos", "A"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = certify_bounds(y, y_pred, only_pos, metric="fpr", alternative="two-sided",
                             n_resamples=200, random_state=0)
    assert res.empty_groups == ("pos",)
    assert res.sizes[0] == 0 and np.isnan(res.estimates[0])
    assert res.lower[0] == -np.inf and res.upper[0] == np.inf
    assert np.isfinite(res.lower[1]) and np.isfinite(res.upper[1])
    assert np.isfinite(res.critical_value)


def test_interval_collection_and_kadane_equal_enumeration():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 5, 3000)
    covered = (rng.random(3000) < np.where(x < 1, 0.7, 0.92)).astype(int)
    g = intervals(x, np.linspace(0, 5, 21))
    metric = get_metric(lambda y, p: p.astype(float), bounds=(0, 1), name="coverage")
    bounds = certify_bounds(covered, covered, g, metric=metric, target=0.9,
                            n_resamples=200, random_state=0)
    assert len(bounds.names) == 210 and np.isfinite(bounds.lower).all()
    kw = dict(metric=metric, target=0.0, epsilon0=0.85, alternative="greater",
              scale="unscaled", n_resamples=200, random_state=1)
    kad = certify_threshold(covered, covered, g, method="kadane", **kw)
    enum = certify_threshold(covered, covered, g, method="enumeration", **kw)
    assert kad.method == "kadane" and enum.method == "enumeration"
    np.testing.assert_allclose(kad.bootstrap_distribution, enum.bootstrap_distribution,
                               atol=1e-14)
    np.testing.assert_array_equal(kad.certified, enum.certified)
    assert not kad.is_certified("x in [0, 1)") and kad.is_certified("x in [1, 5]")
    with pytest.raises(ValueError, match="kadane"):
        certify_threshold(covered, covered, g, method="kadane",
                          **{**kw, "scale": "rescaled"})


def test_within_certification_uses_joint_critical_value():
    groups, y, y_pred = _trail(shift=0.0, n=4000)
    res = certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.06,
                            alternative="within", n_resamples=300, random_state=0)
    assert res.certified[res.groups.index("race=B")]
    np.testing.assert_array_equal(
        res.certified, (res.lower > -0.06) & (res.upper < 0.06))


def test_two_sided_flag_pvalues_valid_and_not_all_flagged():
    groups, y, y_pred = _trail(shift=0.0)
    res = flag_groups(y, y_pred, groups, metric="fpr", alternative="two-sided", q=0.1)
    assert np.all((res.pvalues > 0) & (res.pvalues <= 1))
    assert res.flagged.sum() == 0


def test_flag_pvalues_uniformish_under_null():
    pvals = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        g = rng.choice(["a", "b", "c", "d"], 2000)
        y = np.zeros(2000, dtype=int)
        y_pred = (rng.random(2000) < 0.2).astype(int)
        res = flag_groups(y, y_pred, masks(np.column_stack([g == k for k in "abcd"])),
                          metric="fpr", target=0.2, alternative="two-sided")
        pvals.extend(res.pvalues)
    pvals = np.array(pvals)
    assert 0.05 < np.mean(pvals < 0.1) < 0.17
    assert 0.4 < pvals.mean() < 0.6


def test_flagging_is_studentised_not_silently_unscaled():
    groups, y, y_pred = _trail()
    res = flag_groups(y, y_pred, groups, metric="fpr", epsilon0=0.02)
    np.testing.assert_allclose(res.statistics, (res.estimates - 0.02) / res.standard_errors)
    assert np.all(res.standard_errors < 0.1)
    boot = flag_groups(y, y_pred, groups, metric="fpr", epsilon0=0.02, se="bootstrap",
                       n_resamples=400, random_state=0)
    np.testing.assert_allclose(boot.standard_errors, res.standard_errors, rtol=0.25)
    np.testing.assert_array_equal(res.adjusted_pvalues,
                                  false_discovery_control(res.pvalues, method="bh"))


def test_tiny_constant_group_gets_a_sensible_pvalue():
    groups, y, y_pred = _trail(n=2000)
    tiny = np.zeros(2000, dtype=bool)
    tiny[np.flatnonzero((y == 0) & (y_pred == 1))[:3]] = True  # FPR 1 on 3 rows
    g = masks(np.column_stack([tiny, groups["race"] == "B"]), names=["tiny", "B"])
    res = flag_groups(y, y_pred, g, metric="fpr", epsilon0=0.05)
    assert res.standard_errors[0] > 0
    # not 0 (the Wald se would be 0 here); conservative w.r.t. the exact binomial tail
    # P(3 of 3 | FPR = target + 0.05) ~ 0.008, yet still small
    exact = (res.target + 0.05) ** 3
    assert exact < res.pvalues[0] < 0.1


def test_pandas_inputs_work():
    pd = pytest.importorskip("pandas")
    groups, y, y_pred = _trail(n=800)
    frame = pd.DataFrame(groups, index=np.arange(800) + 1000)
    ys = pd.Series(np.where(y == 1, "yes", "no"), index=frame.index)
    ps = pd.Series(np.where(y_pred == 1, "yes", "no"), index=frame.index)
    res = certify_bounds(ys, ps, frame, metric="fpr", pos_label="yes", n_resamples=100,
                         random_state=0)
    ref = certify_bounds(y, y_pred, groups, metric="fpr", n_resamples=100, random_state=0)
    np.testing.assert_array_equal(res.lower, ref.lower)
    flags = flag_groups(ys, ps, frame["race"], metric="fpr", pos_label="yes")
    assert flags.names == ("race=A", "race=B", "race=C")
    assert res.to_frame().loc["race=A", "size"] == ref.sizes[0]


def test_query_outside_collection():
    groups, y, y_pred = _trail(n=1000)
    res = certify_bounds(y, y_pred, groups, metric="fpr", n_resamples=100, random_state=0,
                         alternative="two-sided")
    member = groups["race"] == "B"
    assert res.bound(member).group == "race=B"
    assert res.bound(member).guaranteed
    outside = np.arange(1000) < 300
    with pytest.raises(ValueError, match="guarantee"):
        res.bound(outside)
    with pytest.raises(ValueError, match="guarantee"):
        res.bound("race=Z")
    with pytest.warns(UserWarning, match="no simultaneous"):
        b = res.bound(outside, allow_outside=True)
    assert not b.guaranteed and b.lower < b.estimate < b.upper
    ci = res.confidence_interval("race=B")
    assert (ci.low, ci.high) == (res.lower[1], res.upper[1])


def test_reference_target_and_its_errors():
    groups, y, y_pred = _trail()
    res = certify_bounds(y, y_pred, groups, metric="ppv", target="race=B",
                         n_resamples=100, random_state=0)
    j = res.groups.index("race=B")
    assert res.estimates[j] == pytest.approx(0.0)
    sel = (y_pred == 1) & (groups["race"] == "B")
    assert res.target == pytest.approx(y[sel].mean())
    with pytest.raises(ValueError, match="reference group has no row"):
        certify_bounds(y, y_pred, groups, metric="ppv",
                       target=np.zeros(y.size, dtype=bool), n_resamples=10)
    with pytest.raises(ValueError, match="neither"):
        certify_bounds(y, y_pred, groups, metric="ppv", target="race=Q", n_resamples=10)


def test_bad_inputs():
    groups, y, y_pred = _trail(n=200)
    with pytest.raises(ValueError, match="alpha"):
        certify_bounds(y, y_pred, groups, metric="fpr", alpha=1.5)
    with pytest.raises(ValueError, match="rows"):
        certify_bounds(y[:-1], y_pred[:-1], groups, metric="fpr")
    with pytest.raises(ValueError, match="lengths"):
        certify_bounds(y, y_pred[:-1], groups, metric="fpr")
    with pytest.raises(ValueError, match="NaN"):
        certify_bounds(y, np.where(y_pred == 1, np.nan, 0.0), groups, metric="fpr")
    with pytest.raises(ValueError, match="alternative"):
        certify_bounds(y, y_pred, groups, metric="fpr", alternative="greater")
    with pytest.raises(ValueError, match="w0"):
        certify_bounds(y, y_pred, groups, metric="fpr", w0=0)
    with pytest.raises(ValueError, match="q must"):
        flag_groups(y, y_pred, groups, metric="fpr", q=0)
    with pytest.raises(ValueError, match="no row satisfies"):
        certify_bounds(np.ones(200, dtype=int), y_pred, groups, metric="fpr")


def test_constant_metric_warns_without_nan():
    groups, y, _ = _trail(n=300)
    with pytest.warns(DegenerateBootstrapWarning, match="constant"):
        res = certify_bounds(y, np.zeros(300, dtype=int), groups, metric="fpr",
                             alternative="two-sided", n_resamples=50, random_state=0)
    assert not np.isnan(res.lower).any() and not np.isnan(res.upper).any()
    assert res.critical_value == 0.0


def test_single_row_group_warns():
    groups, y, y_pred = _trail(n=300)
    lone = np.zeros(300, dtype=bool)
    lone[np.flatnonzero(y == 0)[0]] = True
    g = masks(np.column_stack([lone, groups["race"] == "A"]), names=["lone", "A"])
    with pytest.warns(DegenerateBootstrapWarning, match="single row"):
        res = certify_bounds(y, y_pred, g, metric="fpr", w0=1.0, n_resamples=50,
                             random_state=0)
    assert np.isfinite(res.lower).all()


def test_equalized_odds_combines_two_audits():
    groups, y, y_pred = _trail(n=2000)
    res = equalized_odds(y, y_pred, groups, alpha=0.1, n_resamples=200, random_state=0)
    assert res.false_positive_rate.alpha == res.true_positive_rate.alpha == 0.05
    fpr, tpr = res.false_positive_rate, res.true_positive_rate
    expected = np.maximum.reduce([np.abs(fpr.lower), np.abs(fpr.upper),
                                  np.abs(tpr.lower), np.abs(tpr.upper)])
    np.testing.assert_allclose(res.worst_disparity, expected)
    thr = equalized_odds(y, y_pred, groups, epsilon0=0.3, n_resamples=200, random_state=0)
    np.testing.assert_array_equal(
        thr.certified, thr.false_positive_rate.certified & thr.true_positive_rate.certified)
    assert thr.certified.any()


def test_multicalibration_groups():
    rng = np.random.default_rng(8)
    n = 3000
    a = rng.choice(["u", "v"], n)
    score = rng.uniform(size=n)
    y = (rng.random(n) < np.where(a == "u", score, score * 0.5)).astype(int)
    g = cross_with_bins(intersections({"a": a}), score, bins=4)
    res = certify_bounds(y, score, g, metric="calibration_residual", target=0.0,
                         alternative="two-sided", n_resamples=200, random_state=0)
    high_v = res.groups.index("a=v & score in [0.75, 1]")
    assert res.upper[high_v] < 0  # group v is over-predicted at high scores
    high_u = res.groups.index("a=u & score in [0.75, 1]")
    assert res.lower[high_u] < 0 < res.upper[high_u]


def test_split_flagging_finds_planted_region():
    rng = np.random.default_rng(9)
    n = 6000
    X = rng.uniform(size=(n, 2))
    y = rng.integers(0, 2, n)
    bad = X[:, 1] > 0.75
    y_pred = np.where(rng.random(n) < np.where(bad, 0.4, 0.1), 1 - y, y)
    res = flag_groups_split(X, y, y_pred, metric="error_rate", epsilon0=0.05, max_depth=2,
                            feature_names=["age", "income"], random_state=0)
    flagged = [name for name, f in zip(res.names, res.flagged, strict=True) if f]
    assert flagged and all("income > 0.7" in name for name in flagged)
    assert res.groups.kind == "tree" and res.n < n


def test_groups_as_plain_label_array_or_list():
    rng = np.random.default_rng(5)
    labels = rng.choice(["a", "b", "c"], 600)
    y = rng.integers(0, 2, 600)
    y_pred = rng.integers(0, 2, 600)
    kwargs = dict(metric="error_rate", n_resamples=50, random_state=0)
    from_array = certify_bounds(y, y_pred, labels, **kwargs)
    from_list = certify_bounds(y, y_pred, labels.tolist(), **kwargs)
    assert list(from_array.names) == list(from_list.names)
    np.testing.assert_array_equal(from_array.lower, from_list.lower)
    assert len(from_array.names) == 3


def test_bootstrap_se_does_not_flag_a_tiny_constant_group():
    # Groups a and b: 500 rows with random labels; group c: 3 rows, all y = 0 (PPV 0). With
    # the plain bootstrap SD, c's only variance is the target's, and it would be flagged.
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 500 + ["b"] * 500 + ["c"] * 3)
    y = np.concatenate([rng.integers(0, 2, 1000), np.zeros(3, dtype=int)])
    y_pred = np.ones(g.size, dtype=int)
    res = flag_groups(y, y_pred, {"g": g}, metric="ppv", epsilon0=-0.05, alternative="less",
                      se="bootstrap", n_resamples=200, random_state=0)
    c = res.names.index("g=c")
    assert res.pvalues[c] > 1e-3 and not res.flagged[c]


def test_crossed_coverage_intervals_are_empty():
    from skfair_audit.group import get_metric

    with pytest.warns(UserWarning, match="low > high"):
        values, rows = get_metric("coverage").evaluate(
            np.array([0.7, 0.7]), np.array([[1.0, 0.5], [0.0, 1.0]])
        )
    np.testing.assert_array_equal(values[rows], [0.0, 1.0])


def test_bounds_are_clipped_to_the_range_of_the_disparity():
    # A 3-row group has a valid but enormous width c s_G / P_n(G)^2: its bounds are cut to
    # the values a difference of two rates can take, and large groups are untouched.
    rng = np.random.default_rng(3)
    g = np.array(["a"] * 1500 + ["b"] * 1500 + ["c"] * 3)
    y = rng.integers(0, 2, g.size)
    y_pred = rng.integers(0, 2, g.size)
    res = certify_bounds(y, y_pred, {"g": g}, metric="error_rate", alternative="two-sided",
                         scale="unscaled", n_resamples=200, random_state=0)
    c = res.names.index("g=c")
    assert res.lower[c] == -1.0 and res.upper[c] == 1.0
    a = res.names.index("g=a")
    assert -1.0 < res.lower[a] < res.estimates[a] < res.upper[a] < 1.0
    known = certify_bounds(y, y_pred, {"g": g}, metric="error_rate", target=0.5,
                           alternative="two-sided", scale="unscaled", n_resamples=200,
                           random_state=0)
    assert known.lower[c] == -0.5 and known.upper[c] == 0.5


def test_flags_equal_the_benjamini_hochberg_step_up_definition():
    # flagged = the k* smallest p-values, k* the largest k with p_(k) <= q k / m
    rng = np.random.default_rng(11)
    g = rng.choice([f"g{k}" for k in range(30)], 6000)
    shift = np.where(np.isin(g, ["g1", "g2", "g3", "g4", "g5"]), 0.06, 0.0)
    shift = np.where(np.isin(g, ["g6", "g7"]), 0.15, shift)
    y = np.zeros(6000, dtype=int)
    y_pred = (rng.random(6000) < 0.2 + shift).astype(int)
    for q in (0.05, 0.2):
        res = flag_groups(y, y_pred, {"g": g}, metric="fpr", epsilon0=0.0, q=q)
        p = np.sort(res.pvalues)
        m = p.size
        below = np.flatnonzero(p <= q * np.arange(1, m + 1) / m)
        k = below.max() + 1 if below.size else 0
        assert res.flagged.sum() == k
        assert set(np.flatnonzero(res.flagged)) == set(np.argsort(res.pvalues,
                                                                  kind="stable")[:k])
    assert 0 < res.flagged.sum() < m
