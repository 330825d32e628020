"""Partitioned group audits: one summary, the in-memory audit's, whatever the partitioning.

Discrete metrics: the partitioned summary *is* the in-memory summary (same atoms, same
collection), so every result is bit for bit the in-memory one. Continuous metrics: the
partitions compute a Poisson bootstrap, checked against the in-memory disparity process fed
with the same hashed row weights. These tests use iterables of pandas chunks (no Dask).
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from skfair_audit.group import (
    AuditSummary,
    TrailSummary,
    certify_bounds,
    certify_threshold,
    flag_groups,
    get_metric,
    intersections,
)
from skfair_audit.group._bootstrap import DisparityProcess, compute_scales, critical_value
from skfair_audit.scale import (
    partitioned_certify_bounds,
    partitioned_flag_groups,
    poisson_weights,
    summarize_trail,
)
from skfair_audit.scale._group import _poisson_seed
from skfair_audit.scale._poisson import row_states

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
                          "y_pred": np.where(flip, 1 - y, y),
                          "score": np.round(rng.random(n), 6)})
    frame.index = rng.permutation(np.arange(10**6, 10**6 + n))  # a stable, unique row id
    return frame


def _chunks(frame, sizes):
    bounds = np.cumsum([0, *sizes])
    return [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _assert_identical(a, b, fields=("lower", "upper", "estimates", "scales", "sizes",
                                    "bootstrap_distribution")):
    assert a.names == b.names
    assert a.critical_value == b.critical_value and a.target == b.target
    for name in fields:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize(
    "metric, target, alternative",
    [("fpr", "overall", "lower"), ("error_rate", 0.2, "two-sided"),
     ("tpr", "race=A", "upper"), ("ppv", "race=B & sex=F", "two-sided")],
)
def test_discrete_metric_is_bit_identical_to_in_memory(metric, target, alternative):
    frame = _trail()
    kwargs = dict(metric=metric, target=target, alternative=alternative, alpha=0.1,
                  n_resamples=300, random_state=5)
    res = partitioned_certify_bounds(
        _chunks(frame, [1000, 2500, 10, 2490]), label="y", prediction="y_pred",
        protected=ATTRS, **kwargs)
    ref = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], **kwargs)
    assert res.bootstrap == ref.bootstrap == "multinomial"
    assert res.method == ref.method
    _assert_identical(res, ref)
    assert res.empty_groups == ref.empty_groups
    assert res.groups.duplicate_groups == ref.groups.duplicate_groups


def test_every_procedure_runs_on_the_partitioned_summary():
    frame = _trail(seed=1)
    summary = summarize_trail(_chunks(frame, [3000, 3000]), label="y", prediction="y_pred",
                              protected=ATTRS, metric="fpr")
    memory = AuditSummary.from_rows(frame.y, frame.y_pred, frame[ATTRS], metric="fpr")
    assert summary.n == memory.n and summary.n_rows == memory.n_rows == len(frame)
    np.testing.assert_array_equal(summary.stats.atom_count, memory.stats.atom_count)
    kw = dict(epsilon0=0.05, alternative="less", n_resamples=200, random_state=0)
    a, b = summary.certify_threshold(**kw), memory.certify_threshold(**kw)
    _assert_identical(a, b, ("lower", "upper", "certified", "bootstrap_distribution"))
    assert b.method == a.method
    ref = certify_threshold(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", **kw)
    np.testing.assert_array_equal(ref.certified, a.certified)
    for se in ("delta", "bootstrap"):
        f1 = summary.flag_groups(epsilon0=0.02, se=se, n_resamples=200, random_state=0)
        f2 = flag_groups(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", epsilon0=0.02,
                         se=se, n_resamples=200, random_state=0)
        np.testing.assert_array_equal(f1.pvalues, f2.pvalues)
        np.testing.assert_array_equal(f1.flagged, f2.flagged)


def test_result_does_not_depend_on_partitioning_or_order():
    frame = _trail(seed=2)
    kwargs = dict(label="y", prediction="y_pred", protected=ATTRS, metric="error_rate",
                  alternative="two-sided", n_resamples=200, random_state=9)
    one = partitioned_certify_bounds(frame, **kwargs)
    many = partitioned_certify_bounds(_chunks(frame, [7] * 100 + [5300]), **kwargs)
    shuffled = frame.sample(frac=1.0, random_state=0)
    reordered = partitioned_certify_bounds(_chunks(shuffled, [2000, 2000, 2000]), **kwargs)
    for other in (many, reordered):
        _assert_identical(other, one)


def test_trail_summaries_merge_exactly_in_any_order():
    frame = _trail(seed=3)
    metric = get_metric("fpr")
    parts = [TrailSummary.from_frame(c, label="y", prediction="y_pred", protected=ATTRS,
                                     metric=metric) for c in _chunks(frame, [100, 2900, 3000])]
    whole = TrailSummary.from_frame(frame, label="y", prediction="y_pred", protected=ATTRS,
                                    metric=metric)
    for merged in (TrailSummary.merge(*parts), TrailSummary.merge(parts[2],
                                                                   TrailSummary.merge(*parts[:2]))):
        assert merged.levels == whole.levels and merged.n_rows == whole.n_rows
        for name in ("cell_codes", "cell_rows", "atom_cell", "atom_value", "atom_count"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))


def test_levels_missing_from_a_partition_are_merged_in_order():
    frame = _trail(seed=4)
    first = frame[frame.race != "A"]
    second = frame[frame.race == "A"]
    res = partitioned_certify_bounds([first, second], label="y", prediction="y_pred",
                                     protected=ATTRS, metric="fpr", n_resamples=100,
                                     random_state=0)
    ref = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", n_resamples=100,
                         random_state=0)
    _assert_identical(res, ref)


def test_categorical_levels_and_min_size_follow_intersections():
    frame = _trail(seed=6)
    frame["race"] = pd.Categorical(frame.race, categories=["A", "B", "C", "D", "E"])
    res = partitioned_certify_bounds(_chunks(frame, [3000, 3000]), label="y",
                                     prediction="y_pred", protected=ATTRS, metric="fpr",
                                     depth=2, n_resamples=20, random_state=0)
    groups = intersections(frame[ATTRS], depth=2)
    ref = certify_bounds(frame.y, frame.y_pred, groups, metric="fpr", n_resamples=20,
                         random_state=0)
    assert res.names == ref.names
    assert "race=E" in res.groups.empty_groups
    small = partitioned_certify_bounds(frame, label="y", prediction="y_pred", protected=ATTRS,
                                       metric="fpr", min_size=400, n_resamples=20,
                                       random_state=0)
    sized = intersections(frame[ATTRS], min_size=400)
    assert small.names == sized.names
    assert small.groups.small_groups == sized.small_groups
    assert small.groups.duplicate_groups == sized.duplicate_groups


def test_flagging_equals_flag_groups():
    frame = _trail(seed=7)
    for alternative in ("greater", "two-sided"):
        res = partitioned_flag_groups(_chunks(frame, [1000, 5000]), label="y",
                                      prediction="y_pred", protected=ATTRS, metric="fpr",
                                      epsilon0=0.02, alternative=alternative, q=0.1)
        ref = flag_groups(frame.y, frame.y_pred, frame[ATTRS], metric="fpr", epsilon0=0.02,
                          alternative=alternative, q=0.1)
        assert res.names == ref.names
        np.testing.assert_array_equal(res.pvalues, ref.pvalues)
        np.testing.assert_array_equal(res.flagged, ref.flagged)
    assert ref.flagged.any()


# -- continuous metrics: the Poisson bootstrap ----------------------------------------------
def _score_metric():
    return get_metric(lambda y, p: np.asarray(p, dtype=float), bounds=(0, 1), name="score")


def _poisson_reference(frame, *, target, alternative, alpha, n_resamples, seed):
    """The in-memory disparity process fed with the same hashed row weights."""
    summary = AuditSummary.from_rows(frame.y, frame.score, frame[ATTRS],
                                     metric=_score_metric(), target=target)
    cell_of_row = summary.groups.cell_of_row
    weights = poisson_weights(row_states(frame.index.to_numpy(), seed), 0, n_resamples)
    values = frame.score.to_numpy()
    n_cells = summary.groups.n_cells
    counts = np.stack([np.bincount(cell_of_row, w, minlength=n_cells) for w in weights.T])
    sums = np.stack([np.bincount(cell_of_row, w * values, minlength=n_cells)
                     for w in weights.T])
    scale = summary.n / counts.sum(axis=1, keepdims=True)
    counts, sums = counts * scale, sums * scale
    if target == "overall":
        theta = sums.sum(axis=1) / summary.n
    else:
        ref = summary.groups.cell_membership[:, summary.groups.index(target)]
        theta = sums[:, ref].sum(axis=1) / counts[:, ref].sum(axis=1)
    scales, _ = compute_scales(summary.stats, summary.groups, kind="rescaled", p_star=0.01,
                               w0=np.inf, power=1.5)
    process = DisparityProcess(summary.stats, summary.groups, summary.target_kind,
                               summary.theta_hat, False, (0.0, 0.0), scales, summary.active)
    from skfair_audit.group._bootstrap import ReplicateSums

    sups = process(ReplicateSums(counts, sums, theta))
    dist = {"lower": sups[:, 0], "upper": sups[:, 1]}.get(alternative, sups.max(axis=1))
    return summary, dist, critical_value(dist, alpha)


@pytest.mark.parametrize("target, alternative", [("overall", "lower"), ("race=A", "upper")])
def test_continuous_metric_switches_to_the_poisson_bootstrap(target, alternative):
    frame = _trail(seed=8)
    res = partitioned_certify_bounds(
        _chunks(frame, [1000, 2500, 10, 2490]), label="y", prediction="score",
        protected=ATTRS, metric=_score_metric(), target=target, alternative=alternative,
        max_atoms=1000, n_resamples=300, batch_size=37, random_state=5)
    assert res.bootstrap == "poisson" and res.method.startswith("Poisson bootstrap")
    summary, dist, c = _poisson_reference(frame, target=target, alternative=alternative,
                                          alpha=0.1, n_resamples=300, seed=_poisson_seed(5))
    assert res.names == summary.groups.names
    np.testing.assert_allclose(res.estimates, summary.estimates, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.bootstrap_distribution, dist, rtol=1e-9, atol=1e-15)
    assert res.critical_value == pytest.approx(c, rel=1e-9)
    # below max_atoms the same trail uses the atoms (and equals the in-memory audit)
    small = partitioned_certify_bounds(frame, label="y", prediction="score", protected=ATTRS,
                                       metric=_score_metric(), target=target,
                                       alternative=alternative, n_resamples=50,
                                       random_state=5)
    assert small.bootstrap == "multinomial"


def test_poisson_result_does_not_depend_on_partitioning():
    frame = _trail(seed=9)
    kwargs = dict(label="y", prediction="y_pred", protected=ATTRS, metric="error_rate",
                  bootstrap="poisson", n_resamples=200, random_state=9)
    one = partitioned_certify_bounds(frame, **kwargs)
    shuffled = frame.sample(frac=1.0, random_state=0)
    many = partitioned_certify_bounds(_chunks(shuffled, [7] * 100 + [5300]), **kwargs)
    assert one.bootstrap == many.bootstrap == "poisson"
    # integer weights of a binary metric: exact whatever the order of the sums
    np.testing.assert_array_equal(many.bootstrap_distribution, one.bootstrap_distribution)


def test_row_key_column_replaces_the_index():
    frame = _trail(seed=3)
    kwargs = dict(label="y", prediction="y_pred", protected=ATTRS, metric="fpr",
                  bootstrap="poisson", n_resamples=100, random_state=1)
    by_index = partitioned_certify_bounds(frame, **kwargs)
    keyed = frame.assign(uid=frame.index).reset_index(drop=True)
    chunks = [keyed.iloc[i:i + 1500].reset_index(drop=True) for i in range(0, 6000, 1500)]
    by_column = partitioned_certify_bounds(chunks, row_key="uid", **kwargs)
    np.testing.assert_array_equal(by_column.bootstrap_distribution,
                                  by_index.bootstrap_distribution)
    named = keyed.assign(uid=keyed.uid.map(lambda v: f"id-{v}"))
    b = partitioned_certify_bounds(_chunks(named, [100, 5900]), row_key=["uid", "sex"],
                                   **kwargs)
    c = partitioned_certify_bounds(_chunks(named, [3000, 3000]), row_key=["uid", "sex"],
                                   **kwargs)
    np.testing.assert_array_equal(b.bootstrap_distribution, c.bootstrap_distribution)


def test_restarting_range_index_is_refused_for_the_poisson_bootstrap():
    frame = _trail(seed=4).reset_index(drop=True)
    chunks = [frame.iloc[i:i + 2000].reset_index(drop=True) for i in range(0, 6000, 2000)]
    common = dict(label="y", prediction="y_pred", protected=ATTRS, metric="fpr",
                  n_resamples=10, random_state=0)
    with pytest.raises(ValueError, match="restart their index"):
        partitioned_certify_bounds(chunks, bootstrap="poisson", **common)
    # consecutive ranges (a global RangeIndex cut in pieces) are fine, and the multinomial
    # bootstrap needs no row key at all
    partitioned_certify_bounds(_chunks(frame, [2000, 4000]), bootstrap="poisson", **common)
    partitioned_certify_bounds(chunks, **common)


def test_repeated_keys_within_a_partition_are_refused():
    frame = _trail(seed=5)
    frame.index = np.zeros(len(frame), dtype=int)
    with pytest.raises(ValueError, match="row keys repeat"):
        partitioned_certify_bounds(frame, label="y", prediction="y_pred", protected=ATTRS,
                                   metric="fpr", bootstrap="poisson", n_resamples=10,
                                   random_state=0)


def test_continuous_metric_without_resamples_keeps_moments_for_flagging():
    frame = _trail(seed=10)
    metric = _score_metric()
    summary = summarize_trail(_chunks(frame, [3000, 3000]), label="y", prediction="score",
                              protected=ATTRS, metric=metric, max_atoms=100)
    assert not summary.stats.has_atoms and summary.replicates is None
    flags = summary.flag_groups(epsilon0=0.01)
    ref = flag_groups(frame.y, frame.score, frame[ATTRS], metric=metric, epsilon0=0.01)
    np.testing.assert_allclose(flags.pvalues, ref.pvalues, rtol=1e-9)
    with pytest.raises(ValueError, match="neither atoms nor Poisson"):
        summary.certify_bounds(n_resamples=10)
    with pytest.raises(ValueError, match="reads the trail twice"):
        summarize_trail(iter(_chunks(frame, [3000, 3000])), label="y", prediction="score",
                        protected=ATTRS, metric=metric, max_atoms=100, n_resamples=10)
    with pytest.raises(ValueError, match="max_atoms"):
        summarize_trail(frame, label="y", prediction="score", protected=ATTRS, metric=metric,
                        max_atoms=100, bootstrap="multinomial")


def test_poisson_and_multinomial_bounds_agree():
    # same audit, two bootstraps: critical values agree within Monte Carlo error
    frame = _trail(n=20_000, seed=8)
    kwargs = dict(metric="error_rate", alternative="two-sided", n_resamples=1500)
    res = partitioned_certify_bounds(frame, label="y", prediction="y_pred", protected=ATTRS,
                                     bootstrap="poisson", random_state=0, **kwargs)
    ref = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], random_state=0, **kwargs)
    assert res.critical_value == pytest.approx(ref.critical_value, rel=0.1)


def test_empty_chunks_and_unconditioned_chunks_are_harmless():
    frame = _trail(seed=9)
    negatives = frame[frame.y == 0]
    positives = frame[frame.y == 1]
    for bootstrap in ("auto", "poisson"):
        kwargs = dict(label="y", prediction="y_pred", protected=ATTRS, metric="tpr",
                      n_resamples=50, random_state=0, bootstrap=bootstrap)
        base = partitioned_certify_bounds(frame, **kwargs)
        split = partitioned_certify_bounds([negatives, frame.iloc[:0], positives], **kwargs)
        np.testing.assert_array_equal(base.bootstrap_distribution,
                                      split.bootstrap_distribution)
        assert base.names == split.names


def test_input_errors():
    frame = _trail(n=500, seed=10)
    common = dict(label="y", prediction="y_pred", metric="fpr", n_resamples=10)
    with pytest.raises(ValueError, match="not in the audit trail"):
        partitioned_certify_bounds(frame, protected=["nope"], **common)
    with pytest.raises(ValueError, match="missing value"):
        partitioned_certify_bounds(frame.assign(sex=frame.sex.where(frame.y == 1)),
                                   protected=ATTRS, **common)
    with pytest.raises(ValueError, match="missing value"):
        partitioned_certify_bounds(frame.assign(sex=pd.array(
            frame.sex.where(frame.y == 1), dtype="string")), protected=ATTRS, **common)
    with pytest.raises(ValueError, match="no row satisfies"):
        partitioned_certify_bounds(frame.assign(y=1), protected=ATTRS, **common)
    with pytest.raises(ValueError, match="neither 'overall'"):
        partitioned_certify_bounds(frame, protected=ATTRS, target="race=Z", **common)
    with pytest.raises(ValueError, match="row masks need the rows"):
        partitioned_certify_bounds(frame, protected=ATTRS,
                                   target=np.ones(len(frame), bool), **common)
    with pytest.raises(ValueError, match="iterable"):
        partitioned_certify_bounds(42, protected=ATTRS, **common)
    with pytest.raises(ValueError, match="no partition"):
        partitioned_certify_bounds([], protected=ATTRS, **common)
    with pytest.raises(ValueError, match="batch_size"):
        partitioned_certify_bounds(frame, protected=ATTRS, batch_size=0, **common)
    with pytest.raises(ValueError, match="row_key"):
        partitioned_certify_bounds(frame, protected=ATTRS, row_key="uid", bootstrap="poisson",
                                   **common)
    with pytest.raises(ValueError, match="bootstrap must be one of"):
        partitioned_certify_bounds(frame, protected=ATTRS, bootstrap="bayes", **common)
    with pytest.raises(ValueError, match="a row mask needs the rows"):
        summarize_trail(frame, label="y", prediction="y_pred", protected=ATTRS,
                        metric="fpr").groups.mask("race=A")


def test_single_row_groups_warn_like_the_in_memory_audit():
    frame = _trail(n=400, seed=11)
    frame.loc[frame.index[0], "race"] = "Z"
    frame.loc[frame.index[0], "y"] = 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        partitioned_certify_bounds(frame, label="y", prediction="y_pred", protected=["race"],
                                   metric="fpr", n_resamples=20, random_state=0)
    assert any("single row" in str(w.message) for w in record)


def test_importing_the_library_does_not_import_dask():
    code = ("import sys, skfair_audit, skfair_audit.scale, skfair_audit.group, "
            "skfair_audit.faith; print('dask' in sys.modules or 'distributed' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_labels_are_checked_across_partitions_as_in_memory():
    # each partition alone has valid binary labels; together they have two negative labels
    frame = _trail(seed=12)
    first = frame.iloc[:3000]
    second = frame.iloc[3000:].assign(y=lambda f: np.where(f.y == 0, -1, 1),
                                      y_pred=lambda f: np.where(f.y_pred == 0, -1, 1))
    with pytest.raises(ValueError, match="across the partitions.*not in"):
        partitioned_certify_bounds([first, second], label="y", prediction="y_pred",
                                   protected=ATTRS, metric="fpr", n_resamples=10)
    with pytest.raises(ValueError, match="not in"):
        certify_bounds(pd.concat([first, second]).y, pd.concat([first, second]).y_pred,
                       pd.concat([first, second])[ATTRS], metric="fpr", n_resamples=10)
