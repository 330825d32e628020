"""Public API = documented API: every ``__all__`` equals its section of ``doc/api/index.rst``,
every documented object has a numpydoc docstring that passes validation, and the words the
packages share mean the same thing everywhere (see ``doc/glossary.rst``)."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re

import numpy as np
import pytest

import skfair_audit

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import NumpyDocString  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUBPACKAGES = ("cli", "datasets", "faith", "group", "model_selection", "monitor", "report",
               "results", "scale")

#: numpydoc checks every public object must pass: a docstring with a summary, every
#: parameter documented and none invented, a Returns section for functions.
CHECKS = {"GL08", "SS01", "PR01", "PR02", "RT01"}

#: Methods whose docstrings may miss parameters (none left: the list only shrinks).
PENDING = set()


def _documented():
    text = (ROOT / "doc" / "api" / "index.rst").read_text(encoding="utf-8")
    return re.findall(r"^   ([a-z_]+)\.(\w+)$", text, flags=re.MULTILINE)


DOCUMENTED = _documented()


@pytest.mark.parametrize("subpackage", SUBPACKAGES)
def test_all_equals_the_documented_names(subpackage):
    module = importlib.import_module(f"skfair_audit.{subpackage}")
    documented = {name for package, name in DOCUMENTED if package == subpackage}
    assert set(module.__all__) == documented
    assert len(module.__all__) == len(set(module.__all__))


def test_every_documented_package_is_public():
    assert {package for package, _ in DOCUMENTED} == set(SUBPACKAGES)
    top = set(skfair_audit.__all__) - {"__version__"}
    for name in top:
        obj = getattr(skfair_audit, name)
        if inspect.ismodule(obj):
            assert name in SUBPACKAGES, name
        else:  # a re-export of a documented class
            assert (obj.__module__.split(".")[1], name) in DOCUMENTED, name


def _parameter_names(doc):
    names = set()
    for section in ("Parameters", "Other Parameters", "Attributes"):
        for item in doc[section]:
            names.update(n.strip().lstrip("*") for n in item.name.replace("\\", "").split(","))
    return names


@pytest.mark.parametrize("package, name", DOCUMENTED, ids=lambda v: v)
def test_numpydoc_validation(package, name):
    obj = getattr(importlib.import_module(f"skfair_audit.{package}"), name)
    assert obj.__module__.startswith("skfair_audit"), obj
    errors = [(code, message) for code, message in
              numpydoc_validate.validate(f"skfair_audit.{package}.{name}")["errors"]
              if code in CHECKS]
    if inspect.isclass(obj):
        # Result objects are frozen dataclasses: their fields are documented as Attributes.
        errors = [e for e in errors if e[0] not in ("PR01", "PR02")]
        if not issubclass(obj, Exception | Warning):
            doc = NumpyDocString(inspect.getdoc(obj) or "")
            fields = [p for p in inspect.signature(obj).parameters
                      if not p.startswith("_") and p not in ("args", "kwargs")]
            undocumented = set(fields) - _parameter_names(doc)
            assert not undocumented, f"{name}: fields/parameters without documentation"
        for method_name, method in vars(obj).items():
            if method_name.startswith("_") or not inspect.isfunction(method):
                continue
            if not method.__qualname__.startswith(obj.__name__):
                continue
            found = [(f"{method_name}: {code}", message) for code, message in
                     numpydoc_validate.validate(
                         f"skfair_audit.{package}.{name}.{method_name}")["errors"]
                     if code in CHECKS - {"RT01"}]
            if (package, name, method_name) in PENDING:
                assert found, f"{name}.{method_name} is fixed: remove it from PENDING"
            else:
                errors += found
    assert errors == []


# -- names aligned across the packages and the command line --------------------------------
def test_protected_names_the_protected_columns_everywhere():
    from skfair_audit.faith import FaithAuditor
    from skfair_audit.group import GroupDisparityAuditor
    from skfair_audit.model_selection import FairModelSelector
    from skfair_audit.scale import (
        partitioned_certify_bounds,
        partitioned_flag_groups,
        summarize_trail,
    )

    for obj in (FaithAuditor, FairModelSelector, GroupDisparityAuditor,
                partitioned_certify_bounds, partitioned_flag_groups, summarize_trail):
        params = inspect.signature(obj).parameters
        assert "protected" in params, obj
        assert not {"sensitive_columns", "attributes"} & set(params), obj


def test_default_alternatives_agree_in_functions_estimator_and_command_line(capsys):
    from skfair_audit import group, scale
    from skfair_audit.cli._main import main
    from skfair_audit.group._summary import DEFAULT_ALTERNATIVES

    for procedure, functions in {
        "bounds": (group.certify_bounds, group.AuditSummary.certify_bounds,
                   scale.partitioned_certify_bounds, group.rkhs_tilt_bounds,
                   group.monotone_tilt_bounds, group.polynomial_tilt_bounds),
        "threshold": (group.certify_threshold, group.AuditSummary.certify_threshold),
        "flag": (group.flag_groups, group.AuditSummary.flag_groups,
                 scale.partitioned_flag_groups, group.flag_groups_split),
    }.items():
        for function in functions:
            default = inspect.signature(function).parameters["alternative"].default
            if function is group.rkhs_tilt_bounds:
                continue  # tilts: lower bounds on a tilted mean, as in the paper
            assert default == DEFAULT_ALTERNATIVES[procedure], (function, default)
    # the estimator's None means the procedure's default; the command line prints it
    assert group.GroupDisparityAuditor(None).alternative is None
    with pytest.raises(SystemExit):
        main(["group", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for default in DEFAULT_ALTERNATIVES.values():
        assert f"(default {default})" in help_text


@pytest.mark.parametrize("random_state", [0, np.random.RandomState(0),
                                          np.random.default_rng(0),
                                          np.random.SeedSequence(0), None])
def test_every_seed_accepts_every_random_state(random_state):
    """int, RandomState, Generator, SeedSequence and None, in every estimator and function."""
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skfair_audit.faith import FaithAuditor
    from skfair_audit.group import GroupDisparityAuditor, certify_bounds, flag_groups_split
    from skfair_audit.model_selection import FairModelSelector
    from skfair_audit.scale import partitioned_certify_bounds

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"g": rng.choice(["a", "b"], 400), "p": rng.choice(["x", "y"], 400)})
    # (p matters too: decisions that followed g alone would make the FaiTH audit warn that
    # every correct decision flips for free)
    y = (rng.random(400) < 0.15 + 0.25 * (X.g == "b") + 0.5 * (X.p == "x")).astype(int)
    model = make_pipeline(OneHotEncoder(), LogisticRegression())
    FaithAuditor(model, protected=["g"], n_resamples=20, random_state=random_state).fit(
        X, y).audit(X, y)
    GroupDisparityAuditor(model, protected=["g"], n_resamples=20,
                          random_state=random_state).fit(X, y).audit(X, y)
    FairModelSelector(model, param_grid={"logisticregression__C": [1.0]}, delta=1.0,
                      protected=["g"], cv=2, auditor=FaithAuditor(None, n_resamples=20),
                      random_state=random_state).fit(X, y)
    y_pred = np.where(rng.random(400) < 0.8, y, 1 - y)
    certify_bounds(y, y_pred, X[["g"]], metric="error_rate", n_resamples=20,
                   random_state=random_state)
    flag_groups_split(X[["p"]].assign(p=X.p == "x"), y, y_pred, metric="error_rate",
                      random_state=random_state)
    partitioned_certify_bounds(X.assign(y=y, y_pred=y_pred), label="y", prediction="y_pred",
                               protected=["g"], metric="error_rate", bootstrap="poisson",
                               n_resamples=20, random_state=random_state)


# -- every result has a notebook display ----------------------------------------------------
#: Documented classes that are not results shown on their own, and why they have no
#: ``_repr_html_``. A new public class must either have a notebook display (and a case in the
#: ``display_results`` fixture, checked by tests/test_display.py) or be listed here.
NO_DISPLAY = {
    "Verdict": "part of a result's display (its verdict line)",
    "ResultTable": "part of a result's display (its table)",
    "AuditResult": "the protocol itself: its _repr_html_ serves the results",
    "GroupAuditResult": "the protocol itself: its _repr_html_ serves every group result",
    "ConfidenceInterval": "a one-line record; its repr is its display",
    "GroupBound": "a one-line record of one queried group; its repr is its display",
    "TiltBound": "a one-line record of one queried tilt; its repr is its display",
    "LinearPieces": "part of FaithResult (its bounds and kink diagnostic)",
    "TransportProblem": "an input of the audit (the prepared LP), not a result",
    "GridSpace": "an input of the audit (the sample space), not a result",
    "EmpiricalSpace": "an input of the audit (the sample space), not a result",
    "AuditRows": "an input of the audit (the audit sample summarised), not a result",
    "Interval": "a constraint of a declared parameter (an input), not a result",
    "Options": "a constraint of a declared parameter (an input), not a result",
    "Metric": "an input of the group audit (the per-row metric), not a result",
    "GroupCollection": "an input of the group audit (the groups), not a result",
    "AuditSummary": "the counts the group procedures run on, not a result",
    "TrailSummary": "mergeable counts of a partition, not a result",
    "Procedure": "a declaration of a group procedure (the registry), not a result",
    "Parameter": "a declaration of a procedure's parameter, not a result",
    "TiltClass": "a declaration of a class of tilts (the registry), not a result",
    "Section": "a piece of a report; AuditReport displays them",
    "Table": "a piece of a report section",
    "Figure": "a piece of a report section",
    "SelectionCriterion": "an input of FairModelSelector (what a candidate must pass)",
    "FaithCriterion": "an input of FairModelSelector; its repr is its display",
    "GroupDifferenceCriterion": "an input of FairModelSelector; its repr is its display",
}


def test_every_result_class_has_a_notebook_display(display_results):
    """Every documented class is an estimator (scikit-learn's diagram), a warning or error,
    listed in NO_DISPLAY with its reason, or has ``_repr_html_`` and a case in the
    ``display_results`` fixture (whose displays tests/test_display.py checks)."""
    from sklearn.base import BaseEstimator

    displayed = set()
    for package, name in DOCUMENTED:
        obj = getattr(importlib.import_module(f"skfair_audit.{package}"), name)
        if not inspect.isclass(obj) or issubclass(obj, (Exception, Warning)):
            continue
        if issubclass(obj, BaseEstimator):
            continue  # the fitted selector's choice is checked with the results below
        if name in NO_DISPLAY:
            continue
        assert "_repr_html_" in dir(obj), f"{package}.{name} has no notebook display"
        displayed.add(name)
    assert displayed | {"FairModelSelector"} == set(display_results)
    assert set(NO_DISPLAY) <= {name for _, name in DOCUMENTED}
