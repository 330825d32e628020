"""``bench_faith_reference_speed.py`` → ``doc/user_guide/faith_reference_speed.inc``.

:data:`READS` is this module's JSON shape: for each results file, every key it reads
(``a.b`` nests, ``a[]`` is an item of the list ``a``; CSV files list their columns) and
its JSON type; the test suite checks it against the committed files.
"""

from __future__ import annotations

from _render_common import load
from _render_faith_scale import _scale_load, _scale_seconds

#: The keys read from each results file, and their JSON types (see the docstring).
READS = {
    'faith_reference_speed.json': {
        'adult': 'object',
        'adult.audit_seconds': 'float',
        'adult.n': 'int',
        'adult.n_reference': 'int',
        'adult.peak_gib': 'float',
        'checks': 'object',
        'checks.adult': 'object',
        'checks.adult.met': 'bool',
        'checks.dask': 'object',
        'checks.dask.met': 'bool',
        'checks.million': 'object',
        'checks.million.floor_met': 'bool',
        'checks.million.met': 'bool',
        'checks.million.peak_gib': 'float',
        'checks.million.seconds': 'float',
        'checks.million.value_over_floor': 'float',
        'dask': 'object',
        'dask.bit_identical_on_subset': 'bool',
        'dask.confidence_interval': 'list',
        'dask.confidence_interval[]': 'float',
        'dask.dask_seconds': 'float',
        'dask.n_cells': 'int',
        'dask.partition_rows': 'int',
        'dask.partitions': 'int',
        'dask.peak_gib': 'float',
        'dask.rows': 'int',
        'dask.rows_per_second_dask': 'float',
        'dask.rows_per_second_in_memory': 'float',
        'dask.statistic': 'float',
        'dask.subset_rows': 'int',
        'dask.throughput_ratio': 'float',
        'dask.workers': 'int',
        'date': 'str',
        'machine': 'object',
        'machine.cpus': 'int',
        'machine.load_average_end': 'list',
        'machine.load_average_end[]': 'float',
        'machine.load_average_start': 'list',
        'machine.load_average_start[]': 'float',
        'scaling': 'list',
        'scaling[]': 'object',
        'scaling[].audit_seconds': 'float',
        'scaling[].audit_seconds_two_jobs': 'float',
        'scaling[].floor_seconds': 'float',
        'scaling[].n': 'int',
        'scaling[].peak_gib': 'float',
        'scaling[].two_jobs_identical': 'bool',
        'scaling[].value_over_floor': 'float',
        'scaling[].value_seconds': 'float',
        'settings': 'object',
        'settings.epsilon': 'float',
        'settings.metric': 'str',
        'settings.n_reference': 'int',
        'settings.n_resamples': 'int',
        'targets': 'object',
        'targets.adult_seconds': 'float',
        'targets.dask_throughput_ratio': 'float',
        'targets.floor_ratio': 'float',
        'targets.million_gib': 'float',
        'targets.million_seconds': 'float',
    },
}


def faith_reference_speed_guide():
    """The user guide's speed figures of the reference space (``faith_reference_speed.json``)."""
    results = load("faith_reference_speed.json")
    s, machine, checks = results["settings"], results["machine"], results["checks"]
    lines = [
        f"``bench_faith_reference_speed.py`` (run {results['date'][:10]}, "
        f"{machine['cpus']} cores, load average "
        f"{_scale_load(machine['load_average_start'])} at the start and "
        f"{_scale_load(machine['load_average_end'])} at the end; ratios come from one process). "
        f"Synthetic audits with 5 continuous features and a binary protected attribute, a "
        f"{s['n_reference']:,}-row reference set, ε = {s['epsilon']:g}, "
        f"``metric=\"{s['metric']}\"``, B = {s['n_resamples']:,}; the floor is one "
        "``scipy.spatial.cKDTree`` query per audit row against the reference points.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - audit rows n",
        "     - ψ̂ alone",
        "     - audit (with bounds)",
        "     - audit, ``n_jobs=2``",
        "     - floor (k-d tree query)",
        "     - ψ̂ / floor",
        "     - peak memory",
    ]
    for row in results["scaling"]:
        lines += [
            f"   * - {row['n']:,}",
            f"     - {_scale_seconds(row['value_seconds'])}",
            f"     - {_scale_seconds(row['audit_seconds'])}",
            f"     - {_scale_seconds(row['audit_seconds_two_jobs'])}"
            + ("" if row["two_jobs_identical"] else " (differs!)"),
            f"     - {_scale_seconds(row['floor_seconds'])}",
            f"     - {row['value_over_floor']:.2f}",
            f"     - {row['peak_gib']:.2f} GiB",
        ]
    million, adult = checks.get("million"), results.get("adult")
    targets = results["targets"]
    if million:
        lines += ["", (
            f"At 10⁶ rows the audit took {_scale_seconds(million['seconds'])} and "
            f"{million['peak_gib']:.2f} GiB (target {targets['million_seconds']:g} s and "
            f"{targets['million_gib']:g} GiB: {'met' if million['met'] else 'not met'}); "
            f"ψ̂ alone cost {million['value_over_floor']:.2f} times the k-d tree floor "
            f"(target {targets['floor_ratio']:g}: "
            f"{'met' if million['floor_met'] else 'not met'})."
        )]
    if adult:
        lines += ["", (
            f"**UCI Adult**: {adult['n']:,} audited rows against the {adult['n_reference']:,} "
            f"distinct reference rows of the training file, B = {s['n_resamples']:,}: audit "
            f"{_scale_seconds(adult['audit_seconds'])}, peak memory {adult['peak_gib']:.2f} GiB "
            f"(target {targets['adult_seconds']:g} s: "
            f"{'met' if checks['adult']['met'] else 'not met'})."
        )]
    dask = results.get("dask")
    if dask:
        lines += ["", (
            f"**Scale-out**: {dask['rows']:,} audit rows in {dask['partitions']} partitions of "
            f"{dask['partition_rows']:,} on a Dask ``LocalCluster`` of {dask['workers']} worker "
            f"processes, ``partitioned_faith_audit`` (the partitions reduced to their distinct "
            f"rows, the problem built in chunks and bootstrapped with ``n_jobs=2``): "
            f"{_scale_seconds(dask['dask_seconds'])}, {dask['rows_per_second_dask']:,.0f} rows "
            f"per second against {dask['rows_per_second_in_memory']:,.0f} for "
            f"``FaithAuditor.audit`` on the first {dask['subset_rows']:,} rows in memory "
            f"(``n_jobs=2``), a ratio of {dask['throughput_ratio']:.2f} (target "
            f"{targets['dask_throughput_ratio']:g}: "
            f"{'met' if checks['dask']['met'] else 'not met'}); on those rows the two audits are "
            f"{'bit-identical' if dask['bit_identical_on_subset'] else 'NOT identical'}. "
            f"ψ̂ = {dask['statistic']:.4f}, interval [{dask['confidence_interval'][0]:.4f}, "
            f"{dask['confidence_interval'][1]:.4f}], K = {dask['n_cells']:,} cells, peak "
            f"memory of the driver {dask['peak_gib']:.2f} GiB."
        )]
    return "\n".join(lines) + "\n"

