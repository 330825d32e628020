"""What the tilt audits share: the summary seam, the result protocol, the estimator and the
report."""

import numpy as np
import pytest

from skfair_audit.group import (
    AuditSummary,
    GroupAuditResult,
    GroupDisparityAuditor,
    audit_score,
    monotone_tilt_bounds,
    polynomial_tilt_bounds,
)


def test_summary_from_cells_is_the_group_summary_of_the_cells():
    """A tilt audit's summary is the group engine's: the same atoms, target and moments as
    the summary of the cells seen as groups."""
    rng = np.random.default_rng(0)
    n = 500
    cells = rng.integers(0, 7, n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.7, y, 1 - y)
    ref = cells < 2
    for target in (0.3, "overall", ref):
        tilts = AuditSummary.from_cells(y, p, cells, 7, metric="fpr", target=target)
        groups = AuditSummary.from_rows(y, p, {"c": cells}, metric="fpr", target=target)
        assert tilts.groups is None and tilts.theta_hat == pytest.approx(groups.theta_hat)
        assert tilts.target_kind == groups.target_kind
        np.testing.assert_allclose(tilts.stats.moments.sum(axis=2),
                                   groups.stats.moments.sum(axis=2))
        assert "n_cells=7" in repr(tilts)
    with pytest.raises(ValueError, match="no named groups"):
        AuditSummary.from_cells(y, p, cells, 7, metric="fpr", target="c=1")
    with pytest.raises(ValueError, match="rows"):
        AuditSummary.from_cells(y, p, cells[:-1], 7, metric="fpr")


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(1)
    n = 2000
    x = rng.uniform(0, 1, n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.9 - 0.2 * x, y, 1 - y)
    common = dict(metric="error_rate", n_resamples=100, random_state=0)
    return [monotone_tilt_bounds(y, p, x, bins=8, **common),
            polynomial_tilt_bounds(y, p, x, degree=1, **common)]


def test_results_share_the_group_protocol_and_plot(results):
    import matplotlib

    matplotlib.use("Agg")
    for res in results:
        assert isinstance(res, GroupAuditResult)
        table = res.table()
        assert len(table.rows) == len(res.names) and table.records()[0]["group"] == res.names[0]
        assert res.describe().startswith("Metric: error rate")
        figures = res.key_figures()
        assert figures["critical value"] == res.critical_value and "class" in figures
        assert res.verdict(0.5).unfair is False and res.verdict(0.0).unfair is True
        assert res.worst() in res.names
        # the worst tilt's bound is the score the estimator reports (two-sided)
        assert audit_score(res) == pytest.approx(
            -np.max(np.maximum(np.abs(res.lower), np.abs(res.upper))))
        ax = res.plot(max_groups=10)
        assert ax.get_title()


def test_report_section_takes_tilt_results(results, tmp_path):
    from skfair_audit.report import AuditReport, group_section

    section = group_section(results[0], title="Monotone tilts")
    assert section.guarantee.startswith("The disparity of a tilt w")
    report = AuditReport(title="tilts", audited="x", outcome="y", sections=(section,))
    assert "x >= " in report.to_markdown()


def test_estimator_tilts():
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    X = pd.DataFrame({"age": rng.uniform(18, 70, 2400), "z": rng.normal(size=2400)})
    y = (rng.random(2400) < 0.3 + 0.004 * (X.age - 18)).astype(int)
    kw = dict(protected=["age"], metric="error_rate", n_resamples=60, random_state=0)
    mono = GroupDisparityAuditor(LogisticRegression(), groups="monotone", bins=6,
                                 direction="increasing", **kw).fit(X, y)
    res = mono.audit(X, y)
    assert res.names[0].startswith("age >= ") and res.direction == "increasing"
    assert mono.score(X, y) == audit_score(res)
    direct = monotone_tilt_bounds(y, mono.estimator_.predict(X), X.age, metric="error_rate",
                                  bins=6, direction="increasing", n_resamples=60,
                                  random_state=0)
    np.testing.assert_array_equal(res.lower, direct.lower)
    poly = GroupDisparityAuditor(LogisticRegression(), groups="polynomial", degree=1,
                                 **{**kw, "protected": ["age", "z"]}).fit(X, y)
    assert poly.audit(X, y).covariates == ("age", "z")
    with pytest.raises(ValueError, match="procedure='bounds'"):
        GroupDisparityAuditor(LogisticRegression(), groups="monotone", procedure="flag",
                              **kw).fit(X, y)
    with pytest.raises(ValueError, match="no named groups"):
        GroupDisparityAuditor(LogisticRegression(), groups="monotone", target="age=1",
                              **kw).fit(X, y)
    with pytest.raises(ValueError, match="exactly one"):
        GroupDisparityAuditor(LogisticRegression(), groups="monotone",
                              **{**kw, "protected": ["age", "z"]}).fit(X, y).audit(X, y)

