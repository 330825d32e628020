"""Partitioned group audits: equal to the in-memory audit with the same Poisson weights,
independent of the partitioning, and to ``certify_bounds`` / ``flag_groups`` on every point
quantity. These tests use iterables of pandas chunks (no Dask needed)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from skfair_audit.group import DisparityProcess, certify_bounds, flag_groups, intersections
from skfair_audit.group._bootstrap import compute_scales, critical_value
from skfair_audit.group._procedures import _prepare
from skfair_audit.scale import (
    partitioned_certify_bounds,
    partitioned_flag_groups,
    poisson_weights,
    row_states,
)
from skfair_audit.scale._group import _seed

pd = pytest.importorskip("pandas")

ATTRS = ["race", "age", "sex"]


def _trail(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B", "C", "D"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.choice(["<25", "25-45", ">45"], n)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    flip = rng.random(n) < np.where(race == "D", 0.3, 0.15)
    frame = pd.DataFrame({"race": race, "age": age, "sex": sex, "y": y,
                          "y_pred": np.where(flip, 1 - y, y)})
    frame.index = rng.permutation(np.arange(10**6, 10**6 + n))  # a stable, unique row id
    return frame


def _chunks(frame, sizes):
    bounds = np.cumsum([0, *sizes])
    return [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _poisson_reference(frame, *, metric, target, alternative, alpha, n_resamples, seed):
    """In-memory audit with the same hash weights: row weights (n, B) -> atom counts through
    the in-memory SufficientStatistics -> the in-memory disparity process."""
    audit = _prepare(frame.y, frame.y_pred, frame[ATTRS], metric, target, None)
    keys = frame.index.to_numpy()[audit.rows]
    weights = poisson_weights(row_states(keys, seed), 0, n_resamples)
    counts = audit.stats.counts_from_row_weights(weights.T).astype(float)
    counts *= audit.n / counts.sum(axis=1, keepdims=True)
    scales, _ = compute_scales(audit.stats, audit.groups, kind="rescaled", p_star=0.01,
                               w0=np.inf, power=1.5)
    process = DisparityProcess(audit.stats, audit.groups, audit.target_kind, audit.theta_hat,
                               False, (0.0, 0.0), scales, audit.active)
    sups = process(counts)
    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    c = critical_value(dist, alpha)
    p = audit.sizes / audit.n
    width = c * scales / p**2
    return audit, dist, c, audit.estimates - width, audit.estimates + width


@pytest.mark.parametrize(
    "metric, target, alternative",
    [("fpr", "overall", "lower"), ("error_rate", 0.2, "two-sided"),
     ("tpr", "race=A", "upper")],
)
def test_equals_in_memory_audit_with_same_weights(metric, target, alternative):
    frame = _trail()
    res = partitioned_certify_bounds(
        _chunks(frame, [1000, 2500, 10, 2490]), label="y", prediction="y_pred",
        attributes=ATTRS, metric=metric, target=target, alternative=alternative, alpha=0.1,
        n_resamples=300, batch_size=37, random_state=5,
    )
    audit, dist, c, lower, upper = _poisson_reference(
        frame, metric=metric, target=target, alternative=alternative, alpha=0.1,
        n_resamples=300, seed=_seed(5),
    )
    assert res.names == audit.groups.names
    np.testing.assert_allclose(res.bootstrap_distribution, dist, rtol=1e-12, atol=1e-15)
    assert res.critical_value == pytest.approx(c, rel=1e-12)
    if alternative != "upper":
        np.testing.assert_allclose(res.lower, lower, rtol=1e-12)
    if alternative != "lower":
        np.testing.assert_allclose(res.upper, upper, rtol=1e-12)


def test_point_quantities_equal_certify_bounds():
    frame = _trail(seed=1)
    res = partitioned_certify_bounds(_chunks(frame, [3000, 3000]), label="y",
                                     prediction="y_pred", attributes=ATTRS, metric="fpr",
                                     n_resamples=50, random_state=0)
    ref = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", n_resamples=50,
                         random_state=0)
    assert res.names == ref.names
    assert res.empty_groups == ref.empty_groups
    np.testing.assert_array_equal(res.sizes, ref.sizes)
    np.testing.assert_allclose(res.estimates, ref.estimates, rtol=0, atol=1e-13)
    np.testing.assert_allclose(res.scales, ref.scales, rtol=1e-12)
    assert res.target == pytest.approx(ref.target, abs=1e-14)
    assert res.n == ref.n
    assert res.method.startswith("Poisson bootstrap")


def test_result_does_not_depend_on_partitioning_or_order():
    frame = _trail(seed=2)
    kwargs = dict(label="y", prediction="y_pred", attributes=ATTRS, metric="error_rate",
                  alternative="two-sided", n_resamples=200, random_state=9)
    one = partitioned_certify_bounds(frame, **kwargs)
    many = partitioned_certify_bounds(_chunks(frame, [7] * 100 + [5300]), **kwargs)
    shuffled = frame.sample(frac=1.0, random_state=0)
    reordered = partitioned_certify_bounds(_chunks(shuffled, [2000, 2000, 2000]), **kwargs)
    for other in (many, reordered):
        np.testing.assert_array_equal(other.bootstrap_distribution, one.bootstrap_distribution)
        np.testing.assert_array_equal(other.lower, one.lower)
        np.testing.assert_array_equal(other.upper, one.upper)


def test_row_key_column_replaces_the_index():
    frame = _trail(seed=3)
    kwargs = dict(label="y", prediction="y_pred", attributes=ATTRS, metric="fpr",
                  n_resamples=100, random_state=1)
    by_index = partitioned_certify_bounds(frame, **kwargs)
    keyed = frame.assign(uid=frame.index).reset_index(drop=True)
    chunks = [keyed.iloc[i:i + 1500].reset_index(drop=True) for i in range(0, 6000, 1500)]
    by_column = partitioned_certify_bounds(chunks, row_key="uid", **kwargs)
    np.testing.assert_array_equal(by_column.bootstrap_distribution,
                                  by_index.bootstrap_distribution)
    # string keys and composite keys are hashed (still partition-invariant)
    named = keyed.assign(uid=keyed.uid.map(lambda v: f"id-{v}"))
    a = partitioned_certify_bounds(named, row_key="uid", **kwargs)
    b = partitioned_certify_bounds(_chunks(named, [100, 5900]), row_key=["uid", "sex"],
                                   **kwargs)
    c = partitioned_certify_bounds(_chunks(named, [3000, 3000]), row_key=["uid", "sex"],
                                   **kwargs)
    assert np.isfinite(a.critical_value)
    np.testing.assert_array_equal(b.bootstrap_distribution, c.bootstrap_distribution)


def test_restarting_range_index_is_refused():
    frame = _trail(seed=4).reset_index(drop=True)
    chunks = [frame.iloc[i:i + 2000].reset_index(drop=True) for i in range(0, 6000, 2000)]
    with pytest.raises(ValueError, match="restart their index"):
        partitioned_certify_bounds(chunks, label="y", prediction="y_pred", attributes=ATTRS,
                                   metric="fpr", n_resamples=10, random_state=0)
    # consecutive ranges (a global RangeIndex cut in pieces) are fine
    partitioned_certify_bounds(_chunks(frame, [2000, 4000]), label="y", prediction="y_pred",
                               attributes=ATTRS, metric="fpr", n_resamples=10, random_state=0)


def test_repeated_keys_within_a_partition_are_refused():
    frame = _trail(seed=5)
    frame.index = np.zeros(len(frame), dtype=int)
    with pytest.raises(ValueError, match="row keys repeat"):
        partitioned_certify_bounds(frame, label="y", prediction="y_pred", attributes=ATTRS,
                                   metric="fpr", n_resamples=10, random_state=0)


def test_categorical_levels_and_min_size_follow_intersections():
    frame = _trail(seed=6)
    frame["race"] = pd.Categorical(frame.race, categories=["A", "B", "C", "D", "E"])
    res = partitioned_certify_bounds(_chunks(frame, [3000, 3000]), label="y",
                                     prediction="y_pred", attributes=ATTRS, metric="fpr",
                                     depth=2, n_resamples=20, random_state=0)
    groups = intersections(frame[ATTRS], depth=2)
    ref = certify_bounds(frame.y, frame.y_pred, groups, metric="fpr", n_resamples=20,
                         random_state=0)
    assert res.names == ref.names
    assert "race=E" in res.groups.empty_groups
    small = partitioned_certify_bounds(frame, label="y", prediction="y_pred", attributes=ATTRS,
                                       metric="fpr", min_size=400, n_resamples=20,
                                       random_state=0)
    sized = intersections(frame[ATTRS], min_size=400)
    assert small.names == sized.names
    assert set(small.groups.small_groups) == set(sized.small_groups)


def test_flagging_equals_flag_groups():
    frame = _trail(seed=7)
    for alternative in ("greater", "two-sided"):
        res = partitioned_flag_groups(_chunks(frame, [1000, 5000]), label="y",
                                      prediction="y_pred", attributes=ATTRS, metric="fpr",
                                      epsilon0=0.02, alternative=alternative, q=0.1)
        ref = flag_groups(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", epsilon0=0.02,
                          alternative=alternative, q=0.1)
        assert res.names == ref.names
        np.testing.assert_allclose(res.pvalues, ref.pvalues, rtol=1e-10, atol=1e-14)
        np.testing.assert_array_equal(res.flagged, ref.flagged)
    assert ref.flagged.any()


def test_poisson_and_multinomial_bounds_agree():
    # same audit, two bootstraps: critical values agree within Monte Carlo error
    frame = _trail(n=20_000, seed=8)
    kwargs = dict(metric="error_rate", alternative="two-sided", n_resamples=1500)
    res = partitioned_certify_bounds(frame, label="y", prediction="y_pred", attributes=ATTRS,
                                     random_state=0, **kwargs)
    ref = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], random_state=0, **kwargs)
    assert res.critical_value == pytest.approx(ref.critical_value, rel=0.1)


def test_empty_chunks_and_unconditioned_chunks_are_harmless():
    frame = _trail(seed=9)
    negatives = frame[frame.y == 0]
    positives = frame[frame.y == 1]
    kwargs = dict(label="y", prediction="y_pred", attributes=ATTRS, metric="tpr",
                  n_resamples=50, random_state=0)
    base = partitioned_certify_bounds(frame, **kwargs)
    split = partitioned_certify_bounds([negatives, frame.iloc[:0], positives], **kwargs)
    np.testing.assert_array_equal(base.bootstrap_distribution, split.bootstrap_distribution)
    assert base.names == split.names


def test_input_errors():
    frame = _trail(n=500, seed=10)
    common = dict(label="y", prediction="y_pred", metric="fpr", n_resamples=10)
    with pytest.raises(ValueError, match="not in the audit trail"):
        partitioned_certify_bounds(frame, attributes=["nope"], **common)
    with pytest.raises(ValueError, match="NaN"):
        partitioned_certify_bounds(frame.assign(sex=frame.sex.where(frame.y == 1)),
                                   attributes=ATTRS, **common)
    with pytest.raises(ValueError, match="no row satisfies"):
        partitioned_certify_bounds(frame.assign(y=1), attributes=ATTRS, **common)
    with pytest.raises(ValueError, match="neither 'overall'"):
        partitioned_certify_bounds(frame, attributes=ATTRS, target="race=Z", **common)
    with pytest.raises(ValueError, match="target must be"):
        partitioned_certify_bounds(frame, attributes=ATTRS,
                                   target=np.ones(len(frame), bool), **common)
    with pytest.raises(ValueError, match="iterable"):
        partitioned_certify_bounds(42, attributes=ATTRS, **common)
    with pytest.raises(ValueError, match="no partition"):
        partitioned_certify_bounds([], attributes=ATTRS, **common)
    with pytest.raises(ValueError, match="batch_size"):
        partitioned_certify_bounds(frame, attributes=ATTRS, batch_size=0, **common)
    with pytest.raises(ValueError, match="row_key"):
        partitioned_certify_bounds(frame, attributes=ATTRS, row_key="uid", **common)


def test_single_row_groups_warn_like_the_in_memory_audit():
    frame = _trail(n=400, seed=11)
    frame.loc[frame.index[0], "race"] = "Z"
    frame.loc[frame.index[0], "y"] = 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        partitioned_certify_bounds(frame, label="y", prediction="y_pred", attributes=["race"],
                                   metric="fpr", n_resamples=20, random_state=0)
    assert any("single row" in str(w.message) for w in record)


def test_importing_the_library_does_not_import_dask():
    code = ("import sys, skfair_audit, skfair_audit.scale, skfair_audit.group, "
            "skfair_audit.faith; print('dask' in sys.modules or 'distributed' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
