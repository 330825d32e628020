"""The demo's HTML report, and the notebook display of results, opened in headless Chromium.

Chromium is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL bytes on file descriptors 3 and 4), so no port, no network and
no extra package. The page must load, log no console error or exception, decode every image
with a non-zero natural size, resolve every in-page anchor, and give a screenshot that is a
real picture. Debian's ``chromium`` is installed by ``.ci/run``; without it the test skips,
except when ``CI=true``, where it fails.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
#: The flags that keep Chromium off this closed network and quiet (see the machine notes).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe", "--window-size=1200,900")

#: Run in the page once it has loaded: what a reader would notice is broken.
CHECK_PAGE = """(() => {
  const images = [...document.images].map(img => ({
    alt: img.alt, complete: img.complete, width: img.naturalWidth, height: img.naturalHeight}));
  const anchors = [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'));
  const broken = anchors.filter(h => h.startsWith('#') && !document.getElementById(h.slice(1)));
  const external = anchors.filter(h => !h.startsWith('#'));
  return JSON.stringify({title: document.title, images, anchors: anchors.length, broken,
                         external, tables: document.querySelectorAll('table').length,
                         height: document.documentElement.scrollHeight});
})()"""


def _fail_or_skip(reason):
    if os.environ.get("CI") == "true":
        pytest.fail(f"the browser test must run in CI: {reason}")
    pytest.skip(reason)


class Browser:
    """A headless Chromium driven over the DevTools pipe (one page)."""

    def __init__(self, executable, profile):
        read_commands, self._commands = os.pipe()   # we write, Chromium reads on fd 3
        self._replies, write_replies = os.pipe()    # Chromium writes on fd 4, we read

        def to_fds_3_and_4():
            os.dup2(read_commands, 3)
            os.dup2(write_replies, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=to_fds_3_and_4, close_fds=False)
        os.close(read_commands)
        os.close(write_replies)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, *, session=True, timeout=30.0):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise TimeoutError("Chromium closed the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def wait_for(self, method, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            self.events.append(self._receive(deadline))

    def open(self, url):
        """A new page at ``url``, with console, log and page events on."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"]["value"]

    def errors(self):
        """Console errors, uncaught exceptions and failed loads seen so far."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                                  "assert"):
                out.append(str(params.get("args")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def screenshot(self):
        data = self.send("Page.captureScreenshot", {"format": "png",
                                                    "captureBeyondViewport": True})["data"]
        return base64.b64decode(data)

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5.0)
        except (TimeoutError, RuntimeError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._replies)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable = next((shutil.which(name) for name in CHROMIUM if shutil.which(name)), None)
    if executable is None:
        _fail_or_skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run "
                      "installs it when run as root)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    instance = Browser(executable, profile)
    try:
        instance.send("Browser.getVersion", session=False, timeout=20.0)
    except (TimeoutError, OSError) as exc:
        instance.close()
        _fail_or_skip(f"Chromium does not start here: {exc}")
    yield instance
    instance.close()


def _check_page(browser, path, shots, *, external_ok=()):
    """Open ``path``; assert it reads as a person would expect; save its screenshot."""
    browser.open(path.as_uri())
    page = json.loads(browser.evaluate(CHECK_PAGE))
    assert browser.errors() == []
    assert page["images"], "no figure in the page"
    for image in page["images"]:
        assert image["complete"] and image["width"] > 0 and image["height"] > 0, image
    assert page["broken"] == [], f"anchors with no target: {page['broken']}"
    outside = [h for h in page["external"] if not h.startswith(external_ok or ("#",))]
    assert outside == [], "the page must not link outside itself"
    png = browser.screenshot()
    shots.joinpath(path.stem + ".png").write_bytes(png)
    plt = pytest.importorskip("matplotlib.pyplot")
    pixels = plt.imread(io.BytesIO(png), format="png")
    height, width = pixels.shape[:2]
    assert width >= 1000 and height >= 900
    # a rendered page, not a blank one: many distinct colours, and ink on the white
    colours = np.unique(pixels.reshape(-1, pixels.shape[2])[:: 97], axis=0)
    assert len(colours) > 50
    assert (pixels[..., :3].mean(axis=2) < 0.5).mean() > 0.005
    return page


@pytest.mark.real_data
def test_demo_report_in_chromium(browser, tmp_path, compas_bunch):
    from skfair_audit.cli._demo import run_demo

    out = tmp_path / "report"
    run_demo(output=str(out), fast=True, quiet=True)
    started = time.perf_counter()
    page = _check_page(browser, out / "report.html", tmp_path)
    assert page["title"] == "skfair_audit demonstration: COMPAS"
    assert len(page["images"]) >= 5 and page["tables"] >= 6
    assert page["anchors"] >= 7  # the table of contents
    assert time.perf_counter() - started < 20


def test_notebook_display_in_chromium(browser, tmp_path, display_results):
    """Every result's notebook display, side by side in one page, as a notebook shows it."""
    body = "\n".join(result._repr_html_() for result in display_results.values())
    page = tmp_path / "cards.html"
    page.write_text("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    f"<title>cards</title></head><body>\n{body}\n</body></html>",
                    encoding="utf-8")
    # scikit-learn's diagram of the fitted selector links to scikit-learn's documentation
    checked = _check_page(browser, page, tmp_path, external_ok=("https://scikit-learn.org/",))
    assert len(checked["images"]) >= 6


#: JupyterLab's rules for description lists in an output area (jupyterlab/outputarea, as
#: nbconvert's HTML export ships them): every <dt> floats at 20% of the width.
JUPYTER_OUTPUT_CSS = """
.jp-OutputArea-output dl, .jp-OutputArea-output dt, .jp-OutputArea-output dd { display: block; }
.jp-OutputArea-output dl { width: 100%; overflow: hidden; padding: 0; margin: 0; }
.jp-OutputArea-output dt { font-weight: bold; float: left; width: 20%; padding: 0; margin: 0; }
.jp-OutputArea-output dd { float: left; width: 80%; padding: 0; margin: 0; }
"""

#: The height of each key-figure label, in lines of its own text.
LABEL_LINES = """JSON.stringify([...document.querySelectorAll('dl.summary dt')].map(dt => {
  const style = getComputedStyle(dt);
  const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
  return {text: dt.textContent, lines: Math.round(dt.getBoundingClientRect().height / line)};
}))"""


def test_key_figure_labels_do_not_wrap_inside_a_jupyter_output(browser, tmp_path,
                                                               display_results):
    # Was: in nbconvert's HTML, JupyterLab's `dt { float: left; width: 20% }` squeezed the
    # labels of the key figures to one word per line.
    body = "\n".join(display_results[name]._repr_html_()
                     for name in ("FaithResult", "GroupFlagResult"))
    page = tmp_path / "jupyter.html"
    page.write_text("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    f"<title>jupyter</title><style>{JUPYTER_OUTPUT_CSS}</style></head><body>"
                    f"<div class=\"jp-OutputArea-output\">\n{body}\n</div></body></html>",
                    encoding="utf-8")
    browser.open(page.as_uri())
    labels = json.loads(browser.evaluate(LABEL_LINES))
    assert labels and any(len(label["text"].split()) >= 3 for label in labels)
    wrapped = [label for label in labels if label["lines"] > 1]
    assert wrapped == [], wrapped


#: Run in a documentation page: whether MathJax has typeset it, and what is left untypeset.
CHECK_MATH = """(() => {
  const text = document.body.innerText;
  const script = [...document.scripts].map(s => s.src).find(s => /mathjax/i.test(s));
  return JSON.stringify({
    typeset: document.querySelectorAll('.MathJax_CHTML, mjx-container').length,
    math: document.querySelectorAll('.math').length,
    raw: (text.match(/\\\\\\(/g) || []).length + (text.match(/\\\\\\[/g) || []).length,
    errors: document.querySelectorAll('.MathJax_Error, merror').length,
    pending: typeof MathJax === 'undefined' || !MathJax.Hub ||
      MathJax.Hub.queue.pending > 0 || MathJax.Hub.queue.running > 0,
    script: script || null});
})()"""

#: The math-heavy page opened by the documentation test, and what it includes.
MATH_PAGE = ("user_guide", "group_fairness")


def _docs_page(tmp_path):
    """The math-heavy page of a built site: ``SKFAIR_AUDIT_DOCS_HTML`` (a built site, as
    ``.ci/run`` sets after its ``sphinx -W`` build), or that page alone built here with the
    project's ``doc/conf.py`` (theme, local MathJax) in a few seconds."""
    from pathlib import Path

    built = os.environ.get("SKFAIR_AUDIT_DOCS_HTML")
    if built:
        page = Path(built).joinpath(*MATH_PAGE).with_suffix(".html")
        assert page.is_file(), f"{page} was not built"
        return page
    sphinx = pytest.importorskip("sphinx.cmd.build", reason="sphinx (the docs extra)")
    pytest.importorskip("pydata_sphinx_theme", reason="pydata-sphinx-theme (the docs extra)")
    doc = Path(__file__).resolve().parents[2] / "doc"
    source = tmp_path / "src"
    source.mkdir()
    page = doc.joinpath(*MATH_PAGE).with_suffix(".rst")
    (source / "index.rst").write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    for include in page.parent.glob("*.inc"):
        shutil.copy(include, source / include.name)
    shutil.copytree(doc / "_static", source / "_static")
    (source / "conf.py").write_text(
        "import pathlib\n"
        f"exec(compile(pathlib.Path({str(doc / 'conf.py')!r}).read_text(encoding='utf-8'), "
        "'conf.py', 'exec'))\n",
        encoding="utf-8")
    out = tmp_path / "html"
    status = sphinx.build_main(["-q", "-b", "html", str(source), str(out)])
    assert status == 0
    return out / "index.html"


def test_documentation_math_renders_offline(browser, tmp_path):
    """Was: MathJax from a CDN, so without a network every formula showed as raw LaTeX."""
    page = _docs_page(tmp_path)
    if "_static/mathjax/MathJax.js" not in page.read_text(encoding="utf-8"):
        _fail_or_skip("no local MathJax for the docs (Debian: apt-get install libjs-mathjax; "
                      ".ci/run installs it when run as root)")
    browser.open(page.as_uri())
    deadline = time.monotonic() + 30
    while True:
        state = json.loads(browser.evaluate(CHECK_MATH))
        if not state["pending"] and state["typeset"] >= state["math"] or (
                time.monotonic() > deadline):
            break
        time.sleep(0.2)
    assert (state["script"] or "").startswith("file://"), state["script"]  # no network needed
    assert state["math"] > 20 and state["typeset"] >= state["math"], state
    assert state["raw"] == 0 and state["errors"] == 0, state
    assert browser.errors() == []
    tmp_path.joinpath("math.png").write_bytes(browser.screenshot())
