"""The one result protocol (:class:`skfair_audit.results.AuditResult`): every result follows
it, the old names of ``group`` are the shared ones, the intervals mean what the guarantees
say, and the report renders any result of it, the RKHS audit's included."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skfair_audit.results import AuditResult, ConfidenceInterval, ResultTable, Verdict

#: Every result class of the audits (the ``display_results`` fixture holds one of each).
RESULTS = ("FaithResult", "FaithSensitivityResult", "GroupBoundsResult",
           "GroupCertificationResult", "GroupFlagResult", "EqualizedOddsResult",
           "RKHSBoundsResult", "MonotoneTiltResult", "PolynomialTiltResult", "MonitorResult",
           "RatioBoundsResult", "RatioFlagResult", "BiasAuditResult", "DisparitySummaryResult")


def test_group_keeps_its_names_and_they_are_the_shared_ones():
    import skfair_audit
    from skfair_audit import group, results

    assert group.Verdict is results.Verdict
    assert group.ResultTable is results.ResultTable
    assert issubclass(group.GroupAuditResult, results.AuditResult)
    assert skfair_audit.results is results


@pytest.mark.parametrize("name", RESULTS)
def test_every_result_answers_the_protocol(display_results, name):
    pd = pytest.importorskip("pandas")
    result = display_results[name]
    assert isinstance(result, AuditResult)
    verdict = result.verdict()
    assert isinstance(verdict, Verdict) and verdict.summary and verdict.details is not None
    assert verdict.gated or not verdict.unfair  # no claim, no failure
    table = result.table()
    assert isinstance(table, ResultTable) and table.rows
    assert len(table.columns) == len(table.labels)
    assert all(len(row) == len(table.columns) for row in table.rows)
    assert set(verdict.groups) <= {row[0] for row in table.rows}
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) >= 1
    ci = result.confidence_interval()
    assert isinstance(ci, ConfidenceInterval)
    low, high = np.asarray(ci.low, dtype=float), np.asarray(ci.high, dtype=float)
    assert low.shape == high.shape and np.all(low <= high)
    assert isinstance(result.guarantee(), str) and len(result.guarantee()) > 40
    assert isinstance(result.key_figures(), dict) and result.key_figures()
    assert isinstance(result.describe(), str) and isinstance(result.notes(), list)
    shown = result.figure()
    assert shown is None or (isinstance(shown[0], str) and callable(shown[1]))
    assert '<div class="skfair-result">' in result._repr_html_()


def test_a_result_of_the_protocol_without_a_table_is_refused():
    with pytest.raises(TypeError, match="abstract"):
        AuditResult()


# -- what the intervals of each result mean -------------------------------------------------
def test_bounds_and_tilts_intervals_are_their_bounds(display_results):
    bounds = display_results["GroupBoundsResult"]
    ci = bounds.confidence_interval()
    np.testing.assert_array_equal(ci.low, bounds.lower)
    np.testing.assert_array_equal(ci.high, bounds.upper)
    name = bounds.table().rows[0][0]
    assert tuple(bounds.confidence_interval(name)) == (bounds.bound(name).lower,
                                                       bounds.bound(name).upper)
    monotone = display_results["MonotoneTiltResult"]
    np.testing.assert_array_equal(monotone.confidence_interval().low, monotone.lower)
    j = 3
    assert tuple(monotone.confidence_interval(monotone.names[j])) == (
        monotone.lower[j], monotone.upper[j])
    ramp = np.linspace(0.0, 1.0, monotone.cell_low.size)
    assert tuple(monotone.confidence_interval(ramp)) == tuple(
        monotone.bound(ramp).confidence_interval())


def test_certificate_intervals_are_the_claims_certified(display_results):
    cert = display_results["GroupCertificationResult"]
    assert cert.alternative == "less" and cert.certified.any() and not cert.certified.all()
    ci = cert.confidence_interval()
    assert np.all(ci.low == -np.inf)
    np.testing.assert_array_equal(ci.high, np.where(cert.certified, cert.epsilon0, np.inf))
    # a certified group's upper bound is below epsilon0: the interval is its claim
    assert np.all(cert.upper[cert.certified] < cert.epsilon0)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_flag_intervals_exclude_the_threshold_exactly_for_flagged_groups(alternative):
    from skfair_audit.group import flag_groups

    rng = np.random.default_rng(3)
    g = rng.choice(list("abcdef"), 6000)
    y = np.zeros(g.size, dtype=int)
    rate = {"a": 0.1, "b": 0.1, "c": 0.2, "d": 0.02, "e": 0.1, "f": 0.25}
    y_pred = (rng.random(g.size) < np.vectorize(rate.get)(g)).astype(int)
    res = flag_groups(y, y_pred, {"g": g}, metric="fpr", epsilon0=0.03, q=0.1,
                      alternative=alternative)
    assert res.flagged.any() and not res.flagged.all()
    low, high = res.confidence_interval()
    if alternative == "greater":
        excluded = low > res.epsilon0
        assert np.all(high == np.inf)
    elif alternative == "less":
        excluded = high < res.epsilon0
        assert np.all(low == -np.inf)
    else:  # intervals on |epsilon(G)|
        excluded = low >= abs(res.epsilon0)
        assert np.all(low[~res.flagged] == 0.0) and np.all(high == np.inf)
    np.testing.assert_array_equal(excluded | (low == res.epsilon0) | (high == res.epsilon0),
                                  res.flagged)
    np.testing.assert_array_equal(np.isfinite(low) & np.isfinite(high), False)


def test_equalized_odds_intervals_bound_the_worse_rate(display_results):
    eo = display_results["EqualizedOddsResult"]
    low, high = eo.confidence_interval()
    assert np.all(low == 0.0)
    np.testing.assert_array_equal(high[eo.active], eo.worst_disparity[eo.active])
    worse = np.fmax(np.abs(eo.false_positive_rate.estimates),
                    np.abs(eo.true_positive_rate.estimates))
    assert np.all(worse[eo.active] <= high[eo.active])


def test_monitor_verdict_and_table(display_results):
    from skfair_audit.monitor._result import COLUMNS

    monitor = display_results["MonitorResult"]
    verdict = monitor.verdict()
    flagged = [monitor.names[j] for j in monitor.order() if monitor.flagged[j]]
    assert list(verdict.groups) == flagged and verdict.unfair == bool(flagged)
    assert verdict.summary == monitor.verdict_summary()
    table = monitor.table()
    assert table.columns == tuple(k for k, _ in COLUMNS)
    assert list(monitor.to_frame().columns) == list(table.columns)
    assert [row[0] for row in table.rows] == [monitor.names[j] for j in monitor.order()]


def test_faith_table_is_the_moves_of_the_plan(display_results):
    sensitivity = display_results["FaithSensitivityResult"]
    assert [row[:3] for row in sensitivity.table().rows] == [
        (r["metric"], r["epsilon"], r["statistic"]) for r in sensitivity.records()]
    np.testing.assert_array_equal(sensitivity.confidence_interval().high, sensitivity.ci_high)
    faith = display_results["FaithResult"]
    moves = faith.moves()
    assert faith.table().records() == [
        {"from_cell": m["from_cell"], "to_cell": m["to_cell"], "count": m["count"],
         "mass": m["mass"]} for m in moves]
    assert faith.figure()[0].startswith("Adversarial heat map")


# -- the RKHS result: its table, and in a report --------------------------------------------
@pytest.fixture(scope="module")
def rkhs():
    from skfair_audit.group import rkhs_tilt_bounds

    rng = np.random.default_rng(5)
    x = rng.uniform(0, 4, 400)
    covered = (rng.random(400) < 0.95 - 0.1 * x).astype(int)
    return x, covered, rkhs_tilt_bounds(x, covered, covered,
                                        metric=lambda y, p: p.astype(float), bandwidth=0.6,
                                        alternative="two-sided", n_resamples=200,
                                        random_state=0)


def test_rkhs_table_rows_are_unit_bumps_computed_directly(rkhs):
    """Each row is the bump k(c, .) of RKHS norm 1 at an audit point: its tilted mean and
    bounds from the kernel sums written out (the unscaled width c ||h||^2 / P_n[h]^2)."""
    x, covered, res = rkhs
    table = res.table()
    assert table.columns == ("tilt", "effective_size", "value", "disparity", "lower", "upper")
    centres = [float(row[0].removeprefix("bump at c = ")) for row in table.rows]
    assert centres == sorted(centres)
    assert 2 <= len(centres) <= res.TABLE_TILTS
    for name, size, value, disparity, lower, upper in table.rows:
        # the centre is the audit point the name rounds to 3 digits (the closest fit of them)
        shown = float(name.removeprefix("bump at c = "))
        candidates = x[np.abs(x - shown) <= 5e-3 * max(abs(shown), 1e-3)]
        kernels = np.exp(-((x[None, :] - candidates[:, None]) ** 2) / (2 * 0.6**2))
        h = kernels[np.argmin(np.abs(kernels @ covered / kernels.sum(axis=1) - value))]
        assert value == pytest.approx((covered * h).sum() / h.sum(), rel=1e-9)
        assert disparity == pytest.approx(value - res.target, rel=1e-9)
        width = res.critical_value / h.mean() ** 2
        assert lower == pytest.approx(disparity - width, rel=1e-9)
        assert upper == pytest.approx(disparity + width, rel=1e-9)
        assert size == pytest.approx(h.sum() ** 2 / (h**2).sum(), rel=1e-9)
    # the centres cover the data: every audit point within one bandwidth of a centre
    if len(centres) < res.TABLE_TILTS:
        gaps = np.min(np.abs(x[:, None] - np.array(centres)[None, :]), axis=1)
        assert gaps.max() <= 0.6 + 1e-3  # centres printed to 3 digits
    low, high = res.confidence_interval()
    np.testing.assert_array_equal(low, [row[4] for row in table.rows])
    one = res.confidence_interval(coef=[1.0], centers=[[2.0]])
    assert tuple(one) == tuple(res.bound(coef=[1.0], centers=[[2.0]]).confidence_interval())


def test_rkhs_result_renders_in_a_report(rkhs, parse_report, tmp_path):
    from skfair_audit.report import AuditReport, group_section

    _, _, res = rkhs
    section = group_section(res, title="Coverage under tilts", key="rkhs")
    assert section.guarantee == res.guarantee()
    assert section.summary["critical value c"] == res.critical_value
    assert section.paragraphs == (res.describe(), res.verdict().details)
    assert section.tables[0].caption == "Tilts" and section.figures == ()
    report = AuditReport("RKHS", "coverage of a prediction set", (section,), command="x")
    parsed = parse_report(report.to_html())
    text = parsed.text("rkhs")
    first = res.table().rows[0][0]
    assert first in text and "Gaussian RKHS ball" in text
    markdown = report.to_markdown()
    assert "| tilt | effective size | value | disparity | lower | upper |" in markdown
    assert first in markdown
    data = json.loads(report.to_json())
    assert len(data["sections"][0]["tables"][0]["rows"]) == len(res.table().rows)
    with pytest.raises(ValueError, match="no verdict at a threshold"):
        group_section(res, epsilon0=0.1)


def test_every_documented_result_class_follows_the_protocol():
    """A class of the API whose name says it is a result follows the protocol, and the list
    above holds every one of them."""
    import importlib
    import inspect
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "doc" / "api" /
            "index.rst").read_text(encoding="utf-8")
    found = set()
    for package, name in re.findall(r"^   ([a-z_]+)\.(\w+Result)$", text, flags=re.MULTILINE):
        obj = getattr(importlib.import_module(f"skfair_audit.{package}"), name)
        if inspect.isabstract(obj):
            continue  # the protocols themselves
        assert issubclass(obj, AuditResult), name
        found.add(name)
    assert found == set(RESULTS)
