"""Speed and memory of the FaiTH audit on a reference set (continuous features).

Synthetic audits: 5 continuous features and a binary protected attribute, a logistic
regression that uses both, ``metric="protected_euclidean"``, ε = 0.05, the 0-1 loss, a
45,000-row reference set (the rows the auditor is fit on), ``method="uniform"`` with
B = 1,000; n = 10⁴, 10⁵ and 10⁶ audit rows. Each configuration runs in a fresh process, which
reports

* ``fit`` (model and metric), ``audit_value`` (sample space, losses, transport problem, ψ̂)
  and ``audit`` (the same plus the max-t bootstrap) wall times, and its peak resident memory;
* the floor every audit row needs: a ``scipy.spatial.cKDTree`` query (k = 1) of the same rows,
  mapped by the fitted metric, against the reference points (each with both protected
  levels), timed in the same process; ``value / floor`` is the per-row cost of the
  construction in units of that query.

And UCI Adult in full (continuous columns, sex and race codes protected, the training file as
the reference set, the 45,222 complete rows audited, B = 1,000). The machine may be shared:
the load average at the start and the end is recorded; ratios come from one process.

Output: ``benchmarks/results/faith_reference_speed.json``. Run from the repository root::

    python benchmarks/bench_faith_reference_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
from _common import Run, write_results

N_REFERENCE = 45_000
N_RESAMPLES = 1_000
TARGETS = {"million_seconds": 30.0, "million_gib": 1.5, "floor_ratio": 3.0,
           "adult_seconds": 5.0}


def _draw(n, seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n).astype(float)
    X = np.column_stack([group, rng.normal(size=(n, 5))])
    logit = X[:, 1] + 0.5 * X[:, 2] - 0.3 * X[:, 3] + 0.8 * group - 0.3
    return X, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)


def _peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def child_synthetic(n):
    from scipy.spatial import cKDTree
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import FaithAuditor

    X_ref, y_ref = _draw(N_REFERENCE, 0)
    X, y = _draw(n, 1)
    auditor = FaithAuditor(LogisticRegression(), protected=[0], metric="protected_euclidean",
                           epsilon=0.05, n_resamples=N_RESAMPLES, random_state=0)
    start = time.perf_counter()
    auditor.fit(X_ref, y_ref)
    fit = time.perf_counter() - start
    auditor.audit_value(X[:500], y[:500])  # warm-up: lazy imports
    start = time.perf_counter()
    value = auditor.audit_value(X, y)
    value_seconds = time.perf_counter() - start
    start = time.perf_counter()
    result = auditor.audit(X, y)
    audit_seconds = time.perf_counter() - start
    # The floor: one nearest-neighbour query per audit row against the reference points.
    reference = np.concatenate([np.column_stack([np.full(N_REFERENCE, g), X_ref[:, 1:]])
                                for g in (0.0, 1.0)])
    mapped_reference = auditor.metric_.transform(reference)
    start = time.perf_counter()
    tree = cKDTree(mapped_reference)
    tree.query(auditor.metric_.transform(X), k=1)
    floor = time.perf_counter() - start
    return {
        "n": n, "n_reference": N_REFERENCE, "n_cells": result.n_cells, "fit_seconds": fit,
        "value_seconds": value_seconds, "audit_seconds": audit_seconds,
        "floor_seconds": floor, "value_over_floor": value_seconds / floor,
        "audit_over_floor": audit_seconds / floor,
        "bootstrap_seconds": audit_seconds - value_seconds,
        "peak_gib": _peak_gib(), "statistic": result.statistic, "value": value,
    }


def child_adult(_):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skfair_audit.datasets import fetch_adult
    from skfair_audit.faith import FaithAuditor

    full = fetch_adult(dropna=True, download_if_missing=False)
    columns = ["age", "education-num", "hours-per-week", "capital-gain", "capital-loss"]
    X = full.data[columns].astype(float)
    X["sex"] = (full.data["sex"] == "Male").astype(float)
    X["race"] = full.sensitive["race"].cat.codes.astype(float)
    y = full.target.to_numpy()
    n_train = len(fetch_adult(subset="train", dropna=True, download_if_missing=False).target)
    auditor = FaithAuditor(make_pipeline(StandardScaler(), LogisticRegression()),
                           protected=["sex", "race"], n_resamples=N_RESAMPLES, random_state=0)
    start = time.perf_counter()
    auditor.fit(X.iloc[:n_train], y[:n_train])
    fit = time.perf_counter() - start
    auditor.audit_value(X.iloc[:200], y[:200])
    start = time.perf_counter()
    result = auditor.audit(X, y)
    audit_seconds = time.perf_counter() - start
    return {"n": len(X), "n_reference": len(auditor.reference_), "n_cells": result.n_cells,
            "fit_seconds": fit, "audit_seconds": audit_seconds, "peak_gib": _peak_gib(),
            "statistic": result.statistic}


CHILDREN = {"synthetic": child_synthetic, "adult": child_adult}


def run_child(kind, n):
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(n)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n up to 10^5, no Adult")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, n = args.child
        print(json.dumps(CHILDREN[kind](int(n))))
        return
    run = Run(__file__, argv)
    sizes = (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    rows = []
    for n in sizes:
        rows.append(run_child("synthetic", n))
        print(json.dumps(rows[-1]), flush=True)
    adult = None if args.quick else run_child("adult", 0)
    if adult:
        print(json.dumps(adult), flush=True)
    million = next((r for r in rows if r["n"] == 1_000_000), None)
    checks = {}
    if million:
        checks["million"] = {
            "seconds": million["audit_seconds"], "peak_gib": million["peak_gib"],
            "met": bool(million["audit_seconds"] <= TARGETS["million_seconds"]
                        and million["peak_gib"] <= TARGETS["million_gib"]),
            "value_over_floor": million["value_over_floor"],
            "floor_met": bool(million["value_over_floor"] <= TARGETS["floor_ratio"]),
        }
    if adult:
        checks["adult"] = {"seconds": adult["audit_seconds"],
                           "met": bool(adult["audit_seconds"] <= TARGETS["adult_seconds"])}
    payload = {
        "quick": args.quick,
        "settings": {"n_reference": N_REFERENCE, "n_resamples": N_RESAMPLES,
                     "epsilon": 0.05, "metric": "protected_euclidean"},
        "targets": TARGETS, "scaling": rows, "adult": adult, "checks": checks,
    }
    print(f"wrote {write_results(run, payload, suffix='_quick' if args.quick else '')}")


if __name__ == "__main__":
    main()
