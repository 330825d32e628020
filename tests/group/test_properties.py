"""Properties of the group engine on random small trails (hypothesis).

- The counts of a trail merge exactly: partition the rows any way, summarise the parts, merge
  them in any order and nesting, and get the summary of the whole trail, which gives the same
  audit summary as the rows in memory.
- The Benjamini–Hochberg flags are the step-up procedure written out by hand, and the
  adjusted p-values are scipy's.
- Simultaneous bounds from one bootstrap are monotone in the level: a higher confidence level
  never tightens a bound.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import false_discovery_control

from skfair_audit.group import (
    AuditSummary,
    DegenerateBootstrapWarning,
    TrailSummary,
    VacuousAuditWarning,
    get_metric,
)

pd = pytest.importorskip("pandas")

ATTRS = ["race", "sex"]
FAST = settings(max_examples=25, deadline=None)
#: Data-quality warnings small random trails may raise (a one-row group, a group that is the
#: whole sample, a constant metric): the properties hold with or without them.
DATA_WARNINGS = (DegenerateBootstrapWarning, VacuousAuditWarning)

rows = st.lists(
    st.tuples(st.sampled_from("ABC"), st.sampled_from("FM"), st.integers(0, 1),
              st.integers(0, 1)),
    min_size=12, max_size=80,
)


def _frame(records):
    frame = pd.DataFrame(records, columns=[*ATTRS, "y", "y_pred"])
    # Both labels occur, so that every metric below is defined somewhere.
    extra = pd.DataFrame([["A", "F", 0, 1], ["B", "M", 1, 1]], columns=frame.columns)
    return pd.concat([frame, extra], ignore_index=True)


def _recorded(function, *args, **kwargs):
    """``function(...)`` and the (category, message) of the warnings it raised, which must be
    data-quality warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    assert all(issubclass(w.category, DATA_WARNINGS) for w in caught), [
        str(w.message) for w in caught]
    return out, [(w.category, str(w.message)) for w in caught]


def _parts(frame, cuts):
    bounds = sorted({0, len(frame), *(c % (len(frame) + 1) for c in cuts)})
    return [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _merge_in_tree(parts, order, split):
    """Merge ``parts`` in the given order, as a binary tree cut at ``split``."""
    parts = [parts[i] for i in order]
    if len(parts) <= 2:
        return TrailSummary.merge(*parts)
    k = 1 + split % (len(parts) - 1)
    return TrailSummary.merge(TrailSummary.merge(*parts[:k]), TrailSummary.merge(*parts[k:]))


@FAST
@given(records=rows, cuts=st.lists(st.integers(0, 100), max_size=5),
       seed=st.integers(0, 2**16), metric=st.sampled_from(["error_rate", "fpr", "tpr"]))
def test_merge_is_order_independent_and_equals_the_in_memory_summary(records, cuts, seed,
                                                                     metric):
    frame = _frame(records)
    metric = get_metric(metric)
    rng = np.random.default_rng(seed)
    whole = TrailSummary.from_frame(frame, label="y", prediction="y_pred", protected=ATTRS,
                                    metric=metric)
    parts = [TrailSummary.from_frame(p, label="y", prediction="y_pred", protected=ATTRS,
                                     metric=metric) for p in _parts(frame, cuts)]
    order = rng.permutation(len(parts))
    merged = _merge_in_tree(parts, order, int(rng.integers(0, 100)))
    assert merged.levels == whole.levels and merged.n_rows == whole.n_rows == len(frame)
    assert merged.label_levels == whole.label_levels
    for name in ("cell_codes", "cell_rows", "atom_cell", "atom_value", "atom_count"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name),
                                      err_msg=name)

    from_trail, trail_warnings = _recorded(AuditSummary.from_trail, merged, metric=metric)
    memory, memory_warnings = _recorded(AuditSummary.from_rows, frame.y, frame.y_pred,
                                        frame[ATTRS], metric=metric)
    assert trail_warnings == memory_warnings
    assert from_trail.groups.names == memory.groups.names
    assert from_trail.n == memory.n and from_trail.theta_hat == memory.theta_hat
    np.testing.assert_array_equal(from_trail.sizes, memory.sizes)
    np.testing.assert_array_equal(from_trail.estimates, memory.estimates)
    for name in ("atom_count", "atom_value"):
        np.testing.assert_array_equal(getattr(from_trail.stats, name),
                                      getattr(memory.stats, name), err_msg=name)


def _step_up(pvalues, q):
    """Benjamini & Hochberg (1995) by the definition: reject the k smallest p-values, k the
    largest i with p_(i) <= i q / m."""
    m = pvalues.size
    order = np.argsort(pvalues, kind="stable")
    passing = np.flatnonzero(pvalues[order] <= q * np.arange(1, m + 1) / m)
    flagged = np.zeros(m, bool)
    if passing.size:
        flagged[order[: passing[-1] + 1]] = True
    return flagged


@FAST
@given(records=rows, q=st.floats(0.01, 0.5), epsilon0=st.floats(-0.2, 0.2),
       alternative=st.sampled_from(["greater", "less", "two-sided"]))
def test_flags_are_the_benjamini_hochberg_step_up(records, q, epsilon0, alternative):
    frame = _frame(records)
    if alternative == "two-sided":
        epsilon0 = abs(epsilon0)
    summary, _ = _recorded(AuditSummary.from_rows, frame.y, frame.y_pred, frame[ATTRS],
                           metric="error_rate")
    result, _ = _recorded(summary.flag_groups, epsilon0=epsilon0, alternative=alternative, q=q)
    np.testing.assert_array_equal(result.adjusted_pvalues,
                                  false_discovery_control(result.pvalues, method="bh"))
    np.testing.assert_array_equal(result.flagged, _step_up(result.pvalues, q) & summary.active)


@FAST
@given(records=rows, alphas=st.lists(st.floats(0.01, 0.5), min_size=2, max_size=4,
                                     unique=True),
       alternative=st.sampled_from(["lower", "upper", "two-sided"]))
def test_bounds_are_monotone_in_the_level(records, alphas, alternative):
    frame = _frame(records)
    summary, _ = _recorded(AuditSummary.from_rows, frame.y, frame.y_pred, frame[ATTRS],
                           metric="error_rate")
    results = [_recorded(summary.certify_bounds, alternative=alternative, alpha=alpha,
                         n_resamples=60, random_state=0)[0] for alpha in sorted(alphas)]
    # From the smallest alpha (the highest confidence) to the largest: the critical value
    # falls, the lower bounds rise and the upper bounds fall (same bootstrap draws).
    for wide, narrow in zip(results[:-1], results[1:], strict=True):
        np.testing.assert_array_equal(wide.bootstrap_distribution,
                                      narrow.bootstrap_distribution)
        assert wide.critical_value >= narrow.critical_value
        active = summary.active
        assert np.all(wide.lower[active] <= narrow.lower[active])
        assert np.all(wide.upper[active] >= narrow.upper[active])
