"""The ``skfair-audit`` command line: subcommands, exit codes, JSON output, bad-input messages."""

from __future__ import annotations

import importlib.util
import json
import pickle
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skfair_audit._cli import EXIT_ERROR, EXIT_PASS, EXIT_UNFAIR, main
from skfair_audit._io import DEFAULT_TRUSTED_TYPES, UserError, load_model

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
HAS_SKOPS = importlib.util.find_spec("skops") is not None
needs_skops = pytest.mark.skipif(not HAS_SKOPS, reason="skops is not installed")


def run(capsys, *argv):
    """Run the CLI in-process; (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *needles):
    assert code == EXIT_ERROR
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("skfair-audit: error:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


# -- group ---------------------------------------------------------------------------------
def _trail(biased, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    race = rng.choice(["a", "b"], n)
    sex = rng.choice(["F", "M"], n)
    y = rng.integers(0, 2, n)
    fpr = np.where((race == "b") & biased, 0.45, 0.15)
    score = np.where(y == 1, rng.uniform(0.3, 1, n), np.where(rng.random(n) < fpr, 0.8, 0.2))
    return pd.DataFrame({"y": y, "pred": (score >= 0.5).astype(int), "score": score,
                         "race": race, "sex": sex, "note": "x"})


@pytest.fixture(scope="module")
def trails(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trails")
    biased, fair = folder / "biased.csv", folder / "fair.csv"
    _trail(True).to_csv(biased, index=False)
    _trail(False).to_csv(fair, index=False)
    return biased, fair


GROUP = ("--label", "y", "--prediction", "pred", "--protected", "race", "sex", "--quiet")


def test_group_flag_exit_codes_and_json(capsys, trails):
    biased, fair = trails
    code, out, _ = run(capsys, "group", biased, *GROUP, "--metric", "fpr", "--epsilon0", "0.05",
                       "--json")
    assert code == EXIT_UNFAIR
    payload = json.loads(out)
    flagged = {g["group"] for g in payload["groups"] if g["flagged"]}
    assert "race=b" in flagged and not any("race=a" in g for g in flagged)
    assert payload["exit_code"] == EXIT_UNFAIR and payload["procedure"] == "flag"
    assert payload["q"] == 0.1 and payload["n"] == int((pd.read_csv(biased).y == 0).sum())

    code, out, _ = run(capsys, "group", fair, *GROUP, "--metric", "fpr", "--epsilon0", "0.05")
    assert code == EXIT_PASS
    assert "no group flagged" in out and "race=a & sex=F" in out


def test_group_threshold_and_bounds_gate(capsys, trails):
    biased, fair = trails
    common = (*GROUP, "--metric", "fpr", "--n-resamples", "200")
    # threshold "less": every group certified below +0.1 only on the fair trail
    assert run(capsys, "group", fair, *common, "--procedure", "threshold", "--alternative",
               "less", "--epsilon0", "0.1")[0] == EXIT_PASS
    assert run(capsys, "group", biased, *common, "--procedure", "threshold", "--alternative",
               "less", "--epsilon0", "0.1")[0] == EXIT_UNFAIR
    # bounds without --epsilon0 are descriptive; with it they are a gate
    code, out, _ = run(capsys, "group", biased, *common, "--procedure", "bounds", "--json")
    assert code == EXIT_PASS
    rows = json.loads(out)["groups"]
    assert all(r["lower"] <= r["disparity"] <= r["upper"] for r in rows)
    assert run(capsys, "group", biased, *common, "--procedure", "bounds", "--alternative",
               "upper", "--epsilon0", "0.1")[0] == EXIT_UNFAIR
    assert run(capsys, "group", fair, *common, "--procedure", "bounds", "--alternative",
               "upper", "--epsilon0", "0.1")[0] == EXIT_PASS


def test_gated_bounds_report_states_the_gates_verdict(capsys, trails, tmp_path):
    # The report's verdict and plot follow the gate of the command line, not the ungated
    # description ("N groups have bounds that exclude a zero disparity").
    biased, _ = trails
    path = tmp_path / "gate.json"
    code, out, _ = run(capsys, "group", biased, *GROUP, "--metric", "fpr", "--n-resamples",
                       "200", "--procedure", "bounds", "--alternative", "upper", "--epsilon0",
                       "0.1", "--report", path)
    assert code == EXIT_UNFAIR
    section = json.loads(path.read_text())["sections"][1]
    verdict = section["paragraphs"][-1]
    assert "groups have bounds on the requested side of 0.1; not: race=b" in verdict
    caption = section["figures"][0]["caption"]
    assert "with a bound on the wrong side of 0.1 first (red)" in caption


def test_group_score_threshold_target_and_report(capsys, trails, tmp_path):
    biased, _ = trails
    report = tmp_path / "group.html"
    code, out, err = run(
        capsys, "group", biased, "--label", "y", "--score", "score", "--threshold", "0.5",
        "--protected", "race", "--metric", "fpr", "--target", "group:race=a",
        "--procedure", "bounds", "--alternative", "lower", "--n-resamples", "200",
        "--json", "--report", report,
    )
    assert code == EXIT_PASS
    payload = json.loads(out)
    frame = pd.read_csv(biased)
    negatives = frame[frame.y == 0]
    theta = (negatives[negatives.race == "a"].score >= 0.5).mean()
    assert payload["target"] == pytest.approx(theta)
    bound = {g["group"]: g for g in payload["groups"]}["race=b"]
    assert bound["lower"] > 0 and bound["upper"] is None  # one-sided: null in strict JSON
    assert "report written" in err  # progress on stderr, JSON alone on stdout
    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>") and "data:image/png;base64," in html


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow is not installed")
def test_group_reads_parquet(capsys, trails, tmp_path):
    biased, _ = trails
    path = tmp_path / "trail.parquet"
    pd.read_csv(biased).to_parquet(path)
    code, out, _ = run(capsys, "group", path, *GROUP, "--metric", "fpr", "--epsilon0", "0.05",
                       "--json")
    assert code == EXIT_UNFAIR and json.loads(out)["groups"]


def test_parquet_without_pyarrow_says_how_to_install(capsys, tmp_path, monkeypatch):
    path = tmp_path / "trail.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    code, _, err = run(capsys, "group", path, *GROUP)
    assert_one_line_error(code, err, "pip install pyarrow")


def test_group_bad_inputs_are_one_line_errors(capsys, trails, tmp_path):
    biased, _ = trails
    code, _, err = run(capsys, "group", biased, "--label", "outcome", "--prediction", "pred",
                       "--protected", "race")
    assert_one_line_error(code, err, "--label", "'outcome' not found", "y, pred, score, race")
    code, _, err = run(capsys, "group", biased, "--label", "y", "--prediction", "pred",
                       "--protected", "race", "ethnicity")
    assert_one_line_error(code, err, "'ethnicity' not found")
    code, _, err = run(capsys, "group", tmp_path / "missing.csv", *GROUP)
    assert_one_line_error(code, err, "missing.csv", "no such file")
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\xff\xfe\x00\x81" * 100)
    code, _, err = run(capsys, "group", garbage, *GROUP)
    assert_one_line_error(code, err, "cannot read")
    # wrong type: a text column as scores
    code, _, err = run(capsys, "group", biased, "--label", "y", "--score", "note",
                       "--threshold", "0.5", "--protected", "race")
    assert_one_line_error(code, err, "'note' must hold numbers")
    code, _, err = run(capsys, "group", biased, *GROUP, "--target", "group:race=z")
    assert_one_line_error(code, err, "race=z")
    code, _, err = run(capsys, "group", biased, *GROUP, "--procedure", "flag",
                       "--alternative", "within")
    assert_one_line_error(code, err, "--alternative", "greater, less, two-sided")
    code, _, err = run(capsys, "group", biased, "--label", "race", "--prediction", "sex",
                       "--protected", "race", "--metric", "fpr")
    # the library names its parameter, the command line its option
    assert_one_line_error(code, err, "pass --pos-label to say which label is positive")
    assert "pos_label" not in err


def test_library_errors_name_parameters_not_command_line_options():
    # Was: group/_metrics.py said "pass pos_label (--pos-label on the command line)".
    import ast
    import pathlib

    import skfair_audit

    package = pathlib.Path(skfair_audit.__file__).parent
    command_line = {"_cli.py", "_cli_faith.py", "_cli_monitor.py", "_cli_ratio.py",
                    "_console.py", "_io.py", "_demo.py"}
    offenders = []
    for path in package.rglob("*.py"):
        if path.parent == package and path.name in command_line:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if any(f"--{name}" in node.value for name in
                       ("pos-label", "epsilon0", "n-resamples", "random-state", "protected",
                        "min-size", "confidence-level", "metric", "label", "report")):
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not offenders, offenders


def test_one_group_audit_is_an_error_not_a_pass(capsys, trails, tmp_path):
    # Was: a single-level --protected column gave "disparity 0", "no group flagged" and exit 0.
    biased, _ = trails
    code, out, err = run(capsys, "group", biased, "--label", "y", "--prediction", "pred",
                         "--protected", "note", "--metric", "fpr")
    assert_one_line_error(code, err, "--protected note", "nothing to audit",
                          "0 by construction")
    assert "no group flagged" not in out
    # the library warns (and the result is still returned)
    from skfair_audit.group import DegenerateBootstrapWarning, VacuousAuditWarning, flag_groups

    frame = pd.read_csv(biased)
    with pytest.warns(VacuousAuditWarning, match="whole audit sample"), \
            pytest.warns(DegenerateBootstrapWarning, match="zero standard error"):
        res = flag_groups(frame.y, frame.pred, frame[["note"]], metric="fpr")
    assert res.estimates.tolist() == [0.0]
    # a single group against a known target is a genuine audit: no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", VacuousAuditWarning)
        flag_groups(frame.y, frame.pred, frame[["note"]], metric="fpr", target=0.1)
        flag_groups(frame.y, frame.pred, frame[["race"]], metric="fpr")


def test_progress_counts_the_non_empty_groups_the_table_lists(capsys, trails, tmp_path):
    # Was: "flag: 66 groups" on stderr above a table of 65 non-empty groups (the empty
    # intersections counted). Here race=b & sex=M has no negatives: empty for the FPR.
    biased, _ = trails
    frame = pd.read_csv(biased)
    frame = frame[~((frame.race == "b") & (frame.sex == "M") & (frame.y == 0))]
    path = tmp_path / "holes.csv"
    frame.to_csv(path, index=False)
    code, out, err = run(capsys, "group", path, "--label", "y", "--prediction", "pred",
                         "--protected", "race", "sex", "--metric", "fpr")
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    listed = out.split("non-empty groups")[0].rsplit(";", 1)[1].strip()
    assert "flag: 7 non-empty groups (1 empty, left out)" in err
    assert listed == "7"


def test_report_with_an_unknown_suffix_is_refused_before_the_audit(capsys, trails, tmp_path):
    # Was: --report rep.pdf silently created a folder named rep.pdf.
    biased, _ = trails
    target = tmp_path / "rep.pdf"
    code, out, err = run(capsys, "group", biased, *GROUP, "--report", target)
    assert_one_line_error(code, err, "--report", "rep.pdf", ".pdf", ".html, .htm, .json, .md")
    assert not target.exists() and out == ""
    for name in ("rep.html", "rep.json", "rep.md", "folder"):
        code, _, err = run(capsys, "group", biased, *GROUP, "--report", tmp_path / name)
        assert code in (EXIT_PASS, EXIT_UNFAIR), err
    assert (tmp_path / "folder" / "report.html").is_file()
    assert (tmp_path / "rep.html").read_text().startswith("<!DOCTYPE html>")


def test_options_carry_the_library_names_and_old_spellings_still_work(capsys, trails):
    biased, _ = trails
    common = ("--label", "y", "--prediction", "pred", "--metric", "fpr", "--procedure",
              "bounds", "--n-resamples", "100", "--quiet", "--json")
    new = json.loads(run(capsys, "group", biased, *common, "--protected", "race",
                         "--random-state", "3")[1])
    old = json.loads(run(capsys, "group", biased, *common, "--groups", "race",
                         "--seed", "3")[1])
    assert new == old and new["alternative"] == "two-sided"
    with pytest.raises(SystemExit):
        main(["group", "--help"])
    help_text = capsys.readouterr().out
    assert "--protected" in help_text and "--random-state" in help_text
    assert "--groups" not in help_text and "--seed" not in help_text


def test_bad_option_values_exit_2(capsys, trails):
    biased, _ = trails
    for bad in (("--alpha", "2"), ("--target", "median"), ("--n-resamples", "0")):
        with pytest.raises(SystemExit) as info:
            main(["group", str(biased), *GROUP, *bad])
        assert info.value.code == EXIT_ERROR
        err = capsys.readouterr().err
        assert bad[0] in err and "Traceback" not in err


def test_help_is_self_explanatory(capsys):
    for command, needles in {
        "group": ("--label", "--prediction", "--score", "--threshold", "--protected", "--metric",
                  "--target", "--procedure", "--alpha", "--q", "Exit codes", "flag"),
        "faith": ("--model", "--features", "--protected", "--epsilon", "--delta", "--trust",
                  "--unsafe-pickle", "skops", "Exit codes"),
        "demo": ("--output", "COMPAS", "Exit codes"),
    }.items():
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        for needle in needles:
            assert needle in out, (command, needle)


# -- faith ---------------------------------------------------------------------------------
class Passthrough(TransformerMixin, BaseEstimator):
    """A transformer of a type skops does not know (to test the allow-list)."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X


def _faith_data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"group": rng.choice(["a", "b"], n),
                      "priors": rng.choice(["none", "few", "many"], n)})
    logit = -1.0 + 1.5 * (X.priors == "many") + 2.0 * (X.group == "b")
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X.assign(label=y)


@pytest.fixture(scope="module")
def faith_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faith")
    train, audit = _faith_data(seed=0), _faith_data(seed=1)
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(
        train[["group", "priors"]], train.label)
    audit.to_csv(folder / "audit.csv", index=False)
    with open(folder / "model.pkl", "wb") as f:
        pickle.dump(model, f)
    if HAS_SKOPS:
        import skops.io as sio

        sio.dump(model, folder / "model.skops")
        sio.dump(make_pipeline(Passthrough(), model), folder / "custom.skops")
    return folder, model


FAITH = ("--data", "{folder}/audit.csv", "--label", "label", "--features", "group", "priors",
         "--protected", "group", "--n-resamples", "200", "--quiet")


def faith_args(folder, *extra):
    return [a.format(folder=folder) for a in FAITH] + list(extra)


@needs_skops
def test_faith_exit_codes_json_and_report(capsys, faith_files, tmp_path):
    folder, _ = faith_files
    model = folder / "model.skops"
    code, out, _ = run(capsys, "faith", "--model", model, *faith_args(folder), "--delta", "0.05",
                       "--json")
    assert code == EXIT_UNFAIR  # the model's decisions flip with the group
    payload = json.loads(out)
    assert payload["rejected"] is True and payload["lower_bound"] > 0.05
    # the uniformly valid method by default, as in the library (was: m-out-of-n, described
    # as "valid at kinks too")
    assert payload["method"] == "uniform"
    assert payload["moves"] and payload["n"] == 1500
    code, out, _ = run(capsys, "faith", "--model", model, *faith_args(folder), "--delta", "0.9",
                       "--report", tmp_path / "faith")
    assert code == EXIT_PASS
    assert "cannot reject delta-fairness" in out
    html = (tmp_path / "faith" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 1  # the heat map
    assert json.loads((tmp_path / "faith" / "report.json").read_text())["sections"]


@needs_skops
def test_faith_prints_the_degenerate_metric_warning(capsys, faith_files, tmp_path):
    # The zip code is a strong proxy of every race level: the learned metric frees 3 of the 5
    # directions in which zip and age vary, and the command line says so.
    rng = np.random.default_rng(3)
    n = 2000
    race = rng.integers(0, 4, n)
    zip_code = np.where(rng.random(n) < 0.6, race, rng.integers(0, 4, n))
    frame = pd.DataFrame({"race": np.char.add("r", race.astype(str)),
                          "zip": np.char.add("z", zip_code.astype(str)),
                          "age": rng.choice(["<25", "25-45", ">45"], n)})
    frame["label"] = (rng.random(n) < 0.3 + 0.3 * (frame.age == "<25")).astype(int)
    model = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(
        frame[["race", "zip", "age"]], frame.label)
    import skops.io as sio

    sio.dump(model, tmp_path / "proxy.skops")
    frame.to_csv(tmp_path / "proxy.csv", index=False)
    args = ["faith", "--model", tmp_path / "proxy.skops", "--data", tmp_path / "proxy.csv",
            "--label", "label", "--features", "race", "zip", "age", "--protected", "race",
            "--delta", "0.05", "--n-resamples", "50"]
    code, out, err = run(capsys, *args, "--json")
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    warning = [line for line in err.splitlines() if "fair metric looks degenerate" in line]
    assert len(warning) == 1, err
    assert "3 of the 5 directions" in warning[0] and "race_r" in warning[0]
    payload = json.loads(out)
    assert payload["degenerate_metric"] is True and payload["free_directions"] == 3
    # The healthy case prints no such warning.
    folder, _ = faith_files
    plain = [a for a in faith_args(folder) if a != "--quiet"]
    _, _, err = run(capsys, "faith", "--model", folder / "model.skops", *plain, "--delta", "0.05")
    assert "degenerate" not in err


@needs_skops
def test_skops_round_trip_and_allow_list(faith_files):
    folder, model = faith_files
    X = _faith_data(seed=2)[["group", "priors"]]
    loaded = load_model(folder / "model.skops")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X))
    with pytest.raises(UserError, match="not trusted: .*Passthrough.*--trust"):
        load_model(folder / "custom.skops")
    import skops.io as sio

    (custom_type,) = sio.get_untrusted_types(file=folder / "custom.skops")
    assert custom_type not in DEFAULT_TRUSTED_TYPES
    loaded = load_model(folder / "custom.skops", trust=[custom_type])
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@needs_skops
def test_faith_untrusted_type_is_refused_on_the_command_line(capsys, faith_files):
    folder, _ = faith_files
    code, _, err = run(capsys, "faith", "--model", folder / "custom.skops",
                       *faith_args(folder), "--delta", "0.05")
    assert_one_line_error(code, err, "not trusted", "--trust")


def test_pickle_is_refused_without_the_unsafe_flag(capsys, faith_files):
    folder, _ = faith_files
    code, _, err = run(capsys, "faith", "--model", folder / "model.pkl", *faith_args(folder),
                       "--delta", "0.05")
    assert_one_line_error(code, err, "refusing", "--unsafe-pickle")
    code, out, err = run(capsys, "faith", "--model", folder / "model.pkl", *faith_args(folder),
                         "--delta", "0.05", "--unsafe-pickle")
    assert code == EXIT_UNFAIR
    assert "WARNING" in err and "executes any code" in err  # loud, even with --quiet


def test_unreadable_pickle_says_what_is_wrong(capsys, faith_files, tmp_path):
    # Was: "cannot load 'garbage.joblib': 89" (the KeyError of a pickle opcode).
    folder, _ = faith_files
    garbage = tmp_path / "garbage.joblib"
    garbage.write_bytes(b"Y" + bytes(range(200)))
    code, _, err = run(capsys, "faith", "--model", garbage, *faith_args(folder),
                       "--delta", "0.05", "--unsafe-pickle")
    assert_one_line_error(code, err, "garbage.joblib", "as a pickle/joblib file", "KeyError",
                          "not a model written by joblib.dump or pickle.dump")
    truncated = tmp_path / "truncated.pkl"
    truncated.write_bytes((folder / "model.pkl").read_bytes()[:300])
    code, _, err = run(capsys, "faith", "--model", truncated, *faith_args(folder),
                       "--delta", "0.05", "--unsafe-pickle")
    assert_one_line_error(code, err, "truncated.pkl", "is truncated")


def test_missing_skops_names_the_extra(capsys, faith_files, monkeypatch):
    folder, _ = faith_files
    monkeypatch.setitem(sys.modules, "skops", None)
    monkeypatch.setitem(sys.modules, "skops.io", None)
    (folder / "x.skops").write_bytes(b"not a zip")
    code, _, err = run(capsys, "faith", "--model", folder / "x.skops", *faith_args(folder),
                       "--delta", "0.05")
    assert_one_line_error(code, err, "skfair_audit[skops]")


@needs_skops
def test_faith_bad_inputs(capsys, faith_files, tmp_path):
    folder, _ = faith_files
    model = folder / "model.skops"
    args = faith_args(folder)
    bad_features = [a if a != "priors" else "prior" for a in args]
    code, _, err = run(capsys, "faith", "--model", model, *bad_features, "--delta", "0.05")
    assert_one_line_error(code, err, "--features", "'prior' not found", "group, priors")
    not_protected = list(args)
    not_protected[not_protected.index("--protected") + 1] = "sex"
    code, _, err = run(capsys, "faith", "--model", model, *not_protected, "--delta", "0.05")
    assert_one_line_error(code, err, "--protected", "'sex'")
    code, _, err = run(capsys, "faith", "--model", model, *args, "--delta", "1.5")
    assert_one_line_error(code, err, "delta")
    not_a_model = tmp_path / "model.skops"
    not_a_model.write_text("hello")
    code, _, err = run(capsys, "faith", "--model", not_a_model, *args, "--delta", "0.05")
    assert_one_line_error(code, err, "skops file")
    code, _, err = run(capsys, "faith", "--model", tmp_path / "none.skops", *args,
                       "--delta", "0.05")
    assert_one_line_error(code, err, "no such file")


# -- reports: what to install, missing figures, new folders (issue 24) --------------------
def test_group_report_names_its_extras_and_the_folders_it_creates(capsys, trails, tmp_path):
    biased, _ = trails
    target = tmp_path / "new" / "deeper" / "rep.json"
    plain = [a for a in GROUP if a != "--quiet"]
    code, _, err = run(capsys, "group", biased, *plain, "--n-resamples", "50", "--report",
                       target)
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    assert f"created the folder {str(target.parent)!r} (--report)" in err
    install = json.loads(target.read_text())["install"]
    assert install.startswith('python -m pip install ".[pandas,plot]"'), install
    # an existing folder is not announced
    _, _, err = run(capsys, "group", biased, *plain, "--n-resamples", "50", "--report", target)
    assert "created the folder" not in err


@needs_skops
def test_faith_report_names_skops_among_its_extras(capsys, faith_files, tmp_path):
    folder, _ = faith_files
    run(capsys, "faith", "--model", folder / "model.skops", *faith_args(folder), "--delta",
        "0.9", "--report", tmp_path / "faith.md")
    assert 'python -m pip install ".[pandas,plot,skops]"' in (tmp_path / "faith.md").read_text()


def test_report_without_matplotlib_notes_each_missing_figure_and_warns(capsys, trails,
                                                                       tmp_path, monkeypatch):
    # Was: exit 0 and a report with none of its figures, no word of it.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    biased, _ = trails
    plain = [a for a in GROUP if a != "--quiet"]
    code, _, err = run(capsys, "group", biased, *plain, "--n-resamples", "50", "--report",
                       tmp_path / "rep")
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    warnings = [line for line in err.splitlines() if line.startswith("skfair-audit: warning:")]
    assert any("1 of 1 figures of the report not drawn: matplotlib is not installed" in w
               and "skfair_audit[plot]" in w for w in warnings), err
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Figure not drawn: matplotlib is not installed" in html and "<img" not in html


# -- options checked before anything is loaded, in the command line's words (issue 24) ------
@pytest.mark.parametrize("size", ["tiny", "0", "1e400", "2XB"])
def test_bad_memory_limit_is_refused_before_loading_anything(capsys, faith_files, size):
    folder, _ = faith_files
    plain = [a for a in faith_args(folder) if a != "--quiet"]
    code, _, err = run(capsys, "faith", "--model", folder / "model.pkl", *plain, "--delta",
                       "0.05", "--memory-limit", size)
    assert_one_line_error(code, err, f"--memory-limit {size!r} is not a byte count")
    assert "loading the model" not in err and "memory_limit" not in err


def test_faith_options_are_checked_before_the_model_is_loaded(capsys, faith_files):
    folder, _ = faith_files
    missing_model = folder / "missing.skops"
    args = faith_args(folder)
    not_protected = list(args)
    not_protected[not_protected.index("--protected") + 1] = "sex"
    code, _, err = run(capsys, "faith", "--model", missing_model, *not_protected, "--delta",
                       "0.05")
    assert_one_line_error(code, err, "--protected", "'sex'")
    assert "loading the model" not in err
    no_data = [a if not a.endswith("audit.csv") else str(folder / "none.csv") for a in args]
    plain = [a for a in no_data if a != "--quiet"]
    code, _, err = run(capsys, "faith", "--model", folder / "model.pkl", *plain, "--delta",
                       "0.05")
    assert_one_line_error(code, err, "--data", "none.csv", "no such file")
    assert "loading the model" not in err
    twice = args[:args.index("--features") + 1] + ["group", "group"] + args[
        args.index("--protected"):]
    code, _, err = run(capsys, "faith", "--model", missing_model, *twice, "--delta", "0.05")
    assert_one_line_error(code, err, "--features names 'group' twice")
    label = [a if a != "priors" else "label" for a in args]
    code, _, err = run(capsys, "faith", "--model", missing_model, *label, "--delta", "0.05")
    assert_one_line_error(code, err, "--label 'label' is also among --features")


@needs_skops
def test_memory_limit_error_speaks_the_command_lines_words(capsys, faith_files):
    # Was: "cannot audit the model on the sample space of --features: ... more than
    # memory_limit = 1000 B ... (space='empirical')".
    # Now a budget no audit fits in is refused before the model is loaded; a budget that
    # fits no step of a larger audit fails later, in the same words
    # (tests/test_cli_faith_scale.py::test_faith_command_memory_limit_and_grid_errors).
    folder, _ = faith_files
    code, _, err = run(capsys, "faith", "--model", folder / "model.skops", *faith_args(folder),
                       "--delta", "0.05", "--memory-limit", "1KB")
    assert_one_line_error(code, err, "--memory-limit 1KB", "no audit fits")
    assert "space=" not in err and "memory_limit" not in err and "cannot audit" not in err


def test_faith_warns_about_levels_the_model_never_saw(capsys, tmp_path):
    # Was silent: the model was trained on groups a and b, the audit has c too (the grid
    # grows by c's cells, where the model's answers are its encoder's guess).
    train, audit = _faith_data(seed=0), _faith_data(seed=1)
    audit.loc[:99, "group"] = "c"
    model = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression()).fit(
        train[["group", "priors"]], train.label)
    with open(tmp_path / "model.pkl", "wb") as f:
        pickle.dump(model, f)
    audit.to_csv(tmp_path / "audit.csv", index=False)
    args = [a for a in faith_args(tmp_path) if a != "--quiet"]
    code, _, err = run(capsys, "faith", "--model", tmp_path / "model.pkl", "--unsafe-pickle",
                       *args, "--delta", "0.05")
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    warning = [line for line in err.splitlines() if "never saw" in line]
    assert len(warning) == 1, err
    assert "100 audit row(s)" in warning[0] and "--protected group: 'c'" in warning[0]
    # levels it saw: no warning
    train.to_csv(tmp_path / "audit.csv", index=False)
    _, _, err = run(capsys, "faith", "--model", tmp_path / "model.pkl", "--unsafe-pickle",
                    *args, "--delta", "0.05")
    assert "never saw" not in err


def test_single_row_warning_is_printed_once_in_the_command_lines_words(capsys, trails,
                                                                      tmp_path):
    biased, _ = trails
    frame = pd.read_csv(biased)
    frame.loc[frame.index[frame.y == 0][0], "race"] = "lonely"
    frame.to_csv(tmp_path / "trail.csv", index=False)
    plain = [a for a in GROUP if a != "--quiet"]
    for procedure in ("bounds", "flag"):
        _, _, err = run(capsys, "group", tmp_path / "trail.csv", *plain, "--metric", "fpr",
                        "--procedure", procedure, "--n-resamples", "50")
        warning = [line for line in err.splitlines() if "single row" in line]
        assert len(warning) == 1, err
        assert "false positive rate" in warning[0] and "p_star" not in warning[0]
