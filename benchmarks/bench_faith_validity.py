"""Coverage of the FaiTH bootstrap confidence bounds: Gaussian regime versus a kink.

Usage::

    python benchmarks/bench_faith_validity.py [--quick] [--reps 1000] [--resamples 1000]
                                              [--n-jobs 2] [--variants]
                                              [--instances gaussian kink kink-strong]

For each bootstrap scheme ("nonparametric" = Efron's naive bootstrap, "m-out-of-n" with the
default ``m = ceil(n^(2/3))``, "numerical" with the default ``eps_n = n^(-1/3)``, and
"subsampling" with ``m = ceil(n^(2/3))``), each audit size ``n`` in {1000, 5000, 20000} and
each instance, the script draws ``reps`` audit samples ``counts ~ Mult(n, f*)``, runs
the bootstrap (``B = resamples`` replicates) and records

* the realized coverage of the 95% two-sided equal-tailed CI, of the 95% one-sided lower bound
  and of the 95% one-sided upper bound, with Monte Carlo standard errors
  ``sqrt(p (1 - p) / reps)``;
* the mean width of the two-sided CI and the mean distance ``psi(f_n) - lower bound``;
* the rejection rate of the delta-fairness test (reject when the lower bound exceeds delta) at
  ``delta = psi(f*)``: the type-I error at the boundary of H0, nominally <= 5%.

The instances share one COMPAS-like grid: 144 cells = race(2) x sex(2) x age(3) x priors(3) x
charge(2) x label(2). Moves that change race or sex are free, other moves cost a weighted
one-hot (Hamming) distance (age 1.0, priors 0.6, charge 0.3), label changes are forbidden; the
loss is the 0-1 loss of a fixed linear-threshold model that uses race and sex. The population
pmf ``f*`` is a fixed random draw (all cells positive). The exact curve ``eps -> psi(f*)`` has
breakpoints ``0 < P_1 < P_2`` (the budget stops binding at ``P_2``):

* ``gaussian``: ``eps = (P_1 + P_2) / 2``, strictly inside a hull segment, unique dual
  multiplier: ``sqrt(n)(psi(f_n) - psi(f*))`` is asymptotically Gaussian;
* ``kink``: ``eps = P_2`` exactly (taken from the solver's ``curve(f*)``), the optimal duals
  form the interval ``[0, 1/0.6]``: the limit is the minimum of two correlated Gaussians
  (sds 0.49 and 0.45, correlation 0.60; mean of the limit -0.17, sd 0.44);
* ``kink-strong``: the same kink for a tilted population (cells that must pay to move are
  4 times as likely): sds 0.40 and 0.37, correlation 0.32, limit mean -0.18, sd 0.34, so
  Efron's bootstrap fails more clearly.

The truth ``psi(f*)`` is exact (greedy solver). Every (instance, n, repetition) draws its
audit sample and its bootstrap streams from children of one ``numpy.random.SeedSequence``;
all schemes see the same audit sample (common random numbers).

``--variants`` adds other tuning rules of the consistent schemes (m-out-of-n with
``m = n^0.5`` and ``n^0.75``, numerical with ``eps_n = n^(-1/4)`` and ``n^(-0.4)``) to see how
sensitive the coverage is to the rate.

Writes ``benchmarks/results/faith_validity.csv`` and ``faith_validity.json`` (``--quick`` writes
``faith_validity_quick.*``; a subset of ``--instances`` appends the names, e.g.
``faith_validity_kink-strong.*``) and prints the table.

Run time, measured on 2 cores shared with other jobs (load average 5-10), ``--n-jobs 2``:
``--quick`` (100 reps, B = 300) about 15 s. The stored full results came from
two runs: ``--variants --instances gaussian kink`` equivalent (1,000 reps, B = 1,000, 8 schemes
x 3 sizes x 2 instances = 48,000 bootstraps) in 1,399 s, and ``--instances kink-strong``
(4 default schemes) in a few minutes. On an idle 2-core machine the default run (3 instances,
4 schemes, 36,000 bootstraps of 1,000 replicates) takes about 10 minutes. The measured time is
stored in the JSON (``elapsed_seconds``).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import scipy
from joblib import Parallel, delayed

from skfair_audit.faith._inference import bootstrap_root, bootstrap_scheme, root_bounds
from skfair_audit.faith._solver import prepare_transport

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 20241129
LEVEL = 0.95
SIZES = (1_000, 5_000, 20_000)

#: (label, method, m, numerical_step): the library defaults.
SCHEMES = (
    ("nonparametric", "nonparametric", None, None),
    ("m-out-of-n", "m-out-of-n", None, None),
    ("numerical", "numerical", None, None),
    ("subsampling", "subsampling", None, None),
)
#: Other rates of the consistent schemes (``--variants``).
VARIANTS = (
    ("m-out-of-n m=n^0.5", "m-out-of-n", 0.5, None),
    ("m-out-of-n m=n^0.75", "m-out-of-n", 0.75, None),
    ("numerical eps=n^-0.25", "numerical", None, lambda n: n**-0.25),
    ("numerical eps=n^-0.4", "numerical", None, lambda n: n**-0.4),
)


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


def run_chunk(instance, n, schemes, seeds, n_resamples):
    """Audit ``len(seeds)`` samples of size n with every scheme; per-rep bounds."""
    problem, f_star, epsilon = instance["problem"], instance["f_star"], instance["epsilon"]
    resolved = [
        bootstrap_scheme(method, n, m=m, numerical_step=step) for _, method, m, step in schemes
    ]
    out = np.empty((len(seeds), len(schemes), 5))  # value, two-sided low/high, lower, upper
    for r, seed in enumerate(seeds):
        sample_seed, *boot_seeds = seed.spawn(1 + len(schemes))
        counts = np.random.default_rng(sample_seed).multinomial(n, f_star)
        for s, scheme in enumerate(resolved):
            value, root = bootstrap_root(
                problem, counts, epsilon, scheme, n_resamples=n_resamples,
                random_state=boot_seeds[s], n_jobs=1,
            )
            low, high = root_bounds(value, root, n, LEVEL, "two-sided")
            lower, _ = root_bounds(value, root, n, LEVEL, "greater")
            _, upper = root_bounds(value, root, n, LEVEL, "less")
            out[r, s] = value, low, high, lower, upper
    return out


def summarize(bounds, truth, reps):
    """Coverage, MC standard errors, widths and the boundary type-I error of one cell."""
    value, low, high, lower, upper = bounds.T

    def rate(hit):
        p = float(np.mean(hit))
        return p, math.sqrt(max(p * (1 - p), 1e-12) / reps)

    two, two_se = rate((low <= truth) & (truth <= high))
    lo, lo_se = rate(lower <= truth)
    up, up_se = rate(truth <= upper)
    rej, rej_se = rate(lower > truth)
    return {
        "coverage_two_sided": two,
        "se_two_sided": two_se,
        "coverage_lower": lo,
        "se_lower": lo_se,
        "coverage_upper": up,
        "se_upper": up_se,
        "mean_width_two_sided": float(np.mean(high - low)),
        "mean_lower_margin": float(np.mean(value - lower)),
        "type1_at_boundary": rej,
        "se_type1": rej_se,
    }


def machine_info():
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_available": available,
    }


def print_table(rows):
    header = (
        f"{'instance':9} {'n':>6} {'scheme':22} {'2-sided':>13} {'lower':>13} {'upper':>13} "
        f"{'width':>7} {'typeI@psi*':>12}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['instance']:9} {r['n']:>6} {r['scheme']:22} "
            f"{r['coverage_two_sided']:.3f}±{r['se_two_sided']:.3f}  "
            f"{r['coverage_lower']:.3f}±{r['se_lower']:.3f}  "
            f"{r['coverage_upper']:.3f}±{r['se_upper']:.3f}  "
            f"{r['mean_width_two_sided']:.4f}  "
            f"{r['type1_at_boundary']:.3f}±{r['se_type1']:.3f}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 reps, B=300: a smoke test")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 1000)")
    parser.add_argument("--resamples", type=int, default=None, help="B (default 1000)")
    parser.add_argument("--n-jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--variants", action="store_true", help="also other m / eps_n rates")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--instances", nargs="+", default=None,
                        help="subset of gaussian, kink, kink-strong (default: all); a subset "
                        "is written to faith_validity_<names>.*")
    args = parser.parse_args(argv)
    reps = args.reps or (100 if args.quick else 1_000)
    n_resamples = args.resamples or (300 if args.quick else 1_000)
    schemes = SCHEMES + (VARIANTS if args.variants else ())
    labels = [s[0] for s in schemes]

    start = time.perf_counter()
    cases = instances()
    root = np.random.SeedSequence(SEED)
    instance_seeds = root.spawn(len(cases))
    if args.instances:
        keep = [k for k, c in enumerate(cases) if c["name"] in args.instances]
        cases = [cases[k] for k in keep]
        instance_seeds = [instance_seeds[k] for k in keep]
    tasks, keys = [], []
    chunk = 25
    for case, case_seed in zip(cases, instance_seeds, strict=True):
        for n, size_seed in zip(args.sizes, case_seed.spawn(len(args.sizes)), strict=True):
            rep_seeds = size_seed.spawn(reps)
            for start_rep in range(0, reps, chunk):
                keys.append((case["name"], n))
                tasks.append(
                    delayed(run_chunk)(
                        case, n, schemes, rep_seeds[start_rep : start_rep + chunk], n_resamples
                    )
                )
    parts = Parallel(n_jobs=args.n_jobs)(tasks)
    results = {}
    for key, part in zip(keys, parts, strict=True):
        results.setdefault(key, []).append(part)

    rows = []
    for case in cases:
        for n in args.sizes:
            bounds = np.concatenate(results[(case["name"], n)], axis=0)
            for s, label in enumerate(labels):
                scheme = bootstrap_scheme(schemes[s][1], n, m=schemes[s][2],
                                          numerical_step=schemes[s][3])
                row = {
                    "instance": case["name"],
                    "n": n,
                    "scheme": label,
                    "method": scheme.method,
                    "m": scheme.m,
                    "numerical_step": scheme.numerical_step,
                    "reps": reps,
                    "n_resamples": n_resamples,
                    "epsilon": case["epsilon"],
                    "truth": case["truth"],
                }
                row.update(summarize(bounds[:, s], case["truth"], reps))
                row["mean_bias_sqrt_n"] = float(
                    np.mean(bounds[:, s, 0] - case["truth"]) * math.sqrt(n)
                )
                rows.append(row)
    elapsed = time.perf_counter() - start
    print_table(rows)
    print(f"\n{reps} repetitions, B = {n_resamples}, {args.n_jobs} jobs: {elapsed:.0f} s")

    RESULTS.mkdir(exist_ok=True)
    stem = "faith_validity_quick" if args.quick else "faith_validity"
    if args.instances:
        stem += "_" + "_".join(c["name"] for c in cases)
    with open(RESULTS / f"{stem}.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    meta = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "seed": SEED,
        "confidence_level": LEVEL,
        "reps": reps,
        "n_resamples": n_resamples,
        "n_jobs": args.n_jobs,
        "elapsed_seconds": elapsed,
        "instances": [
            {
                "name": c["name"],
                "n_cells": int(c["problem"].n_cells),
                "n_segments": int(c["problem"].n_segments),
                "epsilon": c["epsilon"],
                "truth": c["truth"],
                "dual_interval": list(c["dual_interval"]),
                "curve_breakpoints": c["problem"].curve(c["f_star"])[0].tolist(),
            }
            for c in cases
        ],
        "rows": rows,
    }
    (RESULTS / f"{stem}.json").write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main()
