import numpy as np
import pytest
from scipy import stats

from skfair_audit._resampling import MultinomialCounts, resample
from skfair_audit.group import intersections, intervals, masks
from skfair_audit.group._bootstrap import (
    DisparityProcess,
    SufficientStatistics,
    delta_method_se,
    group_scales,
    normal_pvalues,
)


def _atom_counts(stats_, cell_of_row, values, reference, weights):
    """Row weights ``(size, n)`` summed into the atoms of ``stats_`` (a brute-force map)."""
    ref = np.zeros(values.size, bool) if reference is None else reference
    atom = {(c, r, v): k for k, (c, r, v) in enumerate(zip(
        stats_.atom_cell.tolist(), stats_.atom_reference.tolist(), stats_.atom_value.tolist(),
        strict=True))}
    row_atom = np.array([atom[(int(c), bool(r), float(v))]
                         for c, r, v in zip(cell_of_row, ref, values, strict=True)])
    out = np.zeros((weights.shape[0], stats_.n_atoms))
    for i, k in enumerate(row_atom):
        out[:, k] += weights[:, i]
    return out


def _setup(binary=True, seed=0, n=300):
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q", "r"], n)
    b = rng.choice(["u", "v"], n)
    groups = intersections({"a": a, "b": b})
    values = rng.integers(0, 2, n).astype(float) if binary else rng.normal(size=n)
    reference = a == "q"
    stats_ = SufficientStatistics.from_rows(groups.cell_of_row, values, groups.n_cells,
                                           reference)
    return groups, values, reference, stats_


def _naive(values, masks, weights, target_kind, theta_hat, reference, boolean, epsilon):
    """Per-replicate Python loop over groups and rows."""
    n = values.size
    out = np.empty((weights.shape[0], masks.shape[1]))
    for b, w in enumerate(weights):
        if target_kind == "overall":
            theta_b = float(sum(int(w[i]) * values[i] for i in range(n))) / n
        elif target_kind == "reference":
            num = sum(int(w[i]) * values[i] for i in range(n) if reference[i])
            den = sum(int(w[i]) for i in range(n) if reference[i])
            theta_b = num / den if den > 0 else theta_hat
        else:
            theta_b = theta_hat
        for j in range(masks.shape[1]):
            rows = np.flatnonzero(masks[:, j])
            s_b = float(sum(int(w[i]) * values[i] for i in rows))
            n_b = float(sum(int(w[i]) for i in rows))
            s_0 = float(sum(values[i] for i in rows))
            n_0 = float(rows.size)
            cb, c0 = s_b - theta_b * n_b, s_0 - theta_hat * n_0
            if boolean:
                out[b, j] = (cb - c0 - epsilon * (n_b - n_0)) / n
            else:
                out[b, j] = (cb * n_0 - c0 * n_b) / n**2
    return out


@pytest.mark.parametrize("target_kind", ["overall", "reference", "constant"])
@pytest.mark.parametrize("boolean", [False, True])
def test_vectorised_process_equals_naive_loop_exactly(target_kind, boolean):
    groups, values, reference, stats_ = _setup()
    n = values.size
    theta_hat = {"overall": values.mean(), "reference": values[reference].mean(),
                 "constant": 0.25}[target_kind]
    process = DisparityProcess(stats_, groups, target_kind, theta_hat, boolean, (0.0, 0.0),
                               np.ones(len(groups)), np.ones(len(groups), dtype=bool))
    weights = resample(lambda w: w, MultinomialCounts.rows(n), 20, batch_size=7,
                       random_state=3)
    counts = _atom_counts(stats_, groups.cell_of_row, values, reference, weights)
    masks = np.column_stack([groups.mask(j) for j in range(len(groups))])
    eps = 0.125 if boolean else 0.0
    got = process.group_statistics(counts, epsilon=eps)
    ref = _naive(values, masks, weights, target_kind, theta_hat, reference, boolean, eps)
    np.testing.assert_array_equal(got, ref)


def test_continuous_values_match_naive_loop():
    groups, values, reference, stats_ = _setup(binary=False, n=120)
    assert stats_.n_atoms == values.size  # continuous L: one atom per row
    process = DisparityProcess(stats_, groups, "overall", values.mean(), False, (0.0, 0.0),
                               np.ones(len(groups)), np.ones(len(groups), dtype=bool))
    weights = resample(lambda w: w, MultinomialCounts.rows(120), 5, random_state=0)
    masks = np.column_stack([groups.mask(j) for j in range(len(groups))])
    got = process.group_statistics(_atom_counts(stats_, groups.cell_of_row, values, reference,
                                                   weights))
    ref = _naive(values, masks, weights, "overall", values.mean(), reference, False, 0.0)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-15)


def test_binary_metric_compresses_to_few_atoms():
    groups, values, _, stats_ = _setup(n=5000)
    assert stats_.n_atoms <= groups.n_cells * 2 * 2
    assert stats_.n == 5000


def test_suprema_are_scaled_maxima():
    groups, values, _, stats_ = _setup()
    scales = np.linspace(0.5, 2.0, len(groups))
    active = np.ones(len(groups), dtype=bool)
    active[2] = False
    process = DisparityProcess(stats_, groups, "overall", values.mean(), False, (0.0, 0.0),
                               scales, active)
    counts = stats_.draw()(np.random.default_rng(0), 30)
    t = process.group_statistics(counts)
    sups = process(counts)
    np.testing.assert_allclose(sups[:, 0], (t[:, active] / scales[active]).max(axis=1))
    np.testing.assert_allclose(sups[:, 1], (-t[:, active] / scales[active]).max(axis=1))


def test_kadane_process_equals_enumeration_process():
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, 400)
    values = (rng.random(400) < 0.3).astype(float)
    groups = intervals(x, np.linspace(0, 1, 9))
    stats_ = SufficientStatistics.from_rows(groups.cell_of_row, values, groups.n_cells)
    args = (stats_, groups, "overall", values.mean(), True, (0.05, -0.05),
            np.ones(len(groups)), np.ones(len(groups), dtype=bool))
    counts = stats_.draw()(rng, 40)
    np.testing.assert_allclose(DisparityProcess(*args, kadane=True)(counts),
                               DisparityProcess(*args)(counts), atol=1e-14)


@pytest.mark.parametrize("null", [None, 0.3])
def test_delta_method_matches_row_level_influence_function(null):
    groups, values, reference, stats_ = _setup(binary=False, n=400, seed=2)
    n = values.size
    for kind in ("constant", "overall", "reference"):
        theta = {"constant": 0.0, "overall": values.mean(),
                 "reference": values[reference].mean()}[kind]
        se = delta_method_se(stats_, groups, kind, theta, null_disparity=null)
        for j in (0, 4, len(groups) - 1):
            g = groups.mask(j)
            p = g.mean()
            centre = values[g].mean() if null is None else theta + null
            psi = (values - centre) * g / p
            if kind == "overall":
                psi = psi - (values - values.mean())
            elif kind == "reference":
                pr = reference.mean()
                psi = psi - (values - values[reference].mean()) * reference / pr
            assert se[j] == pytest.approx(np.sqrt(np.mean(psi**2) / n), rel=1e-9)


def test_null_centred_se_is_positive_for_constant_small_group():
    values = np.array([0.0, 0.0, 0.0] + [1.0, 0.0] * 50)
    groups = masks(np.arange(values.size)[:, None] < 3, names=["tiny"])
    stats_ = SufficientStatistics.from_rows(groups.cell_of_row, values, groups.n_cells)
    wald = delta_method_se(stats_, groups, "constant", 0.5)
    score = delta_method_se(stats_, groups, "constant", 0.5, null_disparity=-0.1)
    assert wald[0] == 0.0
    assert score[0] == pytest.approx(np.sqrt(0.4**2 / 3))


def test_group_scales_formula():
    n_g = np.array([5.0, 40.0])
    s_g = np.array([2.0, 30.0])
    s2_g = np.array([2.0, 30.0])  # binary L
    out = group_scales(n_g, s_g, s2_g, 100, 0.4, p_star=0.1, w0=0.2)
    p = n_g / 100
    sd_g = np.sqrt(s_g / n_g * (1 - s_g / n_g))
    lam = p / (p + 0.2)
    np.testing.assert_allclose(out, np.maximum(p, 0.1) ** 1.5 * (lam * sd_g + (1 - lam) * 0.4))
    np.testing.assert_array_equal(group_scales(n_g, s_g, s2_g, 100, 0.4, kind="unscaled"), 1.0)


def test_normal_pvalues_directions_and_range():
    e = np.array([-0.2, 0.0, 0.05, 0.3])
    se = np.full(4, 0.1)
    p, z = normal_pvalues(e, se, 0.0, "greater")
    np.testing.assert_allclose(p, stats.norm.sf(e / 0.1))
    p, _ = normal_pvalues(e, se, 0.0, "less")
    np.testing.assert_allclose(p, stats.norm.cdf(e / 0.1))
    p, _ = normal_pvalues(e, se, 0.0, "two-sided")
    np.testing.assert_allclose(p, 2 * stats.norm.sf(np.abs(e) / 0.1))
    p, _ = normal_pvalues(e, se, 0.1, "two-sided")
    assert np.all((p > 0) & (p <= 1))
    assert p[1] == pytest.approx(1.0)  # estimate in the middle of the null
    # boundary of the composite null: P(|N(0.1, 0.1^2)| >= 0.3)
    assert p[3] == pytest.approx(stats.norm.sf(2.0) + stats.norm.cdf(-4.0))
    p, _ = normal_pvalues(np.array([0.1, -0.1]), np.zeros(2), 0.0, "greater")
    assert p.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError):
        normal_pvalues(e, se, 0.0, "upper")


def test_two_sided_pvalues_uniform_under_null():
    rng = np.random.default_rng(0)
    e = rng.normal(0.0, 0.1, 4000)
    p, _ = normal_pvalues(e, np.full(e.size, 0.1), 0.0, "two-sided")
    assert np.all((p > 0) & (p <= 1))
    assert stats.kstest(p, "uniform").pvalue > 0.001
