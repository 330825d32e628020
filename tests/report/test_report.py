"""Structure of the HTML / Markdown / JSON report; the HTML parsed by html5lib (strict)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from skfair_audit.report import (
    AuditReport,
    Figure,
    Section,
    Table,
    faith_section,
    group_section,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def decode_png(src):
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    data = base64.b64decode(src[len(prefix):], validate=True)
    assert data.startswith(PNG_MAGIC)
    return data


@pytest.fixture(scope="module")
def faith_result():
    from skfair_audit.faith import DegenerateMetricWarning, faith_audit

    counts = np.array([300, 200, 250, 250])
    loss = np.array([0.0, 1.0, 1.0, 0.0])
    labels = np.array([0, 0, 1, 1])
    forbidden = labels[:, None] != labels[None, :]
    # Every correct decision of this toy flips with the group, for free: the audit says so.
    with pytest.warns(DegenerateMetricWarning):
        return faith_audit(
            counts, loss, np.zeros((4, 4)), epsilon=0.0, forbidden=forbidden, delta=0.3,
            n_resamples=200, random_state=0,
            cell_names=["g=a, y=0", "g=b, y=0", "g=a, y=1", "g=b, y=1"],
            cell_features=[["a"], ["b"], ["a"], ["b"]], feature_names=["g"],
            cell_labels=labels,
        )


@pytest.fixture(scope="module")
def group_results():
    from skfair_audit.group import certify_bounds, certify_threshold, flag_groups

    rng = np.random.default_rng(0)
    g = rng.choice(["a", "b", "c"], 3000)
    y = np.zeros(3000, dtype=int)
    y[:1500] = 1
    y_pred = (rng.random(3000) < np.where(g == "c", 0.3, 0.1)).astype(int)
    groups = {"g": g}
    return (
        certify_bounds(y, y_pred, groups, metric="fpr", alternative="lower", n_resamples=200,
                       random_state=0),
        certify_threshold(y, y_pred, groups, metric="fpr", epsilon0=0.1, alternative="less",
                          n_resamples=200, random_state=0),
        flag_groups(y, y_pred, groups, metric="fpr", epsilon0=0.02),
    )


@pytest.fixture(scope="module")
def report(faith_result, group_results):
    bounds, certificates, flags = group_results
    return AuditReport(
        title="Test <report> & co",
        audited="a toy model",
        sections=(
            faith_section(faith_result),
            group_section(bounds, key="bounds"),
            group_section(certificates, key="certificates"),
            group_section(flags, key="flags"),
        ),
        command="skfair-audit demo --fast",
        outcome="fine",
    )


def test_html_structure_sections_tables_and_figures(report, parse_report):
    html = report.to_html()
    assert html.startswith("<!DOCTYPE html>")
    parsed = parse_report(html)
    assert parsed.sections == ["faith", "bounds", "certificates", "flags", "reproduce"]
    # the title is escaped, not injected
    assert "Test <report> & co" in parsed.headings
    assert "<report>" not in html.split("<body>")[1].split("</h1>")[0].replace("&lt;", "")
    # every figure is embedded as a PNG: no file, no network
    assert len(parsed.images) == len(report.figures) == 4
    for image, figure in zip(parsed.images, report.figures, strict=True):
        assert decode_png(image["src"]) == figure.png
        assert image["alt"]
    # a table per section (faith: the plan's moves), with the group columns
    assert len(parsed.tables) == 4
    assert parsed.tables[1]["header"] == ["group", "rows", "value", "disparity", "lower", "upper"]
    assert parsed.tables[3]["header"][-1] == "flagged"
    assert parsed.tables[1]["rows"] == 1 + 3  # header + groups a, b, c
    # self-contained: no script, no external stylesheet (checked by the parser), only
    # in-page links, each to a section
    assert parsed.links == [f"#{key}" for key in parsed.sections]
    assert "http://" not in html and "https://" not in html
    # how to rerun it
    assert "skfair-audit demo --fast" in html and report.version in html


def test_guarantees_in_plain_words(report):
    html = report.to_html()
    assert html.count('class="guarantee"') == 4
    faith, bounds, certificates, flags = report.sections
    assert "95%" in faith.guarantee and "ε = 0" in faith.guarantee
    assert "at the same time" in bounds.guarantee and "90%" in bounds.guarantee
    assert "ε(G) < 0.1" in certificates.guarantee
    assert "false discovery rate" in flags.guarantee
    # the flagging decision names the flagged group
    assert any("g=c" in p for p in flags.paragraphs)


def test_json_is_strict_and_mirrors_the_sections(report):
    data = json.loads(report.to_json())
    assert [s["key"] for s in data["sections"]] == ["faith", "bounds", "certificates", "flags"]
    assert data["command"] == "skfair-audit demo --fast"
    bounds = data["sections"][1]["tables"][0]
    assert bounds["columns"][:2] == ["group", "rows"]
    # one-sided bounds are infinite on the open side: null in strict JSON
    assert all(row[-1] is None for row in bounds["rows"])
    assert data["sections"][0]["figures"][0]["name"] == "faith_heatmap"


def test_markdown_and_write(tmp_path, report, parse_report):
    paths = report.write(tmp_path / "out")
    assert {p.name for p in paths.values()} == {"report.html", "report.json", "report.md"}
    markdown = paths["markdown"].read_text()
    assert markdown.startswith("# Test <report> & co")
    assert "| group | rows | value | disparity | lower | upper |" in markdown
    for figure in report.figures:
        assert f"figures/{figure.name}.png" in markdown
        assert (tmp_path / "out" / "figures" / f"{figure.name}.png").read_bytes() == figure.png
    parse_report(paths["html"].read_text())


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError, match="2 cells, expected 3"):
        Table("t", ("a", "b", "c"), (("x", 1),))


def test_group_section_rejects_other_objects():
    with pytest.raises(TypeError, match="GroupAuditResult"):
        group_section(object())


def test_group_section_takes_any_result_of_the_protocol():
    # equalized odds (two audits in one result) goes through the same protocol
    from skfair_audit.group import GroupAuditResult, equalized_odds

    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b"], 2000)
    y = rng.integers(0, 2, 2000)
    y_pred = np.where(rng.random(2000) < 0.85, y, 1 - y)
    for result in (equalized_odds(y, y_pred, {"g": g}, n_resamples=100, random_state=0),
                   equalized_odds(y, y_pred, {"g": g}, epsilon0=0.2, n_resamples=100,
                                  random_state=0)):
        assert isinstance(result, GroupAuditResult)
        section = group_section(result, key="eo", plot=False)
        table = section.tables[0]
        assert table.columns[:4] == ("group", "rows", "FPR disparity", "TPR disparity")
        assert [row[0] for row in table.rows] == ["g=a", "g=b"]
        assert "simultaneously" in section.guarantee
        assert section.paragraphs[-1] == result.verdict().details
        assert section.summary["α (simultaneous)"] == 0.1


def test_section_without_plot_has_no_figure(faith_result):
    section = faith_section(faith_result, plot=False)
    assert section.figures == ()
    html = AuditReport("t", "x", (section,)).to_html()
    assert "<img" not in html
    assert "no command recorded" in html


def test_figure_data_uri_round_trip(parse_report):
    figure = Figure("f", "caption", PNG_MAGIC + b"rest")
    assert decode_png(figure.data_uri()) == PNG_MAGIC + b"rest"
    section = Section("s", "S", figures=(figure,))
    parsed = parse_report(AuditReport("t", "x", (section,)).to_html())
    assert parsed.images[0]["src"] == figure.data_uri()


def test_a_broken_document_fails_the_parser(parse_report, report):
    # The parser of these tests is strict: it would catch a tag left open or closed twice.
    import html5lib

    html = report.to_html()
    for broken in (html.replace("</caption>", "", 1), html.replace("</p>", "</p></p>", 1),
                   html.replace('<table>', '<table><td>', 1)):
        with pytest.raises(html5lib.html5parser.ParseError):
            parse_report(broken)
    with pytest.raises(AssertionError, match="dangling link"):
        parse_report(html.replace('href="#faith"', 'href="#nowhere"'))


def test_reproduce_section_does_not_promise_an_index_release(report, parse_report):
    # Was: "pip install 'skfair_audit==0.1.0.dev0'", which no package index serves.
    import dataclasses

    parsed = parse_report(dataclasses.replace(report, version="0.1.0.dev0").to_html())
    text = parsed.text("reproduce")
    assert "skfair_audit==0.1.0.dev0" not in text
    assert "python -m pip install . # from a checkout of skfair_audit 0.1.0.dev0" in text
    assert "no package index serves it" in text
    release = dataclasses.replace(report, version="1.2.0")
    assert 'python -m pip install "skfair_audit==1.2.0"' in parse_report(
        release.to_html()).text("reproduce")
    markdown = dataclasses.replace(report, version="0.1.0.dev0").to_markdown()
    assert "python -m pip install .  # from a checkout" in markdown


def test_reproduce_section_installs_the_extras_the_run_used(report, parse_report):
    # Was "python -m pip install ." alone: the demo then exits 2 ("pandas is required") in a
    # fresh environment, and `faith` also needs skops.
    import dataclasses

    used = dataclasses.replace(report, extras=("skops", "plot", "pandas"), version="0.2.dev0")
    line = 'python -m pip install ".[pandas,plot,skops]"  # from a checkout'
    assert line.replace("  ", " ") in parse_report(used.to_html()).text("reproduce")
    assert line in used.to_markdown() and used.to_dict()["install"].startswith(line)
    release = dataclasses.replace(used, version="1.2.0", extras=("pandas", "pyarrow"))
    assert release.install_command == 'python -m pip install "skfair_audit[pandas]==1.2.0" pyarrow'


def test_extras_of_the_install_line_are_the_projects():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from pathlib import Path

    from skfair_audit.report._format import EXTRAS

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert set(EXTRAS) == set(project["project"]["optional-dependencies"])


def test_figures_that_cannot_be_drawn_are_noted_in_place(group_results, parse_report,
                                                         tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    section = group_section(group_results[2], key="flags")
    (figure,) = section.figures
    assert not figure.drawn and figure.data_uri() is None
    report = AuditReport("No plots", "a toy model", (section,), command="x")
    assert report.missing_figures == (figure,)
    html = report.to_html()
    parse_report(html)
    assert "Figure not drawn: matplotlib is not installed" in html and "<img" not in html
    assert "skfair_audit[plot]" in report.to_markdown()
    assert report.to_dict()["sections"][0]["figures"][0]["drawn"] is False
    report.write(tmp_path)
    assert not (tmp_path / "figures").exists()


def test_group_section_caption_names_what_the_plot_shows(group_results):
    flags = group_results[2]
    section = group_section(flags, key="flags")
    caption = section.figures[0].caption
    assert "lowest" not in caption
    assert caption.endswith(flags.describe_plot())
    assert "the 1 group(s) flagged first (red)" in caption
