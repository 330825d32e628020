"""Data, instances and acceptance lines shared by the FaiTH benchmark scripts."""

from __future__ import annotations

import itertools
import math

import numpy as np

from skfair_audit.faith._solver import prepare_transport

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

LEVEL = 0.95

ALPHA = 1.0 - LEVEL


def compas_like_grid():
    """Loss, cost, forbidden mask, population pmf and cell table of the 144-cell grid."""
    levels = (2, 2, 3, 3, 2)  # race, sex, age, priors, charge
    weights = (0.0, 0.0, 1.0, 0.6, 0.3)  # protected attributes move for free
    cells = np.array(list(itertools.product(*(range(k) for k in levels), range(2))))
    features, label = cells[:, :-1], cells[:, -1]
    cost = np.zeros((len(cells), len(cells)))
    for k, w in enumerate(weights):
        cost += w * (features[:, None, k] != features[None, :, k])
    forbidden = label[:, None] != label[None, :]
    score = (
        -0.4
        + 0.9 * features[:, 0]
        - 0.3 * features[:, 1]
        - 0.5 * features[:, 2]
        + 0.8 * features[:, 3]
        + 0.4 * features[:, 4]
    )
    prediction = (score > 0.3).astype(int)
    loss = (prediction != label).astype(float)
    rng = np.random.default_rng(7)
    x = features[::2]
    feature_pmf = rng.dirichlet(np.full(len(x), 5.0))
    p_one = 1.0 / (1.0 + np.exp(-(-0.5 + 0.7 * x[:, 3] - 0.4 * x[:, 2] + 0.3 * x[:, 4])))
    f_star = np.empty(len(cells))
    f_star[0::2] = feature_pmf * (1.0 - p_one)
    f_star[1::2] = feature_pmf * p_one
    return loss, cost, forbidden, f_star, cells


def instances():
    """The benchmark instances, as dicts (name, problem, loss, cost, forbidden, f_star,
    epsilon, truth, dual interval)."""
    loss, cost, forbidden, f_star, cells = compas_like_grid()
    problem = prepare_transport(loss, cost, forbidden)
    # A second population on the same grid: the cells that must pay to move (rows with hull
    # segments) are 4 times as likely, which decorrelates the two Gaussians of the kink law.
    tilted = f_star.copy()
    tilted[np.unique(problem.segment_row)] *= 4.0
    tilted /= tilted.sum()
    out = []
    for name, pmf, where in (
        ("gaussian", f_star, "mid"),
        ("kink", f_star, "last"),
        ("kink-strong", tilted, "last"),
    ):
        breaks, _ = problem.curve(pmf)
        if breaks.size != 3:
            raise RuntimeError(f"expected two breakpoints of the curve, got {breaks[1:]}")
        # "last": exactly where the budget stops binding, from the solver's own breakpoints.
        epsilon = 0.5 * (breaks[1] + breaks[2]) if where == "mid" else float(breaks[2])
        lam_low, lam_high = problem.dual_multipliers(pmf, epsilon)
        if (lam_low == lam_high) != (where == "mid"):
            raise RuntimeError(f"unexpected dual interval {lam_low, lam_high} for {name}")
        out.append(
            {
                "name": name,
                "problem": problem,
                "loss": loss,
                "cost": cost,
                "forbidden": forbidden,
                "f_star": pmf,
                "cells": cells,
                "epsilon": float(epsilon),
                "truth": float(problem.value(pmf, epsilon)),
                "dual_interval": (lam_low, lam_high),
            }
        )
    return out


def rate(hits):
    """Share of True and its Monte Carlo standard error."""
    p = float(np.mean(hits))
    return p, math.sqrt(p * (1.0 - p) / len(hits))


def thresholds(reps):
    """Acceptance thresholds: nominal ± 2 Monte Carlo standard errors at the nominal rate."""
    mc_se = math.sqrt(ALPHA * (1.0 - ALPHA) / reps)
    return ALPHA + 2.0 * mc_se, LEVEL - 2.0 * mc_se
