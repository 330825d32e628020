"""Validity of the FaiTH confidence bounds on a grid around the kinks of ε ↦ ψ(ε).

Usage::

    python benchmarks/bench_faith_validity.py [--quick] [--reps 2000] [--resamples 999]
                                              [--n-jobs 2] [--schemes uniform m-out-of-n ...]
                                              [--instances hand kink gaussian]

The default command writes the committed ``benchmarks/results/faith_validity.json`` and
``faith_validity.csv``; ``doc/make_reproduction_tables.py`` builds the documentation's tables
and sentences of conclusion from that one file.

**Instances.** The truth ``psi(f*)`` is exact (greedy solver) on every instance.

* ``hand``: 6 hand-built cells, losses ``(0, 0, 0, 1, 1, 1)``, moves ``0 -> 3`` (cost 1),
  ``1 -> 4`` (cost 2), ``2 -> 5`` (cost 4) and a dominated ``1 -> 3`` (cost 3);
  ``f* = (0.2, 0.2, 0.2, 0.1, 0.2, 0.1)``. The curve ε ↦ ψ has kinks at 0.2, 0.6 and 1.4;
  the grid is centred on the *interior* kink 0.6, where the two active pieces
  (λ = 1/2 and λ = 1/4) both vary with the sample.
* ``kink``: the 144-cell COMPAS-like grid below, ε centred on the breakpoint where the budget
  stops binding (the pieces λ = 5/3 and λ = 0 are both active there).
* ``gaussian``: the same grid, ε centred mid-way between its two breakpoints (a unique
  multiplier, Gaussian limit); the offsets keep it at least 4 sd from every kink at every n.
* ``kink-strong`` (not in the default run): the ``kink`` breakpoint of a tilted population.

The COMPAS-like grid: 144 cells = race(2) x sex(2) x age(3) x priors(3) x charge(2) x label(2).
Moves that change race or sex are free, other moves cost a weighted one-hot distance (age 1.0,
priors 0.6, charge 0.3), label changes are forbidden; the loss is the 0-1 loss of a fixed
linear-threshold model that uses race and sex; ``f*`` is a fixed random draw.

**The near-kink grid and its "sd".** A breakpoint of the population curve is a linear function
of the frequencies, ``P(f) = Σ_i f_i w_i`` (``w_i``: the cost of the segments of row ``i``
taken up to that breakpoint). Its estimate ``P(f_n)`` has standard deviation
``sd_n = sqrt(Var_{f*}(w_Z) / n)``. For each n in {1,000, 5,000, 20,000} the grid is
``ε = centre + h sd_n``, h ∈ {0, ±0.25, ±0.5, ±1, ±2, ±4}, with ``sd_n`` the sd of the
centre's breakpoint (for ``gaussian``: of the nearest breakpoint). ``h sd_n`` is also ``h``
standard deviations of the estimated difference of the two linear pieces that meet at the
kink, which is what decides which piece the data see as active. Every row records its
distance to the nearest kink, in units of that kink's own sd.

**What is recorded.** For each (instance, n, h) the script draws ``reps`` audit samples
``counts ~ Mult(n, f*)`` (common to all schemes) and runs each inference scheme at 95%:
``uniform`` (the library's default, :func:`~skfair_audit.faith.faith_audit`
``method="uniform"``, B = ``resamples`` max-t replicates) and the pointwise bootstrap
``m-out-of-n`` (the previous default, B = ``resamples``); ``--schemes`` adds ``numerical``,
``subsampling`` or ``nonparametric``. B = 999 (about the library's default of 1,000) makes
``(B + 1) 0.95`` and ``(B + 1) 0.975`` integers, so the Monte Carlo quantiles of the one-sided
bounds and of the two-sided interval add no bias of their own. Per scheme:

* the type-I error of the δ-test (H0 ψ ≤ δ, reject when the lower bound > δ) at the least
  favourable δ = ψ(f*), i.e. ``P(lower > ψ*)``;
* the type-I error of the certification test (H0 ψ ≥ δ, certify when the upper bound < δ) at
  δ = ψ(f*), ``P(upper < ψ*)``;
* the coverage and mean width of the 95% two-sided interval, and the mean margins
  ``ψ(f_n) − lower`` and ``upper − ψ(f_n)``;
* the power of both tests at alternatives ``δ = ψ* ∓ k se*``, k ∈ {1, 2, 3}, with ``se*`` the
  population standard error ``sqrt(Var_{f*}(a_Z(λ*)) / n)`` of the active piece (the larger
  one at a kink);
* the share of audits with ``near_kink`` True (a property of the sample, the same for every
  scheme).

Monte Carlo standard errors are ``sqrt(p (1 - p) / reps)``. The acceptance thresholds in the
JSON summary use the standard error at the nominal rate: a type-I error holds its level when
it is at most ``0.05 + 2 sqrt(0.05 * 0.95 / reps)``, a coverage when it is at least
``0.95 - 2 sqrt(0.05 * 0.95 / reps)``. The summary also lists every cell that misses.

**Confirmation of the default's misses.** With 99 cells, three rates per cell and lines at two
standard errors, a scheme whose every rate is exactly nominal still crosses a line in a few
cells by chance. Each cell where the default (``uniform``) crosses a line is therefore audited
again, independently (fresh seeds from ``SeedSequence([SEED, 1])``), with
``CONFIRM_FACTOR x reps`` repetitions, and judged against the lines of that larger run. The
summary keeps both: the cell's first-run rates (in the table, in bold) and the confirmation
(``summary["schemes"]["uniform"]["confirmation"]``); a miss that the confirmation repeats is a
real one. The confirmation is two-sided: a pass can be luck too, so ``CONTROL_CELLS`` cells
where the default crossed no line, drawn at random (``SeedSequence([SEED, 2])``), are rerun
the same way with fresh seeds (``SeedSequence([SEED, 3])``) and judged by the same lines
(``summary["schemes"]["uniform"]["control_confirmation"]``).
``--controls-only`` runs only these control cells for the committed default run (same cells,
seeds and repetitions) and writes ``faith_validity_controls.json``: the way to add the control
side without rerunning the whole grid.

Seeds: one ``numpy.random.SeedSequence`` spawns a child per (instance, n, h, repetition); each
repetition's child spawns the audit sample's stream and one stream per scheme, so results do not
depend on ``--n-jobs`` or on the chunking.

Run time, measured on 2 cores shared with other jobs (the JSON records ``elapsed_seconds``
and the load average): ``--quick`` (150 repetitions, B = 199, h ∈ {0, ±1, ±4}) about 1-2
minutes; the default run (3 instances x 3 n x 11 offsets x 2,000 repetitions, 2 schemes with
B = 999 each, then the confirmations) took the time recorded in the committed JSON
(``elapsed_seconds``, with the load average at its start and end).
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
from _common import RESULTS, Run, write_results
from _faith_data import ALPHA, LEVEL, instances, rate, thresholds
from joblib import Parallel, delayed

from skfair_audit.faith._inference import bootstrap_root, bootstrap_scheme, root_bounds
from skfair_audit.faith._solver import prepare_transport
from skfair_audit.faith._uniform import (
    _SquareIncrements,
    linear_pieces,
    piece_moments,
    uniform_inference,
)

SEED = 20241129
SIZES = (1_000, 5_000, 20_000)
OFFSETS = (-4.0, -2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
QUICK_OFFSETS = (-4.0, -1.0, 0.0, 1.0, 4.0)
POWER_STEPS = (1, 2, 3)
DEFAULT_SCHEMES = ("uniform", "m-out-of-n")
DEFAULT_INSTANCES = ("hand", "kink", "gaussian")
ALL_SCHEMES = ("uniform", "m-out-of-n", "numerical", "subsampling", "nonparametric")
#: The confirmation runs of the default's misses have this many times the repetitions.
CONFIRM_FACTOR = 5
#: Cells where the default did *not* cross a line, drawn at random and rerun the same way
#: (the other side of the confirmation: a pass can be luck too).
CONTROL_CELLS = 6
#: Audit samples per parallel task.
CHUNK = 100


def hand_built():
    """The 6-cell instance: three loss-0 cells, each with one costly move to a loss-1 cell."""
    loss = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    cost = np.full((6, 6), np.inf)
    np.fill_diagonal(cost, 0.0)
    cost[0, 3], cost[1, 4], cost[2, 5] = 1.0, 2.0, 4.0
    cost[1, 3] = 3.0  # dominated by 1 -> 4: not on the hull
    f_star = np.array([0.2, 0.2, 0.2, 0.1, 0.2, 0.1])
    problem = prepare_transport(loss, cost)
    return {"name": "hand", "problem": problem, "f_star": f_star, "centre": "kink",
            "kink_index": 1}


def validity_instances(names):
    """The instances of the near-kink grid, by name (see the module docstring)."""
    base = {case["name"]: case for case in instances()}
    table = {
        "hand": hand_built(),
        "kink": {**base["kink"], "centre": "kink", "kink_index": -1},
        "kink-strong": {**base["kink-strong"], "centre": "kink", "kink_index": -1},
        "gaussian": {**base["gaussian"], "centre": "mid", "kink_index": -1},
    }
    unknown = sorted(set(names) - set(table))
    if unknown:
        raise SystemExit(f"unknown instances {unknown}; choose from {sorted(table)}")
    return [table[name] for name in names]


def population_kinks(problem, f_star, n):
    """Breakpoints ``P_k(f*)`` of the population curve (ε > 0) and the sd of their estimates.

    ``P_k(f) = Σ_i f_i w_i`` with ``w_i`` the cost of row ``i``'s segments of slope at least
    the k-th distinct slope with mass: the prefix of the next linear piece.
    """
    pieces = linear_pieces(problem)
    out = []
    previous = 0.0
    for end in pieces.prefix[1:]:
        w = np.bincount(problem.segment_row[:end], weights=problem.segment_cost[:end],
                        minlength=problem.n_cells)
        level = float(f_star @ w)
        if level > previous * (1 + 1e-12) and level > 0:
            sd = math.sqrt(max(f_star @ w**2 - level**2, 0.0) / n)
            out.append((level, sd))
            previous = level
    return out


def grid_cells(case, n, offsets):
    """The ε of every offset for one instance and sample size, with its truth and scales."""
    problem, f_star = case["problem"], case["f_star"]
    kinks = population_kinks(problem, f_star, n)
    breaks = np.array([k[0] for k in kinks])
    if case["centre"] == "kink":
        centre, sd = kinks[case["kink_index"]]
    else:  # mid-way between the last two breakpoints; sd of the nearer one
        centre = 0.5 * (breaks[-2] + breaks[-1])
        nearest = int(np.argmin(np.abs(breaks - centre)))
        sd = kinks[nearest][1]
    pieces = linear_pieces(problem)
    m1, m2 = piece_moments(problem, pieces, f_star, squares=_SquareIncrements.of(problem))
    m1, m2 = m1[0], m2[0]
    cells = []
    for h in offsets:
        epsilon = float(centre + h * sd)
        values = pieces.multiplier * epsilon + m1
        active = values <= values.min() + 1e-12 * max(1.0, abs(values.min()))
        se_star = float(np.sqrt(np.max(m2[active] - m1[active] ** 2) / n))
        distance = min(abs(epsilon - p) / s for p, s in kinks)
        cells.append({
            "offset_sd": h,
            "epsilon": epsilon,
            "truth": float(problem.value(f_star, epsilon)),
            "sd_epsilon": sd,
            "se_star": se_star,
            "distance_to_kink_sd": distance,
            "active_multipliers": pieces.multiplier[active].tolist(),
        })
    return cells, kinks

def run_chunk(problem, f_star, n, epsilon, schemes, seeds, n_resamples):
    """Audit ``len(seeds)`` samples with every scheme.

    Returns the bounds, shape (reps, schemes, 5): ψ(f_n), 95% lower, 95% upper, two-sided low
    and high; and ``near_kink`` per repetition.
    """
    resolved = {
        s: bootstrap_scheme(s, n) for s in schemes if s != "uniform"
    }
    out = np.empty((len(seeds), len(schemes), 5))
    near = np.empty(len(seeds), dtype=bool)
    for r, seed in enumerate(seeds):
        sample_seed, *scheme_seeds = seed.spawn(1 + len(schemes))
        counts = np.random.default_rng(sample_seed).multinomial(n, f_star)
        for k, scheme in enumerate(schemes):
            if scheme == "uniform":
                # What faith_audit(method="uniform") computes (tests/faith/test_uniform.py
                # checks that they agree bound for bound).
                value, pieces = uniform_inference(
                    problem, counts, epsilon, confidence_level=LEVEL,
                    n_resamples=n_resamples, random_state=scheme_seeds[k],
                )
                side = 1.0 - ALPHA / 2
                out[r, k] = (value, pieces.lower_bound(LEVEL), pieces.upper_bound(LEVEL),
                             pieces.lower_bound(side), pieces.upper_bound(side))
                near[r] = pieces.near_kink
            else:
                value, root = bootstrap_root(
                    problem, counts, epsilon, resolved[scheme], n_resamples=n_resamples,
                    random_state=scheme_seeds[k],
                )
                lower, _ = root_bounds(value, root, n, LEVEL, "greater")
                _, upper = root_bounds(value, root, n, LEVEL, "less")
                low, high = root_bounds(value, root, n, LEVEL, "two-sided")
                out[r, k] = value, lower, upper, low, high
        if "uniform" not in schemes:
            near[r] = uniform_inference(problem, counts, epsilon, confidence_level=LEVEL,
                                        bootstrap=False)[1].near_kink
    return out, near


def summarize(bounds, near, cell):
    """The row entries of one scheme in one grid cell."""
    value, lower, upper, low, high = bounds.T
    truth, se_star = cell["truth"], cell["se_star"]
    row = {}
    for key, hits in (
        ("type1_delta_test", lower > truth),
        ("type1_certification", upper < truth),
        ("coverage_two_sided", (low <= truth) & (truth <= high)),
    ):
        row[key], row[f"se_{key}"] = rate(hits)
    row["mean_width_two_sided"] = float(np.mean(high - low))
    row["mean_lower_margin"] = float(np.mean(value - lower))
    row["mean_upper_margin"] = float(np.mean(upper - value))
    for k in POWER_STEPS:
        row[f"power_delta_test_{k}se"] = float(np.mean(lower > truth - k * se_star))
        row[f"power_certification_{k}se"] = float(np.mean(upper < truth + k * se_star))
    row["near_kink_rate"] = float(np.mean(near))
    return row


def verdicts(rows, reps, schemes, kink_instances):
    """Every conclusion the documentation states, computed from the rows."""
    type1_max, coverage_min = thresholds(reps)
    out = {
        "type1_threshold": type1_max,
        "coverage_threshold": coverage_min,
        "schemes": {},
    }

    def where(row):
        return {k: row[k] for k in ("instance", "n", "offset_sd")}

    for scheme in schemes:
        sub = [r for r in rows if r["scheme"] == scheme]
        worst_delta = max(sub, key=lambda r: r["type1_delta_test"])
        worst_cert = max(sub, key=lambda r: r["type1_certification"])
        worst_cov = min(sub, key=lambda r: r["coverage_two_sided"])
        misses = [
            {**where(r), "type1_delta_test": r["type1_delta_test"],
             "type1_certification": r["type1_certification"],
             "coverage_two_sided": r["coverage_two_sided"]}
            for r in sub
            if r["type1_delta_test"] > type1_max or r["type1_certification"] > type1_max
            or r["coverage_two_sided"] < coverage_min
        ]
        smooth = [r for r in sub if r["distance_to_kink_sd"] >= 4.0]
        out["schemes"][scheme] = {
            "max_type1_delta_test": worst_delta["type1_delta_test"],
            "max_type1_delta_test_at": where(worst_delta),
            "max_type1_certification": worst_cert["type1_certification"],
            "max_type1_certification_at": where(worst_cert),
            "min_coverage_two_sided": worst_cov["coverage_two_sided"],
            "min_coverage_two_sided_at": where(worst_cov),
            "n_cells": len(sub),
            "cells_missing_level": misses,
            "holds_level_everywhere": not misses,
            "mean_power": {
                f"{test}_{k}se": float(np.mean([r[f"power_{test}_{k}se"] for r in sub]))
                for test in ("delta_test", "certification") for k in POWER_STEPS
            },
            "mean_power_at_least_4sd_from_kinks": {
                f"{test}_{k}se": float(np.mean([r[f"power_{test}_{k}se"] for r in smooth]))
                for test in ("delta_test", "certification") for k in POWER_STEPS
            } if smooth else None,
        }
    if "uniform" in schemes:
        widths = {}
        for scheme in schemes:
            if scheme == "uniform":
                continue
            ratios = [
                u["mean_width_two_sided"] / r["mean_width_two_sided"]
                for u, r in zip(
                    [x for x in rows if x["scheme"] == "uniform"],
                    [x for x in rows if x["scheme"] == scheme], strict=True,
                )
            ]
            widths[scheme] = {"median": float(np.median(ratios)), "min": float(np.min(ratios)),
                              "max": float(np.max(ratios))}
        out["width_ratio_uniform_over"] = widths
    first = [r for r in rows if r["scheme"] == schemes[0]]
    at_kink = [r for r in first if r["instance"] in kink_instances and r["offset_sd"] == 0.0]
    at_kink_5000 = [r for r in at_kink if r["n"] == 5000]
    far = [r for r in first if r["distance_to_kink_sd"] >= 4.0]
    out["near_kink"] = {
        "at_exact_kink_n5000_min_rate": (
            min(r["near_kink_rate"] for r in at_kink_5000) if at_kink_5000 else None),
        "at_exact_kink_min_rate_any_n": (
            min(r["near_kink_rate"] for r in at_kink) if at_kink else None),
        "at_least_4sd_from_every_kink_max_rate": (
            max(r["near_kink_rate"] for r in far) if far else None),
        "at_least_4sd_cells": len(far),
        "required": {"at_exact_kink_n5000": 0.8, "at_least_4sd_from_every_kink": 0.1},
    }
    nk = out["near_kink"]
    nk["holds"] = bool(
        nk["at_exact_kink_n5000_min_rate"] is not None
        and nk["at_exact_kink_n5000_min_rate"] >= 0.8
        and nk["at_least_4sd_from_every_kink_max_rate"] is not None
        and nk["at_least_4sd_from_every_kink_max_rate"] <= 0.1
    )
    return out


def audit_cells(cases, cells, keyed_seeds, schemes, reps, n_resamples, n_jobs):
    """Run ``reps`` audits of every requested cell; ``{key: (bounds, near)}``.

    ``keyed_seeds`` maps ``(instance, n, offset_sd)`` to the cell's ``SeedSequence``; each
    repetition gets one of its children, so results depend neither on ``n_jobs`` nor on the
    chunking."""
    by_name = {c["name"]: c for c in cases}
    tasks, keys = [], []
    for key, cell_seed in keyed_seeds.items():
        case, cell = by_name[key[0]], cells[key]
        rep_seeds = cell_seed.spawn(reps)
        for first in range(0, reps, CHUNK):
            keys.append(key)
            tasks.append(delayed(run_chunk)(
                case["problem"], case["f_star"], key[1], cell["epsilon"], schemes,
                rep_seeds[first:first + CHUNK], n_resamples,
            ))
    parts = Parallel(n_jobs=n_jobs, verbose=0)(tasks)
    collected = {}
    for key, part in zip(keys, parts, strict=True):
        collected.setdefault(key, []).append(part)
    return {key: (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]))
            for key, chunks in collected.items()}


def control_cells(rows, misses, size=CONTROL_CELLS):
    """A seeded random sample of the cells where the default crossed no line, in grid order.

    Drawn with ``SeedSequence([SEED, 2])`` from the cells of the default's rows that are not
    in ``misses``: the same sample for the same grid and misses."""
    missed = {(m["instance"], m["n"], m["offset_sd"]) for m in misses}
    passed = [key for key in dict.fromkeys((r["instance"], r["n"], r["offset_sd"])
                                           for r in rows if r["scheme"] == "uniform")
              if key not in missed]
    rng = np.random.default_rng(np.random.SeedSequence([SEED, 2]))
    chosen = sorted(rng.choice(len(passed), size=min(size, len(passed)), replace=False))
    return [{"instance": passed[i][0], "n": passed[i][1], "offset_sd": passed[i][2]}
            for i in chosen]


def confirm_misses(misses, cases, cells, reps, n_resamples, n_jobs, stream=1):
    """Independent reruns, ``CONFIRM_FACTOR * reps`` repetitions each, of the cells where the
    default scheme crossed a line; each judged against the lines of its own size.

    ``stream`` names the fresh seeds, ``SeedSequence([SEED, stream])``: 1 for the misses, 3
    for the control cells of :func:`control_cells`."""
    if not misses:
        return []
    keys = [(m["instance"], m["n"], m["offset_sd"]) for m in misses]
    seeds = np.random.SeedSequence([SEED, stream]).spawn(len(keys))
    big = CONFIRM_FACTOR * reps
    found = audit_cells(cases, cells, dict(zip(keys, seeds, strict=True)), ["uniform"], big,
                        n_resamples, n_jobs)
    type1_max, coverage_min = thresholds(big)
    out = []
    for key in keys:
        bounds, near = found[key]
        row = summarize(bounds[:, 0], near, cells[key])
        holds = (row["type1_delta_test"] <= type1_max
                 and row["type1_certification"] <= type1_max
                 and row["coverage_two_sided"] >= coverage_min)
        out.append({
            "instance": key[0], "n": key[1], "offset_sd": key[2], "reps": big,
            **{k: row[k] for k in ("type1_delta_test", "se_type1_delta_test",
                                   "type1_certification", "se_type1_certification",
                                   "coverage_two_sided", "se_coverage_two_sided")},
            "type1_threshold": type1_max, "coverage_threshold": coverage_min,
            "holds": bool(holds),
        })
    return out


def print_table(rows, schemes):
    print(f"{'instance':9} {'n':>6} {'h':>5} {'near':>5} " + " ".join(
        f"{s[:10]:>10}:{'dI':>6}{'cert':>6}{'cov':>6}" for s in schemes))
    keyed = {(r["instance"], r["n"], r["offset_sd"], r["scheme"]): r for r in rows}
    for inst, n, h in dict.fromkeys((r["instance"], r["n"], r["offset_sd"]) for r in rows):
        first = keyed[(inst, n, h, schemes[0])]
        parts = []
        for s in schemes:
            r = keyed[(inst, n, h, s)]
            parts.append(f"{'':>10} {r['type1_delta_test']:6.3f}{r['type1_certification']:6.3f}"
                         f"{r['coverage_two_sided']:6.3f}")
        print(f"{inst:9} {n:>6} {h:>+5.2f} {first['near_kink_rate']:5.2f} " + " ".join(parts))


def controls_only(args, cases, cells, run):
    """The control confirmation of the committed default run, on its own.

    The same cells (:func:`control_cells` of the committed rows and misses), seeds and
    repetitions as the default run's ``control_confirmation``; written to
    ``faith_validity_controls.json`` with the command, the machine and the time it took."""
    committed = json.loads((RESULTS / "faith_validity.json").read_text())
    default = committed["summary"]["schemes"]["uniform"]
    reps, n_resamples = committed["reps"], committed["n_resamples"]
    chosen = control_cells(committed["rows"], default["cells_missing_level"])
    out = confirm_misses(chosen, cases, cells, reps, n_resamples, args.n_jobs, stream=3)
    elapsed = run.elapsed()
    for c in out:
        print(f"{c['instance']:9} {c['n']:>6} {c['offset_sd']:+5.2f}  dI "
              f"{c['type1_delta_test']:.4f}  cert {c['type1_certification']:.4f}  cov "
              f"{c['coverage_two_sided']:.4f}  holds {c['holds']}")
    meta = {
        "of_run": {k: committed[k] for k in ("command", "date", "reps", "n_resamples")},
        "seed_sample": [SEED, 2], "seed_audits": [SEED, 3],
        "n_cells_passed": default["n_cells"] - len(default["cells_missing_level"]),
        "control_cells": CONTROL_CELLS, "confirm_factor": CONFIRM_FACTOR,
        "n_jobs": args.n_jobs, "elapsed_seconds": elapsed,
        "control_confirmation": out,
        "holds": all(c["holds"] for c in out),
    }
    write_results(run, meta, suffix="_controls",
                  command="python benchmarks/bench_faith_validity.py --controls-only")
    print(f"wrote faith_validity_controls.json in {elapsed:.0f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="150 reps, B=199, offsets 0, ±1, ±4: a smoke test")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 2000)")
    parser.add_argument("--resamples", type=int, default=None, help="B (default 999)")
    parser.add_argument("--n-jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--schemes", nargs="+", default=list(DEFAULT_SCHEMES),
                        choices=ALL_SCHEMES)
    parser.add_argument("--instances", nargs="+", default=list(DEFAULT_INSTANCES),
                        help="hand, kink, gaussian, kink-strong")
    parser.add_argument("--controls-only", action="store_true",
                        help="only the control confirmation of the committed default run "
                             "(faith_validity.json): writes faith_validity_controls.json")
    args = parser.parse_args(argv)
    reps = args.reps or (150 if args.quick else 2_000)
    n_resamples = args.resamples or (199 if args.quick else 999)
    offsets = QUICK_OFFSETS if args.quick else OFFSETS
    schemes = list(args.schemes)
    cases = validity_instances(args.instances)

    run = Run(__file__, argv)
    root = np.random.SeedSequence(SEED)
    cells, cell_seeds = {}, {}
    for case, case_seed in zip(cases, root.spawn(len(cases)), strict=True):
        for n, n_seed in zip(args.sizes, case_seed.spawn(len(args.sizes)), strict=True):
            grid, kinks = grid_cells(case, n, offsets)
            for cell, cell_seed in zip(grid, n_seed.spawn(len(grid)), strict=True):
                cell["kinks"] = [{"breakpoint": p, "sd": s} for p, s in kinks]
                key = (case["name"], n, cell["offset_sd"])
                cells[key], cell_seeds[key] = cell, cell_seed
    if args.controls_only:
        controls_only(args, cases, cells, run)
        return
    collected = audit_cells(cases, cells, cell_seeds, schemes, reps, n_resamples, args.n_jobs)

    rows = []
    for key, (bounds, near) in collected.items():
        cell = cells[key]
        for k, scheme in enumerate(schemes):
            row = {"instance": key[0], "n": key[1], "scheme": scheme, "reps": reps,
                   "n_resamples": n_resamples,
                   **{c: cell[c] for c in ("offset_sd", "epsilon", "truth", "sd_epsilon",
                                           "se_star", "distance_to_kink_sd")}}
            row.update(summarize(bounds[:, k], near, cell))
            rows.append(row)
    print_table(rows, schemes)
    kink_instances = [c["name"] for c in cases if c["centre"] == "kink"]
    summary = verdicts(rows, reps, schemes, kink_instances)
    if "uniform" in schemes:
        default = summary["schemes"]["uniform"]
        default["confirmation"] = confirm_misses(default["cells_missing_level"], cases, cells,
                                                 reps, n_resamples, args.n_jobs)
        default["control_confirmation"] = confirm_misses(
            control_cells(rows, default["cells_missing_level"]), cases, cells, reps,
            n_resamples, args.n_jobs, stream=3)
        default["holds_level_after_confirmation"] = all(
            c["holds"] for c in default["confirmation"] + default["control_confirmation"])
    elapsed = run.elapsed()
    print(json.dumps(summary, indent=1))
    print(f"\n{reps} repetitions, B = {n_resamples}, {args.n_jobs} jobs: {elapsed:.0f} s")

    suffix = "_quick" if args.quick else ""
    if not args.quick and (list(args.instances) != list(DEFAULT_INSTANCES)
                           or schemes != list(DEFAULT_SCHEMES)
                           or list(args.sizes) != list(SIZES)):
        suffix += "_custom"
    meta = {
        "seed": SEED,
        "confidence_level": LEVEL,
        "reps": reps,
        "n_resamples": n_resamples,
        "n_jobs": args.n_jobs,
        "sizes": list(args.sizes),
        "offsets_sd": list(offsets),
        "schemes": schemes,
        "power_steps_se": list(POWER_STEPS),
        "elapsed_seconds": elapsed,
        "confirm_factor": CONFIRM_FACTOR,
        "instances": [
            {
                "name": c["name"],
                "n_cells": int(c["problem"].n_cells),
                "n_segments": int(c["problem"].n_segments),
                "centre": c["centre"],
                "curve_breakpoints": c["problem"].curve(c["f_star"])[0].tolist(),
            }
            for c in cases
        ],
        "cells": [{"instance": k[0], "n": k[1], **v} for k, v in cells.items()],
        "summary": summary,
        "rows": rows,
    }
    write_results(run, meta, suffix=suffix, rows=rows)


if __name__ == "__main__":
    main()
