"""Scaling out the group audit on Dask: time, memory per worker, Poisson vs multinomial.

Usage::

    python benchmarks/bench_scale_dask.py [--quick] [--rows 10000000] [--partition-rows 500000]
                                          [--resamples 1000] [--workers 2] [--seed 20240601]

Design: a synthetic audit trail, generated partition by partition *on the workers*
(``dask.dataframe.from_map``; partition ``p`` is drawn from ``SeedSequence([seed, p])`` and its
rows carry the global ids ``p * partition_rows + 0, 1, ...`` as index). Attributes race
(4 levels, categorical) × age (3) × sex (2): all intersections up to depth 3 = 59 groups.
Binary metric: the error rate (every row is in the audit sample), target the overall error
rate (re-estimated in every replicate), rescaled two-sided bounds, ``alpha = 0.1``,
``B = resamples``.

Measurements

1. Cluster run: :func:`skfair_audit.scale.partitioned_certify_bounds` on ``rows`` rows over a
   ``LocalCluster`` of ``workers`` processes (1 thread each, loopback). Wall time, and the
   peak resident memory (RSS) of every worker process, sampled every 0.25 s through
   ``client.run`` while the audit runs.
2. Per-partition memory: ``tracemalloc`` peak (numpy registers its buffers) of generating and
   summarising one partition, in this process.
3. In memory, 10^6 rows: :func:`skfair_audit.group.certify_bounds` (multinomial bootstrap
   over atoms) and the Poisson path on a single pandas frame (same code, one process). The
   ratio ``cluster time / in-memory time`` is reported for both.
4. Agreement: on the 10^6-row trail, critical values of the Poisson and multinomial
   bootstraps over ``n_seeds`` seeds each: means, standard deviations (Monte Carlo error) and
   the z-score of their difference; largest difference of the lower bounds in units of the
   mean bound half-width.
5. Extrapolation to 10^9 rows on 100 workers, assuming the work is linear in rows × B (it is:
   one hash per row and replicate), the measured per-worker throughput (row-replicates per
   second) holds per worker, partitions of ``partition_rows`` rows (memory per worker does not
   depend on the total), and a tree reduction of ``atoms × B`` integer summaries (fan-in 8).

Writes ``benchmarks/results/scale_dask.json`` (``--quick``: ``scale_dask_quick.json``).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ATTRS = ["race", "age", "sex"]
RACES = ["A", "B", "C", "D"]
AGES = ["<25", "25-45", ">45"]
SEXES = ["F", "M"]


def make_partition(part, *, rows, seed):
    """Partition ``part`` of the synthetic trail (global row ids as index)."""
    import pandas as pd

    rng = np.random.default_rng(np.random.SeedSequence([seed, part]))
    race = rng.choice(4, rows, p=[0.5, 0.25, 0.15, 0.10])
    age = rng.choice(3, rows, p=[0.2, 0.5, 0.3])
    sex = rng.choice(2, rows)
    y = rng.integers(0, 2, rows, dtype=np.int8)
    error = 0.12 + 0.04 * (race == 3) + 0.03 * (age == 0) + 0.02 * ((race == 2) & (sex == 1))
    flip = rng.random(rows) < error
    frame = pd.DataFrame({
        "race": pd.Categorical.from_codes(race, RACES),
        "age": pd.Categorical.from_codes(age, AGES),
        "sex": pd.Categorical.from_codes(sex, SEXES),
        "y": y,
        "y_pred": np.where(flip, 1 - y, y).astype(np.int8),
    })
    frame.index = pd.RangeIndex(part * rows, (part + 1) * rows)
    return frame


def audit_kwargs(resamples, seed):
    return dict(label="y", prediction="y_pred", attributes=ATTRS, metric="error_rate",
                target="overall", alternative="two-sided", alpha=0.1,
                n_resamples=resamples, random_state=seed)


def _rss():
    import psutil

    return psutil.Process().memory_info().rss


def cluster_run(args):
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from skfair_audit.scale import partitioned_certify_bounds

    n_parts = args.rows // args.partition_rows
    meta = make_partition(0, rows=1, seed=0).iloc[:0]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None, memory_limit=0,
                      silence_logs=40) as cluster, Client(cluster) as client:
        trail = dd.from_map(make_partition, range(n_parts), rows=args.partition_rows,
                            seed=args.seed, meta=meta, enforce_metadata=False)
        baseline = client.run(_rss)
        peaks = dict(baseline)
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                try:
                    for worker, rss in client.run(_rss).items():
                        peaks[worker] = max(peaks.get(worker, 0), rss)
                except Exception:  # noqa: BLE001 - sampling must never break the run
                    pass
                stop.wait(0.25)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        res = partitioned_certify_bounds(trail, **audit_kwargs(args.resamples, args.seed))
        elapsed = time.perf_counter() - start
        stop.set()
        sampler.join()
    mib = 2.0**20
    return res, {
        "rows": args.rows,
        "partitions": n_parts,
        "partition_rows": args.partition_rows,
        "workers": args.workers,
        "threads_per_worker": 1,
        "resamples": args.resamples,
        "n_groups": len(res.names),
        "n_atoms_expected": 4 * 3 * 2 * 2,
        "elapsed_seconds": round(elapsed, 2),
        "row_replicates_per_worker_second": args.rows * args.resamples / elapsed / args.workers,
        "worker_rss_baseline_mib": {k: round(v / mib, 1) for k, v in baseline.items()},
        "worker_rss_peak_mib": {k: round(v / mib, 1) for k, v in peaks.items()},
        "critical_value": res.critical_value,
        "target": res.target,
    }


def partition_memory(args):
    from skfair_audit.group import get_metric
    from skfair_audit.scale._group import _seed, _Spec, summarize_partition

    spec = _Spec("y", "y_pred", tuple(ATTRS), get_metric("error_rate"), None,
                 _seed(args.seed), args.resamples, min(64, args.resamples))
    tracemalloc.start()
    frame = make_partition(0, rows=args.partition_rows, seed=args.seed)
    after_frame, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    summary = summarize_partition(frame, spec)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mib = 2.0**20
    return {
        "partition_rows": args.partition_rows,
        "frame_mib": round(after_frame / mib, 1),
        "summarize_peak_mib": round(peak / mib, 1),
        "summarize_extra_mib": round((peak - after_frame) / mib, 1),
        "summary_mib": round(summary.replicates.nbytes / mib, 3),
        "n_atoms": int(summary.counts.size),
        "summarize_seconds_one_process": round(elapsed, 2),
    }


def in_memory(args):
    import pandas as pd

    from skfair_audit.group import certify_bounds
    from skfair_audit.scale import partitioned_certify_bounds

    rows = args.memory_rows
    per = args.partition_rows if rows % args.partition_rows == 0 else rows
    frame = pd.concat([make_partition(p, rows=per, seed=args.seed) for p in range(rows // per)])
    out = {"rows": rows}
    start = time.perf_counter()
    certify_bounds(frame.y, frame.y_pred, frame[ATTRS], metric="error_rate", target="overall",
                   alternative="two-sided", alpha=0.1, n_resamples=args.resamples,
                   random_state=args.seed)
    out["multinomial_seconds"] = round(time.perf_counter() - start, 2)
    start = time.perf_counter()
    partitioned_certify_bounds(frame, **audit_kwargs(args.resamples, args.seed))
    out["poisson_one_process_seconds"] = round(time.perf_counter() - start, 2)

    # agreement of the two bootstraps (Monte Carlo error from independent seeds)
    crit = {"poisson": [], "multinomial": []}
    lowers = {"poisson": [], "multinomial": []}
    widths = []
    for k in range(args.n_seeds):
        seed = args.seed + 1 + k
        m = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], metric="error_rate",
                           target="overall", alternative="two-sided", alpha=0.1,
                           n_resamples=args.resamples, random_state=seed)
        p = partitioned_certify_bounds(frame, **audit_kwargs(args.resamples, seed))
        for name, r in (("multinomial", m), ("poisson", p)):
            crit[name].append(r.critical_value)
            lowers[name].append(r.lower)
        widths.append(m.estimates - m.lower)
    mean = {k: float(np.mean(v)) for k, v in crit.items()}
    sd = {k: float(np.std(v, ddof=1)) for k, v in crit.items()}
    se_diff = math.sqrt((sd["poisson"] ** 2 + sd["multinomial"] ** 2) / args.n_seeds)
    lower_gap = np.abs(np.mean(lowers["poisson"], axis=0) - np.mean(lowers["multinomial"], axis=0))
    out["agreement"] = {
        "n_seeds": args.n_seeds,
        "critical_values": crit,
        "mean": mean,
        "sd_between_seeds": sd,
        "z_difference": (mean["poisson"] - mean["multinomial"]) / se_diff if se_diff else 0.0,
        "max_lower_bound_gap_over_mean_half_width": float(
            np.max(lower_gap / np.mean(widths, axis=0))),
    }
    return out


def extrapolate(cluster, part_mem, rows=10**9, workers=100, fan_in=8):
    throughput = cluster["row_replicates_per_worker_second"]
    b = cluster["resamples"]
    compute = rows * b / (workers * throughput)
    partitions = rows // cluster["partition_rows"]
    summary_bytes = cluster["n_atoms_expected"] * b * 8
    levels = math.ceil(math.log(max(partitions, 2), fan_in))
    return {
        "rows": rows,
        "workers": workers,
        "partitions": partitions,
        "assumptions": (
            "time linear in rows x B at the measured per-worker throughput; one thread per "
            "worker; partitions of the benchmark's size (memory per worker unchanged); data "
            "read or generated where it lives (no shuffle); tree reduction of the "
            "atoms x B int64 summaries (fan-in 8); scheduler overhead and I/O not included."
        ),
        "compute_seconds": round(compute, 1),
        "compute_minutes": round(compute / 60, 2),
        "cpu_hours": round(rows * b / throughput / 3600, 2),
        "reduction_levels": levels,
        "summary_kib_per_partition": round(summary_bytes / 1024, 1),
        "bytes_moved_to_driver_mib": round(summary_bytes / 2**20, 2),
        "peak_rss_per_worker_mib": max(cluster["worker_rss_peak_mib"].values()),
        "traced_peak_per_partition_task_mib": part_mem["summarize_peak_mib"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--partition-rows", type=int, default=500_000)
    parser.add_argument("--memory-rows", type=int, default=10**6)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--n-seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.partition_rows, args.memory_rows = 10**6, 100_000, 200_000
        args.resamples, args.n_seeds = 200, 3

    import dask
    import distributed
    import pandas as pd

    import skfair_audit

    started = time.perf_counter()
    part_mem = partition_memory(args)
    print("partition memory:", part_mem, flush=True)
    memory = in_memory(args)
    print("in memory:", memory, flush=True)
    _, cluster = cluster_run(args)
    print("cluster:", cluster, flush=True)
    cluster["ratio_to_in_memory_multinomial"] = round(
        cluster["elapsed_seconds"] / memory["multinomial_seconds"], 2)
    cluster["ratio_to_in_memory_poisson"] = round(
        cluster["elapsed_seconds"] / memory["poisson_one_process_seconds"], 2)
    result = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "description": __doc__.split("\n\n")[2].strip(),
        "versions": {
            "python": platform.python_version(), "numpy": np.__version__,
            "pandas": pd.__version__, "dask": dask.__version__,
            "distributed": distributed.__version__, "skfair_audit": skfair_audit.__version__,
        },
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "note": "2 cores shared with other jobs during the run"},
        "seed": args.seed,
        "cluster": cluster,
        "partition_memory": part_mem,
        "in_memory": memory,
        "extrapolation": extrapolate(cluster, part_mem),
        "elapsed_seconds": round(time.perf_counter() - started, 1),
    }
    name = "scale_dask_quick.json" if args.quick else "scale_dask.json"
    path = Path(__file__).parent / "results" / name
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["extrapolation"], indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
