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
