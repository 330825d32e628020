"""``skfair-audit group --tilts``: monotone and polynomial tilt audits from the command line."""

import json

import numpy as np
import pytest

from skfair_audit._cli import main

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
