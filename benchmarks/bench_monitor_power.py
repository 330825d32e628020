"""Power of the fairness monitor on two groups, against Chugg et al.'s ONS test and the
fixed-horizon test; detection delay under a distribution shift.

Usage::

    python benchmarks/bench_monitor_power.py [--reps 200] [--null-reps 1000]
        [--max-rows 1000000] [--seed 20261202]

Setting (Chugg, Cortes-Gomez, Wilder & Ramdas 2023, "Auditing fairness by betting", their
synthetic two-group setting): one observation of each group arrives at every step; a 0/1
outcome (e.g. the model's positive decision) with rate 0.3 in group B and 0.3 + delta in
group A, delta in {0.02, 0.05, 0.10}; level alpha = 0.05. The monitor targets the reference
group B, alternative two-sided, epsilon0 = 0, levels declared. Its arithmetic is run with
the library's own functions, vectorised over replications
(``tests/monitor/test_paired.py`` checks it against :class:`FairnessMonitor`).

* **Chugg et al. ONS** (reimplemented from the paper, Algorithm 1 with the online Newton step
  bet): pair the t-th row of A with the t-th of B, ``g_t = X_t - Y_t``, wealth
  ``prod (1 - lambda_t g_t)``, ``lambda`` by ONS clipped to [-1/2, 1/2]; alarm when the wealth
  reaches ``1/alpha``. Rows until the alarm are ``2 t``.
* **Monitor, one row of each group per look** (their setting, as they define it: batches of
  2 rows), levels declared and ``new_level_share=0``: one declared comparison, flagged by its
  paired test at the whole alpha, with the default bet ``"mixture+ons"`` (half the capital
  on 101 constant bettors, half on ONS), with the mixture alone, and with
  ``paired_bet="ons"`` (all run on the *same* draws as Chugg et al.'s test; the results
  file records whether the ONS alarms agree in every replication).
* **Monitor, batches of 100 rows** (50 of each group), the same declared comparison, with the
  same three bets (the mixture is exact from the batch's counts; the ONS bet is held fixed
  within a batch: expected log-capital over a random matching of the batch's rows, ONS step
  once per batch); alarms only at the end of a batch.
* **Monitor, batches of 100 rows, defaults** (default bet, ``new_level_share=0.1``): each
  group gets ``0.45 alpha``; group A's share is split between its betting CS and its paired
  test, B's CS keeps its share; the alarm is the first look at which the disparity CS
  ``[l_A - u_B, u_A - l_B]`` excludes 0 or the test crosses ``2 / (0.45 alpha)``. Grid of
  500 points, as the default.
* **Fixed horizon at the oracle's horizon**: the smallest total sample size at which the
  fixed-sample two-sided bound for ``mu_A - mu_B`` at level alpha excludes 0 with 80% power
  (normal approximation, ``n`` per group ``(z_{1-alpha/2} + z_{0.8})^2 (s_A^2 + s_B^2) /
  delta^2``), checked by simulating
  :meth:`skfair_audit.group.AuditSummary.certify_bounds` (B = 500) at that size.
* **No disparity**: the share of replications with an alarm up to the cap (false alarms),
  ``--null-reps`` replications (``--reps`` for the defaults, which keep CSs).
* **Shift**: group A's rate moves from 0.3 to 0.3 + delta only after half of
  ``--shift-rows`` rows: alarms before the change (false alarms: there is no disparity yet)
  and the delay after the change (median rows from the change to the alarm), for the monitor
  in batches of 100 (one declared comparison, each bet) and Chugg et al.'s test.

Rows until the alarm are capped at ``--max-rows``; medians are reported with the share of
replications that alarmed. Writes ``benchmarks/results/monitor_power.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402
from scipy import stats  # noqa: E402

from skfair_audit.group import AuditSummary, DegenerateBootstrapWarning  # noqa: E402
from skfair_audit.monitor._betting import (  # noqa: E402
    BET_CAP,
    MIX_POINTS,
    expected_pairs,
    grid_interval,
    grid_points,
    hedged_log_capital,
    log_capital_step,
    mixture_log_capital,
    mixture_step,
    ons_update,
    paired_step,
    plugin_bet,
)

BASE = 0.3
ALPHA = 0.05
HALF = 50  # rows of each group per batch
DELTAS = (0.02, 0.05, 0.10)
GRID = 500
ONS_CONST = 2 / (2 - np.log(3))


SHARE = 0.45  # each group's share of alpha with the default new_level_share = 0.1


def _mixture_log_e(state, up, down, same):
    """Fold a batch into the two one-sided mixtures ``state`` (2, reps, J) of the two-sided
    test of equal rates and return its log e-value (the monitor's default bet)."""
    for col, side in enumerate((1.0, -1.0)):
        state[col] += mixture_step(up, down, same, BET_CAP, 0.0, side)
    return hedged_log_capital(mixture_log_capital(state[0]), mixture_log_capital(state[1]))


def monitor_batch_alarm_rows(rng, reps, rate_a, rate_b, max_looks, with_cs=True):
    """Rows until the monitor flags group A against the reference B, in batches of 100 rows
    (50 of each group); ``inf`` if never.

    Returns a dict: ``default``, ``mixture`` and ``ons``, the single declared comparison
    (``new_level_share=0``: the paired test flags alone at the whole alpha) with the
    default bet (``"mixture+ons"``), the mixture bet and the ONS bet; with ``with_cs``,
    ``room_for_new_groups``, the defaults (default bet, ``new_level_share=0.1``: A's share
    ``0.45 alpha`` split
    between its CS and its test, B's CS at ``0.45 alpha``; the disparity CS or the test
    flags). ``rate_a`` may be a function of the look (a shift)."""
    m = grid_points(GRID)
    alpha_s = np.concatenate([np.full(reps, SHARE * ALPHA / 2), np.full(reps, SHARE * ALPHA)])
    log_t = np.log(1 / alpha_s)
    t_log = np.zeros(reps)
    t_lam = np.zeros(reps)
    t_a = np.ones(reps)
    mix = np.zeros((2, reps, MIX_POINTS))
    if with_cs:
        log_up = np.zeros((2 * reps, m.size))
        log_down = np.zeros((2 * reps, m.size))
        n = np.zeros(2 * reps)
        k = np.zeros(2 * reps)
        low = np.zeros(2 * reps)
        high = np.ones(2 * reps)
    alarms = {key: np.full(reps, np.inf) for key in
              ("default", "mixture", "ons",
               *(("room_for_new_groups",) if with_cs else ()))}
    for look in range(max_looks):
        pa = rate_a(look) if callable(rate_a) else rate_a
        ones = np.concatenate([rng.binomial(HALF, pa, reps), rng.binomial(HALF, rate_b, reps)])
        b = np.full(2 * reps, HALF)
        _, up, down, same = expected_pairs(b[:reps], ones[:reps], b[reps:], ones[reps:])
        inc, grad, grad2 = paired_step(up, down, same, t_lam, 0.0, 1.0)
        t_log += inc
        t_lam, t_a = ons_update(t_lam, t_a, grad, grad2, BET_CAP, signed=True)
        mix_log = _mixture_log_e(mix, up, down, same)
        rows = (look + 1) * 2 * HALF
        both = hedged_log_capital(mix_log, t_log)
        hits = {"ons": t_log >= np.log(1 / ALPHA), "mixture": mix_log >= np.log(1 / ALPHA),
                "default": both >= np.log(1 / ALPHA)}
        if with_cs:
            lam = plugin_bet(n, k, b, alpha_s)
            d_up, d_down = log_capital_step(ones, b - ones, lam, m)
            log_up += d_up
            log_down += d_down
            n += b
            k += ones
            lo, hi = grid_interval(log_up, log_down, log_t, m)
            low = np.maximum(low, np.nan_to_num(lo, nan=0.0))
            high = np.minimum(high, np.nan_to_num(hi, nan=1.0))
            d_low = low[:reps] - high[reps:]
            d_high = high[:reps] - low[reps:]
            hits["room_for_new_groups"] = ((d_low > 0) | (d_high < 0)
                                           | (both >= np.log(2 / (SHARE * ALPHA))))
        for key, hit in hits.items():
            alarms[key][hit & ~np.isfinite(alarms[key])] = rows
        if all(np.isfinite(v).all() for v in alarms.values()):
            break
    return alarms


def pair_alarm_rows(rng, reps, rate_a, rate_b, max_pairs):
    """Rows until the alarm (``2 x`` pairs; ``inf`` if never) with one row of each group
    per look, on the same draws: Chugg et al.'s ONS test written here from the paper
    (``chugg_ons``), the monitor's single comparison with ``paired_bet="ons"`` (``ons``: the
    library's :func:`expected_pairs`, :func:`paired_step`, :func:`ons_update` on a batch
    of one pair), with the mixture bet (``mixture``; its capital depends on the counts of
    pairs with ``g = +1`` and ``g = -1`` only, so it is evaluated on their running counts,
    only in blocks where an upper bound of the capital reaches the threshold) and with the
    default bet, their average (``default``).
    ``rate_a`` may be a function of the look of 100 rows (a shift)."""
    wealth = np.zeros(reps)  # log wealth
    lam = np.zeros(reps)
    z2 = np.zeros(reps)
    t_log = np.zeros(reps)
    t_lam = np.zeros(reps)
    t_a = np.ones(reps)
    one = np.ones(reps)
    n_up = np.zeros(reps)
    n_down = np.zeros(reps)
    out = {key: np.full(reps, np.inf) for key in ("chugg_ons", "ons", "mixture", "default")}
    threshold = np.log(1 / ALPHA)
    block = 250
    for start in range(0, max_pairs, block):
        size = min(block, max_pairs - start)
        pa = np.array([rate_a(t // HALF) if callable(rate_a) else rate_a
                       for t in range(start, start + size)])
        x = (rng.random((size, reps)) < pa[:, None]).astype(float)
        y = (rng.random((size, reps)) < rate_b).astype(float)
        ons_path = np.empty((size, reps))
        for t in range(size):
            rows = 2 * (start + t + 1)
            g = x[t] - y[t]
            wealth += np.log1p(-lam * g)
            out["chugg_ons"][(wealth >= threshold) & ~np.isfinite(out["chugg_ons"])] = rows
            zt = g / (1 - lam * g)
            z2 += zt**2
            lam = np.clip(lam - ONS_CONST * zt / (1 + z2), -0.5, 0.5)
            _, up, down, same = expected_pairs(one, x[t], one, y[t])
            inc, grad, grad2 = paired_step(up, down, same, t_lam, 0.0, 1.0)
            t_log += inc
            t_lam, t_a = ons_update(t_lam, t_a, grad, grad2, BET_CAP, signed=True)
            out["ons"][(t_log >= threshold) & ~np.isfinite(out["ons"])] = rows
            ons_path[t] = t_log
        g = x - y
        cum_up = n_up + np.cumsum(g > 0, axis=0)
        cum_down = n_down + np.cumsum(g < 0, axis=0)
        # the capital is increasing in n_up for the long bettors and in n_down for the short
        # ones: its value at (last n_up, first n_down) and (first n_up, last n_down) bounds
        # every value in the block
        bound = hedged_log_capital(
            mixture_log_capital(mixture_step(cum_up[-1], n_down, 0.0, BET_CAP, 0.0, 1.0)),
            mixture_log_capital(mixture_step(n_up, cum_down[-1], 0.0, BET_CAP, 0.0, -1.0)))
        bound_both = hedged_log_capital(bound, ons_path.max(axis=0))
        live = np.flatnonzero((bound_both >= threshold) & ~(np.isfinite(out["mixture"])
                                                            & np.isfinite(out["default"])))
        if live.size:
            u, d = cum_up[:, live], cum_down[:, live]
            log_e = hedged_log_capital(
                mixture_log_capital(mixture_step(u, d, 0.0, BET_CAP, 0.0, 1.0)),
                mixture_log_capital(mixture_step(u, d, 0.0, BET_CAP, 0.0, -1.0)))
            for key, path in (("mixture", log_e),
                              ("default", hedged_log_capital(log_e, ons_path[:, live]))):
                crossed = path >= threshold
                first = np.argmax(crossed, axis=0)
                ok = crossed.any(axis=0) & ~np.isfinite(out[key][live])
                out[key][live[ok]] = 2 * (start + first[ok] + 1)
        n_up, n_down = cum_up[-1], cum_down[-1]
        if all(np.isfinite(v).all() for v in out.values()):
            break
    return out


def oracle_rows(delta):
    """Total rows (both groups) at which the fixed-sample test has 80% power (normal
    approximation)."""
    z = stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(0.8)
    var = BASE * (1 - BASE) + (BASE + delta) * (1 - BASE - delta)
    return 2 * int(np.ceil(z**2 * var / delta**2))


def fixed_horizon_power(rng, rows, delta, reps, n_resamples):
    """Share of audits at ``rows`` rows whose simultaneous bound for A - B excludes 0."""
    per = rows // 2
    hits = 0
    for _ in range(reps):
        ya = (rng.random(per) < BASE + delta).astype(int)
        yb = (rng.random(per) < BASE).astype(int)
        y_pred = np.concatenate([ya, yb])
        group = np.array(["A"] * per + ["B"] * per, dtype=object)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateBootstrapWarning)
            summary = AuditSummary.from_rows(y_pred, y_pred, {"g": group},
                                             metric="selection_rate", target="g=B")
            res = summary.certify_bounds(alternative="two-sided", alpha=ALPHA,
                                         n_resamples=n_resamples,
                                         random_state=int(rng.integers(2**31)))
        j = list(res.names).index("g=A")
        hits += bool(res.lower[j] > 0 or res.upper[j] < 0)
    return hits / reps


def summarise(rows, cap):
    rows = np.asarray(rows, dtype=float)
    return {"median_rows": float(np.median(rows)) if np.isfinite(np.median(rows)) else None,
            "quartiles": [float(q) if np.isfinite(q) else None
                          for q in np.quantile(rows, [0.25, 0.75])],
            "share_alarmed": float(np.isfinite(rows).mean()), "cap_rows": cap}


def _se(p, reps):
    return float(np.sqrt(max(p * (1 - p), 1e-12) / reps))


def _ratio(a, b):
    return a / b if a and b else None


#: Rows of the results: (key, how it is run).
VARIANTS = (("monitor_one_pair_per_look", "pairs", "default"),
            ("monitor_mixture_one_pair_per_look", "pairs", "mixture"),
            ("monitor_ons_one_pair_per_look", "pairs", "ons"),
            ("monitor_batch", "batches", "default"),
            ("monitor_mixture_batch", "batches", "mixture"),
            ("monitor_ons_batch", "batches", "ons"),
            ("monitor_batch_room_for_new_groups", "batches", "room_for_new_groups"),
            ("chugg_ons", "pairs", "chugg_ons"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--null-reps", type=int, default=1000)
    parser.add_argument("--max-rows", type=int, default=1_000_000)
    parser.add_argument("--shift-rows", type=int, default=200_000)
    parser.add_argument("--fixed-reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--output", default="monitor_power")
    args = parser.parse_args(argv)
    record = Run(__file__, argv)
    out = {"reps": args.reps, "null_reps": args.null_reps, "alpha": ALPHA,
           "base_rate": BASE, "batch": 2 * HALF, "share_with_new_levels": SHARE,
           "mixture_bettors": MIX_POINTS, "max_rows": args.max_rows, "seed": args.seed,
           "power": [], "shift": []}
    start_all = time.perf_counter()
    max_looks = args.max_rows // (2 * HALF)
    for i, delta in enumerate(DELTAS):
        t0 = time.perf_counter()
        runs = {"pairs": pair_alarm_rows(np.random.default_rng([args.seed, 2, i]), args.reps,
                                         BASE + delta, BASE, args.max_rows // 2)}
        t1 = time.perf_counter()
        runs["batches"] = monitor_batch_alarm_rows(np.random.default_rng([args.seed, 1, i]),
                                                   args.reps, BASE + delta, BASE, max_looks)
        t2 = time.perf_counter()
        oracle = oracle_rows(delta)
        power = fixed_horizon_power(np.random.default_rng([args.seed, 3, i]), oracle, delta,
                                    args.fixed_reps, 500)
        row = {"delta": delta}
        for key, run, name in VARIANTS:
            row[key] = summarise(runs[run][name], args.max_rows)
        row.update({
            "ons_one_pair_per_look_identical_to_chugg": bool(
                np.array_equal(runs["pairs"]["ons"], runs["pairs"]["chugg_ons"])),
            "fixed_horizon_oracle_rows": oracle,
            "fixed_horizon_power_at_oracle_rows": power,
            "fixed_horizon_reps": args.fixed_reps,
            "seconds": {"pairs": t1 - t0, "batches": t2 - t1,
                        "fixed": time.perf_counter() - t2}})
        c = row["chugg_ons"]["median_rows"]
        for key, _, _ in VARIANTS[:-1]:
            row[f"ratio_{key}_to_ons"] = _ratio(row[key]["median_rows"], c)
            row[f"ratio_{key}_to_oracle"] = _ratio(row[key]["median_rows"], oracle)
        row["ratio_chugg_ons_to_oracle"] = _ratio(c, oracle)
        out["power"].append(row)
        print(json.dumps(row), flush=True)
    # no disparity: false alarms up to the cap
    t0 = time.perf_counter()
    runs = {"pairs": pair_alarm_rows(np.random.default_rng([args.seed, 7]), args.null_reps,
                                     BASE, BASE, args.max_rows // 2)}
    runs["batches"] = monitor_batch_alarm_rows(np.random.default_rng([args.seed, 6]),
                                               args.null_reps, BASE, BASE, max_looks,
                                               with_cs=False)
    runs["batches"]["room_for_new_groups"] = monitor_batch_alarm_rows(
        np.random.default_rng([args.seed, 8]), args.reps, BASE, BASE,
        max_looks)["room_for_new_groups"]
    out["null"] = {}
    for key, run, name in VARIANTS:
        r = runs[run][name]
        share = float(np.isfinite(r).mean())
        out["null"][key] = {"share_alarmed": share, "reps": int(r.size),
                            "mc_se": _se(share, r.size)}
    out["null_seconds"] = time.perf_counter() - t0
    print(json.dumps(out["null"]), flush=True)
    change = args.shift_rows // 2
    change_look = change // (2 * HALF)
    for i, delta in enumerate(DELTAS):
        def rate(look, delta=delta):
            return BASE + (delta if look >= change_look else 0.0)
        ours = monitor_batch_alarm_rows(np.random.default_rng([args.seed, 4, i]), args.reps,
                                        rate, BASE, max_looks, with_cs=False)
        ons = pair_alarm_rows(np.random.default_rng([args.seed, 5, i]), args.reps, rate,
                              BASE, args.max_rows // 2)["chugg_ons"]
        row = {"delta": delta, "change_at_rows": change}
        for name, rows in (("monitor_batch", ours["default"]),
                           ("monitor_mixture_batch", ours["mixture"]),
                           ("monitor_ons_batch", ours["ons"]), ("chugg_ons", ons)):
            before = rows <= change
            delay = rows[~before] - change
            row[name] = {"false_alarm_before_change": float(before.mean()),
                         "mc_se": _se(float(before.mean()), args.reps),
                         **summarise(delay, args.max_rows - change)}
        out["shift"].append(row)
        print(json.dumps(row), flush=True)
    out["elapsed_seconds"] = time.perf_counter() - start_all
    print(f"wrote {write_results(record, out, name=args.output)}")


if __name__ == "__main__":
    main()
