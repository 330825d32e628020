"""``skfair-audit faith`` on continuous columns: the reference and empirical sample spaces,
--memory-limit and the gate of a vacuous audit."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from skfair_audit.cli._main import EXIT_ERROR, main


def _trail(n, seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    income = np.round(rng.normal(size=n) + 0.4 * group, 2)
    age = rng.integers(18, 70, n).astype(float)
    logit = income - 0.02 * (age - 40) + 0.8 * group
    label = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return pd.DataFrame({"group": group, "income": income, "age": age, "label": label})


@pytest.fixture(scope="module")
def continuous_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faith_continuous")
    train, audit = _trail(3000, 0), _trail(2000, 1)
    model = LogisticRegression().fit(train[["group", "income", "age"]], train.label)
    audit.to_csv(folder / "audit.csv", index=False)
    train.to_csv(folder / "train.csv", index=False)
    with open(folder / "model.pkl", "wb") as f:
        pickle.dump(model, f)
    return folder


def _run(capsys, folder, *extra):
    args = [
        "faith", "--model", str(folder / "model.pkl"), "--unsafe-pickle",
        "--data", str(folder / "audit.csv"), "--metric-data", str(folder / "train.csv"),
        "--label", "label", "--features", "group", "income", "age", "--protected", "group",
        "--delta", "0.05", "--n-resamples", "200", "--quiet", *extra,
    ]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_faith_command_on_continuous_columns(capsys, continuous_files):
    code, out, err = _run(capsys, continuous_files, "--space", "empirical",
                          "--memory-limit", "1GiB", "--json")
    assert code in (0, 1), err
    payload = json.loads(out)
    audit = pd.read_csv(continuous_files / "audit.csv")
    distinct = audit[["income", "age"]].drop_duplicates()
    # Every distinct row of the other features in both groups, times the two labels.
    assert payload["n_cells"] == 2 * 2 * len(distinct)
    assert payload["n"] == len(audit)
    # auto picks the reference space on these numeric columns (the --metric-data rows); at
    # the default ε = 0 only the free moves to one's own twin count, so the value is the same.
    code_auto, out_auto, _ = _run(capsys, continuous_files, "--space", "auto", "--json")
    assert code_auto == code
    assert json.loads(out_auto)["statistic"] == payload["statistic"]


def test_faith_command_memory_limit_and_grid_errors(capsys, continuous_files):
    code, _, err = _run(capsys, continuous_files, "--space", "empirical",
                        "--memory-limit", "200kB")
    assert code == EXIT_ERROR
    assert "KiB" in err and "--memory-limit" in err and "memory_limit" not in err
    assert "Traceback" not in err
    code, _, err = _run(capsys, continuous_files, "--memory-limit", "lots")
    assert code == EXIT_ERROR and "not a byte count" in err
    # Budgets no audit fits in are refused before the model or the data are read.
    for tiny in ("1KB", "0"):
        code, _, err = _run(capsys, continuous_files, "--memory-limit", tiny)
        assert code == EXIT_ERROR and "--memory-limit" in err
        assert "loading" not in err and "no audit fits" in err or "not a byte count" in err
    # A grid of continuous columns: the message points to the reference space.
    code, _, err = _run(capsys, continuous_files, "--space", "grid", "--memory-limit", "8MB")
    assert code == EXIT_ERROR and "--space reference" in err and "space='" not in err


def test_faith_command_refuses_a_vacuous_audit(capsys, continuous_files, tmp_path):
    """One level of every protected attribute: nobody can be compared across groups."""
    audit = pd.read_csv(continuous_files / "audit.csv")
    audit[audit.group == 0].to_csv(tmp_path / "one_group.csv", index=False)
    for name in ("model.pkl", "train.csv"):
        (tmp_path / name).write_bytes((continuous_files / name).read_bytes())
    code, out, err = _run(capsys, tmp_path, "--data", str(tmp_path / "one_group.csv"))
    assert code == EXIT_ERROR and out == ""
    assert "single level" in err and "group = 0" in err
    assert len([line for line in err.splitlines() if "single level" in line]) == 1


def test_faith_command_splits_the_audit_file_without_a_reference(capsys, continuous_files):
    """No --reference and no --metric-data: a seeded half of the file is the reference set."""
    args = [
        "faith", "--model", str(continuous_files / "model.pkl"), "--unsafe-pickle",
        "--data", str(continuous_files / "audit.csv"), "--label", "label",
        "--features", "group", "income", "age", "--protected", "group", "--delta", "0.05",
        "--n-resamples", "100", "--epsilon", "0.05", "--json",
    ]
    code = main(args)
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    payload = json.loads(captured.out)
    assert payload["n"] == 1000  # the other half of the 2,000 rows is the reference set
    assert "reference individuals" in captured.err or "seeded half" in captured.err
    # --reference names the reference rows explicitly.
    code = main([*args, "--reference", str(continuous_files / "train.csv")])
    assert code in (0, 1)
    assert json.loads(capsys.readouterr().out)["n"] == 2000
