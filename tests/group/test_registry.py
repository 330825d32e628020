"""The procedure registry: one declaration gives a procedure its whole API.

A toy procedure — Bonferroni normal lower bounds on every group's disparity minus a fixed
shift δ, :math:`\\hat\\epsilon(G) - \\delta - z_{1-\\alpha/K}\\,\\hat\\sigma_G/\\sqrt{n_G}` — is
registered by one declaration (the ``toy`` fixture) and must then work, with the same
numbers, in the function API, on an ``AuditSummary``, on a partitioned trail, in
``GroupDisparityAuditor`` and on the command line; the fixture removes it and checks that no
trace is left. The RKHS tilt audit is reached through the registry from the estimator and the
command line.
"""

import json

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator

from skfair_audit import group, scale
from skfair_audit._utils import Interval
from skfair_audit.cli._main import main
from skfair_audit.group import (
    AuditSummary,
    GroupBoundsResult,
    GroupDisparityAuditor,
    Parameter,
    Procedure,
    common_parameters,
    get_procedure,
    register_procedure,
    registered_procedures,
    rkhs_tilt_bounds,
    unregister_procedure,
)

pd = pytest.importorskip("pandas")


# -- the toy procedure: its math and its one declaration ----------------------------------------
def shifted_lower_bounds(summary, *, shift, alpha):
    """Bonferroni normal lower bounds on :math:`\\epsilon(G) - \\delta` (known target)."""
    active = summary.active
    n_g, s_g = summary.stats.observed_group_sums(summary.groups)
    _, s2_g = summary.stats.observed_group_sums(summary.groups, power=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt((s2_g / n_g - (s_g / n_g) ** 2) / n_g)
    z = norm.ppf(1 - alpha / max(int(active.sum()), 1))
    estimates = np.where(active, summary.estimates - shift, np.nan)
    lower = np.where(active, estimates - z * se, -np.inf)
    return GroupBoundsResult(
        names=summary.groups.names, sizes=summary.sizes, estimates=estimates,
        group_values=summary.group_values, lower=lower, upper=np.full(lower.shape, np.inf),
        scales=se, target=summary.theta_hat + shift, critical_value=float(z), alpha=alpha,
        alternative="lower", scale="unscaled", metric=summary.metric.name, n=summary.n,
        bootstrap_distribution=np.zeros(0), method="Bonferroni normal bounds",
        groups=summary.groups, empty_groups=summary.empty_groups, bootstrap="none")


TOY = Procedure(
    name="shifted_lower",
    function_name="shifted_lower_bounds",
    summary="Bonferroni lower bounds on every group's disparity minus a fixed shift.",
    result=GroupBoundsResult,
    compute=shifted_lower_bounds,
    parameters=(*common_parameters("metric", "target"),
                Parameter("shift", 0.0, [Interval("real")], "float",
                          "The shift :math:`\\delta` subtracted from every disparity."),
                *common_parameters("alpha", "pos_label")),
    description="Normal lower bounds at level alpha / K for the K non-empty groups.",
    bootstrap=False,
)


def _no_trace():
    assert "shifted_lower" not in registered_procedures()
    assert not hasattr(AuditSummary, "shifted_lower_bounds")
    with pytest.raises(AttributeError):
        group.shifted_lower_bounds  # noqa: B018
    with pytest.raises(AttributeError):
        scale.partitioned_shifted_lower_bounds  # noqa: B018


@pytest.fixture
def toy():
    _no_trace()
    function = register_procedure(TOY)
    try:
        yield function
    finally:
        unregister_procedure("shifted_lower")
        _no_trace()


@pytest.fixture
def trail():
    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "y": rng.integers(0, 2, n)})
    frame["y_pred"] = np.where(rng.random(n) < np.where(frame.g == "c", 0.7, 0.85),
                               frame.y, 1 - frame.y)
    return frame


def _reference(frame, shift, alpha):
    """The toy's bounds from the rows, without the library (error rate, target 0)."""
    lower = []
    for name in ("a", "b", "c"):
        err = (frame.y[frame.g == name] != frame.y_pred[frame.g == name]).to_numpy(float)
        se = err.std() / np.sqrt(err.size)
        lower.append(err.mean() - shift - norm.ppf(1 - alpha / 3) * se)
    return np.array(lower)


class _Column(ClassifierMixin, BaseEstimator):
    """A 'model' whose predictions are a column of X (to audit given predictions)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return X["y_pred"].to_numpy()


def test_one_declaration_gives_every_api(toy, trail, tmp_path, capsys):
    shift, alpha = 0.05, 0.2
    expected = _reference(trail, shift, alpha)
    # the function API: returned by register_procedure and found in skfair_audit.group
    from skfair_audit.group import shifted_lower_bounds

    assert shifted_lower_bounds is toy is get_procedure("shifted_lower").function
    res = toy(trail.y, trail.y_pred, trail[["g"]], metric="error_rate", target=0.0,
              shift=shift, alpha=alpha)
    np.testing.assert_allclose(res.lower, expected, rtol=1e-12)
    assert res.names == ("g=a", "g=b", "g=c")
    with pytest.raises(ValueError, match="shift must be a finite number"):
        toy(trail.y, trail.y_pred, trail[["g"]], metric="error_rate", shift=np.nan)
    assert "shift : float" in toy.__doc__ and "Returns" in toy.__doc__
    # AuditSummary
    summary = AuditSummary.from_rows(trail.y, trail.y_pred, trail[["g"]],
                                     metric="error_rate", target=0.0)
    np.testing.assert_array_equal(summary.shifted_lower_bounds(shift=shift, alpha=alpha).lower,
                                  res.lower)
    # the partitioned API: in-memory chunks, bit for bit
    chunks = [trail.iloc[i:i + 700] for i in range(0, len(trail), 700)]
    part = scale.partitioned_shifted_lower_bounds(
        chunks, label="y", prediction="y_pred", protected="g", metric="error_rate",
        target=0.0, shift=shift, alpha=alpha)
    np.testing.assert_array_equal(part.lower, res.lower)
    # the estimator: procedure= and its own option through procedure_params
    auditor = GroupDisparityAuditor(FrozenEstimator(_Column().fit(trail, trail.y)),
                                    metric="error_rate", procedure="shifted_lower",
                                    protected=["g"], target=0.0, alpha=alpha,
                                    procedure_params={"shift": shift})
    audited = auditor.fit(trail, trail.y).audit(trail, trail.y)
    np.testing.assert_array_equal(audited.lower, res.lower)
    assert auditor.score(trail, trail.y) == pytest.approx(np.min(expected))
    with pytest.raises(ValueError, match="not options of 'shifted_lower'"):
        auditor.set_params(procedure_params={"bandwidth": 1.0}).fit(trail, trail.y)
    # the command line: --procedure and --procedure-param
    path = tmp_path / "trail.csv"
    trail.to_csv(path, index=False)
    base = ["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected", "g",
            "--metric", "error_rate", "--target", "constant:0", "--procedure",
            "shifted_lower", "--alpha", str(alpha), "--procedure-param", f"shift={shift}",
            "--quiet"]
    assert main([*base, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["procedure"] == "shifted_lower" and payload["alternative"] == "lower"
    np.testing.assert_allclose([row["lower"] for row in payload["groups"]], expected,
                               rtol=1e-12)
    # a gate: the worst group's lower bound is above 0.1 only for group c
    assert main([*base, "--epsilon0", "0.1"]) == 1
    assert "Result:" in capsys.readouterr().out


def test_registry_refuses_clashes_and_bad_declarations(toy):
    with pytest.raises(ValueError, match="registered already"):
        register_procedure(TOY)
    with pytest.raises(ValueError, match="exactly one of compute"):
        Procedure("x", "x_bounds", "X.", GroupBoundsResult, ())
    clash = Procedure("other", "certify_bounds", "X.", GroupBoundsResult, (),
                      compute=shifted_lower_bounds)
    with pytest.raises(ValueError, match="is taken"):
        register_procedure(clash)
    with pytest.raises(ValueError, match="is taken"):
        register_procedure(Procedure("boxes", "boxes", "X.", GroupBoundsResult, (),
                                     compute=shifted_lower_bounds))
    with pytest.raises(ValueError, match="unknown procedure 'nope'"):
        get_procedure("nope")


def test_declared_options_without_an_estimator_parameter_are_reachable(trail, tmp_path,
                                                                       capsys):
    """``procedure_params`` / ``--procedure-param``: e.g. ``method`` of ``threshold``."""
    direct = group.certify_threshold(trail.y, trail.y_pred, trail[["g"]], metric="error_rate",
                                     epsilon0=0.0, method="enumeration", n_resamples=100,
                                     random_state=0)
    auditor = GroupDisparityAuditor(FrozenEstimator(_Column().fit(trail, trail.y)),
                                    metric="error_rate", procedure="threshold",
                                    protected=["g"], n_resamples=100, random_state=0,
                                    procedure_params={"method": "enumeration"})
    res = auditor.fit(trail, trail.y).audit(trail, trail.y)
    assert res.method == "enumeration"
    np.testing.assert_array_equal(res.lower, direct.lower)
    with pytest.raises(ValueError, match="parameters of the estimator"):
        auditor.set_params(procedure_params={"alpha": 0.2}).fit(trail, trail.y)
    path = tmp_path / "trail.csv"
    trail.to_csv(path, index=False)
    assert main(["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected",
                 "g", "--metric", "error_rate", "--procedure", "threshold", "--n-resamples",
                 "100", "--random-state", "0", "--procedure-param", "method=enumeration",
                 "--json", "--quiet"]) in (0, 1)
    payload = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose([row["lower"] for row in payload["groups"]], direct.lower,
                               rtol=1e-12)


def test_registry_left_clean_and_procedure_gone_everywhere(trail):
    _no_trace()
    with pytest.raises(ValueError, match="procedure must be one of"):
        GroupDisparityAuditor(_Column(), procedure="shifted_lower",
                              protected=["g"]).fit(trail, trail.y)
    with pytest.raises(SystemExit):
        main(["group", "x.csv", "--label", "y", "--prediction", "p", "--protected", "g",
              "--procedure", "shifted_lower"])
    assert registered_procedures() == ("bounds", "threshold", "flag", "equalized_odds",
                                       "ratio_bounds", "certify_ratio", "flag_ratios")
    assert registered_procedures("tilts") == ("monotone", "polynomial", "rkhs")


# -- the ratio procedures: declared once, found in every API ---------------------------------
@pytest.fixture
def selection_trail():
    rng = np.random.default_rng(5)
    n = 4000
    frame = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "s": rng.choice(["F", "M"], n),
                          "y": rng.integers(0, 2, n)})
    frame["y_pred"] = (rng.random(n) < np.where(frame.g == "c", 0.3, 0.5)).astype(int)
    return frame


RATIO_ROUTES = {  # procedure -> (options of the function, the arrays that must agree)
    "ratio_bounds": ({"alternative": "two-sided"}, ("ratios", "lower", "upper")),
    "certify_ratio": ({"threshold": 0.9}, ("lower", "upper", "certified")),
    "flag_ratios": ({"threshold": 0.9}, ("standard_errors", "pvalues", "flagged")),
}


@pytest.mark.parametrize("name", list(RATIO_ROUTES))
def test_ratio_procedures_in_every_api_with_equal_results(name, selection_trail, tmp_path,
                                                          capsys):
    frame = selection_trail
    options, fields = RATIO_ROUTES[name]
    declaration = get_procedure(name)
    assert name in registered_procedures("summary")
    controls = dict(denominator="max", min_share=0.05, n_resamples=120, random_state=3)
    # the function API: built from the declaration
    function = getattr(group, declaration.function_name)
    assert function is declaration.function
    ref = function(frame.y, frame.y_pred, frame[["g", "s"]], metric="selection_rate",
                   **options, **controls)

    def same(res):
        assert res.names == ref.names
        for f in fields:
            np.testing.assert_array_equal(getattr(res, f), getattr(ref, f), err_msg=f)

    # AuditSummary and the thin summary_* names
    summary = AuditSummary.from_rows(frame.y, frame.y_pred, frame[["g", "s"]],
                                     metric="selection_rate")
    same(getattr(summary, declaration.function_name)(**options, **controls))
    if name == "flag_ratios":
        same(group.summary_flag_ratios(summary, **options, **controls))
    else:
        same(group.summary_ratio_bounds(summary, **controls, **(
            {"threshold": 0.9, "alternative": "lower"} if name == "certify_ratio" else options)))
    # the partitioned API: chunks of the trail, bit for bit the in-memory audit
    chunks = [frame.iloc[i:i + 900] for i in range(0, len(frame), 900)]
    partitioned = getattr(scale, f"partitioned_{declaration.function_name}")
    fixed = {k: v for k, v in controls.items()
             if declaration.bootstrap or k not in ("n_resamples", "random_state")}
    same(partitioned(chunks, label="y", prediction="y_pred", protected=["g", "s"],
                     metric="selection_rate", **options, **fixed))
    # the estimator: procedure=, the ratio threshold as epsilon0, the rest in procedure_params
    threshold = options.get("threshold")
    auditor = GroupDisparityAuditor(
        FrozenEstimator(_Column().fit(frame, frame.y)), metric="selection_rate",
        procedure=name, protected=["g", "s"], epsilon0=threshold,
        alternative=options.get("alternative"), n_resamples=120, random_state=3,
        procedure_params={"denominator": "max", "min_share": 0.05})
    audited = auditor.fit(frame, frame.y).audit(frame, frame.y)
    same(audited)
    assert getattr(audited, "threshold", None) == threshold
    score = auditor.score(frame, frame.y)
    active = ref.active
    if name == "ratio_bounds":  # the smallest simultaneous lower bound
        expected = np.min(ref.lower[active & ref.defined])
    elif name == "certify_ratio":  # the fraction certified
        expected = np.mean(ref.certified[active])
    else:  # minus the fraction flagged
        expected = -np.mean(ref.flagged[active])
    assert score == expected
    # the command line: --procedure, --epsilon0 as the ratio threshold, --report
    path = tmp_path / "trail.csv"
    frame.to_csv(path, index=False)
    base = ["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected", "g",
            "s", "--procedure", name, "--n-resamples", "120", "--random-state", "3",
            "--procedure-param", "min_share=0.05", "--quiet"]
    if threshold is not None:
        base += ["--epsilon0", str(threshold)]
    code = main([*base, "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert payload["procedure"] == name and payload["metric"] == "selection_rate"
    assert code == (1 if ref.verdict(threshold).unfair else 0)
    column = {"ratio_bounds": "lower", "certify_ratio": "lower", "flag_ratios": "pvalue"}[name]
    values = ref.lower if column == "lower" else ref.pvalues
    got = [row[column] for row in payload["groups"]]
    np.testing.assert_allclose(np.asarray(got, dtype=float), values[active], rtol=1e-12)
    report = tmp_path / "ratio.html"
    assert main([*base, "--report", str(report)]) == code
    assert ref.guarantee().split(".")[0] in report.read_text()


def test_the_ratio_threshold_is_never_the_score_threshold(selection_trail, tmp_path, capsys):
    frame = selection_trail
    auditor = GroupDisparityAuditor(FrozenEstimator(_Column().fit(frame, frame.y)),
                                    metric="selection_rate", procedure="certify_ratio",
                                    protected=["g"], n_resamples=50, random_state=0)
    assert auditor.fit(frame, frame.y).audit(frame, frame.y).threshold == 0.8  # r0's default
    with pytest.raises(ValueError, match="'threshold' of 'certify_ratio' is set by the "
                                         "estimator's epsilon0.*score threshold"):
        auditor.set_params(procedure_params={"threshold": 0.9}).fit(frame, frame.y)
    with pytest.raises(ValueError, match="takes no target.*denominator"):
        auditor.set_params(procedure_params=None, target="g=a").fit(frame, frame.y)
    with pytest.raises(ValueError, match="no higher-is-fairer score"):
        auditor.set_params(target="overall", procedure="ratio_bounds",
                           alternative="upper").fit(frame, frame.y).score(frame, frame.y)
    # both thresholds at once: the score threshold makes the labels, epsilon0 is r0
    from sklearn.linear_model import LogisticRegression

    X = pd.DataFrame({"g": frame.g.map({"a": 0, "b": 1, "c": 2}), "x": frame.y_pred})
    model = FrozenEstimator(LogisticRegression().fit(X, frame.y))
    both = GroupDisparityAuditor(model, metric="selection_rate", procedure="certify_ratio",
                                 protected=["g"], response_method="predict_proba",
                                 threshold=0.5, epsilon0=0.7, n_resamples=50, random_state=0)
    res = both.fit(X, frame.y).audit(X, frame.y)
    labels = (model.predict_proba(X)[:, 1] >= 0.5).astype(int)
    direct = group.certify_ratio(frame.y, labels, X[["g"]], threshold=0.7, n_resamples=50,
                                 random_state=0)
    assert res.threshold == 0.7
    np.testing.assert_array_equal(res.lower, direct.lower)
    path = tmp_path / "trail.csv"
    frame.to_csv(path, index=False)
    base = ["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected", "g",
            "--procedure", "certify_ratio", "--quiet"]
    assert main([*base, "--procedure-param", "threshold=0.9"]) == 2
    assert "is --epsilon0" in capsys.readouterr().err
    assert main([*base, "--target", "group:g=a"]) == 2
    assert "takes no --target" in capsys.readouterr().err
    # a misspelt option is refused, never silently ignored
    assert main([*base, "--procedure-param", "min_shar=0.05"]) == 2
    err = capsys.readouterr().err
    assert "min_shar: not an option of 'certify_ratio'" in err and "min_share" in err


# -- RKHS tilts from the estimator and the command line ------------------------------------
@pytest.fixture
def covariate_trail():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"age": rng.uniform(0, 5, n), "y": rng.integers(0, 2, n)})
    frame["y_pred"] = np.where(rng.random(n) < 0.85, frame.y, 1 - frame.y)
    return frame


def test_rkhs_tilts_from_the_estimator_and_the_command_line(covariate_trail, tmp_path,
                                                             capsys):
    frame = covariate_trail
    direct = rkhs_tilt_bounds(frame[["age"]], frame.y, frame.y_pred, metric="error_rate",
                              bandwidth=0.5, target="overall", alternative="lower",
                              scale="unscaled", n_resamples=60, random_state=0)
    auditor = GroupDisparityAuditor(FrozenEstimator(_Column().fit(frame, frame.y)),
                                    metric="error_rate", groups="rkhs", bandwidth=0.5,
                                    protected=["age"], alternative="lower", scale="unscaled",
                                    n_resamples=60, random_state=0)
    result = auditor.fit(frame, frame.y).audit(frame, frame.y)
    assert result.critical_value == direct.critical_value
    np.testing.assert_array_equal(result.bootstrap_distribution,
                                  direct.bootstrap_distribution)
    query = np.linspace(1, 2, 4)[:, None]
    assert result.bound(coef=np.ones(4), centers=query) == direct.bound(coef=np.ones(4),
                                                                        centers=query)
    with pytest.raises(ValueError, match="needs bandwidth"):
        auditor.set_params(bandwidth=None).fit(frame, frame.y)
    with pytest.raises(ValueError, match="no single score"):
        auditor.set_params(bandwidth=0.5).score(frame, frame.y)
    # the command line: --tilts rkhs --bandwidth, options through --procedure-param
    path = tmp_path / "trail.csv"
    frame.to_csv(path, index=False)
    base = ["group", str(path), "--label", "y", "--prediction", "y_pred", "--protected",
            "age", "--metric", "error_rate", "--tilts", "rkhs", "--alternative", "lower",
            "--n-resamples", "60", "--random-state", "0", "--quiet"]
    assert main([*base, "--bandwidth", "0.5", "--procedure-param", "scale=unscaled",
                 "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["tilts"] == "rkhs"
    assert payload["critical_value"] == pytest.approx(direct.critical_value, rel=1e-12)
    assert main(base) == 2
    assert "--tilts rkhs needs --bandwidth" in capsys.readouterr().err
    # and the report, through the shared result protocol (tabulated tilts, no gate)
    report = tmp_path / "rkhs.html"
    assert main([*base, "--bandwidth", "0.5", "--report", str(report)]) == 0
    html = report.read_text()
    assert "critical value" in html.lower() and "bounds only (no gate)" in html
    assert main([*base, "--bandwidth", "0.5", "--epsilon0", "0.1"]) == 2
    assert "no --epsilon0 gate" in capsys.readouterr().err
    assert main([*base, "--bandwidth", "0.5", "--procedure-param", "rank=5"]) == 2
    assert "rank: not an option of 'rkhs'" in capsys.readouterr().err
