"""Data shared by the FaiTH benchmark scripts."""

from __future__ import annotations

ADULT_CONTINUOUS = ["age", "education-num", "hours-per-week", "capital-gain", "capital-loss"]


def adult_numeric():
    """UCI Adult's complete rows as numbers: five continuous columns, sex and race codes.

    Returns ``(X, y, n_train)``: the training file's ``n_train`` rows come first, then the
    test file's. Needs the data home (``SKFAIR_AUDIT_DATA``); nothing is downloaded.
    """
    from skfair_audit.datasets import fetch_adult

    full = fetch_adult(dropna=True, download_if_missing=False)
    X = full.data[ADULT_CONTINUOUS].astype(float)
    X["sex"] = (full.data["sex"] == "Male").astype(float)
    X["race"] = full.sensitive["race"].cat.codes.astype(float)
    y = full.target.to_numpy()
    n_train = len(fetch_adult(subset="train", dropna=True, download_if_missing=False).target)
    return X, y, n_train
