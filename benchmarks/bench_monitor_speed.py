"""Speed and state size of the fairness monitor; a Dask batch equals the rows in memory.

Usage::

    python benchmarks/bench_monitor_speed.py [--rows 10000000] [--batch 10000]
        [--dask-batches 20] [--seed 20261203]

A stream of ``--rows`` rows in batches of ``--batch``: three protected columns A (2 levels),
B (3) and C (5) as strings, 0/1 outcome and prediction; metric FPR, target the overall rate.
All intersections (2 + 3 + 5 + 6 + 10 + 15 + 30 = 71 groups) plus the overall rate: 72
confidence sequences. For every batch, in the same loop and alternating, the script times

* a pandas groupby-count of the batch over the three protected columns (the floor: counting
  the batch), and
* ``FairnessMonitor.partial_fit(batch)`` (counting, metric, labels, levels, the update of every
  stream's capital on the grid, the CSs, flags and e-values),

and reports the medians and totals and their ratio. The state is saved once at the end and
its file size reported. The first ``--dask-batches`` batches are also folded into a second
monitor as Dask DataFrames of 4 partitions: every array of the two states must be equal bit
for bit. Writes ``benchmarks/results/monitor_speed.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import Run, write_results  # noqa: E402

from skfair_audit.monitor import FairnessMonitor  # noqa: E402

LEVELS = {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"], "C": [f"c{j}" for j in range(5)]}
STATE_ARRAYS = ("_log_up", "_log_down", "_n", "_k", "_low", "_high", "_max_log_e", "_since",
                "_weights")


def make_batch(rng, n):
    data = {k: np.asarray(v, dtype=object)[rng.integers(0, len(v), n)]
            for k, v in LEVELS.items()}
    data["y"] = rng.integers(0, 2, n)
    data["y_pred"] = (rng.random(n) < 0.2 + 0.3 * data["y"]).astype(int)
    return pd.DataFrame(data)


def monitor():
    return FairnessMonitor(list(LEVELS), metric="fpr", levels=LEVELS, target="overall",
                           epsilon0=0.05)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--dask-batches", type=int, default=20)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--output", default="monitor_speed")
    args = parser.parse_args(argv)
    run = Run(__file__, argv)
    rng = np.random.default_rng(args.seed)
    mon = monitor()
    n_batches = args.rows // args.batch
    t_groupby, t_update = [], []
    start = time.perf_counter()
    for _ in range(n_batches):
        batch = make_batch(rng, args.batch)
        t0 = time.perf_counter()
        batch.groupby(list(LEVELS), observed=True).size()
        t1 = time.perf_counter()
        mon.partial_fit(batch)
        t2 = time.perf_counter()
        t_groupby.append(t1 - t0)
        t_update.append(t2 - t1)
    elapsed = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "state.npz"
        mon.save(path)
        state_bytes = path.stat().st_size
    t_groupby, t_update = np.asarray(t_groupby), np.asarray(t_update)
    # Dask batches equal the rows in memory, bit for bit
    dask_equal = None
    if args.dask_batches:
        import dask.dataframe as dd

        rng = np.random.default_rng([args.seed, 1])
        a, b = monitor(), monitor()
        for _ in range(args.dask_batches):
            batch = make_batch(rng, args.batch)
            a.partial_fit(batch)
            b.partial_fit(dd.from_pandas(batch, npartitions=4))
        dask_equal = all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True)
                         for k in STATE_ARRAYS)
    res = mon.result()
    out = {
        "rows": n_batches * args.batch, "batch": args.batch, "batches": n_batches,
        "groups": len(res.names), "streams": len(mon.names_),
        "grid_size": mon.grid_size,
        "median_seconds_groupby_count": float(np.median(t_groupby)),
        "median_seconds_update": float(np.median(t_update)),
        "ratio_median_update_to_groupby": float(np.median(t_update) / np.median(t_groupby)),
        "total_seconds_groupby_count": float(t_groupby.sum()),
        "total_seconds_update": float(t_update.sum()),
        "ratio_total_update_to_groupby": float(t_update.sum() / t_groupby.sum()),
        "p90_ratio_per_batch": float(np.quantile(t_update / t_groupby, 0.9)),
        "state_file_bytes": state_bytes,
        "dask_batches_checked": args.dask_batches,
        "dask_bit_identical": dask_equal,
        "flagged_at_end": int(res.flagged.sum()),
        "elapsed_seconds": elapsed,
    }
    write_results(run, out, name=args.output)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
