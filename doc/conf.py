"""Sphinx configuration of the skfair_audit documentation."""

import os
import sys

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
html_theme = "alabaster"
html_static_path = []
# Intersphinx needs the network; keep the build offline and reproducible.
intersphinx_mapping = {}
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]
