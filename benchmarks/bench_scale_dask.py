"""The group audit on a Dask cluster: against a Dask groupby-count, at 10^7 and 10^8 rows.

Usage::

    python benchmarks/bench_scale_dask.py [--quick] [--rows 10000000] [--big-rows 100000000]
                                          [--partition-rows 500000] [--resamples 1000]
                                          [--workers 2] [--seed 20240601]

Design: a synthetic audit trail generated partition by partition *on the workers*
(``dask.dataframe.from_map``; partition ``p`` is drawn from ``SeedSequence([seed, p])`` and its
rows carry the global ids ``p * partition_rows + 0, 1, ...`` as index). Attributes race
(4 levels), age (3), sex (2), pandas ``category``: all intersections up to depth 3 = 59 groups.
Binary metric: the error rate against the overall error rate (re-estimated in every
replicate), rescaled two-sided bounds, ``alpha = 0.1``, ``B = resamples``. A ``LocalCluster``
of ``workers`` processes (1 thread each, 127.0.0.1).

Measurements, each ratio from the same run (the machine is shared: the load average is
recorded before and after every step):

1. ``rows`` rows (default 10^7), partitions persisted in the workers' memory first, so that
   both sides read the same partitions: :func:`skfair_audit.scale.partitioned_certify_bounds`
   (the partition pass, the tree reduction, the multinomial bootstrap over the atoms at the
   driver) against ``ddf.groupby([race, age, sex, y, y_pred], observed=True).size()``, best
   of ``--repeat`` each. The result is compared bit for bit with
   :func:`skfair_audit.group.certify_bounds` on the same rows collected in memory.
2. ``big_rows`` rows (default 10^8) generated partition by partition inside the graph (never
   all in memory): the audit and the groupby-count, one run each (both include generating the
   partitions), and the generation alone; peak resident memory of every worker sampled
   through ``client.run`` every 0.25 s.
3. The Poisson bootstrap of a continuous metric (``calibration_residual`` on a score: about
   one atom per row) on ``poisson_rows`` rows: row-replicates per worker-second.
4. Agreement of the two bootstraps on 10^6 rows in memory (discrete metric, Poisson forced):
   critical values over ``n_seeds`` seeds each.
5. Extrapolation to 10^9 rows on 100 workers: discrete metric — the partition pass is linear
   in the rows at the throughput measured in (2), the driver's bootstrap is O(atoms · B) and
   does not grow; continuous metric — O(rows · B) at the throughput of (3).

Writes ``benchmarks/results/scale_dask.json`` (``--quick``: ``scale_dask_quick.json``). Run
time (2 shared cores): about 6 minutes with the defaults; ``--quick`` about 1 minute.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import Run, write_results  # noqa: E402

ATTRS = ["race", "age", "sex"]
COLUMNS = [*ATTRS, "y", "y_pred"]
RACES = ["A", "B", "C", "D"]
AGES = ["<25", "25-45", ">45"]
SEXES = ["F", "M"]


def make_partition(part, *, rows, seed):
    """Partition ``part`` of the synthetic trail (global row ids as index)."""
    import pandas as pd

    rng = np.random.default_rng(np.random.SeedSequence([seed, part]))
    race = rng.choice(4, rows, p=[0.5, 0.25, 0.15, 0.10]).astype(np.int8)
    age = rng.choice(3, rows, p=[0.2, 0.5, 0.3]).astype(np.int8)
    sex = rng.choice(2, rows).astype(np.int8)
    y = rng.integers(0, 2, rows, dtype=np.int8)
    error = 0.12 + 0.04 * (race == 3) + 0.03 * (age == 0) + 0.02 * ((race == 2) & (sex == 1))
    flip = rng.random(rows) < error
    score = np.clip(np.round(0.5 * y + 0.5 * rng.random(rows), 6), 0.0, 1.0)
    frame = pd.DataFrame({
        "race": pd.Categorical.from_codes(race, RACES),
        "age": pd.Categorical.from_codes(age, AGES),
        "sex": pd.Categorical.from_codes(sex, SEXES),
        "y": y,
        "y_pred": np.where(flip, 1 - y, y).astype(np.int8),
        "score": score,
    })
    frame.index = pd.RangeIndex(part * rows, (part + 1) * rows)
    return frame


def audit_kwargs(resamples, seed):
    return dict(label="y", prediction="y_pred", protected=ATTRS, metric="error_rate",
                target="overall", alternative="two-sided", alpha=0.1,
                n_resamples=resamples, random_state=seed)


def _rss():
    import psutil

    return psutil.Process().memory_info().rss


class RssSampler:
    """Peak resident memory of every worker, sampled while a block runs."""

    def __init__(self, client):
        self.client, self.peaks = client, dict(client.run(_rss))
        self.baseline = dict(self.peaks)
        self._stop = threading.Event()

    def __enter__(self):
        def sample():
            while not self._stop.is_set():
                try:
                    for worker, rss in self.client.run(_rss).items():
                        self.peaks[worker] = max(self.peaks.get(worker, 0), rss)
                except Exception:  # noqa: BLE001 - sampling must never break the run
                    pass
                self._stop.wait(0.25)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def mib(self):
        return ({k: round(v / 2**20, 1) for k, v in self.baseline.items()},
                {k: round(v / 2**20, 1) for k, v in self.peaks.items()})


def timed(fn, repeat=1):
    best, out = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def trail(dd, parts, args):
    meta = make_partition(0, rows=1, seed=0).iloc[:0]
    return dd.from_map(make_partition, range(parts), rows=args.partition_rows,
                       seed=args.seed, meta=meta, enforce_metadata=False)


def persisted_run(client, args):
    import dask.dataframe as dd
    import pandas as pd
    from distributed import wait

    from skfair_audit.group import certify_bounds
    from skfair_audit.scale import partitioned_certify_bounds

    parts = args.rows // args.partition_rows
    ddf = trail(dd, parts, args).persist()
    wait(ddf)
    load_before = os.getloadavg()
    kwargs = audit_kwargs(args.resamples, args.seed)
    # warm-up: imports and code paths on the workers
    ddf.groupby(COLUMNS, observed=True).size().compute()
    partitioned_certify_bounds(ddf, **{**kwargs, "n_resamples": 10})
    t_groupby, counts = timed(lambda: ddf.groupby(COLUMNS, observed=True).size().compute(),
                              args.repeat)
    t_ours, res = timed(lambda: partitioned_certify_bounds(ddf, **kwargs), args.repeat)
    load_after = os.getloadavg()
    frame = pd.concat(client.gather(client.compute(ddf.to_delayed())))
    memory = certify_bounds(frame["y"], frame["y_pred"], frame[ATTRS],
                            **{k: v for k, v in kwargs.items()
                               if k not in ("label", "prediction", "protected")})
    identical = bool(
        res.names == memory.names and res.critical_value == memory.critical_value
        and np.array_equal(res.bootstrap_distribution, memory.bootstrap_distribution)
        and np.array_equal(res.lower, memory.lower) and np.array_equal(res.upper, memory.upper)
    )
    del frame
    client.cancel(ddf)
    print(f"  {args.rows:,d} rows persisted: dask groupby-count {t_groupby:.2f} s, ours "
          f"{t_ours:.2f} s (x{t_ours / t_groupby:.2f}), bit-identical to in-memory: "
          f"{identical}", flush=True)
    return {
        "rows": args.rows, "partitions": parts, "partition_rows": args.partition_rows,
        "repeat": args.repeat, "resamples": args.resamples,
        "seconds_dask_groupby_count": t_groupby, "seconds_ours": t_ours,
        "ratio_ours_to_groupby": t_ours / t_groupby, "groupby_rows": int(len(counts)),
        "n_groups": len(res.names), "bootstrap": res.bootstrap, "method": res.method,
        "critical_value": res.critical_value,
        "bit_identical_to_in_memory_certify_bounds": identical,
        "load_average_before": load_before, "load_average_after": load_after,
    }


def generated_run(client, args):
    import dask.dataframe as dd

    from skfair_audit.scale import partitioned_certify_bounds

    parts = args.big_rows // args.partition_rows
    load_before = os.getloadavg()
    ddf = trail(dd, parts, args)
    t_generate, _ = timed(lambda: ddf.map_partitions(len).sum().compute())
    t_groupby, _ = timed(lambda: ddf.groupby(COLUMNS, observed=True).size().compute())
    with RssSampler(client) as sampler:
        t_ours, res = timed(lambda: partitioned_certify_bounds(
            ddf, **audit_kwargs(args.resamples, args.seed)))
    baseline, peaks = sampler.mib()
    load_after = os.getloadavg()
    per_worker = args.big_rows / max(t_ours - 0.0, 1e-9) / args.workers
    print(f"  {args.big_rows:,d} rows generated per partition: generation alone "
          f"{t_generate:.1f} s, dask groupby-count {t_groupby:.1f} s, ours {t_ours:.1f} s "
          f"(x{t_ours / t_groupby:.2f}); peak RSS per worker {max(peaks.values()):.0f} MiB",
          flush=True)
    return {
        "rows": args.big_rows, "partitions": parts, "partition_rows": args.partition_rows,
        "resamples": args.resamples, "seconds_generate_only": t_generate,
        "seconds_dask_groupby_count": t_groupby, "seconds_ours": t_ours,
        "ratio_ours_to_groupby": t_ours / t_groupby,
        "rows_per_worker_second_ours": per_worker,
        "rows_per_worker_second_ours_minus_generation": args.big_rows / max(
            t_ours - t_generate, 1e-9) / args.workers,
        "bootstrap": res.bootstrap, "critical_value": res.critical_value,
        "worker_rss_baseline_mib": baseline, "worker_rss_peak_mib": peaks,
        "load_average_before": load_before, "load_average_after": load_after,
    }


def poisson_run(client, args):
    import dask.dataframe as dd

    from skfair_audit.scale import partitioned_certify_bounds

    parts = max(args.poisson_rows // args.partition_rows, args.workers)
    rows = parts * args.partition_rows
    ddf = trail(dd, parts, args).persist()
    load_before = os.getloadavg()
    kwargs = dict(label="y", prediction="score", protected=ATTRS,
                  metric="calibration_residual", target=0.0, n_resamples=args.resamples,
                  random_state=args.seed)
    t, res = timed(lambda: partitioned_certify_bounds(ddf, **kwargs))
    client.cancel(ddf)
    per_worker = rows * args.resamples / t / args.workers
    print(f"  continuous metric, {rows:,d} rows: {res.bootstrap} bootstrap in {t:.1f} s "
          f"({per_worker / 1e6:.0f} M row-replicates per worker-second)", flush=True)
    return {"rows": rows, "resamples": args.resamples, "metric": "calibration_residual",
            "bootstrap": res.bootstrap, "seconds": t,
            "row_replicates_per_worker_second": per_worker,
            "load_average_before": load_before, "load_average_after": os.getloadavg()}


def agreement(args):
    import pandas as pd

    from skfair_audit.group import certify_bounds
    from skfair_audit.scale import partitioned_certify_bounds

    rows = args.memory_rows
    per = min(args.partition_rows, rows)
    frame = pd.concat([make_partition(p, rows=per, seed=args.seed) for p in range(rows // per)])
    crit = {"poisson": [], "multinomial": []}
    lowers = {"poisson": [], "multinomial": []}
    widths = []
    for k in range(args.n_seeds):
        seed = args.seed + 1 + k
        m = certify_bounds(frame.y, frame.y_pred, frame[ATTRS], metric="error_rate",
                           target="overall", alternative="two-sided", alpha=0.1,
                           n_resamples=args.resamples, random_state=seed)
        p = partitioned_certify_bounds(frame, bootstrap="poisson",
                                       **audit_kwargs(args.resamples, seed))
        for name, r in (("multinomial", m), ("poisson", p)):
            crit[name].append(r.critical_value)
            lowers[name].append(r.lower)
        widths.append(m.estimates - m.lower)
    mean = {k: float(np.mean(v)) for k, v in crit.items()}
    sd = {k: float(np.std(v, ddof=1)) for k, v in crit.items()}
    se_diff = math.sqrt((sd["poisson"] ** 2 + sd["multinomial"] ** 2) / args.n_seeds)
    gap = np.abs(np.mean(lowers["poisson"], axis=0) - np.mean(lowers["multinomial"], axis=0))
    out = {
        "rows": rows, "n_seeds": args.n_seeds, "critical_values": crit, "mean": mean,
        "sd_between_seeds": sd,
        "z_difference": (mean["poisson"] - mean["multinomial"]) / se_diff if se_diff else 0.0,
        "max_lower_bound_gap_over_mean_half_width": float(np.max(gap / np.mean(widths,
                                                                              axis=0))),
    }
    print(f"  agreement on {rows:,d} rows: z = {out['z_difference']:.2f}", flush=True)
    return out


def extrapolate(generated, poisson, persisted, rows=10**9, workers=100, fan_in=8):
    parts = rows // generated["partition_rows"]
    atoms, b = 48, generated["resamples"]
    discrete = rows / (workers * generated["rows_per_worker_second_ours"])
    continuous = rows * poisson["resamples"] / (workers
                                                * poisson["row_replicates_per_worker_second"])
    return {
        "rows": rows, "workers": workers, "partitions": parts,
        "reduction_levels": math.ceil(math.log(max(parts, 2), fan_in)),
        "assumptions": (
            "partitions of the benchmark's size generated or read where they live (no "
            "shuffle), one thread per worker, the per-worker throughput of the 10^8-row run "
            "(generation included) for a discrete metric and of the Poisson run for a "
            "continuous one; tree reduction of the partition summaries (fan-in 8); scheduler "
            "overhead and I/O not included."
        ),
        "discrete_metric": {
            "wall_seconds": round(discrete, 1),
            "cpu_hours": round(rows / generated["rows_per_worker_second_ours"] / 3600, 3),
            "driver_bootstrap": f"multinomial over {atoms} atoms, B = {b}: O(atoms x B), "
                                "independent of the rows",
            "bytes_per_partition_summary": "cells and atoms: a few KiB",
        },
        "continuous_metric": {
            "wall_seconds": round(continuous, 1),
            "cpu_hours": round(rows * poisson["resamples"]
                               / poisson["row_replicates_per_worker_second"] / 3600, 2),
            "bootstrap": "Poisson row weights summed per cell in the partitions, O(rows x B)",
        },
        "measured_ratio_to_dask_groupby_count": persisted["ratio_ours_to_groupby"],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--big-rows", type=int, default=10**8)
    parser.add_argument("--poisson-rows", type=int, default=10**6)
    parser.add_argument("--partition-rows", type=int, default=500_000)
    parser.add_argument("--memory-rows", type=int, default=10**6)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-seeds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.big_rows, args.partition_rows = 10**6, 4 * 10**6, 250_000
        args.poisson_rows, args.memory_rows, args.resamples = 250_000, 200_000, 200
        args.n_seeds, args.repeat = 3, 2

    from distributed import Client, LocalCluster


    run = Run(__file__, argv, packages=("dask", "distributed"),
              note="2 cores shared with other jobs; ratios are from the same run")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None, memory_limit=0,
                      silence_logs=40) as cluster, Client(cluster) as client:
        persisted = persisted_run(client, args)
        generated = generated_run(client, args)
        poisson = poisson_run(client, args)
    agree = agreement(args)
    result = {
        "description": __doc__.split("\n\n")[2].strip(),
        "seed": args.seed, "workers": args.workers, "threads_per_worker": 1,
        "persisted": persisted, "generated": generated, "poisson": poisson,
        "agreement": agree, "extrapolation": extrapolate(generated, poisson, persisted),
        "elapsed_seconds": round(run.elapsed(), 1),
    }
    path = write_results(run, result, suffix="_quick" if args.quick else "")
    print(json.dumps(result["extrapolation"], indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
