"""Shared fixtures: the real COMPAS and Adult data, read from the data home without download.

The files are found through ``SKFAIR_AUDIT_DATA`` (or ``~/skfair_audit_data``). When they are
missing, tests that need them are skipped locally, but fail when ``CI=true`` so that the real-data
tests can never be skipped silently in continuous integration. The bunches are shared by the
whole session: do not modify them in place.

``http_server`` and ``closed_port_url`` exercise the download code against loopback addresses.
"""

from __future__ import annotations

import functools
import http.server
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest


def _load_real_data(loader, **kwargs):
    try:
        return loader(download_if_missing=False, **kwargs)
    except FileNotFoundError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Real data is required when CI=true: {exc}")
        pytest.skip(f"real data not available: {exc}")


@pytest.fixture(scope="session")
def compas_bunch():
    """COMPAS, ProPublica's filter, African-American and Caucasian only (5,278 rows)."""
    from skfair_audit.datasets import fetch_compas

    return _load_real_data(fetch_compas, preprocessing="propublica_aa_caucasian")


@pytest.fixture(scope="session")
def compas_propublica():
    """COMPAS with ProPublica's standard filter (6,172 rows)."""
    from skfair_audit.datasets import fetch_compas

    return _load_real_data(fetch_compas, preprocessing="propublica")


@pytest.fixture(scope="session")
def adult_bunch():
    """UCI Adult, train and test files together (48,842 rows)."""
    from skfair_audit.datasets import fetch_adult

    return _load_real_data(fetch_adult, subset="all")


@pytest.fixture(scope="session")
def adult_continuous(adult_bunch):
    """A 2,400-row sample of Adult as numbers: five continuous columns (standardised, as a
    model's pipeline would see them), sex and race codes (protected), and the label."""
    import numpy as np

    frame = adult_bunch.frame.dropna().reset_index(drop=True)
    sample = frame.sample(n=2400, random_state=0).reset_index(drop=True)
    columns = ["age", "education-num", "hours-per-week", "capital-gain", "capital-loss"]
    X = sample[columns].astype(float)
    X = (X - frame[columns].mean()) / frame[columns].std()
    X["sex"] = (sample["sex"] == "Male").astype(float)
    X["race"] = adult_bunch.sensitive["race"].cat.categories.get_indexer(sample["race"])
    X["race"] = X["race"].astype(float)
    y = (sample["income"] == ">50K").to_numpy().astype(int)
    assert np.isfinite(X.to_numpy()).all()
    return X, y


class _QuietFileHandler(http.server.SimpleHTTPRequestHandler):
    """Serve files of a folder without logging; ``/truncated/<name>`` drops half of the body."""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        prefix = "/truncated/"
        if not self.path.startswith(prefix):
            super().do_GET()
            return
        body = (Path(self.directory) / self.path[len(prefix) :]).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        # HTTP/1.0 handler: the connection closes when this method returns.


@dataclass(frozen=True)
class LocalServer:
    """A loopback HTTP server serving the files of ``root``."""

    root: Path
    base_url: str

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"


@pytest.fixture
def http_server(tmp_path):
    """Serve ``tmp_path / "served"`` on 127.0.0.1 from a background thread; shut down after."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_QuietFileHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval keeps shutdown() (and so each test) fast.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield LocalServer(root=root, base_url=f"http://{host}:{port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port_url():
    """A loopback URL where nothing listens (a port bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/missing.csv"


# -- reports: parsed by a real HTML5 parser -------------------------------------------------
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class ParsedReport:
    """An HTML report parsed by html5lib (strict: any parse error fails), with its parts."""

    root: object  # xml.etree Element of <html>

    def all(self, tag):
        return self.root.findall(f".//{tag}")

    @property
    def sections(self):
        return [s.get("id") for s in self.all("section")]

    @property
    def headings(self):
        return ["".join(h.itertext()) for h in self.all("h1") + self.all("h2")]

    @property
    def images(self):
        return [dict(img.attrib) for img in self.all("img")]

    @property
    def links(self):
        return [a.get("href") for a in self.all("a")]

    @property
    def tables(self):
        return [{"header": ["".join(th.itertext()) for th in t.findall("./thead/tr/th")],
                 "rows": len(t.findall(".//tr"))} for t in self.all("table")]

    def text(self, element_id):
        element = self.root.find(f".//*[@id='{element_id}']")
        return " ".join("".join(element.itertext()).split())


def parse_report_html(html, *, folder=None):
    """Parse ``html`` with html5lib in strict mode and check that it holds together.

    Every start tag must be closed where HTML5 requires it (a parse error raises); every
    ``id`` is unique; every in-page anchor ``#x`` names an ``id``; every image is a PNG,
    inline (``data:`` URI) or, with ``folder``, a file relative to it; no script, no external
    stylesheet.
    """
    import base64

    html5lib = pytest.importorskip("html5lib")
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    root = parser.parse(html)  # raises html5lib.html5parser.ParseError on a broken document
    report = ParsedReport(root)
    ids = [e.get("id") for e in root.iter() if e.get("id") is not None]
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(ids)}"
    for href in report.links:
        assert href and href.startswith("#") and href[1:] in ids, f"dangling link {href!r}"
    for image in report.images:
        src = image.get("src", "")
        assert image.get("alt"), f"image without alt text: {src[:60]}"
        prefix = "data:image/png;base64,"
        if src.startswith(prefix):
            data = base64.b64decode(src[len(prefix):], validate=True)
        else:
            assert folder is not None and not src.startswith(("http:", "https:", "/")), src
            data = (Path(folder) / src).read_bytes()
        assert data.startswith(PNG_MAGIC), f"not a PNG: {src[:60]}"
    assert not report.all("script"), "reports carry no script"
    assert not [link for link in report.all("link") if link.get("rel") == "stylesheet"]
    return report


@pytest.fixture
def parse_report():
    """:func:`parse_report_html` (html5lib, strict), for the tests of every report."""
    return parse_report_html


@pytest.fixture(scope="session")
def display_results():
    """One small instance of every object with a notebook display (``_repr_html_``), keyed by
    class name: the notebook-display tests and the browser test render them all."""
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skfair_audit.faith import FaithAuditor, faith_sensitivity
    from skfair_audit.group import (
        bias_audit_table,
        certify_bounds,
        certify_threshold,
        disparity_summaries,
        equalized_odds,
        flag_groups,
        flag_ratios,
        monotone_tilt_bounds,
        polynomial_tilt_bounds,
        ratio_bounds,
        rkhs_tilt_bounds,
    )
    from skfair_audit.model_selection import (
        FairModelSelector,
        coefficient_path,
        l1_logistic_regression,
    )
    from skfair_audit.monitor import FairnessMonitor
    from skfair_audit.report import AuditReport, group_section

    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.choice(["<25", "25+"], n),
                      "priors": rng.choice(["0", "1-3", ">3"], n)})
    logit = -1.0 + 1.5 * (X.priors == ">3") + 0.7 * (X.priors == "1-3") + 0.8 * (X.sex == "M")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    model = make_pipeline(OneHotEncoder(), LogisticRegression())
    auditor = FaithAuditor(model, protected=["sex"], epsilon=0.0, delta=0.01,
                           n_resamples=100, random_state=0).fit(X[:1000], y[:1000])
    faith = auditor.audit(X[1000:], y[1000:])
    groups = X[["sex", "age", "priors"]]
    y_pred = np.where(rng.random(n) < np.where(X.priors == ">3", 0.6, 0.85), y, 1 - y)
    common = dict(n_resamples=200, random_state=0)
    flags = flag_groups(y, y_pred, groups, metric="error_rate", epsilon0=0.02)
    selector = FairModelSelector(
        make_pipeline(OneHotEncoder(drop="first"), l1_logistic_regression()),
        param_grid={"logisticregression__C": [0.01, 0.1, 1.0]}, delta=0.05,
        protected=["sex"], cv=0.3, on_none="fairest",
        auditor=FaithAuditor(None, epsilon=0.0, n_resamples=100), random_state=0).fit(X, y)
    x = rng.uniform(0, 5, 300)
    covered = (rng.random(300) < 0.9).astype(int)
    monitor = FairnessMonitor(["sex", "age", "priors"], metric="error_rate", epsilon0=0.02,
                              levels={c: sorted(set(groups[c])) for c in groups})
    for start in range(0, n, 100):
        monitor.partial_fit(groups.iloc[start:start + 100], y[start:start + 100],
                            y_pred[start:start + 100])
    return {
        "FaithResult": faith,
        "FaithSensitivityResult": faith_sensitivity({"default": auditor}, X[1000:], y[1000:],
                                                    epsilons=[0.0, 0.5]),
        "MetricDiagnostics": faith.metric_diagnostics,
        "GroupBoundsResult": certify_bounds(y, y_pred, groups, metric="error_rate", **common),
        "GroupCertificationResult": certify_threshold(y, y_pred, groups, metric="error_rate",
                                                      epsilon0=0.0, alternative="less",
                                                      **common),
        "GroupFlagResult": flags,
        "EqualizedOddsResult": equalized_odds(y, y_pred, groups, **common),
        "RKHSBoundsResult": rkhs_tilt_bounds(x, covered, covered,
                                             metric=lambda y, p: p.astype(float),
                                             bandwidth=0.5, **common),
        "MonotoneTiltResult": monotone_tilt_bounds(covered, covered, x,
                                                   metric=lambda y, p: p.astype(float),
                                                   bins=10, **common),
        "PolynomialTiltResult": polynomial_tilt_bounds(covered, covered, x,
                                                       metric=lambda y, p: p.astype(float),
                                                       degree=2, **common),
        "CoefficientPath": coefficient_path(selector.estimator, selector.param_grid_, X, y),
        "FairModelSelector": selector,
        "MonitorResult": monitor.result(),
        "RatioBoundsResult": ratio_bounds(y, y_pred, groups, **common),
        "RatioFlagResult": flag_ratios(y, y_pred, groups, **common),
        "DisparitySummaryResult": disparity_summaries(y, y_pred, groups, **common),
        "BiasAuditResult": bias_audit_table(y_pred, groups[["sex", "priors"]], **common),
        "AuditReport": AuditReport("Example report", "a toy rule", (group_section(flags),)),
    }
