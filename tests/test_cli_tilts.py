"""``skfair-audit group --tilts``: monotone and polynomial tilt audits from the command line."""

import importlib.util
import json

import numpy as np
import pytest

from skfair_audit.cli._main import main

pd = pytest.importorskip("pandas")


@pytest.fixture
def trail(tmp_path):
    rng = np.random.default_rng(0)
    n = 1500
    age = rng.uniform(18, 70, n)
    y = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.85 - 0.004 * (age - 18), y, 1 - y)
    path = tmp_path / "trail.csv"
    pd.DataFrame({"y": y, "p": p, "age": age, "income": rng.normal(size=n),
                  "city": rng.choice(["a", "b"], n)}).to_csv(path, index=False)
    return str(path)


def _run(capsys, *args):
    code = main(["group", *args])
    return code, capsys.readouterr()


def test_monotone_tilts_json_and_gate(trail, capsys):
    base = [trail, "--label", "y", "--prediction", "p", "--metric", "error_rate",
            "--n-resamples", "80", "--random-state", "0", "--quiet"]
    code, out = _run(capsys, *base, "--protected", "age", "--tilts", "monotone", "--bins",
                     "6", "--json")
    payload = json.loads(out.out)
    assert code == 0 and payload["procedure"] == "bounds"
    assert payload["groups"][0]["group"].startswith("age >= ")
    assert len(payload["groups"]) == 2 * 6 - 1
    # a gate on the extreme tilts: a threshold nobody meets fails
    code, out = _run(capsys, *base, "--protected", "age", "--tilts", "monotone", "--bins",
                     "6", "--epsilon0", "0.0001")
    assert code == 1 and "extreme tilts" in out.out
    code, out = _run(capsys, *base, "--protected", "age", "income", "--tilts", "polynomial",
                     "--degree", "1")
    assert code == 0 and "principal tilt 1" in out.out


def test_tilts_refuse_other_procedures_names_and_text(trail, capsys):
    base = [trail, "--label", "y", "--prediction", "p", "--metric", "error_rate", "--quiet"]
    code, out = _run(capsys, *base, "--protected", "age", "--tilts", "monotone",
                     "--procedure", "flag")
    assert code == 2 and "not available for tilts" in out.err
    code, out = _run(capsys, *base, "--protected", "age", "--tilts", "monotone",
                     "--target", "group:age=1")
    assert code == 2 and "no named groups" in out.err
    code, out = _run(capsys, *base, "--protected", "city", "--tilts", "monotone")
    assert code == 2 and "must hold numbers" in out.err
    code, out = _run(capsys, *base, "--protected", "age", "income", "--tilts", "monotone")
    assert code == 2 and "one --protected column" in out.err


def test_constant_tilt_disparity_is_zero_not_rounding_noise(trail, capsys, tmp_path):
    # The constant tilt's value is the target itself, computed in another order: its
    # disparity is 0 (was -6e-18 / 1.4e-17), in the table, the JSON and the report.
    base = [trail, "--label", "y", "--prediction", "p", "--metric", "error_rate",
            "--n-resamples", "50", "--quiet"]
    for tilt in (["--protected", "age", "--tilts", "monotone", "--bins", "8"],
                 ["--protected", "age", "income", "--tilts", "polynomial", "--degree", "1"]):
        code, out = _run(capsys, *base, *tilt, "--json")
        constant = json.loads(out.out)["groups"][0]
        assert constant["size"] == 1500 or constant["group"].startswith("constant")
        assert constant["disparity"] == 0.0 and str(constant["disparity"]) == "0.0"
        code, out = _run(capsys, *base, *tilt)
        assert "e-1" not in out.out and "-0 " not in out.out


@pytest.mark.skipif(not importlib.util.find_spec("matplotlib"), reason="needs matplotlib")
def test_tilt_report_captions_describe_the_tilt_plots(trail, capsys, tmp_path):
    base = [trail, "--label", "y", "--prediction", "p", "--metric", "error_rate",
            "--n-resamples", "50", "--quiet"]
    for tilt, words in ((["--protected", "age", "--tilts", "monotone", "--bins", "6"],
                         "half-line of age"),
                        (["--protected", "age", "--tilts", "polynomial", "--degree", "1"],
                         "worst principal tilt")):
        report = tmp_path / "r.json"
        _run(capsys, *base, *tilt, "--report", str(report))
        (section,) = [s for s in json.loads(report.read_text())["sections"] if s["figures"]]
        caption = section["figures"][0]["caption"]
        assert words in caption and "per group" not in caption, caption
