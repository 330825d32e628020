"""The ``bias-audit`` subcommand: Local Law 144 tables, exit codes, JSON, report, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from skfair_audit.cli._main import EXIT_ERROR, EXIT_PASS, EXIT_UNFAIR, main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def applicants(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 6000
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.6, 0.39, 0.01])
    biased_rate = np.where(race == "B", 0.2, 0.45)
    score = rng.normal(size=n) + (race == "A")
    frame = pd.DataFrame({"sex": sex, "race": race, "score": score,
                          "hired": (rng.random(n) < biased_rate).astype(int),
                          "fair": (rng.random(n) < 0.4).astype(int),
                          "label": np.where(rng.random(n) < 0.4, "yes", "no")})
    path = tmp_path_factory.mktemp("bias") / "applicants.csv"
    frame.to_csv(path, index=False)
    return path


COMMON = ("--protected", "sex", "race", "--quiet", "--n-resamples", "200")


def test_selection_mode_exit_code_and_json(capsys, applicants):
    code, out, _ = run(capsys, "bias-audit", applicants, "--decision", "hired", *COMMON,
                       "--json")
    assert code == EXIT_UNFAIR
    payload = json.loads(out)
    assert payload["mode"] == "selection" and payload["exit_code"] == EXIT_UNFAIR
    by_group = {row["group"]: row for row in payload["categories"]}
    assert by_group["race=B"]["verdict"] == "below 0.8"
    assert by_group["race=C"]["verdict"] == "excluded"
    assert by_group["race=C"]["impact_ratio"] is None  # undefined: never 0 or inf
    assert {row["kind"] for row in payload["categories"]} == {"sex", "race", "sex × race"}


def test_fair_decisions_pass(capsys, applicants):
    code, out, _ = run(capsys, "bias-audit", applicants, "--decision", "fair", *COMMON)
    assert code == EXIT_PASS
    assert "no category certified below 0.8" in out


def test_scoring_mode_and_report(capsys, applicants, tmp_path):
    report = tmp_path / "audit.md"
    code, out, _ = run(capsys, "bias-audit", applicants, "--score", "score", *COMMON,
                       "--report", report)
    assert code in (EXIT_PASS, EXIT_UNFAIR)
    assert "scoring rate" in out and "above median" in out
    text = report.read_text()
    assert "Categories of sex × race" in text and "Guarantee" in text


def test_string_decisions_need_the_positive_label(capsys, applicants):
    code, _, err = run(capsys, "bias-audit", applicants, "--decision", "label", *COMMON)
    assert code == EXIT_ERROR and "--pos-label" in err and "Traceback" not in err
    code, out, _ = run(capsys, "bias-audit", applicants, "--decision", "label",
                       "--pos-label", "yes", *COMMON)
    assert code in (EXIT_PASS, EXIT_UNFAIR)


def test_bad_inputs_are_one_line_errors(capsys, applicants):
    code, _, err = run(capsys, "bias-audit", applicants, "--decision", "nope", *COMMON)
    assert code == EXIT_ERROR and "--decision" in err
    code, _, err = run(capsys, "bias-audit", applicants, "--score", "sex", *COMMON)
    assert code == EXIT_ERROR and "--score" in err
    with pytest.raises(SystemExit):
        main(["bias-audit", str(applicants), "--protected", "sex"])  # no mode
