"""FaiTH at real-data scale: time and peak memory of the audit, nearest-neighbour vs dense path.

Usage::

    python benchmarks/bench_faith_scale.py            # the full run (~15 min on 2 cores)
    python benchmarks/bench_faith_scale.py --quick    # a smoke run; writes nothing by default

Writes ``benchmarks/results/faith_scale.json``. Every configuration runs in a **fresh child
process** (this script with ``--child``), which reports its own wall times and its peak
resident set size (``getrusage``: the whole process, imports and data included), so that one
configuration's memory never leaks into another's. The machine's load average is recorded
before and after each configuration: timings taken while other jobs load the machine are
noisy, and the ratios between the two paths (measured in the same run) are the robust figures.

Configurations
--------------
1. **Scaling** (synthetic): ``n`` audit rows with 5 continuous features and one binary
   protected attribute; a logistic regression and the default sensitive-subspace metric fitted
   on 20,000 other rows; ``FaithAuditor(space="empirical")``, 0-1 loss, ε = 0.1, the
   library's default inference (``method="uniform"``) with B = 1,000. The sample space has
   ``K = 4n`` cells (every row in both groups, times two labels). Two paths side by side:

   * ``nearest``: the audit as shipped (:func:`prepare_metric_transport`, ``O(K)`` memory);
   * ``dense``: the generic path on the same space, losses and counts: the metric's dense
     ``K x K`` cost matrix, :func:`forbidden_moves`, then :func:`faith_audit` (what every audit
     did before the nearest-neighbour path). It runs while its estimated working set
     (:func:`dense_transport_bytes` plus the cost and forbidden matrices) stays under
     ``--dense-limit``; beyond, the row records the memory it would need.

   Per row: fit time (model + metric), ``audit_value`` time (space, losses, counts, transport
   problem, ψ), full ``audit`` time, bootstrap seconds per replicate
   (``(audit - audit_value) / B``), peak RSS, the statistic (the two paths must agree). The
   same for the log-loss (many distinct loss values: the level tree) at n = 10^3 ... 10^5.
2. **UCI Adult**: all 45,222 complete rows as the audit sample; age, education-num,
   hours-per-week, capital-gain and capital-loss as numbers, sex and race (codes) protected;
   the model (standardised logistic regression) and the default metric fitted on the 30,162
   rows of the training file; empirical space; B = 1,000. Targets: audit <= 20 s and peak RSS
   <= 1 GiB (fit included in the time reported separately).
3. **10^6 rows**: the scaling configuration at ``n = 10^6``; targets <= 5 min, <= 4 GiB.
4. **Command line**: ``skfair-audit faith --space empirical`` on a 200,000-row CSV audit trail
   with continuous columns (a pickled logistic regression, ``--unsafe-pickle``; the metric
   learned on a separate 20,000-row file), run as a subprocess of a fresh child; its wall time
   and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _common import Run, dumps, write_results
from _faith_data import adult_numeric

SCRIPT = Path(__file__).resolve()
N_RESAMPLES = 1000
EPSILON = 0.1
TARGETS = {
    "adult": {"seconds": 20.0, "peak_rss_gib": 1.0},
    "million": {"seconds": 300.0, "peak_rss_gib": 4.0},
    "cli": {"seconds": 300.0, "peak_rss_gib": 4.0},
}


# --------------------------------------------------------------------------- data
def _default_method():
    """The inference method every configuration runs: the library's default."""
    from skfair_audit.faith import FaithAuditor

    return FaithAuditor(None).method


def synthetic(n, seed):
    """``n`` rows: 5 continuous features (the first shifted by the group), a binary group."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n).astype(float)
    Z = rng.normal(size=(n, 5))
    Z[:, 0] += 0.5 * group
    X = np.column_stack([Z, group])
    logit = Z @ np.array([1.0, -0.5, 0.3, 0.0, 0.2]) + 0.8 * group
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return X, y


# --------------------------------------------------------------------------- children
def _peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _timed(function, *args):
    start = time.perf_counter()
    out = function(*args)
    return out, time.perf_counter() - start


def child_nearest(n, seed, loss="zero_one"):
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import FaithAuditor

    X_train, y_train = synthetic(20_000, seed + 1)
    X, y = synthetic(n, seed)
    baseline = _peak_rss_mib()
    auditor = FaithAuditor(LogisticRegression(), space="empirical", protected=[5], loss=loss,
                           epsilon=EPSILON, n_resamples=N_RESAMPLES, random_state=0)
    _, fit = _timed(auditor.fit, X_train, y_train)
    auditor.audit_value(X[:200], y[:200])  # warm-up: lazy imports, first tree
    value, value_seconds = _timed(auditor.audit_value, X, y)
    result, audit = _timed(auditor.audit, X, y)
    return {
        "n": n, "path": "nearest", "loss": loss, "n_cells": result.n_cells, "fit_seconds": fit,
        "value_seconds": value_seconds, "audit_seconds": audit,
        "bootstrap_seconds_per_replicate": max(audit - value_seconds, 0.0) / N_RESAMPLES,
        "statistic": result.statistic, "statistic_without_bootstrap": value,
        "lower_bound": result.lower_bound, "rss_after_imports_mib": baseline,
        "peak_rss_mib": _peak_rss_mib(),
    }


def child_dense(n, seed, loss="zero_one"):
    from sklearn.linear_model import LogisticRegression

    from skfair_audit.faith import EmpiricalSpace, FaithAuditor, faith_audit, forbidden_moves

    X_train, y_train = synthetic(20_000, seed + 1)
    X, y = synthetic(n, seed)
    baseline = _peak_rss_mib()
    auditor = FaithAuditor(LogisticRegression(), space="empirical", protected=[5])
    _, fit = _timed(auditor.fit, X_train, y_train)
    with warnings.catch_warnings():  # warm-up (lazy imports) on a tiny sample
        warnings.simplefilter("ignore")
        faith_audit(np.array([1, 1]), np.array([0.0, 1.0]), np.eye(2)[::-1], epsilon=1.0,
                    n_resamples=10)
    start = time.perf_counter()
    space = EmpiricalSpace.from_data(X, y, protected=[5], classes=auditor.classes_,
                                     protected_levels={5: [0.0, 1.0]}, max_cells=None)
    counts = space.counts(X, y)
    queries = space.query_frame()
    if loss == "zero_one":
        predictions = auditor.estimator_.predict(queries)
        cell_loss = (predictions[space.feature_cell_index] != space.cell_labels).astype(float)
    else:  # the log-loss, as FaithAuditor computes it
        proba = auditor.estimator_.predict_proba(queries)[space.feature_cell_index]
        column = np.searchsorted(auditor.classes_, space.cell_labels)
        cell_loss = -np.log(np.clip(proba[np.arange(column.size), column], 1e-15, 1.0))
    cost = auditor.metric_.cost_matrix(space.encoded_features())
    forbidden = forbidden_moves(space)
    setup = time.perf_counter() - start
    result, audit = _timed(
        lambda: faith_audit(counts, cell_loss, cost, forbidden=forbidden, epsilon=EPSILON,
                            n_resamples=N_RESAMPLES, random_state=0, memory_limit=None)
    )
    # The bootstrap alone: the same replicates on the prepared problem.
    from skfair_audit.faith import prepare_transport

    problem, prepare = _timed(lambda: prepare_transport(cell_loss, cost, forbidden,
                                                        memory_limit=None))
    return {
        "n": n, "path": "dense", "loss": loss, "n_cells": result.n_cells, "fit_seconds": fit,
        "value_seconds": setup + prepare, "audit_seconds": setup + audit,
        "bootstrap_seconds_per_replicate": max(audit - prepare, 0.0) / N_RESAMPLES,
        "statistic": result.statistic, "lower_bound": result.lower_bound,
        "rss_after_imports_mib": baseline, "peak_rss_mib": _peak_rss_mib(),
    }


def child_adult(sample):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skfair_audit.faith import FaithAuditor

    X, y, n_train = adult_numeric()
    if sample:
        keep = np.random.default_rng(0).choice(len(X), sample, replace=False)
        X, y = X.iloc[np.sort(keep)], y[np.sort(keep)]
        n_train = len(X) // 2
    baseline = _peak_rss_mib()
    auditor = FaithAuditor(
        make_pipeline(StandardScaler(), LogisticRegression()), space="empirical",
        protected=["sex", "race"], n_resamples=N_RESAMPLES, random_state=0,
    )
    _, fit = _timed(auditor.fit, X.iloc[:n_train], y[:n_train])
    auditor.audit_value(X.iloc[:200], y[:200])  # warm-up: lazy imports, first tree
    value, value_seconds = _timed(auditor.audit_value, X, y)
    result, audit = _timed(auditor.audit, X, y)
    return {
        "n": len(X), "n_train": n_train, "n_cells": result.n_cells, "fit_seconds": fit,
        "value_seconds": value_seconds, "audit_seconds": audit,
        "bootstrap_seconds_per_replicate": max(audit - value_seconds, 0.0) / N_RESAMPLES,
        "statistic": result.statistic, "statistic_without_bootstrap": value,
        "confidence_interval": list(result.confidence_interval()),
        "metric": type(auditor.metric_).__name__,
        "rss_after_imports_mib": baseline, "peak_rss_mib": _peak_rss_mib(),
    }


def child_cli(n_rows):
    """Write the trail, the metric data and the model; time the command as a subprocess."""
    import pickle

    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    columns = ["group", "x1", "x2", "x3", "x4", "x5"]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        X_train, y_train = synthetic(20_000, 11)
        X, y = synthetic(n_rows, 12)
        train = pd.DataFrame(np.round(X_train[:, [5, 0, 1, 2, 3, 4]], 4), columns=columns)
        trail = pd.DataFrame(np.round(X[:, [5, 0, 1, 2, 3, 4]], 4), columns=columns)
        train.assign(label=y_train).to_csv(folder / "train.csv", index=False)
        trail.assign(label=y).to_csv(folder / "trail.csv", index=False)
        model = LogisticRegression().fit(train, y_train)
        with open(folder / "model.pkl", "wb") as f:
            pickle.dump(model, f)
        command = [
            sys.executable, "-m", "skfair_audit", "faith", "--model", str(folder / "model.pkl"),
            "--unsafe-pickle", "--data", str(folder / "trail.csv"),
            "--metric-data", str(folder / "train.csv"), "--label", "label",
            "--features", *columns, "--protected", "group", "--space", "empirical",
            "--epsilon", str(EPSILON), "--delta", "0.05",
            "--n-resamples", str(N_RESAMPLES), "--json", "--quiet",
        ]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr[-2000:])
    payload = json.loads(done.stdout)
    return {
        "n": n_rows, "n_cells": payload["n_cells"], "seconds": seconds,
        "statistic": payload["statistic"], "exit_code": done.returncode,
        "command": " ".join(["skfair-audit", *command[3:]]).replace(str(folder), "<tmp>"),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
    }


CHILDREN = {"nearest": child_nearest, "dense": child_dense, "adult": child_adult,
            "cli": child_cli}


def run_child(kind, *args, timeout=3600):
    """Run one configuration in a fresh interpreter; its JSON report (or the failure)."""
    before = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--child", json.dumps([kind, *args])],
        capture_output=True, text=True, timeout=timeout,
    )
    wall = time.perf_counter() - start
    after = os.getloadavg()
    if done.returncode != 0:
        report = {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    else:
        report = json.loads(done.stdout.strip().splitlines()[-1])
    report.update(child_wall_seconds=wall, load_average_before=list(before),
                  load_average_after=list(after))
    print(f"  {kind} {args}: {json.dumps(report)}", flush=True)
    return report


# --------------------------------------------------------------------------- the run
def dense_bytes(n):
    from skfair_audit.faith._solver import dense_transport_bytes

    n_cells = 4 * n
    # prepare_transport's working set, plus the cost matrix and forbidden mask it is given.
    return dense_transport_bytes(n_cells) + 9 * n_cells**2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes; writes nothing")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--dense-limit", type=float, default=4.0,
                        help="GiB the dense path may use (default 4)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, *child_args = json.loads(args.child)
        print(json.dumps(CHILDREN[kind](*child_args)))
        return 0

    sizes = [1_000, 2_000, 10_000] if args.quick else [
        1_000, 2_000, 10_000, 30_000, 100_000, 300_000, 1_000_000
    ]
    run = Run(__file__, argv)
    print(f"load average at start: {run.load_average_start}")

    log_sizes = [1_000, 3_000] if args.quick else [1_000, 10_000, 100_000]
    scaling = []
    for loss, n in [("zero_one", n) for n in sizes] + [("log_loss", n) for n in log_sizes]:
        nearest = run_child("nearest", n, 0, loss)
        scaling.append(nearest)
        needed = dense_bytes(n)
        if needed <= args.dense_limit * 2**30:
            dense = run_child("dense", n, 0, loss)
            if "statistic" in dense and "statistic" in nearest:
                dense["statistic_difference"] = abs(dense["statistic"] - nearest["statistic"])
                dense["time_ratio_dense_to_nearest"] = (
                    dense["audit_seconds"] / nearest["audit_seconds"]
                )
                dense["memory_ratio_dense_to_nearest"] = (
                    dense["peak_rss_mib"] / nearest["peak_rss_mib"]
                )
        else:
            dense = {"error": "does not fit"}
        dense.update(n=n, path="dense", loss=loss, estimated_bytes=needed)
        scaling.append(dense)

    adult = run_child("adult", 5_000 if args.quick else 0)
    cli = run_child("cli", 5_000 if args.quick else 200_000)
    million = next((row for row in scaling if row.get("path") == "nearest"
                    and row["n"] == max(sizes) and row.get("loss") == "zero_one"), None)

    def verdict(row, seconds_key, target):
        if not row or "peak_rss_mib" not in row:
            return None
        return {
            "seconds": row[seconds_key], "target_seconds": target["seconds"],
            "peak_rss_gib": row["peak_rss_mib"] / 1024.0,
            "target_peak_rss_gib": target["peak_rss_gib"],
            "holds": bool(row[seconds_key] <= target["seconds"]
                          and row["peak_rss_mib"] / 1024.0 <= target["peak_rss_gib"]),
        }

    results = {
        "quick": args.quick,
        "settings": {
            "n_resamples": N_RESAMPLES, "epsilon": EPSILON, "method": _default_method(),
            "loss": "zero_one", "metric": "sensitive_subspace (default)",
            "dense_limit_gib": args.dense_limit,
            "synthetic": "5 continuous features (first shifted by the group) + binary group; "
                         "K = 4n cells; model and metric fitted on 20,000 other rows",
        },
        "scaling": scaling,
        "adult": adult,
        "cli": cli,
        "checks": {
            "adult": verdict(adult, "audit_seconds", TARGETS["adult"]),
            "million": verdict(million, "audit_seconds", TARGETS["million"])
            if million and million["n"] == 1_000_000 else None,
            "cli": verdict(cli, "seconds", TARGETS["cli"]),
        },
    }
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(dumps({**run.metadata(), **results}), encoding="utf-8")
        print(f"wrote {args.output}")
    elif not args.quick:
        print(f"wrote {write_results(run, results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
