"""The ``monitor`` subcommand: exit codes, atomic state, refusals, report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from skfair_audit.cli._main import main

OPTIONS = ["--label", "y", "--prediction", "yhat", "--protected", "race", "sex",
           "--epsilon0", "0.05", "--quiet"]


@pytest.fixture
def days(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for d in range(4):
        n = 3000
        race = rng.choice(["a", "b", "c"], n)
        frame = pd.DataFrame({"race": race, "sex": rng.choice(["F", "M"], n),
                              "y": rng.integers(0, 2, n),
                              "yhat": (rng.random(n) < 0.3 + 0.2 * (race == "c")).astype(int)})
        paths.append(tmp_path / f"day{d}.csv")
        frame.to_csv(paths[-1], index=False)
    return paths


def test_exit_codes_and_state_kept_on_errors(tmp_path, days, capsys):
    state = tmp_path / "state.npz"
    assert main(["monitor", str(state), str(days[0]), *OPTIONS]) == 0
    capsys.readouterr()
    assert main(["monitor", str(state), *map(str, days[1:]), *OPTIONS, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["looks"] == 4 and "race=c" in out["flagged"] and out["exit_code"] == 1
    assert "race=c" in out["newly_flagged"]
    saved = state.read_bytes()
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"race": ["a"], "sex": ["F"], "y": [1]}).to_csv(bad, index=False)
    assert main(["monitor", str(state), str(days[0]), str(bad), *OPTIONS]) == 2
    assert "no column" in capsys.readouterr().err
    nan = tmp_path / "nan.csv"
    pd.DataFrame({"race": ["a", None], "sex": ["F", "M"], "y": [1, 0],
                  "yhat": [1, 0]}).to_csv(nan, index=False)
    assert main(["monitor", str(state), str(nan), *OPTIONS]) == 2
    label = tmp_path / "label.csv"
    pd.DataFrame({"race": ["a"], "sex": ["F"], "y": [1], "yhat": [7]}).to_csv(label,
                                                                             index=False)
    assert main(["monitor", str(state), str(label), *OPTIONS]) == 2
    assert "label" in capsys.readouterr().err
    # another collection / another metric: refused
    assert main(["monitor", str(state), str(days[0]), *OPTIONS, "--depth", "1"]) == 2
    assert "another monitor" in capsys.readouterr().err
    assert state.read_bytes() == saved
    # a corrupted state file
    broken = tmp_path / "broken.npz"
    broken.write_bytes(saved[: len(saved) // 2])
    assert main(["monitor", str(broken), str(days[0]), *OPTIONS]) == 2
    assert "corrupted or truncated" in capsys.readouterr().err


def test_model_file_ties_the_state(tmp_path, days, capsys):
    model_a = tmp_path / "a.skops"
    model_a.write_bytes(b"model a")
    model_b = tmp_path / "b.skops"
    model_b.write_bytes(b"model b")
    state = tmp_path / "s.npz"
    assert main(["monitor", str(state), str(days[0]), *OPTIONS, "--model", str(model_a)]) == 0
    assert main(["monitor", str(state), str(days[1]), *OPTIONS, "--model", str(model_b)]) == 2
    assert "model_id" in capsys.readouterr().err


def test_report_has_a_monitoring_section(tmp_path, days):
    pytest.importorskip("matplotlib")
    state = tmp_path / "s.npz"
    report = tmp_path / "report.html"
    code = main(["monitor", str(state), *map(str, days), *OPTIONS, "--report", str(report)])
    assert code == 1
    html = report.read_text()
    assert "Monitoring" in html and "data:image/png;base64" in html
    assert "at every look" in html
