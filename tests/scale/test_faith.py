"""Partitioned FaiTH audits: cell counts are a reduction, the audit is the in-memory one."""

import numpy as np
import pytest

from skfair_audit.faith import DegenerateMetricWarning, FaithAuditor, GridSpace
from skfair_audit.scale import partitioned_cell_counts, partitioned_faith_audit

# The toy model's decisions follow the group, which a FaiTH audit at a small budget flips for
# free: it says so with a DegenerateMetricWarning (the verdict stands).
DECIDES_BY_GROUP = "decides? by the protected attributes alone"

pd = pytest.importorskip("pandas")


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n)})
    y = (rng.random(n) < np.where(X.group == "b", 0.6, 0.3)).astype(int)
    return X, y


def test_counts_equal_a_bincount_of_the_concatenated_cells():
    X, y = _data(1000)
    space = GridSpace.from_data(X, y, ["group", "priors"])
    trail = X.assign(y=y)
    chunks = [trail.iloc[i:i + 300] for i in range(0, 1000, 300)] + [trail.iloc[:0]]
    counts = partitioned_cell_counts(chunks, space, label="y")
    # independent reference: count (label, group, priors) combinations directly
    expected = np.zeros(space.n_cells, dtype=int)
    for (label, group, priors), rows in trail.groupby(["y", "group", "priors"]).size().items():
        cell = [k for k in range(space.n_cells)
                if space.cell_labels[k] == label
                and tuple(space.cell_features[k]) == (group, priors)]
        expected[cell[0]] = rows
    np.testing.assert_array_equal(counts, expected)
    assert counts.sum() == 1000


def test_audit_equals_auditor_audit():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = _data(2000, seed=1)
    auditor = FaithAuditor(make_pipeline(OneHotEncoder(), LogisticRegression()),
                           protected=["group"], epsilon=0.05, delta=0.02, n_resamples=150,
                           random_state=4).fit(X, y)
    trail = X.assign(y=y)
    with pytest.warns(DegenerateMetricWarning, match=DECIDES_BY_GROUP):
        res = partitioned_faith_audit([trail.iloc[:1234], trail.iloc[1234:]], auditor,
                                      label="y")
        ref = auditor.audit(X, y)
    assert res.statistic == ref.statistic
    np.testing.assert_array_equal(res.counts, ref.counts)
    np.testing.assert_array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
    assert (res.lower_bound, res.upper_bound, res.pvalue) == (
        ref.lower_bound, ref.upper_bound, ref.pvalue)


def test_errors():
    X, y = _data(100)
    space = GridSpace.from_data(X, y, ["group", "priors"])
    with pytest.raises(ValueError, match="label column"):
        partitioned_cell_counts(X, space, label="y")
    with pytest.raises(ValueError, match="GridSpace"):
        partitioned_cell_counts(X.assign(y=y), object(), label="y")
    with pytest.raises(ValueError, match="iterable"):
        partitioned_cell_counts(3, space, label="y")
    with pytest.raises(ValueError, match="not levels of the sample space"):
        partitioned_cell_counts(X.assign(y=y, group="z"), space, label="y")
    unfitted = FaithAuditor(None, space="empirical")
    with pytest.raises(ValueError, match="space='grid'"):
        partitioned_faith_audit(X.assign(y=y), unfitted, label="y")


def _continuous(n, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"group": rng.integers(0, 2, n).astype(float),
                      "income": rng.normal(size=n).round(1),  # rounded: repeated rows
                      "age": rng.normal(size=n)})
    logit = X.income + 0.5 * X.age + 0.8 * X.group - 0.3
    return X, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)


@pytest.fixture(scope="module")
def reference_auditor():
    from sklearn.linear_model import LogisticRegression

    X, y = _continuous(1500, 0)
    return FaithAuditor(LogisticRegression(), protected=["group"], epsilon=0.05, delta=0.05,
                        n_resamples=200, random_state=3).fit(X, y)


def test_reference_audit_of_partitions_equals_the_in_memory_audit(reference_auditor):
    X, y = _continuous(2500, 1)
    X.iloc[:40] = X.iloc[40:80].to_numpy()  # rows repeated across partitions
    y[:40] = y[40:80]
    ref = reference_auditor.audit(X, y)
    trail = X.assign(y=y)
    for cuts in ([1234], [1, 2, 700, 2000], list(range(100, 2500, 100))):
        edges = [0, *cuts, len(trail)]
        chunks = [trail.iloc[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]
        res = partitioned_faith_audit(iter(chunks[::-1]), reference_auditor, label="y")
        assert res.statistic == ref.statistic and res.n_cells == ref.n_cells
        np.testing.assert_array_equal(res.counts, ref.counts)
        np.testing.assert_array_equal(res.bootstrap_distribution, ref.bootstrap_distribution)
        assert (res.lower_bound, res.upper_bound, res.pvalue, res.fair_pvalue) == (
            ref.lower_bound, ref.upper_bound, ref.pvalue, ref.fair_pvalue)


def test_audit_rows_merge_in_any_order_to_the_summary_of_all_rows(reference_auditor):
    X, y = _continuous(600, 2)
    whole = reference_auditor.summarize(X, y)
    # An independent count of the distinct (label, row) pairs.
    expected = X.assign(y=y).value_counts(sort=False)
    assert whole.n == 600 and len(whole.counts) == len(expected)
    parts = [reference_auditor.summarize(X.iloc[i:i + 50], y[i:i + 50])
             for i in range(0, 600, 50)]
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(len(parts))
        merged = parts[order[0]].merge(*(parts[i] for i in order[1:]))
        for name in ("rows", "labels", "counts"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
    # Sorted by label, then lexicographically by row.
    keys = [(label, *row) for label, row in zip(whole.labels, whole.rows.tolist(), strict=True)]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_reference_summaries_refuse_what_they_cannot_audit(reference_auditor):
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import AuditRows, PrecomputedMetric  # noqa: F401

    X, y = _continuous(300, 4)
    summary = reference_auditor.summarize(X, y)
    with pytest.raises(TypeError, match="AuditRows"):
        reference_auditor.audit_summary(np.ones(3))
    with pytest.raises(ValueError, match="2 features|3 features"):
        reference_auditor.audit_summary(AuditRows(summary.rows[:, :2], summary.labels,
                                                  summary.counts))
    with pytest.raises(ValueError, match="holds 1 audit row"):
        reference_auditor.audit_summary(AuditRows(summary.rows[:1], summary.labels[:1],
                                                  np.ones(1, dtype=np.int64)))
    empirical = FaithAuditor(LogisticRegression(), protected=["group"], space="empirical",
                             n_resamples=20).fit(X, y)
    with pytest.raises(ValueError, match="empirical sample space"):
        partitioned_faith_audit([X.assign(y=y)], empirical, label="y")
    with pytest.raises(ValueError, match="no rows"):
        partitioned_faith_audit([], reference_auditor, label="y")
