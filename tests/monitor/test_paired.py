"""Paired betting tests of the monitor (Chugg et al. 2023 with counts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from skfair_audit.monitor import FairnessMonitor
from skfair_audit.monitor._betting import (
    BET_CAP,
    expected_pairs,
    ons_update,
    paired_step,
)


@pytest.mark.parametrize("d, side, signed, gap", [
    (0.0, 1.0, True, 0.0),      # two-sided test of equal rates
    (0.05, 1.0, False, 0.05),   # one-sided, on the boundary of its null
    (-0.05, -1.0, False, -0.05),
])
def test_paired_test_is_valid_under_the_null(d, side, signed, gap):
    """P(the capital ever reaches 1/alpha) <= alpha (+ 3 MC se), groups of unequal sizes."""
    rng = np.random.default_rng(0)
    reps, looks, alpha = 3000, 300, 0.1
    log_w = np.zeros(reps)
    lam = np.zeros(reps)
    a = np.ones(reps)
    crossed = np.zeros(reps, bool)
    for _ in range(looks):
        n_g = rng.binomial(60, 0.3, reps)
        n_p = 60 - n_g
        k_g = rng.binomial(n_g, 0.4 + gap)
        k_p = rng.binomial(n_p, 0.4)
        _, up, down, same = expected_pairs(n_g, k_g, n_p, k_p)
        inc, grad, grad2 = paired_step(up, down, same, lam, d, side)
        log_w += inc
        lam, a = ons_update(lam, a, grad, grad2, BET_CAP / (1 + side * d), signed=signed)
        crossed |= log_w >= np.log(1 / alpha)
    assert crossed.mean() <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)


def _two_groups(rng, n, rate_a, rate_b):
    g = rng.choice(["A", "B"], n)
    pred = (rng.random(n) < np.where(g == "A", rate_a, rate_b)).astype(int)
    return pd.DataFrame({"g": g, "y": pred, "y_pred": pred})


def test_monitor_paired_test_equals_the_count_arithmetic_and_detects():
    rng = np.random.default_rng(1)
    mon = FairnessMonitor(["g"], levels={"g": ["A", "B"]}, target="g=B",
                          alternative="two-sided", new_level_share=0.0)
    log_w, lam, a = 0.0, np.zeros(1), np.ones(1)
    for _ in range(30):
        batch = _two_groups(rng, 100, 0.45, 0.3)
        mon.partial_fit(batch)
        ga, gb = batch[batch.g == "A"], batch[batch.g == "B"]
        _, up, down, same = expected_pairs([len(ga)], [ga.y_pred.sum()], [len(gb)],
                                           [gb.y_pred.sum()])
        inc, grad, grad2 = paired_step(up, down, same, lam, 0.0, 1.0)
        log_w += inc[0]
        lam, a = ons_update(lam, a, grad, grad2, BET_CAP, signed=True)
    j = mon.names_.index("g=A")
    assert mon._t_log[j, 0] == pytest.approx(log_w, rel=1e-12)
    res = mon.result()
    assert res.names == ("g=A",) and res.flagged[0] and res.paired_tests == 1
    assert "paired betting tests" in res.guarantee()
    # the share of g=A is split between its CS and its test; g=B's CS keeps its share
    np.testing.assert_allclose(mon._alphas(), [0.05 / 4, 0.05 / 2])


def test_which_groups_are_paired():
    rng = np.random.default_rng(2)
    levels = {"race": ["a", "b"], "sex": ["F", "M"]}
    frame = pd.DataFrame({"race": rng.choice(["a", "b"], 400), "sex": rng.choice(["F", "M"], 400),
                          "y": rng.integers(0, 2, 400), "y_pred": rng.integers(0, 2, 400)})
    ref = FairnessMonitor(["race", "sex"], levels=levels, target="race=a").partial_fit(frame)
    paired = {n for n, p in zip(ref.names_, ref._partners(), strict=True) if p >= 0}
    assert paired == {"race=b", "race=b & sex=F", "race=b & sex=M"}  # disjoint from race=a
    overall = FairnessMonitor(["race", "sex"], levels=levels, epsilon0=0.0).partial_fit(frame)
    assert (overall._partners()[1:] == -2).all()  # each group against the rest
    assert not FairnessMonitor(["race", "sex"], levels=levels, epsilon0=0.05).partial_fit(
        frame)._paired_on()
    off = FairnessMonitor(["race", "sex"], levels=levels, target="race=a", paired=False)
    assert not off.partial_fit(frame)._paired_on()
