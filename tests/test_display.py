"""The notebook display (``_repr_html_``) of every result: valid HTML5, and what it says.

Each display must parse with html5lib's strict parser (a real HTML5 parser: any parse error
fails), show the verdict and the guarantee in words, the key numbers, the top rows of the
table with the flagged or failing groups first, and the figure when matplotlib is there. The
list of classes checked here is tied to the documented API by
``tests/test_public_api.py::test_every_result_class_has_a_notebook_display``.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pytest

from skfair_audit._utils import CARD_ROWS, format_value

html5lib = pytest.importorskip("html5lib")


def _parse(fragment):
    """The fragment as an element tree; any HTML5 parse error raises."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parseFragment(fragment)


def _text(html):
    """The display's text as a reader sees it (tags dropped, entities decoded)."""
    tree = _parse(html)
    return " ".join(" ".join(tree.itertext()).split())


def _rows(html):
    """The body rows of the first table of the result's display, as lists of cell texts."""
    card = _parse(html).find(".//div[@class='skfair-result']")
    return [[" ".join(td.itertext()) for td in tr.findall("td")]
            for tr in card.find(".//table").find("tbody").findall("tr")]


def _html(obj):
    """The result's display; for the fitted selector, the part after scikit-learn's diagram
    (whose HTML is scikit-learn's own: it holds a stray ``<body>`` tag)."""
    html = obj._repr_html_()
    return html[html.index('<div class="skfair-result">'):]


def test_every_display_is_valid_html5_with_one_figure_at_most(display_results):
    for name, obj in display_results.items():
        html = _html(obj)
        _parse(html)  # raises on any parse error
        tree = _parse(html)
        for image in tree.iter("img"):
            assert image.get("src").startswith("data:image/png;base64,"), name
            assert image.get("alt"), name
        assert "<script" not in html, name


def test_group_displays_show_verdict_guarantee_numbers_and_failing_groups_first(
        display_results):
    for name in ("GroupBoundsResult", "GroupCertificationResult", "GroupFlagResult",
                 "EqualizedOddsResult"):
        result = display_results[name]
        html = result._repr_html_()
        text = _text(html)
        verdict = result.verdict()
        assert f"Verdict: {verdict.summary}." in text, name
        assert "Guarantee. " + " ".join(result.guarantee().split()) in text, name
        for key, value in result.key_figures().items():
            assert f"{key} {format_value(value)}" in text, (name, key)
        rows = _rows(html)
        table = result.table()
        assert len(rows) == min(CARD_ROWS, len(table.rows)), name
        assert f"first {CARD_ROWS} of {len(table.rows)} rows" in text, name
        shown = [row[0] for row in rows]
        failing = [g for g in shown if g in verdict.groups]
        # the failing groups come first, and as many as fit are shown
        assert shown[:len(failing)] == failing, name
        assert len(failing) == min(len(verdict.groups), CARD_ROWS), name
        # then by decreasing |disparity|
        order = result.display_order(table)
        assert [table.rows[k][0] for k in order[:CARD_ROWS]] == shown, name
        assert "<img" in html, name
    flags = display_results["GroupFlagResult"]
    assert flags.verdict().unfair and flags.verdict().groups
    assert 'class="verdict unfair"' in flags._repr_html_()
    first = _rows(flags._repr_html_())[0]
    assert first[0] == flags.verdict().groups[0] or first[0] in flags.verdict().groups
    assert first[-1] == "yes"  # flagged
    bounds = display_results["GroupBoundsResult"]
    assert 'class="verdict"' in bounds._repr_html_()  # descriptive: no gate


def test_display_order_puts_flagged_groups_before_larger_unflagged_disparities():
    from skfair_audit.group import flag_groups

    # FPR 0.1 on 2,000 rows, 0.25 on 2,000 rows, 0.5 on 4 rows: "small" has the largest
    # disparity but too few rows to be flagged; "mid" is flagged
    g = np.repeat(["big", "mid", "small"], [2000, 2000, 4])
    y = np.zeros(g.size, dtype=int)
    y_pred = np.concatenate([np.arange(2000) < 200, np.arange(2000) < 500,
                             np.arange(4) < 2]).astype(int)
    result = flag_groups(y, y_pred, {"g": g}, metric="fpr", epsilon0=0.0, q=0.02)
    table = result.table()
    names = [table.rows[k][0] for k in result.display_order(table)]
    assert result.is_flagged("g=mid") and not result.is_flagged("g=small")
    assert names[0] == "g=mid"
    assert names.index("g=small") < names.index("g=big")


def test_faith_display_says_the_decision_and_the_bounds(display_results):
    result = display_results["FaithResult"]
    text = _text(result._repr_html_())
    assert result.delta is not None
    assert f"Verdict: {result.verdict().summary}." in text
    assert format_value(result.lower_bound) in text and format_value(result.upper_bound) in text
    assert f"statistic ψ̂ {format_value(result.statistic)}" in text
    assert "Guarantee. ψ is the largest increase" in text
    moves = result.moves()
    assert moves and moves[0]["from_cell"] in text
    assert "<img" in result._repr_html_()


def test_faith_report_section_and_display_say_the_same(display_results):
    """One source for the words: the report's section uses the result's own sentences."""
    from skfair_audit.report import faith_section

    result = display_results["FaithResult"]
    section = faith_section(result, plot=False)
    assert section.guarantee == result.guarantee()
    assert result.verdict().details in section.paragraphs
    assert section.summary == result.key_figures()
    assert escape(result.guarantee()) in result._repr_html_()


def test_other_displays_show_their_numbers(display_results):
    sensitivity = display_results["FaithSensitivityResult"]
    text = _text(sensitivity._repr_html_())
    assert "δ-fairness rejected at" in text and "ψ(ε) per metric" in text
    assert format_value(float(sensitivity.statistic[0, 1])) in text

    diagnostics = display_results["MetricDiagnostics"]
    text = _text(diagnostics._repr_html_())
    assert f"{diagnostics.n_free} of {diagnostics.n_non_protected}" in text
    assert all(record["source"] in text for record in diagnostics.sources)

    rkhs = display_results["RKHSBoundsResult"]
    text = _text(rkhs._repr_html_())
    assert f"critical value c {format_value(rkhs.critical_value)}" in text
    assert "Guarantee." in text and f"bandwidth σ {format_value(rkhs.bandwidth)}" in text

    path = display_results["CoefficientPath"]
    text = _text(path._repr_html_())
    assert all(name in text for name, _ in path.entry_order())

    report = display_results["AuditReport"]
    text = _text(report._repr_html_())
    assert "Example report" in text and "Guarantee." in text


def test_selector_display_keeps_the_diagram_and_adds_the_choice(display_results):
    from sklearn import config_context
    from sklearn.base import clone
    from sklearn.utils import estimator_html_repr

    selector = display_results["FairModelSelector"]
    html = selector._repr_mimebundle_()["text/html"]
    # scikit-learn's diagram first (its container ids change with every call)
    diagram = estimator_html_repr(selector)
    assert html.index("sk-top-container") < html.index("skfair-result")
    assert len(html) > len(diagram) + 1000
    text = _text(_html(selector))
    results = selector.cv_results_
    assert "FairModelSelector: δ-fair model selection" in text
    assert "Guarantee. Each candidate is audited on validation data" in text
    chosen = _rows(_html(selector))
    assert chosen[0][-1] == "yes"  # the chosen candidate first
    error = format_value(results["mean_test_error"][selector.best_index_])
    assert error in chosen[0]
    card = html[html.index('<div class="skfair-result">'):]
    assert _html(selector) == card  # _repr_html_ and the mime bundle agree
    # unfitted: scikit-learn's diagram only; display="text": no HTML at all, as scikit-learn
    assert "skfair-result" not in clone(selector)._repr_mimebundle_()["text/html"]
    with config_context(display="text"):
        assert "text/html" not in selector._repr_mimebundle_()
        assert not hasattr(selector, "_repr_html_")


def test_display_without_matplotlib_has_no_figure(display_results, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    for name in ("GroupFlagResult", "FaithResult"):
        html = display_results[name]._repr_html_()
        _parse(html)
        assert "<img" not in html and "Verdict:" in html


def test_full_report_is_valid_html5(display_results):
    report = display_results["AuditReport"]
    html5lib.HTMLParser(strict=True).parse(report.to_html())
