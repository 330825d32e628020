"""Ratio disparities, fairlearn summaries and the Local Law 144 bias-audit table."""

import json
import pathlib
import warnings

import numpy as np
import pytest

from skfair_audit.group import (
    AuditSummary,
    BiasAuditResult,
    DisparitySummaryResult,
    GroupAuditResult,
    RatioBoundsResult,
    RatioFlagResult,
    bias_audit_table,
    certify_ratio,
    disparity_summaries,
    flag_ratios,
    ratio_bounds,
    summary_ratio_bounds,
)
from skfair_audit.group._ratios import (
    REASONS,
    RatioProcess,
    RatioSetup,
    bounds_from_suprema,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _trail(seed=0, n=6000, rates=(0.5, 0.45, 0.3, 0.42)):
    rng = np.random.default_rng(seed)
    g = rng.choice([f"g{k}" for k in range(len(rates))], n)
    index = np.array([int(x[1:]) for x in g])
    y = rng.integers(0, 2, n)
    y_pred = (rng.random(n) < np.asarray(rates)[index]).astype(int)
    return y, y_pred, g


def _rates(y_pred, g):
    levels = sorted(set(g))
    return {lv: y_pred[g == lv].mean() for lv in levels}


# -- point values: independent references --------------------------------------------
@pytest.mark.parametrize("denominator", ["max", "overall", "g=g1"])
def test_ratio_point_values_equal_the_plain_formulas(denominator):
    y, y_pred, g = _trail()
    res = ratio_bounds(y, y_pred, {"g": g}, denominator=denominator, n_resamples=50,
                       random_state=0)
    rates = _rates(y_pred, g)
    den = {"max": max(rates.values()), "overall": y_pred.mean(), "g=g1": rates["g1"]}[
        denominator]
    expected = [rates[name.split("=")[1]] / den for name in res.names]
    np.testing.assert_allclose(res.ratios, expected, rtol=0, atol=1e-12)
    assert isinstance(res, GroupAuditResult)


def test_summaries_equal_fairlearn_formulas_reproduced():
    """fairlearn: DP difference max - min, ratio min / max of selection rates over the cells;
    EO difference / ratio the worse of the TPR and FPR ones (reproduced with pandas)."""
    pd = pytest.importorskip("pandas")
    y, y_pred, g = _trail(seed=3, rates=(0.5, 0.2, 0.35, 0.6))
    frame = pd.DataFrame({"y": y, "p": y_pred, "g": g})
    sel = frame.groupby("g")["p"].mean()
    tpr = frame[frame.y == 1].groupby("g")["p"].mean()
    fpr = frame[frame.y == 0].groupby("g")["p"].mean()
    res = disparity_summaries(y, y_pred, g, n_resamples=50, random_state=0)
    expected = {
        "demographic_parity_difference": sel.max() - sel.min(),
        "demographic_parity_ratio": sel.min() / sel.max(),
        "selection_rate.group_min": sel.min(), "selection_rate.group_max": sel.max(),
        "equalized_odds_difference": max(tpr.max() - tpr.min(), fpr.max() - fpr.min()),
        "equalized_odds_ratio": min(tpr.min() / tpr.max(), fpr.min() / fpr.max()),
    }
    for name, value in expected.items():
        assert abs(res.value(name) - value) <= 1e-12, name
        ci = res.confidence_interval(name)
        assert ci.low <= res.value(name) <= ci.high
    assert isinstance(res, DisparitySummaryResult)
    assert res.to_frame().shape[0] == len(res.names)


def test_peer_values_recorded_against_fairlearn_and_aif360():
    """benchmarks/bench_group_ratio_peers.py ran fairlearn and AIF360 themselves."""
    data = json.loads((ROOT / "benchmarks" / "results" / "group_ratio_peers.json").read_text())
    assert data["rows"] and {r["peer"] for r in data["rows"]} == {"fairlearn", "aif360"}
    assert {r["dataset"] for r in data["rows"]} == {"compas", "adult"}
    assert max(r["abs_diff"] for r in data["rows"]) <= 1e-12


@pytest.mark.real_data
def test_our_values_are_still_the_recorded_ones(compas_propublica, adult_bunch):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "bench_group_ratio_peers", ROOT / "benchmarks" / "bench_group_ratio_peers.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    data = json.loads((ROOT / "benchmarks" / "results" / "group_ratio_peers.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (y, y_pred, race, sex) in module.datasets().items():
            ours = module.ours(y, y_pred, race, sex)
            for row in data["rows"]:
                if row["dataset"] == name and row["peer"] == "fairlearn":
                    assert abs(ours[row["quantity"]] - row["ours"]) <= 1e-12, row


# -- undefined ratios -------------------------------------------------------------------
def test_zero_denominator_is_undefined_with_the_reason_never_zero_or_inf():
    rng = np.random.default_rng(0)
    g = np.repeat(["a", "b", "c"], 200)
    y_pred = np.r_[np.zeros(200, int), (rng.random(400) < 0.4).astype(int)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ratio_bounds(y_pred, y_pred, {"g": g}, denominator="g=a", n_resamples=50,
                           random_state=0)
    assert np.isnan(res.ratios).all() and np.isnan(res.lower).all()
    assert set(res.reasons) == {REASONS["zero_denominator"]}
    assert not res.defined.any()
    table = res.table()
    assert all(row[-1] == REASONS["zero_denominator"] for row in table.rows)
    frame = res.to_frame()
    assert not np.isinf(frame["ratio"].to_numpy(dtype=float)).any()


def test_all_zero_rates_give_an_undefined_impact_ratio_and_summary_ratio():
    y = np.tile([0, 1], 300)
    y_pred = np.zeros(600, int)
    g = np.repeat(["a", "b", "c"], 200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ratio_bounds(y, y_pred, {"g": g}, n_resamples=50, random_state=0)
        summ = disparity_summaries(y, y_pred, g, n_resamples=50, random_state=0)
    assert np.isnan(res.ratios).all()
    assert np.isnan(summ.value("demographic_parity_ratio"))
    j = summ.names.index("demographic_parity_ratio")
    assert "0/0" in summ.reasons[j]


def test_empty_reference_group_is_refused_or_undefined():
    y, y_pred, g = _trail()
    with pytest.raises(ValueError, match="neither 'overall', 'max' nor a group"):
        ratio_bounds(y, y_pred, {"g": g}, denominator="g=zz", n_resamples=20)


def test_negative_metric_is_refused():
    y = np.linspace(-1, 1, 200)
    with pytest.raises(ValueError, match="non-negative metric"):
        ratio_bounds(y, y, {"g": np.repeat(["a", "b"], 100)},
                     metric=lambda a, b: a - 0.0, n_resamples=20)


# -- the bootstrap of the impact ratio ------------------------------------------------
def _near_tie_process():
    g = np.repeat(["a", "b", "c", "d"], 1000)
    y_pred = np.concatenate([np.arange(1000) < k for k in (500, 495, 300, 200)]).astype(int)
    summary = AuditSummary.from_rows(y_pred, y_pred, {"g": g}, metric="selection_rate")
    setup = RatioSetup.from_summary(summary, "max")
    counts = summary.stats.draw()(np.random.default_rng(0), 200)
    sums = summary.stats.replicate_sums(counts, summary.target_kind, summary.theta_hat)
    n_b = summary.groups.group_sums(sums.counts)
    s_b = summary.groups.group_sums(sums.sums)
    m_b = setup.mu + (s_b - setup.mu * n_b) / setup.n_g
    return summary, setup, RatioProcess(summary.groups, setup, summary.n), sums, m_b


def test_suprema_run_over_every_near_maximal_reference():
    summary, setup, process, sums, m_b = _near_tie_process()
    assert setup.near[:2].all() and not setup.near[2:].any()
    mu, s = setup.mu, setup.scales
    # written out replicate by replicate: the linearised error of mu_G / mu_H for every
    # group G and every near-maximal reference H, each H taken as fixed
    # columns: sup_G T^a, sup_G T^b (lower side, one per reference), max_H sup_G -T^H
    expected = np.full((m_b.shape[0], 3), -np.inf)
    for b in range(m_b.shape[0]):
        for h in (0, 1):
            for g in range(4):
                rho = mu[g] / mu[h]
                t = ((m_b[b, g] - mu[g]) - rho * (m_b[b, h] - mu[h])) / (mu[h] * s[g])
                expected[b, h] = max(expected[b, h], t)
                expected[b, 2] = max(expected[b, 2], -t)
    sups = process(sums)
    np.testing.assert_allclose(sups, expected, rtol=1e-12)
    # the bounds, written out: per-reference critical values for the lower bounds
    for alternative in ("two-sided", "lower", "upper"):
        c, lower, upper = bounds_from_suprema(setup, sups, 0.1, alternative)
        c_ref = []
        for h in (0, 1):
            stat = sups[:, h] if alternative == "lower" else np.maximum(sups[:, h], sups[:, 2])
            c_ref.append(np.sort(stat)[int(np.ceil(0.9 * (stat.size - 1)))])
        c_up = max(c_ref) if alternative != "upper" else \
            np.sort(sups[:, 2])[int(np.ceil(0.9 * (sups.shape[0] - 1)))]
        assert c == pytest.approx(c_up, rel=1e-12)
        for g in range(4):
            low = min(mu[g] / mu[h] - c_ref[h] * s[g] for h in (0, 1))
            high = min(mu[g] / mu[0] + c_up * s[g], 1.0)
            assert lower[g] == pytest.approx(0.0 if alternative == "upper" else max(low, 0.0))
            assert upper[g] == pytest.approx(np.inf if alternative == "lower" else high)
    # replicate ratios (bootstrap standard errors) take the observed top as the reference
    r_hat = mu / mu[0]
    ratios = r_hat + ((m_b - mu) - r_hat * (m_b[:, [0]] - mu[0])) / mu[0]
    np.testing.assert_allclose(process.replicate_ratios(sums), ratios, rtol=1e-12)


def test_families_take_the_other_families_at_their_worst_reference():
    # two families (a, b: tied tops) and (c, d): the lower bounds of family 0 use the
    # quantile of max(own reference's column, family 1's columns, the upper side)
    g = np.repeat(["a", "b", "c", "d"], 1500)
    y_pred = np.concatenate([np.arange(1500) < k for k in (750, 748, 600, 420)]).astype(int)
    summary = AuditSummary.from_rows(y_pred, y_pred, {"g": g}, metric="selection_rate")
    res = summary_ratio_bounds(summary, families=[0, 0, 1, 1], n_resamples=400,
                               random_state=0, alpha=0.1)
    setup = RatioSetup.from_summary(summary, "max", families=[0, 0, 1, 1])
    refs = setup.references.tolist()
    assert refs[:2] == [0, 1] and set(refs) <= {0, 1, 2, 3}
    sups = res.bootstrap_distribution
    assert sups.shape == (400, len(refs) + 1)
    fams = [0, 0, 1, 1]
    c_ref = []
    for k, h in enumerate(refs):
        other = [j for j, r in enumerate(refs) if fams[r] != fams[h]]
        stat = np.max(sups[:, [k, *other, -1]], axis=1)
        c_ref.append(np.quantile(stat, 0.9, method="higher"))
    mu, s = setup.mu, setup.scales
    for gi in range(4):
        low = min(mu[gi] / mu[h] - c_ref[k] * s[gi] for k, h in enumerate(refs)
                  if fams[h] == fams[gi])
        assert res.lower[gi] == pytest.approx(max(low, 0.0), rel=1e-12)


def test_lower_bounds_keep_their_level_near_a_tie():
    """The certification side at a near-tie: two candidates 1 standard error of their gap
    below the top. Recentring the maximum of the near-maximal deviations overstated the
    denominator's error there and its lower bounds covered 60 of these 100 audits at 90%;
    one-sided 90% bounds, tolerance 3 MC standard errors (9 points)."""
    rates = np.array([0.5, 0.44, 0.44, 0.42, 0.40, 0.38])
    shares = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.5])
    reps, covered = 100, 0
    for r in range(reps):
        rng = np.random.default_rng(r)
        cells = rng.choice(rates.size, 1400, p=shares)
        sel = (rng.random(cells.size) < rates[cells]).astype(int)
        summary = AuditSummary.from_rows(sel, sel, {"c": cells}, metric="selection_rate")
        res = summary_ratio_bounds(summary, alpha=0.1, alternative="lower", n_resamples=300,
                                   random_state=r)
        order = [int(n.split("=")[1]) for n in res.names]
        truth = rates[order] / rates.max()
        covered += np.all(res.lower <= truth + 1e-12)
    assert covered / reps >= 0.81


def test_simultaneous_coverage_quick_simulation():
    """Quick version of benchmarks/bench_group_ratio_validity.py: 8 groups, n = 4,000,
    80 audits; honest tolerance for 80 Bernoulli(0.9) draws (se 3.4 points)."""
    rng = np.random.default_rng(1)
    rates = np.array([0.5, 0.4, 0.42, 0.38, 0.44, 0.4, 0.36, 0.41])
    shares = np.array([0.2, 0.15, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1])
    covered = 0
    reps = 80
    for r in range(reps):
        cells = rng.choice(8, 4000, p=shares)
        sel = (rng.random(4000) < rates[cells]).astype(int)
        summary = AuditSummary.from_rows(sel, sel, {"c": cells}, metric="selection_rate")
        res = summary_ratio_bounds(summary, alpha=0.1, n_resamples=300, random_state=r)
        order = [int(n.split("=")[1]) for n in res.names]
        truth = rates[order] / rates.max()
        covered += np.all((res.lower <= truth) & (truth <= res.upper))
    assert 0.8 <= covered / reps <= 1.0


# -- certification and flags ----------------------------------------------------------
def test_certify_ratio_four_fifths():
    y, y_pred, g = _trail(n=20000, rates=(0.5, 0.48, 0.25, 0.47))
    res = certify_ratio(y, y_pred, {"g": g}, n_resamples=300, random_state=0)
    assert isinstance(res, RatioBoundsResult) and res.threshold == 0.8
    assert res.certified.tolist() == [True, True, False, True]
    assert res.verdict().groups == ("g=g2",) and res.verdict().unfair
    assert np.isinf(res.upper).all()
    assert "certified" in res.to_frame().columns
    assert "≥ 0.8" in res.guarantee()


@pytest.mark.parametrize("se", ["bootstrap", "delta"])
def test_flag_ratios_flags_the_low_group(se):
    y, y_pred, g = _trail(n=20000, rates=(0.5, 0.48, 0.25, 0.47))
    res = flag_ratios(y, y_pred, {"g": g}, se=se, n_resamples=300, random_state=0)
    assert isinstance(res, RatioFlagResult)
    assert [n for n, f in zip(res.names, res.flagged, strict=True) if f] == ["g=g2"]
    assert np.all((res.pvalues >= 0) & (res.pvalues <= 1))
    with pytest.raises(ValueError, match="threshold=0.8"):
        res.verdict(0.7)


def test_delta_and_bootstrap_standard_errors_agree_on_a_clear_maximum():
    y, y_pred, g = _trail(n=40000, rates=(0.6, 0.45, 0.3, 0.42))
    boot = flag_ratios(y, y_pred, {"g": g}, se="bootstrap", n_resamples=1000, random_state=0)
    delta = flag_ratios(y, y_pred, {"g": g}, se="delta", threshold=0.8)
    # the delta se is centred at the null r0 = 0.8; compare on the group near it (g1: 0.75)
    assert abs(boot.standard_errors[1] / delta.standard_errors[1] - 1) < 0.15


# -- the bias-audit table -------------------------------------------------------------
def _applicants(seed=0, n=8000):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.45, 0.55])
    race = rng.choice(["A", "B", "C", "D"], n, p=[0.5, 0.3, 0.19, 0.01])
    rate = np.where(race == "B", 0.25, 0.45) * np.where(sex == "F", 0.9, 1.0)
    score = rng.normal(size=n) + 2 * (rng.random(n) < rate)
    selected = (rng.random(n) < rate).astype(int)
    return selected, score, {"sex": sex, "race": race}


def test_bias_audit_selection_mode_lists_small_categories_without_ratio():
    selected, _, sensitive = _applicants()
    res = bias_audit_table(selected, sensitive, n_resamples=300, random_state=0)
    assert isinstance(res, BiasAuditResult)
    frame = res.to_frame()
    assert list(dict.fromkeys(frame.index.get_level_values("kind"))) == [
        "sex", "race", "sex × race"]
    small = frame.xs("race=D", level="group")
    assert small["verdict"].iloc[0] == "excluded" and np.isnan(small["impact_ratio"].iloc[0])
    # impact ratios: rate over the highest rate of the same kind among the large categories
    race = frame.xs("race", level="kind")
    large = race[race["verdict"] != "excluded"]
    np.testing.assert_allclose(large["impact_ratio"], large["rate"] / large["rate"].max(),
                               atol=1e-12)
    assert frame.xs("race=B", level="group")["verdict"].iloc[0] == "below 0.8"
    assert res.verdict().unfair


def test_bias_audit_scoring_mode_uses_the_sample_median():
    _, score, sensitive = _applicants()
    res = bias_audit_table(score, sensitive, mode="scoring", n_resamples=200, random_state=0)
    median = np.median(score)
    assert res.median == median
    above = score > median
    j = res.names.index("sex=F")
    assert res.rates[j] == pytest.approx(above[sensitive["sex"] == "F"].mean(), abs=1e-12)
    assert res.key_figures()["median score"] == median


def test_bias_audit_refuses_a_missing_positive_label():
    with pytest.raises(ValueError, match="pos_label"):
        bias_audit_table(np.array(["yes", "no"] * 50), {"sex": np.repeat(["F", "M"], 50)},
                         n_resamples=20)


@pytest.mark.real_data
def test_bias_audit_on_compas(compas_propublica):
    frame = compas_propublica.frame
    res = bias_audit_table((frame["decile_score"] >= 5).astype(int).to_numpy(),
                           frame[["sex", "race"]], n_resamples=200, random_state=0)
    table = res.to_frame()
    assert table.xs("race=Caucasian", level="group")["verdict"].iloc[0] == "below 0.8"
    assert (table["verdict"] == "excluded").sum() >= 1


def test_ratio_results_display_and_report_section():
    from skfair_audit.report import ratio_section

    y, y_pred, g = _trail()
    res = ratio_bounds(y, y_pred, {"g": g}, n_resamples=50, random_state=0)
    assert "RatioBoundsResult" in res._repr_html_()
    section = ratio_section(res, plot=False)
    assert section.guarantee == res.guarantee() and section.tables[0].rows
    selected, _, sensitive = _applicants()
    table = bias_audit_table(selected, sensitive, n_resamples=50, random_state=0)
    section = ratio_section(table, plot=False)
    assert [t.caption for t in section.tables] == [
        "Categories of sex", "Categories of race", "Categories of sex × race"]
    assert "BiasAuditResult" in table._repr_html_()
    with pytest.raises(TypeError, match="ratio audit result"):
        ratio_section(object())


def test_partitioned_trail_gives_the_in_memory_ratio_bounds():
    """A summary of a partitioned trail (skfair_audit.scale) runs the same ratio procedure,
    bit for bit for a discrete metric."""
    pd = pytest.importorskip("pandas")
    from skfair_audit.scale import summarize_trail

    y, y_pred, g = _trail(seed=4)
    frame = pd.DataFrame({"y": y, "p": y_pred, "g": g})
    parts = [frame.iloc[k::3] for k in range(3)]
    summary = summarize_trail(parts, label="y", prediction="p", protected=["g"],
                              metric="selection_rate")
    in_memory = ratio_bounds(y, y_pred, {"g": g}, n_resamples=100, random_state=0)
    partitioned = summary_ratio_bounds(summary, n_resamples=100, random_state=0)
    np.testing.assert_array_equal(partitioned.lower, in_memory.lower)
    np.testing.assert_array_equal(partitioned.upper, in_memory.upper)


def test_a_tiny_group_with_no_selection_is_not_flagged_with_false_certainty():
    """Was: the null-centred second moment of 6 rows all at 0 was a**2, not the Bernoulli
    a(1 - a) of the null, and the group got p ~ 3e-4 (flagged among 60 groups)."""
    rng = np.random.default_rng(0)
    g = np.r_[np.repeat(["a", "b"], 3000), np.repeat(["tiny"], 6)]
    y_pred = np.r_[(rng.random(6000) < 0.4).astype(int), np.zeros(6, int)]
    res = flag_ratios(y_pred, y_pred, {"g": g}, denominator="overall")
    j = res.names.index("g=tiny")
    a = 0.8 * y_pred.mean()
    expected_se = np.sqrt(a * (1 - a) / 6) / y_pred.mean()
    assert res.standard_errors[j] >= expected_se * 0.99
    assert not res.flagged[j]


def test_scales_are_clt_above_p_star_and_widen_below_it():
    """The ratio scales against their formula written out: sd(L) / (d sqrt(n P_n(G))) for a
    group above p*, times (p* / P_n(G))^{3/2} below it (the rule of the difference bounds)."""
    y, y_pred, g = _trail(n=4000, rates=(0.5, 0.45, 0.3, 0.42))
    small = np.arange(4000) < 24  # 24 rows: 0.6% of the sample, under p* = 0.01
    g = np.where(small, "tiny", g)
    res = ratio_bounds(y, y_pred, {"g": g}, denominator="overall", n_resamples=50,
                       random_state=0)
    share = res.sizes / res.n
    sd = np.std(y_pred)  # the global standard deviation of L (ddof 0)
    clt = sd / (y_pred.mean() * np.sqrt(res.n * share))
    expected = clt * np.maximum(1.0, 0.01 / share) ** 1.5
    np.testing.assert_allclose(res.scales, expected, rtol=1e-12)
    tiny = res.names.index("g=tiny")
    assert res.scales[tiny] > 2 * clt[tiny]
    # a smaller p* gives the tiny group its CLT width back
    res = ratio_bounds(y, y_pred, {"g": g}, denominator="overall", p_star=0.001,
                       n_resamples=50, random_state=0)
    np.testing.assert_allclose(res.scales, clt, rtol=1e-12)
