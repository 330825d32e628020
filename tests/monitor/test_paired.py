"""Paired betting tests of the monitor (Chugg et al. 2023 with counts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from skfair_audit.monitor import FairnessMonitor
from skfair_audit.monitor._betting import (
    BET_CAP,
    MIX_POINTS,
    expected_pairs,
    mixture_log_capital,
    mixture_step,
    ons_update,
    paired_step,
)


@pytest.mark.parametrize("bet", ["ons", "mixture"])
@pytest.mark.parametrize("d, side, signed, gap", [
    (0.0, 1.0, True, 0.0),      # two-sided test of equal rates
    (0.05, 1.0, False, 0.05),   # one-sided, on the boundary of its null
    (-0.05, -1.0, False, -0.05),
])
def test_paired_test_is_valid_under_the_null(d, side, signed, gap, bet):
    """P(the capital ever reaches 1/alpha) <= alpha (+ 3 MC se), groups of unequal sizes."""
    rng = np.random.default_rng(0)
    reps, looks, alpha = 3000, 300, 0.1
    log_w = np.zeros(reps)
    lam = np.zeros(reps)
    a = np.ones(reps)
    mix = np.zeros((2, reps, MIX_POINTS))
    crossed = np.zeros(reps, bool)
    for _ in range(looks):
        n_g = rng.binomial(60, 0.3, reps)
        n_p = 60 - n_g
        k_g = rng.binomial(n_g, 0.4 + gap)
        k_p = rng.binomial(n_p, 0.4)
        _, up, down, same = expected_pairs(n_g, k_g, n_p, k_p)
        if bet == "mixture":  # the two-sided test hedges both sides
            for i, s in enumerate((side, -side) if signed else (side,)):
                mix[i] += mixture_step(up, down, same, BET_CAP / (1 + s * d), d, s)
            log_w = mixture_log_capital(mix[:2 if signed else 1].transpose(1, 0, 2)
                                        .reshape(reps, -1))
        else:
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
                          alternative="two-sided", new_level_share=0.0, paired_bet="ons")
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
    # one declared comparison: the CSs keep their shares, the test flags with both
    np.testing.assert_allclose(mon._alphas(), [0.05 / 2, 0.05 / 2])
    assert res.comparison_alpha == pytest.approx(0.05)
    assert "paired betting test against the rate of g=B at level 0.05" in res.guarantee()


def test_with_room_for_new_groups_the_share_is_split():
    rng = np.random.default_rng(1)
    mon = FairnessMonitor(["g"], levels={"g": ["A", "B"]}, target="g=B",
                          alternative="two-sided", new_level_share=0.1)
    res = mon.partial_fit(_two_groups(rng, 100, 0.45, 0.3)).result()
    # g=A's share 0.45 alpha is split between its CS and its test; g=B's CS keeps its share
    np.testing.assert_allclose(mon._alphas(), [0.05 * 0.45 / 2, 0.05 * 0.45])
    assert res.comparison_alpha == 0.0 and "paired betting tests" in res.guarantee()


def _chugg_ons(x, y, alpha):
    """Chugg et al. (2023), Algorithm 1 with the ONS bet, written from the paper: pair
    ``g_t = x_t - y_t``, wealth ``prod (1 - lambda_t g_t)``; returns the log-wealth path
    and the first pair (1-based) at which the wealth reaches ``1 / alpha``."""
    lam, a, log_w, path = 0.0, 1.0, 0.0, []
    for g in np.asarray(x, float) - np.asarray(y, float):
        log_w += np.log(1.0 - lam * g)
        path.append(log_w)
        z = g / (1.0 - lam * g)
        a += z * z
        lam = min(max(lam - 2.0 / (2.0 - np.log(3.0)) * z / a, -0.5), 0.5)
    path = np.array(path)
    hit = np.flatnonzero(path >= np.log(1.0 / alpha))
    return path, int(hit[0]) + 1 if hit.size else -1


def test_one_pair_per_look_is_chugg_et_al_test_step_for_step():
    """Fed one row of each group per look, the single comparison is the ONS test of Chugg et
    al. at the whole alpha: same wealth at every look, same first alarm."""
    rng = np.random.default_rng(3)
    x = (rng.random(150) < 0.6).astype(int)
    y = (rng.random(150) < 0.3).astype(int)
    path, first = _chugg_ons(x, y, 0.05)
    assert 0 < first < 150
    mon = FairnessMonitor(["g"], levels={"g": ["A", "B"]}, target="g=B",
                          alternative="two-sided", new_level_share=0.0, paired_bet="ons")
    mon._init_state()  # declared levels: the groups exist before the first batch
    j = mon.names_.index("g=A")
    flagged_at = -1
    for t in range(150):
        batch = pd.DataFrame({"g": ["A", "B"], "y": [x[t], y[t]], "y_pred": [x[t], y[t]]})
        res = mon.partial_fit(batch).result()
        assert mon._t_log[j, 0] == pytest.approx(path[t], abs=1e-12)
        if flagged_at < 0 and res.flagged[0]:
            flagged_at = t + 1
    assert flagged_at == first


def test_mixture_bet_is_the_average_of_constant_bettors():
    """The default bet, from batches of counts, equals the capital of 2 x 101 constant
    bettors written from the rows: one row of each group per look (exact pairs), then
    batches of 60 rows (the expectation over a random matching, by enumeration)."""
    rng = np.random.default_rng(5)
    x = (rng.random(80) < 0.5).astype(int)
    y = (rng.random(80) < 0.3).astype(int)
    mon = FairnessMonitor(["g"], levels={"g": ["A", "B"]}, target="g=B",
                          alternative="two-sided", new_level_share=0.0, paired_bet="mixture")
    mon._init_state()
    j = mon.names_.index("g=A")
    lam = np.linspace(0, 0.5, 101)
    log_k = np.zeros((2, lam.size))  # bettors on either side, log-capital
    for t in range(80):
        batch = pd.DataFrame({"g": ["A", "B"], "y": [x[t], y[t]], "y_pred": [x[t], y[t]]})
        mon.partial_fit(batch)
        log_k += np.log(1 + np.outer([1, -1], lam) * (x[t] - y[t]))
        want = np.log(np.exp(log_k).mean())
        assert mon._test_log_e(np.array([j]))[0] == pytest.approx(want, abs=1e-9)
    for _ in range(5):  # batches with unequal group sizes: E over a random matching
        batch = _two_groups(rng, 60, 0.5, 0.3)
        mon.partial_fit(batch)
        a = batch.y_pred[batch.g == "A"].to_numpy()
        b = batch.y_pred[batch.g == "B"].to_numpy()
        pairs = min(a.size, b.size)
        # E_pi of the sum over pairs of log(1 + s lam (a_i - b_pi(i))): each pair's expectation
        # is the average over all (row of A, row of B), times the number of pairs
        g = (a[:, None] - b[None, :]).ravel()
        log_k += pairs * np.log1p(np.multiply.outer(np.outer([1, -1], lam), g)).mean(axis=-1)
        want = np.log(np.exp(log_k).mean())
        assert mon._test_log_e(np.array([j]))[0] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("alternative, epsilon0", [("two-sided", 0.0), ("greater", 0.02),
                                                    ("two-sided", 0.02)])
def test_default_bet_averages_the_mixture_and_ons_capitals(alternative, epsilon0):
    rng = np.random.default_rng(6)
    kw = dict(levels={"g": ["A", "B"]}, target="g=B", alternative=alternative,
              epsilon0=epsilon0)
    mons = {bet: FairnessMonitor(["g"], paired_bet=bet, **kw)
            for bet in ("mixture+ons", "mixture", "ons")}
    for _ in range(20):
        batch = _two_groups(rng, 100, 0.4, 0.3)
        for mon in mons.values():
            mon.partial_fit(batch)
    j = np.array([mons["ons"].names_.index("g=A")])
    e = {bet: np.exp(mon._test_log_e(j)[0]) for bet, mon in mons.items()}
    assert e["mixture+ons"] == pytest.approx((e["mixture"] + e["ons"]) / 2, rel=1e-12)
    assert e["mixture"] != pytest.approx(e["ons"], rel=1e-3)


def test_single_comparison_flags_at_the_whole_level_and_by_its_test_alone():
    """The alarm comes at the first look where the test's capital reaches 1/alpha (not
    4/alpha, the split of the general case), and not from the CSs."""
    rng = np.random.default_rng(4)
    mon = FairnessMonitor(["g"], levels={"g": ["A", "B"]}, target="g=B",
                          alternative="two-sided", new_level_share=0.0)
    for _ in range(200):
        res = mon.partial_fit(_two_groups(rng, 40, 0.45, 0.3)).result()
        log_e = mon._t_max[mon.names_.index("g=A")]
        assert res.flagged[0] == (log_e >= np.log(1 / 0.05))
        if res.flagged[0]:
            break
    assert res.flagged[0] and log_e < np.log(4 / 0.05)
    assert res.disparity_low[0] <= 0.0  # the CS alone would not flag yet


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
