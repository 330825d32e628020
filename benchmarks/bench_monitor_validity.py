"""Time-uniform validity of the fairness monitor, and the naive way side by side.

Usage::

    python benchmarks/bench_monitor_validity.py [--streams 1000] [--looks 10000]
        [--batch 100] [--naive-streams 100] [--naive-looks 60] [--seed 20261201]

Design: three protected attributes A (4 levels, shares .55/.30/.12/.03), B (3 levels,
.70/.25/.05) and C (2 levels, .80/.20), independent; all intersections up to depth 3 are the
59 groups (the smallest cell has probability 0.03 x 0.05 x 0.20 = 0.0003). Metric: the
selection rate (a 0/1 metric on every row). A look follows every batch of ``--batch`` rows.

1. **FWER of the confidence sequences** (target: the overall rate, estimated: 60 streams,
   59 groups + the overall rate, each with its share ``0.9 alpha / 60`` of ``alpha = 0.05``,
   the default ``new_level_share = 0.1`` kept for new levels; the shares of a monitor with
   ``paired=False`` or ``epsilon0 != 0``: with paired tests each group's CS gets half of its
   share and misses less often). Cell selection rates are fixed
   draws in [0.02, 0.5]; group truths are exact. Per look the script draws the cells' rows
   (multinomial) and ones (binomial), sums them over the groups and updates every stream's
   hedged capital *at its true rate* (:func:`skfair_audit.monitor.simulate_crossings`'s
   arithmetic). A group's disparity CS can leave its truth only if some stream's capital at
   its truth has crossed ``1/alpha_s`` (the grid CS is conservative, the disparity CS is the
   Minkowski difference of the group's and the target's CSs), so the share of streams where
   that happened at some look is an upper bound on the share where some disparity CS misses.
2. **FDR of e-BH at stopping times** (constant target 0.30, ``epsilon0 = 0.02``, ``q = 0.1``;
   cells with A = level 3 select at 0.40, every other cell at exactly 0.32, so 36 groups
   sit on the boundary of their null and 23 are non-null). The e-value of each group is its
   long capital at 0.32 (the monitor's grid point), flags by e-BH with the monitor's weights.
   False discovery proportions at: the first look with a flag; the fixed looks 1,000 and the
   last; and a user rule, the first look with at least 5 flags (FDP 0 when the time never
   comes).
3. **The naive way**: :meth:`skfair_audit.group.AuditSummary.certify_bounds` (two-sided,
   ``alpha = 0.05``, B = 200, overall target) recomputed on the whole trail so far at
   ``--naive-looks`` looks spread geometrically over the same stream, under the same design:
   the share of streams where some group's interval excludes its true disparity at some of
   those looks (a lower bound on the rate over all the looks). Same seeds as design 1.

Writes ``benchmarks/results/monitor_validity.json`` with the exact command, the sizes actually
run, versions, load averages and elapsed times.
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

from skfair_audit.group import (  # noqa: E402
    AuditSummary,
    DegenerateBootstrapWarning,
    TrailSummary,
    get_metric,
    intersections,
)
from skfair_audit.monitor import simulate_crossings  # noqa: E402
from skfair_audit.monitor._betting import log_capital_step, plugin_bet  # noqa: E402

SHARES = {"A": [0.55, 0.30, 0.12, 0.03], "B": [0.70, 0.25, 0.05], "C": [0.80, 0.20]}
ALPHA = 0.05
Q = 0.1
THETA = 0.30
EPSILON0 = 0.02
NEW_LEVEL_SHARE = 0.1
CHUNK = 250


def design():
    """Cells (lexicographic A, B, C), their probabilities and the 59-group membership."""
    levels = {a: [f"{a}{j}" for j in range(len(p))] for a, p in SHARES.items()}
    grids = np.meshgrid(*[np.arange(len(p)) for p in SHARES.values()], indexing="ij")
    codes = np.column_stack([g.ravel() for g in grids])
    prob = np.prod([np.asarray(SHARES[a])[codes[:, j]] for j, a in enumerate(SHARES)], axis=0)
    frame = {a: np.asarray(levels[a], dtype=object)[codes[:, j]] for j, a in enumerate(SHARES)}
    collection = intersections(frame)
    membership = collection.cell_membership[collection.cell_of_row]  # (cells, groups)
    return levels, codes, prob, collection.names, membership.astype(float)


def fwer_run(rng, n_streams, n_looks, batch, prob, member, rates):
    """First look at which some stream's capital at its truth crosses (-1: never)."""
    truth_groups = (prob * rates) @ member / (prob @ member)
    truth = np.concatenate([[prob @ rates], truth_groups])  # overall first
    alpha_s = np.full(truth.size, ALPHA * (1 - NEW_LEVEL_SHARE) / truth.size)

    def looks():
        for _ in range(n_looks):
            rows = rng.multinomial(batch, prob, size=n_streams)
            ones = rng.binomial(rows, rates)
            yield (np.column_stack([ones.sum(1), ones @ member]),
                   np.column_stack([rows.sum(1), rows @ member]))

    first = simulate_crossings(looks(), np.broadcast_to(truth, (n_streams, truth.size)),
                               alpha_s)
    return np.where((first >= 0).any(axis=1), np.where(first >= 0, first, n_looks).min(axis=1),
                    -1)


def fdr_run(rng, n_streams, n_looks, batch, prob, member, rates, fixed_looks):
    """FDP of e-BH at the stopping times, per stream."""
    g = member.shape[1]
    truth = (prob * rates) @ member / (prob @ member)
    null = truth <= THETA + EPSILON0 + 1e-12
    weight = (1 - NEW_LEVEL_SHARE) / g
    alpha_g = np.full(g, ALPHA * weight)
    m0 = THETA + EPSILON0
    log_e = np.zeros((n_streams, g))
    n = np.zeros((n_streams, g))
    k = np.zeros((n_streams, g))
    fdp = {"first_alarm": np.zeros(n_streams), "five_flags": np.zeros(n_streams),
           **{f"look_{t + 1}": np.zeros(n_streams) for t in fixed_looks}}
    done = {key: np.zeros(n_streams, bool) for key in fdp}
    flagged_mean = {key: np.zeros(n_streams) for key in fdp}
    for look in range(n_looks):
        rows = rng.multinomial(batch, prob, size=n_streams)
        ones = rng.binomial(rows, rates)
        b = rows @ member
        o = ones @ member
        lam = plugin_bet(n, k, b, alpha_g)
        d_up, _ = log_capital_step(o, b - o, lam, np.array([m0]))
        log_e += d_up[..., 0] if d_up.ndim == 3 else d_up
        n += b
        k += o
        score = weight * np.exp(log_e)
        order = np.argsort(-score, axis=1)
        ranked = np.take_along_axis(score, order, axis=1)
        ok = ranked * Q * np.arange(1, g + 1) >= 1
        n_flag = np.where(ok.any(1), g - np.argmax(ok[:, ::-1], axis=1), 0)
        rank = np.argsort(order, axis=1)
        flags = rank < n_flag[:, None]
        false = (flags & null).sum(1)
        this_fdp = np.where(n_flag > 0, false / np.maximum(n_flag, 1), 0.0)
        events = {"first_alarm": n_flag > 0, "five_flags": n_flag >= 5,
                  **{f"look_{t + 1}": np.full(n_streams, look == t) for t in fixed_looks}}
        for key, happened in events.items():
            now = happened & ~done[key]
            fdp[key][now] = this_fdp[now]
            flagged_mean[key][now] = n_flag[now]
            done[key] |= now
    return fdp, done, flagged_mean, int(null.sum()), int((~null).sum())


def naive_run(rng, n_streams, looks, batch, levels, codes, prob, member, rates, n_resamples,
              names):
    """Share of streams where the fixed-sample bounds miss at some of ``looks``."""
    truth_groups = (prob * rates) @ member / (prob @ member)
    overall = prob @ rates
    metric = get_metric("selection_rate")
    columns = tuple(SHARES)
    level_tuple = tuple(tuple(levels[a]) for a in columns)
    missed = np.zeros((n_streams, len(looks)), bool)
    checkpoints = {t: i for i, t in enumerate(looks)}
    last = max(looks)
    for s in range(n_streams):
        cell_n = np.zeros(prob.size, np.int64)
        cell_k = np.zeros(prob.size, np.int64)
        for look in range(last + 1):
            rows = rng.multinomial(batch, prob)
            cell_n += rows
            cell_k += rng.binomial(rows, rates)
            if look not in checkpoints:
                continue
            seen = np.flatnonzero(cell_n)
            atom_cell, atom_value, atom_count = [], [], []
            for pos, c in enumerate(seen):
                for value, count in ((0.0, cell_n[c] - cell_k[c]), (1.0, cell_k[c])):
                    if count:
                        atom_cell.append(pos)
                        atom_value.append(value)
                        atom_count.append(count)
            trail = TrailSummary(
                columns=columns, levels=level_tuple, categorical=(True,) * 3,
                cell_codes=codes[seen].astype(np.int64), cell_rows=cell_n[seen],
                atom_cell=np.asarray(atom_cell, np.int64),
                atom_value=np.asarray(atom_value, float),
                atom_count=np.asarray(atom_count, np.int64), moments=None,
                n_rows=int(cell_n.sum()), label_levels=((0, 1), (0, 1)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateBootstrapWarning)
                summary = AuditSummary.from_trail(trail, metric=metric, target="overall")
                res = summary.certify_bounds(alternative="two-sided", alpha=ALPHA,
                                             n_resamples=n_resamples,
                                             random_state=int(rng.integers(2**31)))
            true_eps = dict(zip(names, truth_groups - overall, strict=True))
            eps = np.array([true_eps.get(nm, np.nan) for nm in res.names])
            low, high = np.asarray(res.lower), np.asarray(res.upper)
            ok = np.isfinite(low) & np.isfinite(high) & np.isfinite(eps)
            missed[s, checkpoints[look]] = np.any(ok & ((low > eps + 1e-12)
                                                        | (high < eps - 1e-12)))
    return missed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--looks", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--naive-streams", type=int, default=100)
    parser.add_argument("--naive-looks", type=int, default=60)
    parser.add_argument("--naive-resamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--output", default="monitor_validity")
    args = parser.parse_args(argv)
    run = Run(__file__, argv)
    levels, codes, prob, names, member = design()
    design_rng = np.random.default_rng([args.seed, 0])
    rates = design_rng.uniform(0.02, 0.5, prob.size)
    out = {"streams": args.streams, "looks": args.looks, "batch": args.batch,
           "rows_per_stream": args.looks * args.batch, "alpha": ALPHA, "q": Q,
           "theta": THETA, "epsilon0": EPSILON0, "new_level_share": NEW_LEVEL_SHARE,
           "n_groups": len(names), "seed": args.seed,
           "smallest_cell_probability": float(prob.min()),
           "group_probability_range": [float((prob @ member).min()),
                                       float((prob @ member).max())],
           }
    # 1. FWER
    start = time.perf_counter()
    firsts = []
    for c, lo in enumerate(range(0, args.streams, CHUNK)):
        rng = np.random.default_rng([args.seed, 1, c])
        firsts.append(fwer_run(rng, min(CHUNK, args.streams - lo), args.looks, args.batch,
                               prob, member, rates))
    first = np.concatenate(firsts)
    p = float((first >= 0).mean())
    out["fwer"] = {"share_some_group_outside": p,
                   "mc_se": float(np.sqrt(max(p * (1 - p), 1e-12) / args.streams)),
                   "n_streams_with_miss": int((first >= 0).sum()),
                   "miss_looks": sorted(int(v) for v in first[first >= 0]),
                   "bound": ALPHA,
                   "seconds": time.perf_counter() - start}
    print("FWER", out["fwer"]["share_some_group_outside"], out["fwer"]["mc_se"], flush=True)
    # 2. FDR
    start = time.perf_counter()
    fdr_rates = np.where(codes[:, 0] == 3, 0.40, THETA + EPSILON0)
    fixed = [t for t in (999, args.looks - 1) if t < args.looks]
    acc = {}
    for c, lo in enumerate(range(0, args.streams, CHUNK)):
        rng = np.random.default_rng([args.seed, 2, c])
        fdp, done, flagged, n_null, n_alt = fdr_run(
            rng, min(CHUNK, args.streams - lo), args.looks, args.batch, prob, member,
            fdr_rates, fixed)
        for key in fdp:
            acc.setdefault(key, []).append((fdp[key], done[key], flagged[key]))
    out["fdr"] = {"n_null_groups": n_null, "n_nonnull_groups": n_alt, "q": Q,
                  "seconds": time.perf_counter() - start, "times": {}}
    for key, parts in acc.items():
        f = np.concatenate([a for a, _, _ in parts])
        d = np.concatenate([b for _, b, _ in parts])
        nf = np.concatenate([x for _, _, x in parts])
        out["fdr"]["times"][key] = {
            "fdr": float(f.mean()), "mc_se": float(f.std(ddof=1) / np.sqrt(f.size)),
            "share_reached": float(d.mean()),
            "mean_flagged_when_reached": float(nf[d].mean()) if d.any() else 0.0}
    print("FDR", json.dumps(out["fdr"]["times"]), flush=True)
    # 3. naive
    start = time.perf_counter()
    looks = sorted({int(v) for v in np.geomspace(9, args.looks - 1, args.naive_looks)})
    rng = np.random.default_rng([args.seed, 3])
    missed = naive_run(rng, args.naive_streams, looks, args.batch, levels, codes,
                       prob, member, rates, args.naive_resamples, names)
    p = float(missed.any(axis=1).mean())
    late = np.asarray(looks) >= 99  # from 10,000 rows on
    p_late = float(missed[:, late].any(axis=1).mean())
    se = lambda x: float(np.sqrt(max(x * (1 - x), 1e-12) / args.naive_streams))  # noqa: E731
    out["naive"] = {"share_some_group_outside": p, "mc_se": se(p),
                    "share_some_group_outside_from_10000_rows": p_late,
                    "mc_se_from_10000_rows": se(p_late),
                    "miss_rate_per_look": [float(v) for v in missed.mean(axis=0)],
                    "streams": args.naive_streams, "looks_checked": looks,
                    "rows_checked": [(t + 1) * args.batch for t in looks],
                    "n_resamples": args.naive_resamples,
                    "seconds": time.perf_counter() - start}
    print("naive", p, flush=True)
    print(f"wrote {write_results(run, out, name=args.output)}")


if __name__ == "__main__":
    main()
