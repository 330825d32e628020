"""Sphinx configuration of the skfair_audit documentation."""

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, os.path.abspath(".."))

import skfair_audit  # noqa: E402

project = "skfair_audit"
author = "skfair_audit developers"
copyright = "2026, skfair_audit developers"
release = skfair_audit.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
]
autosummary_generate = True
_routing = ",".join(
    f"set_{m}_request"
    for m in ("fit", "score", "predict", "transform", "split", "audit", "predict_proba",
              "decision_function", "partial_fit")
)
autodoc_default_options = {"members": True, "exclude-members": _routing}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
templates_path = []
exclude_patterns = ["_build", "reproduction_tables.rst", "fair_metric_failure.rst",
                    "fair_metric_results.rst", "faith_continuous_validity.rst"]
html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_title = f"skfair_audit {release}"
# an explicit default colour mode: without it the theme logs "Got invalid theme mode" as a
# console error on a first visit
html_context = {"default_mode": "auto"}
html_static_path = ["_static"]
html_css_files = ["skfair.css"]

# Math without a network: MathJax 2 from a local copy (Debian's ``libjs-mathjax``, which
# .ci/run installs, or any MathJax 2 directory named by SKFAIR_AUDIT_MATHJAX) is copied into
# the built site, so the pages typeset their formulas offline and the site stays
# self-contained. Only what TeX input with CommonHTML output needs is copied (~1.6 MB of the
# package's 54 MB). Without a local copy, Sphinx's default (a CDN) is kept.
MATHJAX_CANDIDATES = (os.environ.get("SKFAIR_AUDIT_MATHJAX", ""),
                      "/usr/share/javascript/mathjax", "/usr/share/mathjax")
MATHJAX_PARTS = ("MathJax.js", "config/TeX-AMS_CHTML.js", "jax/input/TeX",
                 "jax/output/CommonHTML", "jax/element", "extensions",
                 "fonts/HTML-CSS/TeX/woff", "localization/en")
MATHJAX_SOURCE = next((Path(p) for p in MATHJAX_CANDIDATES
                       if p and (Path(p) / "MathJax.js").is_file()), None)
if MATHJAX_SOURCE is not None:
    mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_CHTML"


def _copy_mathjax(app, exception):
    """Copy the local MathJax into ``_static/mathjax`` of an HTML build."""
    if exception is not None or MATHJAX_SOURCE is None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        source = MATHJAX_SOURCE / part
        if source.is_dir():
            shutil.copytree(source, target / part, dirs_exist_ok=True)
        elif source.is_file():
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
# Intersphinx needs the network; keep the build offline and reproducible.
intersphinx_mapping = {}
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]
