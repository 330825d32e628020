"""Benchmark of the exact greedy FaiTH solver against a generic LP solver (HiGHS).

Usage::

    python benchmarks/bench_faith_solver.py [--quick]

Writes ``benchmarks/results/faith_solver.json`` (``--quick`` runs small sizes and writes
nothing unless ``--output`` is given) and prints two tables:

1. a COMPAS-like grid (144 cells = 72 feature cells x 2 labels), 1,000 multinomial bootstrap
   replicates with n = 1,500: our batched ``TransportProblem.value`` for all replicates against
   ``scipy.optimize.linprog(method="highs")`` timed on a subset of replicates and extrapolated
   to all of them, with the largest value difference on the subset;
2. scaling in the number of cells K and replicates B, replicates evaluated in batches of at most
   1,000: setup time, evaluation time and the tracemalloc peak of the evaluation loop (bounded
   by the batch size, not by B).
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _common import Run, dumps, write_results
from scipy import sparse
from scipy.optimize import linprog

from skfair_audit.faith._solver import prepare_transport

BATCH = 1_000


def highs_solver(loss, cost, forbidden):
    """Prebuild the flattened LP once; return ``solve(f, epsilon) -> value``."""
    K = len(loss)
    gain = loss[None, :] - loss[:, None]
    allowed = np.isfinite(cost) & ~forbidden
    idx = np.flatnonzero(allowed.ravel())
    a_eq = sparse.csr_array(
        (np.ones(idx.size), (idx // K, np.arange(idx.size))), shape=(K, idx.size)
    )
    a_ub = sparse.csr_array(cost.ravel()[idx][None, :])
    objective = -gain.ravel()[idx]

    def solve(f, epsilon):
        res = linprog(
            objective,
            A_ub=a_ub,
            b_ub=[epsilon],
            A_eq=a_eq,
            b_eq=f,
            bounds=(0, None),
            method="highs",
        )
        if res.status != 0:
            raise RuntimeError(res.message)
        return -res.fun

    return solve


def compas_like_grid(rng):
    """144 cells: sex(2) x race(2) x age(3) x priors(3) x charge(2) x label(2).

    Cost: squared Euclidean distance between one-hot encodings, ignoring the sex and race
    coordinates (moves that only flip them are free). Label changes are forbidden. Loss: 0-1
    loss of a fixed random logistic model.
    """
    levels = (2, 2, 3, 3, 2)
    sensitive = (0, 1)
    cells = np.array(list(itertools.product(*(range(m) for m in levels), range(2))))
    features, label = cells[:, :-1], cells[:, -1]
    onehot = np.hstack([np.eye(m)[features[:, k]] for k, m in enumerate(levels)])
    keep = np.concatenate([np.full(m, k not in sensitive) for k, m in enumerate(levels)])
    fair = onehot[:, keep]
    cost = ((fair[:, None, :] - fair[None, :, :]) ** 2).sum(axis=2)
    forbidden = label[:, None] != label[None, :]
    coef = rng.normal(size=onehot.shape[1])
    prediction = (onehot @ coef + rng.normal()) > 0
    loss = (prediction != label).astype(float)
    return loss, cost, forbidden


def point_cloud(rng, K):
    """K random points in R^5 in two label blocks, squared Euclidean cost, random 0/1 loss."""
    points = rng.normal(size=(K, 5))
    sq = (points**2).sum(axis=1)
    cost = np.maximum(sq[:, None] + sq[None, :] - 2 * points @ points.T, 0.0)
    np.fill_diagonal(cost, 0.0)
    label = np.arange(K) >= K // 2
    forbidden = label[:, None] != label[None, :]
    loss = (rng.random(K) < 0.3).astype(float)
    return loss, cost, forbidden


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_compas(rng, n_replicates, n_highs, n_trials, epsilon):
    loss, cost, forbidden = compas_like_grid(rng)
    f_star = rng.dirichlet(np.full(len(loss), 0.5))
    counts = rng.multinomial(n_trials, f_star, size=n_replicates)
    replicates = counts / n_trials

    setup = best_time(lambda: prepare_transport(loss, cost, forbidden), 5)
    problem = prepare_transport(loss, cost, forbidden)
    ours_time = best_time(lambda: problem.value(replicates, epsilon), 10)
    ours = problem.value(replicates, epsilon)

    solve = highs_solver(loss, cost, forbidden)
    subset = replicates[:n_highs]
    start = time.perf_counter()
    reference = np.array([solve(f, epsilon) for f in subset])
    highs_subset = time.perf_counter() - start
    highs_per = highs_subset / n_highs
    highs_all = highs_per * n_replicates
    return {
        "instance": (
            "COMPAS-like grid: sex(2) x race(2) x age(3) x priors(3) x charge(2) x label(2); "
            "squared Euclidean one-hot cost without sex/race coordinates; label changes "
            "forbidden; 0-1 loss of a fixed random logistic model; f* ~ Dirichlet(0.5)"
        ),
        "n_cells": len(loss),
        "n_segments": problem.n_segments,
        "epsilon": epsilon,
        "n_trials": n_trials,
        "n_replicates": n_replicates,
        "setup_seconds": setup,
        "ours_seconds_all_replicates": ours_time,
        "highs_replicates_timed": n_highs,
        "highs_seconds_per_replicate": highs_per,
        "highs_seconds_extrapolated_all_replicates": highs_all,
        "speedup_value_only": highs_all / ours_time,
        "speedup_including_setup": highs_all / (ours_time + setup),
        "max_abs_difference_on_subset": float(np.max(np.abs(ours[:n_highs] - reference))),
        "mean_value": float(ours.mean()),
        "note": (
            f"HiGHS timed on the first {n_highs} replicates (constraint matrices prebuilt, "
            f"only linprog calls timed) and extrapolated linearly to {n_replicates}; ours is "
            f"the best of 10 runs of one batched call over all {n_replicates} replicates."
        ),
    }


def bench_scaling(rng, sizes, replicate_counts, epsilon_fraction, highs_up_to):
    rows = []
    for K in sizes:
        loss, cost, forbidden = point_cloud(rng, K)
        epsilon = float(epsilon_fraction * np.median(cost[~forbidden]))
        start = time.perf_counter()
        problem = prepare_transport(loss, cost, forbidden)
        setup = time.perf_counter() - start
        p_star = np.full(K, 1.0 / K)
        highs_seconds = highs_difference = None
        if K <= highs_up_to:
            f = rng.multinomial(K, p_star) / K
            solve = highs_solver(loss, cost, forbidden)
            start = time.perf_counter()
            reference = solve(f, epsilon)
            highs_seconds = time.perf_counter() - start
            highs_difference = abs(problem.value(f, epsilon) - reference)
        for B in replicate_counts:
            seeds = np.random.SeedSequence([K, B]).spawn(-(-B // BATCH))
            batches = [
                np.random.default_rng(s).multinomial(K, p_star, size=min(BATCH, B - k * BATCH)) / K
                for k, s in enumerate(seeds)
            ]
            start = time.perf_counter()
            values = np.concatenate([problem.value(batch, epsilon) for batch in batches])
            evaluate = time.perf_counter() - start
            del batches
            # Memory pass: draw and evaluate batch by batch, as a bootstrap does.
            tracemalloc.start()
            for k, s in enumerate(seeds):
                batch = (
                    np.random.default_rng(s).multinomial(K, p_star, size=min(BATCH, B - k * BATCH))
                    / K
                )
                problem.value(batch, epsilon)
                del batch
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append(
                {
                    "n_cells": K,
                    "n_segments": problem.n_segments,
                    "epsilon": epsilon,
                    "n_replicates": B,
                    "batch_size": min(BATCH, B),
                    "setup_seconds": setup,
                    "evaluate_seconds": evaluate,
                    "microseconds_per_replicate": 1e6 * evaluate / B,
                    "peak_memory_mib": peak / 2**20,
                    "mean_value": float(values.mean()),
                    "highs_seconds_one_replicate": highs_seconds,
                    "highs_abs_difference_one_replicate": highs_difference,
                }
            )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--output", type=Path, default=None, help="where to write the JSON")
    args = parser.parse_args(argv)
    run = Run(__file__, argv, processor=platform.processor() or platform.machine())
    rng = np.random.default_rng(20240601)
    if args.quick:
        compas_args = {"n_replicates": 200, "n_highs": 5}
        sizes, counts, highs_up_to = (144, 500), (1_000,), 144
    else:
        compas_args = {"n_replicates": 1_000, "n_highs": 30}
        sizes, counts, highs_up_to = (144, 500, 1_000, 2_000), (1_000, 10_000), 500

    compas = bench_compas(rng, n_trials=1_500, epsilon=0.1, **compas_args)
    scaling = bench_scaling(rng, sizes, counts, epsilon_fraction=0.05, highs_up_to=highs_up_to)
    result = {
        "benchmark": "faith_solver",
        "compas_like": compas,
        "scaling": scaling,
        "scaling_note": (
            "Random points in R^5 (N(0, I)), squared Euclidean cost, labels in two blocks "
            "(label changes forbidden), 0/1 loss with P(1) = 0.3, epsilon = 0.05 x median "
            "allowed cost, replicates Multinomial(K, uniform)/K drawn and evaluated in batches "
            f"of at most {BATCH}; peak memory is the tracemalloc peak of that loop (excludes "
            "the setup's K x K arrays)."
        ),
    }
    out = args.output
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(dumps({**run.metadata(), **result}), encoding="utf-8")
    elif not args.quick:
        out = write_results(run, result)

    c = compas
    print(
        f"COMPAS-like grid: K={c['n_cells']}, S={c['n_segments']}, eps={c['epsilon']}, "
        f"n={c['n_trials']}, B={c['n_replicates']}"
    )
    print(
        f"  greedy, all {c['n_replicates']} replicates (batched): "
        f"{1e3 * c['ours_seconds_all_replicates']:.2f} ms (setup {1e3 * c['setup_seconds']:.2f} ms)"
    )
    print(
        f"  HiGHS: {1e3 * c['highs_seconds_per_replicate']:.2f} ms/replicate on "
        f"{c['highs_replicates_timed']} replicates -> "
        f"{c['highs_seconds_extrapolated_all_replicates']:.1f} s extrapolated to "
        f"{c['n_replicates']}"
    )
    print(
        f"  speedup: {c['speedup_value_only']:,.0f}x (value only), "
        f"{c['speedup_including_setup']:,.0f}x (including setup); "
        f"max |difference| on subset = {c['max_abs_difference_on_subset']:.2e}"
    )
    print()
    header = (
        f"{'K':>6} {'S':>6} {'B':>7} {'setup s':>8} {'eval s':>8} {'us/rep':>8} "
        f"{'peak MiB':>9} {'HiGHS s (1 rep)':>16}"
    )
    print(header)
    print("-" * len(header))
    for r in scaling:
        highs = r["highs_seconds_one_replicate"]
        highs = f"{highs:.3f}" if highs is not None else "-"
        print(
            f"{r['n_cells']:>6} {r['n_segments']:>6} {r['n_replicates']:>7} "
            f"{r['setup_seconds']:>8.3f} {r['evaluate_seconds']:>8.3f} "
            f"{r['microseconds_per_replicate']:>8.1f} {r['peak_memory_mib']:>9.1f} "
            f"{highs:>16}"
        )
    if out is not None:
        print(f"\nwritten: {out}")
    return result


if __name__ == "__main__":
    main()
