"""Monotone tilts: suprema against brute force over thresholds, bounds, queries, options."""

import joblib
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from skfair_audit.group import MonotoneTiltResult, monotone_tilt_bounds
from skfair_audit.group._bootstrap import ReplicateSums
from skfair_audit.group._monotone import MonotoneProcess, covariate_cells, half_line_sums
from skfair_audit.group._tilts import replicate_cell_sums, scale_factor

COVERED = dict(metric=lambda y, p: p.astype(float), target=0.0)


def _half_lines(cells, m, direction):
    """Row masks of the half-lines, built from the thresholds (no prefix sums)."""
    return [(cells >= k) if direction == "increasing" else (cells <= k) for k in range(m)]


def _process_value(t, L, w, theta_hat, theta_b, sign, scale, sd, p_star):
    """T_b(w)/s(w) of a tilt given by its values on the rows, from the row weights."""
    n = L.size
    mass = t.mean()
    if mass <= 0:
        return 0.0
    T = mass * (w * (L - theta_b) * t).sum() / n - ((L - theta_hat) * t).mean() * (w * t).sum() / n
    r = 1.0 if scale == "unscaled" else sd * np.sqrt(mass + p_star)
    return sign * T / (mass * r)


def _brute_force(cells, L, w, theta_hat, theta_b, m, directions, scale, sd, p_star):
    """sup over every mixture of two half-lines (and every half-line) by enumeration of the
    thresholds and a dense search plus a bounded scalar optimisation on each segment."""
    out = []
    for sign in (1.0, -1.0):
        best = 0.0
        for direction in directions:
            masks = [v.astype(float) for v in _half_lines(cells, m, direction)]
            for a in range(m):
                best = max(best, _process_value(masks[a], L, w, theta_hat, theta_b, sign,
                                                scale, sd, p_star))
                for b in range(a + 1, m):
                    def f(lam, first=masks[a], second=masks[b], sign=sign):
                        return -_process_value(lam * first + (1 - lam) * second, L, w,
                                               theta_hat, theta_b, sign, scale, sd, p_star)
                    grid = np.linspace(0, 1, 201)
                    vals = [-f(v) for v in grid]
                    i = int(np.argmax(vals))
                    res = minimize_scalar(f, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 200)]),
                                          method="bounded", options={"xatol": 1e-12})
                    best = max(best, max(vals), -res.fun)
        out.append(best)
    return np.array(out)


def _replicates(cells, L, W, m, kind, theta_hat):
    n = L.size
    counts = np.stack([np.bincount(cells, w, minlength=m) for w in W])
    sums = np.stack([np.bincount(cells, w * L, minlength=m) for w in W])
    theta_b = W @ L / n if kind == "overall" else np.full(W.shape[0], theta_hat)
    return ReplicateSums(counts, sums, theta_b), theta_b


@pytest.mark.parametrize("kind", ["constant", "overall"])
def test_exact_supremum_equals_brute_force_over_pairs_of_thresholds(kind):
    rng = np.random.default_rng(5)
    n, m = 60, 6
    x = rng.uniform(0, 1, n)
    cells = np.minimum((x * m).astype(int), m - 1)
    L = (rng.random(n) < 0.15 + 0.7 * x).astype(float)
    theta_hat = 0.2 if kind == "constant" else L.mean()
    N = np.bincount(cells, minlength=m).astype(float)
    S = np.bincount(cells, L, minlength=m)
    mass, centred = N / n, (S - theta_hat * N) / n
    sd, p_star = L.std(), 0.05
    W = rng.multinomial(n, np.ones(n) / n, size=3).astype(float)
    sums, theta_b = _replicates(cells, L, W, m, kind, theta_hat)
    interior = 0
    for scale in ("rescaled", "unscaled"):
        for directions in (("increasing",), ("decreasing",), ("increasing", "decreasing")):
            got = MonotoneProcess(mass, centred, n, directions, scale, sd, p_star, "exact")(sums)
            for b in range(W.shape[0]):
                ref = _brute_force(cells, L, W[b], theta_hat, theta_b[b], m, directions, scale,
                                   sd, p_star)
                np.testing.assert_allclose(got[b], ref, rtol=1e-7, atol=1e-12)
            # the edges matter: some supremum lies strictly inside a segment
            dl, sh = replicate_cell_sums(sums, mass, centred, n)
            for d in directions:
                M, Nv = half_line_sums(mass, d), half_line_sums(centred, d)
                v = (half_line_sums(sh, d) - Nv / M * half_line_sums(dl, d)) / scale_factor(
                    M, scale=scale, sd=sd, p_star=p_star)
                interior += np.sum(got[:, 0] > v.max(axis=1) * (1 + 1e-9) + 1e-15)
    assert interior > 0


def test_half_line_statistics_equal_the_thresholds_masks():
    """The prefix/suffix sums are the brute-force enumeration of the thresholds."""
    rng = np.random.default_rng(0)
    n, m = 200, 9
    cells = rng.integers(0, m, n)
    L = rng.normal(size=n)
    w = rng.multinomial(n, np.ones(n) / n).astype(float)
    per_cell = np.bincount(cells, w * L, minlength=m)
    for direction in ("increasing", "decreasing"):
        sums = half_line_sums(per_cell, direction)
        ref = [(w * L)[mask].sum() for mask in _half_lines(cells, m, direction)]
        np.testing.assert_allclose(sums, ref)


def test_relaxed_supremum_is_its_definition_and_exceeds_the_exact_one():
    rng = np.random.default_rng(2)
    n, m = 300, 8
    cells = np.sort(rng.integers(0, m, n))
    L = (rng.random(n) < 0.3 + 0.06 * cells).astype(float)
    N = np.bincount(cells, minlength=m).astype(float)
    S = np.bincount(cells, L, minlength=m)
    theta_hat = L.mean()
    mass, centred = N / n, (S - theta_hat * N) / n
    W = rng.multinomial(n, np.ones(n) / n, size=40).astype(float)
    sums, _ = _replicates(cells, L, W, m, "overall", theta_hat)
    dirs = ("increasing", "decreasing")
    exact = MonotoneProcess(mass, centred, n, dirs, "rescaled", L.std(), 0.01, "exact")(sums)
    estimates = np.concatenate([half_line_sums(centred, d) / half_line_sums(mass, d)
                                for d in dirs])
    rng_e = (estimates.min(), estimates.max())
    relaxed = MonotoneProcess(mass, centred, n, dirs, "rescaled", L.std(), 0.01, "relaxed",
                              rng_e)(sums)
    assert np.all(relaxed >= exact - 1e-12)
    # definition: max over the two ends of the range and the half-lines, by enumeration
    for b in range(3):
        ref = [0.0, 0.0]
        for d in dirs:
            for mask in _half_lines(cells, m, d):
                t = mask.astype(float)
                for e in rng_e:
                    mass_t = t.mean()
                    value = ((W[b] * (L - W[b] @ L / n - e) * t).sum() / n
                             - ((L - theta_hat - e) * t).mean()) / (
                                 L.std() * np.sqrt(mass_t + 0.01))
                    ref = [max(ref[0], value), max(ref[1], -value)]
        np.testing.assert_allclose(relaxed[b], ref, rtol=1e-10)


def _audit(n=1500, seed=0, **kw):
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 70, n)
    covered = (rng.random(n) < 0.95 - 0.002 * (age - 18)).astype(int)
    options = dict(COVERED, alternative="two-sided", bins=12, n_resamples=150,
                   random_state=0)
    options.update(kw)
    return age, covered, monotone_tilt_bounds(covered, covered, age, **options)


def test_result_bounds_queries_and_protocol():
    age, covered, res = _audit(direction="both")
    assert isinstance(res, MonotoneTiltResult)
    assert len(res.names) == 2 * 12 - 1  # every row appears once
    assert res.names[0].startswith("x >= ") and res.names[-1].startswith("x <= ")
    j = res.names.index(res.worst())
    assert res.lower[j] == res.lower.min() or res.upper[j] == res.upper.max() or (
        max(-res.lower[j], res.upper[j]) == np.max(np.maximum(-res.lower, res.upper)))
    # the bound of a half-line by name, and by its weights, equals its row
    name = res.names[5]
    b = res.bound(name)
    assert (b.lower, b.upper) == (res.lower[5], res.upper[5])
    weights = (np.arange(12) >= 5).astype(float)
    b2 = res.bound(weights)
    assert b2.estimate == pytest.approx(res.estimates[5])
    assert b2.lower == pytest.approx(res.lower[5])
    # a tilt and any multiple have the same disparity and bound (scaled to maximum 1)
    ramp = np.linspace(0.1, 1.0, 12)
    assert res.bound(3 * ramp).lower == pytest.approx(res.bound(ramp).lower)
    # its estimate is the tilted mean over the rows
    cell = np.searchsorted(res.cell_low, age, side="right") - 1
    w_rows = ramp[cell]
    assert res.bound(ramp).value == pytest.approx((w_rows * covered).sum() / w_rows.sum())
    with pytest.raises(ValueError, match="not monotone"):
        res.bound(np.sin(np.arange(12.0)) + 2)
    with pytest.raises(ValueError, match="one value per cell"):
        res.bound(np.ones(5))
    with pytest.raises(ValueError, match="no half-line"):
        res.bound("x >= 1000")
    table = res.table()
    assert table.columns == ("group", "size", "value", "disparity", "lower", "upper")
    assert len(table.rows) == len(res.names)
    assert res.verdict().gated is False
    verdict = res.verdict(1.5)
    assert verdict.gated and not verdict.unfair
    assert "every" in res.guarantee() and "monotone" in res.guarantee()
    frame = res.to_frame()
    assert list(frame.index) == list(res.names)


def test_increasing_only_refuses_decreasing_tilts_and_directions_nest():
    _, _, inc = _audit(direction="increasing")
    assert all(nm.startswith("x >= ") for nm in inc.names)
    with pytest.raises(ValueError, match="not monotone in the audited direction"):
        inc.bound(np.linspace(1, 0, 12))
    _, _, both = _audit(direction="both")
    # a larger class has a larger supremum: same replicates, larger critical value
    assert both.critical_value >= inc.critical_value


def test_results_identical_for_any_n_jobs_and_batch_layout_seeded():
    _, _, r1 = _audit(n_jobs=1, batch_size=40)
    with joblib.parallel_config(backend="threading"):
        _, _, r2 = _audit(n_jobs=2, batch_size=40)
    np.testing.assert_array_equal(r1.bootstrap_distribution, r2.bootstrap_distribution)
    assert r1.critical_value == r2.critical_value


def test_targets_reference_group_and_alternatives():
    rng = np.random.default_rng(3)
    n = 1200
    x = rng.uniform(0, 1, n)
    y = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.8 - 0.2 * x, y, 1 - y)
    reference = x < 0.3
    res = monotone_tilt_bounds(y, y_pred, x, metric="error_rate", target=reference, bins=8,
                               n_resamples=100, random_state=0)
    errors = (y != y_pred).astype(float)
    assert res.target == pytest.approx(errors[reference].mean())
    assert res._summary.target_kind == "reference"
    lower = monotone_tilt_bounds(y, y_pred, x, metric="error_rate", alternative="lower",
                                 bins=8, n_resamples=100, random_state=0)
    assert np.all(np.isinf(lower.upper)) and np.all(np.isfinite(lower.lower))
    upper = monotone_tilt_bounds(y, y_pred, x, metric="error_rate", alternative="upper",
                                 bins=8, n_resamples=100, random_state=0)
    assert np.all(np.isinf(upper.lower)) and np.all(np.isfinite(upper.upper))
    unscaled = monotone_tilt_bounds(y, y_pred, x, metric="error_rate", scale="unscaled",
                                    bins=8, n_resamples=100, random_state=0)
    widths = unscaled.upper - unscaled.estimates
    # unscaled widths are c / P_n[w]
    np.testing.assert_allclose(widths, np.minimum(unscaled.critical_value / unscaled.masses,
                                                  1 - unscaled.estimates), rtol=1e-10)
    with pytest.raises(ValueError, match="no named groups"):
        monotone_tilt_bounds(y, y_pred, x, metric="error_rate", target="x=1")


def test_cells_distinct_values_quantile_bins_and_edges():
    x = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 4.0])
    rows = np.ones(6, bool)
    cell, low, high, cuts = covariate_cells(x, rows, None)
    assert low.tolist() == [1, 2, 3, 4, 5] and cell.tolist() == [2, 0, 1, 1, 4, 3]
    assert cuts.tolist() == [1.5, 2.5, 3.5, 4.5]
    cell, low, high, cuts = covariate_cells(x, rows, 2)
    assert low.size == 2 and (cell == np.array([1, 0, 0, 0, 1, 1])).all()
    assert cuts.tolist() == [2.5]  # the median of the audit sample
    cell, low, high, cuts = covariate_cells(x, rows, [0, 2.5, 10])
    assert (cell == np.array([1, 0, 0, 0, 1, 1])).all()
    # empty cells are dropped (merged with the cell below); edges must cover the data
    cell, low, high, cuts = covariate_cells(x, rows, [0, 2.5, 2.7, 10])
    assert low.size == 2 and cuts.tolist() == [2.7]
    cell, low, high, cuts = covariate_cells(x, rows, [0, 2.1, 2.5, 10])
    assert low.size == 2 and cuts.tolist() == [2.5]
    with pytest.raises(ValueError, match="do not cover"):
        covariate_cells(x, rows, [2, 10])


def test_bad_input():
    y = np.array([0, 1, 1, 0])
    with pytest.raises(ValueError, match="direction"):
        monotone_tilt_bounds(y, y, [1.0, 2, 3, 4], metric="error_rate", direction="up")
    with pytest.raises(ValueError, match="one numeric covariate"):
        monotone_tilt_bounds(y, y, np.ones((4, 2)), metric="error_rate")
    with pytest.raises(ValueError, match="NaN"):
        monotone_tilt_bounds(y, y, [1.0, np.nan, 3, 4], metric="error_rate")
    with pytest.raises(ValueError, match="rows"):
        monotone_tilt_bounds(y, y, [1.0, 2, 3], metric="error_rate")


def test_quick_simultaneous_coverage_of_every_monotone_tilt():
    """Known truth: coverage 0.95 - 0.1 x on x ~ U(0, 1); every half-line's disparity is
    known, and a mixture's is an average of theirs, so covering the half-lines (the extreme
    tilts) with the table's bounds is the event for the worst tilt of the class."""
    rng = np.random.default_rng(11)
    reps, n, hits = 100, 2000, 0
    for _ in range(reps):
        x = rng.uniform(0, 1, n)
        covered = (rng.random(n) < 0.95 - 0.1 * x).astype(int)
        res = monotone_tilt_bounds(covered, covered, x, **COVERED, alternative="lower",
                                   bins=10, direction="increasing", n_resamples=200,
                                   random_state=rng.integers(2**31))
        truth = 0.95 - 0.1 * (res.cell_low + 1) / 2  # E[cov | x >= t]
        hits += np.all(res.lower <= truth + 1e-12)
    # each half-line's bound holds at least as often as all of them together (>= 90%)
    assert hits / reps >= 0.82
