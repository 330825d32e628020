"""``bench_group_engine.py`` and ``bench_scale_dask.py`` → the reproduction page's "The group
engine at scale" section.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load, pct, section, table

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    "group_engine.json": {
        "cases": "list",
        "cases[].bootstrap_resamples": "int",
        "cases[].input_column_bytes": "int",
        "cases[].kind": "str",
        "cases[].n": "int",
        "cases[].n_atoms": "int",
        "cases[].peak_bytes_bootstrap": "int",
        "cases[].peak_bytes_one_pass": "int",
        "cases[].ratio_one_pass_to_groupby": "float",
        "cases[].ratio_peak_to_input": "float",
        "cases[].seconds_bootstrap": "float",
        "cases[].seconds_groupby_count": "float",
        "cases[].seconds_one_pass": "float",
        "machine": "object",
        "machine.cpus": "int",
        "machine.load_average_end": "list",
        "machine.load_average_start": "list",
        "max_ratio_one_pass_to_groupby": "float",
        "max_ratio_peak_to_input": "float",
        "repeat": "int",
    },
    "scale_dask.json": {
        "agreement": "object",
        "agreement.max_lower_bound_gap_over_mean_half_width": "float",
        "agreement.n_seeds": "int",
        "agreement.rows": "int",
        "agreement.z_difference": "float",
        "extrapolation": "object",
        "extrapolation.assumptions": "str",
        "extrapolation.continuous_metric": "object",
        "extrapolation.continuous_metric.cpu_hours": "float",
        "extrapolation.continuous_metric.wall_seconds": "float",
        "extrapolation.discrete_metric": "object",
        "extrapolation.discrete_metric.cpu_hours": "float",
        "extrapolation.discrete_metric.driver_bootstrap": "str",
        "extrapolation.discrete_metric.wall_seconds": "float",
        "extrapolation.partitions": "int",
        "extrapolation.reduction_levels": "int",
        "extrapolation.rows": "int",
        "extrapolation.workers": "int",
        "generated": "object",
        "generated.partitions": "int",
        "generated.ratio_ours_to_groupby": "float",
        "generated.rows": "int",
        "generated.seconds_dask_groupby_count": "float",
        "generated.seconds_generate_only": "float",
        "generated.seconds_ours": "float",
        "generated.worker_rss_peak_mib": "object",
        "generated.worker_rss_peak_mib.tcp://127.0.0.1:39547": "float",
        "generated.worker_rss_peak_mib.tcp://127.0.0.1:41685": "float",
        "persisted": "object",
        "persisted.bit_identical_to_in_memory_certify_bounds": "bool",
        "persisted.partitions": "int",
        "persisted.ratio_ours_to_groupby": "float",
        "persisted.resamples": "int",
        "persisted.rows": "int",
        "persisted.seconds_dask_groupby_count": "float",
        "persisted.seconds_ours": "float",
        "poisson": "object",
        "poisson.bootstrap": "str",
        "poisson.metric": "str",
        "poisson.resamples": "int",
        "poisson.row_replicates_per_worker_second": "float",
        "poisson.rows": "int",
        "workers": "int",
    },
}


def _mib(value):
    return f"{value / 2**20:,.1f} MiB"


def engine_at_scale():
    engine = load("group_engine.json")
    dask = load("scale_dask.json")
    out = [".. _engine_at_scale:\n", section("The group engine at scale", "~")]
    out.append(
        "``bench_group_engine.py``: the one pass of every group audit "
        "(``AuditSummary.from_rows``: encoding, metric, 59-group collection, atoms) against a "
        "pandas groupby-count over the same five columns, one thread, best of "
        f"{engine['repeat']} alternated runs each, in the same run (load average "
        f"{engine['machine']['load_average_start'][0]:.1f} before, "
        f"{engine['machine']['load_average_end'][0]:.1f} after, on "
        f"{engine['machine']['cpus']} shared "
        "cores). Peak memory is the ``tracemalloc`` peak of the pass.\n"
    )
    rows = [
        [f"{c['n']:,}", c["kind"], f"{c['seconds_groupby_count']:.3f} s",
         f"{c['seconds_one_pass']:.3f} s", f"{c['ratio_one_pass_to_groupby']:.2f}×",
         _mib(c["input_column_bytes"]), _mib(c["peak_bytes_one_pass"]),
         f"{c['ratio_peak_to_input']:.2f}×"]
        for c in engine["cases"]
    ]
    out.append(table(["rows", "columns", "groupby-count", "one pass", "ratio", "input",
                      "peak", "peak / input"], rows))
    boot = engine["cases"][-1]
    out.append(
        f"\nLargest ratio to the groupby-count: {engine['max_ratio_one_pass_to_groupby']:.2f}×; "
        f"largest peak / input: {engine['max_ratio_peak_to_input']:.2f}×. The bootstrap on the "
        f"summary (B = {boot['bootstrap_resamples']}) takes {boot['seconds_bootstrap']:.3f} s "
        f"and {_mib(boot['peak_bytes_bootstrap'])} at {boot['n']:,} rows: it depends on the "
        f"{boot['n_atoms']} atoms, not on the rows.\n"
    )
    pers, gen, poi = dask["persisted"], dask["generated"], dask["poisson"]
    ext, agree = dask["extrapolation"], dask["agreement"]
    out.append(
        f"\n``bench_scale_dask.py``: a ``LocalCluster`` of {dask['workers']} worker processes "
        "(1 thread each, 127.0.0.1), ratios from the same run:\n"
    )
    rows = [
        [f"{pers['rows']:,} rows, {pers['partitions']} persisted partitions",
         f"{pers['seconds_dask_groupby_count']:.2f} s", f"{pers['seconds_ours']:.2f} s",
         f"{pers['ratio_ours_to_groupby']:.2f}×",
         f"bit-identical to ``certify_bounds`` in memory: "
         f"{'yes' if pers['bit_identical_to_in_memory_certify_bounds'] else 'NO'}"],
        [f"{gen['rows']:,} rows generated in {gen['partitions']} partitions",
         f"{gen['seconds_dask_groupby_count']:.1f} s", f"{gen['seconds_ours']:.1f} s",
         f"{gen['ratio_ours_to_groupby']:.2f}×",
         f"generation alone {gen['seconds_generate_only']:.1f} s; peak RSS per worker "
         f"{max(gen['worker_rss_peak_mib'].values()):.0f} MiB"],
    ]
    out.append(table(["trail", "Dask groupby-count", "ours (B = "
                      f"{pers['resamples']})", "ratio", "notes"], rows))
    out.append(
        f"\nContinuous metric ({poi['metric']}, {poi['rows']:,} rows): the {poi['bootstrap']} "
        f"bootstrap in the partitions ran at "
        f"{poi['row_replicates_per_worker_second'] / 1e6:.0f} M row-replicates per "
        f"worker-second (B = {poi['resamples']}). Poisson and multinomial critical values on "
        f"{agree['rows']:,} rows, {agree['n_seeds']} seeds each: z = "
        f"{agree['z_difference']:.2f} (within Monte Carlo error when :math:`|z| < 3`); the lower "
        "bounds differ by at most "
        f"{pct(agree['max_lower_bound_gap_over_mean_half_width'])} of their half-width.\n"
    )
    d, c = ext["discrete_metric"], ext["continuous_metric"]
    out.append(
        f"\n**Extrapolation to {ext['rows']:,} rows on {ext['workers']} workers** "
        f"({ext['partitions']:,} partitions, {ext['reduction_levels']} reduction levels). "
        f"Assumptions: {ext['assumptions']} A discrete metric takes about "
        f"{d['wall_seconds']:.0f} s of "
        f"wall time ({d['cpu_hours']:.2f} CPU-hours), the bootstrap at the driver being "
        f"{d['driver_bootstrap']}; a continuous metric about {c['wall_seconds']:.0f} s "
        f"({c['cpu_hours']:.1f} CPU-hours) for its Poisson bootstrap.\n"
    )
    return "\n".join(out)

