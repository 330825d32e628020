"""Speed and memory of the FaiTH audit on a reference set (continuous features).

Synthetic audits: 5 continuous features and a binary protected attribute, a logistic
regression that uses both, ``metric="protected_euclidean"``, ε = 0.05, the 0-1 loss, a
45,000-row reference set (the rows the auditor is fit on), ``method="uniform"`` with
B = 1,000; n = 10⁴, 10⁵ and 10⁶ audit rows. Each configuration runs in a fresh process, which
reports

* ``fit`` (model and metric), ``audit_value`` (sample space, losses, transport problem, ψ̂)
  and ``audit`` (the same plus the max-t bootstrap) wall times with ``n_jobs=1``, the
  ``audit`` again with ``n_jobs=2`` (checked bit-identical), and its peak resident memory;
* the floor every audit row needs: a ``scipy.spatial.cKDTree`` query (k = 1) of the same rows,
  mapped by the fitted metric, against the reference points (each with both protected
  levels), timed in the same process; ``value / floor`` is the per-row cost of the
  construction in units of that query.

And UCI Adult in full (continuous columns, sex and race codes protected, the training file as
the reference set, the 45,222 complete rows audited, B = 1,000). And the scale-out: 10⁷ audit
rows (the same law) in partitions of 500,000 on a Dask ``LocalCluster`` of 2 worker processes,
``partitioned_faith_audit`` against ``FaithAuditor.audit`` on the first 10⁶ rows in memory
(bit-identical there, and the throughput ratio in rows per second). The machine may be shared:
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
           "adult_seconds": 5.0, "dask_throughput_ratio": 1.5}
DASK_ROWS = 10_000_000


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
    peak = _peak_gib()  # the n_jobs=1 audit's peak (and everything before it)
    # Both cores: nearest-neighbour threads and bootstrap batches (the same bits).
    start = time.perf_counter()
    two = auditor.set_params(n_jobs=2).audit(X, y)
    two_jobs_seconds = time.perf_counter() - start
    same = bool(two.statistic == result.statistic and two.upper_bound == result.upper_bound
                and np.array_equal(two.bootstrap_distribution, result.bootstrap_distribution))
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
        "audit_seconds_two_jobs": two_jobs_seconds, "two_jobs_identical": same,
        "peak_gib": peak, "peak_gib_two_jobs": _peak_gib(),
        "statistic": result.statistic, "value": value,
    }


def _partition(index, rows):
    """Audit rows of one partition of the scale-out trail (seeded by its index)."""
    import pandas as pd

    X, y = _draw(rows, 1000 + index)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["y"] = y
    return frame


def child_dask(total):
    """10^7 rows in partitions on a 2-worker LocalCluster against the in-memory audit."""
    import dask
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import FaithAuditor
    from skfair_audit.scale import partitioned_faith_audit

    partition_rows = min(500_000, total // 4)
    n_parts = total // partition_rows
    X_ref, y_ref = _draw(N_REFERENCE, 0)
    columns = [f"x{j}" for j in range(X_ref.shape[1])]
    # Both paths use both cores for the construction's chunks and the bootstrap batches.
    auditor = FaithAuditor(LogisticRegression(), protected=["x0"],
                           metric="protected_euclidean", epsilon=0.05, n_jobs=2,
                           n_resamples=N_RESAMPLES, random_state=0, memory_limit="20GiB")
    auditor.fit(pd.DataFrame(X_ref, columns=columns), y_ref)
    meta = _partition(0, 2).iloc[:0]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        parts = [dask.delayed(_partition)(i, partition_rows) for i in range(n_parts)]
        trail = dd.from_delayed(parts, meta=meta).persist()
        subset_parts = max(1, 1_000_000 // partition_rows)
        subset = trail.partitions[:subset_parts]
        local = subset.compute()
        start = time.perf_counter()
        in_memory = auditor.audit(local.drop(columns=["y"]), local["y"].to_numpy())
        in_memory_seconds = time.perf_counter() - start
        on_dask = partitioned_faith_audit(subset, auditor, label="y")
        identical = bool(
            on_dask.statistic == in_memory.statistic
            and on_dask.upper_bound == in_memory.upper_bound
            and on_dask.lower_bound == in_memory.lower_bound
            and np.array_equal(on_dask.bootstrap_distribution,
                               in_memory.bootstrap_distribution))
        start = time.perf_counter()
        full = partitioned_faith_audit(trail, auditor, label="y")
        dask_seconds = time.perf_counter() - start
    per_row_memory = in_memory_seconds / len(local)
    per_row_dask = dask_seconds / total
    return {
        "rows": total, "partitions": n_parts, "partition_rows": partition_rows,
        "workers": 2, "subset_rows": len(local), "bit_identical_on_subset": identical,
        "in_memory_seconds": in_memory_seconds, "dask_seconds": dask_seconds,
        "rows_per_second_in_memory": 1 / per_row_memory,
        "rows_per_second_dask": 1 / per_row_dask,
        "throughput_ratio": per_row_dask / per_row_memory,
        "statistic": full.statistic, "confidence_interval": [full.lower_bound,
                                                             full.upper_bound],
        "n_cells": full.n_cells, "peak_gib": _peak_gib(),
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


CHILDREN = {"synthetic": child_synthetic, "adult": child_adult, "dask": child_dask}


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
    dask = run_child("dask", 1_000_000 if args.quick else DASK_ROWS)
    print(json.dumps(dask), flush=True)
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
    checks["dask"] = {"bit_identical_on_subset": dask["bit_identical_on_subset"],
                      "throughput_ratio": dask["throughput_ratio"],
                      "met": bool(dask["bit_identical_on_subset"] and dask["throughput_ratio"]
                                  <= TARGETS["dask_throughput_ratio"])}
    payload = {
        "quick": args.quick,
        "settings": {"n_reference": N_REFERENCE, "n_resamples": N_RESAMPLES,
                     "epsilon": 0.05, "metric": "protected_euclidean"},
        "targets": TARGETS, "scaling": rows, "adult": adult, "dask": dask,
        "checks": checks,
    }
    print(f"wrote {write_results(run, payload, suffix='_quick' if args.quick else '')}")


if __name__ == "__main__":
    main()
